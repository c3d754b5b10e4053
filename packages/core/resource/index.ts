/**
 * The resource loader: project resources under `.opencode/{checklist,knowledge-base,schema,task,template}` with an
 * index, a reference graph, four tools and a lifecycle that really removes released content from the model's context.
 *
 * @example
 * const loader = ResourceLoader.create(host, { maxResourcesPerSession: 10 })
 * const plugin = { tool: ResourceTools.create(loader), ...ResourceHooks.create(loader) }
 */
export { Resource } from "./schema"
export { ResourceError } from "./errors"
export { ResourceParse } from "./parse"
export { ResourceIndex } from "./indexer"
export { ResourceCache } from "./cache"
export { ResourceBuild } from "./build"
export { ResourceQuery } from "./query"
export { ResourceOutput } from "./output"
export { SessionView } from "./session"
export { ResourceLoader } from "./loader"
export { ResourceTools } from "./tools"
export { ResourceHooks } from "./hooks"
export { ResourceLint } from "./lint"
