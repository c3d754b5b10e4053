import { beforeAll, describe, expect, test } from "bun:test"
import fs from "fs/promises"
import os from "os"
import path from "path"
import { AstLanguage } from "../../ast/languages"
import { AstReplace } from "../../ast/replace"
import { AstSearch } from "../../ast/search"
import { Grammar } from "../../ast/grammar"
import { tmpdir } from "../fixture"
import { CliOracle } from "./cli-oracle"
import { KEYWORD_CASES, LANGUAGE_CASES } from "./fixtures"

// The first use of a dynamic language registers all of them, compiling three grammars from source on a fresh
// checkout (about 2 s, more on a busy machine): done once here, with room, rather than inside a 5 s test.
beforeAll(() => AstLanguage.load("python").then(() => undefined), 120_000)

describe("the 25 languages", () => {
  test("the PRD's list, each with a fixture", () => {
    expect([...AstLanguage.NAMES].sort() as string[]).toEqual(
      "bash c cpp csharp css elixir go haskell html java javascript json kotlin lua nix php python ruby rust scala solidity swift typescript tsx yaml"
        .split(" ")
        .sort(),
    )
    expect(Object.keys(LANGUAGE_CASES).sort()).toEqual([...AstLanguage.NAMES].sort())
  })

  for (const [lang, c] of Object.entries(LANGUAGE_CASES)) {
    test(`${lang}: search and rewrite agree with the ast-grep CLI`, async () => {
      await using dir = await tmpdir({ [c.file]: c.source })
      const result = await AstSearch.run({ directory: dir.path, lang, pattern: c.pattern })
      const lines = c.source.split("\n")
      const texts = result.matches.map((m) => {
        const span = lines.slice(m.start.line, m.end.line + 1)
        span[span.length - 1] = span[span.length - 1].slice(0, m.end.column)
        span[0] = span[0].slice(m.start.column)
        return span.join("\n")
      })
      expect(texts).toEqual([...c.matches])
      const oracle = CliOracle.search(dir.path, c.pattern, lang)
      expect(result.matches.map((m) => [m.start.line + 1, m.start.column + 1])).toEqual(
        oracle.map((m) => [m.line, m.column]),
      )

      const replaced = await AstReplace.run(
        { directory: dir.path, lang, pattern: c.pattern },
        { rewrite: c.rewrite, dryRun: true },
      )
      expect(await fs.readFile(dir.file(c.file), "utf8")).toBe(c.source) // dry run wrote nothing
      CliOracle.rewrite(dir.path, c.pattern, c.rewrite, lang)
      const expected = await fs.readFile(dir.file(c.file), "utf8")
      expect(expected).not.toBe(c.source)
      // Go: $$$B ends with the newline that ends `return err`, so the `}` after it sits on the capture's last line,
      // which is not blank in the output: it gets the match's tab indentation, which the CLI 0.51.1 drops for tabs
      // (the documented tab difference; AK-4, `rewrite.test.ts › tab-indented code gets tab indentation`).
      const cli = lang === "go" ? expected.replace("return err\n }", "return err\n\t }") : expected
      expect(replaced.files.map((f) => f.after)).toEqual([cli])
    })
  }

  // Real-world tester AK-1: googletest's BUILD.bazel and .bzl files are Python to the CLI (load(…) 7 against 0), its
  // bash takes .env/.cgi/.command files, its cpp not .hxx/.h++. One file per candidate extension (every extension
  // any ast-grep release or ripgrep type names for these languages, upper-case and dot-file variants), each holding
  // the language's fixture: the files the tool finds must be exactly the CLI's, for each of the 25 languages.
  const CANDIDATES = (
    "bash bats cgi command env fcgi ksh sh tmux tool zsh c h cc hpp cpp c++ hh cxx cu ino hxx h++ cs csx css scss " +
    "sass less ex exs go hs lhs html htm xhtml shtml vue java js mjs cjs jsx snap json json5 jsonc kt ktm kts lua nix " +
    "php phtml php3 phps py py3 pyi pyw bzl bazel star rb rbw rake gemspec ru rs scala sc scm sbt sol swift xctest ts " +
    "cts mts tsx yaml yml"
  ).split(" ")
  const EXTRA_NAMES = [
    ".env",
    "BUILD.bazel",
    "WORKSPACE.bazel",
    "MODULE.bazel",
    "BUILD",
    "UPPER.PY",
    "UPPER.SH",
    "UPPER.JS",
    "UPPER.Ts",
  ]
  test("each language takes exactly the CLI's extensions (AK-1: python .py3/.bzl/.bazel, bash .env/.cgi/…, cpp without .hxx/.h++)", async () => {
    for (const [lang, c] of Object.entries(LANGUAGE_CASES)) {
      const files = Object.fromEntries([...CANDIDATES.map((e) => `f.${e}`), ...EXTRA_NAMES].map((n) => [n, c.source]))
      await using dir = await tmpdir(files)
      const result = await AstSearch.run({ directory: dir.path, lang, pattern: c.pattern })
      const ours = [...new Set(result.matches.map((m) => path.basename(m.file)))].sort()
      const cli = [...new Set(CliOracle.search(dir.path, c.pattern, lang).map((m) => path.basename(m.file)))].sort()
      expect({ lang, files: ours }).toEqual({ lang, files: cli })
      expect(cli.length).toBeGreaterThan(0)
    }
    expect(AstLanguage.extensions("python")).toEqual(["py", "py3", "pyi", "bzl", "bazel"])
  }, 120_000)

  test("an unknown language is refused with the list of supported ones", async () => {
    await using dir = await tmpdir({ "a.ts": "x" })
    const error = await AstSearch.run({ directory: dir.path, lang: "cobol", pattern: "x" }).catch((e) => e)
    expect(AstLanguage.Unknown.is(error)).toBe(true)
    expect(error.message).toContain("unknown language 'cobol'; supported: bash, c, cpp")
  })

  test("each language searches its own extensions only", async () => {
    await using dir = await tmpdir({ "a.ts": "foo(1)", "b.tsx": "foo(2)", "c.js": "foo(3)", "d.mts": "foo(4)" })
    const ts = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "foo($A)" })
    expect(ts.matches.map((m) => path.basename(m.file))).toEqual(["a.ts", "d.mts"])
    const tsx = await AstSearch.run({ directory: dir.path, lang: "tsx", pattern: "foo($A)" })
    expect(tsx.matches.map((m) => path.basename(m.file))).toEqual(["b.tsx"])
    expect(AstLanguage.fromPath("x/y.py")).toBe("python")
    expect(AstLanguage.fromPath("x/y.PY")).toBeUndefined() // letter case counts, as in the CLI
    expect(AstLanguage.fromPath("Makefile")).toBeUndefined()
  })
})

