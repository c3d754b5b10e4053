import type { Host } from "@opencode-builtins/core/host"
import { DynamicDiscovery } from "@opencode-builtins/core/discovery/discover"
import { DiscoveryHooks } from "@opencode-builtins/core/discovery/hooks"
import { Discovery } from "@opencode-builtins/core/discovery/schema"
import type { Feature } from "../feature"
import { validSection } from "../options"

/**
 * Dynamic context discovery on stock OpenCode: `chat.message` adds a suggestion of the matching agents, commands,
 * skills, output styles and project resources to the user's message. Options: `discovery.enabled` (default true),
 * `discovery.scanTimeoutMs` (default 2000).
 */
export const DiscoveryFeature: Feature = {
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
