import { beforeAll, describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { AstLanguage } from "../../ast/languages"
import { AstPattern } from "../../ast/pattern"
import { AstSearch } from "../../ast/search"
import { tmpdir } from "../fixture"
import { CliOracle } from "./cli-oracle"

// The first use of a dynamic language registers all of them, compiling three grammars from source on a fresh
// checkout (about 2 s, more on a busy machine): done once here, with room, rather than inside a 5 s test.
beforeAll(() => AstLanguage.load("python").then(() => undefined), 120_000)

const compile = async (lang: string, pattern: string) =>
  AstPattern.compile(await AstLanguage.load(lang), lang, pattern, AstLanguage.expando(lang as AstLanguage.Name))

describe("pattern checks", () => {
  test("literals are the named leaves that are not meta-variables; keywords are compared ignoring case", async () => {
    const p = await compile("typescript", "console.log($$$ARGS)")
    expect(p.literals.sort()).toEqual(["console", "log"])
    expect(p.keywords).toEqual([])
    expect(p.mayMatch("x.console.log(1)")).toBe(true)
    expect(p.mayMatch("console.info(1)")).toBe(false)
    const f = await compile("typescript", "function $F($$$P) { $$$B }")
    expect(f.literals).toEqual([])
    expect(f.keywords).toEqual(["function"])
    expect(f.mayMatch("const x = FUNCTION")).toBe(true) // PHP-style case-insensitive keywords stay possible
    expect(f.mayMatch("const x = () => 1")).toBe(false)
  })

  test("meta-variable parts never become literals (bash parses $A as `$` + `A`, PHP as a variable)", async () => {
    expect((await compile("bash", "echo $A")).literals).toEqual(["echo"])
    expect((await compile("php", "foo($X, $$$A)")).literals).toEqual(["foo"])
    // Not valid PHP once expanded (`µX = …`): an ERROR node, which ast-grep still matches by its leaves (the CLI
    // finds `$a = foo(1, 2)`), so `foo` still pre-filters; no warning, as it matches `<?php $a = foo();`.
    const assignment = await compile("php", "$X = foo($$$A)")
    expect([assignment.literals, assignment.selective, !!assignment.warning]).toEqual([["foo"], true, false])
    expect((await compile("python", "print($A, $_)")).literals).toEqual(["print"])
    expect((await compile("nix", "import $P")).literals).toEqual(["import"]) // an identifier in nix
  })

  test("expando: a $ before a capital or _, or $$$ alone, becomes the language's expando character", () => {
    expect(AstPattern.expand("foo($A, $$$, $$$REST, $_, $x, $$)", "µ")).toBe("foo(µA, µµµ, µµµREST, µ_, $x, $$)")
    expect(AstPattern.expand("$A", "$")).toBe("$A")
  })

  test("an empty pattern and ast-grep's own pattern errors are named errors", async () => {
    for (const pattern of ["", "   "]) {
      const error = await compile("typescript", pattern).catch((e) => e)
      expect(AstPattern.Invalid.is(error)).toBe(true)
      expect(error.message).toContain("the pattern is empty")
    }
    const error = await compile("json", '"a": $V').catch((e) => e)
    expect(AstPattern.Invalid.is(error)).toBe(true)
    expect(error.message).toContain("Multiple AST nodes are detected")
  })

  test("ast-grep's message quotes the pattern as the user wrote it, never the expando (`$A $B`, not `µA µB`; red team X6)", async () => {
    const error = await compile("python", "$A $B").catch((e) => e)
    expect(AstPattern.Invalid.is(error)).toBe(true)
    expect(error.message).toContain("Multiple AST nodes are detected. Please check the pattern source `$A $B`.")
    expect(error.message).not.toContain("µ")
  })

  test("the CLI's ERROR-node check: the pattern's own node, not one deeper; literals under it still pre-filter", async () => {
    const p = await compile("typescript", "console.log(")
    expect(p.warning).toContain("does not parse as complete typescript code")
    expect([p.literals.sort(), p.selective]).toEqual([["console", "log"], true])
    expect(p.mayMatch("console.log(1)")).toBe(true)
    expect(p.mayMatch("print(1)")).toBe(false)
    // `$Y` cannot be an import source in TypeScript: the pattern is an ERROR node, yet matches every default import.
    const imports = await compile("typescript", "import $X from $Y")
    expect([!!imports.warning, imports.keywords.sort()]).toEqual([true, ["from", "import"]])
    // An ERROR node inside a call: the CLI does not warn (and matches `foo(a b)` as written).
    expect((await compile("typescript", "foo(a b)")).warning).toBeUndefined()
    expect((await compile("typescript", "console.log($A)")).warning).toBeUndefined()
  })

  test("a fragment that is an ERROR node alone but matches code in its usual place gets no warning", async () => {
    // vuejs/docs styles: `color: $V;` is a declaration, which only a rule body holds; it matches there (9 times).
    await using dir = await tmpdir({ "a.css": ".a {\n  margin: 0;\n}\n", "b.css": ".b {\n  color: red;\n}\n" })
    expect((await compile("css", "color: $V;")).warning).toBeUndefined()
    expect(CliOracle.search(dir.path, "color: $V;", "css").map((m) => m.text)).toEqual(["color: red;"])
    // Other languages' fragments: a struct field (Rust, Go), an assignment without `<?php` (PHP).
    for (const [lang, pattern] of [
      ["rust", "pub $F: $T"],
      ["go", "$F $T"],
      ["css", "$P: $V;"],
    ]) {
      expect([lang, pattern, (await compile(lang, pattern)).warning]).toEqual([lang, pattern, undefined])
    }
    // Still warned: patterns that match nothing anywhere (the CLI finds no `color: red` without its `;` either).
    expect(CliOracle.search(dir.path, "color: $V", "css")).toEqual([])
    for (const [lang, pattern] of [
      ["css", "color: $V"],
      ["typescript", "console.log("],
      ["typescript", "} else {"],
      ["python", "else:"],
      ["php", "foo("],
    ]) {
      expect([lang, pattern, (await compile(lang, pattern)).warning]).toEqual([
        lang,
        pattern,
        expect.stringContaining("does not parse as complete"),
      ])
    }
  })
})

describe("the pre-filter never changes results", () => {
  // Real source files from installed packages, searched with and without the pre-filter and by the CLI.
  const PATTERNS = [
    "console.log($$$A)",
    "$A.$B($$$C)",
    "function $F($$$P) { $$$B }",
    "import $X from '$M'",
    "export interface $I { $$$ }",
    "throw new Error($MSG)",
    "if ($C) { return $R }",
    "$X === undefined",
    "typeof $X === 'string'",
    "async ($$$P) => $B",
    // The patterns of the independent check on OpenCode's sources; `import $X from $Y` is an ERROR node.
    "await $X",
    "import $X from $Y",
    "if ($C) { $$$ }",
  ]

  test("on real TypeScript from node_modules, for 13 patterns, results equal the unfiltered search and the CLI", async () => {
    const root = path.resolve(import.meta.dir, "../../../../node_modules")
    const sources: Record<string, Uint8Array> = {}
    for (const pkg of ["zod/src/v4/core", "gpt-tokenizer/src", "@ast-grep/napi/types"]) {
      const dir = path.join(root, pkg)
      for (const rel of (await fs.readdir(dir, { recursive: true })) as string[]) {
        if (!rel.endsWith(".ts") || Object.keys(sources).length >= 150) continue
        sources[path.join(pkg.replaceAll("/", "_"), rel)] = await fs.readFile(path.join(dir, rel))
      }
    }
    expect(Object.keys(sources).length).toBeGreaterThan(50)
    await using dir = await tmpdir(sources)
    let total = 0
    for (const pattern of PATTERNS) {
      // Worker threads with the pre-filter, the calling thread without it: the same matches and totals.
      const filtered = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern }, { workers: 2 })
      const full = await AstSearch.run(
        { directory: dir.path, lang: "typescript", pattern, prefilter: false },
        { workers: 0 },
      )
      expect(filtered.matches).toEqual(full.matches)
      expect([filtered.totalMatches, filtered.filesWithMatches]).toEqual([full.totalMatches, full.filesWithMatches])
      expect(filtered.warning).toBeUndefined()
      const oracle = CliOracle.search(dir.path, pattern, "ts")
      expect(filtered.matches.map((m) => [m.file, m.start.line + 1, m.start.column + 1])).toEqual(
        oracle.map((m) => [m.file, m.line, m.column]),
      )
      total += filtered.totalMatches
    }
    expect(total).toBeGreaterThan(100)
  }, 120_000)
})
