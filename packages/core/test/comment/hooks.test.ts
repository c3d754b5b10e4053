import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import { CommentHooks } from "../../comment/hooks"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"

const SLOP =
  "// Initialize the total\nlet total = 0\n// Add the price\ntotal += price\n// Return the total\nreturn total\n"
const NOTE = "Note: The generated code contains excessive comments."

async function call(hooks: any, tool: string, args: any, callID = "c1", write?: () => Promise<void>) {
  await hooks["tool.execute.before"]({ tool, sessionID: "s", callID }, { args })
  await write?.()
  const output = { title: "", output: "Edit applied successfully.", metadata: {} }
  await hooks["tool.execute.after"]({ tool, sessionID: "s", callID, args }, output)
  return output.output
}

describe("comment checker hooks", () => {
  test("edit, multiedit, write and apply_patch get the note appended once per file", async () => {
    await using dir = await tmpdir({ "a.ts": "old\n" })
    const hooks = CommentHooks.create({
      host: { directory: dir.path, worktree: dir.path, log: Logger.silent },
      sensitivity: "normal",
    })
    const edit = await call(hooks, "edit", { filePath: dir.file("a.ts"), oldString: "old", newString: SLOP })
    expect(edit).toStartWith("Edit applied successfully.\n\n" + NOTE)
    expect(edit.match(/^- a\.ts:/gm)).toHaveLength(1)
    const multi = await call(hooks, "multiedit", {
      filePath: dir.file("a.ts"),
      edits: [
        { filePath: dir.file("a.ts"), oldString: "x", newString: SLOP },
        { filePath: dir.file("a.ts"), oldString: "y", newString: "// Create the map\nconst m = new Map()" },
      ],
    })
    expect(multi.match(/^- a\.ts:/gm)).toHaveLength(1)
    const patch = await call(hooks, "apply_patch", {
      patchText: `*** Begin Patch\n*** Add File: b.py\n${SLOP.replaceAll("//", "#")
        .split("\n")
        .map((l) => "+" + l)
        .join("\n")}\n*** Add File: c.ts\n+${SLOP.split("\n").join("\n+")}\n*** End Patch`,
    })
    expect(patch.match(/^- (b\.py|c\.ts):/gm)).toEqual(["- b.py:", "- c.ts:"])
  })

  test("write is compared with the file as it was before the call: an unchanged commented file is not flagged", async () => {
    await using dir = await tmpdir({ "a.ts": SLOP })
    const hooks = CommentHooks.create({
      host: { directory: dir.path, worktree: dir.path, log: Logger.silent },
      sensitivity: "strict",
    })
    const content = SLOP + "export const done = true\n"
    const out = await call(hooks, "write", { filePath: "a.ts", content }, "w1", () =>
      fs.writeFile(dir.file("a.ts"), content),
    )
    expect(out).toBe("Edit applied successfully.")
    // The same content written as a new file is flagged.
    const fresh = await call(hooks, "write", { filePath: "new.ts", content }, "w2", () =>
      fs.writeFile(dir.file("new.ts"), content),
    )
    expect(fresh).toContain(NOTE)
  })

  test("other tools, clean changes and sensitivity false are left alone; a checker failure never breaks the tool", async () => {
    await using dir = await tmpdir()
    const log = Logger.memory()
    const host = { directory: dir.path, worktree: dir.path, log }
    const hooks = CommentHooks.create({ host, sensitivity: "normal" })
    expect(await call(hooks, "read", { filePath: "a.ts" })).toBe("Edit applied successfully.")
    expect(await call(hooks, "edit", { filePath: "a.ts", oldString: "a", newString: "b" })).toBe(
      "Edit applied successfully.",
    )
    const off = CommentHooks.create({ host, sensitivity: false })
    expect(await call(off, "edit", { filePath: "a.ts", oldString: "", newString: SLOP })).toBe(
      "Edit applied successfully.",
    )
    const output = { title: "", output: "ok", metadata: {} }
    await hooks["tool.execute.after"]!(
      { tool: "multiedit", sessionID: "s", callID: "x", args: { filePath: "a.ts", edits: [null] } } as any,
      output,
    )
    expect(output.output).toBe("ok")
  })

  test("a file the security policy protects from reading is not read before a write", async () => {
    await using dir = await tmpdir({ "secret.ts": SLOP })
    const asked: string[] = []
    const host = {
      directory: dir.path,
      worktree: dir.path,
      log: Logger.silent,
      access: async (file: string, op: string) => (asked.push(`${op}:${file}`), "protected"),
    }
    const hooks = CommentHooks.create({ host, sensitivity: "normal" })
    const out = await call(hooks, "write", { filePath: "secret.ts", content: SLOP }, "p1")
    expect(asked).toEqual([`read:${dir.file("secret.ts")}`])
    expect(out).toContain(NOTE) // judged as new content, since the old one could not be looked at
  })

  test("a write is judged on the text the role may see: protected segments masked, a file kept from the model new", async () => {
    // Red team GF6: a line of the new content equal to a protected one counted as "not added", so the note told the
    // model whether a guessed line was in the segment. Masked, every line of the segment is new to it.
    await using dir = await tmpdir({ "seg.ts": `// @s\n${SLOP}// @e\n`, "model.ts": SLOP, "plain.ts": SLOP })
    const asked: string[] = []
    const host = {
      directory: dir.path,
      worktree: dir.path,
      log: Logger.silent,
      segments: () => ({ read: [{ start: "@s", end: "@e" }], write: [] }),
      access: async (file: string, op: string) => (
        asked.push(`${op}:${file}`),
        op === "llm" && file === dir.file("model.ts") ? "protected" : undefined
      ),
    }
    const hooks = CommentHooks.create({ host, sensitivity: "normal" })
    expect(await call(hooks, "write", { filePath: "seg.ts", content: `// @s\n${SLOP}// @e\n` }, "w1")).toContain(NOTE)
    // `llm` denied on the whole file (its content may not reach the model): judged as new.
    expect(await call(hooks, "write", { filePath: "model.ts", content: SLOP }, "w2")).toContain(NOTE)
    expect(asked).toContain(`llm:${dir.file("model.ts")}`)
    // A file without a segment is still compared with its text: an unchanged rewrite adds nothing.
    expect(await call(hooks, "write", { filePath: "plain.ts", content: SLOP }, "w3")).toBe("Edit applied successfully.")
  })
})
