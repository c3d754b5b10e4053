import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import type { Host } from "../../host"
import { ResourceLoader } from "../../resource/loader"
import { ResourceOutput } from "../../resource/output"
import type { Resource } from "../../resource/schema"
import { Logger } from "../../util/log"
import { md, tmpdir } from "../fixture"
import { history } from "./history"

/** A loader over a real temp project whose session history is the given builder's messages. */
function setup(dir: string, config: Resource.ConfigInput = {}, extra: Partial<Host> = {}) {
  const h = history()
  const log = Logger.memory()
  const loader = ResourceLoader.create(
    { directory: dir, worktree: dir, log, messages: async () => h.messages, ...extra },
    { persistCache: false, ...config },
  )
  const ctx = { sessionID: "ses_test", messageID: "msg_current" }
  /** A new assistant step whose tool call stores its output in the history, as OpenCode does. */
  const step = async (tool: string, run: (messageID: string) => Promise<string>) => {
    const messageID = h.assistant()
    const out = await run(messageID)
    h.messages.at(-1)!.parts.push(h.tool(tool, out))
    return out
  }
  const load = (id: string, includeReferences?: boolean) =>
    step("resource-load", (messageID) => loader.load({ id, includeReferences }, { ...ctx, messageID }))
  const release = async (ids?: string[], keep?: string[]) =>
    JSON.parse(
      await step("resource-release", async (messageID) =>
        JSON.stringify(await loader.release({ ids, keep }, { ...ctx, messageID })),
      ),
    )
  return { h, log, loader, ctx, load, release, [Symbol.asyncDispose]: () => loader.dispose() }
}

const GRAPH = {
  ".opencode/knowledge-base/a.md": md({ title: "A", references: ["b", "ghost"] }, "BODY-A"),
  ".opencode/knowledge-base/b.md": md({ title: "B", references: ["c", "a"] }, "BODY-B"),
  ".opencode/knowledge-base/c.md": md({ title: "C", references: ["d"] }, "BODY-C"),
  ".opencode/knowledge-base/d.md": md({ title: "D" }, "BODY-D"),
}

