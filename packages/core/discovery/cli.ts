import { loadOptions, sectionEnabled, validSection } from "../options"
import { ResourceLoader } from "../resource/loader"
import { ResourcePolicy } from "../resource/policy"
import { directoryProblem, Exit, parseCommand, type CliIO, worktreeOf } from "../util/cli"
import { errorMessage } from "../util/error"
import { Logger } from "../util/log"
import { DiscoveryCacheFile } from "./cache"
import { DiscoveryDirectories } from "./directories"
import { DynamicDiscovery } from "./discover"
import { DiscoveryFormat } from "./format"
import { Discovery } from "./schema"

const USAGE = `usage:
  opencode-builtins discover "<prompt>" [--agent <name>] [--json]
      What discovery suggests for <prompt> in the current directory: the matched agents, commands, skills, output
      styles and project resources, and the text added to the prompt. --json prints the DynamicDiscoveryResult.
  opencode-builtins discover --list [--agent <name>] [--json]
      Everything discovered (after precedence), with shadowed entries, entries OpenCode's configuration turns off or
      denies, skipped files and slow or broken folders (also when discovery is turned off, which it then says).
--agent: the OpenCode agent the prompt goes to, whose permission.skill and permission.task rules apply (default: the
configuration's default_agent, else build).
Honours the "discovery" (and "resources") section of .opencode/opencode-builtins.json (an invalid value is named on
stderr and its default used), and what OpenCode's own
configuration (opencode.json[c]) says of agents, commands and skills. With a
.opencode-security.json policy, what it protects (read or llm, for its lowest role) is not shown.
Parsed definitions are cached in ${DiscoveryCacheFile.NAME} of the project's .opencode/builtins-local/ folder (deleting it
is safe: it is rebuilt on the next run).
Exit: 0 done (also when nothing matched or discovery is disabled), 1 when the scan timed out or failed, 2 bad usage.
`

/** What the command takes (`parseCommand`); the help text lists the same (util/cli.test.ts). */
export const SPEC = {
  options: { json: { type: "boolean" }, list: { type: "boolean" }, agent: { type: "string" } },
  positionals: { max: Infinity, what: "prompt" },
} as const

/**
 * `opencode-builtins discover …`.
 *
 * @example
 * await run(["write the release notes", "--json"], io) // prints the DynamicDiscoveryResult as JSON
 */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const args = parseCommand("discover", argv, io, SPEC, USAGE)
  if (typeof args === "number") return args
  const prompt = args.positionals.join(" ").trim()
  if (!args.values.list && !prompt) {
    io.err(`discover: give a prompt to match, or --list\n\n${USAGE}`)
    return Exit.usage
  }
  if (args.values.list && prompt) {
    io.err(`discover: --list takes no prompt\n\n${USAGE}`)
    return Exit.usage
  }
  const agent = args.values.agent?.trim()
  if (args.values.agent !== undefined && !agent) {
    io.err(`discover: --agent needs an agent's name\n\n${USAGE}`)
    return Exit.usage
  }

  const problem = directoryProblem(io.cwd)
  if (problem) {
    io.err(`discover: ${problem}\n`)
    return Exit.usage
  }
  const settings = readSettings(io)
  const worktree = worktreeOf(io.cwd) ?? io.cwd
  const policy = await ResourcePolicy.open(io.cwd, worktree, DiscoveryDirectories.home(io.env))
  if (policy.notice) io.err(`discover: ${policy.notice}\n`)
  const loader =
    settings.resources === false
      ? undefined
      : ResourceLoader.create(
          { directory: io.cwd, worktree, log: Logger.silent, ...policy.host },
          { persistCache: false },
        )
  try {
    const engine = DynamicDiscovery.create({
      directory: io.cwd,
      worktree,
      env: io.env,
      host: policy.host,
      config: settings.discovery,
      resources: loader ? async () => (await loader.index()).resources.values() : undefined,
      cacheFile: DiscoveryCacheFile.location(io.cwd, worktree),
    })
    try {
      if (args.values.list)
        return await list(engine, io, args.values.json === true, agent, settings.discovery.enabled === false)
      const result = await engine.gather(prompt, { agent })
      if (args.values.json) io.out(JSON.stringify(result, null, 2) + "\n")
      else io.out(human(result))
      return result.skipReason === "timeout" || result.skipReason === "filesystem_error" ? Exit.findings : Exit.ok
    } finally {
      await engine.flush()
    }
  } finally {
    await loader?.dispose()
    policy.close()
  }
}

