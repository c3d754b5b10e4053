import fs from "fs"
import path from "path"
import type { LearningDetect } from "../../learning/detect"

/**
 * The labelled user messages (`dev.jsonl`, used while writing the rules, and `heldout.jsonl`, written at the same
 * time but never used for tuning) and precision/recall per kind for a classifier over them.
 *
 * @example
 * const report = Labelled.score(Labelled.load("heldout"), (text) => LearningDetect.detect(text)?.kind)
 * report.correction.precision // 0.95
 */
export namespace Labelled {
  export type Label = LearningDetect.Kind | "neutral"
  export type Item = { label: Label; text: string }
  export type Scores = { precision: number; recall: number; tp: number; fp: number; fn: number }
  export type Report = Record<LearningDetect.Kind, Scores> & {
    total: number
    errors: { text: string; label: Label; got: Label }[]
  }

  export type Part = "dev" | "heldout" | "all" | "pasted-dev" | "pasted-heldout" | "pasted"

  /**
   * `dev`/`heldout`: the original set. `pasted-dev`/`pasted-heldout` (`pasted`: both): messages with pasted tool
   * output (linter and compiler lines, warnings, stack traces, quoted and fenced blocks), half asking for help (no
   * learning), half a correction, decision or preference said around the paste; written before the detector knew
   * about pasted material.
   */
  export function load(part: Part): Item[] {
    const parts = part === "all" ? ["dev", "heldout"] : part === "pasted" ? ["pasted-dev", "pasted-heldout"] : [part]
    return parts.flatMap((p) =>
      fs
        .readFileSync(path.join(import.meta.dir, `${p}.jsonl`), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Item),
    )
  }

  export function score(items: readonly Item[], classify: (text: string) => Label | undefined): Report {
    const kinds: LearningDetect.Kind[] = ["correction", "decision", "preference"]
    const report = { total: items.length, errors: [] } as unknown as Report
    for (const kind of kinds) report[kind] = { precision: 0, recall: 0, tp: 0, fp: 0, fn: 0 }
    for (const item of items) {
      const got = classify(item.text) ?? "neutral"
      if (got !== item.label) report.errors.push({ text: item.text, label: item.label, got })
      for (const kind of kinds) {
        const s = report[kind]
        if (got === kind && item.label === kind) s.tp++
        else if (got === kind) s.fp++
        else if (item.label === kind) s.fn++
      }
    }
    for (const kind of kinds) {
      const s = report[kind]
      s.precision = s.tp + s.fp ? s.tp / (s.tp + s.fp) : 1
      s.recall = s.tp + s.fn ? s.tp / (s.tp + s.fn) : 1
    }
    return report
  }

  /**
   * The baseline: the correction patterns of the seed design (opencode-sdk-research.md, "Correction Detection
   * Patterns"), which know corrections only.
   */
  export const SEED_CORRECTION_PATTERNS = [
    /no[,.]?\s+(do|use|try|make|don't|instead|actually)/i,
    /that's (wrong|incorrect|not right)/i,
    /not what i (asked|meant|wanted)/i,
    /instead[,.]?\s+(use|do|try)/i,
    /prefer[s]?\s+.+\s+(over|instead|rather)/i,
    /actually[,.]?\s+(i want|use|it should)/i,
  ]

  export const seed = (text: string): Label | undefined =>
    SEED_CORRECTION_PATTERNS.some((p) => p.test(text)) ? "correction" : undefined
}
