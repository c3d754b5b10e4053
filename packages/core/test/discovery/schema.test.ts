import { describe, expect, test } from "bun:test"
import { Discovery } from "../../discovery/schema"

const item = (over: Partial<Record<string, unknown>> = {}) => ({
  name: "code-reviewer",
  description: "Reviews code",
  keywords: ["review"],
  filePath: "/home/me/.claude/agents/code-reviewer.md",
  resourceType: "agent",
  source: "global",
  origin: "claude",
  ...over,
})

const issue = (r: { success: boolean; error?: { issues: { message: string }[] } }) =>
  r.success ? undefined : r.error!.issues.map((i) => i.message).join("; ")

describe("Discovery constants", () => {
  test("the spec's limits and constants", () => {
    expect(Discovery.MAX_CACHE_SIZE).toBe(50)
    expect(Discovery.MAX_SUGGESTIONS).toBe(5)
    expect(Discovery.SCAN_TIMEOUT_MS).toBe(2000)
    expect([Discovery.NAME_MAX, Discovery.DESCRIPTION_MAX, Discovery.KEYWORDS_MAX]).toEqual([200, 1000, 100])
    expect(Discovery.RESOURCE_TYPES).toEqual(["agent", "command", "skill", "outputStyle"])
    expect(Discovery.SKIP_REASONS).toEqual(["disabled", "no_resources_found", "timeout", "filesystem_error"])
  })

  test("MEMORY_THINK_PATTERN matches the five commands, any case and spacing, and nothing else", () => {
    for (const cmd of ["create", "add", "counter", "branch", "conclude"])
      expect(Discovery.MEMORY_THINK_PATTERN.exec(`memory  think\t${cmd.toUpperCase()} x`)?.[1].toLowerCase()).toBe(cmd)
    expect(Discovery.MEMORY_THINK_PATTERN.test("memory think delete x")).toBe(false)
    expect(Discovery.MEMORY_THINK_PATTERN.test("I think memory add is wrong")).toBe(false)
  })
})

describe("DiscoveredItem", () => {
  test("a valid item parses; the name is trimmed", () => {
    const parsed = Discovery.DiscoveredItem.parse(item({ name: "  code-reviewer  " }))
    expect(parsed.name).toBe("code-reviewer")
  })

  test("name: 1–200 characters, not empty after trimming", () => {
    expect(issue(Discovery.DiscoveredItem.safeParse(item({ name: "   " })))).toBe("name is empty")
    expect(issue(Discovery.DiscoveredItem.safeParse(item({ name: "" })))).toBe("name is empty")
    expect(Discovery.DiscoveredItem.safeParse(item({ name: "x".repeat(200) })).success).toBe(true)
    expect(issue(Discovery.DiscoveredItem.safeParse(item({ name: "x".repeat(201) })))).toBe(
      "name is longer than 200 characters",
    )
  })

  test("description: 0–1000 characters (empty allowed)", () => {
    expect(Discovery.DiscoveredItem.safeParse(item({ description: "" })).success).toBe(true)
    expect(Discovery.DiscoveredItem.safeParse(item({ description: "d".repeat(1000) })).success).toBe(true)
    expect(issue(Discovery.DiscoveredItem.safeParse(item({ description: "d".repeat(1001) })))).toBe(
      "description is longer than 1000 characters",
    )
  })

  test("keywords: 0–100 non-empty strings", () => {
    expect(Discovery.DiscoveredItem.safeParse(item({ keywords: [] })).success).toBe(true)
    const hundred = Array.from({ length: 100 }, (_, i) => `k${i}`)
    expect(Discovery.DiscoveredItem.safeParse(item({ keywords: hundred })).success).toBe(true)
    expect(issue(Discovery.DiscoveredItem.safeParse(item({ keywords: [...hundred, "k100"] })))).toBe(
      "more than 100 keywords",
    )
    expect(Discovery.DiscoveredItem.safeParse(item({ keywords: [""] })).success).toBe(false)
  })

  test("filePath must be absolute; type, source and origin are enums", () => {
    expect(issue(Discovery.DiscoveredItem.safeParse(item({ filePath: ".claude/agents/a.md" })))).toBe(
      "filePath must be an absolute path",
    )
    expect(Discovery.DiscoveredItem.safeParse(item({ resourceType: "style" })).success).toBe(false)
    expect(Discovery.DiscoveredItem.safeParse(item({ source: "project" })).success).toBe(false)
    expect(Discovery.DiscoveredItem.safeParse(item({ origin: "cursor" })).success).toBe(false)
  })
})

