import crypto from "crypto"
import fs from "fs"
import path from "path"
import { Pid } from "../util/pid"
import { SecuritySchema } from "./schema"

/**
 * Held links across sessions. A protected path that is a symbolic link (a policy file linked to a shared policy, the
 * audit log, a dotfile kept by stow) cannot be locked by the sandbox (its mount lands on the target): a command that
 * replaces the link has it put back after the command. That repair needs the layer to see the command end; when
 * OpenCode ends first (the user quits during a long command, a crash, a kill), the next session would find a weaker
 * policy file where the link was and load it.
 *
 * So before each shell command the layer records the links it holds, with their targets, in its private state (a
 * folder of the built-ins' cache, which the sandbox holds read-only and the file tools refuse), and forgets them when
 * no command is running any more. At start, before the policy is loaded, a record left behind names the links a
 * command may have changed while no layer watched: a link replaced by a file or folder, or removed, is put back (the
 * replacement moved aside, nothing lost); a link that now leads elsewhere may be the user's own change, so it is not
 * repaired: the policy counts as invalid until the user puts the link back or deletes the record (`disputes`).
 */
export namespace SecurityHeld {
  export const VERSION = 1

  type Session = { pid: number; at: number; links: Record<string, string> }
  type Record_ = { version: number; root: string; sessions: Record<string, Session>; disputed: Record<string, string> }

  /** The record of a project's held links in `stateDir`. */
  export function file(stateDir: string, root: string): string {
    const key = crypto.createHash("sha256").update(root).digest("hex").slice(0, 24)
    return path.join(stateDir, `${key}.json`)
  }

