import { LookMime } from "./mime"
import { LookSource } from "./source"

/**
 * Raster images embedded in an SVG as `data:` URIs (`<image xlink:href="data:image/png;base64,…">`, as design tools
 * export them): cut out of the SVG's text so that they go to the model as images of their own. Sent as text, a 209 KB
 * banner holding 4 PNGs was 193 KB of base64 the model could not see as pictures (tester RX's RX3). Each is replaced
 * in the text by a short placeholder naming it; those over the limits (`MAX_IMAGES`, and `maxBytes` for their sum)
 * or refused by the caller stay out of the request, their placeholder saying so.
 *
 * @example
 * const found = LookEmbedded.extract(svgText)
 * found.images[0] // { index: 1, mime: "image/png", size: 49152, bytes: Uint8Array }
 * LookEmbedded.render(found, new Map()) // the SVG with `[embedded image 1: image/png, 48 KB, sent as an image part]`
 */
export namespace LookEmbedded {
  /** At most this many embedded images are sent with one SVG; the others are named as not sent. */
  export const MAX_IMAGES = 8

  export type Image = {
    /** 1-based, in the order of the SVG's text. */
    index: number
    /** Told by the decoded bytes (the declared type is ignored); undefined when they are not a raster image. */
    mime?: string
    declared: string
    size: number
    bytes: Uint8Array
    /** The index of an earlier image with the same bytes (exports often repeat one, e.g. as a mask): sent once. */
    same?: number
  }

  export type Found = {
    /** The SVG's text between the images: `pieces.length === images.length + 1`. */
    pieces: string[]
    images: Image[]
  }

  // A base64 payload may be broken by whitespace or by character references for it (`&#10;`) in exported files.
  const URI =
    /data:image\/(png|jpe?g|gif|webp)((?:;[\w.+-]+=[^;,"'()\s]*)*);base64,((?:[A-Za-z0-9+/=]|\s|&#(?:[xX][0-9a-fA-F]+|\d+);)+)/gi

  /** The raster `data:` URIs of `svg` (png, jpeg, gif, webp, base64), decoded, in order. */
  export function extract(svg: string): Found {
    const pieces: string[] = []
    const images: Image[] = []
    let last = 0
    const seen = new Map<string, number>()
    for (const m of svg.matchAll(URI)) {
      const payload = m[3].replace(/&#[^;]*;|\s+/g, "")
      const same = seen.get(payload)
      if (same === undefined) seen.set(payload, images.length + 1)
      const bytes = new Uint8Array(Buffer.from(payload, "base64"))
      const type = LookMime.sniff(bytes.subarray(0, LookMime.HEAD_BYTES))
      pieces.push(svg.slice(last, m.index))
      images.push({
        index: images.length + 1,
        mime: type?.kind === "image" ? type.mime : undefined,
        declared: `image/${m[1].toLowerCase() === "jpg" ? "jpeg" : m[1].toLowerCase()}`,
        size: bytes.length,
        bytes,
        same,
      })
      last = m.index! + m[0].length
    }
    pieces.push(svg.slice(last))
    return { pieces, images }
  }

  /**
   * Which images to send: each not refused by `refuse` (a reason, e.g. a protected segment in its bytes), a raster
   * image by its bytes, within `MAX_IMAGES` and, together, within `maxBytes`. Returns the reason for each one not sent.
   */
  export function choose(
    found: Found,
    maxBytes: number,
    refuse: (image: Image) => string | undefined = () => undefined,
  ): Map<number, string> {
    const out = new Map<number, string>()
    let sent = 0
    let total = 0
    for (const image of found.images) {
      if (image.same !== undefined) {
        const first = out.get(image.same)
        if (first) out.set(image.index, first)
        continue
      }
      const reason = !image.mime
        ? `its bytes are not a PNG, JPEG, GIF or WebP image`
        : (refuse(image) ??
          (sent >= MAX_IMAGES
            ? `over the limit of ${MAX_IMAGES} embedded images`
            : total + image.size > maxBytes
              ? `over the size limit of ${LookSource.kb(maxBytes)} for all images (lookAt.maxBytes)`
              : undefined))
      if (reason) {
        out.set(image.index, reason)
        continue
      }
      sent++
      total += image.size
    }
    return out
  }

  export function placeholder(image: Image, reason?: string) {
    const what = `embedded image ${image.index}: ${image.mime ?? image.declared}, ${LookSource.kb(image.size)}`
    if (reason) return `[${what}, not sent: ${reason}]`
    return image.same === undefined
      ? `[${what}, sent as an image part]`
      : `[${what}, the same as embedded image ${image.same}]`
  }

  /** The SVG's text with each image replaced by its placeholder (`refused`: the reasons of those not sent). */
  export function render(found: Found, refused: Map<number, string>): string {
    let out = found.pieces[0]
    for (const image of found.images) out += placeholder(image, refused.get(image.index)) + found.pieces[image.index]
    return out
  }

  /** One line for the answer: how many embedded images were sent, and which were not and why. */
  export function summary(found: Found, refused: Map<number, string>): string | undefined {
    if (!found.images.length) return undefined
    const sent = found.images.filter((i) => !refused.has(i.index))
    const mimes = [...new Set(sent.map((i) => i.mime))].join(", ")
    const repeated = sent.filter((i) => i.same !== undefined).length
    const parts = [
      `${sent.length} of ${found.images.length} embedded images sent as images${sent.length ? ` (${mimes})` : ""}` +
        (repeated ? `, ${repeated} of them the same as another, sent once` : ""),
    ]
    const byReason = new Map<string, number[]>()
    for (const [index, reason] of refused) byReason.set(reason, [...(byReason.get(reason) ?? []), index])
    for (const [reason, indexes] of byReason)
      parts.push(
        `not sent, so not seen by the model: ${indexes.length > 1 ? "images" : "image"} ${indexes.join(", ")} (${reason})`,
      )
    return `[SVG: ${parts.join("; ")}]`
  }
}