async function list(
  engine: DynamicDiscovery.Engine,
  io: CliIO,
  json: boolean,
  agent: string | undefined,
  disabled: boolean,
): Promise<number> {
  const cat = await engine.catalogue({ agent })
  if (json) {
    const { scans: _scans, ...rest } = cat
    io.out(JSON.stringify(disabled ? { disabled: true, ...rest } : rest, null, 2) + "\n")
  } else {
    // The list is what discovery would find; said plainly when nothing of it is suggested.
    if (disabled) io.out(`${DISABLED} Nothing is suggested in prompts; what it would find:\n`)
    for (const type of Discovery.RESOURCE_TYPES) {
      const items = cat.items.filter((i) => i.resourceType === type)
      if (!items.length) continue
      io.out(`${TITLES[type]}:\n`)
      for (const i of items) io.out(`  ${i.name}  [${i.source}]  ${DiscoveryFormat.display(i.filePath)}\n`)
    }
    if (cat.resources.length) {
      io.out(`Project resources:\n`)
      for (const r of cat.resources) io.out(`  ${r.id}  [${r.type}]  ${r.name}\n`)
    }
    for (const s of cat.shadowed)
      io.out(`shadowed  ${DiscoveryFormat.display(s.item.filePath)} (by ${DiscoveryFormat.display(s.by)})\n`)
    for (const l of cat.left)
      io.out(`left out  ${TITLES[l.item.resourceType].toLowerCase().replace(/s$/, "")} ${l.item.name}: ${l.reason}\n`)
    io.out(footer(cat.stats, cat.degraded, cat.problems))
  }
  return cat.degraded.length && cat.items.length + cat.resources.length === 0 ? Exit.findings : Exit.ok
}

const DISABLED = `Discovery is turned off by "discovery": { "enabled": false }.`

const TITLES: Record<Discovery.ResourceType, string> = {
  agent: "Agents",
  command: "Commands",
  skill: "Skills",
  outputStyle: "Output styles",
}

function human(result: Discovery.DynamicDiscoveryResult): string {
  const lines: string[] = []
  if (result.skipped) {
    lines.push(`Discovery skipped: ${result.skipReason}${result.error ? ` (${result.error})` : ""}`)
    if (result.skipReason === "disabled") lines.push(DISABLED)
    if (result.skipReason === "no_resources_found")
      lines.push("No agents, commands, skills, output styles or project resources were found.")
  } else if (result.context) {
    const c = result.context
    const rows: [string, readonly { name: string; score: number; matched: readonly string[] }[]][] = [
      ["Agents", c.matchedAgents.map((m) => ({ name: m.item.name, score: m.score, matched: m.matchedKeywords }))],
      ["Commands", c.matchedCommands.map((m) => ({ name: m.item.name, score: m.score, matched: m.matchedKeywords }))],
      ["Skills", c.matchedSkills.map((m) => ({ name: m.item.name, score: m.score, matched: m.matchedKeywords }))],
      [
        "Output styles",
        c.matchedOutputStyles.map((m) => ({ name: m.item.name, score: m.score, matched: m.matchedKeywords })),
      ],
      [
        "Project resources",
        c.matchedResources.map((m) => ({ name: m.resource.id, score: m.score, matched: m.matchedKeywords })),
      ],
    ]
    for (const [title, list] of rows) {
      if (!list.length) continue
      lines.push(`${title}:`)
      for (const m of list) lines.push(`  ${m.name}  score ${m.score}  (matched: ${m.matched.join(", ")})`)
    }
    const text = DiscoveryFormat.context(c)
    if (text) lines.push("", "Added to the prompt:", text)
    else lines.push("Nothing matched this prompt; nothing would be added to it.")
  }
  let out = lines.join("\n") + "\n"
  if (result.stats) out += footer(result.stats, result.degraded ?? [], [])
  else if (result.degraded?.length) out += footer(undefined, result.degraded, [])
  return out
}

function footer(
  stats: Discovery.Stats | undefined,
  degraded: readonly Discovery.Degraded[],
  problems: readonly Discovery.FileProblem[],
) {
  const lines: string[] = []
  if (stats)
    lines.push(
      `${stats.discovered} item(s) from ${stats.directories} folder(s), ${stats.resources} project resource(s), in ${stats.durationMs} ms`,
    )
  for (const d of degraded)
    lines.push(`${d.reason === "timeout" ? "timed out" : "failed   "}  ${d.source}${d.error ? `: ${d.error}` : ""}`)
  for (const p of problems)
    lines.push(
      `${p.severity === "warning" ? "lenient  " : "skipped  "}  ${DiscoveryFormat.display(p.path)}: ${p.error}`,
    )
  return lines.length ? lines.join("\n") + "\n" : ""
}

/** The project's options file (shared with the plugin), as far as discovery needs it; problems go to stderr. */
function readSettings(io: CliIO): { discovery: Discovery.ConfigInput; resources?: false } {
  const { options, error } = loadOptions({ directory: io.cwd, worktree: worktreeOf(io.cwd) }, undefined)
  if (error) io.err(`discover: ${error}\n`)
  const log: Logger = {
    ...Logger.silent,
    warn: (m) => io.err(`discover: ${m}\n`),
    error: (m) => io.err(`discover: ${m}\n`),
  }
  return {
    discovery: {
      ...validSection(Discovery.Config, options.discovery, "discovery", log),
      enabled: sectionEnabled(options.discovery),
    },
    resources: sectionEnabled(options.resources) ? undefined : false,
  }
}

/** The git worktree root above `dir` (OpenCode's worktree), else `dir`. */
