import type { ToolDefinition } from "@opencode-ai/plugin"
import type { Host } from "../host"
import { SecurityHook } from "../security/hook"
import { Builtins } from "./index"
import { BuiltIn } from "./registry"

/**
 * The functions the fork's seams call, over one composition (`Builtins.create`). OpenCode's glue adapts its services
 * to a `Host`, registers `tools` as built-ins, and routes every `Plugin.trigger` through `trigger`, so each hook point
 * of OpenCode (tool calls of every kind, prompts, commands, messages sent to the model at both call sites, system
 * prompts, compaction, the shell environment) runs core's hooks around the other plugins' hooks:
 *
 * - arguments are judged after other plugins changed them (`tool.execute.before`), and the sandbox entry and tool
 *   descriptions are set last (`shell.env`, `tool.definition`);
 * - content reaches other plugins redacted and is redacted again after them (tool results, prompt and command parts,
 *   completed text, compaction context); messages and system prompts go to them as redacted clones of which only
 *   structural changes come back (`guard.guardMessages`, `guard.guardSystem`);
 * - hook inputs that carry a stored message (`experimental.compaction.autocontinue`) reach them redacted.
 *
 * Every call site of OpenCode runs tool hooks through `Plugin.trigger` (registry and plugin tools, MCP tools, MCP
 * resource tools, code-mode child calls, subtasks), so plugin tools are judged by the same per-hook rules as on the
 * plugin route, and their structured results (`title`, `metadata`, `attachments`) keep their shape.
 *
 * @example
 * const seams = await BuiltinsSeams.create(host, { options, logger })
 * await seams.trigger("tool.execute.before", { tool: "read", sessionID, callID }, { args }, runOtherPlugins)
 * seams.mcpAllowed("docs") // false when the policy blocks the server
 */
export namespace BuiltinsSeams {
  /** Runs the other plugins' hooks of one trigger on `output` (with `input`, or the trigger's own input). */
  export type Others = (output: any, input?: any) => Promise<void>

  export type Seams = {
    /** Core's tools in the plugin shape, registered by the fork as built-ins (never plugin-guarded). */
    tools: Record<string, ToolDefinition>
    /** `Plugin.trigger`: core's hooks for `name` around `others`. Throws a typed refusal to stop a tool call. */
    trigger(name: string, input: any, output: any, others: Others): Promise<void>
    /** May a configured MCP server's tools, prompts and resources be offered and used? */
    mcpAllowed(server: string): boolean
    /** OpenCode's configuration, once per instance (MCP server names, the shell, skill and agent folders). */
    config(config: unknown): Promise<void>
    /** An OpenCode event (session and file events keep the resource lifecycle current). */
    event(event: { id?: string; type: string; properties: unknown }): Promise<void>
    /** `PluginInput.hasBuiltIn`. */
    has(feature: string): boolean
    /** Ids of the features built. */
    built: string[]
    dispose(): Promise<void>
  }

  type Hook = (input: unknown, output: unknown) => Promise<void>

  /**
   * Builds every feature for `host` (nothing is provided by anyone else in the fork) and the seam functions over
   * them.
   *
   * @example
   * const seams = await BuiltinsSeams.create(host, { options: {}, logger: () => Logger.silent })
   */
  export async function create(host: Host, input: Omit<Builtins.Input, "native">): Promise<Seams> {
    return from(await Builtins.create(host, { ...input, native: () => false }))
  }

  /** The seam functions over an existing composition. */
  export function from(instance: Builtins.Instance): Seams {
    const hooks = instance.hooks as Record<string, Hook | undefined>
    const { guard, security, ready } = instance.exposed
    const own = (name: string) => hooks[name] ?? (async () => {})
    const last = (name: string) =>
      (security as Record<string, Hook | undefined> | undefined)?.[name] ?? (async () => {})
    const redact = (text: string) => (guard ? guard.scanAndRedact(text, { scope: "llm", paths: "token" }).text : text)

    return {
      tools: { ...(instance.hooks.tool ?? {}) },
      built: instance.built,
      has: BuiltIn.has,
      mcpAllowed: (server) => (guard ? guard.mcpPolicy(server) !== "blocked" : !instance.exposed.refused),
      async config(config) {
        await own("config")(config, undefined)
      },
      async event(event) {
        await (hooks.event as ((input: unknown) => Promise<void>) | undefined)?.({ event })
      },
      async dispose() {
        await (hooks.dispose as (() => Promise<void>) | undefined)?.()
        guard?.close()
      },
      async trigger(name, input, output, others) {
        // Nothing to guard or change (OpenCode 1.18 reports a failed subtask's end with no result).
        if (output === undefined || output === null) return others(output)
        switch (name) {
          // Set last: arguments as the tool will run with them, the sandbox entry, what the model is told.
          case "tool.execute.before":
          case "shell.env":
          case "tool.definition":
            await others(output)
            await own(name)(input, output)
            return
          // Content: core first (redacted before others see it), then the security rules once more.
          case "tool.execute.after":
          case "chat.message":
          case "command.execute.before":
          case "experimental.text.complete":
          case "experimental.session.compacting":
            await own(name)(input, output)
            await others(output)
            await last(name)(input, output)
            return
          case "experimental.chat.messages.transform": {
            await own(name)(input, output)
            if (!guard || !Array.isArray(output?.messages)) return others(output)
            const diff = await guard.guardMessages(output.messages, async (clone) => {
              const copy = { ...output, messages: clone }
              await others(copy)
              return copy.messages
            })
            output.messages.splice(0, output.messages.length, ...diff.messages)
            await last(name)(input, output)
            return
          }
          case "experimental.chat.system.transform": {
            await own(name)(input, output)
            if (!guard || !Array.isArray(output?.system)) return others(output)
            const system = await guard.guardSystem(output.system, async (copy) => {
              const out = { ...output, system: copy }
              await others(out)
              return out.system
            })
            output.system.splice(0, output.system.length, ...system)
            await last(name)(input, output)
            return
          }
          case "experimental.compaction.autocontinue": {
            await own(name)(input, output)
            if (!guard?.active() || !input?.message) return others(output)
            await ready?.()
            const message = structuredClone(input.message)
            SecurityHook.redactDeep(message, redact)
            await others(output, { ...input, message })
            return
          }
          default:
            await own(name)(input, output)
            await others(output)
        }
      },
    }
  }

  /** Hook names `trigger` handles beyond running core's and the plugins' hooks in turn (for tests and docs). */
  export const GUARDED: readonly string[] = [
    "tool.execute.before",
    "shell.env",
    "tool.definition",
    "tool.execute.after",
    "chat.message",
    "command.execute.before",
    "experimental.text.complete",
    "experimental.session.compacting",
    "experimental.chat.messages.transform",
    "experimental.chat.system.transform",
    "experimental.compaction.autocontinue",
  ]
}
