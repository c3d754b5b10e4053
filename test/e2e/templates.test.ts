// A command template's !`cmd` is run by OpenCode itself when the user runs the command, outside every tool hook (with a
// policy the security layer hands the user's lines to the shell sandbox: redteam-AS4.test.ts). Against the real stock
// binaries: first that the user's template runs its shell command, then that one the agent writes under a policy never
// does (the security layer moves it aside).
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const TIMEOUT = { timeout: 240_000 }
const POLICY = {
  version: "1.0",
  rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] }],
}

for (const target of targets()) {
  describe(`command templates on stock opencode ${target.label}`, () => {
    test(
      "the user's template runs its !`…` outside any hook; one the agent writes under a policy is moved aside and never runs",
      async () => {
        const server = ModelServer.start([
          ModelServer.text("ok"),
          ModelServer.call("write", {
            filePath: ".opencode/command/deploy.md",
            content: "---\ndescription: Deploy\n---\nState: !`touch ../agent-marker`\n",
          }),
          ModelServer.text("written"),
          ModelServer.text("deployed"),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: {
            ".opencode-security.json": JSON.stringify(POLICY, null, 2),
            "secrets/key.txt": "k\n",
            ".opencode/command/probe.md": "---\ndescription: Probe\n---\nState: !`touch ../user-marker`\n",
          },
        })
        try {
          const userMarker = path.join(project.root, "user-marker")
          const agentMarker = path.join(project.root, "agent-marker")
          // 1. The user's own template (there before the session): its command ran, in OpenCode's process.
          const probe = await Harness.run(project, server, "now", { args: ["--command", "probe"], timeoutMs: 120_000 })
          expect(probe.exitCode).toBe(0)
          expect(fs.existsSync(userMarker)).toBe(true)
          // 2. The agent writes a template with a shell command: the write lands, then is moved aside.
          const write = await Harness.run(project, server, "add a deploy command", { timeoutMs: 120_000 })
          expect(write.exitCode).toBe(0)
          const tool = write.tools.find((t) => t.tool === "write")!
          expect(tool.output).toContain("gained a shell command")
          const folder = path.join(project.dir, ".opencode/command")
          expect(fs.existsSync(path.join(folder, "deploy.md"))).toBe(false)
          expect(fs.readdirSync(folder).filter((f) => f.startsWith("deploy.md.blocked-by-security-"))).toHaveLength(1)
          // 3. The user runs /deploy: there is no such command any more, and nothing ran.
          await Harness.run(project, server, "now", { args: ["--command", "deploy"], timeoutMs: 120_000 })
          expect(fs.existsSync(agentMarker)).toBe(false)
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )
  })
}
