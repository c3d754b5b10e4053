import { describe, expect, test } from "bun:test"
import fs from "fs"
import { RecoveryActions } from "../../recovery/actions"
import { SessionRecovery } from "../../recovery/schema"
import { RecoveryStore } from "../../recovery/store"
import { tmpdir } from "../fixture"
import { beat, probe } from "./beat"
import { crashed, memorySessions } from "./sessions"

const TODOS = [
  { content: "Write the parser", status: "in_progress", priority: "high" },
  { content: "Document it", status: "pending", priority: "low" },
]
/** A heartbeat whose owner (pid 4242 on boot-1) is gone in the probe below. */
const dead = () =>
  beat({ todos: TODOS, workdir: "/repo/pkg", owner: { ...beat().owner, pid: 4242, boot: "boot-1", startTime: "9" } })
const gone = probe({})

async function setup(todos = TODOS, options: Parameters<typeof memorySessions>[2] = {}) {
  const dir = await tmpdir()
  const folder = RecoveryStore.folder(dir.path)
  RecoveryStore.write(folder, dead())
  const store = memorySessions(crashed(), todos, options)
  const context: RecoveryActions.Context = {
    folder,
    sessions: store.sessions,
    messages: store.messages,
    probe: gone,
    now: () => 100,
  }
  return { dir, folder, store, context }
}

describe("RecoveryActions.resume", () => {
  test("closes the running and pending calls with an error result, adds the note, removes the heartbeat; re-runs nothing", async () => {
    const { dir, folder, store, context } = await setup()
    await using _ = dir
    const result = await RecoveryActions.resume(context, "ses_test1")
    expect(result).toEqual({
      sessionID: "ses_test1",
      action: "resume",
      closed: [
        { callID: "call_1", tool: "bash", title: "sleep 30", started: 10 },
        { callID: "call_2", tool: "read", title: undefined, started: 100 },
      ],
      todos: "unchanged",
      directory: "/repo",
      workdir: "/repo/pkg",
    })
    // Only part updates and one note: no call to any tool, nothing archived, no todo written.
    expect(store.writes.map((w) => w.op)).toEqual(["updatePart", "updatePart", "append"])
    const after = await store.messages()
    const states = after
      .flatMap((m) => m.parts)
      .filter((p) => p.type === "tool")
      .map((p: any) => p.state.status)
    expect(states).toEqual(["completed", "error", "error"])
    const note = store.writes[2].arg as any
    expect(note.parts[0].synthetic).toBe(true)
    expect(note.parts[0].text).toContain("Working directory: /repo/pkg")
    expect(note.parts[0].metadata[SessionRecovery.MARK]).toEqual({
      closed: ["call_1", "call_2"],
      todos: "unchanged",
      crash: expect.stringContaining("/4242/"),
    })
    expect(RecoveryStore.exists(folder, "ses_test1")).toBe(false)
  })

  test("a todo list that differs is written back exactly where the host can write todos", async () => {
    const { dir, store, context } = await setup([], { setTodos: true })
    await using _ = dir
    const result = await RecoveryActions.resume(context, "ses_test1")
    expect(result.todos).toBe("restored")
    expect(store.todos()).toEqual(TODOS)
  })

  test("where it cannot (stock OpenCode), the result says differs and the note carries the list", async () => {
    const { dir, store, context } = await setup([])
    await using _ = dir
    const result = await RecoveryActions.resume(context, "ses_test1")
    expect(result.todos).toBe("differs")
    expect((store.writes.at(-1)!.arg as any).parts[0].text).toContain("- [pending] Document it (low)")
  })

  test("a failed step keeps the heartbeat; the retry closes only what is still open", async () => {
    const { dir, folder, store, context } = await setup(TODOS, { failPart: "prt_5" })
    await using _ = dir
    await expect(RecoveryActions.resume(context, "ses_test1")).rejects.toThrow("HTTP 500")
    expect(RecoveryStore.exists(folder, "ses_test1")).toBe(true)
    const retry = memorySessions(await store.messages(), TODOS)
    const result = await RecoveryActions.resume(
      { ...context, sessions: retry.sessions, messages: retry.messages },
      "ses_test1",
    )
    expect(result.closed.map((c) => c.callID)).toEqual(["call_2"])
  })

  test("refused, with nothing written, for a live owner or an unknown session", async () => {
    const { dir, folder, store, context } = await setup()
    await using _ = dir
    const alive = { ...context, probe: probe({ 4242: { alive: true, startTime: "9" } }) }
    const error = await RecoveryActions.resume(alive, "ses_test1").catch((e) => e)
    expect(SessionRecovery.OwnerAlive.is(error)).toBe(true)
    expect(error.message).toContain("still owned by a live OpenCode process (pid 4242)")
    const missing = await RecoveryActions.dismiss(context, "ses_nope").catch((e) => e)
    expect(SessionRecovery.NotFound.is(missing)).toBe(true)
    expect(missing.message).toContain("opencode-builtins recovery list")
    expect(store.writes).toEqual([])
    expect(RecoveryStore.exists(folder, "ses_test1")).toBe(true)
  })

  test("an unreadable heartbeat is refused with its reason", async () => {
    const { dir, folder, context } = await setup()
    await using _ = dir
    RecoveryStore.remove(folder, "ses_test1")
    fs.writeFileSync(RecoveryStore.file(folder, "ses_test1"), '{"version":1,"sess')
    await expect(RecoveryActions.resume(context, "ses_test1")).rejects.toThrow("is unreadable (not JSON")
  })
})

describe("RecoveryActions: a session deleted after the crash (X14)", () => {
  test("the host says it does not exist: final for resume and dismiss, the heartbeat removed, nothing written", async () => {
    for (const action of [RecoveryActions.resume, RecoveryActions.dismiss]) {
      const { dir, folder, store, context } = await setup(TODOS, { deleted: true })
      await using _ = dir
      const error = await action(context, "ses_test1").catch((e) => e)
      expect(SessionRecovery.Deleted.is(error)).toBe(true)
      expect(error.message).toContain("no longer exists in OpenCode")
      expect(store.writes).toEqual([])
      expect(RecoveryStore.exists(folder, "ses_test1")).toBe(false)
    }
  })

  test("a host that cannot tell (no answer) changes nothing: the heartbeat is kept for a retry", async () => {
    const { dir, folder, store, context } = await setup(TODOS, { unreachable: true })
    await using _ = dir
    await expect(RecoveryActions.dismiss(context, "ses_test1")).rejects.toThrow("connection refused")
    expect(store.writes).toEqual([])
    expect(RecoveryStore.exists(folder, "ses_test1")).toBe(true)
  })
})

describe("RecoveryActions.dismiss", () => {
  test("closes the interrupted calls, archives the session, removes the heartbeat", async () => {
    const { dir, folder, store, context } = await setup()
    await using _ = dir
    const result = await RecoveryActions.dismiss(context, "ses_test1")
    expect(result.action).toBe("dismiss")
    expect(result.closed).toHaveLength(2)
    expect(store.writes.map((w) => w.op)).toEqual(["updatePart", "updatePart", "archive"])
    expect(RecoveryStore.exists(folder, "ses_test1")).toBe(false)
  })
})
