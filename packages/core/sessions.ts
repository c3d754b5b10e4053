/**
 * Session operations that the session features (todo continuation, crash recovery) need from the host beyond reading
 * messages. Shapes follow OpenCode's public API (structural: no OpenCode import). The external plugin maps them to the
 * SDK client it is given; the fork's glue maps them to its session services. Every member may fail; a feature that
 * needs a member the host lacks stays inactive and says so in the log.
 *
 * @example
 * const todos = await host.sessions?.todos("ses_1") // [{ content: "write tests", status: "pending", priority: "high" }]
 */
export type HostSessions = {
  /**
   * The session's record, or undefined when the host answers that there is no such session (deleted, never
   * existed). Rejects when the host cannot tell (a server that does not answer, any other failure): crash recovery
   * removes a heartbeat for good on undefined only.
   */
  get(sessionID: string): Promise<HostSessions.Info | undefined>
  /** The session's todo list, in its order. */
  todos(sessionID: string): Promise<HostSessions.Todo[]>
  /**
   * Replaces the session's todo list. Stock OpenCode has no API for it (only the model's `todowrite` tool writes
   * todos), so the plugin leaves it out; the fork passes its todo service.
   */
  setTodos?(sessionID: string, todos: HostSessions.Todo[]): Promise<void>
  /** The configured agents with their permission rules. */
  agents(): Promise<HostSessions.Agent[]>
  /**
   * Adds a user message to the session without starting a turn of its own: while the session's loop runs, the loop
   * takes it as the input of its next step. Resolves to the new message's id.
   */
  append(sessionID: string, input: HostSessions.Append): Promise<string | undefined>
  /** Stores a changed part (whole part, as OpenCode returns it). */
  updatePart(part: HostSessions.Part): Promise<void>
  /** Archives the session (kept, hidden from the session list). */
  archive(sessionID: string): Promise<void>
  /** Sends a user message and lets the turn run in the background. */
  promptAsync?(sessionID: string, input: HostSessions.Append): Promise<void>
  /** Shows a short notice to the user where the host has a UI (the TUI's toast); absent or a no-op elsewhere. */
  notify?(message: string, variant: "info" | "warning"): Promise<void>
}

export namespace HostSessions {
  /**
   * Whether an HTTP answer of OpenCode's server says that this session does not exist: 404 with OpenCode's
   * `NotFoundError` naming the session (stock 1.2.15 and 1.18.x: `{"name":"NotFoundError","data":{"message":"Session
   * not found: ses_…"}}`). Any other failure (another 404, a proxy's page, no answer) is not: the host cannot tell.
   *
   * @example
   * HostSessions.missing(404, { name: "NotFoundError", data: { message: "Session not found: ses_1" } }, "ses_1") // true
   * HostSessions.missing(404, "<html>Not Found</html>", "ses_1") // false
   */
  export function missing(status: number | undefined, body: unknown, sessionID: string): boolean {
    if (status !== 404) return false
    let error = body
    if (typeof body === "string")
      try {
        error = JSON.parse(body)
      } catch {
        return false
      }
    const e = error as { name?: unknown; data?: { message?: unknown } } | null
    return (
      e?.name === "NotFoundError" &&
      typeof e.data?.message === "string" &&
      e.data.message.includes(sessionID) &&
      /session/i.test(e.data.message)
    )
  }

  export type Info = {
    id: string
    parentID?: string
    directory?: string
    title?: string
    time?: Record<string, number>
  }
  export type Todo = { content: string; status: string; priority?: string; [key: string]: unknown }
  /** An agent as `GET /agent` lists it: `permission` is a rule list `{ permission, pattern, action }[]`. */
  export type Agent = { name: string; mode?: string; permission?: unknown; tools?: Record<string, boolean> }
  export type TextPart = { type: "text"; text: string; synthetic?: boolean; metadata?: Record<string, unknown> }
  export type Append = {
    parts: TextPart[]
    agent?: string
    model?: { providerID: string; modelID: string }
    variant?: string
  }
  export type Part = { id: string; messageID: string; sessionID: string; type: string; [key: string]: unknown }
}
