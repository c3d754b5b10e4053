import { Encoding } from "../util/encoding"
import fs from "fs/promises"
import path from "path"
import { fileURLToPath } from "url"
import z from "zod"
import type { TextEdit, WorkspaceEdit } from "vscode-languageserver-protocol"
import { SecuritySegments } from "../security/segments"
import { NamedError, errorMessage } from "../util/error"
import { splice } from "../util/splice"
import { TempFile } from "../util/temp-file"
import { TextFile } from "../util/text-file"
import { LspText } from "./text"

/**
 * Applies an LSP `WorkspaceEdit` to disk all-or-nothing: `changes` and `documentChanges` (text edits and the
 * create/rename/delete file operations, in order).
 *
 * 1. Plan in memory: every file the edit touches is read once, the operations run on that in-memory copy, and the
 *    text edits are applied (positions in UTF-16 code units, as LSP counts them). Overlapping edits, a missing
 *    target, or an operation whose options forbid it refuse the whole edit.
 * 2. Check: every path read or written must pass `access` (read for sources, write for every changed, created,
 *    deleted or renamed path, both ends of a rename); write-protected segments must come out unchanged; a document
 *    version the edit names must be the one the server was sent; and a file must still hold what it held when the
 *    request was sent (`expect`) — else nothing is written.
 * 3. Write: new contents go to temporary files beside their targets, then are renamed into place; deletions and the
 *    sources of renames are removed last. If any step fails, every file already changed gets its previous content
 *    back (created files are removed) and the error is raised.
 *
 * @example
 * const plan = await LspEdit.plan(edit, { access })
 * await LspEdit.apply(plan)
 */
export namespace LspEdit {
  export const Refused = NamedError.create(
    "LspEditRefused",
    z.object({ file: z.string(), reason: z.string() }),
    (d) => `nothing was changed: ${d.file}: ${d.reason}`,
  )

  export const Failed = NamedError.create(
    "LspEditFailed",
    z.object({ file: z.string(), reason: z.string(), restored: z.number() }),
    (d) =>
      `could not write ${d.file}: ${d.reason}. Nothing was left changed` +
      (d.restored ? ` (${d.restored} files already written were restored)` : "") +
      ".",
  )

  export type Options = {
    /** The security check: a reason when `file` may not be used for `op`. */
    access?: (file: string, op: "read" | "write") => Promise<string | undefined>
    /**
     * Marker pairs of the segments the role may not read or write (the security layer's `segments()`): an edit must
     * keep each of them verbatim, markers included.
     */
    segments?: { read?: SecuritySegments.Pair[]; write: SecuritySegments.Pair[] }
    /** The content each file had when the request was sent (changed since → refused). */
    expect?: (file: string) => string | undefined
    /** The version the server holds for an open document (a `documentChanges` version must match it). */
    version?: (file: string) => number | undefined
  }

  /** What happens to one path. `before` undefined: it did not exist; `after` undefined: it is removed. */
  export type FileChange = { file: string; before?: string; after?: string; edits: number; renamedFrom?: string }

  export type Plan = { files: FileChange[]; edits: number; renames: { from: string; to: string }[] }

