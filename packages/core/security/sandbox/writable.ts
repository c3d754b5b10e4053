import fs from "fs"
import os from "os"
import path from "path"

/**
 * The folders a sandboxed command may write: everything else is read-only inside the sandbox (`SandboxPlan`), so a
 * command cannot plant what programs on the host run later (shell startup files and what they source, zsh's compiled
 * `.zwc` copies, session services, URL handlers, an interpreter installed in the home, a package manager's global
 * configuration). Besides the project and the folders the guard adds for it (its git folders, OpenCode's plans and
 * worktree), the allow-list is this one table: the temporary folders, and the commands' own private cache folder.
 *
 * The host's caches are read-only like the rest of the home: the host runs what they hold without a check a command
 * cannot forge (bun's transpiler cache, from which OpenCode loads the security layer's own code; package stores
 * hard-linked into protected folders; npx's, go's, cargo's, gradle's and corepack's caches: red team GI1, GI3).
 * Commands get a cache folder of their own instead (`privateFolder`, kept across commands, never read by the host),
 * named to the tools through the environment (`PRIVATE`) and bound over the well-known cache folders of the tools
 * that ignore the environment.
 *
 * @example
 * SandboxWritable.areas({ HOME: "/home/me" }).write // ["/tmp", "/var/tmp"]
 */
export namespace SandboxWritable {
  /**
   * Where an entry lies: `abs` an absolute path; `env` the absolute path a variable names; `home`, `cache` (the XDG
   * cache folder), `data` (the XDG data folder), `cargo` (`CARGO_HOME`, default `~/.cargo`) and `gopath` (the first
   * `GOPATH` entry, default `~/go`) relative to that folder.
   */
  export type Base = "abs" | "env" | "home" | "cache" | "data" | "cargo" | "gopath"

  export type Entry = {
    base: Base
    path: string
    /** Created on the host when missing (only where that is harmless: the XDG cache folder). */
    create?: boolean
    why: string
  }

  /** The allow-list (the project, its git folders, OpenCode's writable folders and `privateFolder` are added by the guard). */
  export const TABLE: readonly Entry[] = [
    { base: "abs", path: "/tmp", why: "temporary files (shared with the host)" },
    { base: "abs", path: "/var/tmp", why: "temporary files (shared with the host)" },
    { base: "env", path: "TMPDIR", why: "the temporary folder the environment names" },
  ]

  /**
   * One cache of the commands' private folder: `name` is its folder there; `env` the variables set to it inside the
   * sandbox (`whenSet`: only those the environment already sets, where setting one would change a tool's default
   * for the project, as `YARN_CACHE_FOLDER` moves a Yarn 2+ project's own cache); `over` the host's well-known cache
   * folders it is bound over, when they exist, for tools that ignore the variables (or whose variable would take
   * more than the cache along: `CARGO_HOME` holds cargo's configuration and installed programs, `GRADLE_USER_HOME`
   * gradle's properties and init scripts).
   */
  export type Private = {
    name: string
    env?: readonly string[]
    whenSet?: readonly string[]
    over?: readonly { base: Exclude<Base, "abs" | "env">; path: string }[]
    why: string
  }

