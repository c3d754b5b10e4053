// AST tools benchmarks, each against a baseline measured in the same run:
//  - ast_grep_search's engine (in-process @ast-grep/napi, AstSearch.run) vs the ast-grep command-line tool from
//    @ast-grep/cli (same 0.51.1 release; `sg` is its deprecated alias) on the same corpus, same patterns: every
//    TypeScript source file under node_modules copied into a temporary directory (no .gitignore, no node_modules
//    directory names, so both tools see exactly the same files). Match counts must agree or the run says so.
//  - the full tool call (search + formatting of the capped result) for the same patterns;
//  - the comment checker's cost per typical edit (a 24-line window of a real or AI-slop corpus file, 8 of its lines
//    added by the edit) against the work OpenCode's edit tool itself does per edit: a unified diff of the same
//    strings (createTwoFilesPatch, as upstream's edit tool computes for its output); plus whole-file writes.
// Nothing fails on timing; the goals (search ≤ 1.0× the CLI, comment check ≤ 1 ms per edit) are printed.
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

async function buildCorpus(): Promise<{ dir: string; files: number; bytes: number }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "ocb-ast-corpus-"))
  let files = 0
  let bytes = 0
  const source = path.join(ROOT, "node_modules")
  for (const rel of await fs.readdir(source, { recursive: true })) {
    if (!rel.endsWith(".ts")) continue
    const full = path.join(source, rel)
    const stat = await fs.lstat(full).catch(() => undefined)
    if (!stat?.isFile()) continue
    // Renamed so that neither tool's default skip of node_modules directories applies.
    const target = path.join(
      dir,
      rel
        .split(path.sep)
        .map((p) => (p === "node_modules" ? "nm" : p))
        .join(path.sep),
    )
    await fs.mkdir(path.dirname(target), { recursive: true })
    await fs.copyFile(full, target)
    files++
    bytes += stat.size
  }
  return { dir, files, bytes }
}

function cliBinary(): string {
  const bin = path.join(ROOT, "node_modules/@ast-grep/cli", process.platform === "win32" ? "ast-grep.exe" : "ast-grep")
  if (!existsSync(bin)) throw new Error(`${bin} missing: run npm install (@ast-grep/cli is a dev dependency)`)
  return bin
}

async function cli(dir: string, pattern: string): Promise<{ ms: number; matches: number }> {
  const started = performance.now()
  const proc = Bun.spawn([cliBinary(), "run", "--pattern", pattern, "--lang", "ts", "--json=stream", dir], {
    stdout: "pipe",
    stderr: "ignore",
  })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  return { ms: performance.now() - started, matches: out.split("\n").filter((l) => l.trim()).length }
}

// What ast_grep_search runs (tools.ts): every match counted, positions kept for the matches its output can show.
const SEARCH_OPTIONS: AstSearch.Options = { maxStoredMatches: AstFormat.LIMITS.matches }

async function inProcess(dir: string, pattern: string) {
  const started = performance.now()
  const result = await AstSearch.run({ directory: dir, lang: "typescript", pattern }, SEARCH_OPTIONS)
  return { ms: performance.now() - started, matches: result.totalMatches, result }
}

async function tool(dir: string, pattern: string) {
  const started = performance.now()
  const result = await AstSearch.run({ directory: dir, lang: "typescript", pattern }, SEARCH_OPTIONS)
  const text = await AstFormat.search(result, { directory: dir, context: 2 })
  return { ms: performance.now() - started, bytes: text.length }
}

const ALL_PATTERNS = [
  "console.log($$$ARGS)",
  "JSON.parse($X)",
  "export interface $I { $$$ }",
  "import $X from '$M'",
  "function $F($$$P) { $$$B }",
  "$A.$B($$$C)",
]
// BENCH_PATTERNS=5 (or 0,5): only those patterns, by index.
const PATTERNS = process.env.BENCH_PATTERNS
  ? process.env.BENCH_PATTERNS.split(",").map((i) => ALL_PATTERNS[Number(i)])
  : ALL_PATTERNS

async function searchBench() {
  const corpus = await buildCorpus()
  try {
    console.log(
      `corpus: ${corpus.files} TypeScript files, ${(corpus.bytes / 1024 / 1024).toFixed(1)} MB (node_modules sources), ` +
        `${ROUNDS} rounds, median; ${os.cpus().length} CPUs`,
    )
    await cli(corpus.dir, PATTERNS[0])
    await inProcess(corpus.dir, PATTERNS[0])
    console.log(
      "pattern".padEnd(30),
      "matches".padStart(8),
      "CLI".padStart(9),
      "in-process".padStart(11),
      "ratio".padStart(7),
      "tool call".padStart(10),
      "ratio".padStart(7),
    )
    const ratios: number[] = []
    const callRatios: number[] = []
    for (const pattern of PATTERNS) {
      const base: number[] = []
      const ours: number[] = []
      const calls: number[] = []
      let counts = { cli: 0, ours: 0 }
      for (let i = 0; i < ROUNDS; i++) {
        // Alternate the order so neither side always runs on a warmer cache.
        const first = i % 2 === 0
        const a = first ? await cli(corpus.dir, pattern) : undefined
        const b = await inProcess(corpus.dir, pattern)
        const c = first ? undefined : await cli(corpus.dir, pattern)
        const baseline = (a ?? c)!
        base.push(baseline.ms)
        ours.push(b.ms)
        counts = { cli: baseline.matches, ours: b.matches }
        calls.push((await tool(corpus.dir, pattern)).ms)
      }
      const ratio = median(ours) / median(base)
      ratios.push(ratio)
      const callRatio = median(calls) / median(base)
      callRatios.push(callRatio)
      const agree = counts.cli === counts.ours ? String(counts.ours) : `${counts.ours}≠${counts.cli}!`
      console.log(
        pattern.padEnd(30),
        agree.padStart(8),
        ms(median(base)).padStart(9),
        ms(median(ours)).padStart(11),
        `${ratio.toFixed(2)}×`.padStart(7),
        ms(median(calls)).padStart(10),
        `${callRatio.toFixed(2)}×`.padStart(7),
      )
    }
    const geo = (rs: number[]) => Math.exp(rs.reduce((s, r) => s + Math.log(r), 0) / rs.length).toFixed(2)
    console.log(
      `geometric mean ratio in-process / CLI: ${geo(ratios)}×, tool call / CLI: ${geo(callRatios)}× (goal ≤ 1.00×); ` +
        `worst in-process / CLI: ${Math.max(...ratios).toFixed(2)}×`,
    )
  } finally {
    await fs.rm(corpus.dir, { recursive: true, force: true })
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
