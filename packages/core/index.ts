/**
 * OpenCode Built-ins core: the features as a library, composed for a host by `Builtins.create`. Both delivery routes
 * (the external plugin, the fork's glue) build a `Host` and call it; nothing here imports OpenCode's internals.
 *
 * @example
 * import { Builtins } from "@opencode-builtins/core"
 * const { hooks } = await Builtins.create(host, { options, logger })
 */
export { Builtins, BuiltIn } from "./builtins"
export type { BuiltinFeature, FeatureContext } from "./builtins"
export type { Host } from "./host"
export { loadOptions, projectOptions, optionsFiles, validSection, OPTIONS_FILE, type Options } from "./options"
export { Logger } from "./util/log"
