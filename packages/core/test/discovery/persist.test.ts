import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { DiscoveryCacheFile } from "../../discovery/cache"
import { DynamicDiscovery } from "../../discovery/discover"
import { DiscoveryMatch } from "../../discovery/match"
import { LocalState } from "../../learning/local"
import { SecurityGuard } from "../../security/guard"
import { Logger } from "../../util/log"
import { md, tmpdir } from "../fixture"
import { guarded, type Rule } from "../resource/guarded"

const VOCAB = (
  "review reviewer reviews code security audit auditor test testing coverage deploy deployment staging release " +
  "releases notes changelog database query index migration migrations kubernetes k8s helm docker dockerize image " +
  "build performance optimization optimize profile memory leak react component layout accessibility api endpoint " +
  "graphql schema python rust typescript refactor legacy incident outage logs metrics alert pdf spreadsheet slides"
).split(" ")

/** Documents with names, descriptions, leads and bodies drawn from one vocabulary (derived forms included). */
function documents(count: number): DiscoveryMatch.Doc[] {
  let seed = 11
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const words = (n: number) => Array.from({ length: n }, () => VOCAB[Math.floor(rand() * VOCAB.length)]).join(" ")
  const groups = ["agent", "command", "skill", "outputStyle", "resource"]
  return Array.from({ length: count }, (_, i) => ({
    name: `${words(2).replace(" ", "-")}-${i}`,
    keywords: i % 7 === 0 ? words(3).split(" ") : [],
    explicitKeywords: i % 7 === 0,
    description: words(14),
    lead: i % 3 ? words(8) : undefined,
    body: i % 2 ? words(200) : undefined,
    group: groups[i % groups.length],
  }))
}

const PROMPTS = [
  "review the security of the api before the release",
  "the react component layout is broken, fix accessibility",
  "profile the slow database query and add an index",
  "dockerize the service and deploy it to k8s with helm",
  "write the release notes and the changelog",
  "thanks, that's all",
]

describe("DiscoveryMatch snapshot and restore", () => {
  test("an index restored from its snapshot ranks exactly as the index built from the documents", () => {
    const docs = documents(300)
    const built = DiscoveryMatch.index(docs)
    const kept = DiscoveryMatch.snapshot(built)!
    expect(kept.size).toBe(300)
    // Through plain data, as a cache on disk holds it.
    const copy: DiscoveryMatch.Snapshot = {
      size: kept.size,
      vocabulary: new Set(JSON.parse(JSON.stringify([...kept.vocabulary]))),
      postings: new Map(JSON.parse(JSON.stringify([...kept.postings]))),
    }
    // Fresh document objects: nothing tokenized is shared with the first index.
    const restored = DiscoveryMatch.restore(documents(300), copy)
    for (const prompt of PROMPTS) {
      expect(restored.search(prompt)).toEqual(built.search(prompt))
      expect(restored.search(prompt, { all: true })).toEqual(built.search(prompt, { all: true }))
      const all = built.search(prompt, { all: true })
      expect(restored.select(all.slice(1), { relativeCut: 0.3 })).toEqual(
        built.select(all.slice(1), { relativeCut: 0.3 }),
      )
    }
    expect(built.search(PROMPTS[0]).length).toBeGreaterThan(0)
  })

  test("a snapshot of another number of documents is refused; other strategies have none", () => {
    const kept = DiscoveryMatch.snapshot(DiscoveryMatch.index(documents(20)))!
    expect(() => DiscoveryMatch.restore(documents(21), kept)).toThrow(RangeError)
    expect(DiscoveryMatch.snapshot(DiscoveryMatch.index(documents(20), "bm25"))).toBeUndefined()
  })
})

