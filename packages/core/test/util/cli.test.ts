import { describe, expect, test } from "bun:test"
import { run as capture } from "../../capture/cli"
import { run as learnings } from "../../learning/cli"
import { run as recovery } from "../../recovery/cli"
import { directoryProblem, memoryIO } from "../../util/cli"
import { tmpdir } from "../fixture"

describe("command-line folders", () => {
  test("directoryProblem: a folder is fine, a file or a missing path is named", async () => {
    await using dir = await tmpdir({ "a-file": "x" })
    expect(directoryProblem(dir.path)).toBeUndefined()
    expect(directoryProblem(dir.file("a-file"))).toBe(`${dir.file("a-file")} is not a directory (it is a file)`)
    expect(directoryProblem(dir.file("missing"))).toBe(`${dir.file("missing")} does not exist`)
    expect(directoryProblem(dir.file("a-file/below"))).toBe(`${dir.file("a-file/below")} does not exist`)
  })

  test("-C/--directory of capture, learnings and recovery: a file or missing folder is bad usage (exit 2)", async () => {
    await using dir = await tmpdir({ "a-file": "x" })
    for (const [name, run] of [
      ["capture", capture],
      ["learnings", learnings],
      ["recovery", recovery],
    ] as const) {
      for (const [target, message] of [
        [dir.file("a-file"), "is not a directory (it is a file)"],
        [dir.file("missing"), "does not exist"],
      ]) {
        const io = memoryIO(dir.path)
        expect(await run(["list", "-C", target], io)).toBe(2)
        expect(io.stdout).toBe("")
        expect(io.stderr).toBe(`${name}: --directory: ${target} ${message}\n`)
      }
    }
    expect(await capture(["list", "-C", dir.path], memoryIO(dir.path))).toBe(0)
  })
})
