import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { DynamicDiscovery } from "../../discovery/discover"
import { DiscoveryFormat } from "../../discovery/format"
import { Discovery } from "../../discovery/schema"
import { Logger } from "../../util/log"
import { md, tmpdir } from "../fixture"
import { guarded, type Rule } from "../resource/guarded"

/** A home and a project in one temporary root; the engine sees only them (HOME and XDG from `env`). */
async function world(files: Record<string, string>) {
  const dir = await tmpdir(files)
  const project = dir.file("project")
  await fs.mkdir(project, { recursive: true })
  const env = { HOME: dir.file("home"), XDG_CONFIG_HOME: dir.file("xdg") }
  return { dir, project, env, [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose]() }
}

const names = (list: readonly Discovery.MatchedItem[]) => list.map((m) => m.item.name)

describe("DynamicDiscovery: sources and precedence", () => {
  test("all four types from every source; local over global, OpenCode over Claude Code, nearest project folder first", async () => {
    await using w = await world({
      "home/.claude/agents/reviewer.md": md({ name: "reviewer", description: "global claude reviewer" }),
      "xdg/opencode/agent/reviewer.md": md({ description: "global opencode reviewer" }),
      "project/.claude/agents/reviewer.md": md({ name: "reviewer", description: "local claude reviewer" }),
      "project/.opencode/agents/reviewer.md": md({ description: "local opencode reviewer" }),
      "project/app/.claude/agents/reviewer.md": md({ name: "reviewer", description: "nearest reviewer" }),
      "home/.claude/commands/deploy.md": md({ description: "global deploy" }),
      "project/.claude/commands/deploy.md": md({ description: "local deploy" }),
      "xdg/opencode/skill/pdf/SKILL.md": md({ name: "pdf", description: "global pdf skill" }),
      "home/.claude/skills/pdf/SKILL.md": md({ name: "pdf", description: "claude pdf skill" }),
      "home/.claude/output-styles/concise.md": md({ name: "concise", description: "Short" }),
    })
    const engine = DynamicDiscovery.create({ directory: path.join(w.project, "app"), worktree: w.project, env: w.env })
    const cat = await engine.catalogue()
    const by = (type: string, name: string) => cat.items.find((i) => i.resourceType === type && i.name === name)!
    expect(by("agent", "reviewer").description).toBe("nearest reviewer")
    expect(by("command", "deploy")).toMatchObject({ description: "local deploy", source: "local", origin: "claude" })
    expect(by("skill", "pdf")).toMatchObject({ description: "global pdf skill", origin: "opencode" })
    expect(by("outputStyle", "concise").source).toBe("global")
    expect(cat.items).toHaveLength(4)
    expect(cat.shadowed.map((s) => path.relative(w.dir.path, s.item.filePath)).sort()).toEqual([
      "home/.claude/agents/reviewer.md",
      "home/.claude/commands/deploy.md",
      "home/.claude/skills/pdf/SKILL.md",
      "project/.claude/agents/reviewer.md",
      "project/.opencode/agents/reviewer.md",
      "xdg/opencode/agent/reviewer.md",
    ])
    expect(cat.stats).toMatchObject({ discovered: 4, parsed: 10, cacheHits: 0 })
  })

  test("without XDG_CONFIG_HOME OpenCode's global folder is ~/.config/opencode", async () => {
    await using w = await world({ "home/.config/opencode/command/bump.md": md({ description: "Bump versions" }) })
    const engine = DynamicDiscovery.create({ directory: w.project, env: { HOME: w.env.HOME } })
    expect((await engine.catalogue()).items.map((i) => `${i.source} ${i.origin} ${i.name}`)).toEqual([
      "global opencode bump",
    ])
  })
})

