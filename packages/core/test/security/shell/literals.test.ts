import { describe, expect, test } from "bun:test"
import { ShellLiterals } from "../../../security/shell/literals"

const raws = (code: string, quotes = "\"'`", max?: number) => ShellLiterals.scan(code, quotes, max).map((l) => l.raw)

describe("ShellLiterals.scan", () => {
  test("literals of each quote, escapes kept as written, positions of the quotes", () => {
    expect(raws(`open("a.txt") + 'b' + \`c\``)).toEqual(["a.txt", "b", "c"])
    expect(raws(`x = "a\\"b" + 'it\\'s'`)).toEqual(['a\\"b', "it\\'s"])
    expect(ShellLiterals.scan(`f("ab")`, '"')).toEqual([{ quote: '"', start: 2, end: 6, raw: "ab" }])
    // Backquotes take no escapes; an empty literal is one.
    expect(raws("`a\\` + ''")).toEqual(["a\\", ""])
  })

  test("a quote inside another literal opens nothing; only the quotes asked for count", () => {
    expect(raws(`"it's" + 'say "hi"'`)).toEqual(["it's", 'say "hi"'])
    expect(raws(`"a" 'b'`, '"')).toEqual(["a"])
  })

  test("a quote that never closes on its line opens nothing, and nor does a same quote it passed", () => {
    expect(raws(`print("no end\nx = 'yes'`)).toEqual(["yes"])
    // The unterminated double quote passes escaped quotes; a single-quoted literal inside it is still found.
    expect(raws(`"\\" 'k' \\"`)).toEqual(["k"])
    // A backslash before the line's end does not continue the literal onto the next line.
    expect(raws(`"a\\\n"b"`)).toEqual(["b"])
  })

  test("literals longer than max are left out", () => {
    expect(raws(`"${"x".repeat(10)}" "ok"`, '"', 5)).toEqual(["ok"])
  })

  test('one pass over a long run of escaped quotes (64 KB of \\")', () => {
    expect(raws('"' + '\\"'.repeat(32_000))).toEqual([])
    expect(raws("'\\".repeat(32_000) + "\n'end'")).toEqual(["end"])
  }, 30_000)
})
