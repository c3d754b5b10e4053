import type { Hooks, Plugin, PluginInput } from "@opencode-ai/plugin"
import type { Host } from "@opencode-builtins/core/host"
import { compose } from "./compose"
import type { Feature } from "./feature"
import { hostLogger } from "./log"
import { loadOptions } from "./options"
import { SecurityFeature } from "./features/security"
import { ResourcesFeature } from "./features/resources"
import { DiscoveryFeature } from "./features/discovery"
import { AstFeature } from "./features/ast"
import { CommentCheckerFeature } from "./features/comment-checker"

/**
 * Feature adapters, in hook order: inbound hooks (tool.execute.before, chat.message) run top to bottom, outbound
 * hooks (tool results, transforms) bottom to top — see compose.ts.
 */
const FEATURES: Feature[] = [SecurityFeature, ResourcesFeature, DiscoveryFeature, AstFeature, CommentCheckerFeature]

type HostInput = PluginInput & { hasBuiltIn?: (feature: string) => boolean }

/**
 * OpenCode Built-ins for stock OpenCode. Each feature switches itself off when the host reports it as built in
 * (`input.hasBuiltIn?.(id)`, present in the patched OpenCode), so the same configuration works on both.
 *
 * @example
 * // opencode.json
 * { "plugin": ["opencode-builtins"] }
 */
const OpencodeBuiltins: Plugin = async (input: HostInput, explicit?: unknown) => {
  const log = hostLogger(input.client, "opencode-builtins")
  const { options, error } = loadOptions(input.directory, explicit)
  if (error) log.warn(error)
  const host: Host = {
    directory: input.directory,
    worktree: input.worktree || input.directory,
    log,
    // In-process call (the SDK client is wired straight to OpenCode's server), no network round trip.
    async messages(sessionID) {
      const result = await input.client.session.messages({ path: { id: sessionID } })
      if (result.error || !Array.isArray(result.data)) throw new Error(`session ${sessionID}: messages unavailable`)
      return result.data as any
    },
  }
  const active: Hooks[] = []
  const native: string[] = []
  for (const feature of FEATURES) {
    if (input.hasBuiltIn?.(feature.id) === true) {
      native.push(feature.id)
      continue
    }
    const section = options[feature.section] ?? {}
    if (section.enabled === false) continue
    active.push(
      await feature.init({
        input,
        options: section,
        all: options,
        log: hostLogger(input.client, `opencode-builtins.${feature.section}`),
        host,
      }),
    )
  }
  if (native.length) log.info(`built into this OpenCode, so not registered by the plugin: ${native.join(", ")}`)
  return compose(active)
}

// The only export: OpenCode 1.2.15 calls every export of a plugin module as a plugin.
export default OpencodeBuiltins