describe("DynamicDiscovery.gather", () => {
  test("matches a prompt: top entries per type, best first, with matched words", async () => {
    await using w = await world({
      "home/.claude/agents/security-auditor.md": md({
        name: "security-auditor",
        description: "Finds vulnerabilities and injection flaws",
      }),
      "home/.claude/agents/debugger.md": md({ name: "debugger", description: "Finds the root cause of failing tests" }),
      "project/.opencode/command/security-scan.md": md({ description: "Scan dependencies for vulnerabilities" }),
      "project/.claude/skills/pdf/SKILL.md": md({ name: "pdf", description: "PDF forms" }),
    })
    const result = await DynamicDiscovery.create({ directory: w.project, env: w.env }).gather(
      "scan the login page for injection vulnerabilities",
    )
    expect(Discovery.DynamicDiscoveryResult.safeParse(result).success).toBe(true)
    expect(result.success).toBe(true)
    const ctx = result.context!
    expect(names(ctx.matchedAgents)).toEqual(["security-auditor"])
    expect(ctx.matchedAgents[0].matchedKeywords).toEqual(["injection", "vulnerabilities"])
    expect(names(ctx.matchedCommands)).toEqual(["security-scan"])
    expect(ctx.matchedSkills).toEqual([])
    expect(ctx.isMemoryThinkContext).toBe(false)
  })

  test("at most MAX_SUGGESTIONS per type", async () => {
    const files: Record<string, string> = { "project/.opencode/command/other.md": md({ description: "Unrelated" }) }
    for (let i = 0; i < 8; i++) files[`project/.opencode/agent/lint-${i}.md`] = md({ description: "Runs the linter" })
    await using w = await world(files)
    const result = await DynamicDiscovery.create({ directory: w.project, env: w.env }).gather("run the linter")
    expect(result.context!.matchedAgents).toHaveLength(Discovery.MAX_SUGGESTIONS)
  })

  test("a prompt that matches nothing is a success with an empty context", async () => {
    await using w = await world({ "project/.opencode/agent/a.md": md({ description: "Reviews code" }) })
    const result = await DynamicDiscovery.create({ directory: w.project, env: w.env }).gather("what time is it")
    expect(result.success).toBe(true)
    expect(result.context).toMatchObject({ matchedAgents: [], matchedResources: [] })
  })

  test("memory think prompts match on the thought and carry the memory-think context", async () => {
    await using w = await world({
      "home/.claude/agents/security-auditor.md": md({
        name: "security-auditor",
        description: "Finds vulnerabilities in token storage",
      }),
      "home/.claude/output-styles/devils-advocate.md": md({ description: "Argues against the proposal, finds risks" }),
      "home/.claude/agents/memory-keeper.md": md({
        name: "memory-keeper",
        description: "Keeps memory notes and thinks",
      }),
    })
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env })
    const result = await engine.gather("memory think counter 'token storage has no risks'")
    const ctx = result.context!
    expect(ctx.isMemoryThinkContext).toBe(true)
    // "memory" and "think" are the command, not the topic: memory-keeper is not suggested.
    expect(names(ctx.matchedAgents)).toEqual(["security-auditor"])
    expect(ctx.memoryThink).toMatchObject({ pattern: "counter" })
    expect(names(ctx.memoryThink!.suggestedAgents)).toEqual(["security-auditor"])
    expect(names(ctx.memoryThink!.suggestedStyles)).toEqual(["devils-advocate"])
    expect(ctx.memoryThink!.usageGuidance).toContain(
      "memory think counter 'token storage has no risks' --agent security-auditor",
    )
  })

  test("the second prompt reads no unchanged file; an edit and a new file are picked up", async () => {
    await using w = await world({
      "project/.opencode/agent/a.md": md({ description: "Reviews code" }),
      "project/.opencode/agent/b.md": md({ description: "Writes tests" }),
    })
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env })
    expect((await engine.gather("review")).stats).toMatchObject({ parsed: 2, cacheHits: 0 })
    expect((await engine.gather("tests")).stats).toMatchObject({ parsed: 0, cacheHits: 2 })
    const file = path.join(w.project, ".opencode/agent/a.md")
    await fs.writeFile(file, md({ description: "Deploys services" }))
    await fs.utimes(file, new Date(), new Date(Date.now() + 10_000))
    await fs.writeFile(path.join(w.project, ".opencode/agent/c.md"), md({ description: "Deploys databases" }))
    const after = await engine.gather("deploys")
    expect(after.stats).toMatchObject({ parsed: 2, cacheHits: 1 })
    expect(names(after.context!.matchedAgents).sort()).toEqual(["a", "c"])
  })

  test("a file added in the clock tick of the folder's listing (its folder keeps its time) is found by the next prompt", async () => {
    await using w = await world({ "project/.opencode/agent/a.md": md({ description: "Reviews code" }) })
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env })
    const folder = path.join(w.project, ".opencode/agent")
    const before = await fs.stat(folder)
    expect(names((await engine.gather("review code")).context!.matchedAgents)).toEqual(["a"])
    await fs.writeFile(path.join(folder, "c.md"), md({ description: "Deploys databases" }))
    // The kernel stamps folders with a coarse clock: an addition right after the listing can leave the time unchanged.
    await fs.utimes(folder, before.atime, before.mtime)
    expect(names((await engine.gather("deploys databases")).context!.matchedAgents)).toEqual(["c"])
  })

  test("gatherDynamicContext is the one-shot form", async () => {
    await using w = await world({ "project/.opencode/agent/a.md": md({ description: "Reviews code" }) })
    const result = await DynamicDiscovery.gatherDynamicContext("review this", { directory: w.project, env: w.env })
    expect(names(result.context!.matchedAgents)).toEqual(["a"])
  })
})

