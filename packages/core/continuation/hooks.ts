import type { Hooks } from "@opencode-ai/plugin"
import type { Host } from "../host"
import type { HostSessions } from "../sessions"
import { errorMessage } from "../util/error"
import type { Logger } from "../util/log"
import { ContinuationDecide } from "./decide"
import { ContinuationHistory } from "./history"
import { TodoContinuation } from "./schema"
import { ContinuationText } from "./text"

/**
 * The todo continuation's hooks — the I/O around `ContinuationDecide.decide`:
 *
 * - `experimental.text.complete` (awaited by OpenCode before the step ends): cheap checks first (limit 0, todos known
 *   to be all done, the text asks the user), then the session's history, record and agent are read, the decision is
 *   taken, and a continuation is added as a user message whose synthetic part lists the open todos. OpenCode's loop,
 *   which checks for a newer user message before it stops, takes it as the next step: no idle in between, so it works
 *   in `opencode run`, the TUI and the server alike, and an abort (which ends the loop) can never be followed by one.
 * - `experimental.chat.messages.transform`: void and unanswered continuations are left out of what the model is sent.
 * - `tool.execute.after` (todowrite) and the `todo.updated` event keep a per-session copy of the todos; question and
 *   permission events keep track of requests waiting for the user.
 * - `config`: registers the `/continuation on|off` command.
 *
 * @example
 * const { hooks } = ContinuationHooks.create({ host, settings: TodoContinuation.DEFAULTS, log })
 */
export namespace ContinuationHooks {
  export type Options = { host: Host; settings: TodoContinuation.Settings; log: Logger }

  export type Instance = {
    hooks: Hooks
    /** Decisions taken, newest last (bounded; for tests and the benchmark). */
    decisions: { sessionID: string; messageID: string; decision: ContinuationDecide.Decision }[]
  }

  const MAX_DECISIONS = 64

  type Request = { messageID?: string; callID?: string }

  const toolOf = (p: { tool?: unknown }): Request | undefined => {
    const t = p.tool as { messageID?: unknown; callID?: unknown } | undefined
    if (!t || typeof t !== "object") return undefined
    return {
      messageID: typeof t.messageID === "string" ? t.messageID : undefined,
      callID: typeof t.callID === "string" ? t.callID : undefined,
    }
  }

