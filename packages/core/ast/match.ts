import { parse, type NapiConfig, type SgNode } from "@ast-grep/napi"
import { readFileSync } from "fs"
import type { SecuritySegments } from "../security/segments"
import { Encoding } from "../util/encoding"
import { AstEmbed } from "./embed"

/**
 * The per-file work of `ast_grep_search`: read a file, rule it out by the pattern's literal tokens or parse it with
 * napi and count the pattern's matches, keeping positions only when asked. It runs in the search workers
 * (worker.ts) and, when no worker can be started, on the calling thread; it imports neither zod nor the security
 * layer (the segment check is loaded only when protected segments exist), so a worker starts fast and small.
 *
 * napi frees a parsed tree only when the garbage collector has collected every `SgRoot`/`SgNode` of it and an event
 * loop turn has run its finalizers: nothing here outlives one file, and the worker forces a collection every
 * 128 KB parsed (see worker.ts).
 *
 * @example
 * const done = await AstMatch.files({ lang: "TypeScript", pattern: "foo($A)", literals: ["foo"], keywords: [], hidden: [], files: ["/r/a.ts"], positions: true })
 * done.counts // [2]
 * done.positions // [0, 3, 2, 3, 8, 0, 9, 0, 9, 6]: file index, start line, start column, end line, end column
 */
export namespace AstMatch {
  export type Job = {
    /** napi language id ("TypeScript", "python", …). */
    lang: string
    /** The pattern, or a rule matching each of its readings (`AstPattern.Compiled.matcher`). */
    pattern: string | NapiConfig
    /** Named leaf texts every match contains verbatim (see pattern.ts); [] skips no file. */
    literals: string[]
    /** Keyword tokens every match contains, compared ignoring case. */
    keywords: string[]
    /** Marker pairs of the segments this role may not read: matches on their lines are dropped before counting. */
    hidden: SecuritySegments.Pair[]
    files: string[]
    /** For a language the CLI also searches inside HTML (`AstEmbed`): the elements of `.html` files to search. */
    embed?: AstEmbed.Spec
    /** Keep positions (false: only count, e.g. once the matches the output can show are already found). */
    positions: boolean
  }

  export type Done = {
    /** Per file of the job: its match count, or `SKIPPED`, or `UNREADABLE`. */
    counts: number[]
    /** Five numbers per match: file index in the job, start line, start column, end line, end column (0-based lines,
     *  UTF-16 columns), in the order napi reports them within a file. */
    positions: number[]
    /** Characters of source parsed (files the literals ruled out not included). */
    parsed: number
  }

  /**
   * A whole search, for every thread that works on it: each claims the next batch through `control`, a counter in
   * shared memory, so no thread waits for the one that started the search to hand out work (on a loaded machine, or
   * in OpenCode while its main thread is busy, that wait left workers idle).
   */
  export type Search = Omit<Job, "files" | "positions"> & {
    /** File lists in path order. */
    batches: string[][]
    /** `Int32Array` over a `SharedArrayBuffer`, indexed by `NEXT`, `POSITIONS_UNTIL` and `STOP` (see `control`). */
    control: Int32Array
  }

  /** The next batch to claim. */
  export const NEXT = 0
  /** The last batch whose positions may still be shown; later ones are only counted (it only ever decreases). */
  export const POSITIONS_UNTIL = 1
  /** Non-zero: claim no more batches (deadline or abort). */
  export const STOP = 2

