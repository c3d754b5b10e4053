import { describe, expect, test } from "bun:test"
import { encode } from "gpt-tokenizer"
import fs from "fs"
import path from "path"
import OpencodeBuiltins from "../../../plugin/index"
import { pluginInput } from "../../../plugin/test/input"
import { LocalState } from "../../learning/local"
import { CaptureStore } from "../../capture/store"
import { CaptureTools } from "../../capture/tools"
import { Init } from "../../init/init"
import { run as runMcp } from "../../mcp/cli"
import { BuiltinsMcp } from "../../mcp/server"
import { memoryIO } from "../../util/cli"
import { LearningStore } from "../../learning/store"
import { LocalSeal } from "../../learning/seal"
import { sealFile, tmpdir } from "../fixture"
import { CLI, connect, isolateUserFolders } from "./client"

const TIMEOUT = { timeout: 60_000 }

const POLICY = JSON.stringify({
  version: "1.0",
  roles: [{ name: "viewer", level: 10 }],
  rules: [{ pattern: ".opencode/knowledge-base/payroll.md", type: "file", deniedOperations: ["read", "llm"] }],
})

const PROJECT = {
  ".opencode/knowledge-base/deploy.md":
    "---\ntitle: Deploying the service\ndescription: How we deploy the billing service with helm\ntags: [deploy, helm]\n---\nRun `helm upgrade billing`.\n",
  ".opencode/knowledge-base/payroll.md":
    "---\ntitle: Payroll deploy secrets\ndescription: Deploy keys of the payroll system\ntags: [deploy]\n---\nkey: 7f3a-payroll\n",
  ".opencode/task/release.md":
    "---\ntitle: Ship a release\ndescription: Tag and publish a release of the billing service\ntags: [release]\n---\n1. Tag.\n",
  ".opencode/agent/release-manager.md":
    "---\ndescription: Prepares and ships releases of the billing service\nmode: subagent\n---\nYou ship releases.\n",
  ".opencode-security.json": POLICY,
}

isolateUserFolders()

/** The plugin route: the tool run the way OpenCode runs a plugin tool (before hook, execute, after hook). */
async function pluginRoute(dir: string) {
  const hooks = (await OpencodeBuiltins(pluginInput(dir).input)) as Record<string, any>
  let n = 0
  return {
    hooks,
    async call(name: string, args: Record<string, unknown>) {
      const sessionID = `ses_plugin_${++n}`
      const input = { tool: name, sessionID, callID: `call_${n}` }
      const before = { args }
      try {
        await hooks["tool.execute.before"](input, before)
      } catch (error) {
        return { text: (error as Error).message, isError: true }
      }
      const ctx = { sessionID, messageID: `msg_${n}`, agent: "build", abort: new AbortController().signal }
      const output = await hooks.tool[name].execute(before.args, ctx)
      const result = { title: "", output, metadata: {} }
      await hooks["tool.execute.after"]({ ...input, args: before.args }, result)
      return { text: result.output as string, isError: false }
    },
    async discover(prompt: string) {
      const output = {
        message: { id: "msg_d", sessionID: "ses_d" },
        parts: [{ id: "prt_0", type: "text", text: prompt }] as any[],
      }
      await hooks["chat.message"]({ sessionID: "ses_d" }, output)
      return output.parts.find((p) => p.text?.startsWith("<dynamic-context>"))?.text ?? ""
    },
  }
}

/** resource-load's output carries a random nonce per load. */
const nonce = (text: string) => {
  const found = /^<!-- resource-load ([0-9a-f]+) /.exec(text)?.[1]
  return found ? text.replaceAll(found, "<nonce>") : text
}

