import { distance } from "fastest-levenshtein"
import z from "zod"
import type { CommentSyntax } from "./syntax"

/**
 * The comment checker's three heuristics (PRD FR-6), each with thresholds per sensitivity:
 *
 * 1. Density — annotation lines among the non-blank lines the change added. An annotation is a short standalone
 *    comment (one or two lines) or a comment trailing code; explanatory blocks of three or more lines, doc
 *    comments (JSDoc, `///`, docstrings), license headers, lint/type directives and commented-out code do not
 *    count — people write those, assistants narrate line by line. Judged only when the change added at least
 *    `minLines` non-blank lines and `minComments` annotations, so a one-line fix with a comment is not "dense".
 * 2. Obvious comments — after the comment prefix is stripped, the comment matches a narration pattern (the PRD's
 *    six, plus common restating verbs) and is short (at most `MAX_WORDS` words): "Initialize the counter", "Loop
 *    through the items", "Return the result". A long explanatory sentence that happens to start with "Check that"
 *    is not obvious. Triggers at `obvious` such comments when they are also at least `share` of the new comments
 *    (a large file with a few terse comments among many good ones is not flagged).
 * 3. Duplication — the comment restates the next code line: after both are split into lower-case words
 *    (camelCase and snake_case split, filler words dropped), their Levenshtein distance is under 30% of the
 *    comment's length. Same `share` rule.
 *
 * @example
 * CommentHeuristics.obvious("Loop through the items") // true
 * CommentHeuristics.restates("return the result", "return result") // true
 */
export namespace CommentHeuristics {
  export const Sensitivity = z.union([z.enum(["strict", "normal", "relaxed"]), z.literal(false)])
  export type Sensitivity = z.infer<typeof Sensitivity>
  export type Level = Exclude<Sensitivity, false>

  export const THRESHOLDS: Record<
    Level,
    { density: number; obvious: number; duplicates: number; share: number; minLines: number; minComments: number }
  > = {
    strict: { density: 0.15, obvious: 1, duplicates: 1, share: 0.15, minLines: 5, minComments: 2 },
    normal: { density: 0.3, obvious: 3, duplicates: 1, share: 0.3, minLines: 5, minComments: 3 },
    relaxed: { density: 0.5, obvious: 5, duplicates: 2, share: 0.45, minLines: 8, minComments: 4 },
  }

  /** Obvious comments are short: a restatement, not an explanation. */
  export const MAX_WORDS = 8

  const VERBS =
    "get|gets|fetch|fetches|retrieve|retrieves|update|updates|increment|increments|decrement|decrements|calculate|" +
    "calculates|compute|computes|add|adds|append|appends|push|pushes|remove|removes|delete|deletes|call|calls|" +
    "invoke|invokes|store|stores|save|saves|send|sends|convert|converts|parse|parses|assign|assigns|read|reads|" +
    "write|writes|open|opens|close|closes|start|starts|stop|stops|handle|handles|process|processes|clear|clears|" +
    "reset|resets|sort|sorts|format|formats|build|builds|render|renders|generate|generates|instantiate|" +
    "instantiates|load|loads|insert|inserts|use|uses|make|makes|run|runs|execute|executes|wait|waits|throw|throws"

  /** The PRD's six patterns first, then the narration patterns this checker adds. */
  export const PATTERNS: RegExp[] = [
    /^(initiali[sz]e|create|set|define|declare)s? (the|a|an) \w+/i,
    /^(return|log|print|output)s? (the|a) \w+/i,
    /^(loop|iterate|map|filter)s? (through|over|the) \w+/i,
    /^(check|verify|validate|ensure)s? (if|that|the) \w+/i,
    /^(import|require|include)s? \w+/i,
    /^(function|method|class) (to|that|for) \w+/i,
    new RegExp(`^(${VERBS}) (the|a|an|new|this|that|all|each|every|our|some|it) \\w+`, "i"),
    /^(initiali[sz]e|create|set|define|declare|return|increment|decrement) \w+( \w+){0,3}$/i,
    /^this (function|method|class|variable|line|block|loop|code|constant) \w+/i,
    /^(helper|utility) (function|method) \w+/i,
    /^(constructor|getter|setter|main function|entry point)\.?$/i,
  ]

  /** Comments that are instructions to tools or markers, never slop. */
  const DIRECTIVE =
    /^(eslint|prettier|@ts-|tslint|istanbul|c8|biome|noqa|type:|pylint|mypy|fmt:|nolint|go:|rubocop|TODO|FIXME|XXX|HACK|NOTE|SAFETY|region|endregion|#region|#endregion|-\*-|vim:|@license|@preserve|SPDX|Copyright|\(c\))/i

  /**
   * True for comments addressed to tools (lint, type checker, coverage) and for markers such as TODO or a license line.
   *
   * @example
   * CommentHeuristics.isDirective("eslint-disable-next-line") // true
   */
  export function isDirective(text: string): boolean {
    return DIRECTIVE.test(text)
  }

  const words = (text: string) => text.split(/\s+/).filter(Boolean)

  /**
   * Heuristic 2 on one comment's text (prefix already stripped).
   *
   * @example
   * CommentHeuristics.obvious("Initialize the counter") // true
   */
  export function obvious(text: string): boolean {
    const first = text
      .split(/(?<=[.!?])\s/)[0]
      .replace(/[.:;!]+$/, "")
      .trim()
    if (!first || isDirective(first)) return false
    if (words(first).length > MAX_WORDS || text.length > 120) return false
    return PATTERNS.some((p) => p.test(first))
  }

  const FILLER = new Set(
    "the a an to of and for with in on is it its this that by from into as be we our then".split(" "),
  )

  /**
   * Lower-case words of code or prose: camelCase and snake_case split, punctuation and filler dropped.
   *
   * @example
   * CommentHeuristics.normalize("return this.userName") // "return user name"
   */
  export function normalize(text: string): string {
    return text
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w && !FILLER.has(w))
      .join(" ")
  }

  /**
   * Heuristic 3: the comment is within 30% (Levenshtein) of the code line it precedes.
   *
   * @example
   * CommentHeuristics.restates("return the total", "return total") // true
   */
  export function restates(comment: string, code: string): boolean {
    const c = normalize(comment)
    const k = normalize(code)
    if (c.length < 4 || !k) return false
    return distance(c, k) < 0.3 * c.length
  }

  /**
   * The comment ends like a statement or block of code: commented-out code, which is not prose.
   *
   * @example
   * CommentHeuristics.looksLikeCode("const x = compute(y);") // true
   */
  export function looksLikeCode(text: string): boolean {
    return /[;{}]$|^\w+(\.\w+)*\(.*\)$|^(const|let|var|import|export|return|if|for|while|def|fn|func|function)\b.*[=(:{]/.test(
      text,
    )
  }

  export type DensityInput = { kinds: CommentSyntax.LineKind[]; added: boolean[]; annotations: Set<number> }

  /**
   * Heuristic 1: `{ comments, lines, ratio }`: annotation lines among added non-blank lines.
   *
   * @example
   * CommentHeuristics.density({ kinds: ["comment", "code"], added: [true, true], annotations: new Set([0]) }).ratio // 0.5
   */
  export function density({ kinds, added, annotations }: DensityInput) {
    let comments = 0
    let lines = 0
    for (let i = 0; i < kinds.length; i++) {
      if (!added[i] || kinds[i] === "blank") continue
      lines++
      if (annotations.has(i)) comments++
    }
    return { comments, lines, ratio: lines ? comments / lines : 0 }
  }
}
