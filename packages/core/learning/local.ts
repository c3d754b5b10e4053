import fs from "fs"
import path from "path"
import type { Exposed } from "../builtins/feature"
import type { Host } from "../host"
import { ResourceProject } from "../resource/project"

/**
 * The project's local state of the integration features (learnings, captured tool calls): one folder under the
 * project root's `.opencode/`, never committed (`opencode-builtins init` adds it to `.gitignore`), written atomically.
 * Also the redaction every write goes through: the security layer's `scanAndRedact` when a policy is in force.
 *
 * @example
 * LocalState.dir("/repo") // "/repo/.opencode/builtins-local"
 * LocalState.redactor(host)("password: hunter2") // redacted when the policy protects it
 */
export namespace LocalState {
  /** Relative to the project root. */
  export const DIR = ".opencode/builtins-local"

  /** What `init` adds to `.gitignore`: this folder and the security layer's default audit log. */
  export const GITIGNORE = [`${DIR}/`, ".opencode-security-audit.log*"] as const

  /** The project root (the worktree holding the directory, else the directory), as the resource loader sees it. */
  export function root(directory: string, worktree?: string): string {
    return ResourceProject.resolve(directory, worktree).root
  }

  export function dir(root: string): string {
    return path.join(root, DIR)
  }

  /** Writes `file` atomically (a temporary file renamed over it), creating the folder. */
  export function write(file: string, text: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const tmp = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`
    fs.writeFileSync(tmp, text)
    fs.renameSync(tmp, file)
  }

  const bound = new WeakMap<Host, Exposed>()

  /**
   * Lets the features of one composition find the security layer's guard (the composition root calls this with the
   * object the security feature fills in when it starts).
   */
  export function bind(host: Host, exposed: Exposed) {
    bound.set(host, exposed)
  }

  export type Redactor = (text: string) => string

  /**
   * `scanAndRedact` for text about to be stored, read at call time: the guard's model-bound scan (secrets, protected
   * content, protected paths) when a policy is in force, else the text unchanged.
   */
  export function redactor(host: Host): Redactor {
    return (text) => {
      const guard = bound.get(host)?.guard
      if (!guard || !guard.active()) return text
      return guard.scanAndRedact(text, { scope: "llm", paths: "token" }).text
    }
  }

  /** Resolves when the guard's first index of protected files is built (at most a few seconds), or at once. */
  export async function ready(host: Host): Promise<void> {
    await bound.get(host)?.ready?.()
  }
}
