import { describe, expect, test } from "bun:test"
import type { Host } from "../../host"
import { RecoveryDecide } from "../../recovery/decide"
import { RecoveryHooks } from "../../recovery/hooks"
import { SessionRecovery } from "../../recovery/schema"
import { RecoveryStore } from "../../recovery/store"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import { beat, probe } from "./beat"
import { crashed, memorySessions } from "./sessions"

/**
 * Tester AD, AD-3: after a kill -9 the user opens the session again and types (no /recover). The new process's
 * heartbeat used to replace the crash record and be removed at idle: `recovery list` forgot the session and the
 * crash's bash call stayed `running` in the stored history for good.
 */
const DEAD = { ...beat().owner, pid: 4242, boot: "boot-1", startTime: "9" }

function setup(dir: string, options: { failPart?: string; noHost?: boolean } = {}) {
  const log = Logger.memory()
  const history = crashed("ses_test1")
  const store = memorySessions(history, [], { failPart: options.failPart })
  const host: Host = options.noHost
    ? { directory: dir, worktree: dir, log }
    : { directory: dir, worktree: dir, log, sessions: store.sessions, messages: store.messages as never }
  const recovery = RecoveryHooks.create({
    host,
    settings: SessionRecovery.DEFAULTS,
    log,
    probe: probe({ [process.pid]: { alive: true, startTime: "1" } }),
    owner: { ...DEAD, pid: process.pid, startTime: "1" },
  })
  RecoveryStore.write(recovery.folder, beat({ owner: DEAD }, 50))
  const listed = () => RecoveryDecide.interrupted(RecoveryStore.read(recovery.folder).beats, probe({}), Date.now())
  return { history, store, recovery, hooks: recovery.hooks as any, listed, log }
}

const busy = { event: { type: "session.status", properties: { sessionID: "ses_test1", status: { type: "busy" } } } }
const idle = { event: { type: "session.status", properties: { sessionID: "ses_test1", status: { type: "idle" } } } }

describe("RecoveryHooks: a crashed session used again without /recover", () => {
  test("AD-3 the crash's calls are closed (error result, not re-run) before the model request; then the record goes", async () => {
    await using dir = await tmpdir({ ".git/HEAD": "x" })
    const { history, store, hooks, listed } = setup(dir.path)
    expect(listed().map((f) => f.beat.sessionID)).toEqual(["ses_test1"])
    await hooks["chat.params"]({ sessionID: "ses_test1", agent: "build" }, {})
    const statuses = history
      .flatMap((m) => m.parts)
      .filter((p) => p.type === "tool")
      .map((p: any) => p.state.status)
    expect(statuses).toEqual(["completed", "error", "error"])
    expect(store.writes.filter((w) => w.op === "append")).toEqual([])
    await hooks.event(idle)
    expect(listed()).toEqual([])
  })

  test("AD-3 when the calls cannot be closed, the crash record is kept (not overwritten, not removed at idle)", async () => {
    for (const options of [{ failPart: "prt_4" }, { noHost: true }]) {
      await using dir = await tmpdir({ ".git/HEAD": "x" })
      const { hooks, listed, recovery } = setup(dir.path, options)
      await hooks.event(busy)
      await hooks["chat.params"]({ sessionID: "ses_test1", agent: "build" }, {})
      expect(listed().map((f) => [f.beat.sessionID, f.beat.owner.pid])).toEqual([["ses_test1", 4242]])
      await hooks.event(idle)
      expect(listed().map((f) => [f.beat.sessionID, f.beat.owner.pid])).toEqual([["ses_test1", 4242]])
      recovery.close()
    }
  })

  test("AD-3 control: calls in messages this process stored after it took the session over are not touched", async () => {
    await using dir = await tmpdir({ ".git/HEAD": "x" })
    const { history, hooks } = setup(dir.path)
    history.push({
      info: { id: "msg_9", role: "assistant", time: { created: Date.now() + 60_000 } } as never,
      parts: [{ id: "prt_9", type: "tool", tool: "bash", callID: "call_9", state: { status: "running", input: {} } }],
    })
    await hooks["chat.params"]({ sessionID: "ses_test1", agent: "build" }, {})
    expect(history.at(-1)!.parts.map((p: any) => p.state.status)).toEqual(["running"])
    expect(history[2].parts.filter((p) => p.type === "tool").map((p: any) => p.state.status)).toEqual([
      "error",
      "error",
    ])
  })
})
