import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Builtins } from "../../builtins"
import { BuiltinsSeams } from "../../builtins/seams"
import { Capture } from "../../capture/feature"
import { CaptureStore } from "../../capture/store"
import { LocalSeal } from "../../learning/seal"
import type { Host } from "../../host"
import { LocalState } from "../../learning/local"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"

const host = (dir: string): Host => ({ directory: dir, worktree: dir, log: Logger.silent })

/** Built the way the external plugin builds it, with a real policy file in the project. */
async function compose(dir: string, options: Record<string, Record<string, unknown>> = {}, log = Logger.silent) {
  const { hooks, built, exposed } = await Builtins.create(host(dir), { options, logger: () => log })
  return { h: hooks as Record<string, any>, built, close: () => exposed.guard?.close() }
}

// An AWS key id the secret scanner knows (split so this file does not hold one).
const KEY = "AKIA" + "IOSFODNN7EXAMPLQ"
const POLICY = JSON.stringify({
  version: "1.0",
  roles: [{ name: "viewer", level: 10 }],
  rules: [{ pattern: "payroll.md", type: "file", deniedOperations: ["read", "llm"] }],
})

const errorEvent = (callID: string, tool: string, error: string, sessionID = "ses_1") => ({
  event: {
    type: "message.part.updated",
    properties: {
      part: {
        type: "tool",
        callID,
        tool,
        sessionID,
        state: { status: "error", input: { filePath: "missing.txt" }, error, time: { start: 1_000, end: 1_250 } },
      },
    },
  },
})

describe("CaptureStore: the bounded local store", () => {
  test("records round-trip, newest first, filtered by session, tool and failure", async () => {
    await using dir = await tmpdir()
    const store = CaptureStore.open(dir.path)
    store.append({ callID: "c1", sessionID: "s1", tool: "read", status: "completed", output: "one", at: 1 })
    store.append({ callID: "c2", sessionID: "s2", tool: "bash", status: "error", error: "boom", at: 2 })
    store.append({ callID: "c3", sessionID: "s1", tool: "read", status: "completed", output: "three", at: 3 })
    expect(store.file).toBe(path.join(dir.path, LocalState.DIR, "capture", "captures.jsonl"))
    expect(store.list().map((r) => r.callID)).toEqual(["c3", "c2", "c1"])
    expect(store.list({ sessionID: "s1" }).map((r) => r.callID)).toEqual(["c3", "c1"])
    expect(store.list({ tool: "bash" }).map((r) => r.callID)).toEqual(["c2"])
    expect(store.list({ failed: true }).map((r) => r.error)).toEqual(["boom"])
    expect(store.list({ limit: 1 }).map((r) => r.callID)).toEqual(["c3"])
    expect(store.get("c1").output).toBe("one")
    expect(() => store.get("nope")).toThrow(CaptureStore.NotFound)
    expect(store.clear()).toBe(3)
    expect(store.list()).toEqual([])
  })

  test("output is cut to maxOutputChars, with the original length kept", async () => {
    await using dir = await tmpdir()
    const store = CaptureStore.open(dir.path, { maxOutputChars: 10 })
    const record = store.append({
      callID: "c1",
      sessionID: "s",
      tool: "read",
      status: "completed",
      output: "x".repeat(25),
      args: JSON.stringify({ text: "y".repeat(5_000) }),
      at: 1,
    })
    expect(record.output).toStartWith("x".repeat(10) + "\n… (15 more characters not captured)")
    expect(record.outputChars).toBe(25)
    expect(record.args!.length).toBeLessThan(CaptureStore.MAX_ARGS_CHARS + 100)
    expect(store.get("c1")).toEqual(record)
  })

  test("rotation keeps at most maxEntries records, the oldest dropped first", async () => {
    await using dir = await tmpdir()
    const store = CaptureStore.open(dir.path, { maxEntries: 20, segments: 4 })
    for (let i = 0; i < 100; i++)
      store.append({ callID: `c${i}`, sessionID: "s", tool: "read", status: "completed", output: "o", at: i })
    const ids = store.list().map((r) => r.callID)
    expect(ids.length).toBeLessThanOrEqual(20)
    expect(ids.length).toBeGreaterThanOrEqual(15)
    expect(ids[0]).toBe("c99")
    expect(ids).not.toContain("c0")
    const files = fs.readdirSync(store.folder).sort()
    expect(files).toEqual(["captures.1.jsonl", "captures.2.jsonl", "captures.3.jsonl", "captures.jsonl"])
  })

  test("rotation keeps the store under maxBytes whatever the record size", async () => {
    await using dir = await tmpdir()
    const maxBytes = 64 * 1024
    const store = CaptureStore.open(dir.path, { maxBytes, maxOutputChars: 3_000 })
    for (let i = 0; i < 300; i++)
      store.append({
        callID: `c${i}`,
        sessionID: "s",
        tool: "read",
        status: "completed",
        output: "z".repeat(3_000),
        at: i,
      })
    const total = fs.readdirSync(store.folder).reduce((n, f) => n + fs.statSync(path.join(store.folder, f)).size, 0)
    expect(total).toBeLessThanOrEqual(maxBytes)
    expect(store.list()[0].callID).toBe("c299")
  })

  test("a store reopened later goes on counting from what is on disk", async () => {
    await using dir = await tmpdir()
    for (let i = 0; i < 50; i++)
      CaptureStore.open(dir.path, { maxEntries: 20 }).append({
        callID: `c${i}`,
        sessionID: "s",
        tool: "read",
        status: "completed",
        at: i,
      })
    expect(CaptureStore.open(dir.path).list().length).toBeLessThanOrEqual(20)
  })

  test("a line cut short by a crash is skipped, the others read", async () => {
    await using dir = await tmpdir()
    const store = CaptureStore.open(dir.path)
    store.append({ callID: "c1", sessionID: "s", tool: "read", status: "completed", output: "ok", at: 1 })
    fs.appendFileSync(store.file, '{"v":1,"callID":"c2","sessi')
    expect(store.list().map((r) => r.callID)).toEqual(["c1"])
  })
})

