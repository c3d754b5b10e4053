import { distance } from "fastest-levenshtein"
import path from "path"
import type { Host } from "../host"
import { LocalState } from "../learning/local"
import { errorMessage } from "../util/error"
import { ResourceAccess } from "./access"
import { ResourceBuild } from "./build"
import { ResourceCache } from "./cache"
import { ResourceError } from "./errors"
import { formatBytes } from "./format"
import { ResourceIndex } from "./indexer"
import { ResourceOutput } from "./output"
import { ResourceParse } from "./parse"
import { ResourceProject } from "./project"
import { ResourceQuery } from "./query"
import { ResourceScan } from "./scan"
import { ResourceFetch } from "./fetch"
import { Resource } from "./schema"
import { SessionView } from "./session"

/**
 * The resource loader of one project: the lazily built, cached and revalidated index, and the operations behind the
 * four tools. Sessions are derived from their history (`Host.messages`); the loader itself only remembers what this
 * process did that the stored history may not show yet, and forgets sessions idle for 24 hours.
 *
 * With a security check (`Host.access`, read at call time), files the policy protects are kept out of the index
 * (see `ResourceBuild`): queries, loads, reference expansion, the loaded list and the cache on disk never show them.
 * The verdicts are checked again before each use of the index — at once while `Host.accessVersion` is unchanged,
 * else by asking the check about every indexed file — and a change rebuilds the index.
 *
 * @example
 * const loader = ResourceLoader.create({ directory: "/repo", worktree: "/repo", log: Logger.silent })
 * const found = await loader.query({ query: "git" })
 * const text = await loader.load({ id: found.results[0].id }, { sessionID: "ses_1", messageID: "msg_1" })
 */
export namespace ResourceLoader {
  export type Context = { sessionID: string; messageID: string; callID?: string }

  export type Stats = {
    indexBuilds: number
    totalQueries: number
    totalLoads: number
    totalReleases: number
    cacheHits: number
    cacheMisses: number
    lastBuild?: ResourceBuild.Stats & { ms: number }
  }

  export const SESSION_MAX_IDLE_MS = 24 * 60 * 60 * 1000
  const CLEANUP_EVERY_MS = 60 * 60 * 1000

  export type Loader = ReturnType<typeof create>

