// Red team Z4-5: what the user quotes after a stop (a README line, an error, a tool's output) read as new work, so a
// real stop was taken for a redirection and continuation went on.
import { describe, expect, test } from "bun:test"
import { ContinuationText } from "../../continuation/text"

describe("a stop followed by what the user quotes", () => {
  for (const t of [
    "Stop. The README says: run npm install first",
    "stop, the error says the config must be valid",
    "stop! it printed: fix the lint errors",
    "hold on, the linter reported: remove unused imports",
  ])
    test(`${JSON.stringify(t)} is a stop`, () => expect(ContinuationText.userStops(t)).toBe(true))

  // Work the user gives after quoting, or around a reporting word, is still a redirection.
  for (const t of [
    "stop, the endpoint returns 500, fix it",
    "hold on, now fix what the linter reports",
    "wait, the README says to run npm install first, so run it",
  ])
    test(`${JSON.stringify(t)} is a redirection`, () => expect(ContinuationText.userStops(t)).toBe(false))
})
