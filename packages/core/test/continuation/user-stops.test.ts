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

  test("held-out messages never tuned on: at least 12 of 15 stops seen, none of 11 tasks taken for one (docs/session.md)", () => {
    const seen = (stop: boolean) =>
      fixture.heldout.filter((m) => m.stop === stop && ContinuationText.userStops(m.text)).length
    expect(fixture.heldout.filter((m) => m.stop)).toHaveLength(15)
    expect(fixture.heldout.filter((m) => !m.stop)).toHaveLength(11)
    expect(seen(true)).toBeGreaterThanOrEqual(12)
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
})
