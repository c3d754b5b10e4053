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

  const owners = new Map<string, string[]>()
  let file: string | undefined
  let original: string | undefined
  let installed = false

  /**
   * Exclusion globs for protected entries: every suffix of each path, anchored (`/a/b/.env`, `/b/.env`, `/.env`), and
   * for folders also everything below them.
   *
   * @example
   * SecurityRipgrep.globs([{ path: "/r/secrets", dir: true }]) // ["!/r/secrets", "!/r/secrets/**", "!/secrets", …]
   */
  export function globs(entries: { path: string; dir: boolean }[]): string[] {
    const out = new Set<string>()
    for (const e of entries) {
      const parts = e.path.split("/").filter(Boolean)
      for (let i = 0; i < parts.length; i++) {
        const suffix = "/" + parts.slice(i).map(escape).join("/")
        out.add(`!${suffix}`)
        if (e.dir) out.add(`!${suffix}/**`)
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
    if (list.length) owners.set(owner, list)
    else owners.delete(owner)
    if (!installed) {
      if (!owners.size) return
      original = env[ENV]
      installed = true
    }
    write(env)
  }

  /** The user's own config file, when one was set before ours. */
  export function userConfig(): string | undefined {
    return original
  }

  function write(env: NodeJS.ProcessEnv) {
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
    for (const list of owners.values()) for (const glob of list) lines.push(`--glob=${glob}`)
    if (!file) {
      const dir = fs.mkdtempSync(path.join(Sandbox.privateFolder(), "ripgrep-"))
      file = path.join(dir, "config")
    }
    const temp = `${file}.${crypto.randomBytes(4).toString("hex")}`
    fs.writeFileSync(temp, lines.join("\n") + "\n", { mode: 0o644 })
    fs.renameSync(temp, file)
    env[ENV] = file
  }

  /** Glob metacharacters in a path name are escaped so they match literally. */
  function escape(name: string) {
    return name.replace(/[\\*?[\]{}!]/g, (c) => `\\${c}`)
  }
}
