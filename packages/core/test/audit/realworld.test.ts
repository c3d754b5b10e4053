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
import { bunSpawnSync } from "../spawn-sync"

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
      // Bun's bundles: `__require` is import.meta.require.
      'var __require = import.meta.require;\n__require(__require.resolve("./x"))',
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

describe("sensitive paths: the files that hold secrets, under /etc and of other tools (AB-3, AB-5)", () => {
  const sensitive = (code: string) => at(code).filter((f) => f.includes("sensitive-path"))

  // opencode-antigravity-auth@1.6.0 dist/src/plugin/server.js:33-34 reads /etc/resolv.conf to detect OrbStack (the
  // only high finding of the package, so its risk line read "HIGH: sensitive paths"); xdg-basedir (its dependency)
  // names /etc/xdg, the XDG config search path. Neither holds a secret.
  test("world-readable system configuration under /etc is not a sensitive path", () => {
    const code = [
      'import { existsSync, readFileSync } from "node:fs";',
      'if (existsSync("/etc/resolv.conf")) readFileSync("/etc/resolv.conf", "utf8");',
      'const dirs = (process.env.XDG_CONFIG_DIRS || "/etc/xdg").split(":");',
      'readFileSync("/etc/os-release", "utf8");',
    ].join("\n")
    expect(sensitive(code)).toEqual([])
    for (const code of [
      'read("/etc/hosts")',
      'read("/etc/localtime")',
      'read("/etc/ssl/certs/ca-certificates.crt")',
      'read("/etc/ssh/ssh_config")',
      'read("/etc/ssh/ssh_host_ed25519_key.pub")',
      'path.join("/etc", "machine-id")',
      'read("/etc/passwords-policy.md")',
      'read("./etc/shadow")',
      'path.join(home, "etc", "shadow")',
    ])
      expect([code, sensitive(code)]).toEqual([code, []])
  })

  test("the files under /etc that hold secrets still are, however the path is written", () => {
    for (const code of [
      'readFileSync("/etc/shadow")',
      'read("/etc/gshadow")',
      'read("/etc/sudoers.d/admin")',
      'read("/etc/ssh/ssh_host_rsa_key")',
      'read("/etc/ssl/private/site.key")',
      'read("/private/etc/master.passwd")',
      'read("/etc/passwd")',
      'path.join("/", "etc", "shadow")',
      'path.join("/etc/ssl/private", name)',
      '["", "etc", "sudoers"].join("/")',
      'const p = "/\\x65tc/shadow"',
      'readFile("../../../etc/shadow")',
    ])
      expect([code, sensitive(code)]).toEqual([code, ["1:high:sensitive-path"]])
    expect(messages('read("/etc/shadow")', "sensitive-path")).toEqual([
      `1:string mentions the system's password hashes (/etc/shadow): "/etc/shadow"`,
    ])
  })

  // opencode-cursor-auth@1.0.16 dist/cursor/agent.js:12-18 reads cursor-agent's token file and
  // dist/utils/platform.js:8-14 Cursor's state.vscdb (its access token, opened with bun:sqlite);
  // @vercel/oidc (bundled in opencode-swarm-plugin@0.63.2 dist/bin/swarm.js:125950) reads the Vercel CLI's token.
  // None was a sensitive-path finding (OpenCode's own auth.json was).
  test("other developer tools' credential files are sensitive paths, named for the tool", () => {
    const cases: [string, string][] = [
      ['const p = path.join(os.homedir(), ".cursor", "auth.json")', "Cursor's token"],
      ['const p = path.join(configDir, "cursor", "auth.json")', "Cursor's token"],
      ['const p = path.join(home, ".config", "Cursor", "User", "globalStorage", "state.vscdb")', "state.vscdb"],
      ['const p = path.join(dataDir, "com.vercel.cli", "auth.json")', "the Vercel CLI's token"],
      ['const p = path.join(home, ".config", "gcloud", "application_default_credentials.json")', "Google Cloud"],
      ['const p = path.join(home, ".claude", ".credentials.json")', "Claude Code's token"],
      ['const p = path.join(home, ".codex", "auth.json")', "the Codex CLI's token"],
      ['const p = path.join(home, ".gemini", "oauth_creds.json")', "the Gemini CLI's token"],
      ["const p = `${home}/.config/github-copilot/hosts.json`", "GitHub Copilot's token"],
      ['const p = path.join(home, ".azure", "msal_token_cache.json")', "Azure CLI tokens"],
      ['const p = path.join(home, ".aws", "sso", "cache")', "AWS SSO"],
      ['const p = path.join(home, ".pypirc")', "credentials file"],
    ]
    for (const [code, label] of cases) {
      expect([code, sensitive(code)]).toEqual([code, ["1:high:sensitive-path"]])
      expect([code, messages(code, "sensitive-path")[0]]).toEqual([code, expect.stringContaining(label)])
    }
    // A tool's other files, and the same names elsewhere, are not its token.
    for (const code of [
      'path.join(root, ".cursor", "rules", "a.mdc")',
      'path.join(root, ".cursor", "mcp.json")',
      'path.join(home, ".vercel", "project.json")',
      'path.join(home, ".config", "gcloud", "configurations")',
      'path.join(root, "auth.json")',
      'path.join(home, ".claude", "settings.json")',
    ])
      expect([code, sensitive(code)]).toEqual([code, []])
  })

  // @tokentop/agent-opencode@1.0.0 dist/index.js:35 and 39 read OpenCode's session store (every session's messages
  // and tool output) with bun:sqlite and fs: only "sqlite" (medium) and generic fs findings were reported (RW6).
  test("OpenCode's own session store is a sensitive path; its logs are medium; its config is none (RW6)", () => {
    const cases: [string, string][] = [
      ['path.join(os.homedir(), ".local/share/opencode/opencode.db")', "1:high:sensitive-path"],
      ['path.join(os.homedir(), ".local/share/opencode/storage")', "1:high:sensitive-path"],
      ['path.join(dataDir, "opencode", "storage", "message", id)', "1:high:sensitive-path"],
      ['path.join(xdgData, "opencode", "opencode-beta.db")', "1:high:sensitive-path"],
      ['path.join(dir, "opencode.db-wal")', "1:high:sensitive-path"],
      ['path.join(home, ".local", "share", "opencode", "tool-output", f)', "1:high:sensitive-path"],
      ['path.join(home, ".local/share/opencode/snapshot")', "1:high:sensitive-path"],
      ['path.join(home, ".local/share/opencode/log")', "1:medium:sensitive-path"],
    ]
    for (const [code, want] of cases) expect([code, sensitive(code)]).toEqual([code, [want]])
    expect(messages('path.join(home, ".local/share/opencode/opencode.db")', "sensitive-path")).toEqual([
      `1:path built from constants mentions OpenCode's session store (every session's messages and tool output, ` +
        `snapshots of project files): "\${…}/.local/share/opencode/opencode.db"`,
    ])
    // The project's .opencode folder, OpenCode's configuration and other tools' databases are not the store.
    for (const code of [
      'path.join(root, ".opencode", "storage")',
      'path.join(home, ".config/opencode/opencode.json")',
      'path.join(dir, "storage", "app.db")',
      'path.join(dir, "myopencode.db")',
    ])
      expect([code, sensitive(code)]).toEqual([code, []])
  })

  test("the table: every example is reported with its label, and its words select it before any pattern runs", () => {
    const words = new RegExp(AuditRules.SENSITIVE_WORDS)
    for (const entry of AuditRules.SENSITIVE_PATHS)
      for (const example of entry.examples) {
        expect([example, words.test(example), new RegExp(entry.words).test(example)]).toEqual([example, true, true])
        expect([example, messages(`x = ${JSON.stringify(example)}`, "sensitive-path")]).toEqual([
          example,
          [`1:string mentions ${entry.label}: ${JSON.stringify(example)}`],
        ])
      }
  })
})

