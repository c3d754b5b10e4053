import { parse, type SgNode } from "@ast-grep/napi"
import { IdentifierEscapes } from "./escapes"
import { AuditRules } from "./rules"

/**
 * Static analysis of one JavaScript/TypeScript file by syntax tree (tree-sitter through `@ast-grep/napi`), never by
 * regular expression over the text: comments and strings that merely mention `eval` are not findings, and
 * obfuscated spellings are seen through where they can be resolved statically.
 *
 * The analysis follows values forward from where they enter the file — the global names that matter (`fetch`,
 * `eval`, `Function`, `process`, `Bun`, `require`, the global object `globalThis`/`global`/`window`/`self`, timers,
 * `WebSocket`…), modules imported or required by name, literal `constructor` chains — through member accesses,
 * computed members with a constant key, calls, `.bind`/`.call`/`.apply`, `await`, `??`/`||`, and into every name
 * they are bound to: `const f = fetch`, `const { fetch: get } = globalThis`, `let f; f = fetch`, destructuring,
 * `this.fetch = …` in a class, functions that return them (`function getFetch() { return fetch }`), module-level
 * `var fs = __require("fs")` in bundles. Names are resolved by lexical scope: a parameter or local named `fetch`
 * hides the global, an alias is only followed where its declaration is visible.
 *
 * Constant keys are string literals, templates, `+`, `[…].join(…)`, `String.fromCharCode(…)`, `atob(…)` and names
 * bound once to such values, so `const k = "ev" + "al"; globalThis[k](x)` is `eval`. A name imported from another
 * module of the audit is a `Ref`: uses that depend on it are returned as `deferred` and classified by link.ts once
 * that module's exports are known; the file's own exports are returned for the same purpose.
 *
 * Candidate nodes are selected in Rust by kind and name (one traversal per round of newly bound names, restricted to
 * the scope that declares them), so the size of a bundle costs little beyond its parse.
 *
 * @example
 * PluginAnalysis.analyze("index.js", 'const f = fetch; f("https://x")').map((f) => f.rule) // ["network-client"]
 */
export namespace PluginAnalysis {
  export type Severity = AuditRules.Severity
  export const SEVERITIES = AuditRules.SEVERITIES

  export type Finding = {
    severity: Severity
    rule: string
    message: string
    file: string
    /** 1-based. */
    line: number
    column: number
    snippet: string
    /**
     * Set by the audit (reach.ts) when no entry point of the package reaches the file: why it is not loaded ("test
     * file", "not imported from an entry point"). Such findings are listed apart and left out of the risk line.
     */
    notLoaded?: string
  }

  type Path = AuditRules.Path
  type Ref = AuditRules.Ref
  const CALL = AuditRules.CALL

  /** A value that flows: a path, or a function whose return values are paths. */
  export type Value = { path: Path } | { returns: Path[] }

  export type Position = { line: number; column: number }

  /** A use whose meaning depends on another module's exports (see link.ts). */
  export type Deferred =
    | ({ kind: "site"; path: Path; site: AuditRules.Site } & Position)
    | ({ kind: "module"; how: "import" | "require"; spec: Ref } & Position)
    /** Reported when `path` turns out to be `process.env` itself. */
    | ({ kind: "env"; path: Path; text: string } & Position)

  export type Export = { values: Value[]; constant?: string | Ref }

  export type Result = {
    findings: Finding[]
    deferred: Deferred[]
    /** By exported name; `"*module"` is a CommonJS `module.exports = …`. */
    exports: Record<string, Export>
    /** Files re-exported whole (`export * from "./x"`). */
    stars: string[]
    /** Module names this file loads by a constant name (import, export-from, require, import()). */
    imports: string[]
    /** The plugin input passed to a function or class another module exports (see Options.entries). */
    passes: Pass[]
  }

  /** `value` passed as argument `index` to the export `ref` (called, or constructed with `new`). */
  export type Pass = { ref: Ref; index: number; value: Value }

  export type Options = {
    /** The audited file a module name loaded by this file resolves to, if any (enables cross-module values). */
    resolve?: (spec: string) => string | undefined
    /**
     * What a path headed by another module's export stands for, when that module is analysed already (link.ts);
     * undefined leaves it open for the end of the audit.
     */
    settle?: (path: Path) => Value[] | undefined
    /** The string another module's export holds, when known (null: not a constant). */
    constant?: (ref: Ref) => string | null | undefined
    /**
     * Values other modules pass to this module's exports (their `passes`): argument `index` of the exported function,
     * or of the exported class's constructor, holds `value`.
     */
    entries?: { name: string; index: number; value: Value }[]
  }

  const LANG: Record<string, string> = {
    js: "JavaScript",
    mjs: "JavaScript",
    cjs: "JavaScript",
    jsx: "JavaScript",
    ts: "TypeScript",
    mts: "TypeScript",
    cts: "TypeScript",
    tsx: "Tsx",
  }

  /**
   * The napi language for a JavaScript/TypeScript file name, or undefined (declaration files included).
   *
   * @example
   * PluginAnalysis.languageOf("a.mjs") // "JavaScript"
   * PluginAnalysis.languageOf("a.d.ts") // undefined
   */
  export function languageOf(file: string): string | undefined {
    if (/\.d\.[cm]?ts$/.test(file)) return undefined
    return LANG[file.slice(file.lastIndexOf(".") + 1).toLowerCase()]
  }

  /**
   * `node:fs` → `fs`, `fs/promises` → `fs.promises`, `child_process` stays; relative paths → "".
   *
   * @example
   * PluginAnalysis.normalizeModule("node:fs/promises") // "fs.promises"
   */
  export function normalizeModule(name: string): string {
    if (!name || name.startsWith(".") || name.startsWith("/")) return ""
    const bare = name.replace(/^node:/, "")
    if (bare === "fs/promises") return "fs.promises"
    // Bun's own module exports what the `Bun` global holds (`import { $ } from "bun"` is `Bun.$`).
    if (bare === "bun") return "Bun"
    return bare.split("/")[0] === "fs" ? "fs" : bare
  }

