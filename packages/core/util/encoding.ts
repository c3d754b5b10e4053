/**
 * How a file's bytes read as text, for the tools that search files and must never write one back in another encoding
 * (the AST tools, LSP edits, `init`). No dependencies, so the AST workers can load it.
 *
 * - valid UTF-8 (a leading byte-order mark kept in the text): read as is;
 * - UTF-16 with a byte-order mark (Visual Studio's "Unicode"): decoded, but not UTF-8, so never rewritten;
 * - any other text (Latin-1, Windows-1252, Shift-JIS…): its Latin-1 reading, one character per byte, to look at only;
 * - NUL bytes without a UTF-16 byte-order mark: binary, not read.
 *
 * @example
 * Encoding.read(Buffer.from("\ufeffclass A {}", "utf16le")) // { text: "\ufeffclass A {}", utf8: false, encoding: "UTF-16LE" }
 * Encoding.read(Buffer.from([0x4a, 0x6f, 0x73, 0xe9])) // { text: "José", utf8: false }
 */
export namespace Encoding {
  export type Reading = { text: string; utf8: boolean; encoding?: string }

  const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
  // "utf-16" is UTF-16LE by the Encoding Standard.
  const utf16le = new TextDecoder("utf-16", { ignoreBOM: true })

  /** The file's text as described above, or undefined for binary data. */
  export function read(bytes: Uint8Array): Reading | undefined {
    const bom = utf16Bom(bytes)
    if (bom) return { text: decodeUtf16(bytes, bom), utf8: false, encoding: bom }
    if (bytes.includes(0)) return undefined
    try {
      return { text: strict.decode(bytes), utf8: true }
    } catch {
      const declared = declaredIn(bytes)
      return { text: Buffer.from(bytes).toString("latin1"), utf8: false, ...(declared ? { encoding: declared } : {}) }
    }
  }

  /**
   * The encoding a file that is not UTF-8 shows or names for itself: a UTF-16 byte-order mark, a Python/Ruby/Emacs
   * `coding:` line in its first two lines, an XML declaration, a CSS `@charset`. Undefined when it says nothing.
   *
   * @example
   * Encoding.declared(Buffer.from("# -*- coding: shift_jis -*-\n")) // "shift_jis"
   */
  export function declared(bytes: Uint8Array): string | undefined {
    return utf16Bom(bytes) ?? declaredIn(bytes)
  }

  /**
   * How to convert a file to UTF-8 with iconv, naming its encoding when the file does: advice that cannot turn text
   * into mojibake (a Shift-JIS file converted "from Latin-1" would be).
   *
   * @example
   * Encoding.advice("shift_jis") // "`iconv -f shift_jis -t UTF-8` (the encoding the file names)"
   * Encoding.advice(undefined) // "`iconv -f <its encoding> -t UTF-8` (`file -i` or the editor that saved it tells which)"
   */
  export function advice(encoding: string | undefined): string {
    return encoding
      ? `\`iconv -f ${encoding} -t UTF-8\` (the encoding the file names)`
      : "`iconv -f <its encoding> -t UTF-8` (`file -i` or the editor that saved it tells which)"
  }

  /**
   * Which UTF-16 a byte-order mark at the start names (FF FE 00 00 is UTF-32LE's: not UTF-16).
   *
   * @example
   * Encoding.utf16Bom(Buffer.from([0xfe, 0xff, 0, 0x41])) // "UTF-16BE"
   */
  export function utf16Bom(bytes: Uint8Array): "UTF-16LE" | "UTF-16BE" | undefined {
    if (bytes.length < 2) return undefined
    // FF FE 00 00 is UTF-32LE's mark: not read as UTF-16.
    if (bytes[0] === 0xff && bytes[1] === 0xfe && !(bytes.length >= 4 && bytes[2] === 0 && bytes[3] === 0))
      return "UTF-16LE"
    if (bytes[0] === 0xfe && bytes[1] === 0xff) return "UTF-16BE"
    return undefined
  }

  function decodeUtf16(bytes: Uint8Array, bom: "UTF-16LE" | "UTF-16BE"): string {
    const even = bytes.subarray(0, bytes.length - (bytes.length % 2))
    if (bom === "UTF-16LE") return utf16le.decode(even)
    const swapped = Buffer.from(even)
    swapped.swap16()
    return utf16le.decode(swapped)
  }

  function declaredIn(bytes: Uint8Array): string | undefined {
    const head = Buffer.from(bytes.subarray(0, 1024)).toString("latin1")
    const lines = head.split(/\r?\n/).slice(0, 2).join("\n")
    // PEP 263 and Ruby's magic comment (`coding: x`, `coding=x`, `-*- coding: x -*-`, `vim: set fileencoding=x`).
    const magic = /^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)/m.exec(lines)
    if (magic) return magic[1]
    const xml = /^<\?xml[^>]*\bencoding=["']([-\w.]+)["']/.exec(head)
    if (xml) return xml[1]
    const css = /^@charset "([-\w.]+)";/.exec(head)
    return css?.[1]
  }
}
