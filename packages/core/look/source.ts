import fs from "fs"
import os from "os"
import path from "path"
import { LookMime } from "./mime"

/**
 * What look_at is asked to analyse, opened in steps so that every refusal comes before the bytes it would need:
 * `open` checks the size (a file's `stat`, or the length of `image_data` before decoding) and reads only the first
 * bytes to tell the type; `bytes` reads the rest once the model call is known to be possible.
 *
 * @example
 * const source = LookSource.data("data:image/png;base64,iVBORw0KGgo…", 10 * 1024 * 1024)
 * source.type // { mime: "image/png", kind: "image" }
 */
export namespace LookSource {
  export type Source = {
    /** A name for the answer and the error messages: the path relative to the project, or "image_data". */
    label: string
    /** The absolute path, for a file. */
    file?: string
    size: number
    type: LookMime.Type
    /** The whole content (for a file, read from the file opened when it was checked). */
    bytes(): Uint8Array
    /** Lets the file go (a file only). */
    close?(): void
  }

  export class LookError extends Error {
    override name = "LookError"
  }

  export function kb(bytes: number): string {
    return bytes >= 1024 * 1024 ? `${+(bytes / 1024 / 1024).toFixed(1)} MB` : `${+(bytes / 1024).toFixed(1)} KB`
  }

  /** What a conversation keeps of `image_data` given to look_at: its type and size, not its bytes. */
  export function note(mime: string, size: number): string {
    return `[${mime}, ${kb(size)}: given to look_at, not kept here]`
  }

  /**
   * The note for an `image_data` string, without decoding more than its first bytes: the type from its magic bytes
   * (else the data URL's declared type), the size from its length. Never throws: input look_at refused gets a note too.
   *
   * @example
   * LookSource.noteOf("data:image/png;base64,iVBORw0KGgo…") // "[image/png, 70.7 KB: given to look_at, not kept here]"
   */
  export function noteOf(input: string): string {
    let text = input.trim()
    let declared: string | undefined
    if (/^data:/i.test(text)) {
      const comma = text.indexOf(",")
      const params = text
        .slice(5, comma < 0 ? text.length : comma)
        .toLowerCase()
        .split(";")
      declared = params[0] || undefined
      text = comma < 0 ? "" : text.slice(comma + 1)
      if (!params.includes("base64")) {
        let decoded = text
        try {
          decoded = decodeURIComponent(text)
        } catch {}
        const bytes = new TextEncoder().encode(decoded)
        return note(
          LookMime.sniff(bytes.subarray(0, LookMime.HEAD_BYTES))?.mime ?? declared ?? "image_data",
          bytes.length,
        )
      }
    }
    text = text.replace(/\s+/g, "")
    const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0
    const size = Math.max(0, Math.floor((text.length * 3) / 4) - padding)
    const head = text
      .slice(0, Math.ceil(LookMime.HEAD_BYTES / 3) * 4)
      .replace(/-/g, "+")
      .replace(/_/g, "/")
    return note(LookMime.sniff(Buffer.from(head, "base64"))?.mime ?? declared ?? "image_data", size)
  }

  /** `file_path` as an absolute path: `~/` is the home folder, relative paths start at the project directory. */
  export function resolve(file: string, directory: string): string {
    if (file === "~" || file.startsWith("~/")) return path.join(os.homedir(), file.slice(1))
    return path.resolve(directory, file)
  }

  function unsupported(label: string, head: Uint8Array): LookError {
    return new LookError(
      `look_at: ${label} is ${LookMime.describe(head)}, not a supported type (${LookMime.SUPPORTED}; told by its ` +
        "content, not its name)",
    )
  }

  function tooLarge(label: string, size: number, max: number): LookError {
    return new LookError(`look_at: ${label} is ${kb(size)}, over the limit of ${kb(max)} (lookAt.maxBytes)`)
  }

  /**
   * The SVG text to send, refused over `maxSvgBytes`: `text` is the SVG with its embedded raster images cut out
   * (`embedded` of them), what the model reads as text.
   */
  export function svgText(label: string, text: string, embedded: number, limits: Limits): string {
    const size = Buffer.byteLength(text)
    if (size <= limits.maxSvgBytes) return text
    const what = embedded
      ? `the text of ${label} (its ${embedded} embedded images cut out) is ${kb(size)}`
      : `${label} is ${kb(size)}`
    throw new LookError(
      `look_at: ${what}, over the SVG limit of ${kb(limits.maxSvgBytes)} (SVG is sent as text; lookAt.maxSvgBytes)`,
    )
  }

