import fs from "fs"
import path from "path"
import { expect, test } from "bun:test"
import { CommentHistory } from "./history/history"

// Agreement between two labellers on batch 5 (test/comment/history/*.5.json): the fixtures hold the first labeller's
// labels; relabel.5.tsv holds a second labeller's, given blind to the first by the same criteria
// (docs/comment-checker.md, "Agreement between two labellers"). Prints raw agreement and Cohen's kappa (N against
// the rest, and over all five labels), the confusion table, the comments the two label differently, and the
// checker's precision and recall on the batch at each sensitivity under either labeller's truth.

const LABELS = ["N", "U", "C", "D", "M"] as const
type Label = (typeof LABELS)[number]

/** Cohen's kappa of a square confusion table (rows: first labeller, columns: second). */
function kappa(table: number[][]): { observed: number; expected: number; kappa: number } {
  const total = table.flat().reduce((a, b) => a + b, 0)
  const rows = table.map((r) => r.reduce((a, b) => a + b, 0))
  const cols = table[0].map((_, j) => table.reduce((a, r) => a + r[j], 0))
  const observed = table.reduce((a, r, i) => a + r[i], 0) / total
  const expected = rows.reduce((a, r, i) => a + (r / total) * (cols[i] / total), 0)
  return { observed, expected, kappa: expected === 1 ? 1 : (observed - expected) / (1 - expected) }
}

test("comment history: agreement of two labellers on batch 5, and the checker under each one's labels", () => {
  const fixtures = CommentHistory.load()
  const fifth = fixtures.filter((f) => f.batch === 5)
  const first = new Map<string, { label: CommentHistory.Label; text: string }>()
  for (const f of fifth)
    f.changes.forEach((change, c) =>
      change.comments.forEach((comment, i) =>
        first.set(CommentHistory.labelKey(`${f.name}.json`, c, i), {
          label: comment.label,
          text: comment.lines.join(" "),
        }),
      ),
    )

  const second = new Map<string, Label>()
  const tsv = fs.readFileSync(path.join(import.meta.dir, "history", "relabel.5.tsv"), "utf8")
  for (const line of tsv.split("\n").filter(Boolean)) {
    const [file, change, comment, label, ...rest] = line.split("\t")
    expect(rest).toEqual([])
    expect(LABELS as readonly string[]).toContain(label)
    const key = CommentHistory.labelKey(file, Number(change), Number(comment))
    expect(first.has(key)).toBe(true)
    expect(second.has(key)).toBe(false)
    second.set(key, label as Label)
  }
  // Both cover the same 254 comments.
  expect(first.size).toBe(254)
  expect(second.size).toBe(first.size)

  const table = LABELS.map(() => LABELS.map(() => 0))
  const binary = [
    [0, 0],
    [0, 0],
  ]
  const differ: string[] = []
  for (const [key, { label, text }] of first) {
    const a = LABELS.indexOf(label as Label)
    const b = LABELS.indexOf(second.get(key)!)
    expect(a).toBeGreaterThanOrEqual(0)
    table[a][b]++
    binary[label === "N" ? 0 : 1][second.get(key) === "N" ? 0 : 1]++
    if (a !== b) differ.push(`  ${label} -> ${second.get(key)}  ${key.split("\t")[0]}  ${text.slice(0, 100)}`)
  }
  const sum = (t: number[][]) => t.flat().reduce((x, y) => x + y, 0)
  expect(sum(table)).toBe(254)
  expect(sum(binary)).toBe(254)
  // The binary table is the five-label table folded: N/N is the same cell, and the N row and column sums agree.
  expect(binary[0][0]).toBe(table[0][0])
  expect(binary[0][0] + binary[0][1]).toBe(table[0].reduce((x, y) => x + y, 0))
  expect(binary[0][0] + binary[1][0]).toBe(table.reduce((x, r) => x + r[0], 0))
  expect(differ.length).toBe(254 - table.reduce((x, r, i) => x + r[i], 0))

  const all = kappa(table)
  const n = kappa(binary)
  for (const k of [all, n]) {
    expect(k.observed).toBeGreaterThanOrEqual(0)
    expect(k.observed).toBeLessThanOrEqual(1)
    expect(k.expected).toBeGreaterThanOrEqual(0)
    expect(k.expected).toBeLessThanOrEqual(1)
    expect(k.kappa).toBeGreaterThanOrEqual(-1)
    expect(k.kappa).toBeLessThanOrEqual(1)
  }
  // Folding labels together can only keep or raise raw agreement.
  expect(n.observed).toBeGreaterThanOrEqual(all.observed)

  const f2 = (x: number) => x.toFixed(3)
  const pct = (x: number) => (Number.isNaN(x) ? "  n/a" : (x * 100).toFixed(1).padStart(5)) + "%"
  const head = `first \\ second ${LABELS.map((l) => l.padStart(4)).join("")}   sum`
  const body = LABELS.map(
    (l, i) =>
      `${l.padStart(14)} ${table[i].map((c) => String(c).padStart(4)).join("")}  ${String(table[i].reduce((x, y) => x + y, 0)).padStart(4)}`,
  )
  const foot = `${"sum".padStart(14)} ${LABELS.map((_, j) => String(table.reduce((x, r) => x + r[j], 0)).padStart(4)).join("")}  ${String(sum(table)).padStart(4)}`

  // The checker's figures under each labeller's truth. Which comments it names does not depend on the labels.
  const override = second as ReadonlyMap<string, CommentHistory.Label>
  const rows: string[] = []
  for (const level of ["strict", "normal", "relaxed"] as const) {
    const byFirst = CommentHistory.evaluate(fixtures, level).fifth
    const same = CommentHistory.relabelled(fixtures, 5, new Map(), level)
    const bySecond = CommentHistory.relabelled(fixtures, 5, override, level)
    // With no override the helper gives what `evaluate` gives.
    expect([same.hits, same.flagged, same.positives]).toEqual([byFirst.hits, byFirst.flagged, byFirst.positives])
    expect(bySecond.flagged).toBe(byFirst.flagged)
    expect(byFirst.positives).toBe(table[0].reduce((x, y) => x + y, 0))
    expect(bySecond.positives).toBe(table.reduce((x, r) => x + r[0], 0))
    for (const [who, r] of [
      ["first ", byFirst],
      ["second", bySecond],
    ] as const) {
      expect(r.hits).toBeLessThanOrEqual(Math.min(r.flagged, r.positives))
      rows.push(
        `${level.padEnd(8)} ${who} truth: precision ${pct(r.precision)} (${r.hits}/${r.flagged})  ` +
          `recall ${pct(r.recall)} (${r.hits}/${r.positives})`,
      )
    }
  }

  console.log(
    [
      `batch 5: ${first.size} comments, two labellers`,
      `N vs not-N: raw agreement ${f2(n.observed)} (${binary[0][0] + binary[1][1]}/254), chance ${f2(n.expected)}, ` +
        `Cohen's kappa ${f2(n.kappa)}  [N/N ${binary[0][0]}, N/not ${binary[0][1]}, not/N ${binary[1][0]}, not/not ${binary[1][1]}]`,
      `all labels: raw agreement ${f2(all.observed)} (${254 - differ.length}/254), chance ${f2(all.expected)}, ` +
        `Cohen's kappa ${f2(all.kappa)}`,
      head,
      ...body,
      foot,
      `checker on batch 5:`,
      ...rows,
      `labelled differently (first -> second):`,
      ...differ,
    ].join("\n"),
  )
}, 60_000)
