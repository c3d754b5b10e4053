/**
 * Redaction: protected ranges of a text are replaced by a visible marker that keeps the line count, so line numbers
 * in what the model sees still match the file. Tool outputs that number their lines (`12: …`, `  Line 12: …`) keep
 * those numbers on every redacted line.
 *
 * @example
 * SecurityRedact.redactContent("a\nsecret1\nsecret2\nb", [{ start: 2, end: 17, label: "protected segment" }])
 * // "a\n[REDACTED: protected segment]\n\nb"
 */
export namespace SecurityRedact {
  export type Range = { start: number; end: number; label: string }

  /** Every redaction starts with this text. */
  export const PREFIX = "[REDACTED"
  /** Finds redaction markers (used to refuse hook-injected messages that carry them). */
  export const MARKER = /\[REDACTED(?::[^\]\n]{0,200})?\]/

  export function marker(label: string): string {
    return `${PREFIX}: ${label}]`
  }

  const GUTTER = /^(?:\s*Line \d+: ?|\s*\d+[:|] ?)/

  /**
   * Replaces `ranges` of `text` (merged when they overlap or touch). With `gutter`, line-number prefixes inside a
   * redacted range are kept.
   *
   * @example
   * SecurityRedact.redactContent("1: a\n2: b", [{ start: 3, end: 9, label: "x" }], { gutter: true }) // "1: [REDACTED: x]\n2: "
   */
  export function redactContent(text: string, ranges: readonly Range[], options: { gutter?: boolean } = {}): string {
    if (!ranges.length) return text
    const merged = mergeRanges(ranges, text.length)
    let out = ""
    let at = 0
    for (const r of merged) {
      out += text.slice(at, r.start)
      if (options.gutter && (r.start === 0 || text[r.start - 1] === "\n")) {
        // The range starts at a line start: keep that line's number too.
        const lineEnd = text.indexOf("\n", r.start)
        const m = GUTTER.exec(text.slice(r.start, lineEnd < 0 ? r.end : Math.min(lineEnd, r.end)))
        if (m) out += m[0]
      }
      out += marker(r.label)
      const inner = text.slice(r.start, r.end)
      let nl = inner.indexOf("\n")
      while (nl >= 0) {
        const next = inner.indexOf("\n", nl + 1)
        const lineEnd = next < 0 ? inner.length : next
        let keep = ""
        if (options.gutter) {
          const m = GUTTER.exec(inner.slice(nl + 1, lineEnd))
          if (m) keep = m[0]
        }
        out += (inner[nl - 1] === "\r" ? "\r\n" : "\n") + keep
        nl = next
      }
      at = r.end
    }
    return out + text.slice(at)
  }

  /** Sorted, non-overlapping ranges clamped to `length`; the first label of merged ranges wins. */
  export function mergeRanges(ranges: readonly Range[], length: number): Range[] {
    const sorted = ranges
      .map((r) => ({ start: Math.max(0, r.start), end: Math.min(length, r.end), label: r.label }))
      .filter((r) => r.end > r.start)
      .sort((a, b) => a.start - b.start || b.end - a.end)
    const out: Range[] = []
    for (const r of sorted) {
      const last = out[out.length - 1]
      if (last && r.start <= last.end) last.end = Math.max(last.end, r.end)
      else out.push({ ...r })
    }
    return out
  }

  /** True when `text` carries a redaction marker. */
  export function carriesMarker(text: string): boolean {
    return text.includes(PREFIX) && MARKER.test(text)
  }
}