describe("resource-load", () => {
  test("returns the spec's header block and the body without frontmatter", async () => {
    await using dir = await tmpdir({
      ".opencode/task/dev/ship.md": md(
        { title: "Ship it", description: "How to ship", tags: ["release"], version: "2.0" },
        "Step one.\n",
      ),
    })
    await using s = setup(dir.path)
    s.h.user()
    const out = await s.load("ship")
    const head = ResourceOutput.header(out)!
    expect(head.loaded).toEqual(["ship"])
    for (const line of [
      "# Resource: Ship it",
      "**Type:** task",
      "**Domain:** dev",
      "**ID:** ship",
      "**Description:** How to ship",
      "**Tags:** release",
      "**Version:** 2.0",
      "**Path:** .opencode/task/dev/ship.md",
      "**Size:** ",
      "Step one.",
    ])
      expect(out).toContain(line)
    expect(out).not.toContain("title: Ship it")
  })

  test("references: breadth first to maxReferencesDepth, each once, cycle-safe, unresolved ones listed", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    s.h.user()
    const out = await s.load("a", true)
    expect(ResourceOutput.header(out)!.loaded).toEqual(["a", "b", "c"])
    expect(out).not.toContain("BODY-D")
    expect(out).toContain("Unresolved references (no such resource): ghost.")
    expect(out).toContain("**Loaded as a reference of:** b")

    await using deeper = setup(dir.path, { maxReferencesDepth: 3 })
    deeper.h.user()
    expect(ResourceOutput.header(await deeper.load("a", true))!.loaded).toEqual(["a", "b", "c", "d"])
    await using none = setup(dir.path, { maxReferencesDepth: 0 })
    none.h.user()
    expect(ResourceOutput.header(await none.load("a", true))!.loaded).toEqual(["a"])
  })

  test("autoLoadReferences sets the default of includeReferences", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path, { autoLoadReferences: true })
    s.h.user()
    expect(ResourceOutput.header(await s.load("c"))!.loaded).toEqual(["c", "d"])
  })

  test("already loaded: an active resource is refused with AlreadyLoaded; active references are skipped", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    s.h.user()
    await s.load("b")
    const again = JSON.parse(await s.load("b"))
    expect(again.error).toBe("AlreadyLoaded")
    expect(again.loadedAt).toMatch(/^\d{4}-/)
    const withRefs = await s.load("a", true)
    expect(ResourceOutput.header(withRefs)!.loaded).toEqual(["a", "c"])
    expect(withRefs).toContain("Already loaded, content above: b.")
  })

  test("a flagged resource is re-activated instead of being loaded twice", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    s.h.user()
    await s.load("d")
    s.h.user()
    const out = await s.load("d")
    expect(ResourceOutput.header(out)).toMatchObject({ loaded: [], reactivated: ["d"] })
    expect(out).not.toContain("BODY-D")
    s.h.user()
    expect((await s.loader.view("ses_test")).current("d")!.status).toBe("flagged")
  })

  test("a released or pruned resource loads again with its content", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    s.h.user()
    await s.load("d")
    await s.release(["d"])
    expect(await s.load("d")).toContain("BODY-D")
    s.h.user()
    s.h.user()
    expect((await s.loader.view("ses_test")).current("d")!.status).toBe("pruned")
    expect(await s.load("d")).toContain("BODY-D")
  })

  test("unknown ids give ResourceNotFound with the closest ids; invalid ids are refused before any lookup", async () => {
    await using dir = await tmpdir({
      ".opencode/task/git-operations.md": "x",
      ".opencode/task/git-hooks.md": "x",
      ".opencode/task/unrelated.md": "x",
    })
    await using s = setup(dir.path)
    const missing = JSON.parse(await s.loader.load({ id: "git-operatons" }, s.ctx))
    expect(missing).toMatchObject({ error: "ResourceNotFound", id: "git-operatons", closest: ["git-operations"] })
    expect(JSON.parse(await s.loader.load({ id: "git" }, s.ctx)).closest).toEqual(["git-hooks", "git-operations"])
    expect(JSON.parse(await s.loader.load({ id: "zzzzzzzzzz" }, s.ctx)).closest).toEqual([])
    for (const bad of ["../../etc/passwd", "task/git-hooks", "a..b"]) {
      const r = JSON.parse(await s.loader.load({ id: bad }, s.ctx))
      expect(r.error).toBe("InvalidResourceId")
      expect(r.message).toContain("never paths")
    }
  })

  test("SessionLimitReached: by count and by total size; references that do not fit are listed", async () => {
    await using dir = await tmpdir({
      ...GRAPH,
      ".opencode/task/big.md": "x".repeat(3000),
      ".opencode/task/small.md": "s",
    })
    await using s = setup(dir.path, { maxResourcesPerSession: 2 })
    s.h.user()
    const partial = await s.load("a", true)
    expect(ResourceOutput.header(partial)!.loaded).toEqual(["a", "b"])
    expect(partial).toContain("Reference 'c' not loaded: session limit (2 resources) reached.")
    const full = JSON.parse(await s.load("d"))
    expect(full).toMatchObject({ error: "SessionLimitReached", limit: "2 resources", current: "2 resources" })
    await s.release(["a"])
    expect(ResourceOutput.header(await s.load("d"))!.loaded).toEqual(["d"])

    await using sized = setup(dir.path, { maxTotalSizePerSession: 2500 })
    sized.h.user()
    const r = JSON.parse(await sized.load("big"))
    expect(r).toMatchObject({ error: "SessionLimitReached", limit: "2.4 KB", requested: "2.9 KB" })
    expect(ResourceOutput.header(await sized.load("small"))!.loaded).toEqual(["small"])
  })

  test("files over maxFileSize are refused with a clear error naming the size and the limit", async () => {
    await using dir = await tmpdir({ ".opencode/task/huge.md": "y".repeat(5000) })
    await using s = setup(dir.path, { maxFileSize: 4096 })
    const r = JSON.parse(await s.loader.load({ id: "huge" }, s.ctx))
    expect(r).toMatchObject({ error: "FileTooLarge", size: 5000, max: 4096 })
    expect(r.message).toContain("4.9 KB, over the 4.0 KB limit")
  })

  test("a file that changed after indexing is re-checked when loaded", async () => {
    await using dir = await tmpdir({ ".opencode/task/doc.md": "fine" })
    await using s = setup(dir.path)
    await s.loader.index()
    await fs.writeFile(dir.file(".opencode/task/doc.md"), new Uint8Array([0, 1, 2]))
    const r = JSON.parse(await s.loader.load({ id: "doc" }, s.ctx))
    // Either the watcher already dropped it from the index, or the load-time check refuses the binary content.
    expect(["ResourceNotFound", "FileReadError"]).toContain(r.error)
  })

  test("the host's security check is consulted: denied resources are refused, denied references skipped", async () => {
    await using dir = await tmpdir(GRAPH)
    const access = async (p: string) => (path.basename(p) === "b.md" ? "rule secrets/** denies read" : undefined)
    await using s = setup(dir.path, {}, { access })
    s.h.user()
    expect(JSON.parse(await s.load("b"))).toMatchObject({
      error: "AccessDenied",
      reason: "rule secrets/** denies read",
    })
    const out = await s.load("a", true)
    expect(ResourceOutput.header(out)!.loaded).toEqual(["a"])
    expect(out).toContain("Reference 'b' not loaded")
    expect(out).not.toContain("BODY-B")
  })

  test("parallel loads of one step see each other before the history does", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    s.h.user()
    const [first, second] = await Promise.all([
      s.loader.load({ id: "d" }, s.ctx),
      s.loader.load({ id: "d" }, s.ctx).then(async (x) => x),
    ])
    const outcomes = [first, second].map((o) => (ResourceOutput.header(o) ? "loaded" : JSON.parse(o).error)).sort()
    expect(outcomes).toEqual(["AlreadyLoaded", "loaded"])
  })

  test("without a readable history the loader still tracks what this process did, and says so in the log", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path, {}, { messages: async () => Promise.reject(new Error("storage offline")) })
    await s.loader.load({ id: "d" }, s.ctx)
    expect(JSON.parse(await s.loader.load({ id: "d" }, s.ctx)).error).toBe("AlreadyLoaded")
    expect(
      s.log.entries.some((e) => e.level === "warn" && e.message.includes("could not read the session history")),
    ).toBe(true)
  })
})

