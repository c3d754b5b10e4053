import { isAscii } from "buffer"
import crypto from "crypto"
import fs from "fs"
import path from "path"
import { LocalState } from "../learning/local"
import { LocalSeal } from "../learning/seal"
import { errorMessage } from "../util/error"
import type { DiscoveryMatch } from "./match"
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
  private readonly failures = new Map<string, { mtimeMs: number; error: string; stamp?: DiscoveryCache.Stamp }>()
  /** The stamp (`DiscoveryCache.Stamp`) each entry was stored with, when the caller gave one. */
  private readonly identities = new Map<string, DiscoveryCache.Stamp>()
  private maxSize: number
  private changes = 0

  constructor(maxSize: number = Discovery.MAX_CACHE_SIZE) {
    if (!Number.isInteger(maxSize) || maxSize < 1) throw new RangeError(`cache size must be a positive integer`)
    this.maxSize = maxSize
  }

  /** Entries held. */
  get size(): number {
    return this.cache.size
  }

  /**
   * A counter of changes to what the cache holds (entries, failures, listings stored or dropped; not recency): equal
   * before and after a scan when the scan changed nothing.
   */
  get generation(): number {
    return this.changes
  }

  /** Current capacity. */
  get capacity(): number {
    return this.maxSize
  }

  /**
   * The cached item when it is still valid, else null (a stale entry is removed). `mtimeMs` is the file's current
   * modification time when the caller has just stat'ed it; without it the file is stat'ed here (a missing file is a
   * miss). With `identity` (that stat), an entry stored with a stamp must have the same identity
   * (`DiscoveryCache.same`): a file rewritten within the same modification time but with another size, inode or change
   * time is a miss. A hit becomes the most recently used entry.
   */
  get(filePath: string, mtimeMs?: number, identity?: DiscoveryCache.Identity): Discovery.DiscoveredItem | null {
    const entry = this.cache.get(filePath)
    if (!entry) return null
    const current = mtimeMs ?? currentMtime(filePath)
    const stored = this.identities.get(filePath)
    if (
      current === undefined ||
      current !== entry.mtimeMs ||
      (identity !== undefined && stored !== undefined && !DiscoveryCache.same(stored, identity))
    ) {
      this.cache.delete(filePath)
      this.identities.delete(filePath)
      this.changes++
      return null
    }
    this.cache.delete(filePath)
    this.cache.set(filePath, { ...entry, lastAccessed: now() })
    return entry.content
  }

  /**
   * Stores `item` for `filePath` as of `mtimeMs` (with the lenient read's `warning`, if any), evicting the least
   * recently used entries beyond capacity. With `stamp`, later hits check its identity too.
   */
  set(
    filePath: string,
    item: Discovery.DiscoveredItem,
    mtimeMs: number,
    warning?: string,
    stamp?: DiscoveryCache.Stamp,
  ): void {
    this.cache.delete(filePath)
    this.failures.delete(filePath)
    this.cache.set(filePath, { content: item, mtimeMs, lastAccessed: now(), ...(warning ? { warning } : {}) })
    if (stamp) this.identities.set(filePath, stamp)
    else this.identities.delete(filePath)
    this.changes++
    while (this.cache.size > this.maxSize) this.evictLRU()
  }

  /** The stamp `filePath`'s entry or failure was stored with (undefined without one). */
  stampOf(filePath: string): DiscoveryCache.Stamp | undefined {
    return this.failures.get(filePath)?.stamp ?? (this.cache.has(filePath) ? this.identities.get(filePath) : undefined)
  }

  /**
   * Remembers that `filePath`, as of `mtimeMs`, could not be parsed (`error`), so a scan reports it again without
   * reading it until it changes. At most as many as the capacity are kept.
   *
   * @example
   * cache.fail("/p/.claude/agents/bad.md", stat.mtimeMs, "malformed frontmatter: …")
   * cache.failure("/p/.claude/agents/bad.md", stat.mtimeMs) // "malformed frontmatter: …"
   */
  fail(filePath: string, mtimeMs: number, error: string, stamp?: DiscoveryCache.Stamp): void {
    this.cache.delete(filePath)
    this.identities.delete(filePath)
    this.failures.delete(filePath)
    this.failures.set(filePath, { mtimeMs, error, ...(stamp ? { stamp } : {}) })
    this.changes++
    while (this.failures.size > this.maxSize) this.failures.delete(this.failures.keys().next().value!)
  }

  /**
   * The remembered parse failure of `filePath` while its modification time is still `mtimeMs` (and its identity
   * `identity`, when both the call and the record have one), else undefined.
   */
  failure(filePath: string, mtimeMs: number, identity?: DiscoveryCache.Identity): string | undefined {
    const entry = this.failures.get(filePath)
    if (!entry) return undefined
    const stored = entry.stamp
    if (
      entry.mtimeMs !== mtimeMs ||
      (identity !== undefined && stored !== undefined && !DiscoveryCache.same(stored, identity))
    ) {
      this.failures.delete(filePath)
      this.changes++
      return undefined
    }
    return entry.error
  }

  /** The remembered failure of `filePath` without checking it (inspection, and what a cache on disk keeps). */
  peekFailure(filePath: string): { mtimeMs: number; error: string; stamp?: DiscoveryCache.Stamp } | undefined {
    return this.failures.get(filePath)
  }

  /** Removes one entry and any remembered failure (no-op when absent). */
  invalidate(filePath: string): void {
    const had = this.cache.delete(filePath)
    this.identities.delete(filePath)
    if (this.failures.delete(filePath) || had) this.changes++
  }

  /** Removes every entry, every remembered failure and every listing. */
  clear(): void {
    this.cache.clear()
    this.identities.clear()
    this.failures.clear()
    this.listings.clear()
    this.changes++
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
    this.changes++
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
    if (!oldest.done) {
      this.cache.delete(oldest.value)
      this.identities.delete(oldest.value)
      this.changes++
    }
  }
}

