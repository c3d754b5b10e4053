import { describe, expect, test } from "bun:test"
import { TodoContinuation } from "../../continuation/schema"
import { ContinuationText } from "../../continuation/text"
import { OPEN, Sim, done } from "./sim"

/** A model that writes its todos once, then only ever answers with text. */
const never =
  (text = "Made some progress.") =>
  (step: number) =>
    step === 0 ? { todos: OPEN } : { text }

describe("todo continuation: bounded", () => {
  test("a model that never updates its todos gets exactly N continuations (default 3): N extra requests", async () => {
    const sim = new Sim()
    sim.user("build it")
    expect(await sim.run(never())).toBe(2 + 3)
    expect(sim.continuations().map((m) => m.parts[0].text!.split("]")[0])).toEqual([
      "[todo continuation 1/3",
      "[todo continuation 2/3",
      "[todo continuation 3/3",
    ])
    expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "limit" })
  })

  test.each([0, 1, 2, 3])("limit %i: exactly that many", async (n) => {
    const sim = new Sim({ maxContinuations: n })
    sim.user("build it")
    expect(await sim.run(never())).toBe(2 + n)
  })

  test("two continuations in a row without progress stop early: a never-updating model gets 3 even with a limit of 10", async () => {
    const sim = new Sim({ maxContinuations: 10 })
    sim.user("build it")
    expect(await sim.run(never())).toBe(2 + 3)
    expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "no-progress" })
  })

  test("progress (a todo completed) keeps it going up to the limit; the limit still holds", async () => {
    const todos = [...OPEN, ...Array.from({ length: 8 }, (_, i) => ({ content: `t${i}`, status: "pending" }))]
    const sim = new Sim({ maxContinuations: 6 })
    sim.user("build it")
    // Every continuation's reply completes one more todo (a todowrite step, then text).
    let completed = 0
    const requests = await sim.run((step) => {
      if (step === 0) return { todos }
      if (step % 2 === 1) return { todos: done(todos, ++completed) }
      return { text: "one more done" }
    })
    expect(sim.continuations()).toHaveLength(6)
    // todowrite, todowrite + text to end the turn, then two requests per continuation
    expect(requests).toBe(3 + 6 * 2)
  })

  test("rewording, reordering and status churn are not progress", async () => {
    const sim = new Sim({ maxContinuations: 10 })
    sim.user("build it")
    let flip = false
    await sim.run((step) => {
      if (step === 0) return { todos: OPEN }
      if (step % 2 === 1) {
        flip = !flip
        // pending <-> in_progress, reworded, reordered: open stays 2, completed stays 0
        return {
          todos: flip
            ? [
                { content: "B!", status: "in_progress" },
                { content: "A!", status: "pending" },
              ]
            : OPEN,
        }
      }
      return { text: "shuffled" }
    })
    expect(sim.continuations()).toHaveLength(3)
  })

  test("a real user message resets the count; continuation messages and synthetic messages do not", async () => {
    const sim = new Sim()
    sim.user("build it")
    await sim.run(never())
    expect(sim.continuations()).toHaveLength(3)
    // A synthetic-only user message (e.g. compaction's auto-continue) is not the user.
    sim.user("", [{ type: "text", text: "Continue if you have next steps", synthetic: true }])
    expect(await sim.run(() => ({ text: "ok" }))).toBe(1)
    expect(sim.continuations()).toHaveLength(3)
    sim.user("keep going please")
    expect(await sim.run(() => ({ text: "ok" }))).toBe(1 + 3)
    expect(sim.continuations()).toHaveLength(6)
  })
})

