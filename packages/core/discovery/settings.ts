import os from "os"
import path from "path"
import type { OpenCodeConfig } from "../util/opencode-config"
import { DiscoveryParse } from "./parse"
import { Discovery } from "./schema"

/**
 * What OpenCode's own configuration (`opencode.json[c]`, read by `OpenCodeConfig.sources`) says about the agents,
 * commands and skills discovery suggests, so a suggestion never names what OpenCode would refuse or does not offer:
 *
 * - `agent.<name>`: `disable: true` or `mode: "primary"` (also every legacy `mode.<name>` entry) — OpenCode offers no
 *   subagent of that name, so none is suggested whatever file defines it; an entry with a `description` or `prompt`
 *   and no file of that name is an agent of its own, suggested like one.
 * - `command.<name>` with a `template`: a command of its own, suggested like one when no file defines that name.
 * - `permission.skill` / `permission.task` (and the agent's own `agent.<name>.permission`, legacy `tools.skill` /
 *   `tools.task: false`): a skill or subagent the prompting agent may not use (`deny`, OpenCode's last matching rule
 *   wins, `*` and `?` as wildcards) is not suggested; `ask` still is (OpenCode lists it and asks).
 *
 * The prompting agent is the hook's `agent`, else `default_agent`, else `build`. Decisions are pure (`from`, `decide`).
 *
 * @example
 * const settings = DiscoverySettings.from(OpenCodeConfig.sources({ directory: "/repo" }).sources)
 * DiscoverySettings.evaluate("skill", "deploy", DiscoverySettings.rules(settings, "build")) // "allow" | "ask" | "deny"
 */
export namespace DiscoverySettings {
  export type Action = "allow" | "ask" | "deny"
  export type Rule = { permission: string; pattern: string; action: Action }

  export type AgentEntry = {
    disable?: boolean
    mode?: string
    description?: string
    prompt?: string
    rules: Rule[]
    /** The configuration that set the entry last (a file, or `OPENCODE_CONFIG_CONTENT`). */
    file: string
  }
  export type CommandEntry = { template?: string; description?: string; file: string }

  export type Settings = {
    agents: Map<string, AgentEntry>
    commands: Map<string, CommandEntry>
    /** The top-level `permission` (with legacy `tools`) as OpenCode's rule list, in order. */
    rules: Rule[]
    defaultAgent?: string
  }

  export const EMPTY: Settings = { agents: new Map(), commands: new Map(), rules: [] }

  /**
   * The settings of a list of configurations, lowest precedence first, merged as OpenCode merges them (objects key by
   * key, later values winning).
   *
   * @example
   * DiscoverySettings.from([{ file: "/repo/opencode.json", config: { agent: { reviewer: { disable: true } } } }])
   * //   .agents.get("reviewer")?.disable === true
   */
  export function from(sources: readonly OpenCodeConfig.Source[]): Settings {
    let merged: Record<string, unknown> = {}
    const agentFile = new Map<string, string>()
    const commandFile = new Map<string, string>()
    for (const { file, config } of sources) {
      const picked: Record<string, unknown> = {}
      for (const key of ["agent", "mode", "command", "permission", "tools", "default_agent"])
        if (config[key] !== undefined) picked[key] = config[key]
      for (const name of Object.keys(record(config.agent) ?? {})) agentFile.set(name, file)
      for (const name of Object.keys(record(config.mode) ?? {})) agentFile.set(name, file)
      for (const name of Object.keys(record(config.command) ?? {})) commandFile.set(name, file)
      merged = deepMerge(merged, picked) as Record<string, unknown>
    }

    const agents = new Map<string, AgentEntry>()
    const agentsOf = (entries: unknown, primary: boolean) => {
      for (const [name, raw] of Object.entries(record(entries) ?? {})) {
        const value = record(raw)
        if (!value) continue
        const previous = agents.get(name)
        agents.set(name, {
          disable: typeof value.disable === "boolean" ? value.disable : previous?.disable,
          mode: primary ? "primary" : (text(value.mode) ?? previous?.mode),
          description: text(value.description) ?? previous?.description,
          prompt: text(value.prompt) ?? previous?.prompt,
          rules: [...(previous?.rules ?? []), ...rulesOf(value.tools, value.permission)],
          file: agentFile.get(name) ?? previous?.file ?? "",
        })
      }
    }
    agentsOf(merged.agent, false)
    agentsOf(merged.mode, true)

    const commands = new Map<string, CommandEntry>()
    for (const [name, raw] of Object.entries(record(merged.command) ?? {})) {
      const value = record(raw)
      if (!value) continue
      commands.set(name, {
        template: text(value.template),
        description: text(value.description),
        file: commandFile.get(name) ?? "",
      })
    }
    return {
      agents,
      commands,
      rules: rulesOf(merged.tools, merged.permission),
      defaultAgent: text(merged.default_agent),
    }
  }

