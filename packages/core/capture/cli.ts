import { LocalState } from "../learning/local"
import { loadOptions } from "../options"
import { Exit, parseSubcommand, worktreeOf, type CliIO } from "../util/cli"
import { Terminal } from "../util/terminal"
import { Capture } from "./feature"
import { CaptureStore } from "./store"

const USAGE = `usage:
  opencode-builtins capture list [--session id] [--tool name] [--failed] [--limit n] [--json]
      Tool calls captured in this project, newest first (default limit 50): time, status, tool, call id, title.
  opencode-builtins capture show <callID> [--json]
      One captured call: arguments, output (redacted, cut to the configured length) or error.
  opencode-builtins capture clear --yes
      Delete every captured call of this project.
Captures live in ${LocalState.DIR}/${CaptureStore.FOLDER}/ under the project root (git-ignored by init), bounded by
the "capture" section of .opencode/opencode-builtins.json (maxBytes, maxEntries, maxOutputChars, segments).
`

/**
 * `opencode-builtins capture …`.
 *
 * @example
 * await run(["list", "--failed", "--json"], io)
 */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseSubcommand(
    "capture",
    argv,
    io,
    {
      session: { type: "string" },
      tool: { type: "string" },
      failed: { type: "boolean" },
      limit: { type: "string" },
      json: { type: "boolean" },
      yes: { type: "boolean" },
    },
    USAGE,
  )
  if (typeof parsed === "number") return parsed
  const { values, command, rest, directory } = parsed
  const root = LocalState.root(directory, worktreeOf(directory))
  // The same limits as the feature, so the CLI reads every segment the feature writes.
  const store = CaptureStore.open(
    root,
    Capture.limits(loadOptions({ directory, worktree: worktreeOf(directory) }, undefined).options.capture),
  )
  switch (command) {
    case "list": {
      if (rest.length) {
        io.err(`capture: list takes no positional arguments\n\n${USAGE}`)
        return Exit.usage
      }
      const limit = values.limit === undefined ? 50 : Number(values.limit)
      if (!Number.isInteger(limit) || limit < 1) {
        io.err(`capture: --limit must be a whole number ≥ 1, got '${values.limit}'\n`)
        return Exit.usage
      }
      const list = store.list({
        sessionID: values.session,
        tool: values.tool,
        failed: values.failed,
        limit,
      })
      if (values.json) return (io.out(JSON.stringify(list, null, 2) + "\n"), Exit.ok)
      if (!list.length) return (io.out("No tool calls captured in this project.\n"), Exit.ok)
      for (const r of list) {
        const status = r.status === "error" ? "FAILED" : "ok"
        const what = r.status === "error" ? (r.error ?? "") : (r.title ?? "")
        io.out(
          `${new Date(r.at).toISOString()}  ${status.padEnd(6)}  ${Terminal.line(r.tool)}  ${Terminal.line(r.callID)}  ${Terminal.line(oneLine(what, 80))}\n`,
        )
      }
      return Exit.ok
    }
    case "show": {
      if (rest.length !== 1) {
        io.err(`capture: show takes one call id\n\n${USAGE}`)
        return Exit.usage
      }
      let record: CaptureStore.Record
      try {
        record = store.get(rest[0])
      } catch (error) {
        if (!CaptureStore.NotFound.is(error)) throw error
        io.err(`capture: ${error.message}\n`)
        return Exit.findings
      }
      if (values.json) return (io.out(JSON.stringify(record, null, 2) + "\n"), Exit.ok)
      // The record is the agent's and its tools' text: every field shown with its controls escaped (the output keeps
      // its lines and tabs).
      io.out(
        `${Terminal.line(record.tool)} ${Terminal.line(record.callID)} (${record.status === "error" ? "failed" : "completed"})\n`,
      )
      io.out(
        `session ${Terminal.line(record.sessionID)}${record.parentID ? ` (subagent of ${Terminal.line(record.parentID)})` : ""}\n`,
      )
      io.out(`ended ${new Date(record.at).toISOString()}`)
      io.out(record.startedAt ? ` after ${record.at - record.startedAt} ms\n` : "\n")
      if (record.title) io.out(`title: ${Terminal.line(record.title)}\n`)
      if (record.args) io.out(`args: ${Terminal.line(record.args)}\n`)
      if (record.error) io.out(`error: ${Terminal.shown(record.error)}\n`)
      if (record.output !== undefined)
        io.out(
          `output${record.outputChars ? ` (of ${record.outputChars} characters)` : ""}:\n${Terminal.shown(record.output)}\n`,
        )
      return Exit.ok
    }
    case "clear": {
      if (!values.yes) {
        io.err("capture: clear deletes every captured call of this project; run it again with --yes\n")
        return Exit.usage
      }
      io.out(`Deleted ${store.clear()} captured call(s).\n`)
      return Exit.ok
    }
    default:
      io.err(`capture: unknown command '${command}'\n\n${USAGE}`)
      return Exit.usage
  }
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat
}
