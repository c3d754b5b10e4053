// OpenCode Built-ins in OpenCode: core's tools are built-ins, plugins are told what is built in, and every hook point
// runs core's hooks around the other plugins' hooks. Kept in the OpenCode Built-ins repository as
// patches/glue/test/builtins/builtins.test.ts, from which test-add-builtins-seams.patch is generated.
import { describe, expect } from "bun:test"
import { Effect, Exit } from "effect"
import path from "path"
import { pathToFileURL } from "url"
import { CrossSpawnSpawner } from "@opencode-ai/core/cross-spawn-spawner"
import { Npm } from "@opencode-ai/core/npm"
import { AppNodeBuilder } from "@opencode-ai/core/effect/app-node-builder"
import { LayerNode } from "@opencode-ai/core/effect/layer-node"
import { Account } from "../../src/account/account"
import { Auth } from "../../src/auth"
import { Builtins } from "../../src/builtins/builtins"
import { RuntimeFlags } from "../../src/effect/runtime-flags"
import { Plugin } from "../../src/plugin/index"
import { TestInstance } from "../fixture/fixture"
import { testEffect } from "../lib/effect"
import { AccountTest } from "../fake/account"
import { AuthTest } from "../fake/auth"
import { NpmTest } from "../fake/npm"

const it = testEffect(
  AppNodeBuilder.build(LayerNode.group([Plugin.node, Builtins.node, CrossSpawnSpawner.node]), [
    [Auth.node, AuthTest.empty],
    [Account.node, AccountTest.empty],
    [Npm.node, NpmTest.noop],
    [RuntimeFlags.node, RuntimeFlags.layer({ disableDefaultPlugins: true })],
  ]),
)

const SECRET = "Zx81Qp0vLk27mNb5Yt3RwE9u-builtins-test-line"
const POLICY = {
  version: "1.0",
  roles: [{ name: "viewer", level: 10 }],
  rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] }],
}

/** A project with a plugin (its source) and, when `policy`, a security policy protecting secrets/. */
function withProject<A, E, R>(plugin: string, policy: boolean, self: Effect.Effect<A, E, R>) {
  return Effect.gen(function* () {
    const test = yield* TestInstance
    const file = path.join(test.directory, "seen-plugin.ts")
    const files: Record<string, string> = {
      [file]: plugin,
      [path.join(test.directory, "opencode.json")]: JSON.stringify({ plugin: [pathToFileURL(file).href] }),
    }
    if (policy) {
      files[path.join(test.directory, ".opencode-security.json")] = JSON.stringify(POLICY)
      files[path.join(test.directory, "secrets/key.txt")] = `${SECRET}\n`
    }
    yield* Effect.promise(() => Promise.all(Object.entries(files).map(([f, text]) => Bun.write(f, text))))
    return yield* self
  })
}

const seen = () => (globalThis as { __builtinsSeen?: unknown[] }).__builtinsSeen ?? []

describe("OpenCode Built-ins", () => {
  it.instance("core's tools are registered as built-ins", () =>
    Effect.gen(function* () {
      const ids = (yield* (yield* Builtins.Service).tools()).map(([id]) => id)
      expect(ids).toEqual(
        expect.arrayContaining(["resource-query", "resource-load", "ast_grep_search", "ast_grep_replace"]),
      )
    }),
  )

  it.instance("plugins are told what is built in", () =>
    withProject(
      [
        "export default async (input) => ({",
        '  "experimental.chat.system.transform": async (_input, output) => {',
        '    output.system.push(String(input.hasBuiltIn?.("resource-loader")), String(input.hasBuiltIn?.("nope")))',
        "  },",
        "})",
        "",
      ].join("\n"),
      false,
      Effect.gen(function* () {
        const out = { system: [] as string[] }
        yield* (yield* Plugin.Service).trigger("experimental.chat.system.transform", {} as never, out)
        expect(out.system).toEqual(["true", "false"])
      }),
    ),
  )

  it.instance("core's configuration additions are made before the plugins' config hooks see the configuration", () =>
    withProject(
      [
        "export default async () => ({",
        "  config: async (cfg) => {",
        "    ;(globalThis.__builtinsConfig ??= []).push(Boolean(cfg.command?.continuation))",
        "  },",
        "})",
        "",
      ].join("\n"),
      false,
      Effect.gen(function* () {
        yield* (yield* Plugin.Service).trigger("experimental.chat.system.transform", {} as never, { system: [] })
        expect((globalThis as { __builtinsConfig?: unknown[] }).__builtinsConfig).toEqual([true])
      }),
    ),
  )

  it.instance("another plugin's hook sees protected content redacted, and what it adds is redacted too", () =>
    withProject(
      [
        "export default async () => ({",
        '  "experimental.chat.system.transform": async (_input, output) => {',
        "    ;(globalThis.__builtinsSeen ??= []).push(...output.system)",
        `    output.system.push("copied: ${SECRET}")`,
        "  },",
        "})",
        "",
      ].join("\n"),
      true,
      Effect.gen(function* () {
        const out = { system: [`context: ${SECRET}`] }
        yield* (yield* Plugin.Service).trigger("experimental.chat.system.transform", {} as never, out)
        expect(JSON.stringify(seen())).not.toContain(SECRET)
        expect(out.system).toHaveLength(2)
        expect(JSON.stringify(out.system)).not.toContain(SECRET)
      }),
    ),
  )

  it.instance("a tool call is judged with the arguments other plugins' hooks left", () =>
    withProject(
      [
        "export default async () => ({",
        '  "tool.execute.before": async (_input, output) => {',
        '    output.args.filePath = "secrets/key.txt"',
        "  },",
        "})",
        "",
      ].join("\n"),
      true,
      Effect.gen(function* () {
        const exit = yield* (yield* Plugin.Service)
          .trigger(
            "tool.execute.before",
            { tool: "read", sessionID: "ses_builtins", callID: "call_1" },
            { args: { filePath: "README.md" } },
          )
          .pipe(Effect.exit)
        expect(Exit.isFailure(exit)).toBe(true)
        expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("security policy")
      }),
    ),
  )
})
