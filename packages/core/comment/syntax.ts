import path from "path"

/**
 * Comment syntax by file extension (the PRD's FR-6 table, extended to the other languages the AST tools know) and
 * the extraction of comments from a block of lines.
 *
 * A comment is either a run of full comment lines (first non-blank content is a comment token, or a line inside a
 * block comment) or a trailing comment after code (`x = 1 // set x`, recognised outside string literals only).
 * Doc comments (`/** … *\/`, `///`, `//!`, Python docstrings) are marked as such: they document an API and do not
 * count towards comment density.
 *
 * @example
 * const syntax = CommentSyntax.forFile("src/a.ts")
 * CommentSyntax.extract(["// Set the value", "x = 1"], syntax)
 * // [{ line: 0, text: "Set the value", kind: "line", trailing: false }]
 */
export namespace CommentSyntax {
  export type Syntax = {
    /** Prefixes of single-line comments. */
    line: string[]
    /** Block comment delimiters. */
    block: [open: string, close: string][]
    /** Python-style docstrings delimited by `"""` or `'''`. */
    docstrings: boolean
    /**
     * Where a plain comment right above a declaration is its documentation (Go's godoc, Ruby's RDoc and YARD): the
     * declaration's first line.
     */
    declaration?: RegExp
  }

  const C_LIKE: Syntax = { line: ["//"], block: [["/*", "*/"]], docstrings: false }
  const HASH: Syntax = { line: ["#"], block: [], docstrings: false }
  const PYTHON: Syntax = { line: ["#"], block: [], docstrings: true }
  const MARKUP: Syntax = { line: [], block: [["<!--", "-->"]], docstrings: false }
  const CSS: Syntax = { line: [], block: [["/*", "*/"]], docstrings: false }
  const DASHES: Syntax = { line: ["--"], block: [], docstrings: false }
  /** Unknown extensions: every syntax of the table, as the PRD asks. */
  export const ANY: Syntax = {
    line: ["//", "#", "--"],
    block: [
      ["/*", "*/"],
      ["<!--", "-->"],
    ],
    docstrings: true,
  }

  const BY_EXTENSION: Record<string, Syntax> = {}
  const assign = (syntax: Syntax, exts: string) => exts.split(" ").forEach((e) => (BY_EXTENSION[e] = syntax))
  assign(
    C_LIKE,
    "js mjs cjs jsx ts mts cts tsx go java c h cc cpp cxx hpp hh rs swift kt kts scala sc cs dart sol php zig groovy",
  )
  assign(HASH, "rb sh bash zsh ksh yaml yml toml nix r pl ex exs mk dockerfile")
  assign(PYTHON, "py pyi")
  BY_EXTENSION.go = { ...C_LIKE, declaration: /^(func|type|var|const|package)\b/ }
  BY_EXTENSION.rb = { ...HASH, declaration: /^(def|class|module|attr_(reader|writer|accessor)|[A-Z][A-Z0-9_]* =)\s/ }
  assign(MARKUP, "html htm xml xhtml")
  /** Single-file components: markup comments plus the script's. */
  const COMPONENT: Syntax = {
    line: ["//"],
    block: [
      ["<!--", "-->"],
      ["/*", "*/"],
    ],
    docstrings: false,
  }
  assign(COMPONENT, "vue svelte")
  assign(CSS, "css scss less")
  assign(DASHES, "sql lua hs elm")
  BY_EXTENSION.scss = { line: ["//"], block: [["/*", "*/"]], docstrings: false }
  BY_EXTENSION.less = BY_EXTENSION.scss
  BY_EXTENSION.lua = { line: ["--"], block: [["--[[", "]]"]], docstrings: false }
  BY_EXTENSION.hs = { line: ["--"], block: [["{-", "-}"]], docstrings: false }

  /** Formats without code comments: never judged. */
  const PROSE = new Set([
    "md",
    "mdx",
    "markdown",
    "txt",
    "rst",
    "adoc",
    "json",
    "jsonl",
    "csv",
    "tsv",
    "lock",
    "log",
    "svg",
  ])

  /**
   * The syntax for `file`, or undefined when the file is prose or data (nothing to judge).
   *
   * @example
   * CommentSyntax.forFile("a.py")!.line // ["#"]
   * CommentSyntax.forFile("README.md") // undefined
   */
  export function forFile(file: string): Syntax | undefined {
    const base = path.basename(file).toLowerCase()
    if (base === "dockerfile" || base === "makefile") return HASH
    const ext = path.extname(base).slice(1)
    if (PROSE.has(ext)) return undefined
    return BY_EXTENSION[ext] ?? ANY
  }

