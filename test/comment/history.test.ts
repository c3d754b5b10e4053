import { expect, test } from "bun:test"
import { CommentHistory } from "./history/history"

// The comment checker on comments that real commits added, labelled by hand (test/comment/history/, criteria in
// docs/comment-checker.md). A comment counts as flagged when the checker's note names it; only N (narrating) is a
// positive. The figures per sensitivity are printed for the first batch's two parts ("tune", "held"), the second
// batch ("fresh"), the third ("third"), the fourth ("fourth"), the fifth ("fifth"), the sixth ("sixth"), the seventh
// ("seventh"), the eighth ("eighth"), the ninth ("ninth"), the tenth ("tenth"), the eleventh ("eleventh"), the
// twelfth ("twelfth"), the thirteenth ("thirteenth") and the fourteenth ("fourteenth"), each of the last ten held out
// when first measured; all but the last three are tuning material now (the docs say when each was held out); their
// measured floors are checked at `normal`.
const PARTS = CommentHistory.PARTS

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
    for (const part of PARTS) {
      const r = result[part]
      rows.push(
        `${level.padEnd(8)} ${part.padEnd(6)} precision ${pct(r.precision)} (${r.hits}/${r.flagged})  ` +
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

  // Goals at the default sensitivity: precision ≥ 0.9 with recall ≥ 0.6 on held-out material. All four batches
  // are tuning material now: the rules of the latest work were chosen on batches 1-4, per comment (batch 4 was held
  // out and measured once before that work: 33/38 and 33/75). So these are measured floors, not held-out figures
  // (docs/comment-checker.md, "Measured on real history", "Work on batches 1-4"): first batch's even-hash part 29/30
  // and 29/37, odd-hash part 27/27 and 27/39, second batch 26/30 and 26/33, third 33/33 and 33/45, fourth 47/51 and
  // 47/75.
  expect(results.normal.tune.precision).toBeGreaterThanOrEqual(0.96)
  expect(results.normal.tune.recall).toBeGreaterThanOrEqual(0.78)
  expect(results.normal.held.precision).toBeGreaterThanOrEqual(1)
  expect(results.normal.held.recall).toBeGreaterThanOrEqual(0.69)
  expect(results.normal.fresh.precision).toBeGreaterThanOrEqual(0.96)
  expect(results.normal.fresh.recall).toBeGreaterThanOrEqual(0.78)
  expect(results.normal.third.precision).toBeGreaterThanOrEqual(1)
  expect(results.normal.third.recall).toBeGreaterThanOrEqual(0.73)
  // The fourth batch is tuning material now (its misses and false alarms were read for the work on batches 1-4).
  expect(results.normal.fourth.precision).toBeGreaterThanOrEqual(0.94)
  expect(results.normal.fourth.recall).toBeGreaterThanOrEqual(0.62)
  // The fifth batch was committed before the checker ran on it and measured once after that work (held out): 21/31
  // and 21/62 at normal (before both rounds of rule work 16/24 and 16/62). Goals not met; measured floors. Its
  // comments were read afterwards (docs: "Batch 5, held out"), so it is tuning material for any later work.
  expect(results.normal.fifth.precision).toBeGreaterThanOrEqual(0.65)
  expect(results.normal.fifth.recall).toBeGreaterThanOrEqual(0.33)
  // The sixth batch was committed (3682dc8) before the checker ran on it and measured once with the rules as they
  // stood (held out): 36/43 and 36/56 at normal (strict 40/52 and 40/56, relaxed 30/34 and 30/56). Recall goal met,
  // precision goal (0.9) not. Its comments were read afterwards: tuning material for any later work.
  expect(results.normal.sixth.precision).toBeGreaterThanOrEqual(0.9)
  expect(results.normal.sixth.recall).toBeGreaterThanOrEqual(0.64)
  // The seventh batch was committed (bc05938) before the checker ran on it and measured once with the rules unchanged
  // since the sixth (held out): 14/16 and 14/25 at normal (strict 17/20 and 17/25, relaxed 12/14 and 12/25). Neither
  // goal met; measured floors.
  expect(results.normal.seventh.precision).toBeGreaterThanOrEqual(0.87)
  expect(results.normal.seventh.recall).toBeGreaterThanOrEqual(0.56)
  // The eighth batch was committed (385c634) before the checker ran on it and measured once, after the rule change
  // chosen on batches 1-7 (0d2af40): 27/33 and 27/43 at normal (strict 30/38 and 30/43, relaxed 24/30 and 24/43); the
  // rules before that change gave 28/34 and 28/43. Recall goal met, precision goal (0.9) not; measured floors.
  expect(results.normal.eighth.precision).toBeGreaterThanOrEqual(0.9)
  expect(results.normal.eighth.recall).toBeGreaterThanOrEqual(0.62)
  // The ninth batch was committed (ad0035b) before the checker ran on it and measured once with the rules unchanged
  // since the eighth (held out): 29/41 and 29/47 at normal (strict 33/46 and 33/47, relaxed 28/39 and 28/47). Recall
  // goal met, precision goal (0.9) not; measured floors.
  expect(results.normal.ninth.precision).toBeGreaterThanOrEqual(0.76)
  expect(results.normal.ninth.recall).toBeGreaterThanOrEqual(0.61)
  // The tenth batch was committed (5116f36) before the checker ran on it and measured once with the rules of the ninth
  // batch's round (held out): 18/18 and 18/43 at normal (strict 27/27 and 27/43, relaxed 15/15 and 15/43). Precision
  // goal met, recall goal (0.6) not at normal (met at strict); measured floors.
  expect(results.normal.tenth.precision).toBeGreaterThanOrEqual(1)
  expect(results.normal.tenth.recall).toBeGreaterThanOrEqual(0.41)
  expect(results.strict.tenth.precision).toBeGreaterThanOrEqual(1)
  expect(results.strict.tenth.recall).toBeGreaterThanOrEqual(0.62)
  // The eleventh batch was committed (3942d2b) before the checker ran on it and measured once, after the round on
  // batches 1-10 (the expectation subject, string bodies and tool directives; held out): 11/16 and 11/35 at normal
  // (strict 13/23 and 13/35, relaxed 9/12 and 9/35). Neither goal met; measured floors. Its tmux comments were read
  // for the heading and C-definition rules (tester's R-C1, R-C2): tuning material since (docs: "Headings and C
  // function header comments").
  expect(results.normal.eleventh.precision).toBeGreaterThanOrEqual(0.84)
  expect(results.normal.eleventh.recall).toBeGreaterThanOrEqual(0.31)
  // The twelfth batch was drawn and labelled blind by a helper that never read the rules, committed (fcdd3fe) before
  // the checker ran on it, and measured once in aggregate with the rules unchanged since the tester's round (held out):
  // 49/52 and 49/70 at normal (strict 50/55 and 50/70, relaxed 42/44 and 42/70). Both goals met on this batch;
  // measured floors. Its comments have not been read.
  expect(results.normal.twelfth.precision).toBeGreaterThanOrEqual(0.94)
  expect(results.normal.twelfth.recall).toBeGreaterThanOrEqual(0.7)
  // The thirteenth likewise (committed as 6f8c1f9 before the checker ran on it; five repositories new to the set),
  // measured once in aggregate with the rules of this file's last change: 50/63 and 50/75 at normal (strict 51/64 and
  // 51/75, relaxed 45/54 and 45/75). Recall met, precision not; measured floors. Its comments have not been read.
  expect(results.normal.thirteenth.precision).toBeGreaterThanOrEqual(0.89)
  expect(results.normal.thirteenth.recall).toBeGreaterThanOrEqual(0.66)
  // The false-alarm round on batches 1-13 (docs: "False alarms of batches 1-13") raised the precision floors above to
  // its figures (fresh 26/27, fourth 49/52, sixth 36/40, eighth 27/30, ninth 29/38, eleventh 11/13, thirteenth 50/56)
  // with every recall as it was; pooled over batches 6-13 at normal, 238/267 and 238/394 (tuning material).
  const pooled = PARTS.slice(PARTS.indexOf("sixth"), PARTS.indexOf("fourteenth")).map((p) => results.normal[p])
  const hits = pooled.reduce((n, r) => n + r.hits, 0)
  expect(hits / pooled.reduce((n, r) => n + r.flagged, 0)).toBeGreaterThanOrEqual(0.89)
  expect(hits / pooled.reduce((n, r) => n + r.positives, 0)).toBeGreaterThanOrEqual(0.6)
  // The fourteenth likewise (committed as 53833bd before the checker ran on it; five repositories new to the set,
  // labelled by a helper that read only the labelling criteria), measured once in aggregate with the rules of commit
  // 719b4c6: 17/26 and 17/52 at normal (strict 22/33 and 22/52, relaxed 14/20 and 14/52). Neither goal met; measured
  // floors. Its comments have not been read. Measured once more in aggregate after the false-alarm round on batches
  // 1-13 (decided on those batches alone): 16/23 and 16/52 at normal (strict 21/31 and 21/52, relaxed 13/18 and 13/52).
  expect(results.normal.fourteenth.precision).toBeGreaterThanOrEqual(0.69)
  expect(results.normal.fourteenth.recall).toBeGreaterThanOrEqual(0.3)
  // Sensitivities are ordered: a stricter one names at least the comments a laxer one names.
  for (const part of PARTS) {
    expect(results.strict[part].flagged).toBeGreaterThanOrEqual(results.normal[part].flagged)
    expect(results.normal[part].flagged).toBeGreaterThanOrEqual(results.relaxed[part].flagged)
  }
}, 60_000)
