import type { Hooks, PluginInput } from "@opencode-ai/plugin"
import type { Host } from "@opencode-builtins/core/host"
import type { Logger } from "@opencode-builtins/core/util/log"
import type { Options } from "./options"

/** Everything a feature adapter gets when the plugin starts. */
export type FeatureContext = {
  input: PluginInput
  /** The feature's own section of the plugin options (may be empty). */
  options: Record<string, unknown>
  /** All options, for features that read a neighbour's section. */
  all: Options
  log: Logger
  /** Shared host object; the security feature, initialised first, installs `host.access` on it. */
  host: Host
}

/**
 * One feature of the external plugin: a thin adapter from `PluginInput` to core. `id` is the `hasBuiltIn` id that
 * switches the adapter off when the host provides the feature natively.
 */
export type Feature = {
  id: string
  /** Section of the options object this feature reads. */
  section: string
  init(context: FeatureContext): Promise<Hooks>
}
