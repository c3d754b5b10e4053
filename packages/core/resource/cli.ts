import path from "path"
import {
  directoryProblem,
  Exit,
  parseSubcommand,
  type CliIO,
  type OptionValues,
  wholeNumber,
  worktreeOf,
} from "../util/cli"
import { loadOptions, validSection } from "../options"
import { Logger } from "../util/log"
import { Terminal } from "../util/terminal"
import { ResourceLint } from "./lint"
import { ResourceLoader } from "./loader"
import { ResourcePolicy } from "./policy"
import { ResourceQuery } from "./query"
import { Resource } from "./schema"

const USAGE = `usage:
  opencode-builtins resources lint [dir] [--json]
      Check .opencode resources: malformed frontmatter/JSON, duplicate or invalid ids, dangling references,
      oversize, binary or unreadable files. Exit 1 when any error is found.
  opencode-builtins resources query [words…] [--type T] [--domain D] [--tag T]… [--referenced-by NAME]
                                    [--limit N] [--dir DIR] [--json]
      Search resources as the resource-query tool does. Types: ${Resource.TYPES.join(", ")}.
      Domains: ${Resource.DOMAINS.join(", ")}.
With a .opencode-security.json policy, files it protects (read or llm, for its lowest role) are not shown.
`

/** What each subcommand takes (`parseSubcommand`); the help text lists the same (util/cli.test.ts). */
export const SPEC = {
  commands: {
    lint: { options: { json: { type: "boolean" } }, positionals: { max: 1, what: "directory" } },
    query: {
      options: {
        type: { type: "string" },
        domain: { type: "string" },
        tag: { type: "string", multiple: true },
        "referenced-by": { type: "string" },
        limit: { type: "string" },
        dir: { type: "string" },
        json: { type: "boolean" },
      },
      positionals: { max: Infinity, what: "word" },
    },
  },
  options: {},
} as const

/**
 * `opencode-builtins resources …`.
 *
 * @example
 * await run(["lint", ".", "--json"], io) // 0 when clean, 1 with errors, 2 on bad usage
 */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseSubcommand("resources", argv, io, SPEC.commands, USAGE)
  if (typeof parsed === "number") return parsed
  return parsed.command === "lint" ? lint(parsed.rest, parsed.values, io) : query(parsed.rest, parsed.values, io)
}

type Values = OptionValues<typeof SPEC.commands.query.options>

/**
 * The `resources` section of the project's `.opencode/opencode-builtins.json`, as the plugin reads it (its limits,
 * `maxFileSize` among them, change what lint reports); problems with the file or its values go to stderr.
 */
function settings(io: CliIO, dir: string, worktree: string): Resource.ConfigInput {
  const { options, error } = loadOptions({ directory: dir, worktree }, undefined)
  if (error) io.err(`resources: ${error}\n`)
  const log: Logger = {
    ...Logger.silent,
    warn: (m) => io.err(`resources: ${m}\n`),
    error: (m) => io.err(`resources: ${m}\n`),
  }
  return validSection(Resource.Config, options.resources, "resources", log)
}

function directory(io: CliIO, dir: string | undefined): string | undefined {
  const target = path.resolve(io.cwd, dir ?? ".")
  const problem = directoryProblem(target)
  if (problem) {
    io.err(`resources: ${problem}\n`)
    return undefined
  }
  return target
}

async function lint(positionals: string[], values: Values, io: CliIO): Promise<number> {
  const dir = directory(io, positionals[0])
  if (!dir) return Exit.usage
  const worktree = worktreeOf(dir) ?? dir
  const policy = await ResourcePolicy.open(dir, worktree)
  let report: ResourceLint.Report
  try {
    report = await ResourceLint.run(dir, worktree, policy.host, settings(io, dir, worktree))
  } finally {
    policy.close()
  }
  if (policy.notice) io.err(`resources: ${policy.notice}\n`)
  if (policy.invalid) report = withInvalidPolicy(report, policy.invalid, dir)
  if (values.json) io.out(JSON.stringify(report, null, 2) + "\n")
  else {
    const types = Object.entries(report.byType)
      .map(([t, n]) => `${n} ${t}`)
      .join(", ")
    io.out(`${report.resources} resource(s) in ${report.projectRoot}${types ? ` (${types})` : ""}\n`)
    for (const p of report.problems)
      io.out(`${p.severity === "error" ? "error" : "warn "} ${p.code}  ${field(p.path)}: ${field(p.message)}\n`)
    io.out(`${report.errors} error(s), ${report.warnings} warning(s)\n`)
  }
  return report.ok ? Exit.ok : Exit.findings
}

