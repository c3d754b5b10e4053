import { describe, expect, test } from "bun:test"
import { SecurityEdit } from "../../security/edit"
import { SecuritySegments } from "../../security/segments"

const MARKERS = [{ start: "@locked-start", end: "@locked-end" }]
const ranges = (text: string) => SecuritySegments.find(text, MARKERS)
const touches = (text: string, change: SecurityEdit.Change) => SecurityEdit.touches(text, change, ranges(text))
const edit = (oldString: string, newString: string, replaceAll?: boolean): SecurityEdit.Change => ({
  kind: "edit",
  oldString,
  newString,
  replaceAll,
})
/** The file after one version's edit, or "FAIL"/"UNKNOWN". */
const after = (text: string, e: SecurityEdit.Edit, v: SecurityEdit.Version) => {
  const o = SecurityEdit.outcome(text, e, v)
  return SecurityEdit.result(text, o, v) ?? o.kind.toUpperCase()
}

const LOCKED = ["top", "// @locked-start", "    const key = 'k1'", "// @locked-end", "bottom", ""].join("\n")

describe("SecurityEdit.outcome: OpenCode's edit per version", () => {
  test("identical strings fail everywhere; an empty oldString overwrites the file in 1.2.15 only", () => {
    for (const v of SecurityEdit.VERSIONS) expect(after("a\n", { oldString: "a", newString: "a" }, v)).toBe("FAIL")
    expect(after("a\n", { oldString: "", newString: "new\n" }, "1.2.15")).toBe("new\n")
    expect(after("a\n", { oldString: "", newString: "new\n" }, "1.18")).toBe("FAIL")
    expect(after("a\n", { oldString: "", newString: "new\n" }, "1.18-core")).toBe("FAIL")
  })

  test("an exact match must be unique unless replaceAll", () => {
    expect(after("q\nq\n", { oldString: "q", newString: "Q" }, "1.2.15")).toBe("FAIL")
    for (const v of SecurityEdit.VERSIONS)
      expect(after("q\nq\n", { oldString: "q", newString: "Q", replaceAll: true }, v)).toBe("Q\nQ\n")
  })

  test("fuzzy strategies: trimmed lines, collapsed whitespace, escapes, trimmed ends, context lines (not in the core stack)", () => {
    const cases: [string, SecurityEdit.Edit, string][] = [
      ["  a\n  b\nc\n", { oldString: "a\nb", newString: "X" }, "X\nc\n"],
      ["alpha beta\n  gamma\n", { oldString: "alpha   beta", newString: "AB" }, "AB\n  gamma\n"],
      ["a\nb\nc\n", { oldString: "a\\nb", newString: "AB" }, "AB\nc\n"],
      ["one two\nthree\n", { oldString: "\n\n  one two  \n", newString: "1 2" }, "1 2\nthree\n"],
      ["begin\n  same\n  other\nfinish\n", { oldString: "begin\nsame\nchanged\nfinish", newString: "B" }, "B\n"],
    ]
    for (const [text, e, want] of cases) {
      expect(after(text, e, "1.2.15")).toBe(want)
      expect(after(text, e, "1.18")).toBe(want)
      expect(after(text, e, "1.18-core")).toBe("FAIL")
    }
  })

  test("block anchor: 1.2.15 takes a single candidate whatever its middle and length; 1.18 needs similarity and size", () => {
    const text = "function f() {\n  one\n  two\n  three\n}\nafter\n"
    const e = { oldString: "function f() {\n  totally different\n}", newString: "gone" }
    expect(after(text, e, "1.2.15")).toBe("gone\nafter\n")
    expect(after(text, e, "1.18")).toBe("FAIL")
    // Same length, similar middle: 1.18 accepts too.
    const close = { oldString: "function f() {\n  one\n  twp\n  three\n}", newString: "kept" }
    expect(after(text, close, "1.18")).toBe("kept\nafter\n")
    // Two-line oldString with a trailing newline: anchors only, no middle to compare.
    expect(after("start\nm1\nm2\nend\ntail\n", { oldString: "start\nend\n", newString: "S\n" }, "1.2.15")).toBe(
      "S\n\ntail\n",
    )
  })

  test("block anchor with several candidates: the most similar above 0.3 (1.2.15) or 0.65 (1.18)", () => {
    const text = "{\n  alpha()\n}\n{\n  beta()\n}\n"
    expect(after(text, { oldString: "{\n  betb()\n}", newString: "B" }, "1.2.15")).toBe("{\n  alpha()\n}\nB\n")
    expect(after(text, { oldString: "{\n  zzzzzzzz\n}", newString: "B" }, "1.2.15")).toBe("FAIL")
  })

  test("a candidate is used at its first occurrence in the file, and with replaceAll at all of them", () => {
    // The whitespace-only line matches a blank oldString; its text also occurs as indentation elsewhere.
    const text = "    indented\n    \nend\n"
    expect(after(text, { oldString: "\t", newString: "X" }, "1.2.15")).toBe("FAIL")
    expect(after(text, { oldString: "\t\t", newString: "", replaceAll: true }, "1.2.15")).toBe("indented\n\nend\n")
  })

  test("a blank oldString with replaceAll inserts between every two characters", () => {
    const o = SecurityEdit.outcome("ab\n\n", { oldString: "  ", newString: "-", replaceAll: true }, "1.18")
    expect(o.kind).toBe("everywhere")
    expect(SecurityEdit.result("ab\n\n", o, "1.18")).toBe("-a-b-\n-\n-")
    expect(SecurityEdit.ranges("ab\n\n", { oldString: "  ", newString: "-", replaceAll: true }).everywhere).toBe(true)
  })

  test("$ patterns expand with replaceAll (all versions) and in the core stack's single replace", () => {
    const e = { oldString: "b", newString: "[$&|$'|$`|$$]", replaceAll: true }
    expect(after("ab\n", e, "1.2.15")).toBe("a[b|\n|a|$]\n")
    expect(after("ab\n", { oldString: "b", newString: "$'" }, "1.2.15")).toBe("a$'\n")
    expect(after("ab\n", { oldString: "b", newString: "$'" }, "1.18-core")).toBe("a\n\n")
  })

  test("CRLF: 1.2.15 matches line by line and writes LF; 1.18 converts both strings to CRLF", () => {
    const text = "a\r\nb\r\nc\r\n"
    const e = { oldString: "a\nb", newString: "A\nB" }
    expect(after(text, e, "1.2.15")).toBe("A\nB\nc\r\n")
    expect(after(text, e, "1.18")).toBe("A\r\nB\r\nc\r\n")
    expect(after(text, e, "1.18-core")).toBe("A\r\nB\r\nc\r\n")
  })

  test("BOM: kept by every version; 1.18 strips one the new text starts with", () => {
    for (const v of SecurityEdit.VERSIONS)
      expect(after("\uFEFFhello\n", { oldString: "hello", newString: "bye" }, v)).toBe("\uFEFFbye\n")
    expect(after("hello\n", { oldString: "hello", newString: "\uFEFF\uFEFFbye" }, "1.18")).toBe("\uFEFFbye\n")
    expect(after("hello\n", { oldString: "hello", newString: "\uFEFF\uFEFFbye" }, "1.18-core")).toBe(
      "\uFEFF\uFEFFbye\n",
    )
  })

  test("1.18 refuses a match much larger than oldString", () => {
    const text = "x = 1\n" + "y\n".repeat(9) + "x = 1;\n"
    const e = { oldString: "x = 1\nzzz\nx = 1;", newString: "Z" }
    expect(after(text, e, "1.2.15")).toBe("Z\n")
    expect(after(text, e, "1.18")).toBe("FAIL")
  })

  test("work beyond the budget is reported as unknown, not guessed", () => {
    // Two candidates whose middle lines need an 11,000 × 11,000 comparison: more than the budget, refused up front.
    const long = "a".repeat(11_000)
    const text = `{\n${long}\n}\n{\n${long}b\n}\n`
    const o = SecurityEdit.outcome(text, { oldString: `{\n${"c".repeat(11_000)}\n}`, newString: "X" }, "1.18")
    expect(o.kind).toBe("unknown")
    expect(SecurityEdit.ranges(text, { oldString: `{\n${"c".repeat(11_000)}\n}`, newString: "X" }).unknown).toContain(
      "too long",
    )
  })

  test("ranges(): the union over versions, and whether some version overwrites the file", () => {
    const r = SecurityEdit.ranges("a\r\nb\r\n", { oldString: "a\nb", newString: "X" })
    expect(r.whole).toBe(false)
    expect(r.ranges).toEqual([
      { start: 0, end: 4, insert: "X" },
      { start: 0, end: 5, insert: "X" },
    ])
    expect(SecurityEdit.ranges("a\n", { oldString: "", newString: "b" }).whole).toBe(true)
  })
})

