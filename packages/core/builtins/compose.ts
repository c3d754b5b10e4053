import type { Hooks } from "@opencode-ai/plugin"

/**
 * Hooks whose payload flows from the model towards the host (arguments about to be used). Features run in their
 * declared order, so the security feature, listed first, sees arguments before anyone acts on them.
 */
const INBOUND = new Set<string>(["tool.execute.before", "chat.message", "command.execute.before"])

/** Hooks whose output OpenCode may leave undefined (a failed subtask's `tool.execute.after`). */
const RESULT = new Set<string>(["tool.execute.after"])

/**
 * Merges the hooks of several features into one `Hooks` object (the composition root's last step).
 *
 * Inbound hooks run in feature order; every other hook (tool results, message and system transforms, completed
 * text) runs in reverse order, so the feature listed first (security) is the last to touch what reaches the model.
 * Two features registering the same tool id is a programming error and throws.
 *
 * @example
 * const hooks = compose([{ "tool.execute.after": redact }, { "tool.execute.after": addMetadata }])
 * // addMetadata runs first, redact last
 */
export function compose(list: Hooks[]): Hooks {
  const result: Record<string, unknown> = {}
  const tools: NonNullable<Hooks["tool"]> = {}
  for (const hooks of list) {
    for (const [id, def] of Object.entries(hooks.tool ?? {})) {
      if (tools[id]) throw new Error(`two features register the tool '${id}'`)
      tools[id] = def
    }
  }
  if (Object.keys(tools).length) result.tool = tools

  const names = new Set(list.flatMap((h) => Object.keys(h)).filter((name) => name !== "tool"))
  for (const name of names) {
    const ordered = INBOUND.has(name) ? list : [...list].reverse()
    const fns = ordered.map((h) => (h as Record<string, unknown>)[name]).filter((fn) => typeof fn === "function") as ((
      ...args: unknown[]
    ) => Promise<void>)[]
    if (name === "auth" || fns.length === 0) continue
    const all =
      fns.length === 1
        ? fns[0]
        : async (...args: unknown[]) => {
            for (const fn of fns) await fn(...args)
          }
    // OpenCode 1.18 reports a failed subtask's end with no result: nothing for a feature to change.
    result[name] = RESULT.has(name)
      ? async (input: unknown, output: unknown) => output != null && all(input, output)
      : all
  }
  return result as Hooks
}