  /**
   * The rules that apply to what `agent` may use: the top-level ones, then the agent's own.
   *
   * @example
   * DiscoverySettings.rules(settings, undefined) // the rules of `default_agent`, else of `build`
   */
  export function rules(settings: Settings, agent: string | undefined): Rule[] {
    const own = settings.agents.get(agent ?? settings.defaultAgent ?? "build")?.rules ?? []
    return own.length ? [...settings.rules, ...own] : settings.rules
  }

  /**
   * OpenCode's verdict for using `name` under `permission` (`skill`, `task`): the last rule whose permission and
   * pattern match both wins; none matching is `allow` (OpenCode's default for every agent's `*`).
   *
   * @example
   * DiscoverySettings.evaluate("skill", "deploy-prod", [{ permission: "skill", pattern: "deploy-*", action: "deny" }]) // "deny"
   */
  export function evaluate(permission: string, name: string, list: readonly Rule[]): Action {
    for (let i = list.length - 1; i >= 0; i--) {
      const rule = list[i]
      if (wildcard(permission, rule.permission) && wildcard(name, rule.pattern)) return rule.action
    }
    return "allow"
  }

  /** Why an item is not suggested, for `--list` and the tests. */
  export type Left = { item: Discovery.DiscoveredItem; reason: string }

  /**
   * The items OpenCode would offer `agent`: the scanned `items` (after precedence) with those the settings turn off or
   * deny left out, then the agents and commands defined only in the configuration (`defined`).
   *
   * @example
   * const { items, left } = DiscoverySettings.decide(scanned, DiscoverySettings.defined(settings, home), settings, "build")
   */
  export function decide(
    items: readonly Discovery.DiscoveredItem[],
    defined: readonly Discovery.DiscoveredItem[],
    settings: Settings,
    agent: string | undefined,
  ): { items: Discovery.DiscoveredItem[]; left: Left[] } {
    const list = rules(settings, agent)
    const kept: Discovery.DiscoveredItem[] = []
    const left: Left[] = []
    const names = new Set(items.map((i) => `${i.resourceType}\u0000${i.name}`))
    const all = [...items, ...defined.filter((d) => !names.has(`${d.resourceType}\u0000${d.name}`))]
    for (const item of all) {
      const reason = refusal(item, settings, list)
      if (reason) left.push({ item, reason })
      else kept.push(item)
    }
    return { items: kept, left }
  }

  function refusal(item: Discovery.DiscoveredItem, settings: Settings, list: readonly Rule[]): string | undefined {
    if (item.resourceType === "agent") {
      const entry = settings.agents.get(item.name)
      if (entry?.disable) return `disabled in ${entry.file}`
      if (entry?.mode === "primary") return `a primary agent in ${entry.file}`
      if (evaluate("task", item.name, list) === "deny") return "denied by permission.task"
    }
    if (item.resourceType === "skill" && evaluate("skill", item.name, list) === "deny")
      return "denied by permission.skill"
    return undefined
  }

  /** The items of `defined` kept between calls, so an unchanged entry keeps its identity (and its ranking document). */
  const made = new Map<string, Discovery.DiscoveredItem>()
  const definedItems = new WeakSet<Discovery.DiscoveredItem>()

