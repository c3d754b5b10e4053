import { parse, type SgNode } from "@ast-grep/napi"
import { AstMatch } from "./match"
import { AstPattern } from "./pattern"

/**
 * Fills an `ast_grep_replace` rewrite template with what the pattern's meta-variables captured, the way the
 * ast-grep CLI does:
 *
 * - `$NAME` and `$$NAME` become the text of a single-node capture, `$$$NAME` the source of a multi-node capture
 *   from its first node to its last (separators included); a name the pattern did not capture in that form becomes
 *   empty text; `$$$` without a name and `$name` (lower case) stay as written.
 * - Every template line after the first is indented like the matched code's line; the later lines of a multi-line
 *   capture move by the difference between the capture's line indentation and the meta-variable's template line (a
 *   line lacking the whole difference keeps its own), then get the match's line indentation, as in the CLI. Blank
 *   lines stay empty (the CLI 0.51.1 puts the match's indentation on them: trailing whitespace), and tab indentation
 *   is kept (the CLI drops it).
 * - A capture's line that begins inside a string literal (template string, triple-quoted, raw string, heredoc, …)
 *   is kept byte for byte: its indentation is part of the string's value (the CLI re-indents it too).
 *
 * @example
 * // source: "    foo(a,\n      b)", pattern "foo($$$A)", template "bar(\n  $$$A\n)"
 * AstRewrite.apply(template, node, source) // "bar(\n      a,\n        b\n    )"
 */
export namespace AstRewrite {
  export const META = /(\${1,3})([A-Z_][A-Z0-9_]*)/g

  /**
   * How ast-grep reads the pattern: the napi language id and the expando character that stands for `$` in it
   * (`AstLanguage.expando`). Without one, every `$NAME` of the pattern's text counts as a meta-variable.
   */
  export type Reading = { napiLang: string; expando: string }

  /**
   * The meta-variables of `pattern` that capture, by form: `single` for `$NAME`/`$$NAME`, `multi` for `$$$NAME`.
   * A name starting with `_` (`$_`, `$_X`) matches without capturing, as in ast-grep. With `reading`, only what
   * ast-grep takes as a meta-variable: a node of the parsed pattern whose whole text is `$NAME` (ast-grep's rule);
   * `$HOME` inside a longer string (`"echo $HOME"`) is text, matched literally and never captured, while a string
   * that is only `"$HOME"` captures the string's content (ast-grep 0.51.1, napi and CLI).
   *
   * @example
   * AstRewrite.captures("f($A, $$$R, $_)") // { single: ["A"], multi: ["R"] }
   * AstRewrite.captures('exec("echo $HOME", $A)', { napiLang: "JavaScript", expando: "$" }) // { single: ["A"], multi: [] }
   */
  export function captures(pattern: string, reading?: Reading): { single: string[]; multi: string[] } {
    const whole = reading ? metaNodes(pattern, reading) : undefined
    const single = new Set<string>()
    const multi = new Set<string>()
    for (const [text, dollars, name] of pattern.matchAll(META)) {
      if (name.startsWith("_")) continue
      if (whole && !whole.has(text)) continue
      ;(dollars.length === 3 ? multi : single).add(name)
    }
    return { single: [...single], multi: [...multi] }
  }

  /**
   * The meta-variables (as written, `$A`, `$$$R`) that are the whole text of a node of `pattern` parsed as ast-grep
   * parses it (`$` runs before a name replaced by the expando character); undefined when the pattern cannot be parsed
   * (the text reading is used then).
   */
  function metaNodes(pattern: string, reading: Reading): Set<string> | undefined {
    const e = reading.expando
    const expanded = AstPattern.expand(pattern, e)
    const escaped = e.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    const meta = new RegExp(`^((?:${escaped}){1,3})([A-Z_][A-Z0-9_]*)$`, "u")
    let root: SgNode
    try {
      root = parse(reading.napiLang, expanded).root()
    } catch {
      return undefined
    }
    const out = new Set<string>()
    const visit = (node: SgNode) => {
      const m = meta.exec(node.text())
      if (m) out.add("$".repeat([...m[1]].length / [...e].length) + m[2])
      for (const child of node.children()) visit(child)
    }
    visit(root)
    return out
  }

  /** The pattern's capturing meta-variables as written (`$A`, `$$$ARGS`). */
  export function capturedNames(pattern: string, reading?: Reading): string[] {
    const { single, multi } = captures(pattern, reading)
    return [...single.map((n) => "$" + n), ...multi.map((n) => "$$$" + n)]
  }