  export function create(options: Options): Instance {
    const { host, settings, log } = options
    const sessions = host.sessions
    const messagesOf = host.messages
    const todos = new Map<string, TodoContinuation.Todo[]>()
    const pending = new Map<string, Set<string>>()
    /** The tool call each pending request belongs to, when OpenCode says (`tool: { messageID, callID }`). */
    const requests = new Map<string, Request>()
    const infos = new Map<string, Promise<HostSessions.Info | undefined>>()
    let agents: Promise<HostSessions.Agent[]> | undefined
    const decisions: Instance["decisions"] = []
    let warned = false

    const record = (sessionID: string, messageID: string, decision: ContinuationDecide.Decision) => {
      decisions.push({ sessionID, messageID, decision })
      if (decisions.length > MAX_DECISIONS) decisions.shift()
      if (decision.continue) log.info(`continuation ${decision.index}/${decision.of}`, { sessionID, messageID })
      else log.debug(`no continuation: ${decision.reason}`, { sessionID, messageID })
    }

    async function todosOf(sessionID: string): Promise<TodoContinuation.Todo[]> {
      const known = todos.get(sessionID)
      if (known) return known
      const list = (await sessions!.todos(sessionID)).map((t) => ({
        content: t.content,
        status: t.status,
        priority: t.priority,
      }))
      todos.set(sessionID, list)
      return list
    }

    function info(sessionID: string) {
      const known = infos.get(sessionID)
      if (known) return known
      const entry = sessions!.get(sessionID).catch(() => undefined)
      infos.set(sessionID, entry)
      return entry
    }

    async function agent(name: string | undefined) {
      if (!name) return undefined
      const list = (agents ??= sessions!.agents().catch((error: unknown) => {
        agents = undefined
        throw error
      }))
      return ContinuationDecide.agentKind((await list).find((a) => a.name === name))
    }

    async function onTextComplete(input: { sessionID: string; messageID: string }, text: string) {
      if (settings.maxContinuations <= 0) return
      if (!sessions || !messagesOf) {
        if (!warned) log.warn(new TodoContinuation.HostUnsupported({ operation: "todos/append" }).message)
        warned = true
        return
      }
      const { sessionID, messageID } = input
      // Cheap exits first: no I/O on the turns that end with every todo done or with a question to the user.
      const list = await todosOf(sessionID)
      if (TodoContinuation.counts(list).open === 0)
        return record(sessionID, messageID, { continue: false, reason: "no-open-todos" })
      if (ContinuationText.asksUser(text)) return record(sessionID, messageID, { continue: false, reason: "asks-user" })

      const messages = (await messagesOf(sessionID)) as ContinuationHistory.Message[]
      const current = messages.find((m) => m.info.id === messageID)
      const history = ContinuationHistory.derive(messages)
      const turnAgent = current?.info.agent ?? current?.info.mode
      const facts: ContinuationDecide.Facts = {
        settings,
        todos: list,
        history,
        turn: {
          messageID,
          text,
          agent: turnAgent,
          summary: Boolean(current?.info.summary),
          hasTools: current ? ContinuationHistory.hasTools(current) : false,
          userAfter: ContinuationHistory.userAfter(messages, messageID),
        },
        subagent: Boolean((await info(sessionID))?.parentID),
        agent: await agent(turnAgent).catch(() => undefined),
        pendingInput: (pending.get(sessionID)?.size ?? 0) > 0,
      }
      const decision = ContinuationDecide.decide(facts)
      record(sessionID, messageID, decision)
      if (!decision.continue) return
      const user = history.user?.info
      const mark: TodoContinuation.Mark = {
        index: decision.index,
        of: decision.of,
        after: messageID,
        counts: decision.counts,
      }
      const model =
        user?.model?.providerID && user.model.modelID
          ? { providerID: user.model.providerID, modelID: user.model.modelID }
          : current?.info.providerID && current.info.modelID
            ? { providerID: current.info.providerID, modelID: current.info.modelID }
            : undefined
      await sessions.append(sessionID, {
        parts: [
          {
            type: "text",
            text: ContinuationDecide.prompt(decision),
            synthetic: true,
            metadata: { [TodoContinuation.MARK]: mark },
          },
        ],
        agent: user?.agent ?? turnAgent,
        model,
        variant: user?.variant ?? user?.model?.variant,
      })
    }

    const track = (sessionID: string, id: string, add: boolean, tool?: Request) => {
      let set = pending.get(sessionID)
      if (add) {
        if (!set) pending.set(sessionID, (set = new Set()))
        set.add(id)
        requests.set(id, tool ?? {})
      } else {
        set?.delete(id)
        requests.delete(id)
      }
    }
    /** Forgets every request of `sessionID` (or those `match` picks): they can no longer be answered. */
    const settle = (sessionID: string, match: (request: Request) => boolean = () => true) => {
      const set = pending.get(sessionID)
      if (!set) return
      for (const id of [...set]) if (match(requests.get(id) ?? {})) track(sessionID, id, false)
      if (!set.size) pending.delete(sessionID)
    }

    const hooks: Hooks = {
      async config(config) {
        const c = config as { command?: Record<string, unknown> }
        c.command ??= {}
        c.command[TodoContinuation.COMMAND] ??= {
          description: "Switch the todo continuation of this session: /continuation off | on",
          template:
            "[todo-continuation: $ARGUMENTS] The user switched the automatic todo continuation $ARGUMENTS for this " +
            "session. Acknowledge it in one short sentence and do nothing else.",
        }
      },
      async "experimental.text.complete"(input, output) {
        try {
          await onTextComplete(input, output.text)
        } catch (error) {
          log.warn("todo continuation check failed; none sent", {
            sessionID: input.sessionID,
            error: errorMessage(error),
          })
        }
      },
      async "experimental.chat.messages.transform"(_input, output) {
        const list = output.messages as unknown as ContinuationHistory.Message[]
        if (!list.some((m) => ContinuationHistory.mark(m))) return
        const drop = ContinuationHistory.dropped(list)
        if (!drop.size) return
        const kept = list.filter((m) => !drop.has(m.info.id))
        list.splice(0, list.length, ...kept)
      },
      async "tool.execute.after"(input) {
        if (input.tool !== "todowrite") return
        const next = (input as { args?: { todos?: unknown } }).args?.todos
        if (Array.isArray(next)) todos.set(input.sessionID, next as TodoContinuation.Todo[])
        else todos.delete(input.sessionID)
      },
      async event({ event }) {
        const e = event as { type: string; properties?: any }
        const p = e.properties ?? {}
        switch (e.type) {
          case "todo.updated":
            if (typeof p.sessionID === "string" && Array.isArray(p.todos)) todos.set(p.sessionID, p.todos)
            return
          case "question.asked":
          case "permission.asked":
          case "permission.updated":
            if (typeof p.sessionID === "string" && typeof p.id === "string") track(p.sessionID, p.id, true, toolOf(p))
            return
          // A request cancelled by Esc or an abort gets no reply event (1.2.15 and 1.18.33 publish none): it ends with
          // its turn. The session going idle or failing, its tool call settling, or a newer assistant message (the
          // step that asked is over) all mean nobody is waiting for an answer any more (tester AD, AD-7).
          case "session.idle":
          case "session.error":
            if (typeof p.sessionID === "string") settle(p.sessionID)
            return
          case "session.status":
            if (typeof p.sessionID === "string" && p.status?.type === "idle") settle(p.sessionID)
            return
          case "message.updated": {
            const info = p.info
            if (!info || info.role !== "assistant" || typeof info.sessionID !== "string") return
            if (info.error) settle(info.sessionID, (r) => !r.messageID || r.messageID === info.id)
            settle(info.sessionID, (r) => typeof r.messageID === "string" && info.id > r.messageID)
            return
          }
          case "message.part.updated": {
            const part = p.part
            if (!part || part.type !== "tool" || typeof part.sessionID !== "string") return
            if (part.state?.status !== "completed" && part.state?.status !== "error") return
            settle(part.sessionID, (r) => r.callID === part.callID)
            return
          }
          case "question.replied":
          case "question.rejected":
          case "permission.replied": {
            const id = p.requestID ?? p.permissionID ?? p.id
            if (typeof p.sessionID === "string" && typeof id === "string") track(p.sessionID, id, false)
            return
          }
          case "session.deleted": {
            const id = p.info?.id ?? p.sessionID
            if (typeof id === "string") {
              todos.delete(id)
              settle(id)
              infos.delete(id)
            }
            return
          }
        }
      },
    }
    return { hooks, decisions }
  }
}
