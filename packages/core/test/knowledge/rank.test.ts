import { describe, expect, test } from "bun:test"
import { Keywords } from "../../discovery/keywords"
import { KnowledgeBuild } from "../../knowledge/build"
import type { Resource } from "../../resource/schema"
import fixture from "./fixtures/fastmcp-servers.json"

/**
 * fastmcp's docs/servers (39 articles, as the resource loader reads them) with real-style prompts labelled with the
 * articles they need (`expected`, counted for recall) and others a reader would not mind (`acceptable`); 9 prompts
 * need none. Precision: injected articles that are expected or acceptable.
 */
const articles = fixture.articles.map(
  (a) =>
    ({
      ...a,
      type: "knowledge-base",
      path: `/kb/${a.id}.mdx`,
      relativePath: `.opencode/knowledge-base/${a.id}.mdx`,
      domain: "docs",
      references: [],
      referencedBy: [],
      size: 1,
      lastModified: 0,
    }) as Resource.Metadata,
)

type Ranker = (prompt: string, resources: readonly Resource.Metadata[]) => Resource.Metadata[]

function measure(rank: Ranker) {
  let injected = 0
  let good = 0
  let expected = 0
  let found = 0
  let unrelated = 0
  let clean = 0
  for (const p of fixture.prompts) {
    const got = rank(p.prompt, articles).map((r) => r.id)
    const ok = new Set([...p.expected, ...p.acceptable])
    injected += got.length
    good += got.filter((id) => ok.has(id)).length
    expected += p.expected.length
    found += p.expected.filter((id) => got.includes(id)).length
    if (!p.expected.length) {
      unrelated++
      if (!got.length) clean++
    }
  }
  return { precision: good / (injected || 1), recall: found / expected, injected, unrelated, clean }
}

/** The ranking before (tester F7): any article sharing one word with the prompt, most shared words first. */
const overlap: Ranker = (prompt, resources) => {
  const wanted = new Set(Keywords.terms(prompt))
  return resources
    .map((r) => {
      const hay = new Set(Keywords.terms([r.id, r.name, r.tags.join(" "), r.description ?? ""].join(" ")))
      return { r, score: [...wanted].filter((t) => hay.has(t)).length }
    })
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || (a.r.id < b.r.id ? -1 : 1))
    .map((x) => x.r)
}

const line = (name: string, m: ReturnType<typeof measure>) =>
  `${name}: precision ${m.precision.toFixed(3)} (${m.injected} injected), recall ${m.recall.toFixed(3)}, ` +
  `${m.clean}/${m.unrelated} unrelated prompts get nothing`

describe("knowledge injection: which articles are relevant to the prompt (fastmcp docs/servers)", () => {
  test("the fixture: 39 articles, ≥ 30 labelled prompts, some needing no article", () => {
    expect(articles).toHaveLength(39)
    expect(fixture.prompts.length).toBeGreaterThanOrEqual(30)
    expect(fixture.prompts.filter((p) => !p.expected.length).length).toBeGreaterThanOrEqual(8)
    const ids = new Set(articles.map((a) => a.id))
    for (const p of fixture.prompts) for (const id of [...p.expected, ...p.acceptable]) expect(ids.has(id)).toBe(true)
  })

  test("ranked by relevance: precision ≥ 0.75 and recall ≥ 0.80; ≥ 7 of 9 unrelated prompts get nothing", () => {
    const now = measure(KnowledgeBuild.rankResources)
    const before = measure(overlap)
    console.log(line("rankResources", now))
    console.log(line("baseline: shared words", before))
    expect(now.precision).toBeGreaterThanOrEqual(0.75)
    expect(now.recall).toBeGreaterThanOrEqual(0.8)
    expect(now.clean).toBeGreaterThanOrEqual(7)
    // The baseline injected 364 articles for 36 prompts, 13% of them relevant.
    expect(before.precision).toBeLessThan(0.2)
  })

  test("the tester's prompts: unrelated ones get no article, the logging-middleware one gets the middleware article first", () => {
    for (const prompt of [
      "Fix the failing test in src/git/tests/test_server.py",
      "Add a --verbose flag to the fetch CLI",
      "hello",
    ])
      expect(KnowledgeBuild.rankResources(prompt, articles)).toEqual([])
    const ids = KnowledgeBuild.rankResources("How do I add logging middleware to my FastMCP server?", articles).map(
      (r) => r.id,
    )
    expect(ids[0]).toBe("middleware")
    expect(ids.length).toBeLessThanOrEqual(3)
    // One word of a title no other title has is enough; one word several titles share is not.
    expect(KnowledgeBuild.rankResources("How does pagination work?", articles).map((r) => r.id)).toEqual(["pagination"])
  })

  test("the block for an unrelated prompt holds no article", async () => {
    const block = (prompt: string) =>
      KnowledgeBuild.block({
        prompt,
        learnings: [],
        resources: articles,
        budget: 1_000,
        maxLearnings: 5,
        learningsBudget: 500,
        content: async (r) => `Body of ${r.id}.`,
      })
    expect(await block("Fix the failing test in src/git/tests/test_server.py")).toBe("")
    const text = await block("Validate bearer tokens issued by our identity provider")
    expect(text).toContain('<article id="token-verification">')
    expect(text.match(/<article id=/g)?.length).toBeLessThanOrEqual(2)
  })
})
