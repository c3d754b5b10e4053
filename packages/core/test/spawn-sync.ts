/**
 * The tests' synchronous child processes, started and waited for by the C library (`posix_spawnp`, `waitpid`) through
 * `bun:ffi`, so they never touch Bun's event loops.
 *
 * Why: Bun 1.3's own `spawnSync` (`child_process.spawnSync`, `execFileSync`, `Bun.spawnSync`) waits on a private event
 * loop, and when the garbage collector frees something that polled on the main loop during that wait, the poll is
 * released against the wrong loop (oven-sh/bun issue 34069, fix in pull request 40078, not released). The main loop
 * keeps a registration for a closed file descriptor; later the suite's product code failed at random, far from the
 * cause: ripgrep "could not run: EBADF: bad file descriptor, epoll_ctl" in a security search, a refusal that did not
 * come; and a later `spawnSync` could miss its child's exit for ever (the process spinning at 100 % CPU). The product
 * itself uses none of them (`util/sync-process.ts`); this keeps the tests' own calls from breaking it.
 *
 * The child's standard output and error go to files in a private temporary folder, read when it has ended; it has
 * been reaped when a call returns, as with Node's `spawnSync`. Signals the test process ignores or handles are reset
 * to their defaults in the child, none is blocked, and it gets no descriptor but 0, 1 and 2. Linux with glibc 2.34 or
 * later only (the suite's platform); elsewhere the runtime's own functions are used.
 *
 * @example
 * const r = spawnSync("git", ["status", "--porcelain"], { cwd: dir, encoding: "utf8" })
 * if (r.status !== 0) throw new Error(r.stderr)
 */
import { dlopen, FFIType, ptr, read } from "bun:ffi"
import * as child from "child_process"
import fs from "fs"
import os from "os"
import path from "path"
import { SyncProcess } from "../util/sync-process"

type Stdio = "pipe" | "ignore" | "inherit"

export interface SpawnSyncOptions {
  cwd?: string
  env?: Record<string, string | undefined>
  /** Written to the child's standard input (otherwise it reads an empty input, as Node's default pipe gives). */
  input?: string | Uint8Array
  /** "utf8" gives strings for stdout and stderr; otherwise Buffers. */
  encoding?: BufferEncoding | "buffer"
  /** Milliseconds before `killSignal` (SIGTERM) is sent; the result then has an ETIMEDOUT error. */
  timeout?: number
  killSignal?: NodeJS.Signals
  /** The most bytes kept of each output; past it the child is killed and the result has an ENOBUFS error. No limit
   * unless given (as the runtime's own `spawnSync`, which the tests were written against). */
  maxBuffer?: number
  /** A shell runs the command: the file and arguments joined with spaces, under `/bin/sh -c`. */
  shell?: boolean | string
  stdio?: Stdio | [Stdio?, Stdio?, Stdio?]
}

export interface SpawnSyncResult<T> {
  pid: number
  status: number | null
  signal: NodeJS.Signals | null
  stdout: T
  stderr: T
  output: [null, T, T]
  error?: NodeJS.ErrnoException
}

