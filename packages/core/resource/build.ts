import { statSync } from "fs"
import path from "path"
import { ResourceAccess } from "./access"
import { ResourceCache } from "./cache"
import { ResourceIndex } from "./indexer"
import { ResourceParse } from "./parse"
import type { ResourceProject } from "./project"
import { ResourceRead } from "./read"
import { ResourceScan } from "./scan"
import type { Resource } from "./schema"

/**
 * One (re)build of the index: scan, reuse every cached parse whose file kept its size and mtime, read and parse the
 * rest (a bounded number at a time), assemble. Agent and command files are read only when there is a resource file.
 * Returns the new cache data too, so the caller decides about writing. `restore` makes the index from a persisted cache
 * without any scan when no folder changed.
 *
 * With a security gate, every scanned file (resources, and the agent and command files that reference them) is
 * checked before anything else: a protected file is never read, never parsed, never cached (so no description of it
 * reaches the cache on disk) and takes no part in the graph; only the id its path gives it is kept (`withheld`), to
 * refuse a load of that id with the reason. Scan warnings about protected paths are dropped too. With segment markers,
 * a file whose frontmatter (a schema: any part) lies in a protected segment is withheld the same way, and the lines
 * of segments elsewhere are blanked before parsing, so no word or reference inside one is indexed.
 *
 * @example
 * const { index, cache, stats } = await ResourceBuild.run(project, config, previousCache)
 * stats // { parsed: 3, reused: 9997, removed: 0 }
 */
export namespace ResourceBuild {
  /** `restored`: the index came from the cache without a scan (`restore`). */
  export type Stats = { parsed: number; reused: number; removed: number; restored?: boolean }
  export type Output = {
    index: ResourceIndex.Index
    cache: ResourceCache.Data
    stats: Stats
    /** Folder stamps of this build's scan, for `ResourceScan.changed`. */
    dirs: Map<string, number | null>
    /** What the gate was asked (every scanned file and warning path) and what it denied, to re-check later. */
    access: Verification
  }

  /** The files a build checked and the verdicts it got; `active` is false when there was no check to ask. */
  export type Verification = { active: boolean; entries: ResourceAccess.Entry[]; denied: Map<string, string> }

  const CONCURRENCY = 64
  const BATCH = 4096

