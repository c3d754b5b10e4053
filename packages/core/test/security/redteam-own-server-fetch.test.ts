// Red team Z1b (core, both routes): OpenCode's `webfetch` runs in OpenCode's process, not in the sandbox, so one call
// to `http://127.0.0.1:4096/file/content?path=%2Eenv` (OpenCode's own HTTP API under `opencode acp`, `serve`, `web`,
// `--port`) handed the model a read-denied file (test/e2e/redteam-own-server-fetch.test.ts on the stock binaries). An
// MCP server's or another plugin's tool that fetches a URL does the same. Here the test process plays OpenCode: it
// listens on loopback like its API; a call whose URL reaches that listener is refused, one to another port is not.
import { afterAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityError } from "../../security/errors"
import { isolateHome, open, ROUTES, smallProject } from "./redteam-helpers"

const home = isolateHome()
afterAll(() => home.restore())

const SECRET = "DB_PASSWORD=Zw3bFetchPass\n"
const POLICY = JSON.stringify({
  version: "1.0",
  rules: [{ pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
  mcp: { servers: { browser: "trusted" } },
})

/** A TCP port nothing of this process listens on (bound once and closed). */
function freePort() {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") })
  const port = probe.port
  probe.stop(true)
  return port
}

for (const route of ROUTES)
  describe(`route ${route}: Z1b OpenCode's own HTTP API through a tool that fetches in OpenCode's process`, () => {
    test("webfetch, an MCP tool and another plugin's tool are refused a URL of OpenCode's listener, not another port", async () => {
      const dir = await smallProject({ ".opencode-security.json": POLICY, ".env": SECRET })
      // Stands for OpenCode's HTTP API in the same process: GET /file/content?path=… reads the file on the host.
      const server = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch(req) {
          const url = new URL(req.url)
          const file = path.join(dir.path, url.searchParams.get("path") ?? "")
          return new Response(JSON.stringify({ type: "text", content: fs.readFileSync(file, "utf8") }))
        },
      })
      const session = await open(route, dir.path)
      try {
        await session.hooks.config({
          mcp: {
            fetch: { type: "remote", url: "https://mcp.example.invalid/mcp" },
            browser: { type: "remote", url: "https://browser.example.invalid/mcp" },
          },
        })
        const api = `http://127.0.0.1:${server.port}/file/content?directory=${encodeURIComponent(dir.path)}&path=%2Eenv`
        const calls: [string, Record<string, unknown>][] = [
          ["webfetch", { url: api, format: "text" }],
          ["webfetch", { url: `http://localhost:${server.port}/file/content?path=.env`, format: "text" }],
          ["webfetch", { url: `http://2130706433:${server.port}/file/content?path=.env`, format: "text" }],
          // An MCP fetch server's tool (`fetch` server, `fetch` tool) and another plugin's tool with a nested URL.
          ["fetch_fetch", { url: api, max_length: 5000 }],
          // A server the policy trusts (its calls are otherwise not checked) is refused it too.
          ["browser_navigate", { url: api }],
          ["http_request", { request: { method: "GET", headers: [], target: [api] } }],
          ["batch", { tool_calls: [{ tool: "webfetch", parameters: { url: api } }] }],
        ]
        for (const [tool, args] of calls) {
          const result = await session.call(tool, args, { noExecute: true })
          // Before: allowed (no protected path in the arguments), and the model got DB_PASSWORD in clear.
          expect(result.refused).toBe(true)
          expect(SecurityError.Denied.is(result.error)).toBe(true)
          expect(result.reason).toContain(`reaches OpenCode's own HTTP API at 127.0.0.1:${server.port}`)
          expect(result.reason).toContain("fetch other addresses")
        }
        // Another local port, and the API's port on an address it does not listen on, stay open.
        const other = freePort()
        for (const url of [`http://127.0.0.1:${other}/`, `http://192.0.2.55:${server.port}/`]) {
          const result = await session.call("webfetch", { url, format: "text" }, { noExecute: true })
          expect(result.refused).toBe(false)
        }
        // The shell's commands are kept off the API by their network namespace, not by their text.
        const shell = await session.call(
          "bash",
          { command: `echo http://127.0.0.1:${server.port}/`, description: "print" },
          { noExecute: true },
        )
        expect(shell.refused).toBe(false)
      } finally {
        server.stop(true)
        await session.close()
        await dir[Symbol.asyncDispose]?.()
      }
    }, 60_000)
  })
