import type { CliCommand, CliIO } from "@opencode-builtins/core/util/cli"
import { Exit, processIO, usageError } from "@opencode-builtins/core/util/cli"
import packageJson from "./package.json"

/** Subcommands and the core module behind each; modules load lazily so one broken feature cannot break the rest. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<CliCommand> }> = {
  resources: {
    summary:
      "resources lint [dir] [--json] | resources query [words…] [--type t] [--domain d] [--tag t]… [--referenced-by n]\n" +
      "      [--limit n] [--dir d] [--json]   project resources under .opencode/",
    load: () => import("@opencode-builtins/core/resource/cli"),
  },
  discover: {
    summary:
      'discover "<prompt>" [--agent a] [--json] | discover --list [--agent a] [--json]\n' +
      "      agents, commands, skills, styles, resources matched",
    load: () => import("@opencode-builtins/core/discovery/cli"),
  },
  security: {
    summary:
      "security validate [dir] [--json] | security check <path> --op read|write|llm [--role r] [--dir d] [--json]\n" +
      "      | security schema   the .opencode-security.json policy",
    load: () => import("@opencode-builtins/core/security/cli"),
  },
  mcp: {
    summary:
      "mcp [-C|--directory d] [--log-file f] [-q|--quiet]   MCP server (stdio): resource tools, discovery, learnings,\n" +
      "      captures",
    load: () => import("@opencode-builtins/core/mcp/cli"),
  },
  init: {
    summary:
      "init [dir] [--mcp] [--standalone] [-n|--dry-run]   add opencode-builtins to the project's OpenCode\n" +
      "      configuration, scaffold .opencode/",
    load: () => import("@opencode-builtins/core/init/cli"),
  },
  learnings: {
    summary:
      "learnings list [--kind k] [--json] | learnings delete <id> | learnings clear --yes   [-C|--directory d]\n" +
      "      session learnings",
    load: () => import("@opencode-builtins/core/learning/cli"),
  },
  capture: {
    summary:
      "capture list [--session s] [--tool t] [--failed] [--limit n] [--json] | capture show <callID> [--json]\n" +
      "      | capture clear --yes   [-C|--directory d]   tool calls captured",
    load: () => import("@opencode-builtins/core/capture/cli"),
  },
  recovery: {
    summary:
      "recovery list [--json] | recovery resume|dismiss <id> [--server url | --opencode bin] [--json]\n" +
      "      [-C|--directory d]   sessions interrupted by a crash",
    load: () => import("@opencode-builtins/core/recovery/cli"),
  },
  audit: {
    summary:
      "audit <npm-name | dir> [--json] [--include-dependencies]   static AST analysis of a plugin for dangerous APIs\n" +
      "      (exit 1: critical)",
    load: () => import("@opencode-builtins/core/audit/cli"),
  },
}

/** This package's version, the first thing a bug report asks for. */
const VERSION: string = packageJson.version

const USAGE = () =>
  [
    "usage: opencode-builtins <command> [args] [--json]   (--version: the version)",
    "",
    ...Object.entries(COMMANDS).map(([, c]) => `  ${c.summary}`),
    "",
    "Run a command with --help for its options.",
    "",
  ].join("\n")

/**
 * The `opencode-builtins` command line.
 *
 * @example
 * await main(["resources", "lint", "."], { cwd: process.cwd(), env: process.env, out: console.log, err: console.error })
 */
export async function main(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv
  if (!name) return usageError(io, "opencode-builtins", "give a command", USAGE())
  const help = name === "--help" || name === "-h" || name === "help"
  const version = name === "--version" || name === "-v" || name === "version"
  // The one rule of every command: a stray argument is bad usage.
  if ((help || version) && rest.length)
    return usageError(io, "opencode-builtins", `${name} takes no arguments (got '${rest[0]}')`, USAGE())
  if (help) return (io.out(USAGE()), Exit.ok)
  if (version) return (io.out(`opencode-builtins ${VERSION}\n`), Exit.ok)
  const command = COMMANDS[name]
  if (!command) {
    io.err(`opencode-builtins: unknown command '${name}'\n\n${USAGE()}`)
    return Exit.usage
  }
  return (await command.load()).run(rest, io)
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2), processIO(process.cwd(), process.env))
  process.exitCode = code
}