describe("pure helpers of network modules (AB-4)", () => {
  // pg (bundled in opencode-swarm-plugin@0.63.2 dist/index.js:19148 and 4 more copies): net.isIP(host) checks a
  // string; it was reported medium "net.isIP(…): network access".
  test("net.isIP / isIPv4 / isIPv6 compare strings; they are no network access (the import still is)", () => {
    const code = ['var net_1 = require("net");', "net_1.isIP(host);", "net_1.isIPv4(a);", "net_1.isIPv6(b);"].join("\n")
    expect(at(code)).toEqual(["1:medium:network"])
  })

  test("the class: members that check or build strings, settings or certificates, by any alias", () => {
    const code = [
      'import { isIP, BlockList } from "node:net";',
      'import http, { validateHeaderName } from "http";',
      'import * as tls from "tls";',
      'import { getPackedSettings } from "http2";',
      "isIP(h); new BlockList(); validateHeaderName(n); http.validateHeaderValue(n, v);",
      "tls.checkServerIdentity(host, cert); tls.getCiphers(); getPackedSettings({});",
      'const dns = require("dns"); dns.getServers();',
      // url and querystring parse strings: no network module, no finding.
      'const url = require("url"); url.parse(u); new url.URL(u); require("querystring").parse(q);',
    ].join("\n")
    expect(at(code)).toEqual([
      "1:medium:network",
      "2:medium:network",
      "3:medium:network",
      "4:medium:network",
      "7:medium:network",
    ])
    // Members that open connections, servers or lookups still are network access.
    const io = [
      'const net = require("net"), tls = require("tls"), dns = require("dns"), http = require("http");',
      "net.connect(80, h); tls.connect(443, h); dns.lookup(h, cb); http.get(u); new net.Socket();",
    ].join("\n")
    expect(at(io)).toEqual([...Array(4).fill("1:medium:network"), ...Array(5).fill("2:medium:network")])
  })
})
describe("install scripts: what npm runs (AB-6)", () => {
  const found = (report: PluginAudit.Report) =>
    report.findings
      .filter((f) => f.rule === "install-script")
      .map((f) => `${f.file}:${f.message.match(/"(\w+)" script/)?.[1]}`)

  // msgpackr, uuid (in opencode-skills' tree) and aws4fetch (in opencode-antigravity-auth's) have a `prepare`
  // script; the audit said it "runs … with the shell when the package is installed". npm does not run `prepare` of a
  // package installed from the registry or a tarball: npm 11.19.1 installing a packed package whose prepare and
  // postinstall each touch a marker wrote only the postinstall marker (Bun 1.3.10, the package trusted: the same).
  test("the prepare script of a dependency installed from the registry is not an install script", async () => {
    await using dir = await tmpdir({
      "package.json": JSON.stringify({
        name: "plugin",
        version: "1.0.0",
        main: "index.js",
        dependencies: { dep: "1" },
      }),
      "index.js": 'require("dep")\n',
      "node_modules/dep/package.json": JSON.stringify({
        name: "dep",
        version: "1.0.0",
        main: "index.js",
        scripts: { prepare: "npm run build", postinstall: "node setup.js" },
      }),
      "node_modules/dep/index.js": "module.exports = 1\n",
      "node_modules/dep/setup.js": "module.exports = 1\n",
    })
    const report = await PluginAudit.run(dir.path, { includeDependencies: true })
    expect(found(report)).toEqual(["node_modules/dep/package.json:postinstall"])
  })

  test("prepare counts where npm runs it: the folder audited, and dependencies declared from git or a folder", async () => {
    const dep = (name: string) => ({
      [`node_modules/${name}/package.json`]: JSON.stringify({ name, version: "1.0.0", scripts: { prepare: "tsc" } }),
      [`node_modules/${name}/index.js`]: "module.exports = 1\n",
    })
    await using dir = await tmpdir({
      "package.json": JSON.stringify({
        name: "plugin",
        version: "1.0.0",
        scripts: { prepare: "husky" },
        dependencies: { fromgit: "github:owner/fromgit", fromdir: "file:../fromdir", fromnpm: "^1.0.0" },
        optionalDependencies: { short: "owner/short#main", tgz: "file:./vendor/tgz-1.0.0.tgz" },
      }),
      "index.js": "module.exports = 1\n",
      ...dep("fromgit"),
      ...dep("fromdir"),
      ...dep("fromnpm"),
      ...dep("short"),
      ...dep("tgz"),
    })
    const report = await PluginAudit.run(dir.path, { includeDependencies: true })
    expect(found(report).sort()).toEqual([
      "node_modules/fromdir/package.json:prepare",
      "node_modules/fromgit/package.json:prepare",
      "node_modules/short/package.json:prepare",
      "package.json:prepare",
    ])
    // A package as the registry serves it (the CLI's npm route) is installed without its prepare.
    const packed = await PluginAudit.run(dir.path, { includeDependencies: true, fromRegistry: true })
    expect(found(packed)).not.toContain("package.json:prepare")
    const root = report.findings.find((f) => f.file === "package.json")!
    expect(root.message).toBe(
      'runs `husky` with the shell on `npm install` in this folder and when the package is installed from git or a local folder, not from the registry (the "prepare" script)',
    )
  })

  test("which declared specs npm prepares", () => {
    for (const spec of ["github:o/r", "git+https://x.invalid/r.git", "git+ssh://git@x.invalid/r.git#v1", "o/r"])
      expect([spec, AuditDeps.preparesOnInstall(spec)]).toEqual([spec, true])
    for (const spec of ["file:../dir", "link:../dir", "../dir", "https://x.invalid/r.git#main"])
      expect([spec, AuditDeps.preparesOnInstall(spec)]).toEqual([spec, true])
    for (const spec of ["^1.0.0", "latest", "npm:other@1", "file:../x.tgz", "https://x.invalid/p.tgz", "*", "1.x"])
      expect([spec, AuditDeps.preparesOnInstall(spec)]).toEqual([spec, false])
  })
})
describe("messages and the file rules (AB-7, readdir)", () => {
  // get-intrinsic (bundled in opencode-pixel-office@1.2.2 client/dist/assets/index-ranXAQXA.js:43) holds eval in
  // its table of intrinsics; the finding's message read "eval reads eval indirectly".
  test("the message for eval taken as a value says what happens", () => {
    const [finding] = PluginAnalysis.analyze("a.js", 'var INTRINSICS = { "%eval%": eval, "%Error%": Error };')
    expect(finding?.rule).toBe("eval")
    expect(finding?.message).toBe(
      "eval taken as a value (stored, passed or returned): calling it elsewhere runs a string as code",
    )
    expect(messages("const e = globalThis.eval", "eval")).toEqual([
      "1:globalThis.eval is eval taken as a value (stored, passed or returned): calling it elsewhere runs a string as code",
    ])
  })

  // docs/audit.md listed readdir under fs-meta; the code reports a directory listing as fs-read, as it does glob and
  // Bun.Glob's scan (opencode-beads src/vendor.ts:81 calls fs.promises.readdir).
  test("listing a directory is fs-read, as glob is", () => {
    const code = [
      'import fs from "node:fs";',
      'await fs.promises.readdir(dir); fs.readdirSync(dir); fs.opendirSync(dir); fs.globSync("*.md");',
      "fs.statSync(dir); fs.existsSync(dir);",
    ].join("\n")
    expect(at(code)).toEqual([...Array(4).fill("2:medium:fs-read"), ...Array(2).fill("3:medium:fs-meta")])
  })
})

