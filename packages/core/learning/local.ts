import crypto, { createHash } from "crypto"
import fs from "fs"
import os from "os"
import path from "path"
import type { Exposed } from "../builtins/feature"
import type { Host } from "../host"
import { ResourceProject } from "../resource/project"
import z from "zod"
import { NamedError } from "../util/error"
import { ProjectFolder } from "../util/folder"

/**
 * The project's local state of the integration features (learnings, captured tool calls): one folder under the
 * project root's `.opencode/`, never committed (`opencode-builtins init` adds it to `.gitignore`), written atomically.
 * Also the redaction every write goes through: the security layer's `scanAndRedact` when a policy is in force.
 *
 * @example
 * LocalState.dir("/repo") // "/repo/.opencode/builtins-local"
 * LocalState.redactor(host)("password: hunter2") // redacted when the policy protects it
 */
export namespace LocalState {
  /** Relative to the project root. */
  export const DIR = ".opencode/builtins-local"

  /** What `init` adds to `.gitignore`: this folder and the security layer's default audit log. */
  export const GITIGNORE = [`${DIR}/`, ".opencode-security-audit.log*"] as const

  /** The project root (the worktree holding the directory, else the directory), as the resource loader sees it. */
  export function root(directory: string, worktree?: string): string {
    return ResourceProject.resolve(directory, worktree).root
  }

  export function dir(root: string): string {
    return path.join(root, DIR)
  }

  /** What the folder's own `.gitignore` holds: everything in it, so no project commits it, with or without `init`. */
  export const OWN_GITIGNORE =
    "# Local state of OpenCode Built-ins (caches, heartbeats, captures): never committed.\n*\n"

