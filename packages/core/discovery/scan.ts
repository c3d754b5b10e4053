import { statSync, type Stats } from "fs"
import fs from "fs/promises"
import path from "path"
import { ResourceAccess } from "../resource/access"
import { errorMessage } from "../util/error"
import { DiscoveryCache, DiscoveryCacheFile } from "./cache"
import type { DiscoveryDirectories } from "./directories"
import { DiscoveryLocate } from "./locate"
import { DiscoveryParse } from "./parse"
import { Discovery } from "./schema"

/**
 * Scans resource directories for definitions, all directories in parallel, within one time budget.
 *
 * - Agents, commands and output styles are `**\/*.md` (nested folders give names like `git/commit`, as OpenCode
 *   names them); skills are `**\/SKILL.md` at any depth, as OpenCode's skill glob finds them (`DiscoveryLocate`), each
 *   named by its frontmatter `name`; the same walk finds both, within `MAX_DEPTH` (deeper folders are reported).
 * - Every entry is stat'ed before use and only regular files are read (FIFOs, sockets and devices are skipped, never
 *   opened); symbolic links are followed, link loops are detected. Dot entries are found where OpenCode's globs find
 *   them (its own agent and command folders, dot folders below Claude Code's skill folders) and skipped elsewhere;
 *   `.git` never. A `node_modules` below a skill folder is reported, not searched.
 * - Only the first `MAX_READ_BYTES` of a file are read: the frontmatter is all discovery needs.
 * - A folder's listing is remembered with the modification time of every folder it visited: while none changed (an
 *   added, removed or renamed entry changes its folder's time), the next scan stats those folders and the listed
 *   files instead of listing again. Listings that met a symbolic link or a problem are not remembered.
 * - A missing directory is not an error. A directory that cannot be read, or that is not a directory, is reported as
 *   `error` on its `ScanResult`; a file that cannot be read or parsed is listed in `problems`. Neither fails the scan.
 * - When the time budget runs out, the directories still being scanned return what they found so far with
 *   `timedOut: true` and stop at their next file.
 * - With a security gate (`access`), a file the policy protects — or, for a skill, its folder — is never read (and
 *   dropped from the cache when it was read before); a protected directory is treated as missing, and problems about
 *   protected paths are not reported: nothing of a protected definition, not even that it exists, leaves the scan.
 *   Verdicts are keyed by path and the file's device and inode, so a file replaced behind a link is asked again.
 *   A definition whose frontmatter lies (partly) in a protected segment (`segments`) is skipped the same way.
 *
 * @example
 * const results = await DiscoveryScan.all(DiscoveryDirectories.resolve({ directory: "/repo" }), {
 *   cache: new DiscoveryCache(),
 *   timeoutMs: Discovery.SCAN_TIMEOUT_MS,
 * })
 */
export namespace DiscoveryScan {
  /** Bytes read from each file (frontmatter and a little more). */
  export const MAX_READ_BYTES = 64 * 1024
  /** Folder nesting followed below a resource directory. */
  export const MAX_DEPTH = 6
  /** Files handled at once per directory. */
  const CONCURRENCY = 16
  /** Files of a known listing handled between two turns of the event loop. */
  const YIELD_EVERY = 128

  export type Options = {
    cache: DiscoveryCache
    /** Budget for the whole scan in milliseconds. */
    timeoutMs: number
    /** The host's security check; protected definitions are skipped unread. */
    access?: ResourceAccess.Gate
    /**
     * Marker pairs of protected segments: a definition whose frontmatter a segment covers is skipped like a protected
     * file. The cache holds no verdict about them: a caller whose pairs change clears it.
     */
    segments?: readonly ResourceAccess.Pair[]
    /** Filled with what this scan used from the cache or added to it (what a cache on disk may keep). */
    ledger?: Ledger
  }

  /** The cache entries a scan relied on: the files it found (hits and new entries) and the folder listings it used. */
  export type Ledger = {
    /** Files whose cache entry or remembered failure is current after the scan. */
    files: Set<string>
    /** Listings used or made by the scan, all of whose files are visible (none protected). */
    listings: Set<string>
  }

  type Candidate = { path: string; fallbackName: string }

  type Progress = {
    items: Discovery.DiscoveredItem[]
    problems: Discovery.FileProblem[]
    cacheHits: number
    parsed: number
    exists: boolean
    stopped: boolean
    /** Files left out because the security gate protects them. */
    hidden: number
  }

