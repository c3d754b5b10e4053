import type { CommentSyntax } from "./syntax"

/**
 * Where a comment sits in the layout of the code, for the places where that says what the comment is:
 *
 * - `headings`: comments that head a group of sibling blocks ("# API key configuration tests" over several
 *   `test "…" do … end` blocks): headings, not narration of the block right below, even when the blocks' names
 *   repeat the heading's words.
 * - `entryHeadings`, `banners`: comments that head groups of entries in a list, and section banners
 *   (`-- Parse Request ------`, `// Parsers` / `// --------`): headings too.
 * - `cDefinition`: a C or C++ function definition starting at a line (`time_t` / `grid_line_time(…)` / `{`), above
 *   which a plain comment is the function's documentation (OpenBSD style(9), tmux), as in Go and Ruby.
 *
 * @example
 * CommentLayout.cDefinition(["static void", "f(int x)", "{"], 0) // true
 */
export namespace CommentLayout {
  /** Leading whitespace of a line, in characters (a tab counts one: files indent consistently). */
  function indent(line: string) {
    let n = 0
    while (n < line.length && (line.charCodeAt(n) === 32 || line.charCodeAt(n) === 9)) n++
    return n
  }

  /** Heads of blocks that are steps of a body, not members of a group (`for`, `if`, `while`, …). */
  const CONTROL = new Set(
    (
      "if elif else elsif unless until while for foreach loop do switch match case when select try begin rescue " +
      "ensure catch except finally with return defer go"
    ).split(" "),
  )

