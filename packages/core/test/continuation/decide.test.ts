import { describe, expect, test } from "bun:test"
import { ContinuationDecide } from "../../continuation/decide"
import { ContinuationHistory } from "../../continuation/history"
import { TodoContinuation } from "../../continuation/schema"
import { ContinuationText } from "../../continuation/text"
import { Logger } from "../../util/log"
import { validSection } from "../../options"
import fixture from "./fixtures/final-messages.json"

describe("what the text says", () => {
  test.each([
    "Done. Should I also update the docs?",
    "I finished the parser.\n\nWould you like me to continue with the docs",
    "Which option do you prefer: A or B?**",
    "The build fails with a missing key. Can you provide the API key so I can continue.",
    "Let me know if you want the tests too.",
    "I’m blocked: I can’t proceed without the token.",
  ])("asks the user: %p", (text) => expect(ContinuationText.asksUser(text)).toBe(true))

  test.each([
    "Implemented the parser. Next I will write the docs.",
    "Used `a?.b` in the helper.",
    "```ts\nconst ok = x ? y : z // why?\n```\nParser done.",
    "",
  ])("does not ask: %p", (text) => expect(ContinuationText.asksUser(text)).toBe(false))

  // Real-style final messages (fixtures/final-messages.json, tester F8): requests that the user act count as asking.
  test.each(fixture.messages.map((m) => [m.asks, m.text] as const))(
    "labelled final message asks=%p: %p",
    (asks, text) => expect(ContinuationText.asksUser(text)).toBe(asks),
  )

  test("messages never tuned on: 6 of 10 requests seen, at most 3 of 10 others taken for one (docs/session.md)", () => {
    const seen = (asks: boolean) =>
      fixture.unseen.filter((m) => m.asks === asks && ContinuationText.asksUser(m.text)).length
    expect(fixture.unseen.filter((m) => m.asks)).toHaveLength(10)
    expect(seen(true)).toBeGreaterThanOrEqual(6)
    expect(seen(false)).toBeLessThanOrEqual(3)
  })

  test.each(["stop", "Stop!", "wait, not like that", "please don't continue", "ok stop here", "hold on"])(
    "the user stops: %p",
    (text) => expect(ContinuationText.userStops(text)).toBe(true),
  )
  test.each([
    "Understood — I'll stop here. The parser is done; two todos remain open.",
    "Got it, I'll leave the migration there.",
    "Stopping here.",
    "OK, pausing. Where things stand: tests pass, docs not updated.",
    "Sure thing. I won't touch anything else.",
    "No problem — I'll hold off until you've talked to the team.",
    "Alright, no more changes for now.",
    "Sounds good, we can pick it back up tomorrow.",
    "I've stopped. Nothing was half-written.",
    "Standing by.",
    "I'll leave the rest to you.",
    "Alles klar, ich höre hier auf.",
    "好的，我先停下来。",
  ])("the model says it stops: %p", (text) => expect(ContinuationText.acknowledgesStop(text)).toBe(true))
  test.each([
    "Running this will stop the dev server.",
    "I'd hold off on upgrading React until 19.1 is out.",
    "I'll wait for CI to finish, then merge.",
    "The old server is still running; I'll stop it and restart with the new config.",
    "No — I won't change the public API; the fix is internal.",
    "No further changes are needed: the tests pass.",
    "Stopping the watcher before the build avoids the race.",
    "You can resume later with /recover.",
    "I'll leave a comment explaining the workaround.",
    "Done: switched to pnpm. Next I'll update the lockfile.",
    "```sh\n# I'll stop here\n```\nParser done.",
  ])("the model does not say it stops: %p", (text) => expect(ContinuationText.acknowledgesStop(text)).toBe(false))

  test.each(["build the parser", "make the loop stop when the list is empty and add tests for it", ""])(
    "the user does not stop: %p",
    (text) => expect(ContinuationText.userStops(text)).toBe(false),
  )
})

