import { parse, parseAsync, type SgRoot } from "@ast-grep/napi"
import fs from "fs/promises"
import { readFileSync, realpathSync } from "fs"
import path from "path"
import { errorMessage } from "../util/error"
import { PluginAnalysis } from "./analyze"
import { AuditDeps } from "./deps"
import { AuditLink } from "./link"
import { AuditReach } from "./reach"
import { AuditRules } from "./rules"

/**
 * Audits every JavaScript/TypeScript file of a plugin directory (see analyze.ts), then resolves the values that flow
 * between its modules (link.ts). Declaration files (`.d.ts`), `.git` and `node_modules` folders are skipped; symbolic
 * links inside the plugin are not followed; files over `maxFileBytes` are skipped and listed. A file that cannot be
 * read or parsed is listed, never fatal.
 *
 * With `includeDependencies`, the packages the plugin loads are audited too, found as Node finds them (deps.ts): the
 * `dependencies` and `optionalDependencies` of its package.json and, transitively, of theirs, plus any package its
 * code (or a dependency's) imports by a constant name — peers included — each looked up from the importing folder
 * upward, so packages npm hoisted beside the plugin are included. Every code file of such a package is audited.
 *
 * Files are parsed two at a time in native threads while the previous one is analysed, and the syntax trees of at
 * most `memoryBudget` bytes of source are alive at once (a tree takes ~25 bytes per byte of source; native memory is
 * only returned once the JavaScript wrappers are collected, so the audit collects them itself).
 *
 * @example
 * const report = await PluginAudit.run("/tmp/pkg")
 * report.counts.critical // 0
 */
export namespace PluginAudit {
  export const MAX_FILE_BYTES = 20 * 1024 * 1024
  export const MEMORY_BUDGET = 4 * 1024 * 1024
  /** Files at least this large are parsed on the main thread (see `start`). */
  const POOL_MAX_BYTES = 512 * 1024
  /** Native node wrappers (~1 KB each until collected) a file's analysis may create before the audit collects. */
  const WRAPPERS_BETWEEN_COLLECTIONS = 40_000

  export type Dependency = {
    name: string
    version: string
    /** The package's folder, relative to the audited directory. */
    path: string
    files: number
    /** Compiled native files it ships (`.node`, shared libraries, executables): not analysed. */
    native: number
    /** Declared in a package.json, or only imported by code. */
    via: "package.json" | "import"
  }

  export type Report = {
    target: string
    dir: string
    filesScanned: number
    findings: PluginAnalysis.Finding[]
    counts: Record<PluginAnalysis.Severity, number>
    skipped: { file: string; reason: string }[]
    /**
     * Compiled native files of the plugin (and of the dependencies audited): code the audit cannot read. Each package
     * holding some has a `native-code` finding.
     */
    native: { file: string; bytes: number }[]
    /** With includeDependencies: the packages audited, and declared ones that are not installed. */
    dependencies?: Dependency[]
    missing?: { name: string; from: string; optional: boolean }[]
    /** Without includeDependencies: the packages the audited code imports, whose code was not audited. */
    unaudited?: string[]
    /**
     * A package fetched by name (the CLI's npm route, `AuditTarget.resolve`): the registry npm asked for it and the
     * tarball audited, so a registry the user does not install from shows.
     */
    fetched?: { registry?: string; tarball?: string }
    /**
     * Findings in files no entry point reaches (reach.ts): each such finding has `notLoaded`; `counts` includes them,
     * these counts are theirs alone, and the risk line leaves them out. Absent when every file counts as loaded.
     */
    notLoaded?: { counts: Record<PluginAnalysis.Severity, number>; files: number; entries: string[] }
  }

