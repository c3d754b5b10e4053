import { beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { AstFormat } from "../../ast/format"
import { AstLanguage } from "../../ast/languages"
import { AstReplace } from "../../ast/replace"
import { AstSearch } from "../../ast/search"
import { AstTools } from "../../ast/tools"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import { CliOracle } from "./cli-oracle"

// Real-world tester AT: differences from the ast-grep CLI 0.51.1 found on held-out public repositories
// (square/moshi, Moya/Moya, redis/hiredis, jarro2783/cxxopts, com-lihaoyi/os-lib, spf13/pflag), reduced to small
// fixtures written for these tests. Each compares with the CLI (`CliOracle`) on the same input.

// The first use of a dynamic language registers all of them, compiling three grammars from source on a fresh
// checkout: done once here, with room, rather than inside a 5 s test.
beforeAll(() => AstLanguage.load("kotlin").then(() => undefined), 120_000)

const DOC = path.join(import.meta.dir, "../../../../docs/ast.md")

/** The tool's matches as `file:line:column|text` (1-based, columns in code points), like `cliMatches`. */
async function toolMatches(dir: string, lang: string, pattern: string) {
  const result = await AstSearch.run({ directory: dir, lang, pattern }, { maxStoredMatches: 10_000 })
  return result.matches.map((m) => {
    const lines = fs.readFileSync(m.file, "utf8").split("\n")
    const span = lines.slice(m.start.line, m.end.line + 1)
    span[span.length - 1] = span[span.length - 1].slice(0, m.end.column)
    span[0] = span[0].slice(m.start.column)
    const column = [...lines[m.start.line].slice(0, m.start.column)].length + 1
    return `${path.basename(m.file)}:${m.start.line + 1}:${column}|${span.join("\n")}`
  })
}

function cliMatches(dir: string, lang: string, pattern: string) {
  return CliOracle.search(dir, pattern, lang).map((m) => `${path.basename(m.file)}:${m.line}:${m.column}|${m.text}`)
}

/** The CLI's `-U` result for `file`, on a copy of `files`. */
async function cliRewrite(files: Record<string, string>, lang: string, pattern: string, rewrite: string, file: string) {
  await using copy = await tmpdir(files)
  CliOracle.rewrite(copy.path, pattern, rewrite, lang)
  return fs.readFileSync(copy.file(file), "utf8")
}

/** The tool's dry-run result for `file` (its text unchanged when the replace leaves it alone). */
async function toolRewrite(dir: string, lang: string, pattern: string, rewrite: string, file: string) {
  const result = await AstReplace.run({ directory: dir, lang, pattern }, { rewrite, dryRun: true })
  const change = result.files.find((f) => path.basename(f.file) === file)
  return { result, after: change ? change.after : fs.readFileSync(path.join(dir, file), "utf8") }
}

describe("AT-1 Kotlin null / Swift nil: a single meta-variable captures them, as in the CLI", () => {
  // moshi @ 889013ec: `return $X` CLI 577 / tool 515, 55 of the 62 missing were `return null`. Moya @ 10a9dd15:
  // `$A != $B` CLI 35 / tool 19 (every `x != nil`), `self.$X = $Y` missed `self.request = nil`. The class check over
  // the 25 languages is `languages.test.ts › a meta-variable matches the literal keywords the CLI's grammar names`.
  const KT = "fun f(): Any? {\n  val a = null\n  val b = 1\n  return null\n}\n"
  const SWIFT = "func f(x: Int?) -> Bool {\n    let a: Int? = nil\n    self.request = nil\n    return x != nil\n}\n"
  const cases = [
    ["kotlin", "a.kt", KT, "val $A = $B"],
    ["kotlin", "a.kt", KT, "return $X"],
    ["kotlin", "a.kt", KT, "return $_"],
    ["swift", "a.swift", SWIFT, "$A != $B"],
    ["swift", "a.swift", SWIFT, "let $A: $T = $B"],
    ["swift", "a.swift", SWIFT, "self.$X = $Y"],
  ] as const
  for (const [lang, file, source, pattern] of cases) {
    test(`${lang} \`${pattern}\`: the CLI's matches`, async () => {
      await using dir = await tmpdir({ [file]: source })
      const cli = cliMatches(dir.path, lang, pattern)
      expect(cli.some((m) => /(null|nil)$/.test(m))).toBe(true)
      expect(await toolMatches(dir.path, lang, pattern)).toEqual(cli)
    })
  }

  test("a rewrite through the literal writes what the CLI writes; `$X` still matches named nodes only", async () => {
    const files = { "a.kt": KT }
    await using dir = await tmpdir(files)
    const cli = await cliRewrite(files, "kotlin", "return $X", "return ($X)", "a.kt")
    expect(cli).toContain("return (null)")
    expect((await toolRewrite(dir.path, "kotlin", "return $X", "return ($X)", "a.kt")).after).toBe(cli)
    // `f($X)` still does not match `f()`: the second reading admits the literal, not punctuation.
    await using calls = await tmpdir({ "b.kt": "fun g() {\n  f()\n  f(null)\n  f(x)\n}\n" })
    expect(await toolMatches(calls.path, "kotlin", "f($X)")).toEqual(cliMatches(calls.path, "kotlin", "f($X)"))
  })
})

describe("AT-2 a rewrite through code the grammar could not read (ERROR or MISSING nodes) is not made, and said so", () => {
  // moshi GeneratedAdaptersTest.kt:69 `val json = $$"{\"$foo\": \"bar\"}"` (a Kotlin 2.2 string): the tool's grammar
  // reads `val json =`, an ERROR `$$"` and a lambda; `$Y` captured only the lambda and the rewrite deleted `$$"`,
  // reported as "Replaced 1 match".
  test('Kotlin `$$"…"`: that match is left as it is and named; the file\'s other matches are rewritten as the CLI rewrites them', async () => {
    const files = { "a.kt": 'fun f() {\n  val json = $$"{\\"$foo\\": \\"bar\\"}"\n  println(json)\n  val n = 1\n}\n' }
    await using dir = await tmpdir(files)
    const cli = await cliRewrite(files, "kotlin", "val $X = $Y", "val $X: Any = $Y", "a.kt")
    expect(cli).toContain('val json: Any = $$"{\\"$foo\\": \\"bar\\"}"')
    const { result, after } = await toolRewrite(dir.path, "kotlin", "val $X = $Y", "val $X: Any = $Y", "a.kt")
    // The CLI's grammar reads the string, so only that line differs: the tool keeps it as it was.
    expect(after).toBe(cli.replace('val json: Any = $$"', () => 'val json = $$"'))
    expect(result.skipped).toEqual([{ file: dir.file("a.kt"), line: 2, column: 3, reason: "unparsed" }])
    const text = AstFormat.replace(result, { directory: dir.path })
    expect(text).toStartWith("Dry run: would replace 1 match in 1 file")
    expect(text).toContain("[WARNING] 1 match not rewritten: the kotlin grammar could not read the code it touches")
    expect(text).toContain("Check and edit it by hand: a.kt:2:3.")
  })

  // moshi LinkedHashTreeMap.kt:280 `if (unlink) { knownNotNull(node.prev).next = node.next … }`: `get` is a keyword
  // there, the grammar inserts a MISSING `}` after `get(node.prev).next`, so `$$$B` ended there and the template's
  // `}` split the assignment (`… .next\n    } = node.next`).
  test("Kotlin `if ($C) { $$$B }` over `get(x).next = y`: a live replace leaves it, names it, and writes the other file", async () => {
    const files = {
      "a.kt":
        "class T {\n  fun remove(node: Node, unlink: Boolean) {\n    if (unlink) {\n      get(node.prev).next = node.next\n      node.prev = null\n    }\n  }\n}\n",
      "b.kt": "fun g(ok: Boolean) {\n  if (ok) {\n    done()\n  }\n}\n",
    }
    await using dir = await tmpdir(files)
    const rewrite = "if ($C) {\n  log()\n  $$$B\n}"
    const tools = AstTools.create({ directory: dir.path, worktree: dir.path, log: Logger.silent })
    const text = await tools.ast_grep_replace.execute(
      { pattern: "if ($C) { $$$B }", rewrite, lang: "kotlin", dryRun: false },
      {
        sessionID: "s",
        messageID: "m",
        agent: "build",
        directory: dir.path,
        worktree: dir.path,
        abort: new AbortController().signal,
        metadata() {},
        async ask() {},
      } as never,
    )
    expect(text).toStartWith("Replaced 1 match in 1 file")
    expect(text).toContain("Check and edit it by hand: a.kt:3:5.")
    expect(fs.readFileSync(dir.file("a.kt"), "utf8")).toBe(files["a.kt"])
    // The clean file is rewritten exactly as the CLI rewrites it.
    const cli = await cliRewrite(files, "kotlin", "if ($C) { $$$B }", rewrite, "b.kt")
    expect(fs.readFileSync(dir.file("b.kt"), "utf8")).toBe(cli)
    expect(cli).toContain("log()")
  })

  test("inside a capture, such code is copied as it was: the match is rewritten, as in the CLI, and named in a note", async () => {
    const files = { "a.kt": 'fun f() {\n  val json = $$"{\\"$foo\\": 1}"\n  println(json)\n}\n\nfun g() {\n  h()\n}\n' }
    await using dir = await tmpdir(files)
    const pattern = "fun $F() { $$$B }"
    const rewrite = '@Deprecated("x")\nfun $F() { $$$B }'
    const { result, after } = await toolRewrite(dir.path, "kotlin", pattern, rewrite, "a.kt")
    expect(after).toBe(await cliRewrite(files, "kotlin", pattern, rewrite, "a.kt"))
    expect(after).toContain('fun f() { val json = $$"{\\"$foo\\": 1}"')
    expect([result.totalReplacements, result.skipped.length]).toEqual([2, 0])
    expect(AstFormat.replace(result, { directory: dir.path })).toContain(
      "[NOTE] 1 rewritten match holds code the kotlin grammar could not read, inside what the pattern captured: " +
        "copied as it was; check the diff there: a.kt:1:1.",
    )
  })

  test("the rule holds in every language: Python, a match touching a syntax error is left; the CLI rewrites it", async () => {
    const files = { "a.py": "foo(1)\nfoo(a b)\nfoo(2)\n" }
    await using dir = await tmpdir(files)
    const { result, after } = await toolRewrite(dir.path, "python", "foo($$$A)", "bar($$$A)", "a.py")
    expect(after).toBe("bar(1)\nfoo(a b)\nbar(2)\n")
    expect(result.skipped.map((s) => [s.line, s.reason])).toEqual([[2, "unparsed"]])
    expect(await cliRewrite(files, "python", "foo($$$A)", "bar($$$A)", "a.py")).toBe("bar(1)\nbar(a b)\nbar(2)\n")
  })

  test("a rewrite that leaves code parsing worse than before is not made where it breaks it (the CLI writes it)", async () => {
    // `f($A)` → `$A: 1`: a labelled statement where the call is a statement, a syntax error inside an array.
    const files = { "a.js": "f(a)\nconst x = [f(b)]\n" }
    await using dir = await tmpdir(files)
    const { result, after } = await toolRewrite(dir.path, "javascript", "f($A)", "$A: 1", "a.js")
    expect(after).toBe("a: 1\nconst x = [f(b)]\n")
    expect(result.skipped.map((s) => `${s.line}:${s.column} ${s.reason}`)).toEqual(["2:12 breaks"])
    expect(AstFormat.replace(result, { directory: dir.path })).toContain(
      "[WARNING] 1 match not rewritten: the file rewritten there would parse worse than before",
    )
    expect(await cliRewrite(files, "javascript", "f($A)", "$A: 1", "a.js")).toBe("a: 1\nconst x = [b: 1]\n")
    // When nothing is left to rewrite, the header says so instead of "No matches".
    const none = await AstReplace.run(
      { directory: dir.path, lang: "javascript", pattern: "f($A)" },
      { rewrite: "g($A", dryRun: false },
    )
    expect([none.totalReplacements, none.skipped.length, none.written]).toEqual([0, 2, false])
    expect(AstFormat.replace(none, { directory: dir.path })).toStartWith("Nothing replaced: 2 matches found")
    expect(fs.readFileSync(dir.file("a.js"), "utf8")).toBe(files["a.js"])
  })

  test("an edit whose new parse error shows up away from it costs only itself, not the file's other edits", async () => {
    // moshi -JsonUtf8Reader.kt: `if ($C) { $$$B }` + `println()` on an `if … else` that is a `when` branch's value
    // leaves an ERROR at the next branch in the tool's grammar (the CLI's reads it); before, all 54 `if` rewrites of
    // the file were dropped with it.
    const files = {
      "a.kt":
        "fun f(c: Char) = when (c) {\n  '}' ->\n    if (a) {\n      b()\n      X\n    } else {\n      throw e\n    }\n\n  else -> {\n    g()\n  }\n}\n\nfun h() {\n  if (ok) {\n    done()\n  }\n}\n",
    }
    await using dir = await tmpdir(files)
    const rewrite = "if ($C) {\n  println()\n  $$$B\n}"
    const { result, after } = await toolRewrite(dir.path, "kotlin", "if ($C) { $$$B }", rewrite, "a.kt")
    expect(result.skipped.map((s) => `${s.line}:${s.column} ${s.reason}`)).toEqual(["3:5 breaks"])
    expect(after).toBe(files["a.kt"].replace("if (ok) {\n", "if (ok) {\n    println()\n"))
    const cli = await cliRewrite(files, "kotlin", "if ($C) { $$$B }", rewrite, "a.kt")
    expect(cli).toContain("if (a) {\n      println()\n      b()")
    expect(cli).toContain("if (ok) {\n    println()\n    done()")
  })
})

describe("AT-3 C/C++ preprocessor directives with a trailing comment: the CLI's range", () => {
  // hiredis @ 29ea2791: `#include $X` 295 = 295 but 13 texts differed (`#include <string.h> // for memset` ended
  // before its newline, the CLI's after it); cxxopts @ a3a21b31: 3 in test/catch.hpp.
  const SRC = "#include <string.h> // for memset\n#include <stdio.h>\n#include <stddef.h> /* for size_t */\nint x;\n"
  for (const [lang, file] of [
    ["c", "a.c"],
    ["cpp", "a.cpp"],
  ] as const) {
    test(`${lang}: \`#include $X\` match texts equal the CLI's, the newline after a trailing comment included`, async () => {
      await using dir = await tmpdir({ [file]: SRC })
      expect(await toolMatches(dir.path, lang, "#include $X")).toEqual(cliMatches(dir.path, lang, "#include $X"))
    })
  }

  test("a rewrite keeps each directive's line break (the CLI's replaces it and joins the lines)", async () => {
    const files = { "a.c": SRC }
    await using dir = await tmpdir(files)
    const { after } = await toolRewrite(dir.path, "c", "#include $X", "#include $X // ok", "a.c")
    expect(after).toBe("#include <string.h> // ok\n#include <stdio.h> // ok\n#include <stddef.h> // ok\nint x;\n")
    expect(await cliRewrite(files, "c", "#include $X", "#include $X // ok", "a.c")).toBe(
      "#include <string.h> // ok#include <stdio.h> // ok#include <stddef.h> // okint x;\n",
    )
  })
})

describe("AT-4 Kotlin ranges that differ from the CLI's, documented", () => {
  test("trailing lambdas: the tool's `$A.$B($$$C)` ends at `)`, the CLI's takes the lambda (and its rewrite deletes it)", async () => {
    // moshi: `$A.$B($$$C)` 30 ranges differ (`typeVariables.joinToString(", ") { it.name }`).
    const files = { "a.kt": 'fun f() {\n  val s = vars.joinToString(", ") { it.name }\n}\n' }
    await using dir = await tmpdir(files)
    expect(cliMatches(dir.path, "kotlin", "$A.$B($$$C)")).toEqual(['a.kt:2:11|vars.joinToString(", ") { it.name }'])
    expect(await toolMatches(dir.path, "kotlin", "$A.$B($$$C)")).toEqual(['a.kt:2:11|vars.joinToString(", ")'])
    const rewrite = "$A.joinToString(separator = $S)"
    expect(await cliRewrite(files, "kotlin", "$A.joinToString($S)", rewrite, "a.kt")).toContain(
      'vars.joinToString(separator = ", ")\n',
    )
    const { after } = await toolRewrite(dir.path, "kotlin", "$A.joinToString($S)", rewrite, "a.kt")
    expect(after).toContain('vars.joinToString(separator = ", ") { it.name }\n')
    expect(fs.readFileSync(DOC, "utf8").includes("at-realworld.test.ts › AT-4")).toBe(true)
  })

  test("imports: the CLI's match also runs over the comments before a declaration that starts with a modifier", async () => {
    // moshi Iso8601Utils.kt:25: import, `/* … */`, KDoc, `private const val`; the CLI's `-U` deleted both comments.
    const files = { "a.kt": "import a.B\n\n/* c */\n/** kdoc */\nprivate const val X = 1\n" }
    await using dir = await tmpdir(files)
    expect(cliMatches(dir.path, "kotlin", "import $X")).toEqual(["a.kt:1:1|import a.B\n\n/* c */\n/** kdoc */"])
    expect(await toolMatches(dir.path, "kotlin", "import $X")).toEqual(["a.kt:1:1|import a.B"])
    const doc = fs.readFileSync(DOC, "utf8").replace(/\s+/g, " ")
    expect(doc.includes("where the CLI's Kotlin grammar ends it with the import line.")).toBe(false)
  })
})

describe("AT-5 Scala: the CLI's grammar ends some expressions after the next line's indentation", () => {
  test("a `while` with a `try … catch` body: the CLI's rewrite has a whitespace-only line the tool's has not", async () => {
    // os-lib @ e237000c WatchServiceWatcher.scala: tree-sitter-scala 0.26 (the CLI) ends the `while` after `\n  `,
    // `@ast-grep/lang-scala` 0.0.7 (tree-sitter-scala 0.24.0) at its `}`; nothing else differs.
    const files = {
      "a.scala":
        "object O {\n  def run(): Unit = {\n    while (ok())\n      try {\n        a()\n      } catch {\n        case e: Exception =>\n          b(e)\n      }\n  }\n}\n",
    }
    await using dir = await tmpdir(files)
    const pattern = "def $F($$$P): $T = { $$$B }"
    const rewrite = "def $F($$$P): $T = {\n  $$$B\n}"
    const cli = await cliRewrite(files, "scala", pattern, rewrite, "a.scala")
    expect(cli).toContain("      }\n  \n  }\n")
    const { after } = await toolRewrite(dir.path, "scala", pattern, rewrite, "a.scala")
    expect(after).toBe(cli.replace("      }\n  \n  }\n", "      }\n  }\n"))
    expect(fs.readFileSync(DOC, "utf8").includes("at-realworld.test.ts › AT-5")).toBe(true)
  })
})

describe("AT-6 tab-indented code is re-indented as the CLI re-indents the same code indented with spaces", () => {
  test("Go: a multi-line capture's later lines move as they do with spaces (the CLI 0.51.1 counts only spaces)", async () => {
    // pflag @ 5fdac2d1 flag.go: the CLI left every line of a tab-indented `$$$B` where it was; with spaces it moves
    // them, as the tool does with either.
    const tabs =
      "package main\n\nfunc f() error {\n\tif err != nil {\n\t\tswitch mode {\n\t\tcase 1:\n\t\t\treturn err\n\t\t}\n\t}\n\treturn nil\n}\n"
    const spaces = tabs.replace(/\t/g, "    ")
    const pattern = "if err != nil { $$$B }"
    const rewrite = "if err != nil { log.Print(err); $$$B }"
    await using dir = await tmpdir({ "a.go": tabs })
    const { after } = await toolRewrite(dir.path, "go", pattern, rewrite, "a.go")
    const cliSpaces = await cliRewrite({ "a.go": spaces }, "go", pattern, rewrite, "a.go")
    expect(after).toBe(cliSpaces.replace(/ {4}/g, "\t"))
    expect(after).toContain("switch mode {\n\tcase 1:\n\t\treturn err\n")
    // The CLI itself leaves tab-indented lines alone.
    expect(await cliRewrite({ "a.go": tabs }, "go", pattern, rewrite, "a.go")).toContain(
      "\t\tcase 1:\n\t\t\treturn err\n",
    )
    expect(fs.readFileSync(DOC, "utf8").includes("at-realworld.test.ts › AT-6")).toBe(true)
  })
})
