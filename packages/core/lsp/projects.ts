import { existsSync } from "fs"
import fs from "fs/promises"
import path from "path"
import type { Diagnostic } from "vscode-languageserver-protocol"

/**
 * The TypeScript projects of a "solution": a `tsconfig.json` (or `jsconfig.json`) with `references` to other
 * configurations, as in `{ "files": [], "references": [{ "path": "./tsconfig.build.json" }, { "path":
 * "./tsconfig.spec.json" }] }`. TypeScript's server loads such projects lazily: opening `src/a.ts` loads the first
 * referenced project that holds it and no other, so references and renames from a cold server miss the files of
 * the others (the tests of `tsconfig.spec.json`). The service opens one file of each project before a project-wide
 * operation (see `Lsp`); this module finds the configurations and their files with TypeScript's own parser (the
 * `typescript` package the server runs: `extends`, `include`, `exclude`, `files` and `references` as it reads them).
 *
 * @example
 * const roots = await LspProjects.roots("/repo/src/a.ts", "/repo") // ["/repo/tsconfig.json"]
 * const plan = await LspProjects.plan(tsserverPath, roots)
 * // { configs: [{ config: "/repo/tsconfig.build.json", files: [...] }, ...], errors: [] }
 */
export namespace LspProjects {
  /** At most this many projects are loaded for one operation; the others are named as not loaded. */
  export const MAX_PROJECTS = 16

  export type Config = { config: string; files: string[] }
  export type Plan = { configs: Config[]; errors: { config: string; reason: string }[] }

  const NAMES = ["tsconfig.json", "jsconfig.json"]

  /**
   * The configurations of `file`'s folders up to `root` (inclusive) that have `references`: the solutions the file
   * can be part of. Empty for an ordinary project (nothing to do).
   */
  export async function roots(file: string, root: string): Promise<string[]> {
    const out: string[] = []
    const top = path.resolve(root)
    for (let dir = path.dirname(path.resolve(file)); ; dir = path.dirname(dir)) {
      for (const name of NAMES) {
        const config = path.join(dir, name)
        const text = await fs.readFile(config, "utf8").catch(() => undefined)
        if (text !== undefined && /"references"\s*:/.test(text)) out.push(config)
      }
      const rel = path.relative(top, dir)
      if (!rel || rel.startsWith("..") || path.isAbsolute(rel) || dir === path.dirname(dir)) break
    }
    return out
  }

  const modules = new Map<string, Promise<any>>()

  /** TypeScript's compiler API from the package holding `tsserverPath` (loaded once). */
  function typescript(tsserverPath: string) {
    const file = path.join(path.dirname(tsserverPath), "typescript.js")
    let known = modules.get(file)
    if (!known) {
      known = existsSync(file)
        ? import(file).then((m) => m.default ?? m)
        : Promise.reject(new Error(`${file} not found`))
      modules.set(file, known)
    }
    return known
  }

