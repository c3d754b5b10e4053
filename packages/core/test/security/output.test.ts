import { describe, expect, test } from "bun:test"
import { SecurityOutput } from "../../security/output"

const PAIRS = [{ start: "@secure-start", end: "@secure-end" }]
const FILE = ["a = 1", "// @secure-start", "k", "pw = 'hunter2'", "// @secure-end", "b = 2"].join("\n")
const SECRET = ["k", "pw = 'hunter2'"]

describe("SecurityOutput.lineRanges and mask", () => {
  test("the lines between the markers, markers excluded; an unclosed segment runs to the end", () => {
    expect(SecurityOutput.lineRanges(FILE, PAIRS)).toEqual([{ from: 3, to: 4 }])
    expect(SecurityOutput.lineRanges("x\n// @secure-start\ny\nz", PAIRS)).toEqual([{ from: 3, to: 4 }])
    expect(SecurityOutput.lineRanges("no markers here", PAIRS)).toEqual([])
  })

  test("mask keeps the line count and the marker lines, short lines included", () => {
    const masked = SecurityOutput.mask(FILE, PAIRS)
    expect(masked.split("\n")).toHaveLength(6)
    expect(masked).toContain("// @secure-start")
    for (const line of SECRET) expect(masked.split("\n")).not.toContain(line)
    expect(SecurityOutput.mask(FILE.replaceAll("\n", "\r\n"), PAIRS)).toContain("[REDACTED: protected segment]\r\n")
  })
})

describe("SecurityOutput.read: OpenCode's read output by line number", () => {
  const lines = SecurityOutput.lineRanges(FILE, PAIRS)

  test("1.18 gutter: protected lines redacted by number, however short", () => {
    const output = `<path>/r/a.ts</path>\n<type>file</type>\n<content>\n${FILE.split("\n")
      .map((l, i) => `${i + 1}: ${l}`)
      .join("\n")}\n\n(End of file - total 6 lines)\n</content>`
    const { text, redacted } = SecurityOutput.read(output, { lines })
    expect(redacted).toBe(2)
    expect(text).toContain("3: [REDACTED: protected segment]")
    expect(text).not.toContain("hunter2")
    expect(text).toContain("6: b = 2")
  })

  test("1.2.15 glues the first line to <content>; a read starting inside the segment has no start marker", () => {
    const output = `<path>/r/a.ts</path>\n<type>file</type>\n<content>3: k\n4: pw = 'hunter2'\n5: // @secure-end\n</content>`
    const { text } = SecurityOutput.read(output, { lines })
    expect(text).toContain("<content>3: [REDACTED: protected segment]")
    expect(text).not.toContain("hunter2")
    expect(text.split("\n")).not.toContain("<content>3: k")
  })

  test("older releases' padded gutter (00003| text)", () => {
    const output = "<content>\n00003| k\n00004| pw = 'hunter2'\n00006| b = 2\n</content>"
    const { text } = SecurityOutput.read(output, { lines })
    expect(text).not.toContain("hunter2")
    expect(text).toContain("00006| b = 2")
  })

  test("an appended instruction file that is protected is removed, the others kept", () => {
    const output = [
      "<content>1: x\n</content>",
      "",
      "<system-reminder>",
      "Instructions from: /r/secret/AGENTS.md",
      "the private deploy procedure",
      "",
      "Instructions from: /r/pkg/AGENTS.md",
      "public guidance",
      "</system-reminder>",
    ].join("\n")
    const { text, removed } = SecurityOutput.read(output, { lines: [], instruction: (p) => p.startsWith("/r/secret") })
    expect(removed).toEqual(["/r/secret/AGENTS.md"])
    expect(text).not.toContain("private deploy")
    expect(text).toContain("public guidance")
    expect(text).toContain("[REDACTED: instructions from /r/secret/AGENTS.md")
  })

  test("a protected instruction file holding a line that looks like a header does not smuggle what follows", () => {
    const output = [
      "<content>1: x\n</content>",
      "<system-reminder>",
      "Instructions from: /r/secret/AGENTS.md",
      "first private line",
      "Instructions from: /r/secret/fake.md",
      "second private line",
      "</system-reminder>",
    ].join("\n")
    const { text } = SecurityOutput.read(output, { lines: [], instruction: (p) => p.startsWith("/r/secret") })
    expect(text).not.toContain("private line")
  })
})

describe("SecurityOutput.rawLines: a read's metadata", () => {
  test("raw lines from the read's first line, protected ones redacted", () => {
    expect(SecurityOutput.rawLines("k\npw = 'hunter2'\n// @secure-end", 3, [{ from: 3, to: 4 }])).toBe(
      "[REDACTED: protected segment]\n[REDACTED: protected segment]\n// @secure-end",
    )
  })
})

describe("SecurityOutput.grep: OpenCode's grep output by file and line", () => {
  const hidden = (p: string) => p.endsWith(".env")
  const lines = (p: string) => (p === "/r/a.ts" ? [{ from: 3, to: 4 }] : [])

  test("matches of hidden files go, the count is recomputed, segment lines are redacted", () => {
    const output = [
      "Found 4 matches",
      "/r/a.ts:",
      "  Line 1: pw = 1",
      "  Line 4: pw = 'hunter2'",
      "",
      "/r/.env:",
      "  Line 1: PW=hunter2",
      "  Line 2: PW2=x",
    ].join("\n")
    const { text, removed, redacted } = SecurityOutput.grep(output, { hidden, lines })
    expect(removed).toBe(2)
    expect(redacted).toBe(1)
    expect(text.startsWith("Found 2 matches")).toBe(true)
    expect(text).not.toContain("hunter2")
    expect(text).not.toContain(".env")
  })

  test("a truncated result that lost matches says only 'at least': the count is no oracle", () => {
    const output = [
      "Found 150 matches (showing first 100)",
      "/r/.env:",
      "  Line 1: PW=hunter2",
      "",
      "/r/b.ts:",
      "  Line 9: x",
    ].join("\n")
    const { text } = SecurityOutput.grep(output, { hidden, lines })
    expect(text.split("\n")[0]).toBe("Found at least 1 matches (more may exist)")
  })

  test("when every match was hidden the output is OpenCode's own 'No files found'", () => {
    const { text } = SecurityOutput.grep("Found 1 matches\n/r/.env:\n  Line 1: PW=hunter2", { hidden, lines })
    expect(text).toBe("No files found")
  })

  test("output that is not grep's is left as it is", () => {
    expect(SecurityOutput.grep("No files found", { hidden, lines }).text).toBe("No files found")
  })
})
