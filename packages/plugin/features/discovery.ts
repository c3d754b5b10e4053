import type { PluginInput } from "@opencode-ai/plugin"
import type { Host } from "@opencode-builtins/core/host"
import { DynamicDiscovery } from "@opencode-builtins/core/discovery/discover"
import { DiscoveryHooks } from "@opencode-builtins/core/discovery/hooks"
import { Discovery } from "@opencode-builtins/core/discovery/schema"
import { ResourceLoader } from "@opencode-builtins/core/resource/loader"
import type { Logger } from "@opencode-builtins/core/util/log"
import type { Feature } from "../feature"
import type { Options } from "../options"
import { validSection } from "../options"

/**
 * Dynamic context discovery on stock OpenCode: `chat.message` adds a suggestion of the matching agents, commands,
 * skills, output styles and project resources to the user's message. Options: `discovery.enabled` (default true),
 * `discovery.scanTimeoutMs` (default 2000).
 */
export const DiscoveryFeature: Feature = {
  id: "dynamic-discovery",
  section: "discovery",
  async init({ input, options, all, log, host }) {
    const config = validSection(Discovery.Config, options, "discovery", log)
    const engine = DynamicDiscovery.create({
      directory: host.directory,
      worktree: host.worktree,
      log,
      config,
      resources: projectResources(input, all, host, log),
    })
    return DiscoveryHooks.create(engine, { log, host })
  },
}

/**
 * WIRING POINT (lead): the project resources discovery matches. Until the resources feature shares its
 * `ResourceLoader`, discovery keeps its own in-memory one over the same folders (it reads the same files, writes no
 * cache file, and revalidates by mtime on each prompt since OpenCode's file events reach only the shared one). Resources are not suggested when `resource-load` is unavailable: the resources feature switched
 * off and the host not providing the resource loader natively.
 */
function projectResources(
  input: PluginInput & { hasBuiltIn?: (feature: string) => boolean },
  all: Options,
  host: Host,
  log: Logger,
): Discovery.ResourceProvider | undefined {
  if (all.resources?.enabled === false && input.hasBuiltIn?.("resource-loader") !== true) return undefined
  let loader: ResourceLoader.Loader | undefined
  return async () => {
    // autoRebuildIndex: this loader does not receive OpenCode's file.edited events, so it re-checks file mtimes
    // on each prompt (only changed files are re-read) to pick up edited descriptions and tags.
    loader ??= ResourceLoader.create({ ...host, log }, { persistCache: false, autoRebuildIndex: true })
    return (await loader.index()).resources.values()
  }
}
