import fs from "fs"
import path from "path"
import { directoryProblem, Exit, parseSubcommand, type CliIO } from "../util/cli"
import { SecurityAccess } from "./access"
import { SecurityConfig } from "./config"
import { SecurityGuard } from "./guard"
import { SecurityRole } from "./role"
import { SecuritySchema } from "./schema"

const USAGE = `usage:
  opencode-builtins security validate [dir | --dir <dir>] [--json]
      Validates every .opencode-security.json of the project holding [dir] (default: the current directory): the
      JSON Schema (errors name the file and the JSON pointer), roles, patterns, subdirectory restrictions.
      Exit: 0 valid (or no policy at all), 1 invalid.
  opencode-builtins security check <path> --op read|write|llm [--role <role>] [--dir <dir>] [--json]
      The decision for one path and operation and the rule behind it, for the role given, else
      $OPENCODE_SECURITY_ROLE, else the policy's lowest role. Symbolic and hard links are followed.
      Exit: 0 allowed, 1 denied (or the policy is invalid), 2 bad usage.
  opencode-builtins security schema
      Takes no argument or option. Prints the JSON Schema of .opencode-security.json.
`

/** What each subcommand takes (`parseSubcommand`); the help text lists the same (util/cli.test.ts). */
export const SPEC = {
  commands: {
    validate: {
      options: { json: { type: "boolean" }, dir: { type: "string" } },
      positionals: { max: 1, what: "directory" },
    },
    check: {
      options: { op: { type: "string" }, role: { type: "string" }, dir: { type: "string" }, json: { type: "boolean" } },
      positionals: { min: 1, max: 1, what: "path" },
    },
    schema: { options: {} },
  },
  options: {},
} as const

/**
 * `opencode-builtins security …`.
 *
 * @example
 * await run(["check", "secrets/key", "--op", "read", "--json"], io) // 1, prints the decision
 */
export async function run(argv: string[], io: CliIO): Promise<number> {
  // `security help` is the same as `security --help`.
  const parsed = parseSubcommand("security", argv[0] === "help" ? ["--help"] : argv, io, SPEC.commands, USAGE)
  if (typeof parsed === "number") return parsed
  const { command, rest, values } = parsed
  if (command === "schema") {
    io.out(JSON.stringify(SecuritySchema.json(), null, 2) + "\n")
    return Exit.ok
  }
  return command === "validate" ? validate(rest, values, io) : check(rest, values, io)
}

type Values = { json?: boolean; op?: string; role?: string; dir?: string }

function projectRoot(dir: string): string {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, ".git"))) return d
    if (d === path.dirname(d)) return path.resolve(dir)
  }
}

async function loadState(dir: string) {
  const root = fs.realpathSync(projectRoot(dir))
  const found = await SecurityConfig.find(root)
  return { root, state: SecurityConfig.load(root, { nested: found.files }), truncated: found.truncated }
}

