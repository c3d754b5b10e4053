import path from "path"
import type { PluginAnalysis } from "./analyze"
import { AuditDeps } from "./deps"

/**
 * Which audited files a package can load at run time: the files reachable from its entry points (`main`, `module`,
 * `browser`, `bin`, every target of `exports` under every condition, OpenCode's `exports["./server"]` and
 * `exports["./tui"]` among them) through the imports the analysis resolved. Findings in the other files (shipped tests,
 * sources beside their build) are reported apart and kept out of the risk line, never dropped.
 *
 * Fail safe: every file of a package counts as loaded when the package has no package.json (a folder of loose plugin
 * files, as OpenCode loads `.opencode/plugin/*.ts`: each one is an entry), when no entry point names an audited file,
 * when it has an install script (the shell may run any file), and every file of the audit counts when a loaded file
 * loads code in a way the graph cannot follow (a computed `import()`/`require()`, a module name imported from another
 * module, eval and the other code-from-strings rules, workers, child processes, Bun's shell and spawn: each may run
 * any file by a name the analysis does not know).
 *
 * @example
 * AuditReach.testFile("src/index.test.ts") // true
 */
export namespace AuditReach {
  /** Rules whose presence in loaded code means any file may be loaded or run. */
  export const OPAQUE = new Set([
    "dynamic-import",
    "dynamic-require",
    "eval",
    "function-constructor",
    "constructor-constructor",
    "string-timer",
    "worker-eval",
    "worker",
    "vm",
    "module-compile",
    "inspector",
    "repl",
    "native-code",
    "child_process",
    "bun-spawn",
    "bun-spawnSync",
    "bun-shell",
  ])

  /**
   * Files OpenCode loads by themselves from a config folder (`.opencode/`, `~/.config/opencode/`, `OPENCODE_CONFIG_DIR`,
   * any name): `{plugin,plugins}/*.{ts,js}` (1.2.15 and 1.18.33 alike). Any file so placed counts as an entry.
   */
  export const LOCAL_PLUGIN = /[/\\]plugins?[/\\][^/\\]+\.(ts|js)$/

  /** Test files by name: `*.test.*`, `*.spec.*`, and files under `__tests__`, `__mocks__`, `test`, `tests`, `spec`. */
  export function testFile(rel: string): boolean {
    return /(^|\/)(__tests__|__mocks__|tests?|specs?)\//.test(rel) || /\.(test|spec)\.[^/]+$/.test(rel)
  }

  /** Why a file no entry point reaches is not loaded, as the report says it. */
  export function reason(rel: string): string {
    return testFile(rel) ? "test file" : "not imported from an entry point"
  }

  /** Every string target of an `exports` value (all keys, conditions and fallbacks), with its key. */
  function targets(value: unknown, out: string[] = [], depth = 0): string[] {
    if (depth > 8 || value === null || value === undefined) return out
    if (typeof value === "string") out.push(value)
    else if (Array.isArray(value)) for (const v of value) targets(v, out, depth + 1)
    else if (typeof value === "object") for (const v of Object.values(value)) targets(v, out, depth + 1)
    return out
  }

