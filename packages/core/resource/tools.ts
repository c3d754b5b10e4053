import { tool, type ToolDefinition } from "@opencode-ai/plugin"
import { errorMessage } from "../util/error"
import type { ResourceLoader } from "./loader"
import { ResourceQuery } from "./query"
import { Resource } from "./schema"

/**
 * The four resource tools in `@opencode-ai/plugin` `ToolDefinition` shape: the external plugin returns them under
 * `tool:`, the fork registers them as built-ins. Results are strings (JSON, or the loaded text).
 *
 * @example
 * const tools = ResourceTools.create(ResourceLoader.create(host))
 * Object.keys(tools) // ["resource-query", "resource-load", "resource-list-loaded", "resource-release"]
 */
export namespace ResourceTools {
  export const IDS = ["resource-query", "resource-load", "resource-list-loaded", "resource-release"] as const

  // Compact JSON: every byte of a tool result is sent to the model again on each later request.
  const json = (value: unknown) => JSON.stringify(value)
  const failure = (name: string, error: unknown) => json({ error: name, message: errorMessage(error) })

  export function create(loader: ResourceLoader.Loader): Record<(typeof IDS)[number], ToolDefinition> {
    const limits = loader.config
    return {
      "resource-query": tool({
        description: [
          "Search this project's resources (checklists, knowledge-base articles, JSON schemas, tasks, templates under",
          ".opencode/) by words, type, domain, tags or the agent/command that references them. Returns JSON with id,",
          "name, description, tags, path and size, ranked by relevance (id/name, then tags, then description).",
          "Every query word must match; when no resource has them all, those with the most are given (partial: true).",
          `At most ${ResourceQuery.MAX_LIMIT} results (default 10). Use it before`,
          "resource-load to find the id.",
        ].join(" "),
        args: {
          type: tool.schema
            .enum([...Resource.TYPES, "all"])
            .optional()
            .describe("Only this resource type (default: all)"),
          query: tool.schema.string().optional().describe("Words to match against id, name, tags and description"),
          domain: tool.schema.enum(Resource.DOMAINS).optional().describe("Only this domain"),
          tags: tool.schema.array(tool.schema.string()).optional().describe("Required tags (all must match)"),
          referencedBy: tool.schema
            .string()
            .optional()
            .describe("Only resources referenced by this agent or command name"),
          limit: tool.schema
            .number()
            .int()
            .min(1)
            .max(ResourceQuery.MAX_LIMIT)
            .optional()
            .describe(`Maximum results, 1-${ResourceQuery.MAX_LIMIT} (default 10)`),
        },
        async execute(args) {
          try {
            return json({ query: args, ...(await loader.query(args)) })
          } catch (error) {
            return failure("QueryError", error)
          }
        },
      }),
      "resource-load": tool({
        description: [
          "Load the full content of a project resource by id (from resource-query) into this conversation.",
          "includeReferences also loads the resources it references, up to",
          `${limits.maxReferencesDepth} levels deep, each once. Limits: ${limits.maxResourcesPerSession} resources and`,
          `${Math.round(limits.maxTotalSizePerSession / 1024 / 1024)} MB loaded per session, files over`,
          `${Math.round(limits.maxFileSize / 1024)} KB are refused. Loaded content is removed from context when you`,
          "release it (resource-release) and, unless used again, after the next user message's turn ends.",
        ].join(" "),
        args: {
          id: tool.schema.string().describe("Resource id, e.g. 'git-operations'"),
          includeReferences: tool.schema
            .boolean()
            .optional()
            .describe(`Also load referenced resources (default ${limits.autoLoadReferences})`),
        },
        async execute(args, ctx) {
          try {
            return await loader.load(args, { sessionID: ctx.sessionID, messageID: ctx.messageID })
          } catch (error) {
            return failure("LoadError", error)
          }
        },
      }),
      "resource-list-loaded": tool({
        description:
          "List the resources loaded in this session with their status: active, flagged (loaded before the latest " +
          "user message; pruned when this turn ends unless loaded again), released or pruned (content removed).",
        args: {},
        async execute(_args, ctx) {
          try {
            return json(await loader.listLoaded({ sessionID: ctx.sessionID, messageID: ctx.messageID }))
          } catch (error) {
            return failure("ListError", error)
          }
        },
      }),
      "resource-release": tool({
        description:
          "Release loaded resources you no longer need: their content is removed from what is sent to the model from " +
          "the next request on (resource-load brings it back). Give ids, or no ids to release everything except keep.",
        args: {
          ids: tool.schema.array(tool.schema.string()).optional().describe("Ids to release (omit to release all)"),
          keep: tool.schema
            .array(tool.schema.string())
            .optional()
            .describe("With no ids: ids to keep loaded while releasing the rest"),
        },
        async execute(args, ctx) {
          try {
            return json(await loader.release(args, { sessionID: ctx.sessionID, messageID: ctx.messageID }))
          } catch (error) {
            return failure("ReleaseError", error)
          }
        },
      }),
    }
  }
}
