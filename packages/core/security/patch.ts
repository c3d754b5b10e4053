import path from "path"
import z from "zod"

/**
 * The guard's reading of an `apply_patch` call, kept identical to OpenCode's own (1.2.15, 1.18.x and the 1.18 "core"
 * tool stack), and the exact lines such a patch changes in a file.
 *
 * How OpenCode reads a patch (both versions): the text is trimmed, a `cat <<'EOF' … EOF` wrapper is removed, and the
 * rest is cut at `\n` only, so a carriage return or a Unicode line separator stays inside its line. The envelope runs
 * from the first line that trims to `*** Begin Patch` to the first that trims to `*** End Patch`. File headers are
 * lines starting exactly with `*** Add File:`, `*** Delete File:` or `*** Update File:` (path trimmed with
 * `String.prototype.trim`); `*** Move to:` directly after an update header names its destination. Paths resolve
 * with `path.resolve(directory, p)`: no `~` expansion, absolute paths kept.
 *
 * - 1.2.15 and 1.18 (`opencode/src/patch`, the parser `apply_patch` uses in both) skip every line they do not
 *   understand, drop update lines before the first `@@`, never honour `*** End of File` (the chunk loop stops at any
 *   `***` line first) and so also drop the chunks that follow it.
 * - The 1.18 core parser (`core/src/patch.ts`, behind the V2 tool stack) throws on any such line, honours
 *   `*** End of File` and keeps the chunks after it; the V2 tool rejects moves.
 *
 * {@link parse} returns the lenient reading (what the shipped `apply_patch` does) and lists every reason the guard
 * must refuse the patch instead of trusting that reading: lines any reading skips, header look-alikes, control or
 * separator characters in headers, paths with stray whitespace, text outside the envelope, duplicate targets, and any
 * disagreement with the strict reading. {@link derive} and {@link affected} replay OpenCode's hunk location (exact,
 * then trailing-whitespace-insensitive, then trimmed, then punctuation-normalised matching; end-of-file anchoring; the
 * order rules between chunks) on the current text of a file.
 *
 * @example
 * const { files, problems } = SecurityPatch.parse("*** Begin Patch\n*** Delete File: a.txt\n*** End Patch")
 * // files: [{ change: "delete", path: "a.txt", chunks: [], line: 2, core: true }], problems: []
 */
export namespace SecurityPatch {
  /** The OpenCode implementations modelled: 1.2.15, 1.18.x's `apply_patch`, and 1.18.x's core (V2) tool stack. */
  export const Version = z.enum(["1.2.15", "1.18", "1.18-core"])
  export type Version = z.infer<typeof Version>
  export const VERSIONS: readonly Version[] = Version.options

  export const Chunk = z.object({
    /** The text after `@@`, trimmed; OpenCode first seeks a line equal to it. */
    context: z.string().optional(),
    /** Lines the chunk expects (context and `-` lines), without their prefix. */
    old: z.array(z.string()),
    /** Lines that replace them (context and `+` lines). */
    new: z.array(z.string()),
    /** Followed by `*** End of File`: only the 1.18 core reading anchors such a chunk at the end of the file. */
    eof: z.boolean(),
  })
  export type Chunk = z.infer<typeof Chunk>

  export const File = z.object({
    change: z.enum(["add", "update", "delete", "move"]),
    /** The path as written in the header, trimmed the way OpenCode trims it (see {@link resolve}). */
    path: z.string(),
    /** The destination of a move. */
    to: z.string().optional(),
    /** Update and move: the chunks, in order. */
    chunks: z.array(Chunk),
    /** Add: the text OpenCode writes (a final newline is added when missing). */
    content: z.string().optional(),
    /** 1-based line of the header in the patch (after trimming and removing a heredoc wrapper). */
    line: z.number(),
    /** The 1.18 core parser accepts the patch and reads it the same way (when false, that stack changes nothing). */
    core: z.boolean(),
  })
  export type File = z.infer<typeof File>

  /** A change of a text: the characters `[start, end)` (UTF-16 offsets) become `insert`. */
  export const Replacement = z.object({ start: z.number(), end: z.number(), insert: z.string() })
  export type Replacement = z.infer<typeof Replacement>

