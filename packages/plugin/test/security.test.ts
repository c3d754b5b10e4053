import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import type { Host } from "@opencode-builtins/core/host"
import { Logger } from "@opencode-builtins/core/util/log"
import OpencodeBuiltins from "../index"
import { SecurityFeature } from "@opencode-builtins/core/security/feature"
import { SecurityRipgrep } from "@opencode-builtins/core/security/ripgrep"
import { SECRET_FILE, project } from "../../core/test/security/fixture"
import { pluginInput as input } from "./input"

describe("security feature of the external plugin", () => {
  test("tool.execute.before throws to deny; after redacts output, metadata and MCP content", async () => {
    await using dir = await project()
    const hooks: any = await OpencodeBuiltins(input(dir.path).input)
    await expect(
      hooks["tool.execute.before"](
        { tool: "read", sessionID: "s", callID: "c" },
        { args: { filePath: "secrets/api.key" } },
      ),
    ).rejects.toThrow("Blocked by the project's security policy")
    await expect(
      hooks["tool.execute.before"]({ tool: "bash", sessionID: "s", callID: "c" }, { args: { command: "cat .env" } }),
    ).rejects.toThrow(".env")
    await hooks["tool.execute.before"](
      { tool: "read", sessionID: "s", callID: "c" },
      { args: { filePath: "README.md" } },
    )
    const out = { title: "", output: `x\n${SECRET_FILE}`, metadata: { preview: SECRET_FILE } }
    await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s", callID: "c", args: {} }, out)
    expect(JSON.stringify(out)).not.toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
    const mcp = { content: [{ type: "text", text: SECRET_FILE }] }
    await hooks["tool.execute.after"]({ tool: "jira_get", sessionID: "s", callID: "c", args: {} }, mcp)
    expect(JSON.stringify(mcp)).not.toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
  }, 60_000)

  // `opencode serve` hosting several projects disposes an instance and tells plugins so; the guard's ripgrep
  // exclusions (process-wide) stayed in every later search of every project before.
  test("server.instance.disposed for its project takes the guard's ripgrep exclusions down", async () => {
    await using dir = await project()
    const hooks: any = await OpencodeBuiltins(input(dir.path).input)
    const excluded = () => {
      const file = SecurityRipgrep.file()
      return file ? fs.readFileSync(file, "utf8").includes(`${dir.path}/`) : false
    }
    // The guard lists the project on its first call that needs it.
    await hooks["tool.execute.before"]({ tool: "grep", sessionID: "s", callID: "c" }, { args: { pattern: "x" } })
    expect(excluded()).toBe(true)
    await hooks.event({ event: { type: "server.instance.disposed", properties: { directory: "/elsewhere" } } })
    expect(excluded()).toBe(true)
    await hooks.event({ event: { type: "server.instance.disposed", properties: { directory: dir.path } } })
    expect(excluded()).toBe(false)
  }, 30_000)

  test("model-bound transforms and prompt parts are redacted", async () => {
    await using dir = await project()
    const hooks: any = await OpencodeBuiltins(input(dir.path).input)
    const original = { info: { id: "m" }, parts: [{ type: "text", text: SECRET_FILE }] }
    const output = { messages: [original] }
    await hooks["experimental.chat.messages.transform"]({}, output)
    expect(JSON.stringify(output.messages)).not.toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
    expect(original.parts[0].text).toBe(SECRET_FILE) // a copy was replaced; the stored object is untouched
    const system = { system: [`rules\n${SECRET_FILE}`] }
    await hooks["experimental.chat.system.transform"]({ model: {} }, system)
    expect(system.system[0]).not.toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
    const prompt = { message: {}, parts: [{ type: "text", text: `Called the Read tool: ${SECRET_FILE}` }] }
    await hooks["chat.message"]({ sessionID: "s" }, prompt)
    expect(prompt.parts[0].text).not.toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
    const done = { text: `echo ${SECRET_FILE}` }
    await hooks["experimental.text.complete"]({ sessionID: "s", messageID: "m", partID: "p" }, done)
    expect(done.text).not.toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
  })

  test("it installs host.access for the other features, and protects the plugin's own configuration", async () => {
    await using dir = await project()
    const host: Host = { directory: dir.path, worktree: dir.path, log: Logger.silent }
    const hooks: any = await SecurityFeature.init({
      options: {},
      all: {},
      log: Logger.silent,
      host,
      native: () => false,
    })
    expect(await host.access!(path.join(dir.path, "secrets/api.key"), "read")).toContain("secrets/api.key")
    expect(await host.access!(path.join(dir.path, "docs/public.md"), "read")).toBeUndefined()
    // Built-in tools that check paths and then use them run under host.exclusive, which holds shell commands back.
    expect(await host.exclusive!(async () => "done")).toBe("done")
    await expect(
      hooks["tool.execute.before"](
        { tool: "write", sessionID: "s", callID: "c" },
        { args: { filePath: ".opencode/opencode-builtins.json", content: "{}" } },
      ),
    ).rejects.toThrow("configuration that enables enforcement")
  })

  test("MCP servers come from the config hook; trusted servers are not checked", async () => {
    await using dir = await project(
      {},
      {
        version: "1.0",
        rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read"] }],
        mcp: { servers: { my_docs: "trusted" } },
      },
    )
    const hooks: any = await OpencodeBuiltins(input(dir.path).input)
    await hooks.config({ mcp: { my_docs: {}, jira: {} } })
    await hooks["tool.execute.before"](
      { tool: "my_docs_search", sessionID: "s", callID: "c" },
      { args: { q: "secrets/api.key" } },
    )
    await expect(
      hooks["tool.execute.before"](
        { tool: "jira_attach", sessionID: "s", callID: "c" },
        { args: { f: "secrets/api.key" } },
      ),
    ).rejects.toThrow("Blocked")
  })

  test("when the host has builtin-tool-security the plugin registers none of it", async () => {
    await using dir = await project()
    const hooks: any = await OpencodeBuiltins(input(dir.path, (id) => id === "builtin-tool-security").input)
    if (hooks["tool.execute.before"])
      await hooks["tool.execute.before"](
        { tool: "read", sessionID: "s", callID: "c" },
        { args: { filePath: "secrets/api.key" } },
      )
    expect(fs.existsSync(path.join(dir.path, ".opencode-security-audit.log"))).toBe(false)
  })

  test("security options are validated like every feature's", async () => {
    await using dir = await project()
    const log = Logger.memory()
    await SecurityFeature.init({
      options: { intervalMs: "fast", bogus: 1 },
      all: {},
      log,
      host: { directory: dir.path, worktree: dir.path, log },
      native: () => false,
    })
    expect(log.entries.map((e) => e.message).join("\n")).toContain("security.intervalMs")
    expect(log.entries.map((e) => e.message).join("\n")).toContain("unknown option security.bogus")
  })
})
