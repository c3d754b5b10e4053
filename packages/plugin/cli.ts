import type { CliCommand, CliIO } from "@opencode-builtins/core/util/cli"
import { Exit, processIO } from "@opencode-builtins/core/util/cli"
import packageJson from "./package.json"

/** Subcommands and the core module behind each; modules load lazily so one broken feature cannot break the rest. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<CliCommand> }> = {
  resources: {
    summary: "resources lint [dir] | resources query [words…] [filters]   project resources under .opencode/",
    load: () => import("@opencode-builtins/core/resource/cli"),
  },
  discover: {
    summary: 'discover "<prompt>" [--json] | discover --list   agents, commands, skills, styles, resources matched',
    load: () => import("@opencode-builtins/core/discovery/cli"),
  },
  security: {
    summary:
      "security validate [dir] | security check <path> --op read|write|llm [--role r]   the .opencode-security.json policy",
    load: () => import("@opencode-builtins/core/security/cli"),
  },
  mcp: {
    summary: "mcp [--directory d] [--log-file f]   MCP server (stdio): resource tools, discovery, learnings, captures",
    load: () => import("@opencode-builtins/core/mcp/cli"),
  },
  init: {
    summary: "init [dir] [--mcp] [--dry-run]   add opencode-builtins to opencode.json(c), scaffold .opencode/",
    load: () => import("@opencode-builtins/core/init/cli"),
  },
  learnings: {
    summary: "learnings list [--kind k] [--json] | learnings delete <id> | learnings clear --yes   session learnings",
    load: () => import("@opencode-builtins/core/learning/cli"),
  },
  capture: {
    summary:
      "capture list [--failed] [--tool t] [--json] | capture show <callID> | capture clear --yes   tool calls captured",
    load: () => import("@opencode-builtins/core/capture/cli"),
  },
  recovery: {
    summary: "recovery list | recovery resume <id> | recovery dismiss <id>   sessions interrupted by a crash",
    load: () => import("@opencode-builtins/core/recovery/cli"),
  },
  audit: {
    summary: "audit <npm-name | dir> [--json]   static AST analysis of a plugin for dangerous APIs (exit 1: critical)",
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
  if (!name || name === "--help" || name === "-h" || name === "help") {
    io.out(USAGE())
    return name ? Exit.ok : Exit.usage
  }
  if (name === "--version" || name === "-v" || name === "version") {
    io.out(`opencode-builtins ${VERSION}\n`)
    return Exit.ok
  }
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
