import { describe, expect, test } from "bun:test"
import { LearningDetect } from "../../learning/detect"
import { Labelled } from "./labelled"

const detector = (text: string) => LearningDetect.detect(text)?.kind

const line = (name: string, r: Labelled.Report) =>
  (["correction", "decision", "preference"] as const)
    .map((k) => `${k} P=${r[k].precision.toFixed(3)} R=${r[k].recall.toFixed(3)}`)
    .join("  ") + `  (${name}, ${r.total} messages)`

describe("session learning: detection quality on the labelled user messages", () => {
  const all = Labelled.load("all")

  test("the set: ≥ 200 messages, ≥ 50 corrections, ≥ 30 decisions, the rest neutral or preferences", () => {
    expect(all.length).toBeGreaterThanOrEqual(200)
    expect(all.filter((m) => m.label === "correction").length).toBeGreaterThanOrEqual(50)
    expect(all.filter((m) => m.label === "decision").length).toBeGreaterThanOrEqual(30)
    expect(new Set(all.map((m) => m.text)).size).toBe(all.length)
  })

  test("held-out part (never tuned on): correction P ≥ 0.90, R ≥ 0.70; decision P ≥ 0.85", () => {
    const r = Labelled.score(Labelled.load("heldout"), detector)
    console.log(line("held-out", r))
    expect(r.correction.precision).toBeGreaterThanOrEqual(0.9)
    expect(r.correction.recall).toBeGreaterThanOrEqual(0.7)
    expect(r.decision.precision).toBeGreaterThanOrEqual(0.85)
  })

  test("whole set: the same goals; the seed design's regex set as the baseline", () => {
    const r = Labelled.score(all, detector)
    const seed = Labelled.score(all, Labelled.seed)
    console.log(line("all", r))
    console.log(line("seed regex baseline, all", seed))
    expect(r.correction.precision).toBeGreaterThanOrEqual(0.9)
    expect(r.correction.recall).toBeGreaterThanOrEqual(0.7)
    expect(r.decision.precision).toBeGreaterThanOrEqual(0.85)
    expect(r.preference.precision).toBeGreaterThanOrEqual(0.85)
    // The baseline finds a fifth of the corrections and no decisions.
    expect(seed.correction.recall).toBeLessThan(0.3)
    expect(r.correction.recall).toBeGreaterThan(seed.correction.recall)
  })

  test("what is kept is the statement, without the opening judgement", () => {
    const cases: [string, string][] = [
      ["no, use pnpm instead of npm", "Use pnpm instead of npm"],
      [
        "No — we use pnpm in this repo, not npm. Please redo the install step.",
        "We use pnpm in this repo, not npm. Please redo the install step.",
      ],
      [
        "that's wrong, the config lives in config/app.yaml not in the root",
        "The config lives in config/app.yaml not in the root",
      ],
      [
        "Hmm, that's not right. The port is 5433 for the test db, 5432 is the dev one.",
        "The port is 5433 for the test db, 5432 is the dev one.",
      ],
      ["Actually, use `ruff` rather than flake8 for linting", "Use `ruff` rather than flake8 for linting"],
      [
        "Let's go with Postgres for the job queue instead of Redis.",
        "Let's go with Postgres for the job queue instead of Redis.",
      ],
    ]
    for (const [message, kept] of cases) expect(LearningDetect.detect(message)?.text).toBe(kept)
    // A bare judgement is a correction with nothing to remember.
    expect(LearningDetect.detect("That's wrong.")).toMatchObject({ kind: "correction", text: "" })
    expect(LearningDetect.detect("that's wrong, try again")?.text ?? "").not.toContain("wrong")
  })

  test("long messages and questions teach nothing", () => {
    expect(LearningDetect.detect("no, use pnpm " + "x ".repeat(2_000))).toBeUndefined()
    expect(LearningDetect.detect("Should we use pnpm instead of npm?")).toBeUndefined()
  })
})

describe("session learning: messages with pasted tool output (linter, compiler, test and log lines, traces, quotes)", () => {
  const pasted = Labelled.load("pasted")
  /** Learning vs no learning, whatever the kind: a pasted diagnostic taken for any learning is injected later. */
  const any = (items: readonly Labelled.Item[]) => {
    let tp = 0
    let fp = 0
    let fn = 0
    for (const item of items) {
      const got = detector(item.text)
      if (got && item.label !== "neutral") tp++
      else if (got) fp++
      else if (item.label !== "neutral") fn++
    }
    return { precision: tp / (tp + fp || 1), recall: tp / (tp + fn || 1) }
  }

  test("the set: ≥ 40 messages, half asking for help about a paste, half a lesson said around one", () => {
    expect(pasted.length).toBeGreaterThanOrEqual(40)
    expect(pasted.filter((m) => m.label === "neutral").length).toBe(pasted.length / 2)
    expect(new Set(pasted.map((m) => m.text)).size).toBe(pasted.length)
  })

  // Before the own-words filter (LearningPasted): correction P=0.667 R=0.941, 8 of 26 pastes taken for a learning.
  test("a paste is not a learning (P = 1); the lessons around pastes are still found (R ≥ 0.95)", () => {
    const r = Labelled.score(pasted, detector)
    console.log(line("pasted", r))
    const all = any(pasted)
    console.log(
      `any learning P=${all.precision.toFixed(3)} R=${all.recall.toFixed(3)} (pasted, ${pasted.length} messages)`,
    )
    expect(all.precision).toBe(1)
    expect(all.recall).toBeGreaterThanOrEqual(0.95)
    expect(r.correction.precision).toBeGreaterThanOrEqual(0.9)
    expect(r.correction.recall).toBeGreaterThanOrEqual(0.9)
    expect(any(Labelled.load("pasted-heldout"))).toEqual({ precision: 1, recall: 1 })
  })

  test("what is kept is the user's sentence, not the pasted lines", () => {
    for (const item of pasted.filter((m) => m.label !== "neutral")) {
      const text = LearningDetect.detect(item.text)?.text ?? ""
      expect(text).not.toMatch(/Traceback|^\s*\d+:\d+|\bno-var$|npm ERR!|\[warn\]|FAILED tests|WARNING: Use of/)
    }
    expect(
      LearningDetect.detect(
        "Wrong file — the config error\n> Error: Cannot find module './config.json'\ncomes from packages/api/src/config.ts, not the web app.",
      )?.text,
    ).toBe("Wrong file — the config error … comes from packages/api/src/config.ts, not the web app.")
  })
})