describe("CacheEntry, MatchedItem, ProjectResource", () => {
  test("CacheEntry needs positive mtime and access time", () => {
    const content = Discovery.DiscoveredItem.parse(item())
    expect(Discovery.CacheEntry.safeParse({ content, mtimeMs: 1, lastAccessed: 2 }).success).toBe(true)
    expect(Discovery.CacheEntry.safeParse({ content, mtimeMs: 0, lastAccessed: 2 }).success).toBe(false)
    expect(Discovery.CacheEntry.safeParse({ content, mtimeMs: 1, lastAccessed: -1 }).success).toBe(false)
  })

  test("a MatchedItem has at least one matched keyword and a positive score", () => {
    const it = Discovery.DiscoveredItem.parse(item())
    expect(Discovery.MatchedItem.safeParse({ item: it, matchedKeywords: ["review"], score: 1.5 }).success).toBe(true)
    expect(issue(Discovery.MatchedItem.safeParse({ item: it, matchedKeywords: [], score: 1 }))).toBe(
      "a match has at least one matched keyword",
    )
    expect(Discovery.MatchedItem.safeParse({ item: it, matchedKeywords: ["x"], score: 0 }).success).toBe(false)
  })

  test("a ProjectResource needs a non-empty id and name", () => {
    expect(Discovery.ProjectResource.safeParse({ id: "ship-release", type: "task", name: "Ship" }).success).toBe(true)
    expect(issue(Discovery.ProjectResource.safeParse({ id: " ", type: "task", name: "Ship" }))).toBe(
      "resource id is empty",
    )
    expect(Discovery.ProjectResource.safeParse({ id: "a", type: "task", name: "" }).success).toBe(false)
  })
})

describe("DynamicContext and MemoryThinkContext", () => {
  const it = Discovery.DiscoveredItem.parse(item())
  const m = (score: number) => ({ item: it, matchedKeywords: ["review"], score })
  const ctx = (over: Record<string, unknown> = {}) => ({
    matchedAgents: [],
    matchedCommands: [],
    matchedSkills: [],
    matchedOutputStyles: [],
    matchedResources: [],
    isMemoryThinkContext: false,
    ...over,
  })

  test("at most 5 per type, sorted by score descending", () => {
    expect(Discovery.DynamicContext.safeParse(ctx({ matchedAgents: [m(5), m(4), m(3), m(2), m(1)] })).success).toBe(
      true,
    )
    expect(
      issue(Discovery.DynamicContext.safeParse(ctx({ matchedSkills: [m(6), m(5), m(4), m(3), m(2), m(1)] }))),
    ).toBe("at most 5 skills")
    expect(issue(Discovery.DynamicContext.safeParse(ctx({ matchedCommands: [m(1), m(2)] })))).toBe(
      "commands not sorted by score",
    )
  })

  test("memoryThink is present exactly when isMemoryThinkContext", () => {
    const mt = { pattern: "add", suggestedAgents: [m(2)], suggestedStyles: [], usageGuidance: "Use --agent" }
    expect(Discovery.DynamicContext.safeParse(ctx({ isMemoryThinkContext: true, memoryThink: mt })).success).toBe(true)
    expect(Discovery.DynamicContext.safeParse(ctx({ isMemoryThinkContext: true })).success).toBe(false)
    expect(Discovery.DynamicContext.safeParse(ctx({ memoryThink: mt })).success).toBe(false)
  })

  test("MemoryThinkContext: a known pattern, at most 5 agents and styles, non-empty guidance", () => {
    const base = { pattern: "branch", suggestedAgents: [], suggestedStyles: [], usageGuidance: "x" }
    expect(Discovery.MemoryThinkContext.safeParse(base).success).toBe(true)
    expect(Discovery.MemoryThinkContext.safeParse({ ...base, pattern: "delete" }).success).toBe(false)
    expect(issue(Discovery.MemoryThinkContext.safeParse({ ...base, usageGuidance: "  " }))).toBe(
      "usage guidance is empty",
    )
    const six = [m(6), m(5), m(4), m(3), m(2), m(1)]
    expect(Discovery.MemoryThinkContext.safeParse({ ...base, suggestedStyles: six }).success).toBe(false)
  })
})