  export type Parsed = {
    /** OpenCode's reading (also when there are problems, so callers can see what OpenCode would do). */
    files: File[]
    /** Reasons to refuse the patch; empty when every reading agrees and nothing is left unread. */
    problems: string[]
  }

  const BEGIN = "*** Begin Patch"
  const END = "*** End Patch"
  const EOF_MARK = "*** End of File"
  const HEADERS = { add: "*** Add File:", delete: "*** Delete File:", update: "*** Update File:" } as const
  const MOVE = "*** Move to:"

  /** Characters no header may hold: controls (CR, NUL, NEL, …), format characters, line and paragraph separators. */
  const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u
  /** Whitespace other than U+0020 (tab, NBSP, ideographic space, …). */
  const ODD_SPACE = /[^\S ]/
  /** What other readers (editors, `split(/\r?\n/)`, people) may take as the end of a line. */
  const OTHER_BREAKS = /\r\n?|[\u2028\u2029\u0085\u000b\u000c\u0000]/
  /** A line that looks like envelope structure to a lenient reader (any case, any spacing, any number of stars). */
  const LOOKALIKE =
    /^\s*\*+\s*(?:(?:add|update|delete)\s*file|move\s*to|begin\s*patch|end\s*patch|end\s*of\s*file)(?![a-z])/i
  const FORMAT_CHARS = /\p{Cf}/gu

  /** `cat <<'EOF'` … `EOF` around the whole patch; both versions unwrap it after trimming. */
  const HEREDOC = new RegExp(
    [
      "^(?:cat\\s+)?<<", // optional `cat`, then the redirection
      "['\"]?(\\w+)['\"]?", // the delimiter word, each quote optional on its own
      "\\s*\\n([\\s\\S]*?)\\n", // the body, as short as possible
      "\\1\\s*$", // the delimiter again, only whitespace after it
    ].join(""),
  )

  /**
   * The absolute path OpenCode writes for a path of a patch (`path.resolve`, no `~` expansion).
   *
   * @example
   * SecurityPatch.resolve("/repo", "~/../.opencode-security.json") // "/repo/.opencode-security.json"
   */
  export function resolve(directory: string, p: string): string {
    return path.resolve(directory, p)
  }

  type Use = "marker" | "header" | "move" | "context" | "content" | "eof"

  type Lenient = { files: (File & { lines: number[] })[]; use: (Use | undefined)[] }

  /** The lenient reading shared by 1.2.15 and 1.18's `apply_patch`; records what each line was used as. */
  function lenient(lines: string[], begin: number, end: number): Lenient {
    const use: (Use | undefined)[] = []
    use[begin] = "marker"
    use[end] = "marker"
    const files: Lenient["files"] = []
    let i = begin + 1
    while (i < end) {
      const line = lines[i]
      const kind = headerKind(line)
      const p = kind ? line.slice(HEADERS[kind].length).trim() : ""
      if (!kind || !p) {
        i++
        continue
      }
      use[i] = "header"
      const file: Lenient["files"][number] = { change: kind, path: p, chunks: [], line: i + 1, core: false, lines: [i] }
      files.push(file)
      i++
      if (kind === "delete") continue
      if (kind === "add") {
        const out: string[] = []
        for (; i < lines.length && !lines[i].startsWith("***"); i++) {
          if (!lines[i].startsWith("+")) continue
          out.push(lines[i].slice(1))
          use[i] = "content"
        }
        const text = out.join("\n")
        file.content = text === "" || text.endsWith("\n") ? text : text + "\n"
        continue
      }
      if (i < lines.length && lines[i].startsWith(MOVE)) {
        use[i] = "move"
        const to = lines[i].slice(MOVE.length).trim()
        // An empty destination is no move at all for OpenCode (`move_path` is falsy).
        if (to) {
          file.change = "move"
          file.to = to
        }
        file.lines.push(i)
        i++
      }
      while (i < lines.length && !lines[i].startsWith("***")) {
        if (!lines[i].startsWith("@@")) {
          i++
          continue
        }
        use[i] = "context"
        const chunk: Chunk = { context: lines[i].slice(2).trim() || undefined, old: [], new: [], eof: false }
        i++
        for (; i < lines.length && !lines[i].startsWith("@@") && !lines[i].startsWith("***"); i++) {
          const l = lines[i]
          const body = l.slice(1)
          if (l.startsWith(" ")) (chunk.old.push(body), chunk.new.push(body))
          else if (l.startsWith("-")) chunk.old.push(body)
          else if (l.startsWith("+")) chunk.new.push(body)
          else continue
          use[i] = "content"
        }
        file.chunks.push(chunk)
      }
      // The chunk loop stops at any `***` line, so `*** End of File` ends the file's chunks in this reading.
      if (lines[i] === EOF_MARK) use[i] = "eof"
    }
    return { files, use }
  }

