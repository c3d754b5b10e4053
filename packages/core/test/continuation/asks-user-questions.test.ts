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

  test.each(fixture.cases.map((c) => [c.asks, c.text] as const))("labelled final message asks=%p: %p", (asks, text) =>
    expect(ContinuationText.asksUser(text)).toBe(asks),
  )

  // A "why" question the message answers itself, in other languages (the Chinese one was a known miss); one that
  // names the user, or that is no "why" question, still asks.
  test.each([
    ["为什么失败？因为缓存没有清除。现在修复。", false],
    ["Warum schlägt der Test fehl? Weil die Fixture fehlt. Ich behebe das jetzt.", false],
    ["¿Por qué falla? Porque falta la variable de entorno. Lo corrijo ahora.", false],
    ["Why does this fail? Because the env var is missing. Fixing it now.", false],
    ["你想让我继续吗？因为还有两个文件没改。", true],
    ["Should I go on? Because two files are left.", true],
    ["Kann ich mergen? Weil CI grün ist.", true],
    ["为什么失败？", true],
  ] as const)("%p asks=%p", (text, asks) => expect(ContinuationText.asksUser(text)).toBe(asks))

  test("the Greek question mark is not one: Unicode normalises it to a semicolon (docs/session.md)", () => {
    expect(ContinuationText.asksUser("Θέλεις να συνεχίσω\u037e")).toBe(false)
    expect("\u037e".normalize("NFC")).toBe(";")
  })
})
