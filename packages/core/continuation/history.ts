import { OpenCode } from "../opencode"
import { TodoContinuation } from "./schema"
import { ContinuationText } from "./text"

/**
 * A session's continuation state, derived from its stored messages (all of them, compacted ones included) — never
 * kept on the side, so a restart, a compaction or a revert cannot leave a stale count.
 *
 * - A **real user message** is a user message with content the user wrote or attached (a non-synthetic text, a file,
 *   an agent or subtask part); continuation messages, compaction requests and synthetic-only messages are not.
 * - A **continuation** is a user message carrying a part with the `TodoContinuation.MARK` metadata. It is
 *   **effective** when the assistant message it followed ended the turn (no tool calls): only effective ones caused
 *   an extra model request, and only they count against the limit. One whose assistant message went on to call tools
 *   (text came before the tool calls in the stream) is **void**, and so is one no assistant answered before the next
 *   user message (the turn was aborted or failed): both are left out of what the model is sent.
 *
 * @example
 * const history = ContinuationHistory.derive(messages)
 * history.continuations.length // continuations since the last real user message
 */
export namespace ContinuationHistory {
  export type Part = {
    id?: string
    type: string
    text?: string
    synthetic?: boolean
    ignored?: boolean
    metadata?: Record<string, unknown>
    tool?: string
    callID?: string
    state?: { status: string; [key: string]: unknown }
  }
  export type Info = {
    id: string
    role: string
    agent?: string
    mode?: string
    summary?: unknown
    error?: unknown
    finish?: string
    providerID?: string
    modelID?: string
    model?: { providerID?: string; modelID?: string; variant?: string }
    variant?: string
  }
  export type Message = { info: Info; parts: Part[] }

  export type Continuation = { messageID: string; mark: TodoContinuation.Mark }

  export type Derived = {
    /** Effective continuations since the last real user message, oldest first. */
    continuations: Continuation[]
    /** Assistant messages a continuation (effective or void) was already sent after. */
    answered: Set<string>
    /** The last real user message, if any. */
    user?: Message
    /** The text of the last real user message. */
    userText: string
    /** The last real user message asks the agent to stop (see `ContinuationText.userStops`). */
    userStopped: boolean
    /**
     * An assistant message after the last real user message called a tool other than the todo list's: the model did
     * work since (a model told to stop often marks its todos paused first, which is not work).
     */
    worked: boolean
    /** Switched off for the session by the last `/continuation off|on` directive in its history. */
    switchedOff: boolean
    /** A model request after the last real user message ended in an error (an abort included). */
    failed: boolean
    /** That error was an abort (Esc, `session.abort`). */
    aborted: boolean
  }

  /** The continuation mark of a message, when it is one. */
  export function mark(message: Message): TodoContinuation.Mark | undefined {
    if (message.info.role !== "user") return undefined
    for (const part of message.parts) {
      const raw = part.metadata?.[TodoContinuation.MARK]
      if (raw === undefined) continue
      const parsed = TodoContinuation.Mark.safeParse(raw)
      if (parsed.success) return parsed.data
    }
    return undefined
  }

  export function isReal(message: Message): boolean {
    if (message.info.role !== "user" || mark(message)) return false
    return message.parts.some(
      (p) =>
        (p.type === "text" && !p.synthetic && !p.ignored && (p.text ?? "").trim() !== "") ||
        p.type === "file" ||
        p.type === "agent" ||
        p.type === "subtask",
    )
  }

  export function hasTools(message: Message): boolean {
    return message.parts.some((p) => p.type === "tool")
  }

  function errorName(error: unknown): string | undefined {
    if (!error || typeof error !== "object") return undefined
    const name = (error as { name?: unknown }).name
    return typeof name === "string" ? name : "Error"
  }

  /** A text part the user typed (or a command of theirs expanded to): not synthetic, not ignored. */
  function typed(part: Part): part is Part & { type: "text"; text: string } {
    return part.type === "text" && !part.synthetic && !part.ignored && !!part.text
  }

  export function derive(messages: readonly Message[]): Derived {
    let last = -1
    let switchedOff = false
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]
      if (!isReal(message)) continue
      last = i
      for (const part of message.parts) {
        // Only what the user wrote (or the /continuation command expanded to, a plain text part): not the synthetic
        // parts OpenCode adds, which hold an attached file's content as its read tool showed it, nor ignored parts.
        if (!typed(part)) continue
        const directive = TodoContinuation.DIRECTIVE.exec(part.text)
        if (directive) switchedOff = directive[1].toLowerCase() === "off"
      }
    }
    const user = last >= 0 ? messages[last] : undefined
    const userText = (user?.parts ?? [])
      .filter(typed)
      .map((p) => p.text ?? "")
      .join("\n")
    const byID = new Map(messages.map((m) => [m.info.id, m]))
    const continuations: Continuation[] = []
    const answered = new Set<string>()
    let failed = false
    let aborted = false
    let worked = false
    for (let i = last + 1; i < messages.length; i++) {
      const message = messages[i]
      if (message.info.role === "assistant") {
        if (message.parts.some((p) => p.type === "tool" && !OpenCode.TODO_TOOLS.has(p.tool ?? ""))) worked = true
        const name = errorName(message.info.error)
        if (name) {
          failed = true
          if (name === "MessageAbortedError" || name === "AbortError") aborted = true
        }
        continue
      }
      const m = mark(message)
      if (!m) continue
      answered.add(m.after)
      const after = byID.get(m.after)
      if (after && hasTools(after)) continue
      continuations.push({ messageID: message.info.id, mark: m })
    }
    return {
      continuations,
      answered,
      user,
      userText,
      userStopped: ContinuationText.userStops(userText),
      worked,
      switchedOff,
      failed,
      aborted,
    }
  }

  /**
   * Is there a real user message newer than the assistant message `messageID` (the user typed while the model wrote,
   * a queued prompt)? OpenCode's loop answers that message next; a continuation added now would land after it and
   * become the last instruction the model reads (tester AD, AD-2). Newer means later in the stored history, which
   * OpenCode keeps in id order; when `messageID` is not (yet) in it, the ids are compared (both releases make
   * ascending ids).
   */
  export function userAfter(messages: readonly Message[], messageID: string): boolean {
    const at = messages.findIndex((m) => m.info.id === messageID)
    return messages.some((m, i) => (at >= 0 ? i > at : m.info.id > messageID) && isReal(m))
  }

  /**
   * Continuation messages that must not reach the model: void ones (their assistant message called tools),
   * unanswered ones followed by another user message, and ones added after a real user message newer than the
   * assistant message they follow (the user's message wins; tester AD, AD-2). Returns the ids to drop.
   */
  export function dropped(messages: readonly Message[]): Set<string> {
    const out = new Set<string>()
    const byID = new Map(messages.map((m) => [m.info.id, m]))
    for (let i = 0; i < messages.length; i++) {
      const m = mark(messages[i])
      if (!m) continue
      const after = byID.get(m.after)
      const next = messages[i + 1]
      if ((after && hasTools(after)) || next?.info.role === "user") out.add(messages[i].info.id)
      else if (userAfter(messages.slice(0, i), m.after)) out.add(messages[i].info.id)
    }
    return out
  }
}
