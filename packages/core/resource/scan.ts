import { statSync, type Stats } from "fs"
import fs from "fs/promises"
import path from "path"
import { ResourceProject } from "./project"
import { Resource } from "./schema"

/**
 * Finds resource files (`.opencode/<type>/**`) and the agent and command files that may reference them, with their
 * size and mtime, without reading contents. Symlinks are followed only while they stay inside the project; loops and
 * links leading outside are reported, never followed. Dot files and dot directories are skipped, like a glob would.
 *
 * @example
 * const found = await ResourceScan.scan(ResourceProject.resolve("/repo"))
 * found.resources[0] // { kind: "resource", type: "task", relativePath: ".opencode/task/ship.md", size, mtimeMs, ... }
 */
export namespace ResourceScan {
  export type File = {
    kind: "resource" | "agent" | "command"
    /** Resource type, for `kind: "resource"`. */
    type?: Resource.Type
    /** Absolute path as found (through any symlinked directory). */
    path: string
    /** Real path (symlinks resolved), always inside the project root. */
    real: string
    relativePath: string
    /**
     * Size and mtime from a `stat`. Agent and command files of a project without any resource file are listed
     * without one (nothing can reference a resource there, so they are never read): `-1` for both.
     */
    size: number
    mtimeMs: number
  }

  export type Result = {
    resources: File[]
    references: File[]
    warnings: Resource.Warning[]
    /**
     * Every folder looked at (scanned, or looked for and missing: `mtimeMs` null) with its mtime. Adding, removing
     * or renaming an entry changes its folder's mtime, so these stamps tell whether a scan is out of date.
     */
    dirs: Map<string, number | null>
    /** When the scan began (`Date.now()`): folders changed shortly before it may change again unseen (`racy`). */
    listedAt: number
  }

  /**
   * Timestamps come from a coarse clock (a file system may keep seconds, the kernel ticks every few milliseconds): a
   * folder whose mtime lies within this of its listing may change again without its mtime changing, so its stamp
   * proves nothing (git's "racily clean" entries; `SecurityTree` does the same).
   */
  export const RACY_MS = 2_000

  /** True when a stamp taken by a scan that began at `listedAt` cannot be trusted to show later changes. */
  export function racy(mtimeMs: number | null, listedAt: number): boolean {
    return mtimeMs !== null && mtimeMs > listedAt - RACY_MS
  }

  /** True when a folder of an earlier scan changed, appeared or disappeared since. */
  export async function changed(dirs: Map<string, number | null>): Promise<boolean> {
    const stamps = await Promise.all(
      [...dirs.keys()].map((dir) =>
        fs.stat(dir).then(
          (s) => s.mtimeMs,
          () => null,
        ),
      ),
    )
    let i = 0
    for (const before of dirs.values()) if (stamps[i++] !== before) return true
    return false
  }

  /** Agent and command folders, OpenCode's and Claude Code's, relative to the folder holding `.opencode`. */
  const REFERENCE_DIRS: [string, "agent" | "command"][] = [
    [".opencode/agent", "agent"],
    [".opencode/agents", "agent"],
    [".opencode/command", "command"],
    [".opencode/commands", "command"],
    [".claude/agents", "agent"],
    [".claude/commands", "command"],
  ]

  const isJson = (p: string) => p.toLowerCase().endsWith(".json")
  /** Markdown resources: `.md`, and `.mdx` (Markdown with JSX, as Astro's and Docusaurus's docs are written). */
  const isMarkdown = (p: string) => {
    const lower = p.toLowerCase()
    return lower.endsWith(".md") || lower.endsWith(".mdx")
  }

  /** A file found by a listing, not stat'ed yet. */
  type Found = { path: string; real: string; tag: Pick<File, "kind" | "type"> }

  export async function scan(project: ResourceProject.Info): Promise<Result> {
    const result: Result = { resources: [], references: [], warnings: [], dirs: new Map(), listedAt: Date.now() }
    const visited = new Set<string>()
    // Agent and command files are stat'ed only once a resource file is known to exist: a project with hundreds of
    // Claude Code agents and no resource (the discovery engine asks on every first prompt) pays one listing and one
    // stamp per folder, not a stat per file. Their order among themselves is kept.
    const deferred: Found[] = []
    for (const opencodeDir of project.opencodeDirs) {
      for (const type of Resource.TYPES) {
        await walk(project, path.join(opencodeDir, type), visited, result, type === "schema" ? isJson : isMarkdown, {
          kind: "resource",
          type,
        })
      }
      const base = path.dirname(opencodeDir)
      for (const [rel, kind] of REFERENCE_DIRS) {
        await walk(
          project,
          path.join(base, rel),
          visited,
          result,
          (p) => p.toLowerCase().endsWith(".md"),
          { kind },
          deferred,
        )
      }
    }
    if (result.resources.length) record(project, result, deferred)
    else
      for (const f of deferred)
        result.references.push({
          ...f.tag,
          path: f.path,
          real: f.real,
          relativePath: relativeTo(project.root, f.path),
          size: -1,
          mtimeMs: -1,
        })
    return result
  }