describe("todo continuation: statuses OpenCode accepts in other spellings (red team CE-6)", () => {
  // OpenCode's todowrite takes any string as a status; a todo spelled otherwise was neither open nor completed, so
  // the turn got no continuation (decision no-open-todos).
  test.each([
    ["in-progress", "todo"],
    ["In Progress", "Pending"],
    ["IN_PROGRESS", "PENDING"],
    ["not_started", "open"],
  ])("open todos with statuses %p / %p get a continuation that lists them", async (a, b) => {
    const sim = new Sim()
    sim.user("migrate the three modules")
    const todos = [
      { content: "migrate module a", status: "completed" },
      { content: "migrate module b", status: a },
      { content: "migrate module c", status: b },
    ]
    await sim.run((step) => (step === 0 ? { todos } : { text: "Module a is migrated." }))
    expect(sim.continuations().length).toBeGreaterThan(0)
    const prompt = sim.continuations()[0]!
    expect(JSON.stringify(prompt)).toContain(`[${a}] migrate module b`)
    expect(JSON.stringify(prompt)).toContain(`[${b}] migrate module c`)
  })

  test("todos the model marked done, dropped or parked in its own words get none", async () => {
    const sim = new Sim()
    sim.user("migrate the three modules")
    const todos = [
      { content: "migrate module a", status: "Done" },
      { content: "migrate module b", status: "won't do" },
      { content: "migrate module c", status: "blocked" },
    ]
    await sim.run((step) => (step === 0 ? { todos } : { text: "Module c waits for the API key." }))
    expect(sim.continuations()).toEqual([])
    expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "no-open-todos" })
  })
})

describe("todo continuation: zero continuations", () => {
  const cases: [string, (sim: Sim) => void, (step: number) => any, string][] = [
    ["todos all done", () => {}, (s) => (s === 0 ? { todos: done(OPEN, 2) } : { text: "all done" }), "no-open-todos"],
    ["the final message asks the user", () => {}, never("Parser done. Should I also write the docs?"), "asks-user"],
    ["the plan agent", (sim) => (sim.agent = "plan"), never(), "plan-mode"],
    ["an agent that may not edit", (sim) => (sim.agent = "review"), never(), "read-only-agent"],
    ["a subagent session", (sim) => (sim.parentID = "ses_parent"), never(), "subagent"],
  ]
  for (const [name, setup, model, reason] of cases)
    test(name, async () => {
      const sim = new Sim()
      setup(sim)
      sim.user("build it")
      expect(await sim.run(model)).toBe(2)
      expect(sim.continuations()).toHaveLength(0)
      expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: reason as any })
    })

  test("subagent sessions continue when enabled", async () => {
    const sim = new Sim({ subagents: true })
    sim.parentID = "ses_parent"
    sim.user("build it")
    expect(await sim.run(never())).toBe(5)
  })

  test("compaction: the summary's text never triggers one", async () => {
    const sim = new Sim()
    sim.todos = OPEN
    sim.user("", [{ type: "compaction" }])
    expect(await sim.run(() => ({ text: "Summary of the work so far" }), { summary: true })).toBe(1)
    expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "compaction" })
  })

  test("switched off in config: limit 0", async () => {
    const sim = new Sim({ maxContinuations: 0 })
    sim.user("build it")
    expect(await sim.run(never())).toBe(2)
  })

  test("switched off for the session with /continuation off; on again with /continuation on", async () => {
    const sim = new Sim()
    sim.user("[todo-continuation: off] The user switched the automatic todo continuation off for this session.")
    expect(await sim.run(never())).toBe(2)
    sim.user("build the rest")
    expect(await sim.run(() => ({ text: "did some" }))).toBe(1)
    expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "switched-off" })
    sim.user("[todo-continuation: on] switched on")
    expect(await sim.run(() => ({ text: "did some" }))).toBe(1 + 3)
  })

  test("the user said stop: none for that turn, back on the next real message", async () => {
    const sim = new Sim()
    sim.user("build it")
    await sim.run((s) => (s === 0 ? { todos: OPEN } : { text: "x" }), { maxSteps: 1 })
    sim.user("stop, I'll take it from here")
    expect(await sim.run(() => ({ text: "Stopped." }))).toBe(1)
    expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "user-stop" })
    sim.user("ok, finish the parser")
    expect(await sim.run(() => ({ text: "working" }))).toBe(4)
  })

  // The user's words are not recognised as a stop, but the model's answer did no work and says it stops: no
  // continuation. One that worked since the message, or answered a continuation, is still continued.
  test("a stop in words the rule does not know: the model's own acknowledgement ends it", async () => {
    const sim = new Sim()
    sim.user("build it")
    await sim.run((s) => (s === 0 ? { todos: OPEN } : { text: "x" }), { maxSteps: 1 })
    const said = "ugh this is going nowhere, I'll sort it out myself later"
    expect(ContinuationText.userStops(said)).toBe(false)
    sim.user(said)
    expect(await sim.run(() => ({ text: "Understood, I'll leave it there. Two todos are still open." }))).toBe(1)
    expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "stop-acknowledged" })
  })

  test("a model told to stop that updates its todo list first and then says it stops is not continued", async () => {
    const sim = new Sim()
    sim.user("build it")
    await sim.run((s) => (s === 0 ? { todos: OPEN } : { text: "x" }), { maxSteps: 1 })
    sim.user("we're out of time on this one")
    const calls = await sim.run((s) => (s === 0 ? { todos: OPEN } : { text: "Got it — pausing here." }))
    expect(calls).toBe(2)
    expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "stop-acknowledged" })
  })

  test("a model that worked since the user's message and then says it stops is continued", async () => {
    const sim = new Sim()
    sim.user("build it")
    await sim.run((s) => (s === 0 ? { todos: OPEN } : { text: "x" }), { maxSteps: 1 })
    sim.user("now the tests")
    const calls = await sim.run((s) => (s === 0 ? { tools: true } : { text: "I'll stop here for now." }), {
      maxSteps: 2,
    })
    expect(calls).toBe(2)
    expect(sim.instance.decisions.at(-1)?.decision).toMatchObject({ continue: true })
  })

  test("a pending question or permission of the session", async () => {
    const sim = new Sim()
    const event = (sim.instance.hooks as any).event
    await event({ event: { type: "permission.asked", properties: { id: "per_1", sessionID: sim.sessionID } } })
    sim.user("build it")
    expect(await sim.run(never())).toBe(2)
    expect(sim.instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "pending-input" })
    await event({ event: { type: "permission.replied", properties: { requestID: "per_1", sessionID: sim.sessionID } } })
    sim.user("go on")
    expect(await sim.run(() => ({ text: "x" }))).toBe(4)
  })

  test("after an abort or an error in the turn (never a loop on a failing request)", async () => {
    for (const error of ["MessageAbortedError", "APIError"]) {
      const sim = new Sim()
      sim.user("build it")
      // The turn fails in the middle of a tool call.
      await sim.run((s) => (s === 0 ? { todos: OPEN } : { tools: true, error }))
      // Should a later step of the same turn end with text, it must not continue either.
      expect(await sim.run(() => ({ text: "late" }))).toBe(1)
      expect(sim.instance.decisions.at(-1)?.decision).toMatchObject({ continue: false })
      expect(sim.continuations()).toHaveLength(0)
    }
  })
})