/** A home and a project in one temporary root, and the cache file of the project. */
async function world(files: Record<string, string>) {
  const dir = await tmpdir(files)
  const project = dir.file("project")
  await fs.mkdir(project, { recursive: true })
  const env = { HOME: dir.file("home"), XDG_CONFIG_HOME: dir.file("xdg") }
  const cacheFile = DiscoveryCacheFile.location(project, project)
  return { dir, project, env, cacheFile, [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose]() }
}

/** Files are written to disk only once settled (`RACY_MS` after their last change). */
const settle = () => Bun.sleep(DiscoveryCacheFile.RACY_MS + 150)

const CATALOGUE = {
  "project/.opencode/agent/code-reviewer.md": md({ description: "Reviews diffs for bugs and risky changes" }),
  // An OpenCode agent, named by its file (a Claude Code agent names itself in its frontmatter): renamed below.
  "project/.opencode/agent/release-manager.md": md({ description: "Prepares and ships releases" }, "# Release\nTags."),
  "project/.claude/commands/git/squash.md": md({ description: "Squash the branch's commits" }),
  "project/.claude/commands/broken.md": "---\nname: [unclosed\n---\n",
  "project/.claude/skills/release-notes/SKILL.md": md({ name: "release-notes", description: "Draft release notes" }),
  "home/.claude/agents/db-tuner.md": md({
    name: "db-tuner",
    description: "Profiles slow database queries and adds indexes",
  }),
  "home/.claude/output-styles/concise.md": md({ name: "concise", description: "Short answers" }),
  "home/.claude/output-styles/kurz.md": md({
    name: "kurz",
    description: "Kurze Antworten für Änderungen 🚀 – schnell",
  }),
  "xdg/opencode/command/deploy.md": md({ description: "Deploy the service to staging" }, "Runs the deploy script."),
}
const QUESTIONS = [
  "review my diff before the release",
  "ship the release and write the release notes",
  "the database query is slow",
  "squash my commits and deploy to staging",
]

/** What a catalogue and the prompts give, without timings. */
async function outcome(engine: DynamicDiscovery.Engine) {
  const cat = await engine.catalogue()
  const results = []
  for (const q of QUESTIONS) {
    const { stats: _stats, ...result } = await engine.gather(q)
    results.push(result)
  }
  return JSON.stringify({ items: cat.items, shadowed: cat.shadowed, problems: cat.problems, results })
}

