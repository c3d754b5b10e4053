import fs from "fs/promises"
import type { Host } from "../host"
import { Frontmatter } from "../util/frontmatter"
import { ResourceError } from "./errors"
import { ResourceProject } from "./project"
import { ResourceRead } from "./read"
import type { Resource } from "./schema"

/**
 * Reads one indexed resource for `resource-load`, re-checking at that moment everything that may have changed since
 * indexing: the file still exists, its real path (symlinks resolved) is inside the project, the security policy
 * allows reading it, its size is within the limit, its content is UTF-8 text. Markdown loses its frontmatter (the
 * header block shows it); schemas stay whole.
 *
 * @example
 * const r = await ResourceFetch.read(meta, { root: "/repo", maxFileSize: 1 << 20, fileReadTimeout: 5000 })
 * if (!r.ok) console.log(r.error.message)
 */
export namespace ResourceFetch {
  export type Refusal =
    | InstanceType<typeof ResourceError.FileReadError>
    | InstanceType<typeof ResourceError.OutsideProject>
    | InstanceType<typeof ResourceError.AccessDenied>
    | InstanceType<typeof ResourceError.FileTooLarge>
  export type Result = { ok: true; meta: Resource.Metadata; content: string } | { ok: false; error: Refusal }

  export type Options = Pick<Resource.Config, "maxFileSize" | "fileReadTimeout"> & {
    root: string
    access?: Host["access"]
  }

  export async function read(meta: Resource.Metadata, options: Options): Promise<Result> {
    const refuse = (error: Refusal): Result => ({ ok: false, error })
    const where = { id: meta.id, path: meta.relativePath }
    let real: string
    try {
      real = await fs.realpath(meta.path)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      const reason =
        code === "ENOENT"
          ? "the file no longer exists (ENOENT); resource-query shows what is there now"
          : (code ?? String(error))
      return refuse(new ResourceError.FileReadError({ ...where, reason }))
    }
    if (!ResourceProject.isInside(real, options.root))
      return refuse(new ResourceError.OutsideProject({ ...where, resolved: real }))
    const denied = options.access ? await options.access(real, "read") : undefined
    if (denied) return refuse(new ResourceError.AccessDenied({ ...where, reason: denied }))
    const stat = await fs.stat(real).catch(() => undefined)
    if (!stat?.isFile()) return refuse(new ResourceError.FileReadError({ ...where, reason: "not a regular file" }))
    const size = stat.size
    if (size > options.maxFileSize)
      return refuse(new ResourceError.FileTooLarge({ ...where, size, max: options.maxFileSize }))
    const text = await ResourceRead.text(real, {
      timeoutMs: options.fileReadTimeout,
      maxBytes: options.maxFileSize,
      size,
    })
    if (!text.ok) return refuse(new ResourceError.FileReadError({ ...where, reason: text.reason }))
    const content =
      meta.type === "schema" ? text.text : Frontmatter.parse(text.text, { languages: true }).body.replace(/^\s*\n/, "")
    return { ok: true, meta: { ...meta, size }, content }
  }
}
