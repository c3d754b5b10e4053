import { describe, expect, test } from "bun:test"
import { parse } from "@ast-grep/napi"
import { PluginAnalysis } from "../../audit/analyze"

const rules = (code: string, file = "index.js") =>
  PluginAnalysis.analyze(file, code).map((f) => `${f.severity}:${f.rule}`)

describe("plugin analysis by syntax tree", () => {
  test("code injection is critical, including computed and obfuscated spellings", () => {
    const cases: [string, string][] = [
      ["eval(code)", "critical:eval"],
      ["globalThis.eval(code)", "critical:eval"],
      ['window["eval"](code)', "critical:eval"],
      ['globalThis["ev" + "al"](code)', "critical:eval"],
      ['const k = "ev" + "al"; globalThis[k](code)', "critical:eval"],
      ['const a = "ev"; const b = a + "al"; self[b](code)', "critical:eval"],
      ['global[["e", "v", "a", "l"].join("")](code)', "critical:eval"],
      ["globalThis[String.fromCharCode(101, 118, 97, 108)](code)", "critical:eval"],
      ['globalThis[atob("ZXZhbA==")](code)', "critical:eval"],
      ["globalThis[`eval`](code)", "critical:eval"],
      ["(0, eval)(code)", "critical:eval"],
      ["const e = globalThis.eval", "critical:eval"],
      ['new Function("a", "return a")', "critical:function-constructor"],
      ["Function(body)", "critical:function-constructor"],
      ['globalThis["Func" + "tion"]("x")', "critical:function-constructor"],
      ['(() => {}).constructor("return 1")', "critical:function-constructor"],
      ['globalThis.constructor.constructor("return this")()', "critical:constructor-constructor"],
      ['[].constructor.constructor("x")', "critical:constructor-constructor"],
      ['obj["constr" + "uctor"]["constructor"]', "critical:constructor-constructor"],
      ['setTimeout("alert(1)", 10)', "critical:string-timer"],
    ]
    for (const [code, rule] of cases) expect([code, rules(code)]).toEqual([code, [rule]])
    const grab = PluginAnalysis.analyze("a.js", "Function('return this')()")
    expect(grab.map((f) => f.message)).toEqual([
      "Function(…) compiles a string into code ('return this' grabs the global object)",
    ])
  })

  test("dynamic import()/require() with computed names are high; literal ones are not findings", () => {
    expect(rules("import(name)")).toEqual(["high:dynamic-import"])
    expect(rules("require(`./plugins/${name}`)")).toEqual(["high:dynamic-require"])
    expect(rules("module.require(x)")).toEqual(["high:dynamic-require"])
    expect(rules('import("./x.js"); require("./local"); import(`./y`); const m = "./z"; require(m)')).toEqual([])
  })

  test("sensitive path literals are high", () => {
    for (const code of [
      'read("/etc/passwd")',
      "open(`~/.ssh/${key}`)",
      'load(".env")',
      'p = "config/.env.local"',
      'k = "/home/u/.ssh/id_rsa"',
      'f = "~/.aws/credentials"',
    ])
      expect([code, rules(code)]).toEqual([code, ["high:sensitive-path"]])
    for (const code of ['x = "environment"', 'x = ".envrc-like"', 'x = "process.env"', 'import x from "./etc/x"'])
      expect([code, rules(code)]).toEqual([code, []])
    // A key file is named for what it is: a public key is not called a private one.
    const message = (code: string) => PluginAnalysis.analyze("a.js", code).map((f) => f.message)
    expect(message('k = "keys/id_rsa.pub"')).toEqual(['string mentions SSH public key: "keys/id_rsa.pub"'])
    expect(message('k = "keys/id_ed25519"')).toEqual(['string mentions SSH private key: "keys/id_ed25519"'])
  })

  test("sensitive paths joined from constant segments (path.join, path.resolve, path.posix.join, [].join)", () => {
    const message = (code: string) =>
      PluginAnalysis.analyze("a.js", code)
        .filter((f) => f.rule === "sensitive-path")
        .map((f) => `${f.line}:${f.message}`)
    // One finding per path, at the call, naming what it is and the path built (unknown segments as `${…}`).
    expect(message('const os = require("os"), path = require("path")\npath.join(os.homedir(), ".ssh", f)')).toEqual([
      '2:path built from constants mentions .ssh: "${…}/.ssh/${…}"',
    ])
    for (const code of [
      'path.join(os.homedir(), ".ssh")',
      'path.join(os.homedir(), ".local", "share", "opencode", "auth.json")',
      'const dir = "opencode"\npath.join(data, dir, "mcp-auth.json")',
      'path.join(os.homedir(), ".aws", "credentials")',
      'path.join("/", "etc", "shadow")',
      'path.resolve(home, ".config/gh/hosts.yml")',
      'path.posix.join(home, ".docker", "config.json")',
      'import { join } from "node:path"\njoin(home, ".kube", "config")',
      'p.win32.join(home, ".gnupg")',
      'path.join(path.join(home, ".local/share/opencode"), "auth.json")',
      '["", "etc", "passwd"].join("/")',
      "path.join(`${home}/.ssh`, name)",
      'function link(dir) { return path.join(dir, ".env") }',
      // Lines joined are no path: the literal is checked alone, as before (/etc/hosts itself is no secret: see
      // realworld.test.ts).
      '["see /etc/shadow", "then"].join("\\n")',
      // Literals alone: the directory as a whole segment, OpenCode's and other tools' credential stores.
      'const dir = ".ssh"',
      'readFile("~/.local/share/opencode/auth.json")',
      'read(home + "/.docker/config.json")',
    ])
      expect([code, rules(code).filter((r) => r.includes("sensitive"))]).toEqual([code, ["high:sensitive-path"]])
    // A home folder's own `etc` or `docker`, a `.sshrc`-like name, an unknown segment: not sensitive.
    for (const code of [
      'path.join(os.homedir(), "etc", "x")',
      'path.join(home, "docker", "compose.json")',
      'path.join(home, ".sshrc")',
      'path.join(home, name, "auth.json")',
      'lines.join("\\n")',
    ])
      expect([code, rules(code).filter((r) => r.includes("sensitive"))]).toEqual([code, []])
  })

  test("direct API use is medium, through every kind of alias", () => {
    const code = [
      'import * as cp from "node:child_process"',
      'import { readFileSync as read } from "fs"',
      'const fsp = require("fs/promises")',
      'const { spawn } = require("child_process")',
      'import http from "node:http"',
      "cp.execSync('ls')",
      "read('a.txt')",
      "await fsp.writeFile('b', 'x')",
      "spawn('git', ['status'])",
      "http.createServer(() => {})",
      "Bun.file('x'); Bun.write('y', 'z'); Bun.serve({ fetch() {} }); Bun.spawn(['ls']); Bun.$`ls`",
    ].join("\n")
    expect(rules(code)).toEqual([
      "medium:child_process",
      "medium:child_process",
      "medium:network",
      "medium:child_process",
      "medium:fs-read",
      "medium:fs-write",
      "medium:child_process",
      "medium:network",
      "medium:bun-file",
      "medium:bun-write",
      "medium:bun-serve",
      "medium:bun-spawn",
      "medium:bun-shell",
    ])
  })

  test("informational findings are low", () => {
    expect(rules('import os from "node:os"; fetch(url); new WebSocket(u); process.env.HOME; os.homedir()')).toEqual([
      "low:network-client",
      "low:network-client",
      "low:process-env",
      "low:homedir",
    ])
  })

  test("no findings for mentions in comments and strings, look-alike members, or type positions", () => {
    const code = [
      "// eval(code) and new Function() are mentioned here only",
      'const s = "eval(x) Function( child_process"',
      "model.eval(); tensor.constructor; x.Function",
      "const f: Function = () => 1",
      "type E = typeof eval",
    ].join("\n")
    expect(rules(code, "a.ts")).toEqual([])
    expect(PluginAnalysis.analyze("types.d.ts", "eval(x)")).toEqual([])
  })

  test("TypeScript and TSX files are parsed as such; positions are 1-based with a snippet", () => {
    const [f] = PluginAnalysis.analyze("src/a.tsx", "const el = <div>{x}</div>\nconst run = (s: string) => eval(s)\n")
    expect(f).toMatchObject({ severity: "critical", rule: "eval", file: "src/a.tsx", line: 2, column: 28 })
    expect(f.snippet).toBe("const run = (s: string) => eval(s)")
  })

  test("in a long (minified) line the snippet is a window around the finding's column, cut sides marked (EF-2)", () => {
    const filler = Array.from({ length: 80 }, (_, i) => `a${i}=1`).join(",")
    const code = `var ${filler};export default async()=>{const f=new Function("x",globalThis.payload);return f}\n`
    const [f] = PluginAnalysis.analyze("index.js", code)
    expect(f).toMatchObject({ rule: "function-constructor", line: 1, column: code.indexOf("new Function") + 1 })
    expect(f.snippet).toContain('new Function("x",globalThis.payload)')
    expect(f.snippet.startsWith("…")).toBe(true)
    expect(f.snippet.length).toBeLessThanOrEqual(PluginAnalysis.SNIPPET_CHARS)
    // The window: 40 characters before the column, then the rest that fits; a line's end is not marked.
    const line = "  " + "x".repeat(300) + "eval(s)" + "y".repeat(300) + "  "
    expect(PluginAnalysis.snippet(line, 303)).toBe("…" + "x".repeat(40) + "eval(s)" + "y".repeat(111) + "…")
    expect(PluginAnalysis.snippet(line, 3)).toBe("x".repeat(158) + "…")
    expect(PluginAnalysis.snippet(line, line.length - 4)).toBe("…" + "y".repeat(158))
    // Short lines are quoted whole, trimmed, as before; a character outside the BMP is not cut in half.
    expect(PluginAnalysis.snippet("   eval(s)  ", 4)).toBe("eval(s)")
    const emoji = "😀".repeat(200)
    expect(PluginAnalysis.snippet(emoji, 201)).not.toMatch(/^…[\udc00-\udfff]|[\ud800-\udbff]…$/)
  })

  test("round 0 leaves out names and words the source does not contain: spellings without them find the same", () => {
    // Each source lacks the plain word it reaches (eval, constructor, etc, ssh, env, fetch). The same source made
    // large (past the size up to which names are looked up) with the words in a comment keeps every branch of the
    // rule: the findings must not change.
    const cases: [string, string[]][] = [
      ['globalThis["ev" + "al"](code)', ["critical:eval"]],
      ['const k = "ev" + "al"; globalThis[k](code)', ["critical:eval"]],
      ["window[`\\x65val`](code)", ["critical:eval"]],
      ["self[String.fromCharCode(101, 118, 97, 108)](code)", ["critical:eval"]],
      ['self[atob("ZXZhbA==")](code)', ["critical:eval"]],
      ['const { ["ev" + "al"]: e } = globalThis; e(code)', ["critical:eval"]],
      ['[]["constr" + "uctor"]["constr" + "uctor"]("return 1")()', ["critical:constructor-constructor"]],
      ['const c = "con" + "structor"; ({})[c][c]("x")()', ["critical:constructor-constructor"]],
      ['const p = "/\\x65tc/passwd"', ["high:sensitive-path"]],
      ['const p = "~/.s\\u0073h/config"', ["high:sensitive-path"]],
      ['process["e" + "nv"].TOKEN', ["low:process-env"]],
      ['const f = globalThis["fe" + "tch"]; f(url)', ["low:network-client"]],
      ["const r = require; r(name)", ["high:dynamic-require"]],
      ["const x = 1; export const y = x + 1", []],
    ]
    const padding =
      "\n// eval constructor etc ssh env fetch process require globalThis " + "x".repeat(300 * 1024) + "\n"
    for (const [code, expected] of cases) {
      expect(rules(code)).toEqual(expected)
      expect(PluginAnalysis.analyze("index.js", code)).toEqual(PluginAnalysis.analyze("index.js", code + padding))
    }
  })
})

