import dns from "dns"
import os from "os"
import { OpenCode } from "../opencode"
import { SandboxNetwork } from "./sandbox/network"

/**
 * URLs in a tool call's arguments that reach OpenCode's own HTTP API. Under `opencode acp`, `serve`, `web` or `--port`
 * OpenCode listens without a password by default, and its API reads any file (`GET /file/content`) and runs programs on
 * the host (`POST /pty`). Tools that fetch in OpenCode's process — its `webfetch`, an MCP fetch or browser server,
 * another plugin's tool — are outside the sandbox, so the guard refuses a call whose URL reaches one of the listeners
 * `SandboxNetwork.servers` finds (shell commands are kept off it by a network namespace of their own).
 *
 * A URL reaches a listener when its port is the listener's (explicit, or 80/443 by scheme) and its host — parsed as
 * WHATWG `URL` parses it (`127.1`, `2130706433`, `0x7f000001` and `[::ffff:127.0.0.1]` all name 127.0.0.1), or each
 * address a name resolves to — is an address of this machine the listener accepts: any local address (loopback,
 * unspecified, an interface's) for a listener on `0.0.0.0`/`::`, a loopback or unspecified one for a listener on
 * loopback, the same address otherwise.
 *
 * @example
 * await SecurityOwnServer.find({ url: "http://127.1:4096/file/content?path=.env" }, { listeners: [{ pid: 1, address: "127.0.0.1", port: 4096 }] })
 * // { url: "http://127.1:4096/file/content?path=.env", listener: { pid: 1, address: "127.0.0.1", port: 4096 } }
 */
export namespace SecurityOwnServer {
  export type Listener = SandboxNetwork.Listener
  export type Hit = { url: string; listener: Listener }

  export type Input = {
    /** OpenCode's listeners (default: `SandboxNetwork.servers()`, read only when the arguments hold a URL). */
    listeners?: Listener[] | (() => Listener[])
    /** Addresses of this machine's interfaces (default: `os.networkInterfaces()`). */
    local?: string[]
    /** Every address a host name resolves to; none when it does not resolve (default: `dns.lookup`, `LOOKUP_MS`). */
    lookup?: (host: string) => Promise<string[]>
  }

  /** How long a host name may take to resolve; one that takes longer counts as not resolving. */
  export const LOOKUP_MS = 2_000

