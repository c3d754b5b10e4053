import { describe, expect, test } from "bun:test"
import { AddedLines } from "../../comment/added"

describe("what a change added", () => {
  test("edit: lines of newString absent from oldString", () => {
    const [doc] = AddedLines.fromEdit("/r/a.ts", "a()\nb()", "a()\n// Call b\nb()\nc()")
    expect(doc.lines).toEqual(["a()", "// Call b", "b()", "c()"])
    expect(doc.added).toEqual([false, true, false, true])
    expect(doc.before).toBe("a()\nb()")
  })

  test("write: everything is new for a new file; only the differing lines for an overwrite", () => {
    expect(AddedLines.fromWrite("/r/a.ts", "", "x\ny")[0].added).toEqual([true, true])
    const [doc] = AddedLines.fromWrite("/r/a.ts", "x\ny\n", "x\n// new\ny\n")
    expect(doc.added).toEqual([false, true, false, false])
    expect(doc.firstLine).toBe(1)
  })

  test("multiedit: one document per edit, each edit's own file", () => {
    const docs = AddedLines.fromMultiEdit("/r/a.ts", [
      { filePath: "/r/a.ts", oldString: "a", newString: "a\n// b" },
      { oldString: "c", newString: "d" },
      { oldString: "skipped" } as any,
    ])
    expect(docs.map((d) => [d.file, d.added])).toEqual([
      ["/r/a.ts", [false, true]],
      ["/r/a.ts", [true]],
    ])
  })

  test("apply_patch: + lines of added and updated files (moved files under the new name), context kept, hunks apart", () => {
    const patch = [
      "*** Begin Patch",
      "*** Add File: src/new.ts",
      "+// Create the thing",
      "+export const thing = 1",
      "*** Update File: src/old.ts",
      "*** Move to: src/moved.ts",
      "@@ function f() {",
      " const a = 1",
      "-// old note",
      "+// Return a",
      "+return a",
      "@@",
      " tail()",
      "+// more",
      "*** Delete File: src/gone.ts",
      "*** End Patch",
    ].join("\n")
    const docs = AddedLines.fromPatch(patch, "/r")
    expect(docs.map((d) => d.file)).toEqual(["/r/src/new.ts", "/r/src/moved.ts"])
    expect(docs[0]).toMatchObject({
      lines: ["// Create the thing", "export const thing = 1"],
      added: [true, true],
      firstLine: 1,
    })
    expect(docs[1].lines).toEqual(["const a = 1", "// Return a", "return a", "", "tail()", "// more"])
    expect(docs[1].added).toEqual([false, true, true, false, false, true])
    // The section's old text as far as the hunks show it: context and removed lines, hunks apart.
    expect(docs[1].before).toBe("const a = 1\n// old note\n\ntail()")
    expect(AddedLines.fromPatch("not a patch at all", "/r")).toEqual([])
  })
})
