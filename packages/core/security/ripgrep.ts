import crypto from "crypto"
import fs from "fs"
import path from "path"
import { Sandbox } from "./sandbox"

/**
 * Keeps OpenCode's own ripgrep-based tools (`grep`, `glob`, `list`, the file picker) from reading protected files
 * at all: ripgrep reads extra arguments from the file named by `RIPGREP_CONFIG_PATH`, so the security layer sets it,
 * in the OpenCode process, to a file of exclusion globs. Globs anchored to ripgrep's working folder are written for
 * every folder a search could start in (each suffix of a protected path), so a search from the project root, a
 * sub-folder or a parent excludes exactly the protected paths, and a same-named file elsewhere only when it sits at
 * the same place below the search's own folder. The user's own `RIPGREP_CONFIG_PATH` file is kept (its lines come
 * first). An `include` glob given to a search overrides exclusions in ripgrep, so the guard refuses include globs
 * that select protected files; output filtering stays as the last line.
 *
 * @example
 * SecurityRipgrep.set("guard-1", SecurityRipgrep.globs([{ path: "/repo/.env", dir: false }]))
 * process.env.RIPGREP_CONFIG_PATH // "/tmp/opencode-builtins-rg-…/config"
 */
export namespace SecurityRipgrep {
  export const ENV = "RIPGREP_CONFIG_PATH"

  /** One config file per environment object (OpenCode's `process.env`; tests pass their own). */
  type State = { owners: Map<string, string[]>; file?: string; original?: string; installed: boolean }
  const states = new WeakMap<object, State>()
  const stateOf = (env: object) => {
    let state = states.get(env)
    if (!state) states.set(env, (state = { owners: new Map(), installed: false }))
    return state
  }

  /**
   * Exclusion globs for protected entries: every suffix of each path, anchored (`/a/b/.env`, `/b/.env`, `/.env`), and
   * for folders also everything below them.
   *
   * @example
   * SecurityRipgrep.globs([{ path: "/r/secrets", dir: true }]) // ["!/r/secrets", "!/r/secrets/**", "!/secrets", …]
   */
  export function globs(entries: { path: string; dir: boolean }[]): string[] {
    // Entries of one folder share their globs (`/a/{x,y}` for `/a/x` and `/a/y`): ripgrep refuses a set of globs
    // whose compiled form passes its size limit, and then every search finds nothing.
    const groups = new Map<string, { parent: string[]; files: Set<string>; dirs: Set<string> }>()
    for (const e of entries) {
      const parts = e.path.split("/").filter(Boolean)
      if (!parts.length) continue
      const parent = parts.slice(0, -1)
      const key = parent.join("/")
      let group = groups.get(key)
      if (!group) groups.set(key, (group = { parent, files: new Set(), dirs: new Set() }))
      ;(e.dir ? group.dirs : group.files).add(escape(parts.at(-1)!))
    }
    const either = (names: Set<string>) => (names.size === 1 ? [...names][0] : `{${[...names].sort().join(",")}}`)
    const out = new Set<string>()
    for (const { parent, files, dirs } of groups.values()) {
      const all = new Set([...files, ...dirs])
      for (let i = 0; i <= parent.length; i++) {
        const head =
          "/" +
          parent
            .slice(i)
            .map((p) => escape(p) + "/")
            .join("")
        out.add(`!${head}${either(all)}`)
        if (dirs.size) out.add(`!${head}${either(dirs)}/**`)
      }
    }
    return [...out]
  }

  /**
   * Sets (or replaces) one owner's globs and rewrites the process-wide config file; an empty list removes the owner.
   *
   * @example
   * SecurityRipgrep.set("guard-1", []) // removes guard-1's exclusions
   */
  export function set(owner: string, list: string[], env: NodeJS.ProcessEnv = process.env) {
    const state = stateOf(env)
    if (list.length) state.owners.set(owner, list)
    else state.owners.delete(owner)
    if (!state.installed) {
      if (!state.owners.size) return
      state.original = env[ENV]
      state.installed = true
    }
    write(env, state)
  }

  /**
   * The config file in force for `env` (ours, holding the exclusions), when one was written.
   *
   * @example
   * SecurityRipgrep.file() // "/tmp/opencode-builtins-0/ripgrep-Ab12/config"
   */
  export function file(env: NodeJS.ProcessEnv = process.env): string | undefined {
    const state = states.get(env)
    return state?.installed ? state.file : undefined
  }

  /** The user's own config file, when one was set before ours. */
  export function userConfig(env: NodeJS.ProcessEnv = process.env): string | undefined {
    return states.get(env)?.original ?? (states.get(env) ? undefined : env[ENV])
  }

  function write(env: NodeJS.ProcessEnv, state: State) {
    const { owners, original } = state
    const lines: string[] = []
    if (original) {
      try {
        lines.push(
          ...fs
            .readFileSync(original, "utf8")
            .split("\n")
            .filter((l) => l.trim() && !l.startsWith("#")),
        )
      } catch {
        // The user's file is gone or unreadable: ripgrep would have ignored it with a warning too.
      }
    }
    // One line is one argument: a line break inside a glob (none from `globs`, whatever the names) would add arguments
    // of its own (`--pre=…`), so any left is written as `?`.
    for (const list of owners.values()) for (const glob of list) lines.push(`--glob=${glob.replace(/[\n\r]/g, "?")}`)
    if (!state.file) {
      const dir = fs.mkdtempSync(path.join(Sandbox.privateFolder(), "ripgrep-"))
      state.file = path.join(dir, "config")
    }
    const temp = `${state.file}.${crypto.randomBytes(4).toString("hex")}`
    fs.writeFileSync(temp, lines.join("\n") + "\n", { mode: 0o644 })
    fs.renameSync(temp, state.file)
    env[ENV] = state.file
  }

  /**
   * Glob metacharacters in a path name are escaped so they match literally. The config file holds one argument per
   * line and ripgrep trims white space around each line, so a line break in a name (`sub/.env` + "\n--pre=sh" would
   * make ripgrep run `sh` on every file it searches, on the host) and white space at its end never reach the file: each
   * such character is written as `?` per byte of its UTF-8 form (ripgrep's `?` matches one byte), which matches it and
   * any other byte there: a same-named neighbour may be excluded too, never the other way round.
   */
  export function escape(name: string) {
    return name
      .replace(/[\\*?[\]{}!,]/g, (c) => `\\${c}`)
      .replace(/\p{Cc}/gu, anyBytes)
      .replace(/\s+$/u, anyBytes)
  }
  const anyBytes = (text: string) => "?".repeat(Buffer.byteLength(text))
}
