import { parse, type SgNode } from "@ast-grep/napi"

/**
 * Static analysis of one JavaScript/TypeScript file by syntax tree (tree-sitter through `@ast-grep/napi`), never by
 * regular expression over the text: comments and strings that merely mention `eval` are not findings, and
 * obfuscated spellings are seen through where they can be resolved statically.
 *
 * Names are resolved to what they refer to: module aliases (`import * as cp from "node:child_process"`,
 * `const { readFileSync: r } = require("fs")`), the global object (`globalThis`, `global`, `window`, `self`), and
 * computed members whose key is a constant expression — string literals, templates without substitutions, `+`
 * concatenation, `const` names bound to such values, `[…].join(…)`, `String.fromCharCode(…)` and `atob(…)` of
 * literals. So `globalThis["ev" + "al"](x)` is `eval`.
 *
 * Severity classes (PRD US-013): critical = code injection (`eval`, `Function`/`new Function`,
 * `Function('return this')`, `….constructor.constructor`, string timers); high = sensitive path literals
 * (`/etc/`, `~/.ssh/`, `.env`, …), `import()`/`require()` with a non-literal argument, `vm` code execution;
 * medium = direct API use (fs reads/writes, `Bun.file/write/serve/spawn/$`, child_process, net/http/https…);
 * low = informational (`fetch`, `process.env`, `os.homedir`, WebSocket).
 *
 * @example
 * PluginAnalysis.analyze("index.js", 'globalThis["ev"+"al"]("1")')
 * // [{ severity: "critical", rule: "eval", line: 1, column: 1, … }]
 */
export namespace PluginAnalysis {
  export type Severity = "critical" | "high" | "medium" | "low"
  export const SEVERITIES: Severity[] = ["critical", "high", "medium", "low"]

