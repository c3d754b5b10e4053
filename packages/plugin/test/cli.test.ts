import { describe, expect, test } from "bun:test"
import path from "path"
import { memoryIO } from "@opencode-builtins/core/util/cli"
import { main } from "../cli"
import { tmpdir } from "../../core/test/fixture"

describe("opencode-builtins", () => {
  test("usage without a command (exit 2), with --help (exit 0), unknown commands named (exit 2)", async () => {
    const none = memoryIO("/")
    expect(await main([], none)).toBe(2)
    expect(none.stdout).toContain("usage: opencode-builtins <command>")
    expect(await main(["--help"], memoryIO("/"))).toBe(0)
    const unknown = memoryIO("/")
    expect(await main(["frobnicate"], unknown)).toBe(2)
    expect(unknown.stderr).toContain("unknown command 'frobnicate'")
  })

  test("the installed launcher runs under Node.js and passes the exit code through", async () => {
    await using dir = await tmpdir({ ".opencode/task/a.md": "---\nreferences: [ghost]\n---\n" })
    const bin = path.resolve(import.meta.dir, "../bin/opencode-builtins.mjs")
    const proc = Bun.spawn(["node", bin, "resources", "lint", dir.path], { stdout: "pipe", stderr: "pipe" })
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    expect(out).toContain("dangling-reference")
    expect(code).toBe(1)
  })
})
