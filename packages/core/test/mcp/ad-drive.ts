import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import path from "path"
const CLI = path.resolve(import.meta.dir, "../../../plugin/cli.ts")
const dir = process.argv[2]
const home = "/tmp/ocb-AD-home"
const t = new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--quiet"], cwd: dir,
  env: { ...(process.env as any), HOME: home, XDG_CONFIG_HOME: home + "/c", XDG_DATA_HOME: home + "/d", XDG_CACHE_HOME: home + "/ca" }, stderr: "pipe" })
const c = new Client({ name: "ad", version: "1" })
await c.connect(t)
const call = async (name: string, args: any) => {
  const t0 = performance.now()
  try {
    const r: any = await c.callTool({ name, arguments: args })
    const text = r.content.map((x: any) => x.text).join("")
    console.log(`== ${name} ${JSON.stringify(args).slice(0,120)} isError=${r.isError ?? false} len=${text.length} ${Math.round(performance.now() - t0)}ms\n${text.slice(0, +(process.env.N ?? 800))}\n`)
    return text
  } catch (e) { console.log(`== ${name} ${JSON.stringify(args).slice(0,120)} THREW ${e}`) }
}
const script = process.argv[3]
const mod = await import(path.resolve(script))
await mod.default(call, c)
await c.close()
