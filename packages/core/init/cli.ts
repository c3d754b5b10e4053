import path from "path"
import { directoryProblem, Exit, parseCommand, type CliIO } from "../util/cli"
import { errorMessage } from "../util/error"
import { Init } from "./init"

const USAGE = `usage:
  opencode-builtins init [dir] [--mcp] [--standalone] [-n|--dry-run]
      Sets up OpenCode Built-ins in a project (default: the current directory):
      - adds "opencode-builtins" to "plugin" in the first of opencode.jsonc, opencode.json, .opencode/opencode.jsonc,
        .opencode/opencode.json that exists (else a new opencode.json; an entry in any of them counts as present),
        or with --mcp the MCP server entry under "mcp" instead; comments, trailing commas and key order are kept;
      - creates the .opencode resource folders that do not exist yet (checklist, knowledge-base, schema, task,
        template), one example in each;
      - adds the local state (.opencode/builtins-local/) and the security audit log to .gitignore.
      Running it again changes nothing. A configuration that is not valid JSONC is refused and nothing is written.
      In a folder below one already set up (a configuration naming the plugin, or with --mcp the MCP entry, between
      it and the git root), nothing is changed: OpenCode reads that configuration from here too.
      --standalone sets up the folder on its own all the same (no example where a folder above has that resource
      folder: OpenCode's sessions here read those).
      --dry-run prints what would change without writing.
Exit: 0 done (or nothing to do), 1 refused, 2 bad usage.
`

/** What the command takes (`parseCommand`); the help text lists the same (util/cli.test.ts). */
export const SPEC = {
  options: { mcp: { type: "boolean" }, standalone: { type: "boolean" }, "dry-run": { type: "boolean", short: "n" } },
  positionals: { max: 1, what: "directory" },
} as const

/**
 * `opencode-builtins init`.
 *
 * @example
 * await run(["--mcp"], io)
 */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const args = parseCommand("init", argv, io, SPEC, USAGE)
  if (typeof args === "number") return args
  const dir = path.resolve(io.cwd, args.positionals[0] ?? ".")
  const problem = directoryProblem(dir)
  if (problem) {
    io.err(`init: ${problem}\n`)
    return Exit.usage
  }
  const dry = args.values["dry-run"] === true
  const options = { mcp: args.values.mcp === true, standalone: args.values.standalone === true }
  let plan: Init.Plan
  try {
    plan = dry ? Init.plan(dir, options) : Init.setup(dir, options)
  } catch (error) {
    io.err(`init: ${errorMessage(error)}\n`)
    return Exit.findings
  }
  if (!plan.ok) {
    io.err(`init: ${plan.error}\n`)
    return Exit.findings
  }
  const verb = (c: Init.Change) => (dry ? `would ${c.action}` : c.action === "create" ? "created" : "edited")
  for (const c of plan.changes) io.out(`${verb(c)}  ${path.relative(dir, c.path) || c.path}: ${c.summary}\n`)
  for (const note of plan.notes) io.err(`init: note: ${note}\n`)
  if (plan.enclosing)
    io.out(
      `Already set up in ${plan.enclosing.config}, which OpenCode reads from here too (it reads the configurations ` +
        `from this folder up to the git root, ${plan.enclosing.root}): nothing to change. To set up this folder on ` +
        "its own as well, run init again with --standalone.\n",
    )
  else if (!plan.changes.length) io.out("Already set up: nothing to change.\n")
  else if (!dry)
    io.out(
      args.values.mcp
        ? `Done. OpenCode starts the MCP server (${Init.MCP_ENTRY.command.join(" ")}) in this project at its next start.\n`
        : "Done. Install the plugin where OpenCode can load it (npm install -D opencode-builtins) and start OpenCode.\n",
    )
  return Exit.ok
}
