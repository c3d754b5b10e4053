import { ResourceAccess } from "../resource/access"
import { errorMessage } from "../util/error"
import { Logger } from "../util/log"
import { DiscoveryCache } from "./cache"
import { DiscoveryDirectories } from "./directories"
import { Keywords } from "./keywords"
import { DiscoveryMatch } from "./match"
import { DiscoveryParse } from "./parse"
import { MemoryThink } from "./memory-think"
import { DiscoveryScan } from "./scan"
import { Discovery } from "./schema"

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
  }

  /** The security check of one call; `access: undefined` given explicitly means none, whatever `Init.host` says. */
  export type CallOptions = ResourceAccess.Source

  export type Catalogue = {
    /** Discovered items after precedence, in precedence order. */
    items: Discovery.DiscoveredItem[]
    resources: Discovery.ProjectResource[]
    scans: Discovery.ScanResult[]
    /** Items hidden by one of the same type and name with higher precedence. */
    shadowed: { item: Discovery.DiscoveredItem; by: string }[]
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

    /** Scans and collects everything discoverable right now (leaving out what the host's check protects). */
    async function catalogue(options: CallOptions = {}): Promise<Catalogue> {
      security = securityOf(options)
      const segments = ResourceAccess.pairs(security)
      if (ResourceAccess.pairsKey(segments) !== markers) {
        cache.clear()
        markers = ResourceAccess.pairsKey(segments)
      }
      const started = performance.now()
      const places = DiscoveryDirectories.resolve({ directory: init.directory, worktree: init.worktree, env: init.env })
      const [scans, provided] = await Promise.all([
        DiscoveryScan.all(places, { cache, timeoutMs: config.scanTimeoutMs, access, segments }),
        loadResources(),
      ])
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
          items.push(item)
        }
      }
      degraded.push(...provided.degraded)
      problems.push(...provided.problems)
      return {
        items,
        resources: provided.resources,
        scans,
        shadowed,
        degraded,
        problems,
        stats: {
          discovered: items.length,
          resources: provided.resources.length,
          directories: scans.filter((s) => s.directory.exists).length,
          cacheHits: scans.reduce((n, s) => n + s.cacheHits, 0),
          parsed: scans.reduce((n, s) => n + s.parsed, 0),
          durationMs: Math.round((performance.now() - started) * 100) / 100,
        },
      }
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

    /** The ranking index of a catalogue, reused while its items and resources are unchanged. */
    function indexOf(cat: Pick<Catalogue, "items" | "resources">): DiscoveryMatch.Index {
      const all: readonly unknown[] = [...cat.items, ...cat.resources]
      if (last && last.items.length === all.length && last.items.every((x, i) => x === all[i])) return last.index
      const index = DiscoveryMatch.index(documents(cat))
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

    return { config, cache, access, catalogue, match, gather }
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