  export async function run(
    project: ResourceProject.Info,
    config: Pick<Resource.Config, "fileReadTimeout" | "maxFileSize">,
    previous?: ResourceCache.Data,
    gate?: ResourceAccess.Gate,
    segments: readonly ResourceAccess.Pair[] = [],
  ): Promise<Output> {
    const scan = await ResourceScan.scan(project)
    const access = await verify(project, scan, gate)
    if (access.denied.size) {
      const allowed = (f: ResourceScan.File) => !access.denied.has(f.path)
      scan.resources = scan.resources.filter(allowed)
      scan.references = scan.references.filter(allowed)
      scan.warnings = scan.warnings.filter((w) => !access.denied.has(path.join(project.root, w.path)))
    }
    const markers = ResourceAccess.pairsKey(segments)
    // Parses made under other segment markers are not reused: what a segment hides depends on them.
    const old =
      previous && previous.projectRoot === project.root && (previous.segments ?? "") === markers && readable(previous)
        ? previous
        : ResourceCache.empty(project.root)
    const cache = ResourceCache.empty(project.root, markers)
    const stats: Stats = { parsed: 0, reused: 0, removed: 0 }
    /** Moves the still-valid entries of `from` into `into`; returns the files that must be read again. */
    const reuse = <E extends { size: number; mtimeMs: number; real: string }>(
      files: ResourceScan.File[],
      from: Record<string, E>,
      into: Record<string, E>,
      same: (entry: E, file: ResourceScan.File) => boolean,
    ) => {
      const stale: ResourceScan.File[] = []
      for (const file of files) {
        const e = from[file.relativePath]
        if (e && e.size === file.size && e.mtimeMs === file.mtimeMs && e.real === file.real && same(e, file)) {
          into[file.relativePath] = e
          stats.reused++
        } else stale.push(file)
      }
      return stale
    }
    const toRead = reuse(scan.resources, old.files, cache.files, (e, f) => e.type === f.type)
    // Agent and command files matter only for the resources they reference: with no resource file they are not read
    // (a project with hundreds of Claude Code agents and no resources paid for reading them all). Adding a resource
    // changes its folder's stamp, and the build that follows reads them.
    const refsToRead = scan.resources.length
      ? reuse(scan.references, old.references, cache.references, (e, f) => e.kind === f.kind)
      : []

    // Read a batch (many reads in flight), then parse it. Parsing inside each read's continuation measured ~20%
    // slower at 10k files (every completion waits behind parsing work); reading the next batch while parsing this
    // one cost ~15% more CPU time than reading, then parsing, in batches of a few thousand.
    for (let start = 0; start < toRead.length; start += BATCH) {
      const batch = toRead.slice(start, start + BATCH)
      const reads = await mapLimited(batch, CONCURRENCY, (file) => readFile(file, config))
      batch.forEach((file, i) => {
        stats.parsed++
        const read = reads[i]
        if (read.ok && segments.length) {
          // A file whose listed fields lie in a protected segment is withheld like a protected file (and not cached);
          // segments elsewhere are blanked, so nothing inside one is indexed or followed as a reference.
          if (ResourceAccess.headProtected(read.text, segments, file.type === "schema")) {
            access.withheld.push(withheld(file, SEGMENT_REASON))
            return
          }
          reads[i] = { ...read, text: ResourceAccess.blank(read.text, segments) }
        }
        cache.files[file.relativePath] = entryOf(file, config, reads[i])
      })
    }
    const refReads = await mapLimited(refsToRead, CONCURRENCY, (file) => readFile(file, config))
    refsToRead.forEach((file, i) => {
      const read = refReads[i]
      const text = read.ok ? ResourceAccess.blank(read.text, segments) : ""
      cache.references[file.relativePath] = {
        size: file.size,
        mtimeMs: file.mtimeMs,
        real: file.real,
        kind: file.kind as "agent" | "command",
        name: ResourceParse.stem(file.relativePath),
        words: ResourceIndex.words(text),
        explicit: ResourceParse.inlineReferences(text, file.relativePath),
      }
      stats.parsed++
    })
    stats.removed =
      Object.keys(old.files).filter((k) => !cache.files[k]).length +
      Object.keys(old.references).filter((k) => !cache.references[k]).length
    cache.scan = { roots: project.opencodeDirs, dirs: [...scan.dirs], listedAt: scan.listedAt, warnings: scan.warnings }
    // A link to a project file that is no resource is answered by whether the file exists ("a file of the project,
    // not a resource" or "no such resource"): for a file the role may not read, that answer would tell whether it
    // exists, which the sandbox hides from commands too. Every file the index asks about (a link's own target, the
    // type-folder fallback a missed bare link falls back to, a definition's target, a YAML `$ref`) goes through this
    // one gated answer: one the check denies counts as missing, whether it exists or not. Which files are asked depends
    // on the answers (the fallback is asked only when the link's own target is missing, so a denied own target makes
    // the fallback asked), so the index is assembled again until a pass asks about no file that was not checked.
    const index = await gatedAssemble(project, cache, scan.warnings, access, gate)
    // Taken when the cache is written (never for lint, which does not persist it).
    if (!access.active && !segments.length) {
      let snapshot: ResourceIndex.Snapshot | undefined
      Object.defineProperty(cache, "snapshot", {
        enumerable: true,
        configurable: true,
        get: () => (snapshot ??= ResourceIndex.snapshot(index)),
      })
    }
    return { index, cache, stats, dirs: scan.dirs, access }
  }

  /**
   * False when the parse results of a cache read from disk cannot be read (they are parsed at first use; the file's
   * hash makes this a safeguard): the build then reads every file, as without a cache.
   */
  function readable(data: ResourceCache.Data) {
    try {
      return typeof data.files === "object" && typeof data.references === "object"
    } catch {
      return false
    }
  }

