import { parse, parseAsync, type SgNode } from "@ast-grep/napi"
import z from "zod"
import { Encoding } from "../util/encoding"
import { NamedError } from "../util/error"
import { splice, type Splice } from "../util/splice"
import { AstEmbed } from "./embed"
import { AstLanguage } from "./languages"
import { AstMatch } from "./match"
import { AstRewrite } from "./rewrite"
import { AstScan } from "./scan"
import { AstUnparsed } from "./unparsed"
import { AtomicWrite } from "./write"
import { SecuritySegments } from "../security/segments"

/**
 * `ast_grep_replace`'s engine. Each file that may match is parsed in-process, every non-overlapping match (outermost
 * first, as the CLI does) is replaced by the rewrite template with its meta-variables filled in (rewrite.ts), and
 * the new content is computed in memory.
 *
 * Dry run (the default) writes nothing. Live mode writes all changed files or none (write.ts): it refuses, before
 * writing anything, when the search timed out or was aborted, when the security policy denies writing one of the
 * files, or when more than `maxFiles` files would change.
 *
 * @example
 * const result = await AstReplace.run(
 *   { directory: "/repo", lang: "typescript", pattern: "console.log($$$A)" },
 *   { rewrite: "logger.info($$$A)", dryRun: true },
 * )
 * result.files[0] // { file: "/repo/a.ts", replacements: 2, before: "…", after: "…" }
 */
export namespace AstReplace {
  export type FileChange = { file: string; replacements: number; before: string; after: string }

  /**
   * A match left as it is: `unparsed`, it touches code the grammar could not read (an ERROR or MISSING node, see
   * unparsed.ts); `breaks`, the file rewritten there parses worse than before (new ERROR or MISSING nodes).
   * `line` and `column` are 1-based, the column in characters (code points), as the search prints them.
   */
  export type Skipped = { file: string; line: number; column: number; reason: "unparsed" | "breaks" }

  export type Options = {
    rewrite: string
    dryRun: boolean
    timeoutMs?: number
    /** Most files a live replace may change at once (default 1000). */
    maxFiles?: number
    /** Called once, before a live replace writes; throwing (e.g. a permission refused) writes nothing. */
    beforeWrite?: (files: FileChange[]) => Promise<void>
  }

  export type Result = {
    lang: string
    pattern: string
    rewrite: string
    dryRun: boolean
    warning?: string
    note?: string
    /** Meta-variables of the rewrite the pattern does not capture (a dry run shows them; a live run is refused). */
    uncaptured: string[]
    /** The pattern's capturing meta-variables as ast-grep reads them (`$A`, `$$$ARGS`). */
    captured?: string[]
    /** Files whose content changes, sorted by path. */
    files: FileChange[]
    totalReplacements: number
    /** Files with matches where the rewrite reproduces the same text. */
    unchanged: string[]
    /** Matches not rewritten because the parser could not read the code around them (the others are). */
    skipped: Skipped[]
    /** Rewritten matches holding code the parser could not read only inside their captures, copied as it was. */
    copied: Skipped[]
    filesSearched: number
    denied: string[]
    /** Files the policy lets us read but not write (dry run lists them; live mode refuses). */
    writeDenied: { file: string; reason: string }[]
    tooLarge: string[]
    unreadable: string[]
    /**
     * Files that are not valid UTF-8 (Latin-1 or another legacy encoding) where the pattern matches (on their Latin-1
     * reading): never rewritten, since writing them back as UTF-8 would lose their text; a live run is refused.
     */
    notUtf8: string[]
    /** The encoding each of `notUtf8` shows or names for itself (a UTF-16 byte-order mark, a `coding:` line, …). */
    encodings?: Record<string, string>
    timedOut: boolean
    aborted: boolean
    written: boolean
    elapsedMs: number
  }

  export const MAX_FILES = 1000

  // The file's own text with the replacements spliced in (`splice`), not napi's `commitEdits`, which rebuilds the text
  // without a leading byte order mark: every rewritten file would lose it (the CLI keeps it). Everything outside the
  // matches, BOM and line endings included, stays byte for byte.

  export const Refused = NamedError.create(
    "ReplaceRefused",
    z.object({ reason: z.string() }),
    (d) => `nothing was written: ${d.reason}`,
  )

