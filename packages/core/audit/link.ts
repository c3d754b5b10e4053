import { PluginAnalysis } from "./analyze"
import { AuditRules } from "./rules"

/**
 * Values that cross modules: a name imported from `./net` that is `fetch` there, a key imported from `./keys` that
 * spells `eval`, `require(NAME)` with `NAME` exported as `"child_process"` elsewhere. Follows re-exports
 * (`export { x } from`, `export *`), namespace imports, CommonJS `module.exports`/`exports.x`, and functions that
 * return a dangerous value; cycles and chains longer than 12 steps resolve to nothing.
 *
 * Used twice: while files are analysed (dependencies first), `exportsOf(modules)` answers for the modules already
 * analysed, so an import that leads nowhere dangerous is not followed at all; at the end, `link` classifies the uses
 * that were left open (imports between modules analysed in the other order, i.e. cycles).
 *
 * @example
 * const findings = AuditLink.link(modules, (file) => lines(file))
 */
export namespace AuditLink {
  export type Module = { rel: string; result: PluginAnalysis.Result }

  type Path = AuditRules.Path
  type Ref = AuditRules.Ref
  type Value = PluginAnalysis.Value
  const CALL = AuditRules.CALL
  const MAX_DEPTH = 12
  const isRef = (s: unknown): s is Ref => typeof s === "object" && s !== null && "ref" in s
  const own = <T>(record: Record<string, T>, key: string): T | undefined =>
    Object.hasOwn(record, key) ? record[key] : undefined

  export type Exports = {
    /**
     * What a path whose head is another module's export stands for, one step (a function that returns something
     * stays a function); undefined while that module is unknown.
     */
    settle(path: Path): Value[] | undefined
    /** The string an export holds (null: not a constant); undefined while a module on the way is unknown. */
    constant(ref: Ref): string | null | undefined
  }

  /**
   * Answers about the exports of the modules in `modules` (which may still grow).
   *
   * @example
   * AuditLink.exportsOf(modules).settle([{ ref: "/p/net.ts", name: "get" }]) // [["fetch"]]
   */
  export function exportsOf(modules: Map<string, Module>): Exports {
    function values(file: string, name: string, depth = 0, seen = new Set<string>()): Value[] | undefined {
      const mod = modules.get(file)
      if (!mod) return undefined
      const key = `${file}\u0000${name}`
      if (seen.has(key) || depth > MAX_DEPTH) return []
      seen.add(key)
      const exports = mod.result.exports
      const whole = own(exports, "*module")
      const entry = own(exports, name)
      if (entry) return entry.values
      // The namespace of a CommonJS module that replaced its exports (`require("./x.cjs")`) is what it put there.
      if ((name === "default" || name === "*") && whole) return whole.values
      if (whole) return whole.values.flatMap((v) => ("path" in v ? [{ path: AuditRules.member(v.path, name) }] : []))
      if (name === "default") return []
      const out: Value[] = []
      for (const star of mod.result.stars) {
        const more = values(star, name, depth + 1, seen)
        if (more === undefined) return undefined
        out.push(...more)
      }
      return out
    }

    function constant(ref: Ref, depth = 0): string | null | undefined {
      const mod = modules.get(ref.ref)
      if (!mod) return undefined
      if (depth > MAX_DEPTH) return null
      const entry = own(mod.result.exports, ref.name)
      const c = entry?.constant
      if (typeof c === "string") return c
      if (isRef(c)) return constant(c, depth + 1)
      if (entry) return null
      for (const star of mod.result.stars) {
        const found = constant({ ref: star, name: ref.name }, depth + 1)
        if (found !== null) return found
      }
      return null
    }

    /** `path` then the members `rest`: a member of what an object or array literal holds is what it holds. */
    const join = (path: Path, rest: Path) =>
      rest.reduce<Path>((p, key) => {
        const held = AuditRules.isInto(p[p.length - 1]) && isRef(key) && key.key
        return AuditRules.member(p, held ? (constant(key) ?? null) : key)
      }, path)

    function settle(path: Path): Value[] | undefined {
      let first = path[0]
      if (!isRef(first) || first.key) return [{ path }]
      let rest = path.slice(1)
      const mod = modules.get(first.ref)
      if (!mod) return undefined
      const out: Value[] = []
      if (first.name === "*") {
        const exports = mod.result.exports
        const whole = own(exports, "*module")
        const key = rest[0]
        const name = typeof key === "string" ? key : isRef(key) ? constant(key) : null
        if (!rest.length) {
          // The namespace of a CommonJS module that replaced its exports (`module.exports = fetch`, then
          // `const f = require("./a")`) is what it put there; it stays itself too where the module also names members.
          if (!whole) return [{ path }]
          if (Object.keys(exports).length > 1) out.push({ path })
        } else if (!whole || (typeof name === "string" && own(exports, name))) {
          // `ns.x` on a namespace is the export `x` (`module.exports.x = …` too, where it also replaced its exports).
          if (name === undefined) return undefined
          if (name === null || key === CALL) return []
          first = { ref: first.ref, name }
          rest = rest.slice(1)
        }
      }
      const found = values(first.ref, first.name)
      if (found === undefined) return undefined
      // A path through a literal that cannot be read back (a member it does not hold, literals nested too deep) is
      // nothing: dropped here, it is not followed into further modules.
      const live = (p: Path) => AuditRules.heldIn(p) !== null
      for (const v of found) {
        if ("returns" in v) {
          if (!rest.length) out.push(v)
          else if (rest[0] === CALL)
            for (const r of v.returns) {
              const p = join(r, rest.slice(1))
              if (live(p)) out.push({ path: p })
            }
        } else if (!(
          v.path.length === 1 &&
          isRef(v.path[0]) &&
          v.path[0].ref === first.ref &&
          v.path[0].name === "*"
        )) {
          const p = join(v.path, rest)
          if (live(p)) out.push({ path: p })
        }
      }
      return out
    }

    return { settle, constant }
  }

