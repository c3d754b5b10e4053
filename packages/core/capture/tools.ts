import { tool, type ToolDefinition } from "@opencode-ai/plugin"
import { CaptureStore } from "./store"

/**
 * The capture reading tool in `ToolDefinition` shape, offered by the MCP server (an MCP client, e.g. another agent,
 * can see which tool calls OpenCode ran in this project and which failed). OpenCode's own model is not offered it:
 * its own calls are in its context already, and every tool listed costs tokens in every request.
 *
 * @example
 * const tools = CaptureTools.create(() => CaptureStore.open("/repo"))
 * await tools["capture-list"].execute({ failed: true }, ctx) // '{"calls":[…],"total":2}'
 */
export namespace CaptureTools {
  export const IDS = ["capture-list"] as const
  export const MAX_LIMIT = 50
  /** Characters of each call's output or error in a list (one call by `callID` gets the whole stored text). */
  export const PREVIEW = 300

  const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString())

  export function create(store: () => CaptureStore.Store): Record<(typeof IDS)[number], ToolDefinition> {
    return {
      "capture-list": tool({
        description:
          "Tool calls OpenCode ran in this project, newest first, failed ones marked, output redacted and shortened. " +
          "Give callID for one call in full. Returns JSON.",
        args: {
          callID: tool.schema.string().optional().describe("One call, in full"),
          tool: tool.schema.string().optional().describe("Only calls of this tool"),
          failed: tool.schema.boolean().optional().describe("Only failed calls"),
          limit: tool.schema
            .number()
            .int()
            .min(1)
            .max(MAX_LIMIT)
            .optional()
            .describe(`Maximum results, 1-${MAX_LIMIT} (default 20)`),
        },
        async execute(args) {
          if (args.callID) {
            try {
              return JSON.stringify({ call: shown(store().get(args.callID.trim()), Infinity) })
            } catch (error) {
              if (CaptureStore.NotFound.is(error)) return JSON.stringify(error.toJSON())
              throw error
            }
          }
          const matching = store().list({ tool: args.tool, failed: args.failed })
          return JSON.stringify({
            calls: matching.slice(0, args.limit ?? 20).map((r) => shown(r, PREVIEW)),
            total: matching.length,
            message: matching.length ? undefined : "No tool calls captured (that match) in this project",
          })
        },
      }),
    }
  }

  function shown(r: CaptureStore.Record, max: number) {
    const cut = (text: string | undefined) => (text === undefined ? undefined : CaptureStore.cut(text, max).text)
    return {
      callID: r.callID,
      tool: r.tool,
      status: r.status,
      sessionID: r.sessionID,
      parentID: r.parentID,
      title: r.title,
      args: r.args,
      output: cut(r.output),
      error: cut(r.error),
      startedAt: iso(r.startedAt),
      endedAt: iso(r.at),
    }
  }
}
