import { describe, expect, test } from "bun:test"
import { SecurityRedact } from "../../security/redact"

describe("SecurityRedact", () => {
  test("keeps the line count", () => {
    const text = "a\nsecret1\nsecret2\nb"
    const out = SecurityRedact.redactContent(text, [{ start: 2, end: 17, label: "x" }])
    expect(out).toBe("a\n[REDACTED: x]\n\nb")
    expect(out.split("\n")).toHaveLength(text.split("\n").length)
  })
  test("keeps line numbers of tool output, including the first line's", () => {
    const text = "1: a\n2: s1\n3: s2\n4: b"
    const start = text.indexOf("2:")
    const out = SecurityRedact.redactContent(text, [{ start, end: text.indexOf("\n4:"), label: "seg" }], {
      gutter: true,
    })
    expect(out).toBe("1: a\n2: [REDACTED: seg]\n3: \n4: b")
  })
  test("merges overlapping ranges, clamps out-of-range ones, keeps CRLF", () => {
    expect(
      SecurityRedact.redactContent("abcdef", [
        { start: 1, end: 3, label: "a" },
        { start: 2, end: 5, label: "b" },
        { start: 90, end: 99, label: "c" },
      ]),
    ).toBe("a[REDACTED: a]f")
    expect(SecurityRedact.redactContent("a\r\nb\r\nc", [{ start: 0, end: 4, label: "x" }])).toBe(
      "[REDACTED: x]\r\n\r\nc",
    )
  })
  test("markers are recognisable", () => {
    expect(SecurityRedact.carriesMarker("x [REDACTED: secret (jwt)] y")).toBe(true)
    expect(SecurityRedact.carriesMarker("REDACTED alone")).toBe(false)
  })
})
