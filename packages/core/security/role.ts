import type { SecuritySchema } from "./schema"

/**
 * Roles: who is exempt from a rule. The current role comes from `OPENCODE_SECURITY_ROLE`, which the user sets when
 * starting OpenCode (the agent's shell commands run in child processes and cannot change it). Without it, the
 * lowest-level role applies, so forgetting the variable never grants more.
 *
 * @example
 * SecurityRole.getDefault({ roles: [{ name: "admin", level: 100 }, { name: "viewer", level: 10 }] }) // "viewer"
 */
export namespace SecurityRole {
  /** The role every policy without `roles` knows, and the default when no role is defined. */
  export const IMPLICIT = "viewer"
  export const ENV = "OPENCODE_SECURITY_ROLE"

  /** Role name → level. */
  export type Table = ReadonlyMap<string, number>

  /**
   * The default role of a policy: the lowest-level role (the first listed among equals), or `viewer` when the policy
   * defines no roles.
   *
   * @example
   * SecurityRole.getDefault({}) // "viewer"
   */
  export function getDefault(config: { roles?: SecuritySchema.Role[] } | undefined): string {
    const roles = config?.roles ?? []
    if (!roles.length) return IMPLICIT
    let lowest = roles[0]
    for (const role of roles) if (role.level < lowest.level) lowest = role
    return lowest.name
  }

  /**
   * The role in force: `OPENCODE_SECURITY_ROLE` when it names a known role, otherwise the default. An unknown name
   * never elevates; it falls back to the default and says so in `warning`.
   *
   * @example
   * SecurityRole.current({ roles: [{ name: "admin", level: 100 }] }, { OPENCODE_SECURITY_ROLE: "admin" }).role // "admin"
   */
  export function current(
    config: { roles?: SecuritySchema.Role[] } | undefined,
    env: Record<string, string | undefined>,
    table?: Table,
  ): { role: string; warning?: string } {
    const fallback = getDefault(config)
    const wanted = env[ENV]?.trim()
    if (!wanted) return { role: fallback }
    const known = table ?? tableOf(config?.roles)
    if (known.has(wanted)) return { role: wanted }
    return {
      role: fallback,
      warning: `${ENV}=${wanted} is not a role of the security policy (known: ${[...known.keys()].join(", ")}); using '${fallback}'`,
    }
  }

  /** Name → level of a role list; the implicit `viewer` (level 0) when the list is empty. */
  export function tableOf(roles: SecuritySchema.Role[] | undefined): Map<string, number> {
    if (!roles?.length) return new Map([[IMPLICIT, 0]])
    return new Map(roles.map((r) => [r.name, r.level]))
  }

  /**
   * Whether `role` is exempt from a rule listing `allowedRoles`: it is listed, or its level is at least that of a
   * listed role. Levels come from the table of the policy that defines the rule, so a role only a subdirectory's
   * policy defines can never pass an ancestor's rule. An empty list exempts nobody.
   *
   * @example
   * SecurityRole.allowed(new Map([["viewer", 10], ["admin", 100]]), "admin", ["viewer"]) // true
   */
  export function allowed(table: Table, role: string, allowedRoles: readonly string[] | undefined): boolean {
    if (!allowedRoles?.length) return false
    if (allowedRoles.includes(role)) return true
    const level = table.get(role)
    if (level === undefined) return false
    for (const name of allowedRoles) {
      const needed = table.get(name)
      if (needed !== undefined && level >= needed) return true
    }
    return false
  }
}
