import { describe, expect, test } from "bun:test"
import { DiscoveryMatch } from "../../discovery/match"

const docs: DiscoveryMatch.Doc[] = [
  { name: "code-reviewer", keywords: ["review", "quality"], description: "Reviews code changes for bugs and style" },
  { name: "release-notes", keywords: [], description: "Drafts release notes from merged pull requests" },
  { name: "deploy-staging", keywords: ["deploy"], description: "Deploys the branch to the staging cluster" },
  { name: "pdf-forms", keywords: [], description: "Fill in PDF forms" },
]

describe("DiscoveryMatch bm25f (the default)", () => {
  const index = DiscoveryMatch.index(docs)

  test("is the default strategy", () => {
    expect(index.strategy).toBe("bm25f")
    expect(DiscoveryMatch.STRATEGY).toBe("bm25f")
  })

  test("ranks by relevance and reports the prompt's words that matched, as written", () => {
    const hits = index.search("Please review my changes before merging")
    expect(hits[0]).toMatchObject({ index: 0, matched: ["review", "changes"] })
  })

  test("light stems: inflections meet, derivations only onto a word the catalogue has", () => {
    expect(index.search("deploying to staging")[0]).toMatchObject({ index: 2, matched: ["deploying", "staging"] })
    // "reviewer" folds onto "review" (the catalogue has it); "responsive" is not "response".
    expect(index.search("a reviewer")[0]?.index).toBe(0)
    const styles = DiscoveryMatch.index([
      { name: "incident-response", keywords: [], description: "Responds to outages" },
      { name: "css-layout", keywords: [], description: "Responsive layouts" },
    ])
    expect(styles.search("the page is not responsive").map((h) => h.index)).toEqual([1])
  })

  test("the lexicon: spellings fold (k8s, docs), phrases join, related words weigh half", () => {
    const infra = DiscoveryMatch.index([
      { name: "kubernetes-specialist", keywords: [], description: "Runs clusters" },
      { name: "doc-writer", keywords: [], description: "Writes documentation" },
      { name: "perf", keywords: [], description: "Performance profiling" },
      { name: "other", keywords: [], description: "Something else entirely" },
    ])
    expect(infra.search("deploy to k8s")[0]).toMatchObject({ index: 0, matched: ["k8s"] })
    expect(infra.search("update the docs")[0]).toMatchObject({ index: 1, matched: ["docs"] })
    // "slow" is related to "performance": matched at half weight, reported as the prompt's word.
    expect(infra.search("the page is slow")[0]).toMatchObject({ index: 2, matched: ["slow"] })
  })

  test("families of developer vocabulary: a symptom or one word of a family finds the others, at half weight", () => {
    const tools = DiscoveryMatch.index([
      { name: "troubleshoot", keywords: [], description: "Diagnose and resolve issues in builds" },
      { name: "dashboard-builder", keywords: [], description: "Builds charts" },
      { name: "profiler", keywords: [], description: "Finds bottlenecks in hot paths" },
    ])
    // "wrong" names the debugging family (debug, troubleshoot, diagnose, …): the troubleshooting command is found,
    // below the item the prompt names outright.
    const hits = tools.search("the dashboard shows wrong totals", { all: true })
    expect(hits.map((h) => h.index)).toEqual([1, 0])
    expect(hits[1].matched).toEqual(["wrong"])
    // One word of a family brings the rest: "speed" finds "bottlenecks" (performance).
    expect(tools.search("speed up this loop")[0]).toMatchObject({ index: 2, matched: ["speed"] })
  })

  test("a word's related words count as one: a description naming two of them scores as one naming one", () => {
    const two = DiscoveryMatch.index([
      { name: "a", keywords: [], description: "debug and troubleshoot" },
      { name: "b", keywords: [], description: "troubleshoot things" },
      { name: "c", keywords: [], description: "unrelated words here" },
      { name: "d", keywords: [], description: "more unrelated words" },
    ])
    const [a, b] = two.search("it is broken", { all: true })
    expect(a.index).toBe(0)
    // Without the grouping "a" would score about twice "b" (two terms matched): it scores about the same.
    expect(a.score / b.score).toBeLessThan(1.5)
  })

  test("a bare number names nothing; an HTTP error status (also plural) reads as an error", () => {
    const numbered = DiscoveryMatch.index([
      { name: "line-42", keywords: [], description: "Item 42" },
      { name: "error-handling", keywords: [], description: "Handles errors" },
    ])
    expect(numbered.search("see line 42")[0]?.index).toBe(0)
    expect(numbered.search("42")).toEqual([])
    expect(numbered.search("we get 502s")[0]?.index).toBe(1)
  })

  test("the first paragraph of the body is matched too, below the description", () => {
    const two = DiscoveryMatch.index([
      { name: "a", keywords: [], description: "", lead: "Security Scan\nFinds vulnerabilities" },
      { name: "b", keywords: [], description: "Unrelated" },
    ])
    expect(two.search("scan for vulnerabilities").map((h) => h.index)).toEqual([0])
  })

  test("hits far below the best are dropped; within a group the cut is stricter than across groups", () => {
    const grouped = DiscoveryMatch.index([
      { name: "release-manager", keywords: [], description: "Ships releases", group: "agent" },
      { name: "helper", keywords: [], description: "Ships things", group: "agent" },
      { name: "release-notes", keywords: [], description: "Drafts notes", group: "skill" },
      { name: "x", keywords: [], description: "Unrelated", group: "skill" },
    ])
    const hits = grouped.search("ship the release with notes")
    expect(hits.map((h) => h.index).sort()).toEqual([0, 2])
    const all = grouped.search("ship the release with notes", { all: true })
    expect(all.map((h) => h.index)).toContain(1)
    expect(grouped.select(all)).toEqual(hits)
  })

  test("no shared word, only stop words or chatter, or an empty catalogue: no hit", () => {
    expect(index.search("what is the capital of Australia")).toEqual([])
    expect(index.search("can you help me with this please")).toEqual([])
    expect(index.search("thanks, that's all, looks good")).toEqual([])
    // A reply with an acknowledgement and only talk about the conversation asks for nothing (Keywords.chatter).
    expect(index.search("nice work on the review!")).not.toEqual([])
    expect(
      DiscoveryMatch.index([{ name: "work", keywords: [], description: "Work log" }]).search("nice work!"),
    ).toEqual([])
    expect(DiscoveryMatch.index([]).search("review")).toEqual([])
  })

  test("one or two words that no name and no lexicon entry holds get nothing, even when a description has them", () => {
    const catalogue = DiscoveryMatch.index([
      ...docs,
      { name: "raffle-picker", keywords: [], description: "Picks a fair winner, which makes sense for giveaways" },
    ])
    // Description words only: a reply, not a request.
    expect(catalogue.search("fair enough")).toEqual([])
    expect(catalogue.search("makes sense")).toEqual([])
    // A word of a name, or of the developer lexicon, is a topic: the same length still gets its suggestion.
    expect(catalogue.search("raffle please").map((h) => h.index)).toEqual([4])
    expect(catalogue.search("fair raffle").map((h) => h.index)).toEqual([4])
    expect(catalogue.search("deploy staging").map((h) => h.index)).toEqual([2])
    // More than UNTOPICAL_WORDS words: matched as before.
    expect(DiscoveryMatch.UNTOPICAL_WORDS).toBe(2)
    expect(catalogue.search("is the winner fair enough").map((h) => h.index)).toEqual([4])
  })

  test("a word that every item contains makes no suggestion on its own (minScore)", () => {
    const all = DiscoveryMatch.index([
      // "tests" is a word of the lexicon (a topic), so only minScore keeps it quiet on its own.
      { name: "a", keywords: [], description: "tests lint" },
      { name: "b", keywords: [], description: "tests format" },
    ])
    expect(all.search("tests")).toEqual([])
    expect(all.search("tests lint").map((h) => h.index)).toEqual([0])
    expect(
      DiscoveryMatch.index([{ name: "a", keywords: [], description: "Reviews code" }]).search("review"),
    ).toHaveLength(1)
  })

  test("at most maxHits, whatever the catalogue", () => {
    const many = DiscoveryMatch.index([
      ...Array.from({ length: 12 }, (_, i) => ({ name: `lint-${i}`, keywords: [], description: "Runs the linter" })),
      ...Array.from({ length: 40 }, (_, i) => ({ name: `other-${i}`, keywords: [], description: "Something else" })),
    ])
    expect(many.search("run the linter")).toHaveLength(DiscoveryMatch.FIELD_TUNING.maxHits)
  })
})

