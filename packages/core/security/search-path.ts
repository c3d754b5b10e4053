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
  }

  /**
   * The `PATH` folders of `env` (and the home's standard ones) the user could write, split into those that can be
   * held read-only and those that cannot: a relative entry (found from the project folder), one inside the project,
   * or one holding the project, the home or the temporary folder.
   *
   * @example
   * SecuritySearchPath.folders({ PATH: "./node_modules/.bin:/opt/tools" }, { root: "/repo", home: "/home/me" }).unsafe
   * // ["./node_modules/.bin"]
   */
  export function folders(env: Record<string, string | undefined>, input: { root: string; home: string }): Folders {
    const root = path.resolve(input.root)
    const home = path.resolve(input.home)
    const entries = [...(env.PATH ?? "").split(path.delimiter), ...HOME_BINS.map((b) => path.join(home, b))]
    const broad = [home, path.resolve(os.tmpdir()), "/tmp", "/"]
    const protect = new Set<string>()
    const unsafe = new Set<string>()
    for (const entry of entries) {
      if (!path.isAbsolute(entry)) {
        unsafe.add(entry === "" ? "(empty: the current folder)" : entry)
        continue
      }
      const dir = path.resolve(entry)
      if (!writable(dir)) continue
      if (SecurityPath.isInside(dir, root) || SecurityPath.isInside(root, dir) || broad.includes(dir)) {
        unsafe.add(dir)
        continue
      }
      protect.add(dir)
    }
    return { protect: [...protect], unsafe: [...unsafe] }
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
   * The folder of the running OpenCode the user could write: the npm package it came in (the highest package folder,
   * directly in a node_modules, above the binary that names an `opencode` package: the launcher script is there too),
   * else the binary's own folder (`~/.opencode/bin` of the install script). Changed there, OpenCode's next start runs
   * the agent's code with no security layer. Undefined when it cannot be written or would hold the project or home.
   *
   * @example
   * SecuritySearchPath.installation("/home/me/.npm/lib/node_modules/opencode-ai/node_modules/opencode-linux-x64/bin/opencode", { root: "/repo", home: "/home/me" })
   * // "/home/me/.npm/lib/node_modules/opencode-ai"
   */
  export function installation(execPath: string, input: { root: string; home: string }): string | undefined {
    let binary: string
    try {
      binary = fs.realpathSync(execPath)
    } catch {
      return undefined
    }
    const home = path.resolve(input.home)
    let found = path.dirname(binary)
    for (let dir = found; dir !== path.dirname(dir) && dir !== home; dir = path.dirname(dir)) {
      // Packages only: a folder directly in node_modules (a project named opencode-something around it is not one).
      if (path.basename(path.dirname(dir)) !== "node_modules") continue
      try {
        const name = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))?.name
        if (typeof name === "string" && /^(@[^/]+\/)?opencode(-|$)/.test(name)) found = dir
      } catch {
        continue
      }
    }
    const root = path.resolve(input.root)
    const broad = [home, path.resolve(os.tmpdir()), "/tmp", "/"]
    if (!writable(found) || SecurityPath.isInside(root, found) || broad.includes(found)) return undefined
    return found
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
