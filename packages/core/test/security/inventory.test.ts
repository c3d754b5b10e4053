import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityConfig } from "../../security/config"
import { SecurityInventory } from "../../security/inventory"
import { SecurityTree } from "../../security/tree"
import { POLICY, project } from "./fixture"

async function build(dir: string, cache?: SecurityInventory.Cache) {
  const state = SecurityConfig.load(dir, { home: path.join(dir, "home") })
  if (state.status !== "valid") throw new Error(state.status)
  const tree = await SecurityTree.list(dir)
  return SecurityInventory.build({ config: state.config, role: "viewer", tree, cache, policyKey: "1" })
}

describe("SecurityInventory", () => {
  test("outermost entries: a folder a directory rule protects, single files elsewhere; inodes and fingerprints", async () => {
    await using dir = await project()
    const index = await build(dir.path)
    const top = index.top.map((e) => `${e.dir ? "dir" : "file"} ${path.relative(dir.path, e.path)}`).sort()
    expect(top).toContain("dir secrets")
    expect(top).toContain("file .env")
    expect(top).toContain("file app/.env.production")
    expect(top).toContain("file .opencode-security.json")
    expect(top).not.toContain("file secrets/api.key")
    // Every protected file is known (also those inside protected folders), with its inode and fingerprints.
    expect(index.files.has(dir.file("secrets/nested/deep.txt"))).toBe(true)
    const stat = fs.statSync(dir.file("secrets/api.key"))
    expect(index.inodes.get(`${stat.dev}:${stat.ino}`)).toBe(dir.file("secrets/api.key"))
    expect(index.read.bytes).toBeGreaterThan(0)
  })

  test("files holding protected segments, with the operations their segments deny", async () => {
    await using dir = await project()
    const index = await build(dir.path)
    expect([...(index.segmented.get(dir.file("src/app.ts")) ?? [])].sort()).toEqual(["llm", "read", "write"])
    expect(index.segmented.has(dir.file("src/util.ts"))).toBe(false)
  })

  test("a ~/ rule protects the home folder outside the project listing", async () => {
    await using dir = await project()
    const index = await build(dir.path)
    expect(index.top.some((e) => e.path === dir.file("home/.ssh") && e.dir)).toBe(true)
  })

  test("a second build reuses decisions and file texts; a changed policy key drops the decisions", async () => {
    await using dir = await project()
    const cache: SecurityInventory.Cache = new Map()
    await build(dir.path, cache)
    const decided = cache.decisions!.map.size
    expect(decided).toBeGreaterThan(5)
    await build(dir.path, cache)
    expect(cache.decisions!.map.size).toBe(decided)
    expect(POLICY.rules.length).toBeGreaterThan(0)
  })
})
