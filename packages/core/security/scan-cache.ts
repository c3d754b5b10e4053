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
    /** Entries by options and `probe` of their text (texts that differ only where the probe does not look share one). */
    entries: Map<string, Entry[]>
    /** Every entry, least recently used first. */
    order: Set<Entry>
    hits: number
    misses: number
  }
  type Entry = { key: string; text: string; ranges: LLMScanner.Range[] }

  /** Entries sharing a key: beyond this many, the least recently used of them goes. */
  const MAX_SHARED = 8

  /** `maxChars`: the most text held (default 8 M characters, about 16 MB). */
  export function create(options: { maxChars?: number } = {}): Cache {
    return {
      maxChars: options.maxChars ?? 8 * 1024 * 1024,
      chars: 0,
      stamp: -1,
      entries: new Map(),
      order: new Set(),
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

  const SAMPLES = 32

  /**
   * A short key for a long text: its length, its first and last 16 characters and 32 evenly spaced ones. Texts are
   * then told apart by comparing them (`===`, a memory comparison): keying a map by the whole text hashed every
   * character of every new text, about 1.2 ms per megabyte, several times the cost of the comparison.
   */
  function probe(text: string): string {
    const codes: number[] = new Array(SAMPLES)
    const step = Math.floor(text.length / SAMPLES)
    for (let i = 0; i < SAMPLES; i++) codes[i] = text.charCodeAt(i * step + (step >> 1))
    return `${text.length}\u0000${text.slice(0, 16)}${text.slice(-16)}${String.fromCharCode(...codes)}`
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
    const key = `${options.paths ?? "off"}\u0000${options.base ?? ""}\u0000${probe(text)}`
    let shared = cache.entries.get(key)
    if (!shared) cache.entries.set(key, (shared = []))
    for (let i = 0; i < shared.length; i++) {
      const entry = shared[i]
      if (entry.text !== text) continue
      cache.hits++
      // Most recently used last, overall and among the entries sharing its key.
      cache.order.delete(entry)
      cache.order.add(entry)
      shared.splice(i, 1)
      shared.push(entry)
      return entry.ranges
    }
    cache.misses++
    const ranges = LLMScanner.scanForProtectedContent(text, scanner, options)
    const entry = { key, text, ranges }
    shared.push(entry)
    cache.order.add(entry)
    cache.chars += text.length
    if (shared.length > MAX_SHARED) remove(cache, shared[0])
    for (const oldest of cache.order) {
      if (cache.chars <= cache.maxChars) break
      remove(cache, oldest)
    }
    return ranges
  }

  function remove(cache: Cache, entry: Entry) {
    const shared = cache.entries.get(entry.key)
    if (shared) {
      shared.splice(shared.indexOf(entry), 1)
      if (!shared.length) cache.entries.delete(entry.key)
    }
    cache.order.delete(entry)
    cache.chars -= entry.text.length
  }

  function clear(cache: Cache, scanner: LLMScanner.Scanner, stamp: number) {
    cache.entries.clear()
    cache.order.clear()
    cache.chars = 0
    cache.scanner = scanner
    cache.stamp = stamp
  }
}
