import z from "zod"
import { NamedError } from "../util/error"
import { StoredTime } from "../util/time"

/**
 * Options, the heartbeat file's shape and the named errors of crash recovery (see `RecoveryHooks`, `RecoveryLease`,
 * `RecoveryActions`).
 *
 * @example
 * const beat = SessionRecovery.Heartbeat.parse(JSON.parse(text)) // throws on a truncated or foreign file
 */
export namespace SessionRecovery {
  /** The `sessionRecovery` options section (`.opencode/opencode-builtins.json` or the plugin's options). */
  export const Config = z.object({
    /** How long a heartbeat's lease lasts without renewal, in ms (default 30 s; renewed every third of it). */
    leaseMs: z.number().int().min(3_000).max(600_000).optional(),
    /** Heartbeats older than this many days are collected at startup (default 7). */
    maxAgeDays: z.number().min(0.01).max(365).optional(),
  })
  export type Config = z.infer<typeof Config>
  export type Settings = Required<Config>
  export const DEFAULTS: Settings = { leaseMs: 30_000, maxAgeDays: 7 }

  export function settings(config: Config): Settings {
    return { ...DEFAULTS, ...Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined)) }
  }

  /** Folder of the heartbeats, inside the project's local state folder (`LocalState.DIR`). */
  export const FOLDER = "recovery"

  export const Todo = z.looseObject({ content: z.string(), status: z.string(), priority: z.string().optional() })
  export type Todo = z.infer<typeof Todo>

  /**
   * Who owns a session: the process (pid and its start time in clock ticks since boot, from /proc/<pid>/stat on
   * Linux) on one boot of one machine. A pid alone is not an identity: after a crash the pid may be reused.
   */
  export const Owner = z.object({
    pid: z.number().int().positive(),
    startTime: z.string().optional(),
    boot: z.string().optional(),
    hostname: z.string(),
    /**
     * The owner's pid namespace (Linux: the link of /proc/self/ns/pid, e.g. "pid:[4026531836]"). A container sharing
     * the host's hostname and boot id has its own: its pid means nothing outside it.
     */
    pidns: z.string().optional(),
  })
  export type Owner = z.infer<typeof Owner>

  /** A tool call that started and has not ended (what a crash leaves pending or running). */
  export const Running = z.object({
    callID: z.string(),
    tool: z.string(),
    /** A short description (a bash command, a file path), for the report. */
    title: z.string().optional(),
    started: StoredTime.schema,
  })
  export type Running = z.infer<typeof Running>

  /** One busy session's heartbeat: `<local state>/recovery/<sessionID>.json`, removed when the session goes idle. */
  export const Heartbeat = z.object({
    version: z.literal(1),
    sessionID: z.string().min(1),
    /** The project directory the session runs in (OpenCode's instance directory). */
    directory: z.string(),
    /** The working directory of the last shell call (its `workdir`), else `directory`. */
    workdir: z.string(),
    title: z.string().optional(),
    owner: Owner,
    lease: z.object({ renewed: StoredTime.schema, expires: StoredTime.schema }),
    /** When the session became busy. */
    busySince: StoredTime.schema,
    /** The last todo list seen (todowrite or todo.updated); null while unknown. */
    todos: z.array(Todo).nullable(),
    running: z.array(Running),
    /**
     * The security role and policy the session ran under (`Host.accessScope`: the role and a hash of the policy
     * files); absent without a policy, and in heartbeats written before it was recorded. Its title, calls and todos
     * are shown in sessions of that scope only (`RecoveryDecide.visible`).
     */
    scope: z.string().optional(),
  })
  export type Heartbeat = z.infer<typeof Heartbeat>

  /** The text of the error result a resumed or dismissed session's interrupted tool calls get. */
  export const INTERRUPTED =
    "Interrupted: OpenCode stopped (crash or kill) while this tool call was running. It was not re-run by crash " +
    "recovery; its effects, if any, are unknown — check them before repeating it."

  /** The command users list, resume and dismiss interrupted sessions with inside OpenCode (`/recover`). */
  export const COMMAND = "recover"

  /** Key of the metadata on the part crash recovery adds to a resumed session. */
  export const MARK = "opencode-builtins.sessionRecovery"

  export const NotFound = NamedError.create(
    "SessionRecoveryNotFound",
    z.object({ sessionID: z.string(), folder: z.string() }),
    (d) =>
      `no heartbeat of session '${d.sessionID}' in ${d.folder} (opencode-builtins recovery list shows the interrupted sessions)`,
  )
  export const OwnerAlive = NamedError.create(
    "SessionRecoveryOwnerAlive",
    z.object({ sessionID: z.string(), pid: z.number(), namespace: z.boolean().optional() }),
    (d) =>
      d.namespace
        ? `session '${d.sessionID}' is owned by an OpenCode in another pid namespace (a container; pid ${d.pid} there) whose lease is still renewed: it may be alive and cannot be checked from here; stop it first, or wait for its lease to expire`
        : `session '${d.sessionID}' is still owned by a live OpenCode process (pid ${d.pid}); stop it first or wait for it to finish`,
  )
  /** The session itself is gone from OpenCode (deleted): final, its heartbeat has been removed. */
  export const Deleted = NamedError.create(
    "SessionRecoveryDeleted",
    z.object({ sessionID: z.string() }),
    (d) =>
      `session '${d.sessionID}' no longer exists in OpenCode (it was deleted); its crash report is removed, there is nothing left to recover`,
  )
  export const HostUnsupported = NamedError.create(
    "SessionRecoveryHostUnsupported",
    z.object({ operation: z.string() }),
    (d) => `crash recovery needs host.sessions.${d.operation}, which this host does not provide`,
  )
}