describe("identifiers spelled with Unicode escapes", () => {
  test("are the names they spell: same findings, positions and the snippet as written", () => {
    const plainAndEscaped: [string, string][] = [
      ["eval(code)", "\\u0065val(code)"],
      ["globalThis.eval(code)", "globalThis.\\u0065val(code)"],
      ["fetch(url)", "\\u{66}etch(url)"],
      ["fetch(url)", "\\u{0066}\\u0065tch(url)"],
      ["process.env.TOKEN", "process.\\u0065nv.TOKEN"],
      ["const { env: e } = process\ne.SECRET", "const { \\u0065nv: e } = process\ne.SECRET"],
      ["new Function('return 1')()", "new \\u0046unction('return 1')()"],
      [
        "const cp = require('child_process'); cp.exec('ls')",
        "const cp = require('child_process'); cp.\\u0065xec('ls')",
      ],
      ["const f = fetch; f(url); eval(x)", "const \\u0066 = fetch; f(url); eval(x)"],
    ]
    for (const [plain, escaped] of plainAndEscaped) {
      const want = PluginAnalysis.analyze("a.js", plain)
      const got = PluginAnalysis.analyze("a.js", escaped)
      expect(want.length).toBeGreaterThan(0)
      // Rules and lines are the same; columns after an escape on its line move by the escape's extra length.
      expect(got.map((f) => `${f.severity}:${f.rule}@${f.line}`)).toEqual(
        want.map((f) => `${f.severity}:${f.rule}@${f.line}`),
      )
      for (const f of got) expect(f.snippet).toBe(escaped.split("\n")[f.line - 1].trim())
    }
    // Positions count the source as written: the call after an escaped name on the same line keeps its column.
    expect(
      PluginAnalysis.analyze("a.ts", "const n: number = 1; \\u0065val(code as string)").map((f) => f.column),
    ).toEqual([22])
    expect(PluginAnalysis.analyze("a.tsx", "const d = <div/>; \\u0065val(code)").map((f) => f.rule)).toEqual(["eval"])
    // Offsets are UTF-16 units: text outside the Basic Multilingual Plane before the name moves nothing.
    expect(
      PluginAnalysis.analyze("a.js", "const é = '😀'; \\u0065val(x); fetch(u)").map((f) => `${f.rule}@${f.column}`),
    ).toEqual(["eval@17", "network-client@31"])
  })

  test("are found anywhere in a large file: between many statements, deep in a bundle's one wrapper call", () => {
    // Only the parts of the tree that hold a `\u` are searched, split while larger than 16 KB: every place counts.
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `const s${i} = "\\u2550 ${i}"`).join("\n")
    const flat = `${filler(2000)}\n\\u0065val(a)\n${filler(2000)}\nglobalThis.\\u0065val(b)`
    expect(rules(flat)).toEqual(["critical:eval", "critical:eval"])
    const wrapped = `(() => {\n${filler(3000)}\nfunction f() { if (x) { \\u{66}etch(u) } }\n${filler(3000)}\n})()`
    expect(wrapped.length).toBeGreaterThan(16 * 1024 * 4)
    expect(rules(wrapped)).toEqual(rules(wrapped.replace("\\u{66}", "f")))
    expect(rules(wrapped)).toHaveLength(1)
    expect(PluginAnalysis.analyze("a.js", wrapped)[0].line).toBe(3002)
  }, 30_000)

  test("escapes in strings stay strings, escaped keywords stay unread, and nothing else moves", () => {
    expect(rules("const s = '\\u0065val'; foo(s)")).toEqual([])
    expect(rules("let \\u0069f = 1")).toEqual([])
    expect(rules("class A { #\\u0065val = 1 }")).toEqual([])
    const code = "const s = '\\u0041'\nprocess.env.X\nconst t = `\\u{42}`; fetch(u)"
    expect(PluginAnalysis.analyze("a.js", code)).toEqual(
      PluginAnalysis.analyze("a.js", code.replace("\\u0041", "A")).map((f) => ({
        ...f,
        snippet: f.snippet.replace("'A'", "'\\u0041'"),
      })),
    )
  })
})

