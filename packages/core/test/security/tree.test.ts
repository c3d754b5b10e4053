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

  test("a name that is not valid UTF-8 is kept as bytes, and its folder counts as unlisted (red team AH1, AH3)", async () => {
    await using dir = await tmpdir({ "a/ok.txt": "x", "node_modules/p/i.js": "x" })
    const raw = Buffer.from([0x63, 0x61, 0x66, 0xe9]) // caf\xe9 (Latin-1)
    fs.mkdirSync(SecurityTree.bytePath(dir.file("a"), raw))
    fs.writeFileSync(Buffer.concat([SecurityTree.bytePath(dir.file("a"), raw), Buffer.from("/.env")]), "T=1")
    fs.mkdirSync(SecurityTree.bytePath(dir.file("node_modules/p"), Buffer.from([0xff])))
    const tree = await SecurityTree.list(dir.path)
    // Not listed under a mangled name (U+FFFD), which names a path that does not exist.
    expect(names(tree)).toEqual(["a", "a/ok.txt", "node_modules"])
    expect(tree.unspelled.map((u) => [u.dir, u.name.toString("hex")])).toEqual([[dir.file("a"), raw.toString("hex")]])
    expect(fs.existsSync(tree.unspelled[0].path)).toBe(true)
    expect(tree.unlisted).toEqual([dir.file("a")])
    // The same below the folders the tree does not enter, and in the walk of unlisted folders.
    const below = SecurityTree.below(tree, ".git")
    expect(below.unspelled.map((u) => u.dir)).toEqual([dir.file("node_modules/p")])
    const found: SecurityTree.Unspelled[] = []
    SecurityTree.find([dir.path], ".git", undefined, found)
    expect(found.map((u) => u.dir)).toEqual([dir.file("a")])
    // Renamed to a UTF-8 name, the folder is listed again.
    fs.renameSync(tree.unspelled[0].path, dir.file("a/caf%E9"))
    const next = SecurityTree.refresh(tree).tree
    expect(names(next)).toEqual(["a", "a/caf%E9", "a/caf%E9/.env", "a/ok.txt", "node_modules"])
    expect({ unspelled: next.unspelled.length, unlisted: next.unlisted }).toEqual({ unspelled: 0, unlisted: [] })
  })

  test("a valid name equal to the U+FFFD reading of a name that is not UTF-8 is listed, as what it is (red team AN1c)", async () => {
    await using dir = await tmpdir({ "sub/ok.txt": "x", "node_modules/pkg/i.js": "x" })
    // 85 × the truncated sequence \xe2\x82 reads as 85 × U+FFFD, the bytes of a valid name beside it.
    const bad = Buffer.from("\xe2\x82".repeat(85), "latin1")
    const twin = "\uFFFD".repeat(85)
    for (const top of ["sub", "node_modules/pkg"]) {
      fs.writeFileSync(SecurityTree.bytePath(dir.file(top), bad), "not a folder")
      fs.mkdirSync(dir.file(`${top}/${twin}/.git`), { recursive: true })
    }
    const tree = await SecurityTree.list(dir.path)
    expect(names(tree)).toContain(`sub/${twin}/.git`)
    expect([...SecurityTree.entries(tree)].find((e) => e.path === dir.file(`sub/${twin}`))?.kind).toBe("dir")
    expect(tree.unspelled.map((u) => u.name.toString("hex"))).toEqual([bad.toString("hex")])
    expect(SecurityTree.find([dir.file("sub")], ".git").map((e) => e.path)).toEqual([dir.file(`sub/${twin}/.git`)])
    expect(SecurityTree.below(tree, ".git").hits.map((e) => e.path)).toEqual([
      dir.file(`node_modules/pkg/${twin}/.git`),
    ])
  })

  test("findBytes walks by byte paths into names that are not UTF-8, at any depth (red team AN1e)", async () => {
    await using dir = await tmpdir({ "node_modules/pkg/i.js": "x" })
    const odd = SecurityTree.bytePath(dir.file("node_modules/pkg"), Buffer.from([0xff]))
    const deeper = Buffer.concat([odd, Buffer.from("/a/"), Buffer.from([0xfe]), Buffer.from("/b")])
    fs.mkdirSync(Buffer.concat([odd, Buffer.from("/.git/hooks")]), { recursive: true })
    fs.mkdirSync(Buffer.concat([deeper, Buffer.from("/.git")]), { recursive: true })
    const tree = await SecurityTree.list(dir.path)
    const below = SecurityTree.below(tree, ".git")
    // The string walk cannot enter it: only the name is known.
    expect({ hits: below.hits, unspelled: below.unspelled.map((u) => u.path.toString("hex")) }).toEqual({
      hits: [],
      unspelled: [odd.toString("hex")],
    })
    const found = SecurityTree.findBytes(
      below.unspelled.map((u) => u.path),
      ".git",
    )
    expect(found.map((b) => b.toString("hex")).sort()).toEqual(
      [Buffer.concat([odd, Buffer.from("/.git")]), Buffer.concat([deeper, Buffer.from("/.git")])]
        .map((b) => b.toString("hex"))
        .sort(),
    )
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

describe("SecurityTree.added", () => {
  const rel = (tree: SecurityTree.Tree, entries: SecurityTree.Entry[]) =>
    entries.map((e) => `${e.path.slice(tree.root.length + 1)}:${e.kind}`).sort()

  test("what exists now and did not before: made, renamed there, hard-linked, or of another kind; nothing else", async () => {
    await using dir = await tmpdir({ "README.md": "x", "lib/a.js": "x", "pkg/index.js": "x", "was/file": "x" })
    const before = await SecurityTree.list(dir.path)
    expect(SecurityTree.added(before).added).toEqual([])
    fs.mkdirSync(dir.file(".github/workflows"), { recursive: true })
    fs.writeFileSync(dir.file(".github/workflows/ci.yml"), "on: push\n")
    fs.renameSync(dir.file("README.md"), dir.file("Dockerfile"))
    fs.renameSync(dir.file("lib"), dir.file("pkg/vendor"))
    fs.linkSync(dir.file("pkg/index.js"), dir.file("pkg/linked.js"))
    fs.rmSync(dir.file("was/file"))
    fs.mkdirSync(dir.file("was/file"))
    const { tree, added } = SecurityTree.added(before)
    expect(rel(tree, added)).toEqual([
      ".github/workflows/ci.yml:file",
      ".github/workflows:dir",
      ".github:dir",
      "Dockerfile:file",
      "pkg/linked.js:file",
      "pkg/vendor/a.js:file",
      "pkg/vendor:dir",
      "was/file:dir",
    ])
    // Compared with the tree as it was, not with the last refresh: the same answer again.
    expect(rel(tree, SecurityTree.added(before).added)).toHaveLength(8)
    expect(SecurityTree.added(tree).added).toEqual([])
  })

  test("a folder a call pushed out of the listing's budget is walked with no budget, and only what is new there is named", async () => {
    const files: Record<string, string> = { "aaa/x": "x", "zzz/keep": "x" }
    for (let i = 0; i < 5; i++) files[`bbb/${i}`] = "x"
    await using dir = await tmpdir(files)
    // Past the racy window, so that an unchanged folder's record is reused by the refresh (not listed again).
    await Bun.sleep(2_100)
    // root (3) + aaa (1) + bbb (5) + zzz (1): all fit.
    const before = await SecurityTree.list(dir.path, { maxEntries: 10 })
    expect(before.unlisted).toEqual([])
    for (let i = 0; i < 2; i++) fs.writeFileSync(dir.file(`aaa/${i}`), "x")
    fs.mkdirSync(dir.file("zzz/vendor"))
    fs.writeFileSync(dir.file("zzz/vendor/evil.js"), "x")
    const { tree, added } = SecurityTree.added(before)
    expect(tree.unlisted).toContain(dir.file("zzz"))
    const names = rel(tree, added)
    expect(names).toContain("zzz/vendor:dir")
    expect(names).toContain("zzz/vendor/evil.js:file")
    // `bbb` did not change: the cut fell on it, and its previous record (which `added` compares with) is whole.
    expect(tree.unlisted).toContain(dir.file("bbb"))
    expect(names.filter((n) => !n.startsWith("aaa/"))).toEqual(["zzz/vendor/evil.js:file", "zzz/vendor:dir"])
  })
})

describe("SecurityTree.below", () => {
  const rel = (root: string, hits: SecurityTree.Entry[]) => hits.map((e) => e.path.slice(root.length + 1)).sort()

  test("finds .git entries below node_modules, .hg and .svn, at any depth, without entering a .git", async () => {
    await using dir = await tmpdir({
      "node_modules/a/node_modules/b/.git/HEAD": "x",
      "node_modules/c/index.js": "x",
      ".svn/x/.git": "gitdir: y\n",
      ".hg/store/.git/HEAD": "x",
      "src/node_modules/d/.git/HEAD": "x",
      "src/plain/.git/HEAD": "x",
      ".git/modules/m/.git/HEAD": "x",
    })
    const tree = await SecurityTree.list(dir.path)
    const found = SecurityTree.below(tree, ".git")
    expect(rel(dir.path, found.hits)).toEqual([
      ".hg/store/.git",
      ".svn/x/.git",
      "node_modules/a/node_modules/b/.git",
      "src/node_modules/d/.git",
    ])
    expect(found.over).toBe(false)
  })

  test("a later look reuses what did not change and sees a repository made deep inside", async () => {
    await using dir = await tmpdir({ "node_modules/a/b/c/i.js": "x", "node_modules/d/i.js": "x" })
    // Changed long ago: not "racy" (listed again because it changed within the clock's granularity).
    const past = new Date(Date.now() - 3_600_000)
    fs.utimesSync(dir.file("node_modules/d"), past, past)
    // Setting the time is itself a change (its change time is now): racy until the clock's granularity has passed.
    await Bun.sleep(2_100)
    const tree = await SecurityTree.list(dir.path)
    const first = SecurityTree.below(tree, ".git")
    expect(first.hits).toEqual([])
    fs.mkdirSync(dir.file("node_modules/a/b/c/.git"))
    const second = SecurityTree.below(tree, ".git", first)
    expect(rel(dir.path, second.hits)).toEqual(["node_modules/a/b/c/.git"])
    expect(second.folders.get(dir.file("node_modules/d"))).toBe(first.folders.get(dir.file("node_modules/d")))
  })

  test("past its budget it keeps no record of the rest but still finds what is there (walked again)", async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 30; i++) files[`node_modules/p${i}/lib/i.js`] = "x"
    await using dir = await tmpdir(files)
    const tree = await SecurityTree.list(dir.path)
    const first = SecurityTree.below(tree, ".git", undefined, 5)
    expect(first.over).toBe(true)
    expect(first.folders.size).toBe(5)
    fs.mkdirSync(dir.file("node_modules/p17/lib/.git"))
    fs.mkdirSync(dir.file("node_modules/p3/.git"))
    const second = SecurityTree.below(tree, ".git", first)
    expect(rel(dir.path, second.hits)).toEqual(["node_modules/p17/lib/.git", "node_modules/p3/.git"])
  })

  // Red team AE2: a command adds an entry, then puts the folder's modification time back (`touch -r`); the change
  // time, which nothing in userspace sets back, still tells.
  describe("a folder whose modification time is put back after a change", () => {
    const old = async (dir: { file(p: string): string }, folders: string[]) => {
      const past = new Date(Date.now() - 3_600_000)
      for (const f of folders) fs.utimesSync(dir.file(f), past, past)
      // Setting the times is a change too: wait until the folders are no longer racy, so their records are reused.
      await Bun.sleep(2_100)
      return past
    }

    test("refresh lists it again", async () => {
      await using dir = await tmpdir({ "lib/dep/i.js": "x", "other/i.js": "x" })
      const past = await old(dir, ["lib/dep", "other"])
      const tree = await SecurityTree.list(dir.path)
      expect(SecurityTree.refresh(tree).changed).toBe(false)
      fs.mkdirSync(dir.file("lib/dep/.git"))
      fs.utimesSync(dir.file("lib/dep"), past, past)
      expect(fs.statSync(dir.file("lib/dep")).mtimeMs).toBe(past.getTime())
      const next = SecurityTree.refresh(tree)
      expect(next.changed).toBe(true)
      expect(names(next.tree)).toContain("lib/dep/.git")
      // What did not change is still reused.
      expect(next.tree.folders.get(dir.file("other"))).toBe(tree.folders.get(dir.file("other")))
    }, 60_000)

    test("below looks in it again", async () => {
      await using dir = await tmpdir({ "node_modules/dep/i.js": "x", "node_modules/other/i.js": "x" })
      const past = await old(dir, ["node_modules/dep", "node_modules/other", "node_modules"])
      const tree = await SecurityTree.list(dir.path)
      const first = SecurityTree.below(tree, ".git")
      expect(first.hits).toEqual([])
      fs.mkdirSync(dir.file("node_modules/dep/.git"))
      fs.utimesSync(dir.file("node_modules/dep"), past, past)
      const second = SecurityTree.below(tree, ".git", first)
      expect(rel(dir.path, second.hits)).toEqual(["node_modules/dep/.git"])
      expect(second.folders.get(dir.file("node_modules/other"))).toBe(first.folders.get(dir.file("node_modules/other")))
    }, 60_000)
  })
})
