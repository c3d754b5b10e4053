// `npm run fork -- <opencode-checkout> [options]`: builds the fork in one command on a machine that reaches only the
// npm registry: version check, offline preparation, the series, install, typecheck, upstream's tests (ours among
// them), the single binary with OPENCODE_VERSION set, our end-to-end suite against it. See docs/fork.md.
import fs from "fs"
import os from "os"
import path from "path"
import { parseArgs } from "util"
import { PatchApply } from "./patches/apply"
import { ForkPrepare } from "./patches/prepare"
import { Series } from "./patches/series"

const ROOT = path.resolve(import.meta.dir, "..")
const USAGE = `usage: npm run fork -- <opencode-checkout> [options]
  --bun <path>           the Bun OpenCode asks for (packageManager), default: bun on PATH
  --models <file>        models.dev snapshot built into the binary (default: the checkout's test fixture)
  --skip-typecheck       do not type-check (a quick rebuild after a change already checked)
  --skip-upstream-tests  do not run upstream's suite (12 to 30 minutes on 2 cores)
  --skip-e2e             do not run this repository's end-to-end suite against the binary
  --core <dir>           the core package to vendor (default: this repository's packages/core)
  --log <dir>            where each step's output goes (default: <checkout>/.opencode-builtins-fork)`

let args: ReturnType<typeof parseArgs>
try {
  args = parseArgs({
    args: process.argv.slice(2),
    options: {
      bun: { type: "string" },
      models: { type: "string" },
      "skip-typecheck": { type: "boolean" },
      "skip-upstream-tests": { type: "boolean" },
      "skip-e2e": { type: "boolean" },
      log: { type: "string" },
      core: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
  })
} catch (error) {
  console.error(`${error instanceof Error ? error.message : error}\n${USAGE}`)
  process.exit(2)
}
if (args.values.help || args.positionals.length !== 1) {
  console.error(USAGE)
  process.exit(args.values.help ? 0 : 2)
}

const cwd = process.env.INIT_CWD ?? process.cwd()
const checkout = path.resolve(cwd, String(args.positionals[0]))
const opencode = path.join(checkout, "packages/opencode")
const logDir = path.resolve(cwd, String(args.values.log ?? path.join(checkout, ".opencode-builtins-fork")))
const bun = String(args.values.bun ?? Bun.which("bun") ?? "bun")
fs.mkdirSync(logDir, { recursive: true })

type Row = { step: string; result: string; seconds: number }
const rows: Row[] = []

function fail(message: string): never {
  console.error(`\nfork: ${message}`)
  printSummary()
  process.exit(1)
}

function printSummary() {
  if (!rows.length) return
  const width = Math.max(...rows.map((r) => r.step.length))
  console.log("\nsummary")
  for (const r of rows) console.log(`  ${r.step.padEnd(width)}  ${r.seconds.toFixed(0).padStart(5)} s  ${r.result}`)
  fs.writeFileSync(path.join(logDir, "summary.json"), JSON.stringify(rows, null, 2) + "\n")
}

async function step<T>(name: string, fn: () => Promise<{ result: string; value?: T }>): Promise<T | undefined> {
  process.stdout.write(`${name} … `)
  const start = performance.now()
  const { result, value } = await fn()
  const seconds = (performance.now() - start) / 1000
  rows.push({ step: name, result, seconds })
  console.log(`${result} (${seconds.toFixed(0)} s)`)
  return value
}

/** Runs a command with its output in `<log>/<name>.log`; resolves to the exit code and the output. */
async function run(name: string, cmd: string[], options: { cwd: string; env?: Record<string, string> }) {
  const file = path.join(logDir, `${name}.log`)
  const proc = Bun.spawn(cmd, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  })
  const sink = fs.createWriteStream(file)
  let output = ""
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true })
      output += text
      sink.write(text)
    }
  }
  await Promise.all([pump(proc.stdout), pump(proc.stderr)])
  const code = await proc.exited
  await new Promise((resolve) => sink.end(resolve))
  return { code, output, file }
}

const pin = Series.readPin(path.join(ROOT, "patches"))

await step("version", async () => {
  PatchApply.verifyCheckout(checkout, pin)
  const packageManager = JSON.parse(fs.readFileSync(path.join(checkout, "package.json"), "utf8")).packageManager
  const found = Bun.spawnSync([bun, "--version"]).stdout.toString()
  const mismatch = ForkPrepare.bunMismatch(packageManager, found)
  if (mismatch)
    fail(
      `${mismatch}: install it in a scratch folder (npm install bun@<version>) and pass --bun <folder>/node_modules/.bin/bun`,
    )
  return { result: `OpenCode ${pin.version} (${pin.commit.slice(0, 12)}), Bun ${found.trim()}` }
}).catch((error) => fail(error instanceof Error ? error.message : String(error)))

