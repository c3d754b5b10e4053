// Session feature benchmarks (crash recovery, todo continuation). Every figure is printed next to a baseline measured
// in the same run, rounds alternating between the two so machine load hits both alike:
//  - heartbeat write (RecoveryStore.write: JSON of a heartbeat with 8 todos and a running call, temporary file renamed
//    to a new generation, the generation before the previous deleted) against a plain fs.writeFileSync of the same
//    bytes to one file (no atomicity) and against a temporary file renamed over the file (the classic atomic
//    replace); and the tool-call path of the crash-recovery hooks (tool.execute.before + after: two heartbeat writes)
//    — target: write p95 ≤ 2 ms;
//  - the startup scan (RecoveryHooks.report over 20 heartbeats: read, parse, judge against /proc, collect) against
//    reading the same files with readdir + readFileSync — the part of "reported within 1 s" the feature owns;
//  - the todo-continuation check per turn (experimental.text.complete on a 200-message history with open todos: the
//    full path, history read, derived, decided, continuation appended) against the history read alone (what any check
//    must pay; in the plugin it is OpenCode's in-process client) — target: check p95 ≤ 5 ms.
// Nothing here fails on timing; targets are printed next to the figures.
import fs from "fs"
import os from "os"
import path from "path"
import { ContinuationHooks } from "../../packages/core/continuation/hooks"
import { TodoContinuation } from "../../packages/core/continuation/schema"
import type { Host } from "../../packages/core/host"
import { RecoveryHooks } from "../../packages/core/recovery/hooks"
import { RecoveryLease } from "../../packages/core/recovery/lease"
import { SessionRecovery } from "../../packages/core/recovery/schema"
import { RecoveryStore } from "../../packages/core/recovery/store"
import type { HostSessions } from "../../packages/core/sessions"
import { Logger } from "../../packages/core/util/log"

const N = Number(process.env.SESSION_BENCH_N ?? 5_000)
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]
const ms = (x: number) => `${x.toFixed(3)} ms`
const row = (label: string, xs: number[]) =>
  `${label.padEnd(58)} p50 ${ms(pct(xs, 0.5))}  p95 ${ms(pct(xs, 0.95))}  p99 ${ms(pct(xs, 0.99))}`

const TODOS: SessionRecovery.Todo[] = Array.from({ length: 8 }, (_, i) => ({
  content: `Step ${i + 1}: implement and test part ${i + 1} of the parser, then document it`,
  status: i < 3 ? "completed" : i === 3 ? "in_progress" : "pending",
  priority: ["high", "medium", "low"][i % 3],
}))

function tmp(name: string) {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `ocb-bench-${name}-`)))
}

async function heartbeat() {
  const dir = tmp("session")
  const folder = RecoveryStore.folder(dir)
  const now = Date.now()
  const beat: SessionRecovery.Heartbeat = {
    version: 1,
    sessionID: "ses_benchmark0000000000001",
    directory: dir,
    workdir: dir,
    title: "Parser work",
    owner: RecoveryLease.self(),
    lease: { renewed: now, expires: now + 30_000 },
    busySince: now,
    todos: TODOS,
    running: [{ callID: "call_1", tool: "bash", title: "bun test packages/core --timeout 60000", started: now }],
  }
  const bytes = JSON.stringify(beat)
  const plain = path.join(dir, "plain.json")
  fs.mkdirSync(folder, { recursive: true })
  const atomic: number[] = []
  const baseline: number[] = []
  const floor: number[] = []
  for (let i = 0; i < 300; i++) {
    RecoveryStore.write(folder, beat)
    fs.writeFileSync(plain, bytes)
  }
  const load = os.loadavg()[0]
  for (let i = 0; i < N; i++) {
    beat.lease.renewed = Date.now()
    let t = performance.now()
    RecoveryStore.write(folder, beat)
    atomic.push(performance.now() - t)
    t = performance.now()
    fs.writeFileSync(plain, JSON.stringify(beat))
    baseline.push(performance.now() - t)
    // The classic atomic replace: the same bytes to a temporary file renamed over the old one (what RecoveryStore
    // did first; on ext4 a rename over an existing file flushes the new file's data before it returns).
    t = performance.now()
    fs.writeFileSync(`${plain}.tmp`, JSON.stringify(beat))
    fs.renameSync(`${plain}.tmp`, plain)
    floor.push(performance.now() - t)
  }
  console.log(
    `heartbeat: ${bytes.length} bytes, ${N} writes each, ${os.cpus().length} CPUs, load ${load.toFixed(2)} → ${os.loadavg()[0].toFixed(2)}`,
  )
  console.log(row("RecoveryStore.write (temp + rename to a new generation)", atomic))
  console.log(row("baseline: fs.writeFileSync of the same JSON", baseline))
  console.log(row("baseline: temp file + renameSync over the file", floor))
  console.log(
    `  write p95 ${ms(pct(atomic, 0.95))} — target ≤ 2 ms; over the plain write ${ms(pct(atomic, 0.95) - pct(baseline, 0.95))}, ` +
      `against the rename over the file ${ms(pct(atomic, 0.95) - pct(floor, 0.95))} (p95s)`,
  )

  // The tool-call path: the hooks' before and after around one call, each writing the heartbeat.
  const host: Host = { directory: dir, worktree: dir, log: Logger.silent }
  const recovery = RecoveryHooks.create({ host, settings: SessionRecovery.DEFAULTS, log: Logger.silent })
  const hooks = recovery.hooks as any
  await hooks.event({ event: { type: "todo.updated", properties: { sessionID: beat.sessionID, todos: TODOS } } })
  await hooks.event({
    event: { type: "session.status", properties: { sessionID: beat.sessionID, status: { type: "busy" } } },
  })
  const call: number[] = []
  for (let i = 0; i < N; i++) {
    const input = { tool: "bash", sessionID: beat.sessionID, callID: `call_${i}` }
    const t = performance.now()
    await hooks["tool.execute.before"](input, { args: { command: "bun test", description: "tests" } })
    await hooks["tool.execute.after"]({ ...input, args: {} }, { title: "", output: "ok", metadata: {} })
    call.push(performance.now() - t)
  }
  recovery.close()
  console.log(row("hooks per tool call (before + after: two writes)", call))

  // Startup scan over 20 heartbeats (half of them of dead owners).
  for (let i = 0; i < 20; i++)
    RecoveryStore.write(folder, {
      ...beat,
      sessionID: `ses_scan${i}`,
      owner: i % 2 ? beat.owner : { ...beat.owner, pid: 2 ** 22 + i },
    })
  const scan: number[] = []
  const read: number[] = []
  const reporter = RecoveryHooks.create({ host, settings: SessionRecovery.DEFAULTS, log: Logger.silent })
  for (let i = 0; i < 500; i++) {
    let t = performance.now()
    const found = reporter.report()
    scan.push(performance.now() - t)
    if (found.length !== 10) throw new Error(`expected 10 interrupted sessions, got ${found.length}`)
    t = performance.now()
    for (const name of fs.readdirSync(folder)) fs.readFileSync(path.join(folder, name), "utf8")
    read.push(performance.now() - t)
  }
  console.log(row("startup scan, 20 heartbeats (report)", scan))
  console.log(row("baseline: readdir + readFileSync of the same files", read))
  fs.rmSync(dir, { recursive: true, force: true })
}

