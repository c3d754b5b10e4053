import fs from "fs"
import os from "os"
import path from "path"
import { SecurityPath } from "./paths"

/**
 * The folders of `PATH`, through which OpenCode finds the programs it starts outside the sandbox: `git` for its
 * snapshot at every step, ripgrep (1.2.15 prefers the one on `PATH`), the user's shell, and this layer's own `git`
 * and compiler calls. A program planted in a `PATH` folder the user can write (`~/.local/bin`, which a login shell puts
 * first) would run in their place, on the host, in the same session, and in every later command the user types. So
 * such folders are protected host paths while a policy exists, and the layer's own programs are looked up in the
 * system folders first.
 *
 * @example
 * SecuritySearchPath.folders({ PATH: "/home/me/.local/bin:/usr/bin:." }, { root: "/repo", home: "/home/me" }).protect
 * // ["/home/me/.local/bin", "/home/me/bin"] (and /usr/bin only when the user can write it)
 */
export namespace SecuritySearchPath {
  /** System folders, looked in before `PATH` for the programs this layer starts. */
  export const SYSTEM = ["/usr/bin", "/bin", "/usr/local/bin"] as const
  /** Folders of the home that login shells add to `PATH` once they exist (Debian's and Ubuntu's `~/.profile`). */
  export const HOME_BINS = [".local/bin", "bin"] as const

  export type Folders = {
    /** Absolute folders to hold read-only: those the user can write or create, outside the project. */
    protect: string[]
    /** Entries that cannot be held without holding the project or the home itself (relative, inside, above). */
    unsafe: string[]
    /**
     * In those entries, the programs OpenCode starts by name (`PROGRAMS`): a relative entry is looked up from the
     * project folder, and OpenCode 1.18 runs `git` there at start, before any plugin can change its `PATH`.
     */
    programs: string[]
  }

  /** Programs OpenCode starts by name from `PATH` (its snapshot and project detection, search, shell, clipboard, pager). */
  export const PROGRAMS = [
    "git",
    "rg",
    "sh",
    "bash",
    "zsh",
    "fish",
    "dash",
    "ksh",
    "nu",
    "pwsh",
    "less",
    "xclip",
    "xsel",
    "wl-copy",
    "wl-paste",
    "xdg-open",
    "tar",
    "unzip",
    "curl",
  ] as const

  /**
   * The `PATH` folders of `env` (and the home's standard ones) the user could write, split into those that can be
   * held read-only and those that cannot: a relative entry (found from the project folder), one inside the project,
   * or one holding the project, the home or the temporary folder.
   *
   * @example
   * SecuritySearchPath.folders({ PATH: "./node_modules/.bin:/opt/tools" }, { root: "/repo", home: "/home/me" }).unsafe
   * // ["./node_modules/.bin"]
   */
  export function folders(
    env: Record<string, string | undefined>,
    input: { root: string; home: string; directory?: string },
  ): Folders {
    const root = path.resolve(input.root)
    const home = path.resolve(input.home)
    const entries = [...(env.PATH ?? "").split(path.delimiter), ...HOME_BINS.map((b) => path.join(home, b))]
    const broad = [home, path.resolve(os.tmpdir()), "/tmp", "/"]
    if (env.PATH === undefined || env.PATH === "") entries.splice(0, 1)
    const protect = new Set<string>()
    const unsafe = new Set<string>()
    const programs = new Set<string>()
    const bases = [...new Set([root, path.resolve(input.directory ?? root)])]
    for (const entry of entries) {
      const expanded = tilde(entry, home)
      const kind = classify(expanded, root, broad)
      if (kind === "protect") protect.add(path.resolve(expanded))
      if (kind !== "unsafe") continue
      unsafe.add(entry === "" ? "(empty: the current folder)" : entry)
      const dirs = path.isAbsolute(expanded) ? [path.resolve(expanded)] : bases.map((b) => path.resolve(b, expanded))
      for (const dir of dirs) for (const name of PROGRAMS) programs.add(path.join(dir, name))
    }
    return { protect: [...protect], unsafe: [...unsafe], programs: [...programs] }
  }

