import type { Hooks } from "@opencode-ai/plugin"

/**
 * What the external plugin provides, published for other plugins on stock OpenCode, which has no `hasBuiltIn`: a
 * process-wide answer under `Symbol.for("opencode-builtins.provided")` on `globalThis`, per OpenCode instance directory
 * (OpenCode starts one plugin instance per project directory), listing the features actually built there (the ones
 * the options switch off are absent). A plugin asks `input.hasBuiltIn` first and this second (docs/builtin.md, "On
 * stock OpenCode with opencode-builtins").
 *
 * The answer is an object `{ version: 1, has(directory, id), list(directory) }`; two copies of this package in one
 * process share it (the first one's map is reused).
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

  /** The process-wide answer, created on first use (or the one another copy of this package created). */
  export function answer(): Answer {
    const global = globalThis as unknown as Record<symbol, unknown>
    const existing = global[KEY] as Partial<Store> | undefined
    if (existing && existing.directories instanceof Map) return existing as Store
    const directories = new Map<string, ReadonlySet<string>>()
    const store: Store = {
      version: 1,
      directories,
      has: (directory, id) => directories.get(directory)?.has(id) === true,
      list: (directory) => [...(directories.get(directory) ?? [])].sort(),
    }
    Object.defineProperty(global, KEY, { value: store, configurable: true, enumerable: false, writable: false })
    return store
  }

  /**
   * Publishes `ids` for `directory` and withdraws them when OpenCode disposes that instance
   * (`server.instance.disposed`); a later start for the same directory replaces the entry, and the withdrawal of an
   * older one leaves the newer in place. Returns `hooks` with its `event` hook wrapped.
   */
  export function announce(directory: string, ids: readonly string[], hooks: Hooks): Hooks {
    const store = answer() as Store
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
