import fs from "fs/promises"
import type { SecuritySegments } from "../security/segments"
import type { Logger } from "../util/log"
import { Encoding } from "../util/encoding"
import { AstEmbed } from "./embed"
import { AstFiles } from "./files"
import { AstLanguage } from "./languages"
import { AstPattern } from "./pattern"

/**
 * The part search and replace share: resolve the language, check the pattern, list the files (gitignore, globs,
 * security policy), then read them and keep those the pattern's literals allow (see pattern.ts).
 *
 * @example
 * const scan = await AstScan.prepare({ directory: "/repo", lang: "typescript", pattern: "foo($A)" })
 * const { candidates } = await AstScan.filter(scan, { keepText: false })
 */
export namespace AstScan {
  export type Input = {
    directory: string
    worktree?: string
    lang: string
    pattern: string
    paths?: string[]
    globs?: string[]
    access?: (file: string, op: "read" | "write") => Promise<string | undefined>
    /**
     * Protected segments (marker pairs) this role may not read or not change: matches inside read-protected lines are
     * neither shown nor counted, their lines are masked in context and diffs, and a replace that would change a
     * write-protected segment is refused.
     */
    segments?: () => { read: SecuritySegments.Pair[]; write: SecuritySegments.Pair[] }
    log?: Logger
    signal?: AbortSignal
    maxFileBytes?: number
    /** Skip files the pattern's literals rule out (default true; false parses every file, e.g. to verify it). */
    prefilter?: boolean
  }

  export type Prepared = {
    input: Input
    lang: AstLanguage.Name
    napiLang: string
    pattern: AstPattern.Compiled
    /** Extensions the napi walker recognises for this language without help. */
    extensions: Set<string>
    files: AstFiles.Result
  }

  /**
   * Resolves the language, checks the pattern and lists the files; throws the named errors of bad input.
   *
   * @example
   * const scan = await AstScan.prepare({ directory: "/repo", lang: "rust", pattern: "unwrap()" })
   */
  export async function prepare(input: Input): Promise<Prepared> {
    const napiLang = await AstLanguage.load(input.lang, input.log)
    const lang = input.lang as AstLanguage.Name
    const pattern = AstPattern.compile(napiLang, lang, input.pattern, AstLanguage.expando(lang))
    const files = await AstFiles.collect({
      directory: input.directory,
      paths: input.paths,
      globs: input.globs,
      // The CLI also searches the <script>/<style> elements of HTML files for JavaScript, TypeScript, TSX and CSS.
      extensions: [...AstLanguage.extensions(lang), ...(AstEmbed.spec(lang) ? AstEmbed.HOSTS : [])],
      maxFileBytes: input.maxFileBytes,
      access: input.access ? (file) => input.access!(file, "read") : undefined,
      signal: input.signal,
    })
    return { input, lang, napiLang, pattern, extensions: new Set(AstLanguage.extensions(lang)), files }
  }

  /**
   * A signal that fires after `ms` (at once for 0 or less: a search given no time finds nothing).
   *
   * @example
   * AstScan.deadline(60_000) // aborts after a minute
   * AstScan.deadline(0).aborted // true
   */
  export function deadline(ms: number): AbortSignal {
    return ms <= 0 ? AbortSignal.abort(new DOMException("time limit reached", "TimeoutError")) : AbortSignal.timeout(ms)
  }

  /**
   * `notUtf8`: the file is not valid UTF-8; `text` is then its UTF-16 decoding (with a byte-order mark) or its Latin-1
   * reading (one character per byte), to look at only; `encoding` what the file shows or names of its encoding.
   */
  export type Candidate = { file: string; text?: string; notUtf8?: true; encoding?: string }

  export type Filtered = {
    candidates: Candidate[]
    /** Files that could not be read or hold binary data (NUL bytes). */
    unreadable: string[]
    /** True when the signal fired before every file was read. */
    interrupted: boolean
  }

  const READ_CONCURRENCY = 16

  /**
   * Reads the listed files and keeps those that may match; `keepText` retains their content (replace needs it).
   *
   * @example
   * const { candidates } = await AstScan.filter(scan, { keepText: true })
   */
  export async function filter(scan: Prepared, options: { keepText: boolean }): Promise<Filtered> {
    const { files } = scan.files
    // Nothing to test without literals: napi reads the files itself (and skips what it cannot parse).
    const prefilter = scan.input.prefilter !== false && scan.pattern.selective
    if (!options.keepText && !prefilter)
      return { candidates: files.map((file) => ({ file })), unreadable: [], interrupted: false }
    const keep: (Candidate | undefined)[] = new Array(files.length)
    const unreadable: string[] = []
    let next = 0
    let interrupted = false
    const worker = async () => {
      while (next < files.length) {
        if (scan.input.signal?.aborted) {
          interrupted = true
          return
        }
        const index = next++
        const file = files[index]
        let bytes: Buffer
        try {
          bytes = await fs.readFile(file)
        } catch {
          unreadable.push(file)
          continue
        }
        // Strict UTF-8 (`Encoding`): a Latin-1 file read with "utf8" gets U+FFFD for its accented letters, and a
        // replace would write them back so. A file that is not UTF-8 (UTF-16 with its byte-order mark, Latin-1,
        // Shift-JIS…) keeps a reading for the caller to tell whether the pattern matches there; it is never rewritten.
        const reading = Encoding.read(bytes)
        if (!reading) {
          unreadable.push(file)
          continue
        }
        const { text } = reading
        const notUtf8: true | undefined = reading.utf8 ? undefined : true
        const encoding = reading.encoding
        if (!prefilter || scan.pattern.mayMatch(text))
          keep[index] = {
            file,
            ...(options.keepText || notUtf8 ? { text } : {}),
            ...(notUtf8 ? { notUtf8, ...(encoding ? { encoding } : {}) } : {}),
          }
      }
    }
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, files.length) }, worker))
    return {
      candidates: keep.filter((c): c is Candidate => c !== undefined),
      unreadable: unreadable.sort(),
      interrupted,
    }
  }
}
