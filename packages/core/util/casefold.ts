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

  /** Each BMP code unit's fold: its lower case when that is one code unit, else itself (surrogates are themselves). */
  let BMP: Uint16Array | undefined
  function bmp(): Uint16Array {
    if (BMP) return BMP
    const table = new Uint16Array(0x10000)
    for (let c = 0; c < 0x10000; c++) {
      if (c >= 0xd800 && c < 0xe000) {
        table[c] = c
        continue
      }
      const lower = String.fromCharCode(c).toLowerCase()
      table[c] = lower.length === 1 ? lower.charCodeAt(0) : c
    }
    BMP = table
    return table
  }

  /** Astral characters met so far → their fold (a surrogate pair: two code units, or themselves). */
  const ASTRAL = new Map<number, number>()
  const MAX_ASTRAL = 4096

  function astral(cp: number): number {
    const known = ASTRAL.get(cp)
    if (known !== undefined) return known
    const c = String.fromCodePoint(cp)
    const lower = c.toLowerCase()
    const folded = lower.length === 2 && lower.codePointAt(0)! > 0xffff ? lower.codePointAt(0)! : cp
    if (ASTRAL.size < MAX_ASTRAL) ASTRAL.set(cp, folded)
    return folded
  }

  export function fold(text: string): string {
    if (!NON_ASCII.test(text)) return text.toLowerCase()
    // Nothing to lower (text without case, or lower-case already): the text itself.
    if (text.toLowerCase() === text) return text
    const table = bmp()
    const out = new Uint16Array(text.length)
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0
      if (c >= 0xd800 && c < 0xdc00 && next >= 0xdc00 && next < 0xe000) {
        const cp = astral(((c - 0xd800) << 10) + (next - 0xdc00) + 0x10000)
        out[i] = 0xd800 + ((cp - 0x10000) >> 10)
        out[i + 1] = 0xdc00 + ((cp - 0x10000) & 0x3ff)
        i++
      } else out[i] = table[c]
    }
    let s = ""
    for (let at = 0; at < out.length; at += 8192) s += String.fromCharCode(...out.subarray(at, at + 8192))
    return s
  }
}