  function headerKind(line: string): keyof typeof HEADERS | undefined {
    for (const kind of ["add", "delete", "update"] as const) if (line.startsWith(HEADERS[kind])) return kind
    return undefined
  }

  type StrictFile = { change: File["change"]; path: string; to?: string; chunks: Chunk[]; content?: string }

  /** The 1.18 core reading: every line must be understood; `*** End of File` anchors its chunk. */
  function strict(lines: string[], begin: number, end: number): StrictFile[] | string {
    const out: StrictFile[] = []
    let i = begin + 1
    while (i < end) {
      const line = lines[i]
      const kind = headerKind(line)
      if (!kind) return `line ${i + 1} is not a file header`
      const p = line.slice(HEADERS[kind].length).trim()
      if (!p) return `line ${i + 1} has no path`
      i++
      if (kind === "delete") {
        out.push({ change: "delete", path: p, chunks: [] })
        continue
      }
      if (kind === "add") {
        const body: string[] = []
        for (; i < lines.length && !lines[i].startsWith("***"); i++) {
          if (!lines[i].startsWith("+")) return `line ${i + 1} of an added file does not start with +`
          body.push(lines[i].slice(1))
        }
        const text = body.join("\n")
        out.push({
          change: "add",
          path: p,
          chunks: [],
          content: text === "" || text.endsWith("\n") ? text : text + "\n",
        })
        continue
      }
      const file: StrictFile = { change: "update", path: p, chunks: [] }
      if (lines[i]?.startsWith(MOVE)) {
        const to = lines[i].slice(MOVE.length).trim()
        if (!to) return `line ${i + 1} moves to no path`
        file.change = "move"
        file.to = to
        i++
      }
      while (i < lines.length && !lines[i].startsWith("***")) {
        if (!lines[i].startsWith("@@")) return `line ${i + 1} of an updated file is outside any @@ chunk`
        const chunk: Chunk = { context: lines[i].slice(2).trim() || undefined, old: [], new: [], eof: false }
        i++
        for (; i < lines.length && !lines[i].startsWith("@@"); i++) {
          const l = lines[i]
          if (l === EOF_MARK) {
            chunk.eof = true
            i++
            break
          }
          if (l.startsWith("***")) break
          if (l.startsWith(" ")) (chunk.old.push(l.slice(1)), chunk.new.push(l.slice(1)))
          else if (l.startsWith("-")) chunk.old.push(l.slice(1))
          else if (l.startsWith("+")) chunk.new.push(l.slice(1))
          else return `line ${i + 1} of a chunk is not a context, - or + line`
        }
        file.chunks.push(chunk)
      }
      if (!file.chunks.length) return `the update of ${p} has no @@ chunk`
      out.push(file)
    }
    return out
  }

  const sameLines = (a: readonly string[], b: readonly string[]) =>
    a.length === b.length && a.every((l, i) => l === b[i])

  function sameReading(a: File, b: StrictFile): boolean {
    if (a.change !== b.change || a.path !== b.path || a.to !== b.to || a.content !== b.content) return false
    if (a.chunks.length !== b.chunks.length) return false
    return a.chunks.every(
      (c, i) =>
        c.context === b.chunks[i].context && sameLines(c.old, b.chunks[i].old) && sameLines(c.new, b.chunks[i].new),
    )
  }

  const show = (line: string) => JSON.stringify(line.length > 80 ? line.slice(0, 80) + "…" : line)

  /** The problem with a header's path text (what follows the colon), if any. */
  function pathProblem(raw: string, what: string): string | undefined {
    const p = raw.trim()
    if (!p) return `${what} names no path`
    if (raw !== " " + p) return `${what} has whitespace around its path other than one space after the colon`
    if (HIDDEN.test(p)) return `${what} has a control, format or line-separator character in its path`
    if (ODD_SPACE.test(p)) return `${what} has whitespace other than plain spaces in its path`
    return undefined
  }

