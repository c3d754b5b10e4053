import { createHash } from "crypto"
import { readFileSync } from "fs"
import fs from "fs/promises"
import os from "os"
import path from "path"
import { ResourceIndex } from "./indexer"
import type { ResourceParse } from "./parse"
import type { Resource } from "./schema"
import { Lazy } from "../util/lazy"

/**
 * The persisted index cache: per file, its size, mtime and parse result, and the folder stamps of the scan that found
 * them. A warm start whose folders all kept their stamps restores the index from it without a scan, then checks every
 * file's size and mtime in the background; otherwise it scans, stats every file and re-reads only those whose size or
 * mtime changed. A cache that is missing, corrupt (its hash does not match), from another format version or for
 * another project is ignored (and rewritten), never trusted. Read by parts: a restored start parses the head and the
 * snapshot of the assembled index, not the parse results, which only a rebuild needs.
 *
 * @example
 * const file = ResourceCache.defaultPath("/repo") // ~/.cache/opencode-builtins/resource-index/<hash>.json
 * const cache = await ResourceCache.read(file, "/repo") // undefined when unusable
 */
export namespace ResourceCache {
  /**
   * Raised whenever what is cached changes meaning or layout: parse results and assembling (3: links and wiki links
   * read anew; 4: sections parsed apart, the snapshot holds the assembled index; 5: the snapshot's resources and search
   * text in sections of their own, each resource's metadata parsed at its first use).
   */
  export const FORMAT = 5

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
    /**
     * The index assembled from these entries (`ResourceIndex.snapshot`), when no security check was on. Read from disk,
     * this and the entries above are parsed at first use.
     */
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

  /**
   * The cache of `file` if it is one for `projectRoot` in this format, else undefined. Read synchronously (at 10k
   * resources a promise read of the file cost ≈ 7 ms of CPU time against ≈ 1 ms), checked whole against its hash, and
   * parsed by parts: the head at once, the index snapshot, the parse results (`files`, `references`) and the stamps
   * only when first used, so a start restored from the snapshot never parses the rest; a restored start parses only
   * the snapshot's small parts, each resource's metadata at its first use (`stored`).
   */
  export async function read(file: string, projectRoot: string): Promise<Data | undefined> {
    try {
      return open(readFileSync(file), projectRoot)
    } catch {
      return undefined
    }
  }

  /**
   * The file's layout, written last so it is found from the end: `,"layout":"<hash> <offsets>"}` where the hash
   * (wyhash, 16 hex digits) covers every byte before it and the offsets (10 digits each) are the byte ranges of the
   * sections' values, in `SECTIONS` order. The whole stays one JSON document. The snapshot (`ResourceIndex.Snapshot`)
   * is written in three: `snapshot` holds the small parts, every resource's id and where its metadata ends in
   * `resources` (`ends`, byte offsets in that section), so that each is parsed alone at its first use; `text` holds
   * the search text, parsed at the first query that searches it.
   */
  const SECTIONS = ["snapshot", "resources", "text", "stamps", "files", "references"] as const
  type Section = (typeof SECTIONS)[number]
  const LAYOUT_KEY = ',"layout":"'
  const LAYOUT_LENGTH = LAYOUT_KEY.length + 16 + SECTIONS.length * 2 * 11 + 2

  /** What a cache read from disk keeps to parse its other sections on first use. */
  type Raw = { bytes: Buffer; ranges: [number, number][]; entries: number }
  const raws = new WeakMap<Data, Raw>()

  /** Each file's stamp as the stamps section holds it: `[relativePath, size, mtimeMs]`, plus the real path if unusual. */
  type StampRow = [string, number, number] | [string, number, number, string]

  /** The small parts of the snapshot as written: `ResourceIndex.Snapshot` without its resources and text. */
  type SnapshotHead = Omit<ResourceIndex.Snapshot, "resources" | "text"> & { ids: string[]; ends: number[] }

