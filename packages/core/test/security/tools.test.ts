import { describe, expect, test } from "bun:test"
import { SecurityTools } from "../../security/tools"

const ctx = { directory: "/repo", home: "/home/me" }
const reqs = async (tool: string, args: unknown) =>
  (await SecurityTools.plan(tool, args, ctx))?.requests.map((r) => `${r.op} ${r.path}`)

describe("SecurityTools.plan", () => {
  test("built-ins by their path arguments", async () => {
    expect(await reqs("read", { filePath: "a" })).toEqual(["read /repo/a"])
    expect(await reqs("write", { filePath: "/abs/b", content: "" })).toEqual(["write /abs/b"])
    expect(await reqs("edit", { filePath: "c", oldString: "x", newString: "y" })).toEqual([
      "read /repo/c",
      "write /repo/c",
    ])
    // OpenCode applies every multiedit entry to the top-level filePath; an entry's own filePath is ignored.
    expect(
      await reqs("multiedit", { filePath: "d", edits: [{ filePath: "e", oldString: "1", newString: "2" }] }),
    ).toEqual(["read /repo/d", "write /repo/d"])
    expect(await reqs("glob", { pattern: "secrets/**/*.key", path: "." })).toEqual(["read /repo", "read /repo/secrets"])
    expect(await reqs("grep", { pattern: "x" })).toEqual(["read /repo"])
    expect(await reqs("list", { path: "sub" })).toEqual(["read /repo/sub"])
    expect(await reqs("batch", { tool_calls: [{ tool: "read", parameters: { filePath: "f" } }] })).toEqual([
      "read /repo/f",
    ])
  })
  test("tools with no files plan nothing; unknown tools are not planned", async () => {
    expect(await reqs("todowrite", { todos: [] })).toEqual([])
    expect(await SecurityTools.plan("some_plugin_tool", {}, ctx)).toBeUndefined()
    const batch = await SecurityTools.plan("batch", { tool_calls: [{ tool: "mystery", parameters: { p: "x" } }] }, ctx)
    expect(batch?.opaque).toEqual([{ tool: "mystery", args: { p: "x" } }])
  })
  test("missing arguments are errors the guard refuses", async () => {
    expect((await SecurityTools.plan("read", {}, ctx))?.error).toContain("no filePath")
    expect((await SecurityTools.plan("apply_patch", { patchText: "nothing" }, ctx))?.error).toContain(
      "cannot be checked",
    )
  })
  test("file tools take paths as OpenCode does: no ~ expansion, relative to the project", async () => {
    // `~/../x` names <dir>/x to OpenCode's read, write and edit; checking $HOME/../x would let another file change.
    expect(await reqs("write", { filePath: "~/../.opencode-security.json", content: "{}" })).toEqual([
      "write /repo/.opencode-security.json",
    ])
    expect(await reqs("read", { filePath: "~" })).toEqual(["read /repo/~"])
    expect(SecurityTools.toolPath("/abs/../x", "/repo")).toBe("/x")
  })
  test("apply_patch: each file as OpenCode reads it, a move's destination too", async () => {
    const patchText = [
      "*** Begin Patch",
      "*** Add File: n.txt",
      "+x",
      "*** Update File: a.txt",
      "*** Move to: b.txt",
      "@@",
      " ctx",
      "-old",
      "+new",
      "*** Delete File: c.txt",
      "*** End Patch",
    ].join("\n")
    expect(await reqs("apply_patch", { patchText })).toEqual([
      "write /repo/n.txt",
      "read /repo/a.txt",
      "write /repo/a.txt",
      "write /repo/b.txt",
      "read /repo/c.txt",
      "write /repo/c.txt",
    ])
  })
  test("apply_patch that could be read two ways is refused: a header ending in a carriage return", async () => {
    const patchText = "*** Begin Patch\n*** Delete File: .opencode-security.json\r\r\n*** End Patch"
    expect((await SecurityTools.plan("apply_patch", { patchText }, ctx))?.error).toContain("cannot be checked")
  })
  test("grep blocks widen with their path line", () => {
    const out = "Found 2 matches\n/repo/s/x:\n  Line 1: a\n  Line 2: b\n\n/repo/ok:\n  Line 3: c"
    const start = out.indexOf("/repo/s/x")
    const [r] = SecurityTools.widenGrepBlocks(out, [{ start, end: out.indexOf(":\n", start) + 1 }])
    expect(out.slice(r.start, r.end)).toBe("/repo/s/x:\n  Line 1: a\n  Line 2: b")
  })
})
