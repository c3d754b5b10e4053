import { LocalState } from "../learning/local"
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
 *   in OpenCode. The checks are silent (no audit entry per listed file): listing is not an access attempt. The
 *   policy's segment markers are given too (`Host.segments`).
 * - An invalid policy protects everything (fail closed), as it refuses every file tool in OpenCode.
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
    const guard = await SecurityGuard.create({ directory, worktree, home, env: {} })
    if (!guard.active()) {
      guard.close()
      return { host: {}, close: () => {} }
    }
    // Hard links to protected files are recognised once the index of protected files is built.
    await guard.ready()
    const state = guard.state().status
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
      close: () => guard.close(),
    }
  }
}
