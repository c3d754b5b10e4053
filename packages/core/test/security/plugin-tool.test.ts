import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityPluginTool } from "../../security/plugin-tool"
import { tmpdir } from "../fixture"

describe("SecurityPluginTool", () => {
  test("strings at any depth, keys that look like paths, bounded", () => {
    const found = SecurityPluginTool.strings({ a: [{ b: "x" }], "./k": 1, n: 5 }).map((s) => `${s.at}=${s.text}`)
    expect(found).toEqual(["a[0].b=x", "{key}=./k"])
    const deep: any = {}
    let cur = deep
    for (let i = 0; i < 20; i++) cur = cur.next = { v: `level${i}` }
    expect(SecurityPluginTool.strings(deep).length).toBeLessThanOrEqual(SecurityPluginTool.LIMITS.depth)
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
