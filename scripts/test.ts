/**
 * The suite's runner (`npm test` after the type check): every test file in its own `bun test` process, several at a
 * time, longest first, each with a time limit, and a summary naming every failed file at the end of the output.
 *
 * Why not one `bun test` over the folders: on a 2-core machine the suite's end-to-end half waits on OpenCode about as
 * much as it computes, so two files at a time nearly halve the wall time; one process per file keeps one file's
 * leftovers (a child, a timer, a poisoned event loop) out of the next file; a hung file costs its own limit, not the
 * whole run's.
 *
 * @example
 * bun scripts/test.ts                         # ./packages and ./test, jobs = cores, each e2e block on one binary
 * bun scripts/test.ts --full test/e2e         # every end-to-end scenario on all three stock binaries
 * bun scripts/test.ts --jobs 1 packages/core/test/security
 */
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { Harness } from "../test/e2e/harness"
import { rotation } from "../test/e2e/targets"

const ROOT = path.resolve(import.meta.dir, "..")
const DURATIONS = path.join(ROOT, "test/durations.json")
const TEST_FILE = /(\.test|_test|\.spec|_spec)\.(ts|tsx|js|jsx|mts|cts|mjs|cjs)$/

const USAGE = `usage: bun scripts/test.ts [--jobs N] [--full] [--file-timeout SECONDS] [--record] [--help] [path ...]

  path              test files or folders (default: ./packages ./test)
  --jobs N          files run at once (default: TEST_JOBS, else the number of cores)
  --full            end-to-end scenarios on all three stock binaries (E2E_TARGETS=all); by default each block of
                    them runs on one, turning with E2E_ROTATION, else the day (test/e2e/targets.ts)
  --file-timeout S  a file still running after S seconds is killed and counted as failed (default 1800)
  --record          write each file's wall time to test/durations.json (the order of later runs)`

type Options = {
  jobs: number
  full: boolean
  rotation: number
  fileTimeout: number
  record: boolean
  paths: string[]
}

/** Parses the command line; a bad one is an `Error` whose message names the problem (usage follows it). */
export function parseArgs(argv: string[], env: Record<string, string | undefined> = process.env): Options {
  const options: Options = {
    jobs: Number(env.TEST_JOBS) || os.availableParallelism(),
    full: env.E2E_TARGETS === "all",
    rotation: rotation(env),
    fileTimeout: 1800,
    record: false,
    paths: [],
  }
  const positive = (flag: string, value: string | undefined) => {
    const n = Number(value)
    if (!value || !Number.isInteger(n) || n < 1) throw new Error(`${flag} needs a whole number of at least 1`)
    return n
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === "--jobs") options.jobs = positive(arg, argv[++i])
    else if (arg === "--file-timeout") options.fileTimeout = positive(arg, argv[++i])
    else if (arg === "--full") options.full = true
    else if (arg === "--record") options.record = true
    else if (arg.startsWith("-")) throw new Error(`unknown option ${arg}`)
    else options.paths.push(arg)
  }
  if (options.paths.length === 0) options.paths = ["./packages", "./test"]
  return options
}

/** Every test file under the paths (a file named directly is taken as is), relative to the repository, sorted. */
export function collect(paths: string[], root = ROOT): string[] {
  const found = new Set<string>()
  for (const given of paths) {
    const full = path.resolve(root, given)
    if (!fs.existsSync(full)) throw new Error(`${given} does not exist`)
    if (fs.statSync(full).isFile()) {
      found.add(path.relative(root, full))
      continue
    }
    for (const rel of fs.readdirSync(full, { recursive: true, encoding: "utf8" })) {
      if (rel.split(path.sep).includes("node_modules") || !TEST_FILE.test(rel)) continue
      found.add(path.relative(root, path.join(full, rel)))
    }
  }
  if (found.size === 0) throw new Error(`no test files under ${paths.join(", ")}`)
  return [...found].sort()
}

/**
 * Longest first by the recorded wall times, so the last file to finish is a short one; a file with no record goes
 * first (it may be long), end-to-end files before unit files among those.
 */
export function order(files: string[], durations: Record<string, number>): string[] {
  const weight = (file: string) => durations[file] ?? (file.startsWith("test/e2e/") ? 1e9 : 1e8)
  return [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))
}

export type Counts = { pass: number; fail: number; skip: number; todo: number }

/** The totals `bun test` prints at its end (` 12 pass`, ` 1 fail`…); zeros for what it did not print. */
export function counts(output: string): Counts {
  const result: Counts = { pass: 0, fail: 0, skip: 0, todo: 0 }
  for (const match of output.matchAll(/^\s*(\d+) (pass|fail|skip|todo)\s*$/gm))
    result[match[2] as keyof Counts] = Number(match[1])
  return result
}

type Outcome = { file: string; code: number | null; timedOut: boolean; seconds: number; output: string; counts: Counts }

