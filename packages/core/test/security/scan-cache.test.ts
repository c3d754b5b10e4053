import { describe, expect, test } from "bun:test"
import { SecurityConfig } from "../../security/config"
import { SecurityFingerprint } from "../../security/fingerprint"
import { ScanCache } from "../../security/scan-cache"
import { LLMScanner } from "../../security/scanner"
import { project } from "./fixture"

async function loaded() {
  const dir = await project()
  const state = SecurityConfig.load(dir.path)
  if (state.status !== "valid") throw new Error("invalid fixture")
  return { dir, config: state.config }
}

const filler = (n: number) => Array.from({ length: n }, (_, i) => `ordinary line ${i} of a long tool output`).join("\n")
const SECRET = "AKIAIOSFODNN7EXAMPLE"

describe("ScanCache", () => {
  test("a long text scanned twice is scanned once; the ranges are the scanner's", async () => {
    const { dir, config } = await loaded()
    await using _ = dir
    const scanner = LLMScanner.create(config, { role: "viewer", scope: "llm" })
    const cache = ScanCache.create()
    const text = `${filler(40)}\nkey ${SECRET}\n`
    const first = ScanCache.scan(cache, text, scanner)
    expect(first).toEqual(LLMScanner.scanForProtectedContent(text, scanner))
    expect(first.map((r) => text.slice(r.start, r.end))).toEqual([SECRET])
    // A different string object with the same content is the same key.
    expect(ScanCache.scan(cache, `${filler(40)}\nkey ${SECRET}\n`, scanner)).toBe(first)
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 1, misses: 1 })
  })

  test(`texts under ${ScanCache.MIN_CHARS} characters and scans with extra indexes are never cached`, async () => {
    const { dir, config } = await loaded()
    await using _ = dir
    const scanner = LLMScanner.create(config, { role: "viewer", scope: "llm" })
    const cache = ScanCache.create()
    const short = `key ${SECRET}`
    expect(ScanCache.scan(cache, short, scanner)).toHaveLength(1)
    expect(ScanCache.scan(cache, short, scanner)).toHaveLength(1)
    const extra = SecurityFingerprint.create()
    SecurityFingerprint.add(extra, "TOKEN=8f2c1e9a7b6d5c4e3f2a1b0c\n")
    const long = `${filler(40)}\n8f2c1e9a7b6d5c4e3f2a1b0c\n`
    expect(ScanCache.scan(cache, long, scanner, { extra: [extra] }).map((r) => r.kind)).toEqual(["copy"])
    expect(ScanCache.scan(cache, long, scanner)).toEqual([])
    expect({ hits: cache.hits, misses: cache.misses, chars: cache.chars }).toEqual({
      hits: 0,
      misses: 1,
      chars: long.length,
    })
  })

  test("content protected after a first scan is found on the next one: a growing index is never answered stale", async () => {
    const { dir, config } = await loaded()
    await using _ = dir
    const index = SecurityFingerprint.create({ strict: true })
    const scanner = LLMScanner.create(config, { role: "viewer", scope: "llm", indexes: [index] })
    const cache = ScanCache.create()
    const text = `${filler(30)}\nthe database password line that becomes protected later\n${filler(5)}`
    expect(ScanCache.scan(cache, text, scanner)).toEqual([])
    SecurityFingerprint.add(index, "the database password line that becomes protected later\n")
    const after = ScanCache.scan(cache, text, scanner)
    expect(after.map((r) => r.kind)).toEqual(["copy"])
    expect(cache.misses).toBe(2)
  })

  test("another scanner (policy reloaded, files re-indexed) or other options never get an earlier answer", async () => {
    const { dir, config } = await loaded()
    await using _ = dir
    const viewer = LLMScanner.create(config, { role: "viewer", scope: "tool" })
    const admin = LLMScanner.create(config, { role: "admin", scope: "tool" })
    const cache = ScanCache.create()
    const text = `${filler(30)}\n// @secure-start\nhidden\n// @secure-end\nsee secrets/api.key\n`
    expect(ScanCache.scan(cache, text, viewer).map((r) => r.kind)).toEqual(["segment"])
    expect(ScanCache.scan(cache, text, admin)).toEqual([])
    expect(ScanCache.scan(cache, text, viewer, { paths: "token" }).map((r) => r.kind)).toEqual(["segment", "path"])
    expect(ScanCache.scan(cache, text, viewer, { paths: "off" }).map((r) => r.kind)).toEqual(["segment"])
    expect(cache.hits).toBe(0)
  })

  test("bounded by characters held: the least recently used texts go first", async () => {
    const { dir, config } = await loaded()
    await using _ = dir
    const scanner = LLMScanner.create(config, { role: "viewer", scope: "llm" })
    const cache = ScanCache.create({ maxChars: 4 * 1024 })
    const texts = Array.from({ length: 6 }, (_, i) => `${i}\n${filler(25)}`) // ~1 kB each
    const size = texts[0].length
    expect(size).toBeGreaterThan(900)
    for (const t of texts.slice(0, 3)) ScanCache.scan(cache, t, scanner)
    ScanCache.scan(cache, texts[0], scanner) // used again: now the most recent
    for (const t of texts.slice(3)) ScanCache.scan(cache, t, scanner)
    expect(cache.chars).toBeLessThanOrEqual(4 * 1024)
    const before = cache.hits
    ScanCache.scan(cache, texts[0], scanner)
    expect(cache.hits).toBe(before + 1)
    ScanCache.scan(cache, texts[1], scanner)
    expect(cache.hits).toBe(before + 1) // evicted: scanned again
    // A text larger than a quarter of the bound is scanned but not held.
    const huge = filler(200)
    expect(huge.length).toBeGreaterThan(1024)
    const held = cache.chars
    ScanCache.scan(cache, huge, scanner)
    expect(cache.chars).toBe(held)
  })

  test("texts that differ in a single character, anywhere, never get each other's answer", async () => {
    const { dir, config } = await loaded()
    await using _ = dir
    const scanner = LLMScanner.create(config, { role: "viewer", scope: "llm" })
    const cache = ScanCache.create({ maxChars: 64 * 1024 })
    const text = `${filler(20)}\nkey ${SECRET} end\n${filler(20)}`
    const at = text.indexOf(SECRET)
    // The cache keys texts by a sample of their characters; a one-character change inside the secret is mostly
    // outside the sample, so these variants share keys with the original and must be compared in full.
    for (let i = 0; i < SECRET.length; i++) {
      const variant = text.slice(0, at + i) + "!" + text.slice(at + i + 1)
      for (const t of [text, variant, `${text}`, variant.slice(0)]) {
        const ranges = ScanCache.scan(cache, t, scanner)
        expect(ranges).toEqual(LLMScanner.scanForProtectedContent(t, scanner))
        expect(ranges.length).toBe(t === text ? 1 : 0)
      }
    }
    expect(cache.misses).toBe(1 + SECRET.length)
    expect(cache.chars).toBeLessThanOrEqual(64 * 1024)
  })
})
