// Standing rules are learnings; instructions scoped to the moment or to the task at hand are not. A real-world tester
// (U-F8) saw ordinary end-of-task replies stored as corrections and injected into every later session ("Don't push
// yet." as a standing rule). Every message below is named in a table: what is refused, and what is kept and how.
import { describe, expect, test } from "bun:test"
import { LearningDetect } from "../../learning/detect"

/** Messages that teach nothing lasting: no learning. */
const REFUSED: [string, string][] = [
  // The tester's three (U-F8).
  ["Looks good. Don't push yet.", "praise, then a directive scoped by 'yet'"],
  ["Thanks, that works! Don't change anything else.", "'anything else': the task at hand"],
  ["Great, don't touch it for now.", "'for now'"],
  // The same class, said other ways.
  ["No, don't push yet.", "an opening 'no' before a scoped directive"],
  ["No, don't push yet. I need to check something.", "nothing standing after the scoped directive"],
  ["Don't merge it until I review it.", "'until I review'"],
  ["Please don't run the migrations today.", "'today'"],
  ["Don't commit this time, I'll do it.", "'this time'"],
  ["OK, don't touch anything else in that file.", "'anything else'"],
  ["Don't deploy right now, the freeze is on.", "'right now'"],
  ["I don't want you to touch it for now.", "'for now'"],
  ["That's wrong, don't change anything else.", "a judgement, then a scoped directive: nothing to keep"],
  ["Use the staging database for this run.", "'for this run'"],
  ["Don't worry about the warnings for now.", "reassurance (was already refused)"],
  // Reminders and questions are not facts to keep.
  ["Remember to update the changelog.", "a reminder of a task"],
  ["Remember that bug from yesterday?", "a question"],
  ["Remember: I'm out tomorrow.", "no rule, and scoped"],
  ["Do you use tabs?", "a question opening with 'do'"],
]

/** Standing rules and facts: a learning of this kind, keeping this text. */
const ACCEPTED: [string, LearningDetect.Kind, string][] = [
  ["don't use any, use unknown", "correction", "Don't use any, use unknown"],
  ["never commit to main", "preference", "Never commit to main"],
  // The tester's recall notes: each gave nothing before.
  ["Do not use any; use unknown instead", "correction", "Do not use any; use unknown instead"],
  ["I don't want you to touch the migrations folder", "correction", "I don't want you to touch the migrations folder"],
  ["Remember: all dates are UTC in the API.", "decision", "All dates are UTC in the API."],
  ["Keep in mind that the staging database is shared with QA.", "decision", "The staging database is shared with QA."],
  ["Do not add comments to the generated files.", "correction", "Do not add comments to the generated files."],
  // A standing rule said with praise or with a scoped instruction: kept without them.
  ["Perfect, thanks. Don't use default exports in this repo.", "correction", "Don't use default exports in this repo."],
  [
    "Looks good. From now on, always run the linter before committing.",
    "preference",
    "From now on, always run the linter before committing.",
  ],
  ["No, use pnpm instead of npm. Don't push yet.", "correction", "Use pnpm instead of npm."],
  ["Thanks! No, use pnpm instead of npm. Don't push yet.", "correction", "Use pnpm instead of npm."],
  ["No, don't push yet. We use pnpm here, not npm.", "correction", "We use pnpm here, not npm."],
  // Not scoped: a condition that is not the user's say-so, "yet another", a word in a code span.
  ["Don't merge until the CI is green.", "correction", "Don't merge until the CI is green."],
  ["Never use yet another wrapper library.", "preference", "Never use yet another wrapper library."],
  [
    "Don't call `clock.today()` in tests, use the fake clock.",
    "correction",
    "Don't call `clock.today()` in tests, use the fake clock.",
  ],
  // A decision is the project's even "for now" (labelled so in the held-out set).
  [
    "Decision: the public API stays REST, no GraphQL for now.",
    "decision",
    "Decision: the public API stays REST, no GraphQL for now.",
  ],
]

describe("session learning: standing rules, not instructions for the moment", () => {
  test.each(REFUSED)("refused: %p (%s)", (message) => {
    expect(LearningDetect.detect(message)).toBeUndefined()
  })

  test.each(ACCEPTED)("accepted: %p as a %s", (message, kind, text) => {
    expect(LearningDetect.detect(message)).toMatchObject({ kind, text })
  })

  test("a bare judgement is still recognised, with nothing to keep", () => {
    expect(LearningDetect.detect("That's wrong.")).toMatchObject({ kind: "correction", text: "" })
  })
})
