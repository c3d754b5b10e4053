import path from "path"
import z from "zod"

/**
 * Shapes of dynamic context discovery: what a discovered agent, command, skill or output style is, the cache entry
 * that holds it, what matching a prompt produces and the result of a discovery run. Types are inferred from the
 * schemas, so the validation rules and the types cannot drift apart.
 *
 * @example
 * const item = Discovery.DiscoveredItem.parse({
 *   name: "code-reviewer", description: "Reviews diffs", keywords: ["review"], filePath: "/home/me/.claude/agents/code-reviewer.md",
 *   resourceType: "agent", source: "global", origin: "claude",
 * })
 */
export namespace Discovery {
  /** Cache entries before least-recently-used eviction (the engine raises it to the catalogue size; see cache.ts). */
  export const MAX_CACHE_SIZE = 50
  /** Suggestions kept per resource type. */
  export const MAX_SUGGESTIONS = 5
  /** Time budget of one discovery scan (all directories, scanned in parallel), in milliseconds. */
  export const SCAN_TIMEOUT_MS = 2000
  /** A `memory think <command>` prompt. */
  export const MEMORY_THINK_PATTERN = /memory\s+think\s+(create|add|counter|branch|conclude)/i

  export const NAME_MAX = 200
  export const DESCRIPTION_MAX = 1000
  export const KEYWORDS_MAX = 100
  /** Characters kept of a definition's first body paragraph (matched, and its description when it has none). */
  export const LEAD_MAX = 300
  /**
   * Characters of a definition's body matched (with a low weight) beyond its description: its first sections name
   * what it is for in words the description leaves out ("screen reader" under an accessibility agent). Chosen on the
   * tuning sets (800–2,500 compared; test/discovery/evaluation.test.ts).
   */
  export const BODY_MAX = 1500

  export const RESOURCE_TYPES = ["agent", "command", "skill", "outputStyle"] as const
  export const ResourceType = z.enum(RESOURCE_TYPES)
  export type ResourceType = z.infer<typeof ResourceType>

  /** Global: under the home directory (or `$XDG_CONFIG_HOME`); local: in the project. */
  export const ResourceSource = z.enum(["global", "local"])
  export type ResourceSource = z.infer<typeof ResourceSource>

  /**
   * Which tool's layout a directory follows. OpenCode loads its own agents and commands and every skill (including
   * `.claude/skills`); Claude Code agents, commands and output styles are not loaded by OpenCode, so suggestions point
   * at their file instead of an invocation that would not work.
   */
  export const Origin = z.enum(["claude", "opencode"])
  export type Origin = z.infer<typeof Origin>

  export const DiscoveredItem = z
    .object({
      /** From frontmatter `name`, else the file name (relative path without `.md`; a skill's folder name). */
      name: z.string().trim().min(1, "name is empty").max(NAME_MAX, `name is longer than ${NAME_MAX} characters`),
      /**
       * From frontmatter `description`; when missing, the first paragraph of the body (Claude Code shows a command's
       * first line the same way); empty when there is neither.
       */
      description: z.string().max(DESCRIPTION_MAX, `description is longer than ${DESCRIPTION_MAX} characters`),
      keywords: z.array(z.string().min(1)).max(KEYWORDS_MAX, `more than ${KEYWORDS_MAX} keywords`),
      /** Where `keywords` come from: written in the frontmatter, or extracted from the description or the name. */
      keywordSource: z.enum(["explicit", "description", "filename"]).optional(),
      /** The first paragraph of the body (a heading and the line after it), at most `LEAD_MAX` characters. */
      lead: z.string().max(LEAD_MAX).optional(),
      filePath: z.string().refine((p) => path.isAbsolute(p), "filePath must be an absolute path"),
      resourceType: ResourceType,
      source: ResourceSource,
      origin: Origin,
      /**
       * An agent OpenCode offers no subagent for: `disable: true` (OpenCode drops the agent of that name) or
       * `mode: primary` (the task tool lists only subagents; a primary agent is switched to by the user). Such an agent
       * still takes its name from agents of lower precedence, and is never suggested.
       */
      unavailable: z.enum(["disabled", "primary"]).optional(),
    })
    .readonly()
  export type DiscoveredItem = z.infer<typeof DiscoveredItem>

