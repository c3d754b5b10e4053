/**
 * The file types look_at analyses, told by their first bytes (magic numbers), never by the file name: PNG, JPEG,
 * GIF, WebP, PDF, and SVG (XML text whose root element is `<svg>`).
 *
 * @example
 * LookMime.sniff(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) // { mime: "image/png", kind: "image" }
 * LookMime.sniff(new TextEncoder().encode("<?xml version='1.0'?><svg/>")) // { mime: "image/svg+xml", kind: "svg" }
 */
export namespace LookMime {
  /** image: a raster image sent as a file part; pdf: a PDF file part; svg: SVG source sent as text. */
  export type Kind = "image" | "pdf" | "svg"
  export type Type = { mime: string; kind: Kind }

  /**
   * Bytes a caller reads first to sniff. An SVG's prolog (XML declaration, comments such as a license header,
   * processing instructions, a doctype) may run past them: `undecided` then says so, and the caller sniffs again over
   * more bytes, at most the SVG size limit (an SVG is never larger).
   */
  export const HEAD_BYTES = 4096
  export const SUPPORTED = "PNG, JPEG, GIF, WebP, SVG, PDF"

  const starts = (b: Uint8Array, sig: readonly number[], at = 0) =>
    b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v)
  const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0))
  const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  const JPEG = [0xff, 0xd8, 0xff]
  const GIF87 = ascii("GIF87a")
  const GIF89 = ascii("GIF89a")
  const RIFF = ascii("RIFF")
  const WEBP = ascii("WEBP")
  const PDF = ascii("%PDF-")
  /** A character of `\s` (the old regex's blanks), tested one at a time. */
  const blank = (c: string) => /\s/.test(c)

  /**
   * Whether `text` is the start of an SVG: after an optional BOM, blanks, then any number of XML declarations,
   * processing instructions, comments and doctypes (with an internal subset), then `<svg` (case-insensitive).
   * "open" when the text ends inside that prolog, so more of it could still tell. One pass: every construct is
   * skipped with `indexOf` from where it starts, so the time is linear in the text whatever it holds (a regex with
   * lazy bodies backtracked exponentially over text with many comments and no `<svg`).
   */
  export function prolog(text: string): "svg" | "other" | "open" {
    let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
    const n = text.length
    /** The text at `i` is `word` (lower case), in any case. */
    const at = (word: string) => text.slice(i, i + word.length).toLowerCase() === word
    /** The rest of the text is a proper start of `word`: more text could complete it. */
    const partial = (word: string) => n - i < word.length && word.startsWith(text.slice(i).toLowerCase())
    for (;;) {
      while (i < n && blank(text[i]!)) i++
      if (i >= n) return "open"
      if (at("<svg")) {
        if (i + 4 >= n) return "open"
        const c = text[i + 4]!
        return blank(c) || c === ">" || c === "/" || c === ":" ? "svg" : "other"
      }
      if (at("<!--")) {
        const end = text.indexOf("-->", i + 4)
        if (end < 0) return "open"
        i = end + 3
        continue
      }
      if (at("<?")) {
        const end = text.indexOf("?>", i + 2)
        if (end < 0) return "open"
        i = end + 2
        continue
      }
      if (at("<!doctype")) {
        // `<!DOCTYPE name … [internal subset] >`: the subset ends at the first `]` followed by blanks and `>`.
        let j = i + 9
        while (j < n && text[j] !== ">" && text[j] !== "[") j++
        if (j >= n) return "open"
        if (text[j] === "[") {
          for (;;) {
            const close = text.indexOf("]", j + 1)
            if (close < 0) return "open"
            j = close + 1
            while (j < n && blank(text[j]!)) j++
            if (j >= n) return "open"
            if (text[j] === ">") break
            j = close
          }
        }
        i = j + 1
        continue
      }
      return ["<svg", "<!--", "<?", "<!doctype"].some(partial) ? "open" : "other"
    }
  }

  /**
   * The type of the content starting with `head`, or undefined when it is none of the supported types. Linear in
   * the bytes given; the caller bounds them (`HEAD_BYTES`, then at most the SVG limit when `undecided`).
   *
   * @example
   * LookMime.sniff(new TextEncoder().encode("%PDF-1.7\n")) // { mime: "application/pdf", kind: "pdf" }
   */
  export function sniff(head: Uint8Array): Type | undefined {
    if (starts(head, PNG)) return { mime: "image/png", kind: "image" }
    if (starts(head, JPEG)) return { mime: "image/jpeg", kind: "image" }
    if (starts(head, GIF87) || starts(head, GIF89)) return { mime: "image/gif", kind: "image" }
    if (starts(head, RIFF) && starts(head, WEBP, 8)) return { mime: "image/webp", kind: "image" }
    // PDF readers accept the header anywhere in the first 1,024 bytes.
    const limit = Math.min(head.length - PDF.length, 1024)
    for (let i = 0; i <= limit; i++)
      if (head[i] === 0x25 && starts(head, PDF, i)) return { mime: "application/pdf", kind: "pdf" }
    if (head.includes(0)) return undefined
    if (prolog(new TextDecoder("utf-8", { fatal: false }).decode(head)) === "svg")
      return { mime: "image/svg+xml", kind: "svg" }
    return undefined
  }

  /**
   * Whether bytes that `sniff` found no type in are text ending inside an SVG prolog, so that more of the same
   * content could still be an SVG (a license comment over `HEAD_BYTES`, say). Linear in the bytes given.
   *
   * @example
   * LookMime.undecided(new TextEncoder().encode("<!-- a long licen")) // true
   */
  export function undecided(head: Uint8Array): boolean {
    if (head.includes(0)) return false
    return prolog(new TextDecoder("utf-8", { fatal: false }).decode(head)) === "open"
  }

  /**
   * A short name of what the bytes look like, for the error of an unsupported type (e.g. "BMP", "a ZIP archive").
   *
   * @example
   * LookMime.describe(new TextEncoder().encode("BM....")) // "a BMP image"
   */
  export function describe(head: Uint8Array): string {
    if (starts(head, ascii("BM"))) return "a BMP image"
    if (starts(head, [0x49, 0x49, 0x2a, 0x00]) || starts(head, [0x4d, 0x4d, 0x00, 0x2a])) return "a TIFF image"
    if (starts(head, ascii("ftyp"), 4)) return "an ISO media file (HEIC/AVIF/MP4)"
    if (starts(head, [0x50, 0x4b, 0x03, 0x04])) return "a ZIP archive (or an Office document)"
    if (starts(head, [0x00, 0x00, 0x01, 0x00])) return "an ICO icon"
    if (!head.includes(0)) return "text"
    return "binary data of an unknown type"
  }
}