  /**
   * The entry files of the package in `folder` among `files`, or undefined when every file of it counts as loaded
   * (no package.json, an install script, no entry found).
   *
   * @example
   * AuditReach.entries("/p", { main: "src/index.ts" }, new Set(["/p/src/index.ts"])) // ["/p/src/index.ts"]
   */
  export function entries(
    folder: string,
    m: AuditDeps.Manifest | undefined,
    files: ReadonlySet<string>,
  ): string[] | undefined {
    if (!m) return undefined
    const scripts = m.scripts ?? {}
    if (AuditDeps.INSTALL_SCRIPTS.some((s) => typeof scripts[s] === "string")) return undefined
    const named: string[] = []
    for (const key of ["main", "module", "browser"] as const) {
      const v = (m as Record<string, unknown>)[key]
      if (typeof v === "string") named.push(v)
    }
    if (typeof m.bin === "string") named.push(m.bin)
    else if (m.bin && typeof m.bin === "object")
      named.push(...Object.values(m.bin).filter((v) => typeof v === "string"))
    const exported = targets(m.exports)
    if (!named.length && !exported.length) named.push("./index")
    const out = new Set<string>()
    const add = (file: string | undefined) => file && out.add(file)
    const manifestFile = path.join(folder, "package.json")
    for (const name of [...named, ...exported.filter((t) => !t.includes("*"))])
      add(AuditDeps.resolveFile("./" + name.replace(/^\.\//, ""), manifestFile, files))
    // A `*` pattern (`"./*": "./dist/*.js"`): every file under the part before the star.
    const bins = (m as { directories?: { bin?: unknown } }).directories?.bin
    const prefixes = [
      ...exported.filter((t) => t.includes("*")).map((t) => t.slice(0, t.indexOf("*"))),
      ...(typeof bins === "string" ? [bins.replace(/\/?$/, "/")] : []),
    ].map((p) => path.resolve(folder, p))
    if (prefixes.length)
      for (const file of files)
        if (prefixes.some((p) => file.startsWith(p) && file.startsWith(folder + path.sep))) add(file)
    return out.size ? [...out] : undefined
  }

  /**
   * The audited files that can be loaded and the entry files found, or undefined when all files can be loaded. `packages`: every package folder audited (the
   * plugin's own first), with its manifest; `edges`: the files each file imports by a constant name (resolved);
   * `opaque`: files that load code the graph cannot follow (see OPAQUE), `incomplete` for other such files (a module
   * name that is not resolved, a self-reference to no file).
   */
  export function loaded(input: {
    files: ReadonlySet<string>
    packages: { folder: string; manifest: AuditDeps.Manifest | undefined }[]
    edges: ReadonlyMap<string, string[]>
    opaque: ReadonlySet<string>
  }): { loaded: Set<string>; entries: string[] } | undefined {
    const { files, packages, edges, opaque } = input
    // The innermost package folder of each file (a dependency nested in the plugin's folder is its own package).
    const folders = [...packages].sort((a, b) => b.folder.length - a.folder.length)
    const byPackage = new Map<(typeof folders)[number] | undefined, Set<string>>()
    for (const file of files) {
      const pkg = folders.find((p) => file.startsWith(p.folder + path.sep))
      if (!byPackage.has(pkg)) byPackage.set(pkg, new Set())
      byPackage.get(pkg)!.add(file)
    }
    const seen = new Set<string>()
    const queue: string[] = []
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      queue.push(file)
    }
    const named: string[] = []
    for (const [pkg, own] of byPackage) {
      // Files of no package audited (cannot happen for a package folder) count, as all of a package without entries.
      const list = pkg && entries(pkg.folder, pkg.manifest, own)
      if (list) named.push(...list)
      for (const file of list ?? own) visit(file)
    }
    for (const file of files) if (LOCAL_PLUGIN.test(file)) visit(file)
    while (queue.length) {
      const file = queue.pop()!
      if (opaque.has(file)) return undefined
      for (const next of edges.get(file) ?? []) visit(next)
    }
    return seen.size >= files.size ? undefined : { loaded: seen, entries: named }
  }

  /**
   * Marks each finding in a file that cannot be loaded (`notLoaded`, the reason) and counts them apart.
   *
   * @example
   * AuditReach.mark(findings, (rel) => rel !== "src/index.test.ts") // counts of the test file's findings
   */
  export function mark(
    findings: PluginAnalysis.Finding[],
    isLoaded: (rel: string) => boolean,
  ): Record<PluginAnalysis.Severity, number> {
    const counts = { critical: 0, high: 0, medium: 0, low: 0 }
    for (const f of findings) {
      if (isLoaded(f.file)) continue
      f.notLoaded = reason(f.file)
      counts[f.severity]++
    }
    return counts
  }
}
