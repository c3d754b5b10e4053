import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import { ResourceFetch } from "../../resource/fetch"
import type { Resource } from "../../resource/schema"
import { md, tmpdir } from "../fixture"

const meta = (root: string, rel: string, extra: Partial<Resource.Metadata> = {}): Resource.Metadata => ({
  id: "doc",
  type: "task",
  path: `${root}/${rel}`,
  relativePath: rel,
  name: "Doc",
  domain: "common",
  tags: [],
  references: [],
  referencedBy: [],
  size: 0,
  lastModified: 0,
  ...extra,
})
const limits = { maxFileSize: 1024, fileReadTimeout: 5000 }

describe("ResourceFetch.read (checks made again at load time)", () => {
  test("markdown comes without its frontmatter, schemas whole, with the size measured now", async () => {
    await using dir = await tmpdir({
      "t.md": md({ title: "T" }, "\nBody line\n"),
      "s.json": '{ "title": "S" }',
    })
    const r = await ResourceFetch.read(meta(dir.path, "t.md"), { ...limits, root: dir.path })
    expect(r).toMatchObject({ ok: true, content: "Body line\n" })
    if (r.ok) expect(r.meta.size).toBeGreaterThan(10)
    const s = await ResourceFetch.read(meta(dir.path, "s.json", { type: "schema" }), { ...limits, root: dir.path })
    expect(s).toMatchObject({ ok: true, content: '{ "title": "S" }' })
  })

  test("a file that became a link outside the project is refused and its content never read", async () => {
    await using outside = await tmpdir({ "secret.md": "SECRET" })
    await using dir = await tmpdir()
    await fs.symlink(outside.file("secret.md"), dir.file("doc.md"))
    const r = await ResourceFetch.read(meta(dir.path, "doc.md"), { ...limits, root: dir.path })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.error.name).toBe("OutsideProject")
    expect(r.error.message).toBe(
      `Resource 'doc' (doc.md) resolves to ${outside.file("secret.md")}, outside the project; it is not loaded.`,
    )
    expect(JSON.stringify(r.error.toJSON())).not.toContain("SECRET")
  })

  test("a deleted file, a binary file and a file grown over the limit are refused with their reason", async () => {
    await using dir = await tmpdir({ "bin.md": new Uint8Array([0, 1]), "big.md": "z".repeat(2000) })
    const gone = await ResourceFetch.read(meta(dir.path, "gone.md"), { ...limits, root: dir.path })
    expect(!gone.ok && gone.error.toJSON()).toMatchObject({
      error: "FileReadError",
      reason: expect.stringContaining("no longer exists"),
    })
    const bin = await ResourceFetch.read(meta(dir.path, "bin.md"), { ...limits, root: dir.path })
    expect(!bin.ok && bin.error.toJSON()).toMatchObject({
      error: "FileReadError",
      reason: "contains NUL bytes (binary file)",
    })
    const big = await ResourceFetch.read(meta(dir.path, "big.md", { size: 10 }), { ...limits, root: dir.path })
    expect(!big.ok && big.error.toJSON()).toMatchObject({ error: "FileTooLarge", size: 2000, max: 1024 })
  })

  test("the security check sees the real path and its denial is returned", async () => {
    await using dir = await tmpdir({ "real.md": "x" })
    await fs.symlink(dir.file("real.md"), dir.file("alias.md"))
    const seen: string[] = []
    const access = async (p: string, op: string) => (seen.push(`${op}:${p}`), "denied by rule secrets/**")
    const r = await ResourceFetch.read(meta(dir.path, "alias.md"), { ...limits, root: dir.path, access })
    expect(seen).toEqual([`read:${dir.file("real.md")}`])
    expect(!r.ok && r.error.toJSON()).toMatchObject({ error: "AccessDenied", reason: "denied by rule secrets/**" })
  })
})
