import { spawn } from "child_process"
import fs from "fs"
import path from "path"
import { LocalState } from "../learning/local"
import { DIRECTORY_OPTION, Exit, parseSubcommand, worktreeOf, type CliIO } from "../util/cli"
import { errorMessage } from "../util/error"
import { Terminal } from "../util/terminal"
import { RecoveryActions } from "./actions"
import { RecoveryDecide } from "./decide"
import { RecoveryHttp } from "./http"
import { RecoveryLease } from "./lease"
import { SessionRecovery } from "./schema"
import { RecoveryStore } from "./store"

const USAGE = `usage:
  opencode-builtins recovery list [--json] [-C dir]
      Sessions of this project that OpenCode was working on when it stopped (crash, kill -9, power loss).
      A session still owned by a live OpenCode process is not listed.
  opencode-builtins recovery resume <session-id> [--server url | --opencode bin] [--json] [-C dir]
      Close the tool calls the crash left running with an error result (never re-run), check the todo list,
      add a note for the model (what was interrupted, the working directory), and forget the heartbeat.
      Then continue with: opencode --session <session-id>   (or opencode run --session <session-id> "…")
  opencode-builtins recovery dismiss <session-id> [--server url | --opencode bin] [--json] [-C dir]
      Close the interrupted calls, archive the session and forget its heartbeat.
resume and dismiss talk to OpenCode's HTTP API: --server of a running \`opencode serve\` (or a TUI started with
--port), else a temporary \`opencode serve\` started in the session's directory with --opencode, $OPENCODE_BIN or
the opencode on PATH (OPENCODE_SERVER_PASSWORD is sent when set).
-C, --directory <dir>: the project folder (default: the current directory).
Heartbeats live in ${LocalState.DIR}/${SessionRecovery.FOLDER}/ under the project root.
`

const SESSION_ACTION = {
  options: { server: { type: "string" }, opencode: { type: "string" }, json: { type: "boolean" } },
  positionals: { min: 1, max: 1, what: "session id" },
} as const

/** What each subcommand takes (`parseSubcommand`); the help text lists the same (util/cli.test.ts). */
export const SPEC = {
  commands: { list: { options: { json: { type: "boolean" } } }, resume: SESSION_ACTION, dismiss: SESSION_ACTION },
  options: DIRECTORY_OPTION,
} as const