  export type Finding = {
    severity: Severity
    rule: string
    message: string
    file: string
    /** 1-based. */
    line: number
    column: number
    snippet: string
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

  const GLOBALS = new Set(["globalThis", "global", "window", "self"])
  const FS_IO =
    /^(readFile|readFileSync|writeFile|writeFileSync|appendFile|appendFileSync|createReadStream|createWriteStream|open|openSync|rm|rmSync|unlink|unlinkSync|rename|renameSync|copyFile|copyFileSync|cp|cpSync|readdir|readdirSync|mkdir|mkdirSync|truncate|truncateSync|chmod|chmodSync|symlink|symlinkSync)$/
  const CHILD = /^(exec|execSync|execFile|execFileSync|spawn|spawnSync|fork)$/
  const NET_MODULES = new Set(["net", "http", "https", "http2", "tls", "dgram"])
  const BUN_APIS = new Set(["file", "write", "serve", "spawn", "spawnSync", "$", "listen", "connect"])
  const SENSITIVE: [RegExp, string][] = [
    [/(^|[^\w])\/etc\//, "/etc/"],
    [/~\/\.ssh(\/|$)|(^|[/\\])\.ssh[/\\]/, ".ssh"],
    [/(^|[/\\])\.env($|[./\\_-])/, ".env"],
    [/(^|[/\\])id_(rsa|ed25519|ecdsa|dsa)\b/, "SSH private key"],
    [/(^|[/\\])\.aws[/\\]credentials\b/, ".aws/credentials"],
    [/(^|[/\\])\.(npmrc|netrc|pgpass|git-credentials)$/, "credentials file"],
  ]

  type Path = string[]

  /**
   * The findings of one file, sorted by position.
   *
   * @example
   * PluginAnalysis.analyze("a.js", "eval(x)")[0].rule // "eval"
   */
  export function analyze(file: string, source: string): Finding[] {
    const lang = languageOf(file)
    if (!lang) return []
    const root = parse(lang, source).root()
    const lines = source.split("\n")
    const findings: Finding[] = []
    const report = (node: SgNode, severity: Severity, rule: string, message: string) => {
      const { line, column } = node.range().start
      const snippet = (lines[line] ?? "").trim()
      findings.push({
        severity,
        rule,
        message,
        file,
        line: line + 1,
        column: column + 1,
        snippet: snippet.length > 160 ? snippet.slice(0, 157) + "…" : snippet,
      })
    }

    // Pass 1: constants and module aliases.
    const constants = new Map<string, string>()
    const aliases = new Map<string, Path>()
    const declarators = root.findAll({ rule: { kind: "variable_declarator" } })
    // Twice, so a constant built from an earlier constant resolves regardless of order in the tree walk.
    for (let round = 0; round < 2; round++) {
      for (const decl of declarators) {
        const name = decl.field("name")
        const value = decl.field("value")
        if (!name || !value || name.kind() !== "identifier") continue
        const parent = decl.parent()
        if (parent?.kind() === "lexical_declaration" && parent.child(0)?.text() === "const") {
          const text = evaluate(value, constants)
          if (text !== undefined) constants.set(name.text(), text)
        }
      }
    }
    const moduleOf = (node: SgNode | null): string | undefined => {
      if (!node) return undefined
      let inner = node
      if (inner.kind() === "await_expression") inner = inner.child(inner.children().length - 1) ?? inner
      if (inner.kind() !== "call_expression") return undefined
      const callee = inner.field("function")
      if (!callee || !(callee.text() === "require" || callee.kind() === "import")) return undefined
      const arg = firstArgument(inner)
      const name = arg ? evaluate(arg, constants) : undefined
      return name === undefined ? undefined : normalizeModule(name)
    }
    for (const decl of declarators) {
      const mod = moduleOf(decl.field("value"))
      if (!mod) continue
      const name = decl.field("name")!
      if (name.kind() === "identifier") aliases.set(name.text(), mod.split("."))
      else if (name.kind() === "object_pattern") bindPattern(name, mod, aliases)
    }
    for (const stmt of root.findAll({ rule: { kind: "import_statement" } })) {
      const source = stmt.field("source")
      const mod = source ? normalizeModule(evaluate(source, constants) ?? "") : ""
      if (!mod) continue
      moduleImport(stmt, mod)
      for (const id of stmt.findAll({
        rule: { kind: "identifier", inside: { kind: "import_clause", stopBy: "end" } },
      })) {
        const parent = id.parent()
        if (parent?.kind() === "import_specifier") {
          const imported = parent.field("name")?.text() ?? id.text()
          const local = parent.field("alias")?.text() ?? imported
          if (id.text() === local) aliases.set(local, [...mod.split("."), imported])
        } else aliases.set(id.text(), mod.split("."))
      }
    }

    function moduleImport(node: SgNode, mod: string) {
      const top = mod.split(".")[0]
      if (top === "child_process") report(node, "medium", "child_process", `imports ${mod}: can run programs`)
      else if (NET_MODULES.has(top)) report(node, "medium", "network", `imports ${mod}: network servers/clients`)
      else if (top === "vm") report(node, "high", "vm", `imports vm: compiles and runs code`)
    }

    const pathOf = (node: SgNode | null, depth = 0): Path | undefined => {
      if (!node || depth > 20) return undefined
      switch (node.kind()) {
        case "identifier": {
          const name = node.text()
          if (GLOBALS.has(name)) return []
          return aliases.get(name) ?? [name]
        }
        case "this":
          return ["this"]
        case "member_expression": {
          const base = pathOf(node.field("object"), depth + 1)
          const prop = node.field("property")?.text()
          return base && prop ? [...base, prop] : undefined
        }
        case "subscript_expression": {
          const base = pathOf(node.field("object"), depth + 1)
          const index = node.field("index")
          const key = index ? evaluate(index, constants) : undefined
          return base && key !== undefined ? [...base, key] : undefined
        }
        case "parenthesized_expression":
        case "non_null_expression":
          return pathOf(node.child(node.kind() === "parenthesized_expression" ? 1 : 0), depth + 1)
        case "sequence_expression": {
          const parts = node.children().filter((c) => c.isNamed())
          return pathOf(parts[parts.length - 1] ?? null, depth + 1)
        }
        case "call_expression":
        case "await_expression": {
          // require("fs").readFileSync, (await import("node:fs")).writeFile
          const mod = moduleOf(node)
          return mod ? mod.split(".") : undefined
        }
        case "array":
          return ["[]"]
        case "object":
          return ["{}"]
        case "arrow_function":
        case "function_expression":
        case "function":
          return ["function"]
        case "string":
        case "template_string":
          return ['""']
      }
      return undefined
    }

    // Pass 2: calls and constructions.
    for (const call of root.findAll({ rule: { any: [{ kind: "call_expression" }, { kind: "new_expression" }] } })) {
      const isNew = call.kind() === "new_expression"
      const callee = call.field(isNew ? "constructor" : "function")
      if (!callee) continue
      const arg = firstArgument(call)
      if (callee.kind() === "import") {
        if (arg && evaluate(arg, constants) === undefined)
          report(call, "high", "dynamic-import", "import() with a computed module name: what it loads is unknown")
        continue
      }
      const p = pathOf(callee)
      if (!p) continue
      const name = p.join(".")
      const last = p[p.length - 1]
      if (p.length >= 2 && last === "constructor" && p[p.length - 2] === "constructor") {
        report(call, "critical", "constructor-constructor", `${callee.text()}(…) reaches the Function constructor`)
      } else if (name === "eval") {
        report(
          call,
          "critical",
          "eval",
          `eval(…)${callee.text() === "eval" ? "" : ` spelled ${callee.text()}`}: runs a string as code`,
        )
      } else if (
        name === "Function" ||
        name === "Function.prototype.constructor" ||
        (p.length === 2 && p[0] === "function" && last === "constructor")
      ) {
        const body = arg ? evaluate(lastArgument(call)!, constants) : undefined
        const detail =
          body !== undefined && /^\s*return\s+this\b/.test(body) ? " ('return this' grabs the global object)" : ""
        report(
          call,
          "critical",
          "function-constructor",
          `${isNew ? "new " : ""}Function(…) compiles a string into code${detail}`,
        )
      } else if (
        (name === "setTimeout" || name === "setInterval" || name === "setImmediate") &&
        arg &&
        isStringLike(arg)
      ) {
        report(call, "critical", "string-timer", `${name} with a string argument runs it as code`)
      } else if ((name === "require" || name === "module.require") && !isNew) {
        if (arg && evaluate(arg, constants) === undefined)
          report(call, "high", "dynamic-require", "require() with a computed module name: what it loads is unknown")
        else if (arg) {
          const mod = normalizeModule(evaluate(arg, constants)!)
          if (mod) moduleImport(call, mod)
        }
      } else if (p[0] === "vm" && p.length > 1) {
        report(call, "high", "vm", `vm.${p.slice(1).join(".")}: compiles and runs code`)
      } else if (p[0] === "Bun" && p.length === 2 && BUN_APIS.has(last)) {
        report(
          call,
          "medium",
          `bun-${last === "$" ? "shell" : last}`,
          `Bun.${last}(…): ${BUN_EFFECT[last] ?? "host access"}`,
        )
      } else if (p[0] === "fs" && FS_IO.test(last)) {
        report(
          call,
          "medium",
          /write|append|rm|unlink|rename|copy|cp|mkdir|truncate|chmod|symlink|open/i.test(last)
            ? "fs-write"
            : "fs-read",
          `${name}(…): direct file system access`,
        )
      } else if (p[0] === "child_process" && CHILD.test(last)) {
        report(call, "medium", "child_process", `${name}(…): runs a program`)
      } else if (NET_MODULES.has(p[0]) && p.length > 1) {
        report(call, "medium", "network", `${name}(…): network access`)
      } else if (name === "fetch" || (isNew && (name === "WebSocket" || name === "EventSource"))) {
        report(call, "low", "network-client", `${isNew ? "new " : ""}${name}(…): outbound network request`)
      } else if (name === "os.homedir") {
        report(call, "low", "homedir", "os.homedir(): locates the user's home directory")
      }
    }

    // Member reads that reach the Function constructor without a call, and environment reads.
    // Member reads worth resolving: names ending in constructor or eval, process.env, and every computed member
    // (its key may spell anything). The text test runs in Rust, so a large bundle's other members cost nothing.
    const members = root.findAll({
      rule: {
        any: [{ kind: "member_expression", regex: "(constructor|eval)$|\\benv\\b" }, { kind: "subscript_expression" }],
      },
    })
    for (const member of members) {
      const parent = member.parent()
      if (parent && (parent.kind() === "member_expression" || parent.kind() === "subscript_expression")) continue
      if (
        parent &&
        (parent.kind() === "call_expression" || parent.kind() === "new_expression") &&
        parent.field(parent.kind() === "call_expression" ? "function" : "constructor")?.id() === member.id()
      )
        continue
      const p = pathOf(member)
      if (!p) continue
      if (p.length >= 2 && p[p.length - 1] === "constructor" && p[p.length - 2] === "constructor")
        report(member, "critical", "constructor-constructor", `${member.text()} is the Function constructor`)
      else if (p.length === 1 && p[0] === "eval")
        report(member, "critical", "eval", `${member.text()} reads eval indirectly`)
      else if (p[0] === "process" && p[1] === "env" && p.length <= 3)
        report(member, "low", "process-env", `${member.text()}: reads the environment`)
    }

    // Sensitive paths in string literals and templates.
    for (const str of root.findAll({ rule: { any: [{ kind: "string" }, { kind: "template_string" }] } })) {
      if (str.parent()?.kind() === "import_statement") continue
      const text = literalText(str)
      for (const [pattern, label] of SENSITIVE) {
        if (pattern.test(text)) {
          report(
            str,
            "high",
            "sensitive-path",
            `string mentions ${label}: ${JSON.stringify(text.length > 80 ? text.slice(0, 77) + "…" : text)}`,
          )
          break
        }
      }
    }

    return dedupe(findings)
  }

  const BUN_EFFECT: Record<string, string> = {
    file: "reads or writes files",
    write: "writes files",
    serve: "starts a network server",
    listen: "opens a network socket",
    connect: "opens a network connection",
    spawn: "runs a program",
    spawnSync: "runs a program",
    $: "runs shell commands",
  }

  function dedupe(findings: Finding[]): Finding[] {
    const seen = new Set<string>()
    return findings
      .filter((f) => {
        const key = `${f.rule}:${f.line}:${f.column}`
        if (seen.has(key)) return false
        seen.add(key)
        return true
      })
      .sort((a, b) => a.line - b.line || a.column - b.column)
  }

  function bindPattern(pattern: SgNode, mod: string, aliases: Map<string, Path>) {
    for (const child of pattern.children()) {
      if (child.kind() === "shorthand_property_identifier_pattern")
        aliases.set(child.text(), [...mod.split("."), child.text()])
      else if (child.kind() === "pair_pattern") {
        const key = child.field("key")?.text()
        const value = child.field("value")
        if (key && value?.kind() === "identifier") aliases.set(value.text(), [...mod.split("."), key])
      }
    }
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
    return bare.split("/")[0] === "fs" ? "fs" : bare
  }

  function firstArgument(call: SgNode): SgNode | undefined {
    const args = call.field("arguments")
    return args?.children().find((c) => c.isNamed() && c.kind() !== "comment")
  }

  function lastArgument(call: SgNode): SgNode | undefined {
    const args =
      call
        .field("arguments")
        ?.children()
        .filter((c) => c.isNamed() && c.kind() !== "comment") ?? []
    return args[args.length - 1]
  }

  function isStringLike(node: SgNode): boolean {
    return node.kind() === "string" || node.kind() === "template_string" || node.kind() === "binary_expression"
  }

  /** A string or template's text with substitutions shown as `${…}` (for path checks). */
  function literalText(node: SgNode): string {
    return node
      .children()
      .map((c) =>
        c.kind() === "string_fragment"
          ? c.text()
          : c.kind() === "escape_sequence"
            ? unescape(c.text())
            : c.kind() === "template_substitution"
              ? "${…}"
              : "",
      )
      .join("")
  }

  /**
   * The constant string value of an expression, or undefined when it is not statically known. Numbers evaluate to
   * their decimal text (for `+` and `String.fromCharCode`).
   *
   * @example
   * PluginAnalysis.evaluate(parse("JavaScript", `"ev" + "al"`).root().child(0)!.child(0)!, new Map()) // "eval"
   */
  export function evaluate(node: SgNode, constants: Map<string, string>, depth = 0): string | undefined {
    if (depth > 50) return undefined
    switch (node.kind()) {
      case "string":
        return node
          .children()
          .filter((c) => c.kind() === "string_fragment" || c.kind() === "escape_sequence")
          .map((c) => (c.kind() === "escape_sequence" ? unescape(c.text()) : c.text()))
          .join("")
      case "template_string": {
        let out = ""
        for (const c of node.children()) {
          if (c.kind() === "string_fragment") out += c.text()
          else if (c.kind() === "escape_sequence") out += unescape(c.text())
          else if (c.kind() === "template_substitution") {
            const inner = c.children().find((x) => x.isNamed())
            const value = inner ? evaluate(inner, constants, depth + 1) : undefined
            if (value === undefined) return undefined
            out += value
          }
        }
        return out
      }
      case "number": {
        const n = Number(node.text().replace(/_/g, ""))
        return Number.isFinite(n) ? String(n) : undefined
      }
      case "parenthesized_expression": {
        const inner = node.children().find((c) => c.isNamed())
        return inner ? evaluate(inner, constants, depth + 1) : undefined
      }
      case "identifier":
        return constants.get(node.text())
      case "binary_expression": {
        if (node.field("operator")?.text() !== "+") return undefined
        const left = node.field("left")
        const right = node.field("right")
        const l = left ? evaluate(left, constants, depth + 1) : undefined
        const r = right ? evaluate(right, constants, depth + 1) : undefined
        return l === undefined || r === undefined ? undefined : l + r
      }
      case "call_expression": {
        const callee = node.field("function")
        const args =
          node
            .field("arguments")
            ?.children()
            .filter((c) => c.isNamed()) ?? []
        if (!callee) return undefined
        const calleeText = callee.text().replace(/\s+/g, "")
        if (calleeText === "String.fromCharCode") {
          const codes = args.map((a) => evaluate(a, constants, depth + 1))
          if (codes.some((c) => c === undefined || !/^\d+$/.test(c))) return undefined
          return String.fromCharCode(...codes.map(Number))
        }
        if (calleeText === "atob" && args.length === 1) {
          const encoded = evaluate(args[0], constants, depth + 1)
          if (encoded === undefined) return undefined
          try {
            return atob(encoded)
          } catch {
            return undefined
          }
        }
        if (callee.kind() === "member_expression" && callee.field("property")?.text() === "join") {
          const array = callee.field("object")
          if (array?.kind() !== "array") return undefined
          const items = array
            .children()
            .filter((c) => c.isNamed())
            .map((c) => evaluate(c, constants, depth + 1))
          if (items.some((i) => i === undefined)) return undefined
          const sep = args[0] ? evaluate(args[0], constants, depth + 1) : ","
          return sep === undefined ? undefined : items.join(sep)
        }
        return undefined
      }
    }
    return undefined
  }

  function unescape(sequence: string): string {
    try {
      return JSON.parse(`"${sequence.replace(/^\\'/, "'")}"`)
    } catch {
      if (/^\\x[0-9a-f]{2}$/i.test(sequence)) return String.fromCharCode(parseInt(sequence.slice(2), 16))
      return sequence.slice(1)
    }
  }
}
