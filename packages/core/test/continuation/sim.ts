import { ContinuationHooks } from "../../continuation/hooks"
import type { ContinuationHistory } from "../../continuation/history"
import { TodoContinuation } from "../../continuation/schema"
import type { Host } from "../../host"
import type { HostSessions } from "../../sessions"
import { Logger } from "../../util/log"

export type Todo = TodoContinuation.Todo
/** What the scripted model does in one step. */
export type Step = { text?: string; todos?: Todo[]; tools?: boolean; textBeforeTools?: boolean; error?: string }

const BUILD: HostSessions.Agent = { name: "build", permission: [{ permission: "*", pattern: "*", action: "allow" }] }
const PLAN: HostSessions.Agent = {
  name: "plan",
  permission: [
    { permission: "edit", pattern: "*", action: "deny" },
    { permission: "edit", pattern: ".opencode/plans/*.md", action: "allow" },
  ],
}
const REVIEW: HostSessions.Agent = {
  name: "review",
  permission: [{ permission: "edit", pattern: "*", action: "deny" }],
}

/**
 * A stand-in for OpenCode's session loop, close enough to exercise the continuation hooks: each step creates an
 * assistant message, runs the step's todowrite, calls `experimental.text.complete` when the step has text, and the
 * loop stops when the last assistant message ended without tool calls and no newer user message exists — which is
 * what OpenCode 1.2.15 and 1.18 check before they go idle.
 */
export class Sim {
  id = 0
  messages: ContinuationHistory.Message[] = []
  todos: Todo[] = []
  parentID?: string
  agent = "build"
  /** Model requests made (one per step). */
  requests = 0
  /** What each request's transformed history ended with. */
  sent: ContinuationHistory.Message[][] = []
  log = Logger.memory()
  instance: ContinuationHooks.Instance
  readonly sessionID = "ses_1"

  constructor(settings: Partial<TodoContinuation.Settings> = {}) {
    const sim = this
    const sessions: HostSessions = {
      async get(id) {
        return { id, parentID: sim.parentID }
      },
      async todos() {
        return structuredClone(sim.todos)
      },
      async agents() {
        return [BUILD, PLAN, REVIEW]
      },
      async append(_id, input) {
        const id = sim.nextID()
        sim.messages.push({
          info: { id, role: "user", agent: input.agent },
          parts: input.parts.map((p) => ({ ...p, id: `prt_${id}` })),
        })
        return id
      },
      async updatePart() {},
      async archive() {},
    }
    const host: Host = {
      directory: "/r",
      worktree: "/r",
      log: Logger.silent,
      messages: async () => structuredClone(sim.messages) as any,
      sessions,
    }
    this.instance = ContinuationHooks.create({
      host,
      settings: { ...TodoContinuation.DEFAULTS, ...settings },
      log: this.log,
    })
  }

  nextID() {
    return `msg_${String(++this.id).padStart(6, "0")}`
  }

  /** A real user message (text), or any parts. */
  user(text: string, parts?: ContinuationHistory.Part[]) {
    this.messages.push({
      info: { id: this.nextID(), role: "user", agent: this.agent, model: { providerID: "p", modelID: "m" } },
      parts: parts ?? [{ type: "text", text }],
    })
  }

  /** Runs the loop after a user message with `model` answering each step; returns the number of requests. */
  async run(model: (step: number) => Step, options: { maxSteps?: number; summary?: boolean } = {}) {
    const hooks = this.instance.hooks as any
    const before = this.requests
    for (let step = 0; step < (options.maxSteps ?? 50); step++) {
      const history = structuredClone(this.messages)
      await hooks["experimental.chat.messages.transform"]?.({}, { messages: history })
      this.sent.push(history)
      this.requests++
      const reply = model(step)
      const id = this.nextID()
      const message: ContinuationHistory.Message = {
        info: { id, role: "assistant", agent: this.agent, providerID: "p", modelID: "m", summary: options.summary },
        parts: [{ type: "step-start" }],
      }
      this.messages.push(message)
      const complete = async () => {
        if (reply.text === undefined) return
        message.parts.push({ type: "text", text: reply.text })
        await hooks["experimental.text.complete"](
          { sessionID: this.sessionID, messageID: id, partID: "p" },
          { text: reply.text },
        )
      }
      if (reply.textBeforeTools) await complete()
      if (reply.todos || reply.tools) {
        message.parts.push({ type: "tool", tool: reply.todos ? "todowrite" : "read", state: { status: "completed" } })
        if (reply.todos) {
          this.todos = structuredClone(reply.todos)
          await hooks["tool.execute.after"](
            { tool: "todowrite", sessionID: this.sessionID, callID: "c", args: { todos: reply.todos } },
            {},
          )
        }
      }
      if (!reply.textBeforeTools) await complete()
      if (reply.error) {
        message.info.error = { name: reply.error }
        break
      }
      const hasTools = message.parts.some((p) => p.type === "tool")
      message.info.finish = hasTools ? "tool-calls" : "stop"
      if (hasTools) continue
      const last = this.messages.at(-1)!
      if (last.info.role === "user" && last.info.id > id) continue
      break
    }
    return this.requests - before
  }

  /** Continuation parts sent so far (in the stored history). */
  continuations() {
    return this.messages.filter((m) => m.parts.some((p) => p.metadata?.[TodoContinuation.MARK]))
  }
}

export const OPEN: Todo[] = [
  { content: "a", status: "in_progress", priority: "high" },
  { content: "b", status: "pending", priority: "low" },
]
export const done = (todos: Todo[], n: number): Todo[] =>
  todos.map((t, i) => (i < n ? { ...t, status: "completed" } : t))