describe("the plugin route: `opencode-builtins audit` as the plugin package ships it", () => {
  test(
    "the real shapes, audited through packages/plugin/cli.ts",
    async () => {
      await using dir = await tmpdir({
        "package.json": JSON.stringify({ name: "p", version: "1.0.0", main: "index.js", dependencies: { dep: "1" } }),
        "index.js": [
          'import { execFile } from "node:child_process";',
          'import { promisify } from "node:util";',
          'import { createRequire } from "node:module";',
          'import { readFileSync } from "node:fs";',
          "const run = promisify(execFile);",
          'await run("notify-send", ["x"]);',
          "const require = createRequire(import.meta.url);",
          'const pkg = require(require.resolve("dep/package.json"));',
          'readFileSync("/etc/resolv.conf", "utf8");',
          'readFileSync(`${process.env.HOME}/.cursor/auth.json`, "utf8");',
        ].join("\n"),
        "node_modules/dep/package.json": JSON.stringify({ name: "dep", version: "1.0.0", scripts: { prepare: "x" } }),
        "node_modules/dep/index.js": "module.exports = 1\n",
      })
      const cli = path.join(import.meta.dir, "../../../plugin/cli.ts")
      const proc = bunSpawnSync([process.execPath, cli, "audit", dir.path, "--json", "--include-dependencies"], {
        cwd: dir.path,
      })
      const report = JSON.parse(proc.stdout.toString())
      expect(report.findings.map((f: any) => `${f.file}:${f.line}:${f.rule}`).sort()).toEqual([
        "index.js:10:fs-read",
        "index.js:10:process-env",
        "index.js:10:sensitive-path",
        "index.js:1:child_process",
        "index.js:6:child_process",
        "index.js:9:fs-read",
      ])
    },
    { timeout: 30_000 },
  )
})
