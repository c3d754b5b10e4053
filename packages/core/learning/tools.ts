import { tool, type ToolDefinition } from "@opencode-ai/plugin"
import { Keywords } from "../discovery/keywords"
import { LearningStore } from "./store"
import { StoredTime } from "../util/time"

/**
 * The learnings tools in `ToolDefinition` shape, the same for the plugin, the fork and the MCP server: the model (or
 * an MCP client) can look up what the user taught in earlier sessions and forget a learning the user disowns. There
 * is deliberately no tool to add one: learnings come from the user's own messages, never from the agent.
 *
 * @example
 * const tools = LearningTools.create(() => LearningStore.open("/repo"))
 * await tools["learnings-list"].execute({ kind: "correction" }, ctx) // '{"learnings":[…],"total":1}'
 */
export namespace LearningTools {
  export const IDS = ["learnings-list", "learnings-forget"] as const
  export const MAX_LIMIT = 50

  const iso = (t: number) => StoredTime.iso(t)

  export function create(
    store: () => LearningStore.Store,
    options: {
      /** The reader's security role (`LocalState.scope`): learnings said under another one are not listed. */
      role?: () => string | undefined
    } = {},
  ): Record<(typeof IDS)[number], ToolDefinition> {
    return {
      "learnings-list": tool({
        description:
          "List what the user taught in earlier sessions of this project: corrections, decisions and preferences " +
          "taken from their messages, most important first (kind, then how often it was said). Returns JSON.",
        args: {
          kind: tool.schema.enum(LearningStore.PRIORITY).optional().describe("Only this kind"),
          query: tool.schema.string().optional().describe("Words the learning must contain"),
          limit: tool.schema
            .number()
            .int()
            .min(1)
            .max(MAX_LIMIT)
            .optional()
            .describe(`Maximum results, 1-${MAX_LIMIT} (default 20)`),
        },
        async execute(args) {
          const role = options.role?.()
          const all = store()
            .list()
            .filter((l) => LearningStore.visibleTo(l, role))
          const wanted = args.query ? Keywords.terms(args.query) : []
          const matching = all.filter((l) => {
            if (args.kind && l.kind !== args.kind) return false
            if (!wanted.length) return true
            const have = new Set(Keywords.terms(l.text))
            return wanted.every((t) => have.has(t))
          })
          const shown = matching.slice(0, args.limit ?? 20)
          return JSON.stringify({
            learnings: shown.map((l) => ({
              id: l.id,
              kind: l.kind,
              text: l.text,
              count: l.count,
              firstSeen: iso(l.firstSeen),
              lastSeen: iso(l.lastSeen),
            })),
            total: matching.length,
            message: all.length ? undefined : "No learnings recorded in this project yet",
          })
        },
      }),
      "learnings-forget": tool({
        description:
          "Forget one learning by id (from learnings-list), when the user says it is wrong or no longer applies.",
        args: { id: tool.schema.string().describe("Learning id, e.g. 'lrn_3f2a9c01d4'") },
        async execute(args) {
          // Only a learning the caller may be given can be forgotten (or named in the answer).
          const role = options.role?.()
          const removed = store().remove(args.id.trim(), (l) => LearningStore.visibleTo(l, role))
          if (!removed)
            return JSON.stringify({
              error: "NotFound",
              message: `No learning with id '${args.id}' (learnings-list shows the ids)`,
            })
          return JSON.stringify({ forgotten: { id: removed.id, kind: removed.kind, text: removed.text } })
        },
      }),
    }
  }
}
