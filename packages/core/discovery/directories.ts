import os from "os"
import path from "path"
import { Discovery } from "./schema"

/**
 * The directories discovery scans, in precedence order (first wins for the same type and name):
 *
 * 1. the project — from the working directory up to the worktree root, nearest first — OpenCode's
 *    `.opencode/{agent,agents,command,commands,skill,skills}`, then `.agents/skills`, then Claude Code's
 *    `.claude/{agents,commands,skills,output-styles}`;
 * 2. global — OpenCode's other config folders with the same six: `$XDG_CONFIG_HOME/opencode` (`~/.config/opencode`
 *    by default), `~/.opencode`, `$OPENCODE_CONFIG_DIR` (when absolute); then `~/.claude/{agents,commands,skills,
 *    output-styles}` and `~/.agents/skills`.
 *
 * These are the folders OpenCode 1.2.15, 1.18.3 and 1.18.33 load agents, commands and skills from (`DiscoveryLocate`
 * models them for the security guard; `.agents` skills, which OpenCode loads like Claude Code's, have the origin
 * `claude`). Not read: a configuration's `skills.paths` and `skills.urls`.
 *
 * `~` is the home directory: `$HOME` when set, else `os.homedir()` (Node's rule; Bun's `os.homedir()` reads `$HOME`
 * only once at start-up, so it is consulted only as the fallback).
 *
 * @example
 * const dirs = DiscoveryDirectories.resolve({ directory: "/repo/app", worktree: "/repo" })
 * dirs[0] // { path: "/repo/app/.opencode/agent", type: "agent", scope: "local", origin: "opencode" }
 */
export namespace DiscoveryDirectories {
  /** The spec's directories, `~` meaning the home directory and the others relative to the project. */
  export const GLOBAL_AGENTS_DIR = "~/.claude/agents/"
  export const LOCAL_AGENTS_DIR = ".claude/agents/"
  export const GLOBAL_COMMANDS_DIR = "~/.claude/commands/"
  export const LOCAL_COMMANDS_DIR = ".claude/commands/"
  export const GLOBAL_SKILLS_DIR = "~/.claude/skills/"
  export const LOCAL_SKILLS_DIR = ".claude/skills/"
  export const GLOBAL_STYLES_DIR = "~/.claude/output-styles/"
  export const LOCAL_STYLES_DIR = ".claude/output-styles/"

  type Entry = { rel: string; type: Discovery.ResourceType }

  /** Under `.claude` (home or project). */
  const CLAUDE: Entry[] = [
    { rel: "agents", type: "agent" },
    { rel: "commands", type: "command" },
    { rel: "skills", type: "skill" },
    { rel: "output-styles", type: "outputStyle" },
  ]
  /** Under `.agents` (home or project): skills only, which OpenCode loads like Claude Code's. */
  const AGENTS: Entry[] = [{ rel: "skills", type: "skill" }]
  /** Under every OpenCode config folder: OpenCode accepts singular and plural folder names. */
  const OPENCODE: Entry[] = [
    { rel: "agent", type: "agent" },
    { rel: "agents", type: "agent" },
    { rel: "command", type: "command" },
    { rel: "commands", type: "command" },
    { rel: "skill", type: "skill" },
    { rel: "skills", type: "skill" },
  ]

  export type Place = Omit<Discovery.ResourceDirectory, "exists">

  export type Input = {
    /** The project directory. */
    directory: string
    /** The worktree root; project folders are looked for from `directory` up to it. */
    worktree?: string
    /** Environment for `HOME`, `XDG_CONFIG_HOME` and `OPENCODE_CONFIG_DIR` (default `process.env`). */
    env?: Record<string, string | undefined>
  }

  /**
   * The project folders holding `.opencode`/`.claude`, nearest first (only `directory` outside a worktree).
   *
   * @example
   * DiscoveryDirectories.projectRoots("/repo/app", "/repo") // ["/repo/app", "/repo"]
   */
  export function projectRoots(directory: string, worktree?: string): string[] {
    const start = path.resolve(directory)
    const stop = worktree ? path.resolve(worktree) : undefined
    if (!stop || stop === path.parse(stop).root || !isInside(start, stop)) return [start]
    const roots: string[] = []
    for (let dir = start; ; dir = path.dirname(dir)) {
      roots.push(dir)
      if (dir === stop || dir === path.dirname(dir)) break
    }
    return roots
  }

  /**
   * The home directory: `$HOME` when set (read on every call), else `os.homedir()`.
   *
   * @example
   * DiscoveryDirectories.home({ HOME: "/home/me" }) // "/home/me"
   */
  export function home(env: Record<string, string | undefined> = process.env): string {
    const value = env.HOME
    return value && path.isAbsolute(value) ? value : os.homedir()
  }

  /**
   * OpenCode's global config folder: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`.
   *
   * @example
   * DiscoveryDirectories.opencodeGlobal({ HOME: "/home/me" }) // "/home/me/.config/opencode"
   */
  export function opencodeGlobal(env: Record<string, string | undefined> = process.env): string {
    const xdg = env.XDG_CONFIG_HOME
    const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(home(env), ".config")
    return path.join(base, "opencode")
  }

  /**
   * Every directory to scan, in precedence order.
   *
   * @example
   * DiscoveryDirectories.resolve({ directory: "/repo" }).length // 28 (11 project folders, 17 global)
   */
  export function resolve(input: Input): Place[] {
    const places: Place[] = []
    const seen = new Set<string>()
    const add = (dir: string, entries: Entry[], scope: Discovery.ResourceSource, origin: Discovery.Origin) => {
      for (const e of entries) {
        const p = path.join(dir, e.rel)
        // A home directory that is also the project (or an ancestor of it) is scanned once, as local.
        if (seen.has(p)) continue
        seen.add(p)
        places.push({ path: p, type: e.type, scope, origin })
      }
    }
    for (const root of projectRoots(input.directory, input.worktree)) {
      add(path.join(root, ".opencode"), OPENCODE, "local", "opencode")
      add(path.join(root, ".agents"), AGENTS, "local", "claude")
      add(path.join(root, ".claude"), CLAUDE, "local", "claude")
    }
    const env = input.env ?? process.env
    add(opencodeGlobal(env), OPENCODE, "global", "opencode")
    add(path.join(home(env), ".opencode"), OPENCODE, "global", "opencode")
    const configDir = env.OPENCODE_CONFIG_DIR
    if (configDir && path.isAbsolute(configDir)) add(configDir, OPENCODE, "global", "opencode")
    add(path.join(home(env), ".claude"), CLAUDE, "global", "claude")
    add(path.join(home(env), ".agents"), AGENTS, "global", "claude")
    return places
  }

  /**
   * True when `child` is `parent` or below it.
   *
   * @example
   * DiscoveryDirectories.isInside("/repo/app", "/repo") // true
   */
  export function isInside(child: string, parent: string): boolean {
    const rel = path.relative(parent, child)
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
  }
}
