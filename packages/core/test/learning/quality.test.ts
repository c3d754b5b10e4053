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

  test("long pastes and questions teach nothing", () => {
    expect(LearningDetect.detect("no, use pnpm " + "x ".repeat(2_000))).toBeUndefined()
    expect(LearningDetect.detect("Should we use pnpm instead of npm?")).toBeUndefined()
  })
})