  export type Comment = {
    /** Index of the (first) line of the comment in the given lines. */
    line: number
    /** Last line index (same as `line` for a single line). */
    end: number
    /** The comment's text without delimiters, whitespace collapsed. */
    text: string
    /** Lines of the comment, each stripped of its delimiters. */
    parts: string[]
    doc: boolean
    /** After code on the same line. */
    trailing: boolean
  }

  export type LineKind = "blank" | "code" | "comment" | "doc"

  /**
   * Classifies every line and extracts the comments. Consecutive full-line comments of the same kind form one
   * comment (a paragraph); a blank line ends it.
   *
   * @example
   * CommentSyntax.extract(["x = 1 # one"], CommentSyntax.forFile("a.py")!).comments[0].trailing // true
   */
  export function extract(lines: string[], syntax: Syntax): { kinds: LineKind[]; comments: Comment[] } {
    const kinds: LineKind[] = new Array(lines.length).fill("code")
    const comments: Comment[] = []
    let block: { close: string; doc: boolean; start: number; parts: string[] } | undefined
    let docstring: { quote: string; start: number; parts: string[] } | undefined
    /** A string literal still open at the end of the previous code line (triple quotes, template literals). */
    let literal: string | undefined
    let paragraph: Comment | undefined

    const flush = () => {
      if (paragraph) {
        paragraph.text = collapse(paragraph.parts.join(" "))
        if (paragraph.text) comments.push(paragraph)
      }
      paragraph = undefined
    }

    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i]
      const trimmed = raw.trim()
      if (literal) {
        // Inside a multi-line string: code, whatever it looks like; a comment may follow its end.
        kinds[i] = "code"
        const rest = scan(raw, syntax, literal)
        literal = rest.open
        if (rest.comment) comments.push(trailingAt(i, rest.comment))
        continue
      }
      if (block) {
        kinds[i] = block.doc ? "doc" : "comment"
        const closeAt = trimmed.indexOf(block.close)
        block.parts.push(stripInner(closeAt >= 0 ? trimmed.slice(0, closeAt) : trimmed))
        if (closeAt >= 0) {
          pushBlock(comments, block, i)
          block = undefined
        }
        continue
      }
      if (docstring) {
        kinds[i] = "doc"
        const closeAt = trimmed.indexOf(docstring.quote)
        docstring.parts.push(closeAt >= 0 ? trimmed.slice(0, closeAt) : trimmed)
        if (closeAt >= 0) {
          pushDoc(comments, docstring.start, i, docstring.parts)
          docstring = undefined
        }
        continue
      }
      if (!trimmed) {
        kinds[i] = "blank"
        flush()
        continue
      }
      if (i === 0 && trimmed.startsWith("#!")) continue // shebang

      const linePrefix = syntax.line.find((p) => trimmed.startsWith(p))
      if (linePrefix && !(linePrefix === "--" && trimmed.startsWith("--[["))) {
        const doc = linePrefix === "//" && /^\/\/[/!](?!\/)/.test(trimmed)
        kinds[i] = doc ? "doc" : "comment"
        const part = trimmed.slice(linePrefix.length).replace(/^[/!#-]+/, "")
        if (paragraph && paragraph.doc === doc && paragraph.end === i - 1 && !paragraph.trailing) {
          paragraph.parts.push(part)
          paragraph.end = i
        } else {
          flush()
          paragraph = { line: i, end: i, text: "", parts: [part], doc, trailing: false }
        }
        continue
      }
      const blockOpen = syntax.block.find(([open]) => trimmed.startsWith(open))
      if (blockOpen) {
        flush()
        const [open, close] = blockOpen
        const doc = open === "/*" && trimmed.startsWith("/**") && !trimmed.startsWith("/**/")
        kinds[i] = doc ? "doc" : "comment"
        const rest = trimmed.slice(open.length).replace(/^\*+/, "")
        const closeAt = rest.indexOf(close)
        const state = { close, doc, start: i, parts: [stripInner(closeAt >= 0 ? rest.slice(0, closeAt) : rest)] }
        if (closeAt >= 0) {
          const after = rest.slice(closeAt + close.length).trim()
          if (after) kinds[i] = "code" // `/* note */ code()`: a code line with a leading comment
          pushBlock(comments, state, i)
        } else block = state
        continue
      }
      if (syntax.docstrings) {
        const quote = trimmed.startsWith('"""') ? '"""' : trimmed.startsWith("'''") ? "'''" : undefined
        // A docstring is a string statement of its own; `x = """…"""` is code.
        if (quote) {
          flush()
          kinds[i] = "doc"
          const rest = trimmed.slice(3)
          const closeAt = rest.indexOf(quote)
          if (closeAt >= 0) pushDoc(comments, i, i, [rest.slice(0, closeAt)])
          else docstring = { quote, start: i, parts: [rest] }
          continue
        }
      }
      // A code line, possibly with a trailing comment.
      flush()
      kinds[i] = "code"
      const code = scan(raw, syntax)
      literal = code.open
      if (code.comment) comments.push(trailingAt(i, code.comment))
    }
    flush()
    if (block) pushBlock(comments, block, lines.length - 1)
    if (docstring) pushDoc(comments, docstring.start, lines.length - 1, docstring.parts)
    comments.sort((a, b) => a.line - b.line)
    return { kinds, comments }
  }