  /**
   * Stats found files and adds them to the result. Synchronous on purpose: a promise per stat cost more than the stat
   * itself (a 10k-file scan: ≈ 55 ms of CPU time with async stats, ≈ 37 ms with these). The price: a file system that
   * hangs between a folder's listing (async) and these stats would block the thread instead of one build.
   */
  function record(project: ResourceProject.Info, result: Result, found: Found[]) {
    for (const f of found) {
      let stat: Stats
      try {
        stat = statSync(f.real)
      } catch (error) {
        warn(result, project, f.path, "unreadable", `cannot stat ${rel(project, f.path)}: ${code(error)}`)
        continue
      }
      const file: File = {
        ...f.tag,
        path: f.path,
        real: f.real,
        relativePath: relativeTo(project.root, f.path),
        size: stat.size,
        mtimeMs: stat.mtimeMs,
      }
      if (f.tag.kind === "resource") result.resources.push(file)
      else result.references.push(file)
    }
  }

  async function walk(
    project: ResourceProject.Info,
    dir: string,
    visited: Set<string>,
    result: Result,
    accept: (p: string) => boolean,
    tag: Pick<File, "kind" | "type">,
    /** Where to leave found files unstat'ed (see `scan`); without it they are stat'ed folder by folder. */
    defer?: Found[],
  ) {
    const realDir = await fs.realpath(dir).catch(() => undefined)
    if (!realDir) {
      result.dirs.set(dir, null)
      // The folder holding a missing one shows when it is created.
      const parent = path.dirname(dir)
      if (!result.dirs.has(parent))
        result.dirs.set(
          parent,
          await fs.stat(parent).then(
            (s) => s.mtimeMs,
            () => null,
          ),
        )
      return
    }
    if (!ResourceProject.isInside(realDir, project.root)) {
      warn(result, project, dir, "outside-project", `${rel(project, dir)} resolves outside the project; not scanned`)
      return
    }
    const key = `${tag.kind}:${tag.type ?? ""}:${realDir}`
    if (visited.has(key)) return
    visited.add(key)
    const stack: { dir: string; real: string; chain: Set<string> }[] = [
      { dir, real: realDir, chain: new Set([realDir]) },
    ]
    while (stack.length) {
      const current = stack.pop()!
      result.dirs.set(
        current.dir,
        await fs.stat(current.dir).then(
          (s) => s.mtimeMs,
          () => null,
        ),
      )
      const entries = await fs.readdir(current.dir, { withFileTypes: true }).catch((error) => {
        warn(result, project, current.dir, "unreadable", `cannot list ${rel(project, current.dir)}: ${code(error)}`)
        return []
      })
      const files: { path: string; real: string }[] = []
      for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        if (entry.name.startsWith(".")) continue
        // Plain concatenation: path.join costs more than the rest of the loop on large trees.
        const full = current.dir + path.sep + entry.name
        if (entry.isDirectory()) {
          const real = current.real + path.sep + entry.name
          stack.push({ dir: full, real, chain: new Set([...current.chain, real]) })
          continue
        }
        if (entry.isFile()) {
          if (accept(entry.name)) files.push({ path: full, real: current.real + path.sep + entry.name })
          continue
        }
        if (!entry.isSymbolicLink()) {
          if (accept(entry.name))
            warn(result, project, full, "unreadable", `${rel(project, full)} is not a regular file; skipped`)
          continue
        }
        const target = await fs.realpath(full).catch((error: NodeJS.ErrnoException) => error)
        if (target instanceof Error) {
          const loop = target.code === "ELOOP"
          warn(
            result,
            project,
            full,
            loop ? "symlink-loop" : "unreadable",
            loop
              ? `${rel(project, full)} is a symlink loop; skipped`
              : `${rel(project, full)} is a broken symlink (${code(target)}); skipped`,
          )
          continue
        }
        if (!ResourceProject.isInside(target, project.root)) {
          if (accept(entry.name) || (await isDir(target)))
            warn(result, project, full, "outside-project", `${rel(project, full)} links outside the project; skipped`)
          continue
        }
        const stat = await fs.stat(target).catch(() => undefined)
        if (stat?.isDirectory()) {
          if (current.chain.has(target)) {
            warn(result, project, full, "symlink-loop", `${rel(project, full)} links back to a parent; skipped`)
            continue
          }
          stack.push({ dir: full, real: target, chain: new Set([...current.chain, target]) })
        } else if (stat?.isFile() && accept(entry.name)) files.push({ path: full, real: target })
      }
      const found = files.map((f) => ({ ...f, tag }))
      if (defer) defer.push(...found)
      else record(project, result, found)
    }
  }

  /** Project-relative path of a path known to lie below the root (cheaper than path.relative on hot paths). */
  function relativeTo(root: string, p: string): string {
    const rel = p.startsWith(root + path.sep) ? p.slice(root.length + 1) : path.relative(root, p)
    return path.sep === "/" ? rel : rel.split(path.sep).join("/")
  }

  async function isDir(p: string) {
    return (await fs.stat(p).catch(() => undefined))?.isDirectory() ?? false
  }

  function rel(project: ResourceProject.Info, p: string) {
    return ResourceProject.relative(project, p)
  }

  function code(error: unknown) {
    const e = error as NodeJS.ErrnoException
    return e?.code ?? (e instanceof Error ? e.message : String(e))
  }

  function warn(
    result: Result,
    project: ResourceProject.Info,
    p: string,
    kind: Resource.Warning["code"],
    message: string,
  ) {
    result.warnings.push({ severity: "warning", code: kind, path: rel(project, p), message })
  }
}
