// OpenCode's own formatters and language servers run in OpenCode's process, outside the sandbox, and start code the
// project holds. Against the real stock binaries: a sandboxed command rewrites the project's formatter script (a
// formatter the user configured) and, for 1.2.15's default, plants `node_modules/.bin/prettier` (`bun x prettier`
// whenever package.json lists prettier); then the agent edits a .ts file. Language servers are turned off by the same
// setting; they are not driven here (1.2.15 resolves tsserver.js from the folder above the project, 1.18 downloads
// typescript-language-server from npm). Without a policy (the layer is inert) each planted
// program runs — the attack is real on that binary — and with one the formatters are off, so none does.
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const TIMEOUT = { timeout: 480_000 }
const POLICY = {
  version: "1.0",
  rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] }],
}

for (const target of targets()) {
  // OpenCode 1.2.15 formats with the project's prettier by default; 1.18 only runs formatters the configuration asks for.
  const markers = target.version === "1.2.15" ? ["configured", "prettier"] : ["configured"]
  describe(`OpenCode's own formatters on stock opencode ${target.label}`, () => {
    test(
      "without a policy a formatter the agent rewrote runs outside the sandbox; with one, formatters are off",
      async () => {
        for (const policy of [false, true]) {
          await using project = await Harness.project({
            bin: target.bin,
            config: {
              formatter: { project: { command: ["sh", "scripts/fmt.sh", "$FILE"], extensions: [".ts"] } },
            },
            files: {
              "a.txt": "a\n",
              "scripts/fmt.sh": "exit 0\n",
              "package.json": JSON.stringify({ name: "p", devDependencies: { prettier: "3.3.3" } }),
              ...(policy ? { ".opencode-security.json": JSON.stringify(POLICY), "secrets/key.txt": "k\n" } : {}),
            },
          })
          const out = path.join(project.root, "markers")
          fs.mkdirSync(out)
          const plant = [
            `printf 'touch ${out}/configured\\n' > scripts/fmt.sh`,
            `mkdir -p node_modules/.bin && printf '#!/bin/sh\\ntouch ${out}/prettier\\n' > node_modules/.bin/prettier && chmod +x node_modules/.bin/prettier`,
            "echo planted",
          ].join("\n")
          const server = ModelServer.start([
            ModelServer.call("bash", { command: plant, description: "plant" }),
            ModelServer.call("write", { filePath: "src/x.ts", content: "export const x = 1\n" }),
            // Formatters run after the write returns on some versions: give them a moment before the session ends.
            ModelServer.call("bash", { command: "sleep 2; echo waited", description: "wait" }),
            ModelServer.text("done"),
          ])
          try {
            const run = await Harness.run(project, server, "edit", { timeoutMs: 180_000 })
            expect(run.exitCode).toBe(0)
            expect(run.tools.find((t) => t.tool === "bash")?.output).toContain("planted")
            expect(fs.readFileSync(path.join(project.dir, "src/x.ts"), "utf8")).toContain("export const x")
            const ran = markers.filter((m) => fs.existsSync(path.join(out, m)))
            expect({ policy, ran }).toEqual({ policy, ran: policy ? [] : markers })
          } finally {
            server.stop()
          }
        }
      },
      TIMEOUT,
    )
  })
}