describe("resource-list-loaded and resource-release", () => {
  test("list shows every load with status, times, message, call id, size and totals", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    expect((await s.loader.listLoaded(s.ctx)).message).toBe("No resources loaded in this session")
    s.h.user()
    await s.load("c", true)
    await s.release(["d"])
    const list = await s.loader.listLoaded(s.ctx)
    expect(list.loaded.map((l) => [l.id, l.status, l.loadedVia])).toEqual([
      ["c", "active", undefined],
      ["d", "released", "c"],
    ])
    expect(list.loaded[0]).toMatchObject({
      type: "knowledge-base",
      name: "C",
      includeReferences: true,
      toolCallID: expect.stringMatching(/^call_/),
    })
    expect(list.loaded[1].releasedAt).toMatch(/^\d{4}-/)
    expect(list.currentlyActive).toBe(1)
    expect(list.totalLoaded).toBe(2)
    expect(list.limits).toEqual({ maxResources: 20, maxTotalSize: "10.0 MB" })
  })

  test("release: given ids, unknown ones in notFound; no ids releases all except keep", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    s.h.user()
    await s.load("a", true)
    const some = await s.release(["b", "nope"])
    expect(some).toMatchObject({ released: ["b"], notFound: ["nope"], remaining: 2 })
    expect(await s.release(["b"])).toMatchObject({ released: [], notFound: ["b"] })
    const rest = await s.release(undefined, ["a", "unknown"])
    expect(rest).toMatchObject({ released: ["c"], remaining: 1, keepNotLoaded: ["unknown"] })
    expect(await s.release([])).toMatchObject({ released: ["a"], remaining: 0 })
    expect(await s.release()).toMatchObject({ released: [], message: "No resources to release" })
  })
})

