import { spawn } from "child_process"
import fs from "fs"
import os from "os"
import path from "path"
import { LoopError } from "../util/loop-error"
import { SecurityError } from "./errors"
import type { SecurityOutput } from "./output"
import { SecurityPath } from "./paths"
import { SecurityRipgrep } from "./ripgrep"
import { SecuritySearchPath } from "./search-path"

/**
 * The layer's own `grep` and `glob`, run in place of OpenCode's when a search could reach protected content. OpenCode's
 * result cannot be filtered into one that tells nothing: 1.18 runs ripgrep with `--no-config` (the exclusions of
 * `SecurityRipgrep` do nothing there), 1.2.15 runs it from a search path spelled `/proc/self/root<project>` that the
 * exclusions do not place, and every version searches files with read-protected segments; the count and the
 * truncation note then say whether a regex matched a hidden line, even when the line itself is removed (a match
 * beyond OpenCode's 100 shows only in its header). Here ripgrep runs with the protected entries as explicit
 * exclusions, every match of a file whose content may not be shown and every match on a protected segment's line is
 * dropped BEFORE anything is counted, and only then are the 100-result limit and the count applied: a right and a
 * wrong guess answer alike.
 *
 * The output has the shape of OpenCode's own (`Found N matches`, `path:` blocks of `  Line N: text`, sorted by
 * modification time as 1.2.15 sorts them; glob: one path a line), the same on every version: the layer cannot tell
 * which version runs, and a format chosen from OpenCode's own output would depend on what that output held.
 *
 * @example
 * await SecuritySearch.grep({ base: "/repo", pattern: "TODO", hidden: (f) => f.endsWith(".env"), lines: () => [], exclude: [] })
 * // { output: "Found 2 matches\n/repo/a.ts:\n  Line 3: // TODO …", metadata: { matches: 2, truncated: false } }
 */
export namespace SecuritySearch {
  /** OpenCode's limit of results shown (grep matches, glob paths). */
  export const LIMIT = 100
  /** OpenCode's longest match line shown (longer ones end in `...`). */
  export const MAX_LINE = 2000
  /** Matches counted at most (beyond, the count says "at least"): a search for `e` in a large tree stops here. */
  export const MAX_COUNTED = 10_000
  /** Exclusion globs passed at most: beyond, ripgrep could refuse the set; the filter below still drops the files. */
  export const MAX_EXCLUDES = 2_000

  export type Scope = {
    /** The tool's path argument, resolved as OpenCode resolves it (any spelling: links and `/proc/…/root` too). */
    base: string
    /** True for a file whose content (grep) or name (glob) may not be shown: read- or llm-denied. */
    hidden: (file: string) => boolean
    /** Protected entries (real paths), passed to ripgrep as exclusions so it does not open them. */
    exclude: readonly { path: string; dir: boolean }[]
    /** The ripgrep program (default: `program()`). */
    rg?: string
  }

  export type Result = { output: string; metadata: Record<string, unknown> }

  const NONE = "No files found"

  /**
   * The ripgrep OpenCode itself runs: `rg` from the system folders or `PATH`, else the one OpenCode downloads into
   * its data folder.
   *
   * @example
   * SecuritySearch.program(process.env) // "/usr/bin/rg"
   */
  export function program(env: Record<string, string | undefined> = process.env): string | undefined {
    const found = SecuritySearchPath.which("rg", env)
    if (found) return found
    const data = env.XDG_DATA_HOME || path.join(env.HOME || os.homedir(), ".local", "share")
    const own = path.join(data, "opencode", "bin", "rg")
    return fs.existsSync(own) ? own : undefined
  }

