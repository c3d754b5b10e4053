import { SecurityGuard } from "@opencode-builtins/core/security/guard"
import { SecurityTools } from "@opencode-builtins/core/security/tools"
import type { Feature } from "../feature"
import { validSection } from "../options"

/**
 * The security layer on stock OpenCode: `.opencode-security.json` enforced through hooks — `tool.execute.before`
 * refuses tool calls (built-in tools by their path arguments and shell analysis, other plugins' and MCP tools by
 * their string arguments), `tool.execute.after` redacts tool output, the message and system transforms redact what
 * is sent to the model, `chat.message` redacts protected content a prompt attaches before it is stored. It also
 * installs `host.access` for the other features. Listed first, so its inbound hooks run first and its outbound hooks
 * last.
 */
export const SecurityFeature: Feature = {
  id: "builtin-tool-security",
  section: "security",
  async init({ input, options, log, host }) {
    const config = validSection(SecurityGuard.Config, options, "security", log)
    const native = (id: string) => (input as { hasBuiltIn?: (id: string) => boolean }).hasBuiltIn?.(id) === true
    const guard = await SecurityGuard.create({
      ...config,
      directory: input.directory,
      worktree: input.worktree,
      log,
      protect: SecurityGuard.hostConfigFiles(input.directory, input.worktree || input.directory),
    })
    // The index of protected files (copies, hard links) is built in the background; hooks wait for the first build,
    // at most 3 s, so the first prompts are scanned against it without delaying OpenCode's start.
    let warm: Promise<unknown> | undefined = Promise.race([guard.ready(), Bun.sleep(3000)]).then(
      () => (warm = undefined),
    )
    const ready = () => warm
    host.access = async (target, op) => {
      await ready()
      return guard.access(target, op)
    }
    // The fork may make parts native one by one; those parts are then left to it.
    const pluginTools = !native("plugin-tool-guard")
    const mcp = !native("mcp-security-policy")
    let mcpServers: string[] = []
    const isMcpTool = (tool: string) => mcpServers.some((s) => tool.startsWith(s.replace(/[^a-zA-Z0-9_-]/g, "_") + "_"))
    const skip = (tool: string) => !SecurityTools.FILE_TOOLS.has(tool) && (isMcpTool(tool) ? !mcp : !pluginTools)

    return {
      async config(cfg) {
        mcpServers = Object.keys((cfg as { mcp?: Record<string, unknown> }).mcp ?? {})
        guard.setMcpServers(mcpServers)
      },
      async "tool.execute.before"(inp, out) {
        if (skip(inp.tool)) return
        await ready()
        const verdict = await guard.before({
          tool: inp.tool,
          args: out.args,
          sessionID: inp.sessionID,
          callID: inp.callID,
        })
        if (!verdict.allowed) throw new Error(verdict.reason)
      },
      async "tool.execute.after"(inp, out) {
        if (skip(inp.tool)) return
        await ready()
        const call = { tool: inp.tool, args: inp.args, sessionID: inp.sessionID, callID: inp.callID }
        const result = out as unknown as Record<string, unknown>
        if (typeof result.output === "string") result.output = guard.after(call, result.output)
        // MCP results carry `content: [{ type: "text", text }]`; metadata and titles are shown and stored too.
        for (const key of ["content", "metadata", "title"])
          if (result[key] !== undefined) {
            if (typeof result[key] === "string") result[key] = guard.after(call, result[key] as string)
            else guard.afterValue(call, result[key])
          }
      },
      async "chat.message"(_inp, out) {
        await ready()
        // Parts are stored after this hook: content a prompt attaches (e.g. an @-mentioned protected file read by
        // OpenCode itself) is redacted before it is saved, so no later request, compaction included, carries it.
        if (!guard.active()) return
        for (let i = 0; i < out.parts.length; i++) {
          const part = out.parts[i] as unknown as Record<string, unknown>
          if (part.type !== "text" || typeof part.text !== "string") continue
          part.text = guard.scanAndRedact(part.text, { scope: "llm", paths: "off" }).text
        }
      },
      async "experimental.chat.messages.transform"(_inp, out) {
        await ready()
        guard.redactMessages(out.messages as never)
      },
      async "experimental.chat.system.transform"(_inp, out) {
        await ready()
        if (!guard.active()) return
        for (let i = 0; i < out.system.length; i++)
          out.system[i] = guard.scanAndRedact(out.system[i], { scope: "llm", paths: "token" }).text
      },
      async "experimental.text.complete"(_inp, out) {
        await ready()
        if (!guard.active()) return
        out.text = guard.scanAndRedact(out.text, { scope: "llm", paths: "off" }).text
      },
    }
  },
}
