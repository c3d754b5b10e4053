import type { SgNode } from "@ast-grep/napi"

/**
 * The parts of a parsed file its grammar could not read: ERROR nodes (text the parser skipped or could not place)
 * and MISSING nodes (zero-width tokens tree-sitter inserts to recover, e.g. a `}` that is not in the text). A match
 * through such a part is the parser's guess, not the code's structure: with `@ast-grep/lang-kotlin` 0.0.7,
 * `val json = $$"…"` (a Kotlin 2.2 string) reads as `val json =`, an ERROR `$$"` and a lambda, so `val $X = $Y`
 * captured only the lambda and the rewrite deleted `$$"`; in `if (unlink) { get(x).next = y }` (`get` is a
 * keyword there) a MISSING `}` ends the block after `get(x).next`, and the template's `}` split the assignment.
 * `ast_grep_replace` neither rewrites such a match nor writes a rewrite that parses worse than the file did
 * (replace.ts).
 *
 * napi does not expose tree-sitter's `is_missing`: a MISSING node is a leaf of zero width (no other visible token
 * has no text), except named content leaves some grammars leave empty (an empty heredoc body, `raw_text`,
 * `quasiquote_body`); a zero-width named leaf counts only when its kind is an identifier, which tree-sitter inserts.
 *
 * @example
 * // Kotlin "val json = $$\"a\"": an ERROR node over `$$"`
 * AstUnparsed.spans(root) // [{ start: 11, end: 14, line: 0 }, …]
 */
export namespace AstUnparsed {
  /** UTF-16 indices of the part, [start, end) (start = end for a MISSING node), and its 0-based line. */
  export type Span = { start: number; end: number; line: number }

  /** ERROR nodes and MISSING leaves of the tree under `root`, in document order. */
  export function spans(root: SgNode): Span[] {
    const out: Span[] = []
    for (const node of root.findAll({ rule: { kind: "ERROR" } })) out.push(span(node))
    for (const node of root.findAll({ rule: { regex: "^$" } })) {
      if (node.children().length || !node.parent()) continue
      if (node.isNamed() && !/identifier$/.test(String(node.kind()))) continue
      out.push(span(node))
    }
    return out.sort((a, b) => a.start - b.start || a.end - b.end)
  }

  function span(node: SgNode): Span {
    const { start, end } = node.range()
    return { start: start.index, end: end.index, line: start.line }
  }

  /**
   * The first of `spans` inside or at an edge of [start, end]: a part ending where the match starts (`$$"` before
   * the lambda a pattern captured) touches it as much as one inside it.
   *
   * @example
   * AstUnparsed.touching([{ start: 11, end: 14, line: 0 }], 14, 30) // { start: 11, end: 14, line: 0 }
   */
  export function touching(spans: readonly Span[], start: number, end: number): Span | undefined {
    return spans.find((s) => s.start <= end && s.end >= start)
  }

  /** All of `spans` inside or at an edge of [start, end]. */
  export function touchingAll(spans: readonly Span[], start: number, end: number): Span[] {
    return spans.filter((s) => s.start <= end && s.end >= start)
  }
}
