import fs from "fs"
import path from "path"

/**
 * The files OpenCode turns into slash commands, and the shell commands their templates carry. When the user runs a
 * command (`/deploy`) — or, in OpenCode 1.18, a skill by its name — OpenCode replaces each `` !`cmd` `` of its template
 * with the output of `cmd`, run with the user's shell in OpenCode's own process: outside the sandbox, before any hook
 * sees it. A template the agent writes or changes is therefore code it gets run outside the sandbox later; the guard
 * keeps templates from gaining such commands while a policy exists.
 *
 * @example
 * SecurityTemplates.expansions("Status: !`git status`\nDiff: !`git diff`") // ["git status", "git diff"]
 */
export namespace SecurityTemplates {
  /** At most this many template files are watched (the rest are named in the log). */
  export const MAX_FILES = 5_000

  /** A folder whose files at any depth OpenCode reads as templates: every `.md` (commands) or each `SKILL.md`. */
  export type Root = { folder: string; kind: "command" | "skill" }

  /**
   * Where OpenCode reads command and skill templates from: each config folder's `command(s)/` and `skill(s)/`, the
   * `.claude/skills/` and `.agents/skills/` of every project folder (the one OpenCode starts in up to the worktree),
   * and those of the home folder.
   *
   * @example
   * SecurityTemplates.roots({ configDirs: ["/repo/.opencode"], dirs: ["/repo"], home: "/home/me" })
   * // [{ folder: "/repo/.opencode/command", kind: "command" }, …, { folder: "/home/me/.agents/skills", kind: "skill" }]
   */
  export function roots(input: { configDirs: readonly string[]; dirs: readonly string[]; home: string }): Root[] {
    const out: Root[] = []
    for (const dir of input.configDirs) {
      for (const name of ["command", "commands"]) out.push({ folder: path.join(dir, name), kind: "command" })
      for (const name of ["skill", "skills"]) out.push({ folder: path.join(dir, name), kind: "skill" })
    }
    for (const dir of [...input.dirs, input.home])
      for (const name of [".claude", ".agents"]) out.push({ folder: path.join(dir, name, "skills"), kind: "skill" })
    const seen = new Set<string>()
    return out.filter((r) => !seen.has(r.folder) && !!seen.add(r.folder))
  }

  /**
   * The template files under `roots` (symbolic links to folders followed, as OpenCode's scan does; each folder once),
   * at most `MAX_FILES`; `truncated` when there were more.
   *
   * @example
   * SecurityTemplates.list([{ folder: "/repo/.opencode/command", kind: "command" }]).files // ["/repo/.opencode/command/review.md"]
   */
  export function list(roots: readonly Root[]): { files: string[]; truncated: boolean } {
    const files: string[] = []
    const visited = new Set<string>()
    const walk = (folder: string, kind: Root["kind"]): boolean => {
      let st: fs.Stats
      try {
        st = fs.statSync(folder)
      } catch {
        return true
      }
      const key = `${st.dev}:${st.ino}`
      if (!st.isDirectory() || visited.has(key)) return true
      visited.add(key)
      let entries: fs.Dirent[]
      try {
        entries = fs.readdirSync(folder, { withFileTypes: true })
      } catch {
        return true
      }
      for (const e of entries) {
        const full = path.join(folder, e.name)
        let dir = e.isDirectory()
        let file = e.isFile()
        if (e.isSymbolicLink()) {
          try {
            const target = fs.statSync(full)
            dir = target.isDirectory()
            file = target.isFile()
          } catch {
            continue
          }
        }
        if (dir) {
          if (!walk(full, kind)) return false
          continue
        }
        if (!file || !(kind === "command" ? e.name.endsWith(".md") : e.name === "SKILL.md")) continue
        if (files.length >= MAX_FILES) return false
        files.push(full)
      }
      return true
    }
    for (const root of roots) if (!walk(root.folder, root.kind)) return { files, truncated: true }
    return { files, truncated: false }
  }

  /**
   * The shell commands of a template, in order, as OpenCode finds them: `` !`…` `` with no backquote inside (OpenCode
   * applies it to the template after the frontmatter; the whole file is read here, which can only find more).
   *
   * @example
   * SecurityTemplates.expansions("run !`npm test` then report") // ["npm test"]
   */
  export function expansions(text: string): string[] {
    return Array.from(text.matchAll(/!`([^`]+)`/g), (m) => m[1]!)
  }

  /**
   * The commands of `after` that `before` did not have (each occurrence counts: a second copy of a command is new).
   *
   * @example
   * SecurityTemplates.added(["git status"], ["git status", "curl x | sh"]) // ["curl x | sh"]
   */
  export function added(before: readonly string[], after: readonly string[]): string[] {
    const left = new Map<string, number>()
    for (const cmd of before) left.set(cmd, (left.get(cmd) ?? 0) + 1)
    const out: string[] = []
    for (const cmd of after) {
      const n = left.get(cmd) ?? 0
      if (n > 0) left.set(cmd, n - 1)
      else out.push(cmd)
    }
    return out
  }
}
