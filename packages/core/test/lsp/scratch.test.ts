// Language servers leave temporary files in the shared temporary folder: typescript-language-server a folder of
// tscancellation pipes at every start (89 of them were in /tmp after one run of this suite), pyright its folder when
// it is killed. Each server started by the `lsp` tool gets a temporary folder of its own, removed when it ends.
// Real typescript-language-server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { LspClient } from "../../lsp/client"
import { Lsp } from "../../lsp/service"
import { bunSpawnSync } from "../spawn-sync"
import { Logger } from "../../util/log"
import { project, THREE_FILES } from "./fixtures"

const saved = process.env.TMPDIR
// This file's own system temporary folder: what the servers leave in it is theirs alone.
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-test-lsp-scratch-")))
beforeAll(() => void (process.env.TMPDIR = base))
afterAll(() => {
  if (saved === undefined) delete process.env.TMPDIR
  else process.env.TMPDIR = saved
  fs.rmSync(base, { recursive: true, force: true })
})

describe("lsp: each server's temporary files", () => {
  test("go to a folder of its own while it runs, removed when it stops: nothing is left in the system's", async () => {
    await using proj = await project({ ...THREE_FILES, "src/bad.ts": "export const count: number = 'three'\n" })
    const lsp = Lsp.create({ directory: proj.dir, worktree: proj.dir, log: Logger.silent, config: true })
    const others = () => fs.readdirSync(base).filter((n) => n !== path.basename(proj.dir))
    try {
      const report = await lsp.diagnostics({ file: "src/bad.ts" })
      expect(report.status).toBe("ok")
      const running = others()
      expect(running).toHaveLength(1)
      expect(running[0]).toStartWith("opencode-builtins-lsp-")
      // The server did use it (typescript-language-server's folder of cancellation pipes).
      expect(fs.readdirSync(path.join(base, running[0])).length).toBeGreaterThan(0)
    } finally {
      await lsp.stop()
    }
    expect(others()).toEqual([])
  }, 90_000)

  test("folders left by a host that was killed are swept at the next start; others' and live hosts' are kept", async () => {
    await using scratch = await project({})
    const dir = scratch.dir
    const gone = bunSpawnSync(["true"]).pid
    const outside = path.join(dir, "outside")
    fs.mkdirSync(outside)
    for (const name of [`opencode-builtins-lsp-${gone}-aaaaaa`, `opencode-builtins-lsp-${process.pid}-bbbbbb`])
      fs.mkdirSync(path.join(dir, name, "8f3e"), { recursive: true })
    fs.mkdirSync(path.join(dir, "opencode-builtins-lsp-1-cccccc")) // pid 1 runs
    fs.symlinkSync(outside, path.join(dir, `opencode-builtins-lsp-${gone}-link`))
    fs.writeFileSync(path.join(dir, `opencode-builtins-lsp-${gone}-file`), "x")
    expect(LspClient.sweepScratch(dir)).toEqual([`opencode-builtins-lsp-${gone}-aaaaaa`])
    expect(fs.readdirSync(dir).sort()).toEqual(
      [
        "outside",
        `opencode-builtins-lsp-${process.pid}-bbbbbb`,
        "opencode-builtins-lsp-1-cccccc",
        `opencode-builtins-lsp-${gone}-link`,
        `opencode-builtins-lsp-${gone}-file`,
      ].sort(),
    )
  })
})
