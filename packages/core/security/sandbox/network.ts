import fs from "fs"
import path from "path"

/**
 * The TCP ports OpenCode serves its HTTP API on, as seen from this machine's network namespace. OpenCode's server runs
 * commands on the host (`POST /pty`) and reads any file (`GET /file/content`) for whoever reaches it; under
 * `opencode acp` (how editors run OpenCode), `serve`, `web` or `--port` it listens on the loopback interface without a
 * password by default. A sandboxed command sharing the host's network could reach it, so while one listens commands
 * get a network namespace of their own (`SandboxPlan.Input.isolateNetwork`), and tools that fetch URLs in OpenCode's
 * process are refused such a URL.
 *
 * Read from `/proc`: the listening sockets of `/proc/net/tcp` and `tcp6` whose inode is a descriptor of this process
 * (where OpenCode runs the plugin and the fork runs core) or of another OpenCode the user runs: a process whose
 * command name, executable (links resolved, so a link named `oc` counts) or first argument names `opencode`, or whose
 * executable is this process's own file. Processes of other users cannot be inspected and are not seen; neither is a
 * copy of the binary under another name.
 *
 * @example
 * SandboxNetwork.servers() // [{ pid: 4242, address: "127.0.0.1", port: 4096 }] under `opencode acp`
 */
export namespace SandboxNetwork {
  export type Listener = { pid: number; address: string; port: number }

  export type Input = {
    /** The proc file system (tests point it elsewhere). */
    proc?: string
    /** This process: OpenCode's, on both routes. */
    self?: number
  }

  /**
   * Whether a program name is OpenCode's: `opencode`, npm's `.opencode`, `opencode.exe`, packagers' `.opencode-wrapped`.
   *
   * @example
   * SandboxNetwork.isOpenCode("/usr/lib/node_modules/opencode-ai/bin/.opencode") // true
   */
  export function isOpenCode(name: string): boolean {
    return /opencode/i.test(path.basename(name))
  }

  /**
   * TCP listeners of this process and of other OpenCode processes of this user, in the order found.
   *
   * @example
   * SandboxNetwork.servers({ self: process.pid }).map((l) => l.port) // [4096]
   */
  export function servers(input: Input = {}): Listener[] {
    const proc = input.proc ?? "/proc"
    const self = input.self ?? process.pid
    const listening = listeningSockets(proc)
    if (!listening.size) return []
    const out: Listener[] = []
    for (const pid of [self, ...others(proc, self)])
      for (const inode of socketInodes(proc, pid)) {
        const found = listening.get(inode)
        if (found) out.push({ pid, ...found })
      }
    return out
  }

  /**
   * The listening TCP sockets of one `/proc/net/tcp`-format table, by inode.
   *
   * @example
   * SandboxNetwork.parse("  sl  local_address …\n   0: 0100007F:1000 00000000:0000 0A 0 0 0 0 0 0 0 0 0 0 81234 …")
   * // Map { "81234" => { address: "127.0.0.1", port: 4096 } }
   */
  export function parse(table: string): Map<string, { address: string; port: number }> {
    const out = new Map<string, { address: string; port: number }>()
    for (const line of table.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/)
      // sl, local_address, rem_address, st, tx:rx, tr:when, retrnsmt, uid, timeout, inode
      if (fields.length < 10 || fields[3] !== "0A") continue
      const [hex, portHex] = fields[1].split(":")
      const inode = fields[9]
      if (!hex || !portHex || !/^\d+$/.test(inode) || inode === "0") continue
      out.set(inode, { address: address(hex), port: Number.parseInt(portHex, 16) })
    }
    return out
  }

  function listeningSockets(proc: string) {
    const out = new Map<string, { address: string; port: number }>()
    for (const table of ["tcp", "tcp6"]) {
      let text: string
      try {
        text = fs.readFileSync(path.join(proc, "net", table), "utf8")
      } catch {
        continue
      }
      for (const [inode, l] of parse(text)) out.set(inode, l)
    }
    return out
  }

  function socketInodes(proc: string, pid: number): string[] {
    const dir = path.join(proc, String(pid), "fd")
    let fds: string[]
    try {
      fds = fs.readdirSync(dir)
    } catch {
      return []
    }
    const out: string[] = []
    for (const fd of fds) {
      let target: string
      try {
        target = fs.readlinkSync(path.join(dir, fd))
      } catch {
        continue
      }
      const m = /^socket:\[(\d+)\]$/.exec(target)
      if (m) out.push(m[1])
    }
    return out
  }

  function others(proc: string, self: number): number[] {
    let entries: string[]
    try {
      entries = fs.readdirSync(proc)
    } catch {
      return []
    }
    const own = identity(path.join(proc, String(self), "exe"))
    const out: number[] = []
    for (const name of entries) {
      if (!/^\d+$/.test(name) || Number(name) === self) continue
      if (openCode(path.join(proc, name), own)) out.push(Number(name))
    }
    return out
  }

  /** Whether the process at `dir` (a `/proc/<pid>` folder) is an OpenCode: by its names, or by its executable's file. */
  function openCode(dir: string, own: string | undefined): boolean {
    const read = (f: () => string) => {
      try {
        return f()
      } catch {
        return ""
      }
    }
    const comm = read(() => fs.readFileSync(path.join(dir, "comm"), "utf8").trim())
    if (comm && isOpenCode(comm)) return true
    const exe = read(() => fs.readlinkSync(path.join(dir, "exe")))
    if (exe && isOpenCode(exe.replace(/ \(deleted\)$/, ""))) return true
    const argv0 = read(() => fs.readFileSync(path.join(dir, "cmdline"), "utf8").split("\0")[0])
    if (argv0 && isOpenCode(argv0)) return true
    return own !== undefined && identity(path.join(dir, "exe")) === own
  }

  /** The device and inode of a process's executable (readable for this user's processes only). */
  function identity(exe: string): string | undefined {
    try {
      const stat = fs.statSync(exe)
      return `${stat.dev}:${stat.ino}`
    } catch {
      return undefined
    }
  }

  /** A `/proc/net/tcp` address: IPv4 as one little-endian word, IPv6 as four. */
  function address(hex: string): string {
    const word = (h: string) => [6, 4, 2, 0].map((i) => Number.parseInt(h.slice(i, i + 2), 16))
    if (hex.length === 8) return word(hex).join(".")
    if (hex.length !== 32) return hex
    const bytes = [0, 8, 16, 24].flatMap((i) => word(hex.slice(i, i + 8)))
    const groups: string[] = []
    for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16))
    return groups.join(":").replace(/(^|:)0(:0)+(:|$)/, "::")
  }
}
