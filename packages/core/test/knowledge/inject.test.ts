import { describe, expect, test } from "bun:test"
import { encode } from "gpt-tokenizer"
import { Builtins } from "../../builtins"
import type { Host } from "../../host"
import { KnowledgeBuild } from "../../knowledge/build"
import { LearningStore } from "../../learning/store"
import { Logger } from "../../util/log"
import OpencodeBuiltins from "../../../plugin/index"
import { pluginInput } from "../../../plugin/test/input"
import { md, tmpdir } from "../fixture"

const ARTICLES = {
  ".opencode/knowledge-base/deploy.md": md(
    { title: "Deploying", description: "How the billing service is deployed with helm", tags: ["deploy", "helm"] },
    "Run `helm upgrade billing ./chart` from the release branch.\n",
  ),
  ".opencode/knowledge-base/huge.md": md(
    { title: "Deploy history", description: "Every helm deploy of the billing service", tags: ["deploy"] },
    "A deploy happened.\n".repeat(2_000),
  ),
  ".opencode/knowledge-base/style.md": md({ title: "Style", description: "Naming rules for CSS classes" }, "BEM.\n"),
}

function seed(dir: string, n = 8) {
  const store = LearningStore.open(dir)
  store.record(
    Array.from({ length: n }, (_, i) => ({
      kind: i % 2 ? ("decision" as const) : ("correction" as const),
      text: `Lesson ${"abcdefghij"[i]} about ${["pnpm", "helm", "ports", "tabs", "dates", "logs", "tests", "commits"][i]} ${"word ".repeat(i * 3)}`,
      source: { sessionID: "ses_old", messageID: `msg_${i}`, at: i },
    })),
  )
}

type Hooks = Record<string, any>
async function build(dir: string, options: Record<string, unknown> = {}, history: unknown[] = []) {
  const host: Host = { directory: dir, worktree: dir, log: Logger.silent, messages: async () => history as never }
  const { hooks } = await Builtins.create(host, {
    options: { knowledge: options },
    logger: () => Logger.silent,
    only: ["resource-loader", "knowledge-injection"],
  })
  return hooks as Hooks
}

async function prompt(hooks: Hooks, sessionID: string, text: string) {
  const output = {
    message: { id: `msg_${Math.random()}`, sessionID },
    parts: [{ id: "prt_0", type: "text", text }] as any[],
  }
  await hooks["chat.message"]({ sessionID }, output)
  return output.parts.slice(1).map((p) => p.text as string)
}

