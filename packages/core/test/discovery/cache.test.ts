import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import { DiscoveryCache, DiscoveryCacheFile } from "../../discovery/cache"
import { Discovery } from "../../discovery/schema"
import { tmpdir } from "../fixture"

const item = (name: string, filePath = `/x/${name}.md`): Discovery.DiscoveredItem => ({
  name,
  description: "",
  keywords: [],
  filePath,
  resourceType: "agent",
  source: "local",
  origin: "opencode",
})

describe("DiscoveryCache", () => {
  test("defaults to MAX_CACHE_SIZE and refuses a size that is not a positive integer", () => {
    expect(new DiscoveryCache().capacity).toBe(Discovery.MAX_CACHE_SIZE)
    expect(() => new DiscoveryCache(0)).toThrow(RangeError)
    expect(() => new DiscoveryCache(1.5)).toThrow(RangeError)
  })

  test("a hit needs the same mtime; a changed mtime is a miss and drops the entry", () => {
    const cache = new DiscoveryCache()
    cache.set("/x/a.md", item("a"), 100)
    expect(cache.get("/x/a.md", 100)?.name).toBe("a")
    expect(cache.get("/x/a.md", 101)).toBeNull()
    expect(cache.size).toBe(0)
    expect(cache.get("/x/a.md", 100)).toBeNull()
  })

  test("without a given mtime the file is stat'ed: an edit or a deletion invalidates the entry", async () => {
    await using dir = await tmpdir({ "a.md": "one" })
    const file = dir.file("a.md")
    const cache = new DiscoveryCache()
    cache.set(file, item("a", file), (await fs.stat(file)).mtimeMs)
    expect(cache.get(file)?.name).toBe("a")
    await fs.utimes(file, new Date(), new Date(Date.now() + 5000))
    expect(cache.get(file)).toBeNull()
    cache.set(file, item("a", file), (await fs.stat(file)).mtimeMs)
    await fs.rm(file)
    expect(cache.get(file)).toBeNull()
  })

  test("least recently used entries are evicted beyond capacity; get refreshes recency and lastAccessed", () => {
    const cache = new DiscoveryCache(2)
    cache.set("/x/a.md", item("a"), 1)
    cache.set("/x/b.md", item("b"), 1)
    const before = cache.peek("/x/a.md")!.lastAccessed
    expect(cache.get("/x/a.md", 1)).not.toBeNull()
    expect(cache.peek("/x/a.md")!.lastAccessed).toBeGreaterThan(before)
    cache.set("/x/c.md", item("c"), 1)
    expect(cache.keys()).toEqual(["/x/a.md", "/x/c.md"])
    expect(cache.get("/x/b.md", 1)).toBeNull()
  })

  test("invalidate and clear remove entries; ensureCapacity only grows", () => {
    const cache = new DiscoveryCache(3)
    cache.set("/x/a.md", item("a"), 1)
    cache.set("/x/b.md", item("b"), 1)
    cache.invalidate("/x/a.md")
    cache.invalidate("/x/missing.md")
    expect(cache.keys()).toEqual(["/x/b.md"])
    cache.clear()
    expect(cache.size).toBe(0)
    cache.ensureCapacity(10)
    expect(cache.capacity).toBe(10)
    cache.ensureCapacity(4)
    expect(cache.capacity).toBe(10)
  })

  test("parse failures are remembered per mtime; set, invalidate and clear forget them", () => {
    const cache = new DiscoveryCache()
    cache.fail("/a.md", 1, "malformed frontmatter: x")
    expect(cache.failure("/a.md", 1)).toBe("malformed frontmatter: x")
    expect(cache.failure("/a.md", 2)).toBeUndefined()
    expect(cache.failure("/a.md", 1)).toBeUndefined()
    cache.fail("/a.md", 1, "e")
    cache.set("/a.md", item("a"), 1)
    expect(cache.failure("/a.md", 1)).toBeUndefined()
    cache.fail("/b.md", 1, "e")
    cache.invalidate("/b.md")
    expect(cache.failure("/b.md", 1)).toBeUndefined()
    cache.fail("/c.md", 1, "e")
    cache.clear()
    expect(cache.failure("/c.md", 1)).toBeUndefined()
  })

  test("entries have the CacheEntry shape", () => {
    const cache = new DiscoveryCache()
    cache.set("/x/a.md", item("a"), 12.5)
    expect(Discovery.CacheEntry.safeParse(cache.peek("/x/a.md")).success).toBe(true)
  })
})

describe("DiscoveryCache identities", () => {
  const id = (over: Partial<DiscoveryCache.Identity> = {}): DiscoveryCache.Identity => ({
    mtimeMs: 100,
    ctimeMs: 100,
    size: 10,
    ino: 7,
    ...over,
  })

  test("an entry stored with a stamp is a miss when size, inode or change time differ at the same mtime", () => {
    for (const other of [{ size: 11 }, { ino: 8 }, { ctimeMs: 101 }]) {
      const cache = new DiscoveryCache()
      cache.set("/x/a.md", item("a"), 100, undefined, { ...id(), settled: true })
      expect(cache.get("/x/a.md", 100, id())?.name).toBe("a")
      expect(cache.get("/x/a.md", 100, id(other))).toBeNull()
      expect(cache.size).toBe(0)
      cache.fail("/x/b.md", 100, "bad", { ...id(), settled: true })
      expect(cache.failure("/x/b.md", 100, id())).toBe("bad")
      expect(cache.failure("/x/b.md", 100, id(other))).toBeUndefined()
    }
  })

  test("stamp: settled only when both times are older than RACY_MS before the stat", () => {
    const at = 1_000_000
    const racy = DiscoveryCacheFile.RACY_MS
    expect(DiscoveryCache.stamp(id({ mtimeMs: at - racy - 1, ctimeMs: at - racy - 1 }), at).settled).toBe(true)
    expect(DiscoveryCache.stamp(id({ mtimeMs: at - racy - 1, ctimeMs: at - 5 }), at).settled).toBe(false)
    expect(DiscoveryCache.stamp(id({ mtimeMs: at - 5, ctimeMs: at - racy - 1 }), at).settled).toBe(false)
  })

  test("generation counts changes to what is held, not lookups", () => {
    const cache = new DiscoveryCache()
    const start = cache.generation
    cache.set("/x/a.md", item("a"), 1)
    const afterSet = cache.generation
    expect(afterSet).toBeGreaterThan(start)
    cache.get("/x/a.md", 1)
    cache.peek("/x/a.md")
    cache.listing("k")
    expect(cache.generation).toBe(afterSet)
    cache.setListing("k", { stamps: [], files: [] })
    expect(cache.generation).toBeGreaterThan(afterSet)
    const afterListing = cache.generation
    cache.invalidate("/x/missing.md")
    expect(cache.generation).toBe(afterListing)
    cache.invalidate("/x/a.md")
    expect(cache.generation).toBeGreaterThan(afterListing)
  })
})