  /**
   * Whether `item` was defined by a configuration entry (`defined`) rather than read from a file of its own.
   *
   * @example
   * DiscoverySettings.isDefined(DiscoverySettings.defined(settings, where)[0]) // true
   */
  export function isDefined(item: Discovery.DiscoveredItem): boolean {
    return definedItems.has(item)
  }

  /**
   * The agents (with a description or prompt, not disabled, not primary) and commands (with a template) that only the
   * configuration defines, as discovered items whose file is the configuration that defined them. An entry set only
   * by `OPENCODE_CONFIG_CONTENT` has no file and is left out.
   *
   * @example
   * DiscoverySettings.defined(settings, { globalDir: "/home/me/.config/opencode" }) // [{ name: "reviewer", resourceType: "agent", … }]
   */
  export function defined(settings: Settings, where: { globalDir: string }): Discovery.DiscoveredItem[] {
    const out: Discovery.DiscoveredItem[] = []
    const add = (type: Discovery.ResourceType, name: string, description: string, body: string, file: string) => {
      if (!path.isAbsolute(file)) return
      const key = JSON.stringify([type, name, description, body, file])
      let item = made.get(key)
      if (!item) {
        const source = inside(file, where.globalDir) ? "global" : "local"
        item = DiscoveryParse.entry({ name, description, body, filePath: file, type, source, origin: "opencode" })
        if (!item) return
        definedItems.add(item)
        if (made.size > 1000) made.clear()
        made.set(key, item)
      }
      out.push(item)
    }
    for (const [name, entry] of settings.agents)
      if (!entry.disable && entry.mode !== "primary" && (entry.description || entry.prompt))
        add("agent", name, entry.description ?? "", entry.prompt ?? "", entry.file)
    for (const [name, entry] of settings.commands)
      if (entry.template !== undefined) add("command", name, entry.description ?? "", entry.template, entry.file)
    return out
  }

  /** OpenCode's rule list of a `permission` value, after the legacy `tools` switches it overrides. */
  function rulesOf(tools: unknown, permission: unknown): Rule[] {
    const merged: Record<string, unknown> = {}
    for (const [tool, enabled] of Object.entries(record(tools) ?? {}))
      if (typeof enabled === "boolean") merged[tool] = enabled ? "allow" : "deny"
    const perms = typeof permission === "string" ? { "*": permission } : (record(permission) ?? {})
    const all = deepMerge(merged, perms) as Record<string, unknown>
    const out: Rule[] = []
    for (const [key, value] of Object.entries(all)) {
      if (isAction(value)) out.push({ permission: key, pattern: "*", action: value })
      else
        for (const [pattern, action] of Object.entries(record(value) ?? {}))
          if (isAction(action)) out.push({ permission: key, pattern: expandHome(pattern), action })
    }
    return out
  }

  /** OpenCode's wildcard: `*` any run, `?` one character, the rest literal; `"x *"` also matches `"x"`. */
  export function wildcard(input: string, pattern: string): boolean {
    let source = pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")
    if (source.endsWith(" .*")) source = source.slice(0, -3) + "( .*)?"
    return new RegExp(`^${source}$`, "s").test(input)
  }

  function expandHome(pattern: string): string {
    if (pattern === "~") return os.homedir()
    if (pattern.startsWith("~/")) return os.homedir() + pattern.slice(1)
    if (pattern.startsWith("$HOME")) return os.homedir() + pattern.slice(5)
    return pattern
  }

  function isAction(value: unknown): value is Action {
    return value === "allow" || value === "ask" || value === "deny"
  }

  function record(value: unknown): Record<string, unknown> | undefined {
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  }

  function text(value: unknown): string | undefined {
    return typeof value === "string" ? value : undefined
  }

  function inside(file: string, dir: string): boolean {
    const rel = path.relative(dir, file)
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel)
  }

  /** Objects merged key by key (a key keeps its first position), anything else replaced by the later value. */
  function deepMerge(a: unknown, b: unknown): unknown {
    const x = record(a)
    const y = record(b)
    if (!x || !y) return b === undefined ? a : b
    const out: Record<string, unknown> = { ...x }
    for (const [key, value] of Object.entries(y)) out[key] = deepMerge(x[key], value)
    return out
  }
}
