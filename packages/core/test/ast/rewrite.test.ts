import { beforeAll, describe, expect, test } from "bun:test"
import { AstFormat } from "../../ast/format"
import { AstLanguage } from "../../ast/languages"
import fs from "fs/promises"
import { AstReplace } from "../../ast/replace"
import { AstRewrite } from "../../ast/rewrite"
import { tmpdir } from "../fixture"
import { CliOracle } from "./cli-oracle"

// The first use of a dynamic language registers all of them, compiling three grammars from source on a fresh
// checkout (about 2 s, more on a busy machine): done once here, with room, rather than inside a 5 s test.
beforeAll(() => AstLanguage.load("python").then(() => undefined), 120_000)

const rewrite = async (source: string, pattern: string, template: string, lang = "typescript", file = "a.ts") => {
  await using dir = await tmpdir({ [file]: source })
  const ours = await AstReplace.run({ directory: dir.path, lang, pattern }, { rewrite: template, dryRun: true })
  CliOracle.rewrite(dir.path, pattern, template, lang)
  return { ours: ours.files[0]?.after ?? source, cli: await fs.readFile(dir.file(file), "utf8"), result: ours }
}

describe("rewrite templates", () => {
  test("$VAR, $$$ARGS (separators kept); $$VAR and $VAR single only; unbound empty; $$$ and $lower literal", async () => {
    const { ours, cli } = await rewrite(
      "foo(a, b)\nconsole.log(x, 'y', 3)\n",
      "console.log($$$ARGS)",
      "logger.info($$$ARGS) /* $$ARGS $UNBOUND $$$ $lower */",
    )
    expect(ours).toBe("foo(a, b)\nlogger.info(x, 'y', 3) /*   $$$ $lower */\n")
    expect(ours).toBe(cli)
    const swap = await rewrite("pair(first, second)\n", "pair($A, $B)", "pair($B, $A, $$B, $$$B)")
    expect(swap.ours).toBe("pair(second, first, second, )\n")
    expect(swap.ours).toBe(swap.cli)
  })

  test("multi-line templates and captures are re-indented like the CLI does (spaces)", async () => {
    const source = "function f() {\n  if (x) {\n    foo(a,\n      b)\n  }\n}\n"
    for (const [pattern, template] of [
      ["foo($$$A)", "bar(\n  $$$A\n)"],
      ["if ($C) { $$$B }", "while ($C) {\n    $$$B\n  }"],
      ["if ($C) { $$$B }", "while ($C) {\n$$$B\n}"],
    ]) {
      const { ours, cli } = await rewrite(source, pattern, template)
      expect(ours).toBe(cli)
      expect(ours).not.toBe(source)
    }
  })

  test("blank lines of the replacement are written empty; the CLI 0.51.1 puts the match's indentation on them", async () => {
    // gson's `if ($C) { $$$B }` over a block with a blank line between statements (the tester's java case).
    const source = "class A {\n  void f() {\n    if (x) {\n      a();\n\n      b();\n    }\n  }\n}\n"
    const { ours, cli } = await rewrite(source, "if ($C) { $$$B }", "if (!($C)) {\n\n  $$$B\n}", "java", "A.java")
    expect(ours).toBe("class A {\n  void f() {\n    if (!(x)) {\n\n      a();\n\n      b();\n    }\n  }\n}\n")
    // The only difference: the CLI's trailing whitespace on the two blank lines (template's and capture's).
    expect(cli.match(/^ +$/gm)).toEqual(["    ", "    "])
    expect(cli.replace(/^ +$/gm, "")).toBe(ours)
  })

  test("tab-indented code gets tab indentation (the CLI 0.51.1 drops it; deliberate difference)", async () => {
    const source = "func f() {\n\tif err != nil {\n\t\treturn err\n\t}\n}\n"
    const { ours } = await rewrite(
      source,
      "if err != nil { $$$B }",
      "if err != nil {\n\tlog(err)\n\t$$$B\n}",
      "go",
      "a.go",
    )
    // $$$B holds Go's newline statement terminator too (as in the CLI), hence the empty line.
    expect(ours).toBe("func f() {\n\tif err != nil {\n\t\tlog(err)\n\t\treturn err\n\n\t}\n}\n")
  })

  test("nested matches: the outermost is rewritten, its captured text copied as is (as the CLI)", async () => {
    const { ours, cli, result } = await rewrite("wrap(wrap(1))\nwrap(2)\n", "wrap($A)", "box($A)")
    expect(ours).toBe("box(wrap(1))\nbox(2)\n")
    expect(ours).toBe(cli)
    expect(result.totalReplacements).toBe(2)
  })

  test("a byte order mark and CRLF line endings stay as the file had them (as the CLI); the diff shows only the match", async () => {
    // The shape of gson's JsonArray.java and plenary's path.lua (BOM + CRLF): napi's commitEdits dropped the BOM.
    const source = "\ufeffconst a = 1\r\nconsole.log(a)\r\nif (a) {\r\n  console.log(a, 2)\r\n}\r\n"
    const { ours, cli, result } = await rewrite(source, "console.log($$$A)", "logger.info($$$A)")
    expect(ours).toBe("\ufeffconst a = 1\r\nlogger.info(a)\r\nif (a) {\r\n  logger.info(a, 2)\r\n}\r\n")
    expect(ours).toBe(cli)
    const diff = AstFormat.replace(result, { directory: "/" }).split("\n")
    expect(diff.filter((l) => /^[-+][^-+]/.test(l))).toEqual([
      "-console.log(a)\r",
      "+logger.info(a)\r",
      "-  console.log(a, 2)\r",
      "+  logger.info(a, 2)\r",
    ])
  })

  test("fill: re-basing of a captured block on the meta-variable's line", () => {
    const source = "    call(a,\n        b)"
    const capture = { text: "a,\n        b", index: source.indexOf("a,") }
    expect(AstRewrite.fill("x(\n  $A\n)", "    ", () => capture, source)).toBe("x(\n      a,\n          b\n    )")
    expect(AstRewrite.lineIndent(source, source.indexOf("b)"))).toBe("        ")
    const only = (name: string, multi: boolean) => (name === "A" && !multi ? { text: "1", index: 0 } : undefined)
    expect(AstRewrite.fill("$A + $B + $$$A", "", only, "1")).toBe("1 +  + ")
  })
})
