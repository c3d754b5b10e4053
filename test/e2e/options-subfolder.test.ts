import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

// The repository's options file when OpenCode is started in a package folder (a monorepo, as trpc/trpc).
for (const target of targets()) {
  describe(`options file in a monorepo on stock opencode ${target.label}`, () => {
    test("Q6: `lsp.enabled: false` in the repository's .opencode/opencode-builtins.json holds when OpenCode runs in packages/server", async () => {
      await using project = await Harness.project({
        bin: target.bin,
        files: {
          ".opencode/opencode-builtins.json": JSON.stringify({ lsp: { enabled: false } }),
          "packages/server/package.json": "{}\n",
          "packages/server/src/index.ts": "export {}\n",
        },
      })
      const sub = path.join(project.dir, "packages/server")
      // the harness adds the model provider to <dir>/opencode.json; OpenCode merges it with the root's
      await fs.writeFile(path.join(sub, "opencode.json"), "{}\n")
      const names = (r: ModelServer.RecordedRequest) => (r.body.tools ?? []).map((t: any) => t.function?.name ?? t.name)
      // control: at the root the option holds
      let server = ModelServer.start([ModelServer.text("ok")])
      try {
        await Harness.run(project, server, "hello", { timeoutMs: 120_000 })
        const turn = server.requests.find((r) => (r.body.tools ?? []).length > 0)!
        expect(names(turn)).toContain("resource-query") // the plugin is loaded
        expect(names(turn)).not.toContain("lsp")
      } finally {
        server.stop()
      }
      server = ModelServer.start([ModelServer.text("ok")])
      try {
        const result = await Harness.run({ ...project, dir: sub }, server, "hello", { timeoutMs: 120_000 })
        expect(result.exitCode).toBe(0)
        const turn = server.requests.find((r) => (r.body.tools ?? []).length > 0)!
        expect(names(turn)).toContain("resource-query")
        expect(names(turn)).not.toContain("lsp")
      } finally {
        server.stop()
      }
    }, 300_000)
  })
}
