import { spawnSync } from "child_process"
import fs from "fs"
import path from "path"
import { SecurityAccess } from "./access"
import type { SecurityConfig } from "./config"

/**
 * Whether a git repository's object store holds protected paths: files committed (on any ref) or staged before the
 * policy protected them stay readable through `git show`, `git log -p`, `git diff --cached` and the like, which no
 * file permission covers. The answer is cached per repository until its refs, index or the policy change.
 *
 * @example
 * SecurityHistory.held("/repo", SecurityHistory.pathspecs(config, "viewer", "/repo")) // "/repo/.env" or undefined
 */
export namespace SecurityHistory {
  const cache = new Map<string, { key: string; held?: string }>()

  /**
   * Git pathspecs (`:(glob)…`) for the rules that protect content (read or llm) from `role`, relative to the
   * repository's top folder.
   *
   * @example
   * SecurityHistory.pathspecs(config, "viewer", "/repo") // [":(glob)**\/.env*", ":(glob)secrets/**", …]
   */
  export function pathspecs(config: SecurityConfig.Loaded, role: string, top: string): string[] {
    const out = new Set<string>()
    const magic = config.nocase ? ":(glob,icase)" : ":(glob)"
    for (const rule of config.rules) {
      if (rule.implicit) continue
      if (!SecurityAccess.denies(rule, "read", role) && !SecurityAccess.denies(rule, "llm", role)) continue
      if (!rule.file) continue
      const pattern = rule.pattern
        .trim()
        .replace(/^(\.\/)+/, "")
        .replace(/\/+$/, "")
      if (!pattern || pattern.startsWith("/") || pattern.startsWith("~")) continue
      const base = path.relative(top, path.dirname(rule.file)).split(path.sep).join("/")
      if (base.startsWith("..")) continue
      const prefix = base ? `${base}/` : ""
      const anchored = rule.pattern.trim().startsWith("./") || pattern.includes("/")
      const spec = anchored ? `${prefix}${pattern}` : `${prefix}**/${pattern}`
      out.add(`${magic}${spec}`)
      if (rule.type === "directory") out.add(`${magic}${spec}/**`)
    }
    return [...out]
  }

  /**
   * The first protected path the repository holding `cwd` has in its index or in the history of any ref, as an
   * absolute path; undefined when none (or when `cwd` is not in a repository).
   */
  export function held(
    cwd: string,
    specs: string[],
    policyVersion = 0,
    options: { gitDir?: string } = {},
  ): string | undefined {
    if (!specs.length) return undefined
    if (options.gitDir) return heldIn(options.gitDir, specs, policyVersion)
    const top = git(cwd, ["rev-parse", "--show-toplevel"])?.trim()
    if (!top) return undefined
    const gitDir = git(top, ["rev-parse", "--absolute-git-dir"])?.trim()
    if (!gitDir) return undefined
    const key = [policyVersion, specs.join("\0"), stamp(path.join(gitDir, "index")), refsStamp(gitDir)].join("|")
    const hit = cache.get(top)
    if (hit && hit.key === key) return hit.held
    const staged = git(top, ["ls-files", "--cached", "-z", "--", ...specs])
      ?.split("\0")
      .find(Boolean)
    let found = staged
    if (!found) {
      const logged = git(top, ["log", "--all", "--format=", "--name-only", "-z", "-1", "--", ...specs])
      found = logged
        ?.split("\0")
        .map((s) => s.trim())
        .find(Boolean)
    }
    const held = found ? path.join(top, found) : undefined
    cache.set(top, { key, held })
    if (cache.size > 64) cache.delete(cache.keys().next().value!)
    return held
  }

  /** The same question for a repository named by its git directory (a bare one, or `GIT_DIR=…`). */
  function heldIn(gitDir: string, specs: string[], policyVersion: number): string | undefined {
    const dir = git(path.dirname(gitDir), ["--git-dir", gitDir, "rev-parse", "--absolute-git-dir"])?.trim()
    if (!dir) return undefined
    const key = [policyVersion, specs.join("\0"), refsStamp(dir), stamp(path.join(dir, "index"))].join("|")
    const hit = cache.get(`git-dir:${dir}`)
    if (hit && hit.key === key) return hit.held
    const logged = git(path.dirname(dir), [
      "--git-dir",
      dir,
      "log",
      "--all",
      "--format=",
      "--name-only",
      "-z",
      "-1",
      "--",
      ...specs,
    ])
    const found = logged
      ?.split("\0")
      .map((s) => s.trim())
      .find(Boolean)
    const held = found ? `${dir}:${found}` : undefined
    cache.set(`git-dir:${dir}`, { key, held })
    return held
  }

  function git(cwd: string, args: string[]): string | undefined {
    const result = spawnSync("git", ["-c", "core.fsmonitor=false", ...args], {
      cwd,
      encoding: "utf8",
      timeout: 20_000,
      maxBuffer: 16 * 1024 * 1024,
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" },
    })
    return result.status === 0 ? result.stdout : undefined
  }

  function stamp(file: string) {
    try {
      const s = fs.statSync(file)
      return `${s.mtimeMs}:${s.size}`
    } catch {
      return "-"
    }
  }

  function refsStamp(gitDir: string) {
    const parts = [stamp(path.join(gitDir, "packed-refs")), stamp(path.join(gitDir, "HEAD"))]
    const walk = (dir: string, depth: number) => {
      let names: fs.Dirent[]
      try {
        names = fs.readdirSync(dir, { withFileTypes: true })
      } catch {
        return
      }
      parts.push(stamp(dir))
      for (const d of names) if (d.isDirectory() && depth < 4) walk(path.join(dir, d.name), depth + 1)
    }
    walk(path.join(gitDir, "refs"), 0)
    return parts.join(",")
  }
}
