/**
 * Red team AM: the built-ins' cache folder reached through a link (AM-6), the hidden cache folder inside the project
 * (AM2, held), and the bare-link fallback of the resource index answering whether a protected file exists (AM-3). Both
 * routes: the plugin hooks and the fork's composition (`BuiltinsSeams`); the shell helpers' "plugin" and "core".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { POLICY, project } from "./fixture"
import { ResourceCache } from "../../resource/cache"
import { isolateHome, open as openShell } from "./redteam-helpers"
import { ROUTES, open, type Result, type Route } from "./own-session"

let home: ReturnType<typeof isolateHome>
beforeAll(() => {
  home = isolateHome()
})
afterAll(() => home.restore(), 60_000)

const SECRET = "launch on the fourth of july"
const policy = {
  ...POLICY,
  rules: [
    ...POLICY.rules,
    {
      pattern: ".opencode/knowledge-base/finance/**",
      type: "directory",
      deniedOperations: ["read", "llm"],
      allowedRoles: ["admin"],
    },
  ],
}
const files = {
  ".opencode/knowledge-base/finance/launch.md": `---\ntitle: Launch plan\ndescription: ${SECRET}\ntags: [launch]\n---\nThe board decided: ${SECRET}.\n`,
  ".opencode/knowledge-base/public.md": "---\ntitle: Public\ndescription: public page\n---\nHello.\n",
}

async function adminIndexes(route: Route, dir: string) {
  process.env.OPENCODE_SECURITY_ROLE = "admin"
  const admin = await open(route, dir)
  try {
    expect((await admin.call("resource-query", { query: "launch" })).output).toContain("launch")
  } finally {
    await admin.close()
    delete process.env.OPENCODE_SECURITY_ROLE
  }
  const cacheDir = path.dirname(ResourceCache.defaultPath(dir))
  const has = () =>
    (fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir) : []).some((f) =>
      fs.readFileSync(path.join(cacheDir, f), "utf8").includes(SECRET),
    )
  for (let i = 0; i < 100 && !has(); i++) await Bun.sleep(50)
  expect(has()).toBe(true)
  return cacheDir
}

describe.each(ROUTES)("route %s: AM cache folder spellings", (route) => {
  // AM6: with XDG_CACHE_HOME a symbolic link, the guard moves the built-ins' own cache folder aside when the process creates it.
  test("AM6 XDG_CACHE_HOME a symbolic link: the built-ins' cache folder is not moved aside, and its real path shows a viewer nothing", async () => {
    const saved = process.env.XDG_CACHE_HOME
    const real = fs.mkdtempSync(path.join(home.home, "realcache-"))
    const link = path.join(home.home, `cachelink-${route}`)
    fs.symlinkSync(real, link)
    process.env.XDG_CACHE_HOME = link
    try {
      await using dir = await project(files, policy)
      await adminIndexes(route, dir.path).catch(() => {})
      // What the guard moved aside: the built-ins' cache folder, renamed next to where it was.
      const aside = fs.readdirSync(real).filter((n) => n.startsWith("opencode-builtins.blocked-by-security-"))
      expect(aside).toEqual([])
      const cacheDir = path.join(link, "opencode-builtins", "resource-index")
      const realDir = fs.realpathSync(cacheDir)
      const viewer = await openShell(route === "fork" ? "core" : "plugin", dir.path)
      try {
        const out: string[] = []
        const r1 = await viewer.bash(`cat ${realDir}/*.json | tr ',' '\\n' | grep -i fourth`)
        out.push(r1.output)
        const spelled = Buffer.from(realDir).toString("base64")
        const r2 = await viewer.bash(
          `d=$(echo ${spelled} | base64 -d); cat "$d"/*.json | tr ',' '\\n' | grep -i fourth`,
        )
        out.push(r2.output)
        for (const name of fs.readdirSync(realDir)) {
          const read = await viewer.call("read", { filePath: path.join(realDir, name) })
          out.push(read.refused ? "" : read.output)
        }
        const g = await viewer.call("grep", { pattern: "fourth", path: realDir })
        out.push(g.output)
        expect(out.join("\n")).not.toContain(SECRET)
      } finally {
        await viewer.close()
      }
    } finally {
      process.env.XDG_CACHE_HOME = saved
    }
  }, 120_000)

  test("AM6b ~/.cache a symbolic link: a shell command's held-links record is kept in the built-ins' cache folder, nothing moved aside", async () => {
    const saved = { HOME: process.env.HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME }
    const userHome = fs.mkdtempSync(path.join(home.home, "home-"))
    const real = fs.mkdtempSync(path.join(home.home, "realcache-"))
    fs.symlinkSync(real, path.join(userHome, ".cache"))
    process.env.HOME = userHome
    delete process.env.XDG_CACHE_HOME
    try {
      await using dir = await project(files, policy)
      const viewer = await openShell(route === "fork" ? "core" : "plugin", dir.path)
      try {
        // Before each command the layer records the links it holds in `<cache>/opencode-builtins/held-links`.
        const r = await viewer.bash("echo done")
        expect(r.output).toContain("done")
      } finally {
        await viewer.close()
      }
      expect(fs.readdirSync(real).filter((n) => n.includes("blocked-by-security"))).toEqual([])
      expect(fs.existsSync(path.join(real, "opencode-builtins", "held-links"))).toBe(true)
    } finally {
      process.env.HOME = saved.HOME
      process.env.XDG_CACHE_HOME = saved.XDG_CACHE_HOME
    }
  }, 120_000)

  test("AM2 XDG_CACHE_HOME inside the project: grep, glob and commands over the project", async () => {
    const saved = process.env.XDG_CACHE_HOME
    try {
      await using dir = await project(files, policy)
      process.env.XDG_CACHE_HOME = path.join(dir.path, ".cache")
      const cacheDir = await adminIndexes(route, dir.path)
      const viewer = await openShell(route === "fork" ? "core" : "plugin", dir.path)
      try {
        const out: string[] = []
        for (const cmd of [
          `grep -ri fourth . 2>&1 | head`,
          `cat .ca*/*/*/*.json | tr ',' '\\n' | grep -i fourth`,
          `cd .cache && ls -R`,
          `cat $XDG_CACHE_HOME/opencode-builtins/resource-index/* | grep -o 'fourth.\\{0,20\\}'`,
        ]) {
          const r = await viewer.bash(cmd)
          out.push(`${cmd} refused=${r.refused} ${r.reason ?? ""} => ${r.output}`)
        }
        const g = await viewer.call("grep", { pattern: "fourth", path: dir.path })
        out.push(`grep: ${g.refused} ${g.output}`)
        const gl = await viewer.call("glob", { pattern: "**/*.json", path: dir.path })
        out.push(`glob: ${gl.refused} ${gl.output}`)
        expect(out.join("\n")).not.toContain(SECRET)
      } finally {
        await viewer.close()
      }
      void cacheDir
    } finally {
      process.env.XDG_CACHE_HOME = saved
    }
  }, 120_000)
})

