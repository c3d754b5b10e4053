import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import * as audit from "../../audit/cli"
import * as capture from "../../capture/cli"
import * as discover from "../../discovery/cli"
import * as init from "../../init/cli"
import * as learnings from "../../learning/cli"
import * as mcp from "../../mcp/cli"
import * as recovery from "../../recovery/cli"
import * as resources from "../../resource/cli"
import * as security from "../../security/cli"
import {
  CLOSED_OUTPUT,
  directoryProblem,
  memoryIO,
  parseCommand,
  parseSubcommand,
  processIO,
  wholeNumber,
  type CommandSpec,
} from "../../util/cli"
import { notUtf8Project, tmpdir } from "../fixture"

const POLICY = JSON.stringify({
  version: "1.0",
  roles: [{ name: "viewer", level: 1 }],
  rules: [{ pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
})

/** Every command that works on a project folder, as `opencode-builtins <command> …` runs it in the current folder. */
const FOLDER_COMMANDS: [string, (argv: string[], io: ReturnType<typeof memoryIO>) => Promise<number>, string[]][] = [
  ["security check", security.run, ["check", ".env", "--op", "read"]],
  ["security validate", security.run, ["validate"]],
  ["discover", discover.run, ["hello"]],
  ["discover --list", discover.run, ["--list"]],
  ["resources lint", resources.run, ["lint"]],
  ["resources query", resources.run, ["query", "release"]],
  ["init", init.run, []],
  ["capture list", capture.run, ["list"]],
  ["learnings list", learnings.run, ["list"]],
  ["recovery list", recovery.run, ["list"]],
  ["mcp", mcp.run, []],
  ["audit .", audit.run, ["."]],
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
      ["capture", capture.run],
      ["learnings", learnings.run],
      ["recovery", recovery.run],
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
    expect(await capture.run(["list", "-C", dir.path], memoryIO(dir.path))).toBe(0)
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
    for (const [name, run, argv] of FOLDER_COMMANDS) {
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
      expect(await security.run(argv, io)).toBe(2)
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
    expect(await security.run(["check", "link/.env", "--op", "read", "--dir", "link"], memoryIO(dir.path))).toBe(2)
    // A name really spelled with U+FFFD (valid UTF-8) is an ordinary folder.
    fs.mkdirSync(dir.file("odd\ufffd"))
    expect(directoryProblem(dir.file("odd\ufffd"))).toBeUndefined()
  })
})

/** Every `opencode-builtins` command module, its spec and the doc that describes it for users. */
const COMMANDS = [
  ["resources", resources, "resources.md"],
  ["discover", discover, "discovery.md"],
  ["security", security, "security.md"],
  ["mcp", mcp, "integration.md"],
  ["init", init, "integration.md"],
  ["learnings", learnings, "integration.md"],
  ["capture", capture, "integration.md"],
  ["recovery", recovery, "session.md"],
  ["audit", audit, "audit.md"],
] as const

/** The options a module's parser takes, each with its short form: the subcommands' and the common ones. */
function optionsOf(spec: { options: CommandSpec["options"]; commands?: Record<string, CommandSpec> }) {
  const all = { ...spec.options }
  for (const command of Object.values(spec.commands ?? {})) Object.assign(all, command.options)
  return Object.entries(all).map(([long, o]) => ({ long: `--${long}`, short: o.short && `-${o.short}` }))
}

