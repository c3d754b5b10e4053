import fs from "fs"
import path from "path"
import { LocalState } from "../learning/local"
import { LocalSeal } from "../learning/seal"
import { errorMessage } from "../util/error"
import { SessionRecovery } from "./schema"

/**
 * The heartbeat files in `<project root>/.opencode/builtins-local/recovery/` (the project's local state folder, see
 * `LocalState`). Every write is atomic — a temporary file renamed into place — so a reader sees a whole heartbeat or
 * none. Each write renames to a new generation (`<session>~<generation>.json`) and then deletes the generation before
 * the previous one, rather than renaming over the same name: on ext4 (the default `auto_da_alloc`) a rename over an
 * existing file flushes the new file's data first, which made one heartbeat write cost ~4 ms at p95 on a loaded
 * machine, against ~0.2 ms for a rename to a new name (`bun run bench session`). Two generations stay, so a reader
 * falls back to the previous one when the newest is unreadable. Nothing is synced to disk: a killed or crashed
 * OpenCode loses nothing (the kernel holds the data), a power loss may leave the newest generations empty. The newest
 * readable generation of a session counts; unreadable files are reported, not fatal.
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

  const ID = /^[A-Za-z0-9_-]{1,128}$/
  /** `<session>.json` or `<session>~<generation>.json`. */
  const NAME = /^([A-Za-z0-9_-]{1,128})(?:~([0-9a-z]{1,32}))?\.json$/

  function checked(sessionID: string): string {
    if (!ID.test(sessionID)) throw new Error(`'${sessionID}' is not a session id (letters, digits, _ and - only)`)
    return sessionID
  }

  /**
   * The plain file name of one session's heartbeat (also read; writes use generations). Session ids are OpenCode's
   * (`ses_…`); anything else is refused, not used as a path.
   */
  export function file(folder: string, sessionID: string): string {
    return path.join(folder, `${checked(sessionID)}.json`)
  }

  let counter = 0
  /** Files this process wrote per session, oldest first (at most two are kept). */
  const written = new Map<string, string[]>()

  /**
   * Writes a heartbeat atomically as a new generation and deletes the one before the previous. Returns the file.
   * `text`: the heartbeat's JSON when the caller has it already.
   */
  export function write(folder: string, beat: SessionRecovery.Heartbeat, text = JSON.stringify(beat)): string {
    const id = checked(beat.sessionID)
    const generation = Date.now().toString(36).padStart(9, "0") + (counter++ % 1_679_616).toString(36).padStart(4, "0")
    const target = path.join(folder, `${id}~${generation}.json`)
    LocalState.write(target, LocalSeal.seal(target, "recovery", text))
    const key = `${folder}\0${id}`
    const list = written.get(key) ?? []
    list.push(target)
    while (list.length > 2) {
      try {
        fs.unlinkSync(list.shift()!)
      } catch {}
    }
    written.set(key, list)
    return target
  }

  /** Removes every file of a session's heartbeat (all generations, whoever wrote them); true when there was one. */
  export function remove(folder: string, sessionID: string): boolean {
    checked(sessionID)
    written.delete(`${folder}\0${sessionID}`)
    let removed = false
    for (const name of names(folder)) {
      if (NAME.exec(name)?.[1] !== sessionID) continue
      try {
        fs.unlinkSync(path.join(folder, name))
        removed = true
      } catch {}
    }
    return removed
  }

  /** Whether any file of the session's heartbeat exists. */
  export function exists(folder: string, sessionID: string): boolean {
    checked(sessionID)
    return names(folder).some((name) => NAME.exec(name)?.[1] === sessionID)
  }

  function names(folder: string): string[] {
    try {
      return fs.readdirSync(folder)
    } catch {
      return []
    }
  }

  export type Skipped = { file: string; reason: string }
  export type Read = {
    /** The newest readable heartbeat of each session. */
    beats: SessionRecovery.Heartbeat[]
    /** Every readable file and its heartbeat (older generations included). */
    files: Map<string, SessionRecovery.Heartbeat>
    skipped: Skipped[]
  }

  /** Every session's heartbeat; corrupt, truncated or foreign files are returned in `skipped` with the reason. */
  export function read(folder: string): Read {
    const out: Read = { beats: [], files: new Map(), skipped: [] }
    const newest = new Map<string, { generation: string; beat: SessionRecovery.Heartbeat }>()
    for (const name of names(folder).sort()) {
      if (!name.endsWith(".json")) continue
      const full = path.join(folder, name)
      const parsed = parse(full)
      if (!("beat" in parsed)) {
        out.skipped.push({ file: full, reason: parsed.reason })
        continue
      }
      out.files.set(full, parsed.beat)
      const generation = NAME.exec(name)?.[2] ?? ""
      const known = newest.get(parsed.beat.sessionID)
      if (!known || generation > known.generation) newest.set(parsed.beat.sessionID, { generation, beat: parsed.beat })
    }
    out.beats = [...newest.values()].map((n) => n.beat)
    return out
  }

  /** The newest readable heartbeat of one session, or why there is none (no file, or only unreadable ones). */
  export function find(
    folder: string,
    sessionID: string,
  ): { beat: SessionRecovery.Heartbeat } | { missing: true } | { unreadable: Skipped[] } {
    checked(sessionID)
    const { beats, skipped } = read(folder)
    const beat = beats.find((b) => b.sessionID === sessionID)
    if (beat) return { beat }
    const mine = skipped.filter((s) => NAME.exec(path.basename(s.file))?.[1] === sessionID)
    return mine.length ? { unreadable: mine } : { missing: true }
  }

  /** One heartbeat file, or why it cannot be used. */
  export function parse(full: string): { beat: SessionRecovery.Heartbeat } | { reason: string } {
    let text: string
    let untrusted: string | undefined
    try {
      // Sealed by this machine's built-ins for this project (a command can write a heartbeat naming any folder).
      const opened = LocalSeal.readFile(full, "recovery")
      text = opened.text
      untrusted = opened.problem
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
    if (NAME.exec(path.basename(full))?.[1] !== check.data.sessionID)
      return { reason: `holds session ${check.data.sessionID}, which is not its file name` }
    if (untrusted) return { reason: untrusted }
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

  /** Removes what `collectable` selects (`files`: the readable files, from `read`); returns the names removed. */
  export function collect(
    folder: string,
    files: Map<string, SessionRecovery.Heartbeat>,
    now: number,
    maxAgeMs: number,
  ) {
    const entries: Entry[] = []
    for (const name of names(folder)) {
      const full = path.join(folder, name)
      try {
        entries.push({ name, mtime: fs.statSync(full).mtimeMs, beat: files.get(full) })
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
}
