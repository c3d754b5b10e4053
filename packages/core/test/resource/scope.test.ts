import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import type { Host } from "../../host"
import { LocalState } from "../../learning/local"
import { ResourceCache } from "../../resource/cache"
import { ResourceLoader } from "../../resource/loader"
import { ResourcePolicy } from "../../resource/policy"
import { SecurityGuard } from "../../security/guard"
import { Logger } from "../../util/log"
import { md, tmpdir } from "../fixture"
import { policy } from "./guarded"

// Red team AI, AI5: an admin process wrote an admin-only article's metadata into the resource index cache, which a
// viewer process of the same project read (and a viewer's command could `cat`). The cache is one file per security
// scope (role and policy): no process reads, nor is served from, a file another role's process wrote.

const SECRET = "launch on the fourth of july"
const ROLES = [
  { name: "viewer", level: 10 },
  { name: "admin", level: 100 },
]
const FILES = {
  ".opencode/knowledge-base/finance/launch.md": md({ title: "Launch plan", description: SECRET, tags: ["launch"] }),
  ".opencode/knowledge-base/public.md": md({ title: "Public", description: "public page" }),
  ".opencode-security.json": policy(
    [
      {
        pattern: ".opencode/knowledge-base/finance/**",
        type: "directory",
        deniedOperations: ["read", "llm"],
        allowedRoles: ["admin"],
      },
    ],
    ROLES,
  ),
}

/** A loader of the project as OpenCode's process of `role` runs it (the real guard's check, its scope). */
async function processOf(dir: string, role: string | undefined, cache: string) {
  const guard = await SecurityGuard.create({
    directory: dir,
    worktree: dir,
    env: role ? { OPENCODE_SECURITY_ROLE: role } : {},
    intervalMs: 0,
  })
  await guard.ready()
  const host: Host = {
    directory: dir,
    worktree: dir,
    log: Logger.silent,
    access: (p, op) => guard.access(p, op, "builtin-tool", { quiet: true }),
    accessVersion: () => guard.accessVersion(),
    accessScope: () => LocalState.guardScope(guard),
  }
  const loader = ResourceLoader.create(host, { persistCache: true, indexCachePath: cache })
  return {
    guard,
    loader,
    scope: () => LocalState.guardScope(guard),
    async [Symbol.asyncDispose]() {
      await loader.dispose()
      guard.close()
    },
  }
}

const files = (folder: string) =>
  fs.existsSync(folder)
    ? new Map(fs.readdirSync(folder).map((f) => [f, fs.readFileSync(path.join(folder, f), "utf8")]))
    : new Map()

