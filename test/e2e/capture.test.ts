import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { pathToFileURL } from "url"
import { CaptureStore } from "../../packages/core/capture/store"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const TIMEOUT = { timeout: 240_000 }
const CLI = path.join(Harness.ROOT, "packages/plugin/cli.ts")
const THIRD_PARTY = pathToFileURL(path.join(Harness.ROOT, "test/fixtures/third-party-plugin.ts")).href

const POLICY = {
  version: "1.0",
  roles: [{ name: "viewer", level: 10 }],
  rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"] }],
  segments: { markers: [{ start: "@secure-start", end: "@secure-end", deniedOperations: ["read", "llm"] }] },
}
const SEGMENT = "the confidential pricing algorithm lives on this line"
const SECRET = [
  "API_KEY=Zx81Qp0vLk27mNb5Yt3RwE9u",
  "line two of the api key file, long enough to remember",
  "line three of the api key file, also long enough",
].join("\n")
const FILES = {
  ".opencode-security.json": JSON.stringify(POLICY, null, 2),
  "secrets/api.key": SECRET,
  // A copy no path rule covers: only the output scanner catches it (in a plugin tool's output).
  "notes/copied.txt": `notes\n${SECRET}\n`,
  ".opencode/agent/checker.md":
    "---\ndescription: Checks one file of the project\nmode: subagent\n---\nYou check files.\n",
  "src/app.ts": ["export const visible = 1", "// @secure-start", `const p = "${SEGMENT}"`, "// @secure-end", ""].join(
    "\n",
  ),
}
/** Bytes that must never reach the capture store. */
const PROTECTED = [SEGMENT, "Zx81Qp0vLk27mNb5Yt3RwE9u", "line two of the api key file"]

