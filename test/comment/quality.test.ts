import { expect, test } from "bun:test"
import path from "path"
import { AddedLines } from "../../packages/core/comment/added"
import { CommentCheck } from "../../packages/core/comment/check"
import { CommentCorpus } from "./corpus"

// Measured quality of the comment checker: every corpus file is judged as a `write` of a new file (all its
// comments are new). The figures are printed; the goal at `normal` (≥ 90% of AI slop flagged, ≤ 5% of real,
// well-commented files flagged) is asserted. docs/comment-checker.md records the figures.
test("comment checker: flag rates on the AI-slop corpus and on real well-commented source", () => {
  const slop = CommentCorpus.slop()
  const real = CommentCorpus.real()
  expect(slop.length).toBeGreaterThanOrEqual(25)
  expect(real.length).toBeGreaterThanOrEqual(80)
  const rate = (samples: CommentCorpus.Sample[], level: "strict" | "normal" | "relaxed") => {
    const flagged = samples.filter((s) => CommentCheck.judge(AddedLines.fromWrite(s.file, "", s.text), level)?.flagged)
    return { flagged, share: flagged.length / samples.length }
  }
  const rows: string[] = []
  const figures: Record<string, { slop: number; real: number }> = {}
  for (const level of ["strict", "normal", "relaxed"] as const) {
    const s = rate(slop, level)
    const r = rate(real, level)
    figures[level] = { slop: s.share, real: r.share }
    rows.push(
      `${level.padEnd(8)} slop flagged ${s.flagged.length}/${slop.length} (${(s.share * 100).toFixed(1)}%)   ` +
        `real flagged ${r.flagged.length}/${real.length} (${(r.share * 100).toFixed(1)}%)` +
        (level === "normal" && r.flagged.length
          ? `   real flagged: ${r.flagged.map((f) => path.basename(f.file)).join(", ")}`
          : ""),
    )
  }
  console.log(`comment checker quality (${slop.length} slop files, ${real.length} real files)\n${rows.join("\n")}`)
  expect(figures.normal.slop).toBeGreaterThanOrEqual(0.9)
  expect(figures.normal.real).toBeLessThanOrEqual(0.05)
  // Sensitivities are ordered: stricter never flags less.
  expect(figures.strict.slop).toBeGreaterThanOrEqual(figures.normal.slop)
  expect(figures.normal.slop).toBeGreaterThanOrEqual(figures.relaxed.slop)
  expect(figures.strict.real).toBeGreaterThanOrEqual(figures.normal.real)
}, 60_000)
