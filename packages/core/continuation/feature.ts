import type { BuiltinFeature } from "../builtins/feature"
import { validSection } from "../options"
import { ContinuationHooks } from "./hooks"
import { TodoContinuation } from "./schema"

/**
 * Todo continuation: when a turn ends with todos still open, the session goes on with a synthetic message listing
 * them — at most `maxContinuations` times (default 3, 0–10) after a real user message, stopping early after two
 * continuations in a row without progress, and never after an abort, while a question or permission waits, when the
 * model asks the user something, in plan mode or an agent that may not edit, in subagent sessions (unless
 * `subagents`), during compaction, or when switched off (`enabled: false`, or `/continuation off` in the session).
 * Options (section `todoContinuation`): `maxContinuations`, `subagents`, `enabled`.
 */
export const TodoContinuationFeature: BuiltinFeature = {
  id: "todo-continuation",
  section: "todoContinuation",
  async init({ options, log, host }) {
    const config = validSection(TodoContinuation.Config, options, "todoContinuation", log)
    return ContinuationHooks.create({ host, settings: TodoContinuation.settings(config), log }).hooks
  },
}
