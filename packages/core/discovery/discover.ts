import crypto from "crypto"
import { ResourceAccess } from "../resource/access"
import { LocalState } from "../learning/local"
import { errorMessage } from "../util/error"
import { Logger } from "../util/log"
import { OpenCodeConfig } from "../util/opencode-config"
import { DiscoveryCache, DiscoveryCacheFile } from "./cache"
import { DiscoveryDirectories } from "./directories"
import { Keywords } from "./keywords"
import { DiscoveryMatch } from "./match"
import { DiscoveryParse } from "./parse"
import { MemoryThink } from "./memory-think"
import { DiscoveryScan } from "./scan"
import { Discovery } from "./schema"
import { DiscoverySettings } from "./settings"

/**
 * Dynamic context discovery: scans the agent, command, skill and output-style directories (in parallel, within
 * `scanTimeoutMs`), applies precedence (project over global, nearest project folder first, OpenCode's folders before
 * Claude Code's), adds the project resources of an optional provider, and matches a prompt against all of them.
 *
 * An engine keeps a file cache (mtime-checked) and the last ranking index, so repeated prompts re-read only changed
 * files. A directory that is slow or broken degrades the result (`degraded`), it never fails it.
 *
 * With a security check (`Host.access`, given per call or in `Init.host`), definitions whose file (or skill folder)
 * the policy protects for reading or for the model are left out before anything is ranked: never read, never
 * suggested, never counted, never shadowing another; the ranking is what it would be without them. The same holds
 * for a definition whose frontmatter lies in a protected segment (`Host.segments`). Verdicts are
 * remembered while `Host.accessVersion` stays the same. Project resources come filtered from the resource loader's
 * index; the ones about to be suggested are checked again by path.
 *
 * @example
 * const discovery = DynamicDiscovery.create({ directory: "/repo", worktree: "/repo", log })
 * const result = await discovery.gather("review the auth changes before I merge")
 * result.context?.matchedAgents[0]?.item.name // "code-reviewer"
 */
export namespace DynamicDiscovery {
  /** Share of the best score a hit needs in a memory-think prompt (a choice of agents and styles is offered). */
  export const MEMORY_THINK_CUT = 0.5

  export type Init = {
    directory: string
    worktree?: string
    log?: Logger
    /** Project resources (e.g. from the resource loader), matched like the rest and suggested by id. */
    resources?: Discovery.ResourceProvider
    config?: Discovery.ConfigInput
    /** Environment for `XDG_CONFIG_HOME` (default `process.env`). */
    env?: Record<string, string | undefined>
    /** The host's security check, read at call time (the security layer installs it late); a call may give its own. */
    host?: ResourceAccess.Source
    /**
     * The parse cache on disk (`DiscoveryCacheFile.location(directory, worktree)` in the plugin and the CLI): read on
     * the first scan, rewritten after a scan that changed what it holds. Without it, nothing is kept across processes.
     * Under a security policy it is one file per role and policy (`LocalState.scoped` with the check's
     * `accessScope`): what one role's process parsed and kept is never read by a process of another.
     */
    cacheFile?: string
  }

  /** The security check of one call; `access: undefined` given explicitly means none, whatever `Init.host` says. */
  export type CallOptions = ResourceAccess.Source & {
    /** The agent the prompt is sent to (OpenCode's `chat.message` input): whose permissions decide (see `DiscoverySettings`). */
    agent?: string
  }

  export type Catalogue = {
    /** Discovered items after precedence, in precedence order. */
    items: Discovery.DiscoveredItem[]
    resources: Discovery.ProjectResource[]
    scans: Discovery.ScanResult[]
    /** Items hidden by one of the same type and name with higher precedence. */
    shadowed: { item: Discovery.DiscoveredItem; by: string }[]
    /** Items OpenCode's configuration turns off or denies the prompting agent (`DiscoverySettings`), with the reason. */
    left: DiscoverySettings.Left[]
    degraded: Discovery.Degraded[]
    /** Files and resources skipped, with the reason. */
    problems: Discovery.FileProblem[]
    stats: Discovery.Stats
  }

  export type Engine = ReturnType<typeof create>