const running = new Set<Bun.Subprocess>()

async function runFile(file: string, options: Options): Promise<Outcome> {
  const started = performance.now()
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "30000", `./${file}`], {
    cwd: ROOT,
    env: { ...process.env, E2E_TARGETS: options.full ? "all" : "rotate", E2E_ROTATION: String(options.rotation) },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    // Its own process group: a file killed at its limit takes the OpenCode, shells and servers it started with it.
    detached: true,
  })
  running.add(proc)
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    Harness.stopGroup(proc)
  }, options.fileTimeout * 1000)
  // Once the file's process is gone, what it left in its group goes too, so the pipes end.
  const exited = proc.exited.finally(() => Harness.stopGroup(proc))
  const [stdout, stderr, code] = await Promise.all([
    Harness.drain(proc.stdout, exited),
    Harness.drain(proc.stderr, exited),
    exited,
  ])
  clearTimeout(timer)
  running.delete(proc)
  const output = stdout + stderr
  return {
    file,
    code,
    timedOut,
    seconds: (performance.now() - started) / 1000,
    output: timedOut ? `${output}\n[test runner] killed after ${options.fileTimeout} s\n` : output,
    counts: counts(output),
  }
}

function failed(outcome: Outcome) {
  return outcome.timedOut || outcome.code !== 0 || outcome.counts.fail > 0
}

async function main() {
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    console.log(USAGE)
    return
  }
  let options: Options
  let files: string[]
  try {
    options = parseArgs(process.argv.slice(2))
    files = collect(options.paths)
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
  const durations: Record<string, number> = fs.existsSync(DURATIONS)
    ? JSON.parse(fs.readFileSync(DURATIONS, "utf8"))
    : {}
  const queue = order(files, durations)
  const jobs = Math.min(options.jobs, queue.length)
  const targets = options.full
    ? "all three binaries"
    : `one binary per block, rotation ${options.rotation} (E2E_ROTATION=${options.rotation} repeats it)`
  console.log(`${queue.length} test files, ${jobs} at a time, end-to-end scenarios on ${targets}`)
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      for (const proc of running) Harness.stopGroup(proc)
      process.exit(130)
    })

  const started = performance.now()
  const outcomes: Outcome[] = []
  const worker = async () => {
    while (queue.length > 0) {
      const outcome = await runFile(queue.shift()!, options)
      outcomes.push(outcome)
      const c = outcome.counts
      const status = outcome.timedOut ? "TIMEOUT" : failed(outcome) ? "FAIL" : "ok"
      console.log(
        `[${outcomes.length}/${files.length}] ${status.padEnd(7)} ${outcome.seconds.toFixed(1).padStart(6)} s  ${outcome.file}  (${c.pass} pass${c.fail ? `, ${c.fail} fail` : ""}${c.skip ? `, ${c.skip} skip` : ""})`,
      )
      if (failed(outcome))
        console.log(`\n----- ${outcome.file} -----\n${outcome.output.trimEnd()}\n----- end of ${outcome.file} -----\n`)
    }
  }
  await Promise.all(Array.from({ length: jobs }, worker))

  if (options.record) {
    const next = { ...durations }
    for (const o of outcomes) next[o.file] = Math.round(o.seconds * 10) / 10
    const sorted = Object.fromEntries(Object.entries(next).sort(([a], [b]) => a.localeCompare(b)))
    fs.writeFileSync(DURATIONS, JSON.stringify(sorted, null, 2) + "\n")
  }
  const total = outcomes.reduce(
    (sum, o) => ({
      pass: sum.pass + o.counts.pass,
      fail: sum.fail + o.counts.fail,
      skip: sum.skip + o.counts.skip,
      todo: sum.todo + o.counts.todo,
    }),
    { pass: 0, fail: 0, skip: 0, todo: 0 },
  )
  const bad = outcomes.filter(failed).sort((a, b) => a.file.localeCompare(b.file))
  const minutes = ((performance.now() - started) / 60_000).toFixed(1)
  console.log(
    `\n${total.pass} pass, ${total.fail} fail, ${total.skip} skip, ${total.todo} todo in ${files.length} files, ${minutes} min, ${jobs} at a time, end-to-end scenarios on ${targets}`,
  )
  if (bad.length === 0) return
  console.log(`${bad.length} failed file(s) (their output is above):`)
  for (const o of bad)
    console.log(
      `  ${o.file}: ${o.timedOut ? `killed after ${options.fileTimeout} s` : `${o.counts.fail} fail, exit ${o.code}`}`,
    )
  // The failing tests' names, last, where a log's tail shows them.
  // (bun prints each failure twice: where it happened and in its own summary.)
  const names = new Set(bad.flatMap((o) => o.output.split("\n").filter((line) => line.startsWith("(fail)"))))
  for (const line of names) console.log(`  ${line}`)
  process.exit(1)
}

if (import.meta.main) await main()