  /** How to fix a rewrite with uncaptured meta-variables (the replace's error and its dry run's warning say it). */
  export const UNCAPTURED_HELP =
    "Use the pattern's names in the same form ($NAME for $NAME, $$$NAME for $$$NAME). In a rewrite, $ followed by " +
    "upper-case letters, digits or _ is always a meta-variable, and a name starting with _ never captures; for " +
    "literal text such as a shell variable write ${HOME} instead of $HOME, or capture it in the pattern."

  /**
   * The meta-variables `template` names, as written, that `pattern` does not capture in that form: each would be
   * filled with nothing (`$$$ARGS` for a pattern's `$$$A`, `$A` for a pattern's `$$$A`, `$_`, a shell `$HOME`).
   * Text that is not ast-grep meta-variable syntax (`$` then upper-case letters, digits or `_`) is not named:
   * `"$1"`, `$home`, `${HOME}` stay as written.
   *
   * @example
   * AstRewrite.uncaptured("log($$$ARGS, $A)", "print($$$A)") // ["$$$ARGS", "$A"]
   */
  export function uncaptured(template: string, pattern: string, reading?: Reading): string[] {
    const { single, multi } = captures(pattern, reading)
    const missing = new Set<string>()
    for (const [whole, dollars, name] of template.matchAll(META)) {
      const found = dollars.length === 3 ? multi.includes(name) : single.includes(name)
      if (!found) missing.add(whole)
    }
    return [...missing]
  }

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

  /** What a meta-variable captured: its text, where it starts in the source, and which of its newlines lie in a literal. */
  export type Capture = {
    text: string
    index: number
    /** Source indices of the capture's newlines that lie inside a string literal (the next line is kept as is). */
    literal?: Set<number>
  }

  // Node kinds whose text is the value of a string: strings, their fragments, template strings, raw strings,
  // heredocs (their terminator line included), Java text blocks, Elixir sigils, Haskell quasi-quotes, Nix and HCL
  // templates. A newline inside one is part of the value, and so is the indentation after it.
  const LITERAL =
    /(^|_)(string|heredoc|nowdoc|text_block|sigil|quasiquote|charlist)(_|$)|^(template_string|template_literal|quoted_template|multi_line_str_text)$/
  // Code inside a literal (`${…}`, `#{…}`, `{…}` of an f-string, `$(…)`): its lines are code again.
  const CODE_IN_LITERAL = /substitution|interpolation|interpolated_expression|^expansion$/
  // Strings of several parts, with code between the parts: Python's and C's adjacent strings on two lines, Ruby's
  // strings joined by a backslash at the end of the line, and Ruby's `%w[…]` (whitespace only separates the words).
  const NOT_LITERAL = /concatenated|chained|_array$/

  /**
   * Source indices of the newlines inside `nodes` that lie inside a string literal: the innermost literal or
   * interpolation node around the newline decides. Only nodes spanning several lines are visited.
   *
   * @example
   * // source "f(`a\n  b`,\n  c)": the first newline is in the template string, the second is not
   * AstRewrite.literalNewlines([args], source) // Set { 4 }
   */
  export function literalNewlines(nodes: SgNode[], source: string): Set<number> {
    const spans: { start: number; end: number; literal: boolean }[] = []
    const visit = (node: SgNode) => {
      const range = node.range()
      if (range.start.line === range.end.line) return
      const kind = String(node.kind())
      if (CODE_IN_LITERAL.test(kind)) spans.push({ start: range.start.index, end: range.end.index, literal: false })
      else if (LITERAL.test(kind) && !NOT_LITERAL.test(kind))
        spans.push({ start: range.start.index, end: range.end.index, literal: true })
      for (const child of node.children()) visit(child)
    }
    for (const node of nodes) visit(node)
    const result = new Set<number>()
    if (!spans.some((s) => s.literal)) return result
    for (const span of spans) {
      if (!span.literal) continue
      for (let at = source.indexOf("\n", span.start); at !== -1 && at < span.end; at = source.indexOf("\n", at + 1)) {
        // Visited parents first, so the last span holding the newline is the innermost.
        const inner = spans.findLast((s) => s.start <= at && at < s.end)
        if (inner?.literal) result.add(at)
      }
    }
    return result
  }

