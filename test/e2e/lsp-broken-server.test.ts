import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { processesIn, THREE_FILES } from "../../packages/core/test/lsp/fixtures"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

// Real-world tester AC, AC-4, through stock OpenCode: one server that cannot start (rustup's rust-analyzer proxy
// without the component; here a script first on OpenCode's PATH printing what it prints, and on a machine with rustup
// its proxy falls back to that script) made whole-project diagnostics fail; the TypeScript error was never reported.
for (const target of targets()) {
  describe(`lsp project diagnostics with a server that cannot start on stock opencode ${target.label}`, () => {
    test("AC-4: the TypeScript error is reported and the .rs file listed as not checked, with a short reason", async () => {
      await using project = await Harness.project({
        bin: target.bin,
        files: {
          ...THREE_FILES,
          "src/bad.ts": "export const count: number = 'three'\n",
          "native/Cargo.toml": '[package]\nname = "n"\nversion = "0.1.0"\nedition = "2021"\n',
          "native/src/lib.rs": "pub fn f() -> u32 { 1 }\n",
        },
      })
      const bin = path.join(project.root, "fakebin")
      fs.mkdirSync(bin)
      fs.writeFileSync(
        path.join(bin, "rust-analyzer"),
        "#!/bin/sh\necho \"error: Unknown binary 'rust-analyzer' in official toolchain 'stable-x86_64-unknown-linux-gnu'.\" >&2\n" +
          "echo >&2\necho 'Stack backtrace:' >&2\necho '   0: anyhow::kind::Adhoc::new' >&2\nexit 1\n",
        { mode: 0o755 },
      )
      const server = ModelServer.start([
        ModelServer.call("lsp", { operation: "diagnostics" }),
        ModelServer.text("done"),
      ])
      try {
        const result = await Harness.run(project, server, "check the project", {
          timeoutMs: 150_000,
          env: { PATH: `${bin}:${project.env.PATH}` },
        })
        expect(result.tools.map((t) => [t.tool, t.status])).toEqual([["lsp", "completed"]])
        const output = result.tools[0].output
        expect(output).toContain("TS2322")
        expect(output).toContain(
          "skipped native/src/lib.rs: The rust language server cannot run: rust-analyzer exited at once",
        )
        expect(output).toContain("Calling again will not help; to fix: rustup component add rust-analyzer")
        expect(output).not.toContain("anyhow")
      } finally {
        server.stop()
      }
      expect(await processesIn(project.dir)).toEqual([])
    }, 180_000)
  })
}
