import { diffArrays } from "diff"
import path from "path"

/**
 * What a file-changing tool call added, as documents of lines with an "added" flag per line, so that only comments
 * the change introduced are judged. Sources:
 *
 * - `edit`: `oldString` → `newString`; `multiedit`: each of its edits; `write`: the file's content before the call
 *   (captured by `tool.execute.before`) → `content`; `apply_patch`: the `+` lines of each file section of
 *   `patchText` (`*** Add File` / `*** Update File`, honouring `*** Move to`), with the hunks' context lines.
 * - `before` holds the text the change replaced, so that an existing comment on a changed line is not re-judged: the
 *   old string of an edit, the file of a write, a patch section's context and removed lines (its old text as far as
 *   the hunks show it, so that a comment re-wrapped around an unchanged line is whole in it).
 *
 * @example
 * AddedLines.fromEdit("/repo/a.ts", "x = 1", "// Set x\nx = 1")
 * // [{ file: "/repo/a.ts", lines: ["// Set x", "x = 1"], added: [true, false], before: "x = 1" }]
 */
export namespace AddedLines {
  export type Document = {
    file: string
    lines: string[]
    added: boolean[]
    /** Text the change replaced or removed (to recognise comments that already existed). */
    before: string
    /** 1-based line number of `lines[0]` in the file, when known. */
    firstLine?: number
  }

  const split = (text: string) => text.replace(/\r\n?/g, "\n").split("\n")

  /**
   * Lines of `after` with those absent from `before` (by line diff) marked as added.
   *
   * @example
   * AddedLines.diff("/r/a.ts", "a\nb", "a\n// c\nb").added // [false, true, false]
   */
  export function diff(file: string, before: string, after: string, firstLine?: number): Document {
    const oldLines = before ? split(before) : []
    const newLines = split(after)
    const added: boolean[] = []
    if (!oldLines.length) added.push(...newLines.map(() => true))
    else
      for (const part of diffArrays(oldLines, newLines)) {
        if (part.removed) continue
        for (let i = 0; i < part.count!; i++) added.push(!!part.added)
      }
    return { file, lines: newLines, added, before, firstLine }
  }

  /**
   * The document of an `edit` call.
   *
   * @example
   * AddedLines.fromEdit("/r/a.ts", "x()", "// Call x\nx()")[0].added // [true, false]
   */
  export function fromEdit(file: string, oldString: string, newString: string): Document[] {
    return [diff(file, oldString, newString)]
  }

  /**
   * The document of a `write` call, against the file content before it.
   *
   * @example
   * AddedLines.fromWrite("/r/a.ts", "", "// A\na()")[0].firstLine // 1
   */
  export function fromWrite(file: string, before: string, content: string): Document[] {
    return [diff(file, before, content, 1)]
  }

  /**
   * The documents of a `multiedit` call, one per edit.
   *
   * @example
   * AddedLines.fromMultiEdit("/r/a.ts", [{ oldString: "a", newString: "b" }]).length // 1
   */
  export function fromMultiEdit(file: string, edits: { filePath?: string; oldString?: string; newString?: string }[]) {
    return edits
      .filter((e) => typeof e?.newString === "string")
      .map((e) => diff(e.filePath || file, e.oldString ?? "", e.newString!))
  }

  /**
   * Documents of an apply_patch `patchText` (relative paths resolve against `directory`). Malformed input yields the
   * sections that could be read; it never throws.
   *
   * @example
   * AddedLines.fromPatch("*** Begin Patch\n*** Add File: a.py\n+# Hi\n*** End Patch", "/r")[0].file // "/r/a.py"
   */
  export function fromPatch(patchText: string, directory: string): Document[] {
    const docs: Document[] = []
    // `old`: the section's text before the patch, as far as the hunks show it (context and removed lines).
    let current: { file: string; lines: string[]; added: boolean[]; old: string[]; kind: "add" | "update" } | undefined
    const finish = () => {
      if (current && current.added.some(Boolean))
        docs.push({
          file: current.file,
          lines: current.lines,
          added: current.added,
          before: current.old.join("\n"),
          firstLine: current.kind === "add" ? 1 : undefined,
        })
      current = undefined
    }
    const resolve = (p: string) => path.resolve(directory, p.trim())
    for (const raw of split(patchText)) {
      if (raw.startsWith("*** Add File:")) {
        finish()
        current = { file: resolve(raw.slice(13)), lines: [], added: [], old: [], kind: "add" }
      } else if (raw.startsWith("*** Update File:")) {
        finish()
        current = { file: resolve(raw.slice(16)), lines: [], added: [], old: [], kind: "update" }
      } else if (raw.startsWith("*** Move to:")) {
        if (current) current.file = resolve(raw.slice(12))
      } else if (raw.startsWith("*** Delete File:") || raw.startsWith("*** End Patch")) {
        finish()
      } else if (raw.startsWith("*** ")) {
        continue // *** Begin Patch, *** End of File
      } else if (current) {
        if (raw.startsWith("@@")) {
          // A hunk boundary: the lines on either side are not adjacent in the file.
          if (current.lines.length) {
            current.lines.push("")
            current.added.push(false)
          }
          if (current.old.length) current.old.push("")
        } else if (raw.startsWith("+")) {
          current.lines.push(raw.slice(1))
          current.added.push(true)
        } else if (raw.startsWith("-")) {
          current.old.push(raw.slice(1))
        } else if (current.kind === "update") {
          const line = raw.startsWith(" ") ? raw.slice(1) : raw
          current.lines.push(line)
          current.added.push(false)
          current.old.push(line)
        }
      }
    }
    finish()
    return docs
  }
}