  /**
   * Creates `folder` (the local state folder or one inside it) and the local state folder's own `.gitignore` ignoring
   * everything in it, when it has none (also after the folder was deleted); an existing one is left as it is. Only
   * below a project folder that exists (`ProjectFolder.mkdirInside`): a project path that names no folder (one whose
   * name is not UTF-8, read as U+FFFD) throws instead of being made as a twin folder outside the project.
   *
   * @example
   * LocalState.ensure("/repo/.opencode/builtins-local/recovery") // also writes /repo/.opencode/builtins-local/.gitignore
   */
  export function ensure(folder: string) {
    const marker = path.sep + path.normalize(DIR)
    const at = folder.lastIndexOf(marker + path.sep)
    const local = folder.endsWith(marker) ? folder : at >= 0 ? folder.slice(0, at + marker.length) : undefined
    if (!local) return void fs.mkdirSync(folder, { recursive: true })
    ProjectFolder.mkdirInside(local.slice(0, -marker.length) || path.sep, folder)
    try {
      fs.writeFileSync(path.join(local, ".gitignore"), OWN_GITIGNORE, { flag: "wx" })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
  }

  /**
   * Writes `file` atomically (a temporary file renamed over it), creating the folder. The temporary file is made new
   * (`O_EXCL`: never written through a link planted at its name), and the rename replaces a link at `file` itself:
   * nothing is written through a link.
   */
  export function write(file: string, text: string) {
    ensure(path.dirname(file))
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.tmp`
    try {
      fs.writeFileSync(tmp, text, { flag: "wx" })
      fs.renameSync(tmp, file)
    } catch (error) {
      fs.rmSync(tmp, { force: true })
      throw error
    }
  }

  /** A local state file that is a symbolic link (or not a plain file): nothing is written through it. */
  export class LinkedFile extends ProjectFolder.Linked {
    override name = "LocalStateLinkedFile"
  }

  /**
   * Appends `text` (whole lines) to `file` in one write, creating the file (and its folder). Never through a link:
   * the file is opened with `O_NOFOLLOW` (and `O_NONBLOCK`, so a FIFO planted there cannot hang the process), and
   * anything but a plain file throws `LinkedFile`; a captures.jsonl committed as a link to `~/.bashrc` had every
   * captured tool output appended to it. When the file does not end with a line break (a line cut short by a crash),
   * one is written first, so the new line is never glued to the broken one.
   *
   * @example
   * LocalState.append("/repo/.opencode/builtins-local/capture/captures.jsonl", '{"v":1,…}\n')
   */
  export function append(file: string, text: string) {
    const flags =
      fs.constants.O_RDWR |
      fs.constants.O_APPEND |
      fs.constants.O_CREAT |
      fs.constants.O_NOFOLLOW |
      fs.constants.O_NONBLOCK
    let fd: number
    try {
      fd = fs.openSync(file, flags, 0o600)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === "ENOENT") {
        ensure(path.dirname(file))
        fd = fs.openSync(file, flags, 0o600)
      } else if (code === "ELOOP" || code === "ENXIO" || code === "EISDIR") throw linked(file, error)
      else throw error
    }
    try {
      const stat = fs.fstatSync(fd)
      if (!stat.isFile()) throw linked(file)
      let prefix = ""
      if (stat.size > 0) {
        const last = Buffer.alloc(1)
        fs.readSync(fd, last, 0, 1, stat.size - 1)
        if (last[0] !== 0x0a) prefix = "\n"
      }
      fs.writeSync(fd, prefix + text)
    } finally {
      fs.closeSync(fd)
    }
  }

  /** How long `locked` waits for another process's lock by default (ms). */
  export const LOCK_WAIT_MS = 10_000
  /** A lock older than this is taken as left by a process that stopped holding it (ms); held locks last milliseconds. */
  export const LOCK_STALE_MS = 30_000

  /** Another process held the lock of a local state file for longer than the wait. */
  export const LockTimeout = NamedError.create(
    "LocalStateLockTimeout",
    z.object({ file: z.string(), waitedMs: z.number(), holder: z.string() }),
    (d) =>
      `${d.file}: another process (${d.holder}) held its lock for over ${d.waitedMs} ms; nothing was written (try again; ` +
      `a lock left by a process that is gone is taken over after ${LOCK_STALE_MS / 1000} s)`,
  )

  /** Locks this process holds now (a lock naming this process and not held here was left by an earlier one). */
  const held = new Set<string>()

  function sleep(ms: number) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
  }

  /** How far in the future a lock's modification time may lie and still be taken for its age (clock skew, ms). */
  export const LOCK_SKEW_MS = 5_000

  /**
   * Whether the lock whose text is `stamp` (`pid host time`) was left by a process that no longer holds it. A
   * modification time in the future (an extracted archive, `touch -d`, a clock set back) says nothing of the lock's
   * age (red team DD-L1: such a lock was never old enough, and every writer waited the whole wait, for ever): the
   * stamp's own time stands for it then, and a lock without a readable one is stale.
   */
  function stale(lock: string, stamp: string, mtimeMs: number, staleMs: number): boolean {
    const [pid, host, time] = stamp.split(" ")
    const now = Date.now()
    let age = now - mtimeMs
    const future = age < -LOCK_SKEW_MS
    // Written by a process between its open and its write: stale only once clearly old.
    if (!/^\d+$/.test(pid ?? "")) return future || age > Math.min(staleMs, 2_000)
    if (future) {
      if (!/^\d+$/.test(time ?? "")) return true
      age = now - Number(time)
      if (age < -LOCK_SKEW_MS) return true
    }
    if (age > staleMs) return true
    if (host !== os.hostname()) return false
    if (Number(pid) === process.pid) return !held.has(lock)
    try {
      process.kill(Number(pid), 0)
      return false
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ESRCH"
    }
  }

  /**
   * Runs `fn` (a read-modify-write of `file`) holding the cross-process lock of `file` (`<file>.lock`, made with
   * `O_EXCL`, never through a link), then releases it. Four processes recording learnings at once kept about half of
   * them, and a forget racing a record was undone: every writer read the whole file, changed it and renamed its copy
   * over it. A lock left by a process that is gone (its pid no longer runs on this host, or older than
   * `LOCK_STALE_MS`, by its modification time or, when that lies in the future, by its stamp) is taken over; a live one is waited for up to `waitMs` (default `LOCK_WAIT_MS`), then
   * `LockTimeout` is thrown and nothing is written. Synchronous, like the stores; `fn` must not take the same lock.
   *
   * @example
   * LocalState.locked("/repo/.opencode/builtins-local/learnings.json", () => write(merge(read())))
   */
  export function locked<T>(file: string, fn: () => T, options: { waitMs?: number; staleMs?: number } = {}): T {
    const waitMs = options.waitMs ?? LOCK_WAIT_MS
    const staleMs = options.staleMs ?? LOCK_STALE_MS
    const lock = `${file}.lock`
    const stamp = `${process.pid} ${os.hostname()} ${Date.now()} ${crypto.randomBytes(4).toString("hex")}`
    const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW
    const started = Date.now()
    let holder = "unknown"
    for (let attempt = 0; ; attempt++) {
      let fd: number | undefined
      try {
        fd = fs.openSync(lock, flags, 0o600)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === "ENOENT") {
          ensure(path.dirname(file))
          continue
        }
        if (code !== "EEXIST") throw error
      }
      if (fd !== undefined) {
        try {
          fs.writeSync(fd, stamp)
        } finally {
          fs.closeSync(fd)
        }
        break
      }
      let other: { text: string; mtimeMs: number } | undefined
      try {
        const stat = fs.lstatSync(lock)
        if (!stat.isFile()) throw linked(lock)
        other = { text: fs.readFileSync(lock, "utf8"), mtimeMs: stat.mtimeMs }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue // released meanwhile
        throw error
      }
      holder = other.text.split(" ").slice(0, 2).join(" on ") || "unknown"
      if (stale(lock, other.text, other.mtimeMs, staleMs)) {
        takeOver(lock, other.text)
        continue
      }
      const waited = Date.now() - started
      if (waited >= waitMs) throw new LockTimeout({ file, waitedMs: waitMs, holder: `pid ${holder}` })
      sleep(Math.min(2 + attempt * 2, 25, waitMs - waited) + Math.random() * 3)
    }
    held.add(lock)
    try {
      return fn()
    } finally {
      held.delete(lock)
      try {
        // Only our own lock: one taken over meanwhile (we were thought gone) is the new holder's.
        if (fs.readFileSync(lock, "utf8") === stamp) fs.unlinkSync(lock)
      } catch {
        // Gone already.
      }
    }
  }

  /**
   * Removes a stale lock whose text is `text`: moved aside first and checked, so a lock another process made in the
   * meantime is put back rather than removed.
   */
  function takeOver(lock: string, text: string) {
    const aside = `${lock}.stale-${process.pid}-${crypto.randomBytes(4).toString("hex")}`
    try {
      fs.renameSync(lock, aside)
    } catch {
      return // taken over or released by another process meanwhile
    }
    try {
      if (fs.readFileSync(aside, "utf8") !== text)
        try {
          fs.linkSync(aside, lock)
        } catch {
          // A newer lock is in place already.
        }
    } finally {
      fs.rmSync(aside, { force: true })
    }
  }

  function linked(file: string, cause?: unknown): LinkedFile {
    let what = "not a plain file"
    try {
      if (fs.lstatSync(file).isSymbolicLink()) what = "a symbolic link"
    } catch {}
    return new LinkedFile(
      `${file} is ${what}: the built-ins' local state is not written through it (remove it to let the state be kept)`,
      { cause },
    )
  }