  /**
   * `PATH` without the entries `folders` calls unsafe, for OpenCode's own lookups: the programs it starts on the
   * host are then never found where the agent can write.
   *
   * @example
   * SecuritySearchPath.strip("./node_modules/.bin:/usr/bin", { root: "/repo", home: "/home/me" }) // "/usr/bin"
   */
  export function strip(value: string, input: { root: string; home: string }): string {
    const root = path.resolve(input.root)
    const broad = [path.resolve(input.home), path.resolve(os.tmpdir()), "/tmp", "/"]
    return value
      .split(path.delimiter)
      .filter((entry) => classify(tilde(entry, input.home), root, broad) !== "unsafe")
      .join(path.delimiter)
  }

  /** Bash expands a `PATH` entry starting with `~/` when it looks a program up (a `~/xbin` left unexpanded by quoting). */
  function tilde(entry: string, home: string): string {
    return entry === "~" || entry.startsWith("~/") ? path.join(home, entry.slice(1)) : entry
  }

  function classify(entry: string, root: string, broad: string[]): "unsafe" | "protect" | "system" {
    if (!path.isAbsolute(entry)) return "unsafe"
    const dir = path.resolve(entry)
    if (!writable(dir)) return "system"
    if (SecurityPath.isInside(dir, root) || SecurityPath.isInside(root, dir) || broad.includes(dir)) return "unsafe"
    return "protect"
  }

  /**
   * A program by name, from the system folders first, then `PATH`: a folder early in `PATH` that the agent could
   * write must not put a program in front of the system's own.
   *
   * @example
   * SecuritySearchPath.which("git", process.env) // "/usr/bin/git"
   */
  export function which(name: string, env: Record<string, string | undefined>): string | undefined {
    for (const dir of [...SYSTEM, ...(env.PATH ?? "").split(path.delimiter)]) {
      if (!dir || !path.isAbsolute(dir)) continue
      const candidate = path.join(dir, name)
      try {
        if (!fs.statSync(candidate).isFile()) continue
        fs.accessSync(candidate, fs.constants.X_OK)
        return candidate
      } catch {
        continue
      }
    }
    return undefined
  }

  /**
   * The folders of the running OpenCode the user could write: the npm package it came in (the highest package folder,
   * directly in a node_modules, above the binary that names an `opencode` package), with the `opencode` packages beside
   * it (a flat install puts the launcher, `opencode-ai`, next to the platform binary's package), else the binary's own
   * folder (`~/.opencode/bin` of the install script). Changed there, OpenCode's next start runs the agent's code with
   * no security layer. None that cannot be written or would hold the project or the home.
   *
   * @example
   * SecuritySearchPath.installation("/home/me/.npm/lib/node_modules/opencode-ai/node_modules/opencode-linux-x64/bin/opencode", { root: "/repo", home: "/home/me" })
   * // ["/home/me/.npm/lib/node_modules/opencode-ai"]
   */
  export function installation(execPath: string, input: { root: string; home: string }): string[] {
    let binary: string
    try {
      binary = fs.realpathSync(execPath)
    } catch {
      return []
    }
    const home = path.resolve(input.home)
    let found = path.dirname(binary)
    for (let dir = found; dir !== path.dirname(dir) && dir !== home; dir = path.dirname(dir)) {
      // Packages only: a folder directly in node_modules (a project named opencode-something around it is not one).
      if (path.basename(path.dirname(dir)) !== "node_modules") continue
      if (OPENCODE_PACKAGE.test(packageName(dir) ?? "")) found = dir
    }
    const out = [found]
    if (path.basename(path.dirname(found)) === "node_modules" && OPENCODE_PACKAGE.test(packageName(found) ?? ""))
      for (const sibling of list(path.dirname(found)))
        if (OPENCODE_PACKAGE.test(packageName(path.join(path.dirname(found), sibling)) ?? ""))
          out.push(path.join(path.dirname(found), sibling))
    return [...new Set(out)].filter((dir) => holdable(dir, input))
  }

