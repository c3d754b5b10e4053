import type { Outside } from "../host"
import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import os from "os"
import path from "path"
import fsSync, { readFileSync, realpathSync, writeFileSync } from "fs"
import { LocalSeal } from "../learning/seal"

/**
 * A real temporary directory for a test, removed when disposed.
 *
 * @example
 * await using dir = await tmpdir({ ".opencode/task/a.md": "# A" })
 * dir.path // "/tmp/ocb-test-…"
 */
export async function tmpdir(files: Record<string, string | Uint8Array> = {}) {
  const root = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), "ocb-test-")))
  await write(root, files)
  return {
    path: root,
    file: (rel: string) => path.join(root, rel),
    write: (more: Record<string, string | Uint8Array>) => write(root, more),
    [Symbol.asyncDispose]: () => fs.rm(root, { recursive: true, force: true }),
  }
}

async function write(root: string, files: Record<string, string | Uint8Array>) {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel)
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, content)
  }
}

/** Markdown with YAML frontmatter built from an object (values written as JSON, which YAML accepts). */
export function md(front: Record<string, unknown>, body = ""): string {
  const lines = Object.entries(front).map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
  return `---\n${lines.join("\n")}\n---\n${body}`
}

/**
 * Runs `script` in a fresh Bun process, killed after `killAfterMs`: for work that may block its thread (a pattern
 * that backtracks cannot be interrupted by the test runner). Resolves with the exit code (null when killed) and
 * what the script printed.
 *
 * @example
 * const { code, out } = await isolated(`console.log(1 + 1)`, 25_000) // { code: 0, out: "2\n" }
 */
export async function isolated(script: string, killAfterMs: number): Promise<{ code: number | null; out: string }> {
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" })
  const timer = setTimeout(() => proc.kill(), killAfterMs)
  try {
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    return { code: proc.signalCode ? null : code, out }
  } finally {
    clearTimeout(timer)
  }
}

/** One case of `isolatedCases`: `call` (an expression of `text`) on the text `input` (an expression of `N`). */
export type IsolatedCase = { name: string; input: string; call: string; expected: unknown }

/**
 * One test per case, each run by `isolated` in its own process (ended after 25 s) with `prelude` (imports, helpers)
 * and `N` defined: for adversarial inputs that may block a thread. What the case prints is compared with `expected`.
 *
 * @example
 * isolatedCases("slug of long runs", [`import { ResourceParse } from "…"`], 1e6, [{ name: "…", input: '"a".repeat(N)', call: "ResourceParse.slug(text)", expected: "a".repeat(1e6) }])
 */
export function isolatedCases(title: string, prelude: string[], n: number, cases: IsolatedCase[]) {
  describe(title, () => {
    for (const c of cases)
      test(
        c.name,
        async () => {
          const script = [
            ...prelude,
            `const N = ${n}`,
            `const text = ${c.input}`,
            `console.log(JSON.stringify(${c.call}))`,
          ]
          const { code, out } = await isolated(script.join("\n"), 25_000)
          expect({ code, result: code === 0 ? JSON.parse(out) : out }).toEqual({ code: 0, result: c.expected })
        },
        { timeout: 30_000 },
      )
  })
}

/**
 * A `Host.exclusive` that records where its hold starts and ends in `spans` ("hold", "release", and "let go", "hold
 * again" around what runs outside it) and runs the work.
 *
 * @example
 * const spans: string[] = []
 * const host: Host = { directory, worktree, log, exclusive: recordingExclusive(spans) }
 */
export function recordingExclusive(spans: string[]) {
  return async <T>(work: (outside: Outside) => Promise<T>): Promise<T> => {
    spans.push("hold")
    try {
      return await work(async (f) => {
        spans.push("let go")
        try {
          return await f()
        } finally {
          spans.push("hold again")
        }
      })
    } finally {
      spans.push("release")
    }
  }
}

/**
 * A project in a folder whose name is not UTF-8 (`caf\xe9`, Latin-1) inside `base`: made by byte paths, which is the
 * only way Bun can name it. `path` is what Bun reads for it (`process.cwd()` there, the directory OpenCode hands a
 * plugin): `caf\ufffd`, a path that names no folder. `twin()` makes that path exist (an empty folder, as an older
 * version's `discover` made it); `entries()` lists `base` by bytes.
 *
 * @example
 * const p = notUtf8Project(dir.path, { ".env": "S=1\n" })
 * p.path // "/tmp/ocb-test-…/caf\ufffd"
 */
export function notUtf8Project(base: string, files: Record<string, string> = {}) {
  const bytes = Buffer.concat([Buffer.from(base + "/"), Buffer.from([0x63, 0x61, 0x66, 0xe9])])
  const at = (rel: string) => Buffer.concat([bytes, Buffer.from("/" + rel)])
  fsSync.mkdirSync(bytes)
  for (const [rel, content] of Object.entries(files)) {
    const parts = rel.split("/")
    for (let i = 1; i < parts.length; i++) fsSync.mkdirSync(at(parts.slice(0, i).join("/")), { recursive: true })
    fsSync.writeFileSync(at(rel), content)
  }
  return {
    bytes,
    path: bytes.toString("utf8"),
    at,
    twin: () => fsSync.mkdirSync(bytes.toString("utf8")),
    entries: () => fsSync.readdirSync(base, { encoding: "buffer" }).map((e) => Buffer.from(e)),
  }
}

/**
 * Rewrites a local state file written as a fixture as the built-ins write it: sealed (`LocalSeal`) for its project and
 * `kind`. Returns the sealed text.
 *
 * @example
 * sealFile(dir.file(".opencode/builtins-local/learnings.json"), "learnings")
 */
export function sealFile(file: string, kind: LocalSeal.Kind): string {
  const text = LocalSeal.seal(file, kind, readFileSync(file, "utf8"))
  writeFileSync(file, text)
  return text
}
