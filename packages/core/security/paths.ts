import crypto from "crypto"
import fs from "fs"
import os from "os"
import path from "path"

/**
 * Path normalisation for access checks: every spelling of a path (relative, `~`, `..`, `.`, `//`, trailing slashes,
 * decomposed Unicode) becomes one absolute NFC path, and symbolic links are resolved component by component so that
 * both the name used and every target along the chain can be checked.
 *
 * @example
 * SecurityPath.expand("./a//b/../c/", "/repo") // "/repo/a/c"
 * SecurityPath.resolve("/repo/link-to-secrets/x").real // "/repo/secrets/x"
 */
export namespace SecurityPath {
  /** Longest chain of symbolic links followed before a path counts as a loop (the kernel's own limit is 40). */
  export const MAX_HOPS = 40

  /**
   * An absolute, normalised NFC path: `~` and `~/…` expand to `home`, relative paths resolve against `base`, `..`,
   * `.`, repeated and trailing slashes collapse. `file://` URLs become paths.
   *
   * @example
   * SecurityPath.expand("~/.ssh/id_rsa", "/repo", "/home/me") // "/home/me/.ssh/id_rsa"
   */
  export function expand(input: string, base: string, home = os.homedir()): string {
    let p = input.normalize("NFC")
    if (p.startsWith("file://")) {
      try {
        p = decodeURIComponent(new URL(p).pathname)
      } catch {
        // Not a valid URL: treat the text as a path.
      }
    }
    if (p === "~") p = home
    else if (p.startsWith("~/")) p = path.join(home, p.slice(2))
    return path.resolve(base, p).normalize("NFC")
  }

  /** Folders of the operating system: nothing in them is ever renamed or replaced by the layer. */
  export const SYSTEM = [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/boot",
    "/var",
    "/opt",
    "/srv",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/snap",
    "/nix",
  ] as const

  /**
   * May the layer rename `p` (move a planted file aside, put a link back)? Anything below one of `own` (the user's
   * home and the project, wherever they live: Fedora Silverblue keeps homes in `/var/home`); otherwise not a top-level
   * entry of `/` and nothing in the system's folders: run as root, every folder is writable, and a protected host path
   * there is never the agent's to have created.
   *
   * @example
   * SecurityPath.movable("/home/me/.local/bin") // true
   * SecurityPath.movable("/var/home/me/.local/bin", ["/var/home/me"]) // true
   * SecurityPath.movable("/bin") // false
   */
  export function movable(p: string, own: readonly string[] = []): boolean {
    const abs = path.resolve(p)
    if (own.some((dir) => dir !== "/" && abs !== path.resolve(dir) && isInside(abs, path.resolve(dir)))) return true
    if (path.dirname(abs) === abs || path.dirname(abs) === "/") return false
    return !SYSTEM.some((dir) => isInside(abs, dir))
  }

  /**
   * Writes `data` at `file` without ever writing through what is there: a fresh file beside it (created exclusively,
   * so a link planted at its name fails the call instead of being followed) is renamed over the path, and a rename
   * replaces a symbolic link at `file`, never follows it. The folder is taken as it is: callers run it only while no
   * sandboxed command can swap it (`SecurityGuard`'s host repairs run while no command starts or runs). Throws on
   * failure, leaving no temporary file behind.
   *
   * @example
   * SecurityPath.replace("/repo/.opencode/command/x.md", "previous text") // a link at x.md is replaced, not followed
   */
  export function replace(file: string, data: string | Uint8Array, mode?: number) {
    const temp = path.join(
      path.dirname(file),
      `.${path.basename(file)}.security-${process.pid}-${crypto.randomBytes(6).toString("hex")}.tmp`,
    )
    fs.writeFileSync(temp, data, { flag: "wx", mode })
    try {
      fs.renameSync(temp, file)
    } catch (error) {
      fs.rmSync(temp, { force: true })
      throw error
    }
  }

  /** True when `child` is `parent` or below it (both absolute and normalised). */
  export function isInside(child: string, parent: string, nocase = false): boolean {
    const c = nocase ? child.toLowerCase() : child
    const p = nocase ? parent.toLowerCase() : parent
    if (c === p) return true
    const prefix = p.endsWith(path.sep) ? p : p + path.sep
    return c.startsWith(prefix)
  }

  export type Resolved = {
    /** The path as given, normalised (no link resolved). */
    lexical: string
    /** The path with every symbolic link resolved; for a path that does not exist, its deepest existing folder resolved. */
    real: string
    /** Every intermediate path along symbolic link chains (link names and their targets), in order. */
    hops: string[]
    exists: boolean
    /** Set when link resolution hit a loop or a chain longer than `MAX_HOPS`. */
    loop: boolean
  }

  /**
   * Resolves the symbolic links of an absolute path in every component. Fast path: one `realpath` call when the path
   * exists and holds no link. Never throws; never opens the file.
   *
   * @example
   * const r = SecurityPath.resolve("/repo/docs/link")
   * r.hops // ["/repo/docs/link", "/repo/secrets/key"] when docs/link → ../secrets/key
   */
  export function resolve(lexical: string): Resolved {
    try {
      const real = fs.realpathSync.native(lexical).normalize("NFC")
      if (real === lexical) return { lexical, real, hops: [], exists: true, loop: false }
    } catch {
      // Missing, a loop, or permission denied: the slow walk below tells which.
    }
    return walk(lexical)
  }

