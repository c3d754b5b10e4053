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
  export const FORMAT = 2

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
    scan?: { dirs: [string, number | null][]; listedAt: number; warnings: Resource.Warning[] }
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
      return data
    } catch {
      return undefined
    }
  }

  /** Writes atomically (temporary file, then rename): a crash never leaves a half-written cache. */
  export async function write(file: string, data: Data): Promise<void> {
    await fs.mkdir(path.dirname(file), { recursive: true })
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`
    try {
      await fs.writeFile(temp, JSON.stringify(data))
      await fs.rename(temp, file)
    } catch (error) {
      await fs.rm(temp, { force: true })
      throw error
    }
  }
}