async function continuation() {
  // A 200-message history: user / assistant pairs, the assistant messages with a tool part and text.
  const messages: any[] = []
  let id = 0
  const next = () => `msg_${String(++id).padStart(6, "0")}`
  for (let i = 0; i < 100; i++) {
    messages.push({
      info: { id: next(), role: "user", agent: "build", model: { providerID: "p", modelID: "m" } },
      parts: [{ type: "text", text: `Request ${i}: change the parser so that it handles case ${i}. `.repeat(4) }],
    })
    messages.push({
      info: { id: next(), role: "assistant", agent: "build", providerID: "p", modelID: "m", finish: "tool-calls" },
      parts: [
        { type: "step-start" },
        {
          type: "tool",
          tool: "read",
          state: { status: "completed", input: { filePath: "src/parser.ts" }, output: "x".repeat(2_000) },
        },
        { type: "text", text: `Done with case ${i}. `.repeat(10) },
      ],
    })
  }
  const last = {
    info: { id: next(), role: "assistant", agent: "build", providerID: "p", modelID: "m" },
    parts: [{ type: "step-start" }, { type: "text", text: "I made progress on the parser." }],
  }
  messages.push(last)
  let appended = 0
  const sessions: HostSessions = {
    get: async (sessionID) => ({ id: sessionID }),
    todos: async () => structuredClone(TODOS),
    agents: async () => [{ name: "build", permission: [{ permission: "*", pattern: "*", action: "allow" }] }],
    append: async () => `msg_c${++appended}`,
    updatePart: async () => {},
    archive: async () => {},
  }
  // The host returns a fresh copy of the history on every read, as OpenCode's client does (parsed JSON).
  const text = JSON.stringify(messages)
  const host: Host = {
    directory: "/r",
    worktree: "/r",
    log: Logger.silent,
    messages: async () => JSON.parse(text),
    sessions,
  }
  const { hooks, decisions } = ContinuationHooks.create({
    host,
    settings: TodoContinuation.DEFAULTS,
    log: Logger.silent,
  })
  const complete = (hooks as any)["experimental.text.complete"]
  const input = { sessionID: "ses_1", messageID: last.info.id, partID: "p" }
  const rounds = Math.max(500, Math.floor(N / 5))
  for (let i = 0; i < 50; i++) {
    await complete(input, { text: "I made progress on the parser." })
    await host.messages!("ses_1")
  }
  const check: number[] = []
  const baseline: number[] = []
  for (let i = 0; i < rounds; i++) {
    let t = performance.now()
    await complete(input, { text: "I made progress on the parser." })
    check.push(performance.now() - t)
    t = performance.now()
    await host.messages!("ses_1")
    baseline.push(performance.now() - t)
  }
  const decision = decisions.at(-1)?.decision
  if (!decision?.continue) throw new Error(`expected the full path (a continuation), got ${JSON.stringify(decision)}`)
  console.log(
    `todo continuation: ${messages.length} messages (${(text.length / 1024).toFixed(0)} KB), ${rounds} turns each`,
  )
  console.log(row("check per turn (text.complete, continuation sent)", check))
  console.log(row("baseline: the history read alone (JSON.parse)", baseline))
  console.log(
    `  check p95 ${ms(pct(check, 0.95))} — target ≤ 5 ms; over baseline p95 ${ms(pct(check, 0.95) - pct(baseline, 0.95))}`,
  )
}

await heartbeat()
await continuation()