describe("DynamicDiscovery: skip reasons and degradation", () => {
  test("disabled", async () => {
    await using w = await world({ "project/.opencode/agent/a.md": md({ description: "Reviews code" }) })
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env, config: { enabled: false } })
    expect(await engine.gather("review")).toEqual({ success: false, skipped: true, skipReason: "disabled" })
  })

  test("no_resources_found: nothing in any folder and no resources", async () => {
    await using w = await world({ "project/README.md": "hello" })
    const result = await DynamicDiscovery.create({
      directory: w.project,
      env: w.env,
      resources: async () => [],
    }).gather("review")
    expect(result).toMatchObject({ success: false, skipped: true, skipReason: "no_resources_found" })
    expect(Discovery.DynamicDiscoveryResult.safeParse(result).success).toBe(true)
  })

  test("filesystem_error: the only definitions folder is broken (a file where a folder belongs)", async () => {
    await using w = await world({ "project/.claude/agents": "not a folder" })
    const result = await DynamicDiscovery.create({ directory: w.project, env: w.env }).gather("review")
    expect(result).toMatchObject({ success: false, skipped: true, skipReason: "filesystem_error" })
    expect(result.error).toBe(`${path.join(w.project, ".claude/agents")}: not a directory`)
    expect(result.degraded).toEqual([
      { source: path.join(w.project, ".claude/agents"), reason: "filesystem_error", error: result.error },
    ])
  })

  test("a broken folder next to working ones degrades the result, it does not fail it", async () => {
    await using w = await world({
      "project/.claude/agents": "not a folder",
      "project/.opencode/agent/reviewer.md": md({ description: "Reviews code" }),
    })
    const log = Logger.memory()
    const result = await DynamicDiscovery.create({ directory: w.project, env: w.env, log }).gather("review my code")
    expect(result.success).toBe(true)
    expect(names(result.context!.matchedAgents)).toEqual(["reviewer"])
    expect(result.degraded?.map((d) => d.reason)).toEqual(["filesystem_error"])
    expect(log.entries.map((e) => e.level)).toContain("warn")
  })

  describe("a really slow folder: 30,000 skill entries, none with a SKILL.md", () => {
    // Every entry costs real stats (follow the link, look for SKILL.md) and none yields an item, so the scan has
    // found nothing when the budget runs out. Links to one empty folder: no disk space used.
    let w: Awaited<ReturnType<typeof world>>
    beforeAll(async () => {
      w = await world({ "home/empty/.keep": "" })
      await fs.mkdir(w.dir.file("home/.claude/skills"), { recursive: true })
      // 30,000 links one at a time took over 5 s on a busy 2-core machine: made in batches, with room to spare.
      for (let i = 0; i < 30_000; i += 500)
        await Promise.all(
          Array.from({ length: 500 }, (_, k) =>
            fs.symlink(w.dir.file("home/empty"), w.dir.file(`home/.claude/skills/s${i + k}`)),
          ),
        )
    }, 120_000)
    afterAll(() => w[Symbol.asyncDispose](), 30_000)

    test(
      "timeout: when it is all there is and it cannot be scanned within scanTimeoutMs",
      async () => {
        const engine = DynamicDiscovery.create({ directory: w.project, env: w.env, config: { scanTimeoutMs: 100 } })
        const result = await engine.gather("deploy")
        expect(result).toMatchObject({ success: false, skipped: true, skipReason: "timeout" })
        expect(result.error).toBe(`scan exceeded 100 ms: ${w.dir.file("home/.claude/skills")}`)
      },
      { timeout: 30_000 },
    )

    test(
      "next to a quick folder it degrades the result: the quick folder's items are matched",
      async () => {
        await fs.mkdir(path.join(w.project, ".opencode/agent"), { recursive: true })
        await fs.writeFile(path.join(w.project, ".opencode/agent/deployer.md"), md({ description: "Deploys services" }))
        try {
          const engine = DynamicDiscovery.create({ directory: w.project, env: w.env, config: { scanTimeoutMs: 150 } })
          const result = await engine.gather("deploy the services")
          expect(result.success).toBe(true)
          expect(names(result.context!.matchedAgents)).toEqual(["deployer"])
          expect(result.degraded).toEqual([{ source: w.dir.file("home/.claude/skills"), reason: "timeout" }])
        } finally {
          await fs.rm(path.join(w.project, ".opencode"), { recursive: true, force: true })
        }
      },
      { timeout: 30_000 },
    )
  })
})