  function pushBlock(comments: Comment[], block: { doc: boolean; start: number; parts: string[] }, end: number) {
    const parts = block.parts.filter((p) => p.trim())
    const text = collapse(parts.join(" "))
    if (text) comments.push({ line: block.start, end, text, parts, doc: block.doc, trailing: false })
  }

  function pushDoc(comments: Comment[], start: number, end: number, parts: string[]) {
    const kept = parts.filter((p) => p.trim())
    const text = collapse(kept.join(" "))
    if (text) comments.push({ line: start, end, text, parts: kept, doc: true, trailing: false })
  }

  /** Inner block-comment lines lose their leading `*` (JSDoc style) and closing delimiter remnants. */
  function stripInner(text: string) {
    const inner = text.replace(/^\s*\*+(?!\/)/, "")
    // The closing `*/` with all the `*` before it (`\*+\/\s*$`, which backtracks quadratically on a long run of `*`).
    const close = /\*\/\s*$/.exec(inner)
    if (!close) return inner
    let start = close.index
    while (start > 0 && inner[start - 1] === "*") start--
    return inner.slice(0, start)
  }

  function collapse(text: string) {
    return text.replace(/\s+/g, " ").trim()
  }

  /**
   * The text of a trailing line comment after code, found by scanning outside string literals; undefined when
   * there is none. Only `//`, `#` and `--` are considered, and only after whitespace (so `a//b` in a URL-like
   * expression and `x--` decrements are left alone).
   *
   * @example
   * CommentSyntax.trailingComment("x() // call x", CommentSyntax.forFile("a.ts")!) // "call x"
   */
  export function trailingComment(line: string, syntax: Syntax): string | undefined {
    return scan(line, syntax).comment
  }

  function trailingAt(line: number, text: string): Comment {
    return { line, end: line, text, parts: [text], doc: false, trailing: true }
  }

  /**
   * Scans a code line outside string literals (starting inside the literal `open` when one spans from the line
   * before): the trailing comment, and the delimiter of a string still open at the end of the line when it may span
   * lines (Python's `"""`/`'''`, and backquotes in languages with `//` comments: template literals, Go's raw strings).
   */
  function scan(line: string, syntax: Syntax, open?: string): { comment?: string; open?: string } {
    if (!syntax.line.length && !open) return {}
    let quote = open
    for (let i = 0; i < line.length; i++) {
      const c = line[i]
      if (quote) {
        if (c === "\\") i++
        else if (line.startsWith(quote, i)) {
          i += quote.length - 1
          quote = undefined
        }
        continue
      }
      if (syntax.docstrings && (line.startsWith('"""', i) || line.startsWith("'''", i))) {
        quote = line.slice(i, i + 3)
        i += 2
        continue
      }
      if (c === '"' || c === "'" || c === "`") {
        quote = c
        continue
      }
      if (i === 0 || !/\s/.test(line[i - 1])) continue
      for (const prefix of syntax.line) {
        if (!line.startsWith(prefix, i)) continue
        if (prefix === "--" && !/^--\s/.test(line.slice(i))) continue
        if (prefix === "#" && /^#[{[]/.test(line.slice(i))) continue
        const text = collapse(line.slice(i + prefix.length).replace(/^[/!]+/, ""))
        return { comment: text || undefined }
      }
    }
    const spans = quote && (quote.length === 3 || (quote === "`" && syntax.line.includes("//")))
    return { open: spans ? quote : undefined }
  }
}