async function validate(positionals: string[], values: Values, io: CliIO): Promise<number> {
  if (positionals.length && values.dir !== undefined) {
    io.err(`security validate: give the directory or --dir, not both\n\n${USAGE}`)
    return Exit.usage
  }
  const dir = path.resolve(io.cwd, positionals[0] ?? values.dir ?? ".")
  const problem = directoryProblem(dir)
  if (problem) {
    io.err(`security validate: ${problem}\n`)
    return Exit.usage
  }
  const { root, state, truncated } = await loadState(dir)
  const note = truncated
    ? "the search for subdirectory policies stopped early (very large tree); some may be missing"
    : undefined
  if (values.json) {
    const body =
      state.status === "valid"
        ? {
            root,
            status: "valid",
            files: state.config.files,
            rules: state.config.rules.filter((r) => !r.implicit).length,
            markers: state.config.markers.length,
            roles: Object.fromEntries(state.config.roles),
            defaultRole: state.config.defaultRole,
            auditLog: state.config.logging.path,
          }
        : state.status === "invalid"
          ? { root, status: "invalid", files: state.files, problems: state.problems }
          : { root, status: "none" }
    io.out(JSON.stringify(note ? { ...body, note } : body, null, 2) + "\n")
    return state.status === "invalid" ? Exit.findings : Exit.ok
  }
  if (note) io.err(`note: ${note}\n`)
  if (state.status === "none") {
    io.out(`no ${SecuritySchema.FILE} in ${root} or below: nothing is enforced\n`)
    return Exit.ok
  }
  if (state.status === "invalid") {
    io.out(`INVALID — while it is, OpenCode refuses file access:\n${SecurityConfig.describe(state.problems)}\n`)
    return Exit.findings
  }
  const c = state.config
  io.out(
    [
      `valid: ${c.files.map((f) => SecurityAccess.display(root, f)).join(", ")}`,
      `  ${c.rules.filter((r) => !r.implicit).length} rule(s), ${c.markers.length} marker pair(s)`,
      `  roles: ${[...c.roles].map(([n, l]) => `${n} (${l})`).join(", ")}; default role: ${c.defaultRole}`,
      `  audit log: ${SecurityAccess.display(root, c.logging.path)} (${c.logging.level})`,
      "",
    ].join("\n"),
  )
  return Exit.ok
}

async function check(positionals: string[], values: Values, io: CliIO): Promise<number> {
  const op = values.op
  if (!op) {
    io.err(`security check: give --op read|write|llm\n\n${USAGE}`)
    return Exit.usage
  }
  if (!(SecuritySchema.OPERATIONS as readonly string[]).includes(op)) {
    io.err(`security check: --op must be one of ${SecuritySchema.OPERATIONS.join(", ")} (got '${op}')\n`)
    return Exit.usage
  }
  const dir = path.resolve(io.cwd, values.dir ?? ".")
  const problem = directoryProblem(dir)
  if (problem) {
    io.err(`security check: --dir: ${problem}\n`)
    return Exit.usage
  }
  const { root, state } = await loadState(dir)
  const target = path.resolve(io.cwd, positionals[0])
  if (state.status === "invalid") {
    const reason = `the policy is invalid, so every file access is refused:\n${SecurityConfig.describe(state.problems)}`
    if (values.json)
      io.out(JSON.stringify({ path: target, op, allowed: false, reason, problems: state.problems }, null, 2) + "\n")
    else io.out(`DENIED ${op} ${target}: ${reason}\n`)
    return Exit.findings
  }
  const env = { ...io.env }
  if (values.role !== undefined) {
    const known = state.status === "valid" ? state.config.roles : SecurityRole.tableOf(undefined)
    if (!known.has(values.role)) {
      io.err(`security check: unknown role '${values.role}' (roles: ${[...known.keys()].join(", ")})\n`)
      return Exit.usage
    }
    env[SecurityRole.ENV] = values.role
  }
  // A question about the policy, not an access: nothing is written to the audit log.
  const guard = await SecurityGuard.create({ directory: root, worktree: root, env, audit: false })
  try {
    await guard.ready()
    const decision = guard.check(target, op as SecuritySchema.Operation)
    const role = guard.role()
    if (values.json) {
      io.out(JSON.stringify({ ...decision, op, role, status: state.status }, null, 2) + "\n")
    } else if (decision.allowed) {
      io.out(
        `ALLOWED ${op} ${SecurityAccess.display(root, decision.path)} for role '${role}'${state.status === "none" ? " (no policy)" : ""}\n`,
      )
    } else {
      const rule = "rule" in decision ? `\n  rule: ${decision.rule.pattern} (${decision.rule.id})` : ""
      io.out(
        `DENIED ${op} ${SecurityAccess.display(root, decision.path)} for role '${role}': ${decision.reason}${rule}\n`,
      )
    }
    return decision.allowed ? Exit.ok : Exit.findings
  } finally {
    guard.close()
  }
}
