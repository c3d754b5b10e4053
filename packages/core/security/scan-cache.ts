import { LLMScanner } from "./scanner"

/**
 * Remembers scan results of long texts. Every request re-sends the whole history, and the hook guard scans each
 * message again; a message's ranges depend only on its text, the scanner and the options, so they are reused until
 * the scanner changes (policy reloaded, protected files re-indexed) or its fingerprint indexes grow (a protected
 * segment was seen). Bounded by the characters it holds; the least recently used texts go first.
 *
 * @example
 * const cache = ScanCache.create()
 * const ranges = ScanCache.scan(cache, text, scanner, { paths: "token", base: "/repo" }) // scans
 * ScanCache.scan(cache, text, scanner, { paths: "token", base: "/repo" }) // same ranges, no scan
 */
export namespace ScanCache {
  /** Shorter texts are scanned every time: a lookup would cost about as much. */
  export const MIN_CHARS = 512

  export type Cache = {
    maxChars: number
    chars: number
    scanner?: LLMScanner.Scanner
    stamp: number
    entries: Map<string, Map<string, LLMScanner.Range[]>>
    hits: number
    misses: number
  }

  /** `maxChars`: the most text held as keys (default 8 M characters, about 16 MB). */
  export function create(options: { maxChars?: number } = {}): Cache {
    return {
      maxChars: options.maxChars ?? 8 * 1024 * 1024,
      chars: 0,
      stamp: -1,
      entries: new Map(),
      hits: 0,
      misses: 0,
    }
  }

  /** Changes whenever an index of the scanner learns more (indexes only grow in place; rebuilds replace scanners). */
  function stampOf(scanner: LLMScanner.Scanner): number {
    let stamp = 0
    for (const index of scanner.indexes) stamp += index.bytes + index.lines.size + index.tokens.size
    return stamp
  }

  /**
   * `LLMScanner.scanForProtectedContent`, answered from the cache when the same text was scanned with the same
   * scanner, indexes and options. Scans with `extra` indexes are never cached. The returned ranges are shared: do
   * not modify them.
   */
  export function scan(
    cache: Cache,
    text: string,
    scanner: LLMScanner.Scanner,
    options: LLMScanner.ScanOptions = {},
  ): LLMScanner.Range[] {
    if (text.length < MIN_CHARS || text.length > cache.maxChars / 4 || options.extra?.length)
      return LLMScanner.scanForProtectedContent(text, scanner, options)
    const stamp = stampOf(scanner)
    if (cache.scanner !== scanner || cache.stamp !== stamp) clear(cache, scanner, stamp)
    const key = `${options.paths ?? "off"}\u0000${options.base ?? ""}`
    let bucket = cache.entries.get(key)
    if (!bucket) cache.entries.set(key, (bucket = new Map()))
    const found = bucket.get(text)
    if (found) {
      cache.hits++
      // Most recently used last.
      bucket.delete(text)
      bucket.set(text, found)
      return found
    }
    cache.misses++
    const ranges = LLMScanner.scanForProtectedContent(text, scanner, options)
    bucket.set(text, ranges)
    cache.chars += text.length
    evict(cache)
    return ranges
  }

  function clear(cache: Cache, scanner: LLMScanner.Scanner, stamp: number) {
    cache.entries.clear()
    cache.chars = 0
    cache.scanner = scanner
    cache.stamp = stamp
  }

  function evict(cache: Cache) {
    for (const [key, bucket] of cache.entries) {
      for (const text of bucket.keys()) {
        if (cache.chars <= cache.maxChars) return
        bucket.delete(text)
        cache.chars -= text.length
      }
      if (!bucket.size) cache.entries.delete(key)
      if (cache.chars <= cache.maxChars) return
    }
  }
}
