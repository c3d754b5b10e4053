import { DIRECTORY_OPTION, Exit, parseSubcommand, worktreeOf, type CliIO } from "../util/cli"
import { errorMessage } from "../util/error"
import { Terminal } from "../util/terminal"
import { LocalState } from "./local"
import { LearningStore } from "./store"
import { StoredTime } from "../util/time"
import { ProjectFolder } from "../util/folder"

const USAGE = `usage:
  opencode-builtins learnings list [--kind correction|decision|preference] [--json] [-C dir]
      What OpenCode learned from your messages in this project, most important first, with how often you said it
      and where (session, message, time).
  opencode-builtins learnings delete <id> [-C dir]
      Forget one learning (an id from list, or a unique prefix of one).
  opencode-builtins learnings clear --yes [-C dir]
      Forget every learning of this project (it takes no id: nothing is forgotten when one is given).
-C, --directory <dir>: the project folder (default: the current directory).
Learnings live in ${LocalState.DIR}/${LearningStore.FILE} under the project root (git-ignored by init).
`

/** What each subcommand takes (`parseSubcommand`); the help text lists the same (util/cli.test.ts). */
export const SPEC = {
  commands: {
    list: { options: { kind: { type: "string" }, json: { type: "boolean" } } },
    delete: { options: {}, positionals: { min: 1, max: 1, what: "id" } },
    clear: { options: { yes: { type: "boolean" } } },
  },
  options: DIRECTORY_OPTION,
} as const

/**
 * `opencode-builtins learnings …`.
 *
 * @example
 * await run(["list", "--json"], io)
 */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseSubcommand("learnings", argv, io, SPEC.commands, USAGE, SPEC.options)
  if (typeof parsed === "number") return parsed
  const { values, command, rest, directory } = parsed
  const store = LearningStore.open(LocalState.root(directory, worktreeOf(directory)))
  try {
    const code = await dispatch(store, values, command, rest, io)
    for (const kept of store.keptAside()) io.err(`learnings: note: the file as it was is kept in ${kept}\n`)
    return code
  } catch (error) {
    // What the user can act on is said by name: a file that cannot be read, a lock another process holds, a link
    // where the state (or its lock) should be.
    if (
      !LearningStore.CorruptError.is(error) &&
      !LocalState.LockTimeout.is(error) &&
      !(error instanceof ProjectFolder.Linked)
    )
      throw error
    io.err(`learnings: ${errorMessage(error)}\n`)
    return Exit.findings
  }
}

async function dispatch(
  store: LearningStore.Store,
  values: { kind?: string; json?: boolean; yes?: boolean },
  command: keyof typeof SPEC.commands,
  rest: string[],
  io: CliIO,
): Promise<number> {
  // Entries of the wrong shape are named, then left out.
  const warn = () => {
    for (const warning of store.load().skipped) io.err(`learnings: warning: ${Terminal.line(warning)}\n`)
  }
  switch (command) {
    case "list": {
      const kind = values.kind
      if (kind && !LearningStore.PRIORITY.includes(kind as never)) {
        io.err(`learnings: --kind must be one of ${LearningStore.PRIORITY.join(", ")}\n`)
        return Exit.usage
      }
      warn()
      const list = store.list().filter((l) => !kind || l.kind === kind)
      if (values.json) return (io.out(JSON.stringify(list, null, 2) + "\n"), Exit.ok)
      if (!list.length) return (io.out("No learnings recorded in this project.\n"), Exit.ok)
      for (const l of list) {
        const last = l.sources[l.sources.length - 1]
        // The file is writable by whoever can write the project's local state: each field one line, controls escaped.
        io.out(`${Terminal.line(l.id)}  ${Terminal.line(l.kind.padEnd(10))}  ×${l.count}  ${Terminal.line(l.text)}\n`)
        const where = `${last?.sessionID ?? "?"}${last?.messageID ? ` (${last.messageID})` : ""}`
        io.out(`    last said ${StoredTime.iso(l.lastSeen)} in ${Terminal.line(where)}\n`)
      }
      return Exit.ok
    }
    case "delete": {
      warn()
      const removed = store.remove(rest[0])
      if (!removed) {
        io.err(`learnings: no single learning matches '${Terminal.line(rest[0])}' (learnings list shows the ids)\n`)
        return Exit.findings
      }
      io.out(`Forgot ${Terminal.line(removed.id)}: ${Terminal.line(removed.text)}\n`)
      return Exit.ok
    }
    case "clear": {
      if (!values.yes) {
        io.err("learnings: clear forgets every learning of this project; run it again with --yes\n")
        return Exit.usage
      }
      warn()
      io.out(`Forgot ${store.clear()} learning(s).\n`)
      return Exit.ok
    }
  }
}
