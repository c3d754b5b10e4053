import fs from "fs"
import { Discovery } from "./schema"

/**
 * LRU cache of parsed definitions, keyed by absolute file path and checked against the file's modification time:
 * a changed file is a miss (and its entry is dropped), so an edit is picked up on the next scan without re-reading
 * unchanged files.
 *
 * Capacity is `MAX_CACHE_SIZE` (50) unless given. A scan touches every file in the same order each time, and an LRU
 * smaller than the set it cycles through evicts every entry before its next use (no hit at all), so a scan raises
 * the capacity to the number of files it lists plus `MAX_CACHE_SIZE` (`ensureCapacity`) before caching any; the LRU
 * then only drops entries of files that disappeared.
 *
 * @example
 * const cache = new DiscoveryCache()
 * cache.set("/home/me/.claude/agents/a.md", item, stat.mtimeMs)
 * cache.get("/home/me/.claude/agents/a.md", stat.mtimeMs) // item, or null after the file changed
 */
export class DiscoveryCache {
  private readonly cache = new Map<string, Discovery.CacheEntry>()
  /** The files a folder of definitions held, with the modification time of every folder listed to find them. */
  private readonly listings = new Map<string, DiscoveryCache.Listing>()
  /** Files that could not be parsed, with the reason, as of their modification time: not read again until changed. */
  private readonly failures = new Map<string, { mtimeMs: number; error: string }>()
  private maxSize: number

  constructor(maxSize: number = Discovery.MAX_CACHE_SIZE) {
    if (!Number.isInteger(maxSize) || maxSize < 1) throw new RangeError(`cache size must be a positive integer`)
    this.maxSize = maxSize
  }

  /** Entries held. */
  get size(): number {
    return this.cache.size
  }

  /** Current capacity. */
  get capacity(): number {
    return this.maxSize
  }

  /**
   * The cached item when it is still valid, else null (a stale entry is removed). `mtimeMs` is the file's current
   * modification time when the caller has just stat'ed it; without it the file is stat'ed here (a missing file is a
   * miss). A hit becomes the most recently used entry.
   */
  get(filePath: string, mtimeMs?: number): Discovery.DiscoveredItem | null {
    const entry = this.cache.get(filePath)
    if (!entry) return null
    const current = mtimeMs ?? currentMtime(filePath)
    if (current === undefined || current !== entry.mtimeMs) {
      this.cache.delete(filePath)
      return null
    }
    this.cache.delete(filePath)
    this.cache.set(filePath, { ...entry, lastAccessed: now() })
    return entry.content
  }

  /**
   * Stores `item` for `filePath` as of `mtimeMs` (with the lenient read's `warning`, if any), evicting the least
   * recently used entries beyond capacity.
   */
  set(filePath: string, item: Discovery.DiscoveredItem, mtimeMs: number, warning?: string): void {
    this.cache.delete(filePath)
    this.failures.delete(filePath)
    this.cache.set(filePath, { content: item, mtimeMs, lastAccessed: now(), ...(warning ? { warning } : {}) })
    while (this.cache.size > this.maxSize) this.evictLRU()
  }

  /**
   * Remembers that `filePath`, as of `mtimeMs`, could not be parsed (`error`), so a scan reports it again without
   * reading it until it changes. At most as many as the capacity are kept.
   *
   * @example
   * cache.fail("/p/.claude/agents/bad.md", stat.mtimeMs, "malformed frontmatter: …")
   * cache.failure("/p/.claude/agents/bad.md", stat.mtimeMs) // "malformed frontmatter: …"
   */
  fail(filePath: string, mtimeMs: number, error: string): void {
    this.cache.delete(filePath)
    this.failures.delete(filePath)
    this.failures.set(filePath, { mtimeMs, error })
    while (this.failures.size > this.maxSize) this.failures.delete(this.failures.keys().next().value!)
  }

  /** The remembered parse failure of `filePath` while its modification time is still `mtimeMs`, else undefined. */
  failure(filePath: string, mtimeMs: number): string | undefined {
    const entry = this.failures.get(filePath)
    if (!entry) return undefined
    if (entry.mtimeMs !== mtimeMs) {
      this.failures.delete(filePath)
      return undefined
    }
    return entry.error
  }

  /** Removes one entry and any remembered failure (no-op when absent). */
  invalidate(filePath: string): void {
    this.cache.delete(filePath)
    this.failures.delete(filePath)
  }

  /** Removes every entry, every remembered failure and every listing. */
  clear(): void {
    this.cache.clear()
    this.failures.clear()
    this.listings.clear()
  }

  /**
   * The files found in a folder of definitions (`key`: its type and path) at its last listing, with the folder
   * stamps that listing saw; the scan reuses them while every stamp is unchanged (see `DiscoveryScan`).
   *
   * @example
   * cache.setListing("agent\u0000/p/.claude/agents", { stamps: [["/p/.claude/agents", 1700000000000]], files })
   */
  listing(key: string): DiscoveryCache.Listing | undefined {
    return this.listings.get(key)
  }

  /** Remembers the listing of a folder of definitions (replacing the previous one). */
  setListing(key: string, listing: DiscoveryCache.Listing): void {
    this.listings.set(key, listing)
  }

  /** Raises the capacity to at least `size` (never lowers it). */
  ensureCapacity(size: number): void {
    if (size > this.maxSize) this.maxSize = size
  }

  /** The entry for `filePath` without touching its recency (inspection). */
  peek(filePath: string): Discovery.CacheEntry | undefined {
    return this.cache.get(filePath)
  }

  /** Keys from least to most recently used. */
  keys(): string[] {
    return [...this.cache.keys()]
  }

  private evictLRU(): void {
    // Map order is access order (every get/set re-inserts), so the first key has the oldest lastAccessed.
    const oldest = this.cache.keys().next()
    if (!oldest.done) this.cache.delete(oldest.value)
  }
}

export namespace DiscoveryCache {
  /** A folder's definition files (path and the name used without frontmatter) and the folders' mtimes. */
  export type Listing = {
    stamps: readonly (readonly [string, number])[]
    files: readonly { path: string; fallbackName: string }[]
  }
}

let last = 0
/** A strictly increasing millisecond clock, so recency never ties. */
function now() {
  const t = Date.now()
  last = t > last ? t : last + 0.001
  return last
}

function currentMtime(filePath: string): number | undefined {
  try {
    const stat = fs.statSync(filePath)
    return stat.isFile() ? stat.mtimeMs : undefined
  } catch {
    return undefined
  }
}