describe("counting", () => {
  test("open = pending + in_progress; cancelled is neither", () => {
    expect(
      TodoContinuation.counts([
        { content: "a", status: "pending" },
        { content: "b", status: "in_progress" },
        { content: "c", status: "completed" },
        { content: "d", status: "cancelled" },
      ]),
    ).toEqual({ open: 2, completed: 1, total: 4 })
  })

  test("statuses are normalised (case, separators, synonyms); an unknown one is open (red team CE-6)", () => {
    const st = TodoContinuation.state
    for (const s of [
      "pending",
      "in_progress",
      "in-progress",
      "In Progress",
      "IN_PROGRESS",
      "inprogress",
      "todo",
      "To Do",
    ])
      expect([s, st(s)]).toEqual([s, "open"])
    for (const s of ["open", "not_started", "Not Started", "WIP", "doing", "needs-review", "", "🚧"])
      expect([s, st(s)]).toEqual([s, "open"])
    for (const s of ["completed", "Completed", "DONE", "done", "finished", "Resolved"])
      expect([s, st(s)]).toEqual([s, "completed"])
    for (const s of ["cancelled", "canceled", "Won't Do", "wont-fix", "skipped", "failed"])
      expect([s, st(s)]).toEqual([s, "cancelled"])
    for (const s of ["blocked", "On Hold", "on_hold", "paused", "deferred"]) expect([s, st(s)]).toEqual([s, "held"])
    expect(
      TodoContinuation.counts([
        { content: "a", status: "In Progress" },
        { content: "b", status: "todo" },
        { content: "c", status: "Done" },
        { content: "d", status: "blocked" },
        { content: "e", status: "won't do" },
      ]),
    ).toEqual({ open: 2, completed: 1, total: 5 })
  })

  test("progress: completed up or open down; nothing else", () => {
    const p = TodoContinuation.progressed
    expect(p({ open: 2, completed: 0, total: 2 }, { open: 1, completed: 1, total: 2 })).toBe(true)
    expect(p({ open: 2, completed: 0, total: 2 }, { open: 1, completed: 0, total: 2 })).toBe(true) // cancelled one
    expect(p({ open: 2, completed: 0, total: 2 }, { open: 2, completed: 0, total: 2 })).toBe(false)
    expect(p({ open: 2, completed: 1, total: 3 }, { open: 3, completed: 1, total: 4 })).toBe(false) // one added
  })

  test("the stop-early run: the first continuation never counts as stalled", () => {
    const c = (open: number, completed = 0): ContinuationHistory.Continuation => ({
      messageID: "m",
      mark: { index: 1, of: 3, after: "a", counts: { open, completed, total: open + completed } },
    })
    const now = { open: 2, completed: 0, total: 2 }
    expect(ContinuationDecide.stalledRun([], now)).toEqual({ run: 0, next: false })
    expect(ContinuationDecide.stalledRun([c(2)], now)).toEqual({ run: 0, next: true })
    expect(ContinuationDecide.stalledRun([c(2), c(2)], now)).toEqual({ run: 1, next: true })
    expect(ContinuationDecide.stalledRun([c(2), c(2), c(2)], now)).toEqual({ run: 2, next: true })
    expect(ContinuationDecide.stalledRun([c(3), c(2), c(2)], now)).toEqual({ run: 1, next: true })
    expect(ContinuationDecide.stalledRun([c(2), c(2), c(2)], { open: 1, completed: 1, total: 2 }).next).toBe(false)
  })
})

describe("agents", () => {
  const kind = ContinuationDecide.agentKind
  test("the last matching edit rule decides; plan is plan mode whatever its rules", () => {
    expect(kind({ name: "build", permission: [{ permission: "*", pattern: "*", action: "allow" }] })).toEqual({
      plan: false,
      mayEdit: true,
    })
    expect(
      kind({
        name: "docs",
        permission: [
          { permission: "edit", pattern: "*", action: "deny" },
          { permission: "edit", pattern: ".opencode/plans/*.md", action: "allow" },
        ],
      }),
    ).toEqual({ plan: false, mayEdit: false })
    expect(kind({ name: "plan", permission: [{ permission: "edit", pattern: "*", action: "allow" }] })?.plan).toBe(true)
    expect(kind({ name: "old", tools: { edit: false, write: false } })?.mayEdit).toBe(false)
    expect(kind({ name: "nothing" })?.mayEdit).toBe(true)
    expect(kind(undefined)).toBeUndefined()
  })
})

describe("history", () => {
  const user = (id: string, text: string, extra: object = {}): ContinuationHistory.Message => ({
    info: { id, role: "user" },
    parts: [{ type: "text", text, ...extra }],
  })
  const assistant = (id: string, tools = false): ContinuationHistory.Message => ({
    info: { id, role: "assistant" },
    parts: tools ? [{ type: "tool", tool: "read", state: { status: "completed" } }] : [{ type: "text", text: "x" }],
  })
  const cont = (id: string, after: string, index = 1): ContinuationHistory.Message =>
    user(id, "[todo continuation]", {
      synthetic: true,
      metadata: {
        [TodoContinuation.MARK]: { index, of: 3, after, counts: { open: 1, completed: 0, total: 1 } },
      },
    })

  test("counts effective continuations since the last real user message", () => {
    const h = ContinuationHistory.derive([
      user("m1", "first"),
      assistant("m2"),
      cont("m3", "m2"),
      assistant("m4"),
      user("m5", "second"),
      assistant("m6", true), // text came before tool calls: its continuation is void
      cont("m7", "m6"),
      assistant("m8"),
      cont("m9", "m8"),
    ])
    expect(h.userText).toBe("second")
    expect(h.continuations.map((c) => c.messageID)).toEqual(["m9"])
    expect([...h.answered]).toEqual(["m6", "m8"])
  })

  test("dropped: void ones and unanswered ones followed by a user message", () => {
    const list = [
      user("m1", "a"),
      assistant("m2", true),
      cont("m3", "m2"),
      assistant("m4"),
      cont("m5", "m4"),
      user("m6", "b"),
    ]
    expect([...ContinuationHistory.dropped(list)]).toEqual(["m3", "m5"])
    // The newest continuation, not answered yet, is exactly what the next request must carry.
    expect([...ContinuationHistory.dropped(list.slice(0, 5))]).toEqual(["m3"])
  })

  test("a malformed mark is not a continuation", () => {
    const bad = user("m2", "x", { metadata: { [TodoContinuation.MARK]: { index: "one" } } })
    expect(ContinuationHistory.mark(bad)).toBeUndefined()
    expect(ContinuationHistory.isReal(bad)).toBe(true)
  })
})

describe("options", () => {
  test("maxContinuations is an integer 0–10; bad values fall back to the default with a log line", () => {
    const log = Logger.memory()
    const config = validSection(
      TodoContinuation.Config,
      { maxContinuations: 11, subagents: true },
      "todoContinuation",
      log,
    )
    expect(TodoContinuation.settings(config)).toEqual({ maxContinuations: 3, subagents: true })
    expect(log.entries[0].message).toContain("todoContinuation.maxContinuations")
    expect(TodoContinuation.settings({ maxContinuations: 0 }).maxContinuations).toBe(0)
  })
})
