// Security layer benchmarks. Every figure is printed next to a baseline measured in the same run:
//  - guard overhead per tool call (tool.execute.before + after) with no policy, a policy with no rules, and 100
//    rules, against the call doing nothing (the floor) and against a plain `fs.statSync` of the same path;
//  - scanAndRedact throughput on 1 MB of real source with 100 rules + secret patterns + copy fingerprints, against
//    a single `indexOf` pass over the same text (the floor of any scan);
//  - the hook payload guard on a 200-message history (messages transform: clone, redact, structural diff), against
//    a plain structuredClone of the same history.
//  - the kernel sandbox's cost per bash call (see _sandbox.ts), against the same command run plainly, also with 100 and
//    300 protected files in folders of their own (the pins above them);
//  - pattern check: hostile patterns (SecurityGlob) on 32- and 4096-character paths, p50 and max per check, against
//    an `includes` of the pattern's literal over the same path; and, once and capped, picomatch on the first one.
// Nothing here fails on timing; targets are printed next to the figures.
import fs from "fs"
import os from "os"
import path from "path"
import { SecurityGlob } from "../../packages/core/security/glob"
import { SecurityGuard } from "../../packages/core/security/guard"
import { SecurityShell } from "../../packages/core/security/shell"
import { sandboxCost } from "./_sandbox"

const ROOT = path.resolve(import.meta.dir, "../..")
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`

function project(rules: number, withPolicy = true) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-bench-sec-")))
  fs.mkdirSync(path.join(dir, "src/feature"), { recursive: true })
  fs.mkdirSync(path.join(dir, "secrets"), { recursive: true })
  fs.writeFileSync(path.join(dir, "src/feature/file.ts"), "export const x = 1\n")
  fs.writeFileSync(
    path.join(dir, "secrets/api.key"),
    "API_KEY=Zx81Qp0vLk27mNb5Yt3RwE9u\nline two of the key file, long enough to be remembered\n",
  )
  if (withPolicy) {
    const list = Array.from({ length: rules }, (_, i) => {
      const kinds = [
        { pattern: `secrets-${i}/**`, type: "directory" },
        { pattern: `**/*.secret${i}`, type: "file" },
        { pattern: `config/private-${i}.json`, type: "file" },
        { pattern: `.env.${i}*`, type: "file" },
      ]
      return { ...kinds[i % kinds.length], deniedOperations: ["read", "write", "llm"], allowedRoles: [] }
    })
    if (rules)
      list[0] = {
        pattern: "secrets/**",
        type: "directory",
        deniedOperations: ["read", "write", "llm"],
        allowedRoles: [],
      }
    fs.writeFileSync(path.join(dir, ".opencode-security.json"), JSON.stringify({ version: "1.0", rules: list }))
  }
  // Dated back as in a real project: a folder changed within the last 2 s is looked at again on every call (a policy
  // file may just have been created in it), which is the state of the folder the agent just wrote to, not of most.
  const past = new Date(Date.now() - 3_600_000)
  for (const d of [dir, path.join(dir, "src"), path.join(dir, "src/feature"), path.join(dir, "secrets")])
    fs.utimesSync(d, past, past)
  return dir
}

async function perCall(label: string, dir: string, target?: string) {
  const guard = await SecurityGuard.create({ directory: dir, worktree: dir, env: {}, intervalMs: 500 })
  await guard.ready()
  const call = { tool: "read", args: { filePath: "src/feature/file.ts" } }
  const output = "1: export const x = 1\n2: export const y = 2\n3: function f() { return x + y }\n"
  const rounds = 20_000
  for (let i = 0; i < 2000; i++) {
    await guard.before(call)
    guard.after(call, output)
  }
  const samples: number[] = []
  const floor: number[] = []
  const stat: number[] = []
  const file = path.join(dir, "src/feature/file.ts")
  for (let r = 0; r < 5; r++) {
    let t = performance.now()
    for (let i = 0; i < rounds; i++) {
      await guard.before(call)
      guard.after(call, output)
    }
    samples.push((performance.now() - t) / rounds)
    t = performance.now()
    for (let i = 0; i < rounds; i++) await Promise.resolve(output)
    floor.push((performance.now() - t) / rounds)
    t = performance.now()
    for (let i = 0; i < rounds; i++) fs.statSync(file)
    stat.push((performance.now() - t) / rounds)
  }
  const m = median(samples)
  console.log(
    `guard per call, ${label}: ${us(m)} (target ${target}); empty async call ${us(median(floor))} = ${(m / median(floor)).toFixed(1)}×; one fs.statSync ${us(median(stat))} = ${(m / median(stat)).toFixed(1)}×`,
  )
  guard.close()
}

async function bashCall(dir: string) {
  const guard = await SecurityGuard.create({ directory: dir, worktree: dir, env: {} })
  await guard.ready()
  await SecurityShell.parser()
  const call = { tool: "bash", args: { command: "cd src && grep -rn TODO feature | head -20 && git status" } }
  const rounds = 2000
  for (let i = 0; i < 200; i++) await guard.before(call)
  const t = performance.now()
  for (let i = 0; i < rounds; i++) await guard.before(call)
  const m = (performance.now() - t) / rounds
  console.log(`guard per bash call (tree-sitter parse + analysis), 100 rules: ${us(m)}`)
  guard.close()
}

function sourceMegabyte(): string {
  const files: string[] = []
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (/\.(ts|js)$/.test(e.name)) files.push(p)
    }
  }
  for (const tree of ["node_modules/zod/src", "node_modules/ajv/lib", "node_modules/typescript/lib"]) {
    const p = path.join(ROOT, tree)
    if (fs.existsSync(p)) walk(p)
  }
  let text = ""
  for (const f of files.sort()) {
    if (text.length >= 1024 * 1024) break
    text += fs.readFileSync(f, "utf8").slice(0, 200_000) + "\n"
  }
  return text.slice(0, 1024 * 1024)
}

async function throughput(dir: string) {
  const guard = await SecurityGuard.create({ directory: dir, worktree: dir, env: {} })
  await guard.ready()
  const text = sourceMegabyte()
  const mb = text.length / 1024 / 1024
  // Every call gets a text not seen before: the guard caches scan results of texts it has scanned.
  let round = 0
  const fresh = () => `${text.slice(0, -16)}// round ${String(round++).padStart(6, "0")}`
  // Warm-up until the scanning functions run optimised, as they do in a long-lived server; 9 samples, as the machine
  // is shared and single runs vary by a factor of 2.
  for (let i = 0; i < 5; i++) guard.scanAndRedact(fresh(), { scope: "tool", paths: "line" })
  const scan: number[] = []
  const floor: number[] = []
  let found = 0
  for (let r = 0; r < 9; r++) {
    const input = fresh()
    let t = performance.now()
    found = guard.scanAndRedact(input, { scope: "tool", paths: "line" }).ranges.length
    scan.push(performance.now() - t)
    t = performance.now()
    let n = 0
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++
    floor.push(performance.now() - t)
    if (n < 0) console.log(n)
  }
  const s = median(scan)
  console.log(
    `scanAndRedact on ${mb.toFixed(2)} MB of source, 100 rules + secret patterns + copy fingerprints: ${s.toFixed(1)} ms = ${(mb / (s / 1000)).toFixed(0)} MB/s (target ≥50 MB/s); one indexOf pass ${median(floor).toFixed(2)} ms = ${(s / median(floor)).toFixed(0)}× (${found} ranges found)`,
  )
  guard.close()
}