describe("tool-capture in the composition root", () => {
  test("a completed call is stored once, with the output the security layer redacted", async () => {
    await using dir = await tmpdir({ ".opencode-security.json": POLICY, "payroll.md": "salary table: 7f3a-payroll\n" })
    const { h, built, close } = await compose(dir.path)
    try {
      expect(built[0]).toBe("tool-capture")
      const input = { tool: "bash", sessionID: "ses_1", callID: "call_1", args: { command: `echo ${KEY}` } }
      await h["tool.execute.before"](input, { args: input.args })
      const output = { title: "echo", output: `deploy key ${KEY}\ndone\n`, metadata: {} }
      await h["tool.execute.after"](input, output)
      // What the model gets is redacted...
      expect(output.output).not.toContain(KEY)
      expect(output.output).toContain("[REDACTED")
      // ...and the store holds exactly that, arguments redacted too.
      const records = CaptureStore.open(dir.path).list()
      expect(records).toHaveLength(1)
      expect(records[0]).toMatchObject({ callID: "call_1", tool: "bash", status: "completed", output: output.output })
      expect(records[0].args).not.toContain(KEY)
      expect(records[0].startedAt).toBeNumber()
      expect(fs.readFileSync(CaptureStore.open(dir.path).file, "utf8")).not.toContain(KEY)
      // The same call reported again (another route, a retry of the hook) is not stored twice.
      await h["tool.execute.after"](input, { ...output })
      expect(CaptureStore.open(dir.path).list()).toHaveLength(1)
    } finally {
      close()
    }
  })

  test("a failed call is taken from its error event, once, marked and redacted", async () => {
    await using dir = await tmpdir({ ".opencode-security.json": POLICY })
    const { h, close } = await compose(dir.path)
    try {
      await h["tool.execute.before"](
        { tool: "read", sessionID: "ses_1", callID: "call_2" },
        { args: { filePath: "missing.txt" } },
      )
      const event = errorEvent("call_2", "read", `File not found; token ${KEY}`)
      await h.event(event)
      await h.event(event)
      // OpenCode 1.18 may also end a failed subtask with no result: nothing more is stored.
      await h["tool.execute.after"]({ tool: "read", sessionID: "ses_1", callID: "call_2" }, undefined)
      const records = CaptureStore.open(dir.path).list()
      expect(records).toHaveLength(1)
      expect(records[0]).toMatchObject({ callID: "call_2", tool: "read", status: "error", startedAt: 1_000, at: 1_250 })
      expect(records[0].error).toStartWith("File not found; token [REDACTED")
      expect(records[0].args).toBe('{"filePath":"missing.txt"}')
      // Other parts' updates (pending, running, completed, text) are not captures.
      await h.event({
        event: {
          type: "message.part.updated",
          properties: { part: { type: "tool", callID: "c9", state: { status: "running" } } },
        },
      })
      await h.event({ event: { type: "message.part.updated", properties: { part: { type: "text", text: "hi" } } } })
      expect(CaptureStore.open(dir.path).list()).toHaveLength(1)
    } finally {
      close()
    }
  })

  test("the same call id in two sessions is two calls (providers may number calls per response)", async () => {
    await using dir = await tmpdir()
    const hooks = Capture.hooks({ store: CaptureStore.open(dir.path), redact: (t) => t, log: Logger.silent })
    for (const sessionID of ["ses_a", "ses_b", "ses_a"])
      await hooks["tool.execute.after"]({ tool: "read", sessionID, callID: "0" }, { title: "", output: sessionID })
    expect(
      CaptureStore.open(dir.path)
        .list()
        .map((r) => r.output),
    ).toEqual(["ses_b", "ses_a"])
  })

  test("calls in a subagent's session name their parent session", async () => {
    await using dir = await tmpdir()
    const { h, close } = await compose(dir.path)
    try {
      await h.event({
        event: { type: "session.created", properties: { info: { id: "ses_child", parentID: "ses_1" } } },
      })
      await h["tool.execute.after"](
        { tool: "grep", sessionID: "ses_child", callID: "call_3", args: { pattern: "x" } },
        { title: "x", output: "no matches", metadata: {} },
      )
      expect(CaptureStore.open(dir.path).get("call_3")).toMatchObject({ sessionID: "ses_child", parentID: "ses_1" })
    } finally {
      close()
    }
  })

  test("an unwritable store leaves the tool result unchanged and logs one line", async () => {
    // The local state folder is a file: nothing can be created under it (root included).
    await using dir = await tmpdir({ [LocalState.DIR]: "not a folder" })
    const log = Logger.memory()
    const { h, close } = await compose(dir.path, {}, log)
    try {
      for (let i = 0; i < 5; i++) {
        const output = { title: "t", output: `result ${i}`, metadata: { n: i } }
        await h["tool.execute.after"]({ tool: "read", sessionID: "s", callID: `call_${i}`, args: {} }, output)
        expect(output).toEqual({ title: "t", output: `result ${i}`, metadata: { n: i } })
      }
      await h.event(errorEvent("call_x", "read", "nope"))
      // Capture's own lines (other features of the root log theirs: session learning without the host's sessions).
      const lines = log.entries.filter((e) => (e.level === "error" || e.level === "warn") && /^capture/.test(e.message))
      expect(lines).toHaveLength(1)
      expect(lines[0].message).toContain("capture failed")
      expect(String(lines[0].extra?.error)).toMatch(/ENOTDIR|EEXIST|is not a folder/)
    } finally {
      close()
    }
  })

  test('"enabled": false switches capture off', async () => {
    await using dir = await tmpdir()
    const { h, built, close } = await compose(dir.path, { capture: { enabled: false } })
    try {
      expect(built).not.toContain("tool-capture")
      await h["tool.execute.after"](
        { tool: "read", sessionID: "s", callID: "c1", args: {} },
        { title: "", output: "x" },
      )
      expect(fs.existsSync(CaptureStore.dir(dir.path))).toBe(false)
    } finally {
      close()
    }
  })

  test("excluded tools are not captured; invalid options are reported and replaced by defaults", async () => {
    await using dir = await tmpdir()
    const log = Logger.memory()
    const { h, close } = await compose(dir.path, { capture: { exclude: ["todowrite"], maxEntries: -1 } }, log)
    try {
      await h["tool.execute.after"]({ tool: "todowrite", sessionID: "s", callID: "c1" }, { title: "", output: "x" })
      await h["tool.execute.after"]({ tool: "read", sessionID: "s", callID: "c2" }, { title: "", output: "y" })
      expect(
        CaptureStore.open(dir.path)
          .list()
          .map((r) => r.tool),
      ).toEqual(["read"])
      expect(log.entries.some((e) => e.level === "error" && e.message.includes("capture.maxEntries"))).toBe(true)
    } finally {
      close()
    }
  })

  test("an MCP result (content parts, no output yet) is stored as its text; other structured output as JSON", async () => {
    await using dir = await tmpdir()
    const hooks = Capture.hooks({ store: CaptureStore.open(dir.path), redact: (t) => t, log: Logger.silent })
    await hooks["tool.execute.after"](
      { tool: "docs_search", sessionID: "s", callID: "c1", args: { q: "x" } },
      {
        title: "",
        content: [
          { type: "text", text: "hit" },
          { type: "image", data: "AAAA" },
        ],
      },
    )
    expect(CaptureStore.open(dir.path).get("c1").output).toBe("hit\n\n[image]")
    await hooks["tool.execute.after"]({ tool: "x", sessionID: "s", callID: "c2" }, { title: "", output: { n: 1 } })
    expect(CaptureStore.open(dir.path).get("c2").output).toBe('{"n":1}')
  })
})

