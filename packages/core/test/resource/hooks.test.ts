import { describe, expect, test } from "bun:test"
import { ResourceHooks } from "../../resource/hooks"
import { ResourceLoader } from "../../resource/loader"
import type { Resource } from "../../resource/schema"
import type { SessionView } from "../../resource/session"
import { ResourceTools } from "../../resource/tools"
import { Logger } from "../../util/log"
import { md, tmpdir } from "../fixture"
import { history } from "./history"

const FILES = {
  ".opencode/knowledge-base/a.md": md({ title: "A", references: ["b"] }, "CONTENT-A"),
  ".opencode/knowledge-base/b.md": md({ title: "B" }, "CONTENT-B"),
  ".opencode/knowledge-base/c.md": md({ title: "C" }, "CONTENT-C"),
}

function setup(dir: string, config: Resource.ConfigInput = {}) {
  const h = history()
  const log = Logger.memory()
  const loader = ResourceLoader.create(
    { directory: dir, worktree: dir, log, messages: async () => h.messages },
    { persistCache: false, ...config },
  )
  const hooks = ResourceHooks.create(loader)
  const tools = ResourceTools.create(loader)
  /** Runs a tool the way OpenCode does: execute, then tool.execute.after, then store the part. */
  const call = async (name: keyof typeof tools, args: Record<string, unknown>) => {
    const messageID = h.assistant()
    const ctx = { sessionID: "ses_test", messageID, agent: "build", directory: dir, worktree: dir } as any
    const result = { title: "", output: await tools[name].execute(args as any, ctx), metadata: {} as any }
    await hooks["tool.execute.after"]({ tool: name, sessionID: "ses_test", callID: `call_${messageID}` }, result)
    const part = h.tool(name, result.output)
    part.state!.metadata = result.metadata
    h.messages.at(-1)!.parts.push(part)
    return result
  }
  /** What the model would be sent now: a deep copy of the history, transformed. */
  const request = async () => {
    const messages = structuredClone(h.messages) as SessionView.Message[]
    await hooks["experimental.chat.messages.transform"]({}, { messages })
    return messages
  }
  const text = (messages: SessionView.Message[]) => JSON.stringify(messages)
  return { h, log, loader, hooks, tools, call, request, text, [Symbol.asyncDispose]: () => loader.dispose() }
}

describe("experimental.chat.messages.transform", () => {
  test("released content leaves the request; the rest stays; the stored history is untouched", async () => {
    await using dir = await tmpdir(FILES)
    await using s = setup(dir.path)
    s.h.user()
    await s.call("resource-load", { id: "a", includeReferences: true })
    await s.call("resource-load", { id: "c" })
    const before = s.text(await s.request())
    expect(before).toContain("CONTENT-A")
    await s.call("resource-release", { ids: ["a"] })
    const after = s.text(await s.request())
    expect(after).not.toContain("CONTENT-A")
    expect(after).toContain("CONTENT-B")
    expect(after).toContain("CONTENT-C")
    expect(after).toContain("[resource 'a' released")
    expect(s.text(s.h.messages)).toContain("CONTENT-A")
  })

  test("the request is byte-identical turn after turn until something is released or pruned", async () => {
    await using dir = await tmpdir(FILES)
    await using s = setup(dir.path, { autoFlagAfterMessage: false })
    s.h.user()
    await s.call("resource-load", { id: "c" })
    const first = await s.request()
    for (let i = 0; i < 3; i++) {
      s.h.user(`turn ${i}`)
      await s.call("resource-list-loaded", {})
      const next = await s.request()
      // Every message already sent is sent again unchanged: only new messages are appended.
      expect(s.text(next.slice(0, first.length))).toBe(s.text(first))
    }
    await s.call("resource-release", { ids: ["c"] })
    const released = await s.request()
    expect(s.text(released.slice(0, first.length))).not.toBe(s.text(first))
  })

  test("with autoFlagAfterMessage, a load is still sent in the next turn and gone the turn after", async () => {
    await using dir = await tmpdir(FILES)
    await using s = setup(dir.path)
    s.h.user()
    await s.call("resource-load", { id: "c" })
    s.h.user("second")
    expect(s.text(await s.request())).toContain("CONTENT-C")
    s.h.user("third")
    const third = s.text(await s.request())
    expect(third).not.toContain("CONTENT-C")
    expect(third).toContain("'c' pruned")
  })

  test("no history, other tools and foreign outputs pass through untouched", async () => {
    await using dir = await tmpdir(FILES)
    await using s = setup(dir.path)
    const empty: SessionView.Message[] = []
    await s.hooks["experimental.chat.messages.transform"]({}, { messages: empty })
    expect(empty).toEqual([])
    s.h.user()
    s.h.assistant(s.h.tool("read", "CONTENT-A from read"), s.h.tool("resource-load", "plain text, no header"))
    await s.call("resource-release", { ids: [] })
    expect(s.text(await s.request())).toBe(s.text(s.h.messages))
  })
})

