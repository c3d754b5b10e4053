import fs from "fs"
import path from "path"
import z from "zod"
import type { AddedLines } from "../../../packages/core/comment/added"
import { CommentCheck } from "../../../packages/core/comment/check"
import { CommentHeuristics } from "../../../packages/core/comment/heuristics"
import type { CommentSyntax } from "../../../packages/core/comment/syntax"

/**
 * The labelled set of comments that real commits added (`test/comment/history/*.json`) and the evaluation of the
 * comment checker on it.
 *
 * A fixture stores, per file change of a commit, only what judging needs and no code: the added comment lines as
 * written, the number of non-blank lines the change added, and for each comment the code lines right after it (up
 * to three, until a blank line; for a trailing comment, the code before it) reduced to at most 12 lower-case words by
 * `CommentHeuristics.normalize`. Each comment has a label given by the criteria in docs/comment-checker.md:
 *
 * - `N` narrating or redundant (the note should name it),
 * - `U` useful (explains why, a constraint, a reference, a non-obvious what),
 * - `C` commented-out code, `D` doc comment (JSDoc, docstring, `///`), `M` marker or directive (TODO, lint, license).
 *
 * Only `N` is a positive. The first batch's changes are split by their commit: the first hex digit of the hash even
 * → tuning part, odd → held-out part; the second batch (`<name>.2.json`) and the third (`<name>.3.json`) are parts
 * of their own.
 *
 * @example
 * const result = CommentHistory.evaluate(CommentHistory.load(), "normal")
 * result.held.precision // share of the comments the note names that are labelled N
 */
export namespace CommentHistory {
  export const Label = z.enum(["N", "U", "C", "D", "M", "?"])
  export type Label = z.infer<typeof Label>

  export const Comment = z.object({
    /** 1-based line of the comment in the file after the commit. */
    line: z.number(),
    /** The comment's lines as added (indentation removed); for a trailing comment, the comment part only. */
    lines: z.array(z.string()),
    trailing: z.boolean().optional(),
    /** The code the comment sits on, as lower-case words (see above). */
    next: z.array(z.string()),
    label: Label,
  })
  export type Comment = z.infer<typeof Comment>

  export const Change = z.object({
    commit: z.string(),
    file: z.string(),
    /** Non-blank lines the change added to the file. */
    added: z.number(),
    comments: z.array(Comment),
  })
  export type Change = z.infer<typeof Change>

  export const Fixture = z.object({
    repo: z.string(),
    style: z.enum(["assistant", "human"]),
    note: z.string(),
    changes: z.array(Change),
  })
  export type Fixture = z.infer<typeof Fixture>

  /**
   * The fixture form of an extracted comment (used by the extraction tool).
   *
   * @example
   * CommentHistory.fromComment(["// Read it", "read()"], kinds, comment, syntax).next // ["read"]
   */
  export function fromComment(
    lines: string[],
    kinds: CommentSyntax.LineKind[],
    comment: CommentSyntax.Comment,
    syntax: CommentSyntax.Syntax,
  ): Comment {
    if (comment.trailing) {
      const raw = lines[comment.line]
      let at = raw.length
      for (let i = raw.length - 1; i > 0 && at === raw.length; i--)
        for (const prefix of syntax.line) {
          const rest = raw
            .slice(i + prefix.length)
            .replace(/^[/!]+/, "")
            .replace(/\s+/g, " ")
            .trim()
          if (raw.startsWith(prefix, i) && rest === comment.text) at = i
        }
      return {
        line: comment.line + 1,
        lines: [raw.slice(at).trim()],
        trailing: true,
        next: [words(raw.slice(0, at))],
        label: "?",
      }
    }
    const next: string[] = []
    for (let i = comment.end + 1; i < lines.length && next.length < 3; i++) {
      if (kinds[i] === "blank") break
      if (kinds[i] === "code") next.push(words(lines[i]))
    }
    return {
      line: comment.line + 1,
      lines: lines.slice(comment.line, comment.end + 1).map((l) => l.trim()),
      next: next.filter(Boolean),
      label: "?",
    }
  }

  /** A code line as at most `MAX_WORDS` lower-case words: enough to judge a comment against, not the code itself. */
  const words = (line: string) => CommentHeuristics.normalize(line).split(" ").slice(0, MAX_WORDS).join(" ")
  export const MAX_WORDS = 12

  const DIR = import.meta.dir

  /** A fixture with its file name; `batch` 2 for `<name>.2.json`, 3 for `<name>.3.json` (see `evaluate`). */
  export type Loaded = Fixture & { name: string; batch: number }

