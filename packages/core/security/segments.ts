import fs from "fs"
import { CaseFold } from "../util/casefold"
import { Encoding } from "../util/encoding"
import { lastAtMost } from "../util/sorted"

/**
 * Protected segments: the text between a start marker and an end marker (whole lines, markers included) written in a
 * comment of any style — `//`, `/* … *\/`, `#`, `<!-- … -->`, `--`, `;`, `%`, ` * ` in doc blocks, `{- -}`,
 * `(* *)`, `REM`, Python docstrings — or alone on their line. Markers match case-insensitively. A start marker
 * without its end protects everything after it. A marker inside a string literal or mentioned in prose does not
 * count, so documentation about markers is not swallowed.
 *
 * @example
 * SecuritySegments.find("a\n// @secure-start\nkey\n// @secure-end\nb", [{ start: "@secure-start", end: "@secure-end" }])
 * // [{ start: 2, end: 37, marker: 0, closed: true, open: 5, close: 26 }]
 */
export namespace SecuritySegments {
  export type Pair = { start: string; end: string }
  /** `open` and `close` are where the start and end markers themselves are (`close` only when closed). */
  export type Segment = { start: number; end: number; marker: number; closed: boolean; open: number; close?: number }

  /** A marker counts when what precedes it on its line is blank, or a comment opener with no quote after it. */
  const OPENER = /\/\/|\/\*|<!--|#|--|;|%|\*|\{-|\(\*|REM|::|"""|'''/gi
  const BLANK = /^\s*$/
  const WORD = /\w/

  export function inComment(text: string, index: number): boolean {
    const lineStart = text.lastIndexOf("\n", index - 1) + 1
    const prefix = text.slice(lineStart, index)
    if (BLANK.test(prefix)) return true
    // An opener (after a non-word character or at the line's start) with no quote after it ends after the last
    // quote: only the text from just before that quote is searched, once. (A pattern anchored at the end of the line
    // retried every opener of a long line: quadratic.)
    const quote = Math.max(prefix.lastIndexOf('"'), prefix.lastIndexOf("'"), prefix.lastIndexOf("`"))
    OPENER.lastIndex = Math.max(0, quote - 2)
    for (let m = OPENER.exec(prefix); m; m = OPENER.exec(prefix)) {
      if (m.index + m[0].length > quote && (m.index === 0 || !WORD.test(prefix[m.index - 1]))) return true
    }
    return false
  }

  /**
   * The copy of `text` markers are searched in, case-insensitively: each character lower-cased where that keeps its
   * length in UTF-16 code units, left as is where it does not, so every offset in the copy is the same offset in
   * `text` and a segment found is where its markers are. (`"İ".toLowerCase()` is two code units, `"i̇"`: offsets taken
   * on `text.toLowerCase()` moved every segment after an `İ` down one unit per `İ`, and could make `find` loop.)
   * Markers are folded the same way.
   *
   * @example
   * SecuritySegments.fold("İ // @Secure-Start") // "İ // @secure-start" (same length)
   */
  export function fold(text: string): string {
    return CaseFold.fold(text)
  }

  /**
   * Every protected segment of `text` for the given marker pairs, sorted, overlapping ones kept separate (redaction
   * merges them). Markers are found in `fold(text)`, whose offsets are the text's.
   */
  export function find(text: string, pairs: readonly Pair[]): Segment[] {
    if (!pairs.length || !text) return []
    const folded = fold(text)
    const out: Segment[] = []
    pairs.forEach((pair, marker) => {
      const start = fold(pair.start)
      const end = fold(pair.end)
      let from = 0
      while (from < text.length) {
        const s = nextInComment(text, folded, start, from)
        if (s < 0) break
        const segStart = text.lastIndexOf("\n", s - 1) + 1
        const e = nextInComment(text, folded, end, s + start.length)
        if (e < 0) {
          out.push({ start: segStart, end: text.length, marker, closed: false, open: s })
          break
        }
        let segEnd = text.indexOf("\n", e + end.length)
        if (segEnd < 0) segEnd = text.length
        else if (text[segEnd - 1] === "\r") segEnd--
        out.push({ start: segStart, end: segEnd, marker, closed: true, open: s, close: e })
        // Past this start marker whatever the offsets: the next search starts later than this one did.
        from = Math.max(segEnd, s + Math.max(1, start.length))
      }
    })
    return out.sort((a, b) => a.start - b.start || b.end - a.end)
  }

