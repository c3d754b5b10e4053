// Red team AO3: a path a rule keeps from writes that does not exist yet. The sandbox binds write-protected paths
// read-only only when they exist; one a command creates (under a name the static check cannot see) is moved aside after
// it, whatever the rule's shape and however it got there (made, renamed, hard-linked). Red team BB (bypasses of that
// sweep): BB2, a protected path reached through a folder link the command makes above it; BB6, anything below a folder
// named after the audit log plus `.`; the rest held and stay as regressions.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs"
import path from "path"
import { composed, ROUTES as COMPOSED, text } from "./composed"
import { REDTEAM_POLICY, ROUTES, isolateHome, open, redteamProject } from "./redteam-helpers"
import { spawnSync } from "../spawn-sync"

setDefaultTimeout(120_000)
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

/** The red-team policy and one rule denying `write` to every role. */
const writeDenied = (pattern: string, type: "file" | "directory") => ({
  ...REDTEAM_POLICY,
  rules: [...REDTEAM_POLICY.rules, { pattern, type, deniedOperations: ["write"], allowedRoles: [] }],
})

/** A shell word for `x` that the static command check cannot read: the base64 of it, decoded at run time. */
const hidden = (x: string) => `"$(echo ${Buffer.from(x).toString("base64")} | base64 -d)"`

/** What is left at `file` with `content`, and the names beside it that the layer moved aside. */
const leftAt = (dir: string, file: string, content: string) => {
  const p = path.join(dir, file)
  const left = fs.existsSync(p) && fs.readFileSync(p, "utf8").trim() === content.trim()
  return { file, left }
}

const audited = (dir: string) => {
  const log = path.join(dir, ".opencode-security-audit.log")
  return fs.existsSync(log) ? fs.readFileSync(log, "utf8") : ""
}