  /**
   * OpenCode's `grep` without what the policy hides: matches in hidden files and on protected segment lines are never
   * counted.
   *
   * @example
   * (await SecuritySearch.grep({ base: "/r", pattern: "x", hidden: () => false, lines: () => [], exclude: [] })).output
   */
  export async function grep(
    input: Scope & {
      pattern: string
      include?: string
      /** Protected line numbers of a file (ripgrep's numbering: lines end at `\n`). */
      lines: (file: string) => readonly SecurityOutput.Lines[]
    },
  ): Promise<Result> {
    const none = { output: NONE, metadata: { matches: 0, truncated: false } }
    const where = place(input.base)
    const rg = input.rg ?? program()
    if (!where) return none
    if (!rg) throw missing()
    const args = ["--no-config", "--json", "--hidden", "--no-messages"]
    if (input.include) args.push(`--glob=${input.include}`)
    // After the include: ripgrep lets the last glob that matches decide.
    args.push("--glob=!**/.git/**", ...excludes(where.cwd, input.exclude))
    args.push("--", input.pattern, where.target)
    type Match = { file: string; line: number; text: string }
    const matches: Match[] = []
    const hiddenFiles = new Map<string, boolean>()
    const ranges = new Map<string, readonly SecurityOutput.Lines[]>()
    const capped = await ripgrep(rg, args, where.cwd, (row) => {
      let record: any
      try {
        record = JSON.parse(row)
      } catch {
        return false
      }
      if (record?.type !== "match") return false
      const data = record.data
      const rel = decode(data?.path)
      const line = Number(data?.line_number)
      if (rel === undefined || !Number.isFinite(line)) return false
      const file = path.resolve(where.cwd, rel)
      let hide = hiddenFiles.get(file)
      if (hide === undefined) hiddenFiles.set(file, (hide = input.hidden(file)))
      if (hide) return false
      let protectedLines = ranges.get(file)
      if (!protectedLines) ranges.set(file, (protectedLines = input.lines(file)))
      if (protectedLines.some((r) => line >= r.from && line <= r.to)) return false
      let text = (decode(data?.lines) ?? "").replace(/\r?\n$/, "")
      if (text.length > MAX_LINE) text = text.slice(0, MAX_LINE) + "..."
      matches.push({ file, line, text })
      return matches.length >= MAX_COUNTED
    })
    if (!matches.length) return none
    const times = mtimes(matches.map((m) => m.file))
    matches.sort(
      (a, b) =>
        times.get(b.file)! - times.get(a.file)! || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || a.line - b.line,
    )
    const total = matches.length
    const truncated = total > LIMIT
    const shown = matches.slice(0, LIMIT)
    const count = capped ? `at least ${total}` : String(total)
    const out = [`Found ${count} matches${truncated ? ` (showing first ${LIMIT})` : ""}`]
    let current = ""
    for (const m of shown) {
      if (m.file !== current) {
        if (current) out.push("")
        current = m.file
        out.push(`${m.file}:`)
      }
      out.push(`  Line ${m.line}: ${m.text}`)
    }
    if (truncated)
      out.push(
        "",
        `(Results truncated: showing ${LIMIT} of ${count} matches (${capped ? "more" : total - LIMIT} hidden). Consider using a more specific path or pattern.)`,
      )
    return { output: out.join("\n"), metadata: { matches: total, truncated } }
  }

  /**
   * OpenCode's `glob` without hidden names: they are dropped before the 100-result limit, so its truncation note says
   * nothing about them.
   *
   * @example
   * (await SecuritySearch.glob({ base: "/r", pattern: "**\/*.ts", hidden: () => false, exclude: [] })).output
   */
  export async function glob(input: Scope & { pattern: string }): Promise<Result> {
    const none = { output: NONE, metadata: { count: 0, truncated: false } }
    const where = place(input.base)
    const rg = input.rg ?? program()
    if (!where || where.target !== ".") return none
    if (!rg) throw missing()
    const args = ["--no-config", "--files", "--hidden", `--glob=${input.pattern}`, "--glob=!**/.git/**"]
    args.push(...excludes(where.cwd, input.exclude), ".")
    const files: string[] = []
    await ripgrep(rg, args, where.cwd, (row) => {
      const file = path.resolve(where.cwd, row)
      if (input.hidden(file)) return false
      files.push(file)
      return files.length > LIMIT
    })
    if (!files.length) return none
    const truncated = files.length > LIMIT
    const shown = files.slice(0, LIMIT)
    const times = mtimes(shown)
    shown.sort((a, b) => times.get(b)! - times.get(a)! || (a < b ? -1 : a > b ? 1 : 0))
    const out = [...shown]
    if (truncated)
      out.push(
        "",
        `(Results are truncated: showing first ${LIMIT} results. Consider using a more specific path or pattern.)`,
      )
    return { output: out.join("\n"), metadata: { count: shown.length, truncated } }
  }

  /**
   * Where ripgrep runs: the real folder (links and `/proc/…/root` spellings resolved), searching `.`, or a file's real
   * folder searching the file. Undefined when the path does not exist.
   */
  function place(base: string): { cwd: string; target: string } | undefined {
    try {
      const real = fs.realpathSync(base)
      const stat = fs.statSync(real)
      return stat.isDirectory() ? { cwd: real, target: "." } : { cwd: path.dirname(real), target: path.basename(real) }
    } catch {
      return undefined
    }
  }

