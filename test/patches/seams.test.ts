import { describe, expect, test } from "bun:test"
import { Builtins } from "../../packages/core/builtins"
import { BuiltinsSeams } from "../../packages/core/builtins/seams"
import type { Host } from "../../packages/core/host"
import { Logger } from "../../packages/core/util/log"
import { tmpdir } from "../../packages/core/test/fixture"

// The functions the fork's glue calls from OpenCode's seams (Plugin.trigger, the tool registry, MCP): core's hooks
// around the other plugins' hooks, on a real project with a security policy.
const SECRET = "Zx81Qp0vLk27mNb5Yt3RwE9u"
const POLICY = {
  version: "1.0",
  roles: [{ name: "viewer", level: 10 }],
  rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] }],
  mcp: { defaultPolicy: "enforced", servers: { shady: "blocked", docs: "trusted" } },
}

async function project(policy = true) {
  const dir = await tmpdir({
    "README.md": "# readme\n",
    ...(policy ? { ".opencode-security.json": JSON.stringify(POLICY), "secrets/api.key": `API_KEY=${SECRET}\n` } : {}),
  })
  const host: Host = { directory: dir.path, worktree: dir.path, log: Logger.silent }
  const seams = await BuiltinsSeams.create(host, { options: {}, logger: () => Logger.silent })
  return {
    seams,
    dir: dir.path,
    [Symbol.asyncDispose]: async () => {
      await seams.dispose()
      await dir[Symbol.asyncDispose]()
    },
  }
}

describe("BuiltinsSeams: core's hooks around the other plugins' hooks", () => {
  test("core's tools, hasBuiltIn, the MCP policy", async () => {
    await using p = await project()
    expect(Object.keys(p.seams.tools).sort()).toEqual([
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
    expect(p.seams.has("resource-loader")).toBe(true)
    expect(p.seams.has("not-a-feature")).toBe(false)
    expect(p.seams.mcpAllowed("shady")).toBe(false)
    expect(p.seams.mcpAllowed("docs")).toBe(true)
    expect(p.seams.mcpAllowed("other")).toBe(true)
  })

  test("a tool call is judged with the arguments the other plugins left", async () => {
    await using p = await project()
    const call = { tool: "read", sessionID: "ses_1", callID: "call_1" }
    const rewrite = async (out: { args: { filePath: string } }) => void (out.args.filePath = "secrets/api.key")
    const error = await p.seams
      .trigger("tool.execute.before", call, { args: { filePath: "README.md" } }, rewrite)
      .catch((e) => e)
    expect(String(error?.message)).toContain("Blocked by the project's security policy")
    await p.seams.trigger("tool.execute.before", call, { args: { filePath: "README.md" } }, async () => {})
  })

  test("a tool result reaches other plugins redacted, what they add is redacted, and its shape is kept", async () => {
    await using p = await project()
    const output = {
      title: `key ${SECRET}`,
      output: `found API_KEY=${SECRET}`,
      metadata: { note: SECRET, count: 1 },
      attachments: [{ type: "file", mime: "image/png", url: "data:image/png;base64,AAAA" }],
    }
    const seen: string[] = []
    await p.seams.trigger(
      "tool.execute.after",
      { tool: "peek", sessionID: "s", callID: "c", args: {} },
      output,
      async (out) => {
        seen.push(JSON.stringify(out))
        out.output += `\nappended ${SECRET}`
      },
    )
    expect(seen[0]).not.toContain(SECRET)
    expect(JSON.stringify(output)).not.toContain(SECRET)
    expect(output.output).toContain("appended ")
    expect(output.metadata.count).toBe(1)
    expect(output.attachments).toEqual([{ type: "file", mime: "image/png", url: "data:image/png;base64,AAAA" }])
  })

  test("messages and system prompts reach other plugins as redacted clones; only structural changes come back", async () => {
    await using p = await project()
    const message = (id: string, text: string) => ({
      info: { id, role: "user", sessionID: "s" },
      parts: [{ id: `${id}p`, type: "text", text }],
    })
    const output = { messages: [message("m1", `the key is ${SECRET}`), message("m2", "hello")] }
    let shown = ""
    await p.seams.trigger("experimental.chat.messages.transform", {}, output, async (out) => {
      shown = JSON.stringify(out.messages)
      out.messages[1].parts[0].text = "edited by a plugin"
      out.messages.push(message("m3", "added by a plugin"))
    })
    expect(shown).not.toContain(SECRET)
    expect(output.messages.map((m) => m.info.id)).toEqual(["m1", "m2", "m3"])
    expect(output.messages[1].parts[0].text).toBe("hello")
    expect(JSON.stringify(output.messages)).not.toContain(SECRET)

    const system = { system: [`context: ${SECRET}`] }
    let seenSystem = ""
    await p.seams.trigger("experimental.chat.system.transform", {}, system, async (out) => {
      seenSystem = out.system.join("\n")
      out.system.push(`copied ${SECRET}`)
    })
    expect(seenSystem).not.toContain(SECRET)
    expect(system.system).toHaveLength(2)
    expect(system.system.join("\n")).not.toContain(SECRET)
  })

  test("hook inputs carrying a stored message reach other plugins redacted; the stored one is left alone", async () => {
    await using p = await project()
    const input = { sessionID: "s", message: { id: "m1", role: "user", system: `use ${SECRET}` } }
    let seen = ""
    await p.seams.trigger("experimental.compaction.autocontinue", input, { enabled: true }, async (_out, inp) => {
      seen = JSON.stringify(inp)
    })
    expect(seen).not.toContain(SECRET)
    expect(seen).toContain('"id":"m1"')
    expect(input.message.system).toContain(SECRET)
  })

  test("a tool end reported with no result (a failed subtask) runs the plugins' hooks and nothing else", async () => {
    await using p = await project()
    const seen: unknown[] = []
    const input = { tool: "task", sessionID: "s", callID: "c", args: {} }
    await p.seams.trigger("tool.execute.after", input, undefined, async (out) => void seen.push(out))
    expect(seen).toEqual([undefined])
    // The composed hooks the plugin returns take the same report without failing.
    const hooks = (
      await Builtins.create(
        { directory: p.dir, worktree: p.dir, log: Logger.silent },
        { options: {}, logger: () => Logger.silent },
      )
    ).hooks
    await hooks["tool.execute.after"]!(input, undefined as never)
  })

  test("without a policy every hook point just runs the plugins' hooks", async () => {
    await using p = await project(false)
    const output = { messages: [{ info: { id: "m1" }, parts: [{ type: "text", text: SECRET }] }] }
    await p.seams.trigger("experimental.chat.messages.transform", {}, output, async (out) => {
      out.messages[0].parts[0].text = "changed"
    })
    expect(output.messages[0].parts[0].text).toBe("changed")
    const order: string[] = []
    await p.seams.trigger("chat.params", {}, { temperature: 1 }, async () => void order.push("plugins"))
    expect(order).toEqual(["plugins"])
  })
})