await step("offline preparation", async () => {
  const plan = ForkPrepare.plan(checkout)
  if (plan.done) return { result: "already prepared" }
  const integrity: Record<string, { version: string; integrity: string }> = {}
  for (const name of new Set(plan.replace.map((r) => r.name))) {
    const version = ForkPrepare.REPLACEMENTS[name]
    const view = Bun.spawnSync(["npm", "view", `${name}@${version}`, "dist.integrity"], { stderr: "pipe" })
    const value = view.stdout.toString().trim()
    if (view.exitCode !== 0 || !value.startsWith("sha")) fail(`npm view ${name}@${version} failed: ${view.stderr}`)
    integrity[name] = { version, integrity: value }
  }
  const pruned = ForkPrepare.apply(checkout, plan, integrity)
  return {
    result: `removed ${plan.workspaces.join(", ")}; catalog ${plan.catalog.join(", ") || "unchanged"}; ${plan.replace
      .map((r) => `${r.name} → ${r.version}`)
      .join(", ")}; ${pruned.removed.packages.length} lockfile entries dropped`,
  }
}).catch((error) => fail(error instanceof Error ? error.message : String(error)))

await step("apply the series", async () => {
  const report = await PatchApply.run({
    checkout,
    patches: path.join(ROOT, "patches"),
    core: path.resolve(cwd, String(args.values.core ?? path.join(ROOT, "packages/core"))),
  })
  return { result: `${report.status}: ${report.patches.length} patches` }
}).catch((error) => fail(error instanceof Error ? error.message : String(error)))

await step("install", async () => {
  // node-gyp builds tree-sitter-powershell against the system's Node headers (no download).
  const env: Record<string, string> = fs.existsSync("/usr/include/node/node.h") ? { npm_config_nodedir: "/usr" } : {}
  const r = await run("install", [bun, "install"], { cwd: checkout, env })
  if (r.code !== 0) fail(`bun install failed (see ${r.file})`)
  if (r.output.includes("Ignoring lockfile"))
    fail(`bun ignored the lockfile and resolved everything again (see ${r.file})`)
  return { result: /(\d+) packages installed/.exec(r.output)?.[0] ?? "done" }
})

await step("grammars", async () => {
  // Every dynamic AST language's parser library for this machine, copied beside the glue and embedded by the build.
  const script = [
    'import { AstLanguage } from "./ast/languages"',
    "const { libraries, failures } = await AstLanguage.prebuilt()",
    "console.log(JSON.stringify({ libraries, failures: Object.fromEntries(failures) }))",
  ].join("\n")
  const file = path.join(checkout, PatchApply.VENDOR_DIR, ".grammars.ts")
  fs.writeFileSync(file, script)
  const r = await run("grammars", [bun, file], { cwd: path.join(checkout, PatchApply.VENDOR_DIR) })
  fs.rmSync(file, { force: true })
  if (r.code !== 0) fail(`listing the grammar libraries failed (see ${r.file})`)
  const { libraries, failures } = JSON.parse(r.output.trim().split("\n").at(-1)!)
  if (Object.keys(failures).length)
    fail(
      `grammars unavailable: ${Object.entries(failures)
        .map(([k, v]) => `${k}: ${v}`)
        .join("; ")}`,
    )
  const dir = path.join(checkout, path.dirname(PatchApply.GRAMMARS), "grammars")
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const table: Record<string, { library: string; symbol: string; expando?: string }> = {}
  let bytes = 0
  for (const [name, lib] of Object.entries(
    libraries as Record<string, { library: string; symbol: string; expando?: string }>,
  )) {
    const base = `${name}${path.extname(lib.library) || ".so"}`
    fs.copyFileSync(lib.library, path.join(dir, base))
    bytes += fs.statSync(lib.library).size
    table[name] = { ...lib, library: base }
  }
  fs.writeFileSync(path.join(checkout, PatchApply.GRAMMARS), ForkPrepare.grammarsModule(table))
  return { result: `${Object.keys(table).length} libraries embedded (${(bytes / 1e6).toFixed(1)} MB)` }
})

if (!args.values["skip-typecheck"]) {
  await step("typecheck", async () => {
    const r = await run("typecheck", [bun, "run", "typecheck"], { cwd: opencode })
    if (r.code !== 0) fail(`typecheck failed (see ${r.file})`)
    return { result: "clean" }
  })
}

