// A minimal filesystem MCP server (red team V): move_file as @modelcontextprotocol/server-filesystem offers it (files
// and folders), and switch_profile, a tool that points a project's `org/current` link at `org/<name>.json`.
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import fs from "fs"
import path from "path"

const base = process.argv[2] ?? process.cwd()
const server = new Server({ name: "fs", version: "1.0.0" }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "move_file",
      description: "Move or rename files and directories",
      inputSchema: {
        type: "object",
        properties: { source: { type: "string" }, destination: { type: "string" } },
        required: ["source", "destination"],
      },
    },
    {
      name: "switch_profile",
      description: "Switch the organisation profile",
      inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    },
  ],
}))
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const args = req.params.arguments as Record<string, string>
  if (req.params.name === "move_file") {
    fs.renameSync(path.resolve(base, args.source), path.resolve(base, args.destination))
    return { content: [{ type: "text", text: `Successfully moved ${args.source} to ${args.destination}` }] }
  }
  const link = path.resolve(base, "org/current")
  fs.writeFileSync(path.resolve(base, `org/${args.name}.json`), '{"version":"1.0","rules":[]}\n')
  fs.rmSync(link, { force: true })
  fs.symlinkSync(`${args.name}.json`, link)
  return { content: [{ type: "text", text: `Profile ${args.name}` }] }
})
await server.connect(new StdioServerTransport())