describe("opencode-builtins mcp, with the SDK's client against the real server process", () => {
  test(
    "lists the six tools within 1,500 tokens; the lifecycle tools are not offered",
    async () => {
      await using dir = await tmpdir(PROJECT)
      await using mcp = await connect(dir.path)
      const { tools } = await mcp.client.listTools()
      expect(tools.map((t) => t.name)).toEqual([
        "resource-query",
        "resource-load",
        "discover",
        "learnings-list",
        "learnings-forget",
        "capture-list",
      ])
      const cost = encode(JSON.stringify(tools)).length
      console.log(`MCP tool list: ${tools.length} tools, ${cost} tokens (gpt-tokenizer)`)
      expect(cost).toBeLessThanOrEqual(1_500)
      expect(tools.find((t) => t.name === "resource-load")!.description).not.toContain("resource-release")
      // `mcp --help` lists what the server offers, and the entry `init --mcp` writes.
      const help = memoryIO(dir.path)
      expect(await runMcp(["--help"], help)).toBe(0)
      expect(help.stdout).toContain(`Tools: ${tools.map((t) => t.name).join(", ")}.`)
      expect(help.stdout).toContain('"command": ["npx", "-y", "opencode-builtins", "mcp"]')
      expect(Init.MCP_ENTRY.command).toEqual(["npx", "-y", "opencode-builtins", "mcp"])
    },
    TIMEOUT,
  )

  test(
    "golden: the same arguments give the same output as the plugin route (policy in force)",
    async () => {
      await using dir = await tmpdir(PROJECT)
      LearningStore.open(dir.path).record([
        { kind: "correction", text: "Use pnpm instead of npm", source: { sessionID: "ses_a", messageID: "m1", at: 1 } },
        {
          kind: "decision",
          text: "We deploy with helm charts",
          source: { sessionID: "ses_a", messageID: "m2", at: 2 },
        },
      ])
      const plugin = await pluginRoute(dir.path)
      await using mcp = await connect(dir.path)
      const calls: [string, Record<string, unknown>][] = [
        ["resource-query", {}],
        ["resource-query", { query: "deploy" }],
        ["resource-query", { type: "task", limit: 1 }],
        ["resource-load", { id: "deploy" }],
        ["resource-load", { id: "release", includeReferences: true }],
        ["resource-load", { id: "payroll" }],
        ["resource-load", { id: "no-such-thing" }],
        ["learnings-list", {}],
        ["learnings-list", { kind: "decision" }],
        ["learnings-list", { query: "pnpm" }],
        ["learnings-forget", { id: "lrn_nonexistent" }],
      ]
      for (const [name, args] of calls) {
        const viaPlugin = await plugin.call(name, args)
        const viaMcp = await mcp.call(name, args)
        // The one sentence that differs: over MCP no resource-release tool is offered, so none is pointed to.
        expect({ name, args, text: nonce(viaMcp.text) }).toEqual({
          name,
          args,
          text: nonce(viaPlugin.text).replace(" Release with resource-release when no longer needed.", ""),
        })
        // A missing (or protected) resource or learning is answered as a value the model reads; an MCP client is told
        // it failed through isError, as the protocol reports a tool's execution errors.
        const failure = ["payroll", "no-such-thing", "lrn_nonexistent"].includes(String(args.id))
        expect({ name, args, isError: viaMcp.isError }).toEqual({ name, args, isError: failure })
        expect(viaPlugin.isError).toBe(false)
      }
      expect((await mcp.call("resource-load", { id: "no-such-thing" })).isError).toBe(true)
      expect((await mcp.call("learnings-forget", { id: "lrn_nonexistent" })).isError).toBe(true)
      expect((await mcp.call("resource-load", { id: "deploy" })).isError).toBe(false)
      // The protected article is as invisible over MCP as in OpenCode: never listed, never loaded, never named.
      const all = await mcp.call("resource-query", { query: "deploy" })
      expect(all.text).toContain('"id":"deploy"')
      expect(all.text).not.toContain("payroll")
      expect((await mcp.call("resource-load", { id: "payroll" })).text).not.toContain("7f3a")

      const prompt = "Please ship the release of the billing service"
      const suggested = await plugin.discover(prompt)
      expect(suggested).toContain("release-manager")
      expect(suggested).toContain("- @release-manager: ")
      // The same matches; over MCP the agent is named by its file (the client has no task tool and no @name).
      expect((await mcp.call("discover", { prompt })).text).toBe(
        suggested
          .replace(
            "(use them if they help, ignore them otherwise).",
            `(use them if they help, ignore them otherwise). Paths are relative to the project folder ${dir.path}.`,
          )
          .replace(
            "Agents (mention @name, or delegate to it with the task tool):\n- @release-manager:",
            "Agents (read the file and follow it, or give it to a subagent as its instructions):\n" +
              "- release-manager (.opencode/agent/release-manager.md):",
          ),
      )
    },
    TIMEOUT,
  )

  test(
    "discover names each suggestion's file to read (relative to the project, or ~/…), every one readable, and no tool the server does not offer",
    async () => {
      // The tester's case: anthropics/skills' pdf skill in .claude/skills, asked about PDF forms over MCP.
      const skill =
        "---\nname: pdf\ndescription: Use this skill whenever the user wants to do anything with PDF files: fill in " +
        "PDF forms, extract text and tables, merge or split documents.\n---\n# PDF processing\n"
      await using dir = await tmpdir({
        ".claude/skills/pdf/SKILL.md": skill,
        ".claude/commands/pdf-report.md":
          "---\ndescription: Write a report of the PDF tables extracted\n---\nReport.\n",
        ".opencode/command/pdf-tables.md":
          "---\ndescription: Extract the tables of a PDF form into CSV\n---\nExtract $ARGUMENTS.\n",
      })
      await using me = await tmpdir({
        ".claude/agents/pdf-auditor.md":
          "---\nname: pdf-auditor\ndescription: Audits PDF forms and tables for accessibility\n---\nAudit.\n",
      })
      await using mcp = await connect(dir.path, { HOME: me.path })
      const { tools } = await mcp.client.listTools()
      const { text, isError } = await mcp.call("discover", {
        prompt: "fill in a PDF form, extract its tables, audit the form and report the tables",
      })
      expect(isError).toBe(false)
      expect(text).toContain(`Paths are relative to the project folder ${dir.path}.`)
      expect(text).toContain(
        "Skills (read the file and follow it):\n- pdf (.claude/skills/pdf/SKILL.md): Use this skill",
      )
      expect(text).toContain("- pdf-auditor (~/.claude/agents/pdf-auditor.md): Audits PDF forms")
      expect(text).toContain("- pdf-report (.claude/commands/pdf-report.md): Write a report")
      // An OpenCode command (in OpenCode: "/pdf-tables", which an MCP client cannot run).
      const csv = await mcp.call("discover", { prompt: "extract the tables of a PDF form into CSV" })
      expect(csv.text).toContain("- pdf-tables (.opencode/command/pdf-tables.md): Extract the tables")
      // Every entry names a file the client can read; nothing points at OpenCode's tools or syntax.
      const named = [...(text + csv.text).matchAll(/^- [^(\n]+ \(([^)\n]+)\):/gm)].map((m) => m[1])
      expect(new Set(named).size).toBe(4)
      for (const file of named) {
        const full = file.startsWith("~/") ? path.join(me.path, file.slice(2)) : path.resolve(dir.path, file)
        expect(await Bun.file(full).exists()).toBe(true)
      }
      for (const word of ["skill tool", "task tool", "@", "/name", "- /pdf"])
        expect(text + csv.text).not.toContain(word)
      for (const tool of (text + csv.text).matchAll(/the ([\w-]+) tool/g))
        expect(tools.map((t) => t.name)).toContain(tool[1])
      // The plugin route keeps OpenCode's wording.
      const saved = process.env.HOME
      process.env.HOME = me.path
      try {
        const viaPlugin = await (await pluginRoute(dir.path)).discover("fill in a PDF form and extract the tables")
        expect(viaPlugin).toContain("Skills (load with the skill tool):\n- pdf: Use this skill")
      } finally {
        process.env.HOME = saved
      }
    },
    TIMEOUT,
  )

  test(
    "discover says so when nothing matches, instead of an empty answer",
    async () => {
      await using dir = await tmpdir({
        ".opencode/command/pdf-tables.md":
          "---\ndescription: Extract the tables of a PDF form into CSV\n---\nExtract.\n",
      })
      await using mcp = await connect(dir.path)
      const { text, isError } = await mcp.call("discover", { prompt: "thanks!" })
      expect(isError).toBe(false)
      expect(text).toBe(BuiltinsMcp.NO_SUGGESTION)
    },
    TIMEOUT,
  )

  test(
    "learnings-forget removes a learning for every route; invalid arguments are refused with the reason",
    async () => {
      await using dir = await tmpdir({})
      const store = LearningStore.open(dir.path)
      const { added } = store.record([
        { kind: "correction", text: "Use pnpm instead of npm", source: { sessionID: "s", messageID: "m", at: 1 } },
      ])
      await using mcp = await connect(dir.path)
      const gone = await mcp.call("learnings-forget", { id: added[0].id })
      expect(JSON.parse(gone.text).forgotten.id).toBe(added[0].id)
      expect(store.list()).toEqual([])
      const bad = await mcp.call("resource-query", { limit: "ten" })
      expect(bad.isError).toBe(true)
      expect(bad.text).toContain("limit")
    },
    TIMEOUT,
  )
  test(
    "capture-list gives what the core tool gives over the same store; the server's own calls are not captured",
    async () => {
      await using dir = await tmpdir(PROJECT)
      const store = CaptureStore.open(dir.path)
      // Captured under the policy and role the server reads with (its environment names none: the lowest).
      const scope = LocalState.scopeOf("viewer", [dir.file(".opencode-security.json")])
      store.append({
        scope,
        callID: "call_1",
        sessionID: "ses_1",
        tool: "read",
        status: "completed",
        title: "src/app.ts",
        output: "1: export const x = 1",
        at: Date.UTC(2026, 10, 23, 12),
      })
      store.append({
        scope,
        callID: "call_2",
        sessionID: "ses_1",
        tool: "bash",
        status: "error",
        args: '{"command":"make"}',
        error: "make: *** No rule to make target",
        at: Date.UTC(2026, 10, 23, 12, 1),
      })
      await using mcp = await connect(dir.path)
      const ctx = { sessionID: "s", messageID: "m", agent: "mcp", abort: new AbortController().signal } as never
      const direct = CaptureTools.create(() => CaptureStore.open(dir.path), { scope: () => scope })["capture-list"]
      const calls = [{}, { failed: true }, { tool: "read" }, { callID: "call_2" }, { callID: "call_nope" }]
      for (const args of calls) {
        const viaMcp = await mcp.call("capture-list", args)
        // A call id not captured is answered as a value the model reads, and as a failure to an MCP client.
        const isError = args.callID === "call_nope"
        expect({ args, ...viaMcp }).toEqual({ args, text: await direct.execute(args as never, ctx), isError })
      }
      expect(JSON.parse((await mcp.call("capture-list", { failed: true })).text).calls).toMatchObject([
        { callID: "call_2", tool: "bash", status: "error", error: "make: *** No rule to make target" },
      ])
      expect((await mcp.call("resource-query", { query: "deploy" })).isError).toBe(false)
      expect(
        CaptureStore.open(dir.path)
          .list()
          .map((r) => r.callID),
      ).toEqual(["call_2", "call_1"])
    },
    TIMEOUT,
  )

  test(
    "resource-load over MCP speaks of the MCP route: no resource-release, and a limit is one answer's, not a session's",
    async () => {
      // Shape of rust-lang/book's SUMMARY.md: one page linking every chapter (more than the 20 of one answer).
      const pages: Record<string, string> = {}
      const links: string[] = []
      for (let i = 1; i <= 24; i++) {
        pages[`.opencode/knowledge-base/ch${String(i).padStart(2, "0")}.md`] = `# Chapter ${i}\n`
        links.push(`- [Chapter ${i}](ch${String(i).padStart(2, "0")}.md)`)
      }
      await using dir = await tmpdir({ ...pages, ".opencode/knowledge-base/SUMMARY.md": links.join("\n") + "\n" })
      await using mcp = await connect(dir.path)
      for (let round = 0; round < 2; round++) {
        const { text, isError } = await mcp.call("resource-load", { id: "SUMMARY", includeReferences: true })
        expect(isError).toBe(false)
        expect(text).not.toContain("resource-release")
        expect(text).not.toContain("session limit")
        expect(text).toContain("Loaded 20 resources: SUMMARY, ch01,")
        expect(text).toContain(
          "Reference 'ch20' not loaded: one answer's limit (20 resources) reached; load it with its own resource-load call.",
        )
      }
      // The plugin route keeps its session wording.
      const plugin = await pluginRoute(dir.path)
      const viaPlugin = await plugin.call("resource-load", { id: "SUMMARY", includeReferences: true })
      expect(viaPlugin.text).toContain("Release with resource-release when no longer needed.")
      expect(viaPlugin.text).toContain("Reference 'ch20' not loaded: session limit (20 resources) reached.")
    },
    TIMEOUT,
  )
})

