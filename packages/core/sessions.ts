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
  /** The session's record, or undefined when there is no such session. */
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