describe("the resource index cache across security scopes (red team AI5)", () => {
  test("an admin's and a viewer's process each keep a file of their own; the viewer's holds nothing of the admin-only article", async () => {
    await using dir = await tmpdir(FILES)
    const base = dir.file("cache/index.json")
    {
      await using admin = await processOf(dir.path, "admin", base)
      expect(JSON.stringify(await admin.loader.query({ query: "launch" }))).toContain(SECRET)
      await admin.loader.flush()
      expect(admin.scope()).toStartWith("admin:")
    }
    const afterAdmin = files(dir.file("cache"))
    expect([...afterAdmin.keys()]).toEqual([path.basename(LocalState.scoped(base, scopeOf(dir.path, "admin")))])
    expect([...afterAdmin.values()][0]).toContain(SECRET)
    {
      await using viewer = await processOf(dir.path, undefined, base)
      expect(viewer.scope()).toStartWith("viewer:")
      expect(JSON.stringify(await viewer.loader.query({ query: "launch" }))).not.toContain(SECRET)
      // Built, not restored or reused from the admin's file: every resource the viewer may read was parsed.
      expect(viewer.loader.stats.lastBuild?.parsed).toBe(1)
      await viewer.loader.flush()
    }
    const both = files(dir.file("cache"))
    expect(both.size).toBe(2)
    const viewerFile = path.basename(LocalState.scoped(base, scopeOf(dir.path, "viewer")))
    expect(both.get(viewerFile)).toContain("public page")
    expect(both.get(viewerFile)).not.toContain(SECRET)
    expect(both.get(viewerFile)).not.toContain("launch.md")
    // The admin's file is as the admin left it.
    for (const [name, text] of afterAdmin) expect(both.get(name)).toBe(text)
    // No unscoped file: without a policy only.
    expect(both.has("index.json")).toBe(false)
  })

  test("without a policy the cache keeps its one file, named as before", async () => {
    await using dir = await tmpdir({
      ".opencode/knowledge-base/public.md": md({ title: "Public", description: "public page" }),
    })
    const base = dir.file("cache/index.json")
    await using none = await processOf(dir.path, undefined, base)
    expect(none.scope()).toBeUndefined()
    await none.loader.index()
    await none.loader.flush()
    expect([...files(dir.file("cache")).keys()]).toEqual(["index.json"])
    expect(LocalState.scoped(ResourceCache.defaultPath("/repo"), undefined)).toBe(ResourceCache.defaultPath("/repo"))
  })

  test("a policy edited mid-session is another scope: the next build starts from that scope's file (or nothing) and writes it", async () => {
    await using dir = await tmpdir(FILES)
    const base = dir.file("cache/index.json")
    await using admin = await processOf(dir.path, "admin", base)
    await admin.loader.index()
    await admin.loader.flush()
    const first = admin.scope()!
    // The user edits the policy (a rule more); the article is still the admin's.
    const text = JSON.parse(fs.readFileSync(dir.file(".opencode-security.json"), "utf8"))
    text.rules.push({ pattern: "private/**", type: "directory", deniedOperations: ["read"], allowedRoles: [] })
    fs.writeFileSync(dir.file(".opencode-security.json"), JSON.stringify(text))
    admin.guard.state()
    await admin.guard.ready()
    expect(admin.scope()).not.toBe(first)
    admin.loader.invalidate()
    await admin.loader.index()
    expect(admin.loader.stats.lastBuild?.parsed).toBe(2)
    await admin.loader.flush()
    const now = files(dir.file("cache"))
    expect(now.has(path.basename(LocalState.scoped(base, first)))).toBe(true)
    expect(now.has(path.basename(LocalState.scoped(base, admin.scope())))).toBe(true)
  })

  test("the command-line tools keep the lowest role's file (ResourcePolicy's scope)", async () => {
    await using dir = await tmpdir(FILES)
    const opened = await ResourcePolicy.open(dir.path, dir.path)
    try {
      expect(opened.host.accessScope?.()).toBe(scopeOf(dir.path, "viewer"))
    } finally {
      opened.close()
    }
  })

  test("pruneScoped: other scopes' files of the same cache not written for 14 days go; the rest stays", async () => {
    await using dir = await tmpdir({ "c/x": "" })
    const base = dir.file("c/ab12.json")
    const keep = LocalState.scoped(base, "viewer:1")
    const old = LocalState.scoped(base, "viewer:0")
    const recent = LocalState.scoped(base, "admin:1")
    const other = LocalState.scoped(dir.file("c/cd34.json"), "viewer:0")
    const stale = (Date.now() - LocalState.SCOPED_MAX_AGE_MS - 60_000) / 1000
    for (const f of [base, keep, old, recent, other, dir.file("c/ab12.json.tmp")]) fs.writeFileSync(f, "{}")
    for (const f of [base, keep, old, other, dir.file("c/ab12.json.tmp")]) fs.utimesSync(f, stale, stale)
    expect(LocalState.pruneScoped(base, keep)).toEqual([path.basename(old)])
    expect(fs.readdirSync(dir.file("c")).sort()).toEqual(
      ["ab12.json", "ab12.json.tmp", path.basename(keep), path.basename(recent), path.basename(other), "x"].sort(),
    )
  })
})

/** The scope a process of `role` has in the project (as `LocalState.guardScope` computes it). */
function scopeOf(dir: string, role: string): string {
  return LocalState.scopeOf(role, [path.join(dir, ".opencode-security.json")])
}
