import fs from "fs"
import path from "path"
import type { Host } from "../../host"
import type { HostSessions } from "../../sessions"
import { composed, type Route } from "./composed"

// One OpenCode session over the composition root, for the red-team tests of the product's own features
// (own-features, redteam-AI, redteam-AM).
export { ROUTES, type Result, type Route } from "./composed"

/**
 * One OpenCode session over the composition root (`composed`), with a host that knows sessions, plus `read` (OpenCode's
 * own read tool's result through the hooks), `hook` (any other hook), `prompt` (a user message) and `close`.
 *
 * @example
 * const s = await open("fork", dir.path)
 * await s.read("notes.md")
 */
export async function open(route: Route, dir: string, extra: Partial<Host> = {}) {
  // Every session is top-level to the host (session learning asks before it learns).
  const sessions = { get: async (id: string) => ({ id }) } as unknown as HostSessions
  const s = await composed(route, dir, {}, "ses_own", { sessions, ...extra })
  const { host, instance, seams, trigger, input } = s
  let n = 0
  return {
    host,
    instance,
    call: s.call,
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
      const at = input("read")
      await trigger("tool.execute.before", at, { args: { filePath: full } })
      await trigger("tool.execute.after", { ...at, args: { filePath: full } }, output)
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
