// LSP tool benchmark (`bun run bench lsp`): the `lsp` tool's diagnostics, called as OpenCode calls it (LspTools over
// Lsp.create, the text the model gets included), against typescript-language-server 6.0.2 + TypeScript 5.9.3 from
// this repository's node_modules, on a small project (an exported symbol used in three files, a file with a TS2322
// and a clean file). Figures:
//  - cold (rounds alternate which side goes first): a fresh service's first diagnostics call on the TS2322 file (server start, initialisation, first result);
//    the server's own initialize handshake time is reported beside it (goal: cold ≤ init + 1.5 s);
//  - server initialised, the first call on a file it has not seen (a new file with a TS2322), p50/p95 (goal p95 ≤ 3 s);
//  - warm on the TS2322 file: each call after an edit that changes the file (a new version must be sent and its
//    result awaited), p50/p95 (goal: p95 ≤ 3 s); also warm with the file unchanged;
//  - warm on a clean file after an edit (goal ≤ 1.5 s; the list must come back empty with status ok).
// Baselines, same run, same server binary and initialisation options:
//  - the raw server with a minimal client of this script's own: spawn → initialize answered, then didOpen → the first
//    textDocument/publishDiagnostics for the file carrying the TS2322 (cold), and didChange → the first publish for
//    the new version carrying it (warm), didChange → first publish for the clean file (clean), didOpen of a new file
//    → its first publish carrying the TS2322;
//  - `tsc --noEmit -p` of the project (a fresh compiler process).
// Every result is checked (code 2322 at 1:14, clean empty) or the run fails. Nothing fails on timing.
import { spawn } from "child_process"
import fs from "fs/promises"
import os from "os"
import path from "path"
import { pathToFileURL } from "url"
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node"
import type { Host } from "../../packages/core/host"
import { LspServers } from "../../packages/core/lsp/servers"
import { Lsp } from "../../packages/core/lsp/service"
import { LspTools } from "../../packages/core/lsp/tools"
import { THREE_FILES, tsc } from "../../packages/core/test/lsp/fixtures"
import { Logger } from "../../packages/core/util/log"

const WARM = Number(process.env.BENCH_ROUNDS ?? 20)
const COLD = Number(process.env.BENCH_COLD_ROUNDS ?? 5)
const log = Logger.silent
// Two TS2322s that alternate (a string where a number goes, a number where a string goes): the raw server's publishes
// carry no version, so consecutive ones must differ to tell a fresh result from a late one.
const BAD = (i: number) =>
  i % 2 ? `export const count${i}: string = 3\n` : `export const count${i}: number = 'three'\n`