  /**
   * A file, after the caller checked access: its size against `max` and its type from its first bytes. The file is
   * opened once, here: `bytes()` reads the same open file later, so a path swapped for a link to another file after
   * the check (by a command running meanwhile) changes nothing that is sent. Call `close()` when done.
   *
   * @example
   * LookSource.file("/repo/shot.png", "/repo", { maxBytes: 10 << 20, maxSvgBytes: 256 << 10 }).type.mime // "image/png"
   */
  export function file(full: string, directory: string, limits: Limits): Source {
    const rel = path.relative(directory, full)
    const label = rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : full
    let fd: number
    try {
      // Non-blocking: opening a FIFO for reading would otherwise wait for a writer (it is refused below as not a file).
      fd = fs.openSync(full, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code === "ENOENT" || code === "ENOTDIR") throw new LookError(`look_at: ${label} does not exist`)
      throw new LookError(`look_at: ${label} cannot be opened (${code ?? (e as Error).message})`)
    }
    try {
      const stat = fs.fstatSync(fd)
      if (!stat.isFile()) throw new LookError(`look_at: ${label} is not a file`)
      if (stat.size === 0) throw new LookError(`look_at: ${label} is empty`)
      if (stat.size > limits.maxBytes) throw tooLarge(label, stat.size, limits.maxBytes)
      const buffer = Buffer.alloc(Math.min(stat.size, LookMime.HEAD_BYTES))
      let head = buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, 0))
      let type = LookMime.sniff(head)
      if (!type && head.length < stat.size && LookMime.undecided(head)) {
        // Text still inside an SVG prolog (a long license comment): read on, at most the SVG limit.
        const more = Buffer.alloc(Math.min(stat.size, limits.maxSvgBytes))
        head = more.subarray(0, fs.readSync(fd, more, 0, more.length, 0))
        type = LookMime.sniff(head)
      }
      if (!type) throw unsupported(label, head)
      // An SVG is bounded like an image here (it may carry raster images, sent as images); the SVG limit bounds the
      // text sent once they are cut out (`LookTool`, `svgText`).
      return {
        label,
        file: full,
        size: stat.size,
        type,
        bytes: () => readAll(fd, label, limits.maxBytes),
        close: () => fs.closeSync(fd),
      }
    } catch (e) {
      fs.closeSync(fd)
      throw e
    }
  }

  /** The whole content of an open file, refused past `max` bytes (it may have grown since it was measured). */
  function readAll(fd: number, label: string, max: number): Uint8Array {
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const chunk = Buffer.alloc(Math.min(1 << 20, max + 1 - total))
      const n = fs.readSync(fd, chunk, 0, chunk.length, total)
      if (n === 0) break
      chunks.push(chunk.subarray(0, n))
      total += n
      if (total > max) throw tooLarge(label, total, max)
    }
    return Buffer.concat(chunks, total)
  }

  export type Limits = { maxBytes: number; maxSvgBytes: number }

  const BASE64 = /^[A-Za-z0-9+/\-_]*={0,2}$/

  /**
   * `image_data`: raw base64 (standard or URL-safe, whitespace ignored) or a data URL (`data:<mime>;base64,<data>`,
   * or a percent-encoded one such as `data:image/svg+xml,%3Csvg…`). The declared MIME type is ignored: the bytes
   * tell it. The decoded size is checked before decoding.
   *
   * @example
   * LookSource.data("R0lGODlhAQABAAAAACw=", { maxBytes: 1024, maxSvgBytes: 1024 }).type.mime // "image/gif"
   */
  export function data(input: string, limits: Limits): Source {
    const label = "image_data"
    let text = input.trim()
    let bytes: Uint8Array
    if (/^data:/i.test(text)) {
      const comma = text.indexOf(",")
      if (comma < 0) throw new LookError("look_at: image_data is a data URL without a comma before its data")
      const params = text.slice(5, comma).toLowerCase().split(";")
      const payload = text.slice(comma + 1)
      if (!params.includes("base64")) {
        if (payload.length > limits.maxBytes * 3) throw tooLarge(label, payload.length, limits.maxBytes)
        let decoded: string
        try {
          decoded = decodeURIComponent(payload)
        } catch {
          throw new LookError("look_at: image_data is a data URL whose percent-encoding is invalid")
        }
        bytes = new TextEncoder().encode(decoded)
        return checked(label, bytes, limits)
      }
      text = payload
    }
    text = text.replace(/\s+/g, "")
    if (!text) throw new LookError("look_at: image_data is empty")
    if (!BASE64.test(text) || text.length % 4 === 1)
      throw new LookError("look_at: image_data is neither base64 nor a data URL (data:<mime>;base64,<data>)")
    const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0
    const size = Math.floor((text.length * 3) / 4) - padding
    if (size > limits.maxBytes) throw tooLarge(label, size, limits.maxBytes)
    bytes = Buffer.from(text.replace(/-/g, "+").replace(/_/g, "/"), "base64")
    return checked(label, bytes, limits)
  }

  function checked(label: string, bytes: Uint8Array, limits: Limits): Source {
    if (!bytes.length) throw new LookError(`look_at: ${label} is empty`)
    if (bytes.length > limits.maxBytes) throw tooLarge(label, bytes.length, limits.maxBytes)
    let head = bytes.subarray(0, LookMime.HEAD_BYTES)
    let type = LookMime.sniff(head)
    if (!type && head.length < bytes.length && LookMime.undecided(head)) {
      head = bytes.subarray(0, limits.maxSvgBytes)
      type = LookMime.sniff(head)
    }
    if (!type) throw unsupported(label, head)
    return { label, size: bytes.length, type, bytes: () => bytes }
  }
}