  export const CacheEntry = z
    .object({
      content: DiscoveredItem,
      /** The lenient read's note, reported again on every scan that uses the entry. */
      warning: z.string().optional(),
      mtimeMs: z.number().positive(),
      lastAccessed: z.number().positive(),
    })
    .readonly()
  export type CacheEntry = z.infer<typeof CacheEntry>

  export const MatchedItem = z
    .object({
      item: DiscoveredItem,
      /** The prompt's words that matched (as written in the prompt). */
      matchedKeywords: z.array(z.string()).min(1, "a match has at least one matched keyword"),
      /** Relevance; higher is better. */
      score: z.number().positive(),
    })
    .readonly()
  export type MatchedItem = z.infer<typeof MatchedItem>

  /** A project resource as the resource loader lists it; suggested by id so the agent can `resource-load` it. */
  export const ProjectResource = z
    .object({
      id: z.string().trim().min(1, "resource id is empty"),
      type: z.string().min(1),
      name: z.string().trim().min(1, "resource name is empty").max(NAME_MAX),
      description: z.string().optional(),
      tags: z.array(z.string()).optional(),
      /** The resource's file (absolute), checked against the host's security policy before it is suggested. */
      path: z.string().optional(),
    })
    .readonly()
  export type ProjectResource = z.infer<typeof ProjectResource>

  export const MatchedResource = z
    .object({
      resource: ProjectResource,
      matchedKeywords: z.array(z.string()).min(1),
      score: z.number().positive(),
    })
    .readonly()
  export type MatchedResource = z.infer<typeof MatchedResource>

  /** Supplies the project's resources, e.g. from the resource loader's index. */
  export type ResourceProvider = () => Promise<Iterable<ProjectResource>>

  /** At most `MAX_SUGGESTIONS` entries, best first. */
  function ranked<T extends z.ZodType<{ score: number }>>(entry: T, what: string) {
    return z
      .array(entry)
      .max(MAX_SUGGESTIONS, `at most ${MAX_SUGGESTIONS} ${what}`)
      .refine((list) => list.every((m, i) => i === 0 || list[i - 1].score >= m.score), `${what} not sorted by score`)
  }

  export const MEMORY_THINK_PATTERNS = ["create", "add", "counter", "branch", "conclude"] as const
  export const MemoryThinkPattern = z.enum(MEMORY_THINK_PATTERNS)
  export type MemoryThinkPattern = z.infer<typeof MemoryThinkPattern>

  export const MemoryThinkContext = z
    .object({
      pattern: MemoryThinkPattern,
      suggestedAgents: ranked(MatchedItem, "suggested agents"),
      suggestedStyles: ranked(MatchedItem, "suggested styles"),
      /** How to pass `--agent` and `--style`, with examples for the detected command. */
      usageGuidance: z.string().trim().min(1, "usage guidance is empty"),
    })
    .readonly()
  export type MemoryThinkContext = z.infer<typeof MemoryThinkContext>

  export const DynamicContext = z
    .object({
      matchedAgents: ranked(MatchedItem, "agents"),
      matchedCommands: ranked(MatchedItem, "commands"),
      matchedSkills: ranked(MatchedItem, "skills"),
      matchedOutputStyles: ranked(MatchedItem, "output styles"),
      matchedResources: ranked(MatchedResource, "resources"),
      isMemoryThinkContext: z.boolean(),
      /** Present when `isMemoryThinkContext`. */
      memoryThink: MemoryThinkContext.optional(),
    })
    .readonly()
    .refine((c) => c.isMemoryThinkContext === (c.memoryThink !== undefined), {
      message: "memoryThink is present exactly when isMemoryThinkContext is true",
    })
  export type DynamicContext = z.infer<typeof DynamicContext>

  export const ResourceDirectory = z
    .object({
      path: z.string().refine((p) => path.isAbsolute(p), "path must be absolute"),
      type: ResourceType,
      scope: ResourceSource,
      origin: Origin,
      exists: z.boolean(),
    })
    .readonly()
  export type ResourceDirectory = z.infer<typeof ResourceDirectory>

  export const SKIP_REASONS = ["disabled", "no_resources_found", "timeout", "filesystem_error"] as const
  export const SkipReason = z.enum(SKIP_REASONS)
  export type SkipReason = z.infer<typeof SkipReason>