  export const NotUtf8 = NamedError.create(
    "ReplaceNotUtf8",
    z.object({ files: z.array(z.string()), encodings: z.record(z.string(), z.string()).optional() }),
    (d) => {
      const one = d.files.length === 1
      const named = d.files.map((f) => d.encodings?.[f])
      // The file's own encoding when every file names the same one; a guess (Latin-1) would garble Shift-JIS for good.
      const encoding = named.every((e) => e && e === named[0]) ? named[0] : undefined
      return (
        `nothing was written: the pattern matches in ${one ? "a file" : `${d.files.length} files`} ` +
        `that ${one ? "is" : "are"} not UTF-8 text (UTF-16, Latin-1 or another encoding): ` +
        `${d.files.map((f) => (d.encodings?.[f] ? `${f} (${d.encodings[f]})` : f)).join(", ")}. Writing ` +
        `${one ? "it" : "them"} back as UTF-8 would change every character that is not ASCII (the ast-grep CLI skips ` +
        `such files). Convert ${one ? "it" : "them"} to UTF-8 first (${Encoding.advice(encoding)}), or exclude ` +
        `${one ? "it" : "them"} with globs (e.g. "!path/to/file") and run again`
      )
    },
  )

  export const Uncaptured = NamedError.create(
    "RewriteNotCaptured",
    z.object({
      pattern: z.string(),
      rewrite: z.string(),
      uncaptured: z.array(z.string()),
      captured: z.array(z.string()),
    }),
    (d) =>
      `nothing was written: the rewrite names ${d.uncaptured.join(", ")}, which the pattern ${JSON.stringify(d.pattern)} ` +
      `does not capture (${d.captured.length ? `it captures ${d.captured.join(", ")}` : "it captures nothing"}); ` +
      `each would be replaced by nothing, deleting the code it stands for. ${AstRewrite.UNCAPTURED_HELP}`,
  )

