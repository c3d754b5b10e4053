/**
 * A seccomp filter (classic BPF, the form bubblewrap's `--seccomp FD` loads) that refuses to create Unix-domain
 * sockets (`socket(AF_UNIX, …)` and io_uring, which can make one without that call, fail with EACCES) and allows every
 * other call, `socketpair` included (pipes between a process and its children, as Node's IPC uses).
 *
 * Why: a file descriptor passed over a Unix socket from one sandbox to another keeps the mounts of the sandbox it was
 * opened in, and once that sandbox has ended its protective mounts are gone, so a folder opened there reaches what the
 * policy hides or locks. Long-lived helpers (language servers) run with this filter: they can neither connect to a
 * socket a command made nor receive a descriptor through one.
 *
 * @example
 * const program = SandboxSeccomp.denyUnixSockets() // Uint8Array for `bwrap --seccomp 4` on fd 4
 */
export namespace SandboxSeccomp {
  /** Architectures the filter knows (`AUDIT_ARCH_*`) and their `socket` system call numbers. */
  export const ARCHES = [
    { name: "x86_64", audit: 0xc000003e, socket: 41 },
    { name: "aarch64", audit: 0xc00000b7, socket: 198 },
  ] as const

  const AF_UNIX = 1
  const EACCES = 13
  const RET_ALLOW = 0x7fff0000
  const RET_ERRNO = 0x00050000
  const RET_KILL_PROCESS = 0x80000000
  /** `io_uring_setup`, `io_uring_enter`, `io_uring_register`: the same numbers on both architectures. */
  const IO_URING = { first: 425, last: 427 }
  /** x86_64's x32 system calls carry this bit: refused whole, so `socket` cannot be reached through them. */
  const X32_BIT = 0x40000000

  // Offsets in `struct seccomp_data`: nr, arch, instruction pointer, args[6] (the low half of args[0] on little endian).
  const NR = 0
  const ARCH = 4
  const ARG0 = 16

  // Classic BPF opcodes.
  const LD_W_ABS = 0x20
  const JEQ_K = 0x15
  const JGE_K = 0x35
  const RET_K = 0x06

  type Insn = { code: number; jt?: string; jf?: string; k: number }

  /**
   * The filter's bytes (`struct sock_filter` entries, little endian), for architectures in `ARCHES`; any other
   * architecture is refused every call (the filter cannot know its numbers), so the helper does not start there.
   */
  export function denyUnixSockets(): Uint8Array {
    const program: (Insn | string)[] = [{ code: LD_W_ABS, k: ARCH }]
    for (const arch of ARCHES) {
      program.push({ code: JEQ_K, k: arch.audit, jf: `not-${arch.name}` })
      program.push({ code: LD_W_ABS, k: NR })
      if (arch.name === "x86_64") program.push({ code: JGE_K, k: X32_BIT, jt: "deny" })
      program.push({ code: JEQ_K, k: arch.socket, jt: "domain" })
      // io_uring makes and connects sockets without the `socket` call (IORING_OP_SOCKET): not offered at all.
      program.push({ code: JGE_K, k: IO_URING.first, jf: "allow" })
      program.push({ code: JGE_K, k: IO_URING.last + 1, jt: "allow", jf: "deny" })
      program.push(`not-${arch.name}`)
    }
    program.push({ code: RET_K, k: RET_KILL_PROCESS })
    program.push("domain", { code: LD_W_ABS, k: ARG0 }, { code: JEQ_K, k: AF_UNIX, jt: "deny", jf: "allow" })
    program.push("deny", { code: RET_K, k: RET_ERRNO | EACCES })
    program.push("allow", { code: RET_K, k: RET_ALLOW })
    return assemble(program)
  }

  /** Resolves labels to relative jumps and encodes each instruction in 8 bytes. */
  function assemble(source: (Insn | string)[]): Uint8Array {
    const labels = new Map<string, number>()
    const insns: Insn[] = []
    for (const item of source) {
      if (typeof item === "string") labels.set(item, insns.length)
      else insns.push(item)
    }
    const out = new Uint8Array(insns.length * 8)
    const view = new DataView(out.buffer)
    insns.forEach((insn, i) => {
      const offset = (label?: string) => {
        if (label === undefined) return 0
        const target = labels.get(label)
        if (target === undefined || target <= i || target - i - 1 > 255)
          throw new Error(`seccomp: bad jump to ${label}`)
        return target - i - 1
      }
      view.setUint16(i * 8, insn.code, true)
      view.setUint8(i * 8 + 2, offset(insn.jt))
      view.setUint8(i * 8 + 3, offset(insn.jf))
      view.setUint32(i * 8 + 4, insn.k >>> 0, true)
    })
    return out
  }
}
