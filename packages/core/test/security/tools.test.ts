import { describe, expect, test } from "bun:test"
import { SecurityPatch } from "../../security/patch"
import { SecurityTools } from "../../security/tools"

const ctx = { directory: "/repo", home: "/home/me" }
const reqs = async (tool: string, args: unknown) =>
  (await SecurityTools.plan(tool, args, ctx))?.requests.map((r) => `${r.op} ${r.path}`)

describe("SecurityTools.plan", () => {
  test("built-ins by their path arguments", async () => {
    expect(await reqs("read", { filePath: "a" })).toEqual(["read /repo/a"])
    expect(await reqs("write", { filePath: "/abs/b", content: "" })).toEqual(["write /abs/b"])
    expect(await reqs("edit", { filePath: "~/c", oldString: "x", newString: "y" })).toEqual([
      "read /home/me/c",
      "write /home/me/c",
    ])
    expect(
      await reqs("multiedit", { filePath: "d", edits: [{ filePath: "e", oldString: "1", newString: "2" }] }),
    ).toEqual(["write /repo/e", "read /repo/d", "read /repo/e"])
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
    expect((await SecurityTools.plan("apply_patch", { patchText: "nothing" }, ctx))?.error).toContain("names no file")
  })
  test("grep blocks widen with their path line", () => {
    const out = "Found 2 matches\n/repo/s/x:\n  Line 1: a\n  Line 2: b\n\n/repo/ok:\n  Line 3: c"
    const start = out.indexOf("/repo/s/x")
    const [r] = SecurityTools.widenGrepBlocks(out, [{ start, end: out.indexOf(":\n", start) + 1 }])
    expect(out.slice(r.start, r.end)).toBe("/repo/s/x:\n  Line 1: a\n  Line 2: b")
  })
})

describe("SecurityPatch.parse", () => {
  test("envelope format: add, update with move, delete, removed lines", () => {
    const text = [
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
    expect(SecurityPatch.parse(text).files).toEqual([
      { path: "n.txt", change: "add", removed: [] },
      { path: "a.txt", change: "move-from", removed: ["old"] },
      { path: "b.txt", change: "move-to", removed: [] },
      { path: "c.txt", change: "delete", removed: [] },
    ])
  })
  test("unified diff headers", () => {
    expect(
      SecurityPatch.parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/gone\n+++ /dev/null\n").files.map(
        (f) => `${f.change} ${f.path}`,
      ),
    ).toEqual(["update x", "delete gone"])
  })
})
