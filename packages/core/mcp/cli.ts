import fs from "fs"
import os from "os"
import path from "path"
import { format } from "util"
import { projectOptions } from "../options"
import { directoryProblem, Exit, parseCommand, type CliIO, worktreeOf } from "../util/cli"
import type { Logger } from "../util/log"

/**
 * The help text. The tool list is the server's own (`BuiltinsMcp.TOOLS`, what `tools/list` offers) and the entry is
 * the one `init --mcp` writes (`Init.MCP_ENTRY`), so neither can drift from what they describe.
 */
async function usage(): Promise<string> {
  const [{ BuiltinsMcp }, { Init }] = await Promise.all([import("./server"), import("../init/init")])
  const entry = `{ "type": "${Init.MCP_ENTRY.type}", "command": ${JSON.stringify(Init.MCP_ENTRY.command).replaceAll(",", ", ")} }`
  return `usage:
  opencode-builtins mcp [-C|--directory <dir>] [--log-file <file>] [-q|--quiet]
      An MCP server on stdio (Model Context Protocol) over this project's resources, discovery, learnings and
      captured tool calls. Tools: ${BuiltinsMcp.TOOLS.join(", ")}.
      The project's .opencode-security.json applies: what it protects is as invisible here as in OpenCode.
      stdout carries protocol messages only; logs go to stderr, or to --log-file.
  In opencode.json:  "mcp": { "${Init.PACKAGE}": ${entry} }
  Or run:            npx opencode-builtins init --mcp
`
}

/** What the command takes (`parseCommand`); the help text lists the same (util/cli.test.ts). */
export const SPEC = {
  options: {
    directory: { type: "string", short: "C" },
    "log-file": { type: "string" },
    quiet: { type: "boolean", short: "q" },
  },
} as const

/**
 * `opencode-builtins mcp`: serves until the client closes stdin (every request read by then is answered first, then
 * exit 0), or until SIGINT or SIGTERM: then the server is closed and the process ends killed by that signal, as every
 * command does on Ctrl-C. Nothing but protocol messages is ever written to stdout: `console.*` is sent to stderr for
 * the life of the process, before any feature module loads.
 *
 * @example
 * await run(["--directory", "/repo"], io) // resolves when the client disconnects
 */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const args = parseCommand("mcp", argv, io, SPEC, await usage())
  if (typeof args === "number") return args

  // stdout belongs to the protocol from here on.
  const toStderr = (...items: unknown[]) => void process.stderr.write(format(...items) + "\n")
  console.log = console.info = console.debug = console.warn = console.error = console.trace = toStderr

  const directory = path.resolve(io.cwd, args.values.directory ?? ".")
  const logFile = args.values["log-file"] ? path.resolve(io.cwd, args.values["log-file"]) : undefined
  const quiet = args.values.quiet === true
  const logger = (service: string): Logger => {
    const write = (level: string) => (message: string, extra?: Record<string, unknown>) => {
      if (quiet && (level === "debug" || level === "info")) return
      const line = `${new Date().toISOString()} ${level} [${service}] ${message}${extra ? " " + JSON.stringify(extra) : ""}\n`
      try {
        if (logFile) fs.appendFileSync(logFile, line)
        else if (level !== "debug") io.err(line)
      } catch {
        // A log that cannot be written never stops the server.
      }
    }
    return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") }
  }
  const log = logger("opencode-builtins.mcp")
  const problem = directoryProblem(directory)
  if (problem) {
    io.err(`mcp: ${problem}\n`)
    return Exit.usage
  }

  const worktree = worktreeOf(directory) ?? directory
  const options = projectOptions({ directory, worktree }, undefined, log)
  const [{ BuiltinsMcp }, { StdioServerTransport }] = await Promise.all([
    import("./server"),
    import("@modelcontextprotocol/sdk/server/stdio.js"),
  ])
  const mcp = await BuiltinsMcp.create({
    directory,
    worktree,
    options,
    log,
    logger,
  })
  const transport = new StdioServerTransport()
  const signals = ["SIGINT", "SIGTERM"] as const
  const closed = new Promise<NodeJS.Signals | undefined>((resolve) => {
    transport.onclose = () => resolve(undefined)
    process.stdin.on("end", () => resolve(undefined))
    process.stdin.on("close", () => resolve(undefined))
    for (const signal of signals) process.once(signal, () => resolve(signal))
  })
  await mcp.server.connect(transport)
  // A line the transport cannot take is answered with a JSON-RPC error (the SDK only reports it), after the server's
  // own handler has logged it.
  const reported = transport.onerror
  transport.onerror = (error) => {
    reported?.(error)
    const reply = BuiltinsMcp.malformed(error)
    if (reply) void transport.send(reply as unknown as Parameters<typeof transport.send>[0])
  }
  const answered = answerBeforeClosing(transport)
  log.info(`serving ${directory} over stdio`, { tools: mcp.tools.map((t) => t.name) })
  const signal = await closed
  // End of input: every request already read is answered first (a client that pipes its requests and closes its
  // end got no answer to a tools/call still running, or to any request at all when it closed at once).
  if (!signal && !(await answered(DRAIN_MS)))
    log.warn(`input closed; requests still running after ${DRAIN_MS / 1000} s were left unanswered`)
  await mcp.close()
  if (!signal) return Exit.ok
  log.info(`closed on ${signal}`)
  return dieBy(signal)
}

/** How long the server, its input closed, waits for the requests it read to be answered. */
export const DRAIN_MS = 60_000

type Transport = {
  onmessage?: (message: any, extra?: any) => void
  send: (message: any, options?: any) => Promise<void>
}

/**
 * Follows the requests `transport` has handed to the server until their responses are sent (a request the client
 * cancels gets none, by the protocol: it is dropped too). Returns a wait for none to be left, true when none is left
 * within `ms`. Installed after `connect`, around the handlers the SDK set.
 */
function answerBeforeClosing(transport: Transport): (ms: number) => Promise<boolean> {
  const running = new Set<string>()
  let drained: (() => void) | undefined
  const done = (id: unknown) => {
    running.delete(JSON.stringify(id))
    if (!running.size) drained?.()
  }
  const received = transport.onmessage
  transport.onmessage = (message, extra) => {
    if (message && typeof message.method === "string") {
      if (message.id !== undefined) running.add(JSON.stringify(message.id))
      else if (message.method === "notifications/cancelled") done(message.params?.requestId)
    }
    received?.(message, extra)
  }
  const send = transport.send.bind(transport)
  transport.send = async (message, options) => {
    try {
      return await send(message, options)
    } finally {
      if (message && message.id !== undefined && ("result" in message || "error" in message)) done(message.id)
    }
  }
  return async (ms) => {
    if (!running.size) return true
    let timer: ReturnType<typeof setTimeout> | undefined
    const none = await Promise.race([
      new Promise<true>((resolve) => (drained = () => resolve(true))),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
    ])
    clearTimeout(timer)
    return none
  }
}

/**
 * Ends the process by `signal` once the server is closed, as every command ends on Ctrl-C: a shell (and the npm
 * launcher) then sees "killed by SIGINT", never a clean exit 0. If the signal is not fatal after all (a handler
 * elsewhere), the shell's code for it, 128 + its number.
 */
function dieBy(signal: NodeJS.Signals): number {
  process.removeAllListeners(signal)
  process.kill(process.pid, signal)
  return 128 + (os.constants.signals[signal] ?? 0)
}

/** The git worktree root above `dir` (what OpenCode reports as the worktree), else `dir`. */
