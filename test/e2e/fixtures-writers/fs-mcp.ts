// A minimal filesystem MCP server offering write_file, as @modelcontextprotocol/server-filesystem does (red team T2d).
// Paths are resolved against the folder given as its first argument (a server's own root), else its working folder.
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
      name: "write_file",
      description: "Write a file (paths relative to the server's root folder)",
      inputSchema: {
        type: "object",
        properties: { path: { type: "string" }, content: { type: "string" } },
        required: ["path", "content"],
      },
    },
  ],
}))
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const args = req.params.arguments as { path: string; content: string }
  fs.writeFileSync(path.resolve(base, args.path), args.content)
  return { content: [{ type: "text", text: `Successfully wrote to ${args.path}` }] }
})
await server.connect(new StdioServerTransport())