describe("one command-line rule for every command (parseCommand, parseSubcommand)", () => {
  const spec = {
    options: { limit: { type: "string" }, json: { type: "boolean" } },
    positionals: { max: 1, what: "directory" },
  } as const satisfies CommandSpec

  test("an unknown option is named in words with where to look, on stderr with the usage (exit 2)", () => {
    for (const [argv, message] of [
      [["--bogus"], "tool: unknown option --bogus; see tool --help\n\nUSAGE"],
      [["-Z"], "tool: unknown option -Z; see tool --help\n\nUSAGE"],
      [["--limit"], "tool: --limit needs a value\n\nUSAGE"],
      [["--json=yes"], "tool: --json takes no value\n\nUSAGE"],
      [["a", "b"], "tool: takes at most one directory (unexpected argument 'b')\n\nUSAGE"],
    ] as const) {
      const io = memoryIO("/")
      expect([argv, parseCommand("tool", [...argv], io, spec, "USAGE")]).toEqual([argv, 2])
      expect(io.stdout).toBe("")
      expect(io.stderr).toBe(message)
      expect(io.stderr).not.toContain("'-- \"")
    }
    const help = memoryIO("/")
    expect(parseCommand("tool", ["x", "--help"], help, spec, "USAGE")).toBe(0)
    expect(help.stdout).toBe("USAGE")
  })

  test("a negative number is a value, checked by the command: one message form for every whole number", () => {
    const parsed = parseCommand("tool", ["--limit", "-1"], memoryIO("/"), spec, "USAGE")
    expect(parsed).toEqual({ values: { limit: "-1" }, positionals: [] })
    for (const [text, error] of [
      ["abc", "--limit must be a whole number ≥ 1, got 'abc'"],
      ["-1", "--limit must be a whole number ≥ 1, got '-1'"],
      ["1.5", "--limit must be a whole number ≥ 1, got '1.5'"],
      ["", "--limit must be a whole number ≥ 1, got ''"],
    ])
      expect(wholeNumber("--limit", text, { min: 1 })).toEqual({ error })
    expect(wholeNumber("--limit", "51", { min: 1, max: 50 })).toEqual({
      error: "--limit must be a whole number from 1 to 50, got '51'",
    })
    expect(wholeNumber("--limit", "7", { min: 1 })).toEqual({ value: 7 })
  })

  test("parseSubcommand: another subcommand's option, a stray argument or no command is bad usage (exit 2)", () => {
    const commands = {
      list: { options: { json: { type: "boolean" } } },
      clear: { options: { yes: { type: "boolean" } } },
      show: { options: {}, positionals: { min: 1, max: 1, what: "id" } },
    } as const
    for (const [argv, message] of [
      [["clear", "--yes", "call_1"], "tool: clear takes no arguments (unexpected argument 'call_1')"],
      // Every positional problem reads as a sentence about the command ("delete takes exactly one id"), never
      // "delete give exactly one id" (red team CD-7).
      [["show"], "tool: show takes exactly one id"],
      [["show", "a", "b"], "tool: show takes exactly one id (unexpected argument 'b')"],
      [["list", "--yes"], "tool: unknown option --yes for list; see tool --help"],
      [["frob"], "tool: unknown command 'frob'"],
      [[], "tool: give a command"],
    ] as const) {
      const io = memoryIO("/")
      expect([argv, parseSubcommand("tool", [...argv], io, commands, "USAGE")]).toEqual([argv, 2])
      expect(io.stderr).toBe(`${message}\n\nUSAGE`)
      expect(io.stdout).toBe("")
    }
    expect(parseSubcommand("tool", ["clear", "--yes"], memoryIO("/"), commands, "USAGE")).toMatchObject({
      command: "clear",
      values: { yes: true },
      rest: [],
    })
  })

  test("every command: a stray argument or an unknown option is bad usage (exit 2), usage on stderr", async () => {
    await using dir = await tmpdir({ ".git/HEAD": "ref: refs/heads/main\n" })
    for (const argv of [
      ["security", "schema", "--bogus"],
      ["security", "schema", "extra"],
      ["security", "validate", ".", "--op", "read"],
      ["security", "validate", "a", "b"],
      ["security", "check", "a", "b", "--op", "read"],
      ["security"],
      ["learnings", "list", "extra"],
      ["learnings", "list", "--json", "extra"],
      ["learnings", "clear", "--yes", "lrn_a"],
      ["learnings", "delete", "a", "b"],
      ["learnings", "delete", "a", "--kind", "decision"],
      ["capture", "clear", "--yes", "call_a"],
      ["capture", "clear", "--yes", "--failed"],
      ["capture", "show", "a", "b"],
      ["capture", "list", "extra"],
      ["recovery", "list", "extra"],
      ["recovery", "list", "--server", "http://x"],
      ["resources"],
      ["resources", "lint", "a", "b"],
      ["resources", "lint", "--type", "task"],
      ["resources", "query", "--bogus"],
      ["discover", "--bogus"],
      ["mcp", "extra"],
      ["mcp", "--bogus"],
      ["init", "a", "b"],
      ["audit", "a", "b"],
      ["audit", "--bogus", "."],
    ]) {
      const [name, ...rest] = argv
      const module = COMMANDS.find(([n]) => n === name)![1]
      const io = memoryIO(dir.path)
      expect([argv, await module.run(rest, io)]).toEqual([argv, 2])
      expect(io.stdout).toBe("")
      expect(io.stderr).toContain(`${name}: `)
      expect(io.stderr).toContain("usage:")
      expect(io.stderr).not.toContain("To specify a positional argument")
    }
  })

  test("each command's --help lists every option its parser takes, and names no option it does not take", async () => {
    // Options of other programs (opencode) or commands (init --mcp) the help text mentions.
    const foreign: Record<string, string[]> = { recovery: ["--session", "--port"], mcp: ["--mcp"] }
    for (const [name, module] of COMMANDS) {
      const io = memoryIO("/")
      expect([name, await module.run(["--help"], io)]).toEqual([name, 0])
      const options = optionsOf(module.SPEC)
      for (const o of options) {
        expect([name, io.stdout.includes(o.long)]).toEqual([name, true])
        if (o.short) expect([name, o.short, new RegExp(`${o.short}\\b`).test(io.stdout)]).toEqual([name, o.short, true])
      }
      const named = new Set(io.stdout.match(/(?<![\w-])--[a-z][a-z-]*/g) ?? [])
      const known = new Set([...options.map((o) => o.long), "--help", ...(foreign[name] ?? [])])
      expect([name, [...named].filter((o) => !known.has(o))]).toEqual([name, []])
    }
  })

  test("each command's options are in its user doc and in the top-level help", async () => {
    const { main } = await import("../../../plugin/cli")
    const top = memoryIO("/")
    expect(await main(["--help"], top)).toBe(0)
    const docs = path.join(import.meta.dir, "../../../../docs")
    for (const [name, module, doc] of COMMANDS) {
      const text = fs.readFileSync(path.join(docs, doc), "utf8")
      // The top-level help's entry for the command: from its line to the next command's.
      const entry = top.stdout.split(/\n  (?=\w)/).find((e) => e.startsWith(`${name} `)) ?? ""
      for (const o of optionsOf(module.SPEC)) {
        expect([name, doc, o.long, text.includes(o.long)]).toEqual([name, doc, o.long, true])
        expect([name, "top-level help", o.long, entry.includes(o.long)]).toEqual([name, "top-level help", o.long, true])
      }
      if ("commands" in module.SPEC)
        for (const sub of Object.keys(module.SPEC.commands))
          expect([name, sub, entry.includes(`${name} ${sub}`) || entry.includes(sub)]).toEqual([name, sub, true])
    }
  })
})