describe("tool.execute.after, events and compaction", () => {
  test("a load's result is marked prunable with what it loaded; other tools are left alone", async () => {
    await using dir = await tmpdir(FILES)
    await using s = setup(dir.path)
    s.h.user()
    const loaded = await s.call("resource-load", { id: "a", includeReferences: true })
    expect(loaded.metadata).toMatchObject({
      prunable: true,
      retentionPolicy: "release-or-next-turn",
      resourceLoader: { loaded: ["a", "b"], reactivated: [] },
    })
    expect(loaded.title).toBe("a, b")
    const failed = await s.call("resource-load", { id: "missing" })
    expect(failed.metadata).toEqual({})
    const other = { title: "", output: "x", metadata: { keep: 1 } }
    await s.hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_test", callID: "c" }, other)
    expect(other.metadata).toEqual({ keep: 1 })
  })

  test("file.edited on a resource invalidates the index; session.deleted forgets the session", async () => {
    await using dir = await tmpdir(FILES)
    await using s = setup(dir.path)
    await s.loader.index()
    const builds = s.loader.stats.indexBuilds
    await s.hooks.event({ event: { type: "file.edited", properties: { file: dir.file("src/app.ts") } } })
    await s.loader.index()
    expect(s.loader.stats.indexBuilds).toBe(builds)
    await dir.write({ ".opencode/knowledge-base/a.md": md({ title: "A edited" }) })
    await s.hooks.event({
      event: { type: "file.edited", properties: { file: dir.file(".opencode/knowledge-base/a.md") } },
    })
    expect((await s.loader.index()).resources.get("a")!.name).toBe("A edited")
    await s.hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_x" } } } })
    expect(s.loader.sessions.has("ses_x")).toBe(true)
    await s.hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses_x" } } } })
    expect(s.loader.sessions.has("ses_x")).toBe(false)
    await s.hooks.event({ event: { type: "unrelated", properties: {} } })
  })

  test("session.idle logs what the next request prunes", async () => {
    await using dir = await tmpdir(FILES)
    await using s = setup(dir.path)
    s.h.user()
    await s.call("resource-load", { id: "c" })
    s.h.user()
    await s.hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_test" } } })
    expect(s.log.entries.find((e) => e.message === "resources pruned from the next request")?.extra).toMatchObject({
      ids: ["c"],
    })
  })

  test("compaction carries active resources' content within the budget and lists the rest", async () => {
    await using dir = await tmpdir({ ...FILES, ".opencode/task/big.md": "x".repeat(600) })
    await using s = setup(dir.path, { compactionBudget: 200 })
    s.h.user()
    await s.call("resource-load", { id: "c" })
    await s.call("resource-load", { id: "big" })
    await s.call("resource-load", { id: "b" })
    await s.call("resource-release", { ids: ["b"] })
    const output = { context: [] as string[] }
    await s.hooks["experimental.session.compacting"]({ sessionID: "ses_test" }, output)
    expect(output.context).toHaveLength(1)
    expect(output.context[0]).toContain("CONTENT-C")
    expect(output.context[0]).toContain("Also in use (not carried, over the size budget): big")
    expect(output.context[0]).not.toContain("CONTENT-B")
  })

  test("compaction with nothing loaded adds nothing", async () => {
    await using dir = await tmpdir(FILES)
    await using s = setup(dir.path)
    const output = { context: [] as string[] }
    await s.hooks["experimental.session.compacting"]({ sessionID: "ses_test" }, output)
    expect(output.context).toEqual([])
  })

  test("a failing history read never breaks a hook: it is logged", async () => {
    await using dir = await tmpdir(FILES)
    const log = Logger.memory()
    const loader = ResourceLoader.create(
      { directory: dir.path, worktree: dir.path, log, messages: () => Promise.reject(new Error("db locked")) },
      { persistCache: false },
    )
    const hooks = ResourceHooks.create(loader)
    await hooks["chat.message"]({ sessionID: "s" })
    expect(log.entries.some((e) => e.message.includes("could not read the session history"))).toBe(true)
    await loader.dispose()
  })
})

describe("tool definitions", () => {
  test("ids, descriptions naming the limits, and argument validation", async () => {
    await using dir = await tmpdir(FILES)
    await using s = setup(dir.path, { maxResourcesPerSession: 7 })
    expect(Object.keys(s.tools)).toEqual([
      "resource-query",
      "resource-load",
      "resource-list-loaded",
      "resource-release",
    ])
    expect(s.tools["resource-load"].description).toContain("7 resources")
    expect(s.tools["resource-load"].description).toContain("1024 KB are refused")
    expect(s.tools["resource-query"].description).toContain("At most 50 results")
    const z = (await import("zod")).default
    const query = z.object(s.tools["resource-query"].args)
    expect(query.safeParse({ limit: 51 }).success).toBe(false)
    expect(query.safeParse({ type: "nope" }).success).toBe(false)
    expect(query.safeParse({ type: "all", tags: ["a"], limit: 50 }).success).toBe(true)
    expect(z.object(s.tools["resource-load"].args).safeParse({}).success).toBe(false)
  })

  test("every tool answers with JSON or the loaded text, never throws", async () => {
    await using dir = await tmpdir(FILES)
    await using s = setup(dir.path)
    s.h.user()
    const q = JSON.parse((await s.call("resource-query", { query: "a" })).output)
    expect(q.results[0].id).toBe("a")
    expect(q.query).toEqual({ query: "a" })
    const list = JSON.parse((await s.call("resource-list-loaded", {})).output)
    expect(list.loaded).toEqual([])
    const rel = JSON.parse((await s.call("resource-release", {})).output)
    expect(rel.released).toEqual([])
  })
})