const C = FFIType
/** glibc's functions, or undefined where there is none by that name (another system, musl): the runtime's are used. */
function loadLibc() {
  if (process.platform !== "linux") return undefined
  try {
    return dlopen("libc.so.6", {
      posix_spawnp: { args: [C.ptr, C.ptr, C.ptr, C.ptr, C.ptr, C.ptr], returns: C.i32 },
      posix_spawn_file_actions_init: { args: [C.ptr], returns: C.i32 },
      posix_spawn_file_actions_destroy: { args: [C.ptr], returns: C.i32 },
      posix_spawn_file_actions_addopen: { args: [C.ptr, C.i32, C.ptr, C.i32, C.u32], returns: C.i32 },
      posix_spawn_file_actions_addchdir_np: { args: [C.ptr, C.ptr], returns: C.i32 },
      posix_spawn_file_actions_addclosefrom_np: { args: [C.ptr, C.i32], returns: C.i32 },
      posix_spawnattr_init: { args: [C.ptr], returns: C.i32 },
      posix_spawnattr_destroy: { args: [C.ptr], returns: C.i32 },
      posix_spawnattr_setflags: { args: [C.ptr, C.i16], returns: C.i32 },
      posix_spawnattr_setsigdefault: { args: [C.ptr, C.ptr], returns: C.i32 },
      posix_spawnattr_setsigmask: { args: [C.ptr, C.ptr], returns: C.i32 },
      sigemptyset: { args: [C.ptr], returns: C.i32 },
      sigaddset: { args: [C.ptr, C.i32], returns: C.i32 },
      waitpid: { args: [C.i32, C.ptr, C.i32], returns: C.i32 },
      kill: { args: [C.i32, C.i32], returns: C.i32 },
      __errno_location: { args: [], returns: C.ptr },
    }).symbols
  } catch {
    return undefined
  }
}
const libc = loadLibc()

const POSIX_SPAWN_SETSIGDEF = 0x04
const POSIX_SPAWN_SETSIGMASK = 0x08
const WNOHANG = 1
const EINTR = 4
const SIGNALS = os.constants.signals as Record<string, number>
const ERRNO_NAMES = Object.fromEntries(Object.entries(os.constants.errno).map(([k, v]) => [v, k])) as Record<
  number,
  string
>

const cstr = (s: string) => Buffer.from(s + "\0", "utf8")

/** An array of C strings ending in NULL; the buffers are kept alive by the returned list. */
function cstrings(list: string[]) {
  const strings = list.map(cstr)
  const table = new BigUint64Array(strings.length + 1)
  strings.forEach((s, i) => (table[i] = BigInt(ptr(s))))
  return { table, strings }
}

function errnoError(code: number, syscall: string, file: string): NodeJS.ErrnoException {
  const name = ERRNO_NAMES[code] ?? `E${code}`
  const error = new Error(`${syscall} ${file} ${name}`) as NodeJS.ErrnoException
  error.code = name
  error.errno = -code
  error.syscall = syscall
  error.path = file
  return error
}

function stdioOf(stdio: SpawnSyncOptions["stdio"]): [Stdio, Stdio, Stdio] {
  if (typeof stdio === "string") return [stdio, stdio, stdio]
  return [stdio?.[0] ?? "pipe", stdio?.[1] ?? "pipe", stdio?.[2] ?? "pipe"]
}

/**
 * Node's `spawnSync` for the tests (see the module): the same result shape, the options listed in `SpawnSyncOptions`.
 *
 * @example
 * spawnSync("sh", ["-c", "exit 3"]).status // 3
 */
