import { tool, type ToolDefinition } from "@opencode-ai/plugin"
import type { Host } from "../host"
import { SecurityPluginTool } from "../security/plugin-tool"
import { CaptureStore } from "./store"
import { StoredTime } from "../util/time"

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

  const iso = (t: number | undefined) => (t === undefined ? undefined : StoredTime.iso(t))

  /** What a call's text is replaced by when it names a path the security policy protects now. */
  export const WITHHELD = "[withheld: this call names a path the security policy protects now]"

  /** What a call's text is replaced by when it was captured under another security role or policy than the reader's. */
  export const OTHER_SCOPE = "[withheld: captured under another security role or policy than this reader's]"

  export type Options = {
    /**
     * The security layer's check (`Host.access`): a call whose arguments, title, output or error name a path it
     * refuses to read now shows none of them. Captures are kept for days; a file protected since (or moved under a
     * protected folder) may have been read, printed or written by a call captured before, and a short content is
     * not a copy the output scanner can recognise.
     */
    access?: Host["access"]
    /**
     * The reader's security role and policy (`LocalState.scope`): a call captured under another one (or before the
     * policy) shows none of its texts, since they were redacted for that one only (a short protected value is no
     * copy the output scanner recognises).
     */
    scope?: () => string | undefined
    directory?: string
    home?: string
  }

  export function create(
    store: () => CaptureStore.Store,
    options: Options = {},
  ): Record<(typeof IDS)[number], ToolDefinition> {
    /** The record as listed: whole, or without its texts when one of them names a path protected now. */
    const checked = async (r: CaptureStore.Record, max: number) => {
      const out = shown(r, max)
      const reader = options.scope?.()
      if (reader !== undefined && r.scope !== reader)
        return { ...out, args: OTHER_SCOPE, title: undefined, output: OTHER_SCOPE, error: out.error && OTHER_SCOPE }
      if (!options.access || !options.directory) return out
      const texts = [r.args, r.title, r.output, r.error].filter((t): t is string => typeof t === "string")
      // Also with `:` as a separator: `path:line:text` (grep, compilers) names the path before the first colon.
      const candidates = SecurityPluginTool.candidates([...texts, ...texts.map((t) => t.replaceAll(":", " "))], {
        directory: options.directory,
        home: options.home ?? process.env.HOME ?? "/",
      })
      for (const c of candidates) {
        if (!c.exists) continue
        if (await options.access(c.path, "read", { quiet: true }))
          return { ...out, args: WITHHELD, title: undefined, output: WITHHELD, error: out.error && WITHHELD }
      }
      return out
    }

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
              return JSON.stringify({ call: await checked(store().get(args.callID.trim()), Infinity) })
            } catch (error) {
              if (CaptureStore.NotFound.is(error)) return JSON.stringify(error.toJSON())
              throw error
            }
          }
          const matching = store().list({ tool: args.tool, failed: args.failed })
          return JSON.stringify({
            calls: await Promise.all(matching.slice(0, args.limit ?? 20).map((r) => checked(r, PREVIEW))),
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
