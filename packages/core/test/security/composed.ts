// One OpenCode session over the real composition root, on either delivery route, for the red-team suites of writers
// and link targets: "plugin" calls the hooks `Builtins.create` returns as OpenCode calls a plugin's hooks; "fork" calls
// the same composition behind `BuiltinsSeams.trigger`, as the fork's seams do.
import { Builtins, BuiltinsSeams } from "../../builtins"
import type { Host } from "../../host"
import { Logger } from "../../util/log"

export type Route = "plugin" | "fork"
export const ROUTES: Route[] = ["plugin", "fork"]

/** A call's outcome: refused by a before hook, failed in the tool, or its output after the after hook. */
export type Result = { refused?: string; failed?: string; output: string }

/** Everything a result says, for `toContain` checks. */
export const text = (r: Result) => `${r.output}${r.failed ?? ""}${r.refused ?? ""}`

/**
 * The composition root for `dir` on `route`, with `call` (one of this product's tools: before hook, the tool, after
 * hook), `hooked` (a call whose tool runs elsewhere: `run` stands for it once the before hook allowed it), `trigger`
 * and the permissions the tools asked (`asked`); `extra` adds to or replaces the host's members.
 *
 * @example
 * const s = await composed("plugin", dir.path, {}, "ses_x")
 * text(await s.call("ast_grep_search", { pattern: "x", lang: "ts" }))
 */
export async function composed(
  route: Route,
  dir: string,
  options: Record<string, any>,
  session: string,
  extra: Partial<Host> = {},
) {
  const host: Host = { directory: dir, worktree: dir, log: Logger.silent, messages: async () => [], ...extra }
  const instance = await Builtins.create(host, { options, logger: () => Logger.silent, native: () => false })
  const seams = BuiltinsSeams.from(instance)
  const hooks = instance.hooks as Record<string, any>
  const trigger = (name: string, input: unknown, output: unknown) =>
    route === "plugin" ? hooks[name]?.(input, output) : seams.trigger(name, input, output, async () => {})
  let n = 0
  const asked: any[] = []
  const context = {
    sessionID: session,
    messageID: `msg_${session}`,
    agent: "build",
    directory: dir,
    worktree: dir,
    abort: new AbortController().signal,
    metadata() {},
    ask: async (request: any) => {
      asked.push(request)
    },
  }
  const input = (tool: string) => ({ tool, sessionID: session, callID: `call_${session}_${++n}` })
  /** The before hook, then `run` (the tool), then its output through the after hook. */
  async function hooked(tool: string, args: Record<string, unknown>, run: (args: any) => Promise<string>) {
    const at = input(tool)
    const payload = { args }
    try {
      await trigger("tool.execute.before", at, payload)
    } catch (error) {
      return { refused: String((error as Error).message), output: "" } satisfies Result
    }
    let raw: string
    try {
      raw = await run(payload.args)
    } catch (error) {
      return { failed: String((error as Error).message), output: "" } satisfies Result
    }
    const result = { title: "", output: raw, metadata: {} }
    await trigger("tool.execute.after", { ...at, args: payload.args }, result)
    return { output: result.output } satisfies Result
  }
  return {
    host,
    instance,
    seams,
    trigger,
    asked,
    input,
    hooked,
    /** One call of this product's own tool `tool`, executed as OpenCode executes a tool. */
    call: (tool: string, args: Record<string, unknown>): Promise<Result> =>
      hooked(tool, args, (a) => (instance.hooks.tool as Record<string, any>)[tool].execute(a, context)),
  }
}
