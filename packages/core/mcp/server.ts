import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js"
import { tool, type ToolContext, type ToolDefinition } from "@opencode-ai/plugin"
import crypto from "crypto"
import z from "zod"
import { Builtins } from "../builtins"
import { Capture } from "../capture/feature"
import { CaptureStore } from "../capture/store"
import { CaptureTools } from "../capture/tools"
import { DiscoveryHooks } from "../discovery/hooks"
import type { Host } from "../host"
import { LocalState } from "../learning/local"
import { LearningStore } from "../learning/store"
import { LearningTools } from "../learning/tools"
import type { Options } from "../options"
import { errorMessage } from "../util/error"
import type { Logger } from "../util/log"

/**
 * OpenCode Built-ins as an MCP server: the resource tools, discovery, the learnings tools and the captured tool calls
 * (`capture-list`) of one project, for any MCP client (another agent, Claude Code, OpenCode itself as an `mcp` entry).
 * It runs the same composition as the plugin (`Builtins.create` with the security layer, the resource loader and
 * discovery), and every call goes the way
 * OpenCode runs a plugin tool: `tool.execute.before` (arguments judged by the security policy), the tool, then
 * `tool.execute.after` (output redacted). So a client gets byte for byte what the model gets in OpenCode for the
 * same arguments, and what the policy protects stays invisible.
 *
 * Over MCP the client owns its context: nothing can be pruned from it, so the lifecycle tools (`resource-list-loaded`,
 * `resource-release`) are not offered and every `resource-load` is answered on its own (never "already loaded").
 * `discover` returns the suggestion discovery adds to a prompt in OpenCode, except that it names each agent's, skill's,
 * command's and style's file to read (the client has no skill or task tool, no `@agent` or `/command`).
 *
 * @example
 * const mcp = await BuiltinsMcp.create({ directory: "/repo", log })
 * await mcp.server.connect(new StdioServerTransport())
 */
export namespace BuiltinsMcp {
  export const NAME = "opencode-builtins"
  /** Tools offered, in the order they are listed. */
  export const TOOLS = [
    "resource-query",
    "resource-load",
    "discover",
    "learnings-list",
    "learnings-forget",
    "capture-list",
  ] as const
  /** `discover`'s answer when nothing matches the prompt. */
  export const NO_SUGGESTION =
    "No suggestion: no agent, command, skill, output style or resource of this project or the user's folders matches this request."
  /**
   * The features composed for the server (the others act on OpenCode sessions, which an MCP client has not). Tool
   * capture is not one of them: with OpenCode as the client, its plugin already captures the call, and a second
   * record of the same execution from the server would break "captured exactly once".
   */
  export const FEATURES = ["builtin-tool-security", "resource-loader", "dynamic-discovery"] as const

  export type Init = {
    directory: string
    worktree?: string
    options?: Options
    log: Logger
    logger?: (service: string) => Logger
    version?: string
  }

  /**
   * The JSON-RPC error response for a line the transport could not take as a message, or undefined for other
   * transport errors: `-32700` for text that is not JSON, `-32600` for JSON that is not a JSON-RPC message. The id is
   * `null`, as JSON-RPC asks when the request's id cannot be read. (The SDK's stdio transport only reports such a line
   * to `onerror`, so a client that sent one waited for an answer that never came.)
   *
   * @example
   * BuiltinsMcp.malformed(new SyntaxError("JSON Parse error")) // { jsonrpc: "2.0", id: null, error: { code: -32700, … } }
   */
  export function malformed(error: unknown) {
    const reply = (code: number, message: string) => ({ jsonrpc: "2.0" as const, id: null, error: { code, message } })
    if (error instanceof SyntaxError) return reply(-32700, `Parse error: a line that is not JSON (${error.message})`)
    if (error instanceof Error && error.name === "ZodError")
      return reply(-32600, "Invalid Request: a JSON line that is not a JSON-RPC 2.0 request, notification or response")
    return undefined
  }

  export type Result = { text: string; isError: boolean }

  export type Instance = {
    server: Server
    /** The tools as listed to clients. */
    tools: Tool[]
    /** Runs one tool the way a client's `tools/call` does. */
    call(name: string, args: unknown, signal?: AbortSignal): Promise<Result>
    close(): Promise<void>
  }

