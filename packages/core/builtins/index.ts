import type { Hooks } from "@opencode-ai/plugin"
import { AstFeature } from "../ast/feature"
import { CaptureFeature } from "../capture/feature"
import { CommentCheckerFeature } from "../comment/feature"
import { TodoContinuationFeature } from "../continuation/feature"
import { DiscoveryFeature } from "../discovery/feature"
import { LspFeature } from "../lsp/feature"
import type { Host } from "../host"
import { KnowledgeFeature } from "../knowledge/feature"
import { LearningFeature } from "../learning/feature"
import { LocalState } from "../learning/local"
import { LookAtFeature } from "../look/feature"
import { sectionEnabled, unknownSections, type Options } from "../options"
import { ReadmeFeature } from "../readme/feature"
import { SessionRecoveryFeature } from "../recovery/feature"
import { ResourcesFeature } from "../resource/feature"
import { SecurityError } from "../security/errors"
import { SecurityFeature } from "../security/feature"
import { ProjectFolder } from "../util/folder"
import type { Logger } from "../util/log"
import { compose } from "./compose"
import type { BuiltinFeature, Exposed } from "./feature"
import { BuiltIn } from "./registry"

/**
 * The composition root: every feature built for one host, in one fixed order, and merged into the tools and hook
 * functions OpenCode calls. The external plugin returns the result as its hooks; the fork's glue calls the same
 * functions from OpenCode's seams. No feature rule lives in either of them.
 *
 * Order matters: security first (it installs `host.access` and friends that the others use, its inbound hooks run
 * first and its outbound hooks last), then the resource loader (it installs `host.resources` for discovery), then
 * discovery, the AST tools and the comment checker. Tool capture is listed before security, for its one outbound hook:
 * it then runs after the security layer's, and stores tool output as `scanAndRedact` left it (its inbound hook only
 * notes when a call started).
 *
 * @example
 * const builtins = await Builtins.create(host, { options, logger: (service) => log })
 * builtins.hooks["tool.execute.before"]?.({ tool: "read", sessionID, callID }, { args })
 * builtins.hooks.tool // { "resource-query": …, "ast_grep_search": … }
 */
export namespace Builtins {
  /** The features in composition order. */
  export const FEATURES: readonly BuiltinFeature[] = [
    CaptureFeature,
    SecurityFeature,
    // Early, so its startup report does not wait for the features that index the project; after security, so a call
    // the guard refuses never counts as running.
    SessionRecoveryFeature,
    ResourcesFeature,
    DiscoveryFeature,
    AstFeature,
    CommentCheckerFeature,
    LspFeature,
    ReadmeFeature,
    LookAtFeature,
    LearningFeature,
    KnowledgeFeature,
    TodoContinuationFeature,
  ]

  export type Input = {
    /** The loaded options (`.opencode/opencode-builtins.json`, merged with explicit options). */
    options: Options
    /** A logger for a named part (e.g. `opencode-builtins.security`). */
    logger: (service: string) => Logger
    /** True when the host already provides a feature natively (stock OpenCode: never; the fork: `BuiltIn.has`). */
    native?: (id: string) => boolean
    /** Only these features (default all); the fork builds the ones it makes native. */
    only?: readonly string[]
  }

  export type Instance = {
    /** Tools and hooks in OpenCode's plugin shapes. */
    hooks: Hooks
    /** Ids of the features built, in order. */
    built: string[]
    /** Ids left out because the host provides them natively. */
    skipped: string[]
    /** The security feature's guard and hook rules, when it was built (the fork's seams use them). */
    exposed: Exposed
  }

  /**
   * Builds every feature for `host` and merges their hooks.
   *
   * @example
   * const { hooks, skipped } = await Builtins.create(host, { options: {}, logger: () => Logger.silent })
   */
  export async function create(host: Host, input: Input): Promise<Instance> {
    const native = (id: string) => input.native?.(id) === true
    const active: Hooks[] = []
    const built: string[] = []
    const skipped: string[] = []
    const exposed: Exposed = {}
    // The integration features redact what they store with the security layer's guard, once it is exposed.
    LocalState.bind(host, exposed)
    // Every route (the plugin, the fork, the MCP server) builds here: a section no feature reads is named once.
    unknownSections(input.options, FEATURES, input.logger("opencode-builtins"))
    const unusable = folderProblem(host)
    if (unusable) return refusing(host, input, unusable)
    for (const feature of FEATURES) {
      if (input.only && !input.only.includes(feature.id)) continue
      if (native(feature.id)) {
        skipped.push(feature.id)
        continue
      }
      const section = input.options[feature.section] ?? {}
      if (!sectionEnabled(section)) continue
      active.push(
        await feature.init({
          host,
          options: section,
          all: input.options,
          log: input.logger(`opencode-builtins.${feature.section}`),
          native,
          expose: (parts) => Object.assign(exposed, parts),
        }),
      )
      built.push(feature.id)
    }
    return { hooks: closedWithInstance(host, redactAdded(compose(active), exposed), exposed), built, skipped, exposed }
  }