for (const route of ROUTES) {
  describe(`route ${route}: AO3 write-protected paths that do not exist yet`, () => {
    const cases = [
      [".github/workflows/**", "directory", ".github/workflows/ci.yml", ".github/workflows", "on: push\n"],
      ["db/migrations", "directory", "db/migrations/001.sql", "db/migrations", "DROP TABLE users;\n"],
      ["Dockerfile", "file", "Dockerfile", "Dockerfile", "FROM evil\n"],
      ["vendor", "directory", "pkg/vendor/new.js", "pkg/vendor", "evil()\n"],
      ["vendor", "directory", "a/b/c/vendor/deep.js", "a/b/c/vendor", "evil()\n"],
    ] as const
    for (const [pattern, type, file, moved, content] of cases)
      test(`AO3 rule '${pattern}' (${type}, write denied to every role): ${file} created by a command is moved aside and the model told`, async () => {
        await using dir = await redteamProject({}, writeDenied(pattern, type))
        const s = await open(route, dir.path)
        let output = ""
        try {
          // The write tool is refused (the policy's promise).
          const w = await s.call("write", { filePath: dir.file(file), content }, { noExecute: true })
          expect(w.refused).toBe(true)
          const folder = file.split("/").slice(0, -1).join("/") || "."
          const r = await s.bash(
            `mkdir -p ${hidden(folder)} && printf %s ${hidden(content)} > ${hidden(file)}; echo RC $?`,
          )
          expect(r.refused).toBe(false)
          expect(r.raw).toContain("RC 0")
          output = r.output
        } finally {
          await s.close()
        }
        // docs/security.md, the sandbox's table: write-protected paths "bound read-only (those absent are moved aside
        // when a command creates them)".
        expect(leftAt(dir.path, file, content)).toEqual({ file, left: false })
        // The outermost created path the rule matches is what moved, with everything the command put below it.
        const aside = fs
          .readdirSync(path.dirname(dir.file(moved)))
          .find((n) => n.startsWith(`${path.basename(moved)}.blocked-by-security-`))
        expect(aside).toBeDefined()
        expect(output).toContain(`${moved} was created by the command`)
        expect(output).toContain(`rule '${pattern}'`)
        expect(audited(dir.path)).toContain("a call created a path the policy keeps from writes; moved aside")
      })

    test("AO3 a file renamed onto a name-only file rule's name (mv README.md Dockerfile) is moved aside", async () => {
      await using dir = await redteamProject({}, writeDenied("Dockerfile", "file"))
      const s = await open(route, dir.path)
      try {
        const r = await s.bash(`mv README.md ${hidden("Dockerfile")}; echo RC $?`)
        expect(r.raw).toContain("RC 0")
        expect(r.output).toContain("Dockerfile was created by the command")
      } finally {
        await s.close()
      }
      expect(fs.existsSync(dir.file("Dockerfile"))).toBe(false)
      // The user's text is kept, under the aside name.
      const aside = fs.readdirSync(dir.path).find((n) => n.startsWith("Dockerfile.blocked-by-security-"))
      expect(aside).toBeDefined()
    })

    test("AO3 a hard link made at a write-protected name (ln src/x db/migrations/001.sql) is moved aside, the other name kept", async () => {
      await using dir = await redteamProject(
        { "db/schema.sql": "CREATE TABLE t (id int);\n" },
        writeDenied("db/migrations/**", "directory"),
      )
      const s = await open(route, dir.path)
      try {
        const r = await s.bash(
          `mkdir ${hidden("db/migrations")} && ln db/schema.sql ${hidden("db/migrations/001.sql")}; echo RC $?`,
        )
        expect(r.raw).toContain("RC 0")
      } finally {
        await s.close()
      }
      expect(fs.existsSync(dir.file("db/migrations/001.sql"))).toBe(false)
      expect(fs.readFileSync(dir.file("db/schema.sql"), "utf8")).toBe("CREATE TABLE t (id int);\n")
    })

    test("AO3 a folder renamed onto a name-only folder rule's name (mv lib pkg/vendor) is moved aside", async () => {
      await using dir = await redteamProject(
        { "lib/a.js": "a()\n", "pkg/index.js": "x\n" },
        writeDenied("vendor", "directory"),
      )
      const s = await open(route, dir.path)
      try {
        const r = await s.bash(`mv lib ${hidden("pkg/vendor")}; echo RC $?`)
        expect(r.raw).toContain("RC 0")
      } finally {
        await s.close()
      }
      expect(fs.existsSync(dir.file("pkg/vendor"))).toBe(false)
      const aside = fs.readdirSync(dir.file("pkg")).find((n) => n.startsWith("vendor.blocked-by-security-"))
      expect(aside && fs.readFileSync(path.join(dir.file("pkg"), aside, "a.js"), "utf8")).toBe("a()\n")
    })

    test("AO3 what a rule allows is left: a new file beside the protected name, and a role the rule allows", async () => {
      const policy = {
        ...REDTEAM_POLICY,
        rules: [
          ...REDTEAM_POLICY.rules,
          { pattern: "Dockerfile", type: "file", deniedOperations: ["write"], allowedRoles: [] },
          { pattern: "deploy/**", type: "directory", deniedOperations: ["write"], allowedRoles: ["admin"] },
        ],
      }
      await using dir = await redteamProject({}, policy)
      process.env.OPENCODE_SECURITY_ROLE = "admin"
      const s = await open(route, dir.path)
      try {
        const r = await s.bash("printf x > Dockerfile.md && mkdir -p deploy && printf y > deploy/run.sh; echo RC $?")
        expect(r.raw).toContain("RC 0")
        expect(r.output).not.toContain("blocked-by-security")
      } finally {
        await s.close()
        delete process.env.OPENCODE_SECURITY_ROLE
      }
      expect(fs.readFileSync(dir.file("Dockerfile.md"), "utf8")).toBe("x")
      expect(fs.readFileSync(dir.file("deploy/run.sh"), "utf8")).toBe("y")
    })
  })

  describe(`route ${route}: AO3 calls of one step`, () => {
    test("AO3 a command whose before hook came before another call's hooks (parallel calls of one step) is still checked", async () => {
      await using dir = await redteamProject({}, writeDenied(".github/workflows/**", "directory"))
      const s = await open(route, dir.path)
      const callID = `call_ao3_step_${route}_${process.pid}`
      const command = `mkdir -p ${hidden(".github/workflows")} && echo 'on: push' > ${hidden(".github/workflows/ci.yml")}`
      const input = { tool: "bash", sessionID: "ses_redteam", callID }
      const out = { title: "", output: "", metadata: {} }
      try {
        await s.hooks["tool.execute.before"](input, { args: { command, description: "ci" } })
        // OpenCode runs the step's calls side by side: another call's hooks come before the command starts.
        const other = await s.call("read", { filePath: dir.file("README.md") })
        expect(other.refused).toBe(false)
        const extra = { env: {} as Record<string, string> }
        await s.hooks["shell.env"]({ cwd: dir.path, sessionID: "ses_redteam", callID }, extra)
        const r = spawnSync("/bin/bash", ["-c", command], {
          cwd: dir.path,
          env: { ...process.env, ...extra.env },
          encoding: "utf8",
        })
        out.output = r.stdout + r.stderr
        await s.hooks["tool.execute.after"]({ ...input, args: { command } }, out)
      } finally {
        await s.close()
      }
      expect(fs.existsSync(dir.file(".github/workflows/ci.yml"))).toBe(false)
      expect(out.output).toContain(".github/workflows was created by the command")
    })
  })

  describe(`route ${route}: AO3 control (held before the fix)`, () => {
    test("AO3 control: .github/workflows existing (with one file): a command cannot add ci.yml", async () => {
      await using dir = await redteamProject(
        { ".github/workflows/lint.yml": "on: pull_request\n" },
        writeDenied(".github/workflows/**", "directory"),
      )
      const s = await open(route, dir.path)
      try {
        await s.bash(`echo 'on: push' > ${hidden(".github/workflows/ci.yml")}; echo RC $?`)
      } finally {
        await s.close()
      }
      expect(fs.existsSync(dir.file(".github/workflows/ci.yml"))).toBe(false)
      expect(fs.readFileSync(dir.file(".github/workflows/lint.yml"), "utf8")).toBe("on: pull_request\n")
    })
  })
}

