/**
 * Case-insensitive comparison that keeps offsets: `fold` lower-cases each character only where that keeps its length
 * in UTF-16 code units, so an index found in `fold(text)` is the same index in `text`. `text.toLowerCase()` does not:
 * `"İ".toLowerCase()` is `"i̇"` (two code units), so offsets taken there and used on the text drift by one per `İ`
 * (red team CC7: a protected segment found in the wrong place). No dependencies.
 *
 * @example
 * CaseFold.fold("İ // @Secure-Start") // "İ // @secure-start" (same length)
 */
export namespace CaseFold {
  const NON_ASCII = /[^\x00-\x7f]/
  /** Runs of ASCII capitals (lower-cased whole: ASCII maps to ASCII) and runs of other characters (folded one by one). */
  const CASED_RUN = /[A-Z]+|[^\x00-\x7f]+/g

  export function fold(text: string): string {
    if (!NON_ASCII.test(text)) return text.toLowerCase()
    return text.replace(CASED_RUN, (run) => {
      if (run.charCodeAt(0) < 0x80) return run.toLowerCase()
      if (run.toLowerCase() === run) return run
      let out = ""
      for (const c of run) {
        const l = c.toLowerCase()
        out += l.length === c.length ? l : c
      }
      return out
    })
  }
}
