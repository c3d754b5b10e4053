import { describe, expect, test } from "bun:test"
import fs from "fs"
import { guardFor, project } from "./fixture"

// After a write tool, a file whose write-locked segment changed anyway (a formatter OpenCode runs after an edit) is
// put back from the snapshot taken before the call. The snapshot was text read as "utf8": a Latin-1 file was put back
// with U+FFFD for each accented letter, outside the segment too. It is now put back byte for byte.
describe("a write-locked segment changed after an edit: the file is put back byte for byte", () => {
  test("a Latin-1 file comes back with its own bytes", async () => {
    const text = "# -*- coding: latin-1 -*-\n# Auteur: José\n# @locked-start\nRATE = 42\n# @locked-end\nprint('café')\n"
    await using dir = await project({ "src/l1.py": "" }, undefined)
    const file = dir.file("src/l1.py")
    fs.writeFileSync(file, Buffer.from(text, "latin1"))
    const guard = await guardFor(dir.path)
    try {
      const args = { filePath: "src/l1.py", oldString: "print('caf", newString: "print('the caf" }
      const call = { tool: "edit", args, callID: "call_latin1" }
      expect((await guard.before(call)).allowed).toBe(true)
      // What the edit and a formatter did: the line outside the segment and the locked value changed.
      fs.writeFileSync(file, Buffer.from(text.replace("print('caf", "print('the caf").replace("42", "0"), "latin1"))
      const out = guard.after(call, "Edit applied successfully.")
      expect(out).toContain("the file was put back as it was before this call")
      expect(fs.readFileSync(file)).toEqual(Buffer.from(text, "latin1"))
    } finally {
      guard.close()
    }
  })
})
