import type { BuiltinFeature } from "../builtins/feature"
import { validSection } from "../options"
import { ResourceHooks } from "./hooks"
import { ResourceLoader } from "./loader"
import { Resource } from "./schema"
import { ResourceTools } from "./tools"

/** The resource loader: its four tools plus lifecycle hooks. */
export const ResourcesFeature: BuiltinFeature = {
  id: "resource-loader",
  section: "resources",
  async init({ options, log, host }) {
    const config = validSection(Resource.Config, options, "resources", log)
    const loader = ResourceLoader.create({ ...host, log }, config)
    // Share the host's security check, installed on the shared object by a feature that runs before this one.
    Object.defineProperty(loader.host, "access", { get: () => host.access })
    Object.defineProperty(loader.host, "accessVersion", { get: () => host.accessVersion })
    Object.defineProperty(loader.host, "segments", { get: () => host.segments })
    // Discovery (initialised after this feature) suggests resources from this same index.
    host.resources = async () => (await loader.index()).resources.values()
    return { tool: ResourceTools.create(loader), ...ResourceHooks.create(loader) }
  },
}