describe("the parse cache on disk", () => {
  test("a new engine starts from the file: nothing parsed again, same catalogue, same suggestions", async () => {
    await using w = await world(CATALOGUE)
    await settle()
    const create = (cacheFile?: string) =>
      DynamicDiscovery.create({ directory: w.project, worktree: w.project, env: w.env, cacheFile })
    const first = create(w.cacheFile)
    const expected = await outcome(create())
    expect(await outcome(first)).toBe(expected)
    await first.flush()
    const read = DiscoveryCacheFile.read(w.cacheFile, "")
    expect(read.problem).toBeUndefined()
    expect(read.contents!.files).toHaveLength(9)
    expect(/^[\x00-\x7f]*$/.test(await fs.readFile(w.cacheFile, "utf8"))).toBe(true)
    expect(read.contents!.index).toBeDefined()
    const next = create(w.cacheFile)
    const cat = await next.catalogue()
    expect(cat.stats).toMatchObject({ parsed: 0, cacheHits: 9 })
    expect(cat.items.find((i) => i.name === "kurz")?.description).toBe("Kurze Antworten für Änderungen 🚀 – schnell")
    expect(cat.problems.map((p) => path.basename(p.path))).toEqual(["broken.md"])
    expect(await outcome(next)).toBe(expected)
  }, 60_000)

  test("edits, deletions, renames, new files and folders, a rewrite that keeps the mtime: same results as without it", async () => {
    await using w = await world(CATALOGUE)
    await settle()
    const create = (cacheFile?: string) =>
      DynamicDiscovery.create({ directory: w.project, worktree: w.project, env: w.env, cacheFile })
    const lived = create(w.cacheFile)
    await outcome(lived)
    await lived.flush()
    const f = (rel: string) => w.dir.file(rel)
    const steps: [string, () => Promise<void>][] = [
      [
        "edit",
        () =>
          fs.writeFile(
            f("home/.claude/agents/db-tuner.md"),
            md({ name: "db-tuner", description: "Tunes database indexes" }),
          ),
      ],
      ["delete", () => fs.rm(f("project/.claude/commands/git/squash.md"))],
      [
        "rename",
        () => fs.rename(f("project/.opencode/agent/release-manager.md"), f("project/.opencode/agent/shipper.md")),
      ],
      [
        "new file and folder",
        () =>
          fs
            .mkdir(f("project/.claude/skills/squash-helper"), { recursive: true })
            .then(() =>
              fs.writeFile(
                f("project/.claude/skills/squash-helper/SKILL.md"),
                md({ name: "squash-helper", description: "Squash commits and rebase" }),
              ),
            ),
      ],
      [
        "same mtime, other size",
        async () => {
          const file = f("project/.opencode/agent/code-reviewer.md")
          const { atime, mtime } = await fs.stat(file)
          await fs.writeFile(file, md({ description: "Reviews deploy scripts for staging mistakes" }))
          await fs.utimes(file, atime, mtime)
        },
      ],
      ["fixed frontmatter", () => fs.writeFile(f("project/.claude/commands/broken.md"), md({ description: "Fixed" }))],
    ]
    for (const [name, change] of steps) {
      await change()
      // Right after the change (entries not settled yet), then in a new engine once settled.
      const expected = await outcome(create())
      expect({ step: name, got: await outcome(lived) }).toEqual({ step: name, got: expected })
      await lived.flush()
      await settle()
      const fresh = create(w.cacheFile)
      expect({ step: name, got: await outcome(fresh) }).toEqual({ step: name, got: expected })
      await fresh.flush()
      const again = create(w.cacheFile)
      expect((await again.catalogue()).stats.parsed).toBe(0)
    }
    const names = (await create(w.cacheFile).catalogue()).items.map((i) => i.name)
    expect(names).toContain("shipper")
    expect(names).not.toContain("release-manager")
    expect(names).not.toContain("git/squash")
  }, 180_000)

  test("a corrupt, truncated, foreign or damaged file is ignored, never fatal, and rewritten", async () => {
    await using w = await world(CATALOGUE)
    await settle()
    const create = (cacheFile?: string) =>
      DynamicDiscovery.create({ directory: w.project, worktree: w.project, env: w.env, cacheFile })
    const expected = await outcome(create())
    const writer = create(w.cacheFile)
    await outcome(writer)
    await writer.flush()
    const good = await fs.readFile(w.cacheFile, "utf8")
    const valid = JSON.parse(good) as DiscoveryCacheFile.Contents
    const variants: [string, string][] = [
      ["garbage", "\u0000\u0001 not json"],
      ["truncated", good.slice(0, Math.floor(good.length / 2))],
      ["empty", ""],
      ["another version", JSON.stringify({ ...valid, version: "0".repeat(64) })],
      ["not ASCII", JSON.stringify({ ...valid, listings: [] }).replace("{", '{"note":"é",')],
      ["another format", JSON.stringify({ ...valid, format: DiscoveryCacheFile.FORMAT + 1 })],
      ["other markers", JSON.stringify({ ...valid, markers: "abc" })],
      ["a record of another shape", JSON.stringify({ ...valid, files: [...valid.files, ["relative.md", 1]] })],
      [
        "an item whose path is not its record's",
        JSON.stringify({
          ...valid,
          files: valid.files.map((r) =>
            r[2] ? [r[0], r[1], { ...r[2], filePath: "/elsewhere.md" }, ...r.slice(3)] : r,
          ),
        }),
      ],
      ["a damaged index", JSON.stringify({ ...valid, index: { ...valid.index!, counts: "AAAA" } })],
      ["an index pointing past the documents", JSON.stringify({ ...valid, index: { ...valid.index!, size: 1 } })],
    ]
    for (const [name, text] of variants) {
      await fs.writeFile(w.cacheFile, text)
      const log = Logger.memory()
      const engine = DynamicDiscovery.create({
        directory: w.project,
        worktree: w.project,
        env: w.env,
        cacheFile: w.cacheFile,
        log,
      })
      expect({ variant: name, got: await outcome(engine) }).toEqual({ variant: name, got: expected })
      await engine.flush()
      expect({ variant: name, problem: DiscoveryCacheFile.read(w.cacheFile, "").problem }).toEqual({
        variant: name,
        problem: undefined,
      })
      expect(log.entries.filter((e) => e.level === "error")).toEqual([])
    }
  }, 60_000)

  test("a cache file that cannot be written is reported once in the log and changes nothing else", async () => {
    await using w = await world(CATALOGUE)
    await settle()
    await fs.mkdir(path.dirname(path.dirname(w.cacheFile)), { recursive: true })
    await fs.writeFile(path.dirname(w.cacheFile), "a file where the folder belongs")
    const log = Logger.memory()
    const engine = DynamicDiscovery.create({
      directory: w.project,
      worktree: w.project,
      env: w.env,
      cacheFile: w.cacheFile,
      log,
    })
    const expected = await outcome(DynamicDiscovery.create({ directory: w.project, worktree: w.project, env: w.env }))
    expect(await outcome(engine)).toBe(expected)
    await engine.flush()
    expect(log.entries.filter((e) => e.message.includes("could not write its cache file"))).toHaveLength(1)
  }, 60_000)

  test("at most MAX_FILES records are written", async () => {
    await using dir = await tmpdir()
    const file = dir.file("cache.json")
    const record = (i: number): DiscoveryCacheFile.FileRecord => [`/x/${i}.md`, [1, 1, 1, i], null, "", "", "bad"]
    DiscoveryCacheFile.write(file, {
      format: DiscoveryCacheFile.FORMAT,
      version: DiscoveryCacheFile.version(),
      markers: "",
      files: Array.from({ length: DiscoveryCacheFile.MAX_FILES + 10 }, (_, i) => record(i)),
      listings: [],
    })
    expect(DiscoveryCacheFile.read(file, "").contents!.files).toHaveLength(DiscoveryCacheFile.MAX_FILES)
    expect((await fs.readdir(dir.path)).filter((n) => n.endsWith(".tmp"))).toEqual([])
  })

  test("temporary files left by a process that stopped mid-write are removed; another's fresh one is not", async () => {
    await using dir = await tmpdir({ "cache.json.123.aa.tmp": "{", "cache.json.456.bb.tmp": "{", "other.tmp": "x" })
    const old = new Date(Date.now() - 120_000)
    await fs.utimes(dir.file("cache.json.123.aa.tmp"), old, old)
    await fs.utimes(dir.file("other.tmp"), old, old)
    const contents = { format: DiscoveryCacheFile.FORMAT, version: DiscoveryCacheFile.version(), markers: "" }
    DiscoveryCacheFile.write(dir.file("cache.json"), { ...contents, files: [], listings: [] })
    expect((await fs.readdir(dir.path)).sort()).toEqual(["cache.json", "cache.json.456.bb.tmp", "other.tmp"])
  })

  test("the file lives in the project's local state folder", () => {
    expect(DiscoveryCacheFile.location("/repo/packages/app", "/repo")).toBe(
      path.join("/repo", LocalState.DIR, DiscoveryCacheFile.NAME),
    )
  })
})

