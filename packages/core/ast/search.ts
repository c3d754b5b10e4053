import fs from "fs/promises"
import { Encoding } from "../util/encoding"
import { AstEmbed } from "./embed"
import { AstMatch } from "./match"
import { AstPool } from "./pool"
import { AstScan } from "./scan"

/**
 * `ast_grep_search`'s engine: matches of an ast-grep pattern across the project, in-process through `@ast-grep/napi`
 * (no CLI is spawned), parsed in worker threads (pool.ts, match.ts).
 *
 * The files, in path order, are cut into batches of about `BATCH_CHARS` bytes that the workers claim one at a time
 * through a counter in shared memory; a worker reads each file once, skips it when it lacks one of the pattern's
 * literal tokens, else parses it and counts the matches, and sends back numbers only. A deadline or an abort stops the
 * search between batches: the result then holds what was found so far and says so. Every match is counted; positions
 * are kept only for the first `maxStoredMatches` in file and position order (the same N whatever order the batches
 * finish in), and batches after the last kept file are only counted (see `FirstMatches`).
 *
 * @example
 * const result = await AstSearch.run({ directory: "/repo", lang: "typescript", pattern: "console.log($$$A)" })
 * result.matches[0] // { file: "/repo/src/a.ts", start: { line: 11, column: 4 }, end: { line: 11, column: 18 } }
 */
export namespace AstSearch {
  export type Position = { line: number; column: number }
  /** 0-based lines; columns count UTF-16 code units, like JavaScript string indices (the output shows characters). */
  export type Match = { file: string; start: Position; end: Position }

  export type Options = {
    /** Give up after this long (default 60 s); the result is marked `timedOut`. */
    timeoutMs?: number
    /** Positions kept: the first N in file and position order (all matches are counted). The search tool keeps
     *  only what its output shows. */
    maxStoredMatches?: number
    /** Most files in one batch (default `BATCH_FILES`). */
    batchSize?: number
    /** Worker threads (default: one per core, at most `AstPool.MAX_WORKERS`, none for a search under
     *  `IN_THREAD_CHARS` while no worker is running); 0 parses on the calling thread. */
    workers?: number
  }

  export type Result = {
    lang: string
    pattern: string
    /** Why the pattern may have matched nothing; set only when nothing matched (as the CLI warns). */
    warning?: string
    /** A trap in the pattern's shape, shown whatever matched (`AstPattern.Compiled.note`). */
    note?: string
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
    /** Files that are not valid UTF-8 where the pattern matches in their Latin-1 reading: not searched (`AstMatch.NOT_UTF8`). */
    notUtf8: string[]
    /** The encoding each of `notUtf8` shows or names for itself (a UTF-16 byte-order mark, a `coding:` line, …). */
    encodings?: Record<string, string>
    timedOut: boolean
    aborted: boolean
    elapsedMs: number
    /** Worker threads that searched (0: the calling thread did all the work). */
    workers: number
  }

  export const TIMEOUT_MS = 60_000
  export const MAX_STORED_MATCHES = 200_000
  /** Source bytes per batch: small enough to balance the workers and bound what one holds, large enough that
   *  messages cost nothing next to parsing. */
  export const BATCH_CHARS = 96 * 1024
  export const BATCH_FILES = 256
  /** Below this many bytes to search (and with no worker already running) the calling thread parses: starting
   *  workers would cost more than they save. */
  export const IN_THREAD_CHARS = 256 * 1024

  type Batch = { start: number; files: string[] }