  function nextInComment(text: string, folded: string, needle: string, from: number): number {
    const step = Math.max(1, needle.length)
    for (let i = folded.indexOf(needle, from); i >= 0; i = folded.indexOf(needle, i + step)) {
      if (inComment(text, i)) return i
    }
    return -1
  }

  /**
   * A reason when `after` does not keep every segment of `before` (for these marker pairs): each must be one of the
   * segments `find` finds in `after`, in the same order, with the same marker pair and the same text, markers
   * included. Text kept verbatim is not enough: a marker line glued onto the line before it (`x = 1x# @secure-start`)
   * keeps every character but is no longer a marker, and the segment would be an ordinary line for the next reader
   * and writer. A segment `after` adds protects more and is let be. Undefined when every segment is kept.
   *
   * @example
   * SecuritySegments.kept("a\n// @locked-start\nx\n// @locked-end\n", "a\n", [{ start: "@locked-start", end: "@locked-end" }])
   * // "a write-protected segment changed"
   */
  export function kept(before: string, after: string, pairs: readonly Pair[]): string | undefined {
    if (!pairs.length) return undefined
    const was = find(before, pairs)
    if (!was.length) return undefined
    const now = find(after, pairs)
    let at = 0
    for (const seg of was) {
      const text = before.slice(seg.start, seg.end)
      while (
        at < now.length &&
        !(
          now[at]!.marker === seg.marker &&
          now[at]!.closed === seg.closed &&
          after.slice(now[at]!.start, now[at]!.end) === text
        )
      )
        at++
      if (at === now.length) return "a write-protected segment changed"
      at++
    }
    return undefined
  }

  /**
   * A reason when a change a tool makes (a rewrite, a language server's edit) does not keep every segment the role may
   * not write, nor every one it may not read: with a read-protected segment's markers gone, its text would be an
   * ordinary line for the next reader. Undefined when it keeps them all.
   *
   * @example
   * SecuritySegments.guarded("a\n# @secure-start\nx\n# @secure-end\n", "a\nx\n", { read: [{ start: "@secure-start", end: "@secure-end" }], write: [] })
   * // "a read-protected segment would change"
   */
  export function guarded(
    before: string,
    after: string,
    segments: { read?: readonly Pair[]; write: readonly Pair[] },
  ): string | undefined {
    return (
      kept(before, after, segments.write) ??
      (kept(before, after, segments.read ?? []) && "a read-protected segment would change")
    )
  }

  /**
   * Where lines break for a reader: `any` — `\r\n`, `\n` or a lone `\r`, as OpenCode's read tool splits a file
   * (Node's readline with `crlfDelay: Infinity` in 1.2, Effect's `Stream.splitLines` in 1.18) and as LSP counts lines;
   * `lf` — `\n` only, as ripgrep and git number lines.
   */
  export type Breaks = "any" | "lf"

  /**
   * The offset where each line starts (the first is 0), lines broken as `breaks` says.
   *
   * @example
   * SecuritySegments.lineStarts("a\rb\r\nc", "any") // [0, 2, 5]
   */
  export function lineStarts(text: string, breaks: Breaks): number[] {
    const out = [0]
    const pattern = breaks === "any" ? /\r\n|\n|\r/g : /\n/g
    for (const m of text.matchAll(pattern)) out.push(m.index + m[0].length)
    return out
  }

  /** The 1-based line holding offset `at`, given `lineStarts`. */
  export function lineAt(starts: readonly number[], at: number): number {
    return lastAtMost(starts, at) + 1
  }

