import fs from "fs"
import path from "path"

/**
 * The code OpenCode runs outside the sandbox at its next start beyond the plugin files themselves: every module a
 * plugin or custom tool imports, followed transitively. A plugin file in `.opencode/plugin/` is protected; the
 * `../../src/db.ts` it imports is an ordinary source the guard watches (a change is named, see `SecurityGuard`), since
 * locking it broke installs, checkouts and builds. Relative imports name the file Bun resolves now and every name Bun would try before it (a `db.tsx` created
 * beside `db.ts` is imported instead); package imports name the package's folder and the `node_modules/<package>/`
 * folders nearer the importer than it (one created there would be imported instead). Imports through a path mapping
 * (tsconfig `paths`, package `imports`) also name the `tsconfig.json` and `package.json` that map them. Type-only
 * imports are left out (erased before running); an import whose name is computed at run time cannot be followed and is
 * reported in `dynamic`.
 *
 * @example
 * SecurityClosure.of(["/repo/.opencode/tool/db.ts"]).paths
 * // ["/repo/src/db.tsx", "/repo/src/db.ts", …, "/repo/node_modules/pg/", …]
 */
export namespace SecurityClosure {
  /** At most this many files are read; the rest are reported as `truncated` (their imports are not followed). */
  export const MAX_FILES = 2_000
  /** Larger files are protected but not read for imports. */
  export const MAX_BYTES = 2 * 1024 * 1024

  export type Result = {
    /** Files, and folders ending in the path separator, whose change would change the code OpenCode loads. */
    paths: string[]
    /** Files whose imports could not be read (unreadable, not parseable, or over `MAX_BYTES`). */
    unread: string[]
    /** Files with an import whose name is computed at run time (`import(name)`, `require(x)`). */
    dynamic: string[]
    truncated: boolean
  }

  const LOADERS: Record<string, "ts" | "tsx" | "js" | "jsx"> = {
    ".ts": "ts",
    ".mts": "ts",
    ".cts": "ts",
    ".tsx": "tsx",
    ".js": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".jsx": "jsx",
  }
  /** The extensions Bun tries for a name without one, in its order (checked: `./b` takes b.tsx over b.ts). */
  const TRIED = [".tsx", ".ts", ".jsx", ".js", ".mjs", ".cjs", ".mts", ".cts", ".json"]
  const transpilers = new Map<string, Bun.Transpiler>()
  /** `import(x)` or `require(x)` whose argument is not a plain string. */
  const COMPUTED = /\b(?:import|require)\s*\(\s*(?!\s*["'`][^"'`$]*["'`]\s*[,)])/

  /**
   * Every file and folder the code of `entries` depends on, the entries included.
   *
   * @example
   * SecurityClosure.of(["/repo/tools/p.ts"]).paths.includes("/repo/tools/p.ts") // true
   */
  export function of(entries: readonly string[]): Result {
    const out = new Set<string>()
    const unread: string[] = []
    const dynamic: string[] = []
    const queue = entries.map((e) => path.resolve(e))
    const seen = new Set<string>()
    let truncated = false
    while (queue.length) {
      const file = queue.shift()!
      if (seen.has(file)) continue
      if (seen.size >= MAX_FILES) {
        truncated = true
        break
      }
      seen.add(file)
      out.add(file)
      const loader = LOADERS[path.extname(file).toLowerCase()]
      if (!loader) continue
      const code = read(file)
      if (code === undefined) {
        unread.push(file)
        continue
      }
      let imports: { path: string }[]
      try {
        imports = transpiler(loader).scanImports(code)
      } catch {
        unread.push(file)
        continue
      }
      if (COMPUTED.test(code)) dynamic.push(file)
      const from = path.dirname(file)
      for (const { path: spec } of imports) {
        const target = follow(spec, from, out)
        if (target) queue.push(target)
      }
    }
    return { paths: [...out], unread, dynamic, truncated }
  }

  /** Adds what `spec` imported from `from` depends on to `out`; the file to read next, if any. */
  function follow(spec: string, from: string, out: Set<string>): string | undefined {
    // A query (`./data.txt?raw`) is not part of the file's name; `#name` is a package import, not a fragment.
    const bare = spec.startsWith("#") ? spec : spec.split("?")[0]
    if (!bare || /^(node|bun):/.test(bare) || bare === "bun") return undefined
    let resolved: string | undefined
    try {
      resolved = Bun.resolveSync(spec, from)
    } catch {
      resolved = undefined
    }
    // Built-in modules resolve to their own names.
    if (resolved !== undefined && !path.isAbsolute(resolved)) return undefined
    if (bare.startsWith(".") || path.isAbsolute(bare) || bare.startsWith("file:")) {
      const base = bare.startsWith("file:") ? safeFileURL(bare) : path.resolve(from, bare)
      if (base) for (const candidate of candidates(base)) out.add(candidate)
      return resolved
    }
    const name = packageName(bare)
    if (name && (!resolved || resolved.includes(`${path.sep}node_modules${path.sep}`))) {
      // The node_modules folders Bun looks in before the one that holds the package (all of them when none does).
      for (let dir = from; ; dir = path.dirname(dir)) {
        if (path.basename(dir) === "node_modules") continue
        const folder = path.join(dir, "node_modules", name)
        out.add(folder + path.sep)
        if (resolved && resolved.startsWith(folder + path.sep)) break
        if (dir === path.dirname(dir)) break
      }
      return resolved
    }
    // A path mapping (tsconfig `paths`, package.json `imports`): the files that map it decide what is imported.
    for (let dir = from; ; dir = path.dirname(dir)) {
      for (const f of ["tsconfig.json", "jsconfig.json", "package.json"]) out.add(path.join(dir, f))
      if (dir === path.dirname(dir) || fs.existsSync(path.join(dir, "package.json"))) break
    }
    if (resolved) out.add(resolved)
    return resolved
  }

  /** The names Bun tries for `base`, in its order: as given, with each extension, then as a folder. */
  function candidates(base: string): string[] {
    return [
      base,
      ...TRIED.map((ext) => base + ext),
      path.join(base, "package.json"),
      ...TRIED.map((ext) => path.join(base, "index" + ext)),
    ]
  }

  /** `@scope/name` or `name` of a package import (`pkg/sub/path` → `pkg`); undefined for other shapes. */
  function packageName(spec: string): string | undefined {
    const parts = spec.split("/")
    if (spec.startsWith("@")) return parts.length >= 2 && parts[1] ? `${parts[0]}/${parts[1]}` : undefined
    return /^[a-z0-9._~-]/i.test(parts[0]) && !spec.startsWith("#") ? parts[0] : undefined
  }

  function safeFileURL(url: string): string | undefined {
    try {
      return Bun.fileURLToPath(url)
    } catch {
      return undefined
    }
  }

  function read(file: string): string | undefined {
    try {
      const stat = fs.statSync(file)
      if (!stat.isFile() || stat.size > MAX_BYTES) return undefined
      return fs.readFileSync(file, "utf8")
    } catch {
      return undefined
    }
  }

  function transpiler(loader: "ts" | "tsx" | "js" | "jsx") {
    let t = transpilers.get(loader)
    if (!t) transpilers.set(loader, (t = new Bun.Transpiler({ loader })))
    return t
  }
}
