import fs from "fs"
import os from "os"
import path from "path"

/**
 * The folders a sandboxed command may write: everything else is read-only inside the sandbox (`SandboxPlan`), so a
 * command cannot plant what programs on the host run later (shell startup files and what they source, zsh's compiled
 * `.zwc` copies, session services, URL handlers, an interpreter installed in the home, a package manager's global
 * configuration). Besides the project and the folders the guard adds for it (its git folders, OpenCode's plans and
 * worktree), the allow-list is this one table: the temporary folders and the per-user caches and package stores
 * ordinary builds write.
 *
 * Caches stay writable, and some of what they hold runs on the host later (pre-commit's environments in `~/.cache`,
 * what `npx` keeps in `~/.npm/_npx`, crates' build scripts in `~/.cargo/registry`): a residual the docs name.
 *
 * @example
 * SandboxWritable.areas({ HOME: "/home/me" }).write // ["/tmp", "/var/tmp", "/home/me/.cache", "/home/me/.npm", …]
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

  /** The allow-list (the project, its git folders and OpenCode's writable folders are added by the guard). */
  export const TABLE: readonly Entry[] = [
    { base: "abs", path: "/tmp", why: "temporary files (shared with the host)" },
    { base: "abs", path: "/var/tmp", why: "temporary files (shared with the host)" },
    { base: "env", path: "TMPDIR", why: "the temporary folder the environment names" },
    {
      base: "cache",
      path: "",
      create: true,
      why: "per-user caches: pip, uv, go build, yarn 1, deno, node-gyp, pre-commit",
    },
    { base: "home", path: ".npm", why: "npm's cache" },
    { base: "env", path: "npm_config_cache", why: "npm's cache where the environment moves it" },
    { base: "home", path: ".bun/install/cache", why: "bun's package cache" },
    { base: "env", path: "BUN_INSTALL_CACHE_DIR", why: "bun's package cache where the environment moves it" },
    { base: "cargo", path: "registry", why: "cargo's crate downloads" },
    { base: "cargo", path: "git", why: "cargo's git dependencies" },
    { base: "gopath", path: "pkg/mod", why: "go's module cache" },
    { base: "env", path: "GOMODCACHE", why: "go's module cache where the environment moves it" },
    { base: "home", path: ".m2/repository", why: "maven's local repository" },
    { base: "home", path: ".gradle/caches", why: "gradle's caches" },
    { base: "home", path: ".gradle/wrapper/dists", why: "the gradle wrapper's downloads" },
    { base: "data", path: "pnpm/store", why: "pnpm's store" },
    { base: "home", path: ".pnpm-store", why: "pnpm's store (older default)" },
    { base: "home", path: ".yarn/berry/cache", why: "yarn 2+'s global cache" },
  ]

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
    const bases: Record<Exclude<Base, "abs" | "env">, string> = {
      home,
      cache: absolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(home, ".cache"),
      data: absolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, ".local", "share"),
      cargo: absolute(env.CARGO_HOME) ? env.CARGO_HOME : path.join(home, ".cargo"),
      gopath: (env.GOPATH ?? "").split(path.delimiter).find(absolute) ?? path.join(home, "go"),
    }
    const wanted: { path: string; create: boolean; table: boolean }[] = []
    for (const e of TABLE) {
      const p = e.base === "abs" ? e.path : e.base === "env" ? env[e.path] : path.join(bases[e.base], e.path)
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