/**
 * `opencode-builtins recovery list|resume|dismiss`.
 *
 * @example
 * await run(["list", "--json"], io)
 */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseSubcommand("recovery", argv, io, SPEC.commands, USAGE, SPEC.options)
  if (typeof parsed === "number") return parsed
  const { values, command, rest, directory } = parsed
  const root = LocalState.root(directory, worktreeOf(directory))
  const folder = RecoveryStore.folder(root)
  if (command === "list") {
    const { beats, skipped } = RecoveryStore.read(folder)
    for (const s of skipped)
      io.err(`recovery: skipping heartbeat ${Terminal.line(s.file)}: ${Terminal.line(s.reason)}\n`)
    const found = RecoveryDecide.interrupted(beats, RecoveryLease.probe(), Date.now())
    if (values.json) {
      io.out(
        JSON.stringify(
          found.map((f) => ({ ...f.beat, reason: f.reason })),
          null,
          2,
        ) + "\n",
      )
      return Exit.ok
    }
    if (!found.length) return (io.out("No interrupted sessions in this project.\n"), Exit.ok)
    for (const f of found) {
      // A heartbeat's text is the agent's (a command, a title, a folder it named): one line each, controls escaped.
      io.out(`${Terminal.line(RecoveryDecide.line(f))}\n`)
      io.out(`    directory ${Terminal.line(f.beat.workdir)}\n`)
    }
    io.out(`\nopencode-builtins recovery resume <id>   or   opencode-builtins recovery dismiss <id>\n`)
    return Exit.ok
  }
  const sessionID = rest[0]
  if (values.server && values.opencode) return usage(io, "--server and --opencode exclude each other")
  let beat: SessionRecovery.Heartbeat
  try {
    // Checked before any server is reached or started: an unknown id or a live owner changes nothing.
    beat = RecoveryActions.load({ folder } as RecoveryActions.Context, sessionID)
  } catch (error) {
    io.err(`recovery: ${errorMessage(error)}\n`)
    return Exit.findings
  }
  // OpenCode is started, or pointed, only in the project whose local state holds the heartbeat (red team GH1: a
  // heartbeat naming another folder had OpenCode load that folder's plugins on the host).
  if (!within(root, beat.directory)) {
    io.err(
      `recovery: the heartbeat of ${Terminal.line(sessionID)} names ${Terminal.line(beat.directory)} as its folder, ` +
        `which is not the project ${Terminal.line(root)} whose local state holds it: OpenCode is neither started nor ` +
        `pointed there (remove the heartbeat, or run this in that project)\n`,
    )
    return Exit.findings
  }
  let server: { url: string; stop(): Promise<void> } | undefined
  try {
    server = values.server
      ? { url: values.server, stop: async () => {} }
      : await serve(values.opencode ?? io.env.OPENCODE_BIN ?? "opencode", beat.directory, io.env)
    const http = RecoveryHttp.client(server.url, beat.directory, io.env.OPENCODE_SERVER_PASSWORD)
    const context: RecoveryActions.Context = { folder, ...http }
    const result =
      command === "resume"
        ? await RecoveryActions.resume(context, sessionID)
        : await RecoveryActions.dismiss(context, sessionID)
    if (values.json) io.out(JSON.stringify(result, null, 2) + "\n")
    else {
      const calls = result.closed.map((c) =>
        Terminal.line(c.title ? `${c.tool} (${RecoveryDecide.clip(c.title, 60)})` : c.tool),
      )
      io.out(
        `${command === "resume" ? "Resumed" : "Dismissed (archived)"} ${sessionID}: ` +
          `${calls.length ? `closed ${calls.join(", ")} with an error result, not re-run` : "no call was left running"}; ` +
          `todos ${result.todos}.\n`,
      )
      if (command === "resume") io.out(continuation(result, sessionID))
    }
    return Exit.ok
  } catch (error) {
    // Final: the session was deleted, its heartbeat is gone. Nothing is left to dismiss; nothing can be resumed.
    if (SessionRecovery.Deleted.is(error)) {
      io.err(`recovery: ${errorMessage(error)}\n`)
      return command === "dismiss" ? Exit.ok : Exit.findings
    }
    io.err(`recovery: ${command} ${sessionID} failed: ${errorMessage(error)} (the heartbeat is kept; retry is safe)\n`)
    return Exit.findings
  } finally {
    await server?.stop()
  }
}

/**
 * The line the user pastes to continue a resumed session: `cd` to the session's project folder, where OpenCode keeps
 * it (`opencode run --session` started in a subfolder, the last command's working directory, ran the turns and never
 * exited); the folder the interrupted command ran in is named on a line of its own. Both come from the heartbeat, the
 * working directory from the model's `workdir` argument (a folder named `$(sh .x)` is one `mkdir` away), so the folder
 * is a shell word quoted for a POSIX shell, never a JSON string (`$(…)`, backquotes and `\` stay live in `"…"`), and
 * a folder whose name holds a control character or line break is not put in a command at all: the command is given
 * alone and the folder shown escaped.
 *
 * @example
 * continuation({ workdir: "/p/$(sh .x)", directory: "/p" }, "ses_1")
 * // "The interrupted command ran in /p/$(sh .x)\nContinue with:\n  cd /p && opencode --session ses_1\n"
 */