  /** Globals whose uses are followed (besides imported modules and literal constructor chains). */
  const ROOTS = [
    "fetch",
    "eval",
    "Function",
    "process",
    "Bun",
    "require",
    "module",
    "exports",
    "setTimeout",
    "setInterval",
    "setImmediate",
    "WebSocket",
    "EventSource",
    "XMLHttpRequest",
    "Worker",
    "navigator",
    "globalThis",
    "global",
    "window",
    "self",
  ]
  /**
   * Global functions and classes (their `constructor` is Function): `Object.constructor(code)` compiles code. Only
   * where no local name hides them.
   */
  const GLOBAL_FUNCTIONS = new Set([
    ...["Function", "Object", "Array", "String", "Number", "Boolean", "Symbol", "BigInt", "Promise", "RegExp", "Date"],
    ...["Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError", "EvalError", "URIError", "AggregateError"],
    ...["Map", "Set", "WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry", "Proxy", "ArrayBuffer", "DataView"],
    ...["SharedArrayBuffer", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array"],
    ...["Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"],
    ...["parseInt", "parseFloat", "isNaN", "isFinite", "encodeURI", "encodeURIComponent", "decodeURI"],
    ...["decodeURIComponent", "escape", "unescape", "eval", "setTimeout", "setInterval", "setImmediate"],
    ...["clearTimeout", "clearInterval", "clearImmediate", "queueMicrotask", "structuredClone", "fetch", "require"],
    ...["atob", "btoa", "Buffer", "URL", "URLSearchParams", "TextEncoder", "TextDecoder", "AbortController"],
    ...["AbortSignal", "Event", "EventTarget", "Headers", "Request", "Response", "Blob", "File", "FormData"],
    ...["WebSocket", "Worker", "EventSource", "XMLHttpRequest"],
  ])
  /** Global objects whose members are functions (but for constants such as `Math.PI`). */
  const NAMESPACES = new Set(["console", "JSON", "Math", "Reflect", "Atomics"])
  /** Modules whose imported names are followed; other packages are opaque unless they are part of the audit. */
  const MODULES = new Set([
    "fs",
    "fs.promises",
    "child_process",
    "net",
    "http",
    "https",
    "http2",
    "tls",
    "dgram",
    "vm",
    "os",
    "module",
    "process",
    "Bun",
    "dns",
    "worker_threads",
    "util",
  ])
  /** Bundler and compiler helpers that hand a module through (`__toESM(require("fs"))`). */
  const INTEROP = new Set([
    "__toESM",
    "__toCommonJS",
    "__importDefault",
    "__importStar",
    "_interopRequireDefault",
    "_interopRequireWildcard",
    "__importDefault2",
  ])
  const FUNCTION_SCOPES = new Set([
    "function_declaration",
    "function_expression",
    "function",
    "arrow_function",
    "method_definition",
    "generator_function_declaration",
    "generator_function",
    "class_static_block",
    "program",
  ])
  const BLOCK_SCOPES = new Set([
    ...FUNCTION_SCOPES,
    "statement_block",
    "for_statement",
    "for_in_statement",
    "switch_body",
    "catch_clause",
  ])
  const PATTERNS = new Set([
    "object_pattern",
    "array_pattern",
    "pair_pattern",
    "rest_pattern",
    "assignment_pattern",
    "object_assignment_pattern",
    "shorthand_property_identifier_pattern",
  ])
  const CLASSES = new Set(["class", "class_declaration", "abstract_class_declaration"])
  const FUNCTIONS = new Set([
    "function_expression",
    "function",
    "arrow_function",
    "generator_function",
    "function_declaration",
  ])
  /** `Reflect` functions that access or call their first argument, as the syntax they stand for. */
  const REFLECT: Record<string, "member" | "call" | "new"> = {
    "Reflect.get": "member",
    "Reflect.apply": "call",
    "Reflect.construct": "new",
  }
  const TRANSPARENT = new Set([
    "parenthesized_expression",
    "non_null_expression",
    "as_expression",
    "satisfies_expression",
    "type_assertion",
    "await_expression",
    "instantiation_expression",
  ])
  /** Rust-side filter for string nodes: a superset of the sensitive paths on the raw text (escapes are decoded in JS). */
  const SENSITIVE_RAW = AuditRules.SENSITIVE_WORDS
  /** The same words searched in a whole source: none there, no string node can match SENSITIVE_RAW. */
  const SENSITIVE_RAW_TEXT = new RegExp(SENSITIVE_RAW)
  /** Sources up to this size have each candidate name looked up before round 0's rule is built (see there). */
  const TEXT_GATE_BYTES = 256 * 1024
  const MAX_VALUES = 8
  /**
   * Values held by object and array literals (or returned in one), counted apart: a table of many members must not
   * push out the rest.
   */
  const MAX_HELD = 32
  const MAX_PATH = 12
  /** Steps of the cross-module step one value may take to be settled (see settleValue). */
  const MAX_SETTLE = 64
  const MAX_ROUNDS = 16

  /**
   * The findings of one file, sorted by position (names imported from other files are opaque here; PluginAudit
   * resolves them across the modules of a plugin).
   *
   * @example
   * PluginAnalysis.analyze("a.js", "eval(x)")[0].rule // "eval"
   */
  export function analyze(file: string, source: string): Finding[] {
    const lang = languageOf(file)
    if (!lang) return []
    return analyzeTree(file, parse(lang, source).root(), source).findings
  }

  type Occurrence = { node: SgNode; start: number; end: number; role?: Role }
  type Role = { kind: "decl"; binding: Binding } | { kind: "assign" } | { kind: "use" } | { kind: "ignore" }
  type Binding = {
    key: string
    name: string
    /** The declaring identifier. */
    node: SgNode
    start: number
    scope: SgNode
    scopeStart: number
    scopeEnd: number
    kind: "const" | "let" | "var" | "param" | "function" | "class" | "import" | "catch" | "other"
    /** The initializer of `name = init` declarators (for constant keys). */
    init?: SgNode
    values: Map<string, Value>
    /** The other module's export it was bound to, before settling (for constants). */
    ref?: Ref
    assigned: boolean
    uses?: SgNode[]
  }
  type MemberAlias = {
    key: string
    scope: SgNode
    prop: string
    values: Map<string, Value>
    uses?: SgNode[]
    /** Names destructured from `this` (`const { ctx } = this`): bound to each value. */
    targets?: SgNode[]
  }
  type Query = { node: SgNode; start: number; end: number; names: Set<string>; props: Set<string> }
  const NEED = Symbol("need")
  type Key = string | null | Ref

  const valueKey = (v: Value) =>
    JSON.stringify("path" in v ? v.path : { r: v.returns }, (_, x) => (x === CALL ? "\u0000()" : x))
  const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const isRef = (k: unknown): k is Ref => typeof k === "object" && k !== null && "ref" in k

  /**
   * The findings of one parsed file plus what link.ts needs to resolve names across modules.
   *
   * @example
   * const root = parse("JavaScript", src).root()
   * PluginAnalysis.analyzeTree("/p/a.js", root, src, { resolve: (s) => resolver(s) }).exports
   */
  export function analyzeTree(file: string, root: SgNode, source: string, options: Options = {}): Result {
    const steps = analysis(file, root, source, options)
    for (let step = steps.next(); ; step = steps.next()) if (step.done) return step.value
  }

  /**
   * `analyzeTree` in steps: yields between rounds how many native node wrappers it has roughly created since the
   * last yield, so a caller can let the collector free them (they are ~1 KB each until finalized).
   *
   * @example
   * const steps = PluginAnalysis.analysis("a.js", root, src)
   * for (let s = steps.next(); !s.done; s = steps.next()) if (s.value > 20_000) await collect()
   */
  export function* analysis(
    file: string,
    root: SgNode,
    source: string,
    options: Options = {},
  ): Generator<number, Result> {
    let effort = 0
    let lines: string[] | undefined
    // Snippets quote the file as written; the analysis reads identifiers spelled with escapes plainly.
    const written = source
    let writtenLines: string[] | undefined
    const lang = IdentifierEscapes.possible(source) ? languageOf(file) : undefined
    const unescaped = lang ? IdentifierEscapes.unescape(root, source, lang) : undefined
    if (unescaped !== undefined && lang) {
      root = parse(lang, unescaped).root()
      source = unescaped
    }
    const findings: Finding[] = []
    const deferred: Deferred[] = []
    const shellText = SHELL_USE.test(source)
    const exports: Record<string, Export & { local?: string; expr?: SgNode; at?: number }> = Object.create(null)
    const stars: string[] = []
    const imports = new Set<string>()

    const position = (node: SgNode): Position => {
      const { line, column } = node.range().start
      return { line: line + 1, column: column + 1 }
    }
    const reported = new Set<string>()
    const report = (node: SgNode, verdict: AuditRules.Verdict) => {
      const at = position(node)
      const key = `${verdict.rule}:${at.line}:${at.column}`
      if (reported.has(key)) return
      reported.add(key)
      writtenLines ??= written.split("\n")
      findings.push({ ...verdict, file, ...at, snippet: snippet(writtenLines[at.line - 1] ?? "", at.column) })
    }

    /**
     * A value headed by another module's export, replaced by what it stands for where that module is known. Modules
     * in a cycle whose functions return literals holding each other's results (zod-to-json-schema's parsers and
     * `parseDef`) branch at every step, so the values are settled breadth first (nearer answers first), each once,
     * in at most MAX_SETTLE steps; what is left then stays as it is (settled again where it is used).
     */
    function settleValue(value: Value, budget = { steps: MAX_SETTLE }): Value[] {
      if (!options.settle) return [value]
      if ("returns" in value) {
        const returns = value.returns.flatMap((p) =>
          settleValue({ path: p }, budget).flatMap((v) => ("path" in v ? [v.path] : [])),
        )
        return returns.length ? [{ returns }] : []
      }
      const out: Value[] = []
      const seen = new Set<string>()
      let level: Value[] = [value]
      for (let depth = 0; level.length; depth++) {
        const next: Value[] = []
        for (const v of level) {
          if ("returns" in v) {
            out.push(...settleValue(v, budget))
            continue
          }
          const head = v.path[0]
          if (!isRef(head) || head.key || depth > 8 || budget.steps <= 0) {
            out.push(v)
            continue
          }
          const key = valueKey(v)
          if (seen.has(key)) continue
          seen.add(key)
          budget.steps--
          const found = options.settle(v.path)
          if (found === undefined) {
            out.push(v)
            continue
          }
          for (const f of found) {
            // A namespace stays itself, unless its CommonJS module replaced its exports (`module.exports = fetch`).
            if ("path" in f && f.path === v.path) out.push(v)
            else next.push(f)
          }
        }
        level = next
      }
      return out
    }
    /** An export's constant where its module is known; the Ref itself otherwise. */
    function constantOf(ref: Ref): Key {
      const c = options.constant?.(ref)
      return c === undefined ? ref : c
    }

    // ---- names, scopes and bindings ----
    const occurrences = new Map<string, Occurrence[]>()
    const seenOccurrence = new Set<number>()
    const coverage = new Map<string, [number, number][]>()
    const decls = new Map<string, Binding[]>()
    const bindings = new Map<string, Binding>()
    const waiting: Binding[] = []
    const members = new Map<string, MemberAlias>()
    const seenMembers = new Set<string>()
    const waitingMembers: MemberAlias[] = []
    const memberCoverage = new Map<string, Set<number>>()
    const queries = new Map<number, Query>()
    let retries: (() => void)[] = []
    const work: [SgNode, Value][] = []
    const passes: Pass[] = []
    /**
     * Calls of a wrapper (`util.promisify(f)`, AuditRules.wraps), and the values passed as the first argument of some
     * call, both by the call's node id. The two are followed separately (the wrapper and the function it wraps come by
     * different names); where they meet, the call stands for the value wrapped.
     */
    const wrapperCalls = new Set<number>()
    const passed = new Map<number, Value[]>()
    const rootRange = root.range()
    const programEnd = rootRange.end.index + 1

    const covered = (name: string, start: number, end: number) =>
      (coverage.get(name) ?? []).some(([s, e]) => s <= start && end <= e)

    const want = (scope: SgNode, name: string, prop = false) => {
      const id = scope.id()
      let q = queries.get(id)
      if (!q) {
        const r = scope.range()
        q = { node: scope, start: r.start.index, end: r.end.index + 1, names: new Set(), props: new Set() }
        queries.set(id, q)
      }
      ;(prop ? q.props : q.names).add(name)
    }
    const wantName = (name: string) => want(root, name)

    function nearest(node: SgNode, kinds: Set<string>): SgNode {
      let current: SgNode | null = node.parent()
      while (current && !kinds.has(current.kind() as string)) current = current.parent()
      return current ?? root
    }

    function makeBinding(id: SgNode, start: number, kind: Binding["kind"], scope: SgNode, init?: SgNode): Binding {
      const name = id.text()
      const key = `${name}@${start}`
      const existing = bindings.get(key)
      if (existing) return existing
      const r = scope.range()
      const binding: Binding = {
        key,
        name,
        node: id,
        start,
        scope,
        scopeStart: r.start.index,
        scopeEnd: r.end.index + 1,
        kind,
        init,
        values: new Map(),
        assigned: false,
      }
      bindings.set(key, binding)
      const list = decls.get(name) ?? []
      list.push(binding)
      decls.set(name, list)
      return binding
    }

    /** The binding an identifier or pattern name declares, if it is a declaration. */
    function declaration(id: SgNode, start: number, parent = id.parent()): Binding | "ignore" | undefined {
      if (!parent) return undefined
      const pk = parent.kind()
      if (pk === "variable_declarator") {
        if (!sameNode(parent.field("name"), id)) return undefined
        return declarator(parent, id, start, parent.field("value") ?? undefined)
      }
      if (PATTERNS.has(pk as string) || id.kind() === "shorthand_property_identifier_pattern") {
        if (pk === "pair_pattern" && sameNode(parent.field("key"), id)) return "ignore"
        if (pk === "assignment_pattern" && !sameNode(parent.field("left"), id)) return undefined
        if (pk === "object_assignment_pattern" && !sameNode(parent.field("left"), id)) return undefined
        let top: SgNode = parent
        let holder = top.parent()
        while (holder && PATTERNS.has(holder.kind() as string)) {
          top = holder
          holder = top.parent()
        }
        if (!holder) return undefined
        const hk = holder.kind()
        if (hk === "variable_declarator") return declarator(holder, id, start)
        if (hk === "assignment_expression" || hk === "for_in_statement") {
          if (hk === "for_in_statement" && holder.field("kind"))
            return makeBinding(id, start, holder.field("kind")!.text() === "var" ? "var" : "let", holder)
          return undefined
        }
        return makeBinding(id, start, "param", nearest(id, FUNCTION_SCOPES))
      }
      switch (pk) {
        case "formal_parameters":
          return makeBinding(id, start, "param", nearest(id, FUNCTION_SCOPES))
        case "required_parameter":
        case "optional_parameter":
          return sameNode(parent.field("pattern"), id)
            ? makeBinding(id, start, "param", nearest(id, FUNCTION_SCOPES))
            : undefined
        case "arrow_function":
          return sameNode(parent.field("parameter"), id) ? makeBinding(id, start, "param", parent) : undefined
        case "function_declaration":
        case "generator_function_declaration":
          return sameNode(parent.field("name"), id)
            ? makeBinding(id, start, "function", nearest(parent, FUNCTION_SCOPES))
            : undefined
        case "function_expression":
        case "function":
        case "generator_function":
        case "class":
          return sameNode(parent.field("name"), id) ? makeBinding(id, start, "function", parent) : undefined
        case "class_declaration":
        case "enum_declaration":
        case "internal_module":
          return sameNode(parent.field("name"), id) ? makeBinding(id, start, "class", scopeOf(parent)) : undefined
        case "catch_clause":
          return makeBinding(id, start, "catch", parent)
        case "for_in_statement":
          if (sameNode(parent.field("left"), id) && parent.field("kind"))
            return makeBinding(id, start, parent.field("kind")!.text() === "var" ? "var" : "let", parent)
          return undefined
        case "import_clause":
        case "namespace_import":
        case "import_require_clause":
          return makeBinding(id, start, "import", root)
        case "import_specifier": {
          const alias = parent.field("alias")
          if (alias && !sameNode(alias, id)) return "ignore"
          return makeBinding(id, start, "import", root)
        }
        case "export_specifier":
        case "type_query":
        case "labeled_statement":
        case "break_statement":
        case "continue_statement":
          return "ignore"
      }
      return undefined
    }

    function scopeOf(node: SgNode): SgNode {
      return nearest(node, BLOCK_SCOPES)
    }

    function declarator(decl: SgNode, id: SgNode, start: number, init?: SgNode): Binding | "ignore" {
      const holder = decl.parent()
      if (holder?.parent()?.kind() === "ambient_declaration") return "ignore"
      const keyword = holder?.kind() === "lexical_declaration" ? holder.field("kind")?.text() : "var"
      const kind = keyword === "const" ? "const" : keyword === "let" ? "let" : "var"
      const scope = kind === "var" ? nearest(decl, FUNCTION_SCOPES) : scopeOf(decl)
      return makeBinding(id, start, kind, scope, init)
    }

    function roleOf(o: Occurrence): Role {
      if (o.role) return o.role
      effort += 3
      const parent = o.node.parent()
      const d = declaration(o.node, o.start, parent)
      if (d === "ignore") return (o.role = { kind: "ignore" })
      if (d) return (o.role = { kind: "decl", binding: d })
      const pk = parent?.kind()
      if (
        (pk === "assignment_expression" && sameNode(parent!.field("left"), o.node)) ||
        (pk === "augmented_assignment_expression" && sameNode(parent!.field("left"), o.node)) ||
        pk === "update_expression"
      )
        return (o.role = { kind: "assign" })
      return (o.role = { kind: "use" })
    }

    /** The binding visible at `start` for `name` (its occurrences there must have been queried). */
    const classified = new Map<string, number>()
    function classifyAll(name: string) {
      const list = occurrences.get(name)
      if (!list) return
      for (let i = classified.get(name) ?? 0; i < list.length; i++) roleOf(list[i])
      classified.set(name, list.length)
    }

    function bindingAt(name: string, start: number): Binding | undefined {
      classifyAll(name)
      let best: Binding | undefined
      for (const b of decls.get(name) ?? []) {
        if (
          b.scopeStart <= start &&
          start < b.scopeEnd &&
          (!best || b.scopeEnd - b.scopeStart < best.scopeEnd - best.scopeStart)
        )
          best = b
      }
      return best
    }

    function addOccurrences(nodes: SgNode[], query: Query) {
      effort += nodes.length
      for (const node of nodes) {
        const r = node.range()
        const start = r.start.index
        if (seenOccurrence.has(start)) continue
        seenOccurrence.add(start)
        const name = node.text()
        const list = occurrences.get(name) ?? []
        list.push({ node, start, end: r.end.index })
        occurrences.set(name, list)
      }
      for (const name of query.names) {
        const list = coverage.get(name) ?? []
        list.push([query.start, query.end])
        coverage.set(name, list)
      }
    }

    function addValue(binding: Binding, incoming: Value) {
      binding.ref ??= refOf(incoming)
      for (const value of settleValue(incoming)) addSettled(binding, value)
    }
    function addSettled(binding: Binding, value: Value) {
      if (!worthFollowing(value)) return
      const key = valueKey(value)
      if (binding.values.has(key) || full(binding.values.values(), value)) return
      binding.values.set(key, value)
      if (binding.uses) for (const use of binding.uses) work.push([use, value])
      else if (binding.values.size === 1) {
        if (covered(binding.name, binding.scopeStart, binding.scopeEnd)) resolveUses(binding)
        else {
          want(binding.scope, binding.name)
          waiting.push(binding)
        }
      }
    }

    function resolveUses(binding: Binding) {
      if (binding.uses) return
      classifyAll(binding.name)
      binding.uses = []
      for (const o of occurrences.get(binding.name) ?? []) {
        if (o.start < binding.scopeStart || o.start >= binding.scopeEnd) continue
        const role = roleOf(o)
        if (role.kind === "assign") {
          if (bindingAt(binding.name, o.start) === binding) binding.assigned = true
          continue
        }
        if (role.kind !== "use") continue
        if (bindingAt(binding.name, o.start) === binding) binding.uses.push(o.node)
      }
      for (const use of binding.uses) for (const value of binding.values.values()) work.push([use, value])
    }

    /** True when `values` has no room for `value`: MAX_VALUES, and MAX_HELD more for values held by literals. */
    function full(values: Iterable<Value>, value: Value): boolean {
      const held = isHeld(value)
      let n = 0
      for (const v of values) if (isHeld(v) === held) n++
      return n >= (held ? MAX_HELD : MAX_VALUES)
    }
    const isHeld = (v: Value) =>
      "path" in v
        ? AuditRules.isInto(v.path[v.path.length - 1])
        : v.returns.some((p) => AuditRules.isInto(p[p.length - 1]))

    function worthFollowing(value: Value): boolean {
      return "path" in value ? AuditRules.useful(value.path) : value.returns.some((p) => AuditRules.useful(p))
    }

    function memberAlias(scope: SgNode, prop: string, value: Value) {
      if (!worthFollowing(value)) return
      const key = `${scope.id()}.${prop}`
      let alias = members.get(key)
      if (!alias) {
        alias = { key, scope, prop, values: new Map() }
        members.set(key, alias)
      }
      const vk = valueKey(value)
      if (alias.values.has(vk) || full(alias.values.values(), value)) return
      alias.values.set(vk, value)
      if (alias.uses) for (const use of alias.uses) work.push([use, value])
      else if (alias.values.size === 1) {
        want(scope, prop, true)
        waitingMembers.push(alias)
      }
      for (const target of alias.targets ?? []) bindName(target, value)
      // The plugin input on `this` is on the instances of the classes that extend this one (declared in this file).
      if (scope.kind() === "class_body" && "path" in value && value.path[0] === AuditRules.PLUGIN_INPUT)
        for (const sub of subclasses(scope)) memberAlias(sub, prop, value)
    }

    /** The bodies of the classes of this file that extend the class whose body is `body` by its name. */
    let heritages: { base: string; body: SgNode }[] | undefined
    function subclasses(body: SgNode): SgNode[] {
      const cls = body.parent()
      let name = cls?.field("name")?.text()
      if (!name && cls?.parent()?.kind() === "variable_declarator") name = cls.parent()!.field("name")?.text()
      if (!name) return []
      heritages ??= root.findAll({ rule: { kind: "class_heritage" } } as any).flatMap((h) => {
        const c = h.parent()
        const base = c ? superclass(c) : undefined
        const b = c?.field("body") ?? c?.children().find((x) => x.kind() === "class_body")
        return base?.kind() === "identifier" && b ? [{ base: base.text(), body: b }] : []
      })
      return heritages.filter((h) => h.base === name).map((h) => h.body)
    }

    /** What `this` means at a node: the class body of a method or field, or the nearest non-arrow function. */
    function thisScope(node: SgNode): SgNode {
      let current: SgNode | null = node.parent()
      while (current) {
        const k = current.kind()
        if (k === "class_body" || k === "program") return current
        if (k === "function_declaration" || k === "function_expression" || k === "function") return current
        if (k === "generator_function" || k === "generator_function_declaration") return current
        current = current.parent()
      }
      return root
    }

    // ---- constant keys ----
    function evalKey(node: SgNode | null | undefined, soft: boolean, depth = 0): Key | typeof NEED {
      if (!node || depth > 30) return null
      switch (node.kind()) {
        case "string":
          return stringValue(node)
        case "template_string": {
          let out = ""
          for (const c of node.children()) {
            const k = c.kind()
            if (k === "string_fragment") out += c.text()
            else if (k === "escape_sequence") out += unescape(c.text())
            else if (k === "template_substitution") {
              const inner = c.children().find((x) => x.isNamed())
              const v = evalKey(inner, soft, depth + 1)
              if (v === NEED) return NEED
              if (typeof v !== "string") return null
              out += v
            }
          }
          return out
        }
        case "number": {
          const n = Number(node.text().replace(/_/g, ""))
          return Number.isFinite(n) ? String(n) : null
        }
        case "parenthesized_expression":
        case "as_expression":
        case "satisfies_expression":
        case "non_null_expression":
          return evalKey(
            node.children().find((c) => c.isNamed()),
            soft,
            depth + 1,
          )
        case "identifier": {
          const name = node.text()
          const start = node.range().start.index
          if (!covered(name, start, start + 1)) {
            if (soft) return null
            wantName(name)
            return NEED
          }
          const b = bindingAt(name, start)
          if (!b) return null
          const constant =
            b.kind === "const" || b.kind === "import" || ((b.kind === "let" || b.kind === "var") && !assigned(b))
          if (!constant) return null
          // Bound to another module's export (`import { K }`, `const { K } = require("./keys")`).
          if (b.ref) return constantOf(b.ref)
          return b.init ? evalKey(b.init, soft, depth + 1) : null
        }
        case "member_expression": {
          // `ns.K` where ns is a module namespace of the audit.
          const object = node.field("object")
          if (object?.kind() !== "identifier") return null
          const name = object.text()
          const start = object.range().start.index
          if (!covered(name, start, start + 1)) {
            if (soft) return null
            wantName(name)
            return NEED
          }
          const b = bindingAt(name, start)
          const prop = node.field("property")?.text()
          if (!b?.ref || b.ref.name !== "*" || !prop) return null
          return constantOf({ ref: b.ref.ref, name: prop })
        }
        case "binary_expression": {
          if (node.field("operator")?.text() !== "+") return null
          const l = evalKey(node.field("left"), soft, depth + 1)
          if (l === NEED) return NEED
          const r = evalKey(node.field("right"), soft, depth + 1)
          if (r === NEED) return NEED
          return typeof l === "string" && typeof r === "string" ? l + r : null
        }
        case "call_expression": {
          const callee = node.field("function")
          if (!callee) return null
          const args = (node.field("arguments")?.children() ?? []).filter((c) => c.isNamed() && c.kind() !== "comment")
          const ck = callee.kind()
          const calleeText =
            ck === "identifier"
              ? callee.text()
              : ck === "member_expression" && callee.field("object")?.kind() === "identifier"
                ? `${callee.field("object")!.text()}.${callee.field("property")?.text()}`
                : ""
          const all = (list: SgNode[]) => {
            const out: string[] = []
            for (const a of list) {
              const v = evalKey(a, soft, depth + 1)
              if (v === NEED) return NEED
              if (typeof v !== "string") return null
              out.push(v)
            }
            return out
          }
          const resolves =
            (args.length === 1 || args.length === 2) && ck === "member_expression"
              ? callee.text() === "import.meta.resolve" || resolvesModules(callee, soft)
              : false
          if (resolves === NEED) return NEED
          if (resolves) {
            // `require.resolve("x")` (also of a `createRequire(…)` require) and `import.meta.resolve("x")`: the file of
            // module "x", so `require(require.resolve("x"))` loads "x" and stands for it as a module name.
            const spec = evalKey(args[0], soft, depth + 1)
            return spec === NEED || typeof spec === "string" ? spec : null
          }
          if (calleeText === "String.fromCharCode") {
            const codes = all(args)
            if (codes === NEED || codes === null || codes.some((c) => !/^\d+$/.test(c)))
              return codes === NEED ? NEED : null
            return String.fromCharCode(...codes.map(Number))
          }
          if (calleeText === "atob" && args.length === 1) {
            const encoded = evalKey(args[0], soft, depth + 1)
            if (encoded === NEED) return NEED
            if (typeof encoded !== "string") return null
            try {
              return atob(encoded)
            } catch {
              return null
            }
          }
          if (ck === "member_expression" && callee.field("property")?.text() === "toString") {
            // `Buffer.from("ZXZhbA==", "base64").toString()`: a constant decoded as atob does.
            const from = callee.field("object")
            const fromCallee = from?.kind() === "call_expression" ? from.field("function") : undefined
            if (fromCallee?.text() !== "Buffer.from") return null
            const parts = all(
              (from!.field("arguments")?.children() ?? []).filter((c) => c.isNamed() && c.kind() !== "comment"),
            )
            const target = all(args)
            if (parts === NEED || target === NEED) return NEED
            if (!parts || !target || parts.length < 1 || parts.length > 2 || target.length > 1) return null
            const [text, encoding = "utf8"] = parts
            const to = target[0] ?? "utf8"
            if (!Buffer.isEncoding(encoding) || !Buffer.isEncoding(to)) return null
            return Buffer.from(text, encoding).toString(to)
          }
          if (callee.kind() === "member_expression" && callee.field("property")?.text() === "join") {
            const array = callee.field("object")
            if (array?.kind() !== "array") return null
            const items = all(array.children().filter((c) => c.isNamed() && c.kind() !== "comment"))
            if (items === NEED || items === null) return items
            const sep = args[0] ? evalKey(args[0], soft, depth + 1) : ","
            if (sep === NEED) return NEED
            return typeof sep === "string" ? items.join(sep) : null
          }
          return null
        }
      }
      return null
    }

    /**
     * True for a callee `<r>.resolve` where `r` is the global `require` or a name bound to a `require` (`const r =
     * createRequire(import.meta.url)`, Bun's `__require`).
     */
    function resolvesModules(callee: SgNode, soft: boolean): boolean | typeof NEED {
      if (callee.field("property")?.text() !== "resolve") return false
      const object = callee.field("object")
      if (object?.kind() !== "identifier") return false
      const name = object.text()
      const start = object.range().start.index
      if (!covered(name, start, start + 1)) {
        if (soft) return false
        wantName(name)
        return NEED
      }
      const b = bindingAt(name, start)
      if (!b) return name === "require"
      for (const v of b.values.values()) if ("path" in v && AuditRules.isLoader(v.path)) return true
      return false
    }

    /** `[Ref]` or `[namespace Ref, key]` as the one export they stand for. */
    function refOf(v: Value): Ref | undefined {
      if (!("path" in v)) return undefined
      const [first, key] = v.path
      if (!isRef(first) || first.key) return undefined
      if (v.path.length === 1) return first
      if (v.path.length === 2 && first.name === "*" && typeof key === "string") return { ref: first.ref, name: key }
      return undefined
    }

    function assigned(b: Binding): boolean {
      if (!b.uses) resolveUses(b)
      return b.assigned
    }

    // ---- following values ----
    const extend = (path: Path, key: Key): Path => {
      if (path.length === 0 && typeof key === "string" && AuditRules.GLOBAL_OBJECTS.has(key)) return path
      if (path.length === 1 && key === "default" && !AuditRules.isInto(path[0])) return path
      // `require("module").Module` is the module itself (the class).
      if (path.length === 1 && path[0] === "module" && key === "Module") return path
      if (path.length >= MAX_PATH) return path
      return AuditRules.member(path, isRef(key) ? { ref: key.ref, name: key.name, key: true } : key)
    }
    const isEnv = (p: Path) => p.length === 2 && (p[0] === "process" || p[0] === "Bun") && p[1] === "env"

    function finish(node: SgNode, path: Path, site: AuditRules.Site) {
      if (AuditRules.isConcrete(path)) {
        const verdict = AuditRules.classify(path, site)
        if (verdict) report(node, verdict)
      } else if (
        path.length <= MAX_PATH &&
        !path.some(AuditRules.isInto) &&
        (!AuditRules.isNamespace(path) || open(path))
      )
        deferred.push({ kind: "site", path, site: plain(site), ...position(node) })
    }

    /**
     * A namespace whose module is not analysed yet (a cycle of requires): it may be a CommonJS module that replaced
     * its exports (`module.exports = fetch`), so a call of it is kept for link.ts. Namespaces of modules analysed
     * already were settled where the value was followed, and are never kept.
     */
    const open = (path: Path) => !!options.settle && options.settle(path) === undefined

    function reportEnv(node: SgNode, parent: SgNode | null) {
      const pk = parent?.kind()
      const whole =
        parent &&
        (pk === "member_expression" || pk === "subscript_expression") &&
        sameNode(parent.field("object"), node)
      const text = shortText(whole ? parent : node)
      const written =
        parent?.parent()?.kind() === "assignment_expression" && sameNode(parent.parent()!.field("left"), parent)
      report(node, {
        severity: "low",
        rule: "process-env",
        message: `${text.length > 80 ? text.slice(0, 77) + "…" : text}: ${written ? "sets" : "reads"} the environment`,
      })
    }

    function arguments_(call: SgNode): SgNode[] {
      return (call.field("arguments")?.children() ?? []).filter((c) => c.isNamed() && c.kind() !== "comment")
    }

    /**
     * For a callee `<x>.bind.apply`, `<x>.call.call`, `<x>.apply.call`… (a `bind`/`call`/`apply` borrowed from any
     * function and called through `call` or `apply`): the borrowed method and the one it is called through.
     */
    function borrowedMethod(
      callee: SgNode | null | undefined,
    ): ["bind" | "call" | "apply", "call" | "apply"] | undefined {
      if (callee?.kind() !== "member_expression") return undefined
      const outer = callee.field("property")?.text()
      if (outer !== "call" && outer !== "apply") return undefined
      let object = callee.field("object")
      while (object && TRANSPARENT.has(object.kind() as string))
        object = object.children().find((c) => c.isNamed()) ?? null
      if (object?.kind() !== "member_expression") return undefined
      const inner = object.field("property")?.text()
      if (inner !== "bind" && inner !== "call" && inner !== "apply") return undefined
      return [inner, outer]
    }

    /** `<any function>.bind` / `.call` / `.apply` as a value (parentheses and casts looked through): which one. */
    function borrowedMember(node: SgNode | null | undefined): "bind" | "call" | "apply" | undefined {
      while (node && TRANSPARENT.has(node.kind() as string)) node = node.children().find((c) => c.isNamed()) ?? null
      if (node?.kind() !== "member_expression") return undefined
      const name = node.field("property")?.text()
      return name === "bind" || name === "call" || name === "apply" ? name : undefined
    }

    /** A call site whose details are computed only if the rule table asks for them. */
    function siteOf(kind: "call" | "new", call: SgNode, callee: SgNode, shift = 0, spread = false): AuditRules.Site {
      let list: SgNode[] | undefined
      const args = () => {
        if (list) return list
        const a = call.field("arguments")
        return (list = a?.kind() === "arguments" ? arguments_(call).slice(shift) : a ? [a] : [])
      }
      return {
        kind,
        get callee() {
          return shortText(callee)
        },
        get firstStringLike() {
          const first = args()[0]
          return first ? ["string", "template_string", "binary_expression"].includes(first.kind() as string) : false
        },
        get lastArgument() {
          const all = args()
          const v = all.length ? evalKey(all[all.length - 1], true) : null
          return typeof v === "string" ? v : undefined
        },
        get hasArguments() {
          // `.apply(t, list)` and `Reflect.apply(f, t, list)`: the list, unless it is written empty.
          const first = args()[0]
          if (!spread || !first) return first !== undefined
          return first.kind() !== "array" || first.children().some((c) => c.isNamed() && c.kind() !== "comment")
        },
        get evalOption() {
          const options = args()[1]
          if (options?.kind() !== "object") return false
          return options.children().some((c) => {
            const key = c.kind() === "pair" ? c.field("key") : c.kind() === "shorthand_property_identifier" ? c : null
            if (!key || key.text().replace(/^["'`]|["'`]$/g, "") !== "eval") return false
            const value = c.kind() === "pair" ? c.field("value") : null
            return value?.kind() !== "false"
          })
        },
      }
    }

    /** Materialized for a deferred site (no node survives the analysis). */
    const plain = (site: AuditRules.Site): AuditRules.Site => ({
      kind: site.kind,
      callee: site.callee,
      firstStringLike: site.firstStringLike,
      lastArgument: site.lastArgument,
      flows: site.flows,
      hasArguments: site.hasArguments,
      evalOption: site.evalOption,
    })

    /** Source text for messages: whitespace collapsed, at most 80 characters, without reading a large node whole. */
    function shortText(node: SgNode): string {
      const r = node.range()
      let text: string
      if (r.end.index - r.start.index <= 160) text = node.text()
      else {
        lines ??= source.split("\n")
        text = (lines[r.start.line] ?? "").slice(r.start.column, r.start.column + 120)
      }
      text = text.replace(/\s+/g, " ")
      return text.length > 80 ? text.slice(0, 77) + "…" : text
    }

    /**
     * A module loaded by name; returns its value (undefined when unknown) or NEED. With `spread`, the argument at
     * `shift` is the list of arguments (`require.apply(t, [name])`, `Reflect.apply(require, t, [name])`).
     */
    function load(call: SgNode, how: "import" | "require", shift = 0, spread = false): Path | undefined | typeof NEED {
      let arg: SgNode | undefined = arguments_(call)[shift]
      if (!arg) return undefined
      if (spread) {
        const list = arg.kind() === "array" ? arg.children().filter((c) => c.isNamed() && c.kind() !== "comment") : []
        if (arg.kind() === "array" && !list.length) return undefined
        if (!list.length || list[0].kind() === "spread_element") {
          report(call, AuditRules.dynamicLoad(how))
          return undefined
        }
        arg = list[0]
      }
      const spec = evalKey(arg, false)
      if (spec === NEED) return NEED
      if (spec === null) {
        const names = candidates(arg)
        if (names === NEED) return NEED
        if (names?.length && names.every((n) => /\.node$/i.test(n))) report(call, AuditRules.nativeAddons(names))
        else report(call, AuditRules.dynamicLoad(how))
        return undefined
      }
      if (isRef(spec)) {
        deferred.push({ kind: "module", how, spec, ...position(call) })
        return undefined
      }
      return moduleValue(spec, call)
    }

    /**
     * The strings a module name not known statically may be, when it is one of a few written here: a template (its
     * substitutions as `${…}`), either side of `?:`, a name bound once to one, or the variable of a `for…of` over an
     * array literal of them. Undefined when not all are known.
     */
    function candidates(node: SgNode | null | undefined, depth = 0): string[] | undefined | typeof NEED {
      while (node && TRANSPARENT.has(node.kind() as string)) node = node.children().find((c) => c.isNamed()) ?? null
      if (!node || depth > 6) return undefined
      const k = node.kind()
      if (k === "string" || k === "template_string") return [literalText(node)]
      if (k === "ternary_expression") {
        const a = candidates(node.field("consequence"), depth + 1)
        const b = candidates(node.field("alternative"), depth + 1)
        if (a === NEED || b === NEED) return NEED
        return a && b ? [...a, ...b] : undefined
      }
      if (k === "array") {
        const out: string[] = []
        for (const item of node.children().filter((c) => c.isNamed() && c.kind() !== "comment")) {
          const more = candidates(item, depth + 1)
          if (more === NEED) return NEED
          if (!more) return undefined
          out.push(...more)
        }
        return out.length <= 32 ? out : undefined
      }
      if (k !== "identifier") return undefined
      const name = node.text()
      const start = node.range().start.index
      if (!covered(name, start, start + 1)) {
        wantName(name)
        return NEED
      }
      const b = bindingAt(name, start)
      if (!b || (b.kind !== "const" && assigned(b))) return undefined
      if (b.init) return b.init.kind() === "array" ? undefined : candidates(b.init, depth + 1)
      const loop = b.node.parent()
      if (loop?.kind() !== "for_in_statement" || loop.field("operator")?.text() !== "of") return undefined
      const list = loop.field("right")
      if (list?.kind() === "array") return candidates(list, depth + 1)
      if (list?.kind() !== "identifier") return undefined
      const listName = list.text()
      const at = list.range().start.index
      if (!covered(listName, at, at + 1)) {
        wantName(listName)
        return NEED
      }
      const lb = bindingAt(listName, at)
      return lb?.init?.kind() === "array" && (lb.kind === "const" || !assigned(lb))
        ? candidates(lb.init, depth + 1)
        : undefined
    }

    function moduleValue(spec: string, node: SgNode | undefined): Path | undefined {
      imports.add(spec)
      if (node && /^(data|blob):/i.test(spec)) report(node, AuditRules.inlineModule(spec))
      if (node && /\.node$/i.test(spec)) report(node, AuditRules.nativeAddon(spec))
      const mod = normalizeModule(spec)
      if (mod && node) {
        const verdict = AuditRules.moduleImport(mod)
        if (verdict) report(node, verdict)
      }
      const target = options.resolve?.(spec)
      if (target) return [{ ref: target, name: "*" }]
      return mod ? mod.split(".") : undefined
    }

    /**
     * The value of calling `value` at `call` (its arguments from `shift` on, 1 for `.call`; with `spread`, the list at
     * `shift`, as `.apply` takes them), or undefined.
     */
    function result(value: Value, call: SgNode, shift = 0, spread = false): Value[] | typeof NEED {
      if ("returns" in value) return value.returns.map((path) => ({ path }))
      const p = value.path
      if (AuditRules.isLoader(p)) {
        const v = load(call, "require", shift, spread)
        return v === NEED ? NEED : v ? [{ path: v }] : []
      }
      if (p.length === 2 && p[0] === "module" && p[1] === "createRequire") return [{ path: ["require"] }]
      if (!AuditRules.isConcrete(p) && p.length < MAX_PATH) return [{ path: [...p, CALL] }]
      return []
    }

    function climb(start: SgNode, value: Value) {
      let node = start
      let val = value
      for (let steps = 0; steps < 64; steps++) {
        effort += 4
        if ("path" in val && isRef(val.path[0]) && !val.path[0].key) {
          const next = settleValue(val)
          if (next.length !== 1 || next[0] !== val) {
            if (!next.length) return
            // A CommonJS namespace may stand for what `module.exports` holds and stay itself (named exports too).
            const others = next.filter((v) => v !== val)
            if (others.length === next.length) val = others.shift()!
            for (const extra of others) work.push([node, extra])
          }
        }
        const parent = node.parent()
        if ("path" in val) {
          const p = val.path
          if (isEnv(p)) reportEnv(node, parent)
          else if (!AuditRules.isConcrete(p)) {
            if (p.length > 4) return
            if (p.length <= 2 && !p.includes(CALL)) probe(node, p, parent)
          } else if (!AuditRules.useful(p)) return
        }
        if (!parent) return
        const pk = parent.kind()
        if (TRANSPARENT.has(pk as string)) {
          node = parent
          continue
        }
        switch (pk) {
          case "member_expression": {
            if (!("path" in val) || !sameNode(parent.field("object"), node)) return
            const prop = parent.field("property")?.text() ?? null
            const outer = parent.parent()
            if (prop === "then" && outer?.kind() === "call_expression" && sameNode(outer.field("function"), parent)) {
              // `import("fs").then((fs) => …)`: the callback receives the value.
              const callback = arguments_(outer)[0]
              if (callback && FUNCTIONS.has(callback.kind() as string)) bindParameter(callback, 0, val)
              return
            }
            if (
              outer?.kind() === "call_expression" &&
              sameNode(outer.field("function"), parent) &&
              (prop === "call" || prop === "apply" || prop === "bind")
            ) {
              if (prop === "bind") {
                node = outer
                continue
              }
              const site = siteOf("call", outer, node, 1, prop === "apply")
              finish(outer, val.path, prop === "apply" ? { ...site, firstStringLike: false } : site)
              const next = result(val, outer, 1, prop === "apply")
              if (next === NEED) {
                // A module name bound to a name not looked up yet (`require.call(null, x)`): again once it is.
                const at = node
                const v = val
                retries.push(() => climb(at, v))
                return
              }
              if (!next.length) return
              for (const extra of next.slice(1)) work.push([outer, extra])
              node = outer
              val = next[0]
              continue
            }
            val = { path: extend(val.path, prop) }
            node = parent
            continue
          }
          case "subscript_expression": {
            if (!("path" in val)) return
            if (!sameNode(parent.field("object"), node)) return read(node, val, true)
            const key = evalKey(parent.field("index"), false)
            if (key === NEED) {
              retries.push(() => climb(node, val))
              return
            }
            const outer = parent.parent()
            if (
              (key === null || isRef(key)) &&
              AuditRules.isInto(val.path[val.path.length - 1]) &&
              outer?.kind() === "call_expression" &&
              sameNode(outer.field("function"), parent)
            ) {
              // `table[name](code)` with `table` holding eval or Function: may call it. A lookup that is only read
              // (get-intrinsic's `INTRINSICS[name]`) is not followed.
              val = { path: val.path.slice(0, -1) }
              node = parent
              continue
            }
            val = { path: extend(val.path, key) }
            node = parent
            continue
          }
          case "call_expression": {
            if (!sameNode(parent.field("function"), node)) return
            if ("path" in val) finish(parent, val.path, siteOf("call", parent, node))
            if ("path" in val && AuditRules.wraps(val.path) && !wrapperCalls.has(parent.id())) {
              // `promisify(exec)`: what the call returns does what its first argument does (see `passed`).
              wrapperCalls.add(parent.id())
              for (const v of passed.get(parent.id()) ?? []) work.push([parent, v])
              return
            }
            const next = result(val, parent)
            if (next === NEED) {
              retries.push(() => climb(node, val))
              return
            }
            if (!next.length) return
            for (const extra of next.slice(1)) work.push([parent, extra])
            node = parent
            val = next[0]
            continue
          }
          case "new_expression": {
            if (!("path" in val) || !sameNode(parent.field("constructor"), node)) return
            finish(parent, val.path, siteOf("new", parent, node))
            // An instance whose methods matter (`new Module()._compile(code)`, `new Bun.Glob(p).scanSync(dir)`):
            // followed as its class's `prototype`.
            const cls = AuditRules.show(val.path)
            if (cls !== "module" && cls !== "Bun.Glob") return
            val = { path: [...val.path, "prototype"] }
            node = parent
            continue
          }
          case "arguments": {
            const call = parent.parent()
            const callee = call?.field("function")
            if (call?.kind() === "call_expression" && "path" in val && AuditRules.heldIn(val.path) === undefined) {
              // The first argument of what may be a wrapper (`promisify(exec)`): the call stands for it once it is one.
              const first = parent.children().find((c) => c.isNamed() && c.kind() !== "comment")
              if (sameNode(first, node)) {
                const id = call.id()
                const list = passed.get(id) ?? []
                if (list.length < MAX_VALUES) list.push(val)
                passed.set(id, list)
                if (wrapperCalls.has(id)) work.push([call, val])
              }
            }
            const reflect = callee?.kind() === "member_expression" ? REFLECT[callee.text()] : undefined
            if (reflect && "path" in val && sameNode(arguments_(call!)[0], node)) {
              // `Reflect.get(o, k)` is `o[k]`, `Reflect.apply(f, t, a)` calls f, `Reflect.construct(F, a)` is `new F`.
              if (reflect === "new") {
                finish(call!, val.path, siteOf("new", call!, node, 1))
                return
              }
              if (reflect === "call") {
                finish(call!, val.path, { ...siteOf("call", call!, node, 2, true), firstStringLike: false })
                const loader = AuditRules.isLoader(val.path)
                if (!loader && (val.path[0] === "require" || val.path[0] === "module")) return
                const next = result(val, call!, 2, loader)
                if (next === NEED) {
                  const at = node
                  const v = val
                  retries.push(() => climb(at, v))
                  return
                }
                if (!next.length) return
                for (const extra of next.slice(1)) work.push([call!, extra])
                node = call!
                val = next[0]
                continue
              }
              const key = evalKey(arguments_(call!)[1], false)
              if (key === NEED) {
                retries.push(() => climb(node, val))
                return
              }
              val = { path: extend(val.path, key) }
              node = call!
              continue
            }
            if (
              call?.kind() === "call_expression" &&
              callee?.kind() === "identifier" &&
              INTEROP.has(callee.text()) &&
              sameNode(arguments_(call)[0], node)
            ) {
              node = call
              continue
            }
            // `Reflect.apply(<any function>.bind, F, [t, …])` (or `.call`, `.apply`): F is the `this` of the borrowed
            // method, as in `<x>.bind.apply(F, [t, …])`.
            const viaReflect =
              reflect === "call" && "path" in val && sameNode(arguments_(call!)[1], node)
                ? borrowedMember(arguments_(call!)[0])
                : undefined
            if (viaReflect && "path" in val) {
              if (viaReflect === "bind") {
                node = call!
                continue
              }
              finish(call!, val.path, { ...siteOf("call", call!, node, 2, true), firstStringLike: false })
              return
            }
            const borrowed = "path" in val ? borrowedMethod(callee) : undefined
            if (borrowed && "path" in val && sameNode(arguments_(call!)[0], node)) {
              // `<any function>.bind.apply(F, [t, …])`, `.apply.call(F, t, list)`, `.call.call(F, t, …)`: the first
              // argument is the `this` of a borrowed `bind`/`call`/`apply`, so F is bound or called (Babel's
              // `_construct` helper builds `new (Function.prototype.bind.apply(Ctor, args))()` this way).
              const [inner, outer] = borrowed
              if (inner === "bind") {
                node = call!
                continue
              }
              // The arguments F receives: after `this` (`.call.call(F, t, …)`), or in a list (`.apply.call(F, t, l)`);
              // through an outer `.apply` they are in a list whose first element is `this`: not read further.
              const listed = outer === "apply" || inner === "apply"
              const site =
                outer === "call"
                  ? siteOf("call", call!, node, 2, inner === "apply")
                  : siteOf("call", call!, node, 1, true)
              finish(call!, val.path, listed ? { ...site, firstStringLike: false } : site)
              if (outer !== "call" || AuditRules.isLoader(val.path)) return
              const next = result(val, call!, 2, inner === "apply")
              if (next === NEED || !next.length) return
              for (const extra of next.slice(1)) work.push([call!, extra])
              node = call!
              val = next[0]
              continue
            }
            // A literal is not followed into the parameters of the functions it is passed to: TypeScript's compiler
            // hands its host object (`{ newLine: os.EOL, setTimeout, … }`) through dozens of functions, each one more
            // traversal of a 6 MB bundle (16 rounds where 3 were; 2.5× the time). The literal's own uses still count.
            // The plugin input is the exception: it is passed along as an options object (`new Agent({ ctx })`).
            const input = "path" in val && val.path[0] === AuditRules.PLUGIN_INPUT
            // In a file that never writes `$` as a member or destructures it, a method or base class of its own cannot
            // use the input's shell: the input itself is not followed there (rounds of name look-ups in libraries whose
            // exports take `it`); its `$` (a member of it) still is.
            const local = input && (shellText || ("path" in val && val.path.length > 1 && !isHeld(val)))
            const held = "path" in val && AuditRules.heldIn(val.path) !== undefined && !input
            // Into classes (constructors, methods, `Object.assign(this, …)`) only the plugin input is followed: other
            // values passed to constructors cost a bundle more rounds (ajv: +17 % CPU) for no finding measured.
            if (!held && call?.kind() === "call_expression" && callee?.kind() === "identifier")
              passArgument(call, callee, node, val, "call")
            else if (local && call?.kind() === "call_expression" && callee?.kind() === "member_expression")
              passToMethod(call, callee, node, val)
            else if (local && call?.kind() === "call_expression" && callee?.kind() === "super")
              passSuper(call, node, val)
            else if (input && call?.kind() === "new_expression") {
              let ctor = call.field("constructor")
              while (ctor && TRANSPARENT.has(ctor.kind() as string))
                ctor = ctor.children().find((c) => c.isNamed()) ?? null
              if (ctor?.kind() === "identifier") passArgument(call, ctor, node, val, "new")
              else if (ctor?.kind() === "class") passToClass(ctor, call, node, val)
            }
            if (local && "path" in val && call?.kind() === "call_expression" && callee?.text() === "Object.assign")
              assignToThis(call, node, val.path)
            return read(node, val, true)
          }
          case "assignment_pattern":
          case "object_assignment_pattern":
          case "required_parameter":
          case "optional_parameter": {
            // A default value: the parameter or destructured name may hold it.
            const typed = pk === "required_parameter" || pk === "optional_parameter"
            if (!sameNode(parent.field(typed ? "value" : "right"), node)) return
            const left = parent.field(typed ? "pattern" : "left")
            if (left?.kind() === "object_pattern" || left?.kind() === "array_pattern") {
              if ("path" in val) pattern(left, val.path)
            } else if (left) bindName(left, val)
            return
          }
          case "sequence_expression": {
            const parts = parent.children().filter((c) => c.isNamed())
            if (!sameNode(parts[parts.length - 1], node)) return
            node = parent
            continue
          }
          case "binary_expression": {
            const op = parent.field("operator")?.text()
            if (op === "??" || op === "||" || (op === "&&" && sameNode(parent.field("right"), node))) {
              node = parent
              continue
            }
            return
          }
          case "ternary_expression": {
            if (sameNode(parent.field("condition"), node)) return
            node = parent
            continue
          }
          case "variable_declarator": {
            if (!sameNode(parent.field("value"), node)) return
            read(node, val, true)
            const name = parent.field("name")
            if (name) bind(name, val)
            return
          }
          case "assignment_expression": {
            if (sameNode(parent.field("right"), node)) {
              read(node, val, true)
              return assign(parent.field("left"), val)
            }
            if ("path" in val && sameNode(parent.field("left"), node)) {
              const p = val.path
              const right = parent.field("right")
              if (p.length === 2 && p[0] === "exports" && typeof p[1] === "string") exportExpr(p[1], right)
              else if (p.length === 3 && p[0] === "module" && p[1] === "exports" && typeof p[2] === "string")
                exportExpr(p[2], right)
              else if (p.length === 2 && p[0] === "module" && p[1] === "exports") exportExpr("*module", right)
            }
            return
          }
          case "return_statement":
            read(node, val, true)
            return returns(parent, val)
          case "public_field_definition":
          case "field_definition": {
            // A class field (`sh = this.ctx.$`): `this.<name>` in the class's methods.
            read(node, val, true)
            const body = parent.parent()
            const name = (parent.field("name") ?? parent.field("property"))?.text()
            if (sameNode(parent.field("value"), node) && name && body?.kind() === "class_body")
              memberAlias(body, name, val)
            return
          }
          case "arrow_function":
            if (!sameNode(parent.field("body"), node)) return
            read(node, val, true)
            return returns(parent, val)
          case "export_statement":
            read(node, val, true)
            return exportValue("default", val)
          case "pair":
          case "array":
          case "spread_element":
          case "object": {
            read(node, val, true)
            // Put in an object or array literal (`{ get: fetch }`, `[eval]`): followed as what it holds.
            if (!("path" in val) || !AuditRules.useful(val.path)) return
            const into = holder(node, parent, val.path)
            if (!into || val.path.length >= MAX_PATH) return
            if (into[1] !== undefined) val = { path: [...val.path, { into: into[1] }] }
            if (!AuditRules.useful(val.path)) return
            node = into[0]
            continue
          }
          case "unary_expression":
          case "expression_statement":
            return read(node, val, false)
          default:
            return read(node, val, false)
        }
      }
    }

    /**
     * The object or array literal a value is put in at `node`, and the key it is held under (null: not known; undefined:
     * the same keys, for `{ ...o }`); undefined when it is not put in one.
     */
    function holder(node: SgNode, parent: SgNode, path: Path): [SgNode, string | null | undefined] | undefined {
      const pk = parent.kind()
      if (pk === "object" && node.kind() === "shorthand_property_identifier") return [parent, node.text()]
      if (pk === "pair") {
        const object = parent.parent()
        if (object?.kind() !== "object" || !sameNode(parent.field("value"), node)) return undefined
        const keyNode = parent.field("key")
        let key: Key | typeof NEED = null
        if (keyNode?.kind() === "property_identifier") key = keyNode.text()
        else if (keyNode?.kind() === "computed_property_name")
          key = evalKey(
            keyNode.children().find((c) => c.isNamed()),
            true,
          )
        else if (keyNode) key = evalKey(keyNode, true)
        return [object, typeof key === "string" ? key : null]
      }
      if (pk === "array") {
        const items = parent.children().filter((c) => c.isNamed() && c.kind() !== "comment")
        const index = items.findIndex((c) => sameNode(c, node))
        const spread = items.slice(0, index).some((c) => c.kind() === "spread_element")
        return index < 0 ? undefined : [parent, spread ? null : String(index)]
      }
      if (pk === "spread_element") {
        // `{ ...o }` holds what o holds, under the same keys.
        const object = parent.parent()
        return object?.kind() === "object" && AuditRules.heldIn(path) ? [object, undefined] : undefined
      }
      return undefined
    }

    const probed = new Set<string>()
    function probe(node: SgNode, path: Path, parent: SgNode | null) {
      if (path.some(AuditRules.isInto)) return
      const namespace = AuditRules.isNamespace(path)
      if (namespace && !open(path)) return
      const at = position(node)
      const key = `${at.line}:${at.column}:${path.length}`
      if (probed.has(key)) return
      probed.add(key)
      // A namespace that turns out to be `process.env` is read where a member of it is (`e.SECRET`), as in reportEnv.
      const pk = parent?.kind()
      const whole =
        namespace &&
        (pk === "member_expression" || pk === "subscript_expression") &&
        sameNode(parent!.field("object"), node)
      deferred.push({ kind: "env", path, text: shortText(whole ? parent! : node), ...at })
    }

    function read(node: SgNode, val: Value, flows: boolean) {
      if (!("path" in val)) return
      const p = val.path
      if (AuditRules.isConcrete(p)) {
        const verdict = AuditRules.classify(p, {
          kind: "read",
          get callee() {
            return shortText(node)
          },
          flows,
        })
        if (verdict) report(node, verdict)
      } else if (p.length <= 2 && isRef(p[0]) && !AuditRules.isNamespace(p) && !AuditRules.isInto(p[1]))
        deferred.push({
          kind: "site",
          path: p,
          site: { kind: "read", callee: shortText(node), flows },
          ...position(node),
        })
    }

    /** Binds parameter `index` of a function node to a value passed for it. */
    function bindParameter(fn: SgNode, index: number, val: Value) {
      const single = fn.field("parameter")
      let param: SgNode | null | undefined = index === 0 && single ? single : undefined
      if (!param) {
        const list = (fn.field("parameters")?.children() ?? []).filter((c) => c.isNamed() && c.kind() !== "comment")
        param = list[index]
      }
      if (!param) return
      let k = param.kind()
      if (k === "required_parameter" || k === "optional_parameter") {
        // A TypeScript parameter property (`constructor(private ctx: PluginInput)`) is also `this.ctx`.
        const property = param
          .children()
          .some(
            (c) => c.kind() === "accessibility_modifier" || c.kind() === "readonly" || c.kind() === "override_modifier",
          )
        param = param.field("pattern")
        k = param?.kind() ?? ""
        const body = fn.parent()
        if (
          property &&
          k === "identifier" &&
          body?.kind() === "class_body" &&
          fn.field("name")?.text() === "constructor"
        )
          memberAlias(body, param!.text(), val)
      }
      if (k === "assignment_pattern") {
        param = param!.field("left")
        k = param?.kind() ?? ""
      }
      if (!param) return
      if (k === "identifier") bindName(param, val)
      else if ((k === "object_pattern" || k === "array_pattern") && "path" in val) pattern(param, val.path)
    }

    /**
     * A value passed to a function of this file reaches its parameter (`read(fs)` with `function read(fs) {…}`); passed
     * to `new C(…)`, the parameter of C's constructor (that of the class it extends when C has none), from where
     * `this.<field> = …` and parameter properties (`constructor(private ctx)`) put it on the instance for C's methods.
     * The plugin input passed to a function or class another module exports is kept for the audit (`passes`).
     */
    function passArgument(call: SgNode, callee: SgNode, argument: SgNode, val: Value, how: "call" | "new") {
      const name = callee.text()
      const start = callee.range().start.index
      if (!covered(name, start, start + 1)) {
        wantName(name)
        retries.push(() => passArgument(call, callee, argument, val, how))
        return
      }
      const index = arguments_(call).findIndex((a) => sameNode(a, argument))
      if (index < 0) return
      const fn = callable(callee, name, start)
      if (fn === "import") {
        const b = bindingAt(name, start)!
        if (b.ref && "path" in val && val.path[0] === AuditRules.PLUGIN_INPUT && passes.length < MAX_VALUES * 4)
          passes.push({ ref: b.ref, index, value: val })
        return
      }
      if (!fn) return
      if (CLASSES.has(fn.kind() as string)) {
        if (how === "new") passToClass(fn, call, argument, val)
        return
      }
      if (FUNCTIONS.has(fn.kind() as string)) bindParameter(fn, index, val)
    }

    /**
     * The function or class a name stands for where it is used: declared (a function, a class; a TypeScript class's
     * name is a type identifier, so it is looked up among the declarations of the enclosing blocks), or bound once to a
     * function or class expression; "import" for a name imported from another module of the audit.
     */
    function callable(id: SgNode, name: string, start: number, depth = 0): SgNode | "import" | undefined {
      const b = bindingAt(name, start)
      let fn: SgNode | null | undefined
      if (!b) return depth > 8 ? undefined : classDeclared(id, name)
      if (b.kind === "import") return "import"
      if (b.kind === "function" || b.kind === "class") fn = b.node.parent()
      else if ((b.kind === "const" || b.kind === "let" || b.kind === "var") && b.init) fn = b.init
      while (fn && TRANSPARENT.has(fn.kind() as string)) fn = fn.children().find((c) => c.isNamed()) ?? null
      // `const A = require("./a")`, `const { A } = require("./a")`: another module's export.
      if (b.ref && !(fn && (FUNCTIONS.has(fn.kind() as string) || CLASSES.has(fn.kind() as string)))) return "import"
      return fn ?? undefined
    }

    /** The class declared by `name` in a block enclosing `at` (the nearest first), directly or exported. */
    function classDeclared(at: SgNode, name: string): SgNode | undefined {
      for (let scope: SgNode | null = at.parent(); scope; scope = scope.parent()) {
        const k = scope.kind()
        if (k !== "statement_block" && k !== "program" && k !== "class_static_block" && k !== "switch_case") continue
        for (let stmt of scope.children()) {
          if (stmt.kind() === "export_statement") stmt = stmt.field("declaration") ?? stmt
          const sk = stmt.kind()
          if (
            (sk === "class_declaration" || sk === "abstract_class_declaration") &&
            stmt.field("name")?.text() === name
          )
            return stmt
        }
      }
      return undefined
    }

    /** `new C(…)`: the argument reaches C's constructor, or the constructor of the class C extends when C has none. */
    function passToClass(cls: SgNode, call: SgNode, argument: SgNode, val: Value, depth = 0) {
      if (depth > 8) return
      const index = arguments_(call).findIndex((a) => sameNode(a, argument))
      if (index < 0) return
      const ctor = constructorOf(cls)
      if (ctor) return bindParameter(ctor, index, val)
      const base = superclass(cls)
      if (base?.kind() !== "identifier") return
      const name = base.text()
      const start = base.range().start.index
      if (!covered(name, start, start + 1)) {
        wantName(name)
        retries.push(() => passToClass(cls, call, argument, val, depth))
        return
      }
      const parent = callable(base, name, start)
      if (parent === "import") {
        const b = bindingAt(name, start)!
        if (b.ref && "path" in val && val.path[0] === AuditRules.PLUGIN_INPUT && passes.length < MAX_VALUES * 4)
          passes.push({ ref: b.ref, index, value: val })
      } else if (parent && CLASSES.has(parent.kind() as string)) passToClass(parent, call, argument, val, depth + 1)
    }

    /**
     * The plugin input passed to a method of a class of this file: `this.init(ctx)` in the class, `R.create(ctx)` (a
     * static method), `r.init(ctx)` with `r` bound once to `new R(…)`; a method the class inherits from one it extends
     * (declared here) too.
     */
    function passToMethod(call: SgNode, callee: SgNode, argument: SgNode, val: Value) {
      const name = callee.field("property")?.text()
      let object = callee.field("object")
      while (object && TRANSPARENT.has(object.kind() as string))
        object = object.children().find((c) => c.isNamed()) ?? null
      if (!name || !object) return
      const index = arguments_(call).findIndex((a) => sameNode(a, argument))
      if (index < 0) return
      let cls: SgNode | undefined
      if (object.kind() === "this") {
        const body = thisScope(call)
        cls = body.kind() === "class_body" ? (body.parent() ?? undefined) : undefined
      } else if (object.kind() === "identifier") {
        const id = object
        const start = id.range().start.index
        if (!covered(id.text(), start, start + 1)) {
          wantName(id.text())
          retries.push(() => passToMethod(call, callee, argument, val))
          return
        }
        const found = callable(id, id.text(), start)
        if (found && found !== "import" && CLASSES.has(found.kind() as string)) cls = found
        else if (found && found !== "import" && found.kind() === "new_expression") {
          let ctor = found.field("constructor")
          while (ctor && TRANSPARENT.has(ctor.kind() as string)) ctor = ctor.children().find((c) => c.isNamed()) ?? null
          if (ctor?.kind() === "class") cls = ctor
          else if (ctor?.kind() === "identifier") {
            const at = ctor.range().start.index
            if (!covered(ctor.text(), at, at + 1)) {
              wantName(ctor.text())
              retries.push(() => passToMethod(call, callee, argument, val))
              return
            }
            const c = callable(ctor, ctor.text(), at)
            if (c && c !== "import" && CLASSES.has(c.kind() as string)) cls = c
          }
        }
      }
      for (let depth = 0; cls && depth < 8; depth++) {
        const body = cls.field("body") ?? cls.children().find((c) => c.kind() === "class_body")
        const method = body
          ?.children()
          .find((m) => m.kind() === "method_definition" && m.field("name")?.text() === name && m.field("body"))
        if (method) return bindParameter(method, index, val)
        const base = superclass(cls)
        if (base?.kind() !== "identifier") return
        const at = base.range().start.index
        if (!covered(base.text(), at, at + 1)) return
        const parent = callable(base, base.text(), at)
        cls = parent && parent !== "import" && CLASSES.has(parent.kind() as string) ? parent : undefined
      }
    }

    /** `super(…)` in a constructor: the arguments reach the constructor of the class extended. */
    function passSuper(call: SgNode, argument: SgNode, val: Value) {
      const body = nearest(call, new Set(["class_body", "program"]))
      const cls = body.parent()
      if (body.kind() !== "class_body" || !cls) return
      const base = superclass(cls)
      if (base?.kind() !== "identifier") return
      const name = base.text()
      const start = base.range().start.index
      if (!covered(name, start, start + 1)) {
        wantName(name)
        retries.push(() => passSuper(call, argument, val))
        return
      }
      const parent = callable(base, name, start)
      const index = arguments_(call).findIndex((a) => sameNode(a, argument))
      if (index < 0) return
      if (parent === "import") {
        const b = bindingAt(name, start)!
        if (b.ref && "path" in val && val.path[0] === AuditRules.PLUGIN_INPUT && passes.length < MAX_VALUES * 4)
          passes.push({ ref: b.ref, index, value: val })
      } else if (parent && CLASSES.has(parent.kind() as string)) {
        const ctor = constructorOf(parent)
        if (ctor) bindParameter(ctor, index, val)
        else passToClass(parent, call, argument, val, 1)
      }
    }

    function constructorOf(cls: SgNode): SgNode | undefined {
      const body = cls.field("body") ?? cls.children().find((c) => c.kind() === "class_body")
      return body
        ?.children()
        .find((m) => m.kind() === "method_definition" && m.field("name")?.text() === "constructor" && m.field("body"))
    }

    /** The expression a class extends (`class B extends A`: `A`), if any. */
    function superclass(cls: SgNode): SgNode | undefined {
      const heritage = cls.children().find((c) => c.kind() === "class_heritage")
      if (!heritage) return undefined
      const clause = heritage.children().find((c) => c.kind() === "extends_clause") ?? heritage
      return clause.field("value") ?? clause.children().find((c) => c.isNamed() && c.kind() !== "extends_clause")
    }

    /**
     * `Object.assign(this, src)` in a class: `this.<name>` is then what `src` holds under that name (for each name the
     * class reads from `this`, when `src` is not a literal).
     */
    function assignToThis(call: SgNode, argument: SgNode, path: Path) {
      const args = arguments_(call)
      const at = args.findIndex((a) => sameNode(a, argument))
      if (at < 1 || args[0].kind() !== "this") return
      const scope = thisScope(call)
      const last = path[path.length - 1]
      if (AuditRules.isInto(last)) {
        if (typeof last.into === "string") memberAlias(scope, last.into, { path: path.slice(0, -1) })
        return
      }
      if (scope.kind() !== "class_body") return
      const names = new Set<string>()
      for (const m of scope.findAll({ rule: { kind: "member_expression", has: { field: "object", kind: "this" } } }))
        names.add(m.field("property")?.text() ?? "")
      for (const name of names) if (name) memberAlias(scope, name, { path: extend(path, name) })
    }

    function bind(name: SgNode, val: Value) {
      const k = name.kind()
      if (k === "identifier") return bindName(name, val)
      if ((k === "object_pattern" || k === "array_pattern") && "path" in val) return pattern(name, val.path)
    }

    function bindName(id: SgNode, val: Value) {
      const start = id.range().start.index
      const d = declaration(id, start)
      if (d && d !== "ignore") addValue(d, val)
    }

    function pattern(node: SgNode, path: Path) {
      if (node.kind() === "array_pattern") {
        // `const [h] = [fetch]`: element i is member "i" (a hole is a comma without a name; a rest is not followed).
        let index = 0
        for (const child of node.children()) {
          const k = child.kind()
          if (k === ",") index++
          if (!child.isNamed() || k === "comment") continue
          let target: SgNode | null = child
          if (k === "assignment_pattern") target = child.field("left")
          const sub = extend(path, String(index))
          const tk = target?.kind()
          if (tk === "identifier") bindName(target!, { path: sub })
          else if (tk === "object_pattern" || tk === "array_pattern") pattern(target!, sub)
        }
        return
      }
      for (const child of node.children()) {
        const k = child.kind()
        if (k === "shorthand_property_identifier_pattern") bindName(child, { path: extend(path, child.text()) })
        else if (k === "object_assignment_pattern") {
          const left = child.field("left")
          if (left?.kind() === "shorthand_property_identifier_pattern")
            bindName(left, { path: extend(path, left.text()) })
        } else if (k === "pair_pattern") {
          const keyNode = child.field("key")
          let key: Key = null
          if (keyNode?.kind() === "property_identifier") key = keyNode.text()
          else if (keyNode?.kind() === "computed_property_name") {
            const v = evalKey(
              keyNode.children().find((c) => c.isNamed()),
              true,
            )
            key = v === NEED ? null : v
          } else if (keyNode) {
            const v = evalKey(keyNode, true)
            key = v === NEED ? null : v
          }
          let value = child.field("value")
          if (value?.kind() === "assignment_pattern") value = value.field("left")
          const sub = extend(path, key)
          if (value?.kind() === "identifier") bindName(value, { path: sub })
          else if (value?.kind() === "object_pattern" || value?.kind() === "array_pattern") pattern(value, sub)
        }
      }
    }

    function assign(left: SgNode | null, val: Value) {
      if (!left) return
      const k = left.kind()
      if (k === "identifier") {
        const name = left.text()
        const start = left.range().start.index
        if (!covered(name, start, start + 1)) {
          wantName(name)
          retries.push(() => assign(left, val))
          return
        }
        const b = bindingAt(name, start)
        if (b) {
          b.assigned = true
          addValue(b, val)
        }
        return
      }
      if (k !== "member_expression") return
      const object = left.field("object")
      const prop = left.field("property")?.text()
      if (!object || !prop) return
      if (object.kind() === "this") return memberAlias(thisScope(left), prop, val)
      // CommonJS: `exports.x = …`, `module.exports.x = …`, `module.exports = …`.
      const global = (id: SgNode | null | undefined, name: string) => {
        if (id?.kind() !== "identifier" || id.text() !== name) return false
        const start = id.range().start.index
        return covered(name, start, start + 1) && !bindingAt(name, start)
      }
      if (global(object, "exports")) exportValue(prop, val)
      else if (prop === "exports" && global(object, "module")) exportValue("*module", val)
      else if (object.kind() === "member_expression" && object.field("property")?.text() === "exports")
        if (global(object.field("object"), "module")) exportValue(prop, val)
    }

    function returns(node: SgNode, val: Value) {
      if (!("path" in val)) return
      const fn = node.kind() === "arrow_function" ? node : nearest(node, FUNCTION_SCOPES)
      if (!AuditRules.useful(val.path)) return
      const value: Value = { returns: [val.path] }
      const k = fn.kind()
      if (k === "program") return
      if (k === "function_declaration" || k === "generator_function_declaration") {
        const name = fn.field("name")
        if (name) bindName(name, value)
        if (
          fn.parent()?.kind() === "export_statement" &&
          fn
            .parent()!
            .children()
            .some((c) => c.kind() === "default")
        )
          exportValue("default", value)
        return
      }
      if (k === "method_definition") {
        const name = fn.field("name")?.text()
        const body = fn.parent()
        // A getter's value is read as `this.<name>`, without a call.
        const getter = fn.children().some((c) => c.kind() === "get")
        if (name && body?.kind() === "class_body") memberAlias(body, name, getter ? val : value)
        return
      }
      // A function expression: where is it put?
      let holder = fn.parent()
      while (holder && TRANSPARENT.has(holder.kind() as string)) holder = holder.parent()
      if (!holder) return
      const hk = holder.kind()
      if (hk === "variable_declarator") {
        const name = holder.field("name")
        if (name?.kind() === "identifier") bindName(name, value)
      } else if (hk === "assignment_expression") assign(holder.field("left"), value)
      else if (hk === "export_statement") exportValue("default", value)
      else if (hk === "public_field_definition" || hk === "field_definition") {
        const name = (holder.field("name") ?? holder.field("property"))?.text()
        const body = holder.parent()
        if (name && body?.kind() === "class_body") memberAlias(body, name, value)
      }
    }

    function exportEntry(name: string) {
      return (exports[name] ??= { values: [] })
    }
    function exportValue(name: string, val: Value) {
      if (!worthFollowing(val)) return
      const entry = exportEntry(name)
      const key = valueKey(val)
      if (!full(entry.values, val) && !entry.values.some((v) => valueKey(v) === key)) entry.values.push(val)
    }
    function exportExpr(name: string, expr: SgNode | null) {
      if (!expr) return
      const entry = exportEntry(name)
      entry.expr = expr
      entry.at = expr.range().start.index
      if (expr.kind() === "identifier") {
        entry.local = expr.text()
        wantName(entry.local)
      }
    }

    // ---- the top level: imports and exports ----
    const programNames = new Set(ROOTS)
    const importBindings: [SgNode, Value][] = []

    function importStatement(stmt: SgNode) {
      const sourceNode = stmt.field("source") ?? stmt.find({ rule: { kind: "import_require_clause" } })?.field("source")
      const spec = sourceNode ? evalKey(sourceNode, true) : null
      if (typeof spec !== "string") return
      const base = moduleValue(spec, stmt)
      if (!base) return
      const followed = isRef(base[0]) || MODULES.has(base.join("."))
      for (const child of stmt.children()) {
        const ck = child.kind()
        if (ck === "import_require_clause") {
          const id = child.children().find((c) => c.kind() === "identifier")
          if (id && followed) importBindings.push([id, { path: base }])
        }
        if (ck !== "import_clause") continue
        for (const part of child.children()) {
          const pk = part.kind()
          if (pk === "identifier") {
            const path: Path = isRef(base[0]) ? [{ ref: (base[0] as Ref).ref, name: "default" }] : base
            if (followed) importBindings.push([part, { path }])
          } else if (pk === "namespace_import") {
            const id = part.children().find((c) => c.kind() === "identifier")
            if (id && followed) importBindings.push([id, { path: base }])
          } else if (pk === "named_imports") {
            for (const spec of part.children()) {
              if (spec.kind() !== "import_specifier") continue
              const imported = spec.field("name")
              const local = spec.field("alias") ?? imported
              if (!imported || !local) continue
              const name = imported.kind() === "string" ? (stringValue(imported) ?? "") : imported.text()
              const path: Path = isRef(base[0]) ? [{ ref: (base[0] as Ref).ref, name }] : [...base, name]
              if (followed) importBindings.push([local, { path }])
            }
          }
        }
      }
    }

    function exportStatement(stmt: SgNode) {
      const sourceNode = stmt.field("source")
      const isDefault = stmt.children().some((c) => c.kind() === "default")
      if (sourceNode) {
        const spec = evalKey(sourceNode, true)
        if (typeof spec !== "string") return
        const base = moduleValue(spec, undefined)
        if (!base) return
        const clause = stmt.children().find((c) => c.kind() === "export_clause")
        const ns = stmt.children().find((c) => c.kind() === "namespace_export")
        if (clause) {
          for (const s of clause.children()) {
            if (s.kind() !== "export_specifier") continue
            const name = s.field("name")?.text()
            const alias = s.field("alias")?.text() ?? name
            if (!name || !alias) continue
            exportValue(alias, { path: isRef(base[0]) ? [{ ref: (base[0] as Ref).ref, name }] : [...base, name] })
          }
        } else if (ns) {
          const id = ns.children().find((c) => c.isNamed())
          if (id) exportValue(id.text(), { path: base })
        } else if (isRef(base[0])) stars.push((base[0] as Ref).ref)
        return
      }
      const declaration = stmt.field("declaration")
      if (declaration) {
        const dk = declaration.kind()
        if (dk === "lexical_declaration" || dk === "variable_declaration") {
          for (const d of declaration.children()) {
            if (d.kind() !== "variable_declarator") continue
            const name = d.field("name")
            if (name?.kind() !== "identifier") continue
            Object.assign(exportEntry(name.text()), { local: name.text(), at: stmt.range().start.index })
            wantName(name.text())
          }
        } else {
          const name = declaration.field("name")
          if (name) {
            Object.assign(exportEntry(isDefault ? "default" : name.text()), {
              local: name.text(),
              at: stmt.range().start.index,
            })
            wantName(name.text())
          }
        }
        return
      }
      const clause = stmt.children().find((c) => c.kind() === "export_clause")
      if (clause) {
        for (const s of clause.children()) {
          if (s.kind() !== "export_specifier") continue
          const name = s.field("name")?.text()
          const alias = s.field("alias")?.text() ?? name
          if (!name || !alias) continue
          Object.assign(exportEntry(alias), { local: name, at: stmt.range().start.index })
          wantName(name)
        }
        return
      }
      const value = stmt.field("value")
      if (isDefault && value) {
        exportExpr("default", value)
        if (value.kind() === "identifier") wantName(value.text())
      }
    }

    // Imports and exports are top-level statements: their names join the first traversal.
    const statements = root.children()
    const statementKinds = statements.map((stmt) => stmt.kind() as string)
    for (const [i, stmt] of statements.entries()) {
      const k = statementKinds[i]
      if (k === "import_statement") importStatement(stmt)
      else if (k === "export_statement") exportStatement(stmt)
    }
    for (const [id] of importBindings) programNames.add(id.text())
    for (const entry of Object.values(exports)) if (entry.local) programNames.add(entry.local)

    // ---- round 0: one traversal for the program's names and the literal sites ----
    // One regex per rule: ast-grep compiles each `regex` of a rule on every findAll, and for the many small files of
    // a dependency tree compiling costs more than matching (three kinds sharing one regex: -20% for round 0).
    const nameRule = (names: Iterable<string>) => {
      const list = [...names]
      if (!list.length) return []
      return [
        {
          regex: `^(${list.map(escapeRegex).join("|")})$`,
          any: [
            { kind: "identifier" },
            { kind: "shorthand_property_identifier_pattern" },
            { kind: "shorthand_property_identifier" },
          ],
        },
      ]
    }
    // Compiling those regexes costs more than traversing a small file (names ~70 µs, the sensitive words ~45 µs per
    // findAll). A node's text is a slice of the source, so a name or word the source does not contain can match no
    // node: such names and branches are left out of the rule, and the same nodes are found. (Escapes do not matter:
    // the regexes read the raw text too.) A large file is not searched for every name: its traversal dominates.
    const small = source.length <= TEXT_GATE_BYTES
    const first: Query = { node: root, start: 0, end: programEnd, names: programNames, props: new Set() }
    const found = root.findAll({
      rule: {
        any: [
          ...nameRule(small ? [...programNames].filter((name) => source.includes(name)) : programNames),
          { kind: "call_expression", has: { field: "function", kind: "import" } },
          ...(source.includes("constructor")
            ? [
                { kind: "property_identifier", regex: "^constructor$" },
                { kind: "shorthand_property_identifier_pattern", regex: "^constructor$" },
              ]
            : []),
          { kind: "meta_property" },
          {
            kind: "subscript_expression",
            has: {
              field: "index",
              any: [
                { kind: "string" },
                { kind: "template_string" },
                { kind: "binary_expression" },
                { kind: "call_expression" },
                { kind: "parenthesized_expression" },
              ],
            },
          },
          {
            // obj[k] with a name as key matters only in a chain (`x[k1][k2]`, `f[k](…)`), for constructor chains.
            kind: "subscript_expression",
            has: { field: "index", kind: "identifier" },
            inside: {
              any: [
                { kind: "member_expression" },
                { kind: "subscript_expression" },
                { kind: "call_expression" },
                { kind: "new_expression" },
              ],
            },
          },
          ...(SENSITIVE_RAW_TEXT.test(source)
            ? [{ regex: SENSITIVE_RAW, any: [{ kind: "string" }, { kind: "template_string" }] }]
            : []),
        ],
      },
    } as any)
    const names: SgNode[] = []
    const literal: SgNode[] = []
    for (const node of found) {
      const k = node.kind()
      if (
        k === "shorthand_property_identifier_pattern" &&
        node.text() === "constructor" &&
        !programNames.has(node.text())
      )
        literal.push(node)
      else if (
        k === "identifier" ||
        k === "shorthand_property_identifier_pattern" ||
        k === "shorthand_property_identifier"
      )
        names.push(node)
      else literal.push(node)
    }
    addOccurrences(names, first)
    for (const [id, value] of importBindings) {
      const d = declaration(id, id.range().start.index)
      if (d && d !== "ignore") addValue(d, value)
    }
    pluginEntries()
    for (const name of ROOTS) {
      for (const o of occurrences.get(name) ?? []) {
        if (roleOf(o).kind !== "use") continue
        if (bindingAt(name, o.start)) continue
        work.push([o.node, { path: AuditRules.GLOBAL_OBJECTS.has(name) ? [] : [name] }])
      }
    }
    for (const node of literal) literalSite(node)

    /**
     * OpenCode calls every function a plugin module exports (and the `server` of a 1.18 plugin object) with its input,
     * `{ $, client, directory, … }`: the first parameter of each is bound to that input, so `ctx.$\`…\`` and
     * `async ({ $ }) => $\`…\`` are shell commands.
     */
    function pluginEntries() {
      // The last top-level declaration of each name, read only when an entry names one: from the last statement back,
      // so the first met is the one kept (a bundle has thousands of statements and its entries name a few).
      const top = new Map<string, SgNode>()
      let unread = statements.length
      const topLevel = (name: string): SgNode | undefined => {
        while (!top.has(name) && unread > 0) {
          const stmt = statements[--unread]
          const k = statementKinds[unread]
          if (k !== "export_statement") declared(stmt, k)
          else declared(stmt.field("declaration") ?? stmt)
        }
        return top.get(name)
      }
      const entry = (node: SgNode | null | undefined, depth = 0) => {
        while (node && TRANSPARENT.has(node.kind() as string)) node = node.children().find((c) => c.isNamed())
        if (!node || depth > 2) return
        const k = node.kind() as string
        if (FUNCTIONS.has(k) || k === "method_definition")
          return bindParameter(node, 0, { path: [AuditRules.PLUGIN_INPUT] })
        if (k === "identifier") return entry(topLevel(node.text()), depth + 1)
        if (k === "object")
          for (const member of node.children()) {
            if (member.kind() === "method_definition") entry(member, depth + 1)
            else if (member.kind() === "pair") entry(member.field("value"), depth + 1)
            else if (member.kind() === "shorthand_property_identifier") entry(topLevel(member.text()), depth + 1)
          }
      }
      const declared = (stmt: SgNode, k = stmt.kind() as string) => {
        if (
          k === "function_declaration" ||
          k === "generator_function_declaration" ||
          k === "class_declaration" ||
          k === "abstract_class_declaration"
        ) {
          const name = stmt.field("name")?.text()
          if (name && !top.has(name)) top.set(name, stmt)
        } else if (k === "lexical_declaration" || k === "variable_declaration")
          for (const d of stmt.children().reverse()) {
            const name = d.kind() === "variable_declarator" ? d.field("name") : null
            const value = d.field("value")
            if (name?.kind() === "identifier" && value && !top.has(name.text())) top.set(name.text(), value)
          }
      }
      // CommonJS exports by name (`exports.A = A`, `module.exports = { A }`), for `options.entries`.
      const commonjs = new Map<string, SgNode>()
      for (const [i, stmt] of statements.entries()) {
        const k = statementKinds[i]
        if (k === "export_statement") {
          if (stmt.field("source")) continue
          const decl = stmt.field("declaration")
          if (decl?.kind() === "function_declaration" || decl?.kind() === "generator_function_declaration") entry(decl)
          else if (decl)
            for (const d of decl.children()) if (d.kind() === "variable_declarator") entry(d.field("value"))
          entry(stmt.field("value"))
          const clause = stmt.children().find((c) => c.kind() === "export_clause")
          for (const s of clause?.children() ?? [])
            if (s.kind() === "export_specifier") entry(topLevel(s.field("name")?.text() ?? ""))
        } else if (k === "expression_statement") {
          // CommonJS: `module.exports = plugin`, `exports.default = …`, `module.exports.server = …`.
          const e = stmt.children().find((c) => c.isNamed())
          const left = e?.kind() === "assignment_expression" ? e.field("left")?.text() : undefined
          if (left && /^(module\.)?exports(\.\w+)?$/.test(left) && left !== "module") entry(e!.field("right"))
          if (options.entries?.length && left && /^(module\.)?exports(\.\w+)?$/.test(left) && left !== "module") {
            const right = e!.field("right")
            const member = /\.(\w+)$/.exec(left)?.[1]
            if (right && member && member !== "exports") commonjs.set(member, right)
            else if (right?.kind() === "object")
              for (const m of right.children())
                if (m.kind() === "shorthand_property_identifier") commonjs.set(m.text(), m)
                else if (m.kind() === "pair" && m.field("value"))
                  commonjs.set(m.field("key")!.text(), m.field("value")!)
            if (right && (!member || member === "exports")) commonjs.set("default", right)
          }
        }
      }
      // What other modules pass to this one's exports: the parameter of the function, or of the class's constructor.
      for (const passed of options.entries ?? []) {
        const name = passed.name === "*" ? "*module" : passed.name
        const ex = Object.hasOwn(exports, name) ? exports[name] : undefined
        let target: SgNode | null | undefined = ex?.local
          ? topLevel(ex.local)
          : (ex?.expr ?? commonjs.get(passed.name === "*" ? "default" : passed.name))
        if (target?.kind() === "shorthand_property_identifier") target = topLevel(target.text())
        for (let depth = 0; target && depth < 8; depth++) {
          while (target && TRANSPARENT.has(target.kind() as string))
            target = target.children().find((c) => c.isNamed()) ?? null
          if (!target) break
          const k = target.kind() as string
          if (k === "identifier") target = topLevel(target.text())
          else if (FUNCTIONS.has(k) || k === "method_definition") {
            bindParameter(target, passed.index, passed.value)
            break
          } else if (CLASSES.has(k)) {
            const ctor = constructorOf(target)
            if (ctor) {
              bindParameter(ctor, passed.index, passed.value)
              break
            }
            // No constructor of its own: the arguments go to the class it extends (declared in this module).
            target = superclass(target)
          } else break
        }
      }
    }

    function literalSite(node: SgNode) {
      const k = node.kind()
      if (k === "call_expression") {
        const v = load(node, "import")
        if (v === NEED) {
          retries.push(() => literalSite(node))
          return
        }
        if (v) work.push([node, { path: v }])
      } else if (k === "meta_property") {
        // Bun's bundles: `var __require = import.meta.require`.
        const member = node.parent()
        const prop = member?.kind() === "member_expression" ? member.field("property")?.text() : undefined
        if (prop === "require") work.push([member!, { path: ["require"] }])
        // Bun (and bundlers) give the environment as `import.meta.env` too.
        else if (prop === "env") work.push([member!, { path: ["process", "env"] }])
      } else if (k === "shorthand_property_identifier_pattern") destructured(node, node)
      else if (k === "property_identifier") {
        const member = node.parent()
        if (member?.kind() === "pair_pattern" && sameNode(member.field("key"), node)) {
          let target = member.field("value")
          if (target?.kind() === "assignment_pattern") target = target.field("left")
          if (target?.kind() === "identifier") destructured(member, target)
          return
        }
        if (member?.kind() !== "member_expression") return
        const base = literalBase(member.field("object"))
        if (base === NEED) {
          retries.push(() => literalSite(node))
          return
        }
        work.push([member, { path: [...base, "constructor"] }])
      } else if (k === "subscript_expression") {
        const index = node.field("index")
        const outer = node.parent()
        const ok = outer?.kind()
        const chained =
          ok === "member_expression" ||
          ok === "subscript_expression" ||
          (ok === "call_expression" && sameNode(outer!.field("function"), node)) ||
          ok === "new_expression"
        const key = evalKey(index, !(chained && index?.kind() === "identifier"))
        if (key === NEED) {
          retries.push(() => literalSite(node))
          return
        }
        if (key !== "constructor") return
        const base = literalBase(node.field("object"))
        if (base === NEED) {
          retries.push(() => literalSite(node))
          return
        }
        work.push([node, { path: [...base, "constructor"] }])
      } else if (k === "string" || k === "template_string") sensitive(node)
    }

    /**
     * `const { constructor: F } = function () {}` (or `{ constructor }`): F is the `.constructor` of the value
     * destructured, as the member read would be. `entry` is the pattern's entry, `target` the name it declares.
     */
    function destructured(entry: SgNode, target: SgNode) {
      const object = entry.parent()
      const declarator = object?.parent()
      if (object?.kind() !== "object_pattern" || declarator?.kind() !== "variable_declarator") return
      if (!sameNode(declarator.field("name"), object)) return
      const base = literalBase(declarator.field("value"))
      if (base === NEED) {
        retries.push(() => destructured(entry, target))
        return
      }
      bindName(target, { path: [...base, "constructor"] })
    }

    /**
     * What the object of a `.constructor` member is, as a path: `["function"]` for a function (a literal, a built-in
     * such as `Object` or `console.log`, a function or class declared here), `"[]"`, `"{}"` (also a `prototype`, whose
     * constructor is its class) or `'""'`, a `constructor` chain, or `[null]` when not known. NEED when a name must be
     * looked up first.
     */
    function literalBase(node: SgNode | null, depth = 0): Path | typeof NEED {
      if (!node || depth > 10) return [null]
      const chain = (object: SgNode | null): Path | typeof NEED => {
        const base = literalBase(object, depth + 1)
        return base === NEED ? NEED : [...base, "constructor"]
      }
      switch (node.kind()) {
        case "parenthesized_expression":
          return literalBase(node.children().find((c) => c.isNamed()) ?? null, depth + 1)
        case "arrow_function":
        case "function_expression":
        case "function":
        case "generator_function":
        case "class":
          return ["function"]
        case "array":
          return ["[]"]
        case "object":
          return ["{}"]
        case "string":
        case "template_string":
          return ['""']
        case "identifier":
          return functionName(node)
        case "member_expression": {
          const prop = node.field("property")?.text()
          if (prop === "constructor") return chain(node.field("object"))
          // `Foo.prototype.constructor` is Foo (as CoffeeScript's `__super__.constructor`), not Function.
          if (prop === "prototype" || prop === "__super__") return ["{}"]
          // A function of a built-in namespace: `console.log`, `JSON.parse`, `Math.max` (not `Math.PI`).
          const object = node.field("object")
          if (object?.kind() !== "identifier" || !prop || !NAMESPACES.has(object.text())) return [null]
          if (/^[A-Z0-9_]+$/.test(prop) || prop === "prototype") return [null]
          const base = functionName(object)
          return base === NEED ? NEED : base[0] === "{}" ? ["function"] : [null]
        }
        case "call_expression": {
          // `Object.getPrototypeOf(async function () {})` is AsyncFunction.prototype: its constructor compiles code
          // as Function does (so do the generator kinds').
          const callee = node.field("function")?.text()
          if (callee !== "Object.getPrototypeOf" && callee !== "Reflect.getPrototypeOf") return [null]
          const arg = arguments_(node)[0]
          if (!arg) return [null]
          const base = literalBase(arg, depth + 1)
          return base === NEED ? NEED : base[0] === "function" ? ["function"] : [null]
        }
        case "subscript_expression": {
          const key = evalKey(node.field("index"), true)
          if (key === "constructor") return chain(node.field("object"))
          return [null]
        }
      }
      return [null]
    }

    /**
     * An identifier as the object of `.constructor`: `["function"]` for a global function or class (`Object`,
     * `setTimeout`…) that no local name hides, or a function or class declared in scope; `["{}"]` for a global
     * namespace object (`console`, `JSON`…); `[null]` otherwise; NEED until the name is looked up.
     */
    function functionName(id: SgNode): Path | typeof NEED {
      const name = id.text()
      const start = id.range().start.index
      if (!covered(name, start, start + 1)) {
        wantName(name)
        return NEED
      }
      const b = bindingAt(name, start)
      if (!b) return GLOBAL_FUNCTIONS.has(name) ? ["function"] : NAMESPACES.has(name) ? ["{}"] : [null]
      if (b.kind === "function") return ["function"]
      if (b.kind === "class") return String(b.node.parent()?.kind() ?? "").includes("class") ? ["function"] : [null]
      if (b.kind !== "const" && b.kind !== "let" && b.kind !== "var") return [null]
      let init = b.init
      while (init && TRANSPARENT.has(init.kind() as string)) init = init.children().find((c) => c.isNamed())
      if (!init || !(FUNCTIONS.has(init.kind() as string) || init.kind() === "class")) return [null]
      return b.kind === "const" || !assigned(b) ? ["function"] : [null]
    }

    function sensitive(node: SgNode) {
      if (node.parent()?.kind() === "import_statement") return
      // A segment of a path joined from constants (`path.join(os.homedir(), ".ssh", f)`): the whole path is read.
      let call: SgNode | undefined
      for (let at = node, up = pathJoin(node); up; at = up, up = pathJoin(at)) call = up
      if (call) {
        const [match, shown] = joined(call)
        for (const { pattern, label, severity } of AuditRules.SENSITIVE_PATHS)
          if (pattern.test(match))
            return report(call, {
              severity: severity ?? "high",
              rule: "sensitive-path",
              message: `path built from constants mentions ${label}: ${JSON.stringify(shown.length > 80 ? shown.slice(0, 77) + "…" : shown)}`,
            })
      }
      const text = literalText(node)
      for (const { pattern, label, severity } of AuditRules.SENSITIVE_PATHS) {
        if (pattern.test(text)) {
          report(node, {
            severity: severity ?? "high",
            rule: "sensitive-path",
            message: `string mentions ${label}: ${JSON.stringify(text.length > 80 ? text.slice(0, 77) + "…" : text)}`,
          })
          return
        }
      }
    }

    /**
     * The call that joins `node` into a path, when it is a segment of one: `path.join(…)`, `path.resolve(…)`,
     * `path.posix.join(…)` (any module object: `p.join`, `upath.join`; `join`/`resolve` imported by name), or an array
     * literal's `.join(sep)`.
     */
    function pathJoin(node: SgNode): SgNode | undefined {
      const parent = node.parent()
      if (parent?.kind() === "arguments") {
        const call = parent.parent()
        return call && joinsPath(call) ? call : undefined
      }
      if (parent?.kind() === "array") {
        const member = parent.parent()
        const call = member?.parent()
        if (member?.kind() !== "member_expression" || member.field("property")?.text() !== "join") return undefined
        if (call?.kind() !== "call_expression" || !sameNode(call.field("function"), member)) return undefined
        // Joined into a path (`"/"`, `"\\"`, `""`), not lines or a list.
        const sep = arguments_(call)[0]
        return sep && ["/", "\\", ""].includes(evalKey(sep, true) as string) ? call : undefined
      }
      return undefined
    }

    /** True for `path.join(…)`, `p.resolve(…)`, `path.posix.join(…)`, `join(…)` (not an array's `.join`). */
    function joinsPath(call: SgNode): boolean {
      const callee = call.kind() === "call_expression" ? call.field("function") : null
      if (!callee) return false
      if (callee.kind() === "identifier") return /^(join|resolve)$/.test(callee.text())
      if (callee.kind() !== "member_expression" || !/^(join|resolve)$/.test(callee.field("property")?.text() ?? ""))
        return false
      const object = callee.field("object")
      if (object?.kind() === "identifier") return true
      return object?.kind() === "member_expression" && /^(posix|win32)$/.test(object.field("property")?.text() ?? "")
    }

    /**
     * The path a join call builds from its constant segments, for matching (an unknown segment is `_`, which no
     * pattern's anchor accepts as a root, so `path.join(home, "etc", f)` is not `/etc/`) and for the message (`${…}`).
     */
    function joined(call: SgNode, depth = 0): [string, string] {
      const callee = call.field("function")
      const array = callee?.kind() === "member_expression" ? callee.field("object") : undefined
      const list = array?.kind() === "array" ? array : call.field("arguments")
      const parts = (list?.children() ?? []).filter((c) => c.isNamed() && c.kind() !== "comment")
      let sep = "/"
      if (array?.kind() === "array") {
        const s = evalKey(arguments_(call)[0], true)
        sep = arguments_(call).length === 0 ? "," : typeof s === "string" ? s : "_"
      }
      const match: string[] = []
      const shown: string[] = []
      for (const part of parts) {
        const k = part.kind()
        if (depth < 8 && joinsPath(part)) {
          const inner = joined(part, depth + 1)
          match.push(inner[0])
          shown.push(inner[1])
          continue
        }
        // Names only where already looked up: waiting for one could lose the literal's own finding.
        const v = k === "string" || k === "template_string" ? literalText(part) : evalKey(part, true)
        if (typeof v === "string") {
          match.push(v.replaceAll("${…}", "_"))
          shown.push(v)
        } else {
          match.push("_")
          shown.push("${…}")
        }
      }
      const tidy = (text: string) => (sep === "/" ? text.replace(/\/{2,}/g, "/") : text)
      return [tidy(match.join(sep)), tidy(shown.join(sep))]
    }

    // ---- rounds: follow values; query the names they were bound to; repeat ----
    let finalized = false
    for (let round = 0; round < MAX_ROUNDS; round++) {
      while (work.length) {
        const [node, value] = work.pop()!
        climb(node, value)
      }
      yield effort
      effort = 0
      if (queries.size) {
        runQueries()
        const again = retries
        retries = []
        for (const r of again) r()
        continue
      }
      if (retries.length) {
        // Needed names were all covered meanwhile (or cannot be): run once more without waiting.
        const again = retries
        retries = []
        for (const r of again) r()
        if (!work.length && !queries.size) break
        continue
      }
      if (!finalized) {
        finalized = true
        finalizeExports()
        if (work.length || queries.size) continue
      }
      break
    }
    if (!finalized) finalizeExports()

    /**
     * One traversal per scope that gained names this round; when those scopes add up to half the program (or one of
     * them is the program), a single traversal of the program serves them all.
     */
    function runQueries() {
      let pending = [...queries.values()]
      queries.clear()
      for (const q of pending) for (const name of [...q.names]) if (covered(name, q.start, q.end)) q.names.delete(name)
      pending = pending.filter((q) => q.names.size || q.props.size)
      const total = pending.reduce((n, q) => n + (q.end - q.start), 0)
      const origins = new Map<number, Set<string>>()
      for (const q of pending) origins.set(q.node.id(), new Set(q.props))
      if (pending.length > 1 && (total > programEnd / 2 || pending.some((q) => q.node === root))) {
        const merged: Query = { node: root, start: 0, end: programEnd, names: new Set(), props: new Set() }
        for (const q of pending) {
          for (const n of q.names) merged.names.add(n)
          for (const p of q.props) merged.props.add(p)
        }
        pending = [merged]
      } else {
        // A scope inside another pending scope is served by the outer traversal.
        pending.sort((x, y) => y.end - y.start - (x.end - x.start))
        const kept: Query[] = []
        for (const q of pending) {
          const outer = kept.find((k) => k.start <= q.start && q.end <= k.end)
          if (!outer) kept.push(q)
          else {
            for (const n of q.names) outer.names.add(n)
            for (const p of q.props) outer.props.add(p)
          }
        }
        pending = kept
      }
      for (const q of pending) {
        const rules: object[] = q.names.size ? nameRule(q.names) : []
        if (q.props.size)
          rules.push({
            any: [
              { kind: "property_identifier" },
              { kind: "private_property_identifier" },
              { kind: "shorthand_property_identifier_pattern" },
            ],
            regex: `^(${[...q.props].map(escapeRegex).join("|")})$`,
          })
        if (!rules.length) continue
        const nodes = q.node.findAll({ rule: { any: rules } } as any)
        const named: SgNode[] = []
        const properties: SgNode[] = []
        for (const n of nodes) {
          const k = n.kind()
          if (k === "property_identifier" || k === "private_property_identifier") properties.push(n)
          else {
            if (k === "shorthand_property_identifier_pattern" && q.props.has(n.text())) properties.push(n)
            if (k !== "shorthand_property_identifier_pattern" || q.names.has(n.text())) named.push(n)
          }
        }
        addOccurrences(named, q)
        for (const prop of properties) memberUse(prop)
      }
      for (const [id, props] of origins)
        for (const p of props) {
          const set = memberCoverage.get(p) ?? new Set()
          set.add(id)
          memberCoverage.set(p, set)
        }
      for (const b of waiting.splice(0)) {
        if (covered(b.name, b.scopeStart, b.scopeEnd)) resolveUses(b)
        else waiting.push(b)
      }
      for (const alias of waitingMembers.splice(0)) {
        if (memberCoverage.get(alias.prop)?.has(alias.scope.id())) alias.uses ??= []
        else waitingMembers.push(alias)
      }
    }

    function memberUse(prop: SgNode) {
      const member = prop.parent()
      const mk = member?.kind()
      if (mk === "object_pattern" || (mk === "pair_pattern" && sameNode(member!.field("key"), prop)))
        return thisPattern(prop, mk === "pair_pattern" ? member!.field("value") : prop)
      if (member?.kind() !== "member_expression" || member.field("object")?.kind() !== "this") return
      const outer = member.parent()
      if (outer?.kind() === "assignment_expression" && sameNode(outer.field("left"), member)) return
      const alias = members.get(`${thisScope(member).id()}.${prop.text()}`)
      if (!alias) return
      const seen = `${alias.key}@${prop.range().start.index}`
      if (seenMembers.has(seen)) return
      seenMembers.add(seen)
      alias.uses ??= []
      alias.uses.push(member)
      for (const v of alias.values.values()) work.push([member, v])
    }

    /** `const { ctx } = this` (or `{ ctx: c }`): the name holds what `this.ctx` holds. */
    function thisPattern(prop: SgNode, target: SgNode | null) {
      let object = prop.parent()
      if (object?.kind() === "pair_pattern") object = object.parent()
      const declarator = object?.parent()
      if (object?.kind() !== "object_pattern" || declarator?.kind() !== "variable_declarator") return
      if (declarator.field("value")?.kind() !== "this" || !sameNode(declarator.field("name"), object)) return
      if (target?.kind() === "assignment_pattern") target = target.field("left")
      if (target?.kind() !== "identifier" && target?.kind() !== "shorthand_property_identifier_pattern") return
      const alias = members.get(`${thisScope(declarator).id()}.${prop.text()}`)
      if (!alias) return
      const seen = `${alias.key}@${prop.range().start.index}`
      if (seenMembers.has(seen)) return
      seenMembers.add(seen)
      alias.uses ??= []
      ;(alias.targets ??= []).push(target)
      for (const v of alias.values.values()) bindName(target, v)
    }

    function finalizeExports() {
      for (const [name, entry] of Object.entries(exports)) {
        if (entry.local) {
          const b = bindingAt(entry.local, entry.at ?? programEnd - 1)
          if (!b) continue
          for (const v of b.values.values()) exportValue(name, v)
          if (b.kind === "import") {
            const c = b.ref ? constantOf(b.ref) : null
            if (typeof c === "string" || isRef(c)) entry.constant = c
          } else if (b.init && (b.kind === "const" || !assigned(b))) {
            const c = evalKey(b.init, true)
            if (typeof c === "string" || isRef(c)) entry.constant = c
          }
        } else if (entry.expr) {
          const c = evalKey(entry.expr, true)
          if (typeof c === "string" || isRef(c)) entry.constant = c
        }
      }
    }

    const out: Record<string, Export> = Object.create(null)
    // An export that holds nothing followed and no constant answers like a name the module does not export, unless
    // it hides a name of `export *` or of a CommonJS `module.exports` (link.ts): only then is it kept.
    const shadows = stars.length > 0 || "*module" in exports
    for (const [name, entry] of Object.entries(exports))
      if (shadows || entry.values.length || entry.constant !== undefined)
        out[name] =
          entry.constant === undefined ? { values: entry.values } : { values: entry.values, constant: entry.constant }
    findings.sort((a, b) => a.line - b.line || a.column - b.column)
    // The result outlives the source: strings cut from it must not keep it alive (see `detach`).
    for (const f of findings) {
      f.message = detach(f.message)
      f.snippet = detach(f.snippet)
    }
    for (const d of deferred) {
      if (d.kind === "env") d.text = detach(d.text)
      else if (d.kind === "site") {
        d.site.callee = detach(d.site.callee)
        if (d.site.lastArgument !== undefined) d.site.lastArgument = detach(d.site.lastArgument)
      }
    }
    return { findings, deferred, exports: out, stars, imports: [...imports], passes }
  }

  /**
   * Source text that may use the plugin input's `$`: `.$` as a member (`ctx.$`, `this.ctx.$`; not `}.${` in a
   * template), or `$` destructured (`{ $ }`, `{ $: sh }`). The only rule on the input is its shell: code without any
   * cannot gain a finding from being handed the input, and the input is not followed into its classes (analyze.ts)
   * nor is the module analysed again for it (audit.ts `passInput`).
   */
  export const SHELL_USE = /\.\s*\$(?![\w${])|[{,]\s*\$\s*[,}:=]/

  /** The longest snippet quoted, ellipses included, and how much of a long line before the finding it shows. */
  export const SNIPPET_CHARS = 160
  const SNIPPET_BEFORE = 40

  /**
   * The code a finding quotes: its line, trimmed; a line longer than SNIPPET_CHARS (bundled or minified code) is cut to
   * a window around the finding's 1-based `column`, with `…` on each side that was cut.
   *
   * @example
   * PluginAnalysis.snippet("var a0=1,…(thousands of characters)…;new Function(x)", 6492) // "…,a79=1;new Function(x)"
   */
  export function snippet(line: string, column: number): string {
    const text = line.trimEnd()
    const begin = text.length - text.trimStart().length
    if (text.length - begin <= SNIPPET_CHARS) return text.slice(begin)
    const at = Math.min(Math.max(column - 1, begin), text.length)
    const room = SNIPPET_CHARS - 2
    let start = Math.max(begin, at - SNIPPET_BEFORE)
    const end = Math.min(text.length, start + room)
    start = Math.max(begin, end - room)
    // Not in the middle of a character outside the BMP.
    const low = (i: number) => i > 0 && i < text.length && (text.charCodeAt(i) & 0xfc00) === 0xdc00
    const from = low(start) ? start + 1 : start
    const to = low(end) ? end - 1 : end
    return (from > begin ? "…" : "") + text.slice(from, to) + (to < text.length ? "…" : "")
  }

  /**
   * A copy of `text` with storage of its own. JavaScriptCore's `slice`, `split` and `trim` return views that share the
   * buffer of the string they were cut from, so one 157-character snippet cut from a line of a 5 MB bundle keeps the
   * whole bundle in memory for as long as the finding lives (measured: 20 such snippets of 5 MB strings kept 31 MB).
   *
   * @example
   * detach(source.split("\n")[3].trim()) // same characters, without `source` behind them
   */
  export function detach(text: string): string {
    return text.length ? (JSON.parse(JSON.stringify(text)) as string) : text
  }

  function sameNode(a: SgNode | null | undefined, b: SgNode | null | undefined): boolean {
    return !!a && !!b && a.id() === b.id()
  }

  function stringValue(node: SgNode): string {
    return literalText(node)
  }

  /**
   * A string or template's text with substitutions shown as `${…}` and escapes decoded (for path checks), read from
   * the node's source text: its children would be one native node each, and bundles carry templates of many KB.
   */
  function literalText(node: SgNode): string {
    const raw = node.text()
    let body = raw.slice(1, -1)
    if (node.kind() === "template_string" && body.includes("${")) {
      let out = ""
      for (let i = 0; i < body.length; i++) {
        if (body[i] === "\\") {
          out += body.slice(i, i + 2)
          i++
        } else if (body[i] === "$" && body[i + 1] === "{") {
          let depth = 0
          let j = i + 1
          for (; j < body.length; j++) {
            if (body[j] === "{") depth++
            else if (body[j] === "}" && --depth === 0) break
          }
          out += "${…}"
          i = j
        } else out += body[i]
      }
      body = out
    }
    if (!body.includes("\\")) return body
    return body.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[0-7]{1,3}|\r?\n|.)/g, (sequence) =>
      unescape(sequence),
    )
  }

  const SIMPLE_ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", v: "\v" }

  function unescape(sequence: string): string {
    const c = sequence[1]
    try {
      if (c === "u" && sequence[2] === "{") return String.fromCodePoint(parseInt(sequence.slice(3, -1), 16))
      if ((c === "u" && sequence.length === 6) || (c === "x" && sequence.length === 4))
        return String.fromCharCode(parseInt(sequence.slice(2), 16))
    } catch {
      return ""
    }
    if (/^[0-7]+$/.test(sequence.slice(1))) return String.fromCharCode(parseInt(sequence.slice(1), 8))
    if (c in SIMPLE_ESCAPES) return SIMPLE_ESCAPES[c]
    if (c === "\n" || c === "\r") return ""
    return sequence.slice(1)
  }
}