describe("DynamicDiscovery: project resources", () => {
  const resources = [
    {
      id: "ship-release",
      type: "task",
      name: "Ship a release",
      description: "Cut, tag and publish",
      tags: ["release"],
    },
    { id: "adr", type: "template", name: "Architecture decision record" },
  ]

  test("resources are matched like the rest and come back by id", async () => {
    await using w = await world({})
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env, resources: async () => resources })
    const result = await engine.gather("let's ship the release")
    expect(result.context!.matchedResources.map((m) => m.resource.id)).toEqual(["ship-release"])
    expect(result.stats).toMatchObject({ discovered: 0, resources: 2 })
    const decision = await engine.gather("record this architecture decision")
    expect(decision.context!.matchedResources.map((m) => m.resource.id)).toEqual(["adr"])
  })

  test("invalid resource entries are reported and skipped; duplicates keep the first", async () => {
    await using w = await world({})
    const cat = await DynamicDiscovery.create({
      directory: w.project,
      env: w.env,
      resources: async () => [
        ...resources,
        { id: "", type: "task", name: "x" } as any,
        { ...resources[0], name: "dup" },
      ],
    }).catalogue()
    expect(cat.resources.map((r) => r.name)).toEqual(["Ship a release", "Architecture decision record"])
    expect(cat.problems).toEqual([{ path: "resource (no id)", error: "resource id is empty" }])
  })

  test("a provider that fails or never answers degrades the result; definitions still match", async () => {
    await using w = await world({ "project/.opencode/agent/releaser.md": md({ description: "Ships releases" }) })
    const failing = DynamicDiscovery.create({
      directory: w.project,
      env: w.env,
      resources: async () => {
        throw new Error("index build failed")
      },
    })
    const failed = await failing.gather("ship the release")
    expect(failed.success).toBe(true)
    expect(failed.degraded).toEqual([{ source: "resources", reason: "filesystem_error", error: "index build failed" }])
    const stuck = DynamicDiscovery.create({
      directory: w.project,
      env: w.env,
      config: { scanTimeoutMs: 50 },
      resources: () => new Promise(() => {}),
    })
    const slow = await stuck.gather("ship the release")
    expect(names(slow.context!.matchedAgents)).toEqual(["releaser"])
    expect(slow.degraded).toEqual([{ source: "resources", reason: "timeout" }])
  })
})

describe("DynamicDiscovery: access", () => {
  test("items whose file the host's access check denies for reading are left out; the next best take their place", async () => {
    await using w = await world({
      "project/.opencode/agent/secret-reviewer.md": md({ description: "Reviews code" }),
      "project/.opencode/agent/reviewer.md": md({ description: "Reviews code" }),
    })
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env })
    const asked: string[] = []
    const result = await engine.gather("review code", {
      access: async (file, op) => {
        asked.push(`${op} ${path.basename(file)}`)
        return file.includes("secret") ? "protected by policy" : undefined
      },
    })
    expect(names(result.context!.matchedAgents)).toEqual(["reviewer"])
    // The folder is asked about too (a protected folder is not listed).
    expect(asked.sort()).toEqual(["read agent", "read reviewer.md", "read secret-reviewer.md"])
  })
})