  /**
   * The folder of the records: created (0700) when absent, so that the sandbox holds it read-only from the first
   * command on (a folder a command could create would let it plant a record). Refused when it is a link, not a folder,
   * or someone else's.
   */
  export function folder(stateDir: string): string {
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
    const st = fs.lstatSync(stateDir)
    if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid()))
      throw new Error(`${stateDir} is not a private folder of this user`)
    return stateDir
  }

  /**
   * The text of a record the layer keeps in its state folder, undefined when there is none; throws when it is not a
   * regular file of this user in a folder of this user (not one the layer wrote).
   *
   * @example
   * SecurityHeld.ownText(SecurityHeld.file(folder, root)) // undefined before the first command
   */
  export function ownText(at: string): string | undefined {
    let st: fs.Stats
    try {
      st = fs.lstatSync(at)
    } catch {
      return undefined
    }
    if (!st.isFile()) throw new Error(`${at} is not a regular file`)
    if (process.getuid && st.uid !== process.getuid()) throw new Error(`${at} belongs to another user`)
    const dir = fs.lstatSync(path.dirname(at))
    if (!dir.isDirectory() || (process.getuid && dir.uid !== process.getuid()))
      throw new Error(`${path.dirname(at)} is not a private folder of this user`)
    return fs.readFileSync(at, "utf8")
  }

  function read(at: string): Record_ | undefined {
    const text = ownText(at)
    if (text === undefined) return undefined
    const parsed = JSON.parse(text) as Partial<Record_>
    if (parsed.version !== VERSION || typeof parsed.sessions !== "object" || !parsed.sessions)
      throw new Error(`${at} is not a record of held links (version ${VERSION})`)
    return {
      version: VERSION,
      root: String(parsed.root ?? ""),
      sessions: parsed.sessions,
      disputed: parsed.disputed ?? {},
    }
  }

  function write(at: string, record: Record_) {
    if (!Object.keys(record.sessions).length && !Object.keys(record.disputed).length) {
      fs.rmSync(at, { force: true })
      return
    }
    // Whole or not at all: a partial record would lose what a killed session held.
    const tmp = `${at}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
    fs.writeFileSync(tmp, JSON.stringify(record), { mode: 0o600, flag: "wx" })
    fs.renameSync(tmp, at)
  }

  const empty = (root: string): Record_ => ({ version: VERSION, root, sessions: {}, disputed: {} })

  /** Records, before a command runs, the links `session` holds (path → target as first seen). */
  export function arm(at: string, root: string, session: string, links: ReadonlyMap<string, string>, now: number) {
    const record = safeRead(at) ?? empty(root)
    record.sessions[session] = { pid: process.pid, at: now, links: Object.fromEntries(links) }
    write(at, record)
  }

  /** No command of `session` is running any more: what it held was checked after its commands. */
  export function disarm(at: string, session: string) {
    const record = safeRead(at)
    if (!record || !record.sessions[session]) return
    delete record.sessions[session]
    write(at, record)
  }

  function safeRead(at: string): Record_ | undefined {
    try {
      return read(at)
    } catch {
      return undefined
    }
  }

  const alive = (pid: number) => pid === process.pid || Pid.running(pid)

  /** What a held path is now, against the target it had: `same`, `removed`, `other` (a file or folder), or a link. */
  function now(p: string, target: string): { kind: "same" | "removed" | "other" } | { kind: "link"; to: string } {
    let st: fs.Stats
    try {
      st = fs.lstatSync(p)
    } catch {
      return { kind: "removed" }
    }
    if (!st.isSymbolicLink()) return { kind: "other" }
    const to = fs.readlinkSync(p)
    return to === target ? { kind: "same" } : { kind: "link", to }
  }

  export type Recovered = {
    /** What was put back, for the log, the audit log and the first tool call's output. */
    repaired: { path: string; target: string; aside?: string; note: string }[]
    /** Held paths left as they are (a link leading elsewhere, a system folder): see `disputes`. */
    disputed: number
    /** The record could not be used (said in the log; it was moved aside). */
    problem?: string
    /**
     * Entries of the record that were not acted on (said in the log and the first tool output, dropped from the
     * record): a path the configuration being loaded holds no link at, a target it does not expect there, or a change
     * older than the record, which no command that ran after the record was written can have made.
     */
    ignored: { path: string; target: string; note: string }[]
  }

  /** Clocks of two file systems may differ by their granularity (2 s on FAT): a change this much older still counts. */
  export const CLOCK_SLACK_MS = 2_000

  /**
   * Why the entry `p` → `target` of a record written at `written` (ms) is not acted on, or undefined. `holds` says
   * whether the configuration being loaded holds that link; what is at the path now (or, when it is gone, its folder)
   * must have changed after the record was written: a command running under the record made it.
   */
  function refusal(
    p: string,
    target: string,
    written: number,
    holds: ((p: string, target: string) => string | undefined) | undefined,
  ): string | undefined {
    if (!path.isAbsolute(p)) return "the path is not absolute"
    const why = holds?.(p, target)
    if (why) return why
    let changed: number
    try {
      changed = fs.lstatSync(p).ctimeMs
    } catch {
      try {
        const dir = fs.lstatSync(path.dirname(p))
        changed = Math.max(dir.ctimeMs, dir.mtimeMs)
      } catch {
        return "neither it nor its folder exists"
      }
    }
    if (changed < written - CLOCK_SLACK_MS)
      return "it has not changed since the record was written, so no command that ran under the record changed it"
    return undefined
  }

  /**
   * At start, before the policy is loaded: the held links of sessions whose command may not have ended (their record
   * is still armed) are compared with the disk. A link replaced by a file or folder, or removed, is put back (the
   * replacement renamed `<path>.blocked-by-security-<time>`); one leading elsewhere is left and disputed. Records of
   * sessions no longer running are forgotten.
   */
  export function recover(
    at: string,
    options: {
      root: string
      movable: (p: string) => boolean
      now: number
      display: (p: string) => string
      /**
       * Why the configuration being loaded does not hold `p` as a link to `target` (undefined: it does). Asked for
       * policy files (`SecuritySchema.FILE`) first, whose repair comes before the rest is judged, so that it can load
       * the policy to judge the audit log and rule-locked links. Without it every entry counts as held.
       */
      holds?: (p: string, target: string) => string | undefined
    },
  ): Recovered {
    const out: Recovered = { repaired: [], disputed: 0, ignored: [] }
    let record: Record_ | undefined
    let written = 0
    try {
      record = read(at)
      written = record ? fs.statSync(at).mtimeMs : 0
    } catch (error) {
      const aside = `${at}.unreadable-${options.now}`
      try {
        fs.renameSync(at, aside)
      } catch {
        // Left in place: read again next time.
      }
      out.problem = `the record of held links ${at} could not be read (${error instanceof Error ? error.message : String(error)}); it was moved to ${aside}`
      return out
    }
    if (!record) return out
    const ignore = (p: string, target: string, why: string) =>
      out.ignored.push({
        path: p,
        target,
        note: `[security] the record of held links ${at} names ${options.display(p)} as a protected link to ${target} that a command of an earlier session may have changed, but ${why}: it was not acted on and was dropped from the record (a record the security layer did not write, or one of another configuration). If a command did replace that link, put it back yourself.`,
      })
    // Policy files first: put back, they are in force when the rest is judged (`holds` may load the policy).
    const entries = Object.values(record.sessions).flatMap((session) =>
      Object.entries(session && typeof session.links === "object" ? session.links : {}).map(([p, target]) => ({
        session,
        p,
        target: String(target),
      })),
    )
    const policyFirst = (p: string) => (path.basename(p) === SecuritySchema.FILE ? 0 : 1)
    entries.sort((a, b) => policyFirst(a.p) - policyFirst(b.p))
    for (const { session, p, target } of entries) {
      const found = now(p, target)
      if (found.kind === "same") continue
      const refused = refusal(p, target, written, options.holds)
      if (refused) {
        delete session.links[p]
        ignore(p, target, refused)
        continue
      }
      const shown = options.display(p)
      if (found.kind === "link" || !options.movable(p)) {
        record.disputed[p] = target
        continue
      }
      let aside: string | undefined
      try {
        if (found.kind === "other") {
          aside = `${p}.blocked-by-security-${options.now}`
          fs.renameSync(p, aside)
        }
        fs.symlinkSync(target, p)
      } catch (error) {
        record.disputed[p] = target
        out.problem = `could not put back the link ${p} → ${target}: ${error instanceof Error ? error.message : String(error)}`
        continue
      }
      const why = `was a protected link to ${target} when a shell command started in an earlier OpenCode session, which ended before that command did (OpenCode quit, crashed or was killed)`
      out.repaired.push({
        path: p,
        target,
        aside,
        note: aside
          ? `[security] ${shown} ${why}, and was then a file or folder that no session checked: it was moved to ${options.display(aside)} and the link put back. If you replaced the link yourself, put your file back: it is kept from now on.`
          : `[security] ${shown} ${why}, and was then gone: the link was put back.`,
      })
    }
    for (const [key, session] of Object.entries(record.sessions))
      if (!session || typeof session.pid !== "number" || !alive(session.pid)) delete record.sessions[key]
    for (const [p, target] of Object.entries(record.disputed)) {
      if (now(p, target).kind === "same") {
        delete record.disputed[p]
        continue
      }
      // A disputed entry keeps the policy invalid and tells the user to link the path to its target: only for links
      // the configuration holds.
      const why = path.isAbsolute(p) ? options.holds?.(p, target) : "the path is not absolute"
      if (why) {
        delete record.disputed[p]
        ignore(p, target, why)
      }
    }
    out.disputed = Object.keys(record.disputed).length
    try {
      write(at, record)
    } catch (error) {
      out.problem = `could not update the record of held links ${at}: ${error instanceof Error ? error.message : String(error)}`
    }
    return out
  }

  /**
   * Held links left changed by a session that ended during a command, which now lead elsewhere (the command or the
   * user may have re-pointed them): each one keeps the policy invalid until the link is put back or the user deletes
   * the record. Read from disk, so a link put back counts at the next reload.
   */
  export function disputes(at: string): { file: string; pointer: string; message: string }[] {
    const record = safeRead(at)
    if (!record) return []
    const out: { file: string; pointer: string; message: string }[] = []
    for (const [p, target] of Object.entries(record.disputed)) {
      const found = now(p, target)
      if (found.kind === "same") continue
      const is =
        found.kind === "link"
          ? `now leads to ${found.to}`
          : found.kind === "removed"
            ? "now gone"
            : "now a file or folder"
      out.push({
        file: p,
        pointer: "",
        message: `this was a protected symbolic link to ${target} when a shell command started in an earlier OpenCode session, which ended before that command did (OpenCode quit, crashed or was killed); it ${is}, and the command may have changed it, so file access is refused. Put the link back (ln -sfn '${target}' '${p}'), or, if you changed it yourself, delete ${at} and start OpenCode again`,
      })
    }
    return out
  }
}

/**
 * The watched definitions across sessions (S5-5). Templates and watched `package.json` files a command changes are put
 * back once no command runs; a session that ends during a command (OpenCode quit, crashed or was killed) never gets
 * there, and the next start would take what the command planted as the user's. So before each command the layer
 * records, next to the held links, the state it knows of them (stamp, what in them reaches past the sandbox, and the
 * text to put back when kept), and forgets it once no command runs and the repairs ran. A record left behind is
 * compared with the disk at the next start, before the definitions are taken as they are.
 */
export namespace SecurityWatched {
  export const VERSION = 1

  export type Template = { stamp: string; kind: string; risks: string[]; text?: string }
  export type Bins = { stamp: string; bins: string[]; allowed: string[]; text?: string }
  export type Session = {
    pid: number
    at: number
    /** Template roots watched when the record was written: a file under one that the record does not name is new. */
    roots: { folder: string; kind: string }[]
    templates: Record<string, Template>
    bins: Record<string, Bins>
  }
  type Record_ = { version: number; root: string; sessions: Record<string, Session> }

  export function file(stateDir: string, root: string): string {
    return SecurityHeld.file(stateDir, root).replace(/\.json$/, ".watched.json")
  }

  function read(at: string): Record_ | undefined {
    const text = SecurityHeld.ownText(at)
    if (text === undefined) return undefined
    const parsed = JSON.parse(text) as Partial<Record_>
    if (parsed.version !== VERSION || typeof parsed.sessions !== "object" || !parsed.sessions)
      throw new Error(`${at} is not a record of watched definitions (version ${VERSION})`)
    return { version: VERSION, root: String(parsed.root ?? ""), sessions: parsed.sessions }
  }

  function write(at: string, record: Record_) {
    if (!Object.keys(record.sessions).length) {
      fs.rmSync(at, { force: true })
      return
    }
    const tmp = `${at}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
    fs.writeFileSync(tmp, JSON.stringify(record), { mode: 0o600, flag: "wx" })
    fs.renameSync(tmp, at)
  }

  const safeRead = (at: string) => {
    try {
      return read(at)
    } catch {
      return undefined
    }
  }

  /** Records, before a command runs, the definitions `session` knows as they were last checked. */
  export function arm(at: string, root: string, session: string, state: Omit<Session, "pid" | "at">, now: number) {
    const record = safeRead(at) ?? { version: VERSION, root, sessions: {} }
    record.sessions[session] = { pid: process.pid, at: now, ...state }
    write(at, record)
  }

  /** No command of `session` runs any more and its repairs ran. */
  export function disarm(at: string, session: string) {
    const record = safeRead(at)
    if (!record || !record.sessions[session]) return
    delete record.sessions[session]
    write(at, record)
  }

  export type Left = {
    /** The state sessions that ended during a command recorded, merged (the first record of a path wins). */
    roots: { folder: string; kind: string }[]
    templates: Map<string, Template>
    bins: Map<string, Bins>
    problem?: string
  }

  /**
   * At start: what sessions that may have ended during a command recorded, taken out of the record (the caller compares
   * it with the disk now). Sessions of other processes still running keep their entry (they disarm it themselves).
   * An unreadable record is moved aside.
   */
  export function take(at: string, now: number): Left | undefined {
    let record: Record_ | undefined
    try {
      record = read(at)
    } catch (error) {
      const aside = `${at}.unreadable-${now}`
      try {
        fs.renameSync(at, aside)
      } catch {
        // Left in place.
      }
      return {
        roots: [],
        templates: new Map(),
        bins: new Map(),
        problem: `the record of watched definitions ${at} could not be read (${error instanceof Error ? error.message : String(error)}); it was moved to ${aside}`,
      }
    }
    if (!record) return undefined
    const out: Left = { roots: [], templates: new Map(), bins: new Map() }
    for (const [key, session] of Object.entries(record.sessions)) {
      if (!session || typeof session !== "object") {
        delete record.sessions[key]
        continue
      }
      for (const r of Array.isArray(session.roots) ? session.roots : [])
        if (r && typeof r.folder === "string" && typeof r.kind === "string") out.roots.push(r)
      for (const [p, t] of Object.entries(session.templates ?? {}))
        if (!out.templates.has(p) && t && typeof t.stamp === "string" && Array.isArray(t.risks))
          out.templates.set(p, {
            stamp: t.stamp,
            kind: String(t.kind),
            risks: t.risks.map(String),
            text: typeof t.text === "string" ? t.text : undefined,
          })
      for (const [p, b] of Object.entries(session.bins ?? {}))
        if (!out.bins.has(p) && b && typeof b.stamp === "string" && Array.isArray(b.bins) && Array.isArray(b.allowed))
          out.bins.set(p, {
            stamp: b.stamp,
            bins: b.bins.map(String),
            allowed: b.allowed.map(String),
            text: typeof b.text === "string" ? b.text : undefined,
          })
      if (session.pid === process.pid || typeof session.pid !== "number" || !alive(session.pid))
        delete record.sessions[key]
    }
    try {
      write(at, record)
    } catch (error) {
      out.problem = `could not update the record of watched definitions ${at}: ${error instanceof Error ? error.message : String(error)}`
    }
    return out
  }

  const alive = Pid.running
}
