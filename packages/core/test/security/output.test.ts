import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityOutput } from "../../security/output"
import { tmpdir } from "../fixture"

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

describe("SecurityOutput line models: ranges follow the way each reader breaks lines (red-team L9, L10)", () => {
  // OpenCode's read (Node's readline in 1.2, Effect's splitLines in 1.18) and LSP end a line at a lone \r too; ripgrep
  // and git only at \n. A lone \r added before a segment with the edit tool moved the read's numbering two lines past
  // the layer's, and the segment's short lines came back in clear.
  const CR = [
    "export const a = 1\rexport const c = 3\rexport const d = 4",
    "// @secure-start",
    'const key = "SEGSECRET"',
    "k=973",
    "// @secure-end",
    "export const b = 2",
  ].join("\n")

  test("a lone CR before a segment: read numbering (any) and ripgrep numbering (lf) both land on the segment", () => {
    expect(SecurityOutput.lineRanges(CR, PAIRS, "any")).toEqual([{ from: 5, to: 6 }])
    expect(SecurityOutput.lineRanges(CR, PAIRS, "lf")).toEqual([{ from: 3, to: 4 }])
    expect(SecurityOutput.lineRanges(CR, PAIRS)).toEqual([{ from: 3, to: 4 }])
  })

  test("a file with CR line ends only: every reader's lines holding the body are protected, and masks hide it", () => {
    const text = ["a = 1", "// @secure-start", "k=973", "// @secure-end", "b = 2"].join("\r")
    expect(SecurityOutput.lineRanges(text, PAIRS, "any")).toEqual([{ from: 3, to: 3 }])
    // One \n-line holds markers and body alike: the whole line is protected for ripgrep and git.
    expect(SecurityOutput.lineRanges(text, PAIRS, "lf")).toEqual([{ from: 1, to: 1 }])
    for (const masked of [SecurityOutput.mask(text, PAIRS), SecurityOutput.maskInPlace(text, PAIRS)]) {
      expect(masked).not.toContain("k=973")
      expect(masked.split("\r")).toHaveLength(5)
      expect(masked).toContain("b = 2")
    }
    expect(Buffer.byteLength(SecurityOutput.maskInPlace(text, PAIRS))).toBe(Buffer.byteLength(text))
  })

  test("a file too large to read whole holding a start marker is protected whole; one without is not", async () => {
    await using dir = await tmpdir()
    const big = path.join(dir.path, "big.ts")
    fs.writeFileSync(big, "x = 1\n".repeat(4096) + "// @SECURE-START\nk=973\n// @secure-end\n\u0000")
    expect(SecurityOutput.fileRanges(big, PAIRS, "any", 1024)).toEqual([{ from: 1, to: Infinity }])
    expect(SecurityOutput.fileRanges(big, PAIRS, "any")).toEqual([{ from: 4098, to: 4098 }])
    const plain = path.join(dir.path, "plain.ts")
    fs.writeFileSync(plain, "x = 1\n".repeat(4096))
    expect(SecurityOutput.fileRanges(plain, PAIRS, "any", 1024)).toEqual([])
    // Whole-file ranges redact every numbered line of a read.
    const out = SecurityOutput.read("<content>\n4097: // @secure-start\n4098: k=973\n</content>", {
      lines: [{ from: 1, to: Infinity }],
    })
    expect(out.text).not.toContain("k=973")
  })
})

