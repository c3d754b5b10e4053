import { createHash } from "crypto"
import fs from "fs/promises"
import os from "os"
import path from "path"
import { ResourceIndex } from "./indexer"
import type { ResourceParse } from "./parse"
import type { Resource } from "./schema"

/**
 * The persisted index cache: per file, its size, mtime and parse result, and the folder stamps of the scan that found
 * them. A warm start whose folders all kept their stamps restores the index from it without a scan, then checks every
 * file's size and mtime in the background; otherwise it scans, stats every file and re-reads only those whose size or
 * mtime changed. A cache that is missing, corrupt, from another format version or for another project is ignored
 * (and rewritten), never trusted.
 *
 * @example
 * const file = ResourceCache.defaultPath("/repo") // ~/.cache/opencode-builtins/resource-index/<hash>.json
 * const cache = await ResourceCache.read(file, "/repo") // undefined when unusable
 */
export namespace ResourceCache {
  /** Raised whenever what is cached changes meaning: parse results and assembling (3: links and wiki links read anew). */
  export const FORMAT = 3

  export type FileEntry = {
    size: number
    mtimeMs: number
    real: string
    type: Resource.Type
    /** The parse result, or the read problem that kept the file out of the index. */
    result?: ResourceParse.Result
    problem?: Resource.Warning
  }

  export type ReferenceEntry = {
    size: number
    mtimeMs: number
    real: string
    kind: "agent" | "command"
    name: string
    words: string[]
    explicit: ResourceParse.RawRef[]
  }

  export type Data = {
    format: number
    indexVersion: string
    projectRoot: string
    /** The segment markers (`ResourceAccess.pairsKey`) the parses were made under; absent: none. */
    segments?: string
    files: Record<string, FileEntry>
    references: Record<string, ReferenceEntry>
    /**
     * What the scan behind these entries saw besides the files: every folder's stamp (`ResourceScan.Result.dirs`),
     * when it began, and its warnings. With them a start whose folders all kept their stamps needs no scan at all
     * (`ResourceBuild.restore`).
     */
    scan?: {
      /** The `.opencode` folders scanned (`ResourceProject.Info.opencodeDirs`): OpenCode started in another folder
       * of the same project scans others, and shares this cache file. */
      roots: string[]
      dirs: [string, number | null][]
      listedAt: number
      warnings: Resource.Warning[]
    }
    /** What assembling these entries decided (ids, resolved references, warnings), when no security check was on. */
    snapshot?: ResourceIndex.Snapshot
  }

  export function empty(projectRoot: string, segments = ""): Data {
    return {
      format: FORMAT,
      indexVersion: ResourceIndex.VERSION,
      projectRoot,
      ...(segments ? { segments } : {}),
      files: {},
      references: {},
    }
  }

  /** `$XDG_CACHE_HOME/opencode-builtins/resource-index/<sha1 of the project root>.json` (or `~/.cache/…`). */
  export function defaultPath(projectRoot: string, env: Record<string, string | undefined> = process.env): string {
    const base = env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache")
    const hash = createHash("sha1").update(projectRoot).digest("hex").slice(0, 16)
    return path.join(base, "opencode-builtins", "resource-index", `${hash}.json`)
  }

  export async function read(file: string, projectRoot: string): Promise<Data | undefined> {
    try {
      const data = JSON.parse(await fs.readFile(file, "utf8")) as Data
      if (data?.format !== FORMAT || data.indexVersion !== ResourceIndex.VERSION) return undefined
      if (data.projectRoot !== projectRoot || typeof data.files !== "object" || typeof data.references !== "object")
        return undefined
      return unpack(data)
    } catch {
      return undefined
    }
  }

  /** The absolute path of a project-relative one (forward slashes), as the scan forms it. */
  function absolute(root: string, relativePath: string) {
    return root + path.sep + (path.sep === "/" ? relativePath : relativePath.split("/").join(path.sep))
  }

  type Packed<T> = Omit<T, "real"> & { real?: string }

  /**
   * The cache as written: what each entry's key and the project root already say is left out (the absolute and
   * real paths when they are the usual ones, the metadata's relative path, type, size and mtime, the empty
   * `references` of a parse), so a start reads and parses about a third less.
   */
  function pack(data: Data): Data {
    const files: Record<string, Packed<FileEntry>> = {}
    for (const rel in data.files) {
      const { real, ...entry } = data.files[rel]
      const abs = absolute(data.projectRoot, rel)
      const packed: Packed<FileEntry> = real === abs ? entry : { ...entry, real }
      const result = entry.result
      if (result) {
        const { path: p, relativePath, type, size, lastModified, references, ...meta } = result.metadata
        const same =
          p === abs &&
          relativePath === rel &&
          type === entry.type &&
          size === entry.size &&
          lastModified === entry.mtimeMs &&
          references.length === 0
        if (same) packed.result = { ...result, metadata: meta as Resource.Metadata }
      }
      files[rel] = packed
    }
    const references: Record<string, Packed<ReferenceEntry>> = {}
    for (const rel in data.references) {
      const { real, ...entry } = data.references[rel]
      references[rel] = real === absolute(data.projectRoot, rel) ? entry : { ...entry, real }
    }
    return {
      ...data,
      files: files as Record<string, FileEntry>,
      references: references as Record<string, ReferenceEntry>,
    }
  }

  /** Puts back what `pack` left out (in place: the data was just parsed). */
  function unpack(data: Data): Data {
    for (const rel in data.files) {
      const entry = data.files[rel]
      const abs = absolute(data.projectRoot, rel)
      entry.real ??= abs
      const meta = entry.result?.metadata
      if (meta && meta.relativePath === undefined) {
        meta.path = abs
        meta.relativePath = rel
        meta.type = entry.type
        meta.size = entry.size
        meta.lastModified = entry.mtimeMs
        meta.references = []
      }
    }
    for (const rel in data.references) data.references[rel].real ??= absolute(data.projectRoot, rel)
    return data
  }

  /** Writes atomically (temporary file, then rename): a crash never leaves a half-written cache. */
  export async function write(file: string, data: Data): Promise<void> {
    await fs.mkdir(path.dirname(file), { recursive: true })
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`
    try {
      await fs.writeFile(temp, JSON.stringify(pack(data)))
      await fs.rename(temp, file)
    } catch (error) {
      await fs.rm(temp, { force: true })
      throw error
    }
  }
}
