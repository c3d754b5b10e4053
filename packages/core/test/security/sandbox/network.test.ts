import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SandboxNetwork } from "../../../security/sandbox/network"
import { SandboxPlan } from "../../../security/sandbox/plan"
import { tmpdir } from "../../fixture"

const HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
/** One `/proc/net/tcp` row: 127.0.0.1 (little-endian 0100007F) or another address, a port, a state, an inode. */
const row = (n: number, local: string, state: string, inode: number) =>
  `  ${n}: ${local} 00000000:0000 ${state} 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 100 0 0 10 0\n`

describe("SandboxNetwork.parse", () => {
  test("reads listening sockets only, with their address and port", () => {
    const table =
      HEADER +
      row(0, "0100007F:1000", "0A", 501) + // 127.0.0.1:4096, listening
      row(1, "00000000:0050", "0A", 502) + // 0.0.0.0:80, listening
      row(2, "0100007F:A1B2", "01", 503) + // established: not a server
      row(3, "0100007F:1F90", "0A", 0) // no inode: not ours to know
    expect([...SandboxNetwork.parse(table)]).toEqual([
      ["501", { address: "127.0.0.1", port: 4096 }],
      ["502", { address: "0.0.0.0", port: 80 }],
    ])
  })

  test("reads IPv6 addresses of tcp6 (::1 and ::)", () => {
    const table =
      HEADER +
      row(0, "00000000000000000000000001000000:1000", "0A", 601) +
      row(1, "00000000000000000000000000000000:1001", "0A", 602)
    expect([...SandboxNetwork.parse(table)].map(([, l]) => l)).toEqual([
      { address: "::1", port: 4096 },
      { address: "::", port: 4097 },
    ])
  })

  test("a table that is empty, truncated or not a table gives nothing", () => {
    for (const text of ["", HEADER, "garbage\nmore garbage", HEADER + "  0: 0100007F:1000 0A\n"])
      expect(SandboxNetwork.parse(text).size).toBe(0)
  })
})

describe("SandboxNetwork.servers", () => {
  /** A proc tree: the tables, and processes with a command name and socket descriptors. */
  async function fakeProc(
    procs: { pid: number; comm: string; sockets: number[]; exe?: string; argv0?: string }[],
    tcp: string,
    tcp6 = HEADER,
  ) {
    const dir = await tmpdir({ "net/tcp": tcp, "net/tcp6": tcp6, "bin/opencode": "", "bin/node": "", "bin/ocb": "" })
    for (const p of procs) {
      fs.mkdirSync(dir.file(`${p.pid}/fd`), { recursive: true })
      fs.writeFileSync(dir.file(`${p.pid}/comm`), `${p.comm}\n`)
      if (p.exe) fs.symlinkSync(dir.file(p.exe), dir.file(`${p.pid}/exe`))
      if (p.argv0) fs.writeFileSync(dir.file(`${p.pid}/cmdline`), `${p.argv0}\0serve\0`)
      p.sockets.forEach((inode, i) => fs.symlinkSync(`socket:[${inode}]`, dir.file(`${p.pid}/fd/${i + 3}`)))
      fs.symlinkSync("/dev/null", dir.file(`${p.pid}/fd/0`))
    }
    return dir
  }

  test("this process's listeners and other OpenCode processes', not other programs'", async () => {
    const tcp =
      HEADER + row(0, "0100007F:1000", "0A", 11) + row(1, "0100007F:1001", "0A", 22) + row(2, "0100007F:1F90", "0A", 33)
    await using proc = await fakeProc(
      [
        { pid: 100, comm: "bun", sockets: [11] }, // this process (OpenCode running the plugin, whatever its name)
        { pid: 200, comm: "opencode", sockets: [22, 999] }, // another OpenCode of the user (999: not listening)
        { pid: 300, comm: "node", sockets: [33] }, // a dev server: not OpenCode's
      ],
      tcp,
    )
    expect(SandboxNetwork.servers({ proc: proc.path, self: 100 })).toEqual([
      { pid: 100, address: "127.0.0.1", port: 4096 },
      { pid: 200, address: "127.0.0.1", port: 4097 },
    ])
  })

  test("another OpenCode under another name: by its executable, its first argument, or this process's own file", async () => {
    const tcp =
      HEADER +
      [11, 22, 33, 44, 55]
        .map((inode, i) => row(i, `0100007F:${(4096 + i).toString(16).toUpperCase()}`, "0A", inode))
        .join("")
    await using proc = await fakeProc(
      [
        { pid: 100, comm: "bun", sockets: [11], exe: "bin/ocb" }, // this process
        { pid: 200, comm: "oc", sockets: [22], exe: "bin/opencode" }, // `oc serve`, a link named oc to the binary
        { pid: 300, comm: "serve", sockets: [33], argv0: "/opt/OpenCode/opencode.exe" }, // exe unreadable, argv0 names it
        { pid: 400, comm: "worker", sockets: [44], exe: "bin/ocb" }, // the same executable file as this process
        { pid: 500, comm: "node", sockets: [55], exe: "bin/node", argv0: "node" }, // a dev server
      ],
      tcp,
    )
    const found = SandboxNetwork.servers({ proc: proc.path, self: 100 }).map((l) => [l.pid, l.port])
    expect(found.sort((a, b) => a[0] - b[0])).toEqual([
      [100, 4096],
      [200, 4097],
      [300, 4098],
      [400, 4099],
    ])
  })

  test("no listening socket, or no proc file system: no server", async () => {
    await using proc = await fakeProc([{ pid: 100, comm: "opencode", sockets: [11] }], HEADER)
    expect(SandboxNetwork.servers({ proc: proc.path, self: 100 })).toEqual([])
    expect(SandboxNetwork.servers({ proc: path.join(proc.path, "missing"), self: 100 })).toEqual([])
  })

  test.skipIf(process.platform !== "linux")("finds a real listener of this process while it listens", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") })
    try {
      expect(SandboxNetwork.servers()).toContainEqual({ pid: process.pid, address: "127.0.0.1", port: server.port! })
    } finally {
      server.stop(true)
    }
    expect(SandboxNetwork.servers().some((l) => l.pid === process.pid && l.port === server.port)).toBe(false)
  })
})

describe("SandboxPlan with an isolated network", () => {
  const input = { hide: [], lock: [], mask: [], pin: [], placeholders: { file: "/s/f", dir: "/s/d" }, conceal: [] }
  test("a network namespace of its own only when asked", () => {
    expect(SandboxPlan.build({ ...input, isolateNetwork: true }).args).toContain("--unshare-net")
    expect(SandboxPlan.build(input).args).not.toContain("--unshare-net")
    expect(SandboxPlan.readOnly(SandboxPlan.build({ ...input, isolateNetwork: true }).args)).toContain("--unshare-net")
  })
  test("a long-lived helper (a language server) never shares the host's network, once only", () => {
    // It outlives the check a command gets at its start: a server that starts later would be within its reach.
    for (const isolateNetwork of [false, true]) {
      const args = SandboxPlan.readOnly(SandboxPlan.build({ ...input, isolateNetwork }).args)
      expect(args.filter((a) => a === "--unshare-net")).toEqual(["--unshare-net"])
    }
  })
})
