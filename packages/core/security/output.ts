import fs from "fs"
import { SecurityRedact } from "./redact"
import { SecuritySegments } from "./segments"

/**
 * Tool output read by its structure rather than by its content: OpenCode's `read` output numbers every line, so the
 * lines of a protected segment are known by number (short lines, lines starting inside a segment and the first line
 * glued to `<content>` included) and the instruction files OpenCode appends to it (`Instructions from: <path>`) are
 * known by path; `grep` output names each file and line, so matches in protected files go and matches inside
 * protected segments are redacted, and the match count is recomputed so it tells nothing about what was removed.
 * Content-based scanning still runs afterwards as the last line.
 *
 * @example
 * SecurityOutput.read(output, { lines: SecurityOutput.lineRanges(text, markers), instruction: (p) => p === "/r/secret/AGENTS.md" })
 */
export namespace SecurityOutput {
  /** A range of line numbers, both ends included, 1-based. */
  export type Lines = { from: number; to: number }

  export const SEGMENT_LABEL = "protected segment"

  /**
   * The lines a file's protected segments cover, markers excluded (an unclosed segment runs to the end), numbered as
   * a reader breaks lines (`SecuritySegments.Breaks`): `any` for OpenCode's read tool and LSP, which also break at a
   * lone `\r`; `lf` (the default) for ripgrep and git. Every line holding a character of a segment's body is
   * included, so a `\n`-numbered line that holds markers and body alike (a file with `\r` line ends) is one too.
   *
   * @example
   * SecurityOutput.lineRanges("a\n// @s\nkey\n// @e\nb", [{ start: "@s", end: "@e" }]) // [{ from: 3, to: 3 }]
   * SecurityOutput.lineRanges("a\r// @s\rkey\r// @e\rb", [{ start: "@s", end: "@e" }], "any") // [{ from: 3, to: 3 }]
   */
  export function lineRanges(
    text: string,
    pairs: readonly SecuritySegments.Pair[],
    breaks: SecuritySegments.Breaks = "lf",
  ): Lines[] {
    const segments = SecuritySegments.find(text, pairs)
    if (!segments.length) return []
    const starts = SecuritySegments.lineStarts(text, breaks)
    const out: Lines[] = []
    for (const seg of segments) {
      const body = SecuritySegments.body(text, seg)
      if (body.end <= body.start) continue
      out.push({ from: SecuritySegments.lineAt(starts, body.start), to: SecuritySegments.lineAt(starts, body.end - 1) })
    }
    return out
  }

  /** A file's protected lines when its text is over this size: all of them, if a start marker occurs in it at all. */
  export const MAX_RANGES_BYTES = 64 * 1024 * 1024

  /**
   * The protected line numbers of a file on disk (`lineRanges`), read now. A file too large to read whole
   * (`max`) that holds a start marker anywhere (found by streaming it) is protected whole: `[{ from: 1, to: Infinity }]`;
   * so is a file in UTF-16 with a byte-order mark whose decoded text holds a segment (`SecuritySegments.wide`).
   * A file that cannot be read has none (no tool can show it either).
   *
   * @example
   * SecurityOutput.fileRanges("/repo/src/app.ts", markers, "any") // [{ from: 3, to: 4 }]
   */
  export function fileRanges(
    file: string,
    pairs: readonly SecuritySegments.Pair[],
    breaks: SecuritySegments.Breaks,
    max = MAX_RANGES_BYTES,
  ): Lines[] {
    if (!pairs.length) return []
    try {
      const stat = fs.statSync(file)
      if (!stat.isFile()) return []
      if (stat.size > max) return SecuritySegments.scanFile(file, pairs).length ? [{ from: 1, to: Infinity }] : []
      return byteRanges(fs.readFileSync(file), pairs, breaks)
    } catch {
      return []
    }
  }

