import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { SecurityError } from "../../security/errors"
import type { SecurityGuard } from "../../security/guard"
import { SecurityHooks } from "../../security/hooks"
import { SECRET_FILE, guardFor, project } from "./fixture"

let dir: Awaited<ReturnType<typeof project>>
let guard: SecurityGuard.Guard
let hooks: SecurityHooks.Hooks
const asked: string[] = []

beforeAll(async () => {
  dir = await project()
  // The tests call before hooks without the results that would follow (fileCallMs: 0, no wait for them; the wait is
  // tested in sandbox.test.ts).
  guard = await guardFor(dir.path, {}, { shell: "/bin/bash", ripgrep: false, fileCallMs: 0 })
  hooks = SecurityHooks.create({
    guard,
    item: async (kind, name) => {
      asked.push(`${kind}:${name}`)
      return name === "deploy" ? "its SKILL.md lies in secrets/, which the policy protects" : undefined
    },
    describe: async (_tool, text) => text.replaceAll("deploy: ships to production", ""),
  })
}, 30_000)
afterAll(async () => {
  guard.close()
  await dir[Symbol.asyncDispose]()
})

describe("SecurityHooks", () => {
  test("tool.execute.before throws the typed refusal; an allowed call passes", async () => {
    const refused = hooks["tool.execute.before"](
      { tool: "read", callID: "c1" },
      { args: { filePath: "secrets/api.key" } },
    )
    await expect(refused).rejects.toBeInstanceOf(SecurityError.Denied)
    await expect(refused).rejects.toThrow("Blocked by the project's security policy")
    await hooks["tool.execute.before"]({ tool: "read", callID: "c2" }, { args: { filePath: "README.md" } })
  })

  test("skill and task calls naming an item defined in a protected file are refused", async () => {
    await expect(
      hooks["tool.execute.before"]({ tool: "skill", callID: "c3" }, { args: { name: "deploy" } }),
    ).rejects.toThrow("skill 'deploy'")
    await hooks["tool.execute.before"](
      { tool: "task", callID: "c4" },
      { args: { subagent_type: "review", prompt: "x" } },
    )
    expect(asked).toEqual(["skill:deploy", "agent:review"])
  })

  test("shell.env adds the sandbox entry for a shell with a call id, nothing for a terminal without one", async () => {
    await hooks["tool.execute.before"]({ tool: "bash", callID: "c5" }, { args: { command: "ls" } })
    const output = { env: {} as Record<string, string> }
    await hooks["shell.env"]({ cwd: dir.path, callID: "c5" }, output)
    expect(output.env.BASH_ENV).toContain("enter.bash")
    expect(output.env.ZDOTDIR).toBeDefined()
    const pty = { env: {} as Record<string, string> }
    await hooks["shell.env"]({ cwd: dir.path }, pty)
    expect(pty.env).toEqual({})
  }, 60_000)

  test("tool.execute.after redacts output, title, metadata and MCP content, and leaves attachments alone", async () => {
    const attachment = { type: "file", mime: "image/png", url: "data:image/png;base64,AAAA" }
    const output: Record<string, unknown> = {
      title: "API_KEY=Zx81Qp0vLk27mNb5Yt3RwE9u",
      output: `notes\n${SECRET_FILE}\n`,
      metadata: { preview: SECRET_FILE },
      content: [{ type: "text", text: SECRET_FILE }],
      attachments: [attachment],
    }
    await hooks["tool.execute.after"]({ tool: "some_plugin_tool", callID: "c6", args: {} }, output as never)
    const all = JSON.stringify(output)
    expect(all).not.toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
    expect(all).not.toContain("line two of the api key file")
    expect(output.attachments).toEqual([attachment])
  })

  test("tool.definition: protected items leave the skill and task descriptions and their parameters", async () => {
    const output = {
      description: "Skills:\ndeploy: ships to production\nreview: checks code",
      parameters: { properties: { name: { description: "one of: deploy: ships to production" } } },
    }
    await hooks["tool.definition"]({ toolID: "skill" }, output)
    expect(output.description).not.toContain("ships to production")
    expect(output.description).toContain("review: checks code")
    expect(JSON.stringify(output.parameters)).not.toContain("ships to production")
  })

  test("prompt parts, command parts, system prompts, compaction context and completed text are redacted", async () => {
    const parts = [
      { type: "text", text: `look: ${SECRET_FILE}` },
      { type: "file", url: "x" },
    ]
    await hooks["chat.message"]({}, { parts })
    expect(JSON.stringify(parts)).not.toContain("line two of the api key file")
    const command = [{ type: "text", text: SECRET_FILE }]
    await hooks["command.execute.before"]({}, { parts: command })
    expect(JSON.stringify(command)).not.toContain("line two of the api key file")
    const system = { system: [`context: ${SECRET_FILE}`] }
    await hooks["experimental.chat.system.transform"]({}, system)
    expect(system.system[0]).not.toContain("line two of the api key file")
    const compacting = { context: [SECRET_FILE], prompt: `summarise ${SECRET_FILE}` }
    await hooks["experimental.session.compacting"]({}, compacting)
    expect(JSON.stringify(compacting)).not.toContain("line two of the api key file")
    const done = { text: `the key is Zx81Qp0vLk27mNb5Yt3RwE9u` }
    await hooks["experimental.text.complete"]({}, done)
    expect(done.text).not.toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
  })
})
