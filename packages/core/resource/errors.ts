import z from "zod"
import { NamedError } from "../util/error"
import { formatBytes } from "./format"

/**
 * The resource loader's errors. Tools print them as JSON (`error`, `message`, fields, `suggestion`), so the model
 * can act on them; none of them is ever thrown out of a tool.
 */
export namespace ResourceError {
  export const NotFound = NamedError.create(
    "ResourceNotFound",
    z.object({ id: z.string(), closest: z.array(z.string()) }),
    (d) =>
      `Resource '${d.id}' does not exist.` +
      (d.closest.length
        ? ` Closest ids: ${d.closest.join(", ")}.`
        : " Use resource-query to find available resources."),
  )

  export const InvalidId = NamedError.create(
    "InvalidResourceId",
    z.object({ id: z.string(), reason: z.string() }),
    (d) => `'${d.id}' is not a valid resource id: ${d.reason}. Ids are names such as 'git-operations', never paths.`,
  )

  export const AlreadyLoaded = NamedError.create(
    "AlreadyLoaded",
    z.object({ id: z.string(), loadedAt: z.string(), toolCallID: z.string().optional() }),
    (d) => `Resource '${d.id}' is already loaded in this session (since ${d.loadedAt}); its content is above.`,
  )

  export const SessionLimitReached = NamedError.create(
    "SessionLimitReached",
    z.object({ limit: z.string(), current: z.string(), requested: z.string().optional() }),
    (d) =>
      `Session limit reached: ${d.current} loaded, limit ${d.limit}` +
      (d.requested ? `, this load needs ${d.requested}` : "") +
      ". Use resource-release to free space.",
  )

  export const FileTooLarge = NamedError.create(
    "FileTooLarge",
    z.object({ id: z.string(), size: z.number(), max: z.number(), path: z.string() }),
    (d) =>
      `Resource '${d.id}' is ${formatBytes(d.size)}, over the ${formatBytes(d.max)} limit for loading. ` +
      `Read the parts you need from ${d.path} with the read tool instead.`,
  )

  export const OutsideProject = NamedError.create(
    "OutsideProject",
    z.object({ id: z.string(), path: z.string(), resolved: z.string() }),
    (d) => `Resource '${d.id}' (${d.path}) resolves to ${d.resolved}, outside the project; it is not loaded.`,
  )

  export const FileReadError = NamedError.create(
    "FileReadError",
    z.object({ id: z.string(), path: z.string(), reason: z.string() }),
    (d) => `Could not read resource '${d.id}' at ${d.path}: ${d.reason}`,
  )

  export const AccessDenied = NamedError.create(
    "AccessDenied",
    z.object({ id: z.string(), path: z.string(), reason: z.string() }),
    (d) => `Resource '${d.id}' (${d.path}) is protected by the security policy: ${d.reason}`,
  )

  export const IndexBuildError = NamedError.create(
    "IndexBuildError",
    z.object({ reason: z.string() }),
    (d) => `Could not build the resource index: ${d.reason}. Check the .opencode directories and their permissions.`,
  )

  export const QueryError = NamedError.create("QueryError", z.object({ reason: z.string() }), (d) => d.reason)

  /**
   * The JSON a tool prints for an error: the error's fields plus a suggestion the model can follow, one field per line,
   * so that under a security policy the line of a field naming a protected file is withheld and the others (the
   * error's name, the id) still reach the model (on one line the whole refusal was withheld).
   */
  export function format(error: NamedError, suggestion?: string): string {
    return JSON.stringify({ ...error.toJSON(), ...(suggestion ? { suggestion } : {}) }, null, 1)
  }
}