  /**
   * The protected line numbers of a file's bytes, by the rule of `fileRanges` (without its size limit): its UTF-8
   * reading's `lineRanges`, or every line when the file starts with a UTF-16 byte-order mark and a segment is found in
   * either reading. For a reader holding the bytes already (the `lsp` tool's answer filter).
   *
   * @example
   * SecurityOutput.byteRanges(Buffer.from("\ufeffa\n// @s\nk\n// @e\n", "utf16le"), [{ start: "@s", end: "@e" }], "any")
   * // [{ from: 1, to: Infinity }]
   */
  export function byteRanges(
    bytes: Buffer,
    pairs: readonly SecuritySegments.Pair[],
    breaks: SecuritySegments.Breaks,
  ): Lines[] {
    if (!pairs.length) return []
    const ranges = lineRanges(bytes.toString("utf8"), pairs, breaks)
    // ripgrep decodes every file that starts with a UTF-16 byte-order mark (FF FE, FE FF) as UTF-16, even when the
    // rest is UTF-8: its line numbers are not these, so a segment found in the UTF-8 view protects every line too.
    if (ranges.length) return SecuritySegments.utf16Marked(bytes) ? [{ from: 1, to: Infinity }] : ranges
    // UTF-16 with a byte-order mark (ripgrep searches it decoded): segments there protect every line.
    const wide = SecuritySegments.wide(bytes)
    return wide !== undefined && SecuritySegments.find(wide, pairs).length ? [{ from: 1, to: Infinity }] : []
  }

  /** The text split into lines wherever any reader breaks one, each with its line end. */
  function fineLines(text: string): { line: string; end: string; at: number }[] {
    const out: { line: string; end: string; at: number }[] = []
    let at = 0
    for (const m of text.matchAll(/\r\n|\n|\r/g)) {
      out.push({ line: text.slice(at, m.index), end: m[0], at })
      at = m.index + m[0].length
    }
    out.push({ line: text.slice(at), end: "", at })
    return out
  }

  /** Indexes into `fineLines` of every line holding a character of a segment's body. */
  function bodyLines(text: string, lines: { at: number }[], pairs: readonly SecuritySegments.Pair[]): Set<number> {
    const out = new Set<number>()
    const starts = lines.map((l) => l.at)
    for (const seg of SecuritySegments.find(text, pairs)) {
      const body = SecuritySegments.body(text, seg)
      if (body.end <= body.start) continue
      const a = SecuritySegments.lineAt(starts, body.start)
      const b = SecuritySegments.lineAt(starts, body.end - 1)
      for (let n = a; n <= b; n++) out.add(n - 1)
    }
    return out
  }

  /**
   * The file with every line inside a protected segment replaced by a redaction marker (line count, line ends and
   * marker lines kept): what the sandbox shows in place of the file. Lines break at `\r\n`, `\n` and a lone `\r`,
   * so no reader sees a body line whichever way it splits them.
   *
   * @example
   * SecurityOutput.mask("a\n// @s\nkey\n// @e\nb", [{ start: "@s", end: "@e" }]) // "a\n// @s\n[REDACTED: protected segment]\n// @e\nb"
   */
  export function mask(text: string, pairs: readonly SecuritySegments.Pair[]): string {
    const lines = fineLines(text)
    const hidden = bodyLines(text, lines, pairs)
    if (!hidden.size) return text
    const label = SecurityRedact.marker(SEGMENT_LABEL)
    return lines.map((l, i) => (hidden.has(i) ? label : l.line) + l.end).join("")
  }

  /**
   * Like `mask`, but every protected line keeps its length in bytes (the marker padded with spaces, or `*`s when the
   * line is shorter): the copy the sandbox shows in place of the file then has the file's size, so git, comparing
   * only size and time inside the sandbox, does not take it for a changed file. `known` adds lines protected because
   * of their text (trimmed): an older version of a file may hold a line of today's segment without its markers.
   *
   * @example
   * SecurityOutput.maskInPlace("a\n// @s\nk = 1\n// @e", [{ start: "@s", end: "@e" }]) // "a\n// @s\n*****\n// @e"
   */
  export function maskInPlace(
    text: string,
    pairs: readonly SecuritySegments.Pair[],
    known?: ReadonlySet<string>,
  ): string {
    const lines = fineLines(text)
    const hidden = bodyLines(text, lines, pairs)
    if (known?.size)
      lines.forEach((l, i) => {
        const trimmed = l.line.trim()
        if (trimmed && known.has(trimmed)) hidden.add(i)
      })
    if (!hidden.size) return text
    const label = SecurityRedact.marker(SEGMENT_LABEL)
    const pad = (line: string) => {
      const bytes = Buffer.byteLength(line, "utf8")
      return bytes >= label.length ? label + " ".repeat(bytes - label.length) : "*".repeat(bytes)
    }
    return lines.map((l, i) => (hidden.has(i) ? pad(l.line) : l.line) + l.end).join("")
  }

