import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import type { Host } from "../../host"
import { LspClient } from "../../lsp/client"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import { Logger } from "../../util/log"
import OpencodeBuiltins from "../../../plugin/index"
import { pluginInput } from "../../../plugin/test/input"
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

// Red team CE-4: a server that starts, then dies on a file (it cannot parse it). The lsp tool said
// "status: timeout — … (the server may still be loading the project); call diagnostics again" for diagnostics and a
// bare "Error: crashy2: connection closed" for hover, and every call restarted the server, which crashed again.
const DIES = path.join(import.meta.dir, "fixtures/dies-on-open.mjs")

/** A project whose opencode.json names the crashing server for `.crash2` files; `marker`: only files holding it crash it. */
async function crashing(files: Record<string, string>, marker = "") {
  const proj = await project({ ...files })
  const starts = path.join(proj.dir, ".starts")
  const lsp = { crashy2: { command: ["node", DIES, marker, starts], extensions: [".crash2"] } }
  fs.writeFileSync(path.join(proj.dir, "opencode.json"), JSON.stringify({ lsp }))
  const count = () => (fs.existsSync(starts) ? fs.readFileSync(starts, "utf8").split("\n").filter(Boolean).length : 0)
  return { proj, lsp, count }
}

async function run(call: () => Promise<unknown>) {
  try {
    return String(await call())
  } catch (e: any) {
    return `THROWN ${e?.name}: ${e?.message}`
  }
}

describe("a server that crashes on a file (red team CE-4)", () => {
  test("through the plugin: diagnostics and hover name the exit code and the server's stderr, not a timeout", async () => {
    const { proj } = await crashing({ "b.crash2": "x\n" })
    await using _ = proj
    const hooks: any = await OpencodeBuiltins(pluginInput(proj.dir).input)
    const call = (args: Record<string, unknown>) => run(() => hooks.tool.lsp.execute(args, toolContext(proj.dir)))
    const diagnostics = await call({ operation: "diagnostics", filePath: "b.crash2" })
    expect(diagnostics).toStartWith("THROWN LspServerExited: The crashy2 language server ended during diagnostics for")
    expect(diagnostics).toContain("crashy2 exited (code 2): panic: index out of range parsing b.crash2")
    expect(diagnostics).toContain("this is not an empty one")
    expect(diagnostics).not.toContain("may still be loading")
    const hover = await call({ operation: "hover", filePath: "b.crash2", line: 1, character: 1 })
    expect(hover).toStartWith("THROWN LspServerExited:")
    expect(hover).toContain("exited (code 2): panic: index out of range parsing b.crash2")
    await hooks.dispose?.()
  }, 60_000)

  test("a server crashing twice in a row on the same content is not started for it again; other files and a changed file still use it", async () => {
    const { proj, lsp, count } = await crashing({ "b.crash2": "CRASH-ME\n", "ok.crash2": "fine\n" }, "CRASH-ME")
    await using _ = proj
    await using service = Lsp.create({ directory: proj.dir, worktree: proj.dir, log: Logger.silent, config: lsp })
    const hover = (file: string) => run(() => service.hover({ file, line: 0, character: 0 }))
    const first = await hover("b.crash2")
    expect(first).toContain("exited (code 2): panic: index out of range parsing b.crash2")
    expect(first).toContain("Calling again starts it again; it may well crash again on the same file.")
    const second = await hover("b.crash2")
    expect(second).toContain(
      "It ended like this 2 times in a row on this file as it is now, so it is not started again",
    )
    expect(second).toContain('"lsp": { "crashy2": { "command"')
    expect(count()).toBe(2)
    // Given up: the same content does not start it again.
    const third = await hover("b.crash2")
    expect(third).toStartWith("THROWN LspServerExited:")
    expect(third).toContain("2 times in a row")
    expect(count()).toBe(2)
    // Another file still gets answers (the server is started for it).
    expect(await hover("ok.crash2")).not.toStartWith("THROWN")
    expect(count()).toBe(3)
    // The file changed: it is tried again (sent to the server running for ok.crash2, which it crashes).
    fs.writeFileSync(path.join(proj.dir, "b.crash2"), "CRASH-ME again\n")
    expect(await hover("b.crash2")).toContain("Calling again starts it again")
    expect(await hover("ok.crash2")).not.toStartWith("THROWN")
    expect(count()).toBe(4)
  }, 60_000)

  test("project diagnostics list a crashed file as not checked with the exit, and stop restarting a server that crashes on file after file", async () => {
    const { proj, lsp, count } = await crashing(
      { "a.crash2": "CRASH-ME\n", "b.crash2": "CRASH-ME\n", "c.crash2": "CRASH-ME\n", "d.crash2": "CRASH-ME\n" },
      "CRASH-ME",
    )
    await using _ = proj
    await using service = Lsp.create({ directory: proj.dir, worktree: proj.dir, log: Logger.silent, config: lsp })
    const report = await service.diagnostics({})
    const skipped = report.skipped.filter((s) => s.file.endsWith(".crash2"))
    expect(skipped).toHaveLength(4)
    expect(skipped[0].reason).toContain("exited (code 2): panic: index out of range parsing a.crash2")
    expect(skipped[1].reason).toContain("parsing b.crash2")
    for (const s of skipped.slice(2)) expect(s.reason).toStartWith("not checked: crashy2 ended (crashed) on 2 files")
    expect(count()).toBe(2)
    // A second run: a and b crash again (their second crash in a row: given up for them from now on), c and d wait.
    const again = (await service.diagnostics({})).skipped.filter((s) => s.file.endsWith(".crash2"))
    expect(again[1].reason).toContain("2 times in a row")
    expect(count()).toBe(4)
    // A third run: a and b are refused without a start; c and d get their turn (the refusals cost no restart).
    const third = (await service.diagnostics({})).skipped.filter((s) => s.file.endsWith(".crash2"))
    expect(third[0].reason).toContain("so it is not started again for it")
    expect(third[2].reason).toContain("exited (code 2): panic: index out of range parsing c.crash2")
    expect(count()).toBe(6)
  }, 60_000)
})