  /**
   * Every configuration reachable from `roots` through `references` (the roots too), each with its files as
   * TypeScript computes them; configurations it cannot read are listed in `errors`.
   */
  export async function plan(tsserverPath: string, roots: string[]): Promise<Plan> {
    const ts = await typescript(tsserverPath)
    const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} }
    const out: Plan = { configs: [], errors: [] }
    const seen = new Set<string>()
    const queue = [...roots]
    while (queue.length) {
      const config = path.resolve(queue.shift()!)
      if (seen.has(config)) continue
      seen.add(config)
      let parsed: any
      try {
        parsed = ts.getParsedCommandLineOfConfigFile(config, {}, host)
      } catch (error) {
        parsed = undefined
      }
      if (!parsed) {
        out.errors.push({ config, reason: "TypeScript cannot read it" })
        continue
      }
      const files = (parsed.fileNames as string[]).map((f) => path.resolve(f))
      if (files.length) out.configs.push({ config, files })
      for (const ref of parsed.projectReferences ?? []) queue.push(ts.resolveProjectReferencePath(ref))
    }
    return out
  }

  /**
   * The configuration's own errors, as `tsc -p` prints them before any code: what TypeScript's parser reports for it
   * (an `extends` not found, TS6053; an unknown option; no inputs, TS18003) and what checking its compiler options
   * reports (TS5052 `Option 'x' cannot be specified without specifying option 'y'`, …), per file they are in (the
   * configuration or one it extends). TypeScript's server reports these only as `configFileDiag` events, which
   * typescript-language-server drops; a broken configuration then shows only as errors in every file.
   */
  export async function configDiagnostics(tsserverPath: string, config: string) {
    const ts = await typescript(tsserverPath)
    const found: any[] = []
    const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d: any) => found.push(d) }
    const parsed = ts.getParsedCommandLineOfConfigFile(config, {}, host)
    if (parsed) {
      // The configuration's root files, as `tsc -p` has them: TypeScript resolves the `types` entries (TS2688 for one
      // not installed), checks `files` entries exist (TS6053) and where outputs go (TS5055) only for a program with
      // roots. Every source file is read as empty text: no code is parsed, no import followed, no lib loaded.
      const host = ts.createCompilerHost(parsed.options)
      host.getSourceFile = (name: string, language: any) =>
        ts.sys.fileExists(name) ? ts.createSourceFile(name, "", language) : undefined
      const program = ts.createProgram({
        rootNames: parsed.fileNames,
        options: parsed.options,
        projectReferences: parsed.projectReferences,
        configFileParsingDiagnostics: parsed.errors,
        host,
      })
      found.push(...program.getConfigFileParsingDiagnostics(), ...program.getOptionsDiagnostics())
    }
    const byFile = new Map<string, Diagnostic[]>()
    const seen = new Set<string>()
    // `tsc`'s order: diagnostics without a file (TS2688) first, then by file and position.
    for (const d of ts.sortAndDeduplicateDiagnostics(found)) {
      if (d.category !== 1 && d.category !== 0) continue
      const file = d.file?.fileName ? path.resolve(d.file.fileName) : path.resolve(config)
      const start =
        d.file && typeof d.start === "number"
          ? d.file.getLineAndCharacterOfPosition(d.start)
          : { line: 0, character: 0 }
      const end =
        d.file && typeof d.start === "number"
          ? d.file.getLineAndCharacterOfPosition(d.start + (d.length ?? 0))
          : { line: 0, character: 0 }
      const quoted = d.file && typeof d.start === "number" ? d.file.text.slice(d.start, d.start + (d.length ?? 0)) : ""
      const message = bound(ts.flattenDiagnosticMessageText(d.messageText, "\n"), quoted)
      const key = `${file}\0${d.code}\0${start.line}:${start.character}\0${message}`
      if (seen.has(key)) continue
      seen.add(key)
      const list = byFile.get(file) ?? []
      list.push({
        range: { start, end },
        severity: d.category === 1 ? 1 : 2,
        code: d.code,
        source: "typescript",
        message,
      })
      byFile.set(file, list)
    }
    return byFile
  }

  /** A configuration diagnostic's message is cut to this many characters (TS6046 lists every valid `lib`: 1.7 KB). */
  export const MAX_MESSAGE = 300

  /**
   * `message` cut to `MAX_MESSAGE` characters (at the last `, ` of a list when there is one), saying how much was cut
   * and quoting the configuration's text the diagnostic points at (short), since the cut part may be what named it.
   */
  export function bound(message: string, quoted = "") {
    if (message.length <= MAX_MESSAGE) return message
    const head = message.slice(0, MAX_MESSAGE)
    const comma = head.lastIndexOf(", ")
    const kept = comma > MAX_MESSAGE / 2 ? head.slice(0, comma) : head
    const at = quoted && quoted.length <= 80 && !quoted.includes("\n") ? ` (the entry: ${quoted})` : ""
    return `${kept}, … [${message.length - kept.length} more characters cut]${at}`
  }

  /**
   * Files of `config` to open so that TypeScript loads that project: first those no other configuration of the plan
   * holds (a file several projects hold opens in the first of them), declaration files last.
   */
  export function candidates(plan: Plan, config: Config): string[] {
    const others = new Set(plan.configs.filter((c) => c.config !== config.config).flatMap((c) => c.files))
    const rank = (f: string) => (others.has(f) ? 2 : 0) + (f.endsWith(".d.ts") ? 1 : 0)
    return [...config.files].sort((a, b) => rank(a) - rank(b))
  }
}
