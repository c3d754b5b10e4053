import { describe, expect, test } from "bun:test"
import { LearningDetect } from "../../learning/detect"
import { LearningPasted } from "../../learning/pasted"

describe("LearningPasted.ownWords", () => {
  test("the messages of the tester's report (F6) are pastes asking for help: nothing is learned", () => {
    for (const message of [
      "eslint reports this, can you fix it?\n  3:1  error  Unexpected var, use let or const instead  no-var",
      "Getting this in the logs:\nPydanticDeprecatedSince20: The `dict` method is deprecated; use `model_dump` instead. Deprecated in Pydantic V2.0 to be removed in V3.0.",
      "tsc: error TS2304: Cannot find name 'describe'. Do you need to install type definitions for a test runner? Try `npm i --save-dev @types/jest`",
      "ruff: UP035 `typing.List` is deprecated, use `list` instead",
      "The error says: use of undefined variable 'x' — instead use a local",
    ])
      expect(LearningDetect.detect(message)).toBeUndefined()
  })

  test("fenced blocks, > quotes, indented blocks, diagnostics and introduced lines are taken out", () => {
    const cases: [string, string][] = [
      ["before\n```ts\nvar x = 1 // use const instead\n```\nafter", "before\n…\nafter"],
      ["before\n~~~\nunclosed fence\nno, use npm", "before"],
      ["> Do not use npm here\nwhat does that mean", "what does that mean"],
      ["see:\n    at com.example.Repo.load(Repo.java:51)\n\tat main (a.js:1:2)\nok", "see:\n…\nok"],
      ["src/index.ts(12,5): error TS2322: Type 'string' is not assignable\nwhy", "why"],
      ["app/views.py:3:1: F401 'os' imported but unused\nfix", "fix"],
      ["--> src/db.rs:14:9\n14 |     let conn = pool.get()?;\n   |         ^^^^ help: prefix it\nhm", "hm"],
      [
        "DeprecationWarning: use X instead\nFutureWarning: use Y instead\nnpm WARN deprecated a: do not use it\nok",
        "ok",
      ],
      ["[warn] Run Prettier with --write\n##[error]Do not use npm ci\nERROR use pnpm\nok", "ok"],
      ["FAILED tests/a.py::t - assert 1 == 2\nE       assert 1 == 2\n● Test suite failed to run\nok", "ok"],
      ['Traceback (most recent call last):\n  File "a.py", line 1, in <module>\nValueError: bad\nok', "ok"],
      ['SC2115 (warning): Use "${var:?}" to ensure this never expands\nok', "ok"],
      ["mypy says: app/models.py:88: error: Incompatible return value\nhow", "how"],
      ["The error says: use of undefined variable 'x'", "The error says:"],
      [
        "Getting this in the logs:\nsomething went wrong, use the fallback\n\nno, use pnpm",
        "Getting this in the logs:\n\n…\nno, use pnpm",
      ],
      ["that's why alembic says\nFAILED: Path doesn't exist", "that's why alembic says"],
    ]
    for (const [message, own] of cases) expect(LearningPasted.ownWords(message)).toBe(own)
  })

  test("the user's own words stay: sentences with code spans, list items, headings, names of standards", () => {
    const own = [
      "We don't use `var` anywhere, use `const`.",
      "You keep adding `any` to get past `error TS7006: Parameter 'x' implicitly has an 'any' type.` Write the type.",
      "Rules:\n- use pnpm, not npm\n  - never push to main",
      "Important:\nnever push to main directly, open a pull request",
      "Decision: ES2022 target for the build, not ES2017.",
      "Use RFC3339 timestamps, not unix seconds.",
      "no, the config lives in config/app.yaml, not in the root",
      "Stop using `var`. It's 2024. let/const only.",
    ]
    for (const message of own) expect(LearningPasted.ownWords(message)).toBe(message)
    expect(LearningDetect.detect("Rules:\n- use pnpm, not npm")?.kind).toBe("correction")
    expect(LearningDetect.detect("Important:\nwe don't push to main directly")?.kind).toBe("correction")
    expect(LearningDetect.detect("Decision: ES2022 target for the build, not ES2017.")?.kind).toBe("decision")
  })

  test("code spans and strings quoted after 'says' are not read for cues, but are kept in the statement", () => {
    expect(LearningPasted.masked("clippy says `use a custom Error type instead`.")).toBe("clippy says `x`.")
    expect(LearningPasted.masked('The linter says "Prefer X over Y, use Z instead".')).toBe('The linter says "x".')
    expect(LearningDetect.detect("clippy suggests `use a custom Error type instead`. worth doing?")).toBeUndefined()
    expect(LearningDetect.detect("no, use `pnpm` instead of `npm`")?.text).toBe("Use `pnpm` instead of `npm`")
  })

  test("a huge message is not looked through; own words over the limit are not examined", () => {
    expect(LearningDetect.detect("no, use pnpm\n" + "  3:1  error  x  no-var\n".repeat(5_000))).toBeUndefined()
    expect(LearningDetect.detect("no, use pnpm\n" + "  3:1  error  x  no-var\n".repeat(100))?.text).toBe("Use pnpm")
  })
})