  /**
   * OpenCode's reading of a patch and every reason to refuse it. Pass the project directory so targets named twice
   * (relative and absolute spellings, case variants) are found.
   *
   * @example
   * SecurityPatch.parse("*** Begin Patch\n*** Update File: .opencode-security.json\r\r\n@@\n-a\n+b\n*** End Patch").problems
   * // ["line 2: a patch header containing a carriage return or other line break …"]
   */
  export function parse(text: string, options: { directory?: string } = {}): Parsed {
    const problems: string[] = []
    const trimmed = text.trim()
    const wrapped = HEREDOC.exec(trimmed)
    const body = wrapped ? wrapped[2] : trimmed
    const lines = body.split("\n")
    const begin = lines.findIndex((l) => l.trim() === BEGIN)
    const end = lines.findIndex((l) => l.trim() === END)
    if (begin < 0 || end < 0 || begin >= end) {
      const diff = lines.some((l) => /^(?:---|\+\+\+) \S/.test(l)) && lines.some((l) => l.startsWith("@@"))
      problems.push(
        diff
          ? "OpenCode does not accept unified diffs: apply_patch needs the *** Begin Patch … *** End Patch envelope"
          : "OpenCode rejects this patch: no *** Begin Patch line before an *** End Patch line",
      )
      return { files: [], problems }
    }
    const read = lenient(lines, begin, end)
    const files: File[] = read.files.map(({ lines: _, ...f }) => f)

    if (lines.filter((l) => l.trim() === BEGIN).length > 1 || lines.filter((l) => l.trim() === END).length > 1)
      problems.push("the patch has more than one *** Begin Patch or *** End Patch line")
    if (lines[begin] !== BEGIN || lines[end] !== END)
      problems.push("the *** Begin Patch / *** End Patch lines have extra characters around them")
    lines.forEach((l, i) => {
      if ((i < begin || i > end) && l.trim())
        problems.push(`line ${i + 1}: text outside the *** Begin Patch … *** End Patch envelope ${show(l)}`)
    })

    lines.forEach((l, i) => {
      if (i <= begin || i >= end) return
      const use = read.use[i]
      if (use === undefined && l !== "")
        problems.push(`line ${i + 1}: OpenCode skips this line without applying it ${show(l)}`)
      if (use === "context" && /[\p{Cc}\p{Zl}\p{Zp}]/u.test(l.replace(/\t/g, "")))
        problems.push(`line ${i + 1}: an @@ line with a control or line-separator character`)
      if (use === "content" && /^--- \S/.test(l) && /^\+\+\+ \S/.test(lines[i + 1] ?? ""))
        problems.push(`line ${i + 1}: unified diff file headers inside the envelope, which OpenCode reads as content`)
    })

    // Header look-alikes: a line (or a piece of one, cut where other readers end lines) that a lenient reader takes
    // as structure must be exactly the structure OpenCode reads.
    lines.forEach((l, i) => {
      const pieces = l.split(OTHER_BREAKS)
      pieces.forEach((piece, k) => {
        if (!LOOKALIKE.test(piece.replace(FORMAT_CHARS, ""))) return
        if (pieces.length > 1)
          problems.push(
            `line ${i + 1}: a patch header containing a carriage return or other line break, which readers split differently`,
          )
        else if (k === 0 && !read.use[i]?.match(/^(?:marker|header|move|eof)$/))
          problems.push(`line ${i + 1}: looks like a patch header but OpenCode does not read it as one ${show(l)}`)
      })
    })

    read.files.forEach((f) => {
      const header = lines[f.lines[0]]
      const kind = headerKind(header)!
      const bad = pathProblem(header.slice(HEADERS[kind].length), `the header on line ${f.line}`)
      if (bad) problems.push(bad)
      if (f.lines.length > 1) {
        const move = pathProblem(lines[f.lines[1]].slice(MOVE.length), `the *** Move to: line ${f.lines[1] + 1}`)
        if (move) problems.push(move)
      }
      if ((f.change === "update" || f.change === "move") && !f.chunks.length)
        problems.push(`the update of ${f.path} (line ${f.line}) has no @@ chunk`)
    })
    if (!files.length) problems.push("the patch names no file OpenCode would change")

    const seen = new Map<string, string>()
    const key = (p: string) =>
      resolve(options.directory ?? "/", p)
        .normalize("NFC")
        .toLowerCase()
    for (const f of files)
      for (const p of f.to === undefined ? [f.path] : [f.path, f.to]) {
        const k = key(p)
        const before = seen.get(k)
        if (before !== undefined)
          problems.push(`the patch names ${p} more than once (also as ${before}); send one section per file`)
        else seen.set(k, p)
      }

    const core = strict(lines, begin, end)
    if (typeof core !== "string") {
      const same = core.length === files.length && files.every((f, i) => sameReading(f, core[i]))
      if (!same) problems.push("OpenCode 1.2.15 and 1.18 read this patch differently (check *** End of File placement)")
      else {
        const moves = core.some((f) => f.change === "move")
        files.forEach((f, i) => {
          f.chunks.forEach((c, j) => (c.eof = core[i].chunks[j].eof))
          f.core = !moves
        })
      }
    }
    return { files, problems }
  }

