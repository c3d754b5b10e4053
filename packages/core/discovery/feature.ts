import type { BuiltinFeature } from "../builtins/feature"
import type { Host } from "../host"
import { validSection } from "../options"
import { DiscoveryCacheFile } from "./cache"
import { DynamicDiscovery } from "./discover"
import { DiscoveryHooks } from "./hooks"
import { Discovery } from "./schema"

/**
 * Dynamic context discovery: `chat.message` adds a suggestion of the matching agents, commands,
 * skills, output styles and project resources to the user's message. Options: `discovery.enabled` (default true),
 * `discovery.scanTimeoutMs` (default 2000). Parsed definitions are kept on disk across sessions in the project's local
 * state folder (`DiscoveryCacheFile`).
 */
export const DiscoveryFeature: BuiltinFeature = {
  id: "dynamic-discovery",
  section: "discovery",
  async init({ options, log, host }) {
    const config = validSection(Discovery.Config, options, "discovery", log)
    const engine = DynamicDiscovery.create({
      directory: host.directory,
      worktree: host.worktree,
      log,
      config,
      resources: projectResources(host),
      cacheFile: DiscoveryCacheFile.location(host.directory, host.worktree),
      // Its scope names the cache file the engine reads at once (calls give their own check, read at call time).
      host,
    })
    return DiscoveryHooks.create(engine, { log, host })
  },
}

/**
 * The project resources discovery matches: the resources feature's own index (`host.resources`), so nothing is
 * indexed twice and OpenCode's file events keep it fresh. Without the resource tools there is nothing to suggest.
 */
function projectResources(host: Host): Discovery.ResourceProvider | undefined {
  const resources = host.resources
  return resources ? async () => resources() : undefined
}