const BAD_MESSAGE = (i: number) => (i % 2 ? "Type 'number' is not assignable" : "Type 'string' is not assignable")
const CLEAN = (i: number) => `export const ok${i} = ${i}\n`

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]
}
const ms = (n: number) => `${Math.round(n)} ms`
const stats = (xs: number[]) => `p50 ${ms(pct(xs, 50))}, p95 ${ms(pct(xs, 95))}, max ${ms(Math.max(...xs))}`
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`

async function project() {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "ocb-lsp-bench-")))
  const files = { ...THREE_FILES, "src/bad.ts": BAD(0), "src/clean.ts": CLEAN(0) }
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true })
    await fs.writeFile(path.join(dir, rel), content)
  }
  return dir
}

function context(directory: string) {
  return {
    sessionID: "bench",
    messageID: "m",
    agent: "build",
    directory,
    worktree: directory,
    abort: new AbortController().signal,
    metadata() {},
    async ask() {},
  } as any
}

function check(out: string, want: number | "clean", what: string) {
  const ok =
    want !== "clean"
      ? out.startsWith("status: ok") && out.includes(`error 1:14 TS2322 ${BAD_MESSAGE(want)}`)
      : out.startsWith("status: ok — no diagnostics")
  if (!ok) throw new Error(`${what}: unexpected result:\n${out}`)
}

/** The tool as OpenCode runs it. */
async function ours(dir: string, only: number) {
  const cold: { total: number; init: number }[] = []
  const warmEdit: number[] = []
  const warmSame: number[] = []
  const clean: number[] = []
  const firstOpen: number[] = []
  const bad = path.join(dir, "src/bad.ts")
  const cleanFile = path.join(dir, "src/clean.ts")
  for (let round = only; round <= only; round++) {
    await fs.writeFile(bad, BAD(0))
    const host: Host = { directory: dir, worktree: dir, log }
    const service = Lsp.create({ directory: dir, worktree: dir, log, config: true })
    const { lsp } = LspTools.create(host, () => service)
    const ctx = context(dir)
    const call = (file: string) => lsp.execute({ operation: "diagnostics", filePath: file }, ctx)
    try {
      const started = performance.now()
      const out = await call("src/bad.ts")
      const total = performance.now() - started
      check(out, 0, "cold")
      const [client] = await service.running()
      cold.push({ total, init: client.initMs })
      if (round < COLD - 1) continue
      // Warm figures on the last service.
      for (let i = 1; i <= WARM; i++) {
        await fs.writeFile(bad, BAD(i))
        let t = performance.now()
        check(await call("src/bad.ts"), i, `warm after edit ${i}`)
        warmEdit.push(performance.now() - t)
        t = performance.now()
        check(await call("src/bad.ts"), i, `warm unchanged ${i}`)
        warmSame.push(performance.now() - t)
        // Broken, then fixed: the timed call is the one that must come back empty.
        await fs.writeFile(cleanFile, BAD(0))
        check(await call("src/clean.ts"), 0, `clean broken ${i}`)
        await fs.writeFile(cleanFile, CLEAN(i))
        t = performance.now()
        check(await call("src/clean.ts"), "clean", `clean ${i}`)
        clean.push(performance.now() - t)
        // A file the server has not seen yet (the first call on it in the session, server initialised).
        await fs.writeFile(path.join(dir, `src/new${i}.ts`), BAD(i))
        t = performance.now()
        check(await call(`src/new${i}.ts`), i, `first call on new${i}.ts`)
        firstOpen.push(performance.now() - t)
      }
    } finally {
      await service.stop()
      for (let i = 1; i <= WARM; i++) await fs.rm(path.join(dir, `src/new${i}.ts`), { force: true })
    }
  }
  return { cold, warmEdit, warmSame, clean, firstOpen }
}

/** The same server through a minimal client: time to the first publish that has the answer. */
async function raw(dir: string, only: number) {
  const spec = LspServers.CATALOG.find((s) => s.id === "typescript")!
  const launch = spec.find(dir, { directory: dir, worktree: dir })
  if (!launch) throw new Error("typescript-language-server is not installed: run npm install")
  const cold: { total: number; init: number; firstPublish: number }[] = []
  const warm: number[] = []
  const clean: number[] = []
  const firstOpen: number[] = []
  const bad = path.join(dir, "src/bad.ts")
  const cleanFile = path.join(dir, "src/clean.ts")
  for (let round = only; round <= only; round++) {
    await fs.writeFile(bad, BAD(0))
    await fs.writeFile(cleanFile, CLEAN(0))
    const [bin, ...args] = launch.command
    const started = performance.now()
    const proc = spawn(bin, args, { cwd: dir, env: { ...process.env, ...launch.env }, detached: true, stdio: "pipe" })
    proc.stderr!.resume()
    const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!))
    const listeners = new Set<(p: any) => void>()
    conn.onNotification("textDocument/publishDiagnostics", (p: any) => listeners.forEach((l) => l(p)))
    conn.onRequest("workspace/configuration", (p: any) => (p.items ?? []).map(() => null))
    conn.onRequest("window/workDoneProgress/create", () => null)
    conn.onRequest("client/registerCapability", () => null)
    conn.listen()
    /** Resolves at the first publish for `uri` (with `version` when given) whose diagnostics satisfy `want`. */
    const publish = (uri: string, want: (items: any[]) => boolean, version?: number, first?: () => void) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no publish for ${uri} within 60 s`)), 60_000)
        const l = (p: any) => {
          if (p.uri !== uri) return
          if (version !== undefined && p.version !== undefined && p.version !== version) return
          first?.()
          first = undefined
          if (!want(p.diagnostics)) return
          clearTimeout(timer)
          listeners.delete(l)
          resolve()
        }
        listeners.add(l)
      })
    const has2322 = (i: number) => (items: any[]) =>
      items.some((d) => d.code === 2322 && String(d.message).startsWith(BAD_MESSAGE(i)))
    const empty = (items: any[]) => items.length === 0
    try {
      const root = pathToFileURL(dir).href
      await conn.sendRequest("initialize", {
        processId: process.pid,
        rootUri: root,
        workspaceFolders: [{ uri: root, name: "p" }],
        initializationOptions: launch.initialization ?? {},
        capabilities: { textDocument: { publishDiagnostics: { versionSupport: true } } },
      })
      const init = performance.now() - started
      await conn.sendNotification("initialized", {})
      const uri = pathToFileURL(bad).href
      let firstPublish = 0
      const opened = performance.now()
      const seen = publish(uri, has2322(0), 1, () => (firstPublish = performance.now() - opened))
      await conn.sendNotification("textDocument/didOpen", {
        textDocument: { uri, languageId: "typescript", version: 1, text: BAD(0) },
      })
      await seen
      cold.push({ total: performance.now() - started, init, firstPublish })
      if (round === COLD - 1) {
        const cleanUri = pathToFileURL(cleanFile).href
        await conn.sendNotification("textDocument/didOpen", {
          textDocument: { uri: cleanUri, languageId: "typescript", version: 1, text: CLEAN(0) },
        })
        let cleanVersion = 1
        for (let i = 1; i <= WARM; i++) {
          let t = performance.now()
          let next = publish(uri, has2322(i), i + 1)
          await conn.sendNotification("textDocument/didChange", {
            textDocument: { uri, version: i + 1 },
            contentChanges: [{ text: BAD(i) }],
          })
          await next
          warm.push(performance.now() - t)
          // Broken (awaited, untimed), then fixed: timed to the first empty publish.
          next = publish(cleanUri, has2322(0), ++cleanVersion)
          await conn.sendNotification("textDocument/didChange", {
            textDocument: { uri: cleanUri, version: cleanVersion },
            contentChanges: [{ text: BAD(0) }],
          })
          await next
          t = performance.now()
          next = publish(cleanUri, empty, ++cleanVersion)
          await conn.sendNotification("textDocument/didChange", {
            textDocument: { uri: cleanUri, version: cleanVersion },
            contentChanges: [{ text: CLEAN(i) }],
          })
          await next
          clean.push(performance.now() - t)
          const fresh = path.join(dir, `src/new${i}.ts`)
          await fs.writeFile(fresh, BAD(i))
          const freshUri = pathToFileURL(fresh).href
          t = performance.now()
          next = publish(freshUri, has2322(i), 1)
          await conn.sendNotification("textDocument/didOpen", {
            textDocument: { uri: freshUri, languageId: "typescript", version: 1, text: BAD(i) },
          })
          await next
          firstOpen.push(performance.now() - t)
        }
      }
      await Promise.race([conn.sendRequest("shutdown"), Bun.sleep(2000)])
      await conn.sendNotification("exit")
    } finally {
      conn.dispose()
      try {
        process.kill(-proc.pid!, "SIGKILL")
      } catch {}
      for (let i = 1; i <= WARM; i++) await fs.rm(path.join(dir, `src/new${i}.ts`), { force: true })
    }
  }
  return { cold, warm, clean, firstOpen }
}

