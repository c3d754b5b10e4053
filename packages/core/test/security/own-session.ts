import fs from "fs"
import path from "path"
import { Builtins, BuiltinsSeams } from "../../builtins"
import type { Host } from "../../host"
import type { HostSessions } from "../../sessions"
import { Logger } from "../../util/log"

// One OpenCode session over the composition root, for the red-team tests of the product's own features
// (own-features, redteam-AI, redteam-AM).
export type Route = "plugin" | "fork"
export const ROUTES: Route[] = ["plugin", "fork"]

export type Result = { refused?: string; failed?: string; output: string }

/**
 * One OpenCode session over the composition root. "plugin": the hooks `Builtins.create` returns, called as OpenCode
 * calls a plugin's hooks; "fork": the same composition behind `BuiltinsSeams.trigger`, as the fork's seams call it
 * (no other plugin).
 */
export async function open(route: Route, dir: string, extra: Partial<Host> = {}) {
  // Every session is top-level to the host (session learning asks before it learns).
  const sessions = { get: async (id: string) => ({ id }) } as unknown as HostSessions
  const host: Host = { directory: dir, worktree: dir, log: Logger.silent, messages: async () => [], sessions, ...extra }
  const instance = await Builtins.create(host, { options: {}, logger: () => Logger.silent, native: () => false })
  const seams = BuiltinsSeams.from(instance)
  const hooks = instance.hooks as Record<string, any>
  const trigger = (name: string, input: unknown, output: unknown) =>
    route === "plugin" ? hooks[name]?.(input, output) : seams.trigger(name, input, output, async () => {})
  let n = 0
  const context = {
    sessionID: "ses_own",
    messageID: "msg_own",
    agent: "build",
    directory: dir,
    worktree: dir,
    abort: new AbortController().signal,
    metadata() {},
    ask: async () => {},
  }
  return {
    host,
    instance,
    /** One tool call of our own tools: before hook, the tool, after hook. */
    async call(tool: string, args: Record<string, unknown>): Promise<Result> {
      const input = { tool, sessionID: "ses_own", callID: `call_own_${++n}` }
      const payload = { args }
      try {
        await trigger("tool.execute.before", input, payload)
      } catch (error) {
        return { refused: String((error as Error).message), output: "" }
      }
      let raw: string
      try {
        raw = await (instance.hooks.tool as Record<string, any>)[tool].execute(payload.args, context)
      } catch (error) {
        return { failed: String((error as Error).message), output: "" }
      }
      const result = { title: "", output: raw, metadata: {} }
      await trigger("tool.execute.after", { ...input, args: payload.args }, result)
      return { output: result.output }
    },
    /** OpenCode's `read` result for `file` (its numbered lines) through the after hooks. */
    async read(file: string): Promise<string> {
      const full = path.join(dir, file)
      const lines = fs.readFileSync(full, "utf8").split("\n")
      if (lines.at(-1) === "") lines.pop()
      const output = {
        title: "",
        output: `<path>${full}</path>\n<type>file</type>\n<content>\n${lines.map((l, i) => `${i + 1}: ${l}`).join("\n")}\n\n(End of file - total ${lines.length} lines)\n</content>`,
        metadata: {},
      }
      const input = { tool: "read", sessionID: "ses_own", callID: `call_own_${++n}` }
      await trigger("tool.execute.before", input, { args: { filePath: full } })
      await trigger("tool.execute.after", { ...input, args: { filePath: full } }, output)
      return output.output
    },
    /** Any other hook, as OpenCode calls it. */
    hook: (name: string, input: unknown, output: unknown = {}) => trigger(name, input, output),
    /** A user prompt through `chat.message`: the parts OpenCode stores. */
    async prompt(text: string) {
      const output = {
        message: { id: `msg_prompt_${++n}`, sessionID: `ses_prompt_${n}`, role: "user" },
        parts: [{ id: "prt_0", type: "text", text }] as { id?: string; type: string; text?: string }[],
      }
      await trigger("chat.message", { sessionID: output.message.sessionID, messageID: output.message.id }, output)
      return output.parts
    },
    async close() {
      await seams.dispose()
    },
  }
}
