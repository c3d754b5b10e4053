import { describe, expect, test } from "bun:test"
import fs from "fs"
import { guardFor, project } from "./fixture"

// A file with a write-locked segment that a tool call changed anyway (another plugin's or an MCP tool, whose writes
// are not known before) is put back from the snapshot taken before the call. The snapshot was text read as "utf8": a
// Latin-1 file was put back with U+FFFD for each accented letter, outside the segment too; it is now put back byte
// for byte. And the comparison was of "utf8" text, where a segment's Latin-1 byte turned into U+FFFD (the file
// rewritten as UTF-8) reads the same before and after: it now compares bytes too (red team Z3-4).
const TEXT =
  "# -*- coding: latin-1 -*-\n# Auteur: José\n# @locked-start\nRATE = 42  # José\n# @locked-end\nprint('café')\n"

describe("a write-locked segment of a Latin-1 file changed by a tool call: the file is put back byte for byte", () => {
  for (const [name, change] of [
    [
      "an ASCII change in the segment",
      (t: string) => Buffer.from(t.replace("print('caf", "print('the caf").replace("42", "0"), "latin1"),
    ],
    // What a tool that reads the file as "utf8" and writes it back does: every Latin-1 byte becomes EF BF BD.
    [
      "the file rewritten as UTF-8 (U+FFFD in the segment)",
      (t: string) =>
        Buffer.from(Buffer.from(t, "latin1").toString("utf8").replace("print('caf", "print('the caf"), "utf8"),
    ],
  ] as const) {
    test(`${name}: the file comes back with its own bytes`, async () => {
      await using dir = await project({ "src/l1.py": "" }, undefined)
      const file = dir.file("src/l1.py")
      fs.writeFileSync(file, Buffer.from(TEXT, "latin1"))
      const guard = await guardFor(dir.path)
      try {
        const call = { tool: "other_plugin_rewrite", args: { target: "src" }, callID: "call_latin1" }
        expect((await guard.before(call)).allowed).toBe(true)
        fs.writeFileSync(file, change(TEXT))
        const out = guard.after(call, "done")
        expect(out).toContain("the file was put back as it was before this call")
        expect(fs.readFileSync(file)).toEqual(Buffer.from(TEXT, "latin1"))
      } finally {
        guard.close()
      }
    })
  }

  for (const [tool, args] of [
    ["edit", { filePath: "src/l1.py", oldString: "print('caf", newString: "print('the caf" }],
    ["apply_patch", { patchText: "*** Begin Patch\n*** Update File: src/l1.py\n@@\n-x = 1\n+x = 2\n*** End Patch" }],
  ] as const) {
    test(`OpenCode's ${tool} tool is refused up front in such a file (it rewrites the whole file as UTF-8)`, async () => {
      await using dir = await project({ "src/l1.py": "" }, undefined)
      const file = dir.file("src/l1.py")
      fs.writeFileSync(file, Buffer.from(TEXT + "x = 1\n", "latin1"))
      const guard = await guardFor(dir.path)
      try {
        const r = await guard.before({ tool, args, callID: `call_${tool}` }).catch((e: Error) => e)
        expect(r instanceof Error ? r.message : JSON.stringify(r)).toContain("not UTF-8 text")
      } finally {
        guard.close()
      }
    })
  }
})