  /** A compiled plan of a new text: kept slices of the old one and inserted strings, in order. */
  export type Piece = { from: number; to: number } | { text: string }

  /**
   * The replacements that turn `old` into the text the pieces describe (kept slices must increase).
   *
   * @example
   * SecurityPatch.replacements("abc", [{ from: 0, to: 1 }, { text: "X" }, { from: 2, to: 3 }]) // [{ start: 1, end: 2, insert: "X" }]
   */
  export function replacements(old: string, pieces: readonly Piece[]): Replacement[] {
    const out: Replacement[] = []
    let cursor = 0
    let pending = ""
    for (const piece of pieces) {
      if ("text" in piece) {
        pending += piece.text
        continue
      }
      if (piece.to <= piece.from) continue
      if (piece.from < cursor) throw new Error("pieces out of order")
      if (piece.from > cursor || pending) out.push({ start: cursor, end: piece.from, insert: pending })
      cursor = piece.to
      pending = ""
    }
    if (cursor < old.length || pending) out.push({ start: cursor, end: old.length, insert: pending })
    return out
  }

  /**
   * `text` with the replacements applied (non-overlapping; any order).
   *
   * @example
   * SecurityPatch.apply("abc", [{ start: 1, end: 2, insert: "X" }]) // "aXc"
   */
  export function apply(text: string, edits: readonly Replacement[]): string {
    let out = ""
    let cursor = 0
    for (const e of [...edits].sort((a, b) => a.start - b.start || a.end - b.end)) {
      out += text.slice(cursor, e.start) + e.insert
      cursor = e.end
    }
    return out + text.slice(cursor)
  }

  const BOM = "\uFEFF"

  /**
   * How a version handles a byte order mark: `read` BOMs are removed before the text is split or searched, `write`
   * more are stripped from the start of the new text, and one is put back when the old or the new text had one.
   */
  export type BomRule = { read: number; write: number } | undefined

  /**
   * Pieces of the final file from pieces of the searched text (offsets already in the full old text): the version's
   * BOM handling applied.
   *
   * @example
   * SecurityPatch.withBom("\uFEFFab", 1, [{ from: 1, to: 3 }], { read: 1, write: 2 }) // [{ from: 0, to: 1 }, { from: 1, to: 3 }]
   */
  export function withBom(old: string, lead: number, pieces: Piece[], rule: BomRule): Piece[] {
    if (!rule) return pieces
    const out = pieces.map((p) => ({ ...p }))
    let stripped = 0
    for (let n = 0; n < rule.write; n++) {
      const first = out.find((p) => ("text" in p ? p.text.length > 0 : p.to > p.from))
      if (!first) break
      const starts = "text" in first ? first.text.startsWith(BOM) : old[first.from] === BOM
      if (!starts) break
      if ("text" in first) first.text = first.text.slice(1)
      else first.from++
      stripped++
    }
    const had = lead > 0
    if (!had && !stripped) return out
    return [had ? { from: 0, to: 1 } : { text: BOM }, ...out]
  }

  /**
   * Leading BOMs a version removes before reading (`limit` at most).
   *
   * @example
   * SecurityPatch.leadingBoms("\uFEFF\uFEFFx", 2) // 2
   */
  export function leadingBoms(text: string, limit: number): number {
    let n = 0
    while (n < limit && text[n] === BOM) n++
    return n
  }

