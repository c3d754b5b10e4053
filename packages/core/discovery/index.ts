/**
 * Dynamic context discovery: agents, commands, skills and output styles found in `~/.claude`, `.claude`,
 * `~/.config/opencode` and `.opencode`, plus project resources, matched to the user's prompt and suggested in it.
 *
 * @example
 * const engine = DynamicDiscovery.create({ directory: "/repo", worktree: "/repo", log })
 * const plugin = { ...DiscoveryHooks.create(engine, log) } // chat.message adds the suggestion part
 */
export { Discovery } from "./schema"
export { DiscoveryDirectories } from "./directories"
export { DiscoveryCache } from "./cache"
export { DiscoveryParse } from "./parse"
export { DiscoveryScan } from "./scan"
export { Keywords } from "./keywords"
export { DiscoveryMatch } from "./match"
export { MemoryThink } from "./memory-think"
export { DiscoveryFormat } from "./format"
export { DynamicDiscovery } from "./discover"
export { DiscoveryHooks } from "./hooks"
export { DiscoveryLocate } from "./locate"
