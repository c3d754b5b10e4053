import { describe, expect, test } from "bun:test"
import path from "path"
import { tmpdir } from "../fixture"

const CLI = path.resolve(import.meta.dir, "../../../plugin/cli.ts")

/** `opencode-builtins mcp` started in `dir`, with a home and caches of its own there. */
function serve(dir: { path: string; file(rel: string): string }) {
  return Bun.spawn([process.execPath, CLI, "mcp"], {
    cwd: dir.path,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, HOME: dir.path, XDG_CONFIG_HOME: dir.file("xdg"), XDG_CACHE_HOME: dir.file("cache") },
  })
}

describe("opencode-builtins mcp: stdout carries protocol messages only", () => {
  test(
    "0 non-JSON bytes over boot and 1,000 calls, while the server logs warnings (to stderr)",
    async () => {
      await using dir = await tmpdir({
        // Both make the server log at boot and on use: an unreadable options file, a resource with broken frontmatter.
        ".opencode/opencode-builtins.json": "{ not json",
        ".opencode/knowledge-base/broken.md": "---\ntitle: [unclosed\n---\nbody\n",
        ".opencode/knowledge-base/deploy.md": "---\ntitle: Deploy\ndescription: How we deploy\n---\nUse helm.\n",
      })
      const proc = serve(dir)
      try {
        const send = (message: object) => proc.stdin.write(JSON.stringify(message) + "\n")
        send({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
        })
        send({ jsonrpc: "2.0", method: "notifications/initialized" })
        const calls: [string, object][] = [
          ["resource-query", { query: "deploy" }],
          ["resource-load", { id: "deploy" }],
          ["resource-load", { id: "broken" }],
          ["discover", { prompt: "deploy the service" }],
          ["learnings-list", {}],
          ["resource-query", { limit: -1 }],
          ["no-such-tool", {}],
        ]
        const N = 1_000
        for (let i = 1; i <= N; i++) {
          const [name, args] = calls[i % calls.length]
          send({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name, arguments: args } })
        }
        await proc.stdin.flush()
        // Read until every response is in, then close stdin: the server exits.
        const reader = proc.stdout.getReader()
        const chunks: Uint8Array[] = []
        let text = ""
        const deadline = Date.now() + 90_000
        while ((text.match(/"id":/g)?.length ?? 0) < N + 1 && Date.now() < deadline) {
          const { value, done } = await reader.read()
          if (done) break
          chunks.push(value)
          text += new TextDecoder().decode(value, { stream: true })
        }
        proc.stdin.end()
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          chunks.push(value)
        }
        const raw = Buffer.concat(chunks).toString("utf8")
        const lines = raw.split("\n")
        expect(lines.pop()).toBe("")
        let foreign = 0
        const ids = new Set<number>()
        for (const line of lines) {
          try {
            const message = JSON.parse(line)
            if (message.jsonrpc !== "2.0") foreign += line.length + 1
            else ids.add(message.id)
          } catch {
            foreign += line.length + 1
          }
        }
        expect(foreign).toBe(0)
        expect(ids.size).toBe(N + 1)
        expect(await proc.exited).toBe(0)
        const stderr = await new Response(proc.stderr).text()
        expect(stderr).toContain("opencode-builtins.json")
      } finally {
        proc.kill()
      }
    },
    { timeout: 120_000 },
  )

  test(
    "a line that is not JSON, or not JSON-RPC, gets a JSON-RPC error reply; the server keeps serving",
    async () => {
      await using dir = await tmpdir({})
      const proc = serve(dir)
      try {
        proc.stdin.write("{ this is not json\n")
        proc.stdin.write(JSON.stringify({ hello: "world" }) + "\n")
        proc.stdin.write(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
          }) + "\n",
        )
        await proc.stdin.flush()
        const reader = proc.stdout.getReader()
        let text = ""
        const deadline = Date.now() + 60_000
        while (text.split("\n").length < 4 && Date.now() < deadline) {
          const { value, done } = await reader.read()
          if (done) break
          text += new TextDecoder().decode(value, { stream: true })
        }
        proc.stdin.end()
        const [parse, invalid, init] = text
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l))
        expect(parse).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })
        expect(parse.error.message).toStartWith("Parse error: a line that is not JSON")
        expect(invalid).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
        expect(init).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "opencode-builtins" } } })
        expect(await proc.exited).toBe(0)
      } finally {
        proc.kill()
      }
    },
    { timeout: 90_000 },
  )
})
