import { describe, expect, test } from "bun:test"
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
    expect(rules("fetch(url); new WebSocket(u); process.env.HOME; os.homedir()")).toEqual([
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
})