  function open(bytes: Buffer, projectRoot: string): Data | undefined {
    if (bytes.length < LAYOUT_LENGTH) return undefined
    const body = bytes.length - LAYOUT_LENGTH
    const layout = bytes.toString("latin1", body)
    if (!layout.startsWith(LAYOUT_KEY) || !layout.endsWith('"}')) return undefined
    const fields = layout.slice(LAYOUT_KEY.length, -2).split(" ")
    const numbers = fields.slice(1).map(Number)
    if (numbers.length !== SECTIONS.length * 2 || !numbers.every((n) => Number.isInteger(n) && n >= 0 && n <= body))
      return undefined
    if (fields[0] !== hash(bytes.subarray(0, body))) return undefined
    const ranges = SECTIONS.map((_, i) => [numbers[2 * i], numbers[2 * i + 1]] as [number, number])
    // Each section's value follows its key, and they follow each other: offsets that point elsewhere are refused.
    let previous = 0
    for (const [i, [start, end]] of ranges.entries()) {
      const key = `,"${SECTIONS[i]}":`
      if (start - key.length < previous || end < start || bytes.toString("latin1", start - key.length, start) !== key)
        return undefined
      previous = end
    }
    // The head: everything before the first section's key, closed.
    const headEnd = ranges[0][0] - `,"${SECTIONS[0]}":`.length
    const head = JSON.parse(bytes.toString("utf8", 0, headEnd) + "}") as Omit<Data, Section> & { entries: number }
    if (head?.format !== FORMAT || head.indexVersion !== ResourceIndex.VERSION || head.projectRoot !== projectRoot)
      return undefined
    const { entries, ...data } = head
    const raw: Raw = { bytes, ranges, entries }
    const section = (name: Section) => {
      const [start, end] = raw.ranges[SECTIONS.indexOf(name)]
      return JSON.parse(raw.bytes.toString("utf8", start, end))
    }
    const out = data as Data
    Lazy.define(out, "files", () => unpackFiles(projectRoot, section("files")))
    Lazy.define(out, "references", () => unpackReferences(projectRoot, section("references")))
    // Written without a snapshot (under a security check): `null`, and no `snapshot` property.
    const [start, end] = ranges[0]
    if (end - start !== 4 || bytes.toString("latin1", start, end) !== "null")
      Lazy.define(out, "snapshot", () => {
        const { ids: _, ends: __, ...rest } = section("snapshot") as SnapshotHead
        return { ...rest, resources: section("resources"), text: section("text") } as ResourceIndex.Snapshot
      })
    raws.set(out, raw)
    return out
  }

  /**
   * The snapshot of a cache read from disk, by parts (`ResourceIndex.hydrateStored`): the small parts parsed now, each
   * resource's metadata at its first use, the search text at the first query. Undefined when the snapshot was read
   * already, or was not read from disk (then `data.snapshot` is the whole of it), or its parts do not fit.
   */
  export function stored(data: Data): ResourceIndex.Stored | undefined {
    const raw = raws.get(data)
    if (!raw || Object.getOwnPropertyDescriptor(data, "snapshot")?.get === undefined) return undefined
    const at = (name: Section) => raw.ranges[SECTIONS.indexOf(name)]
    const parse = (name: Section) => JSON.parse(raw.bytes.toString("utf8", ...at(name)))
    const head = parse("snapshot") as SnapshotHead
    const [start, end] = at("resources")
    const { ids, ends, ...rest } = head ?? {}
    // Entry i spans from after entry i-1 and its comma (after the `[` for the first) to `ends[i]`.
    if (!Array.isArray(ids) || !Array.isArray(ends) || ends.length !== ids.length) return undefined
    let from = 1
    for (const e of ends) {
      if (!Number.isInteger(e) || e <= from || start + e >= end) return undefined
      from = e + 1
    }
    const entry = (i: number) =>
      JSON.parse(raw.bytes.toString("utf8", start + (i ? ends[i - 1] + 1 : 1), start + ends[i])) as unknown
    return { ...rest, ids, entry, entries: () => parse("resources"), text: () => parse("text") }
  }

  /** 16 hex digits of wyhash: a cache changed after it was written (cut short, edited) is never trusted. */
  function hash(bytes: Uint8Array) {
    return Bun.hash.wyhash(bytes).toString(16).padStart(16, "0")
  }

  /**
   * Every cached file's (resources, agents and commands) real path, size and mtime, for the check of a restored index
   * (`ResourceBuild.filesChanged`); from a cache read from disk without parsing its parse results.
   */
  export function stamps(data: Data): { real: string; size: number; mtimeMs: number }[] {
    const raw = raws.get(data)
    const loaded = (key: "files" | "references") => Object.getOwnPropertyDescriptor(data, key)?.get === undefined
    if (!raw || loaded("files") || loaded("references"))
      return [...Object.values(data.files), ...Object.values(data.references)]
    const [start, end] = raw.ranges[SECTIONS.indexOf("stamps")]
    const rows = JSON.parse(raw.bytes.toString("utf8", start, end)) as StampRow[]
    return rows.map(([rel, size, mtimeMs, real]) => ({ real: real ?? absolute(data.projectRoot, rel), size, mtimeMs }))
  }