// A writer on the host whose arguments do not name the path (an MCP filesystem server resolving against its own root,
// another plugin's tool): no sandbox holds it, so what it creates is compared after the call as a command's is.
for (const route of COMPOSED)
  describe(`route ${route}: AO3 a host-side writer`, () => {
    test("AO3 an MCP tool whose arguments do not name .github/workflows/ci.yml creates it: moved aside, with a note", async () => {
      await using dir = await redteamProject({}, writeDenied(".github/workflows/**", "directory"))
      const c = await composed(route, dir.path, {}, "ses_ao3")
      try {
        await c.trigger(
          "config",
          { mcp: { fs: { type: "local", command: ["npx", "-y", "some-fs-server", dir.path] } } },
          {},
        )
        const r = await c.hooked("fs_write_file", { path: "ci", content: "on: push" }, async () => {
          fs.mkdirSync(dir.file(".github/workflows"), { recursive: true })
          fs.writeFileSync(dir.file(".github/workflows/ci.yml"), "on: push\n")
          return "done"
        })
        expect(text(r)).toContain(".github/workflows was created by the fs_write_file call")
      } finally {
        await c.seams.dispose()
      }
      expect(fs.existsSync(dir.file(".github/workflows/ci.yml"))).toBe(false)
    })
  })

/** Runs `command` in a sandboxed shell of `route` at `dir`. */
async function run(route: (typeof ROUTES)[number], dir: string, command: string) {
  const s = await open(route, dir)
  try {
    return await s.bash(command)
  } finally {
    await s.close()
  }
}

