import os from "os"
import path from "path"
import { fileURLToPath } from "url"
import type { BuiltinFeature } from "../builtins/feature"
import { DiscoveryLocate } from "../discovery/locate"
import { LocalState } from "../learning/local"
import { LocalSeal } from "../learning/seal"
import { errorMessage } from "../util/error"
import { OpenCode } from "../opencode"
import { validSection } from "../options"
import { SecurityGuard } from "./guard"
import { SecurityHooks } from "./hooks"
import { SecurityHostTools } from "./host-tools"
import { SecurityMcp } from "./mcp"
import { SecurityPythonPath } from "./python-path"
import { SecuritySearchPath } from "./search-path"
import { SecurityTemplateShell } from "./template-shell"
import { SecurityTools } from "./tools"

/**
 * The PATH OpenCode's process started with, before any instance left entries out (`SecuritySearchPath.strip`), and the
 * PATH the last one left: a PATH changed since by someone else is taken as the new original.
 */
let originalPath: string | undefined
let strippedPath: string | undefined

/** The folder core's code lives in: read-only for the agent (changed code would switch the layer off). */
const CORE_PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..") + path.sep

/**
 * The security layer: OpenCode's hooks mapped to the rules in `SecurityHooks`. It also installs `host.access`,
 * `host.accessVersion` and `host.segments` for the other features. Listed first, so its inbound hooks run first and
 * its outbound hooks last.
 */