/**
 * The lint report of a project whose security policy is invalid: every resource is hidden (fail closed), so the
 * report would read as a clean, empty project. The policy is its first error, naming the file and why, and the
 * report fails.
 */
function withInvalidPolicy(
  report: ResourceLint.Report,
  invalid: NonNullable<ResourcePolicy.Opened["invalid"]>,
  dir: string,
): ResourceLint.Report {
  const problem: Resource.Warning = {
    severity: "error",
    code: "policy-invalid",
    path: invalid.files.map((f) => path.relative(dir, f) || f).join(", "),
    message: `${HIDDEN} ${invalid.reason}`,
  }
  return { ...report, problems: [problem, ...report.problems], errors: report.errors + 1, ok: false }
}

function invalid(policy: NonNullable<ResourcePolicy.Opened["invalid"]>) {
  return policy.reason.replace(/\s*\n\s*/g, "; ")
}

/** What replaces the tool's resource-load advice on the command line. */
const CLI_LOAD = "Each result ends with its file (in parentheses); read it there."

/** What an invalid policy does to the resources, said where a command would otherwise report none. */
const HIDDEN =
  "the security policy is invalid, so every resource is hidden until it is fixed (opencode-builtins security validate):"

/**
 * A value from a project file (a name, a description, a path) on one line of output: runs of white space (a
 * description's line breaks) become one space, and any other control character is written visibly, so a file cannot
 * break the listing into lines of its own nor send escape sequences to the terminal.
 */
function field(text: string): string {
  return Terminal.line(text.replace(/[\s\u0085\u2028\u2029]+/g, " ").trim())
}

async function query(positionals: string[], v: Values, io: CliIO): Promise<number> {
  const dir = directory(io, v.dir)
  if (!dir) return Exit.usage
  const limit =
    v.limit === undefined ? undefined : wholeNumber("--limit", v.limit, { min: 1, max: ResourceQuery.MAX_LIMIT })
  if (limit && "error" in limit) {
    io.err(`resources query: ${limit.error}\n`)
    return Exit.usage
  }
  const input = {
    type: v.type,
    domain: v.domain,
    tags: v.tag,
    referencedBy: v["referenced-by"],
    query: positionals.join(" ") || undefined,
    limit: limit?.value,
  }
  const checked = ResourceQuery.Args.safeParse(input)
  if (!checked.success) {
    const issue = checked.error.issues[0]
    io.err(`resources query: --${String(issue.path[0] ?? "")}: ${issue.message}\n`)
    return Exit.usage
  }
  const worktree = worktreeOf(dir) ?? dir
  const policy = await ResourcePolicy.open(dir, worktree)
  if (policy.notice) io.err(`resources: ${policy.notice}\n`)
  const loader = ResourceLoader.create(
    { directory: dir, worktree, log: Logger.silent, ...policy.host },
    settings(io, dir, worktree),
  )
  try {
    const found = await loader.query(checked.data)
    // Hidden, not absent: no advice to add resources the project has.
    const result = policy.invalid ? { ...found, hint: `${HIDDEN} ${invalid(policy.invalid)}` } : found
    if (v.json) io.out(JSON.stringify(result, null, 2) + "\n")
    else {
      for (const r of result.results)
        io.out(
          `${field(r.id)}  [${r.type}/${r.domain}]  ${field(r.name)}${r.description ? ` — ${field(r.description)}` : ""}  (${field(r.path)})\n`,
        )
      // The tool's advice names resource-load, which the command line has not: the file is on each line instead.
      io.out(`${result.showing} of ${result.total} shown. ${result.hint.replace(ResourceQuery.LOAD, CLI_LOAD)}\n`)
      // Counted as lint counts them (errors apart from warnings), not all called warnings.
      const w = result.warnings
      if (w) io.out(`${w.errors} error(s), ${w.count - w.errors} warning(s) in the index: ${w.hint}\n`)
    }
    return Exit.ok
  } finally {
    await loader.dispose()
    policy.close()
  }
}