  const bound = new WeakMap<Host, Exposed>()

  /**
   * Lets the features of one composition find the security layer's guard (the composition root calls this with the
   * object the security feature fills in when it starts).
   */
  export function bind(host: Host, exposed: Exposed) {
    bound.set(host, exposed)
  }

  export type Redactor = (text: string) => string

  /**
   * `scanAndRedact` for text about to be stored, read at call time: the guard's model-bound scan (secrets, protected
   * content, protected paths) when a policy is in force, else the text unchanged.
   */
  export function redactor(host: Host): Redactor {
    return (text) => {
      const guard = bound.get(host)?.guard
      if (!guard || !guard.active()) return text
      return guard.scanAndRedact(text, { scope: "llm", paths: "token" }).text
    }
  }

  /**
   * For a file's text the built-ins read themselves into model-bound text (a knowledge-base article's body, red team
   * GA3): the scan a plugin tool's output gets after its call (`resource-load`'s), read at call time — the lines of
   * segments the role may not read (`read` or `llm` denied), lines naming protected paths and secrets go, in the same
   * redaction form; the text unchanged without a policy in force. The `llm` scan alone (`redactor`) leaves a
   * `read`-only segment in.
   *
   * @example
   * LocalState.fileRedactor(host)("a\n<!-- @secure-start -->\npin=1\n<!-- @secure-end -->") // the pin line redacted
   */
  export function fileRedactor(host: Host): Redactor {
    return (text) => {
      const guard = bound.get(host)?.guard
      if (!guard || !guard.active()) return text
      return guard.scanAndRedact(text, { scope: "tool", paths: "line" }).text
    }
  }

