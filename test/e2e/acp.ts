import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import type { ModelServer } from "./model-server"

/**
 * OpenCode run as editors run it: `opencode acp` (the Agent Client Protocol over stdio, newline-delimited JSON-RPC
 * 2.0), which also serves OpenCode's HTTP API on the loopback interface. One prompt in a new session, every
 * permission asked allowed once; the process group is stopped when the prompt ends or after `timeoutMs`.
 *
 * @example
 * const { updates } = await Acp.prompt(project, server, "probe", { port: await Acp.freePort() })
 */
export namespace Acp {
  /** A TCP port nothing listens on right now (the kernel's pick for port 0, released again). */
  export async function freePort(): Promise<number> {
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") })
    const port = probe.port!
    probe.stop(true)
    return port
  }

  /** `text` is the prompt's text, or its ACP content blocks as an editor sends them (an embedded resource, …). */
  export async function prompt(
    project: Harness.Project,
    server: ModelServer.Instance,
    text: string | object[],
    options: { port?: number; timeoutMs?: number } = {},
  ) {
    const file = path.join(project.dir, "opencode.json")
    const config = JSON.parse(fs.readFileSync(file, "utf8"))
    config.provider = Harness.provider(server)
    fs.writeFileSync(file, JSON.stringify(config, null, 2))
    const args = [project.bin, "acp", ...(options.port ? ["--port", String(options.port)] : [])]
    const proc = Bun.spawn(args, {
      cwd: project.dir,
      env: { ...project.env, PWD: project.dir },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    })
    const updates: any[] = []
    const pending = new Map<number, (v: any) => void>()
    let id = 0
    const send = (msg: object) => {
      proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n")
      proc.stdin.flush()
    }
    const call = (method: string, params: object) =>
      new Promise<any>((resolve) => {
        const n = ++id
        pending.set(n, resolve)
        send({ id: n, method, params })
      })
    const reader = (async () => {
      const decoder = new TextDecoder()
      let buf = ""
      for await (const chunk of proc.stdout) {
        buf += decoder.decode(chunk, { stream: true })
        let i
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i).trim()
          buf = buf.slice(i + 1)
          if (!line.startsWith("{")) continue
          let msg: any
          try {
            msg = JSON.parse(line)
          } catch {
            continue
          }
          if (msg.method === "session/update") updates.push(msg.params)
          else if (msg.method === "session/request_permission") {
            const allow = msg.params.options.find((o: any) => o.kind === "allow_once") ?? msg.params.options[0]
            send({ id: msg.id, result: { outcome: { outcome: "selected", optionId: allow.optionId } } })
          } else if (msg.method && msg.id !== undefined) send({ id: msg.id, error: { code: -32601, message: "no" } })
          else if (msg.id !== undefined && pending.has(msg.id)) {
            pending.get(msg.id)!(msg)
            pending.delete(msg.id)
          }
        }
      }
    })()
    const stderr = new Response(proc.stderr).text()
    const timer = setTimeout(() => Harness.stopGroup(proc), options.timeoutMs ?? 90_000)
    try {
      await call("initialize", {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      })
      const session = await call("session/new", { cwd: project.dir, mcpServers: [] })
      const result = await call("session/prompt", {
        sessionId: session.result.sessionId,
        prompt: typeof text === "string" ? [{ type: "text", text }] : text,
      })
      return { result, updates, stderr: () => stderr }
    } finally {
      clearTimeout(timer)
      Harness.stopGroup(proc)
      await Promise.race([reader, Bun.sleep(2000)])
    }
  }

  /** The tool calls' updates as the ACP client saw them, as one text. */
  export const toolText = (updates: any[]) =>
    JSON.stringify(updates.filter((u) => String(u.update?.sessionUpdate).startsWith("tool_call")))
}
