#!/usr/bin/env node
// Node launcher for the `opencode-builtins` command: the command is TypeScript run by Bun, which comes from npm
// (the `bun` package) or from PATH. Exit code and signals are passed through.
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import os from "node:os"
import { createRequire } from "node:module"
import path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const cli = path.join(here, "..", "cli.ts")

function findBun() {
  if (process.env.BUN_BIN) return process.env.BUN_BIN
  try {
    const require = createRequire(import.meta.url)
    const dir = path.dirname(require.resolve("bun/package.json"))
    for (const name of ["bin/bun.exe", "bin/bun"]) {
      const candidate = path.join(dir, name)
      if (existsSync(candidate)) return candidate
    }
  } catch {}
  return "bun"
}

const child = spawn(findBun(), [cli, ...process.argv.slice(2)], { stdio: "inherit" })
child.on("error", (error) => {
  console.error(`opencode-builtins needs Bun to run (${error.message}). Install it with: npm install bun`)
  process.exit(127)
})
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"]
for (const signal of forwarded) process.on(signal, () => child.kill(signal))
child.on("exit", (code, signal) => {
  if (!signal) process.exit(code ?? 1)
  // Die by the child's signal, as a shell expects: our own forwarding handler must not catch it (it would, and Node
  // would then exit 0). If the signal is still not fatal, exit 128 + its number as shells report it.
  for (const s of forwarded) process.removeAllListeners(s)
  process.kill(process.pid, signal)
  process.exit(128 + (os.constants.signals[signal] ?? 0))
})
