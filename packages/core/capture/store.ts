import fs from "fs"
import path from "path"
import z from "zod"
import { LocalState } from "../learning/local"
import { LocalSeal } from "../learning/seal"
import { NamedError } from "../util/error"
import { StoredTime } from "../util/time"

/**
 * The captured tool calls of one project: JSON lines in the local state folder
 * (`.opencode/builtins-local/capture/captures.jsonl`, git-ignored by `init`), one record per call, appended as the
 * call ends. Text is stored as given: the capture feature hands over output the security layer has already redacted
 * and redacts arguments and error texts itself.
 *
 * Bounded by rotation: when the current file reaches `maxBytes / segments` bytes or `maxEntries / segments` records it
 * is renamed to `captures.1.jsonl` (`.1` → `.2`, …) and the oldest segment beyond `segments` is deleted, so the store
 * never holds more than `maxBytes` (plus one record) and `maxEntries` records (defaults 4 MB, 4,000 records, 4
 * segments). Each record's output is cut to `maxOutputChars` (default 2,000) and its arguments to 1,000 characters,
 * with the original length kept. Renames and deletes are atomic; a line cut short by a crash mid-append is skipped
 * when reading.
 *
 * @example
 * const store = CaptureStore.open("/repo")
 * store.append({ callID: "call_1", sessionID: "ses_1", tool: "read", status: "completed", output: "…", at: Date.now() })
 * store.list({ failed: true }) // the failed calls, newest first
 */
export namespace CaptureStore {
  export const FOLDER = "capture"
  export const FILE = "captures.jsonl"
  export const VERSION = 1

  export const Limits = z.object({
    maxBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .max(1024 * 1024 * 1024)
      .optional()
      .describe("Bytes the store may hold across its segments (default 4 MB)"),
    maxEntries: z.number().int().min(10).max(1_000_000).optional().describe("Records kept (default 4,000)"),
    maxOutputChars: z
      .number()
      .int()
      .min(0)
      .max(1_000_000)
      .optional()
      .describe("Characters of a tool's output kept per record (default 2,000)"),
    segments: z.number().int().min(2).max(64).optional().describe("Files the store rotates through (default 4)"),
  })
  export type Limits = z.infer<typeof Limits>

  export const DEFAULTS = { maxBytes: 4 * 1024 * 1024, maxEntries: 4_000, maxOutputChars: 2_000, segments: 4 } as const
  /** Characters of the (JSON) arguments kept per record. */
  export const MAX_ARGS_CHARS = 1_000

  export const Status = z.enum(["completed", "error"])

  /** One captured tool call, as stored. */
  export const Record = z.object({
    v: z.literal(VERSION),
    callID: z.string(),
    sessionID: z.string(),
    /** The parent session when the call ran in a subagent's (child) session. */
    parentID: z.string().optional(),
    tool: z.string(),
    status: Status,
    title: z.string().optional(),
    /** Arguments as JSON, redacted and cut to `MAX_ARGS_CHARS`. */
    args: z.string().optional(),
    output: z.string().optional(),
    /** Length of the output before it was cut (absent when nothing was cut). */
    outputChars: z.number().optional(),
    /** The error OpenCode reported for a failed call, redacted. */
    error: z.string().optional(),
    startedAt: StoredTime.schema.optional(),
    /** When the call ended (ms since the epoch). */
    at: StoredTime.schema,
    /** The security role and policy the texts were redacted for (`LocalState.scope`); absent without a policy. */
    scope: z.string().optional(),
  })
  export type Record = z.infer<typeof Record>
  export type Input = Omit<Record, "v" | "outputChars">

  export const NotFound = NamedError.create(
    "CaptureNotFound",
    z.object({ callID: z.string() }),
    (d) => `no captured call '${d.callID}' (capture list shows the call ids)`,
  )

  export type Filter = { sessionID?: string; tool?: string; failed?: boolean; limit?: number }

  export function dir(root: string): string {
    return path.join(LocalState.dir(root), FOLDER)
  }

  /** Cuts `text` to `max` characters, saying so at the end. */
  export function cut(text: string, max: number): { text: string; cut: boolean } {
    if (text.length <= max) return { text, cut: false }
    return { text: text.slice(0, max) + `\n… (${text.length - max} more characters not captured)`, cut: true }
  }

  export type Store = ReturnType<typeof open>

  /**
   * The store of the project at `root` (nothing is created until the first append).
   *
   * @example
   * CaptureStore.open("/repo", { maxEntries: 100 }).list({ limit: 5 })
   */
  export function open(root: string, limits: Limits = {}) {
    const folder = dir(root)
    const file = path.join(folder, FILE)
    const max = { ...DEFAULTS, ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) }
    const segmentBytes = Math.floor(max.maxBytes / max.segments)
    const segmentEntries = Math.max(1, Math.floor(max.maxEntries / max.segments))
    /** Size and records of the current segment, read once from disk, then kept up to date. */
    let current: { bytes: number; entries: number } | undefined

    const segment = (n: number) => (n === 0 ? file : path.join(folder, `captures.${n}.jsonl`))

