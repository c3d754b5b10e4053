// Plugin audit benchmark (`bun run bench audit`): `PluginAudit.run(dir, { includeDependencies: true })` in a fresh
// process, against a baseline measured in the same run on the same files: a plain @ast-grep/napi parse of every file
// the audit covers, one at a time (each tree dropped before the next), in its own fresh process. CPU time (user+sys)
// and peak RSS come from GNU time (/usr/bin/time; without it those columns read 0). Printed: both figures, the
// audit/parse ratios, the findings per severity, and the goals of the audit issue (≤ 300 MB, ≤ 10 s) as met or not.
//
// Target:
//  - BENCH_AUDIT_PLUGIN=<installed plugin folder>: a real plugin with its dependencies installed beside it, e.g.
//        mkdir -p /tmp/omo && cd /tmp/omo && npm init -y >/dev/null && npm install --ignore-scripts oh-my-opencode@4.19.4
//        BENCH_AUDIT_PLUGIN=/tmp/omo/node_modules/oh-my-opencode bun run bench audit
//    (the figures in docs/audit.md; needs the network once, to install; never here);
//  - otherwise a generated corpus (no network, CI): a plugin with hoisted dependencies, ES modules and CommonJS,
//    namespace imports across modules, dangerous calls, copies of the same file and one bundle-sized file.
// BENCH_AUDIT_BASE=<checkout of an older commit> (e.g. `git worktree add --detach /tmp/auditbase <commit>`, with
// node_modules linked in) also runs that checkout's audit on the same target and says whether the findings match.
// Nothing fails on timing.
import fs from "fs/promises"
import { existsSync } from "fs"
import os from "os"
import path from "path"

const ROOT = path.resolve(import.meta.dir, "../..")
const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined
const GOAL = { rssMb: 300, cpuS: 10 }

type Run = { wallS: number; cpuS: number; rssMb: number; out: string }

