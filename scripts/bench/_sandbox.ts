// The kernel sandbox's cost per shell command, against the same command run plainly in the same run: `bash -c` of a
// short command, spawned the way OpenCode spawns it, once without the sandbox and once through the guard (before
// hook with its tree refresh and sandbox preparation, the shell.env variables, the command inside bubblewrap, the
// after hook). Medians and 90th percentiles over interleaved samples, so load on the shared machine hits both alike.
import { spawnSync } from "child_process"
import fs from "fs"
import os from "os"
import path from "path"
import { SecurityGuard } from "../../packages/core/security/guard"

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]

/**
 * A project of `files` ordinary files in nested folders, a policy with `rules` rules and some protected files, plus
 * `spread` more `.env` files each in two folders of its own (`pkgs/p<i>/sub/.env`): every folder above a protected
 * file is pinned, so these add two pins each.
 */
function project(files: number, rules: number, spread: number) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-bench-sbx-")))
  for (let i = 0; i < files; i++) {
    const sub = path.join(dir, "src", `m${i % 40}`, `p${i % 7}`)
    fs.mkdirSync(sub, { recursive: true })
    fs.writeFileSync(path.join(sub, `f${i}.ts`), `export const v${i} = ${i}\n`)
  }
  fs.mkdirSync(path.join(dir, "secrets"), { recursive: true })
  fs.writeFileSync(path.join(dir, "secrets/api.key"), "API_KEY=Zx81Qp0vLk27mNb5Yt3RwE9u\n")
  fs.writeFileSync(path.join(dir, ".env"), "TOKEN=x\n")
  for (let i = 0; i < spread; i++) {
    fs.mkdirSync(path.join(dir, "pkgs", `p${i}`, "sub"), { recursive: true })
    fs.writeFileSync(path.join(dir, "pkgs", `p${i}`, "sub", ".env"), `TOKEN=${i}\n`)
  }
  const list = [
    { pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"] },
    { pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"] },
  ]
  for (let i = list.length; i < rules; i++)
    list.push({ pattern: `config/private-${i}.json`, type: "file", deniedOperations: ["read", "write", "llm"] })
  fs.writeFileSync(path.join(dir, ".opencode-security.json"), JSON.stringify({ version: "1.0", rules: list }))
  return dir
}

export async function sandboxCost(options: { files?: number; rules?: number; samples?: number; spread?: number } = {}) {
  const files = options.files ?? 2000
  const rules = options.rules ?? 100
  const samples = options.samples ?? 60
  const spread = options.spread ?? 0
  const dir = project(files, rules, spread)
  const guard = await SecurityGuard.create({ directory: dir, worktree: dir, env: {}, shell: "/bin/bash" })
  await guard.ready()
  const command = "ls src > /dev/null && echo ok"
  const plain: number[] = []
  const boxed: number[] = []
  const hooks: number[] = []
  let calls = 0
  const run = (env: NodeJS.ProcessEnv) => spawnSync("/bin/bash", ["-c", command], { cwd: dir, env, encoding: "utf8" })
  for (let i = 0; i < samples + 5; i++) {
    let t = performance.now()
    run(process.env)
    const p = performance.now() - t

    const callID = `bench_${calls++}`
    t = performance.now()
    const verdict = await guard.before({ tool: "bash", args: { command }, callID })
    if (!verdict.allowed) throw new Error(verdict.reason)
    const env = { ...process.env, ...guard.shellEnv({ callID }) }
    const h1 = performance.now() - t
    const r = run(env)
    const t2 = performance.now()
    guard.after({ tool: "bash", args: { command }, callID }, r.stdout)
    const h2 = performance.now() - t2
    const b = performance.now() - t
    if (!r.stdout.includes("ok")) throw new Error(`the sandboxed command failed: ${r.stderr}`)
    if (i < 5) continue
    plain.push(p)
    boxed.push(b)
    hooks.push(h1 + h2)
  }
  const mounts = guard.status().sandbox.mounts
  guard.close()
  fs.rmSync(dir, { recursive: true, force: true })
  const p50 = quantile(plain, 0.5)
  const b50 = quantile(boxed, 0.5)
  console.log(
    `sandbox cost per bash call (${files} files, ${rules} rules${spread ? `, ${spread} .env files each in two folders of its own` : ""}, ${mounts} mounts, ${samples} samples): ` +
      `plain bash p50 ${p50.toFixed(1)} ms, p90 ${quantile(plain, 0.9).toFixed(1)} ms; ` +
      `sandboxed with hooks p50 ${b50.toFixed(1)} ms, p90 ${quantile(boxed, 0.9).toFixed(1)} ms = ${(b50 / p50).toFixed(1)}× plain; ` +
      `added p50 ${(b50 - p50).toFixed(1)} ms (target ≤15 ms), of which the hooks (tree refresh, plan) ${quantile(hooks, 0.5).toFixed(1)} ms`,
  )
}

if (import.meta.main) await sandboxCost()
