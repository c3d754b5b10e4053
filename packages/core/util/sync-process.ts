import { spawnSync } from "child_process"
import fs from "fs"
import os from "os"
import path from "path"

/**
 * Runs a program and waits for it without Bun's `spawnSync`. Bun 1.3's `spawnSync` waits on a private event loop; when
 * the garbage collector releases something that polled on the main loop during that wait, the private loop's count of
 * polls goes wrong and a later `spawnSync` can miss its child's exit for ever: the child stays a zombie and the
 * process spins at 100 % CPU (oven-sh/bun issue 34069, unfixed in the Bun this suite and OpenCode run). It happened
 * here inside the security layer's `git rev-parse` in a long test run; inside OpenCode it would freeze the session.
 *
 * On Linux the child is started with `Bun.spawn` (the main loop, which is not affected) with its output going to
 * files, and its end is read from `/proc/<pid>/stat` (a zombie's state `Z` and its wait status, field 52) while this
 * thread sleeps in short steps: nothing here depends on an event loop. Elsewhere, Node's `spawnSync`.
 *
 * @example
 * const r = SyncProcess.run("git", ["rev-parse", "--absolute-git-dir"], { cwd: "/repo", timeout: 10_000 })
 * if (r.status === 0) console.log(r.stdout.toString("utf8").trim())
 */
export namespace SyncProcess {
  export interface Options {
    cwd?: string
    env?: Record<string, string | undefined>
    /** Written to the program's standard input (none: standard input is /dev/null). */
    input?: string
    /** Milliseconds before the program is sent SIGTERM (then SIGKILL a second later); the result has `error`. */
    timeout?: number
    /** The most bytes kept of standard output (the rest is dropped and `error` says so). Default 16 MiB. */
    maxBuffer?: number
    /** Keep standard error too (default: discarded). */
    stderr?: boolean
  }

  export interface Result {
    /** The exit code, or null when the program was ended by a signal, did not start or its end was not seen. */
    status: number | null
    signal: NodeJS.Signals | null
    stdout: Buffer
    stderr: Buffer
    /** Why the program did not run to its end as asked: not found, timed out, output past `maxBuffer`. */
    error?: Error
    /** The program's process id, when it started. */
    pid?: number
  }

  const DEFAULT_MAX_BUFFER = 16 * 1024 * 1024
  const SIGNALS = os.constants.signals as Record<string, number>

  /** The wait status of process `pid` once it ended (a zombie), undefined while it runs, "gone" when no such process. */
  function ended(pid: number): number | "gone" | undefined {
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    } catch {
      return "gone"
    }
    // "<pid> (<comm>) <state> …": the name may hold spaces and parentheses, so fields are counted after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (fields[0] !== "Z" && fields[0] !== "X") return undefined
    const status = Number(fields[49])
    return Number.isFinite(status) ? status : 0
  }

  /**
   * The name of signal number `n`, or null when this platform has none by that number.
   *
   * @example
   * SyncProcess.signalName(9) // "SIGKILL"
   */
  export function signalName(n: number): NodeJS.Signals | null {
    for (const [name, value] of Object.entries(SIGNALS)) if (value === n) return name as NodeJS.Signals
    return null
  }

  /**
   * A file's first `max` bytes, and whether it held more.
   *
   * @example
   * SyncProcess.readCapped("/tmp/out", 16 * 1024 * 1024) // { bytes: <Buffer …>, over: false }
   */
  export function readCapped(file: string, max: number): { bytes: Buffer; over: boolean } {
    const size = fs.statSync(file).size
    if (size <= max) return { bytes: fs.readFileSync(file), over: false }
    const fd = fs.openSync(file, "r")
    try {
      const bytes = Buffer.alloc(max)
      fs.readSync(fd, bytes, 0, max, 0)
      return { bytes, over: true }
    } finally {
      fs.closeSync(fd)
    }
  }

  /** Runs `file` with `args` and waits for its end (see the namespace). Never throws for the program's sake. */
  export function run(file: string, args: string[], options: Options = {}): Result {
    if (process.platform !== "linux" || typeof Bun === "undefined") return viaNode(file, args, options)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-sync-"))
    try {
      // The runtime opens and closes the files itself: a descriptor of ours handed to it was seen closed by the time
      // the call returned (EBADF at our close, in a long test run), and a second close of a number by then reused is
      // how another child's registration with the event loop fails (`LoopError`).
      const named = (name: string, text = "") => {
        fs.writeFileSync(path.join(dir, name), text, { mode: 0o600 })
        return Bun.file(path.join(dir, name))
      }
      let child: ReturnType<typeof Bun.spawn>
      try {
        child = Bun.spawn([file, ...args], {
          cwd: options.cwd,
          env: options.env as Record<string, string> | undefined,
          stdin: options.input !== undefined ? named("in", options.input) : "ignore",
          stdout: named("out"),
          stderr: options.stderr ? named("err") : "ignore",
        })
      } catch (error) {
        return { status: null, signal: null, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), error: error as Error }
      }
      const sleeper = new Int32Array(new SharedArrayBuffer(4))
      const started = Date.now()
      let timedOut = false
      let killedAt = 0
      let wait: number | "gone" | undefined
      for (let step = 1; ; step = Math.min(step * 2, 20)) {
        wait = ended(child.pid)
        if (wait !== undefined) break
        const now = Date.now()
        if (options.timeout && !timedOut && now - started > options.timeout) {
          timedOut = true
          killedAt = now
          child.kill("SIGTERM")
        } else if (timedOut && now - killedAt > 1_000) {
          child.kill("SIGKILL")
          killedAt = now
        }
        Atomics.wait(sleeper, 0, 0, step)
      }
      const max = options.maxBuffer ?? DEFAULT_MAX_BUFFER
      const out = readCapped(path.join(dir, "out"), max)
      const err = options.stderr ? readCapped(path.join(dir, "err"), max) : { bytes: Buffer.alloc(0), over: false }
      const result: Result = { status: null, signal: null, stdout: out.bytes, stderr: err.bytes, pid: child.pid }
      if (wait === "gone") {
        // Reaped already by someone else: what the runtime recorded, if it did.
        result.status = child.exitCode
        result.signal = (child.signalCode as NodeJS.Signals | null) ?? null
        if (result.status === null && result.signal === null)
          result.error = new Error(`${file}: its exit status was not seen (the process was reaped elsewhere)`)
      } else if ((wait & 0x7f) === 0) result.status = (wait >> 8) & 0xff
      else result.signal = signalName(wait & 0x7f)
      if (timedOut) result.error = new Error(`${file}: timed out after ${options.timeout} ms (spawnSync ETIMEDOUT)`)
      else if (out.over || err.over) result.error = new Error(`${file}: output past maxBuffer (${max} bytes)`)
      return result
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }

  function viaNode(file: string, args: string[], options: Options): Result {
    const r = spawnSync(file, args, {
      cwd: options.cwd,
      env: options.env,
      input: options.input,
      timeout: options.timeout,
      maxBuffer: options.maxBuffer ?? DEFAULT_MAX_BUFFER,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", options.stderr ? "pipe" : "ignore"],
    })
    return {
      status: r.status,
      signal: r.signal,
      stdout: r.stdout ?? Buffer.alloc(0),
      stderr: r.stderr ?? Buffer.alloc(0),
      error: r.error,
    }
  }
}
