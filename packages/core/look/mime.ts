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

  /** Bytes a caller should read to sniff: enough for an XML prolog, comments and a doctype before `<svg`. */
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
  /** After an optional BOM: blanks, an XML declaration, comments, processing instructions and a doctype, then `<svg`. */
  const SVG =
    /^\uFEFF?\s*(?:<\?xml[\s\S]*?\?>\s*)?(?:(?:<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>)\s*)*<svg[\s>/:]/i

  /**
   * The type of the content starting with `head`, or undefined when it is none of the supported types.
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
    const text = new TextDecoder("utf-8", { fatal: false }).decode(head.subarray(0, HEAD_BYTES))
    if (SVG.test(text)) return { mime: "image/svg+xml", kind: "svg" }
    return undefined
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
