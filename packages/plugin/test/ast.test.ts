import { describe, expect, test } from "bun:test"
import OpencodeBuiltins from "../index"
import { AstFeature } from "@opencode-builtins/core/ast/feature"
import { CommentCheckerFeature } from "@opencode-builtins/core/comment/feature"
import { tmpdir } from "../../core/test/fixture"
import { pluginInput as input } from "./input"

const SLOP =
  "// Initialize the total\nlet total = 0\n// Add the price\ntotal += price\n// Return the total\nreturn total\n"

async function edit(hooks: any, filePath: string) {
  const output = { title: "", output: "Edit applied successfully.", metadata: {} }
  const args = { filePath, oldString: "", newString: SLOP }
  await hooks["tool.execute.before"]?.({ tool: "edit", sessionID: "s", callID: "c" }, { args })
  await hooks["tool.execute.after"]({ tool: "edit", sessionID: "s", callID: "c", args }, output)
  return output.output
}

describe("AST tools and comment checker in the external plugin", () => {
  test("ids and sections; registered last in the plugin's feature order", () => {
    expect([AstFeature.id, AstFeature.section]).toEqual(["ast-grep", "ast"])
    expect([CommentCheckerFeature.id, CommentCheckerFeature.section]).toEqual(["comment-checker", "commentChecker"])
  })

  test("on stock OpenCode: both tools, and the comment note on edits (sensitivity normal by default)", async () => {
    await using dir = await tmpdir({ "a.ts": "foo(1)\n" })
    const hooks: any = await OpencodeBuiltins(input(dir.path).input)
    expect(Object.keys(hooks.tool)).toEqual(expect.arrayContaining(["ast_grep_search", "ast_grep_replace"]))
    const ctx = { directory: dir.path, worktree: dir.path, abort: new AbortController().signal, ask: async () => {} }
    expect(await hooks.tool.ast_grep_search.execute({ pattern: "foo($A)", lang: "typescript" }, ctx)).toStartWith(
      "Found 1 match in 1 file",
    )
    expect(await edit(hooks, dir.file("a.ts"))).toContain("Note: The generated code contains excessive comments.")
  })

  test("hasBuiltIn switches each off; options switch the checker off or change its sensitivity", async () => {
    await using dir = await tmpdir()
    const native: any = await OpencodeBuiltins(
      input(dir.path, (f) => f === "ast-grep" || f === "comment-checker").input,
    )
    expect(Object.keys(native.tool ?? {}).filter((t) => t.startsWith("ast_grep"))).toEqual([])
    expect(await edit(native, dir.file("a.ts"))).not.toContain("Note:")

    const off: any = await (OpencodeBuiltins as any)(input(dir.path).input, { commentChecker: { sensitivity: false } })
    expect(await edit(off, dir.file("a.ts"))).not.toContain("Note:")

    const { input: i, logs } = input(dir.path)
    const bad: any = await (OpencodeBuiltins as any)(i, { commentChecker: { sensitivity: "loud" } })
    expect(await edit(bad, dir.file("a.ts"))).toContain("Note:") // the default, normal, applies
    await Bun.sleep(1)
    expect(logs.some((l) => l.level === "error" && l.message.startsWith("commentChecker.sensitivity"))).toBe(true)
  })
})