describe("opencode-builtins mcp: local state it cannot show (red team CD)", () => {
  test(
    "CD-4b/d a learning or captured call whose time is beyond the Date range is left out; the others are listed",
    async () => {
      const GOOD = {
        id: "lrn_good",
        kind: "correction",
        text: "Use pnpm",
        count: 1,
        firstSeen: 1,
        lastSeen: 2,
        sources: [],
      }
      const FAR = { ...GOOD, id: "lrn_far", text: "Use tabs", lastSeen: 1e20, sources: [{ sessionID: "s", at: 1e20 }] }
      await using dir = await tmpdir({
        ".opencode/builtins-local/learnings.json": JSON.stringify({ version: 1, learnings: [GOOD, FAR] }),
      })
      // Sealed, as the built-ins write them (LocalSeal).
      sealFile(dir.file(".opencode/builtins-local/learnings.json"), "learnings")
      const captures = dir.file(".opencode/builtins-local/capture/captures.jsonl")
      const line = (callID: string, at: number) =>
        LocalSeal.seal(
          captures,
          "capture",
          JSON.stringify({ v: 1, callID, sessionID: "s", tool: "read", status: "completed", at }),
        ) + "\n"
      fs.mkdirSync(path.dirname(captures), { recursive: true })
      fs.writeFileSync(captures, line("call_ok", 1000) + line("call_far", 1e20))
      const log = { debug() {}, info() {}, warn() {}, error() {} }
      const mcp = await BuiltinsMcp.create({ directory: dir.path, log })
      try {
        // Before: both tools answered only "Invalid Date" (isError).
        const learnings = await mcp.call("learnings-list", {})
        expect(learnings.isError).toBe(false)
        expect(learnings.text).toContain("lrn_good")
        expect(learnings.text).not.toContain("lrn_far")
        const calls = await mcp.call("capture-list", {})
        expect(calls.isError).toBe(false)
        expect(calls.text).toContain("call_ok")
        expect(calls.text).not.toContain("call_far")
      } finally {
        await mcp.close()
      }
    },
    TIMEOUT,
  )
})