describe("SecurityOutput.fileRanges: a UTF-8 file ripgrep decodes as UTF-16", () => {
  test("a file starting with FF FE or FE FF (ripgrep's BOM sniffing) has every line protected; others keep their lines", async () => {
    await using dir = await tmpdir()
    const write = (name: string, head: number[]) => {
      const file = path.join(dir.path, name)
      fs.writeFileSync(file, Buffer.concat([Buffer.from(head), Buffer.from(FILE)]))
      return SecurityOutput.fileRanges(file, PAIRS, "any")
    }
    expect(write("le.ts", [0xff, 0xfe])).toEqual([{ from: 1, to: Infinity }])
    expect(write("be.ts", [0xfe, 0xff])).toEqual([{ from: 1, to: Infinity }])
    // ripgrep takes FF FE 00 00 for UTF-16LE too (it has no UTF-32).
    expect(write("le32.ts", [0xff, 0xfe, 0, 0])).toEqual([{ from: 1, to: Infinity }])
    // A UTF-8 mark is stripped by ripgrep: the line numbers agree.
    expect(write("utf8.ts", [0xef, 0xbb, 0xbf])).toEqual([{ from: 3, to: 4 }])
    expect(write("plain.ts", [])).toEqual([{ from: 3, to: 4 }])
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

describe("SecurityOutput.instructions: blocks of files with segments (red team GA1)", () => {
  const FILE = "intro\n// @s\nk=1\n// @e\nInstructions from: /r/open.md\nQz7\nend\n"
  const file = { text: FILE, lines: SecurityOutput.lineRanges(FILE, [{ start: "@s", end: "@e" }]) }
  const R = "[REDACTED: protected segment]"

  test("a block keeps its shape, the segment's lines redacted by number", () => {
    const out = SecurityOutput.instructions(`Instructions from: /r/AGENTS.md\n${FILE}`, () => file)
    expect(out.text).toBe(
      `Instructions from: /r/AGENTS.md\nintro\n// @s\n${R}\n// @e\nInstructions from: /r/open.md\nQz7\nend\n`,
    )
    expect(out.redacted).toBe(1)
    expect(out.removed).toEqual([])
  })

  test("a header-like line inside the file is the file's own text, not a block of another file", () => {
    const seg = "a\nInstructions from: /r/open.md\n// @s\nQz7\n// @e\nb"
    const own = { text: seg, lines: SecurityOutput.lineRanges(seg, [{ start: "@s", end: "@e" }]) }
    const out = SecurityOutput.instructions(`Instructions from: /r/AGENTS.md\n${seg}`, (p) =>
      p === "/r/AGENTS.md" ? own : false,
    )
    expect(out.text).not.toContain("Qz7")
    expect(out.text).toContain(`// @s\n${R}\n// @e\nb`)
  })

  test("a copy trimmed of a byte-order mark and blank lines is placed by its text, numbered as the file", () => {
    const seg = "\uFEFF\n\n// @s\nQz7\n// @e\ntail\n\n"
    const own = { text: seg, lines: SecurityOutput.lineRanges(seg, [{ start: "@s", end: "@e" }]) }
    const out = SecurityOutput.instructions(
      `x\nInstructions from: /r/AGENTS.md\n${seg.trim()}\n\nInstructions from: /r/b.md\nb`,
      (p) => (p === "/r/AGENTS.md" ? own : false),
    )
    expect(out.text).toBe(
      `x\nInstructions from: /r/AGENTS.md\n// @s\n${R}\n// @e\ntail\n\nInstructions from: /r/b.md\nb`,
    )
  })

  test("a block that does not start with the file's text goes whole, in the read's reminder too", () => {
    const output = `<content>1: x\n</content>\n<system-reminder>\nInstructions from: /r/AGENTS.md\nold\nQz7\n</system-reminder>`
    const out = SecurityOutput.read(output, { lines: [], instruction: () => file })
    expect(out.text).not.toContain("Qz7")
    expect(out.removed).toEqual(["/r/AGENTS.md"])
  })
})

describe("SecurityOutput.read: the numbered form of older releases (<file>)", () => {
  test("lines between <file> and </file> are redacted by number", () => {
    const out = SecurityOutput.read("<file>\n00001| a\n00002| key\n</file>", { lines: [{ from: 2, to: 2 }] })
    expect(out.text).toBe("<file>\n00001| a\n00002| [REDACTED: protected segment]\n</file>")
    expect(SecurityOutput.numbered("<file>\n00001| a")).toBe(true)
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

  test("matches of hidden files and inside segments go, the count is recomputed from what is left", () => {
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
    expect(text).toBe("Found 1 matches\n/r/a.ts:\n  Line 1: pw = 1")
  })

  // Shown as "[REDACTED]" and counted, a match inside a segment answered yes or no to each pattern: a model recovered
  // a 16-character token with 95 greps of character classes (red-team helper, 1.18.33).
  test("a segment match is neither shown nor counted, and a file left with none loses its header", () => {
    const seg = (p: string) => (p === "/r/s.ts" ? [{ from: 2, to: 3 }] : [])
    const guess = ["Found 1 matches", "/r/s.ts:", "  Line 3: salt = 'Kd93'"].join("\n")
    const miss = "No files found"
    expect(SecurityOutput.grep(guess, { hidden: () => false, lines: seg }).text).toBe(miss)
    const both = ["Found 2 matches", "/r/s.ts:", "  Line 3: salt = 'Kd93'", "", "/r/t.ts:", "  Line 9: salt"].join("\n")
    expect(SecurityOutput.grep(both, { hidden: () => false, lines: seg }).text).toBe(
      "Found 1 matches\n/r/t.ts:\n  Line 9: salt",
    )
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

describe("SecurityOutput.numbered: is this OpenCode's read output", () => {
  test("a <content> block with numbered lines (both gutters, first line glued or not)", () => {
    expect(SecurityOutput.numbered("<path>/a</path>\n<content>\n1: a\n2: b\n</content>")).toBe(true)
    expect(SecurityOutput.numbered("<file>\n<content>00001| a\n</content>")).toBe(true)
  })
  test("raw text, or an empty file's block, is not (it is scanned for markers as text)", () => {
    expect(SecurityOutput.numbered("a\n// @secure-start\nhidden\n// @secure-end")).toBe(false)
    expect(SecurityOutput.numbered("<content>\n(End of file - total 0 lines)\n</content>")).toBe(false)
  })
})

describe("SecurityOutput.patches: git patches in shell output", () => {
  const none = () => undefined
  const redacted = "[REDACTED: protected segment]"
  test("lines between markers in a hunk of any file, with their +/-/space kept", () => {
    const diff = [
      "diff --git a/old.ts b/old.ts",
      "@@ -1,5 +1,5 @@",
      " a = 1",
      " // @secure-start",
      "-pw = 'hunter2'",
      "+pw = 'swordfish'",
      " // @secure-end",
      " b = 2",
    ].join("\n")
    const out = SecurityOutput.patches(diff, none, PAIRS)
    expect(out.text).not.toContain("hunter2")
    expect(out.text).not.toContain("swordfish")
    expect(out.text).toContain(`-${redacted}\n+${redacted}`)
    expect(out.text).toContain(" b = 2")
    expect(out.redacted).toBe(2)
  })
  test("a hunk that begins inside a segment is redacted back to its start; an unclosed start ends at its hunk", () => {
    const diff = [
      "diff --git a/x.ts b/x.ts",
      "@@ -3,3 +3,3 @@",
      " k",
      "-pw = 1",
      "+pw = 2",
      " // @secure-end",
      " after",
      "@@ -20,2 +20,3 @@",
      " // @secure-start",
      "+token = 'abc'",
      "diff --git a/y.ts b/y.ts",
      "@@ -1 +1 @@",
      "-y = 1",
      "+y = 2",
    ].join("\n")
    const out = SecurityOutput.patches(diff, none, PAIRS).text
    for (const secret of [" k", "pw = 1", "pw = 2", "token"]) expect(out).not.toContain(secret)
    expect(out).toContain(" after")
    expect(out).toContain("+y = 2")
  })
  test("a file holding segments now: its protected lines and new-side line numbers, even with no marker in the hunk", () => {
    const diff = ["diff --git a/app.ts b/app.ts", "@@ -4,2 +4,2 @@", "-pw = 'old'", "+pw = 'hunter2'", " b = 2"].join(
      "\n",
    )
    const file = { lines: new Set(["pw = 'hunter2'", "k"]), ranges: [{ from: 4, to: 4 }] }
    const out = SecurityOutput.patches(diff, (rel) => (rel === "app.ts" ? file : undefined), PAIRS).text
    expect(out).not.toContain("hunter2")
    expect(out).toContain(" b = 2")
    // The old side's line is not in the file now and not between markers: history before the segment existed.
    expect(out).toContain("-pw = 'old'")
  })
  test("text outside patches (commit headers, other commands' output) gets the marker rules too", () => {
    const text = [
      "commit abc",
      "// @secure-start",
      "secret line",
      "// @secure-end",
      "diff --git a/a b/a",
      "@@ -1 +1 @@",
      "-x",
      "+y",
    ].join("\n")
    const out = SecurityOutput.patches(text, none, PAIRS).text
    expect(out).not.toContain("secret line")
    expect(out).toContain("+y")
  })
  test("text without a patch is left alone", () => {
    expect(SecurityOutput.patches("// @secure-start\nsecret", none, PAIRS)).toEqual({
      text: "// @secure-start\nsecret",
      redacted: 0,
    })
  })
})