describe("DynamicDiscoveryResult, ResourceDirectory, ParseResult, KeywordExtractionResult", () => {
  const context = {
    matchedAgents: [],
    matchedCommands: [],
    matchedSkills: [],
    matchedOutputStyles: [],
    matchedResources: [],
    isMemoryThinkContext: false,
  }

  test("success requires context; skipped requires skipReason and the reverse", () => {
    expect(Discovery.DynamicDiscoveryResult.safeParse({ success: true, context }).success).toBe(true)
    expect(issue(Discovery.DynamicDiscoveryResult.safeParse({ success: true }))).toBe("success requires context")
    expect(issue(Discovery.DynamicDiscoveryResult.safeParse({ success: false, skipped: true }))).toBe(
      "skipped requires skipReason",
    )
    expect(issue(Discovery.DynamicDiscoveryResult.safeParse({ success: false, skipReason: "timeout" }))).toBe(
      "skipReason requires skipped",
    )
    for (const skipReason of Discovery.SKIP_REASONS)
      expect(Discovery.DynamicDiscoveryResult.safeParse({ success: false, skipped: true, skipReason }).success).toBe(
        true,
      )
    expect(
      Discovery.DynamicDiscoveryResult.safeParse({ success: false, skipped: true, skipReason: "bored" }).success,
    ).toBe(false)
  })

  test("ResourceDirectory paths are absolute", () => {
    const dir = { path: "/h/.claude/agents", type: "agent", scope: "global", origin: "claude", exists: false }
    expect(Discovery.ResourceDirectory.safeParse(dir).success).toBe(true)
    expect(Discovery.ResourceDirectory.safeParse({ ...dir, path: "~/.claude/agents" }).success).toBe(false)
  })

  test("ParseResult: success has an item, failure an error", () => {
    const it = Discovery.DiscoveredItem.parse(item())
    expect(Discovery.ParseResult.safeParse({ success: true, item: it }).success).toBe(true)
    expect(Discovery.ParseResult.safeParse({ success: true }).success).toBe(false)
    expect(Discovery.ParseResult.safeParse({ success: false, error: "bad" }).success).toBe(true)
    expect(Discovery.ParseResult.safeParse({ success: false }).success).toBe(false)
  })

  test("KeywordExtractionResult: a known source and at most 100 keywords", () => {
    expect(Discovery.KeywordExtractionResult.safeParse({ keywords: ["a"], source: "filename" }).success).toBe(true)
    expect(Discovery.KeywordExtractionResult.safeParse({ keywords: [], source: "body" }).success).toBe(false)
    const many = Array.from({ length: 101 }, (_, i) => `k${i}`)
    expect(Discovery.KeywordExtractionResult.safeParse({ keywords: many, source: "explicit" }).success).toBe(false)
  })

  test("Config: enabled by default, the spec's timeout by default, bad values refused", () => {
    expect(Discovery.Config.parse({})).toEqual({ enabled: true, scanTimeoutMs: 2000 })
    expect(Discovery.Config.safeParse({ scanTimeoutMs: 0 }).success).toBe(false)
    expect(Discovery.Config.safeParse({ enabled: "no" }).success).toBe(false)
  })
})