describe("index lifecycle", () => {
  test("built lazily once; concurrent callers share one build", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    expect(s.loader.stats.indexBuilds).toBe(0)
    const [a, b] = await Promise.all([s.loader.index(), s.loader.index()])
    expect(a).toBe(b)
    expect(s.loader.stats.indexBuilds).toBe(1)
    await s.loader.query({})
    expect(s.loader.stats.indexBuilds).toBe(1)
    expect(s.loader.stats.cacheHits).toBeGreaterThan(0)
  })

  test("a project with agents and commands but no resource file: nothing read; a resource added later is referenced", async () => {
    await using dir = await tmpdir({
      ".claude/agents/reviewer.md": "Follow the deploy-runbook before approving.",
      ".claude/commands/ship.md": "Run [[deploy-runbook]] then ship.",
    })
    await using s = setup(dir.path)
    const empty = await s.loader.index()
    expect([empty.resources.size, empty.warnings]).toEqual([0, []])
    expect(s.loader.stats.lastBuild).toMatchObject({ parsed: 0, reused: 0 })
    await dir.write({ ".opencode/knowledge-base/deploy-runbook.md": md({ title: "Deploy runbook" }) })
    const index = await s.loader.index()
    // The resource and both files that reference it are read now.
    expect(s.loader.stats.lastBuild).toMatchObject({ parsed: 3 })
    expect(index.resources.get("deploy-runbook")!.referencedBy).toEqual(["reviewer", "ship"])
  })

  test("invalidation by path rebuilds incrementally; unrelated paths are ignored", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    await s.loader.index()
    expect(s.loader.invalidate(dir.file("src/index.ts"))).toBe(false)
    await Bun.sleep(5)
    await dir.write({ ".opencode/knowledge-base/e.md": md({ title: "E" }) })
    expect(s.loader.invalidate(".opencode/knowledge-base/e.md")).toBe(true)
    const index = await s.loader.index()
    expect(index.resources.has("e")).toBe(true)
    expect(s.loader.stats.lastBuild).toMatchObject({ parsed: 1, reused: 4 })
  })

  test("files added, removed or renamed outside OpenCode are noticed at the next use", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    expect((await s.loader.query({ query: "shell-made" })).total).toBe(0)
    await Bun.sleep(5)
    await dir.write({ ".opencode/task/shell-made.md": md({ title: "Shell made" }) })
    expect((await s.loader.query({ query: "shell-made" })).total).toBe(1)
    expect(s.loader.stats.lastBuild).toMatchObject({ parsed: 1, reused: 4 })
    await fs.rm(dir.file(".opencode/task/shell-made.md"))
    expect((await s.loader.query({ query: "shell-made" })).total).toBe(0)
  })

  test("autoRebuildIndex revalidates before every use", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path, { autoRebuildIndex: true })
    await s.loader.query({})
    await Bun.sleep(5)
    // An in-place edit changes no folder: only the per-file revalidation of autoRebuildIndex sees it.
    await dir.write({ ".opencode/knowledge-base/d.md": md({ title: "Dee renamed" }) })
    expect((await s.loader.query({ query: "renamed" })).total).toBe(1)
  })

  test("the persisted cache makes a second loader's start warm", async () => {
    await using dir = await tmpdir(GRAPH)
    const cachePath = dir.file("cache/idx.json")
    await using first = setup(dir.path, { persistCache: true, indexCachePath: cachePath })
    await first.loader.index()
    await first.loader.flush()
    await using second = setup(dir.path, { persistCache: true, indexCachePath: cachePath })
    await second.loader.index()
    expect(second.loader.stats.lastBuild).toMatchObject({ parsed: 0, reused: 4 })
  })

  test("a build slower than indexBuildTimeout fails with IndexBuildError; the build still completes", async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 1500; i++) files[`.opencode/task/t${i}.md`] = md({ title: `T${i}`, tags: ["x"] })
    await using dir = await tmpdir(files)
    await using s = setup(dir.path, { indexBuildTimeout: 1 })
    const r = JSON.parse(await s.loader.load({ id: "t1" }, s.ctx))
    expect(r.error).toBe("IndexBuildError")
    expect(r.message).toContain("longer than 1 ms")
    await Bun.sleep(10)
    while (s.loader.stats.indexBuilds === 0) await Bun.sleep(20)
    expect((await s.loader.index()).resources.size).toBe(1500)
  })

  test("sessions idle for 24 hours are forgotten", async () => {
    await using dir = await tmpdir(GRAPH)
    await using s = setup(dir.path)
    s.loader.session("old")
    s.loader.session("recent")
    s.loader.sessions.get("old")!.lastActivity = Date.now() - ResourceLoader.SESSION_MAX_IDLE_MS - 1
    s.loader.sweep(Date.now())
    expect([...s.loader.sessions.keys()]).toEqual(["recent"])
  })

  test("the loader's timers never keep a process alive", async () => {
    await using dir = await tmpdir(GRAPH)
    const script = `
      import { ResourceLoader } from ${JSON.stringify(path.resolve(import.meta.dir, "../../resource/loader.ts"))}
      import { Logger } from ${JSON.stringify(path.resolve(import.meta.dir, "../../util/log.ts"))}
      const loader = ResourceLoader.create({ directory: ${JSON.stringify(dir.path)}, log: Logger.silent }, { persistCache: false })
      await loader.query({})
      console.log("queried")
    `
    const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" })
    const timer = setTimeout(() => proc.kill(), 10_000)
    const code = await proc.exited
    clearTimeout(timer)
    expect(await new Response(proc.stdout).text()).toContain("queried")
    expect(code).toBe(0)
  })
})