describe.each(ROUTES)("route %s: AM3 the bare-link fallback", (route) => {
  test("AM3 a bare link whose own target is protected tells whether a protected file exists under the type folder", async () => {
    const policy3 = {
      ...POLICY,
      rules: [
        ...POLICY.rules,
        { pattern: "vault", type: "directory", deniedOperations: ["read", "llm"], allowedRoles: [] },
      ],
    }
    const files3 = {
      // The protected files: one exists under the type folder, its neighbour does not.
      ".opencode/knowledge-base/vault/payroll-2027.json": '{"salary": "x"}\n',
      // Next to the linking page: protected files of the same names (a role may write them; here they are just there).
      ".opencode/knowledge-base/notes/vault/payroll-2027.json": "{}\n",
      ".opencode/knowledge-base/notes/vault/payroll-2099.json": "{}\n",
      ".opencode/knowledge-base/notes/page.md":
        "---\ntitle: Page\ndescription: a page\n---\nSee [a](vault/payroll-2027.json) and [b](vault/payroll-2099.json).\n",
    }
    await using dir = await project(files3, policy3)
    const s = await open(route, dir.path)
    try {
      const l = await s.call("resource-load", { id: "page", includeReferences: true })
      const q = await s.call("resource-query", { query: "page" })
      const text = [l.output, l.failed ?? "", l.refused ?? "", q.output].join("\n")
      const line = (name: string) =>
        text
          .split("\n")
          .filter((x) => x.includes(name))
          .join(" | ")
      // The two links must read alike: whether vault/payroll-2027.json exists under the type folder is protected.
      expect(line("payroll-2027").replaceAll("2027", "N")).toBe(line("payroll-2099").replaceAll("2099", "N"))
    } finally {
      await s.close()
    }
  }, 60_000)
})

