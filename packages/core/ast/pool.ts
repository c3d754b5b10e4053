import os from "os"
import type { AstMatch } from "./match"

/**
 * The worker threads `ast_grep_search` parses in (worker.ts): one per core up to `MAX_WORKERS`, started on the first
 * search and kept for the next ones, ended after `IDLE_MS` without work so an idle OpenCode holds none. An idle
 * worker never keeps the process alive (a command that searches and prints exits at once).
 *
 * Workers rather than napi's own threads (`findInFiles`): a worker parses and matches with napi's synchronous calls
 * and sends back numbers, so no `SgNode` crosses to the main thread, whose heap (OpenCode's, hundreds of megabytes)
 * is never collected on napi's behalf; each worker collects its own small heap to free the trees it parsed.
 *
 * When a worker cannot start (e.g. a compiled binary built without worker.ts as an entry point, see `DEFAULT_ENTRY`),
 * `Runner.ready` rejects and the search does that share of the work on its own thread (see search.ts).
 *
 * @example
 * const [runner] = AstPool.acquire(1)
 * await runner.ready
 * await runner.search(search, (index, done) => record(index, done))
 * AstPool.release(runner)
 */
export namespace AstPool {
  export const MAX_WORKERS = 4
  export const IDLE_MS = 10_000
  /** Longest wait for a new worker to load napi before its share is done on the calling thread. */
  export const START_TIMEOUT_MS = 15_000

  /**
   * worker.ts beside this file; inside a binary built with `bun build --compile` (whose modules live under
   * `/$bunfs/`), the path a build run from the repository root gives for it as an extra entry point, which is how
   * such a binary names the embedded worker: `bun build --compile <entry> ./packages/core/ast/worker.ts`.
   */
  export const DEFAULT_ENTRY: string | URL =
    import.meta.path.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/.test(import.meta.path)
      ? "./packages/core/ast/worker.ts"
      : new URL("./worker.ts", import.meta.url)

  let entry: string | URL = DEFAULT_ENTRY

  /** Bun's Worker (ref/unref), also where a host type-checks with the DOM's Worker type (OpenCode does). */
  type Thread = Worker & { ref(): void; unref(): void }

  /**
   * Where new workers load their code from (default: worker.ts beside this file). A host that ships the worker
   * elsewhere, e.g. as an extra entry point of a compiled binary, points here; idle workers are ended.
   *
   * @example
   * AstPool.setEntry("./packages/core/ast/worker.ts") // the path given to `bun build --compile` as an entry point
   */
  export function setEntry(url: string | URL) {
    entry = url
    shutdown()
  }

  /**
   * Workers a search uses here: one per core the process may use, at most `MAX_WORKERS`.
   *
   * @example
   * AstPool.parallelism() // 2 on a 2-core machine
   */
  export function parallelism(): number {
    const cores = typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length
    return Math.max(1, Math.min(MAX_WORKERS, cores))
  }

  /** One worker thread; `search` has it work on a search until no batch is left. */
  export class Runner {
    /** Resolves once the worker has loaded napi; rejects when it cannot start. */
    readonly ready: Promise<void>
    private worker?: Thread
    private readonly pending = new Map<
      number,
      { report: (index: number, done: AstMatch.Done) => void; resolve: () => void; reject: (error: Error) => void }
    >()
    private failure?: Error
    private settle: (error?: Error) => void = () => undefined
    private readonly timer: ReturnType<typeof setTimeout>
    private nextId = 0

    constructor() {
      this.ready = new Promise<void>((resolve, reject) => {
        this.settle = (error) => (error ? reject(error) : resolve())
      })
      // Callers look at `ready` when they use the runner: an unobserved rejection is not an error here.
      this.ready.catch(() => undefined)
      this.timer = setTimeout(() => this.fail(new Error("the search worker did not start in time")), START_TIMEOUT_MS)
      this.timer.unref?.()
      try {
        this.worker = new Worker(entry) as Thread
      } catch (error) {
        this.fail(error instanceof Error ? error : new Error(String(error)))
        return
      }
      this.worker.unref()
      this.worker.addEventListener("message", (event: MessageEvent) => this.receive(event.data))
      const stopped = (event: Event) =>
        this.fail(new Error((event as ErrorEvent).message || "the search worker stopped"))
      this.worker.addEventListener("error", stopped)
      this.worker.addEventListener("close", stopped)
    }

