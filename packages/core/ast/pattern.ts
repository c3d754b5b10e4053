import { parse, type NapiConfig, type SgNode } from "@ast-grep/napi"
import z from "zod"
import { NamedError, errorMessage } from "../util/error"
import { AstMatch } from "./match"

/**
 * A checked ast-grep pattern and the literal tokens any match must contain.
 *
 * ast-grep compares named leaves (identifiers, literals) by their text and unnamed tokens (keywords, punctuation)
 * by their kind, so every named leaf of the pattern that is not a meta-variable occurs verbatim in a matching file,
 * and every keyword occurs up to letter case (PHP keywords are case-insensitive). Files lacking one of them cannot
 * match and are never parsed: that pre-filter is what makes the in-process search faster than the CLI on most
 * patterns. This holds for patterns with syntax errors too: ast-grep lets an ERROR node of the pattern match a node of
 * any kind, but still compares the leaves under it (named ones by text, the others by kind).
 *
 * Like the CLI, a pattern whose node is an ERROR node (after stripping the single-child wrappers, e.g. `program`)
 * gets a warning, which the tools show only when the search matched nothing: `import $X from $Y` is an ERROR node in
 * TypeScript (the source must be a string) yet matches every default import, so an unconditional warning would be
 * false. An ERROR node deeper in the pattern (`foo(a b)`) gets none, as in the CLI. Unlike the CLI, a fragment that
 * matches its own text in a usual context (`color: $V;` inside a CSS rule, see `matchesInContext`) gets none either.
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

  /** What napi's `findAll` is given: the pattern itself, or a rule matching either of its readings (see `reading`). */
  export type Matcher = string | NapiConfig

  export type Compiled = {
    pattern: string
    /** What a search gives `findAll`: the pattern, or a rule that also matches its reading inside a function body. */
    matcher: Matcher
    /** Named leaf texts every match contains verbatim. */
    literals: string[]
    /** Keyword tokens every match contains, compared ignoring case. */
    keywords: string[]
    /** Set when the pattern's node is an ERROR node (as the CLI judges it): the tools show it when nothing matched. */
    warning?: string
    /** A trap in the pattern's shape the tools always point out (e.g. `$C` in a Rust macro's tokens). */
    note?: string
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
      // ast-grep quotes the pattern as it parsed it, after the expando (`µA µB`): show the user's own text.
      const reason = errorMessage(error).split(expand(pattern, expando)).join(pattern)
      throw new Invalid({ pattern, lang, reason: reason.replace(/\s+/g, " ").trim() })
    }
    const expanded = expand(pattern, expando)
    const root = parse(napiLang, expanded).root()
    const literals = new Set<string>()
    const keywords = new Set<string>()
    collect(root, metaSpans(expanded, expando), literals, keywords)
    const other = reading(napiLang, pattern, expanded, expando, root)
    if (other) {
      // A file matching either reading holds the leaves both have: keep only those as the pre-filter's literals.
      const otherLiterals = new Set<string>()
      const otherKeywords = new Set<string>()
      collect(other.node, metaSpans(other.source, expando), otherLiterals, otherKeywords)
      for (const l of literals) if (!otherLiterals.has(l)) literals.delete(l)
      for (const k of keywords) if (!otherKeywords.has(k)) keywords.delete(k)
    }
    const literalList = [...literals].sort((a, b) => b.length - a.length)
    const keywordList = [...keywords]
    return {
      pattern,
      matcher: unnamedLiterals(napiLang, lang, other?.matcher ?? pattern, expando),
      note: macroNote(lang, root, metaSpans(expanded, expando), expanded),
      literals: literalList,
      keywords: keywordList,
      // A pattern with a reading in a function body is whole code there: the note's advice would be wrong.
      warning:
        isError(root) && !other && !matchesInContext(napiLang, pattern)
          ? `the pattern does not parse as complete ${lang} code (ast-grep sees an ERROR node), which is likely why ` +
            "nothing matched; write a full statement or expression, e.g. a whole call or declaration"
          : undefined,
      selective: literalList.length + keywordList.length > 0,
      mayMatch: AstMatch.tester(literalList, keywordList),
    }
  }

  /**
   * Bodies of functions in the languages' usual syntax, where the calls and statements a pattern looks for live.
   * `P` is the pattern.
   */
  const BODIES = [
    "func f() { P }",
    "void f() { P; }",
    "fn f() { P }",
    "function f() { P }",
    "fun f() { P }",
    "class A { void f() { P; } }",
    "contract A { function f() public { P } }",
    "def f():\n    P",
    "def f\nP\nend",
    "function f()\nP\nend",
  ]

  /**
   * The pattern's other reading, when its text parses as one kind of node alone and as another inside a function
   * body, where real code is. tree-sitter-go reads `errors.New($A)` alone as a conversion to the type `errors.New`
   * (`type_conversion_expression`), and every real `errors.New(msg)` in a function as a `call_expression`; C reads
   * `xstrdup($X)` alone as a macro type and in a body as a call. ast-grep compares node kinds, so the pattern alone
   * matched none of them, silently. Such a pattern gets a rule matching either reading: ast-grep's pattern object
   * `{ context, selector }` parses the pattern inside the body and selects the node of the body's kind, as a user
   * would write to disambiguate it. The first body that parses without error in the language decides (an ERROR node
   * that is exactly one of the pattern's meta-variables counts as none, see `isMeta`); a pattern that reads the same
   * there has no other reading.
   */
  function reading(
    napiLang: string,
    pattern: string,
    expanded: string,
    expando: string,
    root: SgNode,
  ): { matcher: NapiConfig; node: SgNode; source: string } | undefined {
    const own = single(root)
    if (!own.children().length) return undefined
    const metas = metaSpans(expanded, expando)
    for (const body of BODIES) {
      const indent = /\n( +)P/.exec(body)?.[1] ?? ""
      const code = expanded.replace(/\n/g, "\n" + indent)
      const at = body.indexOf("P")
      const source = body.slice(0, at) + code + body.slice(at + 1)
      let tree: SgNode
      try {
        tree = parse(napiLang, source).root()
      } catch {
        continue
      }
      if (!clean(tree, (n) => isMeta(n, metas, at))) continue
      const placed = spanning(tree, at, at + code.length)
      if (!placed) continue
      const node = single(placed)
      if (node.kind() === own.kind() || node.kind() === "ERROR") return undefined
      // A meta-variable alone in the other reading (the pattern is a wrapper around it) would match anything.
      const range = node.range()
      if (metas.some(([a, b]) => a + at === range.start.index && b + at === range.end.index)) return undefined
      const context = body.slice(0, at) + pattern.replace(/\n/g, "\n" + indent) + body.slice(at + 1)
      const matcher: NapiConfig = {
        rule: { any: [{ pattern }, { pattern: { context, selector: String(node.kind()) } }] },
      }
      try {
        const same = tree
          .findAll(matcher)
          .some((n) => n.range().start.index === range.start.index && n.range().end.index === range.end.index)
        if (!same) return undefined
      } catch {
        return undefined
      }
      return { matcher, node, source }
    }
    return undefined
  }

  /**
   * Literal keywords that a language's grammar package leaves as unnamed tokens where the CLI's grammar has a named
   * node. ast-grep's `$X` matches named nodes only, so `return $X`, `val $A = $B` or `$A != $B` never matched
   * `return null` in Kotlin (`@ast-grep/lang-kotlin` 0.0.7: `null` unnamed; the CLI's tree-sitter-kotlin-sg:
   * `null_literal`) nor `x != nil` in Swift (`@ast-grep/lang-swift` 0.0.8: `nil` unnamed; the CLI: a named node), silently
   * (moshi's `return $X`: 515 against the CLI's 577; Moya's `$A != $B`: 19 against 35). Measured against the CLI on
   * one-file fixtures with `true`/`false`/`null`/`nil`/`None`/`this`/`self`/`super`/`undefined`/`nullptr`/`NULL`
   * for all 25 languages (`languages.test.ts › a meta-variable matches the literal keywords the CLI's grammar names`):
   * only these two differ.
   */
  export const UNNAMED_LITERALS: Partial<Record<string, readonly string[]>> = { kotlin: ["null"], swift: ["nil"] }

  /**
   * The matcher extended so that a single meta-variable also matches the language's `UNNAMED_LITERALS`, as in the
   * CLI. ast-grep's `$$X` matches unnamed nodes too: each `$X` of the pattern (a `$_…` one under a fresh capturing
   * name) becomes `$$X` in a second reading, and a constraint keeps only named nodes (`$_` as a rule matches exactly
   * those) or the literals. The pattern itself stays the first alternative, so every match it finds is still found
   * with the same captures; the second adds those through a literal. Where the `$$` form parses otherwise than the
   * pattern, that reading is left out.
   *
   * @example
   * AstPattern.unnamedLiterals("kotlin", "kotlin", "return $X", "µ")
   * // { rule: { any: [{ pattern: "return $X" }, { pattern: "return $$X" }] }, constraints: { X: { any: [{ pattern: "$_" }, { regex: "^(?:null)$" }] } } }
   */
  export function unnamedLiterals(napiLang: string, lang: string, matcher: Matcher, expando: string): Matcher {
    const words = UNNAMED_LITERALS[lang]
    if (!words || [...expando].length !== 1 || expando.length !== 1) return matcher
    const names = new Set<string>()
    let fresh = 0
    const widen = (source: string): string | undefined => {
      const expanded = expand(source, expando)
      let root: SgNode
      try {
        root = parse(napiLang, expanded).root()
      } catch {
        return undefined
      }
      const single = new RegExp(`^${escape(expando)}([A-Z_][A-Z0-9_]*)$`, "u")
      const starts = new Map<number, string>()
      const visit = (node: SgNode) => {
        const m = single.exec(node.text())
        // `$$X` and `$$$X` are other meta-variables: only a lone expando before the name.
        const at = node.range().start.index
        if (m && expanded[at - 1] !== expando) starts.set(at, m[1])
        for (const child of node.children()) visit(child)
      }
      visit(root)
      if (!starts.size) return undefined
      let out = ""
      let from = 0
      for (const [at, name] of [...starts].sort((a, b) => a[0] - b[0])) {
        let capture = name
        if (name.startsWith("_")) {
          do capture = `LITERAL${fresh++}`
          while (source.includes(capture))
        }
        names.add(capture)
        out += source.slice(from, at) + "$$" + capture
        from = at + 1 + name.length
      }
      out += source.slice(from)
      // The same tree, meta-variables aside: `$$X` must stand where `$X` stood.
      const either = new RegExp(`^(?:${escape(expando)}){1,2}[A-Z_][A-Z0-9_]*$`, "u")
      const shape = (code: string) => {
        const kinds: string[] = []
        const walk = (node: SgNode) => {
          const meta = either.test(node.text())
          kinds.push(meta ? "META" : String(node.kind()))
          if (!meta) for (const child of node.children()) walk(child)
        }
        walk(parse(napiLang, code).root())
        return kinds.join(" ")
      }
      return shape(expand(out, expando)) === shape(expanded) ? out : undefined
    }
    const rules = typeof matcher === "string" ? [{ pattern: matcher }] : ((matcher.rule as { any: Rule[] }).any ?? [])
    const widened: Rule[] = []
    for (const rule of rules) {
      if (typeof rule.pattern === "string") {
        const pattern = widen(rule.pattern)
        if (pattern) widened.push({ pattern })
      } else if (rule.pattern) {
        const context = widen(rule.pattern.context)
        if (context) widened.push({ pattern: { ...rule.pattern, context } })
      }
    }
    if (!widened.length) return matcher
    const literal = { regex: `^(?:${words.map(escape).join("|")})$` }
    return {
      rule: { any: [...rules, ...widened] },
      constraints: Object.fromEntries([...names].map((name) => [name, { any: [{ pattern: "$_" }, literal] }])),
    }
  }

  type Rule = { pattern?: string | { context: string; selector: string } }

  /** The outermost node of `root` spanning exactly [start, end). */
  function spanning(root: SgNode, start: number, end: number): SgNode | undefined {
    const range = root.range()
    if (range.start.index === start && range.end.index === end) return root
    if (range.start.index > start || range.end.index < end) return undefined
    for (const child of root.children()) {
      const found = spanning(child, start, end)
      if (found) return found
    }
    return undefined
  }

  /**
   * A Rust macro's arguments are a token tree, not expressions: a single meta-variable there (`assert!($C)`)
   * matches one token, so it finds `assert!(done)` and not `assert!(a == b)` (3 against 3,027 in turso's `core/`,
   * as in the CLI). Always pointed out, since such a pattern does match something.
   */
  function macroNote(lang: string, root: SgNode, metas: [number, number][], expanded: string): string | undefined {
    if (lang !== "rust") return undefined
    const trees = root.findAll({ rule: { kind: "token_tree" } })
    const inside = metas.filter(
      ([a, b]) =>
        b - a > 1 &&
        !/^(.)\1\1/u.test(expanded.slice(a, b)) &&
        trees.some((t) => t.range().start.index < a && b < t.range().end.index),
    )
    if (!inside.length) return undefined
    const names = inside.map(([a, b]) => "$" + expanded.slice(a, b).replace(/^[^A-Z_]+/, ""))
    return (
      `in Rust a macro's arguments are tokens, not expressions: ${names.join(", ")} inside a macro call matches ` +
      `exactly one token (\`assert!(done)\`, not \`assert!(a == b)\`); write ${names.map((n) => "$$$" + n.slice(1)).join(", ")} to match any arguments`
    )
  }

  /** The node ast-grep matches for a parsed pattern: the root, descended while it has a single child. */
  function single(root: SgNode): SgNode {
    let node = root
    for (;;) {
      const children = node.children()
      if (children.length === 1 || (children.length === 2 && children[1].text() === "")) node = children[0]
      else return node
    }
  }

  /**
   * The CLI's test (`Pattern::has_error`): descend while a node has a single child (or a second one that is empty,
   * as a MISSING node is) and look at the kind of the node reached.
   */
  function isError(root: SgNode): boolean {
    return single(root).kind() === "ERROR"
  }

  /**
   * Where a fragment pattern is whole code: a CSS declaration in a rule, a class member in a class, a statement in a
   * function body, a match arm, an attribute in a tag, a property in an object. `P` is the pattern, filled in.
   */
  const CONTEXTS = [
    "P",
    "a { P }",
    "{ P }",
    "f(P)",
    "[P]",
    "class A { P }",
    "class A { void f() { P } }",
    "struct A { P }",
    "interface A { P }",
    "enum A { P }",
    "impl A { P }",
    "trait A { P }",
    "type A struct { P }",
    "function f() { P }",
    "void f() { P }",
    "void f() { P; }",
    "fn f() { P }",
    "func f() { P }",
    "fun f() { P }",
    "match a { P }",
    "switch (a) { P }",
    "<?php P",
    "<?php P;",
    "<?php class A { P }",
    "<a P></a>",
    "<a>P</a>",
    "def f():\n    P",
    "class A:\n    P",
    "def f\nP\nend",
    "function f()\nP\nend",
    "def f do\nP\nend",
  ]

  /** What a single meta-variable becomes when a pattern is filled in: a name, a number, a string, a PHP variable. */
  const FILLS = ["a", "1", '"a"', "$a"]

  /**
   * Whether the pattern matches its own text, meta-variables filled in (a multiple one with nothing, or like a single
   * one), placed in one of `CONTEXTS` that parses without an error. A pattern that is an ERROR node on its own
   * (`color: $V;` in CSS is a declaration, which only a rule body holds) but matches code there is a working
   * fragment, not the reason a search found nothing.
   */
  function matchesInContext(napiLang: string, pattern: string): boolean {
    for (const single of FILLS) {
      for (const multiple of ["", single]) {
        const code = pattern.replace(/\${1,3}[A-Z_][A-Z0-9_]*|\$\$\$/g, (meta) =>
          meta.startsWith("$$$") ? multiple : single,
        )
        for (const context of CONTEXTS) {
          const indent = /\n( +)P/.exec(context)?.[1] ?? ""
          const source = context.replace("P", () => code.replace(/\n/g, "\n" + indent))
          try {
            const root = parse(napiLang, source).root()
            if (clean(root) && root.findAll(pattern).length) return true
          } catch {
            // A context this language cannot take.
          }
        }
      }
    }
    return false
  }

  /**
   * No ERROR node and no MISSING one (tree-sitter's zero-width stand-in for an absent token), except an ERROR node
   * that `allowed` accepts.
   */
  function clean(node: SgNode, allowed?: (error: SgNode) => boolean): boolean {
    if (node.kind() === "ERROR") return allowed?.(node) ?? false
    const children = node.children()
    if (!children.length) return node.text() !== ""
    return children.every((child) => clean(child, allowed))
  }

  /**
   * Whether `node` spans exactly one meta-variable of the pattern placed at `at`. ast-grep reads any pattern node
   * whose whole text is a meta-variable as that meta-variable, whatever its kind, so an ERROR node that is exactly
   * `$$$B` is no error in the pattern: it is how a statement list without `;` parses in a block (Solidity's
   * `if ($C) { $$$B }` in a function body), and the CLI's `{ context, selector }` matches every such block.
   */
  function isMeta(node: SgNode, metas: [number, number][], at: number): boolean {
    const { start, end } = node.range()
    return metas.some(([a, b]) => a + at === start.index && b + at === end.index)
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
      // An unnamed ERROR leaf would be compared by kind, and an ERROR kind matches any node: no constraint.
      else if (node.kind() === "ERROR") return
      else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(text)) keywords.add(text)
      return
    }
    for (const child of children) collect(child, metas, literals, keywords)
  }

  function escape(text: string) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  }
}