  /** The commands' private caches (`privateFolder`). */
  export const PRIVATE: readonly Private[] = [
    {
      name: "xdg",
      env: ["XDG_CACHE_HOME"],
      why: "the XDG cache folder: pip, uv, go's build cache, yarn 1, deno, node-gyp, pre-commit, corepack, bun's transpiler cache",
    },
    {
      name: "npm",
      env: ["npm_config_cache", "NPM_CONFIG_CACHE"],
      over: [{ base: "home", path: ".npm" }],
      why: "npm's cache (npx's `_npx` too)",
    },
    {
      name: "bun-install",
      env: ["BUN_INSTALL_CACHE_DIR"],
      over: [{ base: "home", path: ".bun/install/cache" }],
      why: "bun's package cache (hard-linked into what bun installs)",
    },
    { name: "bun-transpiler", env: ["BUN_RUNTIME_TRANSPILER_CACHE_PATH"], why: "bun's transpiler cache" },
    { name: "go-build", env: ["GOCACHE"], why: "go's build cache" },
    { name: "go-mod", env: ["GOMODCACHE"], over: [{ base: "gopath", path: "pkg/mod" }], why: "go's module cache" },
    { name: "pip", env: ["PIP_CACHE_DIR"], why: "pip's cache" },
    { name: "uv", env: ["UV_CACHE_DIR"], why: "uv's cache (hard-linked into what uv installs)" },
    {
      name: "pnpm-store",
      env: ["npm_config_store_dir"],
      over: [
        { base: "data", path: "pnpm/store" },
        { base: "home", path: ".pnpm-store" },
      ],
      why: "pnpm's store (hard-linked into what pnpm installs)",
    },
    { name: "yarn", whenSet: ["YARN_CACHE_FOLDER"], why: "yarn's cache where the environment moves it" },
    {
      name: "yarn-berry",
      env: ["YARN_GLOBAL_FOLDER"],
      over: [{ base: "home", path: ".yarn/berry/cache" }],
      why: "yarn 2+'s global folder and cache",
    },
    {
      name: "jiti",
      env: ["JITI_CACHE", "JITI_FS_CACHE"],
      why: "jiti's transpile cache (else in the shared temporary folder)",
    },
    { name: "cargo-registry", over: [{ base: "cargo", path: "registry" }], why: "cargo's crate downloads" },
    { name: "cargo-git", over: [{ base: "cargo", path: "git" }], why: "cargo's git dependencies" },
    { name: "maven", over: [{ base: "home", path: ".m2/repository" }], why: "maven's local repository" },
    { name: "gradle-caches", over: [{ base: "home", path: ".gradle/caches" }], why: "gradle's caches" },
    {
      name: "gradle-dists",
      over: [{ base: "home", path: ".gradle/wrapper/dists" }],
      why: "the gradle wrapper's downloads",
    },
  ]

  /**
   * Code caches that tools keep in the shared temporary folders and run from without a check a command cannot forge
   * (jiti 1's `node-jiti`, jiti 2's `jiti`, Node's compile cache): held read-only in each temporary folder of `TABLE`,
   * made on the host when missing so that a command cannot make them first (red team GI5). Inside the sandbox jiti
   * uses the private folder (`PRIVATE`); Node's compile cache skips a folder it cannot write.
   */
  export const TEMP_CODE_CACHES: readonly string[] = ["node-jiti", "jiti", "node-compile-cache"]

  /** The folder name of the commands' private caches, in the user's cache folder. */
  export const PRIVATE_FOLDER = "opencode-builtins-commands"

  /**
   * The commands' private cache folder: `<XDG_CACHE_HOME or ~/.cache>/opencode-builtins-commands`, distinct from the
   * built-ins' own (hidden) `opencode-builtins`, named by no host program's configuration.
   *
   * @example
   * SandboxWritable.privateFolder({ HOME: "/home/me" }) // "/home/me/.cache/opencode-builtins-commands"
   */
  export function privateFolder(env: Record<string, string | undefined>): string {
    return path.join(bases(env).cache, PRIVATE_FOLDER)
  }

  export type Prepared = {
    /** The private folder's real path (made, mode 0700), to bind writable; undefined when it could not be made. */
    folder?: string
    /** The variables set inside the sandbox. */
    env: Record<string, string>
    /** Private folders bound over the host's cache folders that exist (`path` the host's, `source` the private one). */
    over: { path: string; source: string }[]
    /** Why the private folder could not be used. */
    skipped?: { path: string; why: string }
  }