  /** The parsed files of a cache, in its order, and their problems. */
  function parsedOf(cache: ResourceCache.Data) {
    const parsed: ResourceIndex.ParsedFile[] = []
    const problems: Resource.Warning[] = []
    for (const relativePath in cache.files) {
      const entry = cache.files[relativePath]
      if (entry.problem) problems.push(entry.problem)
      if (entry.result) parsed.push({ relativePath, path: entry.result.metadata.path, result: entry.result })
    }
    return { parsed, problems }
  }

  function assemble(
    project: ResourceProject.Info,
    cache: ResourceCache.Data,
    scanWarnings: Resource.Warning[],
    withheld: ResourceIndex.Withheld[] = [],
    exists: (relativePath: string) => boolean = (relativePath) => fileInside(project, relativePath),
  ) {
    const files = parsedOf(cache)
    const references: ResourceIndex.ReferenceFile[] = []
    for (const relativePath in cache.references) {
      const e = cache.references[relativePath]
      references.push({ kind: e.kind, name: e.name, relativePath, words: e.words, explicit: e.explicit })
    }
    return ResourceIndex.assemble(
      project,
      files.parsed,
      references,
      [...scanWarnings, ...files.problems],
      withheld,
      exists,
    )
  }

  /**
   * The index, with every project file it asks about checked by the gate first: an unchecked file that exists is
   * checked and, when the check denies it, the index is assembled again with it missing. Each pass checks at least one
   * file more, so it ends (in practice after two or three: a denied own target, then its fallback).
   */
  async function gatedAssemble(
    project: ResourceProject.Info,
    cache: ResourceCache.Data,
    warnings: Resource.Warning[],
    access: Verification & { withheld: ResourceIndex.Withheld[] },
    gate: ResourceAccess.Gate | undefined,
  ): Promise<ResourceIndex.Index> {
    if (!access.active || !gate) return assemble(project, cache, warnings, access.withheld)
    const verdicts = new Map<string, boolean>()
    for (;;) {
      const asked = new Set<string>()
      const index = assemble(project, cache, warnings, access.withheld, (relativePath) => {
        const absolute = path.join(project.root, relativePath)
        const allowed = verdicts.get(absolute)
        if (allowed === false) return false
        // Asked before the stat: a denied file answers the same whether it exists or not.
        const found = fileInside(project, relativePath)
        if (found && allowed === undefined) asked.add(absolute)
        return found
      })
      if (!asked.size) return index
      const entries = [...asked].map((p) => ({ path: p }))
      const denied = await gate.denied(entries)
      // Kept with the verdicts to re-check: a policy change that denies or allows one of them rebuilds the index.
      access.entries.push(...entries)
      for (const p of asked) verdicts.set(p, !denied.has(p))
      for (const [p, reason] of denied) access.denied.set(p, reason)
      // Every file this pass took as there is allowed: the pass stands.
      if (!denied.size) return index
    }
  }

  /** Whether `relativePath` is a file inside the project (one `stat`, for the few references that need it). */
  function fileInside(project: ResourceProject.Info, relativePath: string): boolean {
    if (relativePath === ".." || relativePath.startsWith("../") || path.isAbsolute(relativePath)) return false
    try {
      return statSync(path.join(project.root, relativePath)).isFile()
    } catch {
      return false
    }
  }

