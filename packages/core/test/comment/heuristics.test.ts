import { describe, expect, test } from "bun:test"
import { CommentHeuristics } from "../../comment/heuristics"

describe("comment heuristics", () => {
  test("obvious: the PRD's six patterns, and the added narration verbs", () => {
    for (const text of [
      "Initialize the counter",
      "Create a new user",
      "Return the result",
      "Log the error",
      "Loop through the items",
      "Iterate over the keys",
      "Check if the list is empty",
      "Validate the input",
      "Import React",
      "Function to parse the config",
      "Increment the count",
      "Add the price to the sum",
      "Set count to zero",
      "This function adds two numbers",
      "Helper function to sleep",
      "Constructor",
    ])
      expect([text, CommentHeuristics.obvious(text)]).toEqual([text, true])
  })

  test("not obvious: explanations, long sentences, directives, markers", () => {
    for (const text of [
      "Retry with backoff because the registry rate-limits bursts",
      "Check that the path exists before reading, since stat may race with the writer and fail later",
      "eslint-disable-next-line no-console",
      "TODO: return the cached value once invalidation works",
      "@ts-expect-error the types lag behind",
      "Constants",
      "The result of this call is cached for the whole session",
    ])
      expect([text, CommentHeuristics.obvious(text)]).toEqual([text, false])
  })

  test("restates: within 30% Levenshtein of the next line after splitting identifiers and dropping filler", () => {
    expect(CommentHeuristics.normalize("return this.userName;")).toBe("return user name")
    expect(CommentHeuristics.restates("return the result", "return result")).toBe(true)
    expect(CommentHeuristics.restates("get user name", "const userName = getUserName()")).toBe(false)
    expect(CommentHeuristics.restates("return a + b", "return a + b")).toBe(true)
    expect(CommentHeuristics.restates("Set the user name", "setUserName(name)")).toBe(false) // the argument adds a word
    expect(CommentHeuristics.restates("ok", "ok")).toBe(false) // too short to judge
    expect(CommentHeuristics.restates("Cache misses fall back to disk", "return readDisk(key)")).toBe(false)
  })

  test("density: annotation lines among added non-blank lines only", () => {
    const kinds = ["comment", "code", "comment", "code", "blank", "code"] as const
    const d = CommentHeuristics.density({
      kinds: [...kinds],
      added: [true, true, false, false, true, true],
      annotations: new Set([0, 2]),
    })
    expect(d).toEqual({ comments: 1, lines: 3, ratio: 1 / 3 })
  })

  test("sensitivity: the PRD's thresholds, and false switches the checker off", () => {
    expect(CommentHeuristics.THRESHOLDS.strict.density).toBe(0.15)
    expect(CommentHeuristics.THRESHOLDS.normal.density).toBe(0.3)
    expect(CommentHeuristics.THRESHOLDS.relaxed.density).toBe(0.5)
    expect([1, 3, 5]).toEqual(
      ["strict", "normal", "relaxed"].map((l) => CommentHeuristics.THRESHOLDS[l as "strict"].obvious),
    )
    expect(CommentHeuristics.Sensitivity.safeParse(false).success).toBe(true)
    expect(CommentHeuristics.Sensitivity.safeParse("loud").success).toBe(false)
    expect(CommentHeuristics.Sensitivity.safeParse(true).success).toBe(false)
  })
})
