import { OpenCode } from "../opencode"
import { SecurityConfig } from "./config"
import type { SecuritySchema } from "./schema"

/**
 * MCP tools. OpenCode names an MCP tool `<server>_<tool>`, with every character outside `[A-Za-z0-9_-]`
 * of both names replaced by `_`. The server is identified exactly against the configured server names — never by
 * splitting at the first `_` (a server called `my_docs` is not `my`). When two configured servers could both own a
 * tool name, the stricter policy applies.
 *
 * @example
 * SecurityMcp.serversOf("my_docs_search", ["my", "my_docs"]) // ["my", "my_docs"]: ambiguous, strictest wins
 * SecurityMcp.serversOf("docs_search", ["docs", "jira"])     // ["docs"]
 */
export namespace SecurityMcp {
  /** OpenCode's sanitising of server and tool names in tool ids. */
  export const sanitise = OpenCode.sanitise

  /** Configured servers that could own the tool id (its prefix is `<sanitised server>_`). */
  export function serversOf(toolId: string, servers: readonly string[]): string[] {
    return servers.filter((s) => {
      const prefix = sanitise(s) + "_"
      return toolId.startsWith(prefix) && toolId.length > prefix.length
    })
  }

  const RANK: Record<SecuritySchema.McpPolicy, number> = { trusted: 0, enforced: 1, blocked: 2 }

  /**
   * The policy for a tool id: undefined when no configured server owns it (not an MCP tool), else the strictest
   * policy among the servers that could own it.
   *
   * @example
   * SecurityMcp.policyOfTool(state, "docs_search", ["docs"]) // "trusted" when the policy lists docs as trusted
   */
  export function policyOfTool(
    state: SecurityConfig.State,
    toolId: string,
    servers: readonly string[],
  ): { policy: SecuritySchema.McpPolicy; servers: string[] } | undefined {
    const owners = serversOf(toolId, servers)
    if (!owners.length) return undefined
    let policy: SecuritySchema.McpPolicy = "trusted"
    for (const s of owners) {
      const p = SecurityConfig.getMcpPolicy(state, s)
      if (RANK[p] > RANK[policy]) policy = p
    }
    return { policy, servers: owners }
  }
}