/** Source text the history's tool outputs are cut from: every output differs, as in a real session. */
const SOURCE = ["guard.ts", "shell.ts", "scanner.ts", "config.ts"]
  .map((f) => fs.readFileSync(path.join(ROOT, "packages/core/security", f), "utf8"))
  .join("\n")

/** Message `i` of a session; `salt` makes every text differ from other runs. */
function message(i: number, salt: string): any {
  const user = i % 2 === 0
  const at = (i * 997) % (SOURCE.length - 6000)
  return {
    info: {
      id: `msg_${String(i).padStart(4, "0")}`,
      role: user ? "user" : "assistant",
      sessionID: "ses_1",
      time: { created: i },
    },
    parts: user
      ? [
          {
            id: `prt_${i}`,
            type: "text",
            text: `Please look at step ${i} of the refactoring (${salt}) and tell me what changes.`,
          },
        ]
      : [
          { id: `prt_${i}a`, type: "text", text: `Here is what I found for step ${i}.` },
          {
            id: `prt_${i}b`,
            type: "tool",
            tool: "read",
            callID: `call_${i}`,
            state: {
              status: "completed",
              input: { filePath: `src/file-${i}.ts` },
              output: `// ${salt}\n${SOURCE.slice(at, at + 6000)}`,
              title: "",
              metadata: {},
            },
          },
        ],
  }
}

