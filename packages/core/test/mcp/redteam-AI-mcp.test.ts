// Red team AI: the MCP server (SDK client) started through other spellings of the project folder.
import { describe, expect, test } from "bun:test"
import fs from "fs"
import { project } from "../security/fixture"
import { POLICY } from "../security/fixture"
import { connect } from "./client"

const SECRET = "launch on the fourth of july"
const policy = {
  ...POLICY,
  rules: [
    ...POLICY.rules,
    { pattern: "finance", type: "directory", deniedOperations: ["read", "llm"], allowedRoles: [] },
  ],
}
const FILES = {
  ".opencode/knowledge-base/finance/launch.md": `---\ntitle: Launch plan\ndescription: ${SECRET}\ntags: [launch]\n---\nThe board decided: ${SECRET}.\n`,
  ".opencode/knowledge-base/public.md": "---\ntitle: Public launch\ndescription: public page\n---\nHello.\n",
}

describe("AI6 MCP server in a project reached through a link or /proc", () => {
  test("AI6 resource-query/resource-load/discover give nothing of a protected article", async () => {
    await using dir = await project(FILES, policy)
    const link = `${dir.path}-link`
    fs.symlinkSync(dir.path, link)
    const out: string[] = []
    try {
      for (const where of [dir.path, link, `/proc/self/root${dir.path}`]) {
        await using mcp = await connect(where)
        const q = await mcp.call("resource-query", { query: "launch" })
        const l = await mcp.call("resource-load", { id: "launch" })
        const d = await mcp
          .call("discover", { prompt: "what is the launch plan date" })
          .catch((e) => ({ text: String(e) }))
        out.push(`${where}\n${q.text}\n${l.text}\n${d.text}`)
      }
      expect(out.filter((o) => o.includes(SECRET) || o.includes("board decided"))).toEqual([])
    } finally {
      fs.rmSync(link, { force: true })
    }
  }, 120_000)
})
