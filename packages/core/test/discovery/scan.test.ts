import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import { DiscoveryCache } from "../../discovery/cache"
import type { DiscoveryDirectories } from "../../discovery/directories"
import { DiscoveryScan } from "../../discovery/scan"
import { md, tmpdir } from "../fixture"
import { execFileSync } from "../spawn-sync"

const place = (dir: string, type: DiscoveryDirectories.Place["type"] = "agent"): DiscoveryDirectories.Place => ({
  path: dir,
  type,
  scope: "local",
  origin: "opencode",
})
const scan = (p: DiscoveryDirectories.Place, cache = new DiscoveryCache(), timeoutMs = 2000) =>
  DiscoveryScan.directory(p, { cache, timeoutMs })

describe("DiscoveryScan", () => {
  test("markdown files, nested ones named by relative path, dot entries and other extensions skipped", async () => {
    await using dir = await tmpdir({
      "cmd/deploy.md": md({ description: "Deploy" }),
      "cmd/git/squash.MD": md({ description: "Squash" }),
      "cmd/notes.txt": "no",
      "cmd/.hidden.md": "no",
      "cmd/.drafts/x.md": "no",
    })
    const r = await scan(place(dir.file("cmd"), "command"))
    expect(r.items.map((i) => i.name)).toEqual(["deploy", "git/squash"])
    expect(r.items[1]).toMatchObject({ filePath: dir.file("cmd/git/squash.MD"), resourceType: "command" })
    expect(r).toMatchObject({ timedOut: false, problems: [], parsed: 2, cacheHits: 0 })
    expect(r.directory.exists).toBe(true)
  })

  test("skills are <name>/SKILL.md one level down, named by frontmatter or folder", async () => {
    await using dir = await tmpdir({
      "skills/pdf/SKILL.md": md({ name: "pdf-forms", description: "PDF" }),
      "skills/xlsx/SKILL.md": md({ description: "Sheets" }),
      "skills/empty/README.md": "no skill here",
      "skills/loose.md": "not a skill",
      "skills/deep/er/SKILL.md": "too deep",
    })
    const r = await scan(place(dir.file("skills"), "skill"))
    expect(r.items.map((i) => i.name).sort()).toEqual(["pdf-forms", "xlsx"])
    expect(r.problems).toEqual([])
  })

  test("a missing directory is empty and not an error", async () => {
    await using dir = await tmpdir()
    const r = await scan(place(dir.file("nope")))
    expect(r).toMatchObject({ items: [], timedOut: false, problems: [] })
    expect(r.error).toBeUndefined()
    expect(r.directory.exists).toBe(false)
  })

  test("a 'directory' that is a file, or a link loop, is reported as the directory's error", async () => {
    await using dir = await tmpdir({ agents: "a file, not a folder" })
    const r = await scan(place(dir.file("agents")))
    expect(r.error).toBe(`${dir.file("agents")}: not a directory`)
    await fs.symlink(dir.file("loop"), dir.file("loop"))
    const loop = await scan(place(dir.file("loop")))
    expect(loop.error).toBe(`${dir.file("loop")}: symbolic link loop`)
  })

  test("a FIFO named like a definition is skipped without being opened (the scan does not hang)", async () => {
    await using dir = await tmpdir({ "agents/real.md": md({ description: "Real" }) })
    execFileSync("mkfifo", [dir.file("agents/pipe.md")])
    await fs.mkdir(dir.file("skills/piped"), { recursive: true })
    execFileSync("mkfifo", [dir.file("skills/piped/SKILL.md")])
    const r = await scan(place(dir.file("agents")))
    expect(r.items.map((i) => i.name)).toEqual(["real"])
    expect(r.problems).toEqual([{ path: dir.file("agents/pipe.md"), error: "not a regular file; skipped" }])
    const s = await scan(place(dir.file("skills"), "skill"))
    expect(s.problems).toEqual([{ path: dir.file("skills/piped/SKILL.md"), error: "not a regular file; skipped" }])
  })

  test("links are followed; dangling links and link loops inside a directory are problems, not failures", async () => {
    await using dir = await tmpdir({ "shared/reviewer.md": md({ description: "Reviews" }), "agents/a.md": "A" })
    await fs.symlink(dir.file("shared/reviewer.md"), dir.file("agents/reviewer.md"))
    await fs.symlink(dir.file("nowhere.md"), dir.file("agents/dangling.md"))
    await fs.symlink(dir.file("agents"), dir.file("agents/again"))
    const r = await scan(place(dir.file("agents")))
    expect(r.items.map((i) => i.name)).toEqual(["a", "reviewer"])
    expect(r.problems).toContainEqual({ path: dir.file("agents/dangling.md"), error: "broken symbolic link" })
    expect(r.problems).toContainEqual({ path: dir.file("agents/again"), error: "symbolic link loop; not followed" })
  })

  test("unparseable and non-UTF-8 files are problems with their reason; the rest is discovered", async () => {
    await using dir = await tmpdir({
      "agents/good.md": md({ description: "Good" }),
      "agents/bad.md": "---\nname: [a, b]\n---\n",
      "agents/latin1.md": new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xe9, 0xff, 0x0a]),
    })
    const r = await scan(place(dir.file("agents")))
    expect(r.items.map((i) => i.name)).toEqual(["good"])
    expect(r.problems.map((p) => [p.path, p.error.split(":")[0]])).toEqual([
      [dir.file("agents/bad.md"), "frontmatter `name` must be text"],
      [dir.file("agents/latin1.md"), "not UTF-8 text"],
    ])
  })

  test("files that fail to parse are not read again until they change; their problem is reported every time", async () => {
    await using dir = await tmpdir({
      "agents/good.md": md({ description: "Good" }),
      "agents/bad.md": "---\nname: [unclosed\n---\n",
      "agents/latin1.md": new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xe9, 0xff, 0x0a]),
    })
    const cache = new DiscoveryCache()
    const first = await scan(place(dir.file("agents")), cache)
    expect(first).toMatchObject({ parsed: 2, cacheHits: 0 })
    // Nothing parsed: the two broken files are answered from the cache, with the same problems.
    const second = await scan(place(dir.file("agents")), cache)
    expect(second).toMatchObject({ parsed: 0, cacheHits: 3 })
    expect(second.problems).toEqual(first.problems)
    await fs.writeFile(dir.file("agents/bad.md"), md({ description: "Fixed" }))
    await fs.utimes(dir.file("agents/bad.md"), new Date(), new Date(Date.now() + 10_000))
    const fixed = await scan(place(dir.file("agents")), cache)
    expect(fixed.items.map((i) => i.name)).toEqual(["bad", "good"])
    expect(fixed.problems.map((p) => p.path)).toEqual([dir.file("agents/latin1.md")])
  })

  test("frontmatter YAML refuses but Claude Code reads (`: ` in a value) is discovered with a warning, also from the cache", async () => {
    await using dir = await tmpdir({
      "agents/gdpr.md": "---\nname: gdpr\ndescription: Use for privacy. Triggers on: 'GDPR', 'CCPA'\n---\nBody",
    })
    const cache = new DiscoveryCache()
    const r = await scan(place(dir.file("agents")), cache)
    expect(r.items[0]).toMatchObject({ name: "gdpr", description: "Use for privacy. Triggers on: 'GDPR', 'CCPA'" })
    expect(r.problems).toEqual([
      { path: dir.file("agents/gdpr.md"), error: expect.stringContaining("read leniently"), severity: "warning" },
    ])
    const warm = await scan(place(dir.file("agents")), cache)
    expect(warm).toMatchObject({ parsed: 0, cacheHits: 1, problems: r.problems })
  })

  test("a folder's listing is reused while no folder changed; files added in nested folders and new skills are found", async () => {
    await using dir = await tmpdir({
      "cmd/a.md": md({ description: "A" }),
      "cmd/git/b.md": md({ description: "B" }),
      "skills/x/SKILL.md": md({ description: "X" }),
      "skills/y/notes.md": "not yet a skill",
    })
    const cache = new DiscoveryCache()
    await scan(place(dir.file("cmd"), "command"), cache)
    await scan(place(dir.file("skills"), "skill"), cache)
    expect(cache.listing(`command\u0000${dir.file("cmd")}`)?.files.map((f) => f.fallbackName)).toEqual(["a", "git/b"])
    // Wait out the file system's time granularity, so that a change is a different modification time.
    await Bun.sleep(20)
    await fs.writeFile(dir.file("cmd/git/c.md"), md({ description: "C" }))
    await fs.writeFile(dir.file("skills/y/SKILL.md"), md({ description: "Y" }))
    const cmd = await scan(place(dir.file("cmd"), "command"), cache)
    expect(cmd.items.map((i) => i.name)).toEqual(["a", "git/b", "git/c"])
    expect(cmd).toMatchObject({ parsed: 1, cacheHits: 2 })
    const skills = await scan(place(dir.file("skills"), "skill"), cache)
    expect(skills.items.map((i) => i.name)).toEqual(["x", "y"])
    await fs.rm(dir.file("cmd/git"), { recursive: true })
    expect((await scan(place(dir.file("cmd"), "command"), cache)).items.map((i) => i.name)).toEqual(["a"])
  })

  test("only the first 64 KiB are read: a huge file still yields its frontmatter", async () => {
    const body = "é".repeat(100_000)
    await using dir = await tmpdir({ "agents/big.md": md({ description: "Big one" }, body) })
    const r = await scan(place(dir.file("agents")))
    expect(r.items[0]).toMatchObject({ name: "big", description: "Big one" })
  })

  test("folders nested deeper than MAX_DEPTH are reported, not scanned", async () => {
    const deep = Array.from({ length: DiscoveryScan.MAX_DEPTH + 1 }, (_, i) => `d${i}`).join("/")
    await using dir = await tmpdir({ [`agents/${deep}/x.md`]: "x", "agents/top.md": "t" })
    const r = await scan(place(dir.file("agents")))
    expect(r.items.map((i) => i.name)).toEqual(["top"])
    expect(r.problems[0].error).toBe(`nested deeper than ${DiscoveryScan.MAX_DEPTH} folders; not scanned`)
  })

  test("the second scan is served from the cache; an edited file is re-read", async () => {
    await using dir = await tmpdir({
      "agents/a.md": md({ description: "One" }),
      "agents/b.md": md({ description: "Two" }),
    })
    const cache = new DiscoveryCache()
    expect(await scan(place(dir.file("agents")), cache)).toMatchObject({ parsed: 2, cacheHits: 0 })
    const warm = await scan(place(dir.file("agents")), cache)
    expect(warm).toMatchObject({ parsed: 0, cacheHits: 2 })
    await fs.writeFile(dir.file("agents/a.md"), md({ description: "Changed" }))
    await fs.utimes(dir.file("agents/a.md"), new Date(), new Date(Date.now() + 10_000))
    const edited = await scan(place(dir.file("agents")), cache)
    expect(edited).toMatchObject({ parsed: 1, cacheHits: 1 })
    expect(edited.items.find((i) => i.name === "a")?.description).toBe("Changed")
  })

  test(
    "a directory too large to scan within the budget times out with what it found so far; a small one in the same scan completes",
    async () => {
      await using dir = await tmpdir({
        "small/one.md": md({ description: "Quick" }),
        "big/base.md": md({ description: "x" }),
      })
      // A genuinely slow directory: 30,000 entries (hard links to one file, so it costs no disk space).
      const base = dir.file("big/base.md")
      for (let i = 0; i < 30_000; i++) await fs.link(base, dir.file(`big/f${i}.md`))
      const cache = new DiscoveryCache()
      const started = performance.now()
      const [small, big] = await DiscoveryScan.all([place(dir.file("small")), place(dir.file("big"), "command")], {
        cache,
        timeoutMs: 150,
      })
      const elapsed = performance.now() - started
      expect(small).toMatchObject({ timedOut: false })
      expect(small.items.map((i) => i.name)).toEqual(["one"])
      expect(big.timedOut).toBe(true)
      expect(big.items.length).toBeLessThan(30_001)
      // The scan returned at the deadline instead of after the whole directory (a loose bound: no timing claim).
      expect(elapsed).toBeLessThan(10_000)
    },
    { timeout: 60_000 },
  )
})
