import { closeSync, existsSync, lstatSync, openSync, readFileSync, readSync, realpathSync, statSync } from "fs"
import { builtinModules } from "module"
import path from "path"
import { parse as parseJsonc } from "jsonc-parser"

/**
 * Finds a plugin's dependencies the way Node (and Bun) load them: a package named `x` required from folder `F` is the
 * first `node_modules/x` in `F`, then in each parent of `F` up to the file system root — so packages npm hoisted next to
 * the plugin (`…/node_modules/plugin` and `…/node_modules/dep` side by side) are found, and a nested copy
 * (`plugin/node_modules/dep`) wins over a hoisted one. Symbolic links (pnpm) are resolved to the real folder.
 *
 * Also resolves module names inside the audited files to a file (relative paths with the extensions and index files
 * Node, Bun and TypeScript accept; package names through `exports`, `module`, `main`), for values that flow across
 * modules.
 *
 * @example
 * AuditDeps.findPackage("zod", "/tmp/x/node_modules/plugin") // "/tmp/x/node_modules/zod"
 */
export namespace AuditDeps {
  export type Manifest = {
    name?: string
    version?: string
    main?: string
    bin?: string | Record<string, string>
    module?: string
    exports?: unknown
    imports?: unknown
    dependencies?: Record<string, string>
    optionalDependencies?: Record<string, string>
    scripts?: Record<string, unknown>
  }

  /**
   * The lifecycle scripts npm (and Bun, pnpm, Yarn for trusted packages) run by themselves when a package is installed.
   * `prepare` is not run for a package installed from the registry or a tarball: npm runs it only for the project
   * itself (`npm install` without arguments in its folder), for a dependency installed from git (before packing it)
   * and for one linked from a local folder (npm 11: `commands/install.js` and arborist's `rebuild.js`; checked with npm
   * 11.19.1 and Bun 1.3.10, see docs/audit.md).
   */
  export const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"] as const