describe("tool-capture on the fork's route (BuiltinsSeams)", () => {
  test("a completed call through Plugin.trigger is stored redacted; a failed one from the event OpenCode publishes", async () => {
    await using dir = await tmpdir({ ".opencode-security.json": POLICY })
    const seams = await BuiltinsSeams.create(host(dir.path), { options: {}, logger: () => Logger.silent })
    try {
      expect(seams.built[0]).toBe("tool-capture")
      const input = { tool: "bash", sessionID: "ses_1", callID: "call_1", args: { command: "cat deploy.env" } }
      const output = { title: "cat", output: `KEY=${KEY}\n`, metadata: {} }
      // Another plugin appends to the result after core's hooks; the security layer's second pass redacts it.
      await seams.trigger("tool.execute.after", input, output, async (out) => {
        out.output += "(seen by another plugin)\n"
      })
      expect(output.output).toContain("(seen by another plugin)")
      expect(output.output).not.toContain(KEY)
      const [record] = CaptureStore.open(dir.path).list()
      // Captured inside core's chain: redacted, before the other plugin's addition.
      expect(record).toMatchObject({ callID: "call_1", status: "completed" })
      expect(record.output).toContain("[REDACTED")
      expect(record.output).not.toContain(KEY)
      expect(record.output).not.toContain("(seen by another plugin)")

      await seams.event({
        type: "message.part.updated",
        properties: errorEvent("call_2", "read", "gone").event.properties,
      })
      expect(
        CaptureStore.open(dir.path)
          .list()
          .map((r) => [r.callID, r.status]),
      ).toEqual([
        ["call_2", "error"],
        ["call_1", "completed"],
      ])
    } finally {
      await seams.dispose()
    }
  })
})