  export type Options = {
    label?: string
    includeDependencies?: boolean
    maxFileBytes?: number
    /** Bytes of source whose syntax trees may be alive at once (one larger file is parsed alone). */
    memoryBudget?: number
    /** Files parsed at once in native threads. */
    concurrency?: number
    /**
     * The folder is a package as the registry serves it (the npm route of the CLI), not a checkout: npm runs no
     * `prepare` script when it installs such a package, so that script is not reported.
     */
    fromRegistry?: boolean
  }

  /**
   * A finding per install-time script of the package in `folder` (`AuditDeps.INSTALL_SCRIPTS`): npm runs it with the
   * user's shell on `npm install`, before the plugin is ever loaded. The files it names are audited like any other.
   * `prepare` counts for the audited folder itself (`npm install` there runs it, and so does installing it from git
   * or a folder) and for a dependency only when `prepare` says so (declared from git or a folder: see
   * AuditDeps.preparesOnInstall); npm does not run it for a package installed from the registry or a tarball.
   */
  function installFindings(
    folder: string,
    rel: (file: string) => string,
    prepare: "root" | "dependency" | false,
  ): PluginAnalysis.Finding[] {
    const file = path.join(folder, "package.json")
    let text: string
    try {
      text = readFileSync(file, "utf8")
    } catch {
      return []
    }
    const lines = text.split("\n")
    const when = (name: string) =>
      name !== "prepare"
        ? "when the package is installed"
        : prepare === "root"
          ? "on `npm install` in this folder and when the package is installed from git or a local folder, not from the registry"
          : "when npm installs the package from git or a local folder, as it is declared"
    return AuditDeps.installScripts(text, { prepare: prepare !== false }).map((s) => ({
      severity: "high" as const,
      rule: "install-script",
      message: `runs \`${s.command.length > 120 ? s.command.slice(0, 117) + "..." : s.command}\` with the shell ${when(s.name)} (the "${s.name}" script)`,
      file: rel(file),
      line: s.line,
      column: s.column,
      snippet: PluginAnalysis.snippet(lines[s.line - 1] ?? "", s.column),
    }))
  }

  /** A file to audit; `lang` when its name does not tell it (a script without an extension). */
  type Task = { file: string; size: number; lang?: string }