describe("the parse cache on disk, with a security policy", () => {
  const SECRET = "Falcon acquisition"
  const TREE = {
    "project/.opencode/agent/deal-reviewer.md": md({ description: `Reviews the ${SECRET} contracts` }),
    "project/.opencode/agent/contract-reviewer.md": md({ description: "Reviews contracts" }),
    "project/.claude/commands/contract-lint.md": md({ description: "Lints contracts" }),
    "project/.claude/skills/vault/SKILL.md": md({
      name: "contract-vault",
      description: `${SECRET} contract templates`,
    }),
    "project/.claude/skills/templates/SKILL.md": md({ name: "contract-templates", description: "Contract templates" }),
    "home/.claude/output-styles/boardroom.md": md({ name: "boardroom", description: `${SECRET} contracts style` }),
    "home/.claude/output-styles/plain.md": md({ name: "plain", description: "Plain contracts style" }),
  }
  const RULES: Rule[] = [
    { pattern: ".opencode/agent/deal-reviewer.md", type: "file", deniedOperations: ["read"] },
    { pattern: ".claude/skills/vault", type: "directory", deniedOperations: ["read"] },
    { pattern: "~/.claude/output-styles/boardroom.md", type: "file", deniedOperations: ["llm"] },
  ]
  const PROMPT = "review, lint and template the contracts in the plain board style"

  test("nothing of a protected file is written to it; a file that becomes protected leaves it; the file is itself hidden", async () => {
    await using w = await world(TREE)
    await using g = await guarded(w.project, RULES, { home: w.env.HOME, versioned: true })
    await settle()
    const create = () =>
      DynamicDiscovery.create({
        directory: w.project,
        worktree: w.project,
        env: w.env,
        host: g.host,
        cacheFile: w.cacheFile,
      })
    const engine = create()
    const plain = await DynamicDiscovery.create({ directory: w.project, env: w.env, host: g.host }).gather(PROMPT)
    const { stats: _s, ...first } = await engine.gather(PROMPT)
    const { stats: _p, ...expected } = plain
    expect(first).toEqual(expected)
    await engine.flush()
    let text = await fs.readFile(w.cacheFile, "utf8")
    expect(text).toContain("contract-reviewer")
    for (const hidden of [SECRET, "deal-reviewer", "vault", "boardroom"]) expect(text).not.toContain(hidden)
    // The security layer hides the local state folder (as its feature configures it), and so the cache, from every role.
    const hiding = await SecurityGuard.create({
      directory: w.project,
      worktree: w.project,
      home: w.env.HOME,
      env: {},
      intervalMs: 0,
      hide: [LocalState.dir(LocalState.root(w.project, w.project))],
    })
    await hiding.ready()
    expect(await hiding.access(w.cacheFile, "read")).toBeString()
    hiding.close()

    await g.rewrite([
      ...RULES,
      { pattern: ".opencode/agent/contract-reviewer.md", type: "file", deniedOperations: ["llm"] },
    ])
    const next = create()
    const after = await next.gather(PROMPT)
    expect(JSON.stringify(after)).not.toContain("contract-reviewer")
    await next.flush()
    text = await fs.readFile(w.cacheFile, "utf8")
    for (const hidden of [SECRET, "deal-reviewer", "vault", "boardroom", "contract-reviewer", "Reviews contracts"])
      expect(text).not.toContain(hidden)
    expect(text).toContain("contract-lint")
  }, 60_000)

  test("a definition whose frontmatter lies in a protected segment is not written; other markers make another cache", async () => {
    const segmented = [
      "---",
      "name: deal-room",
      "# @secure-start",
      `description: ${SECRET} rooms`,
      "# @secure-end",
      "---",
      "body",
    ]
    await using w = await world({
      "project/.opencode/skills/deal/SKILL.md": segmented.join("\n"),
      "project/.opencode/skills/room/SKILL.md": md({ name: "room-booking", description: "Books a meeting room" }),
    })
    await using g = await guarded(w.project, [], { home: w.env.HOME, versioned: true, markers: true })
    await settle()
    const engine = DynamicDiscovery.create({
      directory: w.project,
      worktree: w.project,
      env: w.env,
      host: g.host,
      cacheFile: w.cacheFile,
    })
    const result = await engine.gather("book a room for the deal")
    expect(JSON.stringify(result)).not.toContain(SECRET)
    await engine.flush()
    const text = await fs.readFile(w.cacheFile, "utf8")
    expect(text).toContain("room-booking")
    expect(text).not.toContain(SECRET)
    expect(text).not.toContain("deal-room")
    // Written under these markers: a reader without them (or with others) ignores it.
    expect(DiscoveryCacheFile.read(w.cacheFile, "").problem).toContain("markers")
  }, 60_000)
})