  const normalisePunctuation = (s: string) =>
    s
      .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
      .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
      .replace(/[\u2010-\u2015]/g, "-")
      .replace(/\u2026/g, "...")
      .replace(/\u00A0/g, " ")

  /** The four comparisons OpenCode tries in turn, each over the whole file before the next. */
  const PASSES: { name: string; same: (a: string, b: string) => boolean }[] = [
    { name: "exact", same: (a, b) => a === b },
    { name: "trailing whitespace ignored", same: (a, b) => a.trimEnd() === b.trimEnd() },
    { name: "trimmed", same: (a, b) => a.trim() === b.trim() },
    {
      name: "Unicode punctuation normalised",
      same: (a, b) => normalisePunctuation(a.trim()) === normalisePunctuation(b.trim()),
    },
  ]

  /**
   * Where OpenCode finds `pattern` in `lines` from line `from` (end-of-file first when anchored; `at` -1 when
   * nowhere), and which comparison found it.
   *
   * @example
   * SecurityPatch.seek(["a", " b ", "c"], ["b"], 0) // { at: 1, pass: "trimmed" }
   */
  export function seek(lines: readonly string[], pattern: readonly string[], from: number, eof = false) {
    if (!pattern.length) return { at: -1, pass: "" }
    const fits = (at: number, same: (a: string, b: string) => boolean) =>
      pattern.every((p, j) => same(lines[at + j], p))
    for (const pass of PASSES) {
      const last = lines.length - pattern.length
      if (eof && last >= from && fits(last, pass.same)) return { at: last, pass: pass.name }
      for (let at = from; at <= last; at++) if (fits(at, pass.same)) return { at, pass: pass.name }
    }
    return { at: -1, pass: "" }
  }

  /** One chunk placed by OpenCode: lines `[line, line + remove)` of its line array become `insert`. */
  export type Placed = { line: number; remove: number; insert: string[]; pass: string }

  export type Derived =
    | {
        ok: true
        /** The file's new text (for a move: the text written to `to`; the source is removed). */
        content: string
        /** Character replacements of the current text that give `content`. */
        edits: Replacement[]
        /** Where each chunk landed (0-based indexes into OpenCode's line array). */
        placed: Placed[]
      }
    | { ok: false; reason: string }

  /** The BOM handling of each version's `apply_patch`. */
  const PATCH_BOM: Record<Version, BomRule> = {
    "1.2.15": undefined,
    "1.18": { read: 2, write: 2 },
    "1.18-core": { read: 1, write: 2 },
  }

