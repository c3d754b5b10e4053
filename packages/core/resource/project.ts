import fs from "fs"
import path from "path"

/**
 * Where a project's resources live. The project root is the worktree when the directory lies inside a real one
 * (OpenCode reports "/" outside git, which is never used), else the directory itself. Resources are read from every
 * `.opencode` folder between the directory and the root, nearest first, so a package in a monorepo sees its own
 * resources and the repository's.
 *
 * @example
 * const project = ResourceProject.resolve("/repo/packages/app", "/repo")
 * project.root // "/repo"
 * project.opencodeDirs // ["/repo/packages/app/.opencode", "/repo/.opencode"]
 */
export namespace ResourceProject {
  export type Info = {
    /** Real (symlink-resolved) project root: nothing outside it is ever read. */
    root: string
    /** Real path of the directory OpenCode runs in. */
    directory: string
    /** `.opencode` folders to scan, nearest first (they need not exist). */
    opencodeDirs: string[]
  }

  function real(p: string) {
    try {
      return fs.realpathSync.native(p)
    } catch {
      return path.resolve(p)
    }
  }

  export function resolve(directory: string, worktree?: string): Info {
    const dir = real(directory)
    const tree = worktree && worktree !== "/" ? real(worktree) : undefined
    const root = tree && isInside(dir, tree) ? tree : dir
    const opencodeDirs: string[] = []
    let current = dir
    while (true) {
      opencodeDirs.push(path.join(current, ".opencode"))
      if (current === root) break
      const parent = path.dirname(current)
      if (parent === current) break
      current = parent
    }
    return { root, directory: dir, opencodeDirs }
  }

  /** True when `child` is `parent` or lies below it (both absolute, normalised). */
  export function isInside(child: string, parent: string): boolean {
    const rel = path.relative(parent, child)
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
  }

  /**
   * A project-relative path as answers show it: relative to the directory OpenCode (or the MCP server) runs in, the
   * base its clients resolve a relative path from (OpenCode's read tool, an MCP client started there), so from a
   * package of a monorepo the repository's resources read `../../.opencode/…`. Unchanged when the directory is the root.
   *
   * @example
   * ResourceProject.shown({ root: "/repo", directory: "/repo/packages/server", opencodeDirs: [] }, ".opencode/kb/a.md")
   * // "../../.opencode/kb/a.md"
   */
  export function shown(info: Info, relativePath: string): string {
    if (info.directory === info.root) return relativePath
    return path.relative(info.directory, path.join(info.root, relativePath)).split(path.sep).join("/")
  }

  /**
   * A problem's message with the project-relative files it quotes (`files`) shown as `path` is: relative to the
   * client's directory, so lint run in a subfolder names a file and its missing target from the same base (EF-7).
   */
  export function message(info: Info, problem: { message: string; files?: string[] }): string {
    let text = problem.message
    for (const file of problem.files ?? []) text = text.split(`'${file}'`).join(`'${shown(info, file)}'`)
    return text
  }

  /** Project-relative path with forward slashes. */
  export function relative(info: Info, p: string): string {
    return path.relative(info.root, p).split(path.sep).join("/")
  }
}