  /**
   * The protected text of a segment without its marker lines: from after the line holding the start marker to the
   * start of the line holding the end marker (to the segment's end when unclosed). Lines here break anywhere a reader
   * may break them (`\r\n`, `\n`, a lone `\r`), so whichever way a reader numbers lines, every line holding a
   * character of the body is one to hide.
   *
   * @example
   * const [seg] = SecuritySegments.find("a\n// @s\nkey\n// @e\nb", [{ start: "@s", end: "@e" }])
   * SecuritySegments.body("a\n// @s\nkey\n// @e\nb", seg) // { start: 8, end: 12 }
   */
  export function body(text: string, seg: Segment): { start: number; end: number } {
    let start = seg.end
    for (let i = seg.open; i < seg.end; i++) {
      const c = text.charCodeAt(i)
      if (c === 10 || c === 13) {
        start = c === 13 && text.charCodeAt(i + 1) === 10 ? i + 2 : i + 1
        break
      }
    }
    if (!seg.closed || seg.close === undefined) return { start, end: Math.max(start, seg.end) }
    let end = seg.close
    while (end > start) {
      const c = text.charCodeAt(end - 1)
      if (c === 10 || c === 13) break
      end--
    }
    return { start, end: Math.max(start, end) }
  }

  /**
   * The pairs (by index) whose start marker occurs anywhere in a file, read in chunks whatever its size or content
   * (NUL bytes, invalid UTF-8): for a file too large to judge whole, where any occurrence counts, in a comment or not.
   * A file that cannot be read gives none.
   *
   * @example
   * SecuritySegments.scanFile("/repo/big.log", [{ start: "@secure-start", end: "@secure-end" }]) // [0]
   */
  export function scanFile(file: string, pairs: readonly Pair[], chunk = 1024 * 1024): number[] {
    const starts = pairs.map((p) => fold(p.start))
    const keep = Math.max(0, ...starts.map((s) => s.length)) - 1
    const found = new Set<number>()
    let fd: number | undefined
    try {
      fd = fs.openSync(file, "r")
      const buffer = Buffer.alloc(chunk)
      let decoder = new TextDecoder("utf-8")
      let tail = ""
      for (let first = true; ; first = false) {
        const n = fs.readSync(fd, buffer, 0, chunk, null)
        // UTF-16 with a byte-order mark is what ripgrep transcodes and searches: its markers are looked for decoded.
        const bom = first ? Encoding.utf16Bom(buffer.subarray(0, n)) : undefined
        // (Bun's types list "utf-16" only; its decoder knows both labels.)
        if (bom) decoder = new TextDecoder(bom.toLowerCase() as ConstructorParameters<typeof TextDecoder>[0])
        const text = tail + fold(decoder.decode(buffer.subarray(0, n), { stream: n > 0 }))
        starts.forEach((s, i) => {
          if (s && text.includes(s)) found.add(i)
        })
        if (n === 0 || found.size === starts.length) break
        tail = keep > 0 ? text.slice(-keep) : ""
      }
    } catch {
      // Unreadable: no reader shows it either.
    } finally {
      if (fd !== undefined) fs.closeSync(fd)
    }
    return [...found].sort((a, b) => a - b)
  }

  /**
   * The decoded text of a file in UTF-16 with a byte-order mark, for finding its markers; undefined for any other file.
   * ripgrep transcodes such a file and searches its text (so do grep and `rg` in the sandbox), while the masking of
   * segments and their line numbers assume UTF-8 bytes: a file whose markers only this reading finds is protected
   * whole (hidden from a role a segment keeps from reading, unchangeable to one a segment keeps from writing).
   *
   * @example
   * SecuritySegments.wide(Buffer.from("\ufeffa // @s", "utf16le")) // "a // @s"
   */
  export function wide(bytes: Uint8Array): string | undefined {
    if (!Encoding.utf16Bom(bytes)) return undefined
    const text = Encoding.read(bytes)?.text
    return text?.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  }

  /**
   * Whether the bytes start with a UTF-16 byte-order mark, ripgrep's rule (BOM sniffing, `--encoding auto`): it then
   * decodes the whole file as UTF-16, whatever follows (FF FE 00 00 included, which it does not take for UTF-32).
   */
  export function utf16Marked(bytes: Uint8Array): boolean {
    return bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
  }

  /** The lines inside protected segments (markers excluded), trimmed, for content fingerprints. */
  export function lines(text: string, pairs: readonly Pair[]): string[] {
    const out: string[] = []
    for (const seg of find(text, pairs)) {
      const span = body(text, seg)
      if (span.end <= span.start) continue
      const lines = text.slice(span.start, span.end).split(/\r\n|\n|\r/)
      if (seg.closed && lines.length > 1 && lines[lines.length - 1] === "") lines.pop()
      for (const line of lines) out.push(line)
    }
    return out
  }
}