const INITIALIZE = [
  {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pipe", version: "1" } },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
]

/**
 * The server in `dir` given `lines` (after the handshake) written at once and its input closed at once, as
 * `printf … | opencode-builtins mcp` does: its exit code and the messages it printed.
 */
async function pipeAndClose(dir: string, lines: object[]): Promise<{ code: number; answers: any[] }> {
  const proc = Bun.spawn([process.execPath, CLI, "mcp", "--quiet"], {
    cwd: dir,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  })
  proc.stdin.write([...INITIALIZE, ...lines].map((l) => JSON.stringify(l)).join("\n") + "\n")
  await proc.stdin.flush()
  proc.stdin.end()
  const out = await new Response(proc.stdout).text()
  const code = await proc.exited
  return {
    code,
    answers: out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  }
}

describe("opencode-builtins mcp: a client that closes its input (red team CD-1)", () => {
  test(
    "CD-1 requests piped before stdin closes are all answered (tools/call included), then exit 0",
    async () => {
      await using dir = await tmpdir(PROJECT)
      const { code, answers } = await pipeAndClose(dir.path, [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "resource-query", arguments: { query: "deploy" } },
        },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "discover", arguments: { prompt: "deploy" } } },
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "learnings-list", arguments: {} } },
        { jsonrpc: "2.0", id: 4, method: "tools/list" },
      ])
      expect(code).toBe(0)
      // Before: none answered (or only ids 0 and 3 when written by a shell), exit 0 all the same.
      expect(answers.map((a) => a.id).sort()).toEqual([0, 1, 2, 3, 4])
      expect(answers.find((a) => a.id === 1).result.content[0].text).toContain("deploy")
      expect(answers.every((a) => !a.error && !a.result.isError)).toBe(true)
    },
    TIMEOUT,
  )

  test(
    "a request the client cancels before closing gets no answer (by the protocol) and does not hold the exit",
    async () => {
      await using dir = await tmpdir(PROJECT)
      const { code, answers } = await pipeAndClose(dir.path, [
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "discover", arguments: { prompt: "deploy" } } },
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "user" } },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
      ])
      // Well within the 60 s the server waits for requests still running: nothing is left waiting for id 1.
      expect(code).toBe(0)
      const ids = answers.map((a) => a.id)
      expect(ids).toContain(0)
      expect(ids).toContain(2)
      expect(ids).not.toContain(1)
    },
    { timeout: 30_000 },
  )
})