  /** A line that closes the block above it: `end`, `}`, `})`, `});`, `end)`, `]` … */
  const CLOSER = /^(end\b|[)\]}])/

  /** The word a block's first line opens with (`test`, `it`, `describe`, `def`, `t.Run`), or undefined. */
  function head(line: string): string | undefined {
    return /^[@$]?[A-Za-z_][\w.]*/.exec(line.trim())?.[0]
  }

  type Item = { comment: number; blankBefore: boolean } | { block: string }

  /**
   * The first lines of the comments that head a group of sibling blocks: a comment at a block's indentation,
   * preceded by a blank line (or first in its enclosing block), directly above a block whose first line opens with a
   * word that is not a control keyword, in a run of such blocks separated only by blank lines and other comments at
   * that indentation, where the comments head groups of blocks opening with the same word and at least one of those
   * groups holds two or more blocks. So "# call tests" over five `test "call …" do` blocks is a heading, and so is
   * "# Constructor tests" over one `test` block in the same run; a comment over one `for` loop is not.
   *
   * @example
   * const lines = ["# Parse tests", 'test "a" do', "  x", "end", "", 'test "b" do', "  y", "end"]
   * CommentLayout.headings(lines, kinds, comments) // Set {0}
   */
  export function headings(
    lines: string[],
    kinds: CommentSyntax.LineKind[],
    comments: CommentSyntax.Comment[],
  ): Set<number> {
    const ends = new Map<number, number>()
    for (const c of comments) if (!c.trailing) ends.set(c.line, c.end)
    const found = new Set<number>()
    // Regions of lines to parse, each at the indentation of its first non-blank line: the whole text, then each
    // block's body. A stack instead of recursion: a deeply nested file cannot exhaust the call stack.
    const regions: [number, number][] = [[0, lines.length]]
    while (regions.length) {
      const [from, to] = regions.pop()!
      let i = from
      while (i < to && kinds[i] === "blank") i++
      if (i >= to) continue
      const level = indent(lines[i])
      let run: Item[] = []
      const close = () => {
        judge(run, found)
        run = []
      }
      let blank = true
      // Nothing of this region seen yet: its first comment is first in its enclosing block.
      let first = true
      while (i < to) {
        if (kinds[i] === "blank") {
          blank = true
          i++
          continue
        }
        const at = indent(lines[i])
        const opens = blank || first
        first = false
        if (at !== level) {
          // A continuation line or text outside the structure: the run ends here.
          close()
          blank = false
          i++
          continue
        }
        if (kinds[i] === "comment" || kinds[i] === "doc") {
          const end = ends.get(i)
          if (end === undefined) {
            close()
            blank = false
            i++
            continue
          }
          run.push({ comment: i, blankBefore: opens })
          blank = false
          i = end + 1
          continue
        }
        // A code line at this indentation: a block when the lines after it (past blanks) are deeper.
        let j = i + 1
        while (j < to && kinds[j] === "blank") j++
        if (j >= to || indent(lines[j]) <= level) {
          close()
          blank = false
          i++
          continue
        }
        const body = j
        while (j < to && (kinds[j] === "blank" || indent(lines[j]) > level)) j++
        // Trailing blank lines belong to what follows.
        let bodyEnd = j
        while (bodyEnd > body && kinds[bodyEnd - 1] === "blank") bodyEnd--
        regions.push([body, bodyEnd])
        if (j < to && indent(lines[j]) === level && kinds[j] === "code" && CLOSER.test(lines[j].trim())) j++
        const word = head(lines[i])
        if (word === undefined || CONTROL.has(word)) close()
        else run.push({ block: word })
        blank = false
        i = j
      }
      close()
    }
    return found
  }

  /** Marks the comments of one run (see `headings`) that head groups of blocks. */
  function judge(run: Item[], found: Set<number>) {
    const groups: { comment: number; blankBefore: boolean; heads: string[] }[] = []
    let current: (typeof groups)[number] | undefined
    for (const item of run) {
      if ("comment" in item) groups.push((current = { ...item, heads: [] }))
      else current?.heads.push(item.block)
    }
    const word = (g: (typeof groups)[number]) => (g.heads.every((h) => h === g.heads[0]) ? g.heads[0] : undefined)
    const many = new Set(groups.filter((g) => g.heads.length >= 2).map(word))
    for (const g of groups)
      if (g.blankBefore && g.heads.length && word(g) !== undefined && many.has(word(g))) found.add(g.comment)
  }

  /**
   * The first lines of the comments that head groups of entries in a list: the elements of an array or tuple, the
   * entries of a dict or object literal, the parameters or arguments of a call or signature (`__all__ = [` … `# Type
   * aliases and variables` / `"CORE_RESULT_TYPES",` …; `def __init__(` … `# Request handlers` / `on_list_tools: …,`).
   * A comment is one when it sits at the entries' indentation right above an entry, in a run of lines at that
   * indentation or deeper (the structure as far as the text shows it) whose lines at that indentation are all entries
   * or their parts (ending in `,`, opening or closing a bracket, continuing an expression; a last entry without a
   * comma) and comments, where two or more comments head entries and some group holds two or more of them (the
   * entries before the first comment are a group: the text may start inside the structure). So a file's own
   * convention of headings in a list makes a new one a heading; "# Set the timeout" / `"timeout": 30,` / "# Set the
   * retries" / `"retries": 3,` (one entry each) is not, nor is a comment over a statement in a body.
   *
   * @example
   * const lines = ["__all__ = [", '    "a",', '    "b",', "    # Types", '    "T",', "]"]
   * CommentLayout.entryHeadings(lines, kinds, comments) // Set {3}
   */
  export function entryHeadings(
    lines: string[],
    kinds: CommentSyntax.LineKind[],
    comments: CommentSyntax.Comment[],
  ): Set<number> {
    const ends = new Map<number, number>()
    for (const c of comments) if (!c.trailing && kinds[c.line] === "comment") ends.set(c.line, c.end)
    const found = new Set<number>()
    // Comments already judged with the run they are in: each run is scanned once.
    const seen = new Set<number>()
    for (const c of comments) {
      if (!ends.has(c.line) || seen.has(c.line)) continue
      const level = indent(lines[c.line])
      if (level === 0) continue
      let from = c.line
      while (from > 0 && (kinds[from - 1] === "blank" || indent(lines[from - 1]) >= level)) from--
      let to = c.end
      while (to + 1 < lines.length && (kinds[to + 1] === "blank" || indent(lines[to + 1]) >= level)) to++
      let last = -1
      for (let i = to; i >= from && last < 0; i--) if (kinds[i] === "code" && indent(lines[i]) === level) last = i
      const groups: { comment?: number; entries: number; right: boolean }[] = [{ entries: 0, right: false }]
      let list = true
      for (let i = from; i <= to; i++) {
        if (kinds[i] === "blank" || indent(lines[i]) !== level) continue
        const end = ends.get(i)
        if (end !== undefined) {
          // Right above an entry: the next line is code at this indentation.
          const right = kinds[end + 1] === "code" && indent(lines[end + 1] ?? "") === level
          groups.push({ comment: i, entries: 0, right })
          i = end
          continue
        }
        if (kinds[i] !== "code") continue
        const t = lines[i].trim()
        if (t.endsWith(",") || i === last) groups[groups.length - 1].entries++
        else if (!ENTRY_PART.test(t)) {
          list = false
          break
        }
      }
      // Every comment at this indentation in the run has the same run: each run is scanned once.
      for (let i = from; i <= to; i++) if (ends.has(i) && indent(lines[i]) === level) seen.add(i)
      if (!list) continue
      const headed = groups.filter((g) => g.comment !== undefined && g.right && g.entries > 0)
      if (headed.length < 2 || !groups.some((g) => g.entries >= 2)) continue
      for (const g of headed) found.add(g.comment!)
    }
    return found
  }

  /** Characters a rule line or a banner's trailing run is made of. */
  const RULE_CHARS = "-=*#~/"

  /** The longest run of one rule character in `text` (a linear scan: a regex with a run quantifier backtracks). */
  function longestRun(text: string) {
    let best = 0
    let run = 0
    for (let i = 0; i < text.length; i++) {
      run = RULE_CHARS.includes(text[i]) && text[i] === text[i - 1] ? run + 1 : RULE_CHARS.includes(text[i]) ? 1 : 0
      best = Math.max(best, run)
    }
    return best
  }

  /** A comment line that is a rule: no letter or digit, a run of four or more of one of `- = * # ~ /` (marks included). */
  function ruleLine(line: string) {
    return !/[\p{L}\p{N}]/u.test(line) && longestRun(line) >= 4
  }

  /** A comment line of words ending in a run of three or more of one rule character after a space (`-- Parse ----`). */
  function bannerLine(line: string) {
    let t = line.trimEnd()
    if (t.endsWith("*/")) t = t.slice(0, -2).trimEnd()
    let i = t.length
    while (i > 0 && t[i - 1] === t[t.length - 1] && RULE_CHARS.includes(t[i - 1])) i--
    return t.length - i >= 3 && i > 0 && /\s/.test(t[i - 1]) && /[\p{L}\p{N}]/u.test(t.slice(0, i))
  }

  /**
   * The first lines of the comments that are section banners: a line of words ending in a run of dashes, equals
   * signs or the like (`-- Parse Request ------`, `# ==== Helpers ====`), or a line of words with a rule line in the
   * same comment (`// Parsers` / `// --------`, `# ----` / `# Setup` / `# ----`). A banner names the section below
   * it, whose names repeat its words: a heading, not narration (plenary.nvim 08c0eabcb1's `-- Parse response ---…`
   * over `parse.response = function(…)`, tester's RW4). Any language: the lines are read as written.
   *
   * @example
   * CommentLayout.banners(["-- Parse response -----", "parse.response = function(lines)"], comments) // Set {0}
   */
  export function banners(lines: string[], comments: CommentSyntax.Comment[]): Set<number> {
    const found = new Set<number>()
    for (const c of comments) {
      if (c.trailing) continue
      let words = false
      let rule = false
      for (let i = c.line; i <= c.end; i++) {
        if (bannerLine(lines[i])) found.add(c.line)
        if (ruleLine(lines[i])) rule = true
        else if (/[\p{L}\p{N}]/u.test(lines[i])) words = true
      }
      if (words && rule) found.add(c.line)
    }
    return found
  }

  /** A line of an entry that is not its end: it opens or closes a bracket, or continues an expression. */
  const ENTRY_PART = /([[({]|=>|->)$|^([)\]}]|\||&&|\|\||\+|-\s|\.|\?|or\b|and\b)/

  /** Words that open a statement, never a function's return type. */
  const STATEMENT = new Set(
    "if else for while do switch case return sizeof catch new delete throw goto typedef using namespace template".split(
      " ",
    ),
  )

  /** Lines a definition's head may span (return type, name, parameters) before its `{`. */
  const SPAN = 8
  /** Characters a definition's head may hold. */
  const HEAD = 2000

  /**
   * True when the code from `lines[at]` is a C or C++ function definition: a return type (one or more words, `*`,
   * `&`, template arguments), a name (`::` allowed), a balanced parameter list, then only qualifiers (`const`,
   * `noexcept`, `override`, `-> T`) before a `{`, over up to eight lines: `time_t` / `grid_line_time(const struct
   * grid_line *gl)` / `{` (OpenBSD style(9)), `static int foo(int a) {`, `template <typename T>` / `T max(T a, T b)
   * {`. Not a prototype (`;`), a call, a control statement, an initialiser (`=`) or a macro without a return type
   * (`TAILQ_FOREACH(x, &l, e) {`).
   *
   * @example
   * CommentLayout.cDefinition(["time_t", "grid_line_time(const struct grid_line *gl)", "{"], 0) // true
   * CommentLayout.cDefinition(["if (x) {"], 0) // false
   */
  export function cDefinition(lines: string[], at: number): boolean {
    let text = ""
    for (let i = at; i < lines.length && i < at + SPAN; i++) {
      if (lines[i].length > HEAD) return false
      // A comment after the parameters (`foo(int a) /* why */`) is not part of the head.
      const line = lines[i]
        .replace(/\/\*.*?\*\//g, " ")
        .replace(/\/\/.*$/, "")
        .trim()
      if (!lines[i].trim() || line.startsWith("#")) return false
      text += " " + line
      if (text.length > HEAD) return false
      if (line.includes("{")) break
    }
    const brace = text.indexOf("{")
    if (brace < 0) return false
    let head = text.slice(0, brace).trim()
    if (head.includes(";")) return false
    const template = /^template\s*<[^<>{};()]*(<[^<>{};()]*>[^<>{};()]*)*>\s*/.exec(head)
    if (template) head = head.slice(template[0].length)
    const open = head.indexOf("(")
    if (open < 0) return false
    const before = head.slice(0, open)
    if (/[=;{}()[\]"'#]/.test(before)) return false
    // Template arguments of the return type (`std::map<K, std::vector<V>>`) are part of a word.
    let words = before
    for (let k = 0; k < 3; k++) words = words.replace(/<[^<>]*>/g, " ")
    const tokens = words.split(/[\s*&]+/).filter(Boolean)
    if (!tokens.every((t) => /^~?[A-Za-z_]\w*(::~?[A-Za-z_]\w*)*$/.test(t))) return false
    if (STATEMENT.has(tokens[0]) || STATEMENT.has(tokens[tokens.length - 1])) return false
    // A return type and a name; a qualified name alone (`Foo::Foo(…)`, `Foo::~Foo()`) is a constructor or destructor.
    if (tokens.length < 2 && !tokens[0]?.includes("::")) return false
    let depth = 0
    let close = -1
    for (let k = open; k < head.length; k++) {
      if (head[k] === "(") depth++
      else if (head[k] === ")" && --depth === 0) {
        close = k
        break
      }
    }
    if (close < 0) return false
    return /^[\s\w:&*<>,-]*$/.test(head.slice(close + 1))
  }
}