  /**
   * Under which security policy and role local state is written or read back: the role in force and a hash of the
   * policy files' bytes, or undefined without a policy in force. Stored with what the integration features keep
   * (redacted for that role and policy only), so a reader of another role or policy can be shown less: an admin
   * session's captured output was listed to a viewer's MCP client.
   *
   * @example
   * LocalState.scope(host) // "viewer:3f2a…" under a policy, undefined without one
   */
  export function scope(host: Host): string | undefined {
    const guard = bound.get(host)?.guard
    return guard ? guardScope(guard) : undefined
  }

  /** What `scope` needs of the security layer's guard. */
  export type ScopeSource = Pick<NonNullable<Exposed["guard"]>, "active" | "accessVersion" | "status">

  /**
   * `scope` from the guard itself (the security feature installs it as `Host.accessScope`).
   *
   * @example
   * LocalState.guardScope(guard) // "viewer:3f2a…", undefined without a policy in force
   */
  export function guardScope(guard: ScopeSource): string | undefined {
    if (!guard.active()) return undefined
    // Every captured call asks: the policy files are hashed again only when the guard reloaded them.
    const version = guard.accessVersion()
    const known = scopes.get(guard)
    if (known?.version === version) return known.scope
    const status = guard.status()
    const scope = scopeOf(status.role, status.files)
    scopes.set(guard, { version, scope })
    return scope
  }

  const scopes = new WeakMap<ScopeSource, { version: number; scope: string }>()

  /**
   * What a cache file's name carries of the scope it was written under: nothing without a policy, else `.` and 16 hex
   * digits of a hash of the scope. Caches holding what the security check let one role read under one policy (the
   * resource index, discovery's parse cache) are kept one file per scope, so no process of another role or policy
   * reads, or is served, what this one could read.
   *
   * @example
   * LocalState.scopeTag(undefined) // ""
   * LocalState.scopeTag("viewer:3f2a…") // ".9c41…"
   */
  export function scopeTag(scope: string | undefined): string {
    return scope === undefined ? "" : "." + createHash("sha256").update(scope).digest("hex").slice(0, 16)
  }

  /**
   * The file of a cache kept per security scope (`Host.accessScope`): `file` itself without a policy, else `file` with
   * the scope's tag (`scopeTag`) before its `.json`. A cache built under a policy holds what the security check let
   * that role read under that policy (an admin-only article's name and description in the resource index); in a file
   * of its own, a process of another role or policy never reads it, nor is served from it, nor writes over it.
   *
   * @example
   * LocalState.scoped("/c/resource-index/ab12.json", undefined) // "/c/resource-index/ab12.json"
   * LocalState.scoped("/c/resource-index/ab12.json", "viewer:3f2a…") // "/c/resource-index/ab12.9c41….json"
   */
  export function scoped(file: string, scope: string | undefined): string {
    const tag = scopeTag(scope)
    if (!tag) return file
    return file.endsWith(".json") ? `${file.slice(0, -".json".length)}${tag}.json` : `${file}${tag}`
  }

  /** Scoped cache files not written for this long are removed when another scope of the same cache is written. */
  export const SCOPED_MAX_AGE_MS = 14 * 24 * 60 * 60 * 1000

  /**
   * Removes the files of other scopes of the cache `base` (`scoped(base, …)` other than `keep`) not written for
   * `maxAgeMs`: every policy edit starts a new scope, and the files of the old ones would otherwise stay for good. Best
   * effort (a file gone meanwhile, a folder that cannot be listed); returns the names removed.
   *
   * @example
   * LocalState.pruneScoped("/c/resource-index/ab12.json", "/c/resource-index/ab12.9c41….json") // ["ab12.0f3e….json"]
   */
  export function pruneScoped(base: string, keep: string, maxAgeMs = SCOPED_MAX_AGE_MS, now = Date.now()): string[] {
    const folder = path.dirname(base)
    const stem = path.basename(base).replace(/\.json$/, "")
    const json = base.endsWith(".json") ? "\\.json" : ""
    const shape = new RegExp(`^\\.[0-9a-f]{16}${json}$`)
    const removed: string[] = []
    let names: string[]
    try {
      names = fs.readdirSync(folder)
    } catch {
      return removed
    }
    for (const name of names) {
      if (name === path.basename(keep) || !name.startsWith(stem) || !shape.test(name.slice(stem.length))) continue
      try {
        const stat = fs.statSync(path.join(folder, name))
        if (!stat.isFile() || now - stat.mtimeMs < maxAgeMs) continue
        fs.rmSync(path.join(folder, name), { force: true })
        removed.push(name)
      } catch {
        // Gone meanwhile, or not removable: left.
      }
    }
    return removed
  }

