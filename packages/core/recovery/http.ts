import { HostSessions } from "../sessions"
import type { RecoveryActions } from "./actions"

/**
 * The session operations crash recovery needs, over the HTTP API of a running OpenCode server (`opencode serve`, or
 * the server of a TUI started with `--port`): the routes stock OpenCode 1.2.15 and 1.18.x share. Used by the
 * `opencode-builtins recovery` command, which runs outside OpenCode. Stock OpenCode has no route that writes todos,
 * so `setTodos` is absent.
 *
 * @example
 * const { sessions, messages } = RecoveryHttp.client("http://127.0.0.1:4096", "/repo")
 */
export namespace RecoveryHttp {
  export function client(url: string, directory: string, password?: string) {
    const base = url.replace(/\/+$/, "")
    const call = async (method: string, route: string, body?: unknown) => {
      // The directory goes in the query (URL-encoded, so any path works); it selects the project's instance.
      const headers: Record<string, string> = { "content-type": "application/json" }
      if (password) headers.authorization = `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`
      const response = await fetch(`${base}${route}?directory=${encodeURIComponent(directory)}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      })
      const text = await response.text()
      if (!response.ok)
        throw Object.assign(new Error(`${method} ${route}: HTTP ${response.status} ${text.slice(0, 300)}`), {
          status: response.status,
          body: text,
        })
      return text ? JSON.parse(text) : undefined
    }
    const id = (s: string) => encodeURIComponent(s)
    const sessions: HostSessions = {
      async get(sessionID) {
        // Undefined only when the server says the session does not exist; it rejects when it cannot tell.
        return await call("GET", `/session/${id(sessionID)}`).catch((error) => {
          if (HostSessions.missing(error?.status, error?.body, sessionID)) return undefined
          throw error
        })
      },
      async todos(sessionID) {
        return (await call("GET", `/session/${id(sessionID)}/todo`)) ?? []
      },
      async agents() {
        return (await call("GET", "/agent")) ?? []
      },
      async append(sessionID, input) {
        const reply = await call("POST", `/session/${id(sessionID)}/message`, { noReply: true, ...input })
        return reply?.info?.id
      },
      async updatePart(part) {
        await call("PATCH", `/session/${id(part.sessionID)}/message/${id(part.messageID)}/part/${id(part.id)}`, part)
      },
      async archive(sessionID) {
        await call("PATCH", `/session/${id(sessionID)}`, { time: { archived: Date.now() } })
      },
    }
    const messages = async (sessionID: string) =>
      ((await call("GET", `/session/${id(sessionID)}/message`)) ?? []) as RecoveryActions.Message[]
    return { sessions, messages }
  }
}