  /** Reads, plans and checks the edit (steps 1 and 2); throws `Refused` without writing anything. */
  export async function plan(edit: WorkspaceEdit, options: Options = {}): Promise<Plan> {
    const state = new Map<string, { before?: string; current?: string; loaded: boolean; edits: number }>()
    const renames: { from: string; to: string }[] = []
    const origin = new Map<string, string>()
    const notUtf8 = new Set<string>()
    const load = async (file: string) => {
      let entry = state.get(file)
      if (entry) return entry
      const reason = await options.access?.(file, "read")
      if (reason) throw new Refused({ file, reason: `refused by the security policy (${reason})` })
      const bytes = await fs.readFile(file).catch((error) => {
        if (error?.code === "ENOENT") return undefined
        throw new Refused({ file, reason: errorMessage(error) })
      })
      // Read strictly: a file that is not UTF-8 is planned on its Latin-1 reading (every byte one character, so the
      // plan cannot fail on it) and, if the edit changes it, the whole edit is refused below.
      let text: string | undefined
      if (bytes) {
        try {
          text = TextFile.decode(bytes, file)
        } catch {
          text = bytes.toString("latin1")
          notUtf8.add(file)
        }
      }
      entry = { before: text, current: text, loaded: true, edits: 0 }
      state.set(file, entry)
      return entry
    }
    const textEdits = async (file: string, edits: TextEdit[], version?: number | null) => {
      const entry = await load(file)
      if (entry.current === undefined) throw new Refused({ file, reason: "the file to edit does not exist" })
      if (typeof version === "number") {
        const held = options.version?.(file)
        if (held !== undefined && held !== version)
          throw new Refused({ file, reason: `the edit is for version ${version}, the document is at ${held}` })
      }
      entry.current = applyTextEdits(entry.current, edits, file)
      entry.edits += edits.length
    }

    if (edit.documentChanges?.length) {
      for (const change of edit.documentChanges) {
        if ("kind" in change) {
          if (change.kind === "create") {
            const file = toPath(change.uri)
            const entry = await load(file)
            if (entry.current !== undefined) {
              if (change.options?.ignoreIfExists) continue
              if (!change.options?.overwrite) throw new Refused({ file, reason: "the file to create already exists" })
            }
            entry.current = ""
          } else if (change.kind === "rename") {
            const from = toPath(change.oldUri)
            const to = toPath(change.newUri)
            const source = await load(from)
            const target = await load(to)
            if (source.current === undefined)
              throw new Refused({ file: from, reason: "the file to rename does not exist" })
            if (target.current !== undefined) {
              if (change.options?.ignoreIfExists) continue
              if (!change.options?.overwrite)
                throw new Refused({ file: to, reason: "the rename target already exists" })
            }
            target.current = source.current
            target.edits += source.edits
            source.current = undefined
            source.edits = 0
            renames.push({ from, to })
            origin.set(to, origin.get(from) ?? from)
          } else if (change.kind === "delete") {
            const file = toPath(change.uri)
            const entry = await load(file)
            if (entry.current === undefined) {
              if (change.options?.ignoreIfNotExists) continue
              throw new Refused({ file, reason: "the file to delete does not exist" })
            }
            const stat = await fs.stat(file).catch(() => undefined)
            if (stat?.isDirectory()) throw new Refused({ file, reason: "deleting folders is not supported" })
            entry.current = undefined
          }
        } else {
          await textEdits(toPath(change.textDocument.uri), change.edits as TextEdit[], change.textDocument.version)
        }
      }
    } else {
      for (const [uri, edits] of Object.entries(edit.changes ?? {})) await textEdits(toPath(uri), edits)
    }

    // Decided before any other check, for every file at once: a rename across files is applied whole or not at all.
    const lossy = [...notUtf8].filter((file) => state.get(file)!.before !== state.get(file)!.current)
    if (lossy.length) throw new Refused({ file: lossy.join(", "), reason: notUtf8Reason(lossy.length) })

    const files: FileChange[] = []
    let total = 0
    for (const [file, entry] of state) {
      if (entry.before === entry.current) continue
      const reason = await options.access?.(file, "write")
      if (reason) throw new Refused({ file, reason: `refused by the security policy (${reason})` })
      if (entry.before !== undefined && options.segments) {
        const kept = SecuritySegments.guarded(entry.before, entry.current ?? "", options.segments)
        if (kept) throw new Refused({ file, reason: kept })
      }
      const expected = options.expect?.(file)
      if (expected !== undefined && entry.before !== expected)
        throw new Refused({ file, reason: "it changed since the request was sent; run the operation again" })
      files.push({
        file,
        before: entry.before,
        after: entry.current,
        edits: entry.edits,
        renamedFrom: origin.get(file),
      })
      total += entry.edits
    }
    return { files, edits: total, renames }
  }

