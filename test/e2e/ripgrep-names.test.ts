// OpenCode 1.2.15 runs ripgrep on the host with the layer's exclusion file (RIPGREP_CONFIG_PATH, one argument per
// line). A sandboxed command creates a protected-looking file whose name holds line breaks ("sub/.env\n--pre=sh…"); the
// layer lists it and writes its exclusion. Had the name reached the file as it is, the next grep would run `sh` on
// every file it searched, outside the sandbox: here that would mark the host, replace the policy and read a protected
// file. 1.18 passes --no-config to ripgrep; the same session must stay harmless there too.
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const TIMEOUT = { timeout: 300_000 }
const POLICY = {
  version: "1.0",
  rules: [
    { pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] },
    { pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] },
  ],
}
const SECRET = "TOPSECRET-PROBE-Zq7Wm3Kd9Lx2"

for (const target of targets()) {
  describe(`file names as ripgrep arguments on stock opencode ${target.label}`, () => {
    test(
      "a protected name with line breaks adds no ripgrep argument: grep runs nothing on the host and finds the file",
      async () => {
        await using project = await Harness.project({
          bin: target.bin,
          files: {
            "a.txt": "a\n",
            "secrets/key.txt": `${SECRET}\n`,
            ".opencode-security.json": JSON.stringify(POLICY),
          },
        })
        const marker = path.join(project.root, "ran-on-host")
        const script = [
          `echo "hello $(tr A-Za-z N-ZA-Mn-za-m < secrets/key.txt)"`,
          `touch ${marker}`,
          `printf '{"version":"1.0"}' > .opencode-security.json`,
        ].join("; ")
        // The name is built at run time, so no check before the command sees ".env".
        const plant =
          `mkdir -p sub && n=$(printf 'sub/.e%sv\\n--pre=sh\\n--context-separator=x' n) && touch "$n" && ` +
          `echo ${Buffer.from(script + "\n").toString("base64")} | base64 -d > run.txt && echo planted`
        const server = ModelServer.start([
          ModelServer.call("bash", { command: plant, description: "plant" }),
          ModelServer.call("bash", { command: "echo second", description: "refresh" }),
          ModelServer.call("grep", { pattern: "hello" }),
          ModelServer.text("done"),
        ])
        try {
          const run = await Harness.run(project, server, "go", { timeoutMs: 180_000 })
          expect(run.exitCode).toBe(0)
          expect(run.tools.find((t) => t.tool === "bash")?.output).toContain("planted")
          const grep = run.tools.find((t) => t.tool === "grep")
          expect(grep?.status).toBe("completed")
          // ripgrep searched run.txt itself (the script's text), not what sh printed.
          expect(grep?.output).toContain("run.txt")
          expect(grep?.output).not.toContain("GBCFRPERG")
          expect(fs.existsSync(marker)).toBe(false)
          expect(JSON.parse(fs.readFileSync(path.join(project.dir, ".opencode-security.json"), "utf8"))).toEqual(POLICY)
          expect(server.requests.filter((r) => r.raw.includes(SECRET) || r.raw.includes("GBCFRPERG"))).toEqual([])
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )
  })
}