export function spawnSync(
  file: string,
  options?: SpawnSyncOptions & { encoding: BufferEncoding },
): SpawnSyncResult<string>
export function spawnSync(
  file: string,
  args: readonly string[],
  options: SpawnSyncOptions & { encoding: BufferEncoding },
): SpawnSyncResult<string>
export function spawnSync(file: string, args?: readonly string[], options?: SpawnSyncOptions): SpawnSyncResult<Buffer>
export function spawnSync(file: string, a?: readonly string[] | SpawnSyncOptions, b?: SpawnSyncOptions): any {
  const args = Array.isArray(a) ? [...a] : []
  const options = (Array.isArray(a) ? b : (a as SpawnSyncOptions | undefined)) ?? {}
  if (!libc) return child.spawnSync(file, args, options as child.SpawnSyncOptions)
  let program = file
  let argv = [file, ...args]
  if (options.shell) {
    program = typeof options.shell === "string" ? options.shell : "/bin/sh"
    argv = [program, "-c", [file, ...args].join(" ")]
  }
  const encode = (b: Buffer) => (options.encoding && options.encoding !== "buffer" ? b.toString(options.encoding) : b)
  const [inMode, outMode, errMode] = stdioOf(options.stdio)
  const max = options.maxBuffer ?? Number.MAX_SAFE_INTEGER
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-test-spawn-"))
  const actions = new Uint8Array(1024)
  const attr = new Uint8Array(1024)
  const sigdef = new Uint8Array(256)
  const sigmask = new Uint8Array(256)
  const keep: unknown[] = []
  const pathOf = (name: string) => {
    const p = cstr(path.join(dir, name))
    keep.push(p)
    return p
  }
  try {
    libc.posix_spawn_file_actions_init(actions)
    libc.posix_spawnattr_init(attr)
    const O = fs.constants
    if (inMode === "pipe" && options.input !== undefined) {
      fs.writeFileSync(path.join(dir, "in"), options.input, { mode: 0o600 })
      libc.posix_spawn_file_actions_addopen(actions, 0, pathOf("in"), O.O_RDONLY, 0)
    } else if (inMode !== "inherit") {
      const devnull = cstr("/dev/null")
      keep.push(devnull)
      libc.posix_spawn_file_actions_addopen(actions, 0, devnull, O.O_RDONLY, 0)
    }
    for (const [fd, mode, name] of [
      [1, outMode, "out"],
      [2, errMode, "err"],
    ] as const) {
      if (mode === "inherit") continue
      const target = mode === "pipe" ? pathOf(name) : cstr("/dev/null")
      keep.push(target)
      libc.posix_spawn_file_actions_addopen(actions, fd, target, O.O_WRONLY | O.O_CREAT | O.O_TRUNC, 0o600)
    }
    if (options.cwd !== undefined) {
      const cwd = cstr(options.cwd)
      keep.push(cwd)
      libc.posix_spawn_file_actions_addchdir_np(actions, cwd)
    }
    // Nothing but the three standard descriptors, as the runtime's own children get: Bun opens files without
    // close-on-exec, and a long-lived child (a daemon a test starts) would keep them open.
    libc.posix_spawn_file_actions_addclosefrom_np(actions, 3)
    libc.sigemptyset(sigdef)
    for (let s = 1; s < 32; s++) if (s !== SIGNALS.SIGKILL && s !== SIGNALS.SIGSTOP) libc.sigaddset(sigdef, s)
    libc.sigemptyset(sigmask)
    libc.posix_spawnattr_setsigdefault(attr, sigdef)
    libc.posix_spawnattr_setsigmask(attr, sigmask)
    libc.posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
    const env = Object.entries(options.env ?? process.env)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${v}`)
    const argvC = cstrings(argv)
    const envC = cstrings(env)
    const programC = cstr(program)
    const pidOut = new Int32Array(1)
    const failed = libc.posix_spawnp(pidOut, programC, actions, attr, argvC.table, envC.table)
    keep.push(argvC, envC, programC)
    const empty = encode(Buffer.alloc(0))
    if (failed !== 0) {
      const error = errnoError(failed, "spawnSync", file)
      return { pid: 0, status: null, signal: null, stdout: empty, stderr: empty, output: [null, empty, empty], error }
    }
    const pid = pidOut[0]
    const status = new Int32Array(1)
    const sleeper = new Int32Array(new SharedArrayBuffer(4))
    const started = Date.now()
    let timedOut = false
    let overflow = false
    // Sleeps from 0.1 ms up to 20 ms between looks: a short program is seen ending at once, a long one costs little.
    for (let step = 0.1; ; step = Math.min(step * 2, 20)) {
      const r = libc.waitpid(pid, status, WNOHANG)
      if (r === pid) break
      if (r < 0) {
        const errno = read.i32(libc.__errno_location()!)
        if (errno === EINTR) continue
        throw errnoError(errno, "waitpid", file)
      }
      if (!timedOut && !overflow) {
        if (options.timeout && Date.now() - started > options.timeout) {
          timedOut = true
          libc.kill(pid, SIGNALS[options.killSignal ?? "SIGTERM"])
        } else if (outMode === "pipe" && sizeOver(path.join(dir, "out"), max)) overflow = true
        else if (errMode === "pipe" && sizeOver(path.join(dir, "err"), max)) overflow = true
        if (overflow) libc.kill(pid, SIGNALS[options.killSignal ?? "SIGTERM"])
      }
      Atomics.wait(sleeper, 0, 0, step)
    }
    const w = status[0]
    const out = outMode === "pipe" ? SyncProcess.readCapped(path.join(dir, "out"), max) : undefined
    const err = errMode === "pipe" ? SyncProcess.readCapped(path.join(dir, "err"), max) : undefined
    const stdout = out ? encode(out.bytes) : null
    const stderr = err ? encode(err.bytes) : null
    const result: SpawnSyncResult<unknown> = {
      pid,
      status: (w & 0x7f) === 0 ? (w >> 8) & 0xff : null,
      signal: (w & 0x7f) === 0 ? null : SyncProcess.signalName(w & 0x7f),
      stdout,
      stderr,
      output: [null, stdout, stderr],
    }
    if (timedOut) result.error = errnoError(os.constants.errno.ETIMEDOUT, "spawnSync", file)
    else if (overflow || out?.over || err?.over)
      result.error = errnoError(os.constants.errno.ENOBUFS, "spawnSync", file)
    return result
  } finally {
    libc.posix_spawn_file_actions_destroy(actions)
    libc.posix_spawnattr_destroy(attr)
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

function sizeOver(file: string, max: number) {
  try {
    return fs.statSync(file).size > max
  } catch {
    return false
  }
}

/**
 * Node's `execFileSync` over `spawnSync` above: the standard output, or an error carrying `status` and `stderr` when the
 * program failed (standard error is collected, not passed through).
 *
 * @example
 * execFileSync("git", ["init", "-q"], { cwd: dir })
 */
export function execFileSync(file: string, args: readonly string[] = [], options: SpawnSyncOptions = {}): any {
  const r = spawnSync(file, args, options)
  if (r.error) throw r.error
  if (r.status !== 0) {
    const error = new Error(`Command failed: ${[file, ...args].join(" ")}\n${r.stderr?.toString() ?? ""}`) as Error & {
      status: number | null
      signal: NodeJS.Signals | null
      stdout: unknown
      stderr: unknown
    }
    Object.assign(error, { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr })
    throw error
  }
  return r.stdout
}

/**
 * `Bun.spawnSync`'s shape over `spawnSync` above, for the tests written against it: `exitCode`, `signalCode`,
 * `success`, and Buffers for `stdout`/`stderr` (empty when not piped).
 *
 * @example
 * const proc = bunSpawnSync(["git", "init", "-q"], { cwd: dir })
 */
export function bunSpawnSync(
  cmd: string[],
  options: {
    cwd?: string
    env?: Record<string, string | undefined>
    stdin?: "ignore" | "inherit" | "pipe" | string | Uint8Array
    stdout?: Stdio
    stderr?: Stdio
    timeout?: number
  } = {},
) {
  const input = typeof options.stdin === "string" && !["ignore", "inherit", "pipe"].includes(options.stdin)
  const stdinMode: Stdio =
    options.stdin === "inherit"
      ? "inherit"
      : options.stdin === "ignore" || options.stdin === undefined
        ? "ignore"
        : "pipe"
  const r = spawnSync(cmd[0], cmd.slice(1), {
    cwd: options.cwd,
    env: options.env,
    timeout: options.timeout,
    input: input || options.stdin instanceof Uint8Array ? (options.stdin as string | Uint8Array) : undefined,
    stdio: [stdinMode, options.stdout ?? "pipe", options.stderr ?? "pipe"],
  })
  if (r.error && r.error.code === "ENOENT") throw r.error
  return {
    pid: r.pid,
    exitCode: r.status,
    signalCode: r.signal,
    success: r.status === 0,
    stdout: r.stdout ?? Buffer.alloc(0),
    stderr: r.stderr ?? Buffer.alloc(0),
  }
}
