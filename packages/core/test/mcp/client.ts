import { afterAll, beforeAll } from "bun:test"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import path from "path"
import { tmpdir } from "../fixture"

/** The CLI that serves `opencode-builtins mcp`. */
export const CLI = path.resolve(import.meta.dir, "../../../plugin/cli.ts")

/**
 * The real MCP server process started in `dir`, driven by the SDK's own client; closed (and the process stopped) when
 * disposed.
 *
 * @example
 * await using mcp = await connect(dir.path)
 * const { text } = await mcp.call("resource-query", { query: "router" })
 */
export async function connect(dir: string, env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", "--quiet"],
    cwd: dir,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: "pipe",
  })
  const client = new Client({ name: "test", version: "1.0.0" })
  await client.connect(transport)
  return {
    client,
    async call(name: string, args: Record<string, unknown>) {
      const result = (await client.callTool({ name, arguments: args })) as {
        content: { type: string; text: string }[]
        isError?: boolean
      }
      return { text: result.content.map((c) => c.text).join(""), isError: result.isError === true }
    },
    [Symbol.asyncDispose]: () => client.close(),
  }
}

/**
 * Home and XDG folders of the test file (empty), set for its tests and restored after them, so both routes scan the
 * same user folders and nothing reads or writes the real ones.
 */
export function isolateUserFolders() {
  const saved: Record<string, string | undefined> = {}
  let home: Awaited<ReturnType<typeof tmpdir>>
  beforeAll(async () => {
    home = await tmpdir({ ".keep": "" })
    for (const key of ["HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"]) {
      saved[key] = process.env[key]
      process.env[key] = path.join(home.path, key.toLowerCase())
    }
  })
  afterAll(async () => {
    for (const [key, value] of Object.entries(saved))
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    await home[Symbol.asyncDispose]()
  })
}