const load = (await Bun.$`uptime`.text()).trim()
console.log(`machine: ${os.cpus().length} cores; ${load}`)
console.log(`rounds: ${COLD} cold, ${WARM} warm; typescript-language-server 6.0.2, TypeScript 5.9.3\n`)
const dir = await project()
try {
  const t0 = performance.now()
  const compiled = tsc(dir)
  const tscMs = performance.now() - t0
  if (compiled.code === 0 || !compiled.out.includes("TS2322"))
    throw new Error(`tsc baseline: expected TS2322:\n${compiled.out}`)

  // Cold rounds alternate which goes first, so a change in the machine's load does not fall on one side only.
  const os: Awaited<ReturnType<typeof ours>>[] = []
  const rs: Awaited<ReturnType<typeof raw>>[] = []
  for (let round = 0; round < COLD; round++) {
    if (round % 2) {
      rs.push(await raw(dir, round))
      os.push(await ours(dir, round))
    } else {
      os.push(await ours(dir, round))
      rs.push(await raw(dir, round))
    }
  }
  const merge = <T extends Record<string, unknown[]>>(xs: T[]) =>
    Object.fromEntries(Object.keys(xs[0]).map((k) => [k, xs.flatMap((x) => x[k])])) as T
  const o = merge(os)
  const r = merge(rs)
  const coldOver = o.cold.map((c) => c.total - c.init)
  console.log("cold (fresh server, first call on the TS2322 file):")
  for (let i = 0; i < o.cold.length; i++)
    console.log(
      `  round ${i + 1}: lsp tool ${ms(o.cold[i].total)} (initialize ${ms(o.cold[i].init)}, after it ${ms(coldOver[i])})` +
        ` | raw server ${ms(r.cold[i].total)} (initialize ${ms(r.cold[i].init)}, didOpen → first publish ` +
        `${ms(r.cold[i].firstPublish)}, → publish with 2322 ${ms(r.cold[i].total - r.cold[i].init)})`,
    )
  const oc = pct(
    o.cold.map((c) => c.total),
    50,
  )
  const rc = pct(
    r.cold.map((c) => c.total),
    50,
  )
  console.log(
    `  median: lsp tool ${ms(oc)} vs raw server ${ms(rc)} (${ratio(oc, rc)}); worst time after initialize ` +
      `${ms(Math.max(...coldOver))} (goal ≤ 1500 ms)`,
  )
  console.log(`warm, TS2322 file edited before each call (${WARM}):`)
  console.log(`  lsp tool   ${stats(o.warmEdit)} (goal p95 ≤ 3000 ms)`)
  console.log(`  raw server ${stats(r.warm)} (didChange → first publish of the new version with 2322)`)
  console.log(
    `  ratio p95 ${ratio(pct(o.warmEdit, 95), pct(r.warm, 95))}, p50 ${ratio(pct(o.warmEdit, 50), pct(r.warm, 50))}`,
  )
  console.log(`server initialised, first call on a file it has not seen (${WARM} files, each with a TS2322):`)
  console.log(`  lsp tool   ${stats(o.firstOpen)} (goal p95 ≤ 3000 ms)`)
  console.log(`  raw server ${stats(r.firstOpen)} (didOpen → first publish with 2322)`)
  console.log(`  ratio p95 ${ratio(pct(o.firstOpen, 95), pct(r.firstOpen, 95))}`)
  console.log(`warm, TS2322 file unchanged (${WARM}): lsp tool ${stats(o.warmSame)}`)
  console.log(`warm, clean file: an error fixed before each call (${WARM}):`)
  console.log(`  lsp tool   ${stats(o.clean)} (goal ≤ 1500 ms)`)
  console.log(`  raw server ${stats(r.clean)} (didChange fixing it → first empty publish)`)
  console.log(`  ratio p95 ${ratio(pct(o.clean, 95), pct(r.clean, 95))}`)
  console.log(
    `tsc --noEmit -p (fresh process, whole project): ${ms(tscMs)}; lsp tool warm p95 is ${ratio(pct(o.warmEdit, 95), tscMs)} of it`,
  )
  console.log(`\nmachine after: ${(await Bun.$`uptime`.text()).trim()}`)
} finally {
  await fs.rm(dir, { recursive: true, force: true })
}
