/**
 * Protected segments: the text between a start marker and an end marker (whole lines, markers included) written in a
 * comment of any style — `//`, `/* … *\/`, `#`, `<!-- … -->`, `--`, `;`, `%`, ` * ` in doc blocks, `{- -}`,
 * `(* *)`, `REM`, Python docstrings — or alone on their line. Markers match case-insensitively. A start marker
 * without its end protects everything after it. A marker inside a string literal or mentioned in prose does not
 * count, so documentation about markers is not swallowed.
 *
 * @example
 * SecuritySegments.find("a\n// @secure-start\nkey\n// @secure-end\nb", [{ start: "@secure-start", end: "@secure-end" }])
 * // [{ start: 2, end: 34, marker: 0, closed: true }]
 */
export namespace SecuritySegments {
  export type Pair = { start: string; end: string }
  export type Segment = { start: number; end: number; marker: number; closed: boolean }

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
   * Every protected segment of `text` for the given marker pairs, sorted, overlapping ones kept separate (redaction
   * merges them). `lowered` may pass `text.toLowerCase()` when the caller already has it.
   */
  export function find(text: string, pairs: readonly Pair[], lowered?: string): Segment[] {
    if (!pairs.length || !text) return []
    const lower = lowered ?? text.toLowerCase()
    const out: Segment[] = []
    pairs.forEach((pair, marker) => {
      const start = pair.start.toLowerCase()
      const end = pair.end.toLowerCase()
      let from = 0
      while (from < lower.length) {
        const s = nextInComment(text, lower, start, from)
        if (s < 0) break
        const segStart = text.lastIndexOf("\n", s - 1) + 1
        const e = nextInComment(text, lower, end, s + start.length)
        if (e < 0) {
          out.push({ start: segStart, end: text.length, marker, closed: false })
          break
        }
        let segEnd = text.indexOf("\n", e + end.length)
        if (segEnd < 0) segEnd = text.length
        else if (text[segEnd - 1] === "\r") segEnd--
        out.push({ start: segStart, end: segEnd, marker, closed: true })
        from = segEnd
      }
    })
    return out.sort((a, b) => a.start - b.start || b.end - a.end)
  }

  function nextInComment(text: string, lower: string, needle: string, from: number): number {
    for (let i = lower.indexOf(needle, from); i >= 0; i = lower.indexOf(needle, i + needle.length)) {
      if (inComment(text, i)) return i
    }
    return -1
  }

  /**
   * A reason when `after` does not keep every segment of `before` (for these marker pairs) verbatim and in order;
   * undefined when it does.
   *
   * @example
   * SecuritySegments.kept("a\n// @locked-start\nx\n// @locked-end\n", "a\n", [{ start: "@locked-start", end: "@locked-end" }])
   * // "a write-protected segment changed"
   */
  export function kept(before: string, after: string, pairs: readonly Pair[]): string | undefined {
    if (!pairs.length) return undefined
    let at = 0
    for (const seg of find(before, pairs)) {
      const text = before.slice(seg.start, seg.end)
      const found = after.indexOf(text, at)
      if (found < 0) return "a write-protected segment changed"
      at = found + text.length
    }
    return undefined
  }

  /** The lines inside protected segments (markers excluded), trimmed, for content fingerprints. */
  export function lines(text: string, pairs: readonly Pair[]): string[] {
    const out: string[] = []
    for (const seg of find(text, pairs)) {
      const body = text.slice(seg.start, seg.end).split(/\r?\n/)
      for (const line of body.slice(1, seg.closed ? -1 : undefined)) out.push(line)
    }
    return out
  }
}