  /**
   * Makes the commands' private cache folder (mode 0700, refused when it is a link or not the user's) and its caches,
   * and returns what the sandbox sets and binds for them.
   *
   * @example
   * SandboxWritable.prepare({ HOME: "/home/me" }).env.BUN_RUNTIME_TRANSPILER_CACHE_PATH
   * // "/home/me/.cache/opencode-builtins-commands/bun-transpiler"
   */
  export function prepare(env: Record<string, string | undefined>): Prepared {
    const folder = privateFolder(env)
    try {
      fs.mkdirSync(folder, { recursive: true, mode: 0o700 })
      const stat = fs.lstatSync(folder)
      if (!stat.isDirectory() || (process.getuid && stat.uid !== process.getuid()))
        return { env: {}, over: [], skipped: { path: folder, why: "it is not a folder of this user" } }
      if ((stat.mode & 0o077) !== 0) fs.chmodSync(folder, 0o700)
    } catch (error) {
      return {
        env: {},
        over: [],
        skipped: { path: folder, why: error instanceof Error ? error.message : String(error) },
      }
    }
    const base = real(folder) ?? folder
    const b = bases(env)
    const out: Prepared = { folder: base, env: {}, over: [] }
    for (const p of PRIVATE) {
      const dir = path.join(base, p.name)
      const wanted = [...(p.env ?? []), ...(p.whenSet ?? []).filter((n) => env[n] !== undefined)]
      // Bound where the kernel resolves the folder (a mount cannot hold a link); over a link's target it only hides
      // that target inside the sandbox.
      const over = [
        ...new Set(
          (p.over ?? []).map((o) => real(path.join(b[o.base], o.path))).filter((o): o is string => !!o && isDir(o)),
        ),
      ]
      if (!wanted.length && !over.length) continue
      try {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
      } catch {
        continue
      }
      for (const name of wanted) out.env[name] = dir
      for (const o of over) out.over.push({ path: o, source: dir })
    }
    return out
  }

  /**
   * The code caches of the temporary folders (`TEMP_CODE_CACHES`) to hold read-only, made on the host when missing
   * (mode 0700); one that cannot be made (another user's file in the way) is held as it is when it exists.
   *
   * @example
   * SandboxWritable.tempCodeCaches({}) // ["/tmp/node-jiti", "/tmp/jiti", "/tmp/node-compile-cache", "/var/tmp/…", …]
   */
  export function tempCodeCaches(
    env: Record<string, string | undefined>,
    options: { create?: boolean } = {},
  ): string[] {
    const temps = TABLE.map((e) => (e.base === "abs" ? e.path : e.base === "env" ? env[e.path] : undefined)).filter(
      (p): p is string => !!p && path.isAbsolute(p) && isDir(p),
    )
    const out: string[] = []
    for (const t of new Set(temps.map((p) => real(p) ?? p)))
      for (const name of TEMP_CODE_CACHES) {
        const p = path.join(t, name)
        if (options.create !== false && !fs.existsSync(p))
          try {
            fs.mkdirSync(p, { mode: 0o700 })
          } catch {
            // Made meanwhile by someone else, or not possible: held if it exists.
          }
        try {
          if (!fs.lstatSync(p).isSymbolicLink()) out.push(p)
        } catch {
          // Absent.
        }
      }
    return out
  }

  export type Areas = {
    /** Real paths of the folders that exist, to bind writable. */
    write: string[]
    /** The home's real path when it lies inside a writable folder of the table (it stays read-only, its caches not). */
    readOnly: string[]
    /** Entries left out, and why (missing folders are not listed: they are simply not there). */
    skipped: { path: string; why: string }[]
  }

  export type Options = {
    /** Folders the guard adds (the project root, its git folders, OpenCode's plans): bound if they exist. */
    extra?: string[]
    /** The project root among `extra`: the user chose it, so a link on its way is followed (every other entry's is checked). */
    root?: string
    /** Create the folders of entries marked `create` when missing (default true). */
    create?: boolean
  }