export namespace DiscoveryCache {
  /** A folder's definition files (path and the name used without frontmatter) and the folders' mtimes. */
  export type Listing = {
    stamps: readonly (readonly [string, number])[]
    files: readonly { path: string; fallbackName: string }[]
    /** True when every folder's time was older than `DiscoveryCacheFile.RACY_MS` when listed (safe to keep on disk). */
    settled?: boolean
  }

  /**
   * What a file's contents are taken to be known by: modification and change times, size and inode (a `fs.Stats` is
   * one). A file rewritten in the same millisecond with another length, replaced by another file (a rename over it,
   * a new inode), or whose modification time was set back (`touch -d`, which moves the change time) has another.
   */
  export type Identity = { mtimeMs: number; ctimeMs: number; size: number; ino: number }

  /**
   * A file's identity as of a read, and whether the file had settled then: its modification and change times older
   * than `DiscoveryCacheFile.RACY_MS` before the read. Only settled entries are written to disk.
   */
  export type Stamp = Identity & { settled: boolean }

  /**
   * The stamp of a file stat'ed at `statAt` (ms since the epoch, taken before the stat).
   *
   * @example
   * const at = Date.now()
   * DiscoveryCache.stamp(fs.statSync(file), at) // { mtimeMs, ctimeMs, size, ino, settled }
   */
  export function stamp(stat: Identity, statAt: number): Stamp {
    const { mtimeMs, ctimeMs, size, ino } = stat
    return { mtimeMs, ctimeMs, size, ino, settled: Math.max(mtimeMs, ctimeMs) < statAt - DiscoveryCacheFile.RACY_MS }
  }

