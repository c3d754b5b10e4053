import { describe, expect, test } from "bun:test"
import { SandboxSeccomp } from "../../../security/sandbox/seccomp"
import { inBubblewrap } from "../fixture"

/** Runs `python3 -c script` in bubblewrap, with the filter on descriptor 4 or without one; its output. */
function inSandbox(script: string, filter?: Uint8Array) {
  const command = [...(filter ? ["--seccomp", "4"] : []), "--ro-bind", "/", "/", "--dev", "/dev", "--", "python3", "-c"]
  return inBubblewrap("bwrap", [...command, script], { filter })
}

// What each line tries, and what it prints when the call succeeds or fails.
const PROBE = [
  "import ctypes, socket",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "try:\n  socket.socket(socket.AF_UNIX); print('unix socket made')\nexcept OSError as e: print('unix socket refused', e.errno)",
  "r = libc.syscall(425, 4, (ctypes.c_ubyte * 120)()); print('io_uring', 'made' if r >= 0 else 'refused')",
  "a, b = socket.socketpair(); print('socket pair made')",
  "socket.socket(socket.AF_INET); print('inet socket made')",
  "open('/dev/null').read(); print('files work')",
].join("\n")

describe("SandboxSeccomp.denyUnixSockets", () => {
  test("Unix sockets and io_uring are refused with EACCES; socket pairs, network sockets and files work", async () => {
    const control = await inSandbox(PROBE)
    expect(control.out).toContain("unix socket made")
    expect(control.out).toContain("io_uring made")
    const filtered = await inSandbox(PROBE, SandboxSeccomp.denyUnixSockets())
    expect(filtered.code).toBe(0)
    expect(filtered.out).toContain("unix socket refused 13")
    expect(filtered.out).toContain("io_uring refused")
    expect(filtered.out).toContain("socket pair made")
    expect(filtered.out).toContain("inet socket made")
    expect(filtered.out).toContain("files work")
  })

  test("the program is whole instructions, every jump lands inside it, and it ends in a return", () => {
    const bytes = SandboxSeccomp.denyUnixSockets()
    expect(bytes.length % 8).toBe(0)
    const view = new DataView(bytes.buffer)
    const count = bytes.length / 8
    for (let i = 0; i < count; i++) {
      const code = view.getUint16(i * 8, true)
      if ((code & 0x07) === 0x05) {
        expect(i + 1 + view.getUint8(i * 8 + 2)).toBeLessThan(count)
        expect(i + 1 + view.getUint8(i * 8 + 3)).toBeLessThan(count)
      }
    }
    expect(view.getUint16((count - 1) * 8, true)).toBe(0x06)
  })
})