describe("todo continuation: what the model is sent", () => {
  test("the synthetic part lists the open todos and carries the count in its metadata", async () => {
    const sim = new Sim({ maxContinuations: 1 })
    sim.user("build it")
    await sim.run(never())
    const [message] = sim.continuations()
    const part = message.parts[0]
    expect(part.synthetic).toBe(true)
    expect(part.text).toContain("[todo continuation 1/1] Your turn ended with 2 of 2 todos still open:")
    expect(part.text).toContain("- [in_progress] a (high)\n- [pending] b (low)")
    expect(part.metadata?.[TodoContinuation.MARK]).toMatchObject({ index: 1, of: 1, counts: { open: 2, completed: 0 } })
  })

  test("text before tool calls in the same step: the continuation sent at text end is void, not counted and not sent", async () => {
    const sim = new Sim()
    sim.user("build it")
    const requests = await sim.run((step) => {
      if (step === 0) return { todos: OPEN }
      if (step === 1) return { text: "Let me read the file first.", tools: true, textBeforeTools: true }
      return { text: "Made some progress." }
    })
    // step 1 continued anyway (tool calls); its continuation is void.
    expect(requests).toBe(3 + 3)
    const counted = sim.continuations().map((m) => (m.parts[0].metadata as any)[TodoContinuation.MARK].index)
    expect(counted).toEqual([1, 1, 2, 3])
    const afterVoid = sim.sent[2]
    expect(afterVoid.some((m) => m.info.id === sim.continuations()[0].info.id)).toBe(false)
  })

  test("a continuation left unanswered (the turn was aborted) is dropped once the user writes again", async () => {
    const sim = new Sim({ maxContinuations: 1 })
    sim.user("build it")
    await sim.run(never(), { maxSteps: 2 })
    // The loop was stopped before it took the continuation.
    const orphan = sim.continuations()[0].info.id
    sim.user("new question")
    await sim.run(() => ({ text: "answer?" }))
    expect(sim.sent.at(-1)!.some((m) => m.info.id === orphan)).toBe(false)
  })
})
