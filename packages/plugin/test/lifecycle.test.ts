import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import OpencodeBuiltins from "../index"
import { tmpdir } from "../../core/test/fixture"
import { toolContext } from "../../core/test/lsp/fixtures"
import { pluginInput as input } from "./input"

/** Processes whose working folder is `dir` (the language servers run there), read from /proc. */
function runningIn(dir: string): number[] {
  const found: number[] = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readlinkSync(path.join("/proc", entry, "cwd")) === dir) found.push(Number(entry))
    } catch {
      // a process that ended meanwhile, or one of another user
    }
  }
  return found
}

/** Waits (at most 10 s) until no process runs in `dir`; the ones still there then. */
async function gone(dir: string): Promise<number[]> {
  for (let i = 0; i < 100 && runningIn(dir).length > 0; i++) await Bun.sleep(100)
  return runningIn(dir)
}

// `opencode serve` disposes a project's instance (a configuration reload, a project closed) and tells plugins with
// `server.instance.disposed`; the plugin's language servers ran on, one set per instance, until OpenCode exited.
describe.skipIf(process.platform !== "linux")("the external plugin when OpenCode disposes an instance", () => {
  test("its language servers are stopped, and the event for another project leaves them alone", async () => {
    await using dir = await tmpdir({
      "src/lib.ts": "export function total(a: number, b: number) {\n  return a + b\n}\n",
      "tsconfig.json": '{ "compilerOptions": { "strict": true } }\n',
    })
    const hooks: any = await OpencodeBuiltins(input(dir.path).input)
    const args = { operation: "hover", filePath: "src/lib.ts", line: 1, character: 18 }
    const out = await hooks.tool.lsp.execute(args, toolContext(dir.path))
    expect(String(out)).toContain("total")
    expect(runningIn(dir.path).length).toBeGreaterThan(0)
    await hooks.event({ event: { type: "server.instance.disposed", properties: { directory: "/elsewhere" } } })
    expect(runningIn(dir.path).length).toBeGreaterThan(0)
    await hooks.event({ event: { type: "server.instance.disposed", properties: { directory: dir.path } } })
    // The server's group was killed; the kernel may take a moment to take the last of them down.
    expect(await gone(dir.path)).toEqual([])
  }, 60_000)
})