describe("DiscoveryMatch bm25 (the earlier matcher, for comparison)", () => {
  const index = DiscoveryMatch.index(docs, "bm25")

  test("ranks by relevance and reports the prompt's words that matched, as written", () => {
    const hits = index.search("Please review my changes before merging")
    expect(hits[0]).toMatchObject({ index: 0, matched: ["review", "changes"] })
    expect(hits[0].score).toBeGreaterThan(0)
  })

  test("stemming: inflected forms meet (deploying → deploys)", () => {
    expect(index.search("deploying to staging")[0]).toMatchObject({ index: 2, matched: ["deploying", "staging"] })
  })

  test("the name weighs more than the description", () => {
    const two = DiscoveryMatch.index(
      [
        { name: "helper", keywords: [], description: "Writes release notes" },
        { name: "release-helper", keywords: [], description: "Writes notes" },
        { name: "other", keywords: [], description: "Unrelated" },
      ],
      "bm25",
    )
    expect(two.search("release")[0].index).toBe(1)
  })

  test("hits below half of the best score are dropped (relevance floor)", () => {
    const hits = index.search("fill in the pdf forms and review")
    expect(hits.map((h) => h.index)).toEqual([3])
    const floor = DiscoveryMatch.index(docs, "bm25", { ...DiscoveryMatch.TUNING, relativeCut: 0 })
    expect(floor.search("fill in the pdf forms and review").map((h) => h.index)).toEqual([3, 0])
  })

  test("no shared word, only stop words, or an empty catalogue: no hit", () => {
    expect(index.search("what is the capital of Australia")).toEqual([])
    expect(index.search("can you help me with this please")).toEqual([])
    expect(DiscoveryMatch.index([]).search("review")).toEqual([])
  })

  test("each prompt word counts once; results are sorted by score, then catalogue order", () => {
    const hits = index.search("review review review")
    expect(hits[0].matched).toEqual(["review"])
    const same = DiscoveryMatch.index(
      [
        { name: "a", keywords: [], description: "lint" },
        { name: "b", keywords: [], description: "lint" },
        { name: "c", keywords: [], description: "format" },
      ],
      "bm25",
    ).search("lint")
    expect(same.map((h) => h.index)).toEqual([0, 1])
  })

  test("a word that every item contains makes no suggestion on its own (MIN_SCORE)", () => {
    const all = DiscoveryMatch.index(
      [
        { name: "a", keywords: [], description: "code lint" },
        { name: "b", keywords: [], description: "code format" },
      ],
      "bm25",
    )
    expect(all.search("code")).toEqual([])
    expect(all.search("code lint").map((h) => h.index)).toEqual([0])
  })

  test("only the first MAX_PROMPT_CHARS of a huge prompt are considered", () => {
    const prompt = "x ".repeat(10_000) + "review"
    expect(index.search(prompt)).toEqual([])
  })
})

describe("DiscoveryMatch plain (plain BM25 over name and description: the baseline)", () => {
  test("no floor: every hit, best first; keywords are not read", () => {
    const plain = DiscoveryMatch.index(docs, "plain")
    expect(plain.strategy).toBe("plain")
    expect(plain.search("fill in the pdf forms and review").map((h) => h.index)).toEqual([3, 0])
    expect(plain.search("quality")).toEqual([])
  })
})

describe("DiscoveryMatch overlap strategies (the spec's keyword overlap, for comparison)", () => {
  test("overlap: score = number of the item's keywords found in the prompt, exact words", () => {
    const overlap = DiscoveryMatch.index(docs, "overlap")
    expect(overlap.search("review quality please")).toEqual([{ index: 0, score: 2, matched: ["review", "quality"] }])
    expect(overlap.search("reviewing")).toEqual([])
  })

  test("overlap-stem: the same on stems", () => {
    const stem = DiscoveryMatch.index(docs, "overlap-stem")
    expect(stem.search("reviewing")).toEqual([{ index: 0, score: 1, matched: ["reviewing"] }])
  })
})