  /** A source that did not answer fully: a directory (or the resource provider) that timed out or failed. */
  export const Degraded = z
    .object({
      /** The directory, or `resources` for the resource provider. */
      source: z.string(),
      reason: z.enum(["timeout", "filesystem_error"]),
      error: z.string().optional(),
    })
    .readonly()
  export type Degraded = z.infer<typeof Degraded>

  export const Stats = z
    .object({
      /** Items discovered after precedence (local over global), all types. */
      discovered: z.number().int().min(0),
      resources: z.number().int().min(0),
      directories: z.number().int().min(0),
      /** Files served from the cache / parsed anew in this run. */
      cacheHits: z.number().int().min(0),
      parsed: z.number().int().min(0),
      durationMs: z.number().min(0),
    })
    .readonly()
  export type Stats = z.infer<typeof Stats>

  export const DynamicDiscoveryResult = z
    .object({
      success: z.boolean(),
      context: DynamicContext.optional(),
      error: z.string().optional(),
      skipped: z.boolean().optional(),
      skipReason: SkipReason.optional(),
      /** Sources that timed out or failed while the rest answered (the result is partial, not failed). */
      degraded: z.array(Degraded).optional(),
      stats: Stats.optional(),
    })
    .readonly()
    .refine((r) => !r.success || r.context !== undefined, { message: "success requires context" })
    .refine((r) => !r.skipped || r.skipReason !== undefined, { message: "skipped requires skipReason" })
    .refine((r) => r.skipReason === undefined || r.skipped === true, { message: "skipReason requires skipped" })
  export type DynamicDiscoveryResult = z.infer<typeof DynamicDiscoveryResult>

  /** Problems met while scanning: files that could not be read or parsed (reported, never fatal). */
  /**
   * A file skipped with the reason, or (`severity: "warning"`) read leniently: discovered, with a note of what was
   * wrong (frontmatter YAML refuses, read as Claude Code reads it).
   */
  export const FileProblem = z
    .object({ path: z.string(), error: z.string(), severity: z.literal("warning").optional() })
    .readonly()
  export type FileProblem = z.infer<typeof FileProblem>

  export const ScanResult = z
    .object({
      directory: ResourceDirectory,
      items: z.array(DiscoveredItem),
      timedOut: z.boolean(),
      /** Set when the directory itself could not be scanned. */
      error: z.string().optional(),
      /** Files skipped with a reason (unparseable, unreadable, invalid), and files read leniently (warnings). */
      problems: z.array(FileProblem),
      cacheHits: z.number().int().min(0),
      parsed: z.number().int().min(0),
    })
    .readonly()
  export type ScanResult = z.infer<typeof ScanResult>

  export const ParseResult = z
    .object({
      success: z.boolean(),
      item: DiscoveredItem.optional(),
      error: z.string().optional(),
      /** Set when the item was read leniently (its frontmatter needed the retry), saying what was wrong. */
      warning: z.string().optional(),
    })
    .readonly()
    .refine((r) => (r.success ? r.item !== undefined : r.error !== undefined), {
      message: "a successful parse has an item, a failed one an error",
    })
  export type ParseResult = z.infer<typeof ParseResult>

  export const KeywordExtractionResult = z
    .object({
      keywords: z.array(z.string().min(1)).max(KEYWORDS_MAX),
      source: z.enum(["explicit", "description", "filename"]),
    })
    .readonly()
  export type KeywordExtractionResult = z.infer<typeof KeywordExtractionResult>

  /** Discovery settings (plugin section `discovery`). */
  export const Config = z.object({
    /** Suggestions on (default) or off. */
    enabled: z.boolean().default(true),
    /** Time budget of a scan; raise it for a slow (network) home directory. */
    scanTimeoutMs: z.number().int().min(1).max(60_000).default(SCAN_TIMEOUT_MS),
  })
  export type Config = z.infer<typeof Config>
  export type ConfigInput = z.input<typeof Config>

  /** The spec's `DynamicDiscoveryOptions`: `Config` (there is no `_mockFileSystem`; tests use real folders). */
  export const DynamicDiscoveryOptions = Config
  export type DynamicDiscoveryOptions = ConfigInput
}
