import { createHash } from "crypto"
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

  /** What the folder's own `.gitignore` holds: everything in it, so no project commits it, with or without `init`. */
  export const OWN_GITIGNORE =
    "# Local state of OpenCode Built-ins (caches, heartbeats, captures): never committed.\n*\n"

  /**
   * Creates `folder` (the local state folder or one inside it) and the local state folder's own `.gitignore` ignoring
   * everything in it, when it has none (also after the folder was deleted); an existing one is left as it is.
   *
   * @example
   * LocalState.ensure("/repo/.opencode/builtins-local/recovery") // also writes /repo/.opencode/builtins-local/.gitignore
   */
  export function ensure(folder: string) {
    fs.mkdirSync(folder, { recursive: true })
    const marker = path.sep + path.normalize(DIR)
    const at = folder.lastIndexOf(marker + path.sep)
    const local = folder.endsWith(marker) ? folder : at >= 0 ? folder.slice(0, at + marker.length) : undefined
    if (!local) return
    try {
      fs.writeFileSync(path.join(local, ".gitignore"), OWN_GITIGNORE, { flag: "wx" })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
  }

  /** Writes `file` atomically (a temporary file renamed over it), creating the folder. */
  export function write(file: string, text: string) {
    ensure(path.dirname(file))
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

  /**
   * Under which security policy and role local state is written or read back: the role in force and a hash of the
   * policy files' bytes, or undefined without a policy in force. Stored with what the integration features keep
   * (redacted for that role and policy only), so a reader of another role or policy can be shown less: an admin
   * session's captured output was listed to a viewer's MCP client.
   *
   * @example
   * LocalState.scope(host) // "viewer:3f2a…" under a policy, undefined without one
   */
  export function scope(host: Host): string | undefined {
    const guard = bound.get(host)?.guard
    if (!guard || !guard.active()) return undefined
    // Every captured call asks: the policy files are hashed again only when the guard reloaded them.
    const version = guard.accessVersion()
    const known = scopes.get(host)
    if (known?.version === version) return known.scope
    const status = guard.status()
    const scope = scopeOf(status.role, status.files)
    scopes.set(host, { version, scope })
    return scope
  }

  const scopes = new WeakMap<Host, { version: number; scope: string }>()

  /**
   * The security role in force (the role part of `scope`), or undefined without a policy in force.
   *
   * @example
   * LocalState.role(host) // "viewer" under a policy, undefined without one
   */
  export function role(host: Host): string | undefined {
    const guard = bound.get(host)?.guard
    return guard?.active() ? guard.status().role : undefined
  }

  /**
   * The scope of a role under the policy files `files` (their paths and bytes).
   *
   * @example
   * LocalState.scopeOf("viewer", ["/repo/.opencode-security.json"]) // "viewer:3f2a…"
   */
  export function scopeOf(role: string, files: readonly string[]): string {
    const hash = createHash("sha256")
    for (const file of files) {
      hash.update(file + "\0")
      try {
        hash.update(fs.readFileSync(file))
      } catch {
        hash.update("unreadable")
      }
    }
    return `${role}:${hash.digest("hex").slice(0, 16)}`
  }

  /** Resolves when the guard's first index of protected files is built (at most a few seconds), or at once. */
  export async function ready(host: Host): Promise<void> {
    await bound.get(host)?.ready?.()
  }
}