  /** True when two identities are the same. */
  export function same(a: Identity, b: Identity): boolean {
    return a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.size === b.size && a.ino === b.ino
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

/**
 * The parse cache kept on disk, so that a new process (a new OpenCode session, `opencode-builtins discover`) starts
 * from the definitions an earlier one parsed: one JSON file, `discovery-cache.json`, in the project's local state
 * folder (`LocalState.DIR`, `.opencode/builtins-local/`, git-ignored by `init` and hidden from every role by the
 * security layer while a policy exists). Deleting it is always safe: it is rebuilt on the next prompt.
 *
 * - Every record names a file by path and identity (`DiscoveryCache.identity`); a record is used only while the
 *   file's current identity is the same, and a folder listing only while every folder it read has the same time.
 * - The file carries a version of the code that produced it (`version()`: a hash of the parser's, tokenizer's and
 *   matcher's source), and a hash of the protected-segment markers it was written under: either differing, or a file
 *   that is not valid JSON of this shape (truncated, corrupt, foreign), it is ignored as a whole and rewritten.
 * - Written atomically (a temporary file renamed over it); at most `MAX_FILES` records and `MAX_BYTES` bytes.
 * - Records of files changed within `RACY_MS` of being read are not written: a file rewritten twice within one tick
 *   of the filesystem's clock could keep its identity, so only settled files are trusted across processes.
 *
 * @example
 * const file = DiscoveryCacheFile.location("/repo") // "/repo/.opencode/builtins-local/discovery-cache.json"
 * const read = DiscoveryCacheFile.read(file, DiscoveryCacheFile.markersKey(""))
 * read.contents?.files.length // records of the last save, or undefined (read.problem says why)
 */
export namespace DiscoveryCacheFile {
  export const NAME = "discovery-cache.json"
  /** Layout of the file; bumped when its shape changes. */
  export const FORMAT = 1
  /** Records written at most (the rest of a larger catalogue is parsed again by each new process). */
  export const MAX_FILES = 5_000
  /** A file larger than this is neither read nor written. */
  export const MAX_BYTES = 32 * 1024 * 1024
  /** Files (and folders) changed this recently before being read are not written to disk. */
  export const RACY_MS = 2_000

  /**
   * One file's record: path, identity (modification and change times, size, inode), then either the item (with the
   * start of its body and the lenient read's warning, empty when none) or the reason it could not be parsed.
   */
  export type FileRecord = readonly [
    path: string,
    identity: readonly [mtimeMs: number, ctimeMs: number, size: number, ino: number],
    item: Discovery.DiscoveredItem | null,
    body: string,
    warning: string,
    error: string,
  ]
  export type ListingRecord = readonly [key: string, listing: DiscoveryCache.Listing]
  /**
   * A ranking index (`DiscoveryMatch.Snapshot`) of the documents `fingerprint` names, its postings packed: per term
   * (in `terms` order) its number of documents, then every posting's document, pseudo frequency and name flag, as
   * little-endian arrays in base64 (exact: the frequencies stay 64-bit floats).
   */
  export type IndexRecord = {
    fingerprint: string
    size: number
    vocabulary: string[]
    terms: string[]
    counts: string
    docs: string
    xs: string
    names: string
  }
  export type Contents = {
    format: number
    version: string
    markers: string
    files: FileRecord[]
    listings: ListingRecord[]
    index?: IndexRecord
  }

  /** Where the cache of the project holding `directory` lives. */
  export function location(directory: string, worktree?: string): string {
    return path.join(LocalState.dir(LocalState.root(directory, worktree)), NAME)
  }

  /** The key of a set of protected-segment markers (`ResourceAccess.pairsKey`): a hash, never the markers. */
  export function markersKey(pairsKey: string): string {
    return pairsKey ? crypto.createHash("sha256").update(pairsKey).digest("hex") : ""
  }

  /** The modules whose code decides what a record holds (relative to this file). */
  const SOURCES = [
    "cache.ts",
    "scan.ts",
    "parse.ts",
    "schema.ts",
    "keywords.ts",
    "lexicon.ts",
    "match.ts",
    "locate.ts",
    "../util/frontmatter.ts",
  ]
  const PACKAGES = ["gray-matter", "js-yaml", "stemmer"]
  let memo: string | undefined

  /**
   * A hash of the code that produces the records: the source text of the parser, tokenizer, lexicon and matcher
   * modules and the versions of the libraries they use; in a build where those sources are not on disk (a compiled
   * binary, a bundle), the identity of the running executable and bundle. Computed once per process.
   *
   * @example
   * DiscoveryCacheFile.version() // "3f9a…" (changes whenever keywords.ts, lexicon.ts, match.ts… change)
   */
  export function version(): string {
    if (memo) return memo
    const hash = crypto.createHash("sha256").update(`format ${FORMAT}\n`)
    try {
      for (const file of SOURCES)
        hash
          .update(file)
          .update("\0")
          .update(fs.readFileSync(path.join(import.meta.dir, file)))
      for (const name of PACKAGES) {
        try {
          const json = fs.readFileSync(require.resolve(`${name}/package.json`), "utf8")
          hash.update(`${name}@${(JSON.parse(json) as { version?: string }).version}\n`)
        } catch {
          hash.update(`${name}@?\n`)
        }
      }
    } catch {
      for (const file of [process.execPath, import.meta.path]) {
        const stat = fs.statSync(file, { throwIfNoEntry: false })
        hash.update(`${file}\0${stat ? [stat.mtimeMs, stat.ctimeMs, stat.size, stat.ino].join(":") : "-"}\n`)
      }
    }
    return (memo = hash.digest("hex"))
  }

  /** A cache file read and parsed as JSON, not yet checked (`check`), or why it could not be. */
  export type Parsed = { data?: unknown; problem?: string }

  /**
   * The contents of `file` when it is a cache of this code version written under the segment markers `markers`
   * (`markersKey`), else `problem` says why it is ignored (missing, too large, not JSON, another version…). Never
   * throws.
   *
   * @example
   * DiscoveryCacheFile.read(file, "").contents?.files.length
   */
  export function read(file: string, markers: string): { contents?: Contents; problem?: string } {
    return check(readParsed(file), markers)
  }

  /**
   * `read` in two steps: the file read and parsed without blocking (an engine starts this when it is created, so the
   * work is done before its first prompt), then `check`ed for the markers of the first scan. Never rejects.
   *
   * @example
   * const early = DiscoveryCacheFile.readLater(file)
   * DiscoveryCacheFile.check(await early, markersKey).contents
   */
  export function readLater(file: string): Promise<Parsed> {
    // At the next turn of the event loop, read synchronously: an asynchronous read of a file this size cost more than
    // the read itself, and this runs while the host is idle anyway.
    return new Promise((resolve) => setImmediate(() => resolve(readParsed(file))))
  }

  function readParsed(file: string): Parsed {
    try {
      const stat = fs.statSync(file, { throwIfNoEntry: false })
      if (!stat) return { problem: NO_FILE }
      if (!stat.isFile()) return { problem: "not a regular file" }
      if (stat.size > MAX_BYTES) return { problem: `larger than ${MAX_BYTES} bytes` }
      // Written as ASCII (`write`), so read as bytes: decoding UTF-8 cost more than the read. A file with any other
      // byte was not written by this code.
      const bytes = fs.readFileSync(file)
      if (!isAscii(bytes)) return { problem: "not ASCII: not written by this code" }
      // Sealed by this machine's built-ins for this project (LocalSeal); a cache has no legacy: it is rebuilt.
      const opened = LocalSeal.open(file, "discovery-cache", bytes.toString("latin1"))
      if (opened.problem) return { problem: opened.problem }
      return parse(opened.text)
    } catch (error) {
      return { problem: `unreadable: ${errorMessage(error)}` }
    }
  }

  /**
   * The index of a parsed file unpacked ahead of `check` (which needs the first scan's markers), when the file is of
   * this code version and its index record is sound; undefined otherwise. The caller uses it only once `check` passed.
   */
  export function unpackEarly(parsed: Parsed): DiscoveryMatch.Snapshot | undefined {
    const c = parsed.data as Partial<Contents> | null | undefined
    if (!c || typeof c !== "object" || c.format !== FORMAT || c.version !== version() || !validIndex(c.index))
      return undefined
    try {
      return unpack(c.index as IndexRecord)
    } catch {
      return undefined
    }
  }

  /** What `read` says when there is no file (not worth a log line). */
  export const NO_FILE = "no cache file"

  function parse(text: string): Parsed {
    try {
      return { data: JSON.parse(text) }
    } catch (error) {
      return { problem: `not valid JSON (truncated or corrupt): ${errorMessage(error)}` }
    }
  }

  /** The contents of a parsed file when it is a cache of this code version written under `markers`, else why not. */
  export function check(parsed: Parsed, markers: string): { contents?: Contents; problem?: string } {
    if (parsed.problem !== undefined) return { problem: parsed.problem }
    const c = parsed.data as Partial<Contents> | null
    if (!c || typeof c !== "object" || c.format !== FORMAT) return { problem: "another format" }
    if (c.version !== version()) return { problem: "written by another version of the code" }
    if (c.markers !== markers) return { problem: "written under other protected-segment markers" }
    if (!Array.isArray(c.files) || !Array.isArray(c.listings)) return { problem: "malformed" }
    if (c.files.length > MAX_FILES || !c.files.every(validRecord)) return { problem: "malformed file record" }
    if (!c.listings.every(validListing)) return { problem: "malformed listing record" }
    if (c.index !== undefined && !validIndex(c.index)) return { problem: "malformed index record" }
    return { contents: c as Contents }
  }

  /**
   * `snapshot` packed for the file, for the documents `fingerprint` names.
   *
   * @example
   * DiscoveryCacheFile.unpack(DiscoveryCacheFile.pack("fp", snapshot)) // an equal snapshot
   */
  export function pack(fingerprint: string, snapshot: DiscoveryMatch.Snapshot): IndexRecord {
    const terms = [...snapshot.postings.keys()]
    let total = 0
    for (const list of snapshot.postings.values()) total += list.docs.length
    const counts = new Uint32Array(terms.length)
    const docs = new Uint32Array(total)
    const xs = new Float64Array(total)
    const names = new Uint8Array(total)
    let at = 0
    terms.forEach((term, i) => {
      const list = snapshot.postings.get(term)!
      counts[i] = list.docs.length
      for (let j = 0; j < list.docs.length; j++, at++) {
        docs[at] = list.docs[j]
        xs[at] = list.xs[j]
        names[at] = list.names[j] ? 1 : 0
      }
    })
    const b64 = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("base64")
    return {
      fingerprint,
      size: snapshot.size,
      vocabulary: [...snapshot.vocabulary],
      terms,
      counts: b64(counts),
      docs: b64(docs),
      xs: b64(xs),
      names: b64(names),
    }
  }

  /**
   * The snapshot a record holds, or undefined when its arrays do not fit together (a damaged record). The platform's
   * byte order is assumed little-endian, as on every platform OpenCode ships for; a big-endian one reads garbage that
   * the checks here refuse, and rebuilds.
   */
  export function unpack(record: IndexRecord): DiscoveryMatch.Snapshot | undefined {
    const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, "base64"))
    const counts = bytes(record.counts)
    const docs = bytes(record.docs)
    const xs = bytes(record.xs)
    const names = bytes(record.names)
    if (counts.length !== record.terms.length * 4 || docs.length % 4 || xs.length % 8) return undefined
    const count = new Uint32Array(counts.buffer)
    const doc = new Uint32Array(docs.buffer)
    const x = new Float64Array(xs.buffer)
    if (doc.length !== x.length || doc.length !== names.length) return undefined
    for (let i = 0; i < doc.length; i++) if (doc[i] >= record.size || !(x[i] > 0) || names[i] > 1) return undefined
    const postings = new Map<string, DiscoveryMatch.Posting>()
    let at = 0
    for (let i = 0; i < record.terms.length; i++) {
      const end = at + count[i]
      if (count[i] === 0 || end > doc.length) return undefined
      const list: DiscoveryMatch.Posting = { docs: [], xs: [], names: [] }
      for (let j = at; j < end; j++) {
        list.docs.push(doc[j])
        list.xs.push(x[j])
        list.names.push(names[j] === 1)
      }
      postings.set(record.terms[i], list)
      at = end
    }
    if (at !== doc.length || postings.size !== record.terms.length) return undefined
    return { size: record.size, vocabulary: new Set(record.vocabulary), postings }
  }