  /**
   * The index from a persisted cache alone, without listing a folder or stat'ing a file: when the cache holds the
   * stamps of the scan that made it, every folder still has its stamp (so no file was added, removed or renamed), no
   * folder had changed within `ResourceScan.RACY_MS` of that scan (a change in the same tick of a coarse clock keeps
   * the stamp), and no security check or segment marker is in play (their verdicts need the scan). Files edited in
   * place keep their folder's stamp: `filesChanged` finds them, and the loader runs it right after.
   *
   * @example
   * const out = await ResourceBuild.restore(project, await ResourceCache.read(file, project.root))
   * out?.stats // { parsed: 0, reused: 10000, removed: 0, restored: true }
   */
  export async function restore(
    project: ResourceProject.Info,
    data: ResourceCache.Data | undefined,
    gate?: ResourceAccess.Gate,
    segments: readonly ResourceAccess.Pair[] = [],
  ): Promise<Output | undefined> {
    // A cache written under a security check has no snapshot (and lacks the files it withheld): never restored.
    // ("snapshot" is parsed at its first read: `in`, not a read, until the other checks pass.)
    if (!data?.scan || !("snapshot" in data) || data.projectRoot !== project.root || data.segments || segments.length)
      return undefined
    if (gate?.active()) return undefined
    const { listedAt, roots } = data.scan
    // Scanned from another folder of the project (another set of `.opencode` folders): not this index.
    if (roots?.length !== project.opencodeDirs.length || roots.some((r, i) => r !== project.opencodeDirs[i]))
      return undefined
    const dirs = new Map(data.scan.dirs)
    for (const stamp of dirs.values()) if (ResourceScan.racy(stamp, listedAt)) return undefined
    if (!dirs.size || (await ResourceScan.changed(dirs))) return undefined
    let index: ResourceIndex.Index | undefined
    try {
      // From disk: by parts, each resource's metadata parsed at its first use (`ResourceIndex.hydrateStored`).
      const stored = ResourceCache.stored(data)
      index = stored ? ResourceIndex.hydrateStored(project, stored) : ResourceIndex.hydrate(project, data.snapshot)
    } catch {
      index = undefined
    }
    if (!index) {
      // A snapshot that does not fit (a damaged cache, which its hash would have refused) is dropped, so the build that
      // follows rewrites the file (`stampsOutdated`) instead of every start scanning past it.
      delete data.snapshot
      return undefined
    }
    const reused = ResourceCache.entries(data)
    return {
      index,
      cache: data,
      stats: { parsed: 0, reused, removed: 0, restored: true },
      dirs,
      access: { active: false, entries: [], denied: new Map() },
    }
  }

  /**
   * True when the folder stamps a cache holds are worth replacing by those of a new scan: missing, different, taken
   * from other `.opencode` folders or without a snapshot, or racy where the new ones are not (so the next start can
   * `restore`). A cache whose restore failed for another reason (a security check in play) keeps its stamps and is
   * not rewritten at every start.
   */
  export function stampsOutdated(before: ResourceCache.Data | undefined, after: ResourceCache.Data): boolean {
    const a = before?.scan
    const b = after.scan
    if (!b) return false
    if (!a || a.dirs.length !== b.dirs.length) return true
    // Written from another folder of the project, or under a security check that is gone now ("snapshot" is a getter
    // until written: `in`, not a read).
    if (a.roots?.join("\n") !== b.roots.join("\n") || (!("snapshot" in before!) && "snapshot" in after)) return true
    for (let i = 0; i < a.dirs.length; i++)
      if (a.dirs[i][0] !== b.dirs[i][0] || a.dirs[i][1] !== b.dirs[i][1]) return true
    const racy = (scan: NonNullable<ResourceCache.Data["scan"]>) =>
      scan.dirs.some(([, stamp]) => ResourceScan.racy(stamp, scan.listedAt))
    return racy(a) && !racy(b)
  }

  /**
   * True when a file of the cache changed size or mtime, or is gone, since it was cached: the check a restored index
   * skipped (an edit in place leaves its folder's stamp alone). Stops looking at the first change.
   */
  export async function filesChanged(data: ResourceCache.Data): Promise<boolean> {
    const entries = ResourceCache.stamps(data)
    // Synchronous stats in slices, yielding between them: a promise per stat cost more than the stat (10k files:
    // ≈ 44 ms of CPU time async, ≈ 24 ms sync), and a slice of 256 blocks the event loop for about a millisecond.
    for (let start = 0; start < entries.length; start += CHECK_SLICE) {
      if (start) await new Promise<void>((resolve) => setImmediate(resolve))
      for (const e of entries.slice(start, start + CHECK_SLICE)) {
        let stat: ReturnType<typeof statSync>
        try {
          stat = statSync(e.real, { throwIfNoEntry: false })
        } catch {
          return true
        }
        if (!stat || stat.size !== e.size || stat.mtimeMs !== e.mtimeMs) return true
      }
    }
    return false
  }