describe("SecurityEdit.touches: write-protected segments", () => {
  test("no protected range: anything passes", () => {
    expect(SecurityEdit.touches("a\n", edit("", "b"), [])).toBeUndefined()
  })

  test("an exact edit inside a segment, or across its markers, is refused", () => {
    expect(touches(LOCKED, edit("'k1'", "'k2'"))).toContain("write-protected lines 2–4")
    expect(touches(LOCKED, edit("top\n// @locked-start", "top\n// unlocked"))).toContain("write-protected")
  })

  test("an empty oldString (1.2.15 overwrites the file) must keep the segments", () => {
    expect(touches(LOCKED, edit("", "fresh\n"))).toContain("whole file")
    expect(touches(LOCKED, edit("", "new first line\n" + LOCKED))).toBeUndefined()
  })

  test("a whitespace-variant oldString with replaceAll reaches the segment's indentation", () => {
    const text = LOCKED.replace("bottom", "    ")
    expect(touches(text, edit("\t\t\t\t", "", true))).toContain("write-protected")
    expect(touches(LOCKED, edit(" \n", "X", true))).toContain("every two characters")
  })

  test("a block-anchor edit spanning a segment is refused (1.2.15 ignores the middle)", () => {
    expect(touches(LOCKED, edit("top\nnothing to see\nbottom", "top\nbottom"))).toContain("OpenCode 1.2.15")
    expect(touches(LOCKED, edit("top\nbottom\n", "gone\n"))).toContain("write-protected")
  })

  test("insertions right before the end marker or after the start marker are refused", () => {
    expect(touches(LOCKED, edit("    const key = 'k1'\n", "    const key = 'k1'\nplanted\n"))).toContain(
      "write-protected",
    )
    expect(touches(LOCKED, edit("// @locked-start\n", "// @locked-start\nplanted\n"))).toContain("write-protected")
  })

  test("text joined onto a marker line from outside is refused", () => {
    expect(touches(LOCKED, edit("top\n", "top\nx = "))).toContain("first line")
    expect(touches(LOCKED, edit("\nbottom", " trailing"))).toContain("last line")
  })

  test("replaceAll of text that also occurs inside a segment is refused", () => {
    const text = "const a = 1\n" + LOCKED + "const b = 2\n"
    expect(touches(text, edit("const", "let", true))).toContain("write-protected")
    expect(touches(text, edit("const ", "let ", true))).toContain("write-protected")
    expect(touches(text, edit("= ", ":= ", true))).toContain("write-protected")
    // Occurrences outside the segment only: passes.
    expect(touches(text, edit("1\n", "one\n", true))).toBeUndefined()
  })

  test("CRLF files: a change inside is refused, one outside passes", () => {
    const text = LOCKED.replaceAll("\n", "\r\n")
    expect(touches(text, edit("'k1'", "'k2'"))).toContain("write-protected")
    expect(touches(text, edit("bottom", "BOTTOM"))).toBeUndefined()
    // 1.2.15 matches "bottom\r" line by line and writes LF; 1.18 converts to CRLF: both stay outside.
    expect(touches(text, edit("bottom\n", "BOTTOM\nmore\n"))).toBeUndefined()
    expect(touches(text, edit("top\n", "top\nx = "))).toContain("first line")
  })

  test("an edit no version can place is refused in a file with segments", () => {
    expect(touches(LOCKED, edit("not in the file", "x"))).toContain("no OpenCode version could apply it")
  })

  test("a segment running to the end of the file takes nothing appended", () => {
    const open = "a\n// @locked-start\nsecret"
    expect(touches(open, edit("secret", "secret\nmore"))).toContain("write-protected")
    expect(touches(open, edit("a\n", "A\n"))).toBeUndefined()
  })

  test("multiedit replays the edits in order and follows the segment as it moves", () => {
    const ok = {
      kind: "multiedit" as const,
      edits: [
        { oldString: "top", newString: "a much longer top line" },
        { oldString: "bottom", newString: "end" },
      ],
    }
    expect(touches(LOCKED, ok)).toBeUndefined()
    // The second edit only matches text the first one created inside the segment's last line.
    const sneaky = {
      kind: "multiedit" as const,
      edits: [
        { oldString: "bottom", newString: "unique-marker" },
        { oldString: "'k1'\n// @locked-end\nunique-marker", newString: "'k2'" },
      ],
    }
    expect(touches(LOCKED, sneaky)).toContain("edit 2")
  })

  test("write: every segment verbatim, in order, on its own lines", () => {
    const two = LOCKED + "// @locked-start\nsecond\n// @locked-end\n"
    const keep = two.replace("top", "TOP").replace("bottom", "BOTTOM")
    expect(touches(two, { kind: "write", content: keep })).toBeUndefined()
    expect(touches(two, { kind: "write", content: "x\n" })).toContain("write:")
    const swapped = "// @locked-start\nsecond\n// @locked-end\n" + LOCKED
    expect(touches(two, { kind: "write", content: swapped })).toContain("in order")
    expect(touches(LOCKED, { kind: "write", content: LOCKED.replace("top\n", "top ") })).toContain("own lines")
    expect(touches("\uFEFF" + LOCKED.slice(4), { kind: "write", content: LOCKED.slice(4) })).toBeUndefined()
  })

  test("benign: edits on the lines next to a segment pass", () => {
    expect(touches(LOCKED, edit("top", "TOP"))).toBeUndefined()
    expect(touches(LOCKED, edit("top\n", "top\nnew line above\n"))).toBeUndefined()
    expect(touches(LOCKED, edit("bottom", "new line below\nbottom"))).toBeUndefined()
    expect(touches(LOCKED, edit("bottom\n", ""))).toBeUndefined()
    expect(touches("\uFEFF" + LOCKED.slice(4), edit("bottom", "BOTTOM"))).toBeUndefined()
  })
})
