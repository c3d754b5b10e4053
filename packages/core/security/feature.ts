import path from "path"
import { fileURLToPath } from "url"
import { DiscoveryLocate } from "@opencode-builtins/core/discovery/locate"
import { SecurityGuard } from "@opencode-builtins/core/security/guard"
import { SecurityHooks } from "@opencode-builtins/core/security/hooks"
import { SecurityTools } from "@opencode-builtins/core/security/tools"
import type { Feature } from "../feature"
import { validSection } from "../options"

/** The folder this plugin's code lives in: read-only for the agent (a changed plugin would switch itself off). */
const OWN_PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..") + path.sep

/**
 * The security layer on stock OpenCode: a mapping from OpenCode's hooks to the core rules in `SecurityHooks` (the fork
 * calls the same rules from its seams). It also installs `host.access` for the other features. Listed first, so its
 * inbound hooks run first and its outbound hooks last.
 */
export const SecurityFeature: Feature = {
  id: "builtin-tool-security",
  section: "security",
  async init({ input, options, log, host }) {
    const config = validSection(SecurityGuard.Config, options, "security", log)
    const native = (id: string) => (input as { hasBuiltIn?: (id: string) => boolean }).hasBuiltIn?.(id) === true
    const worktree = input.worktree || input.directory
    const guard = await SecurityGuard.create({
      ...config,
      directory: input.directory,
      worktree,
      log,
      protect: [...SecurityGuard.hostProtected(input.directory, worktree), OWN_PACKAGE],
    })
    // The index of protected files (copies, hard links) is built in the background; hooks wait for the first build,
    // at most 3 s, so the first prompts are scanned against it without delaying OpenCode's start.
    let warm: Promise<unknown> | undefined = Promise.race([guard.ready(), Bun.sleep(3000)]).then(
      () => (warm = undefined),
    )
    const ready = () => warm
    host.access = async (target, op, opts) => {
      await ready()
      return guard.access(target, op, "builtin-tool", opts)
    }
    host.accessVersion = () => guard.accessVersion()
    host.segments = () => guard.segments()
    // The fork may make parts native one by one; those parts are then left to it.
    const pluginTools = !native("plugin-tool-guard")
    const mcp = !native("mcp-security-policy")
    let mcpServers: string[] = []
    const isMcpTool = (tool: string) => mcpServers.some((s) => tool.startsWith(s.replace(/[^a-zA-Z0-9_-]/g, "_") + "_"))
    const skip = (tool: string) => !SecurityTools.FILE_TOOLS.has(tool) && (isMcpTool(tool) ? !mcp : !pluginTools)
    // Where OpenCode finds skills and agents: `skill` and `task` calls naming one defined in a protected file are
    // refused, and protected ones leave the tool descriptions and the system prompt.
    let locateConfig: DiscoveryLocate.Config = {}
    let locator: DiscoveryLocate.Locator | undefined
    const locate = () =>
      (locator ??= DiscoveryLocate.create({
        directory: input.directory,
        worktree: input.worktree || input.directory,
        config: locateConfig,
      }))
    const strip = async (text: string) => {
      let out = text
      for (const r of await locate().redactions(host)) for (const t of r.texts) if (t) out = out.replaceAll(t, "")
      return out
    }
    const hooks = SecurityHooks.create({
      guard,
      skip,
      ready,
      item: (kind, name) => locate().refusal(kind, name, host),
      describe: (_tool, description) => strip(description),
    })

    return {
      ...hooks,
      async config(cfg) {
        const c = cfg as { mcp?: Record<string, unknown>; shell?: unknown } & DiscoveryLocate.Config
        mcpServers = Object.keys(c.mcp ?? {})
        locateConfig = { skills: c.skills, agent: c.agent }
        locator = undefined
        guard.setMcpServers(mcpServers)
        // OpenCode 1.14+ lets the configuration choose the shell commands run with.
        if (typeof c.shell === "string" && c.shell) guard.setShell(c.shell)
      },
    }
  },
}
