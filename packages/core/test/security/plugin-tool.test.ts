import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityPluginTool } from "../../security/plugin-tool"
import { tmpdir } from "../fixture"

describe("SecurityPluginTool", () => {
  test("strings at any depth, and keys that could name a file, bounded", () => {
    const found = SecurityPluginTool.strings({ a: [{ b: "x" }], "./k": 1, "f.md": 2, n: 5 }).map(
      (s) => `${s.at}=${s.text}`,
    )
    expect(found).toEqual(["a[0].b=x", "{key}=./k", "{key}=f.md"])
    const deep: any = {}
    let cur = deep
    for (let i = 0; i < 20; i++) cur = cur.next = { v: `level${i}` }
    expect(SecurityPluginTool.strings(deep).length).toBeLessThanOrEqual(SecurityPluginTool.LIMITS.depth)
  })
  test("arguments past a limit are never read as complete: the scan says what was left unread", () => {
    const ctx = { directory: "/repo", home: "/h" }
    const { LIMITS } = SecurityPluginTool
    expect(SecurityPluginTool.scan({ paths: ["a.md", "secrets/x"] }, ctx).incomplete).toBeUndefined()
    const many = SecurityPluginTool.scan({ paths: [...Array(LIMITS.strings).fill("x"), "secrets/x"] }, ctx)
    expect(many.incomplete).toBe(`more than ${LIMITS.strings} strings`)
    let deep: any = "secrets/x"
    for (let i = 0; i <= LIMITS.depth; i++) deep = [deep]
    expect(SecurityPluginTool.scan({ a: deep }, ctx).incomplete).toStartWith(
      `nested deeper than ${LIMITS.depth} levels`,
    )
    const huge = SecurityPluginTool.scan({ q: "x".repeat(LIMITS.text + 1) }, ctx)
    expect(huge.incomplete).toBe(`a string of ${LIMITS.text + 1} characters (at q)`)
    const names = Array.from({ length: LIMITS.candidates + 1 }, (_, i) => `f${i}.md`).join(" ")
    expect(SecurityPluginTool.scan({ q: names }, ctx).incomplete).toBe(
      `more than ${LIMITS.candidates} path-like values`,
    )
  })
  // A map of file name to content, and a list of names with spaces one per line, reached protected files unchecked.
  test("bare file names as keys, names with spaces as lines of a list or quoted in a text", () => {
    const ctx = { directory: "/repo", home: "/h" }
    const paths = (args: unknown) => SecurityPluginTool.scan(args, ctx).candidates.map((c) => c.path)
    expect(paths({ files: { "opencode.json": '{"plugin":["x"]}' } })).toContain("/repo/opencode.json")
    expect(paths({ paths: "README.md\ndocs/Private Notes.md" })).toContain("/repo/docs/Private Notes.md")
    expect(paths({ q: 'please open "docs/Private Notes.md" now' })).toContain("/repo/docs/Private Notes.md")
    expect(paths({ q: "open 'docs/Private Notes.md' now" })).toContain("/repo/docs/Private Notes.md")
    for (const list of [
      "README.md,docs/Private Notes.md",
      "README.md;docs/Private Notes.md",
      "README.md\tdocs/Private Notes.md",
      "`docs/Private Notes.md`",
      "docs/Private%20Notes.md",
      "docs/Private\\ Notes.md",
    ])
      expect([list, paths({ q: list })]).toEqual([list, expect.arrayContaining(["/repo/docs/Private Notes.md"])])
  })
  test("a long token is resolved as the tool would resolve it; file: URLs with one slash are paths too", () => {
    const ctx = { directory: "/repo", home: "/h" }
    const dots = "/" + "./".repeat(2100) + "repo/.env"
    expect(dots.length).toBeGreaterThan(4096)
    const paths = (args: unknown) => SecurityPluginTool.scan(args, ctx).candidates.map((c) => c.path)
    expect(paths({ p: dots })).toContain("/repo/.env")
    expect(paths({ p: "file:/repo/.env" })).toContain("/repo/.env")
    expect(paths({ p: "FILE:///repo/.env" })).toContain("/repo/.env")
    // A path longer than the kernel accepts once normalised names no file, and is no candidate.
    expect(paths({ p: "/repo/" + "d/".repeat(2100) + "x" })).toEqual([])
    // A 1 MB string is read whole: the path at its end is found.
    expect(paths({ q: "word ".repeat(200_000) + "secrets/x" })).toContain("/repo/secrets/x")
  })
  test("candidates: whole strings and path-like tokens, resolved against the project, cwd and ~", async () => {
    await using dir = await tmpdir({ "docs/a.md": "x" })
    const c = SecurityPluginTool.candidates(
      {
        q: "please read docs/a.md now",
        f: "~/notes.txt",
        u: `file://${dir.path}/docs/a.md`,
        opt: "--out=build/x.json",
      },
      { directory: dir.path, home: "/home/me", cwd: path.join(dir.path, "docs") },
    )
    const paths = c.map((x) => x.path)
    expect(paths).toContain(path.join(dir.path, "docs/a.md"))
    expect(paths).toContain("/home/me/notes.txt")
    expect(paths).toContain(path.join(dir.path, "build/x.json"))
    expect(c.find((x) => x.path === path.join(dir.path, "docs/a.md"))?.exists).toBe(true)
    expect(fs.existsSync(path.join(dir.path, "build"))).toBe(false)
  })
  test("serialise: strings as they are, objects as JSON, cycles survive", () => {
    expect(SecurityPluginTool.serialise("s")).toBe("s")
    expect(SecurityPluginTool.serialise({ a: 1 })).toBe('{\n  "a": 1\n}')
    const cyclic: any = {}
    cyclic.self = cyclic
    expect(SecurityPluginTool.serialise(cyclic)).toBe("[object Object]")
    expect(SecurityPluginTool.serialise(undefined)).toBe("")
  })
})
