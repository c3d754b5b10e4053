import fs from "fs/promises"

/**
 * Reads a resource file as UTF-8 text, refusing what cannot be shown to a model: binary files (NUL bytes), text that
 * is not valid UTF-8, and reads that take longer than the timeout (slow or hung file systems). Files over `maxBytes`
 * yield only their first `headBytes` (enough for frontmatter), flagged `truncated`.
 *
 * @example
 * const r = await ResourceRead.text("/repo/.opencode/task/a.md", { timeoutMs: 5000, maxBytes: 1 << 20 })
 * if (r.ok) console.log(r.text)
 * else console.log(r.code, r.reason) // e.g. "binary-file", "contains NUL bytes"
 */
export namespace ResourceRead {
  export type Result =
    | { ok: true; text: string; truncated: boolean }
    | { ok: false; code: "binary-file" | "not-utf8" | "unreadable" | "read-timeout"; reason: string }

  const SNIFF = 8192
  const decoder = new TextDecoder("utf-8", { fatal: true })

  export async function text(
    file: string,
    options: { timeoutMs: number; maxBytes: number; headBytes?: number; size?: number },
  ): Promise<Result> {
    return Watchdog.race(read(file, options), options.timeoutMs, () => ({
      ok: false,
      code: "read-timeout",
      reason: `reading took longer than ${options.timeoutMs} ms`,
    }))
  }

  /**
   * Timeouts for many concurrent reads with a single timer: thousands of reads would otherwise create and clear
   * thousands of timers, which costs more than the reads themselves. The timer is unref'd.
   */
  namespace Watchdog {
    type Entry = { deadline: number; expire: () => void }
    const entries = new Set<Entry>()
    let timer: ReturnType<typeof setInterval> | undefined
    let tick = 0

    export function race<T>(work: Promise<T>, ms: number, onTimeout: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const entry: Entry = { deadline: performance.now() + ms, expire: () => resolve(onTimeout()) }
        entries.add(entry)
        schedule(ms)
        work.then(
          (value) => {
            entries.delete(entry)
            resolve(value)
          },
          (error) => {
            entries.delete(entry)
            reject(error)
          },
        )
      })
    }

    function schedule(ms: number) {
      const every = Math.max(1, Math.min(250, Math.floor(ms / 4)))
      if (timer && every >= tick) return
      if (timer) clearInterval(timer)
      tick = every
      timer = setInterval(check, every)
      timer.unref?.()
    }

    function check() {
      const now = performance.now()
      for (const entry of entries) {
        if (entry.deadline > now) continue
        entries.delete(entry)
        entry.expire()
      }
      if (entries.size === 0 && timer) {
        clearInterval(timer)
        timer = undefined
        tick = 0
      }
    }
  }

  async function read(file: string, options: { maxBytes: number; headBytes?: number; size?: number }): Promise<Result> {
    let bytes: Uint8Array
    let truncated = false
    try {
      // Never open what is not a regular file: opening a FIFO or a device can block indefinitely. Callers that
      // pass `size` got it from a stat that showed a regular file, so the check is not repeated.
      let size = options.size
      if (size === undefined) {
        const stat = await fs.stat(file)
        if (!stat.isFile()) return { ok: false, code: "unreadable", reason: "not a regular file" }
        size = stat.size
      }
      if (size > options.maxBytes) {
        const head = options.headBytes ?? 64 * 1024
        const handle = await fs.open(file, "r")
        try {
          const buffer = Buffer.alloc(Math.min(head, size))
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
          bytes = buffer.subarray(0, bytesRead)
        } finally {
          await handle.close()
        }
        truncated = true
      } else bytes = await fs.readFile(file)
    } catch (error) {
      const e = error as NodeJS.ErrnoException
      return { ok: false, code: "unreadable", reason: e.code ?? e.message }
    }
    const sniff = bytes.subarray(0, SNIFF)
    if (sniff.includes(0)) return { ok: false, code: "binary-file", reason: "contains NUL bytes (binary file)" }
    if (truncated) {
      // The head may end inside a multi-byte character or line: keep whole lines only.
      const cut = bytes.lastIndexOf(0x0a)
      bytes = bytes.subarray(0, cut > 0 ? cut : bytes.length)
    }
    try {
      return { ok: true, text: decoder.decode(bytes), truncated }
    } catch {
      return { ok: false, code: "not-utf8", reason: "not valid UTF-8 text" }
    }
  }
}
