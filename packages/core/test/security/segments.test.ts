import { describe, expect, test } from "bun:test"
import { SecuritySegments } from "../../security/segments"

const pair = [{ start: "@secure-start", end: "@secure-end" }]
const cut = (text: string) => SecuritySegments.find(text, pair).map((s) => text.slice(s.start, s.end))

describe("SecuritySegments", () => {
  test("whole lines from the start marker's to the end marker's, in any comment style", () => {
    for (const [o, c] of [
      ["//", "//"],
      ["#", "#"],
      ["/*", "*/"],
      ["<!--", "-->"],
      ["--", "--"],
      [";;", ";;"],
      ["%", "%"],
      [" *", " *"],
      ["{-", "-}"],
      ["(*", "*)"],
      ["REM", "REM"],
      ['"""', '"""'],
    ]) {
      const text = `a\n${o} @secure-start\nsecret\n${o} @secure-end ${c === o ? "" : c}\nb`
      expect(cut(text)).toHaveLength(1)
      expect(cut(text)[0]).toContain("secret")
      expect(cut(text)[0]).not.toContain("\nb")
    }
  })
  test("trailing comments after code count; markers alone on their line count", () => {
    expect(cut("x = 1  # @secure-start\ny\n@secure-end\nz")).toEqual(["x = 1  # @secure-start\ny\n@secure-end"])
  })
  test("string literals and prose do not count", () => {
    expect(cut('const m = "@secure-start"\nvisible\n')).toEqual([])
    expect(cut("Write @secure-start before the block.\nvisible")).toEqual([])
    expect(cut("see `@secure-start` in docs\nvisible")).toEqual([])
  })
  test("unclosed start protects to the end; several segments; case-insensitive", () => {
    expect(cut("a\n// @secure-start\nb\nc")).toEqual(["// @secure-start\nb\nc"])
    expect(cut("// @SECURE-START\n1\n// @secure-END\nx\n// @secure-start\n2\n// @secure-end")).toHaveLength(2)
  })
  test("lines() returns the protected lines without the markers", () => {
    expect(SecuritySegments.lines("// @secure-start\nkey one\nkey two\n// @secure-end\n", pair)).toEqual([
      "key one",
      "key two",
    ])
  })
})
