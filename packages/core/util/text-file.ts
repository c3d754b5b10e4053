import fs from "fs"
import fsp from "fs/promises"
import z from "zod"
import { Encoding } from "./encoding"
import { NamedError } from "./error"

/**
 * Strict UTF-8 reading for the writers that read a user's file as text and write it back (LSP edits, the AST live
 * replace, `init`). Node's `readFile(file, "utf8")` turns every byte that is not UTF-8 into U+FFFD, so a Latin-1
 * file (`José`, or a Python file declaring `# -*- coding: latin-1 -*-`) written back comes out as UTF-8 with
 * replacement characters: its text is lost. Here such a file is a named error (`NotUtf8`) instead, and the writers
 * leave it alone. A leading byte-order mark is kept in the text (`\uFEFF`), as `readFile(…, "utf8")` keeps it.
 *
 * @example
 * await TextFile.read("/repo/a.ts") // "export const a = 1\n"
 * TextFile.decode(Buffer.from("Jos\xe9", "latin1"), "/repo/l1.py") // throws TextFile.NotUtf8
 */
export namespace TextFile {
  export const NotUtf8 = NamedError.create(
    "FileNotUtf8",
    z.object({ file: z.string(), offset: z.number(), encoding: z.string().optional() }),
    (d) =>
      `${d.file} is not UTF-8 text (byte ${d.offset} is not valid UTF-8; ${d.encoding ?? "UTF-16, Latin-1 or another encoding"}), so it ` +
      `was left unchanged: writing it back would replace its non-ASCII characters with U+FFFD. Convert it to ` +
      `UTF-8 first (${Encoding.advice(d.encoding)}) or change it by other means`,
  )

  const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

  /** The offset of the first byte that is not part of valid UTF-8, or -1 when all of `bytes` is UTF-8. */
  export function invalidAt(bytes: Uint8Array): number {
    let i = 0
    const n = bytes.length
    while (i < n) {
      const b = bytes[i]
      if (b < 0x80) {
        i++
        continue
      }
      const len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0
      if (!len || i + len > n) return i
      const b1 = bytes[i + 1]
      const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80
      const hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf
      if (b1 < lo || b1 > hi) return i
      for (let k = 2; k < len; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return i
      i += len
    }
    return -1
  }

  /** `bytes` as text; throws `NotUtf8` naming `file` when they are not valid UTF-8. A leading BOM is kept. */
  export function decode(bytes: Uint8Array, file: string): string {
    try {
      return strict.decode(bytes)
    } catch {
      const encoding = Encoding.declared(bytes)
      throw new NotUtf8({ file, offset: Math.max(0, invalidAt(bytes)), ...(encoding ? { encoding } : {}) })
    }
  }

  /** The file's text (strict UTF-8, see `decode`); file system errors are thrown as they are. */
  export async function read(file: string): Promise<string> {
    return decode(await fsp.readFile(file), file)
  }

  /** `read`, synchronously. */
  export function readSync(file: string): string {
    return decode(fs.readFileSync(file), file)
  }
}
