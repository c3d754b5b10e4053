// Preparing a patched OpenCode checkout for a build on a machine that reaches only the npm registry, and the small
// pure steps of the fork build (version checks, the embedded grammar table, test summaries).
import fs from "fs"
import path from "path"
import type { AstLanguage } from "../../packages/core/ast/languages"
import { BunLockfile } from "./lockfile"

/**
 * The fork build's preparation of an OpenCode checkout (`npm run fork`, scripts/fork.ts).
 *
 * Upstream's workspace installs packages from outside the npm registry: `@solidjs/start` from a tarball URL (through
 * the catalog) and `ghostty-web` from GitHub. Offline from those, the workspaces that need the first are removed (with
 * the workspaces depending on them), the second is pinned to its npm release, and `bun.lock` is edited to match, so
 * `bun install` keeps every other locked version.
 *
 * @example
 * const plan = ForkPrepare.plan(checkout, { "ghostty-web": "0.4.0" })
 * ForkPrepare.apply(checkout, plan, { "ghostty-web": { version: "0.4.0", integrity: "sha512-…" } })
 */
export namespace ForkPrepare {
  /** Registry releases used in place of packages npm does not serve (GitHub dependencies), by package name. */
  export const REPLACEMENTS: Record<string, string> = { "ghostty-web": "0.4.0" }

  export type Plan = {
    /** Workspace folders to remove. */
    workspaces: string[]
    /** Catalog entries to remove (root package.json and bun.lock). */
    catalog: string[]
    /** package.json files (relative) whose dependency on a replaced package becomes its registry version. */
    replace: { file: string; name: string; version: string }[]
    /** Nothing left to do: the checkout is prepared already. */
    done: boolean
  }

  const FIELDS = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"] as const

  /**
   * What the checkout needs (reads `bun.lock` and the workspaces' package.json; changes nothing).
   *
   * @example
   * ForkPrepare.plan("/src/opencode").workspaces // ["packages/console/app", "packages/console/support", …]
   */
  export function plan(checkout: string, replacements: Record<string, string> = REPLACEMENTS): Plan {
    const lock = BunLockfile.parse(fs.readFileSync(path.join(checkout, "bun.lock"), "utf8"))
    const offline = BunLockfile.offline(lock, Object.keys(replacements))
    const replace: Plan["replace"] = []
    for (const folder of Object.keys(lock.workspaces)) {
      if (offline.workspaces.includes(folder)) continue
      const file = path.join(folder, "package.json")
      const full = path.join(checkout, file)
      if (!fs.existsSync(full)) continue
      const pkg = JSON.parse(fs.readFileSync(full, "utf8"))
      for (const field of FIELDS)
        for (const [name, version] of Object.entries(replacements))
          if (pkg[field]?.[name] !== undefined && pkg[field][name] !== version) replace.push({ file, name, version })
    }
    const done = !offline.workspaces.length && !offline.catalog.length && !replace.length
    return { workspaces: offline.workspaces, catalog: offline.catalog, replace, done }
  }

  /**
   * Carries out a plan: `bun.lock` pruned consistently (`BunLockfile.prune`), the workspace folders removed, the
   * catalog entries and replaced dependency specs rewritten. The lockfile is checked before anything is written.
   */
  export function apply(checkout: string, plan: Plan, integrity: Record<string, BunLockfile.Replacement>) {
    const lockFile = path.join(checkout, "bun.lock")
    const replaced = Object.fromEntries(
      [...new Set(plan.replace.map((r) => r.name))].map((name) => {
        const r = integrity[name]
        if (!r) throw new Error(`no registry integrity for ${name}`)
        return [name, r]
      }),
    )
    const pruned = BunLockfile.prune(fs.readFileSync(lockFile, "utf8"), {
      workspaces: plan.workspaces,
      catalog: plan.catalog,
      replace: replaced,
    })
    const rootFile = path.join(checkout, "package.json")
    const root = JSON.parse(fs.readFileSync(rootFile, "utf8"))
    const catalog = root.workspaces?.catalog ?? root.catalog ?? {}
    for (const name of plan.catalog) delete catalog[name]
    const edits = new Map<string, any>()
    for (const r of plan.replace) {
      const pkg = edits.get(r.file) ?? JSON.parse(fs.readFileSync(path.join(checkout, r.file), "utf8"))
      for (const field of FIELDS) if (pkg[field]?.[r.name] !== undefined) pkg[field][r.name] = r.version
      edits.set(r.file, pkg)
    }
    fs.writeFileSync(lockFile, pruned.text)
    fs.writeFileSync(rootFile, JSON.stringify(root, null, 2) + "\n")
    for (const [file, pkg] of edits) fs.writeFileSync(path.join(checkout, file), JSON.stringify(pkg, null, 2) + "\n")
    for (const folder of plan.workspaces) fs.rmSync(path.join(checkout, folder), { recursive: true, force: true })
    return pruned
  }

