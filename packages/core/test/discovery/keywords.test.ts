import { describe, expect, test } from "bun:test"
import { Keywords } from "../../discovery/keywords"

describe("Keywords.words", () => {
  test("lower case, split on punctuation, kebab, snake and camel case; stop words and single letters dropped", () => {
    expect(Keywords.words("Please review my pull-request for the DB_migrator and parseHTTPResponse")).toEqual([
      "review",
      "pull",
      "request",
      "db",
      "migrator",
      "parse",
      "http",
      "response",
    ])
  })

  test("digits and non-Latin letters are words; a lone digit is kept", () => {
    expect(Keywords.words("v2 build 3 für Käse")).toEqual(["v2", "build", "3", "für", "käse"])
  })

  test("a prompt of stop words only has no words", () => {
    expect(Keywords.words("can you help me with this, please?")).toEqual([])
  })
})

describe("Keywords.stem", () => {
  test("Porter stems, so inflections meet", () => {
    expect(Keywords.stem("reviewing")).toBe(Keywords.stem("reviews"))
    expect(Keywords.stem("deployment")).toBe(Keywords.stem("deployments"))
    expect(Keywords.terms("Reviewer reviews")).toEqual([Keywords.stem("reviewer"), Keywords.stem("reviews")])
  })

  test("numbers and words of three letters or fewer are kept as they are", () => {
    expect(Keywords.stem("2024")).toBe("2024")
    expect(Keywords.stem("css")).toBe("css")
  })
})

describe("Keywords.light and lightTerms (the bm25f matcher's words)", () => {
  test("plurals, -ing and -ed are removed, a final e dropped; derivations stay apart", () => {
    const same = (a: string, b: string) => expect(Keywords.light(a)).toBe(Keywords.light(b))
    same("tests", "testing")
    same("debugging", "debug")
    same("deployed", "deploys")
    same("writing", "write")
    same("dependencies", "dependency")
    same("patches", "patch")
    expect(Keywords.light("responsive")).not.toBe(Keywords.light("response"))
    expect(Keywords.light("status")).toBe("status")
    expect(Keywords.light("analysis")).toBe("analysis")
    expect(Keywords.light("speed")).toBe("speed")
    expect(Keywords.light("class")).toBe("class")
  })

  test("phrases join, spellings fold, chatter is no word", () => {
    expect(Keywords.lightTerms("Write end-to-end tests for k8s").map((t) => t.term)).toEqual([
      Keywords.light("write"),
      "e2e",
      "test",
      Keywords.light("kubernetes"),
    ])
    expect(Keywords.lightTerms("Write end-to-end tests for k8s").map((t) => t.word)).toEqual([
      "write",
      "e2e",
      "tests",
      "k8s",
    ])
    expect(Keywords.lightTerms("thanks, that's all, looks good to me")).toEqual([])
    expect(Keywords.termOf("docs")).toBe(Keywords.termOf("documentation"))
  })

  // A phrasal verb is the noun that names the doc or tool ("times out" → Timeouts, httpx's docs), in any inflection.
  test.each([
    ["when a request times out", "timeout"],
    ["the job timed out twice", "timeout"],
    ["rolled back the migration", "rollback"],
    ["shutting down the worker", "shutdown"],
    ["tearing down fixtures", "teardown"],
  ])("the phrasal verb in %p reads as %p", (text, term) =>
    expect(Keywords.lightTerms(text).map((t) => t.term)).toContain(term),
  )
  // Not joined: "log in the handler" is a log; "set up" and "clean up" are activities, not the things named setup or
  // cleanup (joined, they cost the tuning set's precision: docs/discovery.md).
  test.each(["add a log in the handler", "set up CI", "clean up this function"])("%p keeps its words apart", (text) =>
    expect(Keywords.lightTerms(text).map((t) => t.term)).not.toContainAnyValues(["login", "setup", "cleanup"]),
  )
})

describe("Keywords.chatter", () => {
  test("a reply that acknowledges and asks for nothing is chatter; one that asks for something is not", () => {
    for (const reply of [
      "nice work!",
      "hmm, let me think about it",
      "ok",
      "thanks a lot",
      "great job",
      "ok, wait a sec",
    ])
      expect(Keywords.chatter(reply)).toBe(true)
    for (const request of [
      "ok, now review the diff",
      "thanks! can you deploy it",
      "ugh, tests are red again",
      "work on the login page",
      "think through the cache design",
      "",
    ])
      expect(Keywords.chatter(request)).toBe(false)
  })

  test("a reply of a few words that name no topic is chatter; one naming a topic, or a longer one, is not", () => {
    const topics = new Set(["review", "diff", "deploy", "test", "tests", "fair"])
    const topical = (w: string) => topics.has(w)
    for (const reply of ["alright, I'll take it from here", "haha true enough", "lgtm", "appreciate it", "roger that"])
      expect(Keywords.chatter(reply, topical)).toBe(true)
    for (const request of [
      // a topic word: the reply may ask for something
      "ok, now review the diff",
      "alright, deploy it",
      "haha fair enough",
      // more than REPLY_WORDS other words
      "ok, take the cache layer apart and rebuild it",
      // talk about the conversation without an acknowledgement, with other words: a request
      "wait, the login page crashes",
      // no acknowledgement or conversation word at all
      "take it from here",
    ])
      expect(Keywords.chatter(request, topical)).toBe(false)
  })
})

describe("Keywords.extract", () => {
  test("explicit keywords win, split into words, distinct", () => {
    expect(
      Keywords.extract({ name: "x", description: "Reviews code", explicit: ["Pattern matching", "regex", "regex"] }),
    ).toEqual({ keywords: ["pattern", "matching", "regex"], source: "explicit" })
  })

  test("else the description's distinct words", () => {
    expect(Keywords.extract({ name: "x", description: "Reviews code and reviews tests" })).toEqual({
      keywords: ["reviews", "code", "tests"],
      source: "description",
    })
  })

  test("else the name (file name) — also when explicit keywords are only stop words", () => {
    expect(Keywords.extract({ name: "lint-fix", description: "" })).toEqual({
      keywords: ["lint", "fix"],
      source: "filename",
    })
    expect(Keywords.extract({ name: "db-migrate", description: "", explicit: ["the", "and"] }).source).toBe("filename")
  })

  test("at most 100 keywords, first occurrences first", () => {
    const description = Array.from({ length: 150 }, (_, i) => `word${i}`).join(" ")
    const out = Keywords.extract({ name: "x", description })
    expect(out.keywords).toHaveLength(100)
    expect(out.keywords[0]).toBe("word0")
    expect(out.keywords[99]).toBe("word99")
  })
})
