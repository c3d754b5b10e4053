import fs from "fs"
import path from "path"
import { Dependencies } from "../util/dependencies"
import { Encoding } from "../util/encoding"

/**
 * Which READMEs a read of a file may bring in, and the block that carries one.
 *
 * - The folder chain: the file's folder, then each parent, inside the project bound (the worktree; the project
 *   directory when there is no git worktree, OpenCode's worktree then being `/`). A file outside the bound brings in
 *   nothing, and neither does a README whose real path (symbolic links resolved) leaves it.
 * - The project directory and its ancestors are the root: their README only with `includeRoot`.
 * - A file inside a folder that holds installed dependencies brings in nothing: a dependency's README documents the
 *   dependency, not the project. Those folders are the ones the common package managers install into (`DEPENDENCIES`:
 *   `node_modules`, Go's and Composer's and Bundler's `vendor`, Python's `.venv`/`venv`/`site-packages`, CocoaPods'
 *   `Pods`, vendored `third_party`, …) and any Python virtual environment (a folder holding `pyvenv.cfg`, whatever its
 *   name); `.git` too.
 * - One README per folder: the first of `names` found, matched case-insensitively as GitHub does (`README.MD`,
 *   `ReadMe.md`); among several spellings of one name, the exact one, then the first in code point order.
 *
 * @example
 * ReadmeInject.chain("/r/pkg/a/x.ts", { directory: "/r", worktree: "/r", includeRoot: false })
 * // ["/r/pkg/a", "/r/pkg"]
 */
export namespace ReadmeInject {
  /** Matched case-insensitively (`readme.md`, `README.MD` …), in this order. */
  export const DEFAULT_NAMES = ["README.md", "README.markdown"]
  /** Folder names that hold installed dependencies (`Dependencies.FOLDERS`, shared with the lsp tool's walks). */
  export const DEPENDENCIES = Dependencies.FOLDERS
  /** The file that marks a Python virtual environment's folder (PEP 405). */
  export const VENV_MARKER = Dependencies.VENV_MARKER
  /** OpenCode's own estimate: about four characters per token. */
  export const CHARS_PER_TOKEN = 4
  export const HEADER = "README from: "

  export type Bounds = { directory: string; worktree: string; includeRoot: boolean }

  /** The folder that bounds injection: the worktree, or the directory when the worktree is `/` or does not hold it. */
  export function bound(b: Pick<Bounds, "directory" | "worktree">): string {
    const dir = path.resolve(b.directory)
    const tree = path.resolve(b.worktree || b.directory)
    return tree !== path.parse(tree).root && inside(dir, tree) ? tree : dir
  }

  /** True when `child` is `parent` or lies below it. */
  export function inside(child: string, parent: string): boolean {
    if (child === parent) return true
    const rel = path.relative(parent, child)
    return !!rel && !rel.startsWith("..") && !path.isAbsolute(rel)
  }

  /**
   * The folders whose README a read of `file` may bring in, nearest first (empty when the file is outside the bound
   * or inside a dependency folder, see `DEPENDENCIES`).
   */
  export function chain(file: string, b: Bounds): string[] {
    const target = path.resolve(b.directory, file)
    const top = bound(b)
    if (!inside(target, top) || target === top) return []
    const rel = path.relative(top, target).split(path.sep)
    if (rel.slice(0, -1).some((s) => DEPENDENCIES.has(s))) return []
    const directory = path.resolve(b.directory)
    const folders: string[] = []
    for (let dir = path.dirname(target); inside(dir, top); dir = path.dirname(dir)) {
      if (dir !== top && isFile(path.join(dir, VENV_MARKER))) return []
      const root = inside(directory, dir)
      if (!root || b.includeRoot) folders.push(dir)
      if (dir === top) break
    }
    return folders
  }

  function isFile(file: string): boolean {
    try {
      return fs.statSync(file).isFile()
    } catch {
      return false
    }
  }

  /**
   * The README of `folder`, or undefined: for each of `names` in turn, a file of that name in any case (the exact
   * spelling first, then the others in code point order), with the name it has on disk.
   *
   * @example
   * ReadmeInject.find("/r/examples/chatbot", ReadmeInject.DEFAULT_NAMES) // "/r/examples/chatbot/README.MD"
   */
  export function find(folder: string, names: readonly string[]): string | undefined {
    // The usual case, the first name as spelled, needs no listing of the folder (reads call this for every folder up).
    if (names.length && isFile(path.join(folder, names[0]))) return path.join(folder, names[0])
    let entries: string[]
    try {
      entries = fs.readdirSync(folder).sort()
    } catch {
      return undefined
    }
    for (const name of names) {
      const lower = name.toLowerCase()
      const spellings = entries.filter((e) => e !== name && e.toLowerCase() === lower)
      for (const entry of entries.includes(name) ? [name, ...spellings] : spellings) {
        const file = path.join(folder, entry)
        if (isFile(file)) return file
      }
    }
    return undefined
  }

