import { describe, expect, test } from "bun:test"
import type { Hooks } from "@opencode-ai/plugin"
import { Provided } from "../../builtins"
import { bunSpawnSync } from "../spawn-sync"

/** The helper docs/builtin.md gives plugin authors, verbatim but for the types. */
function builtIn(input: { directory: string; hasBuiltIn?: (id: string) => boolean }, id: string): boolean {
  if (input.hasBuiltIn?.(id) === true) return true
  const provided = (globalThis as any)[Symbol.for("opencode-builtins.provided")]
  return provided?.has?.(input.directory, id) === true
}

const disposed = (directory: string) => ({ event: { type: "server.instance.disposed", properties: { directory } } })

describe("Provided: what opencode-builtins provides, for other plugins on stock OpenCode (EF-5)", () => {
  test("published under the well-known symbol, per directory; the docs' helper reads it", () => {
    Provided.announce("/ef5/a", ["ast-grep", "lsp"], {})
    const answer = (globalThis as any)[Symbol.for("opencode-builtins.provided")]
    expect(answer.version).toBe(1)
    expect(answer.has("/ef5/a", "ast-grep")).toBe(true)
    expect(answer.has("/ef5/a", "resource-loader")).toBe(false)
    expect(answer.has("/ef5/b", "ast-grep")).toBe(false)
    expect(answer.list("/ef5/a")).toEqual(["ast-grep", "lsp"])
    expect(builtIn({ directory: "/ef5/a" }, "ast-grep")).toBe(true)
    expect(builtIn({ directory: "/ef5/b" }, "ast-grep")).toBe(false)
    // The host's own answer comes first (the fork).
    expect(builtIn({ directory: "/ef5/b", hasBuiltIn: (id) => id === "ast-grep" }, "ast-grep")).toBe(true)
  })

  test("withdrawn when OpenCode disposes that instance; the wrapped event hook still runs; a newer start stays", async () => {
    const seen: unknown[] = []
    const hooks: Hooks = { event: async (input) => void seen.push(input) }
    const first = Provided.announce("/ef5/c", ["ast-grep"], hooks)
    await first.event!(disposed("/ef5/other") as never)
    expect(Provided.answer().has("/ef5/c", "ast-grep")).toBe(true)
    await first.event!(disposed("/ef5/c") as never)
    expect(Provided.answer().has("/ef5/c", "ast-grep")).toBe(false)
    expect(seen).toHaveLength(2)

    const older = Provided.announce("/ef5/d", ["ast-grep"], {})
    Provided.announce("/ef5/d", ["lsp"], {})
    await older.event!(disposed("/ef5/d") as never)
    expect(Provided.answer().list("/ef5/d")).toEqual(["lsp"])
  })

  test("two copies of the package in one process share one answer", () => {
    const key = Symbol.for("opencode-builtins.provided")
    expect(Provided.answer()).toBe((globalThis as any)[key])
    Provided.announce("/ef5/e", ["lsp"], {})
    expect(Provided.answer().has("/ef5/e", "lsp")).toBe(true)
  })
})

describe("Provided: publishing never fails the plugin (red team FF3)", () => {
  test("a foreign value the package cannot replace: a warning once, the hooks returned, a private answer", async () => {
    const key = Symbol.for("opencode-builtins.provided")
    const global = globalThis as any
    const before = Object.getOwnPropertyDescriptor(global, key)
    const code = `
      const { Provided } = await import(${JSON.stringify(require.resolve("../../builtins"))})
      const { Logger } = await import(${JSON.stringify(require.resolve("../../util/log"))})
      const foreign = { version: 1, directories: Object.create(Map.prototype), has: () => true, list: () => ["x"] }
      Object.defineProperty(globalThis, Symbol.for("opencode-builtins.provided"), { value: foreign })
      const log = Logger.memory()
      const hooks = { event: async () => {} }
      const a = Provided.announce("/ff3/a", ["lsp"], hooks, log)
      const b = Provided.announce("/ff3/b", ["ast-grep"], {}, log)
      console.log(JSON.stringify({
        same: a === hooks,
        event: typeof a.event,
        b: typeof b,
        warns: log.entries.filter((e) => e.level === "warn").length,
        own: Provided.answer().has("/ff3/a", "lsp"),
        foreignKept: Provided.answer() !== foreign && globalThis[Symbol.for("opencode-builtins.provided")] === foreign,
      }))
    `
    // A fresh process: the property is made non-configurable, which this test process must not keep.
    const r = bunSpawnSync([process.execPath, "-e", code], { cwd: import.meta.dir })
    expect(r.stderr.toString()).toBe("")
    expect(JSON.parse(r.stdout.toString())).toEqual({
      same: true,
      event: "function",
      b: "object",
      warns: 1,
      own: true,
      foreignKept: true,
    })
    expect(Object.getOwnPropertyDescriptor(global, key)).toEqual(before)
  }, 60_000)

  test("a value not of this package's shape (no real Map) is not reused", () => {
    expect(Provided.answer().has("/ff3/none", "lsp")).toBe(false)
    const key = Symbol.for("opencode-builtins.provided")
    const global = globalThis as any
    const mine = Provided.answer()
    Object.defineProperty(global, key, {
      value: { version: 1, directories: Object.create(Map.prototype), has: () => true, list: () => [] },
      configurable: true,
    })
    try {
      const next = Provided.answer()
      expect(next.has("/ff3/none", "lsp")).toBe(false)
      expect(global[key]).toBe(next)
    } finally {
      Object.defineProperty(global, key, { value: mine, configurable: true, enumerable: false, writable: false })
    }
  })
})