describe("CaptureStore: the file it appends to (red team CD)", () => {
  test("CD-3 after a line cut short by a crash, the next captured call starts a line of its own and is listed", async () => {
    await using dir = await tmpdir({ ".keep": "" })
    const folder = CaptureStore.dir(dir.path)
    fs.mkdirSync(folder, { recursive: true })
    const file = path.join(folder, CaptureStore.FILE)
    fs.writeFileSync(
      file,
      LocalSeal.seal(
        file,
        "capture",
        JSON.stringify({ v: 1, callID: "call_1", sessionID: "s", tool: "read", status: "completed", at: 1 }),
      ) +
        "\n" +
        '{"v":1,"callID":"call_2","sessionID":"s","tool":"bash","status":"comp', // OpenCode killed mid-append
    )
    const store = CaptureStore.open(dir.path)
    store.append({ callID: "call_3", sessionID: "s", tool: "edit", status: "completed", at: 3 })
    // Before: call_3 was glued to the torn line and lost with it.
    expect(store.all().map((r) => r.callID)).toEqual(["call_1", "call_3"])
    expect(store.read().skipped).toEqual([`${store.file}: line 2 skipped (not JSON: cut short by a crash?)`])
  })

  test("CD-6 captures.jsonl planted as a link (to a file outside, or dangling): nothing is written through it, the failure logged once", async () => {
    await using outside = await tmpdir({ bashrc: "# my bashrc\n" })
    await using dir = await tmpdir({ ".keep": "" })
    const folder = CaptureStore.dir(dir.path)
    fs.mkdirSync(folder, { recursive: true })
    // A repository can commit this link (the folder's own .gitignore is only written with its first file).
    fs.symlinkSync(outside.file("bashrc"), path.join(folder, CaptureStore.FILE))
    const store = CaptureStore.open(dir.path)
    const call = (callID: string) => ({
      callID,
      sessionID: "ses_1",
      tool: "read",
      status: "completed" as const,
      output: "text of a file the model read: $(touch /tmp/pwned)",
      at: 1,
    })
    expect(() => store.append(call("call_1"))).toThrow(LocalState.LinkedFile)
    expect(fs.readFileSync(outside.file("bashrc"), "utf8")).toBe("# my bashrc\n")
    // A dangling link would have been created at its target.
    fs.rmSync(path.join(folder, CaptureStore.FILE))
    fs.symlinkSync(outside.file("new-rc"), path.join(folder, CaptureStore.FILE))
    expect(() => store.append(call("call_2"))).toThrow(LocalState.LinkedFile)
    expect(fs.existsSync(outside.file("new-rc"))).toBe(false)

    // Through the feature: the calls go on uncaptured, one error logged for the lot.
    const errors: string[] = []
    const log = { ...Logger.silent, error: (message: string) => void errors.push(message) }
    const hooks = Capture.hooks({ store, redact: (t) => t, log }) as Record<string, any>
    for (const callID of ["call_3", "call_4"])
      await hooks["tool.execute.after"](
        { tool: "read", sessionID: "ses_1", callID, args: {} },
        { title: "", output: "$(touch /tmp/pwned)", metadata: {} },
      )
    expect(errors).toEqual(["capture failed; tool calls go on uncaptured"])
    expect(fs.existsSync(outside.file("new-rc"))).toBe(false)
  })
})