  /**
   * The findings of every use left open, once the exports of all modules are known; `lines` gives a file's source
   * lines for snippets (read only for files with such a finding).
   *
   * @example
   * AuditLink.link(modules, (file) => readFileSync(file, "utf8").split("\n"))
   */
  export function link(modules: Map<string, Module>, lines: (file: string) => string[]): PluginAnalysis.Finding[] {
    const out: PluginAnalysis.Finding[] = []
    const seen = new Set<string>()
    const exports = exportsOf(modules)

    /**
     * Every fully known path a deferred path may stand for. A path through a literal (`{ items: parseDef(…) }` returned
     * by a function) is the literal itself, which no rule reports: it is not followed further. Every module is known
     * by now, so a path's answer is kept: the many uses of one recursive function are resolved once.
     */
    const resolved = new Map<string, (string | null)[][]>()
    function resolve(path: Path, depth = 0): (string | null)[][] {
      if (depth > MAX_DEPTH || path.length > 16 || path.some(AuditRules.isInto)) return []
      const first = path[0]
      if (isRef(first) && !first.key) {
        const key = depth === 0 ? JSON.stringify(path) : ""
        const known = key ? resolved.get(key) : undefined
        if (known) return known
        // A namespace stays itself (nothing), unless its CommonJS module replaced its exports (kept for a cycle).
        const next = exports.settle(path) ?? []
        const out = next.flatMap((v) => ("path" in v && v.path !== path ? resolve(v.path, depth + 1) : []))
        if (key) resolved.set(key, out)
        return out
      }
      const concrete: (string | null)[] = []
      for (const seg of path) {
        if (seg === CALL) return []
        if (isRef(seg)) concrete.push(exports.constant(seg) ?? null)
        else concrete.push(seg as string | null)
      }
      return [normalize(concrete)]
    }

    for (const [file, mod] of modules) {
      const add = (d: { line: number; column: number }, verdict: AuditRules.Verdict) => {
        const key = `${mod.rel}:${verdict.rule}:${d.line}:${d.column}`
        if (seen.has(key)) return
        seen.add(key)
        const snippet = PluginAnalysis.detach(PluginAnalysis.snippet(lines(file)[d.line - 1] ?? "", d.column))
        out.push({ ...verdict, file: mod.rel, line: d.line, column: d.column, snippet })
      }
      if (!mod.result.deferred.length) continue
      for (const f of mod.result.findings) seen.add(`${mod.rel}:${f.rule}:${f.line}:${f.column}`)
      for (const d of mod.result.deferred) {
        if (d.kind === "module") {
          const spec = exports.constant(d.spec) ?? null
          if (spec === null) add(d, AuditRules.dynamicLoad(d.how))
          else {
            const verdict = AuditRules.moduleImport(PluginAnalysis.normalizeModule(spec))
            if (verdict) add(d, verdict)
          }
          continue
        }
        for (const path of resolve(d.path)) {
          if (d.kind === "env") {
            if (path.length === 2 && path[0] === "process" && path[1] === "env")
              add(d, { severity: "low", rule: "process-env", message: `${d.text}: reads the environment` })
            continue
          }
          const verdict = AuditRules.classify(path, d.site)
          if (verdict) add(d, verdict)
        }
      }
    }
    return out
  }

  /** `globalThis.x` is `x`; `mod.default` of a module is the module. */
  function normalize(path: (string | null)[]): (string | null)[] {
    const out: (string | null)[] = []
    for (const seg of path) {
      if (out.length === 0 && typeof seg === "string" && AuditRules.GLOBAL_OBJECTS.has(seg)) continue
      if (out.length === 1 && seg === "default") continue
      out.push(seg)
    }
    return out
  }
}