  /**
   * Raw file lines (no gutter) starting at line `first`, with protected lines redacted: the `preview` and `display`
   * text OpenCode keeps in a read's metadata.
   *
   * @example
   * SecurityOutput.rawLines("a\nkey\nb", 1, [{ from: 2, to: 2 }]) // "a\n[REDACTED: protected segment]\nb"
   */
  export function rawLines(text: string, first: number, ranges: readonly Lines[]): string {
    if (!ranges.length) return text
    const lines = text.split("\n")
    for (let i = 0; i < lines.length; i++) {
      const n = first + i
      if (ranges.some((r) => n >= r.from && n <= r.to)) lines[i] = SecurityRedact.marker(SEGMENT_LABEL)
    }
    return lines.join("\n")
  }

  export type ReadOptions = {
    /** Protected line numbers of the file read. */
    lines: readonly Lines[]
    /**
     * An appended instruction file (`Instructions from: <path>`): true when its content may not be shown, its text
     * and protected lines when it has segments (`instructions`).
     */
    instruction?: (path: string) => InstructionFile
  }

  /** The `<content>` line gutter of OpenCode's read tool: `12: text` (1.x) or `00012| text` (older releases). */
  const GUTTER = /^((?:<content>)?)(\d+)(: |\| |:|\|)/

