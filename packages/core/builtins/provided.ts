import type { Hooks } from "@opencode-ai/plugin"
import type { Logger } from "../util/log"

/**
 * What the external plugin provides, published for other plugins on stock OpenCode, which has no `hasBuiltIn`: a
 * process-wide answer under `Symbol.for("opencode-builtins.provided")` on `globalThis`, per OpenCode instance directory
 * (OpenCode starts one plugin instance per project directory), listing the features actually built there (the ones
 * the options switch off are absent). A plugin asks `input.hasBuiltIn` first and this second (docs/builtin.md, "On
 * stock OpenCode with opencode-builtins").
 *
 * The answer is an object `{ version: 1, has(directory, id), list(directory) }`; two copies of this package in one
 * process share it (the first one's map is reused, once checked to be a real `Map`). It is advisory: opencode-builtins
 * never reads it to skip anything, and publishing it never fails the plugin (another plugin holding the symbol only
 * costs a warning in the log, red team FF3).
 *
 * @example
 * const hooks = Provided.announce("/repo", ["ast-grep", "lsp"], hooks)
 * globalThis[Symbol.for("opencode-builtins.provided")].has("/repo", "ast-grep") // true
 */
export namespace Provided {
  export const KEY: unique symbol = Symbol.for("opencode-builtins.provided") as never

  export type Answer = {
    version: 1
    /** True when opencode-builtins built `id` for the OpenCode instance of `directory` (`input.directory`). */
    has(directory: string, id: string): boolean
    /** The ids built for that directory, sorted; empty when none or not started there. */
    list(directory: string): string[]
  }

  type Store = Answer & { directories: Map<string, ReadonlySet<string>> }

  /** Why the answer could not be published in this process (the first failure), once said in the log. */
  let unpublished: string | undefined
  let warned = false
  /** The answer used when none could be published (see `answer`): one per process, as the published one. */
  let local: Store | undefined

  /** Whether `value` is an answer this package can share: version 1 over a real `Map` (its internal slot checked). */
  function shareable(value: unknown): value is Store {
    if (!value || typeof value !== "object") return false
    const store = value as Partial<Store>
    if (store.version !== 1 || typeof store.has !== "function" || typeof store.list !== "function") return false
    try {
      // Throws on anything but a real Map (an object made with Map.prototype, a Proxy of one).
      Map.prototype.has.call(store.directories, "")
      return true
    } catch {
      return false
    }
  }

  /**
   * The process-wide answer, created on first use (or the one another copy of this package created). When the symbol
   * holds something else another plugin put there and cannot be replaced, an unpublished answer of this process's
   * own is returned (red team FF3: publishing never fails the plugin).
   */
  export function answer(): Answer {
    const global = globalThis as unknown as Record<symbol, unknown>
    let existing: unknown
    try {
      existing = global[KEY]
    } catch (error) {
      existing = undefined
      unpublished ??= error instanceof Error ? error.message : String(error)
    }
    if (shareable(existing)) return existing
    const directories = new Map<string, ReadonlySet<string>>()
    const store: Store = {
      version: 1,
      directories,
      has: (directory, id) => directories.get(directory)?.has(id) === true,
      list: (directory) => [...(directories.get(directory) ?? [])].sort(),
    }
    try {
      Object.defineProperty(global, KEY, { value: store, configurable: true, enumerable: false, writable: false })
    } catch (error) {
      unpublished ??= error instanceof Error ? error.message : String(error)
      local ??= store
      return local
    }
    return store
  }
  /**
   * Publishes `ids` for `directory` and withdraws them when OpenCode disposes that instance
   * (`server.instance.disposed`); a later start for the same directory replaces the entry, and the withdrawal of an
   * older one leaves the newer in place. Returns `hooks` with its `event` hook wrapped.
   */
  export function announce(directory: string, ids: readonly string[], hooks: Hooks, log?: Logger): Hooks {
    let store: Store
    try {
      store = answer() as Store
    } catch (error) {
      // Nothing here may fail the plugin: its hooks (the security layer's) must reach OpenCode.
      unpublished ??= error instanceof Error ? error.message : String(error)
      return hooks
    }
    if (unpublished !== undefined && !warned) {
      warned = true
      log?.warn(
        `could not publish what opencode-builtins provides under Symbol.for("opencode-builtins.provided") (another plugin holds it: ${unpublished}); other plugins will not see it, the features work as usual`,
      )
    }
    const entry: ReadonlySet<string> = new Set(ids)
    store.directories.set(directory, entry)
    const event = hooks.event
    hooks.event = async (input) => {
      try {
        await event?.(input)
      } finally {
        const e = (input as { event?: { type?: string; properties?: { directory?: string } } }).event
        if (e?.type === "server.instance.disposed" && e.properties?.directory === directory)
          if (store.directories.get(directory) === entry) store.directories.delete(directory)
      }
    }
    return hooks
  }
}
