import { describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { SecuritySegments } from "../../security/segments"
import { SecurityOutput } from "../../security/output"

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

// Red team DD, finding DD-F1: a per-character fold lost Greek final sigma. "Σ" lower-cases to "σ", while a word's last
// "σ" is "ς" in lower-case text, so a marker configured in one case and written in the other ("@ΑΠΌΡΡΗΤΟΣ-start",
// "@απόρρητος-start") was not found: the segment was shown to the model and writable. `CaseFold.fold` now folds a
// character to the lower case of its upper case (ς, σ, Σ → σ).
describe("DD-F1 final sigma in a segment marker", () => {
  const upper = "a\n// @ΑΠΌΡΡΗΤΟΣ-start\nkey=hunter2\n// @ΑΠΌΡΡΗΤΟΣ-end\nb"
  const lower = "a\n// @απόρρητος-start\nkey=hunter2\n// @απόρρητος-end\nb"
  test("DD-F1 a marker configured lower-case (ς) is found written upper-case (Σ)", () => {
    const found = SecuritySegments.find(upper, [{ start: "@απόρρητος-start", end: "@απόρρητος-end" }])
    expect(found.length).toBe(1)
  })
  test("DD-F1 a marker configured upper-case (Σ) is found written lower-case (ς)", () => {
    const found = SecuritySegments.find(lower, [{ start: "@ΑΠΌΡΡΗΤΟΣ-start", end: "@ΑΠΌΡΡΗΤΟΣ-end" }])
    expect(found.length).toBe(1)
    expect(lower.slice(found[0]!.start, found[0]!.end)).toContain("key=hunter2")
  })
  test("DD-F1 a write-locked segment marked in the other case cannot be changed", () => {
    const after = lower.replace("hunter2", "changed")
    expect(SecuritySegments.kept(lower, after, [{ start: "@ΑΠΌΡΡΗΤΟΣ-start", end: "@ΑΠΌΡΡΗΤΟΣ-end" }])).toBeDefined()
  })
})

// Red team CC7/CC7b/CC7d: markers were searched in `text.toLowerCase()` and the offsets used on `text`; "İ" lower-cases
// to two code units, so every İ before a segment moved it down (the protected line shown, a locked line writable) and
// enough of them made `find` loop until memory ran out. Markers are now searched in `fold(text)`, as long as the text.
describe("SecuritySegments.fold: offsets are the text's whatever precedes a segment", () => {
  const SEG = "// @secure-start\nk=4711\n// @secure-end"
  // Characters whose case mapping or normalisation changes length: İ (lower-cases to 2 units), ß and ﬁ (upper-case
  // to 2), ΐ (upper-cases to 3), NFD-decomposed é (NFC makes it 1), an astral capital (Deseret 𐐀, 2 units) and an
  // astral letter without case (𝒜), a lone surrogate.
  const PREFIXES = ["İ", "ß", "ẞ", "ﬁ", "ΐ", "e\u0301", "Å", "𐐀", "𝒜", "\ud800", "Σ", "K"]
  test("a segment after any number of such characters is found exactly where it is", () => {
    for (const p of PREFIXES)
      for (const n of [1, 2, 17, 30]) {
        const text = `// ${p.repeat(n)}\nexport const a = 1\n${SEG}\nexport const b = 2\n`
        expect(SecuritySegments.fold(text).length).toBe(text.length)
        expect({ p, n, cut: cut(text) }).toEqual({ p, n, cut: [SEG] })
        expect(SecurityOutput.mask(text, pair)).not.toContain("k=4711")
      }
  })
  test("the same characters on the marker's own line and inside the segment", () => {
    for (const p of PREFIXES) {
      const text = `a\n// ${p.repeat(40)} @secure-start ${p}\nk=4711 ${p.repeat(9)}\n// ${p} @secure-end\nb`
      expect({ p, cut: cut(text) }).toEqual({ p, cut: [text.slice(2, text.length - 2)] })
    }
  })
  // In a child process killed after 5 s: before the fix, some of these never ended (memory until the OOM killer).
  test("find ends and advances past each start marker (0 to 130 İ before a closed and an unclosed segment)", async () => {
    const script = `
      import { SecuritySegments } from ${JSON.stringify(path.join(import.meta.dir, "../../security/segments"))}
      const bad = []
      for (let n = 0; n <= 130; n++) {
        const text = "// " + "İ".repeat(n) + "\\n" + ${JSON.stringify(SEG)} + "\\nx\\n// @secure-start\\ny"
        const found = SecuritySegments.find(text, [{ start: "@secure-start", end: "@secure-end" }])
        const cuts = found.map((s) => text.slice(s.start, s.end))
        if (JSON.stringify(cuts) !== JSON.stringify([${JSON.stringify(SEG)}, "// @secure-start\\ny"])) bad.push(n)
      }
      console.log(JSON.stringify(bad))`
    const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" })
    const timer = setTimeout(() => proc.kill(9), 5_000)
    const code = await proc.exited
    clearTimeout(timer)
    expect({ code, out: (await new Response(proc.stdout).text()).trim() }).toEqual({ code: 0, out: "[]" })
  }, 30_000)
  test("markers match case-insensitively in any script, astral letters included", () => {
    const cyr = [{ start: "@секрет-начало", end: "@секрет-конец" }]
    const text = "İİİ\n// @СЕКРЕТ-НАЧАЛО\nk\n// @Секрет-Конец\nb"
    expect(SecuritySegments.find(text, cyr).map((s) => text.slice(s.start, s.end))).toEqual([
      "// @СЕКРЕТ-НАЧАЛО\nk\n// @Секрет-Конец",
    ])
    const des = [{ start: "@𐐨-open", end: "@𐐨-shut" }]
    const astral = "𐐀İ\n# @𐐀-OPEN\nk\n# @𐐨-Shut\nb"
    expect(SecuritySegments.find(astral, des).map((s) => astral.slice(s.start, s.end))).toEqual([
      "# @𐐀-OPEN\nk\n# @𐐨-Shut",
    ])
  })
  test("scanFile and patches fold as find does", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-fold-"))
    try {
      const file = path.join(dir, "a.txt")
      fs.writeFileSync(file, "İ".repeat(50) + "\n// @SECURE-START\nk\n")
      expect(SecuritySegments.scanFile(file, pair, 16)).toEqual([0])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
    const diff =
      "diff --git a/a.ts b/a.ts\n@@ -1,4 +1,5 @@\n+// " +
      "İ".repeat(30) +
      "\n a\n // @Secure-Start\n k=4711\n // @secure-end"
    const out = SecurityOutput.patches(diff, () => undefined, pair)
    expect(out.text).not.toContain("k=4711")
  })
})

// Red team EE (a weakness, no exploit): `kept` and `guarded` checked only that each segment's text survived a tool's
// change, not that its markers were still found. A marker line glued onto the line before it keeps every character,
// but the marker then follows a word character and is no longer in a comment: a language server's edit doing that
// would have unlocked a write-protected segment or shown a read-protected one. The segments found after the change
// must now be the ones found before.
describe("EE SecuritySegments.kept and guarded: the segments found afterwards are the same", () => {
  const before = "a = 1\n# @secure-start\nTOKEN=x\n# @secure-end\nb = 2\n"
  const glued = "a = 1x# @secure-start\nTOKEN=x\n# @secure-end\nb = 2\n"
  test("EE a marker line glued onto the line before keeps the text but not the segment: refused, read or write", () => {
    // The premise: every character of the segment is still there, and no segment is found any more.
    expect(glued).toContain(before.slice(6, 43))
    expect(SecuritySegments.find(glued, pair)).toEqual([])
    expect(SecuritySegments.kept(before, glued, pair)).toBe("a write-protected segment changed")
    expect(SecuritySegments.guarded(before, glued, { read: pair, write: [] })).toBe(
      "a read-protected segment would change",
    )
    expect(SecuritySegments.guarded(before, glued, { write: pair })).toBe("a write-protected segment changed")
    // The end marker glued the same way: the segment then runs to the end of the file (a different one).
    const end = "a = 1\n# @secure-start\nTOKEN=x\nx# @secure-end\nb = 2\n"
    expect(SecuritySegments.kept(before, end, pair)).toBeDefined()
  })
  test("EE one of two segments removed, a marker taken by a new one, or the end marker removed: refused; other edits are kept", () => {
    const two = before + "# @secure-start\nKEY=y\n# @secure-end\n"
    expect(SecuritySegments.kept(two, before, pair)).toBeDefined()
    // A start marker added above the segment takes its end marker: the segment found is another one.
    expect(SecuritySegments.kept(before, "# @secure-start\n" + before, pair)).toBeDefined()
    // Two segments swapped: each is still found, but not in order.
    const swapped = "# @secure-start\nKEY=y\n# @secure-end\n" + before
    expect(SecuritySegments.kept(two, swapped, pair)).toBeDefined()
    // A segment added beside the others protects more: kept.
    expect(SecuritySegments.kept(before, before + "# @secure-start\nnew\n# @secure-end\n", pair)).toBeUndefined()
    expect(SecuritySegments.kept(before, before.replace("# @secure-end\n", ""), pair)).toBeDefined()
    // An unclosed segment protects to the end of the file: text added after it is inside it.
    const open = "a = 1\n# @secure-start\nTOKEN=x\n"
    expect(SecuritySegments.kept(open, open + "more\n", pair)).toBeDefined()
    // Outside the segments anything goes, lines before them moved or rewritten included.
    const edited = "import os\na = 10\n\n# @secure-start\nTOKEN=x\n# @secure-end\nb = 3\n"
    expect(SecuritySegments.kept(before, edited, pair)).toBeUndefined()
    expect(SecuritySegments.guarded(two, two.replace("b = 2", "c = 2"), { read: pair, write: pair })).toBeUndefined()
    // With no segment before, a change adds one freely (nothing was protected).
    expect(SecuritySegments.kept("a\n", "a\n# @secure-start\nx\n", pair)).toBeUndefined()
  })
})
