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
     * declaration's first line, as written (indentation included). Go's is at the start of the line: godoc reads
     * top-level declarations only, and a `var` or `type` inside a function body is a statement. Ruby's may be
     * indented: its methods, classes and `attr_*` lines sit in class and module bodies, which RDoc reads.
     */
    declaration?: RegExp
    /**
     * The mark that makes a comment above a `declaration` its documentation, tested on the comment's first line
     * (trimmed); without it, every plain comment there is (Go, Ruby). Lua's `---` (LDoc, LuaCATS): a `--` comment above
     * a function is not documentation to LDoc or the Lua language server, and is judged.
     */
    docMark?: RegExp
    /**
     * Where a plain comment right above a function definition is its documentation, recognised over several lines:
     * `"c"` for C and C++ (`CommentLayout.cDefinition`: `time_t` / `grid_line_time(…)` / `{`, OpenBSD style(9)).
     */
    definitions?: "c"
    /** Block comments nest (`/* a /* b *\/ c *\/` is one comment in Rust, Swift, Kotlin, Scala, Dart, Haskell). */
    nested?: boolean
    /**
     * String literals beyond `"`, `'` and backquotes whose text is never a comment: here-documents (a shell's
     * `<<'EOF'`, Ruby's `<<~TEXT`, Perl's `<<"END"`, PHP's `<<<EOT`), Rust's raw strings `r#"…"#`, Lua's long
     * strings `[[…]]`.
     */
    strings?: "shell" | "ruby" | "perl" | "php" | "rust" | "lua"
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
  assign({ ...C_LIKE, definitions: "c" }, "c h cc cpp cxx hpp hh")
  BY_EXTENSION.go = { ...C_LIKE, declaration: /^(func|type|var|const|package)\b/ }
  BY_EXTENSION.rb = {
    ...HASH,
    declaration: /^\s*(def|class|module|attr_(reader|writer|accessor)|[A-Z][A-Z0-9_]* =)\s/,
    strings: "ruby",
  }
  assign({ ...HASH, strings: "shell" }, "sh bash zsh ksh dockerfile")
  BY_EXTENSION.pl = { ...HASH, strings: "perl" }
  BY_EXTENSION.php = { ...C_LIKE, strings: "php" }
  BY_EXTENSION.rs = { ...C_LIKE, nested: true, strings: "rust" }
  assign({ ...C_LIKE, nested: true }, "swift kt kts scala sc dart")
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
  BY_EXTENSION.lua = {
    line: ["--"],
    block: [["--[[", "]]"]],
    docstrings: false,
    strings: "lua",
    // What LDoc and LuaCATS document: a function (`function M.f(…)`, `local function f`, at any depth), a top-level
    // assignment or local (`M.x = function`, `profile.stop = p.stop()`, `local M = {}`), a field assigned a function,
    // and a field of a table constructor (`name = "x",`, `opts = {`).
    declaration:
      /^(\s*(local\s+)?function\b|[A-Za-z_][\w.:]*(\[[^\]]*\])*\s*=[^=]|local\s+[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*\s*(=[^=]|$)|\s+[A-Za-z_][\w.:]*\s*=\s*function\b|\s+([A-Za-z_]\w*|\[[^\]]+\])\s*=[^=].*[,;{]\s*$)/,
    docMark: /^---(?!-)/,
  }
  BY_EXTENSION.hs = { line: ["--"], block: [["{-", "-}"]], docstrings: false, nested: true }

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
    if (base === "dockerfile") return BY_EXTENSION.dockerfile
    if (base === "makefile") return HASH
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
    let block: { open: string; close: string; depth: number; doc: boolean; start: number; parts: string[] } | undefined
    let docstring: { quote: string; start: number; parts: string[] } | undefined
    /** A string literal still open at the end of the previous code line (triple quotes, template literals). */
    let literal: Literal | undefined
    /** Here-documents opened on a code line: their bodies follow, one after the other. */
    let heredocs: Heredoc[] = []
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
      if (heredocs.length) {
        // A here-document's body, up to its delimiter line: text, never a comment.
        kinds[i] = "code"
        if (heredocEnds(heredocs[0], raw)) heredocs = heredocs.slice(1)
        continue
      }
      if (literal) {
        // Inside a multi-line string: code, whatever it looks like; a comment may follow its end.
        kinds[i] = "code"
        const rest = scan(raw, syntax, literal)
        literal = rest.open
        heredocs = rest.heredocs
        if (rest.comment) comments.push(trailingAt(i, rest.comment))
        continue
      }
      if (block) {
        kinds[i] = block.doc ? "doc" : "comment"
        const closeAt = blockEnd(trimmed, block, syntax.nested)
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
        const rest = trimmed.slice(open.length).replace(/^\*+(?!\/)/, "")
        const state = { open, close, depth: 1, doc, start: i, parts: [] as string[] }
        const closeAt = blockEnd(rest, state, syntax.nested)
        state.parts.push(stripInner(closeAt >= 0 ? rest.slice(0, closeAt) : rest))
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
      heredocs = code.heredocs
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

  /** A string literal open across lines: what closes it, and whether a backslash escapes (not in raw strings). */
  type Literal = { close: string; raw: boolean }

  /** A here-document: the delimiter line that ends its body, and whether that line may be indented. */
  type Heredoc = { delimiter: string; indented: boolean; prefix?: boolean }

  /**
   * Scans a code line outside string literals (starting inside the literal `open` when one spans from the line
   * before): the trailing comment, the literal still open at the end of the line when it may span lines (Python's
   * triple quotes, backquotes in languages with `//` comments: template literals, Go's raw strings; Rust's strings
   * and raw strings; Lua's long strings), and the here-documents the line opens.
   */
  function scan(
    line: string,
    syntax: Syntax,
    open?: Literal,
  ): { comment?: string; open?: Literal; heredocs: Heredoc[] } {
    const heredocs: Heredoc[] = []
    if (!syntax.line.length && !open) return { heredocs }
    let quote = open
    for (let i = 0; i < line.length; i++) {
      const c = line[i]
      if (quote) {
        if (c === "\\" && !quote.raw) i++
        else if (line.startsWith(quote.close, i)) {
          i += quote.close.length - 1
          quote = undefined
        }
        continue
      }
      const literal = literalAt(line, i, syntax)
      if (literal) {
        quote = literal.literal
        i += literal.length - 1
        continue
      }
      const heredoc = syntax.strings && heredocAt(line, i, syntax.strings)
      if (heredoc) {
        heredocs.push(heredoc.heredoc)
        i += heredoc.length - 1
        continue
      }
      if (c === "'" && syntax.strings === "rust" && !/^'(\\.[^']*|[^\\'])'/.test(line.slice(i))) continue // a lifetime
      if (c === '"' || c === "'" || c === "`") {
        quote = { close: c, raw: false }
        continue
      }
      if (i === 0 || !/\s/.test(line[i - 1])) continue
      for (const prefix of syntax.line) {
        if (!line.startsWith(prefix, i)) continue
        if (prefix === "--" && !/^--\s/.test(line.slice(i))) continue
        if (prefix === "#" && /^#[{[]/.test(line.slice(i))) continue
        const text = collapse(line.slice(i + prefix.length).replace(/^[/!]+/, ""))
        return { comment: text || undefined, heredocs }
      }
    }
    if (!quote) return { heredocs }
    const spans =
      quote.close.length > 1 ||
      (quote.close === "`" && syntax.line.includes("//")) ||
      (quote.close === '"' && syntax.strings === "rust")
    return { open: spans ? quote : undefined, heredocs }
  }

  /** A literal opening at `line[i]` with more than a quote: triple quotes, a Rust raw string, a Lua long string. */
  function literalAt(line: string, i: number, syntax: Syntax): { literal: Literal; length: number } | undefined {
    if (syntax.docstrings && (line.startsWith('"""', i) || line.startsWith("'''", i)))
      return { literal: { close: line.slice(i, i + 3), raw: false }, length: 3 }
    if (syntax.strings === "rust" && (line[i] === "r" || line[i] === "b") && !/\w/.test(line[i - 1] ?? "")) {
      const raw = /^b?r(#*)"/.exec(line.slice(i))
      if (raw) return { literal: { close: '"' + raw[1], raw: true }, length: raw[0].length }
    }
    if (syntax.strings === "lua" && line[i] === "[" && line[i - 1] !== "-") {
      const long = /^\[(=*)\[/.exec(line.slice(i))
      if (long) return { literal: { close: "]" + long[1] + "]", raw: true }, length: long[0].length }
    }
    return undefined
  }

  /**
   * A here-document opener at `line[i]`: `<<EOF`, `<<-'EOF'`, `<< "EOF"` in a shell (not `<<<`, not a shift inside
   * `(( ))`); `<<~TEXT`, `<<-TEXT`, `<<'TEXT'` or an upper-case `<<TEXT` in Ruby; `<<"END"`, `<<END`, `<<~END` in
   * Perl; `<<<EOT`, `<<<'EOT'` in PHP.
   */
  function heredocAt(
    line: string,
    i: number,
    strings: NonNullable<Syntax["strings"]>,
  ): { heredoc: Heredoc; length: number } | undefined {
    if (!line.startsWith("<<", i)) return undefined
    const rest = line.slice(i)
    const word = (m: RegExpExecArray, from: number) => m.slice(from).find((g) => g !== undefined)!
    if (strings === "php") {
      const m = /^<<<[ \t]*(?:'(\w+)'|"(\w+)"|(\w+))/.exec(rest)
      return m ? { heredoc: { delimiter: word(m, 1), indented: true, prefix: true }, length: m[0].length } : undefined
    }
    if (line[i - 1] === "<" || line[i + 2] === "<") return undefined
    if (strings === "shell") {
      if (/\(\(|\$\[/.test(line.slice(0, i))) return undefined // arithmetic: a shift
      const m = /^<<(-?)[ \t]*(?:'([^'\s]+)'|"([^"\s]+)"|\\?([A-Za-z_][\w.-]*))/.exec(rest)
      return m ? { heredoc: { delimiter: word(m, 2), indented: m[1] === "-" }, length: m[0].length } : undefined
    }
    if (strings === "ruby" || strings === "perl") {
      const m = /^<<([~-]?)(?:'([^']+)'|"([^"]+)"|`([^`]+)`|([A-Za-z_]\w*))/.exec(rest)
      if (!m) return undefined
      // A bare lower-case word after `<<` is Ruby's shift or append (`list <<item`).
      if (strings === "ruby" && !m[1] && m[5] && !/^[A-Z_]/.test(m[5])) return undefined
      return { heredoc: { delimiter: word(m, 2), indented: m[1] !== "" }, length: m[0].length }
    }
    return undefined
  }

  /** Whether `line` ends the here-document's body. */
  function heredocEnds(heredoc: Heredoc, line: string): boolean {
    const text = line.replace(/\r$/, "")
    const bare = heredoc.indented ? text.trimStart() : text
    if (heredoc.prefix) return bare.startsWith(heredoc.delimiter) && !/^\w/.test(bare.slice(heredoc.delimiter.length))
    return bare === heredoc.delimiter
  }

  /**
   * Where the block comment ends in `text` (the index of its closing delimiter), or -1; with `nested`, an opening
   * delimiter inside deepens it (`block.depth` carries the depth to the next line).
   */
  function blockEnd(text: string, block: { open: string; close: string; depth: number }, nested?: boolean): number {
    if (!nested) return text.indexOf(block.close)
    for (let i = 0; i < text.length; i++) {
      if (text.startsWith(block.close, i)) {
        if (--block.depth === 0) return i
        i += block.close.length - 1
      } else if (text.startsWith(block.open, i)) {
        block.depth++
        i += block.open.length - 1
      }
    }
    return -1
  }
}
