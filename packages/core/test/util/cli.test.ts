import { describe, expect, test } from "bun:test"
import { run as capture } from "../../capture/cli"
import { run as learnings } from "../../learning/cli"
import { run as recovery } from "../../recovery/cli"
import { CLOSED_OUTPUT, directoryProblem, memoryIO, processIO } from "../../util/cli"
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

  test("processIO: a closed stdout (EPIPE, thrown or reported later) ends quietly with 141; other errors still throw", () => {
    const epipe = () => Object.assign(new Error("EPIPE: broken pipe, write"), { code: "EPIPE" })
    const listeners: Record<string, (error: Error) => void> = {}
    const exits: number[] = []
    const written: string[] = []
    let mode: "ok" | "throw" | "other" = "ok"
    const sink = (name: string) => ({
      write(text: string) {
        if (mode === "throw") throw epipe()
        if (mode === "other" && name === "stdout") throw new Error("EIO")
        written.push(`${name}:${text}`)
      },
      on(_event: "error", listener: (error: Error) => void) {
        listeners[name] = listener
      },
    })
    const io = processIO("/", {}, { stdout: sink("stdout"), stderr: sink("stderr"), exit: (c) => exits.push(c) })
    io.out("a")
    io.err("b")
    expect(written).toEqual(["stdout:a", "stderr:b"])
    mode = "throw"
    io.out("lost")
    io.err("lost")
    expect(exits).toEqual([CLOSED_OUTPUT])
    listeners.stdout(epipe())
    listeners.stderr(epipe())
    expect(exits).toEqual([CLOSED_OUTPUT, CLOSED_OUTPUT])
    mode = "other"
    expect(() => io.out("x")).toThrow("EIO")
    expect(CLOSED_OUTPUT).toBe(141)
  })

  test("processIO writes no control sequence to the terminal: \\uXXXX instead, JSON still parses to the same value", () => {
    const written: string[] = []
    const sink = { write: (text: string) => written.push(text), on() {} }
    const io = processIO("/", {}, { stdout: sink, stderr: sink, exit() {} })
    io.out("out\x1b]52;c;aGk=\x07 \x9b2J\r\n")
    io.err("err\x1b[2K\u202e\n")
    const value = { output: "a\x1b]0;T\x07\x7f\x85\u2066" }
    io.out(JSON.stringify(value, null, 2))
    expect(written.slice(0, 2)).toEqual(["out\\u001b]52;c;aGk=\\u0007 \\u009b2J\r\n", "err\\u001b[2K\\u202e\n"])
    expect(written.join("")).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/)
    expect(JSON.parse(written[2])).toEqual(value)
  })
})