for (const target of targets()) {
  describe(`tool capture on opencode ${target.label}`, () => {
    test(
      "built-in, plugin and subagent calls, failed calls (missing file, unknown subagent): each captured once, failures marked, protected content redacted in the store",
      async () => {
        const server = ModelServer.start([
          ModelServer.calls(
            { name: "read", args: { filePath: "src/app.ts" } },
            { name: "read", args: { filePath: "missing.txt" } },
            { name: "peek", args: { file: "notes/copied.txt" } },
          ),
          ModelServer.call("task", { description: "delegate", prompt: "do it", subagent_type: "no-such-agent" }),
          // A subagent that runs: its own session's turns take the next two steps.
          ModelServer.call("task", { description: "check", prompt: "check the app", subagent_type: "checker" }),
          ModelServer.call("glob", { pattern: "src/*.ts" }),
          ModelServer.text("checked"),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({ bin: target.bin, files: FILES, plugins: [THIRD_PARTY] })
        try {
          const result = await Harness.run(project, server, "Look at the app and the notes")
          expect(result.exitCode).toBe(0)
          expect(server.overruns).toBe(0)
          // `opencode run` prints the parent session's parts only: the subagent's glob is not among them.
          expect(result.tools.map((t) => `${t.tool}:${t.status}`).sort()).toEqual([
            "peek:completed",
            "read:completed",
            "read:error",
            "task:completed",
            "task:error",
          ])

          const store = CaptureStore.open(project.dir)
          const records = Harness.asProject(project, () => store.list())
          // Exactly once: one record per call, the subagent's glob included, no call twice.
          expect(records.map((r) => `${r.tool}:${r.status}`).sort()).toEqual([
            "glob:completed",
            "peek:completed",
            "read:completed",
            "read:error",
            "task:completed",
            "task:error",
          ])
          expect(new Set(records.map((r) => `${r.sessionID} ${r.callID}`)).size).toBe(6)
          const byTool = (tool: string, status: string) => records.find((r) => r.tool === tool && r.status === status)!
          const read = byTool("read", "completed")
          const missing = byTool("read", "error")
          const peek = byTool("peek", "completed")
          const task = byTool("task", "error")
          for (const r of records) expect(r.sessionID).toMatch(/^ses_/)
          // The subagent's call ran in its own session, a child of the one every other call ran in.
          const glob = byTool("glob", "completed")
          const parent = byTool("task", "completed").sessionID
          expect(records.filter((r) => r !== glob).every((r) => r.sessionID === parent)).toBe(true)
          expect(glob.sessionID).not.toBe(parent)
          expect(glob.parentID).toBe(parent)
          expect(glob.output).toContain("app.ts")

          // Completed calls hold what the model was given: redacted by the security layer first.
          const reported = (tool: string) => result.tools.find((t) => t.tool === tool && t.status === "completed")!
          expect(read.output).toBe(reported("read").output)
          expect(read.output).toContain("export const visible = 1")
          expect(read.output).toContain("[REDACTED: protected segment]")
          expect(peek.output).toBe(reported("peek").output)
          expect(peek.output).toContain("notes")
          expect(peek.output).toContain("[REDACTED")
          expect(read.args).toBe('{"filePath":"src/app.ts"}')

          // Failures are marked, with OpenCode's error and the arguments.
          expect(missing.error).toContain("File not found")
          expect(missing.args).toContain("missing.txt")
          expect(task.error).toContain("no-such-agent")
          expect(missing.output).toBeUndefined()

          // Nothing protected anywhere in the store's files.
          for (const name of fs.readdirSync(store.folder)) {
            const text = fs.readFileSync(path.join(store.folder, name), "utf8")
            for (const bytes of PROTECTED) expect(text).not.toContain(bytes)
          }
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )
    test(
      "MCP tools (opencode-builtins mcp as the project's MCP server): each call captured once with OpenCode's status",
      async () => {
        const server = ModelServer.start([
          ModelServer.calls(
            { name: "builtins_resource-query", args: { query: "deploy" } },
            // Invalid arguments: the MCP server answers with an error result.
            { name: "builtins_resource-query", args: { limit: "ten" } },
          ),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: {
            ".opencode/knowledge-base/deploy.md":
              "---\ntitle: Deploying\ndescription: How we deploy with helm\ntags: [deploy]\n---\nRun helm.\n",
          },
          config: { mcp: { builtins: { type: "local", command: [process.execPath, CLI, "mcp", "--quiet"] } } },
        })
        try {
          const result = await Harness.run(project, server, "Find the deploy notes")
          expect(result.exitCode).toBe(0)
          expect(result.tools.map((t) => t.tool)).toEqual(["builtins_resource-query", "builtins_resource-query"])
          const records = Harness.asProject(project, () => CaptureStore.open(project.dir).list())
          // One record per call OpenCode ran, with the status OpenCode gave it; the server adds none of its own.
          expect(records).toHaveLength(2)
          const reported = (result.events as any[])
            .filter((e) => e.part?.type === "tool")
            .map((e) => [e.part.callID, e.part.tool, e.part.state.status])
            .sort()
          expect(records.map((r) => [r.callID, r.tool, r.status]).sort()).toEqual(reported)
          const ok = records.find((r) => r.args?.includes("deploy"))!
          expect(ok.status).toBe("completed")
          // The MCP result's text (OpenCode hands the hook its content parts), as the model got it.
          expect(ok.output).toStartWith('{"query":{"query":"deploy"}')
          expect(ok.output).toContain('"id":"deploy"')
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )
    test(
      "CD-6 a captures.jsonl committed as a link to a file outside the project gets no captured call appended",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("read", { filePath: "notes.txt" }),
          ModelServer.text("Read it."),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: { "notes.txt": "deploy with $(touch /tmp/ocb-CD-pwned)\n" },
        })
        const outside = path.join(path.dirname(project.dir), "outside-bashrc")
        fs.writeFileSync(outside, "# my bashrc\n")
        const folder = path.join(project.dir, ".opencode/builtins-local/capture")
        fs.mkdirSync(folder, { recursive: true })
        fs.symlinkSync(outside, path.join(folder, "captures.jsonl"))
        try {
          const run = await Harness.run(project, server, "read notes.txt")
          expect(run.exitCode).toBe(0)
          // Before: the read call's record (the file's text, $(…) included) was appended to the outside file.
          expect(fs.readFileSync(outside, "utf8")).toBe("# my bashrc\n")
          expect(fs.lstatSync(path.join(folder, "captures.jsonl")).isSymbolicLink()).toBe(true)
        } finally {
          server.stop()
          fs.rmSync(outside, { force: true })
        }
      },
      TIMEOUT,
    )
  })
}