  /** Writes a checked plan (step 3); throws `Refused` when a file changed after planning, `Failed` on a write error. */
  export async function apply(plan: Plan): Promise<void> {
    for (const change of plan.files) {
      const current = await TextFile.read(change.file).catch(() => undefined)
      if (current !== change.before)
        throw new Refused({ file: change.file, reason: "it changed while the edit was prepared; run it again" })
    }
    const temps: { change: FileChange; temp: string }[] = []
    const done: FileChange[] = []
    const restore = async () => {
      await Promise.all(temps.map((t) => fs.rm(t.temp, { force: true })))
      let restored = 0
      for (const change of done.reverse()) {
        const ok =
          change.before === undefined
            ? await fs.rm(change.file, { force: true }).then(
                () => true,
                () => false,
              )
            : await fs.writeFile(change.file, change.before).then(
                () => true,
                () => false,
              )
        if (ok) restored++
      }
      return restored
    }
    let failing = plan.files[0]?.file ?? "?"
    try {
      for (const change of plan.files) {
        if (change.after === undefined) continue
        failing = change.file
        const source = change.before !== undefined ? change.file : change.renamedFrom
        const mode = source
          ? await fs.stat(source).then(
              (s) => s.mode & 0o7777,
              () => undefined,
            )
          : undefined
        await fs.mkdir(path.dirname(change.file), { recursive: true })
        const temp = TempFile.beside(change.file, "lsp")
        temps.push({ change, temp })
        // Exactly the file's mode: a mode given to writeFile alone is cut by the umask (0664 became 0644).
        await TempFile.write(temp, change.after, mode)
      }
      for (const { change, temp } of temps) {
        failing = change.file
        await fs.rename(temp, change.file)
        done.push(change)
      }
      temps.length = 0
      for (const change of plan.files) {
        if (change.after !== undefined) continue
        failing = change.file
        await fs.rm(change.file)
        done.push(change)
      }
    } catch (error) {
      const restored = await restore()
      throw new Failed({ file: failing, reason: errorMessage(error), restored })
    }
  }

  /**
   * `text` with LSP text edits applied (all positions refer to the original text). Throws on overlapping edits.
   * Positions of a file starting with a byte-order mark refer to the text after it (the text its server was sent,
   * see `LspText`); the mark is kept.
   */
  export function applyTextEdits(text: string, edits: TextEdit[], file = "?"): string {
    if (LspText.hasBom(text)) return LspText.BOM + applyTextEdits(LspText.withoutBom(text), edits, file)
    const starts = lineStarts(text)
    const offset = (p: { line: number; character: number }) => {
      if (p.line >= starts.length) return text.length
      const start = starts[p.line]
      const end = p.line + 1 < starts.length ? starts[p.line + 1] : text.length
      // A character past the line's end means the end of its content (before the line break).
      let content = end
      if (content > start && text[content - 1] === "\n") content--
      if (content > start && text[content - 1] === "\r") content--
      return Math.min(start + p.character, content)
    }
    const spans = edits
      .map((e, i) => ({ start: offset(e.range.start), end: offset(e.range.end), text: e.newText, i }))
      .sort((a, b) => a.start - b.start || a.i - b.i)
    for (let k = 1; k < spans.length; k++)
      if (spans[k].start < spans[k - 1].end) throw new Refused({ file, reason: "the server sent overlapping edits" })
    return splice(text, spans)
  }

  /** Why an edit changing files that are not UTF-8 is refused (`TextFile.NotUtf8` explains one file the same way). */
  export function notUtf8Reason(count: number) {
    const it = count === 1 ? "it is" : "they are"
    return (
      `${it} not UTF-8 text (UTF-16, Latin-1 or another encoding): writing ${count === 1 ? "it" : "them"} back would ` +
      `replace ${count === 1 ? "its" : "their"} non-ASCII characters with U+FFFD, so no file was changed. Convert ` +
      `${count === 1 ? "it" : "them"} to UTF-8 first (${Encoding.advice(undefined)}) and run the operation ` +
      `again, or make this change by other means`
    )
  }

  function lineStarts(text: string) {
    const starts = [0]
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i)
      if (ch === 13 && text.charCodeAt(i + 1) === 10) continue
      if (ch === 10 || ch === 13) starts.push(i + 1)
    }
    return starts
  }

  function toPath(uri: string) {
    if (!uri.startsWith("file:")) throw new Refused({ file: uri, reason: "only file: URIs can be edited" })
    return fileURLToPath(uri)
  }
}