  /**
   * Audits `dir`; `label` names the target in the report.
   *
   * @example
   * const report = await PluginAudit.run("/tmp/plugin", { includeDependencies: true })
   */
  export async function run(dir: string, options: Options = {}): Promise<Report> {
    const root = safeRealpath(dir)
    const maxBytes = options.maxFileBytes ?? MAX_FILE_BYTES
    const budget = options.memoryBudget ?? MEMORY_BUDGET
    const concurrency = Math.max(1, options.concurrency ?? 2)
    const skipped: Report["skipped"] = []
    const tasks: Task[] = []
    const fileSet = new Set<string>()
    const rel = (file: string) => path.relative(root, file).split(path.sep).join("/") || "."

    const addFile = (file: string, lang?: string) => {
      if (fileSet.has(file)) return false
      fileSet.add(file)
      tasks.push({ file, size: AuditDeps.size(file), ...(lang ? { lang } : {}) })
      return true
    }
    // Compiled native files by package folder (code the audit cannot read, listed and reported per package).
    const nativeFiles = new Map<string, string[]>()
    const addFiles = async (folder: string) => {
      let count = 0
      const { code, native } = await codeFiles(folder)
      if (native.length) nativeFiles.set(folder, native)
      for (const { file, lang } of code) if (addFile(file, lang)) count++
      // Scripts the package runs by name whatever their name looks like: its `bin` and `main` files.
      for (const file of AuditDeps.entryScripts(folder, AuditDeps.manifest(folder) ?? {}))
        if (loadsAsScript(file) && addFile(file, "js")) count++
      return count
    }
    await addFiles(root)

    // Dependencies, as Node resolves them.
    const packages = new Map<string, Dependency>()
    const missing: NonNullable<Report["missing"]> = []
    const lookups = new Map<string, string | undefined>()
    const findPackage = (name: string, from: string) => {
      const key = `${from}\u0000${name}`
      if (!lookups.has(key)) lookups.set(key, AuditDeps.findPackage(name, from))
      return lookups.get(key)
    }
    // Dependencies declared from git or a local folder: npm runs their `prepare` script too.
    const prepared = new Set<string>()
    const addPackage = async (folder: string, via: Dependency["via"]) => {
      if (packages.has(folder) || folder === root) return
      const m = AuditDeps.manifest(folder) ?? {}
      const entry: Dependency = {
        name: m.name ?? path.basename(folder),
        version: m.version ?? "",
        path: rel(folder),
        files: 0,
        native: 0,
        via,
      }
      packages.set(folder, entry)
      entry.files = await addFiles(folder)
      entry.native = nativeFiles.get(folder)?.length ?? 0
      await addDeclared(folder, m)
    }
    const addDeclared = async (folder: string, m: AuditDeps.Manifest) => {
      for (const dep of AuditDeps.declared(m)) {
        const found = findPackage(dep.name, folder)
        const spec = m.optionalDependencies?.[dep.name] ?? m.dependencies?.[dep.name]
        if (found && typeof spec === "string" && AuditDeps.preparesOnInstall(spec)) prepared.add(found)
        if (found) await addPackage(found, "package.json")
        else missing.push({ name: dep.name, from: m.name ?? rel(folder), optional: dep.optional })
      }
    }
    if (options.includeDependencies) await addDeclared(root, AuditDeps.manifest(root) ?? {})

    // Module names in code → audited files, for values that cross modules.
    const manifests = new Map<string, AuditDeps.Manifest>()
    const probed = new Map<string, boolean>()
    const onDisk = {
      has: (file: string) => {
        if (!probed.has(file)) probed.set(file, fileSet.has(file) || AuditDeps.isFile(file))
        return probed.get(file)!
      },
    }
    // `#name` (package.json `imports`) and tsconfig `paths` aliases: files of the code itself, or a package.
    const alias = AuditDeps.aliases()
    const resolver = (from: string) => (spec: string) => {
      if (spec.startsWith(".") || spec.startsWith("/")) return AuditDeps.resolveFile(spec, from, fileSet)
      const targets = alias(spec, from)
      for (const target of targets ?? []) {
        if (!path.isAbsolute(target)) return resolvePackage(target, from)
        const file = AuditDeps.resolveFile(target, from, fileSet)
        if (file) return file
      }
      // A tsconfig alias that names no file may still be a package of that name; a `#name` never is.
      if (targets && spec.startsWith("#")) return undefined
      return resolvePackage(spec, from)
    }
    const resolvePackage = (spec: string, from: string) => {
      if (!options.includeDependencies) return undefined
      const name = AuditDeps.packageName(spec)
      if (!name) return undefined
      const folder = findPackage(name, path.dirname(from))
      if (!folder || folder === root) return undefined
      // The package may not be walked yet (found through this very import): probe the disk.
      if (!manifests.has(folder)) manifests.set(folder, AuditDeps.manifest(folder) ?? {})
      const sub = spec.slice(name.length)
      return AuditDeps.entry(folder, manifests.get(folder)!, sub ? "." + sub : ".", onDisk)
    }

    const modules = new Map<string, AuditLink.Module>()
    const languages = new Map<string, string>()
    const known = AuditLink.exportsOf(modules)
    // Dependencies first, so that an import is resolved when its file is analysed (see link.ts).
    let ordered = 0
    const reorder = async () => {
      const pending = tasks.slice(ordered)
      tasks.length = ordered
      tasks.push(...(await dependencyOrder(pending, resolver)))
      ordered = tasks.length
    }
    await reorder()
    let next = 0
    let inflight = 0
    let unfreed = 0
    // A parsed file is handed over in a box that is emptied once analysed: the promise and the loop's variables
    // would otherwise keep the last tree alive.
    type Box = { root?: SgRoot; source?: string; error?: Error }
    const window: { task: Task; parsed: Promise<Box> }[] = []
    const start = (task: Task, lang: string) => {
      inflight += task.size
      // Large files are parsed on this thread: memory a native thread allocated stays with that thread's malloc arena
      // after it is freed, so large trees built in the pool would each keep their size resident.
      const inPool = task.size < POOL_MAX_BYTES
      const failed = (error: unknown): Box => ({ error: error instanceof Error ? error : new Error(String(error)) })
      // Read here and handed to the pool at once: a continuation after an asynchronous read would only run once this
      // thread is done analysing the file before, and the pool would sit idle meanwhile.
      let parsed: Promise<Box>
      try {
        const source = readFileSync(task.file, "utf8")
        parsed = inPool
          ? parseAsync(lang as any, source).then((root): Box => ({ root, source }))
          : Promise.resolve().then((): Box => ({ root: parse(lang as any, source), source }))
        parsed = parsed.catch(failed)
      } catch (error) {
        parsed = Promise.resolve(failed(error))
      }
      window.push({ task, parsed })
    }
    const analyzeBox = async (task: Task, box: Box): Promise<PluginAnalysis.Result | Error> => {
      const { root: tree, source, error } = box
      box.root = box.source = undefined
      if (error || !tree || source === undefined) return error ?? new Error("not parsed")
      try {
        const steps = PluginAnalysis.analysis(rel(task.file), tree.root(), source, {
          resolve: resolver(task.file),
          settle: known.settle,
          constant: known.constant,
        })
        // A large file creates many node wrappers: let them be freed between rounds.
        let effort = 0
        for (let step = steps.next(); ; step = steps.next()) {
          if (step.done) return step.value
          effort += step.value
          if (effort > WRAPPERS_BETWEEN_COLLECTIONS) {
            await collect()
            effort = 0
          }
        }
      } catch (e) {
        return e instanceof Error ? e : new Error(String(e))
      }
    }
    while (true) {
      while (next < tasks.length && window.length < concurrency) {
        const task = tasks[next]
        const lang = task.lang ?? PluginAnalysis.languageOf(task.file)
        if (!lang) {
          next++
          continue
        }
        if (task.size > maxBytes) {
          skipped.push({ file: rel(task.file), reason: `over ${Math.round(maxBytes / 1024 / 1024)} MB` })
          next++
          continue
        }
        if (task.size < 0) {
          skipped.push({ file: rel(task.file), reason: "cannot be read" })
          next++
          continue
        }
        if (inflight + unfreed + task.size > budget) {
          if (window.length) break
          if (unfreed) {
            await collect()
            unfreed = 0
          }
        }
        start(task, lang)
        next++
      }
      const head = window.shift()
      if (!head) break
      const box = await head.parsed
      const outcome = await analyzeBox(head.task, box)
      inflight -= head.task.size
      unfreed += head.task.size
      if (outcome instanceof Error) {
        skipped.push({ file: rel(head.task.file), reason: errorMessage(outcome) })
        continue
      }
      modules.set(head.task.file, { rel: rel(head.task.file), result: outcome })
      languages.set(head.task.file, head.task.lang ?? PluginAnalysis.languageOf(head.task.file) ?? "js")
      // A relative require of a file without a code extension loads that very file as JavaScript (Node tries the
      // exact name first, and reads any extension but .json and .node as JavaScript): audit it too.
      for (const spec of outcome.imports) {
        if (!spec.startsWith("./") && !spec.startsWith("../")) continue
        const file = path.resolve(path.dirname(head.task.file), spec)
        if (fileSet.has(file) || !loadsAsScript(file) || !AuditDeps.isPlainFile(file)) continue
        // Only inside what is audited, links resolved: a name climbing out (`../../../../etc/passwd`) or through a
        // linked folder is not read.
        const real = safeRealpath(file)
        if ([root, ...packages.keys()].some((folder) => real.startsWith(folder + path.sep))) addFile(file, "js")
      }
      if (options.includeDependencies)
        for (const spec of outcome.imports) {
          const name = AuditDeps.packageName(spec)
          const folder = name && findPackage(name, path.dirname(head.task.file))
          if (folder && !packages.has(folder) && folder !== root) await addPackage(folder, "import")
        }
      if (tasks.length > ordered) await reorder()
    }

    await passInput(
      modules,
      languages,
      (file) => ({ resolve: resolver(file), settle: known.settle, constant: known.constant }),
      (file, spec) => resolver(file)(spec),
    )

    // link.ts asks for one file's lines at a time: only the last file read is kept.
    let lineCache: { file: string; lines: string[] } | undefined
    const sourceLines = (file: string) => {
      if (lineCache?.file !== file) {
        let text = ""
        try {
          text = readFileSync(file, "utf8")
        } catch {}
        lineCache = { file, lines: text.split("\n") }
      }
      return lineCache.lines
    }
    const findings: PluginAnalysis.Finding[] = []
    for (const mod of modules.values()) findings.push(...mod.result.findings)
    // What runs before any of this code is loaded: the package manager runs install scripts by itself.
    findings.push(...installFindings(root, rel, options.fromRegistry ? false : "root"))
    for (const folder of packages.keys())
      findings.push(...installFindings(folder, rel, prepared.has(folder) ? "dependency" : false))
    findings.push(...AuditLink.link(modules, sourceLines))
    // Native code shipped by a package: one finding per package, naming its files (relative to the package).
    for (const [folder, files] of nativeFiles)
      findings.push({
        ...AuditRules.nativeFiles(files.map((f) => path.relative(folder, f).split(path.sep).join("/"))),
        file: rel(files[0]),
        line: 1,
        column: 1,
        snippet: "",
      })
    const counts = { critical: 0, high: 0, medium: 0, low: 0 }
    for (const f of findings) counts[f.severity]++
    // Which files can be loaded at run time: the rest are listed apart (reach.ts).
    const edges = new Map<string, string[]>()
    const opaque = new Set<string>()
    const byRel = new Map([...modules].map(([file, mod]) => [mod.rel, file]))
    for (const file of fileSet) if (!modules.has(file)) opaque.add(file)
    const folders = [root, ...packages.keys()].sort((a, b) => b.length - a.length)
    const ownManifests = new Map(folders.map((folder) => [folder, AuditDeps.manifest(folder)]))
    for (const [file, mod] of modules) {
      const list: string[] = []
      const resolve = resolver(file)
      for (const spec of mod.result.imports) {
        let target = resolve(spec)
        const name = AuditDeps.packageName(spec)
        // The package importing itself by its own name (the innermost package holding the file).
        const own = !target && name ? folders.find((f) => file.startsWith(f + path.sep)) : undefined
        if (own && name && ownManifests.get(own)?.name === name) {
          const sub = spec.length > name.length ? "." + spec.slice(name.length) : "."
          target = AuditDeps.entry(own, ownManifests.get(own)!, sub, fileSet)
          if (!target) opaque.add(file)
        }
        if (target && fileSet.has(target)) list.push(target)
        // A relative folder with its own package.json loads that package's `main` (Node reads it before `index`).
        if (spec.startsWith(".") || spec.startsWith("/")) {
          const folder = path.resolve(path.dirname(file), spec)
          const m = AuditDeps.isFile(path.join(folder, "package.json")) ? AuditDeps.manifest(folder) : undefined
          if (m) {
            const main = AuditDeps.entry(folder, m, ".", fileSet)
            if (main && fileSet.has(main)) list.push(main)
            else if (!target) opaque.add(file)
          }
        }
      }
      edges.set(file, list)
      if (mod.result.deferred.some((d) => d.kind === "module")) opaque.add(file)
    }
    for (const f of findings) if (AuditReach.OPAQUE.has(f.rule) && byRel.has(f.file)) opaque.add(byRel.get(f.file)!)
    const reach = AuditReach.loaded({
      files: fileSet,
      packages: folders.map((folder) => ({ folder, manifest: ownManifests.get(folder) })),
      edges,
      opaque,
    })
    const notLoaded = reach && {
      counts: AuditReach.mark(findings, (file) => !byRel.has(file) || reach.loaded.has(byRel.get(file)!)),
      files: fileSet.size - reach.loaded.size,
      entries: reach.entries.map(rel).sort(),
    }
    const order = (s: PluginAnalysis.Severity) => PluginAnalysis.SEVERITIES.indexOf(s)
    findings.sort(
      (a, b) =>
        order(a.severity) - order(b.severity) || a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column,
    )
    const report: Report = {
      target: options.label ?? dir,
      dir,
      filesScanned: modules.size,
      findings,
      counts,
      skipped,
      native: [...nativeFiles.values()].flat().map((file) => ({ file: rel(file), bytes: AuditDeps.size(file) })),
    }
    if (notLoaded && Object.values(notLoaded.counts).some((n) => n > 0)) report.notLoaded = notLoaded
    if (options.includeDependencies) {
      report.dependencies = [...packages.values()].sort((a, b) => a.path.localeCompare(b.path))
      report.missing = missing
    } else {
      // A package importing itself by its own name (zod's `import "zod"`) is audited already.
      const own = AuditDeps.manifest(root)?.name
      const names = new Set<string>()
      for (const [file, mod] of modules)
        for (const spec of mod.result.imports) {
          // An alias stands for the code's own files (not a package), or for the package it names.
          const targets = alias(spec, file)
          for (const target of targets ? targets.filter((t) => !path.isAbsolute(t)) : [spec]) {
            const name = AuditDeps.packageName(target)
            if (name && name !== own) names.add(name)
          }
        }
      report.unaudited = [...names].sort()
    }
    return report
  }

