/**
 * Entry of an `ast_grep_search` worker thread (started by pool.ts): for each search it is sent, claims batches
 * (`AstMatch.drain`) and answers `{ id, index, done }` per batch, then `{ id, finished: true }` (or `{ id, error }`).
 * It first answers `{ ready: true }` once napi is loaded.
 *
 * napi's parsed trees live outside the JavaScript heap, so the collector never feels their weight: they are freed
 * only when a collection finds their `SgRoot`/`SgNode` objects dead and an event loop turn then runs napi's
 * finalizers (a loop that parses without yielding, or without collecting, keeps every tree: ~85 bytes per source
 * character). A worker therefore forces a full collection after every `GC_CHARS` characters parsed, then lets one
 * event loop turn pass, which runs the finalizers before the next batch. Each collection costs a few milliseconds, most of
 * it napi freeing the trees (which the CLI pays per file too), and only this worker's small heap is walked, never
 * the main thread's. On 653 OpenCode files (5.4 MB, 44k matches) the whole process peaks at ~125 MB instead of
 * ~280 MB.
 *
 * @example
 * const worker = new Worker(new URL("./worker.ts", import.meta.url))
 * worker.postMessage({ id: 1, search }) // → { id: 1, index: 0, done: { counts, positions, parsed } }, …, { id: 1, finished: true }
 */
import { parse } from "@ast-grep/napi"
import { AstMatch } from "./match"

declare const self: Worker

const GC_CHARS = 64 * 1024
let sinceCollection = 0

// Loading napi's library is most of a worker's start-up: done before saying ready, so the first job does not pay it.
parse("JavaScript", "")
self.postMessage({ ready: true })

const collect = (done: AstMatch.Done) => {
  sinceCollection += done.parsed
  if (sinceCollection < GC_CHARS) return
  sinceCollection = 0
  Bun.gc(true)
}

self.onmessage = async (event: MessageEvent<{ id: number; search: AstMatch.Search }>) => {
  const { id, search } = event.data
  try {
    await AstMatch.drain(search, (index, done) => self.postMessage({ id, index, done }), collect)
    self.postMessage({ id, finished: true })
  } catch (error) {
    self.postMessage({ id, error: error instanceof Error ? error.message : String(error) })
  }
}