describe("knowledge injection", () => {
  test("one part: at most 5 learnings within 500 tokens, then the relevant articles, the whole within 1,000 tokens", async () => {
    await using dir = await tmpdir(ARTICLES)
    seed(dir.path)
    const hooks = await build(dir.path)
    const [part, ...more] = await prompt(hooks, "ses_1", "deploy the billing service with helm")
    expect(more).toEqual([])
    expect(part.startsWith("<project-knowledge>\n")).toBe(true)
    expect(encode(part).length).toBeLessThanOrEqual(1_000)
    const learnings = part.split("\n").filter((l) => l.startsWith("- Correction") || l.startsWith("- Decision"))
    expect(learnings.length).toBeLessThanOrEqual(5)
    expect(encode(learnings.join("\n")).length).toBeLessThanOrEqual(500)
    // The learning about helm shares a word with the prompt: it comes first.
    expect(learnings[0]).toContain("helm")
    expect(part).toContain("## deploy: Deploying\nRun `helm upgrade billing ./chart`")
    // Over the budget: named with its description, not included.
    expect(part).toContain("- huge: Every helm deploy of the billing service")
    expect(part).not.toContain("style")
  })

  test("once per session: later prompts get nothing; the same inputs give the same bytes", async () => {
    await using dir = await tmpdir(ARTICLES)
    seed(dir.path, 2)
    const hooks = await build(dir.path)
    const first = await prompt(hooks, "ses_1", "deploy it")
    expect(first).toHaveLength(1)
    expect(await prompt(hooks, "ses_1", "and deploy again")).toEqual([])
    expect(await prompt(hooks, "ses_2", "deploy it")).toEqual(first)
  })

  test("derived from the history: a restarted OpenCode does not inject twice; after a compaction it injects again", async () => {
    await using dir = await tmpdir(ARTICLES)
    seed(dir.path, 2)
    const injected = {
      info: { role: "user" },
      parts: [
        { type: "text", text: "hi" },
        { type: "text", text: "<project-knowledge>\nx" },
      ],
    }
    const restarted = await build(dir.path, {}, [injected, { info: { role: "assistant" }, parts: [] }])
    expect(await prompt(restarted, "ses_1", "deploy")).toEqual([])

    const compacted = [injected, { info: { role: "user" }, parts: [{ type: "compaction", auto: true }] }]
    const after = await build(dir.path, {}, compacted)
    expect(await prompt(after, "ses_1", "deploy")).toHaveLength(1)
    // In the same process, the compaction event re-opens the session.
    const live = await build(dir.path)
    expect(await prompt(live, "ses_1", "deploy")).toHaveLength(1)
    expect(await prompt(live, "ses_1", "deploy")).toHaveLength(0)
    await live.event({ event: { type: "session.compacted", properties: { sessionID: "ses_1" } } })
    expect(await prompt(live, "ses_1", "deploy")).toHaveLength(1)
  })

  test("budget 0 disables it; nothing known, nothing injected", async () => {
    await using dir = await tmpdir(ARTICLES)
    seed(dir.path, 2)
    expect(await prompt(await build(dir.path, { budget: 0 }), "ses_1", "deploy")).toEqual([])
    await using empty = await tmpdir({})
    expect(await prompt(await build(empty.path), "ses_1", "deploy")).toEqual([])
  })

  test("small budgets are kept whatever the tokenizer (estimate: 3 characters a token)", async () => {
    await using dir = await tmpdir(ARTICLES)
    seed(dir.path)
    for (const budget of [60, 150, 400]) {
      const text = await KnowledgeBuild.block({
        prompt: "deploy",
        learnings: LearningStore.open(dir.path).list(),
        resources: [],
        budget,
        maxLearnings: 5,
        learningsBudget: 500,
        content: async () => undefined,
      })
      expect(encode(text).length).toBeLessThanOrEqual(budget)
    }
  })

  test("a released article leaves the stored block at the next request; others, and unreleased blocks, stay byte-identical", async () => {
    // A project folder that exists (the composition root refuses one that does not), with no resources of its own.
    await using empty = await tmpdir()
    const resources = ["deploy", "rollback"].map((id) => ({
      id,
      name: id,
      type: "knowledge-base",
      tags: [],
      description: `how to ${id}`,
    })) as never[]
    const text = await KnowledgeBuild.block({
      prompt: "deploy rollback",
      learnings: [],
      resources,
      budget: 1_000,
      maxLearnings: 5,
      learningsBudget: 500,
      // A body line equal to the closing delimiter cannot end the article early.
      content: async (r) => `Steps for ${r.id}.\n</article>\nstill ${r.id}`,
    })
    const history = (released?: string[]) => [
      {
        info: { id: "m1", role: "user" },
        parts: [
          { type: "text", text: "deploy" },
          { type: "text", text },
        ],
      },
      {
        info: { id: "m2", role: "assistant" },
        parts: released
          ? [
              {
                type: "tool",
                tool: "resource-release",
                state: { status: "completed", output: JSON.stringify({ released }) },
              },
            ]
          : [],
      },
    ]
    const blockOf = (m: ReturnType<typeof history>) => (m[0].parts[1] as { text: string }).text
    const untouched = history()
    await (await build(empty.path))["experimental.chat.messages.transform"]({}, { messages: untouched })
    expect(blockOf(untouched)).toBe(text)

    const messages = history(["deploy"])
    const hooks = await build(empty.path)
    await hooks["experimental.chat.messages.transform"]({}, { messages })
    const after = blockOf(messages)
    expect(after).not.toContain("Steps for deploy")
    expect(after).not.toContain("still deploy")
    expect(after).toContain("- deploy: released (resource-load deploy brings it back)")
    expect(after).toContain("Steps for rollback.\n </article>\nstill rollback")
    // The same history gives the same bytes on every request.
    const again = history(["deploy"])
    await hooks["experimental.chat.messages.transform"]({}, { messages: again })
    expect(blockOf(again)).toBe(after)
  })
})

describe("knowledge injection: learnings.json that cannot be read (red team CD-5)", () => {
  for (const [name, content] of [
    ["cut short", '{"version":1,"learnings":['],
    ["written by a newer version", '{"version":2,"learnings":[]}'],
  ])
    test(`CD-5 a learnings.json ${name}: the articles are still injected, the problem logged once naming the file (core and plugin)`, async () => {
      await using dir = await tmpdir({ ...ARTICLES, ".opencode/builtins-local/learnings.json": content })
      // The composition root as the fork calls it, with its log.
      const logs: string[] = []
      const log = { ...Logger.silent, warn: (m: string, e?: any) => void logs.push(`warn ${m} ${e?.error}`) }
      const host: Host = { directory: dir.path, worktree: dir.path, log, messages: async () => [] }
      const { hooks } = await Builtins.create(host, {
        options: {},
        logger: () => log,
        only: ["resource-loader", "knowledge-injection"],
      })
      for (const session of ["ses_1", "ses_2"]) {
        const [part] = await prompt(hooks as Hooks, session, "deploy the billing service with helm")
        // Before: no <project-knowledge> part at all, only "knowledge: chat.message failed" logged.
        expect(part).toContain("## deploy: Deploying")
      }
      const said = logs.filter((l) => l.includes("learnings left out"))
      expect(said.length).toBe(1)
      expect(said[0]).toContain(dir.file(".opencode/builtins-local/learnings.json"))

      // The plugin for stock OpenCode: the same.
      const { input, logs: pluginLogs } = pluginInput(dir.path)
      const plugin = (await OpencodeBuiltins(input)) as Hooks
      const parts = await prompt(plugin, "ses_3", "deploy the billing service with helm")
      expect(parts.find((p) => p.startsWith("<project-knowledge>"))).toContain("## deploy: Deploying")
      expect(pluginLogs.filter((l) => l.message.includes("learnings left out")).length).toBe(1)
    }, 30_000)
})
