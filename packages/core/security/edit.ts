import { distance } from "fastest-levenshtein"
import z from "zod"
import { NamedError } from "../util/error"
import { SecurityPatch } from "./patch"

/**
 * OpenCode's `edit` tool (and 1.2.15's `multiedit`, which runs edits one after the other) replayed on a file's
 * current text, and the single check the guard runs before any write that could change a write-protected segment.
 *
 * What each version does with `{ oldString, newString, replaceAll }`:
 *
 * - Both refuse `oldString === newString`. An empty `oldString` makes 1.2.15 overwrite the whole file with
 *   `newString`; 1.18 refuses it for an existing file.
 * - 1.2.15 searches the raw text (BOM and CRLF included). 1.18 drops a BOM first (and puts it back), and when the
 *   file holds a CRLF it rewrites both strings to CRLF (after turning CRLF into LF).
 * - Both try nine strategies in turn, each yielding candidate strings: the exact text, line by line trimmed, a
 *   block anchored on its first and last lines (middle lines scored by Levenshtein similarity: 1.2.15 accepts a
 *   single candidate whatever its middle, several above 0.3; 1.18 needs 0.65 and a block within 25 % of the length),
 *   whitespace collapsed, indentation ignored, escape sequences decoded, the text trimmed, first/last-line context,
 *   every exact occurrence. A candidate is used at its FIRST occurrence in the file (`indexOf`), not where it was
 *   found: with `replaceAll` every occurrence is replaced (`String.prototype.replaceAll`, so `$&`, `` $` ``, `$'` in
 *   `newString` expand), otherwise only a candidate occurring exactly once. 1.18 gives up when a matched candidate
 *   spans far more lines or characters than `oldString`.
 * - The 1.18 core (V2) tool stack replaces exact text only (`replace`/`replaceAll`, `$` patterns expand).
 *
 * A candidate that is empty (a whitespace-only `oldString` matched against blank lines) combined with `replaceAll`
 * inserts `newString` between every two characters of the file.
 *
 * @example
 * SecurityEdit.touches("a\n// @locked-start\nk = 1\n// @locked-end\n", { kind: "edit", oldString: "k = 1", newString: "k = 2" }, [{ start: 2, end: 39 }])
 * // "edit: changes write-protected lines 2–4 (exact match) [OpenCode 1.2.15]"
 */
export namespace SecurityEdit {
  export const Version = SecurityPatch.Version
  export type Version = SecurityPatch.Version
  export const VERSIONS = SecurityPatch.VERSIONS

  export const Edit = z.object({ oldString: z.string(), newString: z.string(), replaceAll: z.boolean().optional() })
  export type Edit = z.infer<typeof Edit>

