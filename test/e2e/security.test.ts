import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { pathToFileURL } from "url"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const THIRD_PARTY = pathToFileURL(path.join(Harness.ROOT, "test/fixtures/third-party-plugin.ts")).href

const POLICY = {
  version: "1.0",
  roles: [
    { name: "viewer", level: 10 },
    { name: "admin", level: 100 },
  ],
  rules: [
    { pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: ["admin"] },
  ],
  segments: {
    markers: [
      { start: "@secure-start", end: "@secure-end", deniedOperations: ["read", "llm"], allowedRoles: ["admin"] },
    ],
  },
}
const TOKEN = "Zx81Qp0vLk27mNb5Yt3RwE9u"
const SECRET = [
  `API_KEY=${TOKEN}`,
  "line two of the api key file, long enough to remember",
  "line three of the api key file, also long enough",
].join("\n")
const SEGMENT = "the confidential pricing algorithm lives on this line"
const APP = [
  "export const visible = 1",
  "// @secure-start",
  `const pricing = "${SEGMENT}"`,
  "// @secure-end",
  "export const tail = 2",
  "",
].join("\n")
/** Bytes that must never reach the model. */
const PROTECTED = [TOKEN, "line two of the api key file", "line three of the api key file", SEGMENT]
const BLOCKED = "Blocked by the project's security policy"

for (const target of targets()) {
  describe(`security on stock opencode ${target.label}`, () => {
    test(
      "denied read, shell read and third-party tool; redacted read, bash and plugin output; nothing protected sent",
      async () => {
        const server = ModelServer.start([
          ModelServer.calls(
            { name: "read", args: { filePath: "secrets/api.key" } },
            { name: "bash", args: { command: "cat secrets/api.key", description: "show the key" } },
            { name: "peek", args: { file: "secrets/api.key" } },
          ),
          ModelServer.calls(
            { name: "read", args: { filePath: "src/app.ts" } },
            { name: "bash", args: { command: "cat notes/copied.txt", description: "show notes" } },
            { name: "peek", args: { file: "notes/copied.txt" } },
          ),
          ModelServer.call("write", { filePath: ".opencode-security.json", content: '{"version":"1.0"}' }),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          plugins: [THIRD_PARTY],
          files: {
            ".opencode-security.json": JSON.stringify(POLICY, null, 2),
            "secrets/api.key": SECRET,
            "src/app.ts": APP,
            // A copy of the protected content that no path rule covers: only the output scanner can catch it.
            "notes/copied.txt": `notes\n${SECRET}\n`,
          },
        })
        try {
          const result = await Harness.run(project, server, "Show me the API key")
          expect(result.exitCode).toBe(0)
          expect(server.overruns).toBe(0)
          // Calls of one turn run in parallel and report in any order; turns are sequential.
          // A refusal is a tool error (an error thrown in tool.execute.before, on the plugin route, or a built-in
          // refused natively in the fork) or, for a plugin tool wrapped by the fork's guard, an "Error: …" result.
          const refused = (t: (typeof result.tools)[number]) =>
            (t.status === "error" && (t.error ?? "").includes(BLOCKED)) ||
            (t.status === "completed" && t.output.startsWith("Error:") && t.output.includes(BLOCKED))
          const status = (from: number, to: number) =>
            result.tools
              .slice(from, to)
              .map((t) => `${t.tool}:${refused(t) ? "refused" : t.status}`)
              .sort()
          expect(result.tools).toHaveLength(7)
          expect(status(0, 3)).toEqual(["bash:refused", "peek:refused", "read:refused"])
          expect(status(3, 6)).toEqual(["bash:completed", "peek:completed", "read:completed"])
          expect(status(6, 7)).toEqual(["write:refused"])
          const second = server.turns()[1].raw
          expect(second.split(BLOCKED).length - 1).toBe(3)
          // Edits to output.output in tool.execute.after are what the model receives (read, bash, plugin tool).
          const third = server.turns()[2].raw
          expect(third).toContain("export const visible = 1")
          expect(third).toContain("[REDACTED: protected segment]")
          expect(third).toContain("[REDACTED: content of a protected file]")
          const named = (tool: string) => result.tools.slice(3, 6).find((t) => t.tool === tool)!
          const [read, shell, peek] = [named("read"), named("bash"), named("peek")]
          expect(read.output).toContain("[REDACTED: protected segment]")
          expect(shell.output).toContain("[REDACTED")
          expect(peek.output).toContain("[REDACTED")
          expect(shell.output).toContain("notes")
          // The policy file cannot be overwritten, and it was not.
          expect(result.tools[6].error ?? result.tools[6].output).toContain(
            "implicit protection of security policy files",
          )
          expect(
            JSON.parse(fs.readFileSync(path.join(project.dir, ".opencode-security.json"), "utf8")).rules,
          ).toHaveLength(1)

          // No protected byte in any request body the model server received.
          expect(server.requests.length).toBeGreaterThanOrEqual(4)
          for (const request of server.requests) for (const bytes of PROTECTED) expect(request.raw).not.toContain(bytes)

          // The third-party plugin's messages hook ran after ours: it was shown redacted messages only.
          const seen = fs.readFileSync(path.join(project.dir, ".seen-by-third-party.log"), "utf8")
          expect(seen.length).toBeGreaterThan(0)
          for (const bytes of PROTECTED) expect(seen).not.toContain(bytes)

          // The audit log, anchored at the project root, records the denials and redactions with their source.
          const audit = fs
            .readFileSync(path.join(project.dir, ".opencode-security-audit.log"), "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l))
          const denials = audit.filter((e) => e.action === "deny").map((e) => [e.source, e.tool])
          expect(denials).toEqual(
            expect.arrayContaining([
              ["builtin-tool", "read"],
              ["builtin-tool", "bash"],
              ["plugin-tool", "peek"],
              ["builtin-tool", "write"],
            ]),
          )
          expect(audit.some((e) => e.action === "redact" && e.tool === "peek")).toBe(true)
          for (const bytes of PROTECTED) expect(JSON.stringify(audit)).not.toContain(bytes)
        } finally {
          server.stop()
        }
      },
      { timeout: 120_000 },
    )
  })
}
