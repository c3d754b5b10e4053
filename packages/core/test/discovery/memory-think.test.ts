import { describe, expect, test } from "bun:test"
import { MemoryThink } from "../../discovery/memory-think"
import { Discovery } from "../../discovery/schema"

const matched = (name: string, type: Discovery.ResourceType, score: number): Discovery.MatchedItem => ({
  item: {
    name,
    description: `${name} things`,
    keywords: [],
    filePath: `/h/${name}.md`,
    resourceType: type,
    source: "global",
    origin: "claude",
  },
  matchedKeywords: ["x"],
  score,
})

describe("MemoryThink", () => {
  test("detects the command and keeps the thought as the topic", () => {
    expect(MemoryThink.detect("memory think add 'token storage risk'")).toEqual({
      pattern: "add",
      topic: "'token storage risk'",
    })
    expect(MemoryThink.detect("please Memory Think CONCLUDE we ship")).toEqual({
      pattern: "conclude",
      topic: "please we ship",
    })
    expect(MemoryThink.detect("I think memory is low")).toBeUndefined()
  })

  test("builds a valid MemoryThinkContext with examples using the detected command", () => {
    const ctx = MemoryThink.context(
      { pattern: "counter", topic: "'move everything to kubernetes' --style x" },
      [matched("kubernetes-architect", "agent", 3)],
      [matched("devils-advocate", "outputStyle", 2)],
    )
    expect(Discovery.MemoryThinkContext.safeParse(ctx).success).toBe(true)
    expect(ctx.usageGuidance).toContain("--agent <name> for domain expertise or --style <name> for perspective")
    expect(ctx.usageGuidance).toContain(
      "memory think counter 'move everything to kubernetes' --agent kubernetes-architect",
    )
    expect(ctx.usageGuidance).toContain("memory think counter 'move everything to kubernetes' --style devils-advocate")
  })

  test("at most MAX_SUGGESTIONS agents and styles", () => {
    const many = Array.from({ length: 8 }, (_, i) => matched(`a${i}`, "agent", 10 - i))
    const ctx = MemoryThink.context({ pattern: "add", topic: "x" }, many, [])
    expect(ctx.suggestedAgents).toHaveLength(Discovery.MAX_SUGGESTIONS)
  })

  test("without matches or topic the guidance is still concrete", () => {
    const ctx = MemoryThink.context({ pattern: "branch", topic: "" }, [], [])
    expect(ctx.usageGuidance).toContain(
      "Example: memory think branch 'an alternative view' --agent <name> --style <name>",
    )
  })
})
