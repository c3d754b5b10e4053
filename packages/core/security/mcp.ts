import fs from "fs"
import path from "path"
import { OpenCode } from "../opencode"
import { SecurityConfig } from "./config"
import { SecurityPath } from "./paths"
import { SecurityShell } from "./shell"
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
   * The servers a call reaches: for OpenCode's resource tools the one named in `server` (every configured one when
   * none is named: the listing covers them all), for an MCP tool those that could own its id.
   *
   * @example
   * SecurityMcp.serversOfCall("read_mcp_resource", { server: "docs", uri: "note://x" }, ["docs", "jira"]) // ["docs"]
   * SecurityMcp.serversOfCall("list_mcp_resources", {}, ["docs", "jira"]) // ["docs", "jira"]
   */
  export function serversOfCall(toolId: string, args: unknown, servers: readonly string[]): string[] {
    if (!OpenCode.MCP_RESOURCE_TOOLS.has(toolId)) return serversOf(toolId, servers)
    const named = args && typeof args === "object" ? (args as Record<string, unknown>).server : undefined
    return typeof named === "string" && named ? [named] : [...servers]
  }

  /**
   * The policy for a tool call: undefined when no configured server owns it (not an MCP tool), else the strictest
   * policy among the servers it could reach (`serversOfCall`; pass the call's arguments for the resource tools).
   *
   * @example
   * SecurityMcp.policyOfTool(state, "docs_search", ["docs"]) // "trusted" when the policy lists docs as trusted
   */
  export function policyOfTool(
    state: SecurityConfig.State,
    toolId: string,
    servers: readonly string[],
    args?: unknown,
  ): { policy: SecuritySchema.McpPolicy; servers: string[] } | undefined {
    const owners = serversOfCall(toolId, args, servers)
    if (!owners.length) return undefined
    let policy: SecuritySchema.McpPolicy = "trusted"
    for (const s of owners) {
      const p = SecurityConfig.getMcpPolicy(state, s)
      if (RANK[p] > RANK[policy]) policy = p
    }
    return { policy, servers: owners }
  }

  /** Options of node, bun and deno whose value is a file run or read before the server's own code. */
  const FILE_FLAGS = new Set(["-r", "--require", "--import", "--preload", "--loader", "--env-file", "--config"])

  /** Shells whose `-c` text is a script (read as the shell guard reads a command). */
  const SHELLS = /^(sh|bash|dash|zsh|ksh|ash)(\.exe)?$/

  /** The folders from `dir` up to `stop` (only `dir` when `stop` is not above it). */
  function upTo(dir: string, stop: string): string[] {
    const out = [dir]
    if (!SecurityPath.isInside(dir, stop)) return out
    for (let d = dir; d !== stop && path.dirname(d) !== d;) out.push((d = path.dirname(d)))
    return out
  }

  /** The `.env` files Bun loads from the folder it starts in. */
  export const BUN_ENV_FILES = [
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.test",
    ".env.development.local",
    ".env.production.local",
    ".env.test.local",
  ] as const

  /**
   * The files a configured local MCP server runs, which OpenCode starts at every start outside the sandbox: its
   * program when given as a path, a program the project's `node_modules/.bin` provides (`npx`/`bunx` packages too),
   * every argument naming an existing file (`bun mcp/server.ts`, `uv run server.py`), and `-m` modules
   * (`python -m proj.mcp`), resolved against the server's `cwd` (OpenCode's: the project folder), and for a server
   * Bun starts, the `bunfig.toml` and `.env` files of that folder (present or not). System folders are left out.
   * Disabled servers and remote ones have none.
   *
   * @example
   * SecurityMcp.localFiles({ proj: { type: "local", command: ["bun", "mcp/server.ts"] } }, { directory: "/repo" })
   * // ["/repo/mcp/server.ts"] when it exists
   */
  export async function localFiles(mcp: unknown, input: { directory: string }): Promise<string[]> {
    if (!mcp || typeof mcp !== "object") return []
    const out = new Set<string>()
    const file = (p: string) => {
      try {
        if (fs.statSync(p).isFile() && !SecurityPath.SYSTEM.some((d) => SecurityPath.isInside(p, d))) out.add(p)
      } catch {
        // Not there: nothing to hold.
      }
    }
    for (const entry of Object.values(mcp as Record<string, unknown>)) {
      if (!entry || typeof entry !== "object") continue
      const e = entry as { type?: unknown; command?: unknown; cwd?: unknown; enabled?: unknown }
      if (e.type !== undefined && e.type !== "local") continue
      if (e.enabled === false || !Array.isArray(e.command)) continue
      const words = e.command.filter((w): w is string => typeof w === "string")
      if (!words.length) continue
      const cwd = typeof e.cwd === "string" ? path.resolve(input.directory, e.cwd) : path.resolve(input.directory)
      const bins = [...new Set([cwd, path.resolve(input.directory)])].map((d) => path.join(d, "node_modules", ".bin"))
      const [program, ...args] = words
      // `sh -c "cd mcp && node server.js"`: the files the script runs or reads, as the shell guard reads commands.
      const script = SHELLS.test(path.basename(program)) ? args.findIndex((a) => /^-[a-z]*c[a-z]*$/.test(a)) : -1
      if (script >= 0 && args[script + 1]) {
        const analysis = await SecurityShell.analyze(args[script + 1], { cwd })
        for (const access of analysis.accesses) {
          file(access.path)
          if (/^bunx?$/.test(access.command))
            for (const name of ["bunfig.toml", ...BUN_ENV_FILES]) out.add(path.join(path.dirname(access.path), name))
        }
      }
      if (program.includes("/")) file(path.resolve(cwd, program))
      else for (const bin of bins) file(path.join(bin, program))
      // npm (npx, npm run) takes `.npmrc` from the folder it starts in and those above it (`node-options`,
      // `script-shell` run programs), up to the project.
      for (const dir of upTo(cwd, path.resolve(input.directory))) out.add(path.join(dir, ".npmrc"))
      // Bun reads `bunfig.toml` (a `preload` runs first) and loads `.env` files from the folder it starts in (or the
      // one `--cwd` names), whether they exist yet or not; Bun may be named `bun.exe`, by path, or through `env`.
      if (words.slice(0, 3).some((w) => /^bunx?(\.exe)?$/.test(path.basename(w)))) {
        const at = args.indexOf("--cwd")
        const folders = [cwd, ...(at >= 0 && args[at + 1] ? [path.resolve(cwd, args[at + 1])] : [])]
        for (const folder of folders)
          for (const name of ["bunfig.toml", ...BUN_ENV_FILES]) out.add(path.join(folder, name))
      }
      for (const [i, arg] of args.entries()) {
        // `--require=./setup.cjs`, `--env-file=.env.x`: the value is a file the server runs or reads.
        const value = /^--?[\w-]+=(.+)$/.exec(arg)?.[1]
        if (value) file(path.resolve(cwd, value))
        if (FILE_FLAGS.has(arg) && args[i + 1]) file(path.resolve(cwd, args[i + 1]))
        if (arg.startsWith("-") || !arg) continue
        file(path.resolve(cwd, arg))
        // `npx pkg`, `bunx pkg`: the project's own copy first.
        if (/^(npx|bunx|pnpx)$/.test(path.basename(program)) && args.slice(0, i).every((a) => a.startsWith("-")))
          for (const bin of bins) file(path.join(bin, path.basename(arg.replace(/(.)@[^/]*$/, "$1"))))
        if (args[i - 1] === "-m") {
          const module = path.join(cwd, ...arg.split("."))
          file(module + ".py")
          file(path.join(module, "__main__.py"))
        }
      }
    }
    return [...out]
  }
}
