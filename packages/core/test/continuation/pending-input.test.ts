import { describe, expect, test } from "bun:test"
import { OPEN, Sim } from "./sim"

/**
 * A question or permission cancelled by Esc (`session.abort`) gets no reply event from OpenCode 1.2.15 or 1.18.33
 * (tester AD, AD-7: `permission.asked`, then nothing): the pending state must end with the signals they do publish,
 * or continuation stays off for the session until OpenCode restarts.
 */
const never = (step: number) => (step === 0 ? { todos: OPEN } : { text: "Made some progress." })

const cases: [string, (sessionID: string) => { type: string; properties: unknown }][] = [
  [
    "session.status idle",
    (sessionID) => ({ type: "session.status", properties: { sessionID, status: { type: "idle" } } }),
  ],
  ["session.idle", (sessionID) => ({ type: "session.idle", properties: { sessionID } })],
  [
    "session.error (MessageAbortedError)",
    (sessionID) => ({ type: "session.error", properties: { sessionID, error: { name: "MessageAbortedError" } } }),
  ],
  [
    "the asking message marked aborted",
    (sessionID) => ({
      type: "message.updated",
      properties: { info: { id: "msg_a", sessionID, role: "assistant", error: { name: "MessageAbortedError" } } },
    }),
  ],
  [
    "a newer assistant message",
    (sessionID) => ({ type: "message.updated", properties: { info: { id: "msg_b", sessionID, role: "assistant" } } }),
  ],
  [
    "the tool call settled (error)",
    (sessionID) => ({
      type: "message.part.updated",
      properties: { part: { type: "tool", sessionID, callID: "call_1", state: { status: "error" } } },
    }),
  ],
]

describe("todo continuation: a request cancelled without a reply", () => {
  for (const kind of ["permission.asked", "question.asked"])
    test.each(cases)(`AD-7 ${kind}, then %s: continuation works again`, async (_name, signal) => {
      const sim = new Sim()
      const event = (sim.instance.hooks as any).event
      const tool = { messageID: "msg_a", callID: "call_1" }
      await event({ event: { type: kind, properties: { id: "req_1", sessionID: sim.sessionID, tool } } })
      sim.user("build it")
      expect(await sim.run(never)).toBe(2)
      expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "pending-input" })
      await event({ event: signal(sim.sessionID) })
      sim.user("Skip the tests for now, go on with the parser")
      const before = sim.instance.decisions.length
      await sim.run(() => ({ text: "Made some progress." }), { maxSteps: 1 })
      expect(sim.instance.decisions[before]?.decision).toMatchObject({ continue: true, index: 1 })
    })

  test("AD-7 control: busy status, another session's idle, another call's result, an older message keep it pending", async () => {
    const sim = new Sim()
    const event = (sim.instance.hooks as any).event
    const tool = { messageID: "msg_b", callID: "call_1" }
    await event({ event: { type: "permission.asked", properties: { id: "req_1", sessionID: sim.sessionID, tool } } })
    for (const e of [
      { type: "session.status", properties: { sessionID: sim.sessionID, status: { type: "busy" } } },
      { type: "session.idle", properties: { sessionID: "ses_other" } },
      {
        type: "message.part.updated",
        properties: {
          part: { type: "tool", sessionID: sim.sessionID, callID: "call_2", state: { status: "completed" } },
        },
      },
      { type: "message.updated", properties: { info: { id: "msg_a", sessionID: sim.sessionID, role: "assistant" } } },
      { type: "message.updated", properties: { info: { id: "msg_b", sessionID: sim.sessionID, role: "assistant" } } },
    ])
      await event({ event: e })
    sim.user("build it")
    await sim.run(never)
    expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "pending-input" })
  })
})