  const SCHEMES = new Set(["http:", "https:", "ws:", "wss:"])
  /** A URL in free text. Special schemes need no slashes (`http:127.0.0.1:4096` parses), and `\` counts as `/`. */
  const IN_TEXT = /\b(?:https?|wss?):[^\s"'<>`]+/gi
  const DEPTH = 16

  /** Built-in tools that fetch a URL in OpenCode's process. */
  export const FETCHERS: ReadonlySet<string> = new Set(["webfetch"])
  const BUILTIN: ReadonlySet<string> = new Set([...OpenCode.FILE_TOOLS, ...OpenCode.OTHER_TOOLS])

  /**
   * What of a call's arguments may be fetched in OpenCode's process: nothing of the shell's (its commands run in a
   * network namespace of their own while OpenCode serves) nor of the built-in tools that fetch nothing (a file written
   * may well mention `http://localhost:4096`); `webfetch`'s arguments; all of the arguments of any other tool (MCP
   * servers' and plugins' tools run where OpenCode runs, and nothing says which argument they fetch); a batch's calls
   * by the same rules.
   *
   * @example
   * SecurityOwnServer.fetched("write", { content: "http://127.0.0.1:4096" }, true) // undefined
   * SecurityOwnServer.fetched("fetch_fetch", { url: "http://127.0.0.1:4096" }, false) // { url: "http://127.0.0.1:4096" }
   */
  export function fetched(tool: string, args: unknown, builtin: boolean): unknown {
    if (tool === OpenCode.SHELL_TOOL) return undefined
    if (builtin && tool === "batch") {
      const calls = args && typeof args === "object" ? (args as { tool_calls?: unknown }).tool_calls : undefined
      if (!Array.isArray(calls)) return undefined
      const out = calls.flatMap((c) => {
        if (!c || typeof c !== "object") return []
        const { tool: sub, parameters } = c as { tool?: unknown; parameters?: unknown }
        if (typeof sub !== "string") return [parameters]
        const got = fetched(sub, parameters, BUILTIN.has(sub))
        return got === undefined ? [] : [got]
      })
      return out.length ? out : undefined
    }
    if (builtin && !FETCHERS.has(tool)) return undefined
    return args
  }

  /**
   * URL candidates in a value: every string of it, however nested in objects and arrays, that is a URL or holds one.
   *
   * @example
   * SecurityOwnServer.urls({ requests: [{ target: "see http://localhost:4096/x" }] }) // ["http://localhost:4096/x"]
   */
  export function urls(value: unknown): string[] {
    const out = new Set<string>()
    const walk = (v: unknown, depth: number) => {
      if (typeof v === "string") {
        const whole = v.trim()
        if (/^(?:https?|wss?):/i.test(whole)) out.add(whole)
        for (const m of v.matchAll(IN_TEXT)) {
          out.add(m[0])
          // Punctuation after a URL in prose (`http://127.0.0.1:4096, then`) would make its port invalid.
          const trimmed = m[0].replace(/[),.;:!?\]}]+$/, "")
          if (trimmed !== m[0]) out.add(trimmed)
        }
        return
      }
      if (depth >= DEPTH || !v || typeof v !== "object") return
      for (const item of Array.isArray(v) ? v : Object.values(v)) walk(item, depth + 1)
    }
    walk(value, 0)
    return [...out]
  }

  /**
   * A URL's host and port as a fetcher would connect to them (the scheme's port when none is given), or undefined for
   * what is not an http(s)/ws(s) URL.
   *
   * @example
   * SecurityOwnServer.target("http://0x7f000001/") // { host: "127.0.0.1", port: 80 }
   */
  export function target(url: string): { host: string; port: number } | undefined {
    let u: URL
    try {
      u = new URL(url)
    } catch {
      return undefined
    }
    if (!SCHEMES.has(u.protocol) || !u.hostname) return undefined
    const port = u.port ? Number(u.port) : u.protocol === "https:" || u.protocol === "wss:" ? 443 : 80
    return { host: u.hostname.replace(/^\[(.*)\]$/, "$1"), port }
  }

  /**
   * An IP address as bytes (4 for IPv4 and IPv4-mapped IPv6, 16 for IPv6), undefined for a name.
   *
   * @example
   * SecurityOwnServer.bytes("::ffff:7f00:1") // [127, 0, 0, 1]
   */
  export function bytes(address: string): number[] | undefined {
    const bare = address.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "")
    if (bare.includes(":")) {
      let host: string
      try {
        host = new URL(`http://[${bare}]/`).hostname.slice(1, -1)
      } catch {
        return undefined
      }
      const [head, tail] = host.includes("::") ? host.split("::") : [host, undefined]
      const left = head ? head.split(":") : []
      const right = tail ? tail.split(":") : []
      const groups = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
      if (groups.length !== 8) return undefined
      const out = groups.flatMap((g) => {
        const n = Number.parseInt(g, 16)
        return [n >> 8, n & 0xff]
      })
      if (out.slice(0, 10).every((b) => b === 0) && out[10] === 0xff && out[11] === 0xff) return out.slice(12)
      return out
    }
    let host: string
    try {
      host = new URL(`http://${bare}/`).hostname
    } catch {
      return undefined
    }
    const parts = host.split(".")
    if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined
    return parts.map(Number)
  }

  const same = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i])
  const loopback = (b: number[]) => (b.length === 4 ? b[0] === 127 : same(b, [...Array(15).fill(0), 1]))
  const unspecified = (b: number[]) => (b.length === 4 ? b[0] === 0 : b.every((x) => x === 0))

  /** The addresses of this machine's interfaces. */
  export function interfaces(): string[] {
    return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
  }

  /**
   * Whether a connection to `address` reaches `listener` (its bound address): see the namespace's description.
   *
   * @example
   * SecurityOwnServer.reachable("0.0.0.0", { pid: 1, address: "127.0.0.1", port: 4096 }, []) // true
   * SecurityOwnServer.reachable("10.0.0.5", { pid: 1, address: "127.0.0.1", port: 4096 }, ["10.0.0.5"]) // false
   */
  export function reachable(address: string, listener: Listener, local: string[]): boolean {
    const to = bytes(address)
    const bound = bytes(listener.address)
    if (!to || !bound) return false
    const onLoopback = loopback(to) || unspecified(to)
    const mine = onLoopback || local.some((l) => same(bytes(l) ?? [], to))
    if (!mine) return false
    if (unspecified(bound)) return true
    if (loopback(bound)) return onLoopback
    return same(bound, to)
  }

  async function lookup(host: string): Promise<string[]> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<string[]>((resolve) => {
      timer = setTimeout(() => resolve([]), LOOKUP_MS)
    })
    try {
      return await Promise.race([
        dns.promises.lookup(host, { all: true, verbatim: true }).then(
          (found) => found.map((f) => f.address),
          () => [],
        ),
        late,
      ])
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * The first URL of `args` that reaches one of OpenCode's listeners, and that listener.
   *
   * @example
   * await SecurityOwnServer.find({ url: "https://example.com/" }) // undefined
   */
  export async function find(args: unknown, input: Input = {}): Promise<Hit | undefined> {
    const found = urls(args)
    if (!found.length) return undefined
    const given = input.listeners ?? SandboxNetwork.servers
    const listeners = typeof given === "function" ? given() : given
    if (!listeners.length) return undefined
    const ports = new Set(listeners.map((l) => l.port))
    let local: string[] | undefined
    for (const url of found) {
      const t = target(url)
      if (!t || !ports.has(t.port)) continue
      const addresses = bytes(t.host) ? [t.host] : await (input.lookup ?? lookup)(t.host)
      local ??= input.local ?? interfaces()
      for (const listener of listeners) {
        if (listener.port !== t.port) continue
        if (addresses.some((a) => reachable(a, listener, local!))) return { url, listener }
      }
    }
    return undefined
  }

  /** A listener as `host:port` (IPv6 in brackets). */
  export function display(listener: Listener): string {
    return `${listener.address.includes(":") ? `[${listener.address}]` : listener.address}:${listener.port}`
  }
}