  /**
   * Rewrites every match of the pattern; writes only when `dryRun` is false (all files or none).
   *
   * @example
   * await AstReplace.run({ directory: "/repo", lang: "go", pattern: "errors.New($M)" }, { rewrite: "fmt.Errorf($M)", dryRun: false })
   */
  export async function run(input: AstScan.Input, options: Options): Promise<Result> {
    const started = performance.now()
    // A rewrite naming what the pattern never captures would delete the code it stands for: a live run is refused
    // before anything is read, a dry run shows it. What captures is what ast-grep reads as a meta-variable in the
    // parsed pattern (`$HOME` inside a longer string is text it never captures).
    const reading = { napiLang: await AstLanguage.load(input.lang, input.log), expando: "$" }
    if (AstLanguage.isName(input.lang)) reading.expando = AstLanguage.expando(input.lang)
    const uncaptured = AstRewrite.uncaptured(options.rewrite, input.pattern, reading)
    const captured = AstRewrite.capturedNames(input.pattern, reading)
    if (!options.dryRun && uncaptured.length)
      throw new Uncaptured({ pattern: input.pattern, rewrite: options.rewrite, uncaptured, captured })
    const deadline = AstScan.deadline(options.timeoutMs ?? 60_000)
    const signal = input.signal ? AbortSignal.any([input.signal, deadline]) : deadline
    const scan = await AstScan.prepare({ ...input, signal })
    const filtered = await AstScan.filter(scan, { keepText: true })

    const files: FileChange[] = []
    const unchanged: string[] = []
    const notUtf8: string[] = []
    const encodings: Record<string, string> = {}
    const skipped: Skipped[] = []
    const copied: Skipped[] = []
    const captures = AstRewrite.captures(input.pattern, reading)
    let total = 0
    const hidden = input.segments?.().read ?? []
    for (const candidate of filtered.candidates) {
      if (signal.aborted) break
      const before = candidate.text!
      // In an HTML file, the code of its <script>/<style> elements (`AstEmbed`): the rest masked, positions unchanged,
      // so the edits below splice the file itself.
      const embed = AstEmbed.spec(scan.lang)
      const source = embed && AstEmbed.isHost(candidate.file) ? AstEmbed.mask(before, embed) : before
      if (source === undefined) continue
      const root = (await parseAsync(scan.napiLang, source)).root()
      const found = root.findAll(scan.pattern.matcher)
      if (!found.length) continue
      // A match touching a segment this role may not read is neither rewritten nor counted, as the search neither
      // shows nor counts it: its captures would carry the segment's text out of the markers that protect it.
      const segments = hidden.length ? SecuritySegments.find(before, hidden) : []
      // Outermost first; a match inside one already replaced is skipped.
      const ordered = found
        .map((node) => ({ node, range: AstMatch.replaced(node, before) }))
        .filter(({ range }) => !segments.some((s) => range.start.index <= s.end && range.end.index >= s.start))
        .sort((a, b) => a.range.start.index - b.range.start.index || b.range.end.index - a.range.end.index)
      if (!ordered.length) continue
      // Listed (and refused in a live run) only for a match outside those segments, or the refusal would answer
      // whether a hidden segment matches. A file that is not UTF-8 is read as Latin-1 here: its segments are its own.
      if (candidate.notUtf8) {
        notUtf8.push(candidate.file)
        if (candidate.encoding) encodings[candidate.file] = candidate.encoding
        continue
      }
      // A match touching code the grammar could not read is the parser's guess: rewriting it may delete or split
      // code the pattern does not name. It is left as it is and named; the file's other matches are rewritten.
      const unparsed = AstUnparsed.spans(root)
      const at = (index: number, reason: Skipped["reason"]): Skipped => {
        const lineStart = before.lastIndexOf("\n", index - 1) + 1
        const column = [...before.slice(lineStart, index)].length + 1
        return { file: candidate.file, line: before.slice(0, lineStart).split("\n").length, column, reason }
      }
      const edits: Splice[] = []
      const carried = new Set<number>()
      let end = -1
      for (const { node, range } of ordered) {
        if (range.start.index < end) continue
        const problems = AstUnparsed.touchingAll(unparsed, range.start.index, range.end.index)
        if (problems.length) {
          // Inside a capture, such code is copied as it was: the match is rewritten, and named. Anywhere else (the
          // pattern's own tokens, a capture's edge) the match's shape is the parser's guess: it is left.
          const spans = captureSpans(node, captures)
          const inside = problems.every((p) => spans.some(([a, b]) => a < p.start && p.end < b))
          if (!inside) {
            skipped.push(at(range.start.index, "unparsed"))
            continue
          }
          carried.add(range.start.index)
        }
        end = range.end.index
        const text = AstRewrite.apply(options.rewrite, node, before)
        edits.push({ start: range.start.index, end, text })
      }
      const host = embed && AstEmbed.isHost(candidate.file) ? embed : undefined
      const kept = parsesNoWorse(before, edits, unparsed.length, scan.napiLang, host)
      for (const edit of edits) {
        if (!kept.includes(edit)) skipped.push(at(edit.start, "breaks"))
        else if (carried.has(edit.start)) copied.push(at(edit.start, "unparsed"))
      }
      if (!kept.length) continue
      const after = splice(before, kept)
      total += kept.length
      if (after === before) unchanged.push(candidate.file)
      else files.push({ file: candidate.file, replacements: kept.length, before, after })
    }

    const writeDenied: Result["writeDenied"] = []
    const guarded = { read: hidden, write: input.segments?.().write ?? [] }
    for (const change of files) {
      const reason =
        (await input.access?.(change.file, "write")) ?? SecuritySegments.guarded(change.before, change.after, guarded)
      if (reason) writeDenied.push({ file: change.file, reason })
    }

    const interrupted = signal.aborted
    const result: Result = {
      lang: scan.lang,
      pattern: input.pattern,
      rewrite: options.rewrite,
      dryRun: options.dryRun,
      // As the CLI: the ERROR-node note only when nothing matched (a pattern with one may still match, see pattern.ts),
      // and only when files were searched (with none, the pattern is not why nothing matched).
      warning: total === 0 && scan.files.files.length > 0 ? scan.pattern.warning : undefined,
      note: scan.pattern.note,
      uncaptured,
      captured,
      files,
      totalReplacements: total,
      unchanged,
      skipped,
      copied,
      filesSearched: scan.files.files.length,
      denied: scan.files.denied,
      writeDenied,
      tooLarge: scan.files.tooLarge,
      unreadable: filtered.unreadable,
      notUtf8,
      ...(Object.keys(encodings).length ? { encodings } : {}),
      timedOut: interrupted && deadline.aborted,
      aborted: interrupted && !deadline.aborted,
      written: false,
      elapsedMs: 0,
    }
    if (!options.dryRun) {
      if (result.timedOut) throw new Refused({ reason: "the search timed out before every file was processed" })
      if (result.aborted) throw new Refused({ reason: "the replace was aborted" })
    }
    // A file the replace would change but cannot write without loss refuses the whole run, before anything is
    // written: a rename across the tree that skipped one file would leave the project inconsistent.
    if (!options.dryRun && notUtf8.length)
      throw new NotUtf8({ files: notUtf8, ...(Object.keys(encodings).length ? { encodings } : {}) })
    if (!options.dryRun && files.length) {
      if (writeDenied.length) {
        throw new Refused({
          reason:
            `the security policy denies writing ${writeDenied.map((d) => d.file).join(", ")}; ` +
            'exclude them with globs (e.g. "!path/to/file") and run again',
        })
      }
      const limit = options.maxFiles ?? MAX_FILES
      if (files.length > limit) {
        throw new Refused({
          reason: `${files.length} files would change, more than the ${limit} a single replace may write; narrow it with paths or globs`,
        })
      }
      await options.beforeWrite?.(files)
      // Checked again: a command may have run while the user answered the permission prompt (a folder made a link).
      for (const change of files) {
        const reason = await input.access?.(change.file, "write")
        if (reason) throw new Refused({ reason: `the security policy denies writing ${change.file}: ${reason}` })
      }
      await AtomicWrite.all(files.map(({ file, before, after }) => ({ file, before, after })))
      result.written = true
    }
    result.elapsedMs = performance.now() - started
    return result
  }