  /**
   * OpenCode `read` output with protected lines redacted by number and protected instruction blocks removed.
   *
   * @example
   * SecurityOutput.read("<content>1: a\n2: key\n</content>", { lines: [{ from: 2, to: 2 }] })
   * // "<content>1: a\n2: [REDACTED: protected segment]\n</content>"
   */
  export function read(output: string, options: ReadOptions): { text: string; redacted: number; removed: string[] } {
    let redacted = 0
    let text = output
    const removed: string[] = []
    const reminder = text.indexOf("\n<system-reminder>")
    let body = reminder >= 0 ? text.slice(0, reminder) : text
    let tail = reminder >= 0 ? text.slice(reminder) : ""
    if (options.lines.length) {
      const lines = body.split("\n")
      let inside = false
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]
        if (line.startsWith("<content>") || line === "<file>") inside = true
        if (!inside) continue
        if (line.startsWith("</content>") || line === "</file>") break
        const m = GUTTER.exec(line)
        if (!m) continue
        const n = Number(m[2])
        if (!options.lines.some((r) => n >= r.from && n <= r.to)) continue
        lines[i] = `${m[1]}${m[2]}${m[3]}${SecurityRedact.marker(SEGMENT_LABEL)}`
        redacted++
      }
      body = lines.join("\n")
    }
    if (tail && options.instruction) {
      const out = instructions(tail, options.instruction)
      tail = out.text
      removed.push(...out.removed)
      redacted += out.redacted
    }
    text = body + tail
    return { text, redacted, removed }
  }

  /**
   * What an instruction block's file is to the layer: `true`, its content may not be shown at all; `false`, kept as it
   * is (a remote instruction); or its text (as read now) and the protected line numbers of that text, `\n`-numbered
   * (`lineRanges(text, pairs, "lf")`, possibly none): the lines of segments the role may not read (`read` or `llm`).
   */
  export type InstructionFile = boolean | { text: string; lines: readonly Lines[] }

  /**
   * Instruction blocks (`Instructions from: <path>\n<content>`, joined by blank lines) whose path is protected are
   * replaced by a one-line note. A block whose file's text is given keeps its shape with the protected lines
   * redacted (`rawLines`, the read tool's redaction form): the block is placed by the file's text, which OpenCode
   * copies whole (a byte-order mark or surrounding whitespace trimmed), so header-like lines inside it are its own; a
   * block that does not start with that text (the file changed since, was cut, or the header's path is not the
   * file's) goes whole, as a protected one. Blocks of `false` files are kept.
   *
   * @example
   * SecurityOutput.instructions("Instructions from: /r/AGENTS.md\na\n// @s\nk=1\n// @e", () => ({ text: "a\n// @s\nk=1\n// @e", lines: [{ from: 3, to: 3 }] })).text
   * // "Instructions from: /r/AGENTS.md\na\n// @s\n[REDACTED: protected segment]\n// @e"
   */
  export function instructions(
    text: string,
    fileOf: (path: string) => InstructionFile,
  ): { text: string; removed: string[]; redacted: number } {
    let redacted = 0
    const segmented = new Map<number, { end: number; text: string }>()
    const header = /(^|\n)Instructions from: ([^\n]*)\n/g
    const found: { at: number; bodyAt: number; path: string }[] = []
    for (const m of text.matchAll(header)) {
      const at = m.index! + m[1].length
      found.push({ at, bodyAt: m.index! + m[0].length, path: m[2].trim() })
    }
    // Blocks placed by their file's text, in order: a header inside such a block's text is part of that text.
    const hidden = new Set<number>()
    const starts: typeof found = []
    let covered = -1
    for (const s of found) {
      if (s.at < covered) continue
      starts.push(s)
      const file = fileOf(s.path)
      if (file === true) hidden.add(s.at)
      if (typeof file !== "object") continue
      const placed = place(text, s.bodyAt, file)
      if (!placed) {
        hidden.add(s.at)
        continue
      }
      segmented.set(s.at, placed)
      redacted += placed.redacted
      covered = placed.end
    }
    const protectedPath = (s: { at: number }) => hidden.has(s.at)
    const removed: string[] = []
    if (!starts.length) return { text, removed, redacted }
    let out = ""
    let cursor = 0
    for (let i = 0; i < starts.length; i++) {
      const s = starts[i]
      const next = i + 1 < starts.length ? starts[i + 1].at : endOfReminder(text, s.bodyAt)
      const own = segmented.get(s.at)
      if (own) {
        out += text.slice(cursor, s.bodyAt) + own.text
        cursor = own.end
        continue
      }
      if (!protectedPath(s)) continue
      // A protected file's text may itself contain a line looking like a header: everything up to the next header of
      // a file that is not protected (or the end of the reminder) goes.
      let end = next
      let j = i + 1
      while (j < starts.length && protectedPath(starts[j])) {
        removed.push(starts[j].path)
        j++
      }
      if (j > i + 1) end = j < starts.length ? starts[j].at : endOfReminder(text, starts[j - 1].bodyAt)
      out += text.slice(cursor, s.at) + `[REDACTED: instructions from ${s.path}, which the security policy protects]\n`
      cursor = end
      removed.push(s.path)
      i = j - 1
    }
    return { text: out + text.slice(cursor), removed, redacted }
  }

  /**
   * An instruction file's text found at `at` in `text` (whole, without a byte-order mark, or trimmed as OpenCode may
   * copy it), with its protected lines redacted: the redacted copy, where it ends in `text`, and how many lines went.
   */
  function place(
    text: string,
    at: number,
    file: { text: string; lines: readonly Lines[] },
  ): { text: string; end: number; redacted: number } | undefined {
    const whole = file.text.startsWith("\uFEFF") ? file.text.slice(1) : file.text
    const lead = whole.length - whole.trimStart().length
    // An empty file: OpenCode's block has nothing of it to place.
    if (!whole.trim()) return { text: "", end: at, redacted: 0 }
    const candidates = [
      { copy: file.text, skip: 0 },
      { copy: whole, skip: 0 },
      { copy: whole.trimEnd(), skip: 0 },
      { copy: whole.trim(), skip: lead },
    ]
    for (const c of candidates) {
      if (!c.copy.length || !text.startsWith(c.copy, at)) continue
      const first = 1 + (whole.slice(0, c.skip).match(/\n/g)?.length ?? 0)
      const count = c.copy.split("\n").length
      const redacted = file.lines.reduce(
        (n, r) => n + Math.max(0, Math.min(r.to, first + count - 1) - Math.max(r.from, first) + 1),
        0,
      )
      return { text: rawLines(c.copy, first, file.lines), end: at + c.copy.length, redacted }
    }
    return undefined
  }

  function endOfReminder(text: string, from: number) {
    const close = text.indexOf("\n</system-reminder>", from)
    return close < 0 ? text.length : close + 1
  }

  export type PatchFile = {
    /** Lines inside the file's protected segments now (trimmed), whatever their position in older versions. */
    lines: ReadonlySet<string>
    /** The current file's protected line numbers (for the new side of a patch against the current version). */
    ranges: readonly Lines[]
  }

  /**
   * Shell output holding git patches (`git diff`, `git log -p`, `git show`) with the lines of protected segments
   * redacted line by line: everywhere, lines between a start and an end marker, and the lines before an end marker
   * with no start marker in front of it, back to the start of its hunk (the hunk began inside a segment) or of the
   * text between patches; in files that hold segments now (`fileOf`), also hunk lines whose text is a protected line
   * of the file and new-side lines whose number falls in one of its segments. Hunk lines keep their `+`, `-` or space.
   * Unknown paths (renamed, deleted, another repository) get the marker rules, so a segment is never shown because
   * its file moved; an unclosed start marker ends at its hunk (a diff's context often cuts a segment).
   *
   * @example
   * SecurityOutput.patches("diff --git a/a.ts b/a.ts\n@@ -1,3 +1,3 @@\n // @s\n-k = 1\n+k = 2", (f) => …, [{ start: "@s", end: "@e" }])
   * // "… // @s\n-[REDACTED: protected segment]\n+[REDACTED: protected segment]"
   */
  export function patches(
    text: string,
    fileOf: (relative: string) => PatchFile | undefined,
    pairs: readonly SecuritySegments.Pair[],
  ): { text: string; redacted: number } {
    if (!text.includes("diff --git ") || !pairs.length) return { text, redacted: 0 }
    const starts = pairs.map((p) => SecuritySegments.fold(p.start))
    const ends = pairs.map((p) => SecuritySegments.fold(p.end))
    const label = SecurityRedact.marker(SEGMENT_LABEL)
    const lines = text.split("\n")
    let redacted = 0
    const redact = (i: number, hunk: boolean) => {
      if (lines[i].endsWith(label)) return
      lines[i] = hunk ? `${lines[i][0]}${label}` : label
      redacted++
    }
    let file: PatchFile | undefined
    let inside = false
    // First line of the current hunk, or of the current run of text outside hunks.
    let from = 0
    let inHunk = false
    let newLine = 0
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]
      // `s`: a line holding a carriage return or another line separator reaches its end on the first try (without
      // it, every ` b/` of the line was retried: quadratic).
      const header = /^diff --git (?:"?a\/(.*?)"?) (?:"?b\/(.*?)"?)$/s.exec(
        line.endsWith("\r") ? line.slice(0, -1) : line,
      )
      if (header) {
        file = fileOf(header[2] ?? header[1]) ?? fileOf(header[1])
        inside = false
        inHunk = false
        from = i + 1
        continue
      }
      const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line)
      if (hunk) {
        newLine = Number(hunk[1])
        inside = false
        inHunk = true
        from = i + 1
        continue
      }
      if (line.startsWith("\\")) continue
      const mark = line[0]
      if (inHunk && mark !== " " && mark !== "+" && mark !== "-") {
        // A line that is no hunk line (the next commit's header in git log -p) ends the hunk.
        inHunk = false
        inside = false
        from = i
      }
      const body = inHunk ? line.slice(1) : line
      const lower = SecuritySegments.fold(body)
      const number = inHunk && mark !== "-" ? newLine : undefined
      if (inHunk && mark !== "-") newLine++
      if (starts.some((m) => lower.includes(m))) {
        inside = true
        continue
      }
      if (ends.some((m) => lower.includes(m))) {
        if (!inside) for (let j = from; j < i; j++) redact(j, inHunk)
        inside = false
        from = i + 1
        continue
      }
      const known =
        inHunk &&
        !!file &&
        ((number !== undefined && file.ranges.some((r) => number >= r.from && number <= r.to)) ||
          file.lines.has(body.trim()))
      if (inside || known) redact(i, inHunk)
    }
    return { text: lines.join("\n"), redacted }
  }

  /**
   * True when `output` is OpenCode `read` output: a `<content>` block (`<file>` in older releases) whose lines carry
   * line numbers.
   */
  export function numbered(output: string): boolean {
    const content = output.indexOf("<content>")
    const at = content >= 0 ? content : output.indexOf("<file>\n")
    return (
      at >= 0 &&
      output
        .slice(at, at + 4096)
        .split("\n", 3)
        .some((l) => GUTTER.test(l))
    )
  }

  export type GrepOptions = {
    /** True for a file whose matches may not be shown at all. */
    hidden: (path: string) => boolean
    /** Protected line numbers of a file (for matches inside protected segments). */
    lines: (path: string) => readonly Lines[]
  }

  /**
   * OpenCode `grep` output (`Found N matches`, then `path:` blocks of `  Line N: text`) without the matches of
   * hidden files and without matches inside protected segments, the count recomputed from what is left: a match in a
   * segment is neither shown nor counted (shown as redacted, it answered yes or no to a pattern, and a model bisected a
   * token character by character). When matches were removed from a truncated result, the count says only "at least".
   *
   * @example
   * SecurityOutput.grep("Found 2 matches\n/r/a.ts:\n  Line 1: x\n\n/r/.env:\n  Line 3: x", { hidden: (p) => p.endsWith(".env"), lines: () => [] }).text
   * // "Found 1 matches\n/r/a.ts:\n  Line 1: x"
   */
  export function grep(output: string, options: GrepOptions): { text: string; removed: number; redacted: number } {
    const lines = output.split("\n")
    const head = /^Found (\d+) match(?:es)?(.*)$/.exec(lines[0] ?? "")
    if (!head) return { text: output, removed: 0, redacted: 0 }
    const out: string[] = []
    let file: string | undefined
    let hidden = false
    let ranges: readonly Lines[] = []
    /** A file's `path:` line, written with its first match that is shown. */
    let header: string | undefined
    let kept = 0
    let removed = 0
    let redacted = 0
    let pendingBlank = false
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]
      const match = /^(\s+Line (\d+)): ?(.*)$/.exec(line)
      if (match && file !== undefined) {
        if (hidden) {
          removed++
          continue
        }
        const n = Number(match[2])
        if (ranges.some((r) => n >= r.from && n <= r.to)) {
          redacted++
          continue
        }
        if (header !== undefined) {
          if (pendingBlank && out.length) out.push("")
          pendingBlank = false
          out.push(header)
          header = undefined
        }
        out.push(line)
        kept++
        continue
      }
      if (line === "") {
        pendingBlank = true
        continue
      }
      if (/:$/.test(line) && !line.startsWith(" ") && !line.startsWith("(")) {
        file = line.slice(0, -1)
        hidden = options.hidden(file)
        ranges = hidden ? [] : options.lines(file)
        header = hidden ? undefined : line
        continue
      }
      header = undefined
      if (pendingBlank && out.length) out.push("")
      pendingBlank = false
      file = undefined
      out.push(line)
    }
    if (!removed && !redacted) return { text: output, removed, redacted }
    if (kept === 0 && !out.some((l) => l.trim() && !l.startsWith("(")))
      return { text: "No files found", removed, redacted }
    const truncated = head[2].trim().length > 0 || out.some((l) => /truncated/i.test(l))
    const count = truncated ? `Found at least ${kept} matches (more may exist)` : `Found ${kept} matches`
    return { text: [count, ...out].join("\n"), removed, redacted }
  }

  function lineOf(text: string, index: number): number {
    let n = 1
    for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) n++
    return n
  }
}