  /**
   * The built-ins' own folder in the user's cache (`$XDG_CACHE_HOME/opencode-builtins`, else `~/.cache/…`): the
   * resource index caches of every project, tree-sitter grammars, the security layer's record of held links.
   *
   * @example
   * LocalState.cacheDir({ XDG_CACHE_HOME: "/c" }) // "/c/opencode-builtins"
   */
  export function cacheDir(env: Record<string, string | undefined> = process.env): string {
    return path.join(env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), ".cache"), "opencode-builtins")
  }

  /**
   * Makes the built-ins' cache folder (`cacheDir`) now, before the security layer starts, and returns it. Left to be
   * made by the first index write, it was absent when the layer looked: reached through a link (`XDG_CACHE_HOME` or
   * `~/.cache` a symbolic link), the place the link leads was taken for a protected path a command might create, and
   * the folder the process itself made there (its index cache and the record of held links inside) was renamed
   * `opencode-builtins.blocked-by-security-<time>`, a name the sandbox does not hide. Made first, it is an existing
   * folder the layer holds (hidden from commands) at its physical path, whatever link leads to it. Best effort: a
   * folder that cannot be made is left to the layer as before.
   *
   * @example
   * LocalState.ensureCache({ XDG_CACHE_HOME: "/c" }) // "/c/opencode-builtins" (made when absent)
   */
  export function ensureCache(env: Record<string, string | undefined> = process.env): string {
    const dir = cacheDir(env)
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    } catch {
      // The layer reports what it cannot hold; the resource index works without a cache.
    }
    return dir
  }

  /**
   * The built-ins' own folder in the user's state folder (`$XDG_STATE_HOME/opencode-builtins`, else
   * `~/.local/state/…`): what must outlive a cleared cache (the moment the local state's seal began, `LocalSeal.epoch`).
   *
   * @example
   * LocalState.stateDir({ XDG_STATE_HOME: "/s" }) // "/s/opencode-builtins"
   */
  export function stateDir(env: Record<string, string | undefined> = process.env): string {
    const state =
      env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME)
        ? env.XDG_STATE_HOME
        : path.join(env.HOME || os.homedir(), ".local", "state")
    return path.join(state, "opencode-builtins")
  }

  /**
   * What the security layer hides from every role while a policy exists (`SecurityGuard` `hide`): the project's local
   * state folder, the built-ins' cache folder and their state folder (`stateDir`). Both are written by OpenCode's process alone and hold what sessions
   * of every role saw or could read (heartbeats with commands, captured calls, learnings, the resource index of an
   * admin session): a command of a viewer session read an admin-only article's description from the index cache.
   * Nothing needs them readable from a tool or a command: OpenCode's process reads them outside the sandbox, and the
   * user reads them with `opencode-builtins learnings|capture|recovery`.
   *
   * @example
   * LocalState.hidden("/repo") // ["/repo/.opencode/builtins-local", "/home/me/.cache/opencode-builtins", "/home/me/.local/state/opencode-builtins"]
   */
  export function hidden(root: string, env: Record<string, string | undefined> = process.env): string[] {
    return [dir(root), cacheDir(env), stateDir(env)]
  }

  /**
   * The security role in force (the role part of `scope`), or undefined without a policy in force.
   *
   * @example
   * LocalState.role(host) // "viewer" under a policy, undefined without one
   */
  export function role(host: Host): string | undefined {
    const guard = bound.get(host)?.guard
    return guard?.active() ? guard.status().role : undefined
  }

  /**
   * The scope of a role under the policy files `files` (their paths and bytes).
   *
   * @example
   * LocalState.scopeOf("viewer", ["/repo/.opencode-security.json"]) // "viewer:3f2a…"
   */
  export function scopeOf(role: string, files: readonly string[]): string {
    const hash = createHash("sha256")
    for (const file of files) {
      hash.update(file + "\0")
      try {
        hash.update(fs.readFileSync(file))
      } catch {
        hash.update("unreadable")
      }
    }
    return `${role}:${hash.digest("hex").slice(0, 16)}`
  }

  /** Resolves when the guard's first index of protected files is built (at most a few seconds), or at once. */
  export async function ready(host: Host): Promise<void> {
    await bound.get(host)?.ready?.()
  }
}
