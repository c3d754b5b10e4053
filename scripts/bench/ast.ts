// AST tools benchmarks, each against a baseline measured in the same run:
//  - ast_grep_search vs the ast-grep command-line tool from @ast-grep/cli (same 0.51.1 release as napi; `sg` is its
//    deprecated alias) on the same files and patterns, two ways:
//      * fresh process: `bun packages/core/ast/cli.ts` (starts, searches, prints the tool's text, exits) next to
//        `ast-grep run --json=stream` (its cheapest output that still yields every match): wall time and peak RSS;
//      * in-process: the tool call (AstSearch.run + AstFormat.search) inside this warm process, as OpenCode runs it,
//        against the same CLI figure;
//    on two corpora: every TypeScript source file under node_modules, and a real project given by BENCH_AST_CORPUS
//    (e.g. upstream OpenCode's packages/opencode), both copied into a temporary directory (no .gitignore, no
//    node_modules directory names) so both tools see exactly the same files. Match counts must agree or the run
//    says so.
//  - the comment checker's cost per typical edit (a 24-line window of a real or AI-slop corpus file, 8 of its lines
//    added by the edit) against the work OpenCode's edit tool itself does per edit: a unified diff of the same
//    strings (createTwoFilesPatch, as upstream's edit tool computes for its output); plus whole-file writes.
// Nothing fails on timing; the goals (search ≤ 1.0× the CLI's time and ≤ 2× its memory, comment check ≤ 1 ms per
// edit) are printed.
import fs from "fs/promises"
import { existsSync } from "fs"
import os from "os"
import path from "path"
import { createTwoFilesPatch } from "diff"
import { AstFormat } from "../../packages/core/ast/format"
import { AstSearch } from "../../packages/core/ast/search"
import { CommentCheck } from "../../packages/core/comment/check"
import { CommentHooks } from "../../packages/core/comment/hooks"
import { CommentCorpus } from "../../test/comment/corpus"