  /** Exclusion globs, anchored to `cwd`, for the entries below it (a folder's names grouped, as `SecurityRipgrep` does). */
  export function excludes(cwd: string, entries: readonly { path: string; dir: boolean }[]): string[] {
    const groups = new Map<string, { files: Set<string>; dirs: Set<string> }>()
    for (const e of entries) {
      if (e.path === cwd || !SecurityPath.isInside(e.path, cwd)) continue
      const rel = path.relative(cwd, e.path).split(path.sep)
      const parent = rel
        .slice(0, -1)
        .map((p) => SecurityRipgrep.escape(p) + "/")
        .join("")
      let group = groups.get(parent)
      if (!group) groups.set(parent, (group = { files: new Set(), dirs: new Set() }))
      ;(e.dir ? group.dirs : group.files).add(SecurityRipgrep.escape(rel.at(-1)!))
    }
    const either = (names: Set<string>) => (names.size === 1 ? [...names][0] : `{${[...names].sort().join(",")}}`)
    const out: string[] = []
    for (const [parent, { files, dirs }] of groups) {
      out.push(`--glob=!/${parent}${either(new Set([...files, ...dirs]))}`)
      if (dirs.size) out.push(`--glob=!/${parent}${either(dirs)}/**`)
    }
    // Too many for ripgrep's glob size limit: none (the filter still drops every file they name).
    return out.length > MAX_EXCLUDES ? [] : out.map((g) => g.replace(/[\n\r]/g, "?"))
  }

  /** ripgrep's text or base64 `bytes` (a name or line that is not UTF-8). */
  function decode(value: unknown): string | undefined {
    if (!value || typeof value !== "object") return undefined
    const v = value as { text?: unknown; bytes?: unknown }
    if (typeof v.text === "string") return v.text
    if (typeof v.bytes === "string") return Buffer.from(v.bytes, "base64").toString("utf8")
    return undefined
  }

  function mtimes(files: string[]): Map<string, number> {
    const out = new Map<string, number>()
    for (const f of files) {
      if (out.has(f)) continue
      try {
        out.set(f, fs.statSync(f).mtimeMs)
      } catch {
        out.set(f, 0)
      }
    }
    return out
  }

  const missing = () => new SecurityError.SearchFailed({ reason: "no ripgrep was found (on PATH nor OpenCode's own)" })

  /**
   * Runs ripgrep, handing each output line to `row` until it returns true (then stops it: true is returned). Done when
   * its output has ended, not when the process has: a busy machine can report the exit before the last output. A start
   * the runtime's event loop failed to register (`LoopError`) is tried once more when no line was handed on yet (the
   * search changes nothing); the first child's output is read to its end, unused, so it is not left blocked.
   *
   * @example
   * await SecuritySearch.ripgrep("rg", ["--files", "."], "/repo", (line) => (console.log(line), false)) // false
   */
  export function ripgrep(
    rg: string,
    args: string[],
    cwd: string,
    row: (line: string) => boolean,
    start: typeof spawn = spawn,
    retried = false,
  ): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const proc = start(rg, args, { cwd, stdio: ["ignore", "pipe", "ignore"] })
      let buffer = ""
      let stopped = false
      let handed = false
      const stop = () => {
        stopped = true
        proc.kill()
        resolve(true)
      }
      proc.stdout!.setEncoding("utf8")
      proc.stdout!.on("data", (chunk: string) => {
        if (stopped) return
        buffer += chunk
        const lines = buffer.split("\n")
        buffer = lines.pop() ?? ""
        for (const line of lines) {
          if (!line) continue
          handed = true
          if (row(line)) return stop()
        }
      })
      proc.stdout!.on("end", () => {
        if (stopped) return
        if (buffer && row(buffer)) return stop()
        resolve(false)
      })
      // Not started (gone, not executable, no process left to fork): no answer at all, not an empty one.
      proc.on("error", (error) => {
        if (stopped) return resolve(true)
        if (!retried && !handed && LoopError.is(error)) {
          stopped = true
          proc.stdout!.resume()
          return ripgrep(rg, args, cwd, row, start, true).then(resolve, reject)
        }
        reject(new SecurityError.SearchFailed({ reason: `ripgrep (${rg}) could not run: ${error.message}` }))
      })
    })
  }
}