export function continuation(result: { workdir: string; directory: string }, sessionID: string): string {
  const session = Terminal.shellWord(sessionID) ?? "<session-id>"
  const cd = Terminal.shellWord(result.directory)
  const notes = [
    ...(result.workdir && result.workdir !== result.directory
      ? [`The interrupted command ran in ${Terminal.line(result.workdir)}`]
      : []),
    ...(cd === undefined
      ? [`The session's folder name holds control characters (shown escaped): ${Terminal.line(result.directory)}`]
      : []),
  ]
  return `${notes.map((n) => n + "\n").join("")}Continue with:\n  ${cd ? `cd ${cd} && ` : ""}opencode --session ${session}\n`
}

/**
 * Whether `folder` is `root` or inside it, by real path (a folder that does not exist, by its absolute path).
 *
 * @example
 * within("/repo", "/repo/src") // true
 * within("/repo", "/tmp/x") // false
 */
export function within(root: string, folder: string): boolean {
  if (!path.isAbsolute(folder)) return false
  const real = (p: string) => {
    try {
      return fs.realpathSync(p)
    } catch {
      return path.resolve(p)
    }
  }
  const relative = path.relative(real(root), real(folder))
  return relative === "" || (relative !== ".." && !relative.startsWith(".." + path.sep) && !path.isAbsolute(relative))
}

function usage(io: CliIO, message: string) {
  io.err(`recovery: ${message}\n\n${USAGE}`)
  return Exit.usage
}

/**
 * A temporary `opencode serve` in `directory` on a free local port, stopped by `stop()`. It runs in a process group
 * of its own, and `stop()` ends the whole group and waits until it is gone: the `opencode` on PATH may be a launcher
 * that runs the server as its child (npm's node launcher for opencode-ai 1.2.x `spawnSync`s the native
 * `bin/.opencode`), and signalling only the launcher left the server running and this command waiting on its pipes.
 * The group is also killed if this command is interrupted or exits first.
 */
async function serve(bin: string, directory: string, env: Record<string, string | undefined>) {
  const child = spawn(bin, ["serve", "--port", "0", "--hostname", "127.0.0.1"], {
    cwd: directory,
    env: { ...process.env, ...env, PWD: directory } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  })
  let err = ""
  child.stderr!.on("data", (d) => (err = (err + d).slice(-2_000)))
  const group = child.pid
  /** Signals every process of the group; false when none is left. */
  const signal = (name: NodeJS.Signals | 0) => {
    if (group === undefined) return false
    try {
      process.kill(-group, name)
      return true
    } catch {
      return false
    }
  }
  const kill = () => void signal("SIGKILL")
  const interrupted = (name: NodeJS.Signals) => {
    kill()
    process.exit(name === "SIGINT" ? 130 : 143)
  }
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const
  process.once("exit", kill)
  for (const name of signals) process.once(name, interrupted)
  let stopped: Promise<void> | undefined
  const stop = () =>
    (stopped ??= (async () => {
      process.off("exit", kill)
      for (const name of signals) process.off(name, interrupted)
      // Never started (no such binary): nothing to end.
      if (group === undefined) return
      signal("SIGTERM")
      const deadline = Date.now() + 5_000
      while (signal(0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
      if (signal("SIGKILL")) {
        // What a SIGKILL leaves is reaped by the system; a zombie still counts as a member, so the wait is bounded.
        const end = Date.now() + 5_000
        while (signal(0) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50))
      }
      child.stdout!.destroy()
      child.stderr!.destroy()
    })())
  const url = await new Promise<string>((resolve, reject) => {
    let out = ""
    const timer = setTimeout(() => reject(new Error(`${bin} serve did not start within 60 s: ${err}`)), 60_000)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(new Error(`cannot start ${bin} (${error.message}); pass --opencode <bin> or --server <url>`))
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${bin} serve exited (${code}): ${err}`))
    })
    child.stdout!.on("data", (d) => {
      out += d
      const match = /listening on (http:\/\/[^\s]+)/.exec(out)
      if (match) {
        clearTimeout(timer)
        resolve(match[1])
      }
    })
  }).catch(async (error) => {
    await stop()
    throw error
  })
  return { url, stop }
}