const ROOT = path.resolve(import.meta.dir, "../..")
const only = process.env.BENCH_ONLY?.split(",")
const want = (part: string) => !only || only.includes(part)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = (n: number) => `${n.toFixed(n < 10 ? 2 : 0)} ms`
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`

type Corpus = { name: string; dir: string; files: number; bytes: number }

/** Copies every `.ts` file under `source` into a new temporary directory (node_modules directories renamed). */
async function buildCorpus(name: string, source: string): Promise<Corpus> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "ocb-ast-corpus-"))
  let files = 0
  let bytes = 0
  for (const rel of await fs.readdir(source, { recursive: true })) {
    if (!rel.endsWith(".ts")) continue
    const parts = rel.split(path.sep)
    if (parts.includes(".git")) continue
    const full = path.join(source, rel)
    const stat = await fs.lstat(full).catch(() => undefined)
    if (!stat?.isFile() || stat.size > 5 * 1024 * 1024) continue
    // Renamed so that neither tool's default skip of node_modules directories applies.
    const target = path.join(dir, parts.map((p) => (p === "node_modules" ? "nm" : p)).join(path.sep))
    await fs.mkdir(path.dirname(target), { recursive: true })
    await fs.copyFile(full, target)
    files++
    bytes += stat.size
  }
  return { name, dir, files, bytes }
}

function cliBinary(): string {
  const bin = path.join(ROOT, "node_modules/@ast-grep/cli", process.platform === "win32" ? "ast-grep.exe" : "ast-grep")
  if (!existsSync(bin)) throw new Error(`${bin} missing: run npm install (@ast-grep/cli is a dev dependency)`)
  return bin
}

type Run = { ms: number; cpuMs: number; rssKb: number; matches: number }

// GNU time reports the peak RSS and CPU time of the command alone (a spawned child's own rusage would count the
// memory of this process it was forked from); without it those columns read 0.
const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined

async function timed(cmd: string[], cwd: string, count: (out: string) => number): Promise<Run> {
  const stats = path.join(os.tmpdir(), `ocb-ast-bench-${process.pid}.time`)
  const started = performance.now()
  const proc = Bun.spawn(TIME ? [TIME, "-o", stats, "-f", "%M %U %S", ...cmd] : cmd, {
    cwd,
    stdout: "pipe",
    stderr: "ignore",
  })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const elapsed = performance.now() - started
  const [rssKb = 0, user = 0, sys = 0] = TIME
    ? (await fs.readFile(stats, "utf8")).trim().split("\n").pop()!.split(" ").map(Number)
    : []
  return { ms: elapsed, cpuMs: (user + sys) * 1000, rssKb, matches: count(out) }
}

const cli = (dir: string, pattern: string) =>
  timed([cliBinary(), "run", "--pattern", pattern, "--lang", "ts", "--json=stream", "."], dir, (out) => {
    let n = 0
    for (let i = out.indexOf("\n"); i >= 0; i = out.indexOf("\n", i + 1)) n++
    return n
  })

// What ast_grep_search prints, from a process started for this one search.
const fresh = (dir: string, pattern: string) =>
  timed(
    [process.execPath, path.join(ROOT, "packages/core/ast/cli.ts"), "-p", pattern, "-l", "typescript", "."],
    dir,
    (out) => Number(/^Found (\d+) match/.exec(out)?.[1] ?? 0),
  )

// The tool call inside this (warm) process: what OpenCode runs (tools.ts), search and formatting.
async function inProcess(dir: string, pattern: string) {
  const started = performance.now()
  const result = await AstSearch.run(
    { directory: dir, lang: "typescript", pattern },
    { maxStoredMatches: AstFormat.LIMITS.matches },
  )
  await AstFormat.search(result, { directory: dir, context: 2 })
  return { ms: performance.now() - started, matches: result.totalMatches }
}

const ALL_PATTERNS = [
  "console.log($$$A)",
  "$A.$B($$$C)",
  "await $X",
  "function $F($$$P) { $$$B }",
  "import $X from $Y",
  "if ($C) { $$$ }",
  "JSON.parse($X)",
  "export interface $I { $$$ }",
]
// BENCH_PATTERNS=1 (or 0,1): only those patterns, by index.
const PATTERNS = process.env.BENCH_PATTERNS
  ? process.env.BENCH_PATTERNS.split(",").map((i) => ALL_PATTERNS[Number(i)])
  : ALL_PATTERNS

async function searchCorpus(corpus: Corpus) {
  console.log(
    `\n${corpus.name}: ${corpus.files} TypeScript files, ${(corpus.bytes / 1024 / 1024).toFixed(1)} MB; ` +
      `${ROUNDS} rounds, median; ${os.availableParallelism()} CPUs, load average ${os.loadavg()[0].toFixed(1)}`,
  )
  await cli(corpus.dir, PATTERNS[0])
  await fresh(corpus.dir, PATTERNS[0])
  await inProcess(corpus.dir, PATTERNS[0])
  console.log(
    "pattern".padEnd(28),
    "matches".padStart(7),
    "CLI".padStart(8),
    "fresh".padStart(8),
    "ratio".padStart(6),
    "in-proc".padStart(8),
    "ratio".padStart(6),
    "CLI RSS".padStart(8),
    "fresh RSS".padStart(9),
    "ratio".padStart(6),
    "CLI CPU".padStart(8),
    "fresh CPU".padStart(9),
    "ratio".padStart(6),
  )
  const ratios = { fresh: [] as number[], warm: [] as number[], rss: [] as number[], cpu: [] as number[] }
  for (const pattern of PATTERNS) {
    const runs = { cli: [] as Run[], fresh: [] as Run[], warm: [] as number[] }
    let warmMatches = 0
    for (let i = 0; i < ROUNDS; i++) {
      // Rotate the order so that no side always runs first (on a colder cache) or last.
      const steps = [
        async () => runs.cli.push(await cli(corpus.dir, pattern)),
        async () => runs.fresh.push(await fresh(corpus.dir, pattern)),
        async () => {
          const r = await inProcess(corpus.dir, pattern)
          runs.warm.push(r.ms)
          warmMatches = r.matches
        },
      ]
      for (let k = 0; k < steps.length; k++) await steps[(i + k) % steps.length]()
    }
    const base = median(runs.cli.map((r) => r.ms))
    const freshMs = median(runs.fresh.map((r) => r.ms))
    const warmMs = median(runs.warm)
    const baseRss = median(runs.cli.map((r) => r.rssKb))
    const freshRss = median(runs.fresh.map((r) => r.rssKb))
    const baseCpu = median(runs.cli.map((r) => r.cpuMs))
    const freshCpu = median(runs.fresh.map((r) => r.cpuMs))
    ratios.cpu.push(freshCpu / baseCpu)
    const counts = [runs.cli[0].matches, runs.fresh[0].matches, warmMatches]
    ratios.fresh.push(freshMs / base)
    ratios.warm.push(warmMs / base)
    ratios.rss.push(freshRss / baseRss)
    const agree = counts.every((c) => c === counts[0]) ? String(counts[0]) : `${counts.join("≠")}!`
    console.log(
      pattern.padEnd(28),
      agree.padStart(7),
      ms(base).padStart(8),
      ms(freshMs).padStart(8),
      `${(freshMs / base).toFixed(2)}×`.padStart(6),
      ms(warmMs).padStart(8),
      `${(warmMs / base).toFixed(2)}×`.padStart(6),
      mb(baseRss).padStart(8),
      mb(freshRss).padStart(9),
      `${(freshRss / baseRss).toFixed(1)}×`.padStart(6),
      ms(baseCpu).padStart(8),
      ms(freshCpu).padStart(9),
      `${(freshCpu / baseCpu).toFixed(2)}×`.padStart(6),
    )
  }
  const geo = (rs: number[]) => Math.exp(rs.reduce((s, r) => s + Math.log(r), 0) / rs.length).toFixed(2)
  const worst = (rs: number[]) => Math.max(...rs).toFixed(2)
  console.log(
    `time / CLI: fresh process geometric mean ${geo(ratios.fresh)}×, worst ${worst(ratios.fresh)}×; in-process ` +
      `${geo(ratios.warm)}×, worst ${worst(ratios.warm)}× (goal ≤ 1.00× on every pattern). Peak RSS / CLI: worst ` +
      `${worst(ratios.rss)}× (goal ≤ 2×). CPU time (user + system) / CLI, fresh process: geometric mean ` +
      `${geo(ratios.cpu)}×, worst ${worst(ratios.cpu)}× (what the wall times tend to on an idle machine)`,
  )
}

async function searchBench() {
  // BENCH_AST_NODE_MODULES=0 leaves the node_modules corpus out (e.g. to time only the real project).
  const corpora =
    process.env.BENCH_AST_NODE_MODULES === "0"
      ? []
      : [await buildCorpus("node_modules sources", path.join(ROOT, "node_modules"))]
  for (const source of process.env.BENCH_AST_CORPUS?.split(",").filter(Boolean) ?? []) {
    if (!existsSync(source)) console.log(`BENCH_AST_CORPUS: ${source} does not exist, skipped`)
    else corpora.push(await buildCorpus(source, source))
  }
  if (!process.env.BENCH_AST_CORPUS)
    console.log("(set BENCH_AST_CORPUS=/path/to/opencode/packages/opencode to add a real project's sources)")
  try {
    for (const corpus of corpora) await searchCorpus(corpus)
  } finally {
    for (const corpus of corpora) await fs.rm(corpus.dir, { recursive: true, force: true })
    await fs.rm(path.join(os.tmpdir(), `ocb-ast-bench-${process.pid}.time`), { force: true })
  }
}

function commentBench() {
  const samples = [...CommentCorpus.real(), ...CommentCorpus.slop()]
  const edits: { file: string; oldString: string; newString: string }[] = []
  for (const sample of samples) {
    const lines = sample.text.split("\n")
    for (let start = 0; start + 24 <= lines.length && edits.length < 2000; start += 97) {
      const window = lines.slice(start, start + 24)
      edits.push({
        file: sample.file,
        newString: window.join("\n"),
        oldString: window.filter((_, i) => i % 3).join("\n"),
      })
    }
  }
  const check = (e: (typeof edits)[number]) => {
    const docs = CommentHooks.documents(
      "edit",
      { filePath: e.file, oldString: e.oldString, newString: e.newString },
      undefined,
      "/",
    )
    return CommentCheck.note([CommentCheck.judge(docs, "normal")], "/")
  }
  const diff = (e: (typeof edits)[number]) => createTwoFilesPatch(e.file, e.file, e.oldString, e.newString)
  for (const e of edits.slice(0, 200)) (check(e), diff(e)) // warm-up
  const perEdit = (fn: (e: (typeof edits)[number]) => unknown) => {
    const rounds: number[] = []
    for (let r = 0; r < ROUNDS; r++) {
      const t = performance.now()
      for (const e of edits) fn(e)
      rounds.push((performance.now() - t) / edits.length)
    }
    return median(rounds)
  }
  const ours = perEdit(check)
  const base = perEdit(diff)
  const flagged = edits.filter((e) => check(e)).length
  console.log(
    `comment checker, typical edit (${edits.length} edits of 24 lines from ${samples.length} corpus files, ${flagged} flagged): ` +
      `${(ours * 1000).toFixed(1)} µs per edit (goal ≤ 1000 µs); the edit tool's own diff of the same strings: ` +
      `${(base * 1000).toFixed(1)} µs; ratio ${(ours / base).toFixed(2)}×`,
  )
  const whole = samples.filter((s) => s.text.split("\n").length >= 400).slice(0, 20)
  const t = performance.now()
  for (let r = 0; r < ROUNDS; r++)
    for (const s of whole)
      CommentCheck.judge(CommentHooks.documents("write", { filePath: s.file, content: s.text }, "", "/"), "normal")
  const lines = whole.reduce((n, s) => n + s.text.split("\n").length, 0) / Math.max(1, whole.length)
  console.log(
    `comment checker, whole-file write of a new file (${whole.length} files, ${Math.round(lines)} lines on average): ` +
      `${((performance.now() - t) / ROUNDS / Math.max(1, whole.length)).toFixed(2)} ms per write`,
  )
}

if (want("search")) await searchBench()
if (want("comment")) commentBench()
