import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import OpencodeBuiltins from "../../../plugin/index"
import { pluginInput } from "../../../plugin/test/input"
import { AstFormat } from "../../ast/format"
import { AstReplace } from "../../ast/replace"
import { AstSearch } from "../../ast/search"
import { toolContext } from "../lsp/fixtures"
import { tmpdir } from "../fixture"
import { CliOracle } from "./cli-oracle"

// A Latin-1 file (a Python file declaring `# -*- coding: latin-1 -*-` per PEP 263 is valid Python) read as "utf8"
// got U+FFFD for each accented letter, and a live replace wrote that back, outside the match too (real-world tester
// Q, Q9). Such a file is now never rewritten: a replace whose pattern matches in one is refused whole.
const L1 = '# -*- coding: latin-1 -*-\n# Auteur: José\ndef f():\n    print("café")\n'
const UTF = "def g():\n    print(1)\n"
const latin1 = (s: string) => Buffer.from(s, "latin1")
const input = (dir: string) => ({ directory: dir, lang: "python", pattern: "print($A)" })

describe("ast_grep_replace over files that are not UTF-8", () => {
  test("plugin route, live: refused naming the file, which keeps its Latin-1 bytes", async () => {
    await using dir = await tmpdir({ "l1.py": latin1(L1) })
    const hooks = (await OpencodeBuiltins(pluginInput(dir.path).input)) as any
    const error = await hooks.tool.ast_grep_replace
      .execute({ pattern: "print($A)", rewrite: "log($A)", lang: "python", dryRun: false }, toolContext(dir.path))
      .then(
        (out: unknown) => new Error(`no error: ${out}`),
        (e: Error) => e,
      )
    expect(error.message).toContain("nothing was written")
    expect(error.message).toContain(dir.file("l1.py"))
    expect(error.message).toContain("not UTF-8 text")
    expect(await fs.readFile(dir.file("l1.py"))).toEqual(latin1(L1))
  })

  test("across a tree: nothing is written, not even the UTF-8 file; the dry run says a live run is refused", async () => {
    await using dir = await tmpdir({ "l1.py": latin1(L1), "ok.py": UTF })
    const dry = await AstReplace.run(input(dir.path), { rewrite: "log($A)", dryRun: true })
    expect([dry.files.map((f) => f.file), dry.notUtf8, dry.totalReplacements]).toEqual([
      [dir.file("ok.py")],
      [dir.file("l1.py")],
      1,
    ])
    const text = AstFormat.replace(dry, { directory: dir.path })
    expect(text).toContain("[WARNING] The pattern matches in 1 file that is not UTF-8 text")
    expect(text).toContain(": l1.py (latin-1).") // its `coding:` line names it (AK-5)
    expect(text).toContain("A live run (dryRun: false) is refused")
    const live = await AstReplace.run(input(dir.path), { rewrite: "log($A)", dryRun: false }).catch((e) => e)
    expect(AstReplace.NotUtf8.is(live)).toBe(true)
    expect(live.data.files).toEqual([dir.file("l1.py")])
    expect(await fs.readFile(dir.file("l1.py"))).toEqual(latin1(L1))
    expect(await fs.readFile(dir.file("ok.py"), "utf8")).toBe(UTF)
    // Excluded by a glob, as the message says, the replace goes through.
    const excluded = await AstReplace.run(
      { ...input(dir.path), globs: ["!l1.py"] },
      { rewrite: "log($A)", dryRun: false },
    )
    expect([excluded.written, excluded.notUtf8]).toEqual([true, []])
    expect(await fs.readFile(dir.file("ok.py"), "utf8")).toBe("def g():\n    log(1)\n")
  })

  test("a Latin-1 file where the pattern does not match does not stop the replace", async () => {
    await using dir = await tmpdir({ "l1.py": latin1("# José\nprint_it = 1\n"), "ok.py": UTF })
    const live = await AstReplace.run(input(dir.path), { rewrite: "log($A)", dryRun: false })
    expect([live.written, live.notUtf8]).toEqual([true, []])
    expect(await fs.readFile(dir.file("l1.py"))).toEqual(latin1("# José\nprint_it = 1\n"))
  })

  test("UTF-8 with a byte-order mark is still replaced, the mark kept", async () => {
    await using dir = await tmpdir({ "bom.py": "\uFEFF# é\nprint(1)\n" })
    const live = await AstReplace.run(input(dir.path), { rewrite: "log($A)", dryRun: false })
    expect([live.written, live.notUtf8]).toEqual([true, []])
    expect(await fs.readFile(dir.file("bom.py"), "utf8")).toBe("\uFEFF# é\nlog(1)\n")
  })
})

