// Red team AO1: the built-ins' local state folder of a nested project (a nested repository, a subfolder session of a
// project without git), read from a session at the outer root; and the outer project's, from a nested session. Red team
// BB4 (bypass): a viewer's command makes a nested repository's `.opencode` a link to a plain folder; a later admin
// session there must not write its local state through the link.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { POLICY, project } from "./fixture"
import { git, isolateHome, open as openShell, type RouteName } from "./redteam-helpers"
import { ROUTES, open, type Route } from "./own-session"

let home: ReturnType<typeof isolateHome>
beforeAll(() => {
  home = isolateHome()
})
afterAll(() => home.restore(), 60_000)

const SECRET = "launch on the fourth of july"
const rev = (s: string) => [...s].reverse().join("")
const shellRoute = (route: Route): RouteName => (route === "fork" ? "core" : "plugin")

const RULE = { type: "directory", deniedOperations: ["read", "llm"], allowedRoles: ["admin"] }

/**
 * The outer project (its policy protecting `services/billing/plans/**` but to admin) holding `services/billing`, with
 * the same roles and `plans/**` protected in its own policy: a nested repository (`repo`), or a subfolder of a project
 * without git.
 */
async function monorepo(repo: boolean) {
  const policy = { ...POLICY, rules: [...POLICY.rules, { ...RULE, pattern: "services/billing/plans/**" }] }
  const nested = { ...POLICY, rules: [...POLICY.rules, { ...RULE, pattern: "plans/**" }] }
  const dir = await project(
    {
      "services/billing/.opencode-security.json": JSON.stringify(nested, null, 2),
      "services/billing/plans/q3.txt": `${SECRET}\n`,
      "services/billing/README.md": "billing\n",
    },
    policy,
  )
  fs.rmSync(dir.file(".git"), { recursive: true, force: true })
  if (repo) {
    git(dir.path, "init", "-q")
    git(dir.file("services/billing"), "init", "-q")
  }
  return dir
}

/** The user, as admin, has OpenCode read the plan in `services/billing`: its capture keeps what the read showed. */
async function adminReads(route: Route, billing: string) {
  process.env.OPENCODE_SECURITY_ROLE = "admin"
  const admin = await open(route, billing)
  try {
    expect(await admin.read("plans/q3.txt")).toContain(SECRET)
  } finally {
    await admin.close()
    delete process.env.OPENCODE_SECURITY_ROLE
  }
  const local = path.join(billing, ".opencode/builtins-local")
  for (let i = 0; i < 100 && !stored(local).includes(SECRET); i++) await Bun.sleep(50)
  expect(stored(local)).toContain(SECRET)
  return local
}

/** Everything below `dir`, concatenated. */
function stored(dir: string): string {
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }) : []) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else out.push(fs.readFileSync(p, "utf8"))
    }
  }
  walk(dir)
  return out.join("\n")
}