  /** True when the real path of `file` (links resolved) stays inside the bound's real path. */
  export function staysInside(file: string, b: Pick<Bounds, "directory" | "worktree">): boolean {
    try {
      return inside(fs.realpathSync(file), fs.realpathSync(bound(b)))
    } catch {
      return false
    }
  }

  /**
   * The first `maxChars` characters of a file (read without loading a large file whole), and whether more follow; read
   * as the security layer reads files (`Encoding.read`): UTF-8, or UTF-16 with a byte-order mark decoded (its segments
   * are then found like a UTF-8 file's). Undefined for binary data, UTF-16 without a byte-order mark included: its
   * markers are not text anyone could find, so such a README is not injected.
   *
   * @example
   * ReadmeInject.head("/r/pkg/a/README.md", 8000) // { text: "# a\n…", more: false }
   */
  export function head(file: string, maxChars: number): { text: string; more: boolean } | undefined {
    const fd = fs.openSync(file, "r")
    try {
      const size = fs.fstatSync(fd).size
      const start = Buffer.alloc(Math.min(size, 4))
      fs.readSync(fd, start, 0, start.length, 0)
      const wide = Encoding.utf16Bom(start)
      // A character takes at most 4 bytes in UTF-8, 2 code units (4 bytes) in UTF-16 after a 2-byte mark; one more
      // character tells whether the text goes on.
      const want = Math.min(size, (maxChars + 1) * 4 + (wide ? 2 : 0))
      const buffer = Buffer.alloc(want)
      const got = fs.readSync(fd, buffer, 0, want, 0)
      const bytes = buffer.subarray(0, got)
      let text: string
      if (wide) {
        text = (Encoding.read(bytes)?.text ?? "").replace(/^\uFEFF/, "")
        // A surrogate pair (or a last odd byte) cut by the byte limit.
        if (got < size) text = text.replace(/[\uD800-\uDBFF]$/, "")
      } else {
        if (bytes.includes(0)) return undefined
        text = bytes.toString("utf8").replace(/^\uFEFF/, "")
        if (got < size) text = text.replace(/\uFFFD$/, "") // a character cut by the byte limit
      }
      return { text, more: text.length > maxChars || got < size }
    } finally {
      fs.closeSync(fd)
    }
  }

  /**
   * The text of one README block: its source, then its content cut to `maxTokens` (at a line break when one is near)
   * with a pointer to the file when cut.
   *
   * @example
   * ReadmeInject.block("/r/pkg/a/README.md", "# a\nText", false, 2000)
   * // "README from: /r/pkg/a/README.md\n# a\nText"
   */
  export function block(file: string, text: string, more: boolean, maxTokens: number): string {
    const max = maxTokens * CHARS_PER_TOKEN
    let body = text.replace(/\r\n?/g, "\n").trimEnd()
    const cut = more || body.length > max
    if (body.length > max) {
      let end = max
      const line = body.lastIndexOf("\n", end)
      if (line > max * 0.8) end = line
      // Never split a surrogate pair.
      const code = body.charCodeAt(end - 1)
      if (code >= 0xd800 && code <= 0xdbff) end--
      body = body.slice(0, end).trimEnd()
    }
    const note = cut ? `\n[truncated at ~${maxTokens} tokens — read ${file} for the rest]` : ""
    return `${HEADER}${file}\n${body}${note}`
  }

  /**
   * The line naming READMEs left out because one read's blocks reached their total budget (`maxTotalTokens`).
   *
   * @example
   * ReadmeInject.unshown(["/r/a/README.md"], 6000)
   * // "README not shown (the READMEs of one read are capped at ~6000 tokens; read it if it matters): /r/a/README.md"
   */
  export function unshown(files: string[], maxTotalTokens: number): string {
    const them = files.length === 1 ? "it" : "them"
    return (
      `README not shown (the READMEs of one read are capped at ~${maxTotalTokens} tokens; read ${them} if ` +
      `${files.length === 1 ? "it matters" : "they matter"}): ${files.join(", ")}`
    )
  }

  /** The blocks appended to a tool result, in one reminder element of their own. */
  export function reminder(blocks: string[]): string {
    return `\n\n<system-reminder>\n${blocks.join("\n\n")}\n</system-reminder>`
  }
}
