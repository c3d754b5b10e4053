import path from "path"
import { fileURLToPath } from "url"
import type { Plugin, PluginInput } from "@opencode-ai/plugin"
import { Builtins, Provided } from "@opencode-builtins/core/builtins"
import type { Host } from "@opencode-builtins/core/host"
import { LookClient } from "@opencode-builtins/core/look/client"
import { projectOptions } from "@opencode-builtins/core/options"
import { hostLogger } from "./log"
import { pluginSessions } from "./sessions"

type HostInput = PluginInput & { hasBuiltIn?: (feature: string) => boolean }

/** This package's folder: its code is read-only for the agent (see the security feature). */
const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)))

/**
 * OpenCode Built-ins for stock OpenCode: a mapping from `PluginInput` to the composition root in core. Each feature
 * switches itself off when the host reports it as built in (`input.hasBuiltIn?.(id)`, present in the patched
 * OpenCode), so the same configuration works on both.
 *
 * @example
 * // opencode.json
 * { "plugin": ["opencode-builtins"] }
 */
const OpencodeBuiltins: Plugin = async (input: HostInput, explicit?: unknown) => {
  const log = hostLogger(input.client, "opencode-builtins")
  const options = projectOptions({ directory: input.directory, worktree: input.worktree }, explicit, log)
  const host: Host = {
    directory: input.directory,
    worktree: input.worktree || input.directory,
    log,
    code: [PACKAGE],
    // In-process call (the SDK client is wired straight to OpenCode's server), no network round trip.
    async messages(sessionID) {
      const result = await input.client.session.messages({ path: { id: sessionID } })
      if (result.error || !Array.isArray(result.data)) throw new Error(`session ${sessionID}: messages unavailable`)
      return result.data as any
    },
    // Todo continuation and crash recovery: session records, todos, agents, appended messages, part updates.
    sessions: pluginSessions(input.client),
    // look_at: the provider list and a child-session model call, over the same in-process client.
    ...LookClient.fromSdk(input.client as never, { directory: input.directory, worktree: input.worktree }),
  }
  const { hooks, built, skipped } = await Builtins.create(host, {
    options,
    logger: (service) => hostLogger(input.client, service),
    native: (id) => input.hasBuiltIn?.(id) === true,
  })
  if (skipped.length) log.info(`built into this OpenCode, so not registered by the plugin: ${skipped.join(", ")}`)
  // For other plugins on stock OpenCode (no `hasBuiltIn`): what this instance provides (docs/builtin.md).
  return Provided.announce(input.directory, built, hooks, log)
}

// The only export: OpenCode 1.2.15 calls every export of a plugin module as a plugin.
export default OpencodeBuiltins
