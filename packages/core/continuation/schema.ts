import z from "zod"
import { NamedError } from "../util/error"

/**
 * Options, todo counting and the marker of the todo continuation (see `ContinuationDecide`).
 *
 * @example
 * TodoContinuation.counts([{ content: "a", status: "pending" }, { content: "b", status: "completed" }])
 * // { open: 1, completed: 1, total: 2 }
 */
export namespace TodoContinuation {
  /** The `todoContinuation` options section (`.opencode/opencode-builtins.json` or the plugin's options). */
  export const Config = z.object({
    /** Continuations after one real user message (default 3, 0 switches the feature off). */
    maxContinuations: z.number().int().min(0).max(10).optional(),
    /** Also continue in subagent sessions (default false). */
    subagents: z.boolean().optional(),
  })
  export type Config = z.infer<typeof Config>
  export type Settings = Required<Config>
  export const DEFAULTS: Settings = { maxContinuations: 3, subagents: false }

  export function settings(config: Config): Settings {
    return { ...DEFAULTS, ...Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined)) }
  }

  export type Todo = { content: string; status: string; priority?: string }
  export type Counts = { open: number; completed: number; total: number }

  /**
   * What a todo's status means here. OpenCode's `todowrite` takes any string (`status: z.string()`, described as
   * "pending, in_progress, completed, cancelled"), and models write other spellings and words. A status is compared
   * without case, blanks, `-`, `_`, `.`, `/` and apostrophes ("In Progress", "in-progress", "IN_PROGRESS" and
   * "inprogress" are one), then looked up in `STATES`:
   *
   * - open (continued): pending, todo, open, not started, new, planned, queued, backlog, in progress, progress, doing,
   *   active, started, ongoing, wip, working, running, current;
   * - held (not continued, not done: the model parked it): blocked, on hold, hold, paused, deferred, postponed, waiting;
   * - completed: completed, complete, done, finished, resolved, fixed, closed, succeeded;
   * - cancelled: cancelled, canceled, cancel, dropped, abandoned, skipped, obsolete, won't do, wontfix, not needed,
   *   removed, rejected, failed, superseded.
   *
   * Any other status is open: only a todo marked done, dropped or parked needs no more work, and a status nobody
   * foresaw costs at most the bounded continuations (before, such todos were neither open nor done and a turn ending
   * with them got no continuation at all: red team CE-6).
   *
   * @example
   * TodoContinuation.state("In Progress") // "open"
   * TodoContinuation.state("DONE") // "completed"
   */
  export function state(status: string): State {
    const key = String(status ?? "")
      .toLowerCase()
      .replace(/[\s\-_./'’]+/g, "")
    return STATES.get(key) ?? "open"
  }
  export type State = "open" | "held" | "completed" | "cancelled"

  const FAMILIES: Record<State, string[]> = {
    open: [
      "pending",
      "todo",
      "open",
      "notstarted",
      "new",
      "planned",
      "queued",
      "backlog",
      "inprogress",
      "progress",
      "doing",
      "active",
      "started",
      "ongoing",
      "wip",
      "working",
      "running",
      "current",
    ],
    held: ["blocked", "onhold", "hold", "paused", "deferred", "postponed", "waiting"],
    completed: ["completed", "complete", "done", "finished", "resolved", "fixed", "closed", "succeeded"],
    cancelled: [
      "cancelled",
      "canceled",
      "cancel",
      "dropped",
      "abandoned",
      "skipped",
      "obsolete",
      "wontdo",
      "wontfix",
      "notneeded",
      "removed",
      "rejected",
      "failed",
      "superseded",
    ],
  }
  /** The normalised statuses `state` knows, each with its meaning. */
  export const STATES: ReadonlyMap<string, State> = new Map(
    Object.entries(FAMILIES).flatMap(([state, keys]) => keys.map((k) => [k, state as State] as const)),
  )

  /** Whether a todo is still to do (see `state`). */
  export function isOpen(todo: Pick<Todo, "status">): boolean {
    return state(todo.status) === "open"
  }

  export function counts(todos: readonly Todo[]): Counts {
    let open = 0
    let completed = 0
    for (const todo of todos) {
      const s = state(todo.status)
      if (s === "open") open++
      else if (s === "completed") completed++
    }
    return { open, completed, total: todos.length }
  }

  /** Progress: more todos completed, or fewer open. Rewording, reordering and status churn are not progress. */
  export function progressed(before: Counts, after: Counts): boolean {
    return after.completed > before.completed || after.open < before.open
  }

  /** Key of the metadata a continuation part carries (the session's continuations are counted from these parts). */
  export const MARK = "opencode-builtins.todoContinuation"

  export const Mark = z.object({
    /** 1-based number of this continuation since the last real user message. */
    index: z.number().int().min(1),
    /** The limit in force when it was sent. */
    of: z.number().int().min(0),
    /** The assistant message whose end triggered it. */
    after: z.string(),
    /** The todo counts when it was sent (progress is measured against them). */
    counts: z.object({ open: z.number(), completed: z.number(), total: z.number() }),
  })
  export type Mark = z.infer<typeof Mark>

  /** The command users switch the continuation of a session with (`/continuation off`, `/continuation on`). */
  export const COMMAND = "continuation"
  /** The directive the command's template expands to; the last one in a session's history is in force. */
  export const DIRECTIVE = /\[todo-continuation:\s*(on|off)\s*\]/i

  /** The host lacks a session operation the feature needs. */
  export const HostUnsupported = NamedError.create(
    "TodoContinuationHostUnsupported",
    z.object({ operation: z.string() }),
    (d) => `todo continuation needs host.sessions.${d.operation}, which this host does not provide`,
  )
}