  /**
   * `tasks` with each file after the files it imports (cycles broken where they close), from Bun's import scanner —
   * the analysis can then resolve an import to what the imported module exports. Without Bun, the order is kept.
   */
  async function dependencyOrder(
    tasks: Task[],
    resolver: (from: string) => (spec: string) => string | undefined,
  ): Promise<Task[]> {
    const Transpiler = (globalThis as { Bun?: { Transpiler: typeof Bun.Transpiler } }).Bun?.Transpiler
    if (!Transpiler || tasks.length < 2) return tasks
    const scanners = new Map<string, InstanceType<typeof Bun.Transpiler>>()
    const scanner = (file: string) => {
      const loader = /\.tsx$/.test(file) ? "tsx" : /\.[cm]?ts$/.test(file) ? "ts" : /\.jsx$/.test(file) ? "jsx" : "js"
      if (!scanners.has(loader)) scanners.set(loader, new Transpiler({ loader }))
      return scanners.get(loader)!
    }
    const byFile = new Map(tasks.map((t) => [t.file, t]))
    const edges = new Map<string, string[]>()
    for (const task of tasks) {
      if (task.size < 0 || task.size > MAX_FILE_BYTES) continue
      const source = await fs.readFile(task.file, "utf8").catch(() => "")
      let specs: { path: string }[] = []
      try {
        specs = scanner(task.file).scanImports(source)
      } catch {
        continue
      }
      const resolve = resolver(task.file)
      const targets: string[] = []
      for (const { path: spec } of specs) {
        const target = resolve(spec)
        if (target && byFile.has(target) && target !== task.file) targets.push(target)
      }
      edges.set(task.file, targets)
    }
    const out: Task[] = []
    const state = new Map<string, 1 | 2>()
    for (const task of tasks) {
      if (state.has(task.file)) continue
      // Iterative depth-first post-order.
      const stack: [string, number][] = [[task.file, 0]]
      state.set(task.file, 1)
      while (stack.length) {
        const top = stack[stack.length - 1]
        const next = edges.get(top[0])?.[top[1]++]
        if (next === undefined) {
          stack.pop()
          state.set(top[0], 2)
          out.push(byFile.get(top[0])!)
        } else if (!state.has(next)) {
          state.set(next, 1)
          stack.push([next, 0])
        }
      }
    }
    return out
  }