describe("resource-load with references: nothing left out unsaid", () => {
  test("a $ref to v2 of a versioned schema loads v2; a schema published elsewhere and a duplicate are named as not loaded", async () => {
    await using dir = await tmpdir({
      ".opencode/schema/v1/item.json": JSON.stringify({ $id: "https://ex.com/v1/item.json", title: "Item v1" }),
      ".opencode/schema/v2/item.json": JSON.stringify({ $id: "https://ex.com/v2/item.json", title: "Item v2" }),
      ".opencode/schema/v2/order.json": JSON.stringify({
        $id: "https://ex.com/v2/order.json",
        properties: { item: { $ref: "https://ex.com/v2/item.json" }, x: { $ref: "https://elsewhere.org/x.json" } },
      }),
      ".opencode/knowledge-base/a/guide.md": md({ title: "Guide A" }),
      ".opencode/knowledge-base/b/guide.md": md({ title: "Guide B" }),
      ".opencode/knowledge-base/b/index.md": md({ title: "B" }, "Read [the guide](guide.md)."),
    })
    await using s = setup(dir.path)
    s.h.user()
    const out = await s.load("order", true)
    expect(ResourceOutput.header(out)!.loaded).toEqual(["order", "v2-item"])
    expect(out).toContain("Item v2")
    expect(out).toContain(
      "Reference 'https://elsewhere.org/x.json' not loaded: no schema of the project declares this $id (a document published elsewhere).",
    )
    const b = await s.load("b", true)
    expect(b).toContain(
      "Reference '.opencode/knowledge-base/b/guide.md' not loaded: the file is left out of the index as a duplicate of 'guide' (see resources lint).",
    )
  })
})

test("resource-load of a page with a `+++` TOML header: its title in the header block, the TOML left out of the content", async () => {
  await using dir = await tmpdir({
    ".opencode/knowledge-base/post.md": '+++\ntitle = "Rust Blog"\n[[extra.see_also]]\npath = "/x/"\n+++\nBODY-TEXT\n',
  })
  await using s = setup(dir.path)
  s.h.user()
  const out = await s.load("post")
  expect(out).toContain("# Resource: Rust Blog")
  expect(out).toContain("BODY-TEXT")
  expect(out).not.toContain("see_also")
})

test("Q5: started in a package folder, every path an answer gives is relative to that folder (query, load, warnings)", async () => {
  await using dir = await tmpdir({
    ".opencode/knowledge-base/routers.md": md({ title: "Routers", description: "Writing routers", tags: "[router]" }),
    ".opencode/knowledge-base/broken.md": md({ title: "Broken", description: "Dangles" }, "[gone](./nope.md)\n"),
    "packages/server/.opencode/knowledge-base/adapters.md": md({ title: "Adapters", description: "Server adapters" }),
  })
  const sub = path.join(dir.path, "packages/server")
  const loader = ResourceLoader.create({ directory: sub, worktree: dir.path, log: Logger.silent })
  const found = await loader.query({ query: "" } as never)
  const paths = Object.fromEntries(found.results.map((r) => [r.id, r.path]))
  expect(paths).toEqual({
    broken: "../../.opencode/knowledge-base/broken.md",
    routers: "../../.opencode/knowledge-base/routers.md",
    adapters: ".opencode/knowledge-base/adapters.md",
  })
  for (const p of Object.values(paths)) expect(await Bun.file(path.resolve(sub, p)).exists()).toBe(true)
  expect(found.warnings?.first[0]).toStartWith("../../.opencode/knowledge-base/broken.md: ")
  const loaded = await loader.load({ id: "routers" }, { sessionID: "ses_q5", messageID: "msg_1" })
  expect(loaded).toContain("**Path:** ../../.opencode/knowledge-base/routers.md")
})
