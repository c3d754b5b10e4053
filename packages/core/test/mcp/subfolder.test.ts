import { describe, expect, test } from "bun:test"
import { existsSync } from "fs"
import path from "path"
import { tmpdir } from "../fixture"
import { connect, isolateUserFolders } from "./client"
import { bunSpawnSync } from "../spawn-sync"

// The MCP server started in a package of a monorepo, as a client started in that package starts it (tester Q, Q5).
const KB = (title: string, tags: string) =>
  `---\ntitle: ${title}\ndescription: ${title} of the server package\ntags: [${tags}]\n---\nBody.\n`

isolateUserFolders()

describe("mcp: the server started in a subfolder of the repository", () => {
  test("Q5 every path in resource-query and discover answers resolves from the project folder discover names", async () => {
    await using dir = await tmpdir({
      ".opencode/knowledge-base/routers.md": KB("Writing routers", "router"),
      "packages/server/.opencode/knowledge-base/adapters.md": KB("Server adapters", "adapter, router"),
      "packages/server/.claude/agents/adapter-writer.md":
        "---\nname: adapter-writer\ndescription: Writes a new server adapter for a router\n---\nYou write adapters.\n",
      "packages/server/src/index.ts": "export {}\n",
    })
    bunSpawnSync(["git", "init", "-q"], { cwd: dir.path })
    const sub = path.join(dir.path, "packages/server")
    await using mcp = await connect(sub)
    {
      const call = async (name: string, args: Record<string, unknown>) => (await mcp.call(name, args)).text
      const discover = await call("discover", { prompt: "write a new server adapter for a router" })
      const base = /relative to the project folder (\S+?)\.?\s*$/m.exec(discover)?.[1] ?? sub
      expect(base).toBe(sub)
      // discover's own agent path resolves from that folder
      const agent = /adapter-writer \(([^)]+)\)/.exec(discover)?.[1] ?? ""
      expect(existsSync(path.resolve(base, agent))).toBe(true)
      // resource-query's paths, in the same server's answers, must resolve from the same folder
      const query = JSON.parse(await call("resource-query", { query: "router" })) as {
        results: { id: string; path: string }[]
      }
      const unresolved = query.results
        .filter((r) => !existsSync(path.resolve(base, r.path)))
        .map((r) => `${r.id}: ${r.path}`)
      expect(unresolved).toEqual([])
      expect(query.results.map((r) => r.path).sort()).toEqual([
        "../../.opencode/knowledge-base/routers.md",
        ".opencode/knowledge-base/adapters.md",
      ])
      // resource-load names the same path as resource-query
      const loaded = await call("resource-load", { id: "routers" })
      expect(loaded).toContain("**Path:** ../../.opencode/knowledge-base/routers.md")
    }
  }, 60_000)
})