  /**
   * Why the host's project folder (or its worktree) cannot be used (`ProjectFolder.problem`): OpenCode in a folder
   * whose path is not UTF-8 hands us its U+FFFD reading, a path naming another folder or none.
   */
  function folderProblem(host: Host): string | undefined {
    const directory = ProjectFolder.problem(host.directory)
    if (directory) return directory
    const worktree = host.worktree
    return worktree && worktree !== "/" && worktree !== host.directory ? ProjectFolder.problem(worktree) : undefined
  }

  /**
   * The composition for a project folder that cannot be used: no feature starts (each would read nothing of the
   * project and write its state into a twin folder), and when the security layer would have been built, every tool
   * call is refused with `SecurityError.FolderUnusable` — the project's policy cannot be read, and running as if there
   * were none would fail open. The seams read `exposed.refused` (MCP servers are not started either).
   */
  function refusing(host: Host, input: Input, reason: string): Instance {
    const log = input.logger("opencode-builtins")
    const skipped = FEATURES.filter((f) => (!input.only || input.only.includes(f.id)) && input.native?.(f.id) === true)
    const guarded =
      (!input.only || input.only.includes(SecurityFeature.id)) &&
      input.native?.(SecurityFeature.id) !== true &&
      input.options[SecurityFeature.section]?.enabled !== false
    log.error(`no built-in feature starts: ${reason}${guarded ? "; every tool call is refused" : ""}`)
    if (!guarded) return { hooks: {}, built: [], skipped: skipped.map((f) => f.id), exposed: {} }
    const error = () => new SecurityError.FolderUnusable({ directory: host.directory, reason })
    const hooks: Hooks = {
      async "tool.execute.before"() {
        throw error()
      },
    }
    return { hooks, built: [], skipped: skipped.map((f) => f.id), exposed: { refused: error().message } }
  }

  /**
   * OpenCode disposes a project's instance (`opencode serve` hosting several projects, a configuration reload) and
   * tells every plugin with `server.instance.disposed`: the security layer's process-wide state for that project
   * (its ripgrep exclusions, its sandbox) goes with it, and so do the features' own processes (the language servers,
   * stopped and waited for). Before, a plugin's guard lived as long as the process, and the exclusions of every project
   * it had served stayed in each later search; its language servers ran on in a project nobody served.
   */
  function closedWithInstance(host: Host, hooks: Hooks, exposed: Exposed): Hooks {
    const event = hooks.event
    const dispose = (hooks as { dispose?: () => Promise<void> }).dispose
    hooks.event = async (input) => {
      await event?.(input)
      const e = (input as { event?: { type?: string; properties?: { directory?: string } } }).event
      if (e?.type !== "server.instance.disposed" || e.properties?.directory !== host.directory) return
      try {
        await dispose?.()
      } finally {
        exposed.guard?.close()
      }
    }
    return hooks
  }

  /** Inbound hooks through which features add text to what OpenCode stores (a prompt's parts, a command's parts). */
  export const ADDING = ["chat.message", "command.execute.before"] as const

  /**
   * The security layer's redaction of prompt and command parts runs first (later features see redacted text) and once
   * more after every feature: the parts other features add there (discovery's suggestion quoting a description,
   * knowledge, `/recover`'s outcome) are stored by OpenCode as the last hook leaves them, and OpenCode 1.2.15 sends
   * stored parts to its compaction model without any hook.
   */
  function redactAdded(hooks: Hooks, exposed: Exposed): Hooks {
    const security = exposed.security as Record<string, ((input: any, output: any) => Promise<void>) | undefined>
    const all = hooks as Record<string, unknown>
    for (const name of ADDING) {
      const run = all[name] as ((input: any, output: any) => Promise<void>) | undefined
      const again = security?.[name]
      if (!run || !again || run === again) continue
      all[name] = async (input: unknown, output: unknown) => {
        await run(input, output)
        await again(input, output)
      }
    }
    return hooks
  }

  /** The `hasBuiltIn` registry (see `BuiltIn`). */
  export const has = BuiltIn.has
}

export { BuiltIn } from "./registry"
export { Provided } from "./provided"
export { BuiltinsSeams } from "./seams"
export type { BuiltinFeature, Exposed, FeatureContext } from "./feature"