export const SecurityFeature: BuiltinFeature & {
  pluginFiles(list: unknown): string[]
  configuredHostFiles(config: { plugin?: unknown; mcp?: unknown }, directory: string): Promise<string[]>
} = {
  /**
   * The files of the plugins a configuration's `plugin` list names by path (`file://` URLs or absolute paths; an entry
   * may be `[specifier, options]`); package names are left out (OpenCode's cache holds them, protected already).
   *
   * @example
   * SecurityFeature.pluginFiles(["opencode-builtins", "file:///repo/tools/p.ts"]) // ["/repo/tools/p.ts"]
   */
  pluginFiles(list) {
    if (!Array.isArray(list)) return []
    return list.flatMap((entry) => {
      const spec = Array.isArray(entry) ? entry[0] : entry
      if (typeof spec !== "string") return []
      if (spec.startsWith("file:"))
        try {
          return [fileURLToPath(spec)]
        } catch {
          return []
        }
      return path.isAbsolute(spec) ? [spec] : []
    })
  },
  /**
   * The host paths OpenCode's configuration has it load or start outside the sandbox at its next start, which no role
   * may write and which a command may not create (`SecurityGuard.protectHost`): plugins named by path, the files a
   * local MCP server runs (`SecurityMcp.localFiles`) and what its package runner or bare command name resolves to,
   * present or not (`SecurityMcp.resolvedPaths`), and what its language's launcher runs first or as its code, present
   * or not (`SecurityMcp.launcherPaths`: Python modules and package initialisers, a virtual environment in the
   * project, a `go run` package folder, what `cargo run` builds and the cargo configuration up the tree, the go
   * command's and cargo's user configuration), and for each folder inside the project a Python server has on `sys.path`
   * before the standard library (`SecurityMcp.pythonFolders`) the entry `<folder>/*.py` (`SecurityPythonPath.entry`):
   * every importable top-level name there, present or not, since a new `json.py` would shadow the standard library's.
   *
   * @example
   * await SecurityFeature.configuredHostFiles({ mcp: { s: { command: ["npx", "-y", "my-mcp"] } } }, "/repo")
   * // [..., "/repo/node_modules/.bin/my-mcp", "/repo/node_modules/my-mcp/", ..., "/node_modules/my-mcp/"]
   */
  async configuredHostFiles(config, directory) {
    const holds = await SecurityMcp.launcherHolds(config.mcp, { directory })
    return [
      ...SecurityFeature.pluginFiles(config.plugin),
      ...(await SecurityMcp.localFiles(config.mcp, { directory })),
      ...SecurityMcp.resolvedPaths(config.mcp, { directory }),
      ...holds.paths,
      ...holds.modules.map(SecurityPythonPath.entry),
    ]
  },
  id: "builtin-tool-security",
  section: "security",
  async init({ options, log, host, native, expose }) {
    const config = validSection(SecurityGuard.Config, options, "security", log)
    const worktree = host.worktree || host.directory
    // The built-ins' local state (learnings injected into later sessions, captured calls, crash heartbeats) and their
    // cache folder (the resource index of every role's sessions) are written and read by OpenCode's process only: the
    // agent could otherwise plant a "learning" every later session obeys, or read what another role's session could.
    // Their state folder keeps when the seal began (LocalSeal.epoch): changed, planted files would pass for old ones.
    const [local, cache, state] = LocalState.hidden(LocalState.root(host.directory, worktree))
    // Made before the layer looks at the host paths it protects (see `LocalState.ensureCache`).
    LocalState.ensureCache()
    // The key sealing the local state (LocalSeal) exists before any command can run: a file a command writes is then
    // never older than the key, so it is never taken for one an earlier version wrote.
    try {
      LocalSeal.key()
    } catch (error) {
      log.warn("the key sealing the built-ins' local state cannot be used", { error: errorMessage(error) })
    }
    const guard = await SecurityGuard.create({
      ...config,
      directory: host.directory,
      worktree,
      log,
      protect: [
        ...SecurityGuard.hostProtected(host.directory, worktree),
        CORE_PACKAGE,
        ...(host.code ?? []).map((dir) => path.resolve(dir) + path.sep),
      ],
      writable: SecurityGuard.hostWritable(),
      ensure: [local, cache, state],
      // OpenCode's own records (sessions of every project and role, snapshots, logs, saved outputs, credentials).
      hide: [local, cache, state, ...SecurityGuard.hostHidden()],
      // And every other project's local state folder inside this one, at any depth, or above it (a nested repository,
      // a subfolder session): it holds what that project's sessions of every role saw.
      hideNamed: [LocalState.DIR],
    })
    // PATH entries a sandboxed command can write but that cannot be held read-only without the project or the home
    // (relative ones, folders in the project): OpenCode's own lookups on the host (git for its snapshot, rg, the shell)
    // stop using them; the agent's commands keep them. The PATH OpenCode started with is kept once per process, since
    // each project's instance strips its own.
    if (originalPath === undefined || process.env.PATH !== strippedPath) originalPath = process.env.PATH ?? ""
    let shellPath: string | undefined
    const home = process.env.HOME || os.homedir()
    const unsafe = SecuritySearchPath.folders({ PATH: originalPath }, { root: guard.root, home }).unsafe
    if (unsafe.length && guard.active() && guard.status().sandbox.mode !== "off") {
      shellPath = originalPath
      process.env.PATH = strippedPath = SecuritySearchPath.strip(process.env.PATH ?? "", { root: guard.root, home })
      log.warn(
        `[security] PATH entries a sandboxed command could plant programs in (${unsafe.join(", ")}) are left out of OpenCode's own PATH, which finds the programs OpenCode starts outside the sandbox (git, rg); shell commands keep them.`,
      )
    }
    // The index of protected files (copies, hard links) is built in the background; hooks wait for the first build,
    // at most 3 s, so the first prompts are scanned against it without delaying OpenCode's start.
    let warm: Promise<unknown> | undefined = Promise.race([guard.ready(), Bun.sleep(3000)]).then(
      () => (warm = undefined),
    )
    const ready = () => warm
    host.access = async (target, op, opts) => {
      await ready()
      return guard.access(target, op, "builtin-tool", opts)
    }
    host.accessVersion = () => guard.accessVersion()
    host.accessScope = () => LocalState.guardScope(guard)
    host.exclusive = (work) => guard.exclusive(work)
    host.segments = () => guard.segments()
    host.sandbox = async () => {
      await ready()
      return guard.helper()
    }
    // The fork may make parts native one by one; those parts are then left to it.
    const pluginTools = !native("plugin-tool-guard")
    const mcp = !native("mcp-security-policy")
    let mcpServers: string[] = []
    const isMcpTool = (tool: string) =>
      OpenCode.MCP_RESOURCE_TOOLS.has(tool) || SecurityMcp.serversOf(tool, mcpServers).length > 0
    const skip = (tool: string) => !SecurityTools.FILE_TOOLS.has(tool) && (isMcpTool(tool) ? !mcp : !pluginTools)
    // Where OpenCode finds skills and agents: `skill` and `task` calls naming one defined in a protected file are
    // refused, and protected ones leave the tool descriptions and the system prompt.
    let locateConfig: DiscoveryLocate.Config = {}
    let locator: DiscoveryLocate.Locator | undefined
    const locate = () =>
      (locator ??= DiscoveryLocate.create({
        directory: host.directory,
        worktree,
        config: locateConfig,
      }))
    const strip = async (text: string) => {
      let out = text
      for (const r of await locate().redactions(host)) for (const t of r.texts) if (t) out = out.replaceAll(t, "")
      return out
    }
    const hooks = SecurityHooks.create({
      guard,
      shellPath,
      skip,
      ready,
      item: (kind, name) => locate().refusal(kind, name, host),
      describe: (_tool, description) => strip(description),
      definition: async (name) => (await locate().skill(name)).candidates.map((c) => c.file),
    })

    expose?.({ guard, security: hooks, ready })
    return {
      ...hooks,
      async config(cfg) {
        const c = cfg as { mcp?: Record<string, unknown>; shell?: unknown; plugin?: unknown } & DiscoveryLocate.Config
        mcpServers = Object.keys(c.mcp ?? {})
        // Plugins the configuration names by path (OpenCode resolves `./x.ts` against the config file to a file URL):
        // OpenCode imports them at its next start, outside the sandbox, so they are as protected as the plugin folders.
        // So are the files a local MCP server runs (OpenCode starts it at every start, outside the sandbox).
        // So is what a server's package runner or bare command name resolves to, present or not, up to `/`.
        // And every importable name of a folder a Python server has on sys.path before the standard library.
        guard.protectHost(await SecurityFeature.configuredHostFiles(c, host.directory))
        // The package.json files whose own bin `npx <name>` would run: a bin of that name they gain is undone.
        guard.watchPackageBins(SecurityMcp.packageBins(c.mcp, { directory: host.directory }))
        // Definitions a command of a session that ended mid-command left changed were moved aside at this start, but
        // OpenCode may have read them already: out of the live configuration for this session (S5-5).
        const live = cfg as {
          command?: Record<string, unknown>
          agent?: Record<string, unknown>
          mode?: Record<string, unknown>
        }
        for (const { kind, name } of guard.recoveredDefinitions()) {
          const tables =
            kind === "command" ? [live.command] : kind === "agent" || kind === "mode" ? [live.agent, live.mode] : []
          for (const table of tables)
            if (table && typeof table === "object" && name in table) {
              delete table[name]
              log.warn(
                `[security] the ${kind} "${name}" was moved aside at start (changed during a command of a session that ended before the command did): it is left out of this session`,
              )
            }
        }
        locateConfig = { skills: c.skills, agent: c.agent }
        // Skill folders only the configuration names: their templates may not gain a shell command either.
        const skillPaths = DiscoveryLocate.VERSIONS.flatMap((v) =>
          DiscoveryLocate.skillPaths({ directory: host.directory, worktree, config: locateConfig }, v),
        )
        guard.watchTemplates([...new Set(skillPaths)].map((folder) => ({ folder, kind: "skill" as const })))
        locator = undefined
        guard.setMcpServers(mcpServers)
        // OpenCode 1.14+ lets the configuration choose the shell commands run with.
        if (typeof c.shell === "string" && c.shell) guard.setShell(c.shell)
        // OpenCode's own formatters and language servers run outside the sandbox and start project code; OpenCode
        // reads its live configuration after this hook, so they are turned off here while commands are contained.
        if (guard.active()) {
          const off = SecurityHostTools.decide(c as Record<string, unknown>, guard.status().sandbox)
          const changed = SecurityHostTools.apply(c as Record<string, unknown>, off)
          if (changed.length) {
            log.warn(SecurityHostTools.message(changed))
            guard.audit?.logSecurityEvent({
              action: "config-changed",
              source: "policy",
              tool: changed.join(","),
              reason: SecurityHostTools.message(changed),
            })
          }
          const kept = off.filter((k) => !changed.includes(k))
          if (kept.length)
            log.warn(
              `[security] OpenCode's configuration could not be changed: its ${kept.join(" and ")} setting stays on and runs outside the sandbox.`,
            )
        }
        // The shell lines of the configuration's command templates, and of skills (every skill is also a command):
        // OpenCode runs them itself, outside the sandbox and before any hook, when the user runs the command; a line
        // naming a project script runs what the agent left there. They run inside the sandbox instead (AS4).
        if (guard.active()) {
          await ready()
          await SecurityTemplateShell.contain(cfg as Record<string, unknown>, {
            guard,
            skills: () => locate().all("skill"),
            protectedSkill: (name) => locate().refusal("skill", name, host),
            worktree: host.worktree,
            log,
          })
        }
        // Agents defined in protected files: their description and prompt leave the live configuration, which is
        // where OpenCode builds the task tool's list of agents from (1.18 appends that list after tool.definition)
        // and an agent's system prompt. The task tool refuses them anyway.
        if (guard.active() && c.agent && typeof c.agent === "object") {
          await ready()
          for (const [name, agent] of Object.entries(c.agent)) {
            if (!agent || typeof agent !== "object") continue
            const why = await locate()
              .refusal("agent", name, host)
              .catch(() => undefined)
            if (!why) continue
            const entry = agent as Record<string, unknown>
            try {
              entry.description = "(hidden: the security policy protects its definition)"
              if (typeof entry.prompt === "string") entry.prompt = ""
            } catch {
              // A frozen entry: the task tool still refuses the agent.
            }
            guard.audit?.logSecurityEvent({
              action: "redact",
              source: "policy",
              tool: "task",
              reason: `agent '${name}': ${why}`,
            })
          }
        }
      },
    }
  },
}
