import { describe, expect, test } from "bun:test"
import { Builtins } from "../../builtins"
import type { Host } from "../../host"
import { KnowledgeBuild } from "../../knowledge/build"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import httpx from "./fixtures/httpx-titles.json"
import { KnowledgeFixture } from "./titles"

/**
 * A prompt naming several articles by their title words (tester Q, Q8: "how do I set timeouts on the async client?"
 * on encode/httpx's docs injected nothing, while "configure timeouts" and "async" each found their page). Each
 * article matched one word only its title holds, and fell under `COVERAGE` of the whole prompt once the prompt named
 * three such topics.
 */

const articles = KnowledgeFixture.articles(httpx.titles)
const rank = (prompt: string) => KnowledgeBuild.rankResources(prompt, articles).map((r) => r.id)

describe("knowledge injection: a prompt naming several articles", () => {
  test("each topic alone finds its page", () => {
    expect(rank("configure timeouts")).toEqual(["timeouts"])
    expect(rank("how do I use the async client?")).toContain("async")
  })

  test.each(["how do I set timeouts on the async client?", "async client timeouts"])(
    "tester Q's %p gets both the Timeouts and the Async Support pages",
    (prompt) => {
      const ids = rank(prompt)
      expect(ids).toContain("timeouts")
      expect(ids).toContain("async")
      expect(ids.length).toBeLessThanOrEqual(3)
    },
  )

  // "log" is a generic verb for the matcher (a hit matching only generic verbs goes when another hit matches an
  // object), but here it names the Logging page by its whole title: that page stays ("log" was "not logging" in
  // docs/integration.md's figures before).
  test("a generic verb that names a page by its whole title keeps it: 'log every request' gets Logging", () => {
    const ids = rank("how do I log every request and response with event hooks?")
    expect(ids).toContain("logging")
    expect(ids).toContain("event-hooks")
    expect(rank("log the request headers")).toContain("logging")
    // The verb alone still names nothing it is not the title of.
    expect(rank("fix the typo in the README")).toEqual([])
  })

  // "times out" is the term "timeout": the prompt less Timeouts' title words must lose the phrase too, or Exceptions
  // is judged against a prompt still holding it and falls under the floor.
  test("'which exception is raised when a request times out?' gets Exceptions and Timeouts", () => {
    const ids = rank("which exception is raised when a request times out?")
    expect(ids).toContain("exceptions")
    expect(ids).toContain("timeouts")
  })

  test("unrelated prompts still get nothing", () => {
    for (const prompt of ["fix the typo in the README", "bump pytest to the latest version", "hello"])
      expect(rank(prompt)).toEqual([])
  })

  // mkdocs pages shaped like httpx's docs (real headings, text written for this test), through the resource loader
  // and the injection hook as OpenCode calls them.
  const page = (heading: string | undefined, body: string) => (heading ? `# ${heading}\n\n${body}\n` : `${body}\n`)
  const KB = ".opencode/knowledge-base"
  const FILES = {
    [`${KB}/async.md`]: page("Async Support", "The library offers an asynchronous client next to the default one."),
    [`${KB}/clients.md`]: page("Clients", "A client instance pools connections and shares configuration."),
    [`${KB}/timeouts.md`]: page(undefined, "Every network operation has a default limit of five seconds."),
    [`${KB}/proxies.md`]: page("Proxies", "Route requests through an HTTP or SOCKS proxy."),
    [`${KB}/authentication.md`]: page("Authentication", "Basic, digest and custom schemes."),
    [`${KB}/event-hooks.md`]: page("Event Hooks", "Callables run on every request and response."),
    [`${KB}/exceptions.md`]: page("Exceptions", "The hierarchy of errors raised by the library."),
    [`${KB}/http2.md`]: page("HTTP/2", "Opt in to the newer protocol with an extra dependency."),
    [`${KB}/logging.md`]: page("Logging", "Debug output goes to the standard logging module."),
    [`${KB}/compatibility.md`]: page("Requests Compatibility Guide", "Where the API differs from the older library."),
    [`${KB}/resource-limits.md`]: page("Resource Limits", "Bound the connection pool size."),
    [`${KB}/troubleshooting.md`]: page("Troubleshooting", "Common problems and their fixes."),
    [`${KB}/quickstart.md`]: page("QuickStart", "A first request in a few lines."),
  }

  test("through the injection hook: the first prompt gets both articles", async () => {
    await using dir = await tmpdir(FILES)
    const host: Host = { directory: dir.path, worktree: dir.path, log: Logger.silent, messages: async () => [] }
    const { hooks } = (await Builtins.create(host, {
      options: {},
      logger: () => Logger.silent,
      only: ["resource-loader", "knowledge-injection"],
    })) as { hooks: Record<string, any> }
    const output = {
      message: { id: "msg_1", sessionID: "ses_1" },
      parts: [{ id: "prt_0", type: "text", text: "how do I set timeouts on the async client?" }] as any[],
    }
    await hooks["chat.message"]({ sessionID: "ses_1" }, output)
    const injected = output.parts
      .slice(1)
      .map((p) => p.text as string)
      .join("\n")
    expect(injected).toContain('<article id="timeouts">')
    expect(injected).toContain('<article id="async">')
  })
})
