import { findInFiles } from "@ast-grep/napi"
import { SecurityOutput } from "../security/output"
import { AstScan } from "./scan"

/**
 * `ast_grep_search`'s engine: matches of an ast-grep pattern across the project, in-process through
 * `@ast-grep/napi`'s parallel `findInFiles` (no CLI is spawned).
 *
 * Files are handed to napi in batches so that a deadline or an abort stops the search between batches: the result
 * then holds what was found so far and says so. Every match is counted; positions are kept only for the first
 * `maxStoredMatches` in file and position order (the same N whatever order napi's threads report files in): a file
 * that sorts after the kept ones once the cap is reached costs no range extraction (see `FirstMatches`).
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
    /** Positions kept: the first N in file and position order (all matches are counted). The search tool keeps
     *  only what its output shows. */
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
  const CONCURRENT_CALLS = 2

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

    const first = new FirstMatches(maxStored)
    // Matches inside lines a protected segment hides are dropped before they are counted: a count is an answer too.
    const hidden = input.segments?.().read ?? []
    const visible = <N extends Found & { getRoot(): { root(): { text(): string } } }>(nodes: N[]): N[] => {
      if (!hidden.length) return nodes
      const text = nodes[0].getRoot().root().text()
      const ranges = SecurityOutput.lineRanges(text, hidden)
      if (!ranges.length) return nodes
      return nodes.filter((node) => {
        const r = node.range()
        return !ranges.some((x) => r.start.line + 1 <= x.to && r.end.line + 1 >= x.from)
      })
    }
    let filesWithMatches = 0
    let total = 0
    const candidates = filtered.candidates.map((c) => c.file)
    // Two napi calls at a time: one call's threads wait while the JS thread takes their results, leaving a core idle
    // (on 2 cores, 27k matches: ~1.0 s alone, ~0.85 s as two halves at once, as fast as the CLI).
    const size = Math.max(1, Math.min(batchSize, Math.ceil(candidates.length / CONCURRENT_CALLS)))
    let next = 0
    const worker = async () => {
      while (next < candidates.length && !signal.aborted) {
        const batch = candidates.slice(next, (next += size))
        await findInFiles(
          scan.napiLang,
          { paths: batch, matcher: { rule: { pattern: input.pattern } } },
          (error, found) => {
            if (error || !found.length) return
            const nodes = visible(found)
            if (!nodes.length) return
            filesWithMatches++
            total += nodes.length
            first.add(nodes[0].getRoot().filename(), nodes)
          },
        )
      }
    }
    await Promise.all(Array.from({ length: CONCURRENT_CALLS }, worker))
    const matches = first.matches()
    const interrupted = signal.aborted
    return {
      lang: scan.lang,
      pattern: input.pattern,
      warning: scan.pattern.warning,
      matches,
      totalMatches: total,
      filesWithMatches,
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

  type Found = { range(): { start: Position; end: Position } }

  /**
   * The first `cap` matches in file and position order, however the files arrive: a file is kept while it sorts
   * before the last kept file or fewer than `cap` matches are kept; files pushed past the cap are dropped again.
   * Ranges are read from napi only for files that are kept.
   *
   * @example
   * const first = new FirstMatches(2)
   * first.add("/b.ts", nodesOfB) // 3 matches: 2 kept
   * first.add("/a.ts", nodesOfA) // 1 match: kept, /b.ts now contributes 1
   * first.matches().length // 2
   */
  export class FirstMatches {
    private files: { file: string; matches: Match[] }[] = []
    private stored = 0
    constructor(private readonly cap: number) {}

    add(file: string, nodes: readonly Found[]) {
      if (this.cap <= 0) return
      const last = this.files[this.files.length - 1]
      if (this.stored >= this.cap && last && file > last.file) return
      const matches: Match[] = nodes.map((node) => {
        const range = node.range()
        return {
          file,
          start: { line: range.start.line, column: range.start.column },
          end: { line: range.end.line, column: range.end.column },
        }
      })
      matches.sort((a, b) => a.start.line - b.start.line || a.start.column - b.start.column)
      let lo = 0
      let hi = this.files.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (this.files[mid].file < file) lo = mid + 1
        else hi = mid
      }
      this.files.splice(lo, 0, { file, matches })
      this.stored += matches.length
      while (this.files.length > 1 && this.stored - this.files[this.files.length - 1].matches.length >= this.cap)
        this.stored -= this.files.pop()!.matches.length
    }

    /** The kept matches, sorted, at most `cap`. */
    matches(): Match[] {
      const out: Match[] = []
      for (const { matches } of this.files) {
        for (const match of matches) {
          if (out.length >= this.cap) return out
          out.push(match)
        }
      }
      return out
    }
  }
}
