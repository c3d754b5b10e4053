import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import { DiscoveryCache } from "../../discovery/cache"
import type { DiscoveryDirectories } from "../../discovery/directories"
import { DiscoveryParse } from "../../discovery/parse"
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
    const r = await scan({ ...place(dir.file("cmd"), "command"), origin: "claude" })
    expect(r.items.map((i) => i.name)).toEqual(["deploy", "git/squash"])
    expect(r.items[1]).toMatchObject({ filePath: dir.file("cmd/git/squash.MD"), resourceType: "command" })
    expect(r).toMatchObject({ timedOut: false, problems: [], parsed: 2, cacheHits: 0 })
    expect(r.directory.exists).toBe(true)
  })

  test("OpenCode's own agents and commands include dot files and dot folders, as its globs do; .git never", async () => {
    // Checked on 1.2.15, 1.18.3 and 1.18.33 (`opencode debug config`, `opencode agent list`): `.opencode/command/
    // .drafts/x.md` is the command `.drafts/x`, `.opencode/agent/.dotagent.md` the agent `.dotagent`; discovery left
    // them out without a word. Claude Code's folders keep skipping them (previous test).
    await using dir = await tmpdir({
      "cmd/deploy.md": md({ description: "Deploy" }),
      "cmd/.hidden.md": md({ description: "Hidden" }),
      "cmd/.drafts/x.md": md({ description: "Draft" }),
      "cmd/.git/y.md": md({ description: "a repository's data, never a definition" }),
      "agent/.reviewer.md": md({ description: "Reviews" }),
    })
    const commands = await scan(place(dir.file("cmd"), "command"))
    expect(commands.items.map((i) => i.name)).toEqual([".drafts/x", ".hidden", "deploy"])
    expect(commands.problems).toEqual([])
    expect((await scan(place(dir.file("agent"), "agent"))).items.map((i) => i.name)).toEqual([".reviewer"])
  })

  test("skills are **/SKILL.md at any depth, as OpenCode finds them, named by their frontmatter name alone", async () => {
    // Real-world tester RW (RW1): claudekit-skills nests 14 of its 45 skills one level deeper
    // (`document-skills/pdf/SKILL.md`); OpenCode 1.2.15, 1.18.3 and 1.18.33 load them all (`opencode debug skill`),
    // discovery found none and said nothing. OpenCode also loads the folder's own SKILL.md and dot folders below
    // `.claude/skills` (not below its own `.opencode/skills`).
    await using dir = await tmpdir({
      "skills/pdf/SKILL.md": md({ name: "pdf-forms", description: "PDF" }),
      "skills/document-skills/docx/SKILL.md": md({ name: "docx", description: "Word documents" }),
      "skills/a/b/c/d/e/deep6/SKILL.md": md({ name: "six-folders-down", description: "deep" }),
      "skills/SKILL.md": md({ name: "at-root", description: "the folder's own" }),
      "skills/.system/sys/SKILL.md": md({ name: "in-a-dot-folder", description: "dot" }),
      "skills/.git/x/SKILL.md": md({ name: "in-git-data", description: "never a skill" }),
      "skills/empty/README.md": "no skill here",
      "skills/loose.md": "not a skill",
      "skills/lower/skill.md": md({ name: "lower", description: "OpenCode's glob is case-sensitive on Linux" }),
    })
    const claude = await scan({ ...place(dir.file("skills"), "skill"), origin: "claude" })
    const names = claude.items.map((i) => i.name).sort()
    const expected = ["at-root", "docx", "in-a-dot-folder", "pdf-forms", "six-folders-down"]
    expect(names).toEqual(
      process.platform === "darwin" || process.platform === "win32" ? [...expected, "lower"].sort() : expected,
    )
    expect(claude.items.find((i) => i.name === "docx")?.filePath).toBe(dir.file("skills/document-skills/docx/SKILL.md"))
    expect(claude.problems).toEqual([])
    // OpenCode's own folders: its glob leaves dot folders out.
    const opencode = await scan(place(dir.file("skills"), "skill"))
    expect(opencode.items.map((i) => i.name)).not.toContain("in-a-dot-folder")
    expect(opencode.items.map((i) => i.name)).toContain("docx")
  })

  test("skills beyond the depth limit and below node_modules are reported, not silently dropped", async () => {
    // OpenCode has no depth limit and searches node_modules; discovery keeps its limit and says what it left out, as
    // `discover --list` shows every skipped file.
    await using dir = await tmpdir({
      "skills/a/b/c/d/e/f/deep7/SKILL.md": md({ name: "seven-folders-down", description: "too deep" }),
      "skills/tool/node_modules/pkg/SKILL.md": md({ name: "packaged", description: "in an installed package" }),
      "skills/tool/SKILL.md": md({ name: "tool", description: "a skill with installed packages" }),
    })
    const r = await scan({ ...place(dir.file("skills"), "skill"), origin: "claude" })
    expect(r.items.map((i) => i.name)).toEqual(["tool"])
    expect(r.problems).toEqual([
      {
        path: dir.file("skills/a/b/c/d/e/f/deep7"),
        error: `nested deeper than ${DiscoveryScan.MAX_DEPTH} folders; not scanned`,
      },
      {
        path: dir.file("skills/tool/node_modules"),
        error: "installed packages are not searched for skills (OpenCode loads any SKILL.md below them)",
      },
    ])
  })

  test("a SKILL.md OpenCode would not load is skipped with the reason (no frontmatter, no name, no description)", async () => {
    // RW2: claudekit-skills' claude-code and google-adk-python start with a heading; discovery suggested them "load
    // with the skill tool", OpenCode (all three binaries) loads neither. Names come from the frontmatter only.
    await using dir = await tmpdir({
      "skills/nofm/SKILL.md": "# Kubernetes helper\n\nDeploy and debug clusters with kubectl and helm.\n",
      "skills/onlydesc/SKILL.md": md({ description: "no name" }),
      "skills/onlyname/SKILL.md": md({ name: "onlyname" }),
      "skills/folder/SKILL.md": md({ name: "other-name", description: "named unlike its folder" }),
    })
    const r = await scan({ ...place(dir.file("skills"), "skill"), origin: "claude" })
    expect(r.items.map((i) => i.name)).toEqual(["other-name"])
    expect(r.problems.map((p) => [p.path.slice(dir.file("skills").length + 1), p.error.split(":")[0]])).toEqual([
      ["nofm/SKILL.md", DiscoveryParse.NOT_A_SKILL],
      ["onlydesc/SKILL.md", DiscoveryParse.NOT_A_SKILL],
      ["onlyname/SKILL.md", DiscoveryParse.NOT_EVERY_SKILL],
    ])
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
      "skills/x/SKILL.md": md({ name: "x", description: "X" }),
      "skills/y/notes.md": "not yet a skill",
    })
    const cache = new DiscoveryCache()
    await scan(place(dir.file("cmd"), "command"), cache)
    await scan(place(dir.file("skills"), "skill"), cache)
    expect(cache.listing(`command\u0000${dir.file("cmd")}`)?.files.map((f) => f.fallbackName)).toEqual(["a", "git/b"])
    // Wait out the file system's time granularity, so that a change is a different modification time.
    await Bun.sleep(20)
    await fs.writeFile(dir.file("cmd/git/c.md"), md({ description: "C" }))
    await fs.writeFile(dir.file("skills/y/SKILL.md"), md({ name: "y", description: "Y" }))
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
