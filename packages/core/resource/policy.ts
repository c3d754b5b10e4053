import { LocalState } from "../learning/local"
import { SecurityConfig } from "../security/config"
import { SecurityGuard } from "../security/guard"
import type { ResourceAccess } from "./access"

/**
 * The project's security policy (`.opencode-security.json`) for the command-line tools that list resources and
 * definitions (`opencode-builtins resources …`, `opencode-builtins discover …`). The agent can run these through the
 * shell, so they hide what the policy protects like the tools inside OpenCode do.
 *
 * - The policy's lowest role applies, whatever `OPENCODE_SECURITY_ROLE` says: the agent's shell can set that variable
 *   for the command it runs, so the command line cannot tell the user's role from one the agent chose.
 * - A path counts as protected when the policy denies `read` or `llm` for it, as `Host.access(path, "read")` does
 *   in OpenCode. The checks are silent: listing is not an access attempt, and nothing is appended to the audit log
 *   (not even the policy's state: a command that only reads writes nothing in the project). The policy's segment
 *   markers are given too (`Host.segments`).
 * - An invalid policy protects everything (fail closed), as it refuses every file tool in OpenCode; `invalid` says
 *   which file and why, so `resources lint` fails on it and `resources query` does not call the project empty.
 * - Without a policy file nothing is checked and nothing is hidden.
 *
 * @example
 * const policy = await ResourcePolicy.open("/repo")
 * try {
 *   const loader = ResourceLoader.create({ directory: "/repo", worktree: "/repo", log, ...policy.host })
 * } finally {
 *   policy.close()
 * }
 */
export namespace ResourcePolicy {
  export type Opened = {
    /** The access check to give a host, empty without a policy. */
    host: ResourceAccess.Source
    /** One line for the user when a policy applies (or is invalid), else undefined. */
    notice?: string
    /**
     * Set when the policy is invalid, so every resource is hidden: the policy files and why each is invalid
     * (`SecurityConfig.describe`), for a command to report instead of an empty project.
     */
    invalid?: { files: string[]; reason: string }
    close(): void
  }

  /**
   * Opens the policy of the project holding `directory` (the worktree root when inside one); `home` is what `~/`
   * in its patterns means (default: the account's home directory).
   *
   * @example
   * const { host, notice, close } = await ResourcePolicy.open(process.cwd())
   */
  export async function open(directory: string, worktree?: string, home?: string): Promise<Opened> {
    const guard = await SecurityGuard.create({ directory, worktree, home, env: {}, audit: false })
    if (!guard.active()) {
      guard.close()
      return { host: {}, close: () => {} }
    }
    // Hard links to protected files are recognised once the index of protected files is built.
    await guard.ready()
    const current = guard.state()
    const state = current.status
    const denied = (target: string) => {
      for (const op of ["read", "llm"] as const) {
        const decision = guard.check(target, op)
        if (!decision.allowed) return decision.reason
      }
      return undefined
    }
    return {
      host: {
        access: async (target) => denied(target),
        accessVersion: () => 0,
        segments: () => guard.segments(),
        // The caches these tools keep (the resource index, discovery's parse cache) are the lowest role's files.
        accessScope: () => LocalState.guardScope(guard),
      },
      notice:
        state === "invalid"
          ? "the security policy is invalid: everything is treated as protected until it is fixed"
          : `security policy applied (role ${guard.role()}): protected items are not shown`,
      invalid:
        current.status === "invalid"
          ? {
              files: [...new Set(current.problems.map((p) => p.file))],
              reason: SecurityConfig.describe(current.problems),
            }
          : undefined,
      close: () => guard.close(),
    }
  }
}
