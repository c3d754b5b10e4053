import { Encoding } from "../util/encoding"
import fs from "fs/promises"
import path from "path"
import type { AstReplace } from "./replace"
import { AstRewrite } from "./rewrite"
import type { AstSearch } from "./search"
import type { SecuritySegments } from "../security/segments"

// Loaded when first needed: a search without protected segments never needs them, and a process that only searches
// (the search command, cli.ts) starts without them. Bun's own require, which `bun build` follows: a compiled binary
// carries them (createRequire's it does not).
const diff = () => require("diff") as typeof import("diff")
const mask = (text: string, pairs: readonly SecuritySegments.Pair[]) =>
  (require("../security/output") as typeof import("../security/output")).SecurityOutput.mask(text, pairs)

/**
 * The text the AST tools return to the model. Paths are relative to the project directory. Both results start
 * with a one-line summary; when anything was left out (caps, timeout, protected or oversized files) a line starting
 * with `[TRUNCATED]` or `[NOTE]` says what and how to see the rest.
 *
 * Search lines follow grep's convention: `line:column: text` for the first line of a match, `line: text` for its
 * other lines, `line- text` for context, `--` between separate groups.
 *
 * @example
 * await AstFormat.search(result, { directory: "/repo", context: 0 })
 * // "Found 2 matches in 1 file (typescript, pattern `console.log($$$A)`, 40 files searched).\n\nsrc/a.ts\n3:1: console.log(x)\n…"
 */
export namespace AstFormat {
  export const LIMITS = {
    /** Files shown with their matches (the PRD's 100-file cap). */
    files: 100,
    /** Matches shown in all. */
    matches: 500,
    /** Lines shown of one multi-line match. */
    linesPerMatch: 20,
    /** Characters shown of one line. */
    lineChars: 500,
    /** Diff lines shown per file by a replace. */
    diffLinesPerFile: 400,
  }

  const quote = (code: string) => (code.includes("\n") || code.includes("`") ? JSON.stringify(code) : `\`${code}\``)