describe("the parse cache on disk across security scopes (red team AI5)", () => {
  const SECRET = "Falcon acquisition"
  const TREE = {
    "project/.opencode/agent/deal-reviewer.md": md({ description: `Reviews the ${SECRET} contracts` }),
    "project/.opencode/agent/contract-reviewer.md": md({ description: "Reviews contracts" }),
  }
  const PROMPT = "review the contracts"
  /** A process of one role: admin reads everything, viewer not the deal reviewer. */
  const hostOf = (role: "admin" | "viewer") => ({
    access: async (p: string) =>
      role === "viewer" && p.includes("deal-reviewer") ? "denied by rule 'deal'" : undefined,
    accessVersion: () => 1,
    accessScope: () => `${role}:0123456789abcdef`,
  })

  test("each role's process keeps a file of its own, and never seeds its cache from another's", async () => {
    await using w = await world(TREE)
    await settle()
    const engineOf = (role: "admin" | "viewer") =>
      DynamicDiscovery.create({
        directory: w.project,
        worktree: w.project,
        env: w.env,
        host: hostOf(role),
        cacheFile: w.cacheFile,
      })
    const admin = engineOf("admin")
    await admin.gather(PROMPT)
    await admin.flush()
    const adminFile = LocalState.scoped(w.cacheFile, hostOf("admin").accessScope())
    const adminText = await fs.readFile(adminFile, "utf8")
    expect(adminText).toContain(SECRET)
    // The unscoped file (a process without a policy) is not written under one.
    expect(await fs.exists(w.cacheFile)).toBe(false)

    const viewer = engineOf("viewer")
    expect(JSON.stringify(await viewer.gather(PROMPT))).not.toContain("deal-reviewer")
    // Not even held in memory: the admin's file was never read.
    expect(viewer.cache.keys().some((k) => k.includes("deal-reviewer"))).toBe(false)
    await viewer.flush()
    const viewerText = await fs.readFile(LocalState.scoped(w.cacheFile, hostOf("viewer").accessScope()), "utf8")
    expect(viewerText).toContain("contract-reviewer")
    expect(viewerText.toLowerCase()).not.toContain("falcon")
    expect(viewerText).not.toContain("deal-reviewer")
    expect(await fs.readFile(adminFile, "utf8")).toBe(adminText)
  }, 30_000)

  test("a call of another scope than the engine's last one switches files and forgets what was parsed", async () => {
    await using w = await world(TREE)
    await settle()
    const engine = DynamicDiscovery.create({
      directory: w.project,
      worktree: w.project,
      env: w.env,
      cacheFile: w.cacheFile,
    })
    await engine.gather(PROMPT, hostOf("admin"))
    expect(engine.cache.keys().some((k) => k.includes("deal-reviewer"))).toBe(true)
    await engine.gather(PROMPT, hostOf("viewer"))
    expect(engine.cache.keys().some((k) => k.includes("deal-reviewer"))).toBe(false)
    await engine.flush()
    const viewerText = await fs.readFile(LocalState.scoped(w.cacheFile, hostOf("viewer").accessScope()), "utf8")
    expect(viewerText.toLowerCase()).not.toContain("falcon")
    expect(await fs.readFile(LocalState.scoped(w.cacheFile, hostOf("admin").accessScope()), "utf8")).toContain(SECRET)
  }, 30_000)
})
