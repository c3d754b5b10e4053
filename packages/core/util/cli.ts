import fs from "fs"
import path from "path"
import { parseArgs } from "util"
import { errorMessage } from "./error"
import { ProjectFolder } from "./folder"
import { Terminal } from "./terminal"

/**
 * The contract between the `opencode-builtins` command and each feature's command module: a module exports
 * `run(argv, io)` and resolves to the process exit code. Output goes through `io` so tests can capture it.
 *
 * @example
 * export async function run(argv: string[], io: CliIO) {
 *   io.out("hello\n")
 *   return 0
 * }
 */
export type CliIO = {
  cwd: string
  env: Record<string, string | undefined>
  out(text: string): void
  err(text: string): void
}

export type CliCommand = { run(argv: string[], io: CliIO): Promise<number> }

/** An io that collects output in memory (tests, embedding). */
export function memoryIO(cwd: string, env: Record<string, string | undefined> = {}) {
  const io = {
    cwd,
    env,
    stdout: "",
    stderr: "",
    out(text: string) {
      io.stdout += text
    },
    err(text: string) {
      io.stderr += text
    },
  }
  return io
}

/** Exit codes shared by all commands. */
export const Exit = { ok: 0, findings: 1, usage: 2 } as const

/** The exit code of a command whose reader went away (`… | head -1`): 128 + SIGPIPE, as a shell reports it. */
export const CLOSED_OUTPUT = 141

type Sink = {
  write(text: string): unknown
  on(event: "error", listener: (error: Error) => void): unknown
}

/**
 * The io of a real process. What it writes goes through `Terminal.shown`: a control character other than a line feed or a
 * tab (an escape sequence in stored tool output, a learning, a file name) is written visibly as `\uXXXX`, never to the
 * user's terminal as it is; JSON output parses to the same value (its strings hold such characters escaped already).
 * A closed standard output (EPIPE: the reader, such as `head`, has exited) ends the process
 * quietly with `CLOSED_OUTPUT`, as Unix tools do, whether the write throws or reports it later; a closed standard
 * error drops the text. Other write errors are thrown as before. (Output Bun still buffers when the command ends is
 * written after it, and Bun reports no error for that write: the command's own exit code then stands.)
 *
 * @example
 * const code = await main(process.argv.slice(2), processIO(process.cwd(), process.env))
 */
export function processIO(
  cwd: string,
  env: Record<string, string | undefined>,
  streams: { stdout: Sink; stderr: Sink; exit(code: number): void } = {
    stdout: process.stdout,
    stderr: process.stderr,
    exit: (code) => process.exit(code),
  },
): CliIO {
  const closed = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code === "EPIPE"
  const onStdout = (error: unknown) => {
    if (!closed(error)) throw error
    streams.exit(CLOSED_OUTPUT)
  }
  const onStderr = (error: unknown) => {
    if (!closed(error)) throw error
  }
  streams.stdout.on("error", onStdout)
  streams.stderr.on("error", onStderr)
  const writer = (sink: Sink, onError: (error: unknown) => void) => (text: string) => {
    try {
      sink.write(Terminal.shown(text))
    } catch (error) {
      onError(error)
    }
  }
  return { cwd, env, out: writer(streams.stdout, onStdout), err: writer(streams.stderr, onStderr) }
}

/**
 * The nearest folder at or above `dir` holding a `.git` entry (the worktree OpenCode would use), or undefined.
 *
 * @example
 * worktreeOf("/repo/packages/core") // "/repo"
 */
export function worktreeOf(dir: string): string | undefined {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, ".git"))) return d
    if (d === path.dirname(d)) return undefined
  }
}

/**
 * Why `dir` cannot be used as a command's folder ("… does not exist", "… is a file, not a directory", "… is not valid
 * UTF-8 text"), or undefined when it is a directory (`ProjectFolder.problem`). Commands answer a bad folder with this
 * message and `Exit.usage`, before reading or writing anything.
 *
 * @example
 * directoryProblem("/etc/hostname") // "/etc/hostname is not a directory (it is a file)"
 */
export function directoryProblem(dir: string): string | undefined {
  return ProjectFolder.problem(dir)
}

type OptionSpec = { type: "string" | "boolean"; short?: string }
type Values<O extends Record<string, OptionSpec>> = {
  [K in keyof O]?: O[K]["type"] extends "string" ? string : boolean
}

/** A parsed `<command> [arguments] [options]` line: its options, command, other positionals and project folder. */
export type Subcommand<O extends Record<string, OptionSpec>> = {
  values: Values<O>
  command: string
  rest: string[]
  /** `--directory`/`-C` resolved against the working directory (default: the working directory). */
  directory: string
}

/**
 * Parses a feature command's `<command> [arguments] [options]` with `-C/--directory` and `-h/--help` added. Help, a
 * missing command or an unknown option is answered here (usage on stdout for help, on stderr otherwise) and the exit
 * code returned instead.
 *
 * @example
 * const parsed = parseSubcommand("capture", argv, io, { json: { type: "boolean" } }, USAGE)
 * if (typeof parsed === "number") return parsed
 * parsed.command // "list"
 */
export function parseSubcommand<O extends Record<string, OptionSpec>>(
  name: string,
  argv: string[],
  io: CliIO,
  options: O,
  usage: string,
): Subcommand<O> | number {
  let args
  try {
    args = parseArgs({
      args: argv,
      options: {
        ...options,
        directory: { type: "string", short: "C" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
      strict: true,
    })
  } catch (error) {
    io.err(`${name}: ${errorMessage(error)}\n\n${usage}`)
    return Exit.usage
  }
  const values = args.values as Values<O> & { help?: boolean; directory?: string }
  const [command, ...rest] = args.positionals
  if (values.help || !command) {
    ;(values.help ? io.out : io.err)(usage)
    return values.help ? Exit.ok : Exit.usage
  }
  const directory = path.resolve(io.cwd, values.directory ?? ".")
  const problem = directoryProblem(directory)
  if (problem) {
    io.err(`${name}: --directory: ${problem}\n`)
    return Exit.usage
  }
  return { values, command, rest, directory }
}
