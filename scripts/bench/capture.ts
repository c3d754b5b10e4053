// Tool capture benchmark: what capture adds to one tool call, against a baseline measured in the same run.
//  - The composition root built twice over the same kind of project (a security policy with a protected folder and
//    a protected segment; every feature, as the plugin builds it): once with capture on, once with
//    `"capture": { "enabled": false }` (the same hook chain without capture). Each call runs tool.execute.before and
//    tool.execute.after with a read's output (8 KB of this repository's source, so the 2,000-character cut applies
//    and the store rotates during the run); calls alternate between the two so machine load hits both alike.
//    Reported: p50, p95, p99 per call for each, and the difference of the p95s (the target: capture adds ≤ 5 ms).
//  - Capture's own hooks alone (Capture.hooks over a real store, no other feature): the same call, p50/p95/p99, and
//    the failed-call path (a message.part.updated error event, whose error text and arguments capture redacts).
// Nothing here fails on timing; the target is printed next to the figures.
import fs from "fs"
import os from "os"
import path from "path"
import { Builtins } from "../../packages/core/builtins"
import { Capture } from "../../packages/core/capture/feature"
import { CaptureStore } from "../../packages/core/capture/store"
import { LocalState } from "../../packages/core/learning/local"
import { Logger } from "../../packages/core/util/log"

const ROOT = path.resolve(import.meta.dir, "../..")
const CALLS = Number(process.env.CAPTURE_BENCH_CALLS ?? 4_000)
const WARMUP = 300

const POLICY = {
  version: "1.0",
  roles: [{ name: "viewer", level: 10 }],
  rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"] }],
  segments: { markers: [{ start: "@secure-start", end: "@secure-end", deniedOperations: ["read", "llm"] }] },
}

function project(capture: boolean) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-bench-capture-")))
  fs.mkdirSync(path.join(dir, "secrets"), { recursive: true })
  fs.mkdirSync(path.join(dir, "src"), { recursive: true })
  fs.mkdirSync(path.join(dir, ".opencode"), { recursive: true })
  fs.writeFileSync(path.join(dir, ".opencode-security.json"), JSON.stringify(POLICY))
  fs.writeFileSync(path.join(dir, "secrets/api.key"), "API_KEY=Zx81Qp0vLk27mNb5Yt3RwE9u\nline two, long enough\n")
  fs.writeFileSync(
    path.join(dir, ".opencode/opencode-builtins.json"),
    JSON.stringify(capture ? {} : { capture: { enabled: false } }),
  )
  return dir
}

async function compose(dir: string, capture: boolean) {
  const options = JSON.parse(fs.readFileSync(path.join(dir, ".opencode/opencode-builtins.json"), "utf8"))
  const built = await Builtins.create(
    { directory: dir, worktree: dir, log: Logger.silent },
    { options, logger: () => Logger.silent },
  )
  if (built.built.includes("tool-capture") !== capture) throw new Error("capture switch not honoured")
  await built.exposed.ready?.()
  return built
}

const source = fs.readFileSync(path.join(ROOT, "packages/core/capture/store.ts"), "utf8")
const OUTPUT = Array.from({ length: Math.ceil(8192 / source.length) }, () => source)
  .join("\n")
  .slice(0, 8192)
  .split("\n")
  .map((line, i) => `${i + 1}: ${line}`)
  .join("\n")

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const ms = (x: number) => `${x.toFixed(3)} ms`
const row = (label: string, xs: number[]) =>
  console.log(`${label.padEnd(44)} p50 ${ms(pct(xs, 50))}  p95 ${ms(pct(xs, 95))}  p99 ${ms(pct(xs, 99))}`)

async function call(hooks: Record<string, any>, n: number) {
  const input = { tool: "read", sessionID: "ses_bench", callID: `call_${n}`, args: { filePath: "src/app.ts" } }
  const t = performance.now()
  await hooks["tool.execute.before"](input, { args: input.args })
  await hooks["tool.execute.after"](input, { title: "src/app.ts", output: OUTPUT, metadata: { truncated: false } })
  return performance.now() - t
}

const dirs = { on: project(true), off: project(false) }
try {
  const on = await compose(dirs.on, true)
  const off = await compose(dirs.off, false)
  const hooks = { on: on.hooks as Record<string, any>, off: off.hooks as Record<string, any> }
  for (let i = 0; i < WARMUP; i++) {
    await call(hooks.on, -i - 1)
    await call(hooks.off, -i - 1)
  }
  const with_: number[] = []
  const without: number[] = []
  for (let i = 0; i < CALLS; i++) {
    // Alternate which goes first, so neither always runs right after the other's garbage.
    if (i % 2) {
      with_.push(await call(hooks.on, i))
      without.push(await call(hooks.off, i))
    } else {
      without.push(await call(hooks.off, i))
      with_.push(await call(hooks.on, i))
    }
  }
  console.log(`${CALLS} read calls (8 KB output) through every feature, with a security policy, alternating:`)
  row("baseline: the same chain without capture", without)
  row("with capture", with_)
  const added = pct(with_, 95) - pct(without, 95)
  console.log(`capture adds at p95: ${ms(added)} (target ≤ 5 ms: ${added <= 5 ? "met" : "NOT met"})`)
  console.log(`  at p50: ${ms(pct(with_, 50) - pct(without, 50))}`)
  const store = CaptureStore.open(dirs.on)
  const files = fs.readdirSync(store.folder)
  const bytes = files.reduce((n, f) => n + fs.statSync(path.join(store.folder, f)).size, 0)
  console.log(
    `store after the run: ${store.all().length} records in ${files.length} files, ${(bytes / 1024).toFixed(0)} KB (cap ${CaptureStore.DEFAULTS.maxBytes / 1024} KB, ${CaptureStore.DEFAULTS.maxEntries} records)`,
  )
  on.exposed.guard?.close()
  off.exposed.guard?.close()

  // Capture's hooks alone, over a fresh store, with the redactor of the composition above (policy in force).
  const alone = project(true)
  try {
    const built = await compose(alone, true)
    // The guard's scan, as `LocalState.redactor` calls it for the feature.
    const guard = built.exposed.guard!
    const scan: LocalState.Redactor = (text) => guard.scanAndRedact(text, { scope: "llm", paths: "token" }).text
    const own = Capture.hooks({ store: CaptureStore.open(alone), redact: scan, log: Logger.silent })
    const success: number[] = []
    const failure: number[] = []
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const t = performance.now()
      await call(own, 100_000 + i)
      if (i >= WARMUP) success.push(performance.now() - t)
      const event = {
        event: {
          type: "message.part.updated",
          properties: {
            part: {
              type: "tool",
              tool: "read",
              callID: `call_err_${i}`,
              sessionID: "ses_bench",
              state: {
                status: "error",
                input: { filePath: "missing.txt" },
                error: `File not found: ${alone}/missing.txt`,
              },
            },
          },
        },
      }
      const e = performance.now()
      await own.event(event)
      if (i >= WARMUP) failure.push(performance.now() - e)
    }
    console.log(`capture's hooks alone (${CALLS} calls each):`)
    row("completed call (before + after, 8 KB output)", success)
    row("failed call (error event)", failure)
    built.exposed.guard?.close()
  } finally {
    fs.rmSync(alone, { recursive: true, force: true })
  }
} finally {
  for (const dir of Object.values(dirs)) fs.rmSync(dir, { recursive: true, force: true })
}
