import fs from "fs/promises"
import { readFileSync } from "fs"
import path from "path"
import type { Ignore } from "ignore"
import type picomatchType from "picomatch"
import z from "zod"
import { NamedError } from "../util/error"

// Loaded when first needed (a project with a .gitignore, a search with globs): a search command starts without them.
// Bun's own require, which `bun build` follows: a compiled binary carries them (createRequire's it does not).
const ignore = (options: { ignorecase: boolean }) => (require("ignore") as typeof import("ignore"))(options)
const picomatch = (glob: string, options: picomatchType.PicomatchOptions) =>
  (require("picomatch") as typeof picomatchType)(glob, options)

/**
 * The files an AST search or replace looks at.
 *
 * - `paths` (default: the project directory) are files or directories, relative to the project directory or
 *   absolute. A file named explicitly is always searched (whatever its extension).
 * - Under a directory: files with one of the language's extensions, minus what `.gitignore` files (and
 *   `.git/info/exclude`) exclude, minus every `node_modules` and `.git` directory. Hidden files are searched. A
 *   directory named explicitly is entered even if ignored (its own nested `.gitignore` files still apply).
 *   Symbolic links are not followed; only regular files are read (never FIFOs or devices).
 * - `globs` are picomatch globs: a glob without `/` matches the file name, one with `/` the path relative to the
 *   project directory. Globs starting with `!` exclude. With include globs, a file must match one of them; an
 *   include glob ending in `*.ext` also adds `.ext` files to the language's extensions (e.g. `**\/*.vue` as html).
 * - Files larger than `maxFileBytes` are skipped and counted.
 *
 * @example
 * const found = await AstFiles.collect({ directory: "/repo", extensions: ["ts"], globs: ["src/**", "!**\/*.test.ts"] })
 * found.files // ["/repo/src/a.ts", …] (sorted)
 */
export namespace AstFiles {
  export const MAX_FILE_BYTES = 5 * 1024 * 1024
  const SKIPPED_DIRS = new Set(["node_modules", ".git"])

  export const PathNotFound = NamedError.create(
    "PathNotFound",
    z.object({ path: z.string() }),
    (d) => `path not found: ${d.path}`,
  )
  export const InvalidGlob = NamedError.create(
    "InvalidGlob",
    z.object({ glob: z.string(), reason: z.string() }),
    (d) => `invalid glob ${JSON.stringify(d.glob)}: ${d.reason}`,
  )

  export type Options = {
    /** Project directory: relative paths and globs resolve against it. */
    directory: string
    /** The git worktree root; `.gitignore` files between it and a searched path apply (default: `directory`). */
    worktree?: string
    paths?: string[]
    globs?: string[]
    /** The language's extensions, without dots. */
    extensions: string[]
    maxFileBytes?: number
    /** Denial reason for a path the security policy protects, else undefined. */
    access?: (file: string) => Promise<string | undefined>
    signal?: AbortSignal
  }

  export type Result = {
    files: string[]
    /** Files skipped because the security policy protects them (never read). */
    denied: string[]
    /** Files skipped for size. */
    tooLarge: string[]
    /** Size in bytes of each of `files` (a search balances its work by it). */
    sizes: Map<string, number>
  }

  type Level = { dir: string; rules: Ignore }

