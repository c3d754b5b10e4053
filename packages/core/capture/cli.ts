import { LocalState } from "../learning/local"
import { loadOptions } from "../options"
import { DIRECTORY_OPTION, Exit, parseSubcommand, wholeNumber, worktreeOf, type CliIO } from "../util/cli"
import { Terminal } from "../util/terminal"
import { Capture } from "./feature"
import { CaptureStore } from "./store"
import { StoredTime } from "../util/time"
import { errorMessage } from "../util/error"
import { ProjectFolder } from "../util/folder"

const USAGE = `usage:
  opencode-builtins capture list [--session id] [--tool name] [--failed] [--limit n] [--json] [-C dir]
      Tool calls captured in this project, newest first (default limit 50): time, status, tool, call id, title.
  opencode-builtins capture show <callID> [--json] [-C dir]
      One captured call: arguments, output (redacted, cut to the configured length) or error.
  opencode-builtins capture clear --yes [-C dir]
      Delete every captured call of this project (it takes no call id: nothing is deleted when one is given).
-C, --directory <dir>: the project folder (default: the current directory).
Captures live in ${LocalState.DIR}/${CaptureStore.FOLDER}/ under the project root (git-ignored by init), bounded by
the "capture" section of .opencode/opencode-builtins.json (maxBytes, maxEntries, maxOutputChars, segments).
`

/** What each subcommand takes (`parseSubcommand`); the help text lists the same (util/cli.test.ts). */
export const SPEC = {
  commands: {
    list: {
      options: {
        session: { type: "string" },
        tool: { type: "string" },
        failed: { type: "boolean" },
        limit: { type: "string" },
        json: { type: "boolean" },
      },
    },
    show: { options: { json: { type: "boolean" } }, positionals: { min: 1, max: 1, what: "call id" } },
    clear: { options: { yes: { type: "boolean" } } },
  },
  options: DIRECTORY_OPTION,
} as const

/**
 * `opencode-builtins capture …`.
 *
 * @example
 * await run(["list", "--failed", "--json"], io)
 */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseSubcommand("capture", argv, io, SPEC.commands, USAGE, SPEC.options)
  if (typeof parsed === "number") return parsed
  const { values, command, rest, directory } = parsed
  const root = LocalState.root(directory, worktreeOf(directory))
  // The same limits as the feature, so the CLI reads every segment the feature writes.
  const store = CaptureStore.open(
    root,
    Capture.limits(loadOptions({ directory, worktree: worktreeOf(directory) }, undefined).options.capture),
  )
  // Lines that cannot be read are skipped, and said once (list and show read the same lines).
  if (command !== "clear")
    for (const warning of store.read().skipped) io.err(`capture: warning: ${Terminal.line(warning)}\n`)
  switch (command) {
    case "list": {
      const limit = values.limit === undefined ? { value: 50 } : wholeNumber("--limit", values.limit, { min: 1 })
      if ("error" in limit) {
        io.err(`capture: ${limit.error}\n`)
        return Exit.usage
      }
      const list = store.list({
        sessionID: values.session,
        tool: values.tool,
        failed: values.failed,
        limit: limit.value,
      })
      if (values.json) return (io.out(JSON.stringify(list, null, 2) + "\n"), Exit.ok)
      if (!list.length) return (io.out("No tool calls captured in this project.\n"), Exit.ok)
      for (const r of list) {
        const status = r.status === "error" ? "FAILED" : "ok"
        const what = r.status === "error" ? (r.error ?? "") : (r.title ?? "")
        io.out(
          `${StoredTime.iso(r.at)}  ${status.padEnd(6)}  ${Terminal.line(r.tool)}  ${Terminal.line(r.callID)}  ${Terminal.line(oneLine(what, 80))}\n`,
        )
      }
      return Exit.ok
    }
    case "show": {
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
      io.out(`ended ${StoredTime.iso(record.at)}`)
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
      let n: number
      try {
        n = store.clear()
      } catch (error) {
        // Another process holding the store's lock, or a link planted at it: said by name, nothing deleted.
        if (!LocalState.LockTimeout.is(error) && !(error instanceof ProjectFolder.Linked)) throw error
        io.err(`capture: ${errorMessage(error)}\n`)
        return Exit.findings
      }
      io.out(`Deleted ${n} captured call(s).\n`)
      return Exit.ok
    }
  }
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat
}
