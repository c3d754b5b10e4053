import { describe, expect, test } from "bun:test"
import { DiscoveryMatch } from "../../discovery/match"

const docs: DiscoveryMatch.Doc[] = [
  { name: "code-reviewer", keywords: ["review", "quality"], description: "Reviews code changes for bugs and style" },
  { name: "release-notes", keywords: [], description: "Drafts release notes from merged pull requests" },
  { name: "deploy-staging", keywords: ["deploy"], description: "Deploys the branch to the staging cluster" },
  { name: "pdf-forms", keywords: [], description: "Fill in PDF forms" },
]

describe("DiscoveryMatch bm25 (the default)", () => {
  const index = DiscoveryMatch.index(docs)

  test("is the default strategy", () => {
    expect(index.strategy).toBe("bm25")
    expect(DiscoveryMatch.STRATEGY).toBe("bm25")
  })

  test("ranks by relevance and reports the prompt's words that matched, as written", () => {
    const hits = index.search("Please review my changes before merging")
    expect(hits[0]).toMatchObject({ index: 0, matched: ["review", "changes"] })
    expect(hits[0].score).toBeGreaterThan(0)
  })

  test("stemming: inflected forms meet (deploying → deploys)", () => {
    expect(index.search("deploying to staging")[0]).toMatchObject({ index: 2, matched: ["deploying", "staging"] })
  })

  test("the name weighs more than the description", () => {
    const two = DiscoveryMatch.index([
      { name: "helper", keywords: [], description: "Writes release notes" },
      { name: "release-helper", keywords: [], description: "Writes notes" },
      { name: "other", keywords: [], description: "Unrelated" },
    ])
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
    const same = DiscoveryMatch.index([
      { name: "a", keywords: [], description: "lint" },
      { name: "b", keywords: [], description: "lint" },
      { name: "c", keywords: [], description: "format" },
    ]).search("lint")
    expect(same.map((h) => h.index)).toEqual([0, 1])
  })

  test("a word that every item contains makes no suggestion on its own (MIN_SCORE)", () => {
    const all = DiscoveryMatch.index([
      { name: "a", keywords: [], description: "code lint" },
      { name: "b", keywords: [], description: "code format" },
    ])
    expect(all.search("code")).toEqual([])
    expect(all.search("code lint").map((h) => h.index)).toEqual([0])
  })

  test("only the first MAX_PROMPT_CHARS of a huge prompt are considered", () => {
    const prompt = "x ".repeat(10_000) + "review"
    expect(index.search(prompt)).toEqual([])
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