  /**
   * What one version's `apply_patch` makes of `current` for this file section: the new text and the exact
   * replacements, or why that version fails (then it changes nothing). Add and delete replace the whole text.
   *
   * @example
   * const [file] = SecurityPatch.parse("*** Begin Patch\n*** Update File: a\n@@\n-b\n+B\n*** End Patch").files
   * SecurityPatch.derive(file, "a\nb\nc\n", "1.18") // { ok: true, content: "a\nB\nc\n", edits: [{ start: 2, end: 4, insert: "B\n" }], … }
   */
  export function derive(file: File, current: string, version: Version): Derived {
    if (version === "1.18-core" && !file.core)
      return { ok: false, reason: "the 1.18 core apply_patch rejects this patch" }
    if (file.change === "add") {
      const content = file.content ?? ""
      return { ok: true, content, edits: [{ start: 0, end: current.length, insert: content }], placed: [] }
    }
    if (file.change === "delete")
      return { ok: true, content: "", edits: [{ start: 0, end: current.length, insert: "" }], placed: [] }

    const rule = PATCH_BOM[version]
    const lead = rule ? leadingBoms(current, rule.read) : 0
    const text = current.slice(lead)
    const lines = text.split("\n")
    if (lines[lines.length - 1] === "") lines.pop()
    // Offsets of each line in `current`, and whether its newline is in the text.
    const starts: number[] = []
    let at = lead
    for (const l of lines) (starts.push(at), (at += l.length + 1))

    const placed: Placed[] = []
    let from = 0
    for (const [n, chunk] of file.chunks.entries()) {
      if (chunk.context) {
        const c = seek(lines, [chunk.context], from).at
        if (c < 0) return { ok: false, reason: `chunk ${n + 1}: OpenCode finds no line ${show(chunk.context)}` }
        from = c + 1
      }
      if (!chunk.old.length) {
        const end =
          version !== "1.18-core" && lines.length > 0 && lines[lines.length - 1] === ""
            ? lines.length - 1
            : lines.length
        placed.push({ line: end, remove: 0, insert: chunk.new, pass: "end of file (no old lines)" })
        continue
      }
      const eof = version === "1.18-core" && chunk.eof
      let old = chunk.old
      let neu = chunk.new
      let found = seek(lines, old, from, eof)
      if (found.at < 0 && old[old.length - 1] === "") {
        old = old.slice(0, -1)
        if (neu[neu.length - 1] === "") neu = neu.slice(0, -1)
        found = seek(lines, old, from, eof)
      }
      if (found.at < 0) return { ok: false, reason: `chunk ${n + 1}: OpenCode does not find its old lines` }
      placed.push({ line: found.at, remove: old.length, insert: neu, pass: found.pass })
      from = found.at + old.length
    }
    // Applied in reverse order of a stable sort by first line, as OpenCode does (this decides overlapping cases).
    const order = placed.map((p, i) => ({ p, i })).sort((a, b) => a.p.line - b.p.line || a.i - b.i)
    type Token = { line: number } | { text: string }
    const tokens: Token[] = lines.map((_, line) => ({ line }))
    for (const { p } of order.reverse()) tokens.splice(p.line, p.remove, ...p.insert.map((text): Token => ({ text })))
    const value = (t: Token) => ("text" in t ? t.text : lines[t.line])
    // The new text is every element followed by a newline, except that a final empty element adds nothing.
    const emitted = tokens.length && value(tokens[tokens.length - 1]) === "" ? tokens.slice(0, -1) : tokens
    const pieces: Piece[] = []
    for (const t of emitted) {
      if ("text" in t) {
        pieces.push({ text: t.text + "\n" })
        continue
      }
      const s = starts[t.line]
      const e = s + lines[t.line].length
      if (e < current.length) pieces.push({ from: s, to: e + 1 })
      else pieces.push({ from: s, to: e }, { text: "\n" })
    }
    const full = withBom(current, lead, pieces, rule)
    const edits = replacements(current, full)
    return { ok: true, content: apply(current, edits), edits, placed }
  }

  export type Affected =
    | {
        ok: true
        /** The union over every version that applies the section (sorted; may overlap when versions differ). */
        edits: Replacement[]
        /** Each version's own result. */
        versions: Partial<Record<Version, Derived>>
        /** The versions place the chunks differently. */
        disagree: boolean
      }
    | { ok: false; reason: string; versions: Partial<Record<Version, Derived>> }

  /**
   * The character ranges of `current` an update, add, delete or move section would change, over every modelled
   * version (a move removes its source: all of it). Fails only when no version can apply it (OpenCode then changes nothing, but the guard cannot be sure
   * of that and should refuse).
   *
   * @example
   * SecurityPatch.affected(file, "a\nb\n") // { ok: true, edits: [{ start: 2, end: 4, insert: "B\n" }], … }
   */
  export function affected(file: File, current: string): Affected {
    const versions: Partial<Record<Version, Derived>> = {}
    for (const v of VERSIONS) versions[v] = derive(file, current, v)
    const ok = VERSIONS.map((v) => versions[v]!).filter((d) => d.ok)
    if (!ok.length) {
      const reasons = [...new Set(VERSIONS.map((v) => versions[v]!).map((d) => (d.ok ? "" : d.reason)))]
      return { ok: false, reason: reasons.filter(Boolean).join("; "), versions }
    }
    if (file.change === "move")
      return { ok: true, edits: [{ start: 0, end: current.length, insert: "" }], versions, disagree: false }
    const seen = new Set<string>()
    const edits: Replacement[] = []
    for (const d of ok)
      for (const e of d.edits) {
        const k = `${e.start}:${e.end}:${e.insert}`
        if (!seen.has(k)) (seen.add(k), edits.push(e))
      }
    edits.sort((a, b) => a.start - b.start || a.end - b.end)
    const contents = new Set(ok.map((d) => d.content))
    return { ok: true, edits, versions, disagree: contents.size > 1 }
  }
}