  /**
   * The Bun a checkout asks for (`packageManager: "bun@1.3.14"`), checked against the one found.
   *
   * @example
   * ForkPrepare.bunMismatch("bun@1.3.14", "1.3.10") // "OpenCode asks for Bun 1.3.14; found 1.3.10"
   * ForkPrepare.bunMismatch("bun@1.3.14", "1.3.14") // undefined
   */
  export function bunMismatch(packageManager: string | undefined, found: string): string | undefined {
    const wanted = /^bun@(\d+\.\d+\.\d+)/.exec(packageManager ?? "")?.[1]
    if (!wanted) return undefined
    return wanted === found.trim() ? undefined : `OpenCode asks for Bun ${wanted}; found ${found.trim() || "none"}`
  }

  /**
   * The module the glue imports to embed the AST parser libraries in the binary: each library (copied beside it
   * under `grammars/`) imported as a file, so `bun build --compile` puts it inside the binary.
   *
   * @example
   * ForkPrepare.grammarsModule({ python: { library: "python.so", symbol: "tree_sitter_python", expando: "µ" } })
   */
  export function grammarsModule(libraries: Partial<Record<string, AstLanguage.Prebuilt>>): string {
    const names = Object.keys(libraries).sort()
    return [
      "// @ts-nocheck: library files imported as files (bun build --compile embeds them); written by `npm run fork`.",
      ...names.map(
        (name, i) =>
          `import lib${i} from ${JSON.stringify(`./grammars/${libraries[name]!.library}`)} with { type: "file" }`,
      ),
      "",
      "export default {",
      ...names.map((name, i) => {
        const { symbol, expando } = libraries[name]!
        const extra = expando ? `, expando: ${JSON.stringify(expando)}` : ""
        return `  ${JSON.stringify(name)}: { library: lib${i}, symbol: ${JSON.stringify(symbol)}${extra} },`
      }),
      "}",
      "",
    ].join("\n")
  }

  export type TestSummary = { pass: number; fail: number; skip: number; todo: number; failing: string[] }

  /**
   * Counts and failing test names from `bun test` output.
   *
   * @example
   * ForkPrepare.summary("(fail) a > b [3.00ms]\n 10 pass\n 1 fail\n").fail // 1
   */
  export function summary(output: string): TestSummary {
    const count = (word: string) => Number(new RegExp(`^\\s*(\\d+) ${word}$`, "m").exec(output)?.[1] ?? 0)
    const failing = [...output.matchAll(/^\(fail\) (.+?)(?: \[[\d.]+m?s\])?$/gm)].map((m) => m[1])
    return {
      pass: count("pass"),
      fail: count("fail"),
      skip: count("skip"),
      todo: count("todo"),
      failing: [...new Set(failing)],
    }
  }

  /**
   * The tests of pristine v1.18.3 that fail on a 2-core machine under the fork build's `bun test --timeout 30000`
   * (measured on the release commit): 11 subprocess tests that time out while other files run beside them, one whose
   * in-process `/status` request answers 500 on this machine, and two that expect a read-only file to stop a write,
   * which root ignores. A fork test failing outside this list is a new failure.
   */
  export const UPSTREAM_FAILING: readonly string[] = [
    "HttpApi Server.listen > default in-process handler does not emit Effect HTTP response logs",
    "continues loading tui config when legacy source cannot be stripped",
    "opencode acp lifecycle subprocess > stdin EOF exits cleanly",
    "opencode run (non-interactive subprocess) > --format json emits a pure error record for a rejected prompt request",
    "opencode run (non-interactive subprocess) > --format json emits parseable line-delimited JSON to stdout",
    "opencode run (non-interactive subprocess) > --format json preserves reasoning, tool, and continuation ordering",
    "opencode run (non-interactive subprocess) > --format json records partial output for an unknown stream finish",
    "opencode run (non-interactive subprocess) > exits 0 and writes the response to stdout on a successful prompt",
    "opencode run (non-interactive subprocess) > exits nonzero promptly when the model is unknown (regression for #27371)",
    "opencode run (non-interactive subprocess) > prints each completed text part in order around a tool continuation",
    "opencode run (non-interactive subprocess) > prints reasoning before text only with --thinking",
    "opencode run (non-interactive subprocess) > rejects requested permissions by default and allows them with the dangerous flag",
    "opencode run (non-interactive subprocess) > unknown stream finish preserves partial output and exits 0",
    "tool.write > error handling > throws error when OS denies write access",
  ]

  /**
   * The test file each failing test of `bun test` output belongs to (bun prints a file's path before its results).
   *
   * @example
   * ForkPrepare.failingFiles("test/a.test.ts:\n(fail) a > two [3.00ms]\n") // Map { "a > two" => "test/a.test.ts" }
   */
  export function failingFiles(output: string): Map<string, string> {
    const files = new Map<string, string>()
    let file = ""
    for (const line of output.split("\n")) {
      const header = /^(\S.*\.test\.[cm]?[jt]sx?):$/.exec(line)
      if (header) file = header[1]
      const failed = /^\(fail\) (.+?)(?: \[[\d.]+m?s\])?$/.exec(line)
      if (failed && file && !files.has(failed[1])) files.set(failed[1], file)
    }
    return files
  }
}