describe("CaptureStore across processes", () => {
  test(
    "four processes appending at once: rotations under the lock never drop a segment early; the caps hold within a segment per process",
    async () => {
      await using dir = await tmpdir({ ".keep": "" })
      const STORE = new URL("../../capture/store.ts", import.meta.url).pathname
      const start = Date.now() + 1_500
      const script = `
        const { CaptureStore } = await import(${JSON.stringify(STORE)})
        const who = process.argv.at(-1)
        const store = CaptureStore.open(${JSON.stringify(dir.path)}, { maxEntries: 400, segments: 4 })
        // All four start together (each bun takes its own time to start).
        while (Date.now() < ${start}) await Bun.sleep(1)
        for (let i = 0; i < 1000; i++)
          store.append({ callID: "call_" + who + "_" + i, sessionID: "s" + who, tool: "read", status: "completed", at: i })
      `
      const procs = ["0", "1", "2", "3"].map((who) =>
        // The test's own environment (its cache folder, so the same local-state key: LocalSeal).
        Bun.spawn([process.execPath, "-e", script, who], { stdout: "pipe", stderr: "pipe", env: { ...process.env } }),
      )
      expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0, 0, 0])
      const store = CaptureStore.open(dir.path, { maxEntries: 400, segments: 4 })
      const { records, skipped } = store.read()
      expect(skipped).toEqual([])
      // Segments 1 to 3 were each rotated out full (at least 100 records, measured under the lock), and 4,000 records
      // were written: at least 300 are kept. Two processes rotating the same full segment dropped one more segment.
      expect(records.length).toBeGreaterThanOrEqual(300)
      // Each process counts its own appends between rotations: the caps hold within one segment per extra process.
      expect(records.length).toBeLessThanOrEqual(400 + 3 * 100)
      expect(new Set(records.map((r) => r.callID)).size).toBe(records.length)
      expect(fs.readdirSync(store.folder).filter((f) => f.includes(".lock"))).toEqual([])
    },
    { timeout: 60_000 },
  )
})