  /**
   * Writes `contents` to `file` atomically (a temporary file in the same folder, renamed over it), creating the
   * folder. Throws on a filesystem error (the caller logs it; the cache is an optimisation). Contents beyond
   * `MAX_FILES` records are cut; contents beyond `MAX_BYTES` are not written (and an older file is removed).
   *
   * @example
   * DiscoveryCacheFile.write(file, { format: 1, version: DiscoveryCacheFile.version(), markers: "", files, listings })
   */
  export function write(file: string, contents: Contents): void {
    const bounded =
      contents.files.length > MAX_FILES ? { ...contents, files: contents.files.slice(0, MAX_FILES) } : contents
    // Every character past ASCII escaped: the file then reads as an 8-bit string, which JSON.parse reads about twice
    // as fast as the 16-bit string a single emoji in one body would make of the whole file.
    const text = LocalSeal.seal(
      file,
      "discovery-cache",
      JSON.stringify(bounded).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
    )
    if (Buffer.byteLength(text) > MAX_BYTES) {
      fs.rmSync(file, { force: true })
      return
    }
    LocalState.ensure(path.dirname(file))
    removeStale(file)
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.tmp`
    try {
      fs.writeFileSync(tmp, text, { mode: 0o600 })
      fs.renameSync(tmp, file)
    } catch (error) {
      fs.rmSync(tmp, { force: true })
      throw error
    }
  }

  /** A temporary file this old is left over from a process that stopped while writing. */
  const STALE_MS = 60_000

  /** Removes temporary files of `file` that a process left behind (it stopped between writing and renaming). */
  function removeStale(file: string) {
    const dir = path.dirname(file)
    const prefix = `${path.basename(file)}.`
    for (const name of fs.readdirSync(dir)) {
      if (!name.startsWith(prefix) || !name.endsWith(".tmp")) continue
      const stat = fs.statSync(path.join(dir, name), { throwIfNoEntry: false })
      if (stat && stat.mtimeMs < Date.now() - STALE_MS) fs.rmSync(path.join(dir, name), { force: true })
    }
  }

  /** Removes the cache file of a project (no error when there is none). */
  export function clear(file: string): void {
    fs.rmSync(file, { force: true })
  }

  const isString = (x: unknown): x is string => typeof x === "string"
  const isNumber = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x)

  function validRecord(r: unknown): boolean {
    if (!Array.isArray(r) || r.length !== 6) return false
    const [file, identity, item, body, warning, error] = r as unknown[]
    if (!isString(file) || !path.isAbsolute(file)) return false
    if (!Array.isArray(identity) || identity.length !== 4 || !identity.every(isNumber)) return false
    if (!isString(body) || body.length > Discovery.BODY_MAX || !isString(warning) || !isString(error)) return false
    if (item === null) return error.length > 0
    return error === "" && validItem(item, file)
  }

  /** The schema's rules for an item, checked directly (a zod parse per record would cost what the cache saves). */
  function validItem(x: unknown, file: string): boolean {
    const i = x as Partial<Discovery.DiscoveredItem> | null
    return (
      !!i &&
      typeof i === "object" &&
      i.filePath === file &&
      isString(i.name) &&
      i.name.length >= 1 &&
      i.name.length <= Discovery.NAME_MAX &&
      isString(i.description) &&
      i.description.length <= Discovery.DESCRIPTION_MAX &&
      Array.isArray(i.keywords) &&
      i.keywords.length <= Discovery.KEYWORDS_MAX &&
      i.keywords.every((k) => isString(k) && k.length > 0) &&
      (i.lead === undefined || (isString(i.lead) && i.lead.length <= Discovery.LEAD_MAX)) &&
      (i.keywordSource === undefined || ["explicit", "description", "filename"].includes(i.keywordSource)) &&
      Discovery.RESOURCE_TYPES.includes(i.resourceType as Discovery.ResourceType) &&
      (i.source === "global" || i.source === "local") &&
      (i.origin === "claude" || i.origin === "opencode") &&
      (i.unavailable === undefined || i.unavailable === "disabled" || i.unavailable === "primary")
    )
  }

  function validIndex(r: unknown): boolean {
    const i = r as Partial<IndexRecord> | null
    return (
      !!i &&
      typeof i === "object" &&
      isString(i.fingerprint) &&
      isNumber(i.size) &&
      Number.isInteger(i.size) &&
      i.size >= 0 &&
      Array.isArray(i.vocabulary) &&
      i.vocabulary.every(isString) &&
      Array.isArray(i.terms) &&
      i.terms.every(isString) &&
      [i.counts, i.docs, i.xs, i.names].every(isString)
    )
  }

  function validListing(r: unknown): boolean {
    if (!Array.isArray(r) || r.length !== 2 || !isString(r[0])) return false
    const l = r[1] as Partial<DiscoveryCache.Listing> | null
    return (
      !!l &&
      l.settled === true &&
      Array.isArray(l.stamps) &&
      l.stamps.every((s) => Array.isArray(s) && s.length === 2 && isString(s[0]) && isNumber(s[1])) &&
      Array.isArray(l.files) &&
      l.files.every((f) => !!f && isString(f.path) && path.isAbsolute(f.path) && isString(f.fallbackName))
    )
  }
}
