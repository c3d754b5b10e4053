import { expect, test } from "bun:test"
import { CommentHistory } from "./history/history"
import { CommentScore, CommentTrain } from "./learned"

// The learned-scorer experiment (test/comment/learned.ts; docs/comment-checker.md, "A learned scorer, tried"): its
// figures are reproducible only if training is deterministic and every judged comment of the history is an example.
test("learned scorer experiment: features, deterministic training, one example per judged comment", () => {
  const names = CommentScore.features(
    {
      text: "Parse the args",
      code: ["args = parser.parse_args()"],
      trailing: false,
      lines: 1,
      narration: "plain",
      duplicate: false,
      heading: false,
    },
    "/r/a.py",
  )
  expect(names).toEqual(
    expect.arrayContaining(["n:plain", "ext:py", "f:parse", "verb", "w:args", "b:the_args", "c:args"]),
  )
  const fixtures = CommentHistory.load().filter((f) => f.batch === 2)
  const data = CommentTrain.dataset(fixtures)
  const judged = fixtures.flatMap((f) => f.changes).flatMap((c) => c.comments)
  // Documentation, directives and commented-out code are not judged, so not examples.
  expect(data.flatMap((c) => c.items).length).toBeGreaterThan(judged.length / 2)
  expect(data.flatMap((c) => c.items).length).toBeLessThanOrEqual(judged.length)
  const items = data.flatMap((c) => c.items)
  const a = CommentTrain.fit(items, 10, 50)
  const b = CommentTrain.fit(items, 10, 50)
  expect(JSON.stringify(a)).toBe(JSON.stringify(b))
  // The model separates its own training material: narrating comments score higher on average.
  const mean = (y: number) => {
    const s = items.filter((i) => i.y === y).map((i) => CommentScore.score(a, i.feats))
    return s.reduce((x, v) => x + v, 0) / s.length
  }
  expect(mean(1)).toBeGreaterThan(mean(0))
}, 30_000)