  /**
   * What meta-variable `name` captured in `match` (a single node, or with `multi` a node sequence), if anything.
   *
   * @example
   * AstRewrite.captured(match, "ARGS", source, true) // { text: "a, b", index: 12, literal: Set {} }
   */
  export function captured(match: SgNode, name: string, source: string, multi: boolean): Capture | undefined {
    const nodes = multi ? match.getMultipleMatches(name) : [match.getMatch(name)].filter((n) => n !== null)
    if (!nodes.length) return undefined
    const start = nodes[0].range().start.index
    const text = source.slice(start, nodes[nodes.length - 1].range().end.index)
    return { text, index: start, literal: text.includes("\n") ? literalNewlines(nodes, source) : undefined }
  }

  /**
   * The replacement text for `match` (a node of a tree parsed from `source`).
   *
   * @example
   * AstRewrite.apply("logger.info($$$A)", match, source) // "logger.info(x, y)"
   */
  export function apply(template: string, match: SgNode, source: string): string {
    const range = AstMatch.replaced(match, source)
    const base = lineIndent(source, range.start.index)
    // What follows the match on its last line stays after the replacement's last line.
    const newline = source.indexOf("\n", range.end.index)
    const after = source.slice(range.end.index, newline === -1 ? source.length : newline)
    return fill(template, base, (name, multi) => captured(match, name, source, multi), source, after)
  }

  /**
   * `apply` over a resolver, for tests and other callers: `resolve(name)` gives the capture and where it starts in
   * `source` (to measure its original indentation); `after` is the source text after the match on its last line.
   *
   * @example
   * AstRewrite.fill("f($A)", "", () => ({ text: "x", index: 0 }), "x") // "f(x)"
   */
  export function fill(
    template: string,
    base: string,
    resolve: (name: string, multi: boolean) => Capture | undefined,
    source: string,
    after = "",
  ): string {
    const lines = template.split("\n")
    return lines
      .map((line, i) => {
        const at = /^[ \t]*/.exec(line)![0]
        const substituted = line.replace(META, (whole: string, dollars: string, name: string, offset: number) => {
          const capture = resolve(name, dollars.length === 3)
          if (!capture) return ""
          // Text after the capture on the output line: the rest of the template line and, on the template's last
          // line, what follows the match. When there is some, the capture's last line is not blank in the output.
          const rest = line.slice(offset + whole.length) + (i === lines.length - 1 ? after : "")
          return reindent(capture, lineIndent(source, capture.index), at, base, rest.trim() !== "")
        })
        if (i === 0 || substituted.trim() === "") return substituted
        return base + substituted
      })
      .join("\n")
  }

  /**
   * The capture's lines after the first, moved as the CLI moves them: from the indentation `from` of the capture's
   * line to the indentation `to` of the meta-variable's template line (a line lacking the whole difference keeps
   * its own indentation), then `base`, the match's line indentation, in front. A line whose preceding newline lies
   * in a string literal is kept as is: its indentation is part of the string's value. Other blank lines are empty,
   * except the last when text follows it on the output line (`followed`): a capture ending in the next line's
   * indentation (Scala's `val_definition`) is followed there by the next statement, which keeps that indentation,
   * moved like a line of code, as in the CLI.
   */
  function reindent(capture: Capture, from: string, to: string, base: string, followed: boolean): string {
    const { text, index, literal } = capture
    if (!text.includes("\n")) return text
    const lines = text.split("\n")
    let newline = index + lines[0].length
    const out = [lines[0]]
    for (const [i, line] of lines.slice(1).entries()) {
      const kept = literal?.has(newline)
      newline += line.length + 1
      if (kept) out.push(line)
      else if (line.trim() === "" && !(followed && i === lines.length - 2)) out.push("")
      else out.push(base + move(line, from, to))
    }
    return out.join("\n")
  }

  /** `line` moved from indentation `from` to `to`: the difference removed (if the line has it all) or added. */
  function move(line: string, from: string, to: string): string {
    if (from === to) return line
    if (from.startsWith(to)) {
      const cut = from.slice(to.length)
      return line.startsWith(cut) ? line.slice(cut.length) : line
    }
    if (to.startsWith(from)) return to.slice(from.length) + line
    // Mixed tabs and spaces: the line's own `from` (if it has it) becomes `to`.
    return line.startsWith(from) ? to + line.slice(from.length) : line
  }
}