  /** How many files (resources, agents and commands) the cache holds, without parsing them when read from disk. */
  export function entries(data: Data): number {
    return raws.get(data)?.entries ?? Object.keys(data.files).length + Object.keys(data.references).length
  }

  /** The absolute path of a project-relative one (forward slashes), as the scan forms it. */
  function absolute(root: string, relativePath: string) {
    return root + path.sep + (path.sep === "/" ? relativePath : relativePath.split("/").join(path.sep))
  }

  type Packed<T> = Omit<T, "real"> & { real?: string }

  /**
   * The parse results as written: what each entry's key and the project root already say is left out (the absolute
   * and real paths when they are the usual ones, the metadata's relative path, type, size and mtime, the empty
   * `references` of a parse), so the file is about a third smaller.
   */
  function packFiles(root: string, entries: Data["files"]) {
    const files: Record<string, Packed<FileEntry>> = {}
    for (const rel in entries) {
      const { real, ...entry } = entries[rel]
      const abs = absolute(root, rel)
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
    return files
  }

  function packReferences(root: string, entries: Data["references"]) {
    const references: Record<string, Packed<ReferenceEntry>> = {}
    for (const rel in entries) {
      const { real, ...entry } = entries[rel]
      references[rel] = real === absolute(root, rel) ? entry : { ...entry, real }
    }
    return references
  }

  /** Puts back what `packFiles` left out (in place: the entries were just parsed). */
  function unpackFiles(root: string, files: Data["files"]) {
    if (typeof files !== "object" || files === null) throw new TypeError("files: not an object")
    for (const rel in files) {
      const entry = files[rel]
      const abs = absolute(root, rel)
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
    return files
  }

  function unpackReferences(root: string, references: Data["references"]) {
    if (typeof references !== "object" || references === null) throw new TypeError("references: not an object")
    for (const rel in references) references[rel].real ??= absolute(root, rel)
    return references
  }

  /** The stamps section: every file's stamp, the real path only where it is not the usual one. */
  function stampRows(data: Data): StampRow[] {
    const rows: StampRow[] = []
    for (const entries of [data.files, data.references])
      for (const rel in entries) {
        const { real, size, mtimeMs } = entries[rel]
        rows.push(real === absolute(data.projectRoot, rel) ? [rel, size, mtimeMs] : [rel, size, mtimeMs, real])
      }
    return rows
  }

  /**
   * The file's bytes: the head (format, project, scan, number of entries), then each section's JSON, then the layout
   * (`open`). One JSON document, so a person or a tool can still read it whole.
   */
  function serialize(data: Data): Buffer {
    const { files, references, snapshot, ...rest } = data
    const head = JSON.stringify({ ...rest, entries: Object.keys(files).length + Object.keys(references).length })
    const values: Record<Section, unknown> = {
      snapshot: null,
      resources: null,
      text: null,
      stamps: stampRows(data),
      files: packFiles(data.projectRoot, files),
      references: packReferences(data.projectRoot, references),
    }
    let resources: string | undefined
    if (snapshot) {
      const { resources: metas, text, ...small } = snapshot
      const ends: number[] = []
      let end = 0
      const entries = metas.map((meta) => {
        const json = JSON.stringify(meta)
        end += Buffer.byteLength(json) + 1 // after `[` or `,`
        ends.push(end)
        return json
      })
      resources = `[${entries.join(",")}]`
      values.snapshot = { ...small, ids: metas.map((meta) => meta.id), ends }
      values.text = text
    }
    const parts: Buffer[] = [Buffer.from(head.slice(0, -1))]
    let at = parts[0].length
    const offsets: string[] = []
    for (const name of SECTIONS) {
      const key = Buffer.from(`,"${name}":`)
      const value = Buffer.from(
        name === "resources" && resources !== undefined ? resources : JSON.stringify(values[name]),
      )
      parts.push(key, value)
      offsets.push(String(at + key.length).padStart(10, "0"), String(at + key.length + value.length).padStart(10, "0"))
      at += key.length + value.length
    }
    const body = Buffer.concat(parts)
    return Buffer.concat([body, Buffer.from(`${LAYOUT_KEY}${hash(body)} ${offsets.join(" ")}"}`)])
  }

  /** Writes atomically (temporary file, then rename): a crash never leaves a half-written cache. */
  export async function write(file: string, data: Data): Promise<void> {
    await fs.mkdir(path.dirname(file), { recursive: true })
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`
    try {
      await fs.writeFile(temp, serialize(data))
      await fs.rename(temp, file)
    } catch (error) {
      await fs.rm(temp, { force: true })
      throw error
    }
  }
}
