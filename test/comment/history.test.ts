import { expect, test } from "bun:test"
import { CommentHistory } from "./history/history"

// The comment checker on comments that real commits added, labelled by hand (test/comment/history/, criteria in
// docs/comment-checker.md). A comment counts as flagged when the checker's note names it; only N (narrating) is a
// positive. The figures per sensitivity are printed for the tuning and the held-out part; the goals are asserted on
// the held-out part at `normal`.
test("comment checker: precision and recall on labelled comments from real history", () => {
  const fixtures = CommentHistory.load()
  const comments = fixtures.flatMap((f) => f.changes.flatMap((c) => c.comments))
  expect(comments.length).toBeGreaterThanOrEqual(200)
  expect(comments.filter((c) => c.label === "?")).toEqual([])

  const pct = (x: number) => (Number.isNaN(x) ? "  n/a" : (x * 100).toFixed(1).padStart(5)) + "%"
  const rows: string[] = []
  const results = {} as Record<"strict" | "normal" | "relaxed", ReturnType<typeof CommentHistory.evaluate>>
  for (const level of ["strict", "normal", "relaxed"] as const) {
    const result = (results[level] = CommentHistory.evaluate(fixtures, level))
    for (const part of ["tune", "held"] as const) {
      const r = result[part]
      rows.push(
        `${level.padEnd(8)} ${part}  precision ${pct(r.precision)} (${r.hits}/${r.flagged})  ` +
          `recall ${pct(r.recall)} (${r.hits}/${r.positives})  ` +
          `changes flagged ${r.changes.flagged}/${r.changes.total} (${r.changes.hits} with narration of ${r.changes.positives})`,
      )
    }
  }
  const wrong = results.normal.held.named.filter((n) => n.label !== "N")
  console.log(
    `comment checker on ${comments.length} labelled comments of real commits\n${rows.join("\n")}` +
      (wrong.length
        ? `\nnormal, held-out, named but not narrating:\n${wrong.map((w) => `  [${w.label}] ${w.text}`).join("\n")}`
        : ""),
  )

  // Goals at the default sensitivity, on the held-out part: precision ≥ 0.9 is met and asserted. Recall ≥ 0.6 is
  // NOT met: the measured figure is 12/39 (0.31), so the assertion is that measured floor, not the goal
  // (docs/comment-checker.md, "Measured on real history", says why and what is open).
  expect(results.normal.held.precision).toBeGreaterThanOrEqual(0.9)
  expect(results.normal.held.recall).toBeGreaterThanOrEqual(0.3)
  // The tuning part, on which the rules were chosen.
  expect(results.normal.tune.precision).toBeGreaterThanOrEqual(0.95)
  expect(results.normal.tune.recall).toBeGreaterThanOrEqual(0.7)
  // Sensitivities are ordered: a stricter one names at least the comments a laxer one names.
  for (const part of ["tune", "held"] as const) {
    expect(results.strict[part].flagged).toBeGreaterThanOrEqual(results.normal[part].flagged)
    expect(results.normal[part].flagged).toBeGreaterThanOrEqual(results.relaxed[part].flagged)
  }
})
