/**
 * Entry of an `ast_grep_search` worker thread (started by pool.ts): runs `AstMatch.files` for each job it is sent
 * and answers `{ id, done }` or `{ id, error }`. It first answers `{ ready: true }` once napi is loaded.
 *
 * napi's parsed trees live outside the JavaScript heap, so the collector never feels their weight: they are freed
 * only when a collection finds their `SgRoot`/`SgNode` objects dead and an event loop turn then runs napi's
 * finalizers. A worker therefore forces a full collection after every `GC_CHARS` characters parsed (cheap here: the
 * worker's heap holds little more than the current job, and the main thread's heap is never touched), then returns
 * to its event loop, which runs the finalizers before the next job. This keeps a search's memory bounded by what a
 * few hundred kilobytes of source parse into instead of growing with the corpus (a 5.8 MB corpus: ~330 MB → ~100 MB).
 *
 * @example
 * const worker = new Worker(new URL("./worker.ts", import.meta.url))
 * worker.postMessage({ id: 1, job }) // → { id: 1, done: { counts, positions, parsed } }
 */
import { parse } from "@ast-grep/napi"
import { AstMatch } from "./match"

declare const self: Worker

const GC_CHARS = 256 * 1024
let sinceCollection = 0

// Loading napi's library is most of a worker's start-up: done before saying ready, so the first job does not pay it.
parse("JavaScript", "")
self.postMessage({ ready: true })

self.onmessage = async (event: MessageEvent<{ id: number; job: AstMatch.Job }>) => {
  const { id, job } = event.data
  try {
    const done = await AstMatch.files(job)
    sinceCollection += done.parsed
    if (sinceCollection >= GC_CHARS) {
      sinceCollection = 0
      Bun.gc(true)
    }
    self.postMessage({ id, done })
  } catch (error) {
    self.postMessage({ id, error: error instanceof Error ? error.message : String(error) })
  }
}