  /**
   * Searches the project for `input.pattern`; never throws for too many matches or a timeout (see `Result`).
   *
   * @example
   * const result = await AstSearch.run({ directory: "/repo", lang: "python", pattern: "print($$$A)" })
   * result.totalMatches // 12
   */
  export async function run(input: AstScan.Input, options: Options = {}): Promise<Result> {
    const begun = performance.now()
    const timeoutMs = options.timeoutMs ?? TIMEOUT_MS
    const deadline = AstScan.deadline(timeoutMs)
    const signal = input.signal ? AbortSignal.any([input.signal, deadline]) : deadline
    const scan = await AstScan.prepare({ ...input, signal })
    const files = scan.files.files
    const maxStored = options.maxStoredMatches ?? MAX_STORED_MATCHES
    const prefilter = input.prefilter !== false

    const sizes = scan.files.sizes
    const total = files.reduce((sum, file) => sum + (sizes.get(file) ?? 0), 0)
    const batches = plan(files, sizes, options.batchSize ?? BATCH_FILES, total)
    const control = AstMatch.control(batches.length)
    const search: AstMatch.Search = {
      lang: scan.napiLang,
      pattern: scan.pattern.matcher,
      literals: prefilter ? scan.pattern.literals : [],
      keywords: prefilter ? scan.pattern.keywords : [],
      hidden: input.segments?.().read ?? [],
      ...(AstEmbed.spec(scan.lang) ? { embed: AstEmbed.spec(scan.lang) } : {}),
      batches: batches.map((b) => b.files),
      control,
    }
    const stop = () => Atomics.store(control, AstMatch.STOP, 1)
    if (signal.aborted) stop()
    else signal.addEventListener("abort", stop, { once: true })

    const batchOf = new Map<string, number>()
    batches.forEach((batch, index) => batch.files.forEach((file) => batchOf.set(file, index)))
    const first = new FirstMatches(maxStored)
    const counts: number[] = new Array(files.length).fill(0)
    const recorded: boolean[] = new Array(batches.length).fill(false)
    let totalMatches = 0
    let filesWithMatches = 0
    const record = (index: number, done: AstMatch.Done) => {
      if (recorded[index]) return
      recorded[index] = true
      const batch = batches[index]
      done.counts.forEach((count, i) => {
        counts[batch.start + i] = count
        if (count > 0) {
          totalMatches += count
          filesWithMatches++
        }
      })
      const p = done.positions
      for (let i = 0; i < p.length;) {
        const at = p[i]
        const matches: Match[] = []
        const file = batch.files[at]
        for (; i < p.length && p[i] === at; i += 5)
          matches.push({ file, start: { line: p[i + 1], column: p[i + 2] }, end: { line: p[i + 3], column: p[i + 4] } })
        first.addMatches(file, matches)
      }
      // Once the cap is reached, no match of a batch after the last kept file can be shown: those are only counted.
      const last = first.size() >= maxStored ? first.lastFile() : undefined
      if (maxStored <= 0) Atomics.store(control, AstMatch.POSITIONS_UNTIL, -1)
      else if (last !== undefined) {
        const until = batchOf.get(last)!
        if (until < Atomics.load(control, AstMatch.POSITIONS_UNTIL))
          Atomics.store(control, AstMatch.POSITIONS_UNTIL, until)
      }
    }
    if (maxStored <= 0) Atomics.store(control, AstMatch.POSITIONS_UNTIL, -1)

    // This thread takes batches from the same counter when it has no worker, or when its worker fails.
    const inThread = () => AstMatch.drain(search, record)
    let started = 0
    const inWorker = async (runner: AstPool.Runner) => {
      try {
        await runner.ready
      } catch {
        return inThread()
      }
      started++
      try {
        await runner.search(search, record)
      } catch {
        return inThread()
      }
      AstPool.release(runner)
    }

    // Explicit `workers` is obeyed; by default a small search with no worker running stays on this thread.
    const small = options.workers === undefined && total < IN_THREAD_CHARS && !AstPool.idleCount()
    const workers = small ? 0 : Math.max(0, Math.min(options.workers ?? AstPool.parallelism(), batches.length))
    if (workers === 0) await inThread()
    else await Promise.all(AstPool.acquire(workers).map(inWorker))
    // Batches a failed worker claimed but never reported.
    const claimed = Math.min(Atomics.load(control, AstMatch.NEXT), batches.length)
    for (let index = 0; index < claimed && !signal.aborted; index++)
      if (!recorded[index])
        record(
          index,
          await AstMatch.files({
            ...search,
            files: batches[index].files,
            positions: index <= control[AstMatch.POSITIONS_UNTIL],
          }),
        )
    signal.removeEventListener("abort", stop)

    const interrupted = signal.aborted
    const unreadable = files.filter((_, i) => counts[i] === AstMatch.UNREADABLE)
    const notUtf8 = files.filter((_, i) => counts[i] === AstMatch.NOT_UTF8)
    // Read again only for the files named (the workers send back numbers): the warning names a declared encoding.
    const encodings: Record<string, string> = {}
    for (const file of notUtf8) {
      const declared = await fs
        .readFile(file)
        .then((bytes) => Encoding.declared(bytes))
        .catch(() => undefined)
      if (declared) encodings[file] = declared
    }
    return {
      lang: scan.lang,
      pattern: input.pattern,
      // Only when files were searched: with none, the pattern is not why nothing matched.
      warning: totalMatches === 0 && files.length > 0 ? scan.pattern.warning : undefined,
      note: scan.pattern.note,
      matches: first.matches(),
      totalMatches,
      filesWithMatches,
      filesSearched: files.length,
      filesSkippedByPrefilter: counts.filter((c) => c === AstMatch.SKIPPED).length,
      denied: scan.files.denied,
      tooLarge: scan.files.tooLarge,
      unreadable,
      notUtf8,
      ...(Object.keys(encodings).length ? { encodings } : {}),
      timedOut: interrupted && deadline.aborted,
      aborted: interrupted && !deadline.aborted,
      elapsedMs: performance.now() - begun,
      workers: started,
    }
  }

  /**
   * Cuts the sorted file list into batches of about `BATCH_CHARS` bytes and at most `maxFiles` files, smaller when
   * the whole search is small so that every worker gets several.
   */
  function plan(files: string[], sizes: Map<string, number>, maxFiles: number, total: number): Batch[] {
    const target = Math.max(4096, Math.min(BATCH_CHARS, Math.ceil(total / (4 * AstPool.MAX_WORKERS))))
    const batches: Batch[] = []
    let current: Batch = { start: 0, files: [] }
    let bytes = 0
    files.forEach((file, i) => {
      if (current.files.length && (bytes >= target || current.files.length >= maxFiles)) {
        batches.push(current)
        current = { start: i, files: [] }
        bytes = 0
      }
      current.files.push(file)
      bytes += sizes.get(file) ?? 0
    })
    if (current.files.length) batches.push(current)
    return batches
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
      if (!this.wanted(file)) return
      const matches: Match[] = nodes.map((node) => {
        const range = node.range()
        return {
          file,
          start: { line: range.start.line, column: range.start.column },
          end: { line: range.end.line, column: range.end.column },
        }
      })
      this.insert(file, matches)
    }

    /** `add` for positions already read (a worker's answer). */
    addMatches(file: string, matches: Match[]) {
      if (this.wanted(file)) this.insert(file, matches)
    }

    /** The last file holding kept matches, if any. */
    lastFile(): string | undefined {
      return this.files[this.files.length - 1]?.file
    }

    /** Matches kept so far (may exceed `cap` by the last file's excess until `matches()` trims it). */
    size(): number {
      return this.stored
    }

    private wanted(file: string): boolean {
      if (this.cap <= 0) return false
      const last = this.files[this.files.length - 1]
      return !(this.stored >= this.cap && last && file > last.file)
    }

    private insert(file: string, matches: Match[]) {
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