  /**
   * Scans every place in parallel; results are in the order of `places`.
   *
   * @example
   * const [agents] = await DiscoveryScan.all([place], { cache, timeoutMs: 2000 })
   */
  export async function all(
    places: readonly DiscoveryDirectories.Place[],
    options: Options,
  ): Promise<Discovery.ScanResult[]> {
    const progress = places.map((): Progress => ({
      items: [],
      problems: [],
      cacheHits: 0,
      parsed: 0,
      exists: false,
      stopped: false,
      hidden: 0,
    }))
    // Every file of this scan must fit in the cache: an LRU smaller than the set a scan cycles through evicts each
    // entry before its next use. Raised as each directory's files are listed, before any is cached.
    let listed = 0
    const reserve = (n: number) => {
      listed += n
      options.cache.ensureCapacity(listed + Discovery.MAX_CACHE_SIZE)
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    const expired = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), options.timeoutMs)
    })
    try {
      return await Promise.all(
        places.map(async (place, i) => {
          const p = progress[i]
          const outcome = await Promise.race([scanOne(place, p, options, reserve), expired])
          if (outcome === "timeout") {
            p.stopped = true
            // Problems not yet checked against the security gate are not reported.
            if (options.access?.active()) p.problems = []
            return result(place, p, true)
          }
          return result(place, p, false, outcome.error)
        }),
      )
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Scans one place with its own time budget.
   *
   * @example
   * (await DiscoveryScan.directory(place, { cache, timeoutMs: 2000 })).items.map((i) => i.name)
   */
  export async function directory(place: DiscoveryDirectories.Place, options: Options): Promise<Discovery.ScanResult> {
    const [one] = await all([place], options)
    return one
  }

  function result(place: DiscoveryDirectories.Place, p: Progress, timedOut: boolean, error?: string) {
    const scan: Discovery.ScanResult = {
      directory: { ...place, exists: p.exists },
      items: [...p.items],
      timedOut,
      // Files are handled concurrently; sorted, the report is the same on every run.
      problems: [...p.problems].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      cacheHits: p.cacheHits,
      parsed: p.parsed,
      ...(error !== undefined ? { error } : {}),
    }
    return scan
  }

  async function scanOne(
    place: DiscoveryDirectories.Place,
    p: Progress,
    options: Options,
    reserve: (files: number) => void,
  ): Promise<{ error?: string }> {
    const { cache, access } = options
    let stat
    try {
      stat = await fs.stat(place.path)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === "ENOENT") return {}
      if (access && (await access.reason(place.path))) return {}
      return { error: `${place.path}: ${describe(error)}` }
    }
    if (access && (await access.reason(place.path, identity(stat)))) return {}
    if (!stat.isDirectory()) return { error: `${place.path}: not a directory` }
    p.exists = true
    const outcome = await listAndLoad(place, p, options, reserve)
    if (access && p.problems.length) {
      const denied = await access.denied(p.problems.map((x) => ({ path: x.path })))
      if (denied.size) p.problems = p.problems.filter((x) => !denied.has(x.path))
    }
    return outcome
  }

  async function listAndLoad(
    place: DiscoveryDirectories.Place,
    p: Progress,
    options: Options,
    reserve: (files: number) => void,
  ): Promise<{ error?: string }> {
    const key = `${place.type}\u0000${place.path}`
    let candidates = listed(options.cache.listing(key))
    // Files of a listing still valid (its folders just stat'ed) are stat'ed synchronously: an asynchronous stat costs
    // ten times as much, and almost every file of a known listing is a cache hit that needs nothing else.
    const known = candidates !== undefined
    let remembered = known
    if (!candidates) {
      const seen: Seen = { stamps: [], links: false }
      const problems = p.problems.length
      const listedAt = Date.now()
      try {
        const rule = place.type === "skill" ? skillRule(place.origin) : markdownRule(place.origin)
        candidates = await definitionFiles(place.path, rule, p, seen)
      } catch (error) {
        return { error: `${place.path}: ${describe(error)}` }
      }
      candidates.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      if (!seen.links && p.problems.length === problems && !p.stopped) {
        const settled = seen.stamps.every(([, mtime]) => mtime < listedAt - DiscoveryCacheFile.RACY_MS)
        options.cache.setListing(key, { stamps: seen.stamps, files: candidates, settled })
        remembered = true
      }
    }
    reserve(candidates.length)
    const found: (Discovery.DiscoveredItem | undefined)[] = new Array(candidates.length)
    let next = 0
    const worker = async () => {
      while (next < candidates.length && !p.stopped) {
        const index = next++
        // Let the scan's timer run now and then, so a slow folder still stops within the budget.
        if (known && index % YIELD_EVERY === YIELD_EVERY - 1) await new Promise((resolve) => setImmediate(resolve))
        // The usual file of a known listing, without a security check to wait for: a cache hit, found synchronously.
        const quick = known && !options.access?.active() ? hit(candidates[index], p, options) : undefined
        found[index] =
          quick === undefined ? await load(candidates[index], place, p, options, known) : quick || undefined
        // Keep what is found so far, in order, for a scan that runs out of time.
        if (found[index]) p.items.push(found[index]!)
      }
    }
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, candidates.length) }, worker))
    p.items = found.filter((x): x is Discovery.DiscoveredItem => x !== undefined)
    // A listing naming a protected file or folder is not handed on (to a cache on disk): not even a name leaves the scan.
    const listing = remembered && p.hidden === 0 && options.ledger ? options.cache.listing(key) : undefined
    if (listing) {
      const access = options.access
      const hidden = access?.active() ? await access.denied(listing.stamps.map(([dir]) => ({ path: dir }))) : undefined
      if (!hidden?.size) options.ledger!.listings.add(key)
    }
    return {}
  }

  /** What a listing saw: the folders it read with their modification time (taken before reading), and any link. */
  type Seen = { stamps: (readonly [string, number])[]; links: boolean }

  /**
   * The files of a remembered listing while every folder it read keeps its modification time, else undefined. The
   * folders are stat'ed synchronously, stopping at the first that changed: the place itself was just stat'ed
   * asynchronously, so the filesystem answers, and a listing's folders are many (one per skill). A listing taken
   * while a folder's time was recent is never reused: a file added in the same clock tick as the listing (the kernel
   * stamps folders with a coarse clock) leaves the folder's time as it was, and would never be found.
   */
  function listed(listing: DiscoveryCache.Listing | undefined): Candidate[] | undefined {
    if (!listing?.settled) return undefined
    for (const [dir, mtime] of listing.stamps) {
      let now
      try {
        now = statSync(dir, { throwIfNoEntry: false })?.mtimeMs
      } catch {
        return undefined
      }
      if (now !== mtime) return undefined
    }
    return [...listing.files]
  }

  async function stamp(dir: string, seen: Seen) {
    seen.stamps.push([dir, (await fs.stat(dir)).mtimeMs])
  }

  /** What a walk below a resource directory collects. */
  type Rule = {
    /** Which file names are definitions. */
    leaf: (name: string) => boolean
    /** The name a definition without a frontmatter `name` gets, from its path below the directory (`/`-separated). */
    fallback: (rel: string) => string
    /** Dot folders are entered (other than `.git`). */
    dots: boolean
    /** Folders not entered, each reported with the reason. */
    skip?: ReadonlyMap<string, string>
  }

  /**
   * Agents, commands and output styles: every `*.md` (case-insensitive extension), named by its path. OpenCode's own
   * agent and command globs include dot files and dot folders (`.opencode/command/.drafts/x.md` is its command
   * `.drafts/x`: 1.2.15, 1.18.3 and 1.18.33, `opencode debug config`), so they are found in its folders too; Claude
   * Code's folders keep them out.
   */
  function markdownRule(origin: Discovery.Origin): Rule {
    return {
      leaf: (name) => name.toLowerCase().endsWith(".md"),
      fallback: (rel) => rel.slice(0, -3),
      dots: origin === "opencode",
    }
  }

  /**
   * Skills, as OpenCode's glob finds them (`DiscoveryLocate`): `**\/SKILL.md` at any depth, also the directory's own
   * SKILL.md. OpenCode enters dot folders below `.claude/skills` (not below its own config folders) and node_modules;
   * discovery enters the dot folders too, but reports a node_modules folder as not searched (installed packages are no
   * place to walk on every prompt).
   */
  function skillRule(origin: Discovery.Origin): Rule {
    return {
      leaf: (name) => DiscoveryLocate.isSkillFile(name),
      fallback: (rel) => path.posix.basename(path.posix.dirname(rel)),
      dots: origin === "claude",
      skip: NOT_SEARCHED,
    }
  }

  const NOT_SEARCHED: ReadonlyMap<string, string> = new Map([
    ["node_modules", "installed packages are not searched for skills (OpenCode loads any SKILL.md below them)"],
  ])

  /** Every definition file below `root` that `rule` matches, following links, without loops. */
  async function definitionFiles(root: string, rule: Rule, p: Progress, seen: Seen): Promise<Candidate[]> {
    const out: Candidate[] = []
    const visited = new Set<string>()
    const walk = async (dir: string, depth: number) => {
      const real = await fs.realpath(dir)
      if (visited.has(real)) {
        p.problems.push({ path: dir, error: "symbolic link loop; not followed" })
        return
      }
      visited.add(real)
      await stamp(dir, seen)
      for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
        if (p.stopped) return
        const name = entry.name
        const dot = name.startsWith(".")
        if (dot && !rule.dots) continue
        if (entry.isSymbolicLink()) seen.links = true
        const full = path.join(dir, name)
        const kind = await kindOf(full, entry)
        if (kind === "dir") {
          // A repository's own data: never a definition, and many files.
          if (name === ".git") continue
          const skipped = rule.skip?.get(name)
          if (skipped) {
            p.problems.push({ path: full, error: skipped })
            continue
          }
          if (depth >= MAX_DEPTH) {
            p.problems.push({ path: full, error: `nested deeper than ${MAX_DEPTH} folders; not scanned` })
            continue
          }
          try {
            await walk(full, depth + 1)
          } catch (error) {
            p.problems.push({ path: full, error: describe(error) })
          }
          continue
        }
        if (!rule.leaf(name)) continue
        if (kind === "file") {
          const rel = path.relative(root, full).split(path.sep).join("/")
          out.push({ path: full, fallbackName: rule.fallback(rel) })
        } else if (kind === "other") p.problems.push({ path: full, error: "not a regular file; skipped" })
        else if (kind === "broken") p.problems.push({ path: full, error: "broken symbolic link" })
      }
    }
    await walk(root, 0)
    return out
  }

  /** What `file` is; the directory entry, when given, spares a stat unless it is a symbolic link. */
  async function kindOf(
    file: string,
    entry?: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean },
  ): Promise<"file" | "dir" | "other" | "broken" | "missing"> {
    if (entry && !entry.isSymbolicLink()) return entry.isFile() ? "file" : entry.isDirectory() ? "dir" : "other"
    try {
      const s = await fs.stat(file)
      return s.isFile() ? "file" : s.isDirectory() ? "dir" : "other"
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === "ENOENT") {
        // A dangling link is reported; a plain missing file (e.g. a skill folder without SKILL.md) is not.
        const link = await fs.lstat(file).catch(() => undefined)
        return link?.isSymbolicLink() ? "broken" : "missing"
      }
      return code === "ELOOP" ? "broken" : "other"
    }
  }

  /** `dev:ino` of a stat: what a path leads to, for the security gate's verdicts. */
  function identity(stat: { dev: number; ino: number }): string {
    return `${stat.dev}:${stat.ino}`
  }

  /** True when the gate protects the file or, for a skill, its folder (both asked at once). */
  async function guarded(
    access: ResourceAccess.Gate,
    candidate: Candidate,
    type: Discovery.ResourceType,
    key: string,
  ): Promise<boolean> {
    const asks = [access.reason(candidate.path, key)]
    if (type === "skill") asks.push(access.reason(path.dirname(candidate.path), key))
    return (await Promise.all(asks)).some((reason) => reason !== undefined)
  }

  /**
   * The cached item of `candidate` (or `false` for a remembered failure, reported) when its stat shows it unchanged;
   * undefined for anything else (a miss, a stat error, not a regular file), which `load` then handles in full.
   */
  function hit(candidate: Candidate, p: Progress, options: Options): Discovery.DiscoveredItem | false | undefined {
    const { cache, ledger } = options
    const statAt = Date.now()
    let stat
    try {
      stat = statSync(candidate.path, { throwIfNoEntry: false })
    } catch {
      return undefined
    }
    if (!stat?.isFile()) return undefined
    return remembered(candidate, stat, statAt, p, options)
  }

  /**
   * What the parse cache remembers of a file with this `stat`: its item, `false` for a parse failure (reported again
   * from memory: a file that failed is not read again until it changes), `undefined` when it must be read.
   */
  function remembered(
    candidate: Candidate,
    stat: Stats,
    statAt: number,
    p: Progress,
    { cache, ledger }: Options,
  ): Discovery.DiscoveredItem | false | undefined {
    const stamp = DiscoveryCache.stamp(stat, statAt)
    const cached = cache.get(candidate.path, stat.mtimeMs, stamp)
    if (cached) {
      ledger?.files.add(candidate.path)
      p.cacheHits++
      const warning = cache.peek(candidate.path)?.warning
      if (warning) p.problems.push({ path: candidate.path, error: warning, severity: "warning" })
      return cached
    }
    const failed = cache.failure(candidate.path, stat.mtimeMs, stamp)
    if (failed === undefined) return undefined
    ledger?.files.add(candidate.path)
    p.cacheHits++
    p.problems.push({ path: candidate.path, error: failed })
    return false
  }

  async function load(
    candidate: Candidate,
    place: DiscoveryDirectories.Place,
    p: Progress,
    options: Options,
    sync: boolean,
  ): Promise<Discovery.DiscoveredItem | undefined> {
    const { cache, access, ledger } = options
    let handle: fs.FileHandle | undefined
    try {
      const statAt = Date.now()
      const stat = sync ? statSync(candidate.path) : await fs.stat(candidate.path)
      if (access?.active() && (await guarded(access, candidate, place.type, identity(stat)))) {
        cache.invalidate(candidate.path)
        p.hidden++
        return undefined
      }
      // Checked again right before opening: a FIFO or device put in place of a file is never opened.
      if (!stat.isFile()) {
        p.problems.push({ path: candidate.path, error: "not a regular file; skipped" })
        return undefined
      }
      const known = remembered(candidate, stat, statAt, p, options)
      if (known !== undefined) return known || undefined
      const stamp = DiscoveryCache.stamp(stat, statAt)
      let bytes: Buffer
      if (stat.size <= MAX_READ_BYTES) {
        // The usual case: one read call. A file that grew since the stat is cut to the limit all the same.
        bytes = await fs.readFile(candidate.path)
        if (bytes.length > MAX_READ_BYTES) bytes = bytes.subarray(0, MAX_READ_BYTES)
      } else {
        handle = await fs.open(candidate.path, "r")
        const buffer = Buffer.alloc(MAX_READ_BYTES)
        let read = 0
        while (read < MAX_READ_BYTES) {
          const { bytesRead } = await handle.read(buffer, read, MAX_READ_BYTES - read, read)
          if (bytesRead === 0) break
          read += bytesRead
        }
        bytes = buffer.subarray(0, read)
      }
      const text = decode(bytes, stat.size > MAX_READ_BYTES || bytes.length === MAX_READ_BYTES)
      if (text === undefined) {
        p.problems.push({ path: candidate.path, error: "not UTF-8 text" })
        cache.fail(candidate.path, stat.mtimeMs, "not UTF-8 text", stamp)
        ledger?.files.add(candidate.path)
        return undefined
      }
      if (options.segments?.length && ResourceAccess.headProtected(text, options.segments)) {
        p.hidden++
        return undefined
      }
      const parsed = DiscoveryParse.parse({
        // The body is matched too (never shown): what a protected segment holds must not move a score.
        text: options.segments?.length ? ResourceAccess.blank(text, options.segments) : text,
        filePath: candidate.path,
        fallbackName: candidate.fallbackName,
        type: place.type,
        source: place.scope,
        origin: place.origin,
      })
      p.parsed++
      if (!parsed.success || !parsed.item) {
        const error = parsed.error ?? "could not be parsed"
        p.problems.push({ path: candidate.path, error })
        cache.fail(candidate.path, stat.mtimeMs, error, stamp)
        ledger?.files.add(candidate.path)
        return undefined
      }
      if (parsed.warning) p.problems.push({ path: candidate.path, error: parsed.warning, severity: "warning" })
      cache.set(candidate.path, parsed.item, stat.mtimeMs, parsed.warning, stamp)
      ledger?.files.add(candidate.path)
      return parsed.item
    } catch (error) {
      p.problems.push({ path: candidate.path, error: describe(error) })
      return undefined
    } finally {
      await handle?.close().catch(() => {})
    }
  }

  const utf8 = new TextDecoder("utf-8", { fatal: true })

  /** UTF-8 text, or undefined when it is not; a multi-byte character cut by the read limit is dropped. */
  function decode(bytes: Buffer, truncated: boolean): string | undefined {
    let end = bytes.length
    if (truncated) {
      // Step back over a partial trailing UTF-8 sequence.
      let i = end - 1
      while (i >= 0 && i > end - 4 && (bytes[i] & 0xc0) === 0x80) i--
      const need = i < 0 ? 0 : bytes[i] >= 0xf0 ? 4 : bytes[i] >= 0xe0 ? 3 : bytes[i] >= 0xc0 ? 2 : 1
      if (end - i < need) end = i
    }
    try {
      return utf8.decode(bytes.subarray(0, end))
    } catch {
      return undefined
    }
  }

  function describe(error: unknown): string {
    const code = (error as NodeJS.ErrnoException)?.code
    if (code === "EACCES" || code === "EPERM") return "permission denied"
    if (code === "ELOOP") return "symbolic link loop"
    if (code === "ENOTDIR") return "not a directory"
    return errorMessage(error)
  }
}