describe("DynamicDiscovery with a security policy", () => {
  const SECRET = "Falcon acquisition"
  /** A visible and a protected definition of every type, at both scopes. */
  const TREE = {
    "project/.opencode/agent/deal-reviewer.md": md({ description: `Reviews the ${SECRET} contracts` }),
    "project/.opencode/agent/contract-reviewer.md": md({ description: "Reviews contracts" }),
    "project/.opencode/command/contract-draft.md": md({ description: `Drafts ${SECRET} contracts` }),
    "project/.claude/commands/contract-lint.md": md({ description: "Lints contracts" }),
    "project/.claude/skills/vault/SKILL.md": md({
      name: "contract-vault",
      description: `${SECRET} contract templates`,
    }),
    "project/.claude/skills/templates/SKILL.md": md({ name: "contract-templates", description: "Contract templates" }),
    "home/.claude/output-styles/boardroom.md": md({ name: "boardroom", description: `${SECRET} contracts style` }),
    "home/.claude/output-styles/plain.md": md({ name: "plain", description: "Plain contracts style" }),
  }
  const RULES: Rule[] = [
    { pattern: ".opencode/agent/deal-reviewer.md", type: "file", deniedOperations: ["read"] },
    { pattern: ".opencode/command/contract-draft.md", type: "file", deniedOperations: ["llm"] },
    { pattern: ".claude/skills/vault", type: "directory", deniedOperations: ["read"] },
    { pattern: "~/.claude/output-styles/boardroom.md", type: "file", deniedOperations: ["llm"] },
  ]
  const PROMPT = "review the deal, lint and draft the contracts with templates in the plain board style"
  const all = (c: Discovery.DynamicContext) =>
    [c.matchedAgents, c.matchedCommands, c.matchedSkills, c.matchedOutputStyles].flatMap(names).sort()

  test("no protected agent, command, skill or output style is suggested; the visible ones still are", async () => {
    await using w = await world(TREE)
    await using g = await guarded(w.project, RULES, { home: w.env.HOME })
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env, host: g.host })
    const result = await engine.gather(PROMPT)
    expect(all(result.context!)).toEqual(["contract-lint", "contract-reviewer", "contract-templates", "plain"])
    const text = JSON.stringify(result) + DiscoveryFormat.context(result.context!)
    for (const hidden of [SECRET, "deal-reviewer", "contract-draft", "contract-vault", "boardroom"])
      expect(text).not.toContain(hidden)
  })

  test("the ranking is what it would be without the protected files (no score, floor or count gives them away)", async () => {
    await using w = await world(TREE)
    await using g = await guarded(w.project, RULES, { home: w.env.HOME })
    const guardedResult = await DynamicDiscovery.create({ directory: w.project, env: w.env, host: g.host }).gather(
      PROMPT,
    )
    await using bare = await world(
      Object.fromEntries(Object.entries(TREE).filter(([k]) => !/deal-reviewer|contract-draft|vault|boardroom/.test(k))),
    )
    const bareResult = await DynamicDiscovery.create({ directory: bare.project, env: bare.env }).gather(PROMPT)
    const strip = (r: Discovery.DynamicDiscoveryResult, root: string) =>
      JSON.parse(JSON.stringify(r.context).replaceAll(root, "<root>"))
    expect(strip(guardedResult, w.dir.path)).toEqual(strip(bareResult, bare.dir.path))
    expect(guardedResult.stats!.discovered).toBe(bareResult.stats!.discovered)
  })

  test("--list's catalogue: protected files are not items, not shadowed, not skipped problems, not counted", async () => {
    await using w = await world({
      ...TREE,
      // A broken file in a protected folder, and a protected twin of a visible name.
      "project/.claude/skills/vault/broken/SKILL.md": "---\nname: [x\n---\n",
      "project/.claude/agents/contract-reviewer.md": md({ name: "contract-reviewer", description: `${SECRET} twin` }),
    })
    await using g = await guarded(
      w.project,
      [...RULES, { pattern: ".claude/agents", type: "directory", deniedOperations: ["read"] }],
      { home: w.env.HOME },
    )
    const cat = await DynamicDiscovery.create({ directory: w.project, env: w.env, host: g.host }).catalogue()
    const text = JSON.stringify({ ...cat, scans: undefined })
    expect(text).not.toContain(SECRET)
    expect(text).not.toContain("vault")
    expect(text).not.toContain(".claude/agents")
    expect(cat.shadowed).toEqual([])
    expect(cat.stats.discovered).toBe(cat.items.length)
  })

  test("memory-think suggestions leave out protected agents and styles too", async () => {
    await using w = await world(TREE)
    await using g = await guarded(w.project, RULES, { home: w.env.HOME })
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env, host: g.host })
    const result = await engine.gather("memory think counter 'the contracts need a board style review'")
    const mt = result.context!.memoryThink!
    expect([...mt.suggestedAgents, ...mt.suggestedStyles].map((m) => m.item.name)).not.toContain("deal-reviewer")
    expect(JSON.stringify(mt)).not.toContain(SECRET)
  })

  test("verdicts: once per file and version with accessVersion, every prompt without; a file made protected leaves the cache", async () => {
    await using w = await world(TREE)
    await using g = await guarded(w.project, [], { home: w.env.HOME, versioned: true })
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env, host: g.host })
    await engine.gather(PROMPT)
    const first = g.calls.length
    await engine.gather(PROMPT)
    expect(g.calls.length).toBe(first)
    expect(engine.cache.peek(path.join(w.project, ".opencode/agent/deal-reviewer.md"))).toBeDefined()
    await g.rewrite(RULES)
    const after = await engine.gather(PROMPT)
    expect(g.calls.length).toBe(2 * first)
    expect(all(after.context!)).not.toContain("deal-reviewer")
    expect(engine.cache.peek(path.join(w.project, ".opencode/agent/deal-reviewer.md"))).toBeUndefined()
    const unversioned = DynamicDiscovery.create({ directory: w.project, env: w.env, host: { access: g.host.access } })
    const before = g.calls.length
    await unversioned.gather(PROMPT)
    await unversioned.gather(PROMPT)
    expect(g.calls.length - before).toBe(2 * first)
  })

  test("a skill folder linked into a protected folder is hidden; re-pointing the link is asked about again", async () => {
    await using w = await world({
      "project/private/deal-skill/SKILL.md": md({ name: "deal-skill", description: `${SECRET} checklist` }),
      "project/public/deal-skill/SKILL.md": md({ name: "deal-skill", description: "Public checklist" }),
    })
    const link = path.join(w.project, ".opencode/skill/deal-skill")
    await fs.mkdir(path.dirname(link), { recursive: true })
    await fs.symlink(path.join(w.project, "private/deal-skill"), link)
    await using g = await guarded(w.project, [{ pattern: "private", type: "directory", deniedOperations: ["read"] }], {
      versioned: true,
    })
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env, host: g.host })
    expect((await engine.catalogue()).items).toEqual([])
    await fs.rm(link)
    await fs.symlink(path.join(w.project, "public/deal-skill"), link)
    const items = (await engine.catalogue()).items
    expect(items.map((i) => i.description)).toEqual(["Public checklist"])
  })

  test("a project resource whose file is protected is not suggested, even from a provider that did not filter it", async () => {
    await using w = await world({ "project/.opencode/task/x.md": "" })
    await using g = await guarded(w.project, [{ pattern: "vault", type: "directory", deniedOperations: ["llm"] }])
    const resources = async () => [
      {
        id: "deal-terms",
        type: "task",
        name: "Deal terms",
        description: "Contract terms",
        path: `${w.project}/vault/a.md`,
      },
      { id: "contract-terms", type: "task", name: "Contract terms", path: `${w.project}/docs/b.md` },
    ]
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env, host: g.host, resources })
    const result = await engine.gather("contract terms")
    expect(result.context!.matchedResources.map((m) => m.resource.id)).toEqual(["contract-terms"])
  })

  test("a definition whose description lies in a protected segment is left out, also when markers arrive later", async () => {
    const segmented = [
      "---",
      "name: deal-room",
      "# @secure-start",
      `description: ${SECRET} contract templates`,
      "# @secure-end",
      "---",
      "body",
    ].join("\n")
    await using w = await world({
      "project/.opencode/skills/deal/SKILL.md": segmented,
      "project/.opencode/skills/room/SKILL.md": md({ name: "room-booking", description: "Books a meeting room" }),
    })
    await using g = await guarded(w.project, [], { home: w.env.HOME, versioned: true })
    const engine = DynamicDiscovery.create({ directory: w.project, env: w.env, host: g.host })
    const prompt = "open the deal room for the acquisition"
    expect(all((await engine.gather(prompt)).context!)).toContain("deal-room")
    await g.rewrite([], true)
    const after = await engine.gather(prompt)
    expect(all(after.context!)).not.toContain("deal-room")
    expect(JSON.stringify(after)).not.toContain(SECRET)
  })

  test("without a policy the result is the same as without a check at all", async () => {
    await using w = await world(TREE)
    await using g = await guarded(w.project, undefined)
    const checked = await DynamicDiscovery.create({ directory: w.project, env: w.env, host: g.host }).gather(PROMPT)
    const plain = await DynamicDiscovery.create({ directory: w.project, env: w.env }).gather(PROMPT)
    expect(checked.context).toEqual(plain.context!)
    expect(all(plain.context!)).toContain("deal-reviewer")
  })
})
