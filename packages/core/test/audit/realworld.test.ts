// Shapes of real OpenCode plugins from npm where the audit's answer differed from what the code does (tester AB,
// 2026-11-30: 20 plugins, report /tmp/rt/AB-report.md). Each test is a few lines written anew in the shape of the
// real code (none copied), then the class it belongs to.
import { describe, expect, test } from "bun:test"
import path from "path"
import { PluginAnalysis } from "../../audit/analyze"
import { PluginAudit } from "../../audit/audit"
import { AuditDeps } from "../../audit/deps"
import { AuditRules } from "../../audit/rules"
import { tmpdir } from "../fixture"

const at = (code: string, file = "index.js") =>
  PluginAnalysis.analyze(file, code).map((f) => `${f.line}:${f.severity}:${f.rule}`)
const messages = (code: string, rule: string) =>
  PluginAnalysis.analyze("index.js", code)
    .filter((f) => f.rule === rule)
    .map((f) => `${f.line}:${f.message}`)

describe("util.promisify and the other util wrappers (AB-1)", () => {
  // opencode-orchestrator@1.7.22 dist/index.js:7304 (execFileAsync(path, [title, message]) at 7315, 7348, 7371) and
  // opencode-swarm-plugin@0.63.2 dist/index.js:99115 (execAsync("which systemd-run") at 99118, 99119): only the
  // import line was reported; the lines that run programs were not.
  test("a call of what util.promisify(exec / execFile) returns runs a program, as a call of exec does", () => {
    const execFileShape = [
      'import { execFile as execFile2 } from "node:child_process";',
      'import { promisify } from "node:util";',
      "var execFileAsync = promisify(execFile2);",
      'async function notify(title) { await execFileAsync("notify-send", [title]); }',
    ].join("\n")
    expect(at(execFileShape)).toEqual(["1:medium:child_process", "4:medium:child_process"])
    expect(messages(execFileShape, "child_process")[1]).toBe("4:child_process.execFile(…): runs a program")
    const execShape = [
      'import { exec } from "child_process";',
      'import { promisify } from "util";',
      "var execAsync = promisify(exec);",
      'await execAsync("which systemd-run");',
    ].join("\n")
    expect(at(execShape)).toEqual(["1:medium:child_process", "4:medium:child_process"])
    const utilMember = [
      'const util = require("util");',
      'const cp = require("child_process");',
      "const run = util.promisify(cp.exec);",
      'run("id");',
    ].join("\n")
    expect(at(utilMember)).toEqual(["2:medium:child_process", "4:medium:child_process"])
  })

  test("through every alias of util, and of fs functions too (whose import is no finding)", () => {
    const cases: [string, string[]][] = [
      // `promisify(fs.readFile)` gave no finding at all: fs imports are not findings, only calls are.
      [
        'import fs from "fs";\nimport { promisify } from "util";\nconst read = promisify(fs.readFile);\nread("a")',
        ["4:medium:fs-read"],
      ],
      [
        'import util from "node:util";\nimport { writeFile } from "fs";\nutil.promisify(writeFile)("a", "b")',
        ["3:medium:fs-write"],
      ],
      [
        'import * as u from "util";\nconst fs = require("fs");\nconst rm = u.promisify(fs.rm);\nawait rm("x")',
        ["4:medium:fs-write"],
      ],
      [
        'const { promisify: p } = require("node:util");\nconst { readFile } = require("fs");\nconst r = p(readFile);\nr("a")',
        ["4:medium:fs-read"],
      ],
      [
        'const u = require("util"), fs = require("fs");\nconst s = u.promisify(fs.stat.bind(fs));\ns("a")',
        ["3:medium:fs-meta"],
      ],
      // callbackify and deprecate wrap their first argument as promisify does.
      [
        'const util = require("util");\nconst get = util.callbackify(fetch);\nget("https://x", () => {})',
        ["3:low:network-client"],
      ],
      // eval passed on is reported where it is (as a value, also the wrapper's result), and where it is called.
      [
        'const util = require("util");\nconst e = util.deprecate(eval, "old");\ne(code)',
        ["2:critical:eval", "2:critical:eval", "3:critical:eval"],
      ],
    ]
    for (const [code, expected] of cases) expect([code, at(code)]).toEqual([code, expected])
  })

  test("other functions wrapping a capability, and util's other members, are not followed", () => {
    for (const code of [
      // A function of another package (or of no known module) that is given fs.readFile: what it returns is unknown.
      'const fs = require("fs");\nconst read = wrap(fs.readFile);\nread("a")',
      'import pify from "pify";\nimport fs from "fs";\npify(fs.readFile)("a")',
      // `util` itself is no capability; its other functions take no function to wrap.
      'const util = require("util");\nutil.inspect(process.version);\nutil.format("%s", 1)',
      // The wrapper's second argument is not what it wraps.
      'const util = require("util"), fs = require("fs");\nconst f = util.deprecate(() => 1, fs.readFile);\nf()',
    ])
      expect([code, at(code)]).toEqual([code, []])
  })
})

describe("require(require.resolve(<constant>)) (AB-2)", () => {
  // @ranger-testing/opencode-plugin@3.1.8 build/index.js:4-8: the module loaded is the constant the path was
  // resolved from; reported high "require() with a computed module name: what it loads is unknown".
  test("the module loaded is the constant that was resolved: not a computed module name", () => {
    const code = [
      'import { createRequire } from "node:module";',
      "const require = createRequire(import.meta.url);",
      'const pkgPath = require.resolve("@scope/cli/package.json");',
      "const pkg = require(pkgPath);",
    ].join("\n")
    expect(at(code)).toEqual([])
    for (const ok of [
      'require(require.resolve("./x"))',
      'const p = require.resolve("./x", { paths: [__dirname] }); require(p)',
      'import { createRequire } from "module";\nconst r = createRequire(import.meta.url);\nr(r.resolve("./x"))',
      'await import(import.meta.resolve("./x.js"))',
    ])
      expect([ok, at(ok)]).toEqual([ok, []])
    // What is loaded is followed as the module of that name.
    expect(at('const cp = require(require.resolve("child_process"));\ncp.exec("id")')).toEqual([
      "1:medium:child_process",
      "2:medium:child_process",
    ])
  })

  test("a resolved name that is computed, or another function's resolve, is still a computed module name", () => {
    for (const code of [
      "require(require.resolve(name))",
      'import { createRequire } from "module";\nconst r = createRequire(import.meta.url);\nr(r.resolve(name))',
      'require(path.resolve("x"))',
      'require(resolver.resolve("x"))',
    ])
      expect([code, at(code)]).toEqual([code, ["high:dynamic-require"].map((r) => `${code.split("\n").length}:${r}`)])
  })
})
