import fs from "fs"
import os from "os"
import path from "path"
import { Pid } from "../util/pid"
import { LocalState } from "../learning/local"
import { LocalSeal } from "../learning/seal"

/**
 * The child sessions look_at's calls have open, recorded in the project's local state while each call runs, so that
 * a child session left behind when OpenCode was killed mid-call (no `finally` runs after SIGKILL: the session, the
 * image it carried included, stays in OpenCode's storage) is deleted by a later start. Only sessions recorded here
 * are ever deleted, only once the process that recorded them is gone (another OpenCode running in the same project
 * keeps its own), and only when OpenCode reports the session as look_at's (`ours`): a record is a file in the project,
 * which anything writing there can make name another session (red team DD-O1) — that record is dropped, nothing
 * deleted.
 *
 * One file per call: `.opencode/builtins-local/look-at/<child session id>.json` holding the parent's id, the
 * recording process's id and host name, and when.
 *
 * @example
 * LookOrphans.record(root, "ses_child", "ses_parent") // before the child call
 * LookOrphans.forget(root, "ses_child") // once the child session is deleted
 * await LookOrphans.sweep(root, (id) => deleteSession(id)) // at a later start: deletes what a killed process left
 */
export namespace LookOrphans {
  export const FOLDER = "look-at"
  const ID = /^ses_[A-Za-z0-9]+$/

  export type Record = { id: string; parentID: string; pid: number; host: string; at: number }

  export function folder(root: string): string {
    return path.join(LocalState.dir(root), FOLDER)
  }

  /** Records a child session while its call runs. Ids that are not session ids are not used as file names. */
  export function record(root: string, id: string, parentID: string): void {
    if (!ID.test(id)) return
    const entry: Record = { id, parentID, pid: process.pid, host: os.hostname(), at: Date.now() }
    const file = path.join(folder(root), `${id}.json`)
    LocalState.write(file, LocalSeal.seal(file, "look-at", JSON.stringify(entry) + "\n"))
  }

  export function forget(root: string, id: string): void {
    if (!ID.test(id)) return
    fs.rmSync(path.join(folder(root), `${id}.json`), { force: true })
  }

  /** The recorded child sessions whose process is gone (recorded on this machine by a process no longer running). */
  export function orphans(root: string, skipped?: (file: string, reason: string) => void): Record[] {
    let names: string[]
    try {
      names = fs.readdirSync(folder(root))
    } catch {
      return []
    }
    const out: Record[] = []
    for (const name of names) {
      if (!name.endsWith(".json")) continue
      try {
        // Only records this machine's built-ins sealed for this project: any other is skipped, never acted on.
        const opened = LocalSeal.readFile(path.join(folder(root), name), "look-at")
        if (opened.problem) {
          skipped?.(path.join(folder(root), name), opened.problem)
          continue
        }
        const entry = JSON.parse(opened.text) as Record
        if (!ID.test(entry.id) || name !== `${entry.id}.json`) continue
        if (entry.host !== os.hostname() || entry.pid === process.pid || Pid.running(entry.pid)) continue
        out.push(entry)
      } catch {}
    }
    return out
  }

  /** The title look_at gives its child sessions (`look_at <file>`). */
  export const TITLE = "look_at "

  /**
   * Whether `session`, as OpenCode reports it, is the child session `entry` recorded: a child of the recorded parent,
   * titled as look_at titles its own.
   *
   * @example
   * LookOrphans.ours({ parentID: "ses_p", title: "look_at a.png" }, entry) // true when entry.parentID is "ses_p"
   */
  export function ours(session: { parentID?: unknown; title?: unknown }, entry: Record): boolean {
    return (
      typeof entry.parentID === "string" &&
      session.parentID === entry.parentID &&
      typeof session.title === "string" &&
      session.title.startsWith(TITLE)
    )
  }

  /**
   * Handles each orphaned child session with `remove`: true, deleted or already gone; "dropped", not look_at's (see
   * `ours`) and left alone; false, keep the record and try again at a later start. Forgets the records of the first
   * two; returns how many sessions were deleted or gone.
   */
  export async function sweep(
    root: string,
    remove: (entry: Record) => Promise<boolean | "dropped">,
    skipped?: (file: string, reason: string) => void,
  ): Promise<number> {
    let n = 0
    for (const entry of orphans(root, skipped)) {
      const done = await remove(entry).catch(() => false)
      if (!done) continue
      forget(root, entry.id)
      if (done === true) n++
    }
    return n
  }
}
