// Which URLs of a tool call reach OpenCode's own HTTP API (red team Z1b): the decision as a pure function, given the
// listeners, this machine's interface addresses and a name lookup.
import { describe, expect, test } from "bun:test"
import { SecurityOwnServer } from "../../security/own-server"

const LOOPBACK = { pid: 10, address: "127.0.0.1", port: 4096 }
const ANY4 = { pid: 11, address: "0.0.0.0", port: 8080 }
const ANY6 = { pid: 12, address: "::", port: 443 }
const IFACE = { pid: 13, address: "192.0.2.2", port: 5000 }
const V6LOOP = { pid: 14, address: "::1", port: 7000 }
const LISTENERS = [LOOPBACK, ANY4, ANY6, IFACE, V6LOOP]
const LOCAL = ["127.0.0.1", "::1", "192.0.2.2", "fd00::2", "fe80::fc:ff:fe00:1"]
const NAMES: Record<string, string[]> = {
  localhost: ["127.0.0.1", "::1"],
  "ip6-localhost": ["::1"],
  "rebind.example": ["93.184.216.34", "127.0.0.1"],
  "me.example": ["192.0.2.2"],
  "example.com": ["93.184.216.34"],
}
const input = {
  listeners: LISTENERS,
  local: LOCAL,
  lookup: async (host: string) => NAMES[host.replace(/\.$/, "")] ?? [],
}

describe("SecurityOwnServer.find", () => {
  const refused: [string, typeof LOOPBACK][] = [
    ["http://127.0.0.1:4096/file/content?path=%2Eenv", LOOPBACK],
    ["http://127.1:4096/", LOOPBACK],
    ["http://2130706433:4096/", LOOPBACK],
    ["http://0x7f000001:4096/", LOOPBACK],
    ["http://0177.0.0.1:4096/", LOOPBACK],
    ["http://127.0.0.1.:4096/", LOOPBACK],
    ["http://127.9.8.7:4096/", LOOPBACK],
    ["http://[::ffff:127.0.0.1]:4096/", LOOPBACK],
    ["http://[::ffff:7f00:1]:4096/", LOOPBACK],
    ["http://0.0.0.0:4096/", LOOPBACK],
    ["http://0:4096/", LOOPBACK],
    ["http://localhost:4096/pty", LOOPBACK],
    ["http://LOCALHOST.:4096/", LOOPBACK],
    ["HTTP://user:pw@127.0.0.1:4096/", LOOPBACK],
    ["http:127.0.0.1:4096/file", LOOPBACK],
    ["http:\\\\127.0.0.1:4096\\file", LOOPBACK],
    ["ws://127.0.0.1:4096/pty/x/connect", LOOPBACK],
    ["http://rebind.example:4096/", LOOPBACK],
    ["http://[::1]:7000/", V6LOOP],
    ["http://ip6-localhost:7000/", V6LOOP],
    ["http://[::]:7000/", V6LOOP],
    ["http://127.0.0.1:8080/", ANY4],
    ["http://192.0.2.2:8080/", ANY4],
    ["http://me.example:8080/", ANY4],
    ["https://127.0.0.1/", ANY6],
    ["wss://[fd00::2]/", ANY6],
    ["https://[fe80::fc:ff:fe00:1]/", ANY6],
    ["http://192.0.2.2:5000/", IFACE],
  ]
  for (const [url, listener] of refused)
    test(`refused: ${url}`, async () => {
      expect(await SecurityOwnServer.find({ url }, input)).toEqual({ url, listener })
    })

  const allowed = [
    "http://127.0.0.1:4097/",
    "http://127.0.0.1/",
    "https://example.com:4096/",
    "http://example.com/",
    "http://nowhere.invalid:4096/",
    "http://10.1.2.3:8080/",
    "http://192.0.2.2:4096/",
    "http://[fd00::2]:4096/",
    "http://127.0.0.1:5000/",
    "http://[fd00::3]:443/",
    "ftp://127.0.0.1:4096/",
    "file:///etc/passwd",
    "http://127.0.0.1:40960/",
    "not a url at all",
  ]
  for (const url of allowed)
    test(`allowed: ${url}`, async () => {
      expect(await SecurityOwnServer.find({ url }, input)).toBeUndefined()
    })

  test("finds URLs in nested objects, arrays and prose", async () => {
    const url = "http://127.0.0.1:4096/file/content?path=.env"
    const nested = await SecurityOwnServer.find({ a: [{ b: { c: [`fetch ${url}, then stop`] } }] }, input)
    expect(nested?.url).toStartWith(url)
    expect(nested?.listener).toEqual(LOOPBACK)
    // Punctuation after a port in prose still leaves the URL found.
    expect(await SecurityOwnServer.find({ note: "see http://localhost:4096, then" }, input)).toEqual({
      url: "http://localhost:4096",
      listener: LOOPBACK,
    })
    expect(
      await SecurityOwnServer.find({ requests: [{ method: "GET" }, { target: "http://localhost:4096" }] }, input),
    ).toEqual({ url: "http://localhost:4096", listener: LOOPBACK })
  })

  test("nothing listens: nothing is refused, and the listeners are read only when there is a URL", async () => {
    expect(await SecurityOwnServer.find({ url: "http://127.0.0.1:4096/" }, { ...input, listeners: [] })).toBeUndefined()
    let read = 0
    const listeners = () => (read++, LISTENERS)
    expect(await SecurityOwnServer.find({ path: "src/a.ts", n: 3 }, { ...input, listeners })).toBeUndefined()
    expect(read).toBe(0)
  })
})

