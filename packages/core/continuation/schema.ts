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

  /** Statuses of a todo that is still to do. */
  export const OPEN: ReadonlySet<string> = new Set(["pending", "in_progress"])

  export function counts(todos: readonly Todo[]): Counts {
    let open = 0
    let completed = 0
    for (const todo of todos) {
      if (OPEN.has(todo.status)) open++
      else if (todo.status === "completed") completed++
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
