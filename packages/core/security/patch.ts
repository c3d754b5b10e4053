/**
 * Reads the paths an `apply_patch` call touches, from its patch text: OpenCode's envelope format (`*** Add File:`,
 * `*** Update File:` with optional `*** Move to:`, `*** Delete File:`) and, for robustness, unified diff headers
 * (`--- a/x` / `+++ b/x`). Also returns the removed lines of each updated file, so edits inside
 * write-protected segments can be refused.
 *
 * @example
 * SecurityPatch.parse("*** Begin Patch\n*** Delete File: .opencode-security.json\n*** End Patch").files
 * // [{ path: ".opencode-security.json", change: "delete", removed: [] }]
 */
export namespace SecurityPatch {
  export type File = {
    path: string
    change: "add" | "update" | "delete" | "move-from" | "move-to"
    /** Lines the patch removes from this file (update only). */
    removed: string[]
  }

  export function parse(text: string): { files: File[]; problems: string[] } {
    const files: File[] = []
    const problems: string[] = []
    const lines = text.split(/\r?\n/)
    let current: File | undefined
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]
      const header = /^\*\*\* (Add|Update|Delete) File:\s*(.*)$/.exec(line)
      if (header) {
        const p = header[2].trim()
        if (!p) problems.push(`line ${i + 1}: a file header without a path`)
        const change = header[1] === "Add" ? "add" : header[1] === "Delete" ? "delete" : "update"
        current = { path: p, change, removed: [] }
        files.push(current)
        continue
      }
      const move = /^\*\*\* Move to:\s*(.*)$/.exec(line)
      if (move && current) {
        current.change = "move-from"
        files.push({ path: move[1].trim(), change: "move-to", removed: [] })
        continue
      }
      const minus = /^--- (?:a\/)?(.+?)(?:\t.*)?$/.exec(line)
      const plus = minus && /^\+\+\+ (?:b\/)?(.+?)(?:\t.*)?$/.exec(lines[i + 1] ?? "")
      if (minus && plus) {
        const from = minus[1].trim()
        const to = plus[1].trim()
        if (from !== "/dev/null")
          files.push((current = { path: from, change: to === "/dev/null" ? "delete" : "update", removed: [] }))
        if (to !== "/dev/null" && to !== from)
          files.push((current = { path: to, change: from === "/dev/null" ? "add" : "move-to", removed: [] }))
        i++
        continue
      }
      if (current && (current.change === "update" || current.change === "move-from") && line.startsWith("-"))
        current.removed.push(line.slice(1))
    }
    return { files: files.filter((f) => f.path), problems }
  }
}
