import type { PluginInput } from "@opencode-ai/plugin"
import { HostSessions } from "@opencode-builtins/core/sessions"

type Client = PluginInput["client"]
type Raw = { patch(options: Record<string, unknown>): Promise<{ error?: unknown; data?: unknown }> }

/**
 * `Host.sessions` over the SDK client OpenCode hands to plugins (1.2.15 through 1.18.x answer the same routes). The
 * part update has no method in the client OpenCode 1.2.15 ships, so it goes through the client's own request layer
 * (same base URL, directory and auth). Stock OpenCode has no route that writes a todo list: `setTodos` is absent.
 *
 * @example
 * const host: Host = { directory, worktree, log, sessions: pluginSessions(input.client) }
 */
export function pluginSessions(client: Client): HostSessions {
  const ok = <T>(result: { error?: unknown; data?: T }, what: string): T => {
    if (result.error !== undefined || result.data === undefined)
      throw new Error(`${what} failed: ${describe(result.error)}`)
    return result.data
  }
  return {
    async get(id) {
      const result = await client.session.get({ path: { id } })
      if (result.error === undefined && result.data !== undefined) return result.data as HostSessions.Info
      // Undefined only when OpenCode says the session does not exist; it rejects when it cannot tell.
      const status = (result as { response?: { status?: number } }).response?.status
      if (HostSessions.missing(status, result.error, id)) return undefined
      throw new Error(`session ${id} failed: ${status ?? "no answer"} ${describe(result.error)}`)
    },
    async todos(id) {
      return ok(await client.session.todo({ path: { id } }), `todos of ${id}`) as HostSessions.Todo[]
    },
    async agents() {
      return ok(await client.app.agents(), "agent list") as HostSessions.Agent[]
    },
    async append(id, input) {
      const result = await client.session.prompt({
        path: { id },
        body: {
          noReply: true,
          parts: input.parts,
          agent: input.agent,
          model: input.model,
          variant: input.variant,
        } as any,
      })
      return (ok(result, `message to ${id}`) as { info?: { id?: string } }).info?.id
    },
    async updatePart(part) {
      const raw = (client as unknown as { _client?: Raw })._client
      if (!raw) throw new Error("this OpenCode client cannot update parts")
      ok(
        await raw.patch({
          url: "/session/{sessionID}/message/{messageID}/part/{partID}",
          path: { sessionID: part.sessionID, messageID: part.messageID, partID: part.id },
          body: part,
          headers: { "Content-Type": "application/json" },
        }),
        `part ${part.id}`,
      )
    },
    async archive(id) {
      ok(
        await client.session.update({ path: { id }, body: { time: { archived: Date.now() } } as any }),
        `archive ${id}`,
      )
    },
    async promptAsync(id, input) {
      const result = await client.session.promptAsync({
        path: { id },
        body: { parts: input.parts, agent: input.agent, model: input.model, variant: input.variant } as any,
      })
      if (result.error !== undefined) throw new Error(`prompt to ${id} failed: ${describe(result.error)}`)
    },
    async notify(message, variant) {
      await client.tui.showToast({ body: { title: "opencode-builtins", message, variant, duration: 10_000 } as any })
    },
  }
}

function describe(error: unknown): string {
  if (error === undefined) return "no data"
  if (error instanceof Error) return error.message
  try {
    return JSON.stringify(error).slice(0, 300)
  } catch {
    return String(error)
  }
}