describe("grammars compiled from npm sources", () => {
  test("a missing C compiler is a clear error naming the fix, and nothing half-built is left", async () => {
    const cache = await fs.mkdtemp(path.join(os.tmpdir(), "ocb-grammar-"))
    try {
      const env = { OPENCODE_BUILTINS_GRAMMAR_DIR: cache, CC: "/nonexistent/cc" }
      const error = await Grammar.build(Grammar.SOURCES.nix, env).catch((e) => e)
      expect(Grammar.BuildFailed.is(error)).toBe(true)
      expect(error.message).toContain("no C compiler found ('/nonexistent/cc')")
      expect(await fs.readdir(cache)).toEqual([])
    } finally {
      await fs.rm(cache, { recursive: true, force: true })
    }
  })

  test("a build is cached by package version and reused", async () => {
    const cache = await fs.mkdtemp(path.join(os.tmpdir(), "ocb-grammar-"))
    try {
      const env = { OPENCODE_BUILTINS_GRAMMAR_DIR: cache }
      const first = await Grammar.build(Grammar.SOURCES.solidity, env)
      expect(path.basename(first)).toMatch(/^tree-sitter-solidity@1\.2\.13-tree_sitter_solidity-.*\.so$/)
      const stat = await fs.stat(first)
      // A second build with a broken compiler still succeeds: the cached library is used.
      expect(await Grammar.build(Grammar.SOURCES.solidity, { ...env, CC: "/nonexistent/cc" })).toBe(first)
      expect((await fs.stat(first)).mtimeMs).toBe(stat.mtimeMs)
    } finally {
      await fs.rm(cache, { recursive: true, force: true })
    }
  }, 60_000)
})