  /**
   * True when npm runs the `prepare` script of a dependency declared with this spec: a git repository (`git+https:…`,
   * `github:owner/repo`, the `owner/repo` shorthand, an `https:` URL ending in `.git`) or a local folder (`file:../x`,
   * `link:`, a path), not a registry range or a tarball.
   *
   * @example
   * AuditDeps.preparesOnInstall("github:owner/repo") // true
   * AuditDeps.preparesOnInstall("^1.2.0") // false
   */
  export function preparesOnInstall(spec: string): boolean {
    const s = spec.trim()
    if (/^(git\+|git:|github:|gitlab:|bitbucket:|gist:)/i.test(s)) return true
    if (/^https?:\/\/.*\.git(#.*)?$/i.test(s)) return true
    const tarball = /\.(tgz|tar|tar\.gz)$/i.test(s)
    if (/^(file:|link:|\.{1,2}\/|\/|~\/)/i.test(s)) return !tarball
    // npm's shorthand for a GitHub repository: `owner/repo`, optionally `#ref`.
    return /^[\w.-]+\/[\w.-]+(#\S*)?$/.test(s) && !tarball
  }

  /**
   * A package's install-time scripts: each lifecycle script of `INSTALL_SCRIPTS` it declares, with its command and the
   * 1-based line and column of its key in `text` (the package.json as written).
   *
   * @example
   * AuditDeps.installScripts('{\n  "scripts": { "postinstall": "node x.js" }\n}')
   * // [{ name: "postinstall", command: "node x.js", line: 2, column: 17 }]
   */
  export function installScripts(
    text: string,
    options: { prepare: boolean } = { prepare: true },
  ): { name: string; command: string; line: number; column: number }[] {
    let m: Manifest
    try {
      m = JSON.parse(text)
    } catch {
      return []
    }
    const scripts = m && typeof m === "object" && m.scripts && typeof m.scripts === "object" ? m.scripts : {}
    const out: { name: string; command: string; line: number; column: number }[] = []
    for (const name of INSTALL_SCRIPTS) {
      if (name === "prepare" && !options.prepare) continue
      const command = scripts[name]
      if (typeof command !== "string" || !command.trim()) continue
      // Its key after the "scripts" key (a dependency of the same name cannot come first then).
      const at = text.indexOf(`"${name}"`, Math.max(0, text.indexOf('"scripts"')))
      const before = at < 0 ? "" : text.slice(0, at)
      const line = before.split("\n").length
      out.push({ name, command, line, column: at < 0 ? 1 : at - before.lastIndexOf("\n") })
    }
    return out
  }

  const BUILTIN = new Set(builtinModules.flatMap((m) => [m, m.split("/")[0]]))

  /**
   * True for `fs`, `node:fs`, `bun:sqlite`…: modules that are not packages.
   *
   * @example
   * AuditDeps.isBuiltin("node:child_process") // true
   */
  export function isBuiltin(spec: string): boolean {
    return spec.startsWith("node:") || spec.startsWith("bun:") || spec === "bun" || BUILTIN.has(spec.split("/")[0])
  }

  /**
   * The package name part of a bare module name (`@scope/pkg/sub` → `@scope/pkg`), or undefined for relative,
   * absolute, `#` (subpath import), URL and built-in names.
   *
   * @example
   * AuditDeps.packageName("zod/v4") // "zod"
   */
  export function packageName(spec: string): string | undefined {
    // `#name` is a subpath import of the package itself (see `aliases`), never a package.
    if (!spec || /^[.#/]/.test(spec) || /^[a-z]+:/i.test(spec) || isBuiltin(spec)) return undefined
    const parts = spec.split("/")
    return spec.startsWith("@") ? (parts.length >= 2 ? `${parts[0]}/${parts[1]}` : undefined) : parts[0]
  }

  /**
   * Node's lookup of package `name` from folder `from`; the real path of its folder, or undefined.
   *
   * @example
   * AuditDeps.findPackage("dep", "/p/node_modules/plugin/lib")
   */
  export function findPackage(name: string, from: string): string | undefined {
    let dir = path.resolve(from)
    while (true) {
      if (path.basename(dir) !== "node_modules") {
        const candidate = path.join(dir, "node_modules", name)
        if (existsSync(path.join(candidate, "package.json"))) {
          try {
            return realpathSync(candidate)
          } catch {
            return undefined
          }
        }
      }
      const up = path.dirname(dir)
      if (up === dir) return undefined
      dir = up
    }
  }

  /**
   * A folder's package.json, or undefined when it has none or it is not valid JSON.
   *
   * @example
   * AuditDeps.manifest("/p")?.dependencies // { zod: "^4.0.0" }
   */
  export function manifest(dir: string): Manifest | undefined {
    try {
      const value = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"))
      return value && typeof value === "object" ? value : undefined
    } catch {
      return undefined
    }
  }

  /**
   * What a package declares it loads: `dependencies` and `optionalDependencies`, with whether a missing one is expected.
   * `peerDependencies` are left to the code: the host provides them and they are often there only for types (a peer
   * is audited when audited code imports it).
   *
   * @example
   * AuditDeps.declared({ dependencies: { a: "1" } }) // [{ name: "a", optional: false }]
   */
  export function declared(m: Manifest): { name: string; optional: boolean }[] {
    const out = new Map<string, boolean>()
    for (const name of Object.keys(m.dependencies ?? {})) out.set(name, false)
    for (const name of Object.keys(m.optionalDependencies ?? {})) out.set(name, true)
    return [...out].map(([name, optional]) => ({ name, optional }))
  }

  const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".jsx"]

  /**
   * The audited file a relative or absolute module name refers to from `fromFile` (`./x` → `x.ts`, `x.js`, `x/index.js`;
   * `./x.js` → `x.ts` as TypeScript allows), among the files `files` has.
   *
   * @example
   * AuditDeps.resolveFile("./net.js", "/p/src/a.ts", new Set(["/p/src/net.ts"])) // "/p/src/net.ts"
   */
  export function resolveFile(
    spec: string,
    fromFile: string,
    files: { has(file: string): boolean },
  ): string | undefined {
    const base = path.resolve(path.dirname(fromFile), spec)
    if (files.has(base)) return base
    const stripped = base.replace(/\.(m|c)?js$|\.jsx$/, "")
    for (const ext of EXTENSIONS) {
      if (files.has(base + ext)) return base + ext
      if (stripped !== base && files.has(stripped + ext)) return stripped + ext
    }
    for (const ext of EXTENSIONS) if (files.has(path.join(base, "index" + ext))) return path.join(base, "index" + ext)
    return undefined
  }

  const CONDITIONS = ["bun", "node", "import", "module", "require", "default"]

  function pick(target: unknown, depth = 0): string | undefined {
    if (depth > 8 || target === null || target === undefined) return undefined
    if (typeof target === "string") return target
    if (Array.isArray(target)) {
      for (const t of target) {
        const found = pick(t, depth + 1)
        if (found) return found
      }
      return undefined
    }
    if (typeof target === "object") {
      const record = target as Record<string, unknown>
      for (const c of CONDITIONS) if (c in record) return pick(record[c], depth + 1)
    }
    return undefined
  }

  /**
   * The file a package name (`pkg`, `pkg/sub`) loads, given the package's folder and manifest: `exports` (the first
   * of the bun, node, import, module, require, default conditions; `./*` patterns), else `module`, `main`, `index`.
   *
   * @example
   * AuditDeps.entry("/nm/zod", { exports: { ".": { import: "./index.js" } } }, ".") // "/nm/zod/index.js"
   */
  export function entry(
    dir: string,
    m: Manifest,
    subpath: string,
    files: { has(file: string): boolean },
  ): string | undefined {
    const exports = m.exports
    let target: string | undefined
    if (exports !== undefined) {
      const map =
        typeof exports === "string" || Array.isArray(exports) || !Object.keys(exports as object)[0]?.startsWith(".")
          ? { ".": exports }
          : (exports as Record<string, unknown>)
      target = mapped(map, subpath, pick)
    } else if (subpath === ".") target = m.module ?? m.main ?? "./index"
    else target = subpath
    if (!target) return undefined
    return resolveFile("./" + target.replace(/^\.\//, ""), path.join(dir, "package.json"), files)
  }

  /**
   * The target `map` (an `exports` or `imports` field, a tsconfig `paths`) gives `key`: an exact key, else a `*`
   * pattern (the longest prefix first, as Node does), with `*` in the target replaced by what it matched.
   */
  function mapped<T>(map: Record<string, unknown>, key: string, choose: (value: unknown) => T | undefined) {
    if (Object.hasOwn(map, key)) return choose(map[key])
    let best: [number, string, unknown] | undefined
    for (const [pattern, value] of Object.entries(map)) {
      const star = pattern.indexOf("*")
      if (star < 0) continue
      const prefix = pattern.slice(0, star)
      const suffix = pattern.slice(star + 1)
      if (!key.startsWith(prefix) || !key.endsWith(suffix) || key.length < pattern.length - 1) continue
      if (best && best[0] >= prefix.length) continue
      best = [prefix.length, key.slice(prefix.length, key.length - suffix.length), value]
    }
    if (!best) return undefined
    const [, match, value] = best
    const chosen = choose(value)
    const fill = (t: unknown) => (typeof t === "string" ? t.replaceAll("*", match) : t)
    return (Array.isArray(chosen) ? chosen.map(fill) : fill(chosen)) as T | undefined
  }

  /**
   * Module names that stand for files of the code itself rather than packages: `#name` through the `imports` field of
   * the nearest package.json (Node's subpath imports: conditions as for `exports`, `*` patterns; a target may also be
   * a package name), and tsconfig/jsconfig `paths` aliases (`@/lib/x` with `"@/*": ["src/*"]`, relative to `baseUrl`
   * or the config's folder; the nearest config up to the package's own folder, with the options it `extends`). The resolver
   * returns the absolute paths or package names a name stands for, in order, or undefined when it is no alias.
   * Caches live as long as the resolver (one audit).
   *
   * @example
   * AuditDeps.aliases()("#net", "/p/src/index.js") // ["/p/src/lib/net.js"] with "imports": { "#net": "./src/lib/net.js" }
   */
  export function aliases(): (spec: string, fromFile: string) => string[] | undefined {
    const scopes = new Map<string, string | undefined>()
    const manifests = new Map<string, Manifest | undefined>()
    const configs = new Map<string, { base: string; paths: Record<string, unknown> } | undefined>()
    // The nearest folder with a package.json (Node's package scope).
    const scope = (dir: string): string | undefined => {
      if (scopes.has(dir)) return scopes.get(dir)
      const up = path.dirname(dir)
      const found = existsSync(path.join(dir, "package.json")) ? dir : up === dir ? undefined : scope(up)
      scopes.set(dir, found)
      return found
    }
    const manifestOf = (dir: string) => {
      if (!manifests.has(dir)) manifests.set(dir, manifest(dir))
      return manifests.get(dir)
    }
    // The nearest tsconfig.json or jsconfig.json, not above the package's own folder, with `paths` (its own or the
    // ones it extends).
    const config = (dir: string): { base: string; paths: Record<string, unknown> } | undefined => {
      if (configs.has(dir)) return configs.get(dir)
      let found: { base: string; paths: Record<string, unknown> } | undefined
      let here = false
      for (const name of ["tsconfig.json", "jsconfig.json"]) {
        const file = path.join(dir, name)
        if (!existsSync(file)) continue
        here = true
        const options = compilerPaths(file, new Set())
        if (options.paths) found = { base: options.baseUrl ?? options.paths.dir, paths: options.paths.map }
        break
      }
      const up = path.dirname(dir)
      if (!found && !here && up !== dir && !existsSync(path.join(dir, "package.json"))) found = config(up)
      configs.set(dir, found)
      return found
    }
    return (spec, fromFile) => {
      const from = path.dirname(fromFile)
      if (spec.startsWith("#")) {
        const dir = scope(from)
        const map = dir ? manifestOf(dir)?.imports : undefined
        if (!dir || !map || typeof map !== "object" || Array.isArray(map)) return undefined
        const target = mapped(map as Record<string, unknown>, spec, pick)
        if (typeof target !== "string") return undefined
        return [target.startsWith("./") || target.startsWith("../") ? path.resolve(dir, target) : target]
      }
      if (spec.startsWith(".") || spec.startsWith("/")) return undefined
      const found = config(from)
      if (!found) return undefined
      const targets = mapped(found.paths, spec, (v) => (Array.isArray(v) ? v : typeof v === "string" ? [v] : undefined))
      if (!targets?.length) return undefined
      return targets.filter((t): t is string => typeof t === "string").map((t) => path.resolve(found.base, t))
    }
  }

  type PathsOptions = { baseUrl?: string; paths?: { map: Record<string, unknown>; dir: string } }

  /**
   * `baseUrl` (absolute) and `paths` (with the folder of the config that set them) of a tsconfig, following `extends`
   * as TypeScript does: a relative file (`.json` optional) or a package's config found in `node_modules` up the tree,
   * a list of them (later ones win), each option taken from the nearest config that sets it. A config that does not
   * parse, or a cycle, contributes nothing.
   */
  function compilerPaths(file: string, seen: Set<string>): PathsOptions {
    // `seen`: the chain of configs that led here (a cycle stops); siblings of a list each get their own.
    if (seen.has(file) || seen.size > 16) return {}
    seen.add(file)
    let json: { extends?: unknown; compilerOptions?: { baseUrl?: unknown; paths?: unknown } } | undefined
    try {
      json = parseJsonc(readFileSync(file, "utf8"))
    } catch {
      return {}
    }
    const dir = path.dirname(file)
    let inherited: PathsOptions = {}
    const parents = Array.isArray(json?.extends) ? json.extends : json?.extends === undefined ? [] : [json.extends]
    for (const parent of parents) {
      if (typeof parent !== "string") continue
      const target = extendsTarget(parent, dir)
      if (!target) continue
      const options = compilerPaths(target, new Set(seen))
      inherited = { baseUrl: options.baseUrl ?? inherited.baseUrl, paths: options.paths ?? inherited.paths }
    }
    const own = json?.compilerOptions
    const paths =
      own?.paths && typeof own.paths === "object" && !Array.isArray(own.paths)
        ? { map: own.paths as Record<string, unknown>, dir }
        : inherited.paths
    const baseUrl = typeof own?.baseUrl === "string" ? path.resolve(dir, own.baseUrl) : inherited.baseUrl
    return { baseUrl, paths }
  }

  /** The file an `extends` value names, from the folder of the config holding it; undefined when none exists. */
  function extendsTarget(value: string, dir: string): string | undefined {
    const isFile = (f: string) => {
      try {
        return statSync(f).isFile()
      } catch {
        return false
      }
    }
    const candidates = (base: string) => [base, `${base}.json`, path.join(base, "tsconfig.json")]
    if (value.startsWith(".") || path.isAbsolute(value)) return candidates(path.resolve(dir, value)).find(isFile)
    for (let at = dir; ; at = path.dirname(at)) {
      const found = candidates(path.join(at, "node_modules", value)).find(isFile)
      if (found) return found
      if (path.dirname(at) === at) return undefined
    }
  }

  /**
   * How to parse a script its first line runs with a JavaScript runtime (`#!/usr/bin/env node` → "js"; bun, deno,
   * tsx, ts-node → "ts", which reads JavaScript too), or undefined for any other file.
   *
   * @example
   * AuditDeps.shebangLanguage("/p/bin/cli") // "js" for a file starting "#!/usr/bin/env node"
   */
  export function shebangLanguage(file: string): string | undefined {
    let head = ""
    try {
      const fd = openSync(file, "r")
      try {
        const buffer = Buffer.alloc(160)
        head = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString("utf8")
      } finally {
        closeSync(fd)
      }
    } catch {
      return undefined
    }
    const line = /^#!([^\n]*)/.exec(head)?.[1]
    if (!line) return undefined
    if (/(^|[\s/])(bun|deno|tsx|ts-node)(\s|$)/.test(line)) return "ts"
    if (/(^|[\s/])(node|nodejs)(\s|$)/.test(line)) return "js"
    return undefined
  }

  /** Names of compiled native files: Node addons, shared libraries (`libvips-cpp.so.42`), Windows binaries. */
  const NATIVE_NAME = /\.(node|dylib|dll|exe|so(\.\d+)*)$/i

  /**
   * True for a compiled native file: by its name (`.node`, `.so`, `.so.42`, `.dylib`, `.dll`, `.exe`), or, for a file
   * without an extension, by its first bytes (an ELF, Mach-O or PE executable).
   *
   * @example
   * AuditDeps.isNative("/p/prebuilds/linux-x64/addon.node") // true
   */
  export function isNative(file: string): boolean {
    const name = path.basename(file)
    if (NATIVE_NAME.test(name)) return true
    if (name.includes(".")) return false
    let head: Buffer
    try {
      const fd = openSync(file, "r")
      try {
        const buffer = Buffer.alloc(4)
        head = buffer.subarray(0, readSync(fd, buffer, 0, 4, 0))
      } finally {
        closeSync(fd)
      }
    } catch {
      return false
    }
    if (head.length < 4) return head.length >= 2 && head[0] === 0x4d && head[1] === 0x5a
    const magic = head.readUInt32BE(0)
    if (magic === 0x7f454c46) return true // ELF
    if ([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe].includes(magic)) return true // Mach-O
    return head[0] === 0x4d && head[1] === 0x5a // PE ("MZ")
  }

  /**
   * The files a package runs by name from its manifest (`bin`, a string or a map, and `main`), when they exist.
   *
   * @example
   * AuditDeps.entryScripts("/p", { bin: { tool: "./bin/tool" } }) // ["/p/bin/tool"]
   */
  export function entryScripts(dir: string, m: Manifest): string[] {
    const named = [
      ...(typeof m.bin === "string" ? [m.bin] : m.bin && typeof m.bin === "object" ? Object.values(m.bin) : []),
      m.main,
    ]
    const out: string[] = []
    for (const name of named) {
      if (typeof name !== "string" || !name) continue
      const file = path.resolve(dir, name)
      if (!isPlainFile(file) || out.includes(file)) continue
      // Inside the package, links resolved (a bin through a linked folder is not the package's).
      let real: string
      try {
        real = realpathSync(file)
      } catch {
        continue
      }
      if (real.startsWith(realpathSync(dir) + path.sep)) out.push(file)
    }
    return out
  }

  /**
   * Size in bytes of a file, or -1.
   *
   * @example
   * AuditDeps.size("/p/a.js") // 120
   */
  export function size(file: string): number {
    try {
      return statSync(file).size
    } catch {
      return -1
    }
  }

  /**
   * True for an existing regular file.
   *
   * @example
   * AuditDeps.isFile("/p/index.js") // true
   */
  export function isFile(file: string): boolean {
    try {
      return statSync(file).isFile()
    } catch {
      return false
    }
  }

  /**
   * True for a regular file that is not a symbolic link (the audit never follows links).
   *
   * @example
   * AuditDeps.isPlainFile("/p/bin/cli") // true
   */
  export function isPlainFile(file: string): boolean {
    try {
      return lstatSync(file).isFile()
    } catch {
      return false
    }
  }
}
