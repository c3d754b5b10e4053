import { describe, expect, test } from "bun:test"
import { ContinuationText } from "../../continuation/text"
import fixture from "./fixtures/user-stops.json"

// The user's "stop" in ordinary phrasings (tester Q, Q1): politeness and prefix words, short negations, abbreviations
// and trailing clauses are stops; task text that merely contains the word is not. Figures in docs/session.md.
describe("the user's message asks the agent to stop", () => {
  test.each(["please stop", "no, stop", "pls stop", "Please stop, I'll take it from here"])(
    "tester Q's %p is a stop",
    (text) => expect(ContinuationText.userStops(text)).toBe(true),
  )

  test.each([...fixture.named, ...fixture.more].map((m) => [m.stop, m.text] as const))(
    "labelled user message stop=%p: %p",
    (stop, text) => expect(ContinuationText.userStops(text)).toBe(stop),
  )

  test("held-out messages (tuned on since their three misses were read): 15 of 15 stops seen, none of 11 tasks taken for one (docs/session.md)", () => {
    const seen = (stop: boolean) =>
      fixture.heldout.filter((m) => m.stop === stop && ContinuationText.userStops(m.text)).length
    expect(fixture.heldout.filter((m) => m.stop)).toHaveLength(15)
    expect(fixture.heldout.filter((m) => !m.stop)).toHaveLength(11)
    expect(seen(true)).toBe(15)
    expect(seen(false)).toBe(0)
  })

  // Tester R (R1): a stop clause then new work redirects the agent; the new work goes on with its continuation.
  test.each(fixture.redirections.map((m) => m.text))("tester R's redirection %p is not a stop", (text) =>
    expect(ContinuationText.userStops(text)).toBe(false),
  )

  // Tester R (R2): plain ways of saying we are done.
  test.each(fixture.closers.map((m) => m.text))("tester R's closer %p is a stop", (text) =>
    expect(ContinuationText.userStops(text)).toBe(true),
  )

  test("second held-out set (stops with a remark after them, redirections), never tuned on: 8 of 8 stops, none of 7 redirections taken for one (docs/session.md)", () => {
    const seen = (stop: boolean) =>
      fixture.heldout2.filter((m) => m.stop === stop && ContinuationText.userStops(m.text)).length
    expect(fixture.heldout2.filter((m) => m.stop)).toHaveLength(8)
    expect(fixture.heldout2.filter((m) => !m.stop)).toHaveLength(7)
    expect(seen(true)).toBe(8)
    expect(seen(false)).toBe(0)
  })

  // Third and fourth sets, written by helpers who never saw the rule (stops, redirections, tasks). Each was measured
  // once before its misses were read (docs/session.md); both are tuning material since, so these are floors.
  const kinds = (set: { text: string; stop: boolean; kind: string }[]) =>
    Object.fromEntries(
      ["stop", "redirection", "task"].map((kind) => [
        kind,
        set.filter((m) => m.kind === kind && ContinuationText.userStops(m.text)).length,
      ]),
    )
  test("third set: 16 of 16 stops, none of 12 redirections or 12 tasks taken for one", () => {
    expect(fixture.heldout3.every((m) => m.stop === (m.kind === "stop"))).toBe(true)
    expect(kinds(fixture.heldout3)).toEqual({ stop: 16, redirection: 0, task: 0 })
  })
  test("fourth set: at least 17 of 18 stops, none of 14 redirections or 13 tasks taken for one", () => {
    expect(fixture.heldout4.every((m) => m.stop === (m.kind === "stop"))).toBe(true)
    const seen = kinds(fixture.heldout4)
    expect(seen.stop).toBeGreaterThanOrEqual(17)
    expect(fixture.heldout4.filter((m) => m.kind === "stop")).toHaveLength(18)
    expect({ redirection: seen.redirection, task: seen.task }).toEqual({ redirection: 0, task: 0 })
  })

  // Classes the fourth set showed (idioms, a repeated or stretched stop word, the user's plan without punctuation, a
  // correction or a project convention after a stop), each beside a task of the same words that must stay a task.
  test.each([
    ["stoooop", true],
    ["hold on hold on", true],
    ["whoa", true],
    ["stand down", true],
    ["no more changes i will review it tonight", true],
    ["dont do anything until i say so", true],
    ["kill the process on port 3000", false],
    ["drop the users table", false],
    ["pull the plug on the old api and migrate callers", false],
    ["stop the server i started earlier", false],
    ["can i stop the worker from the ui?", false],
    ["wait i need you to add a test", false],
    ["ok stop, tabs not spaces", false],
    ["hang on, we use pnpm here", false],
    ["hang on, that's not what I meant", true],
    ["no, stop, it is not working", true],
  ] as const)("%p: stop=%p", (text, stop) => expect(ContinuationText.userStops(text)).toBe(stop))
  // Fifth set (helper-written exchanges: the user's message, the model's final text, whether it called tools). Measured
  // once before its misses were read: no continuation after 21 of 30 stops (16 of 30 with the user-text rule and
  // asks-user alone), none of 15 redirections, 15 tasks or 15 questions taken for a stop; tuned on since
  // (docs/session.md), so these are floors.
  test("fifth set: no continuation after 30 of 30 stops; every redirection, task and question still continued or asks", () => {
    const ends = (m: (typeof fixture.heldout5)[number]) =>
      ContinuationText.userStops(m.user) || (!m.tools && ContinuationText.acknowledgesStop(m.reply))
    const count = (kind: string) => fixture.heldout5.filter((m) => m.kind === kind && ends(m)).length
    expect(fixture.heldout5.map((m) => m.kind).filter((k) => k === "stop")).toHaveLength(30)
    expect(fixture.heldout5.filter((m) => m.kind === "stop" && m.tools)).toHaveLength(0)
    expect(
      fixture.heldout5.filter(
        (m) => m.kind === "stop" && !ends(m) && !(!m.tools && ContinuationText.asksUser(m.reply)),
      ),
    ).toEqual([])
    expect({ redirection: count("redirection"), task: count("task"), question: count("question") }).toEqual({
      redirection: 0,
      task: 0,
      question: 0,
    })
  })
})
