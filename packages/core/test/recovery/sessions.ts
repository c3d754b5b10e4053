import type { HostSessions } from "../../sessions"
import type { RecoveryActions } from "../../recovery/actions"

/** An in-memory session store with `HostSessions`' operations, recording every write (not OpenCode: core's contract). */
export function memorySessions(
  messages: RecoveryActions.Message[],
  todos: HostSessions.Todo[],
  options: { setTodos?: boolean; failPart?: string; deleted?: boolean; unreachable?: boolean } = {},
) {
  const writes: { op: string; arg: unknown }[] = []
  const sessions: HostSessions = {
    async get(id) {
      if (options.unreachable) throw new Error("GET /session: connection refused")
      return options.deleted ? undefined : { id }
    },
    async todos() {
      return structuredClone(todos)
    },
    async agents() {
      return []
    },
    async append(_id, input) {
      writes.push({ op: "append", arg: input })
      return "msg_note"
    },
    async updatePart(part) {
      if (part.id === options.failPart) throw new Error("HTTP 500")
      writes.push({ op: "updatePart", arg: part })
      for (const m of messages) m.parts = m.parts.map((p) => (p.id === part.id ? structuredClone(part) : p))
    },
    async archive(id) {
      writes.push({ op: "archive", arg: id })
    },
    ...(options.setTodos
      ? {
          async setTodos(_id: string, list: HostSessions.Todo[]) {
            writes.push({ op: "setTodos", arg: list })
            todos = structuredClone(list)
          },
        }
      : {}),
  }
  return { sessions, writes, messages: async () => structuredClone(messages), todos: () => todos }
}

/** The history a kill -9 in the middle of a bash call leaves: a completed todowrite, a bash call still running. */
export function crashed(sessionID = "ses_test1"): RecoveryActions.Message[] {
  const part = (id: string, messageID: string, extra: { type: string; [key: string]: unknown }) => ({
    id,
    messageID,
    sessionID,
    ...extra,
  })
  return [
    { info: { id: "msg_1", role: "user" }, parts: [part("prt_1", "msg_1", { type: "text", text: "Build it" })] },
    {
      info: { id: "msg_2", role: "assistant" },
      parts: [
        part("prt_2", "msg_2", {
          type: "tool",
          tool: "todowrite",
          callID: "call_0",
          state: { status: "completed", input: {}, output: "[]", title: "", metadata: {}, time: { start: 1, end: 2 } },
        }),
      ],
    },
    {
      info: { id: "msg_3", role: "assistant" },
      parts: [
        part("prt_3", "msg_3", { type: "step-start" }),
        part("prt_4", "msg_3", {
          type: "tool",
          tool: "bash",
          callID: "call_1",
          state: { status: "running", input: { command: "sleep 30" }, metadata: { output: "" }, time: { start: 10 } },
        }),
        part("prt_5", "msg_3", {
          type: "tool",
          tool: "read",
          callID: "call_2",
          state: { status: "pending", input: {} },
        }),
      ],
    },
  ]
}