// Shapes the independent check found missed, reproduced small (see docs/audit.md, "Data flow").
describe("values followed through aliases, scopes and calls", () => {
  const at = (code: string, file = "index.ts") =>
    PluginAnalysis.analyze(file, code).map((f) => `${f.rule}@${f.line}:${f.column}`)

  test("process.env reached through optional chains, computed keys and the global object", () => {
    expect(rules("process.env.X?.y()")).toEqual(["low:process-env"])
    expect(rules('import { KEY } from "./keys"\nprocess.env[KEY]')).toEqual(["low:process-env"])
    expect(rules("globalThis.process.env?.[k]")).toEqual(["low:process-env"])
    expect(rules('const { env } = process\nspawn(cmd, { env })\nenv["TOKEN"]')).toEqual([
      "low:process-env",
      "low:process-env",
    ])
    expect(at("const e = process.env\nconst t = e.TOKEN")).toEqual(["process-env@1:11", "process-env@2:11"])
    // The value read is data, not a capability: following it further finds nothing more.
    expect(rules("const home = process.env.HOME\nhome.startsWith('/')\nfetch2(home)")).toEqual(["low:process-env"])
    const [f] = PluginAnalysis.analyze("a.js", "process.env.API_KEY?.trim()")
    expect(f.message).toBe("process.env.API_KEY: reads the environment")
  })

  test("fetch through a variable, destructuring, bind, reassignment and ?? is a network request", () => {
    for (const code of [
      "const f = fetch\nf(url)",
      "const { fetch: get } = globalThis\nget(url)",
      "const g = globalThis.fetch.bind(globalThis)\ng(url)",
      "let h\nh = fetch\nh(url)",
      "const request = options.fetch ?? globalThis.fetch\nawait request(url)",
      "const f = window['fe' + 'tch']\nf(url)",
    ])
      expect([code, rules(code)]).toEqual([code, ["low:network-client"]])
    const [f] = PluginAnalysis.analyze("a.js", "const { fetch: get } = globalThis\nget(url)")
    expect(f.message).toBe("fetch(…) as get: outbound network request")
  })

  test("an SDK's default fetch kept on `this` and called with .call (opencode-supermemory's client)", () => {
    const code = [
      "function getDefaultFetch() {",
      '  if (typeof fetch !== "undefined") return fetch',
      '  throw new Error("`fetch` is not defined as a global")',
      "}",
      "class Supermemory {",
      "  constructor(options = {}) {",
      "    this.fetch = options.fetch ?? getDefaultFetch()",
      "  }",
      "  async fetchWithTimeout(url, init) {",
      "    return await this.fetch.call(undefined, url, init)",
      "  }",
      "}",
    ].join("\n")
    expect(at(code, "index.js")).toEqual(["network-client@10:18"])
  })

  test("fs metadata calls are file access (fs-meta), through every import form", () => {
    const code = [
      'import { existsSync, statSync } from "node:fs"',
      'import fs from "fs"',
      'import { access } from "node:fs/promises"',
      "existsSync(p)",
      "statSync(p)",
      "fs.lstatSync(p)",
      "fs.realpathSync.native(p)",
      "fs.promises.stat(p)",
      "await access(p)",
      "fs.watch(dir)",
    ].join("\n")
    expect(rules(code)).toEqual(Array(7).fill("medium:fs-meta"))
  })

  test("names are resolved by scope: a parameter or local hides the global, an alias only where it is visible", () => {
    for (const code of [
      "function f(fetch) { fetch(x) }",
      "const fetch = myFetch\nfetch(x)",
      "function a() { var t = fetch; return t.name }\nfunction b(t) { t(x) }",
      'const k = "ev" + "al"\nfunction z(k) { globalThis[k](x) }',
      "function c(process) { return process.env.X }",
      "import fetch from 'node-fetch'\nfetch(u)",
    ])
      expect([code, rules(code)]).toEqual([code, []])
  })

  test("bundle shapes: import.meta.require, createRequire, __toESM, (0, f)(), defaults, .then, arguments", () => {
    const cases: [string, string[]][] = [
      ['var __require = import.meta.require\nvar fs2 = __require("fs")\nfs2.openSync(p)', ["medium:fs-write"]],
      [
        'import { createRequire } from "node:module"\nconst require2 = createRequire(import.meta.url)\nconst cp = require2("child_process")\ncp.execSync("ls")',
        ["medium:child_process", "medium:child_process"],
      ],
      [
        'var import_fs = __toESM(require("fs"));\n(0, import_fs.readFileSync)(p);\nimport_fs.default.writeFileSync(p, "")',
        ["medium:fs-read", "medium:fs-write"],
      ],
      [
        'import { readFileSync as readFileSync51 } from "fs"\nfunction load(readFile10 = readFileSync51) { return readFile10(p) }',
        ["medium:fs-read"],
      ],
      ['await import("node:fs/promises").then((fs) => fs.writeFile(f, "x"))', ["medium:fs-write"]],
      [
        'import * as nodeFs from "node:fs"\nfunction read(cwd, fs) { return fs.readFileSync(cwd) }\nread(".", nodeFs)',
        ["medium:fs-read"],
      ],
      ["const F = Function\nnew F('return 1')", ["critical:function-constructor"]],
      // Read where it is returned, called where the result is used.
      ["function getEval() { return globalThis.eval }\ngetEval()(code)", ["critical:eval", "critical:eval"]],
    ]
    for (const [code, expected] of cases) expect([code, rules(code)]).toEqual([code, expected])
  })

  test("the $ OpenCode passes to a plugin is a shell, however the entry function is exported and takes it", () => {
    const cases: string[] = [
      "export const P = async ({ $ }) => { await $`curl https://x.example` }",
      "export const P: Plugin = async (ctx) => { await ctx.$`id` }",
      "export default async function (input) { const sh = input.$; await sh`id` }",
      "export async function P({ $: shell, client }) { await shell`id` }",
      "const P = async ({ $ }) => { $`id` }\nexport default P",
      "var plugin = async (input) => { await input.$`id` }\nexport { plugin as default }",
      "export default { id: 'p', server: async ({ $ }) => ({ 'tool.execute.before': async () => { await $`id` } }) }",
      "export default { async server(input) { await input.$`id` } }",
      "module.exports = async function (ctx) { await ctx.$`id` }",
    ]
    for (const code of cases) expect([code, rules(code, "index.ts")]).toEqual([code, ["medium:bun-shell"]])
    const [f] = PluginAnalysis.analyze("a.ts", "export const P = async (ctx) => { await ctx.$`id` }")
    expect(f.message).toBe("ctx.$`…`: the $ OpenCode passes to a plugin runs shell commands")
    // Only what OpenCode calls receives the input: a local function's parameter, another member, or a jQuery-like
    // `$` parameter called directly are not the shell.
    for (const code of [
      "const helper = async (ctx) => { await ctx.$`id` }",
      "export const P = async (ctx) => { ctx.client.session.list() }",
      "export function init($) { $('div') }",
      "export const P = async (ctx) => { const f = (ctx) => ctx.$`x` }",
    ])
      expect([code, rules(code, "index.ts")]).toEqual([code, []])
  })

  test("the plugin input passed to a class: constructor, this fields, parameter properties, methods, getters, fields (EF-1)", () => {
    // `new C(input)` hands the input to C's constructor; what it puts on `this` is the input in C's methods.
    const cls = (body: string, use = "new R(ctx)") =>
      `class R {\n${body}\n}\nexport default async (ctx) => { const r = ${use}; return { event: async () => r.run("x") } }`
    const cases: [string, string][] = [
      [cls("constructor(ctx) { this.ctx = ctx }\nrun(c) { return this.ctx.$`sh -c ${c}` }"), "3:17"],
      [
        cls(
          "private ctx: PluginInput\nconstructor(ctx: PluginInput) { this.ctx = ctx }\nrun(c) { return this.ctx.$`x` }",
        ),
        "4:17",
      ],
      [cls("constructor(private ctx: PluginInput) {}\nrun(c) { return this.ctx.$`x` }"), "3:17"],
      [cls("constructor(readonly ctx: PluginInput, public dir: string) {}\nrun(c) { return this.ctx.$`x` }"), "3:17"],
      [cls("#ctx\nconstructor(ctx) { this.#ctx = ctx }\nrun(c) { return this.#ctx.$`x` }"), "4:17"],
      [cls("constructor(ctx) { this.sh = ctx.$ }\nrun(c) { return this.sh`x` }"), "3:17"],
      [cls("constructor({ $, client }) { this.sh = $ }\nrun(c) { return this.sh`x` }"), "3:17"],
      [cls("constructor(ctx) { Object.assign(this, { ctx }) }\nrun(c) { return this.ctx.$`x` }"), "3:17"],
      [cls("constructor(ctx) { Object.assign(this, ctx) }\nrun(c) { return this.$`x` }"), "3:17"],
      [
        cls("constructor(options) { this.ctx = options.ctx }\nrun(c) { return this.ctx.$`x` }", "new R({ ctx })"),
        "3:17",
      ],
      [
        cls("constructor(ctx) { this.ctx = ctx }\nget sh() { return this.ctx.$ }\nrun(c) { return this.sh`x` }"),
        "4:17",
      ],
      [cls("constructor(ctx) { this.ctx = ctx }\nrun = (c) => this.ctx.$`x`"), "3:14"],
      [cls("constructor(ctx) { this.ctx = ctx }\nsh = this.ctx.$\nrun(c) { return this.sh`x` }"), "4:17"],
      [
        cls("constructor(ctx) { this.ctx = ctx }\nrun(c) { return this.ctx.$`x` }", "new (R)(ctx, ctx.directory)"),
        "3:17",
      ],
      // A class expression, bound to a name or constructed where it is written.
      [
        "const R = class { constructor(ctx) { this.ctx = ctx } run() { return this.ctx.$`x` } }\nexport default async (ctx) => { new R(ctx) }",
        "1:70",
      ],
      [
        "export default async (ctx) => { new (class { constructor(c) { this.c = c } run() { this.c.$`x` } })(ctx) }",
        "1:84",
      ],
      // Inherited: no constructor of its own, or `super(ctx)`.
      [
        "class A { constructor(ctx) { this.ctx = ctx } run() { return this.ctx.$`x` } }\nclass B extends A {}\nexport default async (ctx) => { new B(ctx) }",
        "1:62",
      ],
      [
        "class A { constructor(ctx) { this.ctx = ctx } run() { return this.ctx.$`x` } }\nclass B extends A { constructor(ctx: PluginInput) { super(ctx) } }\nexport default async (ctx) => { new B(ctx) }",
        "1:62",
      ],
      // Read back by destructuring `this`; a field the class it extends set; passed to a method, not the constructor.
      [cls("constructor(ctx) { this.ctx = ctx }\nrun(c) { const { ctx } = this; return ctx.$`x` }"), "3:39"],
      [cls("constructor(ctx) { this.ctx = ctx }\nrun(c) { const { ctx: x } = this; return x.$`x` }"), "3:42"],
      [
        "class A { constructor(ctx) { this.ctx = ctx } }\nclass B extends A { run() { this.ctx.$`x` } }\nexport default async (ctx) => { new B(ctx) }",
        "2:29",
      ],
      [cls("init(ctx) { this.ctx = ctx }\nrun(c) { return this.ctx.$`x` }", "new R(); r.init(ctx)"), "3:17"],
      [
        cls(
          "static create(ctx) { const r = new R(); r.init(ctx); return r }\ninit(ctx) { this.ctx = ctx }\nrun(c) { return this.ctx.$`x` }",
          "R.create(ctx)",
        ),
        "4:17",
      ],
      // A destructured member of the input, the class declared after the entry.
      [
        "export default async ({ $, client }) => { new R($, client) }\nclass R { constructor(sh, client) { this.sh = sh } run() { this.sh`x` } }",
        "2:60",
      ],
    ]
    for (const [code, at] of cases) {
      const found = PluginAnalysis.analyze("index.ts", code).map((f) => `${f.rule}@${f.line}:${f.column}`)
      expect([code, found]).toEqual([code, [`bun-shell@${at}`]])
    }
    const [f] = PluginAnalysis.analyze("a.ts", cases[0][0])
    expect(f.message).toBe("this.ctx.$`…`: the $ OpenCode passes to a plugin runs shell commands")
    // Not the input: a class constructed with something else, or never constructed by an entry.
    for (const code of [
      "class R { constructor(ctx) { this.ctx = ctx } run() { return this.ctx.$`x` } }\nexport default async (ctx) => { new R({}) }",
      "class R { constructor(ctx) { this.ctx = ctx } run() { return this.ctx.$`x` } }\nexport default async (ctx) => { new R(ctx.client) }",
      "export class R { constructor(ctx) { this.ctx = ctx } run() { return this.ctx.$`x` } }",
      "class R { constructor(a, ctx) { this.ctx = ctx } run() { return this.ctx.$`x` } }\nexport default async (ctx) => { new R(ctx) }",
    ])
      expect([code, rules(code, "index.ts")]).toEqual([code, []])
  })

  test("an exported name is the entry its last top-level declaration gives, wherever the export names it", () => {
    // The declarations are read lazily from the end (a bundle has thousands of statements, its export clause a few).
    const shell = "async (input) => { await input.$`id` }"
    const quiet = "async (input) => { input.client }"
    const cases: [string, string[]][] = [
      [
        `var plugin = ${quiet}\nvar other = 1\nvar plugin = ${shell}\nexport { plugin as default }`,
        ["medium:bun-shell"],
      ],
      [`var plugin = ${shell}\nvar other = 1\nvar plugin = ${quiet}\nexport { plugin as default }`, []],
      [`var plugin = ${quiet}, plugin = ${shell}\nexport { plugin as default }`, ["medium:bun-shell"]],
      [`var plugin = ${shell}, plugin = ${quiet}\nexport { plugin as default }`, []],
      [
        `export { a as default, b }\nconst a = { server: b }\nfunction b(input) { input.$\`id\` }`,
        ["medium:bun-shell"],
      ],
      [`const server = ${shell}\nexport default { id: "p", server }\nconst unused = 2`, ["medium:bun-shell"]],
    ]
    for (const [code, expected] of cases) expect([code, rules(code, "index.ts")]).toEqual([code, expected])
  })

  test("Bun's module, environment and native routes: import from 'bun', Bun.env, import.meta.env, ffi, bindings", () => {
    const cases: [string, string[]][] = [
      ['import { $ } from "bun"\n$`id`', ["medium:bun-shell"]],
      ['import { spawn as run } from "bun"\nrun(["id"])', ["medium:bun-spawn"]],
      ['const { $ } = await import("bun")\n$`id`', ["medium:bun-shell"]],
      ["Bun.env.OPENAI_API_KEY", ["low:process-env"]],
      ["const k = import.meta.env.SECRET", ["low:process-env"]],
      ['import { dlopen } from "bun:ffi"\ndlopen("libc.so.6", {})', ["high:native-code"]],
      ['process.binding("spawn_sync")', ["high:native-code"]],
      ["process.dlopen(module, path)", ["high:native-code"]],
      ['import { Database } from "bun:sqlite"\nnew Database(p)', ["medium:sqlite"]],
      ['import dns from "node:dns"\ndns.resolve(host, cb)', ["medium:network", "medium:network"]],
      ['new Worker("data:text/javascript,1")', ["medium:worker"]],
      ['import { Worker } from "node:worker_threads"\nnew Worker("./w.js", { name: "w" })', ["medium:worker"]],
      // With `eval: true` the first argument is source code: see "code run from strings…".
      ['import { Worker } from "node:worker_threads"\nnew Worker(code, { eval: true })', ["critical:worker-eval"]],
      ['navigator.sendBeacon("https://x", data)', ["low:network-client"]],
      // Not findings: the same words as data, or a module of that name that is not Bun's.
      ['const env = { Bun: 1 }\nenv.Bun\nimport x from "bunyan"\nx.$`y`', []],
    ]
    for (const [code, expected] of cases) expect([code, rules(code, "index.ts")]).toEqual([code, expected])
  })

  test("spellings through Reflect, Buffer decoding and the async and generator function constructors", () => {
    const cases: [string, string][] = [
      ['Reflect.get(globalThis, "eval")(code)', "critical:eval"],
      ['Reflect.get(globalThis, "ev" + "al")(code)', "critical:eval"],
      ['Reflect.apply(eval, null, ["1"])', "critical:eval"],
      ['Reflect.construct(Function, ["return 1"])', "critical:function-constructor"],
      ['Reflect.apply(Reflect.get(globalThis, "fetch"), null, [url])', "low:network-client"],
      ['globalThis[Buffer.from("ZXZhbA==", "base64").toString()](code)', "critical:eval"],
      ['const n = Buffer.from("6576616c", "hex").toString("utf8")\nglobalThis[n](code)', "critical:eval"],
      ["Object.getPrototypeOf(async function () {}).constructor('return 1')", "critical:function-constructor"],
      [
        "const G = Object.getPrototypeOf(function* () {}).constructor\nnew G('yield 1')",
        "critical:function-constructor",
      ],
    ]
    for (const [code, rule] of cases) expect([code, rules(code)]).toEqual([code, [rule]])
    // An encoding Buffer does not know, or a value that is not constant, decodes to nothing.
    for (const code of [
      'globalThis[Buffer.from("x", "rot13").toString()](c)',
      "globalThis[Buffer.from(s).toString()](c)",
    ])
      expect([code, rules(code)]).toEqual([code, []])
  })

  test("require() of a name that is one of a few .node paths is native code, not a dynamic require (EF-3)", () => {
    const cases: [string, string[]][] = [
      // sharp's loader: a for…of over a list of templates.
      [
        'const p = "linux-x64"\nconst paths = [`../build/sharp-${p}.node`, `@img/sharp-${p}/sharp.node`]\nfor (const path of paths) { try { return require(path) } catch {} }',
        ["high:native-code"],
      ],
      ["for (const p of ['./a.node', './b.node']) require(p)", ["high:native-code"]],
      ["const f = x ? './a.node' : `./b-${y}.node`\nrequire(f)", ["high:native-code"]],
      // One candidate that is not an addon, a name assigned again, or one not known: a dynamic require as before.
      ["for (const p of ['./a.node', './b.js']) require(p)", ["high:dynamic-require"]],
      ["let f = './a.node'\nf = y\nrequire(f)", ["high:dynamic-require"]],
      ["require(x)", ["high:dynamic-require"]],
    ]
    for (const [code, expected] of cases) expect([code, rules(code, "index.cjs")]).toEqual([code, expected])
  })

  test("modules loaded without the word require, and code written inline as a data: URL", () => {
    const cases: [string, string[]][] = [
      ['process.getBuiltinModule("child_process").execSync("id")', ["medium:child_process"]],
      ["const m = process.getBuiltinModule(name)", ["high:dynamic-require"]],
      ['process.mainModule.require("child_process").execSync("id")', ["medium:child_process"]],
      ['globalThis.process.mainModule.constructor._load("fs").readFileSync(p)', ["medium:fs-read"]],
      ['module.constructor._load("child_process")', ["medium:child_process"]],
      // require.main is process.mainModule (a tester's plugin ran a command through it, "none found").
      ['require.main.require("child_process").execSync(c)', ["medium:child_process"]],
      ['require.main?.require("child_process").execSync(c)', ["medium:child_process"]],
      ['module.parent.require("child_process").exec(c)', ["medium:child_process"]],
      ['require.main.constructor._load("fs").readFileSync(p)', ["medium:fs-read"]],
      ['require("module")._load("child_process")', ["medium:child_process"]],
      ['require.call(null, "child_process").exec("id")', ["medium:child_process"]],
      ['import("data:text/javascript,console.log(1)")', ["high:dynamic-import"]],
      ['import x from "data:text/javascript,export default 1"', ["high:dynamic-import"]],
    ]
    for (const [code, expected] of cases) expect([code, rules(code)]).toEqual([code, expected])
    const [f] = PluginAnalysis.analyze("a.js", 'await import("blob:https://x/1")')
    expect(f.message).toBe("loads a blob: URL: runs the code written in it")
  })

  test("the Function constructor as the constructor of any function: built-ins, declared functions and classes", () => {
    // Every function's constructor is Function (each line runs code from a string).
    for (const code of [
      'Object.constructor("return process")()',
      'String.constructor("a")()',
      'Symbol.constructor("e")()',
      'Promise.constructor("f")()',
      'setTimeout.constructor("b")()',
      'console.log.constructor("d")()',
      'JSON.parse.constructor("e")()',
      'Math.max.constructor("h")()',
      'Array.prototype.map.constructor("c")()',
      'function f() {}\nf.constructor("g")()',
      'async function f() {}\nf.constructor("g")()',
      'class K {}\nK.constructor("d")()',
      'const g = () => 1\ng.constructor("x")()',
      'new Object.constructor("x")',
      'Object["constr" + "uctor"]("x")',
      // A value whose kind is not known, called with arguments: a function's constructor would compile them.
      'value.constructor("return process")()',
      // .call, .apply and Reflect.apply of it are calls of it.
      'Object.constructor.call(null, "x")()',
      'Object.constructor.apply(null, ["x"])()',
      'Reflect.apply(Object.constructor, null, ["x"])()',
      'value.constructor.call(null, "x")()',
    ])
      expect([code, rules(code)]).toEqual([code, ["critical:function-constructor"]])
    expect(rules('Object.constructor.constructor("x")')).toEqual(["critical:constructor-constructor"])
    const [f] = PluginAnalysis.analyze("a.js", 'Object.constructor("return this")()')
    expect(f.message).toBe(
      "Object.constructor(…) is the Function constructor: compiles a string into code ('return this' grabs the global object)",
    )
    // Only read or compared, called without arguments, or `new` of an object's class (clone patterns), the
    // constructor of a prototype (ES5 and CoffeeScript inheritance), of a string, array or object literal: not code.
    for (const code of [
      "if (x.constructor === Foo) x.constructor.name",
      'typeof value.constructor === "function" && value.constructor.prototype',
      "new value.constructor(value.byteLength)",
      "new this.constructor(a, b)",
      "const Ctor = object.constructor\nnew Ctor(1)",
      "value.constructor()",
      "Parent.prototype.constructor.call(this, options)",
      "Child.__super__.constructor.apply(this, arguments)",
      '"".constructor(5); [].constructor(3); ({}).constructor(1)',
      "const console = { log: {} }\nnew console.log.constructor(1)",
      "function run(Promise) { return new Promise.constructor(1) }",
    ])
      expect([code, rules(code)]).toEqual([code, []])
  })

  test("the Function constructor as the `this` of a borrowed bind/call/apply, Function.prototype.constructor, destructured constructor", () => {
    // Each line runs code from a string (checked with node: `new (Function.prototype.bind.apply(Function, [null,
    // code]))()()` ran a shell command). Babel's `_construct` helper and ES5 code construct with a list this way.
    for (const code of [
      "new (Function.prototype.bind.apply(Function, [null, code]))()()",
      'new (Function.bind.apply(Function, [null, "x"]))()',
      "const B = Object.bind.call(Function, null, code)\nB()",
      'Function.apply.call(Function, null, ["return 1"])',
      'Function.call.call(Function, null, "return 1")',
      'noop.call.apply(Function, [null, "return 1"])',
      "const F = Function\nnew (F.prototype.bind.apply(F, [null, code]))()",
      "exports.a = (c) => Function.prototype.constructor(c)()",
      "const G = Function\nG.prototype.constructor(code)",
      "exports.b = (c) => { const { constructor: F } = function () {}; return F(c)() }",
      "const { constructor } = () => {}\nconstructor(code)()",
      "const { constructor: C = null } = Object\nnew C(code)",
      // Through Reflect.apply: F is the `this` of the borrowed method.
      "new (Reflect.apply(Function.prototype.bind, Function, [null, code]))()()",
      "const F = Reflect.apply(Object.bind, Function, [null, code])\nF()",
      'Reflect.apply(Function.prototype.call, Function, [null, "return 1"])',
      'Reflect.apply((noop.apply), Function, [null, ["return 1"]])',
    ])
      expect([code, rules(code)]).toEqual([code, ["critical:function-constructor"]])
    // A borrowed bind of something else, another class's prototype, an object's destructured constructor: not code.
    for (const code of [
      "new (Function.prototype.bind.apply(Date, [null, 2020]))()",
      "Array.prototype.push.apply.call(list, null, [1])",
      "class K {}\nK.prototype.constructor(1)",
      "const { constructor: C } = Object.prototype\nC(1)",
      "const { constructor: D } = {}\nD(1)",
      "new (Reflect.apply(Function.prototype.bind, Date, [null, 2020]))()",
      "Reflect.apply(Function.prototype.toString, Function, [])",
    ])
      expect([code, rules(code)]).toEqual([code, []])
  })

  test("code run from strings: Worker with eval, Module#_compile, inspector, repl", () => {
    // Each compiles and runs a string (checked with node): `eval: true` makes a Worker's first argument source code.
    for (const [code, expected] of [
      ['const { Worker } = require("worker_threads")\nnew Worker(code, { eval: true })', ["critical:worker-eval"]],
      [
        'import { Worker } from "node:worker_threads"\nnew Worker(code, { "eval": 1, name: "w" })',
        ["critical:worker-eval"],
      ],
      ["new Worker(code, { eval: isSource })", ["critical:worker-eval"]],
      ['new Worker("./w.js", { eval: false })', ["medium:worker"]],
      ['new Worker(new URL("./w.js", import.meta.url))', ["medium:worker"]],
      ["new Worker(code, options)", ["medium:worker"]],
      [
        'const Module = require("module")\nconst m = new Module("x")\nm._compile(code, "/tmp/x.js")',
        ["high:module-compile"],
      ],
      ['const { Module } = require("node:module")\nnew Module("x")._compile(code, "x.js")', ["high:module-compile"]],
      ['require("module").prototype._compile.call(m, code, "x.js")', ["high:module-compile"]],
      ['module._compile(code, "x.js")', ["high:module-compile"]],
      ['module.constructor.prototype._compile.call(m, code, "x.js")', ["high:module-compile"]],
      ['const inspector = require("inspector")\nnew inspector.Session()', ["high:inspector"]],
      ['import { Session } from "node:inspector/promises"', ["high:inspector"]],
      ['require("repl").start({ input })', ["high:repl"]],
    ] as [string, string[]][])
      expect([code, rules(code)]).toEqual([code, expected])
  })

  test("Bun's network and file APIs have the rules of their node and global equivalents", () => {
    for (const [code, expected] of [
      ['const sock = await Bun.udpSocket({})\nsock.send("secret", 53, "203.0.113.1")', ["medium:network"]],
      ['await Bun.fetch("https://x.invalid")', ["low:network-client"]],
      ['await Bun.dns.lookup("x.invalid")', ["medium:network"]],
      ['new Bun.S3Client({ bucket: "b" })', ["medium:network"]],
      ['await Bun.s3.write("k", "secret")', ["medium:network"]],
      ["await Bun.sql`select 1`", ["medium:network"]],
      ['import { SQL } from "bun"\nnew SQL(url)', ["medium:network"]],
      ['await Bun.redis.set("k", "v")', ["medium:network"]],
      ['import { RedisClient } from "bun"\nnew RedisClient(url)', ["medium:network"]],
      ['const g = new Bun.Glob("**/*")\nfor (const f of g.scanSync("/")) {}', ["medium:fs-read"]],
      ['import { Glob } from "bun"\nfor await (const f of new Glob("*").scan(".")) {}', ["medium:fs-read"]],
      ['Bun.mmap("a")', ["medium:fs-read"]],
      // Matching a pattern against a string reads no file; an environment variable read is one finding.
      ['new Bun.Glob("*.ts").match("a.ts")', []],
      ["Bun.env.HOME", ["low:process-env"]],
    ] as [string, string[]][])
      expect([code, rules(code, "index.ts")]).toEqual([code, expected])
  })

  test("eval, Function and require held in an object or array literal and called are calls of them", () => {
    const cases: [string, string[]][] = [
      ['const o = { f: Function }\no.f("return process")().exit(1)', ["critical:function-constructor"]],
      ['const arr = [Function]\narr[0]("x")()', ["critical:function-constructor"]],
      ['[Function][0]("x")()', ["critical:function-constructor"]],
      ['const { f } = { f: Function }\nf("x")', ["critical:function-constructor"]],
      ['const F = Function\nconst o = { F }\no.F("x")', ["critical:function-constructor"]],
      ['const o = { a: [1, Function] }\no.a[1]("x")', ["critical:function-constructor"]],
      ['const o = { ["f" + "n"]: Function }\no.fn("x")', ["critical:function-constructor"]],
      ['const o = { ...{ f: Function } }\nnew o.f("x")', ["critical:function-constructor"]],
      ['const o = { f: Function }\no.f.call(null, "x")', ["critical:function-constructor"]],
      ['const o = { f: Function }\nReflect.apply(o.f, null, ["x"])', ["critical:function-constructor"]],
      ['const t = { f: Function }\nt[name]("x")', ["critical:function-constructor"]],
      ['const o = { f: Object.constructor }\no.f("x")', ["critical:function-constructor"]],
      ["function table() { return { f: Function } }\ntable().f(code)", ["critical:function-constructor"]],
      // eval's read is reported where it is put, as any read of eval that flows.
      ["const o = { run: eval }\no.run(code)", ["critical:eval", "critical:eval"]],
      ["const o = { r: require }\no.r(name)", ["high:dynamic-require"]],
      ["const [r] = [0]\nconst o = [require]\no[0](name)", ["high:dynamic-require"]],
      // .call, .apply and Reflect.apply of require: the module name is their argument (list).
      ["require.call(null, name)", ["high:dynamic-require"]],
      ["const x = process.argv[2]\nrequire.call(null, x)", ["high:dynamic-require"]],
      ["require.apply(null, [name])", ["high:dynamic-require"]],
      ["require.apply(null, args)", ["high:dynamic-require"]],
      ["Reflect.apply(require, null, [name])", ["high:dynamic-require"]],
      ['Reflect.apply(require, null, ["child_process"]).exec("id")', ["medium:child_process"]],
      ['require.call(null, "fs"); require.apply(null, ["fs"]); const m = "fs"; require.call(null, m)', []],
      // Held but not called, another member, or looked up by a key not known and only read: not a call.
      ["const props = { onClick: { type: Function } }\nprops.onClick.type", []],
      ['const o = { f: Function }\no.g("x")', []],
      ["const t = { f: Function }\nconst v = t[name]\nuse(v)", []],
    ]
    for (const [code, expected] of cases) expect([code, rules(code)]).toEqual([code, expected])
  })

  // Every value the audit follows is followed into object and array literals as eval, Function and require are.
  const held = (code: string) => PluginAnalysis.analyze("index.js", code).map((f) => `${f.rule}@${f.line}:${f.column}`)

  test("fetch held in an object literal and called through its member is a network request", () => {
    expect(held('const api = { get: fetch }\napi.get("https://evil.example")')).toEqual(["network-client@2:1"])
    expect(held("const api = { fetch }\nconst { fetch: f } = api\nf(url)")).toEqual(["network-client@3:1"])
    expect(held("const api = { net: { get: globalThis.fetch } }\napi.net.get(url)")).toEqual(["network-client@2:1"])
    expect(held("function client() { return { get: fetch } }\nclient().get(url)")).toEqual(["network-client@2:1"])
    const [f] = PluginAnalysis.analyze("a.js", "const api = { get: fetch }\napi.get(url)")
    expect(f.message).toBe("fetch(…) as api.get: outbound network request")
    // Another member of it is not fetch.
    expect(held("const api = { get: fetch }\napi.post(url)")).toEqual([])
  })

  test("fetch held in an array literal, read by index or array destructuring, is a network request", () => {
    expect(held('const [h] = [fetch]\nh("https://x.example")')).toEqual(["network-client@2:1"])
    expect(held("const [, h = null] = [0, fetch]\nh(url)")).toEqual(["network-client@2:1"])
    expect(held("const list = [1, fetch]\nlist[1](url)")).toEqual(["network-client@2:1"])
    expect(held("const { a: [h] } = { a: [fetch] }\nh(url)")).toEqual(["network-client@2:1"])
    expect(held("const [h] = [0, fetch]\nh(url)")).toEqual([])
  })

  test("process.env held in a literal: a variable read through it is an environment read", () => {
    const code = "const api = { env: process.env }\nconst k = api.env.SECRET\nconst [e] = [process.env]\ne.TOKEN"
    expect(held(code)).toEqual(["process-env@1:20", "process-env@2:11", "process-env@3:14", "process-env@4:1"])
    const found = PluginAnalysis.analyze("a.js", code)
    expect(found[1].message).toBe("api.env.SECRET: reads the environment")
    expect(found[3].message).toBe("e.TOKEN: reads the environment")
  })

  test("child_process, fs and network module members held in a literal are what they are when called directly", () => {
    expect(held('const cp = require("child_process")\ncp.exec("id")')).toEqual([
      "child_process@1:12",
      "child_process@2:1",
    ])
    expect(held('const cp = require("child_process")\nconst o = { run: cp.exec }\no.run("id")')).toEqual([
      "child_process@1:12",
      "child_process@3:1",
    ])
    const [, call] = PluginAnalysis.analyze(
      "a.js",
      'const cp = require("child_process")\nconst o = { run: cp.exec }\no.run("id")',
    )
    expect(call.message).toBe("child_process.exec(…): runs a program")
    expect(rules('import fs from "fs"\nconst io = [fs.writeFileSync, fs.readFileSync]\nio[0](p, d)\nio[1](p)')).toEqual(
      ["medium:fs-write", "medium:fs-read"],
    )
    expect(rules('import https from "https"\nconst t = { r: https.request }\nt.r(url)')).toEqual([
      "medium:network",
      "medium:network",
    ])
    expect(rules("const c = { WS: WebSocket, X: XMLHttpRequest }\nnew c.WS(u)\nnew c.X()")).toEqual([
      "low:network-client",
      "low:network-client",
    ])
    expect(rules("const t = { sh: Bun.spawn }\nt.sh(['id'])")).toEqual(["medium:bun-spawn"])
  })

  test("a local function named fetch held in a literal is not the global fetch", () => {
    expect(held("function fetch() {}\nconst o = { f: fetch }\no.f(url)\nconst [g] = [fetch]\ng(url)")).toEqual([])
    expect(held("const fetch = () => 1\nconst o = { fetch }\no.fetch(url)")).toEqual([])
  })

  test("what a file's result keeps: no lone namespace uses, no empty exports, strings detached from the source", () => {
    const source = [
      'import * as ns from "./x.js"',
      "use(ns)",
      "ns.y(1)",
      "export function inert() {}",
      "export const key = 'ev' + 'al'",
      "export const get = fetch",
      "get(u)",
    ].join("\n")
    const root = parse("JavaScript" as any, source).root()
    const result = PluginAnalysis.analyzeTree("/p/index.js", root, source, { resolve: () => "/p/x.js" })
    // `use(ns)` is the namespace itself (resolves to nothing anywhere); `ns.y(1)` is kept for link.ts.
    const ns = { ref: "/p/x.js", name: "*" }
    expect(result.deferred.map((d) => [d.kind, d.kind === "module" ? d.spec : d.path])).toEqual([
      ["env", [ns, "y"]],
      ["site", [ns, "y"]],
    ])
    expect(Object.keys(result.exports).sort()).toEqual(["get", "key"])
    expect(result.exports.key.constant).toBe("eval")
    expect(result.findings.map((f) => [f.line, f.rule, f.snippet])).toEqual([[7, "network-client", "get(u)"]])
    const line = "x".repeat(1000) + " eval(s)"
    expect(PluginAnalysis.detach(line.slice(1001))).toBe("eval(s)")
  })
})