  /** Files `filesChanged` stats between two yields to the event loop. */
  const CHECK_SLICE = 256

  /** Asks the gate about every scanned file and warning path at once (concurrently, remembered per version). */
  async function verify(
    project: ResourceProject.Info,
    scan: ResourceScan.Result,
    gate: ResourceAccess.Gate | undefined,
  ): Promise<Verification & { withheld: ResourceIndex.Withheld[] }> {
    if (!gate?.active())
      return { active: false, entries: [], denied: new Map(), withheld: [] as ResourceIndex.Withheld[] }
    const entries: ResourceAccess.Entry[] = [...scan.resources, ...scan.references].map((f) => ({
      path: f.path,
      key: f.real,
    }))
    for (const w of scan.warnings) entries.push({ path: path.join(project.root, w.path) })
    const denied = await gate.denied(entries)
    return {
      active: true,
      entries,
      denied,
      withheld: scan.resources.filter((f) => denied.has(f.path)).map((f) => withheld(f, denied.get(f.path)!)),
    }
  }

  /** Why a resource whose frontmatter (or, for a schema, any part) lies in a protected segment is withheld. */
  export const SEGMENT_REASON = "its metadata lies in a protected segment of the security policy"

  function withheld(f: ResourceScan.File, reason: string): ResourceIndex.Withheld {
    return { path: f.path, relativePath: f.relativePath, id: ResourceParse.defaultId(f.relativePath), reason }
  }

  /**
   * Schemas are read whole up to this size, whatever `maxFileSize` says: JSON cannot be parsed from a head, and a
   * valid schema over the load limit is still worth indexing (SchemaStore has several of 1.5–3 MB).
   */
  export const SCHEMA_INDEX_LIMIT = 64 * 1024 * 1024

  function readFile(file: ResourceScan.File, config: Pick<Resource.Config, "fileReadTimeout" | "maxFileSize">) {
    return ResourceRead.text(file.real, {
      timeoutMs: config.fileReadTimeout,
      maxBytes: file.type === "schema" ? Math.max(config.maxFileSize, SCHEMA_INDEX_LIMIT) : config.maxFileSize,
      size: file.size,
    })
  }

  function entryOf(
    file: ResourceScan.File,
    config: Pick<Resource.Config, "fileReadTimeout" | "maxFileSize">,
    read: ResourceRead.Result,
  ): ResourceCache.FileEntry {
    const base = { size: file.size, mtimeMs: file.mtimeMs, real: file.real, type: file.type! }
    if (!read.ok) {
      return {
        ...base,
        problem: {
          severity: "error",
          code: read.code,
          path: file.relativePath,
          message: `${path.posix.basename(file.relativePath)}: ${read.reason}; not indexed`,
        },
      }
    }
    const result = ResourceParse.parse({
      type: file.type!,
      relativePath: file.relativePath,
      path: file.path,
      size: file.size,
      lastModified: file.mtimeMs,
      text: read.text,
      truncated: read.truncated,
    })
    // Over the load limit is a setting, not a defect of the file: it is indexed and listed, so lint warns.
    if (file.size > config.maxFileSize) {
      result.warnings.push({
        severity: "warning",
        code: "oversize",
        path: file.relativePath,
        id: result.metadata.id,
        message: `${file.size} bytes, over the ${config.maxFileSize}-byte load limit: listed, but resource-load refuses it`,
      })
    }
    return { ...base, result }
  }

  /** `fn` over `items` with at most `limit` in flight; results in the order of `items`. */
  export async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
    const out = new Array<R>(items.length)
    let next = 0
    const worker = async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i])
      }
    }
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
    return out
  }
}