    function measure() {
      try {
        const text = fs.readFileSync(file, "utf8")
        let entries = 0
        for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) entries++
        return { bytes: Buffer.byteLength(text), entries }
      } catch {
        return { bytes: 0, entries: 0 }
      }
    }

    function rotate() {
      fs.rmSync(segment(max.segments - 1), { force: true })
      for (let n = max.segments - 2; n >= 0; n--)
        if (fs.existsSync(segment(n))) fs.renameSync(segment(n), segment(n + 1))
      current = { bytes: 0, entries: 0 }
    }

    /**
     * Appends one record (one `write` of one line, so concurrent writers never interleave within a line). Throws when
     * the folder cannot be written; the caller decides what a failure means.
     */
    function append(input: Input): Record {
      const out = cut(input.output ?? "", max.maxOutputChars)
      const args = input.args === undefined ? undefined : cut(input.args, MAX_ARGS_CHARS).text
      const record: Record = {
        v: VERSION,
        ...input,
        args,
        output: input.output === undefined ? undefined : out.text,
        outputChars: out.cut ? input.output!.length : undefined,
      }
      // Each record sealed on its own (LocalSeal): a line a command appended is told apart when read.
      const line = LocalSeal.seal(file, "capture", JSON.stringify(record)) + "\n"
      const bytes = Buffer.byteLength(line)
      if (!current) {
        LocalState.ensure(folder)
        current = measure()
      }
      const full = (seg: { bytes: number; entries: number }) =>
        seg.entries > 0 && (seg.bytes + bytes > segmentBytes || seg.entries >= segmentEntries)
      // Rotation is a read-modify-write of the segments: under the store's cross-process lock, and only when the
      // segment, measured again there, is still full (another process may have rotated it already: rotating twice
      // dropped a whole segment of records early).
      if (full(current))
        LocalState.locked(file, () => {
          current = measure()
          if (full(current)) rotate()
        })
      // Never through a link planted at the file's name; a torn last line gets its line break first.
      LocalState.append(file, line)
      current.bytes += bytes
      current.entries++
      return record
    }

    /**
     * Every stored record, oldest first, and a warning per line skipped: one that is not JSON (cut short by a crash)
     * or not a record of this version (a time beyond the Date range, a field of the wrong type).
     */
    function read(): { records: Record[]; skipped: string[] } {
      const records: Record[] = []
      const skipped: string[] = []
      for (let n = max.segments - 1; n >= 0; n--) {
        let text: string
        let ctimeMs: number
        try {
          ;({ text, ctimeMs } = LocalSeal.read(segment(n)))
        } catch {
          continue
        }
        let untrusted = 0
        for (const [i, line] of text.split("\n").entries()) {
          if (!line) continue
          const opened = LocalSeal.open(segment(n), "capture", line, ctimeMs)
          let data: unknown
          try {
            data = JSON.parse(opened.text)
            if (opened.problem) {
              untrusted++
              continue
            }
          } catch {
            skipped.push(`${segment(n)}: line ${i + 1} skipped (not JSON: cut short by a crash?)`)
            continue
          }
          const parsed = Record.safeParse(data)
          if (parsed.success) records.push(parsed.data)
          else {
            const issue = parsed.error.issues[0]
            const where = issue.path.length ? `${issue.path.join(".")}: ` : ""
            skipped.push(`${segment(n)}: line ${i + 1} skipped (${where}${issue.message})`)
          }
        }
        if (untrusted) skipped.push(`${segment(n)}: ${untrusted} record(s) ${LocalSeal.UNTRUSTED}`)
      }
      return { records, skipped }
    }

    /** Every stored record, oldest first (lines `read` skips are left out). */
    function all(): Record[] {
      return read().records
    }

    /** Records matching `filter`, newest first. */
    function list(filter: Filter = {}): Record[] {
      const matching = all()
        .reverse()
        .filter(
          (r) =>
            (!filter.sessionID || r.sessionID === filter.sessionID) &&
            (!filter.tool || r.tool === filter.tool) &&
            (!filter.failed || r.status === "error"),
        )
      return filter.limit === undefined ? matching : matching.slice(0, filter.limit)
    }

    /** The record of one call (exact id); throws `NotFound`. */
    function get(callID: string): Record {
      const found = all().findLast((r) => r.callID === callID)
      if (!found) throw new NotFound({ callID })
      return found
    }

    /** Deletes every segment (those of a larger former `segments` too); returns how many records there were. */
    function clear(): number {
      return LocalState.locked(file, clearLocked)
    }

    function clearLocked(): number {
      const n = all().length
      let names: string[] = []
      try {
        names = fs.readdirSync(folder)
      } catch {
        // No folder: nothing captured.
      }
      for (const name of names)
        if (/^captures(\.\d+)?\.jsonl$/.test(name)) fs.rmSync(path.join(folder, name), { force: true })
      current = { bytes: 0, entries: 0 }
      return n
    }

    return { file, folder, limits: max, append, list, get, clear, all, read }
  }
}
