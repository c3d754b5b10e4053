import type { Hooks } from "@opencode-ai/plugin"
import z from "zod"
import type { BuiltinFeature } from "../builtins/feature"
import { validSection } from "../options"
import { Lsp } from "./service"
import { LspServers } from "./servers"
import { LspTools } from "./tools"

/**
 * The `lsp` tool: language servers this feature runs itself, started on the first call that needs them and
 * configured like OpenCode's own (`lsp` in `opencode.json`). Options (section `lsp`): `enabled` (default true),
 * `servers` (an `lsp` setting that replaces the one read from OpenCode's configuration files; the fork passes
 * OpenCode's resolved configuration here), `diagnosticsTimeoutMs` (per-file wait, default 20 s).
 *
 * The tool is offered on every OpenCode version unless `"lsp": false` is set: unlike OpenCode's own clients, which
 * start servers in the background on every file read and edit (the reason 1.14+ made them opt-in), these start
 * only when the agent calls the tool.
 */
export const LspFeature: BuiltinFeature = {
  id: "lsp",
  section: "lsp",
  async init({ options, log, host }) {
    const config = validSection(
      z.object({
        servers: LspServers.Config.optional(),
        diagnosticsTimeoutMs: z.number().int().min(100).max(600_000).optional(),
      }),
      options,
      "lsp",
      log,
    )
    const resolved = LspServers.resolve({ directory: host.directory, worktree: host.worktree, config: config.servers })
    for (const warning of resolved.warnings) log.warn(warning)
    if (resolved.disabled) {
      log.info(`lsp tool not offered: ${resolved.disabled}`)
      return {}
    }
    let service: Lsp.Service | undefined
    const get = () =>
      (service ??= Lsp.create({
        directory: host.directory,
        worktree: host.worktree,
        log,
        config: config.servers,
        diagnosticsTimeoutMs: config.diagnosticsTimeoutMs,
        // Read at call time: the security feature installs host.access after this feature was created.
        access: (file, op) => host.access?.(file, op) ?? Promise.resolve(undefined),
        segments: host.segments ? () => host.segments!() : undefined,
        // Read at call time too: the security layer's kernel sandbox, which servers start in under a policy.
        sandbox: () => host.sandbox?.() ?? Promise.resolve(undefined),
      }))
    return {
      tool: LspTools.create(host, get),
      // The fork's seams call it when the instance ends (the plugin's servers end with OpenCode's process).
      async dispose() {
        await service?.stop()
      },
    } as Hooks
  },
}
