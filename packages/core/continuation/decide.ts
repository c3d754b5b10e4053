import type { HostSessions } from "../sessions"
import type { ContinuationHistory } from "./history"
import { TodoContinuation } from "./schema"
import { ContinuationText } from "./text"

/**
 * The continuation decision, as a pure function of what is known when the model's text of a step is complete (the
 * `experimental.text.complete` seam, which OpenCode awaits before the step ends, so a continuation added there is
 * taken by the same loop: no idle in between, which is why it works in `opencode run` too).
 *
 * Bounded by construction: continuations are counted from the session's history since the last real user message;
 * the limit `maxContinuations` (default 3, 0–10) is never exceeded, and two continuations in a row after which the
 * todos made no progress (completed count up or open count down) stop it early — a model that never updates its todos
 * gets min(limit, 3) continuations.
 *
 * @example
 * const decision = ContinuationDecide.decide(facts)
 * if (decision.continue) await append(ContinuationDecide.prompt(decision))
 * else log.debug(`no continuation: ${decision.reason}`)
 */
export namespace ContinuationDecide {
  /** The assistant message whose text just completed. */
  export type Turn = {
    messageID: string
    /** The text of the part that completed. */
    text: string
    agent?: string
    /** A compaction summary (or the compaction agent). */
    summary: boolean
    /** The message already holds tool calls: the step is not the turn's last. */
    hasTools: boolean
    /**
     * A real user message newer than this one is stored (sent while the model wrote, or queued): OpenCode answers
     * it next, and it must stay the last instruction the model reads.
     */
    userAfter?: boolean
  }

  export type Facts = {
    settings: TodoContinuation.Settings
    turn: Turn
    todos: readonly TodoContinuation.Todo[]
    history: ContinuationHistory.Derived
    /** The session is a subagent's (has a parent). */
    subagent: boolean
    /** The turn's agent: may it edit files, is it the plan agent? Undefined when unknown. */
    agent?: { mayEdit: boolean; plan: boolean }
    /** A question or permission request of the session is waiting for the user. */
    pendingInput: boolean
  }

  export type Reason =
    | "disabled"
    | "compaction"
    | "not-final"
    | "already-continued"
    | "failed"
    | "aborted"
    | "subagent"
    | "plan-mode"
    | "read-only-agent"
    | "switched-off"
    | "user-stop"
    | "stop-acknowledged"
    | "user-waiting"
    | "pending-input"
    | "no-open-todos"
    | "asks-user"
    | "limit"
    | "no-progress"

  export type Decision =
    | {
        continue: true
        /** 1-based number of the continuation to send. */
        index: number
        of: number
        open: TodoContinuation.Todo[]
        counts: TodoContinuation.Counts
        /** No progress since the previous continuation (the stop-early rule counts these). */
        stalled: boolean
      }
    | { continue: false; reason: Reason }

  const skip = (reason: Reason): Decision => ({ continue: false, reason })

  export function decide(facts: Facts): Decision {
    const { settings, turn, history } = facts
    if (settings.maxContinuations <= 0) return skip("disabled")
    if (turn.summary || turn.agent === "compaction") return skip("compaction")
    if (turn.hasTools) return skip("not-final")
    if (history.answered.has(turn.messageID)) return skip("already-continued")
    if (turn.userAfter) return skip("user-waiting")
    if (history.aborted) return skip("aborted")
    if (history.failed) return skip("failed")
    if (facts.subagent && !settings.subagents) return skip("subagent")
    if (facts.agent?.plan) return skip("plan-mode")
    if (facts.agent && !facts.agent.mayEdit) return skip("read-only-agent")
    if (history.switchedOff) return skip("switched-off")
    if (history.userStopped) return skip("user-stop")
    // The model's direct answer to the user did no work and says it stops: the user asked, in whatever words.
    if (
      history.user &&
      !history.worked &&
      !history.continuations.length &&
      ContinuationText.acknowledgesStop(turn.text)
    )
      return skip("stop-acknowledged")
    if (facts.pendingInput) return skip("pending-input")
    const counts = TodoContinuation.counts(facts.todos)
    if (counts.open === 0) return skip("no-open-todos")
    if (ContinuationText.asksUser(turn.text)) return skip("asks-user")
    const sent = history.continuations
    if (sent.length >= settings.maxContinuations) return skip("limit")
    const stalled = stalledRun(sent, counts)
    if (stalled.next && stalled.run >= 2) return skip("no-progress")
    return {
      continue: true,
      index: sent.length + 1,
      of: settings.maxContinuations,
      open: facts.todos.filter(TodoContinuation.isOpen),
      counts,
      stalled: stalled.next,
    }
  }

  /**
   * `run`: how many of the continuations sent last in a row followed no progress (the first one never counts);
   * `next`: whether the one to send now would follow no progress too.
   */
  export function stalledRun(sent: readonly ContinuationHistory.Continuation[], now: TodoContinuation.Counts) {
    let run = 0
    for (let i = sent.length - 1; i >= 1; i--) {
      if (TodoContinuation.progressed(sent[i - 1].mark.counts, sent[i].mark.counts)) break
      run++
    }
    const next = sent.length > 0 && !TodoContinuation.progressed(sent[sent.length - 1].mark.counts, now)
    return { run, next }
  }

  /**
   * May `agent` edit files? Its rule list is evaluated as OpenCode does (the last rule matching permission `edit` and
   * an ordinary project file wins; no rule means "ask", which may edit); the legacy `tools` map can switch edit tools
   * off. The plan agent counts as plan mode whatever its rules say.
   */
  export function agentKind(agent: HostSessions.Agent | undefined): Facts["agent"] {
    if (!agent) return undefined
    const plan = agent.name === "plan"
    const rules = Array.isArray(agent.permission) ? (agent.permission as unknown[]) : []
    let action: string | undefined
    for (const rule of rules) {
      if (!rule || typeof rule !== "object") continue
      const r = rule as { permission?: unknown; pattern?: unknown; action?: unknown }
      if (typeof r.permission !== "string" || typeof r.action !== "string") continue
      const pattern = typeof r.pattern === "string" ? r.pattern : "*"
      if (wildcard(r.permission, "edit") && wildcard(pattern, "src/index.ts")) action = r.action
    }
    const tools = agent.tools ?? {}
    const toolsOff = ["edit", "write"].every((t) => tools[t] === false)
    return { plan, mayEdit: action !== "deny" && !toolsOff }
  }

  const patterns = new Map<string, RegExp>()
  /** OpenCode's wildcard: `*` any run of characters, `?` one character, the rest literal. */
  export function wildcard(pattern: string, value: string): boolean {
    let re = patterns.get(pattern)
    if (!re) {
      const body = pattern
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".")
      re = new RegExp(`^${body}$`, "s")
      patterns.set(pattern, re)
    }
    return re.test(value)
  }

  /** The synthetic text the continuation message carries (the open todos, what to do, how to switch it off). */
  export function prompt(decision: Extract<Decision, { continue: true }>): string {
    const lines = decision.open.map((t) => `- [${t.status}] ${t.content}${t.priority ? ` (${t.priority})` : ""}`)
    return [
      `[todo continuation ${decision.index}/${decision.of}] Your turn ended with ${decision.counts.open} of ` +
        `${decision.counts.total} todos still open:`,
      ...lines,
      "",
      "Continue with the next open todo now, and mark each one completed (todowrite) as soon as it is done. If a todo " +
        "is blocked or needs the user's decision, say so and ask the user instead of continuing.",
      "(Automatic reminder from opencode-builtins; the user can switch it off for this session with /continuation off.)",
    ].join("\n")
  }
}
