import { describe, expect, test } from "bun:test"
import path from "path"
import { SecurityConfig } from "../../security/config"
import { SecurityFingerprint } from "../../security/fingerprint"
import { LLMScanner } from "../../security/scanner"
import { scanAndRedact } from "../../security/index"
import { project } from "./fixture"

async function loaded() {
  const dir = await project()
  const state = SecurityConfig.load(dir.path)
  if (state.status !== "valid") throw new Error("invalid fixture")
  return { dir, config: state.config }
}

describe("LLMScanner", () => {
  test("no policy: inert, finds nothing even in secrets", () => {
    const s = LLMScanner.create(undefined, { role: "viewer", scope: "tool" })
    expect(s.inert).toBe(true)
    expect(LLMScanner.scanForProtectedContent("AKIAIOSFODNN7EXAMPLE", s)).toEqual([])
  })
  test("scopes: tool output honours read and llm markers, model-bound text llm ones; allowed roles see it", async () => {
    const { dir, config } = await loaded()
    try {
      const text = "a\n// @secure-start\nhidden\n// @secure-end\n# @locked-start\nlocked\n# @locked-end\n"
      const tool = LLMScanner.create(config, { role: "viewer", scope: "tool" })
      expect(LLMScanner.scanForProtectedContent(text, tool).map((r) => r.kind)).toEqual(["segment"])
      const admin = LLMScanner.create(config, { role: "admin", scope: "tool" })
      expect(LLMScanner.scanForProtectedContent(text, admin)).toEqual([])
    } finally {
      await dir[Symbol.asyncDispose]()
    }
  })
  test("path mentions: token mode, line mode, relative to the base and the root", async () => {
    const { dir, config } = await loaded()
    try {
      const s = LLMScanner.create(config, { role: "viewer", scope: "llm" })
      const text = "see secrets/api.key. Then docs/public.md\n./secrets/nested/deep.txt:3:value"
      const token = LLMScanner.scanForProtectedContent(text, s, { paths: "token" })
      expect(token.map((r) => text.slice(r.start, r.end))).toEqual(["secrets/api.key", "./secrets/nested/deep.txt"])
      const line = LLMScanner.scanForProtectedContent(text, s, { paths: "line" })
      expect(line.map((r) => text.slice(r.start, r.end))[1]).toBe("./secrets/nested/deep.txt:3:value")
      const fromSub = LLMScanner.scanForProtectedContent("../secrets/api.key", s, {
        paths: "token",
        base: path.join(dir.path, "src"),
      })
      expect(fromSub).toHaveLength(1)
      expect(LLMScanner.scanForProtectedContent(text, s, { paths: "off" })).toEqual([])
    } finally {
      await dir[Symbol.asyncDispose]()
    }
  })
  test("secrets can be switched off; copies and encoded copies are found with an index", async () => {
    const { dir, config } = await loaded()
    try {
      const index = SecurityFingerprint.create()
      SecurityFingerprint.add(index, "KEY=8f2c1e9a7b6d5c4e3f2a1b0c\n")
      const s = LLMScanner.create({ ...config, secrets: false }, { role: "viewer", scope: "llm", indexes: [index] })
      expect(LLMScanner.scanForProtectedContent("AKIAIOSFODNN7EXAMPLE", s)).toEqual([])
      const encoded = Buffer.from("the key is 8f2c1e9a7b6d5c4e3f2a1b0c").toString("base64")
      const kinds = LLMScanner.scanForProtectedContent(`x 8f2c1e9a7b6d5c4e3f2a1b0c y ${encoded}`, s).map((r) => r.kind)
      expect(kinds).toEqual(["copy", "encoded"])
    } finally {
      await dir[Symbol.asyncDispose]()
    }
  })
  test("encodings of encodings are undone (up to three layers) and the label names each", async () => {
    const { dir, config } = await loaded()
    try {
      const s = LLMScanner.create(config, { role: "viewer", scope: "llm" })
      const key = "AKIAIOSFODNN7EXAMPLE"
      const once = Buffer.from(`aws ${key} here`).toString("base64")
      const twice = Buffer.from(once).toString("hex")
      const thrice = Buffer.from(twice).toString("base64")
      const four = Buffer.from(thrice).toString("hex")
      const labels = (text: string) => LLMScanner.scanForProtectedContent(text, s).map((r) => r.label)
      expect(labels(`x ${twice} y`)).toEqual(["hex-encoded base64-encoded secret (aws-access-key-id)"])
      expect(labels(thrice)).toEqual(["base64-encoded hex-encoded base64-encoded secret (aws-access-key-id)"])
      expect(labels(four)).toEqual([])
    } finally {
      await dir[Symbol.asyncDispose]()
    }
  })
  test("percent-encoded secrets and copies (quote, quote_plus, a query string, base64 of them) are found", async () => {
    const { dir, config } = await loaded()
    try {
      const index = SecurityFingerprint.create()
      SecurityFingerprint.add(index, "KEY=8f2c1e9a7b6d5c4e3f2a1b0c\n")
      const s = LLMScanner.create(config, { role: "viewer", scope: "llm", indexes: [index] })
      const labels = (text: string) => LLMScanner.scanForProtectedContent(text, s).map((r) => r.label)
      const aws = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9kLp3nTs\n"
      // The value is written plainly; only the separator is escaped, so the secret's pattern does not see it.
      expect(labels(encodeURIComponent(aws))).toEqual(["url-encoded secret (aws-secret-access-key)"])
      expect(labels(`GET /x?d=${aws.replaceAll(" ", "+").replace("=", "%3D")}`)).toEqual([
        "url-encoded secret (aws-secret-access-key)",
      ])
      expect(labels(encodeURIComponent("KEY=8f2c1e9a7b6d5c4e3f2a1b0c\n"))).toContain(
        "url-encoded content of a protected file",
      )
      expect(labels(Buffer.from(encodeURIComponent(aws)).toString("base64"))).toEqual([
        "base64-encoded url-encoded secret (aws-secret-access-key)",
      ])
      expect(labels("100%25 done, see https://example.com/a%20b?q=x%2Fy")).toEqual([])
    } finally {
      await dir[Symbol.asyncDispose]()
    }
  })
  test("scanAndRedact redacts and keeps the line count", async () => {
    const { dir, config } = await loaded()
    try {
      const s = LLMScanner.create(config, { role: "viewer", scope: "tool" })
      const text = "1: ok\n2: // @secure-start\n3: x\n4: // @secure-end\n5: AKIAIOSFODNN7EXAMPLE"
      const out = scanAndRedact(text, s)
      expect(out.text).toBe(
        "1: ok\n2: [REDACTED: protected segment]\n3: \n4: \n5: [REDACTED: secret (aws-access-key-id)]",
      )
      expect(LLMScanner.summary(out.ranges).kinds.sort()).toEqual(["secret", "segment"])
    } finally {
      await dir[Symbol.asyncDispose]()
    }
  })
})