  export const Change = z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("write"), content: z.string() }),
    Edit.extend({ kind: z.literal("edit") }),
    z.object({ kind: z.literal("multiedit"), edits: z.array(Edit) }),
    z.object({
      kind: z.literal("patch"),
      file: SecurityPatch.File,
      /** Which path of a move the guard is checking: the file moved away (default) or the one overwritten. */
      side: z.enum(["source", "destination"]).optional(),
    }),
  ])
  export type Change = z.infer<typeof Change>

  /** A protected range of the current text; `closed: false` means it runs to the end of the file. */
  export const Range = z.object({ start: z.number(), end: z.number(), closed: z.boolean().optional() })
  export type Range = z.infer<typeof Range>

  export type Outcome =
    /** These exact replacements of the current text. */
    | { kind: "replace"; edits: SecurityPatch.Replacement[]; how: string }
    /** The file becomes `content`. */
    | { kind: "whole"; content: string }
    /** `insert` goes between every two characters (and at both ends) of the text after the BOM. */
    | { kind: "everywhere"; insert: string; how: string }
    /** OpenCode refuses the edit; the file stays as it is. */
    | { kind: "fail"; reason: string }
    /** Too costly to replay exactly. */
    | { kind: "unknown"; reason: string }

  /** Work past this many steps is not replayed (upstream would take as long); the guard then refuses. */
  export const BUDGET = 100_000_000

  /** Raised inside the replay when it would exceed {@link BUDGET}. */
  export const TooCostly = NamedError.create(
    "SecurityEditTooCostly",
    z.object({ what: z.string() }),
    (d) => `replaying ${d.what} would take too long`,
  )

  type Flavour = {
    /** What an empty oldString does to an existing file. */
    empty: "write" | "fail"
    /** Both strings are converted to the file's line ending (CRLF when it holds one). */
    crlf: boolean
    bom: SecurityPatch.BomRule
    /** The fuzzy strategies, or exact text only. */
    fuzzy?: { single: number; multi: number; window: boolean; proportion: boolean }
  }

  const FLAVOURS: Record<Version, Flavour> = {
    "1.2.15": {
      empty: "write",
      crlf: false,
      bom: undefined,
      fuzzy: { single: 0, multi: 0.3, window: false, proportion: false },
    },
    "1.18": {
      empty: "fail",
      crlf: true,
      bom: { read: 1, write: 2 },
      fuzzy: { single: 0.65, multi: 0.65, window: true, proportion: true },
    },
    "1.18-core": { empty: "fail", crlf: true, bom: { read: 1, write: 1 } },
  }

  class Budget {
    left = BUDGET
    spend(n: number, what: string) {
      this.left -= n
      if (this.left < 0) throw new TooCostly({ what })
    }
  }

  type Candidate = { search: string; how: string }
  type Strategy = (
    content: string,
    find: string,
    cfg: NonNullable<Flavour["fuzzy"]>,
    budget: Budget,
  ) => Iterable<Candidate>

  /** Line start offsets of `lines` (the pieces of a text split at `\n`). */
  function offsets(lines: readonly string[]): number[] {
    const out: number[] = []
    let at = 0
    for (const l of lines) (out.push(at), (at += l.length + 1))
    return out
  }

  /** The text of lines `[from, to]` inclusive, without the last newline. */
  const span = (content: string, lines: readonly string[], starts: readonly number[], from: number, to: number) =>
    content.slice(starts[from], starts[to] + lines[to].length)

  const dropFinalEmpty = (lines: string[]) => {
    if (lines[lines.length - 1] === "") lines.pop()
    return lines
  }

  const exactly: Strategy = function* (_content, find) {
    yield { search: find, how: "exact match" }
  }

  const trimmedLines: Strategy = function* (content, find, _cfg, budget) {
    const src = content.split("\n")
    const want = dropFinalEmpty(find.split("\n"))
    const starts = offsets(src)
    for (let i = 0; i + want.length <= src.length; i++) {
      let j = 0
      while (j < want.length && src[i + j].trim() === want[j].trim()) j++
      budget.spend(j + 1, "the line-trimmed match")
      if (j < want.length) continue
      yield {
        search: want.length ? span(content, src, starts, i, i + want.length - 1) : "",
        how: "match ignoring indentation and trailing spaces line by line",
      }
    }
  }

  function levenshtein(a: string, b: string, budget: Budget): number {
    if (!a.length || !b.length) return Math.max(a.length, b.length)
    budget.spend(a.length * b.length, "the block-anchor similarity")
    return distance(a, b)
  }

  const blockAnchor: Strategy = function* (content, find, cfg, budget) {
    const want = find.split("\n")
    if (want.length < 3) return
    dropFinalEmpty(want)
    const src = content.split("\n")
    const first = want[0].trim()
    const last = want[want.length - 1].trim()
    const size = want.length
    const slack = Math.max(1, Math.floor(size * 0.25))
    const found: { from: number; to: number }[] = []
    for (let i = 0; i < src.length; i++) {
      if (src[i].trim() !== first) continue
      for (let j = i + 2; j < src.length; j++) {
        budget.spend(1, "the block-anchor search")
        if (src[j].trim() !== last) continue
        if (!cfg.window || Math.abs(j - i + 1 - size) <= slack) found.push({ from: i, to: j })
        break
      }
    }
    if (!found.length) return
    const how = "block anchored on its first and last lines"
    const starts = offsets(src)
    const middle = (c: { from: number; to: number }) => {
      const actual = c.to - c.from + 1
      return { actual, count: Math.min(size - 2, actual - 2) }
    }
    const score = (c: { from: number; to: number }, j: number) => {
      const a = src[c.from + j].trim()
      const b = want[j].trim()
      const longest = Math.max(a.length, b.length)
      return longest === 0 ? undefined : 1 - levenshtein(a, b, budget) / longest
    }
    if (found.length === 1) {
      const [c] = found
      const { actual, count } = middle(c)
      let similarity = 0
      // A threshold of 0 accepts whatever the middle lines hold (each term is at least 0).
      if (count > 0 && cfg.single > 0) {
        for (let j = 1; j < size - 1 && j < actual - 1; j++) {
          const s = score(c, j)
          if (s === undefined) continue
          similarity += s / count
          if (similarity >= cfg.single) break
        }
      } else if (count <= 0) similarity = 1
      if (similarity >= cfg.single) yield { search: span(content, src, starts, c.from, c.to), how }
      return
    }
    let best: { from: number; to: number } | undefined
    let bestScore = -1
    for (const c of found) {
      const { actual, count } = middle(c)
      let similarity = 0
      if (count > 0) {
        for (let j = 1; j < size - 1 && j < actual - 1; j++) similarity += score(c, j) ?? 0
        similarity /= count
      } else similarity = 1
      if (similarity > bestScore) ((bestScore = similarity), (best = c))
    }
    if (best && bestScore >= cfg.multi) yield { search: span(content, src, starts, best.from, best.to), how }
  }

  const collapse = (s: string) => s.replace(/\s+/g, " ").trim()
  const SPACE = /\s/

  /** The first part of `line` that `collapse` turns into `want` (the leftmost, as a search would find it). */
  function uncollapse(line: string, want: string): string | undefined {
    if (!want) return ""
    let out = ""
    const at: number[] = []
    let i = 0
    while (i < line.length && SPACE.test(line[i])) i++
    while (i < line.length) {
      if (!SPACE.test(line[i])) {
        out += line[i]
        at.push(i++)
        continue
      }
      let j = i
      while (j < line.length && SPACE.test(line[j])) j++
      if (j < line.length) {
        out += " "
        at.push(i)
      }
      i = j
    }
    const k = out.indexOf(want)
    return k < 0 ? undefined : line.slice(at[k], at[k + want.length - 1] + 1)
  }

  const collapsedWhitespace: Strategy = function* (content, find, _cfg, budget) {
    const how = "match with runs of whitespace collapsed"
    const want = collapse(find)
    const src = content.split("\n")
    for (const line of src) {
      budget.spend(line.length + 1, "the whitespace-collapsed match")
      const have = collapse(line)
      if (have === want) yield { search: line, how }
      else if (have.includes(want)) {
        // The line's text that collapses to `want`, its runs of whitespace as written: mapped back from the
        // collapsed line (a pattern of the words joined by `\s+` retried every near-miss: O(line × words)).
        const found = uncollapse(line, want)
        if (found !== undefined) yield { search: found, how }
      }
    }
    const n = find.split("\n").length
    if (n <= 1) return
    const starts = offsets(src)
    for (let i = 0; i + n <= src.length; i++) {
      const block = span(content, src, starts, i, i + n - 1)
      budget.spend(block.length + 1, "the whitespace-collapsed match")
      if (collapse(block) === want) yield { search: block, how }
    }
  }

  function dedent(text: string): string {
    const lines = text.split("\n")
    let least = Infinity
    for (const l of lines) if (l.trim()) least = Math.min(least, /^\s*/.exec(l)![0].length)
    if (least === Infinity) return text
    return lines.map((l) => (l.trim() ? l.slice(least) : l)).join("\n")
  }

  const flexibleIndent: Strategy = function* (content, find, _cfg, budget) {
    const want = dedent(find)
    const lead = find.split("\n", 1)[0].trimStart()
    const src = content.split("\n")
    const starts = offsets(src)
    const n = find.split("\n").length
    for (let i = 0; i + n <= src.length; i++) {
      // Dedenting removes leading whitespace only, so the first lines must agree once it is gone.
      budget.spend(src[i].length + 1, "the indentation-flexible match")
      if (src[i].trimStart() !== lead) continue
      const block = span(content, src, starts, i, i + n - 1)
      budget.spend(block.length + 1, "the indentation-flexible match")
      if (dedent(block) === want) yield { search: block, how: "match ignoring common indentation" }
    }
  }

  const ESCAPES: Record<string, string> = {
    n: "\n",
    t: "\t",
    r: "\r",
    "'": "'",
    '"': '"',
    "`": "`",
    "\\": "\\",
    "\n": "\n",
    $: "$",
  }
  const unescape = (s: string) => s.replace(/\\([ntr'"`\\\n$])/g, (_, c: string) => ESCAPES[c])

  const decodedEscapes: Strategy = function* (content, find, _cfg, budget) {
    const how = "match with escape sequences decoded"
    const want = unescape(find)
    if (content.includes(want)) yield { search: want, how }
    const src = content.split("\n")
    const starts = offsets(src)
    const n = want.split("\n").length
    for (let i = 0; i + n <= src.length; i++) {
      const block = span(content, src, starts, i, i + n - 1)
      budget.spend(block.length + 1, "the escape-decoded match")
      if (unescape(block) === want) yield { search: block, how }
    }
  }

  const trimmedEnds: Strategy = function* (content, find, _cfg, budget) {
    const want = find.trim()
    if (want === find) return
    const how = "match of the trimmed text"
    if (content.includes(want)) yield { search: want, how }
    const src = content.split("\n")
    const starts = offsets(src)
    const n = find.split("\n").length
    for (let i = 0; i + n <= src.length; i++) {
      const block = span(content, src, starts, i, i + n - 1)
      budget.spend(block.length + 1, "the trimmed match")
      if (block.trim() === want) yield { search: block, how }
    }
  }

  const contextLines: Strategy = function* (content, find, _cfg, budget) {
    const want = find.split("\n")
    if (want.length < 3) return
    dropFinalEmpty(want)
    const src = content.split("\n")
    const first = want[0].trim()
    const last = want[want.length - 1].trim()
    for (let i = 0; i < src.length; i++) {
      if (src[i].trim() !== first) continue
      for (let j = i + 2; j < src.length; j++) {
        budget.spend(1, "the context match")
        if (src[j].trim() !== last) continue
        const block = src.slice(i, j + 1)
        if (block.length === want.length) {
          let same = 0
          let counted = 0
          for (let k = 1; k < block.length - 1; k++) {
            const a = block[k].trim()
            const b = want[k].trim()
            if (!a && !b) continue
            counted++
            if (a === b) same++
          }
          if (counted === 0 || same / counted >= 0.5) {
            yield { search: block.join("\n"), how: "block matched on its first and last lines and half its middle" }
          }
        }
        break
      }
    }
  }

  /**
   * In upstream order. The ninth upstream strategy (every exact occurrence) yields only `oldString` again, which the
   * first one already decided, so it is left out.
   */
  const STRATEGIES: Strategy[] = [
    exactly,
    trimmedLines,
    blockAnchor,
    collapsedWhitespace,
    flexibleIndent,
    decodedEscapes,
    trimmedEnds,
    contextLines,
  ]

  /** 1.18 gives up on a candidate much larger than `oldString`. */
  function outsized(search: string, old: string): boolean {
    const oldLines = old.split("\n").length
    if (search.split("\n").length >= Math.max(oldLines + 3, oldLines * 2)) return true
    if (oldLines === 1) return false
    return search.trim().length > Math.max(old.trim().length + 500, old.trim().length * 4)
  }

  /**
   * `String.prototype.replace` expansion of `$$`, `$&`, `` $` `` and `$'` for a string pattern (no groups).
   *
   * @example
   * SecurityEdit.expand("[$&|$`]", "abc", 1, "b") // "[b|a]"
   */
  export function expand(replacement: string, text: string, at: number, match: string): string {
    if (!replacement.includes("$")) return replacement
    return replacement.replace(/\$([$&`'])/g, (_, c: string) =>
      c === "$" ? "$" : c === "&" ? match : c === "`" ? text.slice(0, at) : text.slice(at + match.length),
    )
  }

  /** Every non-overlapping occurrence of a non-empty `search`, left to right. */
  function occurrences(text: string, search: string): number[] {
    const out: number[] = []
    for (let at = text.indexOf(search); at >= 0; at = text.indexOf(search, at + search.length)) out.push(at)
    return out
  }

  /** Replacements in the searched text (offset `lead` in the file) turned into the file's final replacements. */
  function finish(current: string, lead: number, edits: SecurityPatch.Replacement[], rule: SecurityPatch.BomRule) {
    const pieces: SecurityPatch.Piece[] = []
    let cursor = lead
    for (const e of edits) {
      pieces.push({ from: cursor, to: e.start + lead }, { text: e.insert })
      cursor = e.end + lead
    }
    pieces.push({ from: cursor, to: current.length })
    return SecurityPatch.replacements(current, SecurityPatch.withBom(current, lead, pieces, rule))
  }

  /**
   * What one version's `edit` makes of `current`.
   *
   * @example
   * SecurityEdit.outcome("a b\n", { oldString: "a  b", newString: "c" }, "1.2.15")
   * // { kind: "replace", edits: [{ start: 0, end: 3, insert: "c" }], how: "match with runs of whitespace collapsed" }
   */
  export function outcome(current: string, edit: Edit, version: Version): Outcome {
    const flavour = FLAVOURS[version]
    if (edit.oldString === edit.newString) return { kind: "fail", reason: "oldString and newString are identical" }
    if (edit.oldString === "")
      return flavour.empty === "write"
        ? { kind: "whole", content: edit.newString }
        : { kind: "fail", reason: "an empty oldString is refused for an existing file" }
    const lead = flavour.bom ? SecurityPatch.leadingBoms(current, flavour.bom.read) : 0
    const text = current.slice(lead)
    let old = edit.oldString
    let neu = edit.newString
    if (flavour.crlf) {
      const crlf = text.includes("\r\n")
      const convert = (s: string) =>
        crlf ? s.replaceAll("\r\n", "\n").replaceAll("\n", "\r\n") : s.replaceAll("\r\n", "\n")
      old = convert(old)
      neu = convert(neu)
    }
    const every = (search: string, how: string): Outcome => {
      if (search === "") return { kind: "everywhere", insert: neu, how }
      const edits = occurrences(text, search).map((at) => ({
        start: at,
        end: at + search.length,
        insert: expand(neu, text, at, search),
      }))
      return { kind: "replace", edits: finish(current, lead, edits, flavour.bom), how }
    }

    if (!flavour.fuzzy) {
      const found = occurrences(text, old)
      if (!found.length) return { kind: "fail", reason: "oldString is not in the file" }
      if (found.length > 1 && !edit.replaceAll) return { kind: "fail", reason: "oldString occurs more than once" }
      if (edit.replaceAll) return every(old, "exact match")
      const at = found[0]
      const insert = expand(neu, text, at, old)
      return {
        kind: "replace",
        edits: finish(current, lead, [{ start: at, end: at + old.length, insert }], flavour.bom),
        how: "exact match",
      }
    }

    if (old === neu) return { kind: "fail", reason: "oldString and newString are identical" }
    const budget = new Budget()
    let matched = false
    try {
      for (const strategy of STRATEGIES)
        for (const { search, how } of strategy(text, old, flavour.fuzzy, budget)) {
          const at = text.indexOf(search)
          if (at < 0) continue
          matched = true
          if (flavour.fuzzy.proportion && outsized(search, old))
            return { kind: "fail", reason: "the matched text is much larger than oldString" }
          if (edit.replaceAll) return every(search, how)
          if (at !== text.lastIndexOf(search)) continue
          return {
            kind: "replace",
            edits: finish(current, lead, [{ start: at, end: at + search.length, insert: neu }], flavour.bom),
            how,
          }
        }
    } catch (error) {
      if (TooCostly.is(error)) return { kind: "unknown", reason: error.message }
      throw error
    }
    return { kind: "fail", reason: matched ? "oldString matches more than once" : "oldString is not in the file" }
  }

  /**
   * Every version's outcome.
   *
   * @example
   * SecurityEdit.outcomes("a\n", { oldString: "", newString: "b" })["1.2.15"] // { kind: "whole", content: "b" }
   */
  export function outcomes(current: string, edit: Edit): Record<Version, Outcome> {
    return Object.fromEntries(VERSIONS.map((v) => [v, outcome(current, edit, v)])) as Record<Version, Outcome>
  }

  /**
   * The ranges an edit may replace, as a union over the versions: `whole` when some version overwrites the file,
   * `everywhere` when some version inserts between every two characters, `unknown` when a version cannot be
   * replayed (then treat the whole file as touched).
   *
   * @example
   * SecurityEdit.ranges("x = 1\n", { oldString: "x = 1", newString: "x = 2" })
   * // { whole: false, everywhere: false, ranges: [{ start: 0, end: 5, insert: "x = 2" }] }
   */
  export function ranges(
    current: string,
    edit: Edit,
  ): { whole: boolean; everywhere: boolean; ranges: SecurityPatch.Replacement[]; unknown?: string } {
    const all = Object.values(outcomes(current, edit))
    const seen = new Set<string>()
    const out: SecurityPatch.Replacement[] = []
    for (const o of all)
      if (o.kind === "replace")
        for (const e of o.edits) {
          const k = `${e.start}:${e.end}:${e.insert}`
          if (!seen.has(k)) (seen.add(k), out.push(e))
        }
    const unknown = all.find((o) => o.kind === "unknown")
    return {
      whole: all.some((o) => o.kind === "whole"),
      everywhere: all.some((o) => o.kind === "everywhere"),
      ranges: out.sort((a, b) => a.start - b.start || a.end - b.end),
      ...(unknown?.kind === "unknown" ? { unknown: unknown.reason } : {}),
    }
  }

  /**
   * The text an outcome leaves (`undefined` for fail and unknown); for tests and differential checks.
   *
   * @example
   * SecurityEdit.result("ab", SecurityEdit.outcome("ab", { oldString: "b", newString: "c" }, "1.18"), "1.18") // "ac"
   */
  export function result(current: string, o: Outcome, version: Version): string | undefined {
    if (o.kind === "replace") return SecurityPatch.apply(current, o.edits)
    if (o.kind === "whole") return o.content
    if (o.kind !== "everywhere") return undefined
    const rule = FLAVOURS[version].bom
    const lead = rule ? SecurityPatch.leadingBoms(current, rule.read) : 0
    const text = current.slice(lead)
    const edits = Array.from({ length: text.length + 1 }, (_, at) => ({
      start: at,
      end: at,
      insert: expand(o.insert, text, at, ""),
    }))
    return SecurityPatch.apply(current, finish(current, lead, edits, rule))
  }

  const BOM = "\uFEFF"
  const lineOf = (text: string, at: number) => {
    let n = 1
    for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) n++
    return n
  }
  const lines = (text: string, r: Range) => {
    const a = lineOf(text, r.start)
    const b = lineOf(text, Math.max(r.start, r.end - 1))
    return a === b ? `line ${a}` : `lines ${a}–${b}`
  }

  /** Ranges sorted, overlapping ones merged, and moved past a leading BOM (which OpenCode may drop and restore). */
  function prepare(current: string, input: readonly Range[]): Range[] {
    const lead = SecurityPatch.leadingBoms(current, 2)
    const sorted = input
      .map((r) => ({ start: Math.max(r.start, Math.min(lead, r.end)), end: r.end, closed: r.closed !== false }))
      .filter((r) => r.end > r.start)
      .sort((a, b) => a.start - b.start || a.end - b.end)
    const out: (Range & { closed: boolean })[] = []
    for (const r of sorted) {
      const last = out[out.length - 1]
      if (last && r.start <= last.end) {
        if (r.end > last.end) ((last.end = r.end), (last.closed = r.closed))
        else if (r.end === last.end) last.closed = last.closed && r.closed
      } else out.push({ ...r })
    }
    return out
  }

  /**
   * The replacement without the characters it rewrites unchanged at either end (a patch rewrites its context lines,
   * an edit its common text): the same resulting text, so what it keeps is kept in place.
   */
  function narrow(current: string, e: SecurityPatch.Replacement): SecurityPatch.Replacement {
    const removed = current.slice(e.start, e.end)
    const most = Math.min(removed.length, e.insert.length)
    let head = 0
    while (head < most && removed[head] === e.insert[head]) head++
    let tail = 0
    while (tail < most - head && removed[removed.length - 1 - tail] === e.insert[e.insert.length - 1 - tail]) tail++
    return { start: e.start + head, end: e.end - tail, insert: e.insert.slice(head, e.insert.length - tail) }
  }

  /** Line pairs aligned beyond this many are not refined (the replacement is then judged whole). */
  const ALIGN_LIMIT = 4_000_000

  /**
   * The replacement split where whole lines of the old text reappear unchanged in the new one (longest common
   * subsequence of lines): the same resulting text, so a segment a patch keeps as context is seen as kept.
   */
  function refine(current: string, e: SecurityPatch.Replacement): SecurityPatch.Replacement[] {
    const removed = current.slice(e.start, e.end)
    if (!removed.includes("\n") || !e.insert.includes("\n")) return [e]
    const a = removed.split(/(?<=\n)/)
    const b = e.insert.split(/(?<=\n)/)
    if (a.length * b.length > ALIGN_LIMIT) return [e]
    const width = b.length + 1
    const common = new Uint32Array((a.length + 1) * width)
    for (let i = a.length - 1; i >= 0; i--)
      for (let j = b.length - 1; j >= 0; j--)
        common[i * width + j] =
          a[i] === b[j]
            ? common[(i + 1) * width + j + 1] + 1
            : Math.max(common[(i + 1) * width + j], common[i * width + j + 1])
    const out: SecurityPatch.Replacement[] = []
    let at = e.start
    let from = e.start
    let insert = ""
    const flush = () => {
      if (from < at || insert) out.push({ start: from, end: at, insert })
      insert = ""
    }
    let i = 0
    let j = 0
    while (i < a.length && j < b.length) {
      if (a[i] === b[j]) {
        flush()
        at += a[i++].length
        from = at
        j++
      } else if (common[(i + 1) * width + j] >= common[i * width + j + 1]) at += a[i++].length
      else insert += b[j++]
    }
    while (i < a.length) at += a[i++].length
    while (j < b.length) insert += b[j++]
    flush()
    return out
  }

  /** Replacements narrowed and refined, no-ops dropped, sorted, touching ones joined; undefined when two overlap. */
  function tidy(current: string, edits: readonly SecurityPatch.Replacement[]) {
    const sorted = edits
      .flatMap((e) => refine(current, narrow(current, e)))
      .map((e) => narrow(current, e))
      .filter((e) => e.end > e.start || e.insert)
      .sort((a, b) => a.start - b.start || a.end - b.end)
    const out: SecurityPatch.Replacement[] = []
    for (const e of sorted) {
      const last = out[out.length - 1]
      if (last && e.start < last.end) return undefined
      if (last && e.start === last.end) ((last.end = e.end), (last.insert += e.insert))
      else out.push({ ...e })
    }
    return out
  }

  const lineBreakAfter = (s: string) => s === "" || s.startsWith("\n") || s.startsWith("\r\n")

  /** Why these replacements change a protected range, or undefined when every range stays byte-identical on its own lines. */
  function breaks(
    current: string,
    given: readonly SecurityPatch.Replacement[],
    guarded: readonly Range[],
  ): string | undefined {
    const edits = tidy(current, given)
    if (!edits) return "the replacements overlap, so what they do cannot be told"
    const lead = SecurityPatch.leadingBoms(current, 2)
    for (const r of guarded) {
      const where = lines(current, r)
      for (const e of edits) {
        if (e.start === e.end && e.start > r.start && e.start < r.end)
          return `inserts text inside write-protected ${where}`
        if (e.start < r.end && e.end > r.start) return `changes write-protected ${where}`
      }
      // The range must still start a line: what now precedes it is a newline or the start of the file.
      const before = edits.find((e) => e.end === r.start)
      if (before) {
        const prev = before.insert || (before.start <= lead ? "" : current[before.start - 1])
        const ok = before.insert ? prev.endsWith("\n") : prev === "" || prev === "\n"
        if (!ok) return `joins text onto the first line of write-protected ${where}`
      }
      const after = edits.find((e) => e.start === r.end)
      if (!after) continue
      if (r.closed === false) return `appends to write-protected ${where}, which runs to the end of the file`
      const next = after.insert + current.slice(after.end, after.end + 2)
      const was = current.slice(r.end, r.end + 2)
      if (lineBreakAfter(was) ? !lineBreakAfter(next) : !next.startsWith(was))
        return `joins text onto the last line of write-protected ${where}`
    }
    return undefined
  }

  /** The ranges moved by replacements that leave them intact. */
  function shift(guarded: readonly Range[], edits: readonly SecurityPatch.Replacement[]): Range[] {
    return guarded.map((r) => {
      let delta = 0
      for (const e of edits) if (e.end <= r.start) delta += e.insert.length - (e.end - e.start)
      return { ...r, start: r.start + delta, end: r.end + delta }
    })
  }

  /**
   * Where each protected range of `current` sits in `content`, in order, each on its own lines (a range that runs to
   * the end of the file must end `content`), or undefined. A leading BOM on either side is ignored.
   */
  function find(current: string, content: string, guarded: readonly Range[]): Range[] | undefined {
    const lead = SecurityPatch.leadingBoms(content, 2)
    const out: Range[] = []
    let from = lead
    for (const r of guarded) {
      const text = current.slice(r.start, r.end)
      let at = content.indexOf(text, from)
      for (; at >= 0; at = content.indexOf(text, at + 1)) {
        const starts = at === lead || content[at - 1] === "\n"
        const rest = content.slice(at + text.length, at + text.length + 2)
        const ends = r.closed === false ? at + text.length === content.length : lineBreakAfter(rest)
        if (starts && ends) break
      }
      if (at < 0) return undefined
      out.push({ ...r, start: at, end: at + text.length })
      from = at + text.length
    }
    return out
  }

  /**
   * Why writing `content` over `current` loses a protected range, or undefined when `content` holds every range
   * verbatim, in the same order, each on its own lines.
   *
   * @example
   * SecurityEdit.keeps("a\n# @k-start\nx\n# @k-end\n", "b\n# @k-start\nx\n# @k-end\n", [{ start: 2, end: 23 }]) // undefined
   */
  export function keeps(current: string, content: string, ranges: readonly Range[]): string | undefined {
    const guarded = prepare(current, ranges)
    if (find(current, content, guarded)) return undefined
    return "the new content does not keep every write-protected segment verbatim, in order, on its own lines"
  }

  /** One version's replay of a sequence of edits (multiedit stops at the first failing edit). */
  function replay(current: string, edits: readonly Edit[], guarded: Range[], version: Version) {
    let text = current
    let live = guarded
    let applied = false
    for (const [n, edit] of edits.entries()) {
      const label = edits.length > 1 ? `edit ${n + 1} ` : ""
      const o = outcome(text, edit, version)
      if (o.kind === "fail") return { applied, failure: o.reason }
      if (o.kind === "unknown") return { applied, touch: `${label}cannot be checked: ${o.reason}` }
      applied = true
      if (o.kind === "everywhere")
        return {
          applied,
          touch: `${label}inserts newString between every two characters (${o.how} of a blank oldString with replaceAll)`,
        }
      if (o.kind === "whole") {
        const moved = find(text, o.content, live)
        if (!moved)
          return {
            applied,
            touch: `${label}replaces the whole file (empty oldString) without keeping its write-protected segments`,
          }
        text = o.content
        live = moved
        continue
      }
      const bad = breaks(text, o.edits, live)
      if (bad) return { applied, touch: `${label}${bad} (${o.how})` }
      live = shift(live, tidy(text, o.edits) ?? [])
      text = SecurityPatch.apply(text, o.edits)
    }
    return { applied }
  }

  /**
   * The one check the guard runs for a write into a file with write-protected segments: a reason when the change
   * could modify, remove, or insert text inside (or onto the marker lines of) any protected range under any modelled
   * OpenCode version, or when it cannot be replayed; undefined when every range stays byte-identical, in order, on
   * its own lines. `current` is the file's text as read from disk; `ranges` come from `SecuritySegments.find`.
   *
   * @example
   * SecurityEdit.touches(text, { kind: "write", content }, SecuritySegments.find(text, writeMarkers))
   */
  export function touches(current: string, change: Change, ranges: readonly Range[]): string | undefined {
    const guarded = prepare(current, ranges)
    if (!guarded.length) return undefined
    if (change.kind === "write") {
      const bad = keeps(current, change.content, guarded)
      return bad && `write: ${bad}`
    }
    if (change.kind === "patch") return patched(current, change.file, change.side ?? "source", guarded)
    const edits = change.kind === "edit" ? [change] : change.edits
    const tool = change.kind
    const failures: string[] = []
    let applied = false
    for (const v of VERSIONS) {
      const r = replay(current, edits, guarded, v)
      if (r.touch) return `${tool}: ${r.touch} [OpenCode ${v}]`
      applied ||= r.applied
      if (!r.applied && r.failure) failures.push(`${v}: ${r.failure}`)
    }
    if (!applied)
      return `${tool}: no OpenCode version could apply it (${[...new Set(failures)].join("; ")}), and in a file with write-protected segments only edits the guard can place are allowed`
    return undefined
  }

  function patched(current: string, file: SecurityPatch.File, side: "source" | "destination", guarded: Range[]) {
    const name = file.path
    if (file.change === "move" && side === "destination")
      return `apply_patch: moving ${name} onto ${file.to} overwrites a file with write-protected segments`
    if (file.change === "move") return `apply_patch: moves ${name}, which has write-protected segments, away`
    if (file.change === "delete") return `apply_patch: deletes ${name}, which has write-protected segments`
    if (file.change === "add") {
      const bad = keeps(current, file.content ?? "", guarded)
      return bad && `apply_patch: *** Add File: overwrites ${name}, and ${bad}`
    }
    const failures: string[] = []
    let applied = false
    for (const v of VERSIONS) {
      const d = SecurityPatch.derive(file, current, v)
      if (!d.ok) {
        failures.push(d.reason)
        continue
      }
      applied = true
      const bad = breaks(current, d.edits, guarded)
      if (bad) return `apply_patch: ${name}: ${bad} [OpenCode ${v}]`
    }
    if (!applied)
      return `apply_patch: ${name}: OpenCode could not apply it (${[...new Set(failures)].join("; ")}), and in a file with write-protected segments only patches the guard can place are allowed`
    return undefined
  }
}
