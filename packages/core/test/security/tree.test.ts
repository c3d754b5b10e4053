import { describe, expect, test } from "bun:test"
import fs from "fs"
import { SecurityTree } from "../../security/tree"
import { tmpdir } from "../fixture"

const names = (tree: SecurityTree.Tree) =>
  [...SecurityTree.entries(tree)].map((e) => e.path.slice(tree.root.length + 1)).sort()

describe("SecurityTree", () => {
  test("lists every entry, does not enter .git or node_modules, follows no link", async () => {
    await using dir = await tmpdir({ "a/b.txt": "x", "node_modules/p/i.js": "x", ".git/HEAD": "x", "c.txt": "x" })
    fs.symlinkSync(dir.file("a"), dir.file("link"))
    const tree = await SecurityTree.list(dir.path)
    expect(names(tree)).toEqual([".git", "a", "a/b.txt", "c.txt", "link", "node_modules"])
    expect([...SecurityTree.entries(tree)].find((e) => e.name === "link")?.kind).toBe("other")
  })

  test("refresh sees a file created, removed or renamed anywhere, and lists only what changed", async () => {
    await using dir = await tmpdir({ "a/b/c.txt": "x", "d/e.txt": "x" })
    const tree = await SecurityTree.list(dir.path)
    expect(SecurityTree.refresh(tree).changed).toBe(false)
    fs.writeFileSync(dir.file("a/b/new.txt"), "y")
    const one = SecurityTree.refresh(tree)
    expect(one.changed).toBe(true)
    expect(one.touched).toEqual([dir.file("a/b")])
    expect(names(one.tree)).toContain("a/b/new.txt")
    fs.renameSync(dir.file("d"), dir.file("moved"))
    fs.rmSync(dir.file("a/b/c.txt"))
    const two = SecurityTree.refresh(one.tree)
    expect(names(two.tree)).toEqual(["a", "a/b", "a/b/new.txt", "moved", "moved/e.txt"])
  })

  test("the listing is bounded and says so", async () => {
    await using dir = await tmpdir(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, "x"])))
    const tree = await SecurityTree.list(dir.path, { maxEntries: 5 })
    expect(tree.truncated).toBe(true)
    expect(tree.count).toBe(5)
  })

  test("a listing cut short names the folders it did not list, and find walks them with no budget", async () => {
    const files: Record<string, string> = { "app/.env": "x", "zzz/sub/.git/HEAD": "x" }
    for (let i = 0; i < 20; i++) files[`aaa/${i}`] = "x"
    await using dir = await tmpdir(files)
    const tree = await SecurityTree.list(dir.path, { maxEntries: 10 })
    expect(tree.truncated).toBe(true)
    // `aaa` (20 entries) does not fit: it and every folder after it are unlisted, not taken for empty.
    expect(tree.unlisted.sort()).toEqual([dir.file("aaa"), dir.file("app"), dir.file("zzz")])
    expect(tree.cut).toEqual({ dir: dir.file("aaa"), entries: 20 })
    expect(SecurityTree.find(tree.unlisted, ".git").map((e) => e.path)).toEqual([dir.file("zzz/sub/.git")])
    fs.writeFileSync(dir.file("new.txt"), "x")
    expect(SecurityTree.refresh(tree).tree.unlisted.sort()).toEqual(tree.unlisted)
    fs.rmSync(dir.file("aaa"), { recursive: true })
    const fits = SecurityTree.refresh(tree).tree
    expect(fits.truncated).toBe(false)
    expect(fits.unlisted).toEqual([])
  })
})
