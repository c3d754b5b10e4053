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

/** One option of a command line, as `util.parseArgs` takes it. */
export type OptionSpec = { type: "string" | "boolean"; short?: string; multiple?: boolean }
export type OptionSpecs = Record<string, OptionSpec>
/** The values `util.parseArgs` gives for `O`. */
export type OptionValues<O extends OptionSpecs> = Values<O>
type Values<O extends OptionSpecs> = {
  [K in keyof O]?: O[K]["type"] extends "string" ? (O[K]["multiple"] extends true ? string[] : string) : boolean
}

/**
 * What one command (or one subcommand) takes: its options and how many positional arguments, at least `min` and at
 * most `max` (default: none; `Infinity` for any number). The one rule every `opencode-builtins` command line follows:
 * an option the command does not take, or a positional argument past `max`, is bad usage (exit 2) and nothing is
 * done. Exported by each command module (`SPEC`) so a test compares each help text with what its parser accepts.
 */
export type CommandSpec<O extends OptionSpecs = OptionSpecs> = {
  options: O
  positionals?: { min?: number; max?: number; what?: string }
}

/** The `-h/--help` every command takes. */
const HELP = { help: { type: "boolean", short: "h" } } as const satisfies OptionSpecs

/** The `-C/--directory` of the commands that work on a project folder. */
export const DIRECTORY_OPTION = { directory: { type: "string", short: "C" } } as const satisfies OptionSpecs

/**
 * A parse error of `util.parseArgs` in words, naming the option and where to look; Node's own text suggests `--` for
 * what is almost always a typo and leaves a quote open.
 *
 * @example
 * parseError("capture", new Error("Unknown option '--bogus'. …")) // "unknown option --bogus; see capture --help"
 */
export function parseError(name: string, error: unknown): string {
  const message = errorMessage(error)
  const code = (error as { code?: string } | undefined)?.code
  const option = /'(?:-\w, )?(--?[^\s',]+)/.exec(message)?.[1]
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) return `unknown option ${option}; see ${name} --help`
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option) {
    if (/argument missing/.test(message)) return `${option} needs a value`
    if (/ambiguous/.test(message)) return `${option} needs a value (one starting with '-' is written ${option}=-…)`
    if (/does not take an argument/.test(message)) return `${option} takes no value`
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") return `unexpected argument; see ${name} --help`
  return message
}

/**
 * A whole-number option's value, or the message for a bad one (one form for every command).
 *
 * @example
 * wholeNumber("--limit", "abc", { min: 1 }) // { error: "--limit must be a whole number ≥ 1, got 'abc'" }
 * wholeNumber("--limit", "5", { min: 1, max: 100 }) // { value: 5 }
 */
export function wholeNumber(
  option: string,
  text: string,
  range: { min: number; max?: number },
): { value: number } | { error: string } {
  const value = /^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : NaN
  if (Number.isSafeInteger(value) && value >= range.min && (range.max === undefined || value <= range.max))
    return { value }
  const bounds = range.max === undefined ? `≥ ${range.min}` : `from ${range.min} to ${range.max}`
  return { error: `${option} must be a whole number ${bounds}, got '${text}'` }
}

/**
 * The line with a value that starts with a dash and a digit (`--limit -1`) joined to its option (`--limit=-1`):
 * `util.parseArgs` would call it ambiguous, and no option starts with a digit, so the value reaches the command's
 * own check and its message (`--limit must be a whole number ≥ 1, got '-1'`).
 */
function joinNegativeValues(argv: string[], options: OptionSpecs): string[] {
  const takesValue = new Set<string>()
  for (const [long, spec] of Object.entries(options))
    if (spec.type === "string") {
      takesValue.add(`--${long}`)
      if (spec.short) takesValue.add(`-${spec.short}`)
    }
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--") return [...out, ...argv.slice(i)]
    if (takesValue.has(argv[i]) && /^-[\d.]/.test(argv[i + 1] ?? "")) out.push(`${argv[i]}=${argv[++i]}`)
    else out.push(argv[i])
  }
  return out
}

/** A parsed command line: its options and positional arguments. */
export type Parsed<O extends OptionSpecs> = { values: Values<O>; positionals: string[] }

/**
 * Parses a command's line by its `spec`, with `-h/--help` added. Help is answered here (usage on stdout, exit 0); an
 * unknown option, a missing value or a wrong number of positional arguments prints the problem and the usage on
 * stderr and returns `Exit.usage`.
 *
 * @example
 * const parsed = parseCommand("audit", argv, io, { options: { json: { type: "boolean" } }, positionals: { min: 1, max: 1 } }, USAGE)
 * if (typeof parsed === "number") return parsed
 */
