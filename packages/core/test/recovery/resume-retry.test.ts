import { expect, test } from "bun:test"
import { RecoveryActions } from "../../recovery/actions"
import { SessionRecovery } from "../../recovery/schema"
import { RecoveryStore } from "../../recovery/store"
import { tmpdir } from "../fixture"
import { beat, probe } from "./beat"
import { crashed, memorySessions } from "./sessions"

/**
 * Tester AD, AD-4: `recovery resume` talks to OpenCode over HTTP with a 30 s timeout per request (recovery/http.ts). When the note's
 * POST is stored by the server but its answer does not arrive in time (a loaded machine, a big session) — or the
 * command is interrupted (Ctrl-C) right after it — the step "fails", the heartbeat is kept "so a retry is safe", and
 * the retry adds a second interruption note (this time saying no call was left running). The model reads two
 * "your session was interrupted" notes that disagree.
 */
test("AD-4 a resume retried after the note was stored but its answer was lost adds no second note", async () => {
  await using dir = await tmpdir()
  const folder = RecoveryStore.folder(dir.path)
  RecoveryStore.write(folder, beat({ owner: { ...beat().owner, pid: 4242, boot: "boot-1", startTime: "9" } }))
  const history = crashed()
  const store = memorySessions(history, [])
  let lost = true
  // The server stores the message (it is in the session from now on); the client's request times out.
  store.sessions.append = async (_id, input) => {
    history.push({ info: { id: `msg_note_${history.length}`, role: "user" }, parts: input.parts as any })
    if (lost) {
      lost = false
      throw new DOMException("The operation timed out.", "TimeoutError")
    }
    return "msg_note"
  }
  const context: RecoveryActions.Context = {
    folder,
    sessions: store.sessions,
    messages: store.messages,
    probe: probe({}),
    now: () => 100,
  }
  await expect(RecoveryActions.resume(context, "ses_test1")).rejects.toThrow("timed out")
  expect(RecoveryStore.exists(folder, "ses_test1")).toBe(true)
  // The user runs the same command again, as the error invites.
  await RecoveryActions.resume(context, "ses_test1")
  const notes = history.filter((m) => m.parts.some((p: any) => p.metadata?.[SessionRecovery.MARK]))
  expect(notes.map((n) => (n.parts[0] as any).text.split("\n")[0])).toHaveLength(1)
})
