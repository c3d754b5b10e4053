/**
 * Case-insensitive comparison that keeps offsets: `fold` folds each character only where that keeps its length in
 * UTF-16 code units, so an index found in `fold(text)` is the same index in `text`. `text.toLowerCase()` does not:
 * `"İ".toLowerCase()` is `"i̇"` (two code units), so offsets taken there and used on the text drift by one per `İ`
 * (red team CC7: a protected segment found in the wrong place). A character folds to the lower case of its upper case
 * (close to Unicode's simple case folding), so the forms one letter takes in lower case meet: `ς` (a word's final
 * sigma, which `toLowerCase` gives for `Σ` there), `σ` and `Σ` all fold to `σ` (red team DD-F1), `ſ` to `s`, `ϐ` to
 * `β`, the Kelvin sign to `k`. No dependencies.
 *
 * @example
 * CaseFold.fold("İ // @Secure-Start") // "İ // @secure-start" (same length)
 * CaseFold.fold("ΤΈΛΟΣ τέλος") // "τέλοσ τέλοσ"
 */
export namespace CaseFold {
  const NON_ASCII = /[^\x00-\x7f]/

  /**
   * A character's fold, of the same length: the lower case of its upper case when both keep its length, else its lower
   * case when that does, else itself.
   *
   * @example
   * CaseFold.one("ς") // "σ"
   */
  export function one(c: string): string {
    const upper = c.toUpperCase()
    if (upper.length === c.length) {
      const back = upper.toLowerCase()
      if (back.length === c.length) return back
    }
    const lower = c.toLowerCase()
    return lower.length === c.length ? lower : c
  }

  /** Each BMP code unit's fold (`one`; surrogates are themselves). */
  let BMP: Uint16Array | undefined
  /** The lower-case characters whose fold is another (`ς`, `ſ`, `ϐ`…): text holding none needs no folding if lower. */
  let OTHER: RegExp | undefined
  function bmp(): Uint16Array {
    if (BMP) return BMP
    const table = new Uint16Array(0x10000)
    let other = ""
    for (let c = 0; c < 0x10000; c++) {
      if (c >= 0xd800 && c < 0xe000) {
        table[c] = c
        continue
      }
      const ch = String.fromCharCode(c)
      table[c] = one(ch).charCodeAt(0)
      if (table[c] !== c && ch.toLowerCase() === ch) other += `\\u${c.toString(16).padStart(4, "0")}`
    }
    // No astral lower-case character folds to another (the every-code-point test checks it).
    OTHER = new RegExp(`[${other}]`)
    BMP = table
    return table
  }

  /** Astral characters met so far → their fold (a surrogate pair: two code units, or themselves). */
  const ASTRAL = new Map<number, number>()
  const MAX_ASTRAL = 4096

  function astral(cp: number): number {
    const known = ASTRAL.get(cp)
    if (known !== undefined) return known
    const folded = one(String.fromCodePoint(cp)).codePointAt(0)!
    if (ASTRAL.size < MAX_ASTRAL) ASTRAL.set(cp, folded)
    return folded
  }

  export function fold(text: string): string {
    if (!NON_ASCII.test(text)) return text.toLowerCase()
    const table = bmp()
    // Nothing to fold (text without case, or lower-case already with none of the other lower-case forms): itself.
    if (text.toLowerCase() === text && !OTHER!.test(text)) return text
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
