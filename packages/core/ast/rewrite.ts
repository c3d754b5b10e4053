import type { SgNode } from "@ast-grep/napi"

/**
 * Fills an `ast_grep_replace` rewrite template with what the pattern's meta-variables captured, the way the
 * ast-grep CLI does:
 *
 * - `$NAME` and `$$NAME` become the text of a single-node capture, `$$$NAME` the source of a multi-node capture
 *   from its first node to its last (separators included); a name the pattern did not capture in that form becomes
 *   empty text; `$$$` without a name and `$name` (lower case) stay as written.
 * - Every template line after the first is indented like the matched code's line; a multi-line capture keeps its
 *   own relative indentation, re-based on the line the meta-variable sits on. Blank lines stay empty (the CLI
 *   0.51.1 puts the match's indentation on them: trailing whitespace), and tab indentation is kept (the CLI drops it).
 *
 * @example
 * // source: "    foo(a,\n      b)", pattern "foo($$$A)", template "bar(\n  $$$A\n)"
 * AstRewrite.apply(template, node, source) // "bar(\n      a,\n        b\n    )"
 */
export namespace AstRewrite {
  export const META = /(\${1,3})([A-Z_][A-Z0-9_]*)/g

  /**
   * Leading spaces and tabs of the line of `source` holding `index`.
   *
   * @example
   * AstRewrite.lineIndent("a\n    b()", 8) // "    "
   */
  export function lineIndent(source: string, index: number): string {
    const start = source.lastIndexOf("\n", index - 1) + 1
    return /^[ \t]*/.exec(source.slice(start, index))![0]
  }

  /**
   * What meta-variable `name` captured in `match` (a single node, or with `multi` a node sequence), if anything.
   *
   * @example
   * AstRewrite.captured(match, "ARGS", source, true) // { text: "a, b", index: 12 }
   */
  export function captured(
    match: SgNode,
    name: string,
    source: string,
    multi: boolean,
  ): { text: string; index: number } | undefined {
    if (!multi) {
      const single = match.getMatch(name)
      return single ? { text: single.text(), index: single.range().start.index } : undefined
    }
    const multiple = match.getMultipleMatches(name)
    if (!multiple.length) return undefined
    const start = multiple[0].range().start.index
    return { text: source.slice(start, multiple[multiple.length - 1].range().end.index), index: start }
  }

  /**
   * The replacement text for `match` (a node of a tree parsed from `source`).
   *
   * @example
   * AstRewrite.apply("logger.info($$$A)", match, source) // "logger.info(x, y)"
   */
  export function apply(template: string, match: SgNode, source: string): string {
    const base = lineIndent(source, match.range().start.index)
    return fill(template, base, (name, multi) => captured(match, name, source, multi), source)
  }

  /**
   * `apply` over a resolver, for tests and other callers: `resolve(name)` gives the capture and where it starts in
   * `source` (to measure its original indentation).
   *
   * @example
   * AstRewrite.fill("f($A)", "", () => ({ text: "x", index: 0 }), "x") // "f(x)"
   */
  export function fill(
    template: string,
    base: string,
    resolve: (name: string, multi: boolean) => { text: string; index: number } | undefined,
    source: string,
  ): string {
    const lines = template.split("\n")
    return lines
      .map((line, i) => {
        const lineIndentOut = base + /^[ \t]*/.exec(line)![0]
        const substituted = line.replace(META, (_whole, dollars: string, name: string) => {
          const capture = resolve(name, dollars.length === 3)
          if (!capture) return ""
          return reindent(capture.text, lineIndent(source, capture.index), lineIndentOut)
        })
        if (i === 0 || substituted.trim() === "") return substituted
        return base + substituted
      })
      .join("\n")
  }

  /** Lines after the first lose `from` (as far as they have it) and gain `to`. */
  function reindent(text: string, from: string, to: string): string {
    if (!text.includes("\n")) return text
    const [first, ...rest] = text.split("\n")
    return [
      first,
      ...rest.map((line) => {
        if (line.trim() === "") return line.trim()
        let cut = 0
        while (cut < from.length && cut < line.length && line[cut] === from[cut]) cut++
        return to + line.slice(cut)
      }),
    ].join("\n")
  }
}