describe("ast_grep_search over files that are not UTF-8", () => {
  test("as the CLI: no match counted in a Latin-1 file; it is named, with what to do", async () => {
    await using dir = await tmpdir({ "l1.py": latin1(L1), "ok.py": UTF })
    const result = await AstSearch.run(input(dir.path))
    const cli = CliOracle.search(dir.path, "print($A)", "python")
    expect(result.matches.map((m) => [m.file, m.start.line + 1])).toEqual(cli.map((m) => [m.file, m.line]))
    expect(cli.map((m) => m.file)).toEqual([dir.file("ok.py")])
    expect([result.totalMatches, result.notUtf8]).toEqual([1, [dir.file("l1.py")]])
    const text = await AstFormat.search(result, { directory: dir.path })
    expect(text).toContain("[WARNING] The pattern matches in 1 file that is not UTF-8 text")
    expect(text).toContain("iconv -f latin-1 -t UTF-8") // its `coding:` line names it (AK-5)
  })

  test("a Latin-1 file where the pattern does not match is not named", async () => {
    await using dir = await tmpdir({ "l1.py": latin1("# José\nx = 1\n"), "ok.py": UTF })
    const result = await AstSearch.run(input(dir.path))
    expect([result.totalMatches, result.notUtf8]).toEqual([1, []])
  })
})

// A match inside a segment the role may not read is neither shown nor counted in a UTF-8 file; in a Latin-1 file it
// named the file (search) or refused the replace naming it, so a guess of the segment's text was told apart from a
// wrong one (red team Z3-1). The Latin-1 reading now goes through the same segment filter.
describe("files that are not UTF-8 with a segment the role may not read", () => {
  const SECURE = { start: "@secure-start", end: "@secure-end" }
  const L1_SEGMENT = '# Auteur: José\n# @secure-start\nprint("4711")\n# @secure-end\nx = 1\n'
  const segments = () => ({ read: [SECURE], write: [SECURE] })

  test("a match only inside the segment neither names the file in search nor refuses a live replace", async () => {
    await using dir = await tmpdir({ "l1.py": latin1(L1_SEGMENT), "ok.py": UTF })
    const search = await AstSearch.run({ ...input(dir.path), segments })
    expect([search.totalMatches, search.notUtf8]).toEqual([1, []])
    const live = await AstReplace.run({ ...input(dir.path), segments }, { rewrite: "log($A)", dryRun: false })
    expect([live.written, live.notUtf8]).toEqual([true, []])
    expect(await fs.readFile(dir.file("l1.py"))).toEqual(latin1(L1_SEGMENT))
  })

  test("a match outside the segment still names the file and refuses a live replace", async () => {
    const text = L1_SEGMENT.replace("x = 1", "print(2)")
    await using dir = await tmpdir({ "l1.py": latin1(text) })
    const search = await AstSearch.run({ ...input(dir.path), segments })
    expect(search.notUtf8).toEqual([dir.file("l1.py")])
    await expect(
      AstReplace.run({ ...input(dir.path), segments }, { rewrite: "log($A)", dryRun: false }),
    ).rejects.toThrow("not UTF-8")
    expect(await fs.readFile(dir.file("l1.py"))).toEqual(latin1(text))
  })
})

