import type { Hooks } from "@opencode-ai/plugin"
import type { Host } from "../host"
import type { Options } from "../options"
import type { SecurityGuard } from "../security/guard"
import type { SecurityHooks } from "../security/hooks"
import type { Logger } from "../util/log"

/**
 * One feature as the composition root builds it: a stable `hasBuiltIn` id, the section of the options it reads, and
 * an `init` returning its tools and hooks in OpenCode's shapes. A feature never sees OpenCode's objects, only the
 * host (the plugin builds it from `PluginInput`, the fork from its services).
 *
 * @example
 * const Echo: BuiltinFeature = { id: "echo", section: "echo", init: async () => ({}) }
 */
export type BuiltinFeature = {
  id: string
  /** Section of the options object this feature reads. */
  section: string
  init(context: FeatureContext): Promise<Hooks>
}

/** Everything a feature gets when it starts. */
export type FeatureContext = {
  host: Host
  /** The feature's own section of the options (may be empty). */
  options: Record<string, unknown>
  /** All options, for features that read a neighbour's section. */
  all: Options
  /** A logger named after the feature. */
  log: Logger
  /** True when the host provides a feature natively (the fork's `hasBuiltIn`). */
  native(id: string): boolean
  /** Hands parts of the feature to the composition root, for the seams that need more than hooks (see `Exposed`). */
  expose?(parts: Exposed): void
}

/**
 * What the security feature hands to the composition root: its guard (payload guard for other plugins' hooks, MCP
 * policy) and its own hook rules (run once more after other plugins' hooks, so their additions are redacted too).
 */
export type Exposed = {
  guard?: SecurityGuard.Guard
  security?: Partial<SecurityHooks.Hooks>
  /** Resolves when the guard's first index of protected files is built (or after a few seconds). */
  ready?: () => Promise<unknown> | undefined
  /**
   * Set instead of a guard when the project folder cannot be used (`SecurityError.FolderUnusable`): why every tool
   * call is refused. The seams then start no MCP server either.
   */
  refused?: string
}
