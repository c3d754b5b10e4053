import fs from "fs"
import path from "path"
import { LocalState } from "../learning/local"
import { errorMessage } from "../util/error"
import { SessionRecovery } from "./schema"

/**
 * The heartbeat files: one JSON file per busy session in `<project root>/.opencode/builtins-local/recovery/` (the
 * project's local state folder, see `LocalState`), written atomically (temporary file renamed over it), so a reader
 * sees the previous heartbeat or the next one, never half of one. Unreadable files are reported, not fatal.
 *
 * @example
 * const folder = RecoveryStore.folder("/repo")
 * RecoveryStore.write(folder, beat)
 * const { beats, skipped } = RecoveryStore.read(folder)
 */
export namespace RecoveryStore {
  export function folder(root: string): string {
    return path.join(LocalState.dir(root), SessionRecovery.FOLDER)
  }

  /** The file of one session. Session ids are OpenCode's (`ses_…`); anything else is refused, not used as a path. */
  export function file(folder: string, sessionID: string): string {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(sessionID))
      throw new Error(`'${sessionID}' is not a session id (letters, digits, _ and - only)`)
    return path.join(folder, `${sessionID}.json`)
  }

  /** Writes a heartbeat atomically (`text`: its JSON when the caller has it already). */
  export function write(folder: string, beat: SessionRecovery.Heartbeat, text = JSON.stringify(beat)) {
    LocalState.write(file(folder, beat.sessionID), text)
  }

  /** Removes a session's heartbeat; true when there was one. */
  export function remove(folder: string, sessionID: string): boolean {
    try {
      fs.unlinkSync(file(folder, sessionID))
      return true
    } catch {
      return false
    }
  }

  export type Skipped = { file: string; reason: string }
  export type Read = { beats: SessionRecovery.Heartbeat[]; skipped: Skipped[] }

  /** Every heartbeat in the folder; corrupt, truncated or foreign files are returned in `skipped` with the reason. */
  export function read(folder: string): Read {
    const out: Read = { beats: [], skipped: [] }
    let names: string[]
    try {
      names = fs.readdirSync(folder)
    } catch {
      return out
    }
    for (const name of names.sort()) {
      if (!name.endsWith(".json")) continue
      const full = path.join(folder, name)
      const parsed = parse(full)
      if ("beat" in parsed) out.beats.push(parsed.beat)
      else out.skipped.push({ file: full, reason: parsed.reason })
    }
    return out
  }

  /** One heartbeat file, or why it cannot be used. */
  export function parse(full: string): { beat: SessionRecovery.Heartbeat } | { reason: string } {
    let text: string
    try {
      text = fs.readFileSync(full, "utf8")
    } catch (error) {
      return { reason: errorMessage(error) }
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      return { reason: `not JSON (truncated or corrupt, ${text.length} bytes): ${errorMessage(error)}` }
    }
    const check = SessionRecovery.Heartbeat.safeParse(json)
    if (!check.success) {
      const issue = check.error.issues[0]
      return { reason: `not a heartbeat: ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}` }
    }
    if (path.basename(full) !== `${check.data.sessionID}.json`)
      return { reason: `holds session ${check.data.sessionID}, which is not its file name` }
    return { beat: check.data }
  }

  export type Entry = { name: string; mtime: number; beat?: SessionRecovery.Heartbeat }

  /**
   * What to collect, pure: heartbeats not renewed for `maxAgeMs` (and unreadable files not modified for as long),
   * and temporary files older than a minute (a writer killed between write and rename leaves one).
   *
   * @example
   * RecoveryStore.collectable([{ name: "x.json.1.tmp", mtime: 0 }], 120_000, DAY) // ["x.json.1.tmp"]
   */
  export function collectable(entries: Entry[], now: number, maxAgeMs: number): string[] {
    return entries
      .filter((e) => {
        if (e.name.endsWith(".tmp")) return now - e.mtime > 60_000
        if (!e.name.endsWith(".json")) return false
        const last = e.beat ? e.beat.lease.renewed : e.mtime
        return now - last > maxAgeMs
      })
      .map((e) => e.name)
  }

  /** Removes what `collectable` selects; returns the names removed. */
  export function collect(folder: string, beats: SessionRecovery.Heartbeat[], now: number, maxAgeMs: number) {
    let names: string[]
    try {
      names = fs.readdirSync(folder)
    } catch {
      return []
    }
    const bySession = new Map(beats.map((b) => [`${b.sessionID}.json`, b]))
    const entries: Entry[] = []
    for (const name of names) {
      try {
        entries.push({ name, mtime: fs.statSync(path.join(folder, name)).mtimeMs, beat: bySession.get(name) })
      } catch {}
    }
    const removed: string[] = []
    for (const name of collectable(entries, now, maxAgeMs)) {
      try {
        fs.unlinkSync(path.join(folder, name))
        removed.push(name)
      } catch {}
    }
    return removed
  }

  /** `.gitignore` lines that already keep the local state folder out of git. */
  const COVERING = [LocalState.DIR, ".opencode"].flatMap((d) => [d, `${d}/`, `/${d}`, `/${d}/`])

  /**
   * Adds the local state folder to the project's `.gitignore` when the project is a git repository and no line
   * covers it yet (once: a covering line is never added twice). Atomic, keeps the file's line endings.
   * Returns true when it changed the file.
   */
  export function ensureIgnored(root: string): boolean {
    if (!fs.existsSync(path.join(root, ".git"))) return false
    const file = path.join(root, ".gitignore")
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
    const lines = new Set(text.split(/\r?\n/).map((l) => l.trim()))
    if (COVERING.some((c) => lines.has(c))) return false
    const eol = text.includes("\r\n") ? "\r\n" : "\n"
    const gap = text && !text.endsWith("\n") ? eol : ""
    LocalState.write(
      file,
      `${text}${gap}# opencode-builtins: local state (crash recovery heartbeats)${eol}${LocalState.DIR}/${eol}`,
    )
    return true
  }
}
