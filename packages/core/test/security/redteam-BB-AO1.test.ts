// Red team BB4 (bypass of AO1): a viewer's command makes a nested repository's `.opencode` a link to a plain folder; a later
// admin session there must not write its local state (the capture of what it read) through the link.
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