// Real-world tester R: UTF-16 files (Visual Studio's "Unicode", with a byte-order mark) and files in an encoding that
// is not Latin-1. Before: a UTF-16 file was "unreadable or binary" and a live replace wrote the other files, leaving
// the project half renamed; a Shift-JIS file was told to convert "from LATIN1", which garbles it for good.
describe("files in UTF-16 or an encoding they name", () => {
  const A_CS = '\uFEFFclass A { void F() { Console.WriteLine("é"); } }\n'
  const B_CS = "class B { void G() { Console.WriteLine(1); } }\n"

  test("R7 a UTF-16 file holding a match is named as not UTF-8 and refuses a live replace whole", async () => {
    await using dir = await tmpdir({ "a.cs": Buffer.from(A_CS, "utf16le"), "b.cs": B_CS })
    const replace = { directory: dir.path, lang: "csharp", pattern: "Console.WriteLine($A)" }
    const dry = await AstReplace.run(replace, { rewrite: "Log($A)", dryRun: true })
    expect(dry.notUtf8).toEqual([dir.file("a.cs")])
    expect(AstFormat.replace(dry, { directory: dir.path })).not.toContain("unreadable or binary")
    const live = await AstReplace.run(replace, { rewrite: "Log($A)", dryRun: false }).catch((e) => e)
    expect(AstReplace.NotUtf8.is(live)).toBe(true)
    expect(live.message).toContain(`${dir.file("a.cs")} (UTF-16LE)`)
    expect(live.message).toContain("iconv -f UTF-16LE -t UTF-8")
    expect(await fs.readFile(dir.file("b.cs"), "utf8")).toBe(B_CS)
    expect((await fs.readFile(dir.file("a.cs"))).equals(Buffer.from(A_CS, "utf16le"))).toBe(true)
  })

  test("R8 a file declaring `coding: shift_jis` is told to convert from shift_jis, never from Latin-1", async () => {
    const sjis = Buffer.concat([
      Buffer.from('# -*- coding: shift_jis -*-\nmsg = "'),
      Buffer.from([0x95, 0x5c, 0x8e, 0xa6]), // 表示 in Shift-JIS
      Buffer.from('"\nprint(msg)\n'),
    ])
    await using dir = await tmpdir({ "sjis.py": sjis })
    const replace = { directory: dir.path, lang: "python", pattern: "print($A)" }
    const dry = await AstReplace.run(replace, { rewrite: "log($A)", dryRun: true })
    expect(dry.notUtf8).toEqual([dir.file("sjis.py")])
    expect(AstFormat.replace(dry, { directory: dir.path })).not.toContain("-f LATIN1")
    const live = await AstReplace.run(replace, { rewrite: "log($A)", dryRun: false }).catch((e) => e)
    expect(live.message).toContain("iconv -f shift_jis -t UTF-8")
    expect(live.message).not.toContain("-f LATIN1")
  })

  // Real-world tester AK-5: only the live refusal named it; search and dry-run warnings said `iconv -f <its encoding>`.
  test("AK-5 search and dry-run warnings name the encoding a file declares; an undeclared one gets the generic advice", async () => {
    const sjis = Buffer.concat([
      Buffer.from('# -*- coding: shift_jis -*-\nmsg = "'),
      Buffer.from([0x95, 0x5c, 0x8e, 0xa6]),
      Buffer.from('"\nprint(msg)\n'),
    ])
    await using dir = await tmpdir({ "sjis.py": sjis })
    const input = { directory: dir.path, lang: "python", pattern: "print($A)" }
    const search = await AstSearch.run(input)
    expect(search.encodings).toEqual({ [dir.file("sjis.py")]: "shift_jis" })
    const text = await AstFormat.search(search, { directory: dir.path })
    expect(text).toContain("sjis.py (shift_jis)")
    expect(text).toContain("iconv -f shift_jis -t UTF-8")
    const dry = await AstReplace.run(input, { rewrite: "log($A)", dryRun: true })
    expect(AstFormat.replace(dry, { directory: dir.path })).toContain("iconv -f shift_jis -t UTF-8")

    await using plain = await tmpdir({ "l1.py": Buffer.from('msg = "caf\xe9"\nprint(msg)\n', "latin1") })
    const undeclared = await AstSearch.run({ ...input, directory: plain.path })
    expect(undeclared.notUtf8.length).toBe(1)
    expect(await AstFormat.search(undeclared, { directory: plain.path })).toContain("iconv -f <its encoding> -t UTF-8")
  })
})
