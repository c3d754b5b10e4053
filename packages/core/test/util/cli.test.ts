import { describe, expect, test } from "bun:test"
import fs from "fs"
import { run as audit } from "../../audit/cli"
import { run as capture } from "../../capture/cli"
import { run as discover } from "../../discovery/cli"
import { run as init } from "../../init/cli"
import { run as learnings } from "../../learning/cli"
import { run as mcp } from "../../mcp/cli"
import { run as recovery } from "../../recovery/cli"
import { run as resources } from "../../resource/cli"
import { run as security } from "../../security/cli"
import { CLOSED_OUTPUT, directoryProblem, memoryIO, processIO } from "../../util/cli"
import { notUtf8Project, tmpdir } from "../fixture"

const POLICY = JSON.stringify({
  version: "1.0",
  roles: [{ name: "viewer", level: 1 }],
  rules: [{ pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
})

/** Every command that works on a project folder, as `opencode-builtins <command> …` runs it in the current folder. */
const COMMANDS: [string, (argv: string[], io: ReturnType<typeof memoryIO>) => Promise<number>, string[]][] = [
  ["security check", security, ["check", ".env", "--op", "read"]],
  ["security validate", security, ["validate"]],
  ["discover", discover, ["hello"]],
  ["discover --list", discover, ["--list"]],
  ["resources lint", resources, ["lint"]],
  ["resources query", resources, ["query", "release"]],
  ["init", init, []],
  ["capture list", capture, ["list"]],
  ["learnings list", learnings, ["list"]],
  ["recovery list", recovery, ["list"]],
  ["mcp", mcp, []],
  ["audit .", audit, ["."]],
]

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

  // AQ1: Bun reads the folder's path with U+FFFD for the byte 0xE9 (a path naming no folder). `discover` made that path
  // (a twin beside the project) for its cache; then `security check .env --op read` answered ALLOWED (no policy) and
  // `security validate` "nothing is enforced": the layer failed open. Every command now refuses the folder, naming why.
  test("in a folder whose path is not UTF-8 every command exits 2 saying so, and makes nothing beside it", async () => {
    await using dir = await tmpdir()
    const project = notUtf8Project(dir.path, { ".opencode-security.json": POLICY, ".env": "S=1\n", ".git/HEAD": "x\n" })
    for (const [name, run, argv] of COMMANDS) {
      const io = memoryIO(project.path)
      const code = await run(argv, io)
      expect({ name, code, says: io.stderr.includes("is not valid UTF-8 text") }).toEqual({ name, code: 2, says: true })
      expect(io.stderr).toContain("Rename $'caf\\xe9'")
      expect(io.stdout).not.toContain("ALLOWED")
      expect(io.stdout).not.toContain("nothing is enforced")
    }
    expect(project.entries()).toEqual([Buffer.from("caf\xe9", "latin1")])
  }, 60_000)

  test("in such a folder with its U+FFFD twin beside it (an older discover made it), no command reads the twin", async () => {
    await using dir = await tmpdir()
    const project = notUtf8Project(dir.path, { ".opencode-security.json": POLICY, ".env": "S=1\n", ".git/HEAD": "x\n" })
    project.twin()
    for (const argv of [["check", ".env", "--op", "read"], ["validate"]]) {
      const io = memoryIO(project.path)
      expect(await security(argv, io)).toBe(2)
      expect(io.stderr).toContain("is not valid UTF-8 text")
      expect(io.stdout).toBe("")
    }
    expect(fs.readdirSync(project.path)).toEqual([])
  })

  test("directoryProblem: a path that is not UTF-8, reached directly, beside its twin or through a link, is named", async () => {
    await using dir = await tmpdir()
    const project = notUtf8Project(dir.path)
    const direct = directoryProblem(project.path)
    expect(direct).toStartWith(`${project.path}: its path is not valid UTF-8 text`)
    expect(direct).toContain(`Rename $'caf\\xe9' in ${dir.path} to a UTF-8 name`)
    project.twin()
    expect(directoryProblem(project.path)).toBe(direct)
    // A link with a UTF-8 name: the layer reads the real path (realpath), which is the U+FFFD reading again.
    fs.symlinkSync(project.bytes, dir.file("link"))
    expect(directoryProblem(dir.file("link"))).toStartWith(
      `${dir.file("link")}: its real path ${project.path} (it is reached through a link) is not valid UTF-8`,
    )
    expect(await security(["check", "link/.env", "--op", "read", "--dir", "link"], memoryIO(dir.path))).toBe(2)
    // A name really spelled with U+FFFD (valid UTF-8) is an ordinary folder.
    fs.mkdirSync(dir.file("odd\ufffd"))
    expect(directoryProblem(dir.file("odd\ufffd"))).toBeUndefined()
  })
})
