import { findInFiles } from "@ast-grep/napi"
import { AstScan } from "./scan"

/**
 * `ast_grep_search`'s engine: matches of an ast-grep pattern across the project, in-process through
 * `@ast-grep/napi`'s parallel `findInFiles` (no CLI is spawned).
 *
 * Files are handed to napi in batches so that a deadline or an abort stops the search between batches: the result
 * then holds what was found so far and says so. Every match is counted; the positions of up to `maxStoredMatches` are
 * kept (the formatter shows fewer still, reading their text from the files), sorted by file and position so the
 * first N are always the same N.
 *
 * @example
 * const result = await AstSearch.run({ directory: "/repo", lang: "typescript", pattern: "console.log($$$A)" })
 * result.matches[0] // { file: "/repo/src/a.ts", start: { line: 11, column: 4 }, end: { line: 11, column: 18 } }
 */
export namespace AstSearch {
  export type Position = { line: number; column: number }
  /** 0-based lines; columns count UTF-16 code units, like JavaScript string indices. */
  export type Match = { file: string; start: Position; end: Position }

  export type Options = {
    /** Give up after this long (default 60 s); the result is marked `timedOut`. */
    timeoutMs?: number
    /** Matches kept in memory (all are counted). */
    maxStoredMatches?: number
    batchSize?: number
  }

  export type Result = {
    lang: string
    pattern: string
    warning?: string
    matches: Match[]
    totalMatches: number
    /** Files with at least one match (counted even when their matches are not stored). */
    filesWithMatches: number
    filesSearched: number
    /** Files the pattern's literals ruled out without parsing. */
    filesSkippedByPrefilter: number
    denied: string[]
    tooLarge: string[]
    unreadable: string[]
    timedOut: boolean
    aborted: boolean
    elapsedMs: number
  }

  export const TIMEOUT_MS = 60_000
  export const MAX_STORED_MATCHES = 200_000
  const BATCH = 2048

  /**
   * Searches the project for `input.pattern`; never throws for too many matches or a timeout (see `Result`).
   *
   * @example
   * const result = await AstSearch.run({ directory: "/repo", lang: "python", pattern: "print($$$A)" })
   * result.totalMatches // 12
   */
  export async function run(input: AstScan.Input, options: Options = {}): Promise<Result> {
    const started = performance.now()
    const timeoutMs = options.timeoutMs ?? TIMEOUT_MS
    const deadline = AstScan.deadline(timeoutMs)
    const signal = input.signal ? AbortSignal.any([input.signal, deadline]) : deadline
    const scan = await AstScan.prepare({ ...input, signal })
    const filtered = await AstScan.filter(scan, { keepText: false })
    const maxStored = options.maxStoredMatches ?? MAX_STORED_MATCHES
    const batchSize = options.batchSize ?? BATCH

    const matches: Match[] = []
    const files = new Set<string>()
    let total = 0
    const candidates = filtered.candidates.map((c) => c.file)
    for (let i = 0; i < candidates.length && !signal.aborted; i += batchSize) {
      const batch = candidates.slice(i, i + batchSize)
      await findInFiles(
        scan.napiLang,
        { paths: batch, matcher: { rule: { pattern: input.pattern } } },
        (error, nodes) => {
          if (error || !nodes.length) return
          const file = nodes[0].getRoot().filename()
          files.add(file)
          total += nodes.length
          for (const node of nodes) {
            if (matches.length >= maxStored) break
            const range = node.range()
            matches.push({
              file,
              start: { line: range.start.line, column: range.start.column },
              end: { line: range.end.line, column: range.end.column },
            })
          }
        },
      )
    }
    matches.sort(
      (a, b) =>
        (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
        a.start.line - b.start.line ||
        a.start.column - b.start.column,
    )
    const interrupted = signal.aborted
    return {
      lang: scan.lang,
      pattern: input.pattern,
      warning: scan.pattern.warning,
      matches,
      totalMatches: total,
      filesWithMatches: files.size,
      filesSearched: scan.files.files.length,
      filesSkippedByPrefilter: scan.files.files.length - candidates.length - filtered.unreadable.length,
      denied: scan.files.denied,
      tooLarge: scan.files.tooLarge,
      unreadable: filtered.unreadable,
      timedOut: interrupted && deadline.aborted,
      aborted: interrupted && !deadline.aborted,
      elapsedMs: performance.now() - started,
    }
  }
}