describe("a meta-variable matches the literal keywords the CLI's grammar names (real-world tester AT-1)", () => {
  // `@ast-grep/lang-kotlin` 0.0.7 leaves `null` and `@ast-grep/lang-swift` 0.0.8 `nil` unnamed, and ast-grep's `$X`
  // matches named nodes only: `return $X` missed every `return null` (moshi: 515 against the CLI's 577). Every
  // language is checked, so that another grammar package with an unnamed literal shows up here.
  test("every language has a keyword fixture", () => {
    expect(Object.keys(KEYWORD_CASES).sort()).toEqual([...AstLanguage.NAMES].sort())
  })

  for (const [lang, c] of Object.entries(KEYWORD_CASES)) {
    test(`${lang}: \`$X\` matches the same one-word nodes as the CLI`, async () => {
      await using dir = await tmpdir({ [c.file]: c.source })
      const lines = c.source.split("\n")
      const words = (list: { line: number; column: number; text: string }[]) =>
        list
          .filter((m) => /^[A-Za-z_~]+$/.test(m.text))
          .map((m) => `${m.line}:${m.column} ${m.text}`)
          .sort()
      const cli = words(CliOracle.search(dir.path, "$X", lang))
      const result = await AstSearch.run({ directory: dir.path, lang, pattern: "$X" }, { maxStoredMatches: 10_000 })
      const tool = words(
        result.matches
          .filter((m) => m.start.line === m.end.line)
          .map((m) => ({
            line: m.start.line + 1,
            column: m.start.column + 1,
            text: lines[m.start.line].slice(m.start.column, m.end.column),
          })),
      )
      expect(cli.length).toBeGreaterThan(0)
      expect(tool).toEqual(cli)
    })
  }
})

