import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import type { Host } from "../../host"
import { LspClient } from "../../lsp/client"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import { Logger } from "../../util/log"
import { project, THREE_FILES, toolContext } from "./fixtures"

// What rustup's proxy prints when the rust-analyzer component is not installed (then a backtrace), exit code 1.
const PROXY =
  "#!/bin/sh\n" +
  "echo \"error: Unknown binary 'rust-analyzer' in official toolchain 'stable-x86_64-unknown-linux-gnu'.\" >&2\n" +
  "echo >&2\necho 'Stack backtrace:' >&2\n" +
  'for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do echo "  $i: anyhow::kind::Adhoc::new" >&2; done\nexit 1\n'

// Real-world tester AC, AC-4: rustup puts a `rust-analyzer` proxy in ~/.cargo/bin whether or not the component is
// installed; without it the proxy exits 1 with "Unknown binary 'rust-analyzer' in official toolchain …" and a
// 20-line stack backtrace. One such server made whole-project diagnostics fail outright (LspServerStartFailed with the
// backtrace, "call again"), so a TypeScript error in the same repository was never reported. Here the proxy is a
// script first on PATH printing what rustup prints. Real typescript-language-server.
describe("a server that cannot start (AC-4)", () => {
  test("project diagnostics still report the TypeScript error; the .rs files are listed as not checked, the reason given once and short", async () => {
    await using proj = await project({
      ...THREE_FILES,
      "src/bad.ts": "export const count: number = 'three'\n",
      "native/Cargo.toml": '[package]\nname = "n"\nversion = "0.1.0"\nedition = "2021"\n',
      "native/src/lib.rs": "pub fn f() -> u32 { 1 }\n",
      "native/src/more.rs": "pub fn g() -> u32 { 2 }\n",
    })
    const bin = path.join(proj.dir, ".fakebin")
    fs.mkdirSync(bin)
    fs.writeFileSync(path.join(bin, "rust-analyzer"), PROXY, { mode: 0o755 })
    const saved = process.env.PATH
    process.env.PATH = `${bin}:${saved}`
    const host: Host = { directory: proj.dir, worktree: proj.dir, log: Logger.silent }
    const service = Lsp.create({ directory: proj.dir, worktree: proj.dir, log: Logger.silent, config: true })
    const lsp = LspTools.create(host, () => service).lsp
    try {
      let out: string
      try {
        out = String(await lsp.execute({ operation: "diagnostics" }, toolContext(proj.dir)))
      } catch (e: any) {
        out = `THROWN ${e?.name}: ${e?.message}`
      }
      expect(out).not.toStartWith("THROWN")
      expect(out).toContain("src/bad.ts")
      expect(out).toContain("TS2322")
      const skipped = out.split("\n").filter((l) => l.startsWith("skipped"))
      // (On a machine with rustup, its own proxy runs first and falls back to the script, adding two `info:` lines.)
      expect(skipped).toHaveLength(1)
      expect(skipped[0]).toStartWith(
        "skipped 2 files: The rust language server cannot run: rust-analyzer exited at once (code 1) without " +
          "answering initialize: ",
      )
      expect(skipped[0]).toContain("error: Unknown binary 'rust-analyzer' in official toolchain")
      expect(skipped[0]).toEndWith(
        "'stable-x86_64-unknown-linux-gnu'. Calling again will not help; to fix: rustup component add rust-analyzer " +
          '(rust-analyzer on PATH), or name a working command in opencode.json ("lsp": { "rust": { "command": ' +
          '["/path/to/server"] } }), or turn it off ("lsp": { "rust": { "disabled": true } }).',
      )
      expect(skipped[0]).not.toContain("anyhow")
      expect(skipped[0].length).toBeLessThan(700)
      expect(out).toContain("native/src/lib.rs, native/src/more.rs")

      // One file of that server: the same short error (no backtrace, no "call again"), never a clean result.
      const error = await service.diagnostics({ file: "native/src/lib.rs" }).catch((e) => e)
      expect(LspClient.StartFailed.is(error)).toBe(true)
      expect(error.data.exited).toBe(true)
      expect(error.message).toBe(skipped[0].replace("skipped 2 files: ", ""))
      expect(error.message).not.toContain("anyhow")
      expect(error.message).not.toContain("call again")
    } finally {
      process.env.PATH = saved
      await service.stop()
    }
  }, 120_000)

  test("stderr cut to what can be acted on: first lines up to a blank line or a stack trace, 300 characters at most", () => {
    expect(LspClient.brief("error: Unknown binary 'x'.\n\nStack backtrace:\n   0: anyhow::kind::Adhoc::new\n")).toBe(
      "error: Unknown binary 'x'.",
    )
    expect(LspClient.brief("\n  boom\nline two\n    at main (a.js:1:1)\n    at b (b.js:2:2)\n")).toBe("boom line two")
    expect(LspClient.brief("Traceback (most recent call last):\n  File x\nValueError: bad\n", "last")).toBe(
      "File x ValueError: bad",
    )
    expect(LspClient.brief("x".repeat(1000))).toHaveLength(300)
  })
})
