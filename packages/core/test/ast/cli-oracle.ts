import { createRequire } from "module"
import path from "path"
import { bunSpawnSync } from "../spawn-sync"

const require = createRequire(import.meta.url)

/**
 * The ast-grep command-line tool (dev dependency @ast-grep/cli, the same 0.51.1 release as napi), used by tests as
 * an independent oracle of what a search or a rewrite should produce.
 */
export namespace CliOracle {
  export function binary(): string {
    const dir = path.dirname(require.resolve("@ast-grep/cli/package.json"))
    return path.join(dir, process.platform === "win32" ? "ast-grep.exe" : "ast-grep")
  }

  /** Matches as `{ file, line, text }` (line 1-based), sorted like the in-process search. */
  export function search(cwd: string, pattern: string, lang: string, paths: string[] = ["."]) {
    const proc = bunSpawnSync([binary(), "run", "--pattern", pattern, "--lang", lang, "--json=compact", ...paths], {
      cwd,
    })
    if (proc.exitCode !== 0 && proc.exitCode !== 1) throw new Error(`ast-grep failed: ${proc.stderr.toString()}`)
    const out = JSON.parse(proc.stdout.toString() || "[]") as {
      file: string
      text: string
      range: { start: { line: number; column: number } }
    }[]
    return out
      .map((m) => ({
        file: path.resolve(cwd, m.file),
        line: m.range.start.line + 1,
        column: m.range.start.column + 1,
        text: m.text,
      }))
      .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column))
  }

  /** Rewrites the files under `cwd` in place (`--update-all`). */
  export function rewrite(cwd: string, pattern: string, rewrite: string, lang: string, paths: string[] = ["."]) {
    const proc = bunSpawnSync(
      [binary(), "run", "--pattern", pattern, "--rewrite", rewrite, "--lang", lang, "--update-all", ...paths],
      { cwd },
    )
    if (proc.exitCode !== 0 && proc.exitCode !== 1) throw new Error(`ast-grep failed: ${proc.stderr.toString()}`)
  }
}