    /** True once the worker failed or was ended: it takes no more jobs. */
    get broken(): boolean {
      return this.failure !== undefined
    }

    /**
     * Has the worker claim and search batches of `search` until none is left, calling `report` for each; resolves
     * when it stops, rejects when the worker fails (batches it claimed but did not report are then missing).
     *
     * @example
     * await runner.search(search, (index, done) => record(index, done))
     */
    search(search: AstMatch.Search, report: (index: number, done: AstMatch.Done) => void): Promise<void> {
      if (this.failure || !this.worker) return Promise.reject(this.failure ?? new Error("the search worker is gone"))
      const id = ++this.nextId
      const worker = this.worker
      return new Promise<void>((resolve, reject) => {
        this.pending.set(id, { report, resolve, reject })
        // Referenced while it works, so that a process whose only pending work is this search waits for it.
        worker.ref()
        worker.postMessage({ id, search })
      })
    }

    terminate() {
      this.fail(new Error("the search worker was ended"))
    }

    private receive(data: {
      ready?: true
      id?: number
      index?: number
      done?: AstMatch.Done
      finished?: true
      error?: string
    }) {
      if (data.ready) {
        clearTimeout(this.timer)
        this.settle()
        return
      }
      const pending = this.pending.get(data.id!)
      if (!pending) return
      if (data.done) {
        pending.report(data.index!, data.done)
        return
      }
      this.pending.delete(data.id!)
      if (!this.pending.size) this.worker?.unref()
      if (data.finished) pending.resolve()
      else pending.reject(new Error(data.error ?? "the search worker failed"))
    }

    private fail(error: Error) {
      if (this.failure) return
      this.failure = error
      clearTimeout(this.timer)
      this.settle(error)
      for (const pending of this.pending.values()) pending.reject(error)
      this.pending.clear()
      this.worker?.terminate()
    }
  }

  const idle: Runner[] = []
  let idleTimer: ReturnType<typeof setTimeout> | undefined

  /**
   * `count` runners for one search: idle ones first, new ones for the rest (they start in parallel; await `ready`).
   *
   * @example
   * const runners = AstPool.acquire(AstPool.parallelism())
   */
  export function acquire(count: number): Runner[] {
    const out: Runner[] = []
    while (out.length < count && idle.length) {
      const runner = idle.pop()!
      if (!runner.broken) out.push(runner)
    }
    while (out.length < count) out.push(new Runner())
    return out
  }

  /**
   * Gives a runner back: kept for the next search (up to `MAX_WORKERS` idle), ended after `IDLE_MS` without work.
   *
   * @example
   * AstPool.release(runner)
   */
  export function release(runner: Runner) {
    if (runner.broken) return
    if (idle.length >= MAX_WORKERS) {
      runner.terminate()
      return
    }
    idle.push(runner)
    if (idleTimer) clearTimeout(idleTimer)
    idleTimer = setTimeout(shutdown, IDLE_MS)
    idleTimer.unref?.()
  }

  /**
   * Starts `count` workers now, idle until a search takes them: a command that will search (cli.ts) calls it first,
   * so the workers load napi while the main thread is still loading its modules and listing files.
   *
   * @example
   * AstPool.prestart(AstPool.parallelism())
   */
  export function prestart(count: number) {
    for (const runner of acquire(count)) release(runner)
  }

  /**
   * Workers started and waiting for work.
   *
   * @example
   * AstPool.idleCount() // 0 before the first search, 2 just after one on a 2-core machine
   */
  export function idleCount(): number {
    return idle.length
  }

  /**
   * Ends every idle worker now (tests, or a host shutting down).
   *
   * @example
   * AstPool.shutdown()
   */
  export function shutdown() {
    if (idleTimer) clearTimeout(idleTimer)
    idleTimer = undefined
    for (const runner of idle.splice(0)) runner.terminate()
  }
}