  /**
   * Every labelled fixture of this folder.
   *
   * @example
   * CommentHistory.load().map((f) => f.repo)
   */
  export function load(dir = DIR): Loaded[] {
    return fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .sort()
      .map((f) => ({
        name: f.slice(0, -5),
        batch: Number(/\.(\d+)\.json$/.exec(f)?.[1] ?? 1),
        ...Fixture.parse(JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"))),
      }))
  }

  /**
   * The held-out part: changes whose commit hash starts with an odd hex digit.
   *
   * @example
   * CommentHistory.heldOut({ commit: "1f…" } as CommentHistory.Change) // true
   */
  export function heldOut(change: Change): boolean {
    return parseInt(change.commit[0], 16) % 2 === 1
  }

  /**
   * The change as the checker sees it: each comment's lines followed by its code (a trailing comment after its
   * code), a blank line between comments, and placeholder code lines up to the number of non-blank lines the change
   * added. Every line counts as added.
   *
   * @example
   * CommentHistory.document({ file: "a.ts", added: 3, comments: [c] } as CommentHistory.Change).lines
   */
  export function document(change: Change): { doc: AddedLines.Document; at: number[] } {
    const lines: string[] = []
    const at: number[] = []
    for (const comment of change.comments) {
      at.push(lines.length + 1)
      if (comment.trailing) lines.push(`${comment.next[0] || "x()"} ${comment.lines[0]}`)
      else lines.push(...comment.lines, ...comment.next)
      lines.push("")
    }
    const nonBlank = lines.filter((l) => l.trim()).length
    for (let i = nonBlank; i < change.added; i++) lines.push("x()")
    return { doc: { file: "/r/" + change.file, lines, added: lines.map(() => true), before: "", firstLine: 1 }, at }
  }

  export type Figures = {
    /** Comments labelled N. */
    positives: number
    /** Comments the note names. */
    flagged: number
    /** Named and labelled N. */
    hits: number
    precision: number
    recall: number
    /** Changes with at least one N comment, changes flagged, flagged changes with one. */
    changes: { positives: number; flagged: number; hits: number; total: number }
    /** Named comments with their labels (to read the misses and false alarms). */
    named: { label: Label; text: string; change: string }[]
    missed: { text: string; change: string }[]
  }

  function figures(changes: { change: Change; repo: string }[], level: CommentHeuristics.Level): Figures {
    const out: Figures = {
      positives: 0,
      flagged: 0,
      hits: 0,
      precision: 0,
      recall: 0,
      changes: { positives: 0, flagged: 0, hits: 0, total: changes.length },
      named: [],
      missed: [],
    }
    for (const { change, repo } of changes) {
      const { doc, at } = document(change)
      const verdict = CommentCheck.judge([doc], level)
      const named = new Set(verdict?.named.map((f) => f.line))
      const hasPositive = change.comments.some((c) => c.label === "N")
      if (hasPositive) out.changes.positives++
      if (verdict?.flagged) {
        out.changes.flagged++
        if (hasPositive) out.changes.hits++
      }
      const where = `${repo}@${change.commit.slice(0, 8)}:${change.file}`
      change.comments.forEach((comment, i) => {
        const text = comment.lines.join(" ")
        const isNamed = named.has(at[i])
        if (comment.label === "N") out.positives++
        if (isNamed) {
          out.flagged++
          out.named.push({ label: comment.label, text, change: where })
          if (comment.label === "N") out.hits++
        } else if (comment.label === "N") out.missed.push({ text, change: where })
      })
    }
    out.precision = out.flagged ? out.hits / out.flagged : NaN
    out.recall = out.positives ? out.hits / out.positives : 1
    return out
  }

  /**
   * Precision and recall of the comments the checker's note names, per part (`PARTS`): the first batch's tuning part
   * (even commit hashes) and held-out part (odd), then one part per later batch (`fresh` for `<name>.2.json`, `third`
   * for `<name>.3.json`, … `fourteenth` for `<name>.14.json`). The second batch was drawn and labelled after the rules were
   * written, the third to fifth before the rules were revised on the batches before them, and from the sixth on each
   * was drawn and labelled blind with the rules unchanged and measured once with them.
   *
   * @example
   * CommentHistory.evaluate(CommentHistory.load(), "strict").tune.recall
   */
  export function evaluate(fixtures: Loaded[], level: CommentHeuristics.Level) {
    const all = fixtures.flatMap((f) => f.changes.map((change) => ({ change, repo: f.repo, batch: f.batch })))
    const first = all.filter((c) => c.batch === 1)
    const parts = {
      tune: first.filter((c) => !heldOut(c.change)),
      held: first.filter((c) => heldOut(c.change)),
    } as Record<Part, typeof all>
    BATCHES.forEach((part, i) => (parts[part] = all.filter((c) => c.batch === i + 2)))
    return Object.fromEntries(PARTS.map((part) => [part, figures(parts[part], level)])) as Record<
      Part,
      ReturnType<typeof figures>
    >
  }

  /** The parts of the later batches, in order: `fresh` is `<name>.2.json`, `third` is `<name>.3.json`, and so on. */
  const BATCHES = [
    "fresh",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
  ] as const
  /** Every part `evaluate` measures, oldest first: the first batch's two parts, then one per later batch. */
  export const PARTS = ["tune", "held", ...BATCHES] as const
  export type Part = (typeof PARTS)[number]

  /**
   * The key of a comment in a label override map: the fixture's file name, the change's index in it and the
   * comment's index in the change (as in `relabel.5.tsv`).
   *
   * @example
   * CommentHistory.labelKey("jq.5.json", 0, 1) // "jq.5.json\t0\t1"
   */
  export function labelKey(file: string, change: number, comment: number): string {
    return `${file}\t${change}\t${comment}`
  }

  /**
   * The figures of one batch (as `evaluate` computes them for it) when `labels` is the truth: a comment whose key
   * (`labelKey`) is in the map takes that label, any other keeps its fixture label. The fixtures are not changed.
   *
   * @example
   * CommentHistory.relabelled(CommentHistory.load(), 5, new Map([["jq.5.json\t0\t0", "N"]]), "normal").recall
   */
  export function relabelled(
    fixtures: Loaded[],
    batch: number,
    labels: ReadonlyMap<string, Label>,
    level: CommentHeuristics.Level,
  ): Figures {
    const changes = fixtures
      .filter((f) => f.batch === batch)
      .flatMap((f) =>
        f.changes.map((change, c) => ({
          repo: f.repo,
          change: {
            ...change,
            comments: change.comments.map((comment, i) => ({
              ...comment,
              label: labels.get(labelKey(`${f.name}.json`, c, i)) ?? comment.label,
            })),
          },
        })),
      )
    return figures(changes, level)
  }
}