export function parseCommand<O extends OptionSpecs>(
  name: string,
  argv: string[],
  io: CliIO,
  spec: CommandSpec<O>,
  usage: string,
): Parsed<O> | number {
  let args
  try {
    const options = { ...spec.options, ...HELP }
    args = parseArgs({ args: joinNegativeValues(argv, options), options, allowPositionals: true, strict: true })
  } catch (error) {
    return usageError(io, name, parseError(name, error), usage)
  }
  const values = args.values as Values<O> & { help?: boolean }
  if (values.help) return (io.out(usage), Exit.ok)
  const problem = positionalProblem(args.positionals, spec)
  if (problem) return usageError(io, name, problem, usage)
  delete values.help
  return { values, positionals: args.positionals }
}

function positionalProblem(positionals: string[], spec: CommandSpec): string | undefined {
  const { min = 0, max = 0, what = "argument" } = spec.positionals ?? {}
  const count = (n: number) => `${n === 1 ? "one" : n} ${what}${n === 1 ? "" : "s"}`
  const exactly = min === max ? `takes exactly ${count(min)}` : undefined
  if (positionals.length > max) {
    const stray = `unexpected argument '${positionals[max]}'`
    if (max === 0) return `takes no arguments (${stray})`
    return `${exactly ?? `takes at most ${count(max)}`} (${stray})`
  }
  if (positionals.length < min) return exactly ?? `takes at least ${count(min)}`
  return undefined
}

/** Writes `<name>: <message>` and the usage to stderr; returns `Exit.usage`. */
export function usageError(io: CliIO, name: string, message: string, usage: string): number {
  io.err(`${name}: ${message}\n\n${usage}`)
  return Exit.usage
}

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never

/** A parsed `<command> [arguments] [options]` line: its options, command, other positionals and project folder. */
export type Subcommand<O extends OptionSpecs, N extends string = string> = {
  values: Values<O>
  command: N
  rest: string[]
  /** `--directory`/`-C` resolved against the working directory (default: the working directory). */
  directory: string
}

/**
 * Parses a feature command's `<command> [arguments] [options]`: `commands` says what each subcommand takes (an option
 * of another subcommand is as unknown as a typo), `common` the options every one takes (with `DIRECTORY_OPTION`,
 * the folder is checked and resolved). Help, a missing or unknown command, an unknown option and stray arguments are
 * answered here (usage on stdout for help, on stderr with exit 2 otherwise) and the exit code returned instead.
 *
 * @example
 * const parsed = parseSubcommand("capture", argv, io, { clear: { options: { yes: { type: "boolean" } } } }, USAGE)
 * if (typeof parsed === "number") return parsed
 * parsed.command // "clear"
 */
export function parseSubcommand<C extends Record<string, CommandSpec>, K extends OptionSpecs = {}>(
  name: string,
  argv: string[],
  io: CliIO,
  commands: C,
  usage: string,
  common: K = {} as K,
): Subcommand<UnionToIntersection<C[keyof C]["options"]> & K, Extract<keyof C, string>> | number {
  const all: OptionSpecs = { ...common, ...HELP }
  for (const spec of Object.values(commands)) Object.assign(all, spec.options)
  let args
  try {
    args = parseArgs({
      args: joinNegativeValues(argv, all),
      options: all,
      allowPositionals: true,
      strict: true,
      tokens: true,
    })
  } catch (error) {
    return usageError(io, name, parseError(name, error), usage)
  }
  const values = args.values as Record<string, unknown>
  const [command, ...rest] = args.positionals
  if (values.help) return (io.out(usage), Exit.ok)
  if (!command) return usageError(io, name, "give a command", usage)
  const spec = Object.hasOwn(commands, command) ? commands[command] : undefined
  if (!spec) return usageError(io, name, `unknown command '${command}'`, usage)
  // An option another subcommand takes is named as this one's unknown option, in the spelling used.
  for (const token of args.tokens ?? [])
    if (token.kind === "option" && !(token.name in spec.options) && !(token.name in common) && token.name !== "help")
      return usageError(io, name, `unknown option ${token.rawName} for ${command}; see ${name} --help`, usage)
  const problem = positionalProblem(rest, spec)
  if (problem) return usageError(io, name, `${command} ${problem}`, usage)
  let directory = io.cwd
  if ("directory" in common) {
    directory = path.resolve(io.cwd, (values.directory as string | undefined) ?? ".")
    const bad = directoryProblem(directory)
    if (bad) {
      io.err(`${name}: --directory: ${bad}\n`)
      return Exit.usage
    }
  }
  delete values.help
  return {
    values: values as Values<UnionToIntersection<C[keyof C]["options"]> & K>,
    command: command as Extract<keyof C, string>,
    rest,
    directory,
  }
}