  export function create(host: Host, input: Resource.ConfigInput = {}) {
    const config = Resource.Config.parse(input)
    const project = ResourceProject.resolve(host.directory, host.worktree)
    const cacheBase = config.indexCachePath
      ? path.resolve(project.root, config.indexCachePath)
      : ResourceCache.defaultPath(project.root)
    /**
     * The cache file of the security scope in force now (`Host.accessScope`, read at call time: the security layer
     * installs it late, and a policy edit changes it): one file per role and policy, so an index built for one role
     * never reaches a process of another.
     */
    const cachePath = () => LocalState.scoped(cacheBase, host.accessScope?.())
    const log = host.log
    const stats: Stats = {
      indexBuilds: 0,
      totalQueries: 0,
      totalLoads: 0,
      totalReleases: 0,
      cacheHits: 0,
      cacheMisses: 0,
    }

    let current: ResourceIndex.Index | undefined
    let cacheData: ResourceCache.Data | undefined
    let building: Promise<ResourceIndex.Index> | undefined
    let dirty = false
    /** Set when a restored index met a cache entry that does not fit: the next build rewrites the cache file. */
    let damagedCache = false
    let pendingWrite: Promise<void> = Promise.resolve()
    /** The cache file `cacheData` was read from or is written to (that of the scope of the last build). */
    let cacheFile: string | undefined
    let dirs = new Map<string, number | null>()
    const gate = ResourceAccess.gate(() => host)
    /** The access verdicts the current index was built with, and the `accessVersion` they were last confirmed at. */
    let verified: (ResourceBuild.Verification & { version?: number; segments: string }) | undefined

    type SessionState = {
      createdAt: number
      lastActivity: number
      pending: SessionView.Pending[]
      /** Tail of the session's operation chain: loads and releases of one session run one at a time. */
      queue: Promise<unknown>
    }
    const sessions = new Map<string, SessionState>()
    const cleanup = setInterval(() => sweep(Date.now()), CLEANUP_EVERY_MS)
    cleanup.unref?.()

    function sweep(now: number) {
      for (const [id, s] of sessions) if (now - s.lastActivity > SESSION_MAX_IDLE_MS) sessions.delete(id)
    }

    function session(sessionID: string): SessionState {
      let s = sessions.get(sessionID)
      if (!s)
        sessions.set(
          sessionID,
          (s = { createdAt: Date.now(), lastActivity: Date.now(), pending: [], queue: Promise.resolve() }),
        )
      s.lastActivity = Date.now()
      return s
    }

    // ---- index ---------------------------------------------------------------------------------------------

    /** The background check of a restored index's files (see `rebuild`); dispose waits for it. */
    let checking: Promise<void> = Promise.resolve()

    async function rebuild(): Promise<ResourceIndex.Index> {
      const started = performance.now()
      dirty = false
      const file = cachePath()
      // Another scope than the last build's (a policy created, edited or removed): the build starts from that scope's
      // own file, or from nothing, never from what was parsed under the other one.
      const switched = cacheFile !== undefined && cacheFile !== file
      cacheFile = file
      let previous = switched ? undefined : cacheData
      let hadDisk = previous !== undefined
      const fromDisk = !previous && config.persistCache
      if (fromDisk) {
        previous = await ResourceCache.read(file, project.root)
        hadDisk = previous !== undefined
      }
      const version = host.accessVersion?.()
      const segments = ResourceAccess.pairs(host)
      // A start with a persisted cache whose folders kept their stamps needs no scan; files edited in place (their
      // folder keeps its stamp) are looked for right after, in the background, and a change rebuilds at the next use.
      const restored =
        fromDisk && !config.autoRebuildIndex
          ? await ResourceBuild.restore(project, previous, gate, segments).catch(() => undefined)
          : undefined
      const out = restored ?? (await ResourceBuild.run(project, config, previous, gate, segments))
      current = out.index
      cacheData = out.cache
      dirs = out.dirs
      verified = { ...out.access, version, segments: ResourceAccess.pairsKey(segments) }
      stats.indexBuilds++
      stats.lastBuild = { ...out.stats, ms: performance.now() - started }
      if (restored) {
        const data = restored.cache
        // Started after this build's callers have their answer (a macrotask later): reading the stamps and the first
        // slice of stats took 5–20 ms at 10k files, paid by the first answer though it decides nothing for it.
        checking = new Promise<void>((resolve) => setImmediate(resolve))
          .then(() => (cacheData === data ? ResourceBuild.filesChanged(data) : false))
          .then(
            (changed) => {
              if (changed && cacheData === data) dirty = true
            },
            () => {
              if (cacheData === data) dirty = true
            },
          )
      }
      const stampsOutdated = fromDisk && !restored && ResourceBuild.stampsOutdated(previous, out.cache)
      const rewrite = damagedCache
      damagedCache = false
      if (
        config.persistCache &&
        (!hadDisk || out.stats.parsed > 0 || out.stats.removed > 0 || stampsOutdated || rewrite)
      ) {
        pendingWrite = pendingWrite
          .then(async () => {
            await ResourceCache.write(file, out.cache)
            if (file !== cacheBase) LocalState.pruneScoped(cacheBase, file)
          })
          .catch((error) =>
            log.warn("could not write the resource index cache", { path: file, error: errorMessage(error) }),
          )
      }
      return out.index
    }

    /**
     * The index: built on first use and shared by concurrent callers. Before each use the scanned folders' mtimes
     * are checked (a few stats): an added, removed or renamed file, or a `file.edited` event, triggers a rebuild
     * that re-reads only changed files. With `autoRebuildIndex`, every use revalidates every file's mtime.
     */
    async function index(): Promise<ResourceIndex.Index> {
      if (current && ResourceIndex.damaged(current) && !building) {
        // A restored index whose cache held an entry that does not fit: built again (from the cache's parse results,
        // or the files), and the cache file rewritten.
        damagedCache = true
        dirty = true
      }
      if (current && !dirty && !config.autoRebuildIndex && !building) {
        if (!(await ResourceScan.changed(dirs)) && (await accessHolds())) {
          stats.cacheHits++
          return current
        }
        dirty = true
      }
      if (building) return building
      stats.cacheMisses++
      const run = rebuild().finally(() => {
        if (building === run) building = undefined
      })
      building = run
      let timer: ReturnType<typeof setTimeout> | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new ResourceError.IndexBuildError({
                reason: `building took longer than ${config.indexBuildTimeout} ms (still running; try again shortly)`,
              }),
            ),
          config.indexBuildTimeout,
        )
        timer.unref?.()
      })
      try {
        return await Promise.race([run, timeout])
      } catch (error) {
        if (ResourceError.IndexBuildError.is(error)) throw error
        throw new ResourceError.IndexBuildError({ reason: errorMessage(error) }, { cause: error })
      } finally {
        clearTimeout(timer)
      }
    }

    /**
     * True when the index's access verdicts still hold: no check then and now, or the same `accessVersion`, or the
     * check gives the same answers for every file the build asked about (hosts without a version: every use).
     */
    async function accessHolds(): Promise<boolean> {
      const active = gate.active()
      if (!verified) return !active
      if (ResourceAccess.pairsKey(ResourceAccess.pairs(host)) !== verified.segments) return false
      if (active !== verified.active) return false
      if (!active) return true
      const version = host.accessVersion?.()
      if (version !== undefined && version === verified.version) return true
      const denied = await gate.denied(verified.entries)
      if (denied.size !== verified.denied.size) return false
      for (const [p, reason] of denied) if (verified.denied.get(p) !== reason) return false
      verified.version = version
      return true
    }

    /** True for paths whose change can alter the index (resource, agent and command files and folders). */
    function relevant(file: string): boolean {
      const abs = path.resolve(project.directory, file)
      return project.opencodeDirs.some((dir) => {
        const base = path.dirname(dir)
        return (
          ResourceProject.isInside(abs, dir) ||
          ResourceProject.isInside(abs, path.join(base, ".claude", "agents")) ||
          ResourceProject.isInside(abs, path.join(base, ".claude", "commands"))
        )
      })
    }

    /** Marks the index stale when `file` (absolute or project-relative) can affect it; without a path, always. */
    function invalidate(file?: string): boolean {
      if (file !== undefined && !relevant(file)) return false
      dirty = true
      return true
    }

    // ---- sessions --------------------------------------------------------------------------------------------

    async function view(sessionID: string): Promise<SessionView.View> {
      const state = session(sessionID)
      let messages: SessionView.Message[] = []
      if (host.messages) {
        try {
          messages = await host.messages(sessionID)
        } catch (error) {
          log.warn("could not read the session history; using this process's record only", {
            sessionID,
            error: errorMessage(error),
          })
        }
      }
      const derived = SessionView.derive(messages, config, state.pending)
      if (host.messages) state.pending = derived.unseen
      return derived
    }

    /**
     * Runs `fn` after the session's previous load or release has finished, so parallel tool calls of one step
     * (which the stored history cannot show each other yet) see each other's effects.
     */
    function serial<T>(sessionID: string, fn: () => Promise<T>): Promise<T> {
      const state = session(sessionID)
      const run = state.queue.then(fn, fn)
      state.queue = run.catch(() => {})
      return run
    }

    // ---- operations ------------------------------------------------------------------------------------------

    /**
     * `fn` again, once, when it failed on an entry of a restored index that does not fit (`ResourceIndex.DamagedError`):
     * that index is then rebuilt (`index`), so no answer comes from the damaged entry.
     */
    async function retrying<T>(fn: () => Promise<T>): Promise<T> {
      try {
        return await fn()
      } catch (error) {
        if (!(error instanceof ResourceIndex.DamagedError)) throw error
        return fn()
      }
    }

    function query(args: ResourceQuery.Args) {
      let counted = false
      return retrying(async () => {
        const idx = await index()
        if (!counted) stats.totalQueries++
        counted = true
        const result = ResourceQuery.run(idx, args)
        // Paths relative to the directory the client works in, as every other answer gives them.
        const results = result.results.map((r) => ({ ...r, path: ResourceProject.shown(project, r.path) }))
        return { ...result, results, warnings: summarizeWarnings(idx) }
      })
    }

    function summarizeWarnings(idx: ResourceIndex.Index) {
      if (idx.warnings.length === 0) return undefined
      return {
        count: idx.warnings.length,
        errors: idx.warnings.filter((w) => w.severity === "error").length,
        first: idx.warnings
          .slice(0, 5)
          .map((w) => `${ResourceProject.shown(project, w.path)}: ${ResourceProject.message(project, w)}`),
        hint: "Run `npx opencode-builtins resources lint` in the project for the full list.",
      }
    }

    function closest(idx: ResourceIndex.Index, id: string): string[] {
      const lower = id.toLowerCase()
      const scored: { id: string; d: number }[] = []
      for (const candidate of idx.resources.keys()) {
        const c = candidate.toLowerCase()
        const d = c.includes(lower) || lower.includes(c) ? 0.5 : distance(lower, c)
        if (d <= Math.max(2, Math.floor(lower.length / 3))) scored.push({ id: candidate, d })
      }
      return scored
        .sort((a, b) => a.d - b.d || (a.id < b.id ? -1 : 1))
        .slice(0, 5)
        .map((s) => s.id)
    }

    const readResource = (meta: Resource.Metadata) =>
      ResourceFetch.read(
        { ...meta, relativePath: ResourceProject.shown(project, meta.relativePath) },
        { ...config, root: project.root, access: host.access },
      )

    /**
     * `resource-load`: the resource (and, with `includeReferences`, what it references up to `maxReferencesDepth`,
     * breadth first, cycle-safe, each once) as text with the spec's header block; errors as JSON.
     */
    function load(args: { id: string; includeReferences?: boolean }, ctx: Context): Promise<string> {
      return serial(ctx.sessionID, () => retrying(() => loadNow(args, ctx)))
    }

    async function loadNow(args: { id: string; includeReferences?: boolean }, ctx: Context): Promise<string> {
      const id = args.id.trim()
      const includeReferences = args.includeReferences ?? config.autoLoadReferences
      const invalid = ResourceParse.invalidIdReason(id)
      if (invalid) return ResourceError.format(new ResourceError.InvalidId({ id, reason: invalid }))
      let idx: ResourceIndex.Index
      try {
        idx = await index()
      } catch (error) {
        return ResourceError.format(error as InstanceType<typeof ResourceError.IndexBuildError>)
      }
      const meta = idx.resources.get(id)
      const withheld = meta ? undefined : idx.withheld.get(id)
      if (withheld)
        return ResourceError.format(
          new ResourceError.AccessDenied({
            id,
            path: ResourceProject.shown(project, withheld.relativePath),
            reason: withheld.reason,
          }),
        )
      if (!meta)
        return ResourceError.format(
          new ResourceError.NotFound({ id, closest: closest(idx, id) }),
          "Use resource-query to find available resources.",
        )
      const state = session(ctx.sessionID)
      const v = await view(ctx.sessionID)
      const existing = v.current(id)
      const nonce = ResourceOutput.nonce()
      const finish = (output: string) => {
        if (ResourceOutput.header(output))
          state.pending.push({ kind: "load", nonce, output, at: Date.now(), messageID: ctx.messageID })
        return output
      }

      if (existing?.status === "active" && !includeReferences)
        return ResourceError.format(
          new ResourceError.AlreadyLoaded({
            id,
            loadedAt: new Date(existing.loadedAt).toISOString(),
            toolCallID: existing.callID,
          }),
          "Its content is already in this conversation; use it from there.",
        )

      const inContext = v.inContext()
      let count = inContext.length
      let bytes = inContext.reduce((sum, i) => sum + i.size, 0)
      const reactivated: string[] = []
      const notes: string[] = []
      const sections: ResourceOutput.Section[] = []

      // Breadth-first walk: the resource, then its references level by level. Only what is (or stays) in
      // context is expanded further, so a refused resource reveals nothing of what it references.
      const queue: { id: string; depth: number }[] = [{ id, depth: 0 }]
      const seen = new Set([id])
      const unresolved = new Set<string>()
      const alreadyActive: string[] = []
      for (let i = 0; i < queue.length; i++) {
        const node = queue[i]
        const m = idx.resources.get(node.id)!
        const prior = v.current(node.id)
        let expand = true
        if (prior?.status === "active") {
          if (node.depth > 0) alreadyActive.push(node.id)
        } else if (prior?.status === "flagged") reactivated.push(node.id)
        else {
          const read = await readResource(m)
          const over =
            read.ok &&
            (count + 1 > config.maxResourcesPerSession || bytes + read.meta.size > config.maxTotalSizePerSession)
          if (!read.ok || over) {
            const error = !read.ok
              ? read.error
              : new ResourceError.SessionLimitReached(
                  count + 1 > config.maxResourcesPerSession
                    ? { limit: `${config.maxResourcesPerSession} resources`, current: `${count} resources` }
                    : {
                        limit: formatBytes(config.maxTotalSizePerSession),
                        current: formatBytes(bytes),
                        requested: formatBytes(read.meta.size),
                      },
                )
            if (node.depth === 0) return ResourceError.format(error)
            notes.push(
              !ResourceError.SessionLimitReached.is(error)
                ? `Reference '${node.id}' not loaded: ${error.message}`
                : host.stateless
                  ? `Reference '${node.id}' not loaded: one answer's limit (${error.data.limit}) reached; load it with its own resource-load call.`
                  : `Reference '${node.id}' not loaded: session limit (${error.data.limit}) reached.`,
            )
            expand = false
          } else {
            count++
            bytes += read.meta.size
            const via = node.depth
              ? queue.filter((q) => idx.graph.forward.get(q.id)?.has(node.id)).map((q) => q.id)
              : []
            sections.push({ metadata: read.meta, content: read.content, referencedBy: via.length ? via : undefined })
          }
        }
        if (!expand || !includeReferences || node.depth >= config.maxReferencesDepth) continue
        for (const d of idx.dangling.get(node.id) ?? []) unresolved.add(d)
        for (const w of idx.withheldRefs.get(node.id) ?? []) notes.push(`Reference '${w.ref}' not loaded: ${w.reason}`)
        for (const w of idx.notIndexed.get(node.id) ?? []) notes.push(`Reference '${w.ref}' not loaded: ${w.reason}.`)
        for (const next of idx.graph.forward.get(node.id) ?? []) {
          if (seen.has(next)) continue
          seen.add(next)
          queue.push({ id: next, depth: node.depth + 1 })
        }
      }

      if (alreadyActive.length) notes.push(`Already loaded, content above: ${alreadyActive.join(", ")}.`)
      if (unresolved.size) notes.push(`Unresolved references (no such resource): ${[...unresolved].join(", ")}.`)
      if (sections.length === 0 && reactivated.length === 0) {
        return ResourceError.format(
          new ResourceError.AlreadyLoaded({
            id,
            loadedAt: new Date(existing?.loadedAt ?? Date.now()).toISOString(),
            toolCallID: existing?.callID,
          }),
          alreadyActive.length ? `Its references are loaded too: ${alreadyActive.join(", ")}.` : undefined,
        )
      }
      stats.totalLoads++
      return finish(
        ResourceOutput.render({
          nonce,
          id,
          refs: includeReferences,
          sections,
          reactivated,
          notes,
          releasable: !host.stateless,
        }),
      )
    }

    /** `resource-list-loaded`: every resource loaded in the visible history, with its lifecycle status. */
    async function listLoaded(ctx: Context) {
      const v = await view(ctx.sessionID)
      // The index as of now (a policy change since the last use rebuilds it first).
      const idx = await index().catch(() => current)
      // Resources the policy protects now are left out, loaded before or not.
      const shown = v.instances.filter((i) => !idx?.withheld.has(i.id))
      const latest = new Map<string, SessionView.Instance>()
      for (const i of shown) latest.set(i.id, i)
      const iso = (t?: number) => (t ? new Date(t).toISOString() : undefined)
      const loaded = [...latest.values()].map((i) => ({
        id: i.id,
        type: idx?.resources.get(i.id)?.type,
        name: idx?.resources.get(i.id)?.name ?? i.id,
        status: i.status,
        loadedAt: iso(i.loadedAt),
        loadedInMessage: i.messageID,
        toolCallID: i.callID,
        size: formatBytes(i.size),
        includeReferences: i.includeReferences,
        loadedVia: i.via,
        flaggedAt: iso(i.flaggedAt),
        releasedAt: iso(i.released?.at),
        prunedAt: iso(i.prunedAt),
      }))
      const inContext = v.inContext().filter((i) => !idx?.withheld.has(i.id))
      const state = session(ctx.sessionID)
      return {
        sessionID: ctx.sessionID,
        loaded,
        totalLoaded: shown.length,
        currentlyActive: inContext.length,
        totalSize: formatBytes(inContext.reduce((s, i) => s + i.size, 0)),
        limits: {
          maxResources: config.maxResourcesPerSession,
          maxTotalSize: formatBytes(config.maxTotalSizePerSession),
        },
        lastActivity: new Date(state.lastActivity).toISOString(),
        message: loaded.length ? undefined : "No resources loaded in this session",
      }
    }

    /** `resource-release`: the given ids, or every loaded resource except `keep`. */
    function release(args: { ids?: string[]; keep?: string[] }, ctx: Context) {
      return serial(ctx.sessionID, () => releaseNow(args, ctx))
    }

    async function releaseNow(args: { ids?: string[]; keep?: string[] }, ctx: Context) {
      const v = await view(ctx.sessionID)
      const live = new Set(v.inContext().map((i) => i.id))
      const keep = new Set((args.keep ?? []).map((k) => k.trim()))
      const wanted = args.ids?.length
        ? [...new Set(args.ids.map((i) => i.trim()))]
        : [...live].filter((id) => !keep.has(id))
      const released = wanted.filter((id) => live.has(id))
      const notFound = wanted.filter((id) => !live.has(id))
      const keptUnknown = [...keep].filter((id) => !live.has(id))
      if (released.length) {
        stats.totalReleases += released.length
        session(ctx.sessionID).pending.push({
          kind: "release",
          released,
          at: Date.now(),
          messageID: ctx.messageID,
          key: SessionView.releaseKey(ctx.messageID, released),
        })
      }
      return {
        message: released.length ? `Released ${released.length} resource(s)` : "No resources to release",
        released,
        notFound: notFound.length ? notFound : undefined,
        keepNotLoaded: keptUnknown.length ? keptUnknown : undefined,
        remaining: live.size - released.length,
        hint: released.length
          ? "Their content is removed from what the model is sent from the next request on; resource-load brings it back."
          : "Nothing to release: resource-list-loaded shows what is loaded.",
      }
    }

    /** The current content of a resource as `resource-load` shows it (body without frontmatter), or undefined. */
    async function contentOf(id: string): Promise<string | undefined> {
      const meta = (await index()).resources.get(id)
      if (!meta) return undefined
      const read = await readResource(meta)
      return read.ok ? read.content : undefined
    }

    /** Drops a session's process-local record (its history-derived state needs no cleanup). */
    function forget(sessionID: string) {
      sessions.delete(sessionID)
    }

    /** Stops the cleanup timer and waits for a pending cache write and file check. */
    async function dispose() {
      clearInterval(cleanup)
      await checking
      await pendingWrite
    }

    return {
      host,
      gate,
      config,
      project,
      cachePath,
      stats,
      index,
      invalidate,
      view,
      session,
      query,
      load,
      listLoaded,
      release,
      contentOf,
      forget,
      sweep,
      dispose,
      /** Resolves when the last cache write, and the background check of a restored index's files, have finished. */
      flush: () => Promise.all([checking, pendingWrite]).then(() => {}),
      sessions,
    }
  }
}