for (const route of ROUTES) {
  describe(`route ${route}: BB AO3 bypasses`, () => {
    test("held: an existing write-protected file is not moved off its path by renaming its parent (mv db db2)", async () => {
      await using dir = await redteamProject(
        { "db/migrations/001.sql": "CREATE TABLE users (id int);\n" },
        writeDenied("db/migrations/**", "directory"),
      )
      await run(
        route,
        dir.path,
        `mv db ${hidden("db2")}; mkdir -p db/migrations; printf 'DROP TABLE users;\\n' > ${hidden("db/migrations/001.sql")}`,
      )
      expect(fs.readFileSync(dir.file("db/migrations/001.sql"), "utf8")).toBe("CREATE TABLE users (id int);\n")
    })

    test("BB2 a write-protected path reached through a folder link the command makes (.github -> gh)", async () => {
      await using dir = await redteamProject({}, writeDenied(".github/workflows/**", "directory"))
      await run(
        route,
        dir.path,
        `mkdir -p gh/workflows && echo 'on: push' > gh/workflows/ci.yml && ln -s gh ${hidden(".github")}`,
      )
      expect(fs.existsSync(dir.file(".github/workflows/ci.yml"))).toBe(false)
    })

    test("held: a protected path reached through a link the command makes below a new folder (.github/workflows -> ../w)", async () => {
      await using dir = await redteamProject({}, writeDenied(".github/workflows/**", "directory"))
      await run(
        route,
        dir.path,
        `mkdir -p w .github && echo 'on: push' > w/ci.yml && ln -s ../w ${hidden(".github/workflows")}`,
      )
      expect(fs.existsSync(dir.file(".github/workflows/ci.yml"))).toBe(false)
    })

    test("BB2 a link whose target is a write-protected path (ci -> .github/workflows/ci.yml) is moved aside", async () => {
      await using dir = await redteamProject({}, writeDenied(".github/workflows/**", "directory"))
      await run(route, dir.path, `ln -s ${hidden(".github/workflows/ci.yml")} ci`)
      expect(() => fs.lstatSync(dir.file("ci"))).toThrow()
    })

    test("BB2 a new link to a folder with more entries than the layer walks is moved aside (fail closed)", async () => {
      await using dir = await redteamProject({}, writeDenied(".github/workflows/**", "directory"))
      await run(route, dir.path, `mkdir -p big && cd big && seq 1 10001 | xargs touch && cd .. && ln -s big many`)
      expect(() => fs.lstatSync(dir.file("many"))).toThrow()
      expect(fs.readdirSync(dir.file("big")).length).toBe(10_001)
    })

    test("held: a new folder holding the protected path renamed into place (mv staging db)", async () => {
      await using dir = await redteamProject({}, writeDenied("db/migrations/**", "directory"))
      await run(
        route,
        dir.path,
        `mkdir -p staging/migrations && echo 'DROP TABLE users;' > staging/migrations/001.sql && mv staging ${hidden("db")}`,
      )
      expect(fs.existsSync(dir.file("db/migrations/001.sql"))).toBe(false)
    })

    test("held: a link at the protected name itself (db/migrations -> ../m)", async () => {
      await using dir = await redteamProject({ "db/schema.sql": "x\n" }, writeDenied("db/migrations/**", "directory"))
      await run(
        route,
        dir.path,
        `mkdir -p m && echo 'DROP TABLE users;' > m/001.sql && ln -s ../m ${hidden("db/migrations")}`,
      )
      expect(fs.existsSync(dir.file("db/migrations/001.sql"))).toBe(false)
    })

    test("held: a name-only write rule (vendor) at any depth, below a folder whose name is not UTF-8", async () => {
      await using dir = await redteamProject({}, writeDenied("vendor", "directory"))
      await run(
        route,
        dir.path,
        `d="$(printf 'pkg\\377')"; v="$(echo dmVuZG9y | base64 -d)"; mkdir -p "$d/$v" && echo 'evil()' > "$d/$v/x.js"`,
      )
      const bad = Buffer.concat([Buffer.from(dir.path + "/pkg"), Buffer.from([0xff]), Buffer.from("/vendor/x.js")])
      expect(fs.existsSync(bad)).toBe(false)
    })

    test("BB6 a name-only write rule (vendor): created inside a folder whose name starts with the audit log's name", async () => {
      await using dir = await redteamProject({}, writeDenied("vendor", "directory"))
      await run(
        route,
        dir.path,
        `d="$(echo LmRpc3Q= | base64 -d)"; v="$(echo dmVuZG9y | base64 -d)"; l="$(ls -a | grep -m1 'audit.log$')"; mkdir -p "$l$d/$v" && echo 'evil()' > "$l$d/$v/x.js"`,
      )
      const made = fs.readdirSync(dir.path).filter((n) => n.endsWith("audit.log.dist"))
      expect(made.length).toBe(1)
      expect(fs.existsSync(path.join(dir.path, made[0], "vendor/x.js"))).toBe(false)
    })
  })
}