describe("SecurityOwnServer.fetched", () => {
  test("the shell and built-in tools that fetch nothing are not scanned; webfetch, MCP and plugin tools are", () => {
    const args = { url: "http://127.0.0.1:4096/" }
    expect(SecurityOwnServer.fetched("bash", { command: "curl http://127.0.0.1:4096/" }, true)).toBeUndefined()
    expect(SecurityOwnServer.fetched("write", { filePath: "a.md", content: "http://127.0.0.1:4096" }, true)).toBe(
      undefined,
    )
    expect(SecurityOwnServer.fetched("webfetch", args, true)).toBe(args)
    expect(SecurityOwnServer.fetched("fetch_fetch", args, false)).toBe(args)
    expect(SecurityOwnServer.fetched("write", args, false)).toBe(args)
  })

  test("a batch is scanned call by call by the same rules", () => {
    const batch = {
      tool_calls: [
        { tool: "bash", parameters: { command: "curl http://127.0.0.1:4096/" } },
        { tool: "write", parameters: { filePath: "a.md", content: "http://127.0.0.1:4096" } },
        { tool: "webfetch", parameters: { url: "http://127.0.0.1:4096/file" } },
        { tool: "fetch_fetch", parameters: { url: "http://localhost:4096/" } },
      ],
    }
    expect(SecurityOwnServer.fetched("batch", batch, true)).toEqual([
      { url: "http://127.0.0.1:4096/file" },
      { url: "http://localhost:4096/" },
    ])
    expect(SecurityOwnServer.fetched("batch", { tool_calls: [batch.tool_calls[0]] }, true)).toBeUndefined()
  })
})

describe("SecurityOwnServer.reachable", () => {
  test("a listener on loopback is reached on loopback only; one on a wildcard on every local address", () => {
    expect(SecurityOwnServer.reachable("127.0.0.1", LOOPBACK, LOCAL)).toBe(true)
    expect(SecurityOwnServer.reachable("192.0.2.2", LOOPBACK, LOCAL)).toBe(false)
    expect(SecurityOwnServer.reachable("192.0.2.2", ANY4, LOCAL)).toBe(true)
    expect(SecurityOwnServer.reachable("fd00::2", ANY6, LOCAL)).toBe(true)
    expect(SecurityOwnServer.reachable("198.51.100.1", ANY4, LOCAL)).toBe(false)
    expect(SecurityOwnServer.reachable("::ffff:192.0.2.2", IFACE, LOCAL)).toBe(true)
  })
})
