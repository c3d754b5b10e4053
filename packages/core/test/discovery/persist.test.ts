import { describe, expect, test } from "bun:test"
import { DiscoveryMatch } from "../../discovery/match"

const VOCAB = (
  "review reviewer reviews code security audit auditor test testing coverage deploy deployment staging release " +
  "releases notes changelog database query index migration migrations kubernetes k8s helm docker dockerize image " +
  "build performance optimization optimize profile memory leak react component layout accessibility api endpoint " +
  "graphql schema python rust typescript refactor legacy incident outage logs metrics alert pdf spreadsheet slides"
).split(" ")

/** Documents with names, descriptions, leads and bodies drawn from one vocabulary (derived forms included). */
function documents(count: number): DiscoveryMatch.Doc[] {
  let seed = 11
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const words = (n: number) => Array.from({ length: n }, () => VOCAB[Math.floor(rand() * VOCAB.length)]).join(" ")
  const groups = ["agent", "command", "skill", "outputStyle", "resource"]
  return Array.from({ length: count }, (_, i) => ({
    name: `${words(2).replace(" ", "-")}-${i}`,
    keywords: i % 7 === 0 ? words(3).split(" ") : [],
    explicitKeywords: i % 7 === 0,
    description: words(14),
    lead: i % 3 ? words(8) : undefined,
    body: i % 2 ? words(200) : undefined,
    group: groups[i % groups.length],
  }))
}

const PROMPTS = [
  "review the security of the api before the release",
  "the react component layout is broken, fix accessibility",
  "profile the slow database query and add an index",
  "dockerize the service and deploy it to k8s with helm",
  "write the release notes and the changelog",
  "thanks, that's all",
]

describe("DiscoveryMatch snapshot and restore", () => {
  test("an index restored from its snapshot ranks exactly as the index built from the documents", () => {
    const docs = documents(300)
    const built = DiscoveryMatch.index(docs)
    const kept = DiscoveryMatch.snapshot(built)!
    expect(kept.size).toBe(300)
    // Through plain data, as a cache on disk holds it.
    const copy: DiscoveryMatch.Snapshot = {
      size: kept.size,
      vocabulary: new Set(JSON.parse(JSON.stringify([...kept.vocabulary]))),
      postings: new Map(JSON.parse(JSON.stringify([...kept.postings]))),
    }
    // Fresh document objects: nothing tokenized is shared with the first index.
    const restored = DiscoveryMatch.restore(documents(300), copy)
    for (const prompt of PROMPTS) {
      expect(restored.search(prompt)).toEqual(built.search(prompt))
      expect(restored.search(prompt, { all: true })).toEqual(built.search(prompt, { all: true }))
      const all = built.search(prompt, { all: true })
      expect(restored.select(all.slice(1), { relativeCut: 0.3 })).toEqual(
        built.select(all.slice(1), { relativeCut: 0.3 }),
      )
    }
    expect(built.search(PROMPTS[0]).length).toBeGreaterThan(0)
  })

  test("a snapshot of another number of documents is refused; other strategies have none", () => {
    const kept = DiscoveryMatch.snapshot(DiscoveryMatch.index(documents(20)))!
    expect(() => DiscoveryMatch.restore(documents(21), kept)).toThrow(RangeError)
    expect(DiscoveryMatch.snapshot(DiscoveryMatch.index(documents(20), "bm25"))).toBeUndefined()
  })
})