  /** Rounds of `passInput` (a module handing the input to a third one takes one more). */
  const MAX_PASS_ROUNDS = 8

  /**
   * The plugin input a module passes to a function or class another module exports (`new TestAgent(ctx)` with
   * `TestAgent` imported, `analyze.ts` `passes`): that module is analysed again with the parameter bound to it
   * (`Options.entries`), through re-exports (`export { A } from`, `export *`), so `this.ctx.$\`…\`` in the class's
   * methods is the shell. Only modules that receive the input are analysed again.
   */
  async function passInput(
    modules: Map<string, AuditLink.Module>,
    languages: Map<string, string>,
    options: (file: string) => PluginAnalysis.Options,
    resolve: (file: string, spec: string) => string | undefined,
  ) {
    // The modules that may use the shell (SHELL_USE) or import one that may, found once, only when some input is passed.
    let shell: Set<string> | undefined
    const usesShell = (file: string): boolean => {
      if (!shell) {
        shell = new Set()
        const importers = new Map<string, string[]>()
        const queue: string[] = []
        for (const [from, mod] of modules) {
          let source = ""
          try {
            source = readFileSync(from, "utf8")
          } catch {}
          if (PluginAnalysis.SHELL_USE.test(source)) queue.push(from)
          for (const spec of mod.result.imports) {
            const target = resolve(from, spec)
            if (target && target !== from && modules.has(target))
              importers.set(target, [...(importers.get(target) ?? []), from])
          }
        }
        while (queue.length) {
          const next = queue.pop()!
          if (shell.has(next)) continue
          shell.add(next)
          queue.push(...(importers.get(next) ?? []))
        }
      }
      return shell.has(file)
    }
    const entries = new Map<string, Map<string, NonNullable<PluginAnalysis.Options["entries"]>[number]>>()
    const key = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === "symbol" ? "\u0000()" : x))
    /** The modules and export names a reference stands for, through re-exports. */
    const targets = (ref: { ref: string; name: string }, depth = 0, out: [string, string][] = []) => {
      const mod = modules.get(ref.ref)
      if (!mod || depth > 12 || out.length > 16) return out
      out.push([ref.ref, ref.name])
      const exports = mod.result.exports
      const entry = Object.hasOwn(exports, ref.name) ? exports[ref.name] : undefined
      for (const v of entry?.values ?? []) {
        const head = "path" in v && v.path.length === 1 ? v.path[0] : undefined
        if (typeof head === "object" && head !== null && "ref" in head && !head.key) targets(head, depth + 1, out)
      }
      if (!entry) for (const star of mod.result.stars) targets({ ref: star, name: ref.name }, depth + 1, out)
      return out
    }
    for (let round = 0; round < MAX_PASS_ROUNDS; round++) {
      const changed = new Set<string>()
      for (const mod of modules.values())
        for (const pass of mod.result.passes)
          for (const [file, name] of targets(pass.ref)) {
            // The input itself matters only where `$` is written; its `$` passed as a value, anywhere.
            const member =
              "path" in pass.value && pass.value.path.length > 1 && !AuditRules.isInto(pass.value.path.at(-1))
            if (!member && !usesShell(file)) continue
            const list = entries.get(file) ?? new Map()
            entries.set(file, list)
            const k = key([name, pass.index, pass.value])
            if (list.has(k)) continue
            list.set(k, { name, index: pass.index, value: pass.value })
            changed.add(file)
          }
      if (!changed.size) return
      for (const file of changed) {
        const mod = modules.get(file)!
        try {
          const source = readFileSync(file, "utf8")
          const result = PluginAnalysis.analyzeTree(mod.rel, parse(languages.get(file) as any, source).root(), source, {
            ...options(file),
            entries: [...entries.get(file)!.values()],
          })
          modules.set(file, { rel: mod.rel, result })
        } catch {
          // Kept as analysed the first time.
        }
      }
      await collect()
    }
  }

  /** A file Node would load as JavaScript by its exact name although its extension does not say so. */
  function loadsAsScript(file: string): boolean {
    return !PluginAnalysis.languageOf(file) && !/\.(json|node)$/i.test(file)
  }

  /**
   * Code files under `folder`, sorted; skips `.git`, `node_modules`, declaration files and symbolic links. A file
   * without an extension is code when its first line runs it with node, bun, deno, tsx or ts-node (`#!/usr/bin/env
   * node`): `lang` says how to parse it. `native`: the compiled files among the rest (AuditDeps.isNative).
   */
  async function codeFiles(folder: string): Promise<{ code: { file: string; lang?: string }[]; native: string[] }> {
    const out: { file: string; lang?: string }[] = []
    const native: string[] = []
    const walk = async (current: string) => {
      const entries = await fs.readdir(current, { withFileTypes: true }).catch(() => [])
      for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const full = path.join(current, entry.name)
        if (entry.isDirectory()) {
          if (entry.name === ".git" || entry.name === "node_modules") continue
          await walk(full)
        } else if (!entry.isFile()) continue
        else if (PluginAnalysis.languageOf(entry.name)) out.push({ file: full })
        else if (!entry.name.includes(".")) {
          const lang = AuditDeps.shebangLanguage(full)
          if (lang) out.push({ file: full, lang })
          else if (AuditDeps.isNative(full)) native.push(full)
        } else if (AuditDeps.isNative(full)) native.push(full)
      }
    }
    await walk(folder)
    return { code: out, native }
  }

  function safeRealpath(dir: string): string {
    try {
      return realpathSync(dir)
    } catch {
      return path.resolve(dir)
    }
  }

  /**
   * Frees the native syntax trees no longer referenced: napi finalizers run on the turn after a collection, and the
   * memory they release is reclaimed by the next one. The stack is overwritten first: the collector scans it
   * conservatively, and a stale slot that still points at one node wrapper keeps that node's whole tree alive. Last,
   * glibc is asked to return the freed pages (`malloc_trim`): trees are millions of small allocations, and without it
   * the process keeps the high-water mark of every tree size it has seen, in every thread's arena.
   */
  async function collect() {
    const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun
    const node = (globalThis as { gc?: () => void }).gc
    if (!bun && !node) return
    scrub(2000)
    for (let i = 0; i < 2; i++) {
      if (bun) bun.gc(true)
      else node!()
      await new Promise((resolve) => setImmediate(resolve))
    }
    trim()
  }

  function scrub(depth: number): number {
    return depth ? scrub(depth - 1) + 1 : 0
  }

  let mallocTrim: ((pad: number) => number) | null | undefined
  /** glibc's malloc_trim through Bun's FFI; nothing elsewhere (musl, macOS, Windows, Node). */
  function trim() {
    if (mallocTrim === undefined) {
      mallocTrim = null
      if (process.platform === "linux" && (globalThis as { Bun?: unknown }).Bun) {
        try {
          const { dlopen } = require("bun:ffi") as typeof import("bun:ffi")
          const libc = dlopen("libc.so.6", { malloc_trim: { args: ["u64"], returns: "i32" } })
          mallocTrim = (pad) => libc.symbols.malloc_trim(pad) as number
        } catch {
          mallocTrim = null
        }
      }
    }
    mallocTrim?.(0)
  }
}