async function timed(cmd: string[]): Promise<Run> {
  const stats = path.join(os.tmpdir(), `ocb-audit-bench-${process.pid}.time`)
  const started = performance.now()
  const proc = Bun.spawn(TIME ? [TIME, "-o", stats, "-f", "%M %U %S", ...cmd] : cmd, {
    stdout: "pipe",
    stderr: "inherit",
  })
  const out = await new Response(proc.stdout).text()
  const code = await proc.exited
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited with ${code}`)
  const wallS = (performance.now() - started) / 1000
  const [rssKb = 0, user = 0, sys = 0] = TIME
    ? (await fs.readFile(stats, "utf8")).trim().split("\n").pop()!.split(" ").map(Number)
    : []
  return { wallS, cpuS: user + sys, rssMb: rssKb / 1024, out }
}

// ---- child processes ----

/** `--audit <repo> <dir> <out.json>`: the audit of that checkout; prints files and counts, writes the report. */
async function childAudit(repo: string, dir: string, out: string) {
  const { PluginAudit } = await import(path.join(repo, "packages/core/audit/audit.ts"))
  const report = await PluginAudit.run(dir, { includeDependencies: true })
  await fs.writeFile(out, JSON.stringify(report))
  console.log(JSON.stringify({ files: report.filesScanned, counts: report.counts, skipped: report.skipped.length }))
}

/** `--parse <list.json>`: the baseline, a plain parse of each file in turn. */
async function childParse(list: string) {
  const { parse } = await import("@ast-grep/napi")
  const { PluginAnalysis } = await import("../../packages/core/audit/analyze")
  const files: string[] = JSON.parse(await fs.readFile(list, "utf8"))
  let nodes = 0
  let unfreed = 0
  for (const file of files) {
    const source = await fs.readFile(file, "utf8")
    // Trees are native memory freed once their wrappers are collected (finalizers run on the next turn, the next
    // collection reclaims): collected before a file would bring the trees alive past 4 MB of source, as the audit.
    if (unfreed && unfreed + source.length > 4 * 1024 * 1024) {
      for (let i = 0; i < 2; i++) {
        Bun.gc(true)
        await new Promise((resolve) => setImmediate(resolve))
      }
      unfreed = 0
    }
    let root: ReturnType<typeof parse> | undefined = parse(PluginAnalysis.languageOf(file) as any, source)
    nodes += root.root().children().length
    root = undefined
    unfreed += source.length
  }
  console.log(JSON.stringify({ files: files.length, nodes }))
}

// ---- the files an audit covers (its walk: plugin folder, then each dependency folder it reports) ----

async function codeFiles(folder: string, out: string[]) {
  const { PluginAnalysis } = await import("../../packages/core/audit/analyze")
  const entries = await fs.readdir(folder, { withFileTypes: true }).catch(() => [])
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(folder, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== ".git" && entry.name !== "node_modules") await codeFiles(full, out)
    } else if (entry.isFile() && PluginAnalysis.languageOf(entry.name)) out.push(full)
  }
}

async function coveredFiles(dir: string, report: { dependencies?: { path: string }[] }): Promise<string[]> {
  const root = await fs.realpath(dir)
  const files: string[] = []
  await codeFiles(root, files)
  for (const dep of report.dependencies ?? []) await codeFiles(path.resolve(root, dep.path), files)
  return [...new Set(files)]
}

// ---- generated corpus ----

function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

/** A plugin under `<tmp>/node_modules/plugin` with `deps` hoisted packages beside it; deterministic. */
async function generated(deps = 40, filesPerPackage = 30): Promise<string> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), "ocb-audit-corpus-"))
  const random = rng(7)
  const write = async (rel: string, text: string) => {
    const full = path.join(base, "node_modules", rel)
    await fs.mkdir(path.dirname(full), { recursive: true })
    await fs.writeFile(full, text)
  }
  const body = (pkg: string, i: number) => {
    const lines = [
      `import * as util from "./m${(i + 1) % filesPerPackage}.js"`,
      `import { helper${i % 5} } from "./shared.js"`,
      `export const name${i} = "${pkg}-${i}"`,
    ]
    for (let f = 0; f < 25; f++) {
      const r = random()
      if (r < 0.05) lines.push(`export function read${f}(p) { return require("fs").readFileSync(p, "utf8") }`)
      else if (r < 0.08) lines.push(`export const token${f} = process.env.TOKEN_${f}`)
      else if (r < 0.1) lines.push(`export async function get${f}(u) { return fetch(u) }`)
      else if (r < 0.11) lines.push(`const k${f} = "ev" + "al"; export const run${f} = (s) => globalThis[k${f}](s)`)
      else
        lines.push(
          `export function f${f}(a, b) {`,
          `  const list = [a, b].map((x) => x * ${f} + util.name${(i + 1) % filesPerPackage}.length)`,
          `  return helper${i % 5}(list.filter(Boolean).join(","), { depth: ${f}, label: "item-${f}" })`,
          `}`,
        )
    }
    return lines.join("\n") + "\n"
  }
  const shared = Array.from({ length: 5 }, (_, h) => `export function helper${h}(s, o) { return s + o.label }`)
  const names = Array.from({ length: deps }, (_, d) => `dep${d}`)
  await write(
    "plugin/package.json",
    JSON.stringify({
      name: "plugin",
      version: "1.0.0",
      main: "index.js",
      dependencies: Object.fromEntries(names.map((n) => [n, "1.0.0"])),
    }),
  )
  await write("plugin/index.js", names.map((n, d) => `import * as d${d} from "${n}"\nd${d}.f1(1, 2)`).join("\n") + "\n")
  // A bundle-sized file: what sets the memory floor of a real plugin.
  // Its modules are wrapped in functions, as bundlers do (imports become requires, exports locals).
  const wrapped = (i: number) =>
    `var mod${i} = (() => {\n` +
    body("bundle", i % filesPerPackage)
      .replace(/^import \* as (\w+) from ("[^"]+")/m, "const $1 = __require($2)")
      .replace(/^import \{ (\w+) \} from ("[^"]+")/m, "const { $1 } = __require($2)")
      .replace(/^export /gm, "") +
    `return { name: "mod${i}" }\n})()\n`
  await write(
    "plugin/dist/bundle.js",
    "var __require = (id) => require(id)\n" + Array.from({ length: 1200 }, (_, i) => wrapped(i)).join(""),
  )
  for (const [d, name] of names.entries()) {
    await write(`${name}/package.json`, JSON.stringify({ name, version: "1.0.0", main: "index.js" }))
    await write(`${name}/shared.js`, shared.join("\n") + "\n")
    await write(`${name}/index.js`, `export * from "./m0.js"\nexport * as more from "./m1.js"\n`)
    for (let i = 0; i < filesPerPackage; i++) {
      const text = body(name, i)
      await write(`${name}/m${i}.js`, text)
      // Copies of the same file, as packages ship them (esm/ and cjs/ builds, vendored copies).
      if (d % 4 === 0 && i < 5) await write(`${name}/copy/m${i}.js`, text)
    }
  }
  return path.join(base, "node_modules", "plugin")
}

// ---- main ----

async function main() {
  const [mode, ...args] = process.argv.slice(2)
  if (mode === "--audit") return childAudit(args[0], args[1], args[2])
  if (mode === "--parse") return childParse(args[0])

  const real = process.env.BENCH_AUDIT_PLUGIN
  const dir = real ? path.resolve(real) : await generated()
  if (real && !existsSync(path.join(dir, "package.json")))
    throw new Error(`BENCH_AUDIT_PLUGIN=${real}: not an installed plugin folder (no package.json)`)
  const work = await fs.mkdtemp(path.join(os.tmpdir(), "ocb-audit-bench-"))
  try {
    console.log(
      `target: ${real ? dir : "generated corpus (set BENCH_AUDIT_PLUGIN for a real plugin)"}; ` +
        `${os.availableParallelism()} CPUs, load average ${os.loadavg()[0].toFixed(1)}`,
    )
    const self = path.join(import.meta.dir, "audit.ts")
    const audit = await timed([process.execPath, self, "--audit", ROOT, dir, path.join(work, "now.json")])
    const report = JSON.parse(await fs.readFile(path.join(work, "now.json"), "utf8"))
    const files = await coveredFiles(dir, report)
    const bytes = (await Promise.all(files.map((f) => fs.stat(f).then((s) => s.size)))).reduce((a, b) => a + b, 0)
    await fs.writeFile(path.join(work, "files.json"), JSON.stringify(files))
    const parse = await timed([process.execPath, self, "--parse", path.join(work, "files.json")])
    const largest = files.reduce((a, f) => Math.max(a, Bun.file(f).size), 0)

    const row = (name: string, r: Run) =>
      console.log(
        name.padEnd(34),
        `${r.cpuS.toFixed(1)} s`.padStart(8),
        `${r.wallS.toFixed(1)} s`.padStart(8),
        `${r.rssMb.toFixed(0)} MB`.padStart(8),
      )
    console.log(
      `\n${report.filesScanned} files audited (${files.length} code files, ${(bytes / 1024 / 1024).toFixed(1)} MB; ` +
        `largest ${(largest / 1024 / 1024).toFixed(1)} MB), ${report.dependencies?.length ?? 0} dependencies; ` +
        `findings: ${Object.entries(report.counts)
          .map(([s, n]) => `${s} ${n}`)
          .join(" · ")}`,
    )
    console.log("".padEnd(34), "CPU".padStart(8), "wall".padStart(8), "peak RSS".padStart(8))
    row("plain napi parse (baseline)", parse)
    row("audit --include-dependencies", audit)
    let base: Run | undefined
    if (process.env.BENCH_AUDIT_BASE) {
      const repo = path.resolve(process.env.BENCH_AUDIT_BASE)
      base = await timed([process.execPath, self, "--audit", repo, dir, path.join(work, "base.json")])
      row(`audit at ${path.basename(repo)} (before)`, base)
      const old = JSON.parse(await fs.readFile(path.join(work, "base.json"), "utf8"))
      const same = JSON.stringify(old.findings) === JSON.stringify(report.findings)
      console.log(
        `findings before/now: ${old.findings.length}/${report.findings.length}, ${same ? "identical" : "DIFFERENT"}`,
      )
    }
    const ratio = (a: number, b: number) => (b ? `${(a / b).toFixed(2)}×` : "n/a")
    console.log(
      `\naudit / plain parse: CPU ${ratio(audit.cpuS, parse.cpuS)}, wall ${ratio(audit.wallS, parse.wallS)}, ` +
        `peak RSS ${ratio(audit.rssMb, parse.rssMb)}`,
    )
    if (base)
      console.log(
        `now / before: CPU ${ratio(audit.cpuS, base.cpuS)}, wall ${ratio(audit.wallS, base.wallS)}, ` +
          `peak RSS ${ratio(audit.rssMb, base.rssMb)}`,
      )
    const met = (ok: boolean) => (ok ? "met" : "not met")
    console.log(
      `goals: peak RSS ≤ ${GOAL.rssMb} MB ${met(audit.rssMb <= GOAL.rssMb)} (${audit.rssMb.toFixed(0)} MB); ` +
        `≤ ${GOAL.cpuS} s ${met(audit.cpuS <= GOAL.cpuS && audit.wallS <= GOAL.cpuS)} ` +
        `(CPU ${audit.cpuS.toFixed(1)} s, wall ${audit.wallS.toFixed(1)} s)`,
    )
  } finally {
    await fs.rm(work, { recursive: true, force: true })
    if (!real && !process.env.BENCH_AUDIT_KEEP)
      await fs.rm(path.resolve(dir, "../.."), { recursive: true, force: true })
  }
}

await main()
