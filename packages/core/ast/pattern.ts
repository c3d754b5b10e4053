import { parse, type SgNode } from "@ast-grep/napi"
import z from "zod"
import { NamedError, errorMessage } from "../util/error"

/**
 * A checked ast-grep pattern and the literal tokens any match must contain.
 *
 * ast-grep compares named leaves (identifiers, literals) by their text and unnamed tokens (keywords, punctuation)
 * by their kind, so every named leaf of the pattern that is not a meta-variable occurs verbatim in a matching file,
 * and every keyword occurs up to letter case (PHP keywords are case-insensitive). Files lacking one of them cannot
 * match and are never parsed: that pre-filter is what makes the in-process search faster than the CLI on most
 * patterns. Patterns that do not parse cleanly get no pre-filter (and a warning, as the CLI gives).
 *
 * @example
 * const p = AstPattern.compile("TypeScript", "typescript", "console.log($$$ARGS)")
 * p.literals // ["console", "log"]
 * p.mayMatch("console.log(1)") // true
 * p.mayMatch("print(1)") // false
 */
export namespace AstPattern {
  export const Invalid = NamedError.create(
    "InvalidPattern",
    z.object({ pattern: z.string(), lang: z.string(), reason: z.string() }),
    (d) => `invalid ${d.lang} pattern ${JSON.stringify(d.pattern)}: ${d.reason}`,
  )

  export type Compiled = {
    pattern: string
    /** Named leaf texts every match contains verbatim. */
    literals: string[]
    /** Keyword tokens every match contains, compared ignoring case. */
    keywords: string[]
    /** Set when the pattern contains a syntax error node: it may match nothing or behave unexpectedly. */
    warning?: string
    /** False when no literal or keyword constrains the pattern: every file may match. */
    selective: boolean
    /** False when `text` cannot contain a match. */
    mayMatch(text: string): boolean
  }

  /** Meta-variable names: `$NAME`, `$$NAME`, `$$$NAME` with NAME in [A-Z_][A-Z0-9_]*. */
  export const META = /\${1,3}[A-Z_][A-Z0-9_]*/

  /**
   * Rewrites a pattern the way ast-grep does for languages where `$` cannot start an identifier: a run of `$` before
   * an upper-case letter or `_`, or `$$$` alone, becomes that many expando characters.
   *
   * @example
   * AstPattern.expand("print($A, $$$R)", "µ") // "print(µA, µµµR)"
   */
  export function expand(pattern: string, expando: string): string {
    if (expando === "$") return pattern
    return pattern.replace(/\$+/g, (run, offset: number) => {
      const next = pattern[offset + run.length] ?? ""
      return /[A-Z_]/.test(next) || run.length === 3 ? expando.repeat(run.length) : run
    })
  }

  /**
   * Checks `pattern` for language id `napiLang` (throws `Invalid` with ast-grep's reason) and extracts its literals.
   *
   * @example
   * AstPattern.compile("python", "python", "print($A)", "µ").literals // ["print"]
   */
  export function compile(napiLang: string, lang: string, pattern: string, expando = "$"): Compiled {
    if (!pattern.trim()) throw new Invalid({ pattern, lang, reason: "the pattern is empty" })
    try {
      // The same call a search makes, on an empty document: surfaces ast-grep's own pattern errors.
      parse(napiLang, "").root().findAll(pattern)
    } catch (error) {
      throw new Invalid({ pattern, lang, reason: errorMessage(error).replace(/\s+/g, " ").trim() })
    }
    const expanded = expand(pattern, expando)
    const root = parse(napiLang, expanded).root()
    const hasError = root.kind() === "ERROR" || root.find({ rule: { kind: "ERROR" } }) !== null
    const literals = new Set<string>()
    const keywords = new Set<string>()
    if (!hasError) collect(root, metaSpans(expanded, expando), literals, keywords)
    const literalList = [...literals].sort((a, b) => b.length - a.length)
    const keywordList = [...keywords]
    const keywordTests = keywordList.map((k) => ({ exact: k, any: new RegExp(escape(k), "i") }))
    return {
      pattern,
      literals: literalList,
      keywords: keywordList,
      warning: hasError
        ? `the pattern does not parse as complete ${lang} code (it contains a syntax error node), so it may match ` +
          "nothing; write a full statement or expression, e.g. a whole call or declaration"
        : undefined,
      selective: literalList.length + keywordList.length > 0,
      mayMatch(text) {
        for (const literal of literalList) if (!text.includes(literal)) return false
        // The exact spelling is by far the most common; the case-insensitive test runs only when it is absent.
        for (const test of keywordTests) if (!text.includes(test.exact) && !test.any.test(text)) return false
        return true
      },
    }
  }

  /** [start, end) of every meta-variable in the (expanded) pattern, in UTF-16 units like napi's indices. */
  function metaSpans(source: string, expando: string): [number, number][] {
    const sigil = expando === "$" ? "\\$" : `(?:\\$|${escape(expando)})`
    const spans: [number, number][] = []
    for (const m of source.matchAll(new RegExp(`${sigil}{1,3}[A-Z_][A-Z0-9_]*|${sigil}{3}`, "g")))
      spans.push([m.index!, m.index! + m[0].length])
    return spans
  }

  function collect(node: SgNode, metas: [number, number][], literals: Set<string>, keywords: Set<string>) {
    const children = node.children()
    if (children.length === 0) {
      const text = node.text()
      if (!text || String(node.kind()).includes("comment")) return
      const { start, end } = node.range()
      // Part of a meta-variable (bash parses `$A` as `$` + `A`): not literal text of the matched code.
      if (metas.some(([a, b]) => start.index < b && end.index > a)) return
      if (node.isNamed()) literals.add(text)
      else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(text)) keywords.add(text)
      return
    }
    for (const child of children) collect(child, metas, literals, keywords)
  }

  function escape(text: string) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  }
}