  /** [start, end) of what each capturing meta-variable of the pattern captured in `match`. */
  function captureSpans(match: SgNode, captures: { single: string[]; multi: string[] }): [number, number][] {
    const spans: [number, number][] = []
    for (const name of captures.single) {
      const node = match.getMatch(name)
      if (node) spans.push([node.range().start.index, node.range().end.index])
    }
    for (const name of captures.multi) {
      const nodes = match.getMultipleMatches(name)
      if (nodes.length) spans.push([nodes[0].range().start.index, nodes[nodes.length - 1].range().end.index])
    }
    return spans
  }

  /** Most edits of one file tried one by one when the file rewritten with all of them parses worse. */
  const ISOLATE = 300

  /**
   * The edits to keep so that the rewritten file parses no worse than `before` did (`problems` ERROR and MISSING
   * nodes): all of them when it does; else those whose replacement text touches none of the new problems, when the
   * file with only those does; else each edit is tried alone and those that alone parse no worse are kept, if
   * together they still do; else none. A template that does not complete the code it replaces (a `}` too many)
   * would otherwise be written as it is, reported as a success; and one edit a grammar cannot read must not cost
   * the file's other edits (moshi's `-JsonUtf8Reader.kt`: 1 of 54 `if` rewrites).
   */
  function parsesNoWorse<E extends Splice>(
    before: string,
    edits: E[],
    problems: number,
    napiLang: string,
    embed: AstEmbed.Spec | undefined,
  ): E[] {
    const spans = (edits: E[]) => {
      const text = splice(before, edits)
      const source = embed ? (AstEmbed.mask(text, embed) ?? "") : text
      return AstUnparsed.spans(parse(napiLang, source).root())
    }
    const worse = (edits: E[]) => spans(edits).length > problems
    if (!edits.length) return edits
    const after = spans(edits)
    if (after.length <= problems) return edits
    if (edits.length === 1) return []
    // Cheap first: leave out the edits whose replacement text holds or touches a new problem (where each lies in the
    // rewritten text: its start moved by the edits before it).
    let shift = 0
    const clear = edits.filter((edit) => {
      const start = edit.start + shift
      shift += edit.text.length - (edit.end - edit.start)
      return !AstUnparsed.touching(after, start, start + edit.text.length)
    })
    if (clear.length && clear.length < edits.length && !worse(clear)) return clear
    // The problem shows up away from the edit that causes it: try each alone.
    if (edits.length > ISOLATE) return []
    const good = edits.filter((edit) => !worse([edit]))
    return good.length && !worse(good) ? good : []
  }
}