const history = (count: number, salt: string) => Array.from({ length: count }, (_, i) => message(i, salt))

async function hookGuard(dir: string) {
  const guard = await SecurityGuard.create({ directory: dir, worktree: dir, env: {} })
  await guard.ready()
  const hook = async (c: any[]) => {
    c.push({ info: { id: "msg_new", role: "user" }, parts: [{ type: "text", text: "reminder" }] })
  }
  const bytes = JSON.stringify(history(200, "size")).length
  const first = { fork: [] as number[], plugin: [] as number[] }
  const steady = { fork: [] as number[], plugin: [] as number[] }
  const clone: number[] = []
  for (let r = 0; r < 9; r++) {
    // First sight: a history none of whose texts was scanned before (a resumed session, a changed policy).
    let base = history(200, `first-${r}`)
    let t = performance.now()
    await guard.guardMessages(base, hook)
    first.fork.push(performance.now() - t)
    base = history(200, `first-plugin-${r}`)
    t = performance.now()
    guard.redactMessages([...base])
    first.plugin.push(performance.now() - t)
    t = performance.now()
    structuredClone(base)
    clone.push(performance.now() - t)
  }
  // Steady state: each request re-sends the history seen by the previous one plus one new message. OpenCode reads
  // the history from its database for every request, so every request's strings are new (equal) instances: the
  // JSON round trip (not timed) does the same here.
  const session = history(199, "session")
  await guard.guardMessages(JSON.parse(JSON.stringify(session)), hook)
  guard.redactMessages(JSON.parse(JSON.stringify(session)))
  for (let r = 0; r < 9; r++) {
    session.push(message(199 + r * 2 + 1, `turn-${r}`))
    const messages = JSON.parse(JSON.stringify(session.slice(-200)))
    let t = performance.now()
    await guard.guardMessages(messages, hook)
    steady.fork.push(performance.now() - t)
    const again = JSON.parse(JSON.stringify(session.slice(-200)))
    t = performance.now()
    guard.redactMessages(again)
    steady.plugin.push(performance.now() - t)
  }
  const c = median(clone)
  const f = (xs: number[]) => `${median(xs).toFixed(1)} ms = ${(median(xs) / c).toFixed(1)}× a structuredClone`
  console.log(
    `hook payload guard, 200 messages (${(bytes / 1024 / 1024).toFixed(2)} MB, every text different; structuredClone ${c.toFixed(1)} ms):`,
  )
  console.log(
    `  each request (history seen before, re-read as new strings, + 1 new message): fork route (clone + redact + hooks + structural diff) ${f(steady.fork)} (target ≤10 ms); plugin route ${f(steady.plugin)}`,
  )
  console.log(
    `  first sight (no text scanned before): fork route ${f(first.fork)}; plugin route (scan, copy only what changes) ${f(first.plugin)}`,
  )
  guard.close()
}

/** Patterns built to make a backtracking matcher slow, or an automaton big; each is a valid policy pattern. */
const HOSTILE = [
  "**/" + "*a".repeat(12) + "*b",
  "*a".repeat(500) + "*b",
  "{ab,".repeat(SecurityGlob.MAX_GROUPS - 1) + "z" + "}".repeat(SecurityGlob.MAX_GROUPS - 1),
  "{a,".repeat(300) + "z" + "}".repeat(300),
  "**/".repeat(300) + "x",
  "[" + "abcdefghijklmnopqrstuvwxy".repeat(40) + "]",
  "**/a" + "?".repeat(400),
  "*a" + "?".repeat(500),
  "**/" + "*{ab,cd}".repeat(SecurityGlob.MAX_GROUPS),
  "**/" + "[abc][^d]*".repeat(90),
  "{a,b}".repeat(200),
]

/** Paths of `n` characters that keep the patterns above busy: one letter, two, with slashes, with brackets, a folder. */
function hostilePaths(n: number): string[] {
  let seed = 7
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32
  const mixed = (chars: string) => Array.from({ length: n }, () => chars[Math.floor(next() * chars.length)]).join("")
  return ["a".repeat(n), mixed("ab"), mixed("aab/"), mixed("abcd[]"), ("x/" + "ab".repeat(n)).slice(0, n)]
}

/** The longest run of characters a pattern must contain literally (at least one). */
const literalOf = (pattern: string) =>
  pattern.split(/[*?[\]{}\\,/^]+/).reduce((best, run) => (run.length > best.length ? run : best), "") || pattern[0]