  /**
   * Splits `globs` into include and exclude matchers; throws `InvalidGlob` for an empty or malformed glob.
   *
   * @example
   * const { include, exclude } = AstFiles.matchers(["src/**", "!*.test.ts"])
   * exclude[0]("a.test.ts") // true
   */
  export function matchers(globs: string[]) {
    const include: picomatchType.Matcher[] = []
    const exclude: picomatchType.Matcher[] = []
    const extraExtensions: string[] = []
    for (const raw of globs) {
      const negated = raw.startsWith("!")
      const glob = (negated ? raw.slice(1) : raw).trim().replace(/^\.\//, "")
      if (!glob) throw new InvalidGlob({ glob: raw, reason: "empty glob" })
      let matcher: picomatchType.Matcher
      try {
        matcher = picomatch(glob, { dot: true, basename: !glob.includes("/"), strictBrackets: true })
      } catch (error) {
        throw new InvalidGlob({ glob: raw, reason: (error as Error).message })
      }
      ;(negated ? exclude : include).push(matcher)
      const ext = !negated && /\*\.([A-Za-z0-9_+-]+)$/.exec(glob)?.[1]
      if (ext) extraExtensions.push(ext.toLowerCase())
    }
    return { include, exclude, extraExtensions }
  }

  /**
   * Lists the files to search for `options` (sorted), with the protected and oversized ones apart.
   *
   * @example
   * const { files, denied } = await AstFiles.collect({ directory: "/repo", extensions: ["py"], paths: ["src"] })
   */
  export async function collect(options: Options): Promise<Result> {
    const directory = path.resolve(options.directory)
    const worktree = path.resolve(options.worktree ?? directory)
    const { include, exclude, extraExtensions } = matchers(options.globs ?? [])
    const extensions = new Set([...options.extensions, ...extraExtensions].map((e) => e.toLowerCase()))
    const maxBytes = options.maxFileBytes ?? MAX_FILE_BYTES
    const result: Result = { files: [], denied: [], tooLarge: [], sizes: new Map() }
    const seen = new Set<string>()

    const relToProject = (file: string) => path.relative(directory, file).split(path.sep).join("/")
    const globsAccept = (file: string) => {
      const rel = relToProject(file)
      if (exclude.some((m) => m(rel))) return false
      return include.length === 0 || include.some((m) => m(rel))
    }
    const extensionOk = (file: string) => extensions.has(path.extname(file).slice(1).toLowerCase())

    const consider = async (file: string, size: number, explicit: boolean) => {
      if (seen.has(file)) return
      seen.add(file)
      if (!explicit && (!extensionOk(file) || !globsAccept(file))) return
      if (size > maxBytes) {
        result.tooLarge.push(file)
        return
      }
      const denied = await options.access?.(file)
      if (denied) {
        result.denied.push(file)
        return
      }
      result.files.push(file)
      result.sizes.set(file, size)
    }

    const walk = async (dir: string, levels: Level[]) => {
      if (options.signal?.aborted) return
      const own = loadRules(dir)
      const here = own ? [...levels, own] : levels
      let entries: import("fs").Dirent[]
      try {
        entries = await fs.readdir(dir, { withFileTypes: true })
      } catch {
        return // unreadable directory: nothing to search there
      }
      const subdirs: string[] = []
      const found: string[] = []
      for (const entry of entries) {
        const full = path.join(dir, entry.name)
        if (entry.isDirectory()) {
          if (SKIPPED_DIRS.has(entry.name)) continue
          if (ignored(here, full, true)) continue
          if (exclude.length && prunable(relToProject(full))) continue
          subdirs.push(full)
        } else if (entry.isFile()) {
          if (!extensionOk(full) || ignored(here, full, false) || !globsAccept(full)) continue
          found.push(full)
        }
      }
      const sizes = await Promise.all(
        found.map((file) =>
          fs.stat(file).then(
            (s) => s.size,
            () => -1,
          ),
        ),
      )
      await Promise.all(found.map((file, i) => (sizes[i] < 0 ? undefined : consider(file, sizes[i], false))))
      await Promise.all(subdirs.map((sub) => walk(sub, here)))
    }

    // Directory excludes such as `!dist/**` prune the walk instead of testing every file below.
    const pruneMatchers = (options.globs ?? [])
      .filter((g) => g.startsWith("!") && g.endsWith("/**"))
      .map((g) => picomatch(g.slice(1, -3).replace(/^\.\//, ""), { dot: true }))
    const prunable = (rel: string) => pruneMatchers.some((m) => m(rel))

    const roots = options.paths?.length ? options.paths : ["."]
    for (const given of roots) {
      const full = path.resolve(directory, given)
      let stat: import("fs").Stats
      try {
        stat = await fs.stat(full)
      } catch {
        throw new PathNotFound({ path: given })
      }
      if (stat.isFile()) await consider(full, stat.size, true)
      else if (stat.isDirectory()) {
        const ancestors = ancestorLevels(worktree, full)
        // A directory named explicitly is searched even if an ancestor's .gitignore excludes it.
        const levels = ancestors.length && ignored(ancestors, full, true) ? [] : ancestors
        await walk(full, levels)
      }
    }
    result.files.sort()
    result.denied.sort()
    result.tooLarge.sort()
    return result
  }

  /** `.gitignore` rules of `dir` (plus `.git/info/exclude` at a repository root), or undefined. */
  function loadRules(dir: string): Level | undefined {
    const texts: string[] = []
    for (const file of [path.join(dir, ".gitignore"), path.join(dir, ".git", "info", "exclude")]) {
      try {
        texts.push(readFileSync(file, "utf8"))
      } catch {
        // absent or unreadable
      }
    }
    if (!texts.length) return undefined
    return { dir, rules: ignore({ ignorecase: false }).add(texts.join("\n")) }
  }

  /** Rules of the directories from the worktree root down to (excluding) `dir`. */
  function ancestorLevels(worktree: string, dir: string): Level[] {
    const rel = path.relative(worktree, dir)
    if (rel.startsWith("..") || path.isAbsolute(rel)) return []
    const levels: Level[] = []
    let current = worktree
    for (const part of rel ? rel.split(path.sep) : []) {
      const level = loadRules(current)
      if (level) levels.push(level)
      current = path.join(current, part)
    }
    return levels
  }

  /** Git's precedence: rules of deeper files override shallower ones; a `!` rule re-includes. */
  function ignored(levels: Level[], full: string, isDir: boolean): boolean {
    let state = false
    for (const level of levels) {
      const rel = path.relative(level.dir, full).split(path.sep).join("/")
      if (!rel || rel.startsWith("..")) continue
      const test = level.rules.test(isDir ? rel + "/" : rel)
      if (test.ignored) state = true
      else if (test.unignored) state = false
    }
    return state
  }
}
