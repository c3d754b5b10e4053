import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Builtins } from "../../builtins"
import { BuiltinsSeams } from "../../builtins/seams"
import { RecoveryStore } from "../../recovery/store"
import { BuiltIn } from "../../builtins/registry"
import type { Host } from "../../host"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"

const host = (dir: string): Host => ({ directory: dir, worktree: dir, log: Logger.silent })

describe("Builtins.create: the composition root both routes call", () => {
  test("every feature in order; tools and hooks merged", async () => {
    await using dir = await tmpdir({ "README.md": "# x\n" })
    const { hooks, built, skipped } = await Builtins.create(host(dir.path), {
      options: {},
      logger: () => Logger.silent,
    })
    expect(built).toEqual([
      "tool-capture",
      "builtin-tool-security",
      "crash-recovery",
      "resource-loader",
      "dynamic-discovery",
      "ast-grep",
      "comment-checker",
      "lsp",
      "readme-injection",
      "look-at",
      "session-learning",
      "knowledge-injection",
      "todo-continuation",
    ])
    expect(skipped).toEqual([])
    expect(Object.keys(hooks.tool ?? {}).sort()).toEqual([
      "ast_grep_replace",
      "ast_grep_search",
      "learnings-forget",
      "learnings-list",
      "lsp",
      "resource-list-loaded",
      "resource-load",
      "resource-query",
      "resource-release",
    ])
    for (const hook of ["tool.execute.before", "tool.execute.after", "shell.env", "chat.message", "tool.definition"])
      expect(typeof (hooks as Record<string, unknown>)[hook]).toBe("function")
  })

  test("features the host provides natively are skipped; a disabled section is not built", async () => {
    await using dir = await tmpdir({})
    const { built, skipped } = await Builtins.create(host(dir.path), {
      options: { discovery: { enabled: false } },
      logger: () => Logger.silent,
      native: (id) => id === "ast-grep",
    })
    expect(skipped).toEqual(["ast-grep"])
    expect(built).not.toContain("dynamic-discovery")
    expect(built).not.toContain("ast-grep")
  })

  test("the security feature installs the host's checks the other features use", async () => {
    await using dir = await tmpdir({
      ".opencode-security.json": JSON.stringify({
        version: "1.0",
        rules: [{ pattern: "secret.txt", type: "file", deniedOperations: ["read"] }],
      }),
      "secret.txt": "x",
    })
    const h = host(dir.path)
    await Builtins.create(h, { options: {}, logger: () => Logger.silent, only: ["builtin-tool-security"] })
    expect(await h.access!(`${dir.path}/secret.txt`, "read")).toContain("secret.txt")
    expect(typeof h.accessVersion).toBe("function")
    expect(Builtins.has("resource-loader")).toBe(true)
  })

  // A feature that keeps writing after its instance is gone writes into a project that may be gone too: crash
  // recovery's lease timer renewed the heartbeat (and, asking the security scope, had the audit log make a deleted
  // project folder again) for as long as the process lived, on both routes.
  for (const route of ["plugin", "fork"] as const)
    test(`route ${route}: once the instance is disposed, its sessions' heartbeats are removed, not renewed`, async () => {
      await using dir = await tmpdir({ ".opencode-security.json": JSON.stringify({ version: "1.0", rules: [] }) })
      const instance = await Builtins.create(host(dir.path), { options: {}, logger: () => Logger.silent })
      const seams = BuiltinsSeams.from(instance)
      const event = (type: string, properties: Record<string, unknown>) =>
        route === "plugin"
          ? instance.hooks.event!({ event: { type, properties } } as never)
          : seams.event({ type, properties })
      await event("session.status", { sessionID: "ses_d", status: { type: "busy" } })
      const folder = RecoveryStore.folder(dir.path)
      expect(fs.readdirSync(folder).filter((f) => f.startsWith("ses_d"))).toHaveLength(1)
      if (route === "plugin") await event("server.instance.disposed", { directory: dir.path })
      else await seams.dispose()
      expect(fs.readdirSync(folder).filter((f) => f.startsWith("ses_d"))).toEqual([])
    })
})

describe("docs/builtin.md, the page plugin authors read", () => {
  const doc = fs.readFileSync(path.resolve(import.meta.dir, "../../../../docs/builtin.md"), "utf8")

  test("docs/builtin.md lists every id the registry answers true for, and no other", () => {
    const documented = [...doc.matchAll(/^\| `([a-z0-9-]+)`\s*\|/gm)].map((m) => m[1])
    expect(documented.toSorted()).toEqual(BuiltIn.list())
  })

  test("the registry file it names exists", () => {
    const named = doc.match(/\(`(packages\/core\/[^`]+)`, `BuiltIn\.FEATURES`\)/)?.[1]
    expect(named).toBe("packages/core/builtins/registry.ts")
    expect(fs.existsSync(path.resolve(import.meta.dir, "../../../..", named!))).toBe(true)
  })
})