async function hostilePatterns() {
  console.log("pattern check: hostile patterns (µs per check; target ≤ 1000 µs for any valid pattern):")
  // Warm-up on other patterns, so the figures are the matcher's and not the first run of its code.
  for (const pattern of ["**/{ab,cd}*[xy]/*.key", "[[:alpha:]][abc]?{x,y/z}/**", "*a*b"]) {
    const glob = SecurityGlob.compile(pattern)
    for (let r = 0; r < 200; r++) for (const p of hostilePaths(64 + r)) SecurityGlob.test(glob, p)
  }
  for (const n of [32, 4096]) {
    const paths = hostilePaths(n)
    const worst = { p50: 0, max: 0 }
    for (const pattern of HOSTILE) {
      const literal = literalOf(pattern)
      // The first check of a path builds DFA states and is the slowest: timed alone on 5 fresh compiles, the max is
      // the slowest path's median (one run is at the mercy of the shared machine's scheduler and the GC).
      const cold: number[][] = paths.map(() => [])
      for (let trial = 0; trial < 5; trial++) {
        const fresh = SecurityGlob.compile(pattern)
        paths.forEach((p, k) => {
          const t = performance.now()
          SecurityGlob.test(fresh, p)
          cold[k].push(performance.now() - t)
        })
      }
      const glob = SecurityGlob.compile(pattern)
      const rounds = n > 1000 ? 40 : 400
      const checks: number[] = []
      const floor: number[] = []
      let hits = 0
      for (let r = 0; r < rounds; r++) {
        let t = performance.now()
        for (const p of paths) if (SecurityGlob.test(glob, p)) hits++
        checks.push((performance.now() - t) / paths.length)
        t = performance.now()
        for (const q of paths) if (q.includes(literal)) hits++
        floor.push((performance.now() - t) / paths.length)
      }
      const p50 = median(checks)
      const max = Math.max(...cold.map(median))
      worst.p50 = Math.max(worst.p50, p50)
      worst.max = Math.max(worst.max, max)
      const shown = pattern.length > 28 ? `${pattern.slice(0, 25)}… (${pattern.length} chars)` : pattern
      console.log(
        `  ${n}-char paths, ${shown.padEnd(38)} p50 ${us(p50).padStart(9)}, max ${us(max).padStart(10)}; includes(${JSON.stringify(literal.slice(0, 6))}) ${(median(floor) * 1e6).toFixed(0)} ns = ${(p50 / median(floor)).toFixed(0)}× (${hits} hits)`,
      )
    }
    console.log(`  ${n}-char paths, worst of all: p50 ${us(worst.p50)}, max ${us(worst.max)}`)
  }
  // Before: picomatch's regular expression on the first pattern and a 32-character name, once, in a child process
  // stopped after the cap (a backtracking match cannot be interrupted from inside).
  const cap = 20_000
  const code = `const pm = require(${JSON.stringify(require.resolve("picomatch"))}); const re = pm.makeRe(${JSON.stringify(HOSTILE[0])}, { dot: true }); const t = performance.now(); re.test("a".repeat(32)); console.log(performance.now() - t)`
  const child = Bun.spawn([process.execPath, "-e", code], { stdout: "pipe", stderr: "inherit" })
  const timer = setTimeout(() => child.kill(), cap)
  const out = await new Response(child.stdout).text()
  clearTimeout(timer)
  const ms = Number(out.trim())
  console.log(
    `  before (picomatch makeRe, ${HOSTILE[0]}, 32 × 'a', one run): ${out.trim() && Number.isFinite(ms) ? `${ms.toFixed(0)} ms` : `over ${cap / 1000} s (stopped)`}`,
  )
}

const none = project(0, false)
const empty = project(0)
const hundred = project(100)
try {
  await perCall("no policy file", none, "≤20 µs")
  await perCall("policy with no rules (implicit self-protection only)", empty, "≤20 µs")
  await perCall("100 rules", hundred, "≤200 µs")
  await bashCall(hundred)
  await throughput(hundred)
  await hookGuard(hundred)
  await hostilePatterns()
  await sandboxCost()
  // Every folder above a protected file is pinned (a mount point cannot be moved); bubblewrap's cost per mount grows
  // with the mounts already made, so protected files in folders of their own cost more than linearly.
  for (const spread of [100, 300]) await sandboxCost({ spread, samples: 12 })
} finally {
  for (const d of [none, empty, hundred]) fs.rmSync(d, { recursive: true, force: true })
}
