import path from "path"
import fs from "fs/promises"
import type { Harness } from "./harness"
import { Harness as H } from "./harness"
import type { ModelServer } from "./model-server"

/**
 * `opencode serve` for a test project, driven over its HTTP API (the routes stock OpenCode 1.2.15 and 1.18.x share):
 * the scenarios that need a live server — a prompt sent in the background, an abort in the middle of a tool. The
 * process is always stopped (`await using`).
 *
 * @example
 * await using serve = await Serve.start(project, server)
 * const id = await serve.createSession()
 * await serve.promptAsync(id, "go")
 */
export namespace Serve {
  export type Instance = {
    url: string
    pid: number
    createSession(): Promise<string>
    promptAsync(sessionID: string, text: string): Promise<void>
    abort(sessionID: string): Promise<void>
    /** Whether the session's loop is running (`GET /session/status`). */
    busy(sessionID: string): Promise<boolean>
    /** Tools of the session whose call is running now. */
    runningTools(sessionID: string): Promise<string[]>
    messages(sessionID: string): Promise<any[]>
    waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void>
    stderr(): string
    [Symbol.asyncDispose](): Promise<void>
  }

  export async function start(project: Harness.Project, server: ModelServer.Instance): Promise<Instance> {
    const file = path.join(project.dir, "opencode.json")
    const config = JSON.parse(await fs.readFile(file, "utf8"))
    config.provider = { ...config.provider, ...H.provider(server) }
    await fs.writeFile(file, JSON.stringify(config, null, 2))
    const proc = Bun.spawn([project.bin, "serve", "--port", "0", "--hostname", "127.0.0.1"], {
      cwd: project.dir,
      env: { ...project.env, PWD: project.dir },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    })
    let err = ""
    void (async () => {
      for await (const chunk of proc.stderr) err += new TextDecoder().decode(chunk)
    })()
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`opencode serve did not start: ${err.slice(-2000)}`)), 120_000)
      void (async () => {
        let out = ""
        for await (const chunk of proc.stdout) {
          out += new TextDecoder().decode(chunk)
          const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(out)
          if (match) {
            clearTimeout(timer)
            resolve(match[1])
            return
          }
        }
        clearTimeout(timer)
        reject(new Error(`opencode serve exited: ${err.slice(-2000)}`))
      })()
    }).catch((error) => {
      H.stopGroup(proc)
      throw error
    })
    const call = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(url + route, {
        method,
        headers: { "content-type": "application/json", "x-opencode-directory": project.dir },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 500)}`)
      return text ? JSON.parse(text) : undefined
    }
    const instance: Instance = {
      url,
      pid: proc.pid,
      stderr: () => err,
      async createSession() {
        return (await call("POST", "/session", {})).id
      },
      async promptAsync(id, text) {
        await call("POST", `/session/${id}/prompt_async`, { parts: [{ type: "text", text }] })
      },
      async abort(id) {
        await call("POST", `/session/${id}/abort`)
      },
      async busy(id) {
        const status = (await call("GET", "/session/status")) ?? {}
        return Boolean(status[id]) && status[id].type !== "idle"
      },
      async messages(id) {
        return await call("GET", `/session/${id}/message`)
      },
      async runningTools(id) {
        const messages = await instance.messages(id)
        return messages
          .flatMap((m: any) => m.parts)
          .filter((p: any) => p.type === "tool" && p.state?.status === "running")
          .map((p: any) => p.tool)
      },
      async waitFor(check, timeoutMs) {
        const end = Date.now() + timeoutMs
        while (Date.now() < end) {
          if (await check().catch(() => false)) return
          await Bun.sleep(100)
        }
        throw new Error(`condition not met within ${timeoutMs} ms; server stderr: ${err.slice(-1500)}`)
      },
      async [Symbol.asyncDispose]() {
        H.stopGroup(proc)
        await proc.exited
      },
    }
    return instance
  }
}
