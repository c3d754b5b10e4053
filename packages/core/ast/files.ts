import fs from "fs/promises"
import { existsSync, readFileSync } from "fs"
import path from "path"
import type { Ignore } from "ignore"
import type picomatchType from "picomatch"
import z from "zod"
import { Dependencies } from "../util/dependencies"
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
 * - Under a directory: files with one of the language's extensions, minus what ignore files exclude, as the
 *   ast-grep CLI (ripgrep's `ignore` crate) selects them: `.ignore` files everywhere (in the searched directories
 *   and in every directory above), `.gitignore` files and `.git/info/exclude` only inside a git repository (a
 *   directory holding `.git`, or below one), from the repository's root down (not above it, and not the outer
 *   repository's inside a nested one); `.ignore` rules win over `.gitignore` rules, deeper files over shallower.
 *   Every `node_modules` and `.git` directory is skipped. Hidden files are searched. A directory named explicitly
 *   is entered even if ignored (its own nested ignore files still apply).
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
    paths?: string[]
    globs?: string[]
    /** The language's extensions, without dots. */
    extensions: string[]
    maxFileBytes?: number
    /** Denial reason for a path the security policy protects, else undefined. */
    access?: (file: string) => Promise<string | undefined>
    signal?: AbortSignal
    /**
     * Also skip folders of installed dependencies, as `node_modules` is: those `Dependencies.FOLDERS` names (`.venv`,
     * `site-packages`, `vendor`, …) and any Python virtual environment (a folder holding `pyvenv.cfg`, whatever its
     * name), ignore files or not. Not below a path named explicitly that is one or lies inside one.
     */
    skipDependencies?: boolean
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

  /** One directory's ignore files: `.gitignore`, `.git/info/exclude` (a repository root) and `.ignore`. */
  type Level = { dir: string; git?: Rules; exclude?: Rules; dot?: Rules; repository: boolean }
  /** One ignore file: its matcher and its lines (to rebuild it without some). */
  type Rules = { test: Ignore["test"]; lines: string[] }

  const rules = (lines: string[]): Rules => {
    const matcher = ignore({ ignorecase: false }).add(lines)
    return { test: (p) => matcher.test(p), lines }
  }

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
      if (ext) extraExtensions.push(ext)
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
    const { include, exclude, extraExtensions } = matchers(options.globs ?? [])
    // Letter case counts, as in the CLI (ripgrep's `*.ext` type globs): `X.PY` is not a Python file.
    const extensions = new Set([...options.extensions, ...extraExtensions])
    const maxBytes = options.maxFileBytes ?? MAX_FILE_BYTES
    const result: Result = { files: [], denied: [], tooLarge: [], sizes: new Map() }
    const seen = new Set<string>()

    const relToProject = (file: string) => path.relative(directory, file).split(path.sep).join("/")
    const globsAccept = (file: string) => {
      const rel = relToProject(file)
      if (exclude.some((m) => m(rel))) return false
      return include.length === 0 || include.some((m) => m(rel))
    }
    const extensionOk = (file: string) => extensions.has(path.extname(file).slice(1))

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

    /** `skip`: dependency folders are skipped below `dir` (and `dir` itself when it is a virtual environment). */
    const walk = async (dir: string, levels: Level[], skip: boolean, named = false) => {
      if (options.signal?.aborted) return
      let entries: import("fs").Dirent[]
      try {
        entries = await fs.readdir(dir, { withFileTypes: true })
      } catch {
        return // unreadable directory: nothing to search there
      }
      const names = new Set(entries.map((e) => e.name))
      if (skip && !named && Dependencies.isVenv(names)) return
      const own = loadRules(dir, names)
      const here = own ? [...levels, own] : levels
      const subdirs: { dir: string; levels: Level[] }[] = []
      const found: string[] = []
      for (const entry of entries) {
        const full = path.join(dir, entry.name)
        if (entry.isDirectory()) {
          if (SKIPPED_DIRS.has(entry.name)) continue
          if (skip && Dependencies.FOLDERS.has(entry.name)) continue
          if (ignored(here, full, true)) continue
          if (exclude.length && prunable(relToProject(full))) continue
          subdirs.push({ dir: full, levels: entered(here, full) })
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
      await Promise.all(subdirs.map((sub) => walk(sub.dir, sub.levels, skip)))
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
        // A directory named explicitly is searched even if an ignore file above excludes it.
        const skip = !!options.skipDependencies && !inDependency(directory, full)
        await walk(full, entered(ancestorLevels(full), full), skip, true)
      }
    }
    result.files.sort()
    result.denied.sort()
    result.tooLarge.sort()
    return result
  }

  /**
   * Whether `dir` is, or lies inside, a folder of installed dependencies (`Dependencies`), looking from `dir` up to
   * `directory`.
   */
  function inDependency(directory: string, dir: string): boolean {
    const rel = path.relative(directory, dir)
    if (rel.startsWith("..") || path.isAbsolute(rel)) return false
    for (let current = dir; ; current = path.dirname(current)) {
      if (current !== directory && Dependencies.FOLDERS.has(path.basename(current))) return true
      if (existsSync(path.join(current, Dependencies.VENV_MARKER))) return true
      if (current === directory || path.dirname(current) === current) return false
    }
  }

  /**
   * The ignore files of `dir`, or undefined when it has none and is no repository root. `names` are its entries
   * when known (the walk has read the directory), else they are looked up.
   */
  function loadRules(dir: string, names?: Set<string>): Level | undefined {
    const has = (name: string) => (names ? names.has(name) : existsSync(path.join(dir, name)))
    const read = (file: string) => {
      try {
        return rules(readFileSync(file, "utf8").split(/\r?\n/))
      } catch {
        return undefined // absent, unreadable or not a file
      }
    }
    const repository = has(".git")
    const level: Level = {
      dir,
      repository,
      git: has(".gitignore") ? read(path.join(dir, ".gitignore")) : undefined,
      exclude: repository ? read(path.join(dir, ".git", "info", "exclude")) : undefined,
      dot: has(".ignore") ? read(path.join(dir, ".ignore")) : undefined,
    }
    return repository || level.git || level.dot ? level : undefined
  }

  /**
   * `levels` for the inside of directory `dir`, entered although some rules may exclude it (a `!` of `.ignore` over
   * `.gitignore`, or a directory named explicitly): the lines that exclude `dir` itself are left out below it. The
   * `ignore` package applies a rule that excludes a directory to everything under it, while the CLI tests each path
   * on its own (`y/` matches the directory `y`, not `y/b.js`; `*.gen.ts` of the same file still applies below).
   */
  function entered(levels: Level[], dir: string): Level[] {
    let changed = false
    const result = levels.map((level) => {
      const rel = path.relative(level.dir, dir).split(path.sep).join("/") + "/"
      if (rel === "/" || rel.startsWith("..")) return level
      // The lines that exclude `dir` alone are left out; the others still apply to each path below it.
      const drop = (given: Rules | undefined) => {
        if (!given?.test(rel).ignored) return given
        const kept = given.lines.filter((line) => !rules([line]).test(rel).ignored)
        return kept.length ? rules(kept) : undefined
      }
      const next = { ...level, git: drop(level.git), exclude: drop(level.exclude), dot: drop(level.dot) }
      if (next.git === level.git && next.exclude === level.exclude && next.dot === level.dot) return level
      changed = true
      return next
    })
    return changed ? result : levels
  }

  /** The levels of the directories above `dir`, from the file system root down (as the CLI reads them). */
  function ancestorLevels(dir: string): Level[] {
    const levels: Level[] = []
    for (let current = path.dirname(dir); ; current = path.dirname(current)) {
      const level = loadRules(current)
      if (level) levels.unshift(level)
      if (path.dirname(current) === current) break
    }
    return levels
  }

  /**
   * Whether `full` is ignored under `levels` (shallowest first), as ripgrep's `ignore` crate decides: the deepest
   * `.ignore` rule that matches decides; else, inside a repository, the deepest matching `.gitignore` rule from the
   * innermost repository root down, then `.git/info/exclude`; a `!` rule re-includes. Outside any repository
   * `.gitignore` files do not apply (git ignores nothing there).
   */
  function ignored(levels: Level[], full: string, isDir: boolean): boolean {
    const verdict = (level: Level, given: Rules | undefined) => {
      if (!given) return undefined
      const rel = path.relative(level.dir, full).split(path.sep).join("/")
      if (!rel || rel.startsWith("..")) return undefined
      const test = given.test(isDir ? rel + "/" : rel)
      return test.ignored ? true : test.unignored ? false : undefined
    }
    for (let i = levels.length - 1; i >= 0; i--) {
      const found = verdict(levels[i], levels[i].dot)
      if (found !== undefined) return found
    }
    const root = levels.findLastIndex((level) => level.repository)
    if (root < 0) return false
    for (const kind of ["git", "exclude"] as const) {
      for (let i = levels.length - 1; i >= root; i--) {
        const found = verdict(levels[i], levels[i][kind])
        if (found !== undefined) return found
      }
    }
    return false
  }
}