  /**
   * Where the links in `folders` lead outside them, as folders to hold: a program in a held PATH folder is often a
   * link into the package it came with (`~/.npm-global/bin/tsc` → `../lib/node_modules/typescript/bin/tsc`, Homebrew's
   * `bin/git` → `../Cellar/git/2.47.0/bin/git`, pipx's into its venv), and the lookup runs the target. The package
   * folder two levels above the target is held (all of a node_modules at once when it is one), else the target alone;
   * the targets of `PROGRAMS` always, the others up to `MAX_LINKED` in all. A link into the project is left to the
   * project (unless it is one of `PROGRAMS`). The system's folders are not looked into.
   *
   * @example
   * SecuritySearchPath.linked(["/home/me/.npm-global/bin"], { root: "/repo", home: "/home/me" })
   * // ["/home/me/.npm-global/lib/node_modules"]
   */
  export function linked(folders: readonly string[], input: { root: string; home: string }): string[] {
    const root = path.resolve(input.root)
    const links: { name: string; folder: string; target: string }[] = []
    for (const folder of folders) {
      if (SYSTEM_PREFIXES.some((p) => folder === p || folder.startsWith(p + path.sep))) continue
      for (const name of list(folder)) {
        const entry = path.join(folder, name)
        try {
          if (!fs.lstatSync(entry).isSymbolicLink()) continue
          const target = fs.realpathSync(entry)
          if (!SecurityPath.isInside(target, folder)) links.push({ name, folder, target })
        } catch {
          continue
        }
      }
    }
    // The programs OpenCode starts by name first, outside the cap: a large folder early in PATH must not use it up.
    const first = new Set<string>(PROGRAMS)
    links.sort((a, b) => Number(first.has(b.name)) - Number(first.has(a.name)))
    const out = new Set<string>()
    for (const { name, target } of links) {
      if (out.size >= MAX_LINKED && !first.has(name)) break
      // A link into the project (`npm link` of the project's own CLI) is the project's file, edited as such.
      if (SecurityPath.isInside(target, root) && !first.has(name)) continue
      const pkg = path.dirname(path.dirname(target))
      const holder = path.basename(path.dirname(pkg)) === "node_modules" ? path.dirname(pkg) : pkg
      // A folder right in the home (`~/.local`, `~/.config`, `~/.claude`) holds far more than one program.
      const shallow = path.dirname(holder) === path.resolve(input.home)
      if (!shallow && holdable(holder, input) && !SecurityPath.isInside(holder, root)) out.add(holder)
      else if (holdable(target, input)) out.add(target)
    }
    return [...out]
  }

  /** Links followed at most by `linked`: each held folder is a mount in the sandbox. */
  export const MAX_LINKED = 256
  const SYSTEM_PREFIXES = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc"]
  const OPENCODE_PACKAGE = /^(@[^/]+\/)?opencode(-|$)/

  function holdable(dir: string, input: { root: string; home: string }): boolean {
    const broad = [path.resolve(input.home), path.resolve(os.tmpdir()), "/tmp", "/"]
    if (broad.includes(dir) || SYSTEM_PREFIXES.includes(dir)) return false
    return writable(dir) && !SecurityPath.isInside(path.resolve(input.root), dir)
  }

  function packageName(dir: string): string | undefined {
    try {
      const name = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))?.name
      return typeof name === "string" ? name : undefined
    } catch {
      return undefined
    }
  }

  function list(dir: string): string[] {
    try {
      return fs.readdirSync(dir)
    } catch {
      return []
    }
  }

  /** The user can write the folder, or create it (its nearest existing parent is writable). */
  function writable(dir: string): boolean {
    for (let p = dir; ; p = path.dirname(p)) {
      try {
        fs.accessSync(p, fs.constants.W_OK)
        return true
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") return false
      }
      if (p === path.dirname(p)) return false
    }
  }
}