  export async function create(init: Init): Promise<Instance> {
    const host: Host = {
      directory: init.directory,
      worktree: init.worktree ?? init.directory,
      log: init.log,
      stateless: true,
      client: "mcp",
    }
    const built = await Builtins.create(host, {
      options: init.options ?? {},
      logger: init.logger ?? (() => init.log),
      only: FEATURES,
    })
    const hooks = built.hooks as Record<string, any>
    const root = LocalState.root(host.directory, host.worktree)
    const session = `mcp_${crypto.randomBytes(6).toString("hex")}`
    let counter = 0

    const discover = tool({
      description:
        "Which of this project's agents, commands, skills, output styles and resources (.opencode/, .claude/, the " +
        "user's folders) match a task: the suggestion OpenCode adds to a prompt, naming each file to read. Returns " +
        "text; when nothing matches, a line saying so.",
      args: { prompt: tool.schema.string().describe("The task or question, in the user's words") },
      async execute(args, ctx) {
        const messageID = ctx.messageID
        const output = {
          message: { id: messageID, sessionID: ctx.sessionID, role: "user" },
          parts: [{ id: DiscoveryHooks.partID([]), type: "text", text: args.prompt } as DiscoveryHooks.Part],
        }
        await hooks["chat.message"]?.({ sessionID: ctx.sessionID, messageID }, output)
        const text = output.parts
          .slice(1)
          .map((p) => p.text ?? "")
          .join("\n")
        // An empty result reads as a blank answer in a client; say that nothing matched.
        return text || NO_SUGGESTION
      },
    })
    const all: Record<string, ToolDefinition> = {
      ...(built.hooks.tool ?? {}),
      discover,
      ...LearningTools.create(() => LearningStore.open(root), {
        role: () => LocalState.role(host),
      }),
      ...CaptureTools.create(() => CaptureStore.open(root, Capture.limits(init.options?.capture)), {
        // Read at call time: installed by the security feature.
        access: (target, op, options) => host.access?.(target, op, options) ?? Promise.resolve(undefined),
        scope: () => LocalState.scope(host),
        directory: host.directory,
      }),
    }
    const offered = TOOLS.filter((id) => all[id])

    const schemas = new Map<string, z.ZodObject>(offered.map((id) => [id, z.object(all[id].args)]))
    const tools: Tool[] = offered.map((id) => {
      const { $schema: _, ...inputSchema } = z.toJSONSchema(schemas.get(id)!) as Record<string, unknown>
      return {
        name: id,
        description: describe(id, all[id].description),
        inputSchema: inputSchema as Tool["inputSchema"],
      }
    })

    /** Descriptions as in OpenCode, less what does not hold over MCP (the context lifecycle). */
    function describe(id: string, description: string) {
      return id === "resource-load" ? description.replace(/\s*Loaded content is removed[^]*$/, "") : description
    }

    async function call(name: string, raw: unknown, signal?: AbortSignal): Promise<Result> {
      const def = (offered as readonly string[]).includes(name) ? all[name] : undefined
      if (!def) return { text: `Unknown tool '${name}'. Tools: ${offered.join(", ")}`, isError: true }
      const parsed = schemas.get(name)!.safeParse(raw ?? {})
      if (!parsed.success)
        return {
          text: `The ${name} tool was called with invalid arguments: ${z.prettifyError(parsed.error)}`,
          isError: true,
        }
      const n = ++counter
      // Each call is its own session: the client keeps what it was given, nothing is tracked between calls.
      const sessionID = `${session}_${n}`
      const callID = `call_mcp_${n}`
      const ctx: ToolContext = {
        sessionID,
        messageID: `msg_mcp_${n}`,
        agent: "mcp",
        directory: host.directory,
        worktree: host.worktree,
        abort: signal ?? new AbortController().signal,
        metadata: () => {},
        ask: async () => {},
      }
      try {
        const input = { tool: name, sessionID, callID }
        const before = { args: parsed.data }
        await hooks["tool.execute.before"]?.(input, before)
        const text = await def.execute(before.args, ctx)
        const result = { title: "", output: text, metadata: {} as Record<string, unknown> }
        await hooks["tool.execute.after"]?.({ ...input, args: before.args }, result)
        // Judged on the tool's own answer: the security layer may have redacted lines of it since.
        return { text: result.output, isError: failed(text) }
      } catch (error) {
        return { text: errorMessage(error), isError: true }
      } finally {
        await hooks.event?.({ event: { type: "session.deleted", properties: { info: { id: sessionID } } } })
      }
    }

    /**
     * Whether a tool's answer is a failure it reports as a value: core's tools answer a missing resource or learning with
     * a JSON object whose `error` names it (`{"error": "ResourceNotFound", "message": …}`), which the model reads; an
     * MCP client is told through `isError`, as the protocol reports a tool's execution errors.
     */
    function failed(text: string): boolean {
      if (!text.trimStart().startsWith("{") || !text.includes('"error"')) return false
      try {
        const value = JSON.parse(text)
        return typeof value?.error === "string" && value.error.length > 0
      } catch {
        return false
      }
    }

    const server = new Server(
      { name: NAME, version: init.version ?? "0.1.0" },
      {
        capabilities: { tools: {} },
        instructions:
          "Project resources (checklists, knowledge-base articles, schemas, tasks, templates), what matches a task, " +
          "and what the user taught in earlier sessions, for the project this server runs in.",
      },
    )
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }))
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const result = await call(request.params.name, request.params.arguments, extra.signal)
      return { content: [{ type: "text" as const, text: result.text }], ...(result.isError ? { isError: true } : {}) }
    })

    return {
      server,
      tools,
      call,
      async close() {
        await server.close().catch((error) => init.log.warn("closing the MCP server", { error: errorMessage(error) }))
        built.exposed.guard?.close()
      },
    }
  }
}