  type Read = (file: string) => Promise<string>
  const readFile: Read = (file) => fs.readFile(file, "utf8")

  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : word.endsWith("h") ? "es" : "s"}`
  const clip = (line: string) =>
    line.length > LIMITS.lineChars
      ? line.slice(0, LIMITS.lineChars) + ` … (+${line.length - LIMITS.lineChars} chars)`
      : line

  function notes(
    result: Pick<
      AstSearch.Result,
      "denied" | "tooLarge" | "unreadable" | "notUtf8" | "encodings" | "timedOut" | "aborted" | "warning" | "note"
    >,
    rel: (f: string) => string,
  ): string[] {
    const out: string[] = []
    if (result.timedOut)
      out.push("[TRUNCATED] The search hit its 60 s time limit: results are partial. Narrow it with paths or globs.")
    if (result.aborted) out.push("[TRUNCATED] The search was aborted: results are partial.")
    if (result.warning) out.push(`[NOTE] Pattern: ${result.warning}.`)
    if (result.note) out.push(`[NOTE] Pattern: ${result.note}.`)
    const list = (files: string[]) =>
      files.slice(0, 5).map(rel).join(", ") + (files.length > 5 ? `, … (${files.length - 5} more)` : "")
    if (result.denied.length)
      out.push(`[NOTE] ${plural(result.denied.length, "file")} not searched: protected by the security policy.`)
    if (result.tooLarge.length)
      out.push(`[NOTE] ${plural(result.tooLarge.length, "file")} over 5 MB not searched: ${list(result.tooLarge)}.`)
    if (result.unreadable.length)
      out.push(`[NOTE] ${plural(result.unreadable.length, "file")} unreadable or binary: ${list(result.unreadable)}.`)
    if (result.notUtf8.length) {
      // A file that names its encoding gets that name: converting Shift-JIS "from Latin-1" would garble it for good.
      const named = result.notUtf8.map((f) => result.encodings?.[f])
      const encoding = named.every((e) => e && e === named[0]) ? named[0] : undefined
      const files = result.notUtf8
        .slice(0, 5)
        .map((f) => (named[result.notUtf8.indexOf(f)] ? `${rel(f)} (${result.encodings![f]})` : rel(f)))
      const more = result.notUtf8.length > 5 ? `, … (${result.notUtf8.length - 5} more)` : ""
      out.push(
        `[WARNING] The pattern matches in ${plural(result.notUtf8.length, "file")} that ${result.notUtf8.length === 1 ? "is" : "are"} ` +
          `not UTF-8 text (UTF-16, Latin-1 or another encoding), not searched nor rewritten (the ast-grep CLI skips ` +
          `them too), their matches not counted: ${files.join(", ")}${more}. Convert them to UTF-8 ` +
          `(${Encoding.advice(encoding)}) to search and replace in them.`,
      )
    }
    return out
  }

  /**
   * The text of an `ast_grep_search` result, at most `LIMITS.files` files and `LIMITS.matches` matches.
   *
   * @example
   * const text = await AstFormat.search(result, { directory: "/repo", context: 2 })
   */
  export async function search(
    result: AstSearch.Result,
    options: { directory: string; context?: number; read?: Read; hidden?: SecuritySegments.Pair[] },
  ): Promise<string> {
    const rel = (file: string) => path.relative(options.directory, file) || path.basename(file)
    const read = options.read ?? readFile
    // Lines inside protected segments this role may not read are shown as a redaction, context lines included.
    const shown = (text: string) => (options.hidden?.length ? mask(text, options.hidden) : text)
    const context = Math.max(0, options.context ?? 0)
    const header =
      result.totalMatches === 0
        ? `No matches (${result.lang}, pattern ${quote(result.pattern)}, ${plural(result.filesSearched, "file")} searched).`
        : `Found ${plural(result.totalMatches, "match")} in ${plural(result.filesWithMatches, "file")} ` +
          `(${result.lang}, pattern ${quote(result.pattern)}, ${plural(result.filesSearched, "file")} searched).`
    const lines: string[] = [header]

    const byFile = new Map<string, AstSearch.Match[]>()
    for (const match of result.matches) {
      const list = byFile.get(match.file)
      if (list) list.push(match)
      else byFile.set(match.file, [match])
    }
    const shownFiles = [...byFile.keys()].slice(0, LIMITS.files)
    let budget = LIMITS.matches
    const blocks: string[] = []
    let shownMatches = 0
    for (const file of shownFiles) {
      if (budget <= 0) break
      const matches = byFile.get(file)!.slice(0, budget)
      budget -= matches.length
      shownMatches += matches.length
      let text: string
      try {
        text = await read(file)
      } catch {
        blocks.push(`${rel(file)}\n(the file could not be read again to show its matches)`)
        continue
      }
      const lines = text.split("\n")
      const visible = options.hidden?.length ? shown(text).split("\n") : lines
      // A file ending in a newline has no line after it: `split` gives an empty last element, which is not a line.
      const count = text.endsWith("\n") ? lines.length - 1 : lines.length
      blocks.push([rel(file), ...render(visible, lines, matches, context, count)].join("\n"))
    }
    const omittedMatches = result.totalMatches - shownMatches
    if (omittedMatches > 0) {
      lines.push(
        `[TRUNCATED] Showing the first ${plural(shownMatches, "match")} in ${plural(blocks.length, "file")}; ` +
          `${plural(omittedMatches, "more match")} in ${plural(Math.max(0, result.filesWithMatches - blocks.length), "more file")} ` +
          `not shown (caps: ${LIMITS.files} files, ${LIMITS.matches} matches). Narrow the search with paths or globs.`,
      )
    }
    lines.push(...notes(result, rel))
    if (blocks.length) lines.push("", blocks.join("\n\n"))
    return lines.join("\n")
  }

  type Row = { kind: "match" | "context"; columns: number[]; more?: number }

  /**
   * The column the ast-grep CLI prints for a UTF-16 `column` of `line`: characters (code points) before it, plus 1.
   *
   * @example
   * AstFormat.column('const s = "😀"; f()', 16) // 16: the emoji is two UTF-16 units but one character
   */
  export function column(line: string, utf16: number): number {
    const before = line.slice(0, utf16)
    if (!/[\uD800-\uDFFF]/.test(before)) return utf16 + 1
    let chars = 0
    for (const _ of before) chars++
    return chars + 1
  }

  /**
   * `source`: the lines shown (protected ones masked); `original`: the file's lines, which positions refer to;
   * `count`: how many lines the file has.
   */
  function render(
    source: string[],
    original: string[],
    matches: AstSearch.Match[],
    context: number,
    count: number,
  ): string[] {
    const rows = new Map<number, Row>()
    const mark = (line: number, kind: Row["kind"]) => {
      // A match may end at the very end of the file (its last line is then `count`); context never goes past it.
      if (line < 0 || line >= source.length || (kind === "context" && line >= count)) return undefined
      const row = rows.get(line)
      if (!row) {
        const created: Row = { kind, columns: [] }
        rows.set(line, created)
        return created
      }
      if (kind === "match") row.kind = "match"
      return row
    }
    for (const match of matches) {
      const first = match.start.line
      const last = Math.min(match.end.line, first + LIMITS.linesPerMatch - 1)
      for (let l = first; l <= last; l++) mark(l, "match")
      rows.get(first)?.columns.push(column(original[first] ?? "", match.start.column))
      if (match.end.line > last) {
        const row = rows.get(last)
        if (row) row.more = Math.max(row.more ?? 0, match.end.line - last)
      }
      for (let l = first - context; l < first; l++) mark(l, "context")
      for (let l = match.end.line + 1; l <= match.end.line + context; l++) mark(l, "context")
    }
    const out: string[] = []
    let previous = -1
    for (const line of [...rows.keys()].sort((a, b) => a - b)) {
      const row = rows.get(line)!
      if (context > 0 && previous >= 0 && line > previous + 1) out.push("--")
      const text = clip(source[line] ?? "")
      if (row.kind === "context") out.push(`${line + 1}- ${text}`)
      else if (row.columns.length) out.push(`${line + 1}:${row.columns.join(",")}: ${text}`)
      else out.push(`${line + 1}: ${text}`)
      if (row.more) out.push(`   … (${row.more} more lines of this match not shown)`)
      previous = line
    }
    return out
  }

  /**
   * The text of an `ast_grep_replace` result: a summary, notes, and a unified diff per changed file.
   *
   * @example
   * AstFormat.replace(result, { directory: "/repo" }) // "Dry run: would replace 3 matches in 2 files …"
   */
  export function replace(
    result: AstReplace.Result,
    options: { directory: string; hidden?: SecuritySegments.Pair[] },
  ): string {
    const visible = (text: string) => (options.hidden?.length ? mask(text, options.hidden) : text)
    const rel = (file: string) => path.relative(options.directory, file) || path.basename(file)
    const changed = result.files.length
    const verb = result.dryRun ? "Dry run: would replace" : result.written ? "Replaced" : "Would replace"
    const skipped = result.skipped ?? []
    const header =
      result.totalReplacements === 0 && skipped.length
        ? `Nothing replaced: ${plural(skipped.length, "match")} found (${result.lang}, pattern ${quote(result.pattern)}), ` +
          `none rewritten (see below).`
        : result.totalReplacements === 0
          ? `No matches${result.notUtf8.length ? " in UTF-8 files" : ""} (${result.lang}, pattern ${quote(result.pattern)}, ${plural(result.filesSearched, "file")} searched). Nothing to replace.`
          : `${verb} ${plural(result.totalReplacements, "match")} in ${plural(changed, "file")} ` +
            `(${result.lang}, pattern ${quote(result.pattern)} → ${quote(result.rewrite)}).` +
            (result.dryRun ? " No file was written; call again with dryRun: false to apply." : "")
    const lines = [header]
    if (result.uncaptured.length) {
      const captured = result.captured ?? AstRewrite.capturedNames(result.pattern)
      lines.push(
        `[WARNING] The rewrite names ${result.uncaptured.join(", ")}, which the pattern does not capture ` +
          `(${captured.length ? `it captures ${captured.join(", ")}` : "it captures nothing"}): each is replaced by ` +
          `nothing below, and a live run (dryRun: false) is refused. ${AstRewrite.UNCAPTURED_HELP}`,
      )
    }
    const where = (list: AstReplace.Skipped[]) =>
      list
        .slice(0, 10)
        .map((s) => `${rel(s.file)}:${s.line}:${s.column}`)
        .join(", ") + (list.length > 10 ? `, … (${list.length - 10} more)` : "")
    const unparsed = skipped.filter((s) => s.reason === "unparsed")
    if (unparsed.length)
      lines.push(
        `[WARNING] ${plural(unparsed.length, "match")} not rewritten: the ${result.lang} grammar could not read the ` +
          `code ${unparsed.length === 1 ? "it touches" : "they touch"} (ERROR or MISSING nodes: syntax it does not ` +
          `know, or a parse error), so the match is its guess and a rewrite could delete or split code the pattern ` +
          `does not name. Check and edit ${unparsed.length === 1 ? "it" : "them"} by hand: ${where(unparsed)}.`,
      )
    const copied = result.copied ?? []
    if (copied.length)
      lines.push(
        `[NOTE] ${plural(copied.length, "rewritten match")} ${copied.length === 1 ? "holds" : "hold"} code the ` +
          `${result.lang} grammar could not read, inside what the pattern captured: copied as it was; check the ` +
          `diff there: ${where(copied)}.`,
      )
    const breaks = skipped.filter((s) => s.reason === "breaks")
    if (breaks.length)
      lines.push(
        `[WARNING] ${plural(breaks.length, "match")} not rewritten: the file rewritten there would parse worse ` +
          `than before (new ERROR or MISSING nodes in the ${result.lang} grammar): the rewrite does not fit the code ` +
          `it replaces there, or writes syntax this grammar does not know. Check and edit ` +
          `${breaks.length === 1 ? "it" : "them"} by hand: ${where(breaks)}.`,
      )
    if (changed > LIMITS.files)
      lines.push(`[TRUNCATED] Showing the diffs of the first ${LIMITS.files} of ${changed} files.`)
    if (result.unchanged.length)
      lines.push(
        `[NOTE] In ${plural(result.unchanged.length, "file")} the rewrite reproduces the matched text exactly.`,
      )
    if (result.writeDenied.length)
      lines.push(
        `[NOTE] The security policy denies writing ${result.writeDenied.map((d) => rel(d.file)).join(", ")}: ` +
          "a live run would be refused; exclude them with globs.",
      )
    lines.push(...notes(result, rel))
    if (result.notUtf8.length && result.dryRun)
      lines.push(
        '[NOTE] A live run (dryRun: false) is refused while the pattern matches in a file that is not UTF-8; exclude it with globs (e.g. "!path/to/file") or convert it.',
      )
    const diffs: string[] = []
    for (const change of result.files.slice(0, LIMITS.files)) {
      const name = rel(change.file)
      const patch = diff().structuredPatch(name, name, visible(change.before), visible(change.after), "", "", {
        context: 1,
      })
      const body: string[] = [`--- ${name}`, `+++ ${name}`]
      for (const hunk of patch.hunks) {
        body.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`)
        body.push(...hunk.lines.map(clip))
      }
      const shown = body.slice(0, LIMITS.diffLinesPerFile + 2)
      if (body.length > shown.length) shown.push(`… (${body.length - shown.length} more diff lines for this file)`)
      diffs.push(`${name} (${plural(change.replacements, "replacement")})\n${shown.join("\n")}`)
    }
    if (diffs.length) lines.push("", diffs.join("\n\n"))
    return lines.join("\n")
  }
}