describe("known grammar differences from the CLI 0.51.1 (documented in docs/ast.md)", () => {
  test("Swift: @ast-grep/lang-swift 0.0.8 groups `!items.contains(x)` as a call on `!items`; the CLI's grammar does not (red team A2-3)", async () => {
    // Pinned so that a grammar release fixing it shows up here and the docs can drop the limitation.
    await AstLanguage.load("swift")
    const source =
      "func f(items: [Int], x: Int) async {\n  let a = !items.contains(x)\n  let b = items.contains(x)\n}\n"
    await using dir = await tmpdir({ "a.swift": source })
    const tool = await AstSearch.run({ directory: dir.path, lang: "swift", pattern: "$A.contains($X)" })
    const cli = CliOracle.search(dir.path, "$A.contains($X)", "swift")
    expect(cli.map((m) => `${m.line}:${m.column}`)).toEqual(["3:11"])
    expect(tool.matches.map((m) => `${m.start.line + 1}:${m.start.column + 1}`)).toEqual(["2:11", "3:11"])
    // The extra match starts at the `!`: `$A` is `!items`, so a rewrite `contains($A, $X)` writes `contains(!items, x)`.
    const replaced = await AstReplace.run(
      { directory: dir.path, lang: "swift", pattern: "$A.contains($X)" },
      { rewrite: "contains($A, $X)", dryRun: true },
    )
    expect(replaced.files[0].after).toContain("let a = contains(!items, x)")
  })

  test("Rust: @ast-grep/lang-rust 0.0.7 reads `match &raw {` (a variable named raw) as Rust 2024's `&raw const|mut`; the match is missed where the CLI finds it (real-world tester EF-4)", async () => {
    // Pinned so that a grammar release fixing it shows up here and the docs can drop the limitation.
    await AstLanguage.load("rust")
    const source = "fn try_from(raw: Raw) -> u8 {\n    match &raw {\n        Raw::A => 1,\n        _ => 2,\n    }\n}\n"
    await using dir = await tmpdir({ "d.rs": source })
    const run = (pattern: string) => AstSearch.run({ directory: dir.path, lang: "rust", pattern })
    const at = (ms: { start: { line: number; column: number } }[]) =>
      ms.map((m) => `${m.start.line + 1}:${m.start.column + 1}`)
    expect(CliOracle.search(dir.path, "match $X { $$$ }", "rust").map((m) => `${m.line}:${m.column}`)).toEqual(["2:5"])
    expect(at((await run("match $X { $$$ }")).matches)).toEqual([])
    expect(CliOracle.search(dir.path, "$A => $B", "rust")).toEqual([])
    expect((await run("$A => $B")).matches).toHaveLength(1)
    // A variable by another name parses in both.
    await fs.writeFile(path.join(dir.path, "d.rs"), source.replaceAll("raw", "value"))
    expect(at((await run("match $X { $$$ }")).matches)).toEqual(["2:5"])
  }, 60_000)

  test("C++: @ast-grep/lang-cpp 0.0.6 reads a macro before a template specialization as an ERROR; `std::$X` in its base class is missed where the CLI finds it (real-world tester RW7)", async () => {
    // fmtlib/fmt's test/ranges-test.cc:302 (FMT_BEGIN_NAMESPACE); pinned so that a grammar release fixing it shows up.
    await AstLanguage.load("cpp")
    const source = [
      "FMT_BEGIN_NAMESPACE",
      "template <>",
      "struct range_format_kind<vector_string, char>",
      "    : std::integral_constant<range_format, range_format::string> {};",
      "",
    ].join("\n")
    await using dir = await tmpdir({ "e.cc": source })
    const at = (ms: { start: { line: number; column: number } }[]) =>
      ms.map((m) => `${m.start.line + 1}:${m.start.column + 1}`)
    const run = (pattern: string) => AstSearch.run({ directory: dir.path, lang: "cpp", pattern })
    expect(CliOracle.search(dir.path, "std::$X", "cpp").map((m) => `${m.line}:${m.column}`)).toEqual(["4:7"])
    expect(at((await run("std::$X")).matches)).toEqual([])
    // Without the macro line both read the specialization.
    await fs.writeFile(path.join(dir.path, "e.cc"), source.replace("FMT_BEGIN_NAMESPACE\n", ""))
    expect(at((await run("std::$X")).matches)).toEqual(["3:7"])
  }, 60_000)

  test("C: in a #define whose line a block comment ends, the code after it is an ERROR both grammars recover from differently: the tool finds calls there that the CLI does not (real-world tester RW7)", async () => {
    // The shape of DaveGamble/cJSON's tests/unity/test/tests/testunity.c:26 (VERIFY_FAILS_END). The difference depends
    // on the text's length (error recovery): with the continuation backslashes in column 80 as there, not in 61.
    await AstLanguage.load("c")
    const lines = [
      "#define CHECK_END",
      "    }",
      "    stopSpy(); /* end the spy */",
      "    state.failed = (state.failed == 1) ? 0 : 1;",
      "    if (state.failed == 1) {",
      "      report(state.line);",
      "      putc(':');",
      "      print(state.name);",
      '      print("did not fail");',
      "      putc('\\n');",
    ]
    const source = (width: number) => lines.map((l) => l.padEnd(width) + "\\\n").join("") + "    }\n"
    await using dir = await tmpdir({ "t.c": source(79) })
    const lineOf = (ms: { start: { line: number } }[]) => ms.map((m) => m.start.line + 1)
    const run = (pattern: string) => AstSearch.run({ directory: dir.path, lang: "c", pattern })
    expect(CliOracle.search(dir.path, "$F($$$A);", "c")).toEqual([])
    expect(lineOf((await run("$F($$$A);")).matches)).toEqual([6, 7, 8, 9, 10])
    expect(CliOracle.search(dir.path, "if ($C) { $$$ }", "c")).toEqual([])
    expect(lineOf((await run("if ($C) { $$$ }")).matches)).toEqual([5])
    await fs.writeFile(path.join(dir.path, "t.c"), source(60))
    expect(CliOracle.search(dir.path, "$F($$$A);", "c")).toEqual([])
    expect((await run("$F($$$A);")).matches).toEqual([])
  }, 60_000)
})