describe.each(ROUTES)("route %s: AO1 the local state folder of a nested project", (route) => {
  test.each([
    ["a nested repository", true],
    ["a subfolder session of a project without git", false],
  ] as const)(
    "AO1 a viewer's command at the root does not read what an admin session of %s captured",
    async (_, repo) => {
      await using dir = await monorepo(repo)
      const local = await adminReads(route, dir.file("services/billing"))
      const viewer = await openShell(shellRoute(route), dir.path)
      try {
        // The plan itself is hidden from the viewer (held before the fix).
        expect((await viewer.bash("cat services/billing/plans/q3.txt")).output).not.toContain(SECRET)
        const r = await viewer.bash("cat services/billing/.opencode/builtins-local/capture/*.jsonl | rev")
        // Spelled so that the static check does not see the path: the sandbox alone.
        const folder = Buffer.from("services/billing/.opencode/builtins-local/capture").toString("base64")
        const hidden = await viewer.bash(`cat "$(echo ${folder} | base64 -d)"/*.jsonl | rev`)
        const read = await viewer.call(
          "read",
          { filePath: path.join(local, "capture/captures.jsonl") },
          { noExecute: true },
        )
        expect({
          command: r.output.includes(rev(SECRET)),
          sandbox: hidden.output.includes(rev(SECRET)),
          readAllowed: !read.refused,
        }).toEqual({ command: false, sandbox: false, readAllowed: false })
      } finally {
        await viewer.close()
      }
    },
    120_000,
  )

  test("AO1 a nested project's local state made while the viewer's session runs is hidden from its next command, through a link, and from ripgrep", async () => {
    await using dir = await monorepo(true)
    const viewer = await openShell(shellRoute(route), dir.path)
    try {
      // The viewer's session has run a command (its index listed the project) before the nested session's first one.
      await viewer.bash("ls services/billing")
      await adminReads(route, dir.file("services/billing"))
      // The link spelled so that the static check does not see the path: the sandbox and the read tool judge it.
      const target = Buffer.from("services/billing/.opencode/builtins-local").toString("base64")
      const r = await viewer.bash(`ln -s "$(echo ${target} | base64 -d)" peek; cat peek/capture/*.jsonl | rev`)
      expect(fs.lstatSync(dir.file("peek")).isSymbolicLink()).toBe(true)
      const read = await viewer.call("read", { filePath: dir.file("peek/capture/captures.jsonl") }, { noExecute: true })
      // OpenCode's ripgrep (grep, glob, list) skips every such folder by name, one made after the index too.
      const rg = fs.readFileSync(process.env.RIPGREP_CONFIG_PATH ?? "/dev/null", "utf8")
      expect({
        command: r.output.includes(rev(SECRET)),
        readAllowed: !read.refused,
        ripgrep: rg.includes("--glob=!**/.opencode/builtins-local/**"),
      }).toEqual({ command: false, readAllowed: false, ripgrep: true })
    } finally {
      await viewer.close()
    }
  }, 120_000)

  test("AO1 a session in a nested repository does not read the outer project's local state", async () => {
    await using dir = await monorepo(true)
    // What a session at the outer root captured (written as the capture feature writes it).
    fs.mkdirSync(dir.file(".opencode/builtins-local/capture"), { recursive: true })
    fs.writeFileSync(dir.file(".opencode/builtins-local/capture/captures.jsonl"), JSON.stringify({ output: SECRET }))
    const nested = await openShell(shellRoute(route), dir.file("services/billing"))
    try {
      const r = await nested.bash("cat ../../.opencode/builtins-local/capture/*.jsonl | rev")
      const read = await nested.call(
        "read",
        { filePath: dir.file(".opencode/builtins-local/capture/captures.jsonl") },
        { noExecute: true },
      )
      expect({ command: r.output.includes(rev(SECRET)), readAllowed: !read.refused }).toEqual({
        command: false,
        readAllowed: false,
      })
    } finally {
      await nested.close()
    }
  }, 120_000)
})

describe.each(ROUTES)("route %s: BB AO1 a nested .opencode the agent made a link", (route) => {
  test("BB a viewer does not read an admin capture written through a .opencode link it planted earlier", async () => {
    await using dir = await monorepo(true)
    // Earlier, the viewer's agent (outer root) plants the nested project's .opencode as a link to a plain folder.
    const planter = await openShell(shellRoute(route), dir.path)
    try {
      await planter.bash(`mkdir -p stash && ln -s ../../stash services/billing/$(echo Lm9wZW5jb2Rl | base64 -d)`)
    } finally {
      await planter.close()
    }
    expect(fs.lstatSync(dir.file("services/billing/.opencode")).isSymbolicLink()).toBe(true)
    process.env.OPENCODE_SECURITY_ROLE = "admin"
    const admin = await open(route, dir.file("services/billing"))
    try {
      expect(await admin.read("plans/q3.txt")).toContain(SECRET)
    } finally {
      await admin.close()
      delete process.env.OPENCODE_SECURITY_ROLE
    }
    // The capture is not written through the link (nothing of the admin session lands in the viewer's folder).
    expect(stored(dir.file("stash"))).not.toContain(SECRET)
    const viewer = await openShell(shellRoute(route), dir.path)
    let out = ""
    try {
      const r = await viewer.bash("cat stash/*/capture/*.jsonl | rev")
      out = r.raw
    } finally {
      await viewer.close()
    }
    expect(out).not.toContain(rev(SECRET))
  }, 120_000)

  test("BB state already lying behind a .opencode link (written there before) is hidden at its real path", async () => {
    await using dir = await monorepo(true)
    fs.mkdirSync(dir.file("stash/builtins-local/capture"), { recursive: true })
    fs.writeFileSync(dir.file("stash/builtins-local/capture/current.jsonl"), `${SECRET}\n`)
    // The user's own setup (or an older version's writes): the root's .opencode a link to a folder holding state.
    fs.rmSync(dir.file(".opencode"), { recursive: true, force: true })
    fs.symlinkSync("stash", dir.file(".opencode"))
    const viewer = await openShell(shellRoute(route), dir.path)
    let out = ""
    try {
      out = (await viewer.bash("cat stash/builtins-local/capture/current.jsonl | rev")).raw
    } finally {
      await viewer.close()
    }
    expect(out).not.toContain(rev(SECRET))
  }, 120_000)
})