  /** Component-by-component resolution collecting every hop (the slow path of `resolve`). */
  function walk(lexical: string): Resolved {
    const hops: string[] = []
    let queue = lexical.split(path.sep).filter(Boolean)
    let current: string = path.sep
    let followed = 0
    let loop = false
    let exists = true
    while (queue.length) {
      const name = queue.shift()!
      if (name === ".") continue
      if (name === "..") {
        current = path.dirname(current)
        continue
      }
      const next = path.join(current, name)
      let stat: fs.Stats
      try {
        stat = fs.lstatSync(next)
      } catch {
        exists = false
        current = path.join(next, ...queue)
        queue = []
        break
      }
      if (!stat.isSymbolicLink()) {
        current = next
        continue
      }
      if (++followed > MAX_HOPS) {
        loop = true
        exists = false
        current = path.join(next, ...queue)
        break
      }
      let target: string
      try {
        target = fs.readlinkSync(next)
      } catch {
        exists = false
        current = path.join(next, ...queue)
        queue = []
        break
      }
      const resolved = path.resolve(current, target).normalize("NFC")
      hops.push(next.normalize("NFC"))
      const rest = queue
      hops.push(path.join(resolved, ...rest).normalize("NFC"))
      current = path.sep
      queue = [...resolved.split(path.sep).filter(Boolean), ...rest]
    }
    return { lexical, real: current.normalize("NFC"), hops: dedupe(hops, lexical), exists: exists && !loop, loop }
  }

  /**
   * An absolute path with `..` taken the way the kernel takes it: the symbolic links before each `..` are resolved
   * first, so `a/link/../x` is `x` beside the link's target, not `a/x` as `path.resolve` would say. Names after the
   * last `..` stay as written (the caller still sees the name used). Without `..` the path is only normalised.
   *
   * @example
   * SecurityPath.collapse("/repo/docs/link/../x") // "/repo/secrets/x" when docs/link → ../secrets/inner
   */
  export function collapse(input: string): string {
    const names = input.split(path.sep)
    if (!names.includes("..")) return path.resolve(input)
    let current: string = path.sep
    for (const name of names) {
      if (!name || name === ".") continue
      current = name === ".." ? path.dirname(resolve(current).real) : path.join(current, name)
    }
    return current
  }

  /**
   * The real path of an existing file or folder, its names as written (never normalised) and every link and `..`
   * taken the way the kernel and git's `strbuf_realpath` take them, one name at a time (`a/link/../x` is `x` beside
   * the link's target). Undefined when a name is missing, a link cannot be read or links loop: the caller cannot
   * tell where the path leads. Bun's `realpathSync` takes `..` before the links, so it is not used here.
   *
   * @example
   * SecurityPath.physical("/repo/sub/link/../gd") // "/elsewhere/gd" when sub/link → /elsewhere/inner
   */
  export function physical(input: string): string | undefined {
    if (!path.isAbsolute(input)) return undefined
    let queue = input.split("/").filter((n) => n && n !== ".")
    let current = "/"
    let followed = 0
    while (queue.length) {
      const name = queue.shift()!
      if (name === "..") {
        current = path.dirname(current)
        continue
      }
      const next = current === "/" ? `/${name}` : `${current}/${name}`
      let stat: fs.Stats
      try {
        stat = fs.lstatSync(next)
      } catch {
        return undefined
      }
      if (!stat.isSymbolicLink()) {
        current = next
        continue
      }
      if (++followed > MAX_HOPS) return undefined
      let target: string
      try {
        target = fs.readlinkSync(next)
      } catch {
        return undefined
      }
      if (target.startsWith("/")) current = "/"
      queue = [...target.split("/").filter((n) => n && n !== "."), ...queue]
    }
    return current
  }

  /**
   * An absolute path with its longest existing leading part spelled physically (`physical`), the rest as written:
   * where the kernel finds it, existing or not. The path itself when no part of it exists or nothing is a link.
   *
   * @example
   * SecurityPath.physicalPrefix("/home/me/.ssh/new") // "/var/home/me/.ssh/new" when /home → var/home
   */
  export function physicalPrefix(input: string): string {
    if (!path.isAbsolute(input)) return input
    const names = path.resolve(input).split("/").filter(Boolean)
    for (let n = names.length; n > 0; n--) {
      const real = physical("/" + names.slice(0, n).join("/"))
      if (real !== undefined) return path.join(real, ...names.slice(n))
    }
    return path.resolve(input)
  }

  function dedupe(hops: string[], lexical: string) {
    return [...new Set(hops)].filter((h) => h !== lexical)
  }

  /** Device and inode of an existing regular file with more than one name (a hard link), else undefined. */
  export function linkIdentity(real: string): { dev: number; ino: number } | undefined {
    try {
      const stat = fs.statSync(real)
      if (!stat.isFile() || stat.nlink < 2) return undefined
      return { dev: stat.dev, ino: stat.ino }
    } catch {
      return undefined
    }
  }

  /**
   * Whether the file system holding `existing` (a file or folder that exists) ignores case: the same entry is found
   * under a name with its case swapped. Names without letters tell nothing and answer false.
   *
   * @example
   * SecurityPath.caseInsensitive("/repo/.opencode-security.json") // false on ext4, true on default APFS
   */
  export function caseInsensitive(existing: string): boolean {
    const name = path.basename(existing)
    const swapped = [...name].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join("")
    if (swapped === name) return false
    try {
      const a = fs.statSync(existing)
      const b = fs.statSync(path.join(path.dirname(existing), swapped))
      return a.ino === b.ino && a.dev === b.dev
    } catch {
      return false
    }
  }
}