  /**
   * The allow-list for an environment, as real paths of folders that exist. An entry reached through a link is bound
   * at the link's target, but only when no link on its way lies inside another writable folder (a command could have
   * made it, to open another folder at the next command); an entry that is `/`, the home folder or a folder above it
   * is left out (that would open the home whole).
   *
   * @example
   * SandboxWritable.areas({ HOME: "/home/me", TMPDIR: "/home/me" }).skipped // [{ path: "/home/me", why: "…" }]
   */
  export function areas(env: Record<string, string | undefined>, options: Options = {}): Areas {
    const home = env.HOME || os.homedir()
    const absolute = (p: string | undefined): p is string => !!p && path.isAbsolute(p)
    const base = bases(env)
    const wanted: { path: string; create: boolean; table: boolean }[] = []
    for (const e of TABLE) {
      const p = e.base === "abs" ? e.path : e.base === "env" ? env[e.path] : path.join(base[e.base], e.path)
      if (absolute(p)) wanted.push({ path: path.resolve(p), create: !!e.create, table: true })
    }
    for (const p of options.extra ?? [])
      if (absolute(p)) wanted.push({ path: path.resolve(p), create: false, table: false })

    const homeReal = real(home) ?? path.resolve(home)
    const write: string[] = []
    const skipped: Areas["skipped"] = []
    const candidates: { path: string; real: string; table: boolean }[] = []
    for (const w of wanted) {
      if (w.create && options.create !== false && !fs.existsSync(w.path))
        try {
          fs.mkdirSync(w.path, { recursive: true, mode: 0o700 })
        } catch {
          // Left read-only.
        }
      const r = real(w.path)
      // The table's entries are folders; a folder or file the user names (`sandbox.writable`) is bound as it is.
      if (!r || (w.table && !isDir(r))) continue
      // A cache or temporary folder that is the root or the home would open the home whole (one above the home is
      // bound with the home read-only inside it).
      if (w.table && (r === "/" || r === homeReal)) {
        skipped.push({ path: w.path, why: r === "/" ? "it is the root folder" : "it is the home folder" })
        continue
      }
      candidates.push({ path: w.path, real: r, table: w.table })
    }
    const root = options.root ? path.resolve(options.root) : undefined
    // Set below from the entries that hold the home and pass the link check (the home's bounds cannot matter to them:
    // their links lie at the home or above).
    let projectHolds = false
    /** Whether a link lies where a command could have made it: in another writable folder, not in the home inside it. */
    const placeable = (link: string, self: (typeof candidates)[number]) => {
      const spots = [link, path.join(real(path.dirname(link)) ?? path.dirname(link), path.basename(link))]
      const bounds = [
        ...candidates.filter((o) => o !== self).flatMap((o) => [o.path, o.real].map((p) => ({ p, writable: true }))),
        ...(projectHolds ? [] : [home, homeReal].map((p) => ({ p, writable: false }))),
      ]
      return spots.some((spot) => {
        const around = bounds.filter((b) => inside(spot, b.p)).sort((a, b) => b.p.length - a.p.length)[0]
        return !!around?.writable
      })
    }
    // A link on the way that lies in another writable folder may be a command's: the entry is refused, never followed,
    // whatever its source (the table, the project's git folders, OpenCode's folders, `sandbox.writable`).
    const linkOf = (c: (typeof candidates)[number]) =>
      c.path === root ? undefined : linksOnWay(c.path).find((l) => placeable(l, c))
    projectHolds = candidates.some((c) => !c.table && (c.real === homeReal || inside(homeReal, c.real)) && !linkOf(c))
    for (const c of candidates) {
      const link = linkOf(c)
      if (link) {
        skipped.push({ path: c.path, why: `${link} is a link inside another writable folder` })
        continue
      }
      write.push(c.real)
    }
    const tables = candidates.filter((c) => c.table && write.includes(c.real))
    const readOnly = !projectHolds && tables.some((c) => inside(homeReal, c.real)) ? [homeReal] : []
    return { write: [...new Set(write)], readOnly, skipped }
  }

  function bases(env: Record<string, string | undefined>): Record<Exclude<Base, "abs" | "env">, string> {
    const home = env.HOME || os.homedir()
    const absolute = (p: string | undefined): p is string => !!p && path.isAbsolute(p)
    return {
      home,
      cache: absolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(home, ".cache"),
      data: absolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, ".local", "share"),
      cargo: absolute(env.CARGO_HOME) ? env.CARGO_HOME : path.join(home, ".cargo"),
      gopath: (env.GOPATH ?? "").split(path.delimiter).find(absolute) ?? path.join(home, "go"),
    }
  }

  /** The links among a path's components (the path itself included). */
  function linksOnWay(p: string): string[] {
    const out: string[] = []
    const parts = path.resolve(p).split(path.sep).filter(Boolean)
    let at = "/"
    for (const part of parts) {
      at = path.join(at, part)
      try {
        if (fs.lstatSync(at).isSymbolicLink()) out.push(at)
      } catch {
        break
      }
    }
    return out
  }

  function real(p: string): string | undefined {
    try {
      return fs.realpathSync.native(p)
    } catch {
      return undefined
    }
  }

  function isDir(p: string): boolean {
    try {
      return fs.statSync(p).isDirectory()
    } catch {
      return false
    }
  }

  function inside(child: string, parent: string) {
    return child !== parent && child.startsWith(parent.endsWith("/") ? parent : parent + "/")
  }
}
