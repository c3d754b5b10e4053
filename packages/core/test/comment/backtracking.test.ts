import { describe, expect, test } from "bun:test"
import { AddedLines } from "../../comment/added"
import { CommentCheck } from "../../comment/check"
import { CommentHeuristics } from "../../comment/heuristics"
import { CommentLayout } from "../../comment/layout"
import { CommentSyntax } from "../../comment/syntax"

/**
 * No regex of the comment checker backtracks super-linearly on a long comment. Each case is an input of about 1 MB
 * that once drove one pattern quadratic (minutes to hours at this size); linear code takes milliseconds. The
 * per-test timeout is the only time limit, and each case also asserts the result the short form of the input gets.
 */
const MB = 1 << 20
const TIMEOUT = 30_000
const TS = CommentSyntax.forFile("a.ts")!
const HTML = CommentSyntax.forFile("a.html")!

const cases: { name: string; run: () => void }[] = [
  {
    name: "license names without the word 'license' (check.ts LICENSE_HEADER)",
    run: () => {
      const names = "mit ".repeat(MB / 4)
      const plain = CommentCheck.judge(AddedLines.fromWrite("/r/a.ts", "", `// ${names}\nconst x = 1\n`), "normal")!
      expect(plain.density.comments).toBe(1)
      // The same run ending in the word is a license header and is not judged.
      const header = CommentCheck.judge(
        AddedLines.fromWrite("/r/a.ts", "", `// ${names}license\nconst x = 1\n`),
        "normal",
      )!
      expect(header.flagged).toBe(false)
      expect(header.density.comments).toBe(0)
    },
  },
  {
    name: "a long run of capitals (heuristics.ts normalize)",
    run: () => {
      expect(CommentHeuristics.normalize("A".repeat(MB))).toBe("a".repeat(MB))
      expect(CommentHeuristics.normalize("A".repeat(MB) + "Bc")).toBe("a".repeat(MB) + " bc")
      expect(["HTTPServer", "parseHTMLDoc", "ABC", "myXMLHttpRequest"].map(CommentHeuristics.normalize)).toEqual([
        "http server",
        "parse html doc",
        "abc",
        "my xml http request",
      ])
    },
  },
  {
    name: "closing brackets not ending a statement (heuristics.ts codeLine)",
    run: () => {
      expect(CommentHeuristics.codeLine(")".repeat(MB) + "x")).toBe(false)
      expect(CommentHeuristics.codeLine(")".repeat(MB) + ");")).toBe(true)
    },
  },
  {
    name: "a long third word before a closing brace (heuristics.ts codeLine)",
    run: () => {
      expect(CommentHeuristics.codeLine("Aa a a" + "a".repeat(MB) + "}")).toBe(true)
      expect(CommentHeuristics.codeLine("Close the " + "a".repeat(MB) + " stream. }")).toBe(false)
    },
  },
  {
    name: "a statement keyword before a long word (heuristics.ts codeLine)",
    run: () => {
      expect(CommentHeuristics.codeLine("return !" + '"'.repeat(MB) + " x")).toBe(false)
      expect(CommentHeuristics.codeLine("return !" + '"'.repeat(MB) + " &&")).toBe(true)
    },
  },
  {
    name: "a long run of '*' inside a block comment (syntax.ts stripInner)",
    run: () => {
      const stars = "*".repeat(MB)
      const open = CommentSyntax.extract(["/**", " * x" + stars + "x", " */", "f()"], TS).comments
      expect(open.map((c) => c.text)).toEqual(["x" + stars + "x"])
      // A `*/` left at the end of a line (the comment closes otherwise) goes with all the `*` before it.
      const closed = CommentSyntax.extract(["<!--", " * x" + stars + "x" + stars + "/", "-->"], HTML).comments
      expect(closed.map((c) => c.text)).toEqual(["x" + stars + "x"])
    },
  },
  {
    name: "a long function head and a long run of sibling blocks (layout.ts cDefinition, headings)",
    run: () => {
      const head = "f(" + "/* (".repeat(MB / 4)
      expect(CommentLayout.cDefinition(["int", head + ")", "{"], 0)).toBe(false)
      expect(CommentLayout.cDefinition(["int", "f(int a)", "{"], 0)).toBe(true)
      const block = ['test "x" do', "  y", "end", ""]
      const lines = ["# Parse tests", ...Array.from({ length: MB / 16 }, () => block).flat()]
      const { kinds, comments } = CommentSyntax.extract(lines, CommentSyntax.forFile("a.rb")!)
      expect([...CommentLayout.headings(lines, kinds, comments)]).toEqual([0])
    },
  },
]

describe("comment checker: no super-linear regex backtracking on a 1 MB comment", () => {
  for (const c of cases) test(c.name, c.run, TIMEOUT)
})