let upstreamNew: string[] = []
if (!args.values["skip-upstream-tests"]) {
  await step("upstream tests", async () => {
    const r = await run("upstream-tests", [bun, "test", "--timeout", "30000"], { cwd: opencode })
    const s = ForkPrepare.summary(r.output)
    // Our tests' results: the lines under the file's header (bun prints totals only for the whole run).
    const at = r.output.indexOf("\ntest/builtins/builtins.test.ts:\n")
    const section = at < 0 ? "" : r.output.slice(at + 1, r.output.indexOf("\n\n", at + 1))
    const ours = { pass: section.match(/^\(pass\) /gm)?.length ?? 0, fail: section.match(/^\(fail\) /gm)?.length ?? 0 }
    fs.writeFileSync(path.join(logDir, "upstream-failing.txt"), s.failing.join("\n") + "\n")
    const known = new Set(ForkPrepare.UPSTREAM_FAILING)
    const fresh = s.failing.filter((name) => !known.has(name))
    // A new failure's file runs again alone: subprocess tests time out while other files run beside them (so do some
    // of pristine v1.18.3's), and a test that passes alone is reported as such, not hidden.
    const files = ForkPrepare.failingFiles(r.output)
    const again = new Set<string>()
    for (const file of new Set(fresh.map((name) => files.get(name)).filter((f): f is string => !!f))) {
      const alone = await run(`upstream-rerun-${path.basename(file)}`, [bun, "test", "--timeout", "30000", file], {
        cwd: opencode,
      })
      for (const name of ForkPrepare.summary(alone.output).failing) again.add(name)
    }
    upstreamNew = fresh.filter((name) => again.has(name) || !files.has(name))
    fs.writeFileSync(path.join(logDir, "upstream-new.txt"), upstreamNew.join("\n") + (upstreamNew.length ? "\n" : ""))
    const inBoth = s.failing.length - fresh.length
    return {
      result:
        `${s.pass} pass, ${s.skip} skip, ${s.todo} todo, ${s.fail} fail (upstream-failing.txt): ${inBoth} of ` +
        `pristine v1.18.3's ${known.size}, ${fresh.length} others, of which ${fresh.length - upstreamNew.length} pass ` +
        `when their file runs alone; new failures: ${upstreamNew.length ? upstreamNew.join("; ") : "none"}; ` +
        `test/builtins: ${ours.pass} pass, ${ours.fail} fail`,
    }
  })
}

const binary = await step("build", async () => {
  const models = path.resolve(
    cwd,
    String(args.values.models ?? path.join(opencode, "test/tool/fixtures/models-api.json")),
  )
  if (!fs.existsSync(models)) fail(`no models snapshot at ${models}: pass --models <file>`)
  // A single line, as models.dev serves it.
  const snapshot = path.join(logDir, "models.json")
  fs.writeFileSync(snapshot, JSON.stringify(JSON.parse(fs.readFileSync(models, "utf8"))))
  const r = await run("build", [bun, "run", "script/build.ts", "--single", "--skip-install"], {
    cwd: opencode,
    env: { MODELS_DEV_API_JSON: snapshot, OPENCODE_VERSION: pin.version },
  })
  if (r.code !== 0) fail(`build failed (see ${r.file})`)
  const platform = os.platform() === "win32" ? "windows" : os.platform()
  const file = path.join(
    opencode,
    "dist",
    `opencode-${platform}-${os.arch()}`,
    "bin",
    os.platform() === "win32" ? "opencode.exe" : "opencode",
  )
  if (!fs.existsSync(file)) fail(`the build printed no error but ${file} is missing (see ${r.file})`)
  const version = Bun.spawnSync([file, "--version"]).stdout.toString().trim()
  if (version !== pin.version) fail(`${file} --version prints '${version}', expected ${pin.version}`)
  return { result: `${file}: ${(fs.statSync(file).size / 1e6).toFixed(1)} MB, --version ${version}`, value: file }
})

if (!args.values["skip-e2e"] && binary) {
  await step("end-to-end (fork)", async () => {
    const r = await run("e2e", [bun, "test", "test/e2e", "--timeout", "600000"], {
      cwd: ROOT,
      env: { OPENCODE_BIN: binary, OPENCODE_FORK: "1" },
    })
    const s = ForkPrepare.summary(r.output)
    return { result: `${s.pass} pass, ${s.fail} fail${s.failing.length ? `: ${s.failing.join("; ")}` : ""}` }
  })
}

printSummary()
console.log(`\nbinary: ${binary}`)
if (upstreamNew.length) {
  console.error(`\nfork: ${upstreamNew.length} upstream tests fail that pass on pristine v1.18.3 (upstream-new.txt)`)
  process.exit(1)
}