describe.each(ROUTES)("route %s: AM3b the bare-link fallback, what the model is sent", (route) => {
  test("AM3b what resource-query and resource-load send differs with whether a protected file exists", async () => {
    const policy3 = {
      ...POLICY,
      rules: [
        ...POLICY.rules,
        { pattern: "vault", type: "directory", deniedOperations: ["read", "llm"], allowedRoles: [] },
      ],
    }
    const seen = async (withTarget: boolean) => {
      const files3: Record<string, string> = {
        ".opencode/knowledge-base/notes/vault/payroll-2027.json": "{}\n",
        ".opencode/knowledge-base/notes/page.md":
          "---\ntitle: Page\ndescription: a page\n---\nSee [a](vault/payroll-2027.json).\n",
      }
      if (withTarget) files3[".opencode/knowledge-base/vault/payroll-2027.json"] = '{"salary": "x"}\n'
      await using dir = await project(files3, policy3)
      const s = await open(route, dir.path)
      try {
        const q = await s.call("resource-query", { query: "page" })
        const l = await s.call("resource-load", { id: "page", includeReferences: true })
        return [q.output, l.output]
          .join("\n")
          .replace(/[0-9a-f]{8}/g, "H")
          .replaceAll(dir.path, "D")
      } finally {
        await s.close()
      }
    }
    const present = await seen(true)
    const absent = await seen(false)
    expect(present).toBe(absent)
  }, 60_000)
})

describe.each(["plugin", "core"] as const)("route %s: AM3c the agent plants the link and the decoy itself", (route) => {
  test("AM3c an agent tells whether a protected file exists by writing a page and a decoy, then resource-query", async () => {
    const policy3 = {
      ...POLICY,
      rules: [
        ...POLICY.rules,
        { pattern: "vault", type: "directory", deniedOperations: ["read", "llm"], allowedRoles: [] },
      ],
    }
    const answer = async (name: string) => {
      await using dir = await project(
        { ".opencode/knowledge-base/vault/payroll-2027.json": '{"salary": "x"}\n' },
        policy3,
      )
      const s = await openShell(route, dir.path)
      try {
        const w1 = await s.call("write", {
          filePath: path.join(dir.path, ".opencode/knowledge-base/notes/vault", name),
          content: "{}\n",
        })
        const w2 = await s.call("write", {
          filePath: path.join(dir.path, ".opencode/knowledge-base/notes/page.md"),
          content: `---\ntitle: Page\ndescription: a page\n---\nSee [a](vault/${name}).\n`,
        })
        expect(w1.refused).toBe(false)
        expect(w2.refused).toBe(false)
        const q = await s.call("resource-query", { query: "page" })
        return q.output
      } finally {
        await s.close()
      }
    }
    const exists = await answer("payroll-2027.json")
    const missing = await answer("payroll-2031.json")
    // Whether .opencode/knowledge-base/vault/payroll-2027.json exists must not show.
    expect(exists.includes("[REDACTED")).toBe(missing.includes("[REDACTED"))
  }, 60_000)
})