  /**
   * An engine for one project: `gather(prompt)` per prompt, `catalogue()` for everything discovered.
   *
   * @example
   * const engine = DynamicDiscovery.create({ directory: "/repo", resources: async () => loaderResources })
   * const { context } = await engine.gather("ship the release")
   */
  export function create(init: Init) {
    const config = Discovery.Config.parse(init.config ?? {})
    const log = init.log ?? Logger.silent
    const cache = new DiscoveryCache()
    let last: { items: readonly unknown[]; index: DiscoveryMatch.Index } | undefined
    /** The check of the call in progress (one engine serves one host; concurrent calls share it). */
    let security: ResourceAccess.Source | undefined
    const access = ResourceAccess.gate(() => security)
    const securityOf = (options: CallOptions) => ("access" in options ? options : init.host)
    /** The segment markers the cache's items were checked against: new markers empty the cache. */
    let markers = ""
    /**
     * The cache file of a security scope (`Host.accessScope`): one per role and policy, so a process never reads, nor
     * seeds its cache from, the definitions another role's process could read.
     */
    const fileOf = (scope: string | undefined) =>
      init.cacheFile && config.enabled ? LocalState.scoped(init.cacheFile, scope) : undefined
    let diskFile = fileOf(init.host?.accessScope?.())
    let disk = diskFile ? diskCache(diskFile, cache, log, init.cacheFile) : undefined

    /** Scans and collects everything discoverable right now (leaving out what the host's check protects). */
    async function catalogue(options: CallOptions = {}): Promise<Catalogue> {
      security = securityOf(options)
      const file = fileOf(security?.accessScope?.())
      if (file !== diskFile) {
        // Another role or policy than the file in use was written under: its own file, and nothing parsed before.
        // What the file in use is owed is written first, from the cache as it is.
        await disk?.flush()
        cache.clear()
        last = undefined
        diskFile = file
        disk = file ? diskCache(file, cache, log, init.cacheFile) : undefined
      }
      const segments = ResourceAccess.pairs(security)
      if (ResourceAccess.pairsKey(segments) !== markers) {
        cache.clear()
        markers = ResourceAccess.pairsKey(segments)
      }
      const started = performance.now()
      await disk?.load(DiscoveryCacheFile.markersKey(markers))
      const places = DiscoveryDirectories.resolve({ directory: init.directory, worktree: init.worktree, env: init.env })
      const ledger: DiscoveryScan.Ledger | undefined = disk ? { files: new Set(), listings: new Set() } : undefined
      const [scans, provided] = await Promise.all([
        DiscoveryScan.all(places, { cache, timeoutMs: config.scanTimeoutMs, access, segments, ledger }),
        loadResources(),
      ])
      // A scan that ran out of time saw part of the catalogue: the file on disk keeps what it had.
      if (disk && ledger && !scans.some((s) => s.timedOut)) disk.keep(ledger, DiscoveryCacheFile.markersKey(markers))
      const degraded: Discovery.Degraded[] = []
      const problems: Discovery.FileProblem[] = []
      const items: Discovery.DiscoveredItem[] = []
      const shadowed: Catalogue["shadowed"] = []
      const byKey = new Map<string, Discovery.DiscoveredItem>()
      for (const scan of scans) {
        if (scan.timedOut) degraded.push({ source: scan.directory.path, reason: "timeout" })
        else if (scan.error)
          degraded.push({ source: scan.directory.path, reason: "filesystem_error", error: scan.error })
        problems.push(...scan.problems)
        for (const item of scan.items) {
          const key = `${item.resourceType}\u0000${item.name}`
          const winner = byKey.get(key)
          if (winner) {
            shadowed.push({ item, by: winner.filePath })
            continue
          }
          byKey.set(key, item)
          // A disabled or primary agent keeps its name from the ones below it, and is offered nowhere.
          if (!item.unavailable) items.push(item)
        }
      }
      degraded.push(...provided.degraded)
      problems.push(...provided.problems)
      const configured = await configure(items, options.agent, problems)
      return {
        items: configured.items,
        resources: provided.resources,
        scans,
        shadowed,
        left: configured.left,
        degraded,
        problems,
        stats: {
          discovered: configured.items.length,
          resources: provided.resources.length,
          directories: scans.filter((s) => s.directory.exists).length,
          cacheHits: scans.reduce((n, s) => n + s.cacheHits, 0),
          parsed: scans.reduce((n, s) => n + s.parsed, 0),
          durationMs: Math.round((performance.now() - started) * 100) / 100,
        },
      }
    }

    let settings: { configs: object[]; settings: DiscoverySettings.Settings } | undefined

    /**
     * `items` as OpenCode's configuration leaves them for `agent` (`DiscoverySettings.decide`), with the agents and
     * commands defined there added; one from a configuration the host's check protects is left out. A configuration
     * that does not parse is reported in `problems` and read as absent.
     */
    async function configure(
      items: Discovery.DiscoveredItem[],
      agent: string | undefined,
      problems: Discovery.FileProblem[],
    ): Promise<{ items: Discovery.DiscoveredItem[]; left: DiscoverySettings.Left[] }> {
      const env = init.env ?? process.env
      const read = OpenCodeConfig.sources({ directory: init.directory, worktree: init.worktree, env })
      for (const p of read.problems)
        problems.push({ path: p.file, error: `OpenCode configuration not read: ${p.error}` })
      const configs = read.sources.map((s) => s.config)
      if (!settings || settings.configs.length !== configs.length || settings.configs.some((c, i) => c !== configs[i]))
        settings = { configs, settings: DiscoverySettings.from(read.sources) }
      const now = settings.settings
      let defined = DiscoverySettings.defined(now, { globalDir: DiscoveryDirectories.opencodeGlobal(env) })
      if (defined.length && access.active()) {
        const denied = await access.denied(defined.map((d) => ({ path: d.filePath })))
        defined = defined.filter((d) => !denied.has(d.filePath))
      }
      if (!defined.length && !now.agents.size && !now.rules.length) return { items, left: [] }
      return DiscoverySettings.decide(items, defined, now, agent)
    }

    async function loadResources(): Promise<{
      resources: Discovery.ProjectResource[]
      degraded: Discovery.Degraded[]
      problems: Discovery.FileProblem[]
    }> {
      if (!init.resources) return { resources: [], degraded: [], problems: [] }
      let timer: ReturnType<typeof setTimeout> | undefined
      const expired = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), config.scanTimeoutMs)
      })
      try {
        const listed = await Promise.race([Promise.resolve().then(init.resources), expired])
        if (listed === "timeout")
          return { resources: [], degraded: [{ source: "resources", reason: "timeout" }], problems: [] }
        const resources: Discovery.ProjectResource[] = []
        const problems: Discovery.FileProblem[] = []
        const ids = new Set<string>()
        for (const raw of listed) {
          const checked = Discovery.ProjectResource.safeParse(raw)
          const id = (raw as { id?: unknown })?.id
          if (!checked.success) {
            problems.push({
              path: typeof id === "string" && id.trim() ? `resource ${id}` : "resource (no id)",
              error: checked.error.issues[0].message,
            })
            continue
          }
          if (ids.has(checked.data.id)) continue
          ids.add(checked.data.id)
          resources.push(checked.data)
        }
        return { resources, degraded: [], problems }
      } catch (error) {
        return {
          resources: [],
          degraded: [{ source: "resources", reason: "filesystem_error", error: errorMessage(error) }],
          problems: [],
        }
      } finally {
        clearTimeout(timer)
      }
    }

    /**
     * The ranking index of a catalogue, reused while its items and resources are unchanged; with the cache on disk,
     * the index kept there when it was built from the same documents (`fingerprint`), else built and kept.
     */
    function indexOf(cat: Pick<Catalogue, "items" | "resources">): DiscoveryMatch.Index {
      const all: readonly unknown[] = [...cat.items, ...cat.resources]
      if (last && last.items.length === all.length && last.items.every((x, i) => x === all[i])) return last.index
      const docs = documents(cat)
      const file = disk
      const print = file && fingerprint(cat, cache)
      const kept = file && print ? file.index(print) : undefined
      const index = kept ? DiscoveryMatch.restore(docs, kept) : DiscoveryMatch.index(docs)
      if (file && print && !kept) file.keepIndex(print, DiscoveryMatch.snapshot(index))
      last = { items: all, index }
      return index
    }

    /** Matches `prompt` against a catalogue: the top `MAX_SUGGESTIONS` per type, best first. */
    function match(cat: Pick<Catalogue, "items" | "resources">, prompt: string): Discovery.DynamicContext {
      const detection = MemoryThink.detect(prompt)
      return contextOf(cat, search(indexOf(cat), prompt, detection), detection)
    }

    /**
     * The hits of a prompt. A memory-think prompt is matched on its thought, and keeps hits down to half the best
     * score: it offers agents and styles to choose from for `--agent` and `--style`, not a single answer.
     */
    function search(
      index: DiscoveryMatch.Index,
      prompt: string,
      detection: MemoryThink.Detection | undefined,
      options: DiscoveryMatch.SearchOptions = {},
    ) {
      return detection
        ? index.search(detection.topic, { ...options, relativeCut: MEMORY_THINK_CUT, groupCut: MEMORY_THINK_CUT })
        : index.search(prompt, options)
    }

    /**
     * `match` over a catalogue already filtered by the check, with one more look at the project resources about to be
     * suggested (their provider, the resource index, leaves protected files out already): a denied one is dropped and
     * the next best takes its place, and the cuts relative to the best hit are made among what is left, so a denied
     * resource's score moves no floor.
     */
    async function matchChecked(
      cat: Pick<Catalogue, "items" | "resources">,
      prompt: string,
    ): Promise<Discovery.DynamicContext> {
      const detection = MemoryThink.detect(prompt)
      const index = indexOf(cat)
      const hits = search(index, prompt, detection, { all: true })
      const resourceHits = hits.filter((h) => h.index >= cat.items.length)
      const pathOf = (h: DiscoveryMatch.Hit) => cat.resources[h.index - cat.items.length].path
      // Best first, a few at a time, until enough are allowed: only what could be shown is asked about.
      const allowed = new Set<number>()
      for (let i = 0; i < resourceHits.length && allowed.size < Discovery.MAX_SUGGESTIONS;) {
        const batch = resourceHits.slice(i, (i += Discovery.MAX_SUGGESTIONS))
        const denied = await access.denied(batch.flatMap((h) => (pathOf(h) ? [{ path: pathOf(h)! }] : [])))
        for (const h of batch) if (!denied.has(pathOf(h) ?? "")) allowed.add(h.index)
      }
      const kept = hits.filter((h) => h.index < cat.items.length || allowed.has(h.index))
      const cut = detection ? { relativeCut: MEMORY_THINK_CUT, groupCut: MEMORY_THINK_CUT } : {}
      return contextOf(cat, index.select(kept, cut), detection)
    }

    function contextOf(
      cat: Pick<Catalogue, "items" | "resources">,
      hits: readonly DiscoveryMatch.Hit[],
      detection: MemoryThink.Detection | undefined,
    ): Discovery.DynamicContext {
      const byType: Record<Discovery.ResourceType, Discovery.MatchedItem[]> = {
        agent: [],
        command: [],
        skill: [],
        outputStyle: [],
      }
      const resources: Discovery.MatchedResource[] = []
      for (const hit of hits) {
        if (hit.index < cat.items.length) {
          const item = cat.items[hit.index]
          const list = byType[item.resourceType]
          if (list.length < Discovery.MAX_SUGGESTIONS)
            list.push({ item, matchedKeywords: hit.matched, score: hit.score })
        } else if (resources.length < Discovery.MAX_SUGGESTIONS) {
          resources.push({
            resource: cat.resources[hit.index - cat.items.length],
            matchedKeywords: hit.matched,
            score: hit.score,
          })
        }
      }
      return {
        matchedAgents: byType.agent,
        matchedCommands: byType.command,
        matchedSkills: byType.skill,
        matchedOutputStyles: byType.outputStyle,
        matchedResources: resources,
        isMemoryThinkContext: detection !== undefined,
        ...(detection ? { memoryThink: MemoryThink.context(detection, byType.agent, byType.outputStyle) } : {}),
      }
    }

    /**
     * Discovers and matches `prompt`. Never throws: a disabled engine, an empty catalogue, a scan that timed out or
     * failed everywhere come back as skipped results with their reason. With `access` (the host's security check),
     * what the policy protects is left out (see above).
     */
    async function gather(prompt: string, options: CallOptions = {}): Promise<Discovery.DynamicDiscoveryResult> {
      if (!config.enabled) return { success: false, skipped: true, skipReason: "disabled" }
      try {
        const cat = await catalogue(options)
        for (const d of cat.degraded)
          log.warn(`discovery: ${d.source} ${d.reason === "timeout" ? "timed out" : "failed"}`, { ...d })
        const degraded = cat.degraded.length ? { degraded: cat.degraded } : {}
        if (cat.items.length + cat.resources.length === 0) {
          const timedOut = cat.degraded.filter((d) => d.reason === "timeout")
          const failed = cat.degraded.filter((d) => d.reason === "filesystem_error")
          if (timedOut.length)
            return {
              success: false,
              skipped: true,
              skipReason: "timeout",
              error: `scan exceeded ${config.scanTimeoutMs} ms: ${timedOut.map((d) => d.source).join(", ")}`,
              ...degraded,
              stats: cat.stats,
            }
          if (failed.length)
            return {
              success: false,
              skipped: true,
              skipReason: "filesystem_error",
              error: failed.map((d) => d.error ?? d.source).join("; "),
              ...degraded,
              stats: cat.stats,
            }
          return { success: false, skipped: true, skipReason: "no_resources_found", stats: cat.stats }
        }
        const context = access.active() ? await matchChecked(cat, prompt) : match(cat, prompt)
        return { success: true, context, ...degraded, stats: cat.stats }
      } catch (error) {
        log.error("discovery failed", { error: errorMessage(error) })
        return { success: false, skipped: true, skipReason: "filesystem_error", error: errorMessage(error) }
      }
    }

    /** Resolves once the cache file is written (after a scan that changed it); at once when nothing is pending. */
    async function flush(): Promise<void> {
      await disk?.flush()
    }

    return { config, cache, access, catalogue, match, gather, flush }
  }

  /**
   * The engine's side of the cache on disk. `load` seeds the in-memory cache from the file (once per set of segment
   * markers); `keep` records the entries and listings the last scan relied on (so files that went away or became
   * protected leave the file), `keepIndex` the ranking index last built; `index` gives back the kept index when it was
   * built from the same documents. The file is rewritten only when what it would hold differs from what it holds, after
   * the prompt's result is returned; `flush` waits for that.
   */
  function diskCache(file: string, cache: DiscoveryCache, log: Logger, base?: string) {
    let loading: { key: string; done: Promise<void> } | undefined
    /**
     * What the file holds, as far as telling a change goes: the cache's generation when it matched the file, the
     * number of files and listings the scan it came from relied on, and its index's fingerprint.
     */
    let clean: { generation: number; files: number; listings: number; fingerprint: string } | undefined
    let kept: { files: string[]; listings: string[]; markers: string } | undefined
    let index:
      { fingerprint: string; record?: DiscoveryCacheFile.IndexRecord; snapshot?: DiscoveryMatch.Snapshot } | undefined
    let timer: ReturnType<typeof setTimeout> | undefined
    let done: Promise<void> = Promise.resolve()
    let warned = false

    // Read, parsed and its index unpacked as soon as the engine exists: a host creates it at start-up, well before
    // the first prompt. Checked against the first scan's markers before anything of it is used.
    let early: Promise<{ parsed: DiscoveryCacheFile.Parsed; snapshot?: DiscoveryMatch.Snapshot }> | undefined =
      DiscoveryCacheFile.readLater(file).then((parsed) => ({
        parsed,
        snapshot: DiscoveryCacheFile.unpackEarly(parsed),
      }))

    /** Seeds the cache from the file once per set of markers; concurrent scans wait for the same seeding. */
    function load(markersKey: string): Promise<void> {
      if (loading?.key !== markersKey) loading = { key: markersKey, done: seed(markersKey) }
      return loading.done
    }

    async function seed(markersKey: string) {
      clean = undefined
      index = undefined
      const pending = early
      early = undefined
      const read = pending ? await pending : undefined
      const { contents, problem } = read
        ? DiscoveryCacheFile.check(read.parsed, markersKey)
        : DiscoveryCacheFile.read(file, markersKey)
      if (!contents) {
        if (problem !== DiscoveryCacheFile.NO_FILE)
          log.debug(`discovery: cache file ignored (${problem}); rebuilding it`, { file })
        return
      }
      cache.ensureCapacity(contents.files.length + Discovery.MAX_CACHE_SIZE)
      for (const [filePath, [mtimeMs, ctimeMs, size, ino], item, body, warning, error] of contents.files) {
        const stamp = { mtimeMs, ctimeMs, size, ino, settled: true }
        if (item)
          cache.set(filePath, DiscoveryParse.withBody(Object.freeze(item), body), mtimeMs, warning || undefined, stamp)
        else cache.fail(filePath, mtimeMs, error, stamp)
      }
      for (const [key, listing] of contents.listings) cache.setListing(key, listing)
      if (contents.index)
        index = read?.snapshot
          ? { fingerprint: contents.index.fingerprint, snapshot: read.snapshot }
          : { fingerprint: contents.index.fingerprint, record: contents.index }
      clean = {
        generation: cache.generation,
        files: contents.files.length,
        listings: contents.listings.length,
        fingerprint: index?.fingerprint ?? "",
      }
    }

    function keep(ledger: DiscoveryScan.Ledger, markersKey: string) {
      kept = { files: [...ledger.files], listings: [...ledger.listings], markers: markersKey }
      schedule()
    }

    /** The index kept for the documents `fingerprint` names, if any (unpacked once). */
    function indexFor(fingerprint: string): DiscoveryMatch.Snapshot | undefined {
      if (!index || index.fingerprint !== fingerprint) return undefined
      if (!index.snapshot && index.record) {
        index.snapshot = DiscoveryCacheFile.unpack(index.record)
        index.record = undefined
        if (!index.snapshot) {
          log.debug("discovery: the cached index is damaged; rebuilding it", { file })
          index = undefined
          return undefined
        }
      }
      return index.snapshot
    }

    function keepIndex(fingerprint: string, snapshot: DiscoveryMatch.Snapshot | undefined) {
      index = snapshot ? { fingerprint, snapshot } : undefined
      schedule()
    }

    /** True when the file would hold something else than it does (counted, not compared: a prompt stays cheap). */
    function changed(): boolean {
      return (
        !kept ||
        !clean ||
        clean.generation !== cache.generation ||
        clean.files !== kept.files.length ||
        clean.listings !== kept.listings.length ||
        clean.fingerprint !== (index?.fingerprint ?? "")
      )
    }

    function schedule() {
      if (timer || !kept || !changed()) return
      const { promise, resolve } = Promise.withResolvers<void>()
      done = done.then(() => promise)
      timer = setTimeout(() => {
        timer = undefined
        try {
          write()
        } catch (error) {
          clean = undefined
          if (!warned) log.warn("discovery: could not write its cache file", { file, error: errorMessage(error) })
          warned = true
        }
        resolve()
      }, 0)
    }

    function write() {
      if (!kept || !changed()) return
      const generation = cache.generation
      const contents: DiscoveryCacheFile.Contents = {
        format: DiscoveryCacheFile.FORMAT,
        version: DiscoveryCacheFile.version(),
        markers: kept.markers,
        files: kept.files.flatMap((f): DiscoveryCacheFile.FileRecord[] => {
          const stamp = cache.stampOf(f)
          if (!stamp?.settled) return []
          const identity = [stamp.mtimeMs, stamp.ctimeMs, stamp.size, stamp.ino] as const
          const entry = cache.peek(f)
          if (entry) {
            const body = DiscoveryParse.body(entry.content)
            return [[f, identity, entry.content, body, entry.warning ?? "", ""]]
          }
          const failure = cache.peekFailure(f)
          return failure ? [[f, identity, null, "", "", failure.error]] : []
        }),
        listings: kept.listings.flatMap((key): DiscoveryCacheFile.ListingRecord[] => {
          const listing = cache.listing(key)
          return listing?.settled ? [[key, listing]] : []
        }),
        ...(index ? { index: index.record ?? DiscoveryCacheFile.pack(index.fingerprint, index.snapshot!) } : {}),
      }
      DiscoveryCacheFile.write(file, contents)
      // The files of scopes gone (a policy edited since) are not kept for good.
      if (base && base !== file) LocalState.pruneScoped(base, file)
      clean = {
        generation,
        files: kept.files.length,
        listings: kept.listings.length,
        fingerprint: index?.fingerprint ?? "",
      }
    }

    async function flush() {
      let current: Promise<void>
      do {
        current = done
        await current
      } while (current !== done)
    }

    return { load, keep, index: indexFor, keepIndex, flush }
  }

  /**
   * What names the ranking documents of a catalogue across processes: each item's file and identity (its content, as
   * the cache knows it) and each resource's matched fields, in order; undefined when an item's file had not settled
   * when read (its identity may not tell its content apart yet), so no index of it is kept on disk.
   */
  function fingerprint(cat: Pick<Catalogue, "items" | "resources">, cache: DiscoveryCache): string | undefined {
    const hash = crypto.createHash("sha256")
    for (const item of cat.items) {
      if (DiscoverySettings.isDefined(item)) {
        hash.update(JSON.stringify([item, DiscoveryParse.body(item)])).update("\n")
        continue
      }
      const stamp = cache.stampOf(item.filePath)
      if (!stamp?.settled || cache.peek(item.filePath)?.content !== item) return undefined
      hash.update(`${item.filePath}\u0000${stamp.mtimeMs}:${stamp.ctimeMs}:${stamp.size}:${stamp.ino}\n`)
    }
    for (const r of cat.resources)
      hash.update(JSON.stringify([r.id, r.name, r.description ?? "", r.tags ?? []])).update("\n")
    return hash.digest("hex")
  }

  const itemDocs = new WeakMap<Discovery.DiscoveredItem, DiscoveryMatch.Doc>()

  /**
   * The ranking documents of a catalogue: its items, then its resources (an id such as "task/ship-release" names a
   * resource as much as its title does, so it is matched like the name). Hit indexes refer to this order.
   *
   * @example
   * const index = DiscoveryMatch.index(DynamicDiscovery.documents(await engine.catalogue()))
   */
  export function documents(cat: Pick<Catalogue, "items" | "resources">): DiscoveryMatch.Doc[] {
    return [
      ...cat.items.map((i) => {
        // One document per item object (items come from the parse cache): the matcher keeps each document's words,
        // so an index rebuilt after one edit tokenizes one document.
        let doc = itemDocs.get(i)
        if (!doc) {
          doc = {
            ...i,
            body: DiscoveryParse.body(i),
            explicitKeywords: i.keywordSource === undefined || i.keywordSource === "explicit",
            group: i.resourceType,
          }
          itemDocs.set(i, doc)
        }
        return doc
      }),
      ...cat.resources.map((r) => ({
        name: resourceName(r),
        keywords: Keywords.extract({ name: r.name, description: r.description ?? "", explicit: r.tags }).keywords,
        explicitKeywords: (r.tags?.length ?? 0) > 0,
        group: "resource",
        description: r.description ?? "",
      })),
    ]
  }

  /**
   * A resource's name for matching: its title, then the words of its id the title lacks ("Ship a release" and
   * "task/ship-release" give "Ship a release task"). A word both spell is one name word, counted once: counted twice, a
   * resource outranked an agent or skill whose name holds the same word once.
   */
  function resourceName(r: { name: string; id: string }): string {
    const words = (text: string) => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean)
    const seen = new Set(words(r.name).map((w) => w.toLowerCase()))
    const extra = words(r.id).filter((w) => !seen.has(w.toLowerCase()) && (seen.add(w.toLowerCase()), true))
    return [r.name, ...extra].join(" ")
  }

  /**
   * One-shot discovery for `prompt` (the spec's `gatherDynamicContext`): a fresh engine, so nothing is cached between
   * calls. Hosts that discover on every prompt keep an engine from `create` instead.
   *
   * @example
   * const result = await DynamicDiscovery.gatherDynamicContext("write release notes", { directory: process.cwd() })
   */
  export function gatherDynamicContext(prompt: string, init: Init): Promise<Discovery.DynamicDiscoveryResult> {
    return create(init).gather(prompt)
  }
}