  /**
   * A fresh control block for `batches` batches, shareable with worker threads.
   *
   * @example
   * const control = AstMatch.control(12) // [0, 11, 0]
   */
  export function control(batches: number): Int32Array {
    const block = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT))
    block[POSITIONS_UNTIL] = batches - 1
    return block
  }

  /**
   * Claims batches of `search` until none is left or `STOP` is set, reporting each one; `between` runs after each
   * batch (a worker collects its heap there), then one event loop turn passes so that napi's finalizers run.
   *
   * @example
   * await AstMatch.drain(search, (index, done) => record(index, done))
   */
  export async function drain(
    search: Search,
    report: (index: number, done: Done) => void,
    between?: (done: Done) => void,
  ): Promise<void> {
    const { batches, control, ...rest } = search
    for (;;) {
      if (Atomics.load(control, STOP)) return
      const index = Atomics.add(control, NEXT, 1)
      if (index >= batches.length) return
      const positions = index <= Atomics.load(control, POSITIONS_UNTIL)
      const done = await files({ ...rest, files: batches[index], positions })
      report(index, done)
      between?.(done)
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  /** The file lacks one of the pattern's literals: it cannot match and was not parsed. */
  export const SKIPPED = -1
  /** The file could not be read, or holds binary data (NUL bytes). */
  export const UNREADABLE = -2
  /**
   * The file is not valid UTF-8 (Latin-1 or another legacy encoding) and the pattern matches in its Latin-1 reading,
   * outside the segments the role may not read (a match there does not name the file): it is not searched (the ast-grep CLI skips such files too) and its matches are neither shown nor counted.
   */
  export const NOT_UTF8 = -3

  /**
   * A test that `text` may contain a match: every literal verbatim, every keyword up to letter case.
   *
   * @example
   * const may = AstMatch.tester(["console", "log"], [])
   * may("console.log(1)") // true
   * may("print(1)") // false
   */
  export function tester(literals: readonly string[], keywords: readonly string[]): (text: string) => boolean {
    const longestFirst = [...literals].sort((a, b) => b.length - a.length)
    const keywordTests = keywords.map((k) => ({
      exact: k,
      any: new RegExp(k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"),
    }))
    return (text) => {
      for (const literal of longestFirst) if (!text.includes(literal)) return false
      // The exact spelling is by far the most common; the case-insensitive test runs only when it is absent.
      for (const test of keywordTests) if (!text.includes(test.exact) && !test.any.test(text)) return false
      return true
    }
  }

  type Range = ReturnType<SgNode["range"]>
  const COMMENT = /comment/

  /**
   * Where a match is, as the ast-grep CLI 0.51.1 reports it: the node's range, except that comments the grammar
   * hangs at the end of the node on lines after its code (and the blank lines before them) are left out. Some
   * grammars' automatic-semicolon scanners read past newlines and comments before they end a statement, so those
   * comments become the node's last children: `@ast-grep/lang-kotlin` 0.0.7 ends an `import_header` after the
   * comments and KDoc that follow the last import, where the CLI's Kotlin grammar mostly ends it with the import
   * line (a comment on the import's own line stays in, as in the CLI). Replacing that range deleted the comments. A
   * node whose last child is code keeps its range, trailing whitespace included (Scala's indented blocks end after
   * the next line's indentation in both), and so do a node whose comments all lie on its code's last line (C's
   * `#include <a.h> // why` ends after its newline, as in the CLI) and a comment node itself.
   *
   * @example
   * // Kotlin "import c.D\n\n// note\nclass T": the import_header node ends after "// note"
   * AstMatch.range(node).end // { line: 0, column: 10, index: 10 }
   */
  export function range(node: SgNode): Range {
    const whole = node.range()
    if (whole.start.line === whole.end.line || COMMENT.test(String(node.kind()))) return whole
    const kids = node.children()
    let last = kids.length - 1
    if (last < 1 || !COMMENT.test(String(kids[last].kind()))) return whole
    while (last >= 0 && COMMENT.test(String(kids[last].kind()))) last--
    if (last < 0) return whole
    let end = kids[last].range().end
    // Only comments on later lines are left out: with its comments all on the code's last line the node keeps its
    // range, as in the CLI, whose C `preproc_include` also ends after the newline when a comment ends the line
    // (`#include <string.h> // for memset`; real-world tester AT-3).
    if (!kids.slice(last + 1).some((kid) => kid.range().start.line > end.line)) return whole
    for (let i = last + 1; i < kids.length; i++) {
      const next = kids[i].range()
      if (next.start.line !== end.line) break
      end = next.end
    }
    return { start: whole.start, end }
  }

  /**
   * The part of a match a replace rewrites: `range(node)` without the line break that ends it. C and C++
   * preprocessor directives (`preproc_include`, `preproc_def`, …) end after their newline; the CLI 0.51.1 replaces
   * it too, so a template without one joins the next line to it: `#include $X` → `#include $X // ok` comments out
   * the include after it. The line break stays, as every other statement's does.
   *
   * @example
   * // C "#include <a.h>\nint x;": the preproc_include ends at { line: 1, column: 0 }
   * AstMatch.replaced(node, source).end // { line: 0, column: 14, index: 14 }
   */
  export function replaced(node: SgNode, source: string): Range {
    const whole = range(node)
    const { start, end } = whole
    if (end.column !== 0 || end.index <= start.index || source[end.index - 1] !== "\n") return whole
    const cut = source[end.index - 2] === "\r" && end.index - 2 >= start.index ? 2 : 1
    const index = end.index - cut
    const lineStart = source.lastIndexOf("\n", index - 1) + 1
    return { start, end: { line: end.line - 1, column: index - lineStart, index } }
  }

  type Lines = { from: number; to: number }
  let segmentLines: ((text: string, pairs: readonly SecuritySegments.Pair[]) => Lines[]) | undefined

  /**
   * Counts the matches of `job.pattern` in each of `job.files` (never throws for a file: an unreadable one is
   * reported as `UNREADABLE`).
   *
   * @example
   * const { counts } = await AstMatch.files({ ...job, files: ["/r/a.ts", "/r/b.bin"] }) // [3, AstMatch.UNREADABLE]
   */
  export async function files(job: Job): Promise<Done> {
    const mayMatch = job.literals.length || job.keywords.length ? tester(job.literals, job.keywords) : undefined
    if (job.hidden.length && !segmentLines)
      segmentLines = (await import("../security/output")).SecurityOutput.lineRanges
    const counts: number[] = []
    const positions: number[] = []
    let parsed = 0
    for (let index = 0; index < job.files.length; index++) {
      let bytes: Buffer
      try {
        bytes = readFileSync(job.files[index])
      } catch {
        counts.push(UNREADABLE)
        continue
      }
      // UTF-8 as is; UTF-16 with its byte-order mark decoded and any other text read as Latin-1, only to tell whether
      // to name it (read "utf8", its accented letters would be U+FFFD); NUL bytes otherwise: binary.
      const reading = Encoding.read(bytes)
      if (!reading) {
        counts.push(UNREADABLE)
        continue
      }
      const { text, utf8 } = reading
      if (mayMatch && !mayMatch(text)) {
        counts.push(SKIPPED)
        continue
      }
      // An HTML file searched for the code of its <script>/<style> elements: the rest masked, positions unchanged.
      const source = job.embed && AstEmbed.isHost(job.files[index]) ? AstEmbed.mask(text, job.embed) : text
      if (source === undefined) {
        counts.push(0)
        continue
      }
      parsed += text.length
      let found = parse(job.lang, source).root().findAll(job.pattern)
      // Matches inside lines a protected segment hides are dropped before they are counted: a count is an answer too.
      // So is naming a file that is not UTF-8 (its segments are found on its Latin-1 reading, whose lines are its own).
      const hidden = found.length && job.hidden.length ? segmentLines!(text, job.hidden) : []
      if (hidden.length) {
        found = found.filter((node) => {
          const { start, end } = range(node)
          return !hidden.some((r) => start.line + 1 <= r.to && end.line + 1 >= r.from)
        })
      }
      if (!utf8) {
        counts.push(found.length ? NOT_UTF8 : 0)
        continue
      }
      counts.push(found.length)
      if (job.positions)
        for (const node of found) {
          const { start, end } = range(node)
          positions.push(index, start.line, start.column, end.line, end.column)
        }
    }
    return { counts, positions, parsed }
  }
}
