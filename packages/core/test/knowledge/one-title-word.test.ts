import { describe, expect, test } from "bun:test"
import { KnowledgeBuild } from "../../knowledge/build"
import httpx from "./fixtures/httpx-titles.json"
import trpc from "./fixtures/trpc-titles.json"
import { KnowledgeFixture } from "./titles"

/**
 * Coding prompts that share one word each with two or three titles (tester R, R6). The multi-topic rescoring judged
 * each such article against the prompt less the other articles' title words; the index holds titles only, so the
 * prompt's other words weighed nothing and "code" alone was all of what was left: "rename the variable in the timeout
 * handling code" got Code of Conduct and Environment Variables. An article is named by its title whole.
 */
const ranker = (titles: Record<string, string>) => {
  const articles = KnowledgeFixture.articles(titles)
  return (prompt: string) => KnowledgeBuild.rankResources(prompt, articles).map((r) => r.id)
}
const httpxRank = ranker(httpx.titles)
const trpcRank = ranker(trpc.titles)

describe("knowledge injection: one word of a title does not name the article", () => {
  test.each([
    ["rename the variable in the timeout handling code", "code_of_conduct"],
    ["rename the variable in the timeout handling code", "environment_variables"],
    ["add type hints to the async code and fix the event loop", "code_of_conduct"],
    ["add type hints to the async code and fix the event loop", "event-hooks"],
  ])("%p does not inject %p", (prompt, unrelated) => {
    expect(httpxRank(prompt)).not.toContain(unrelated)
  })

  // Tester R's prompts, written before any ranking was looked at (held out: the rule was not tuned on them). Each
  // lists the pages it may get; anything else is an unrelated page.
  test.each([
    ["rename the variable in the timeout handling code", ["timeouts"]],
    ["add type hints to the async code and fix the event loop", ["async"]],
    ["how do I set timeouts on the async client?", ["timeouts", "async", "clients"]],
    ["how do I configure a proxy with SSL verification?", ["proxies", "ssl"]],
    ["HTTP/2 with resource limits", ["http2", "resource-limits"]],
    ["use environment variables for the proxy settings", ["environment_variables", "proxies"]],
    ["how do I handle text encodings?", ["text-encodings"]],
    ["bump the version and publish to PyPI", []],
  ])("held out, httpx: %p injects no page outside %p", (prompt, allowed) => {
    for (const id of httpxRank(prompt)) expect(allowed).toContain(id)
  })

  test("kept: each named page of a prompt naming several (httpx, tRPC)", () => {
    expect(httpxRank("how do I set timeouts on the async client?")).toEqual(
      expect.arrayContaining(["timeouts", "async"]),
    )
    expect(httpxRank("how do I configure a proxy with SSL verification?").sort()).toEqual(["proxies", "ssl"])
    expect(httpxRank("use environment variables for the proxy settings").sort()).toEqual([
      "environment_variables",
      "proxies",
    ])
    expect(trpcRank("add a middleware for authorization and set up the context").sort()).toEqual([
      "authorization",
      "context",
      "middlewares",
    ])
  })
})
