import { describe, expect, test } from "bun:test"
import { createHash } from "crypto"
import fs from "fs/promises"
import path from "path"
import { run } from "../../audit/cli"
import { AuditTarget } from "../../audit/resolve"
import { memoryIO } from "../../util/cli"
import { tmpdir } from "../fixture"
import { bunSpawnSync } from "../spawn-sync"

const PLUGIN = {
  "package.json": JSON.stringify({
    name: "demo-plugin",
    version: "1.0.0",
    main: "index.js",
    dependencies: { dep: "1" },
  }),
  "index.js": [
    'import { execSync } from "node:child_process"',
    "export default async function plugin() {",
    '  const key = ["e", "v", "a", "l"].join("")',
    "  return globalThis[key](process.env.PAYLOAD)",
    "}",
  ].join("\n"),
  "src/util.ts": 'export const home = () => Bun.file("~/.ssh/config")\n',
  "types.d.ts": "declare function eval(x: string): unknown\n",
  "node_modules/dep/package.json": JSON.stringify({ name: "dep", version: "1.0.0" }),
  "node_modules/dep/index.js": "eval('dependency code')\n",
}

describe("opencode-builtins audit <directory>", () => {
  test("text report: summary, risk, findings by severity; exit 1 on a critical finding", async () => {
    await using dir = await tmpdir(PLUGIN)
    const io = memoryIO(dir.path)
    expect(await run(["."], io)).toBe(1)
    const lines = io.stdout.split("\n")
    expect(lines.slice(0, 3)).toEqual([
      "Plugin audit: . (2 files scanned)",
      "critical 1 · high 1 · medium 2 · low 1",
      "Risk: CRITICAL: code injection patterns found",
    ])
    expect(io.stdout).toContain(
      "CRITICAL (1)\n  eval ×1\n    index.js:4:10  eval(…) spelled globalThis[key]: runs a string as code",
    )
    expect(io.stdout).toContain("      > return globalThis[key](process.env.PAYLOAD)")
    expect(io.stdout).toContain("HIGH (1)\n  sensitive-path ×1\n    src/util.ts:1:")
    expect(io.stdout).not.toContain("dependency code")
    expect(io.stdout).not.toContain("Not audited")
    // Packages the code imports, unaudited without the flag, are named under the summary.
    await using other = await tmpdir({ "index.js": 'import axios from "axios"\nimport { execa } from "execa"\n' })
    const named = memoryIO(other.path)
    expect(await run(["."], named)).toBe(0)
    expect(named.stdout.split("\n")[3]).toBe(
      "Not audited: 2 package(s) the code imports (axios, execa); what they do is not in these findings. " +
        "--include-dependencies audits them too",
    )
  })

  test("--json prints the report; --include-dependencies audits the packages the plugin loads", async () => {
    await using dir = await tmpdir(PLUGIN)
    const io = memoryIO(dir.path)
    expect(await run([dir.path, "--json", "--include-dependencies"], io)).toBe(1)
    const report = JSON.parse(io.stdout)
    expect(report.filesScanned).toBe(3)
    expect(report.counts).toEqual({ critical: 2, high: 1, medium: 2, low: 1 })
    expect(report.findings.map((f: any) => `${f.file}:${f.rule}`).slice(0, 2)).toEqual([
      "index.js:eval",
      "node_modules/dep/index.js:eval",
    ])
  })

  test("findings in files no entry point imports: counted apart, listed under NOT LOADED, out of the risk line (RW5)", async () => {
    await using dir = await tmpdir({
      "package.json": JSON.stringify({ name: "guard", version: "1.0.0", main: "src/index.ts", type: "module" }),
      "src/index.ts": 'const DENY = [".env"]\nexport default async () => ({ deny: DENY })\n',
      "src/index.test.ts": 'import { execSync } from "child_process"\nexecSync("ls ~/.ssh")\neval("1")\n',
    })
    const io = memoryIO(dir.path)
    // The exit code still counts a critical finding outside the loaded code: a gate is not loosened by an inference.
    expect(await run(["."], io)).toBe(1)
    const lines = io.stdout.split("\n")
    expect(lines.slice(1, 4)).toEqual([
      "critical 0 · high 1 · medium 0 · low 0",
      "Risk: HIGH: sensitive paths, dynamically loaded or native code, or install scripts",
      "Not loaded: critical 1 · high 1 · medium 2 · low 0 in 1 file(s) that no entry point (src/index.ts) imports " +
        "(shipped tests, sources beside their build): listed under NOT LOADED, not in the risk; the exit code still " +
        "counts their critical findings",
    ])
    expect(lines).toContain("NOT LOADED, CRITICAL (1)")
    expect(lines).toContain("    src/index.test.ts:3:1  eval(…): runs a string as code (test file)")
    expect(lines).toContain("NOT LOADED, MEDIUM (2)")
    const json = memoryIO(dir.path)
    await run([".", "--json"], json)
    const report = JSON.parse(json.stdout)
    expect(report.counts).toEqual({ critical: 1, high: 2, medium: 2, low: 0 })
    expect(report.notLoaded).toEqual({
      counts: { critical: 1, high: 1, medium: 2, low: 0 },
      files: 1,
      entries: ["src/index.ts"],
    })
    // The plugin route: the CLI as the plugin package ships it prints the same report.
    const cli = path.join(import.meta.dir, "../../../plugin/cli.ts")
    const proc = bunSpawnSync([process.execPath, cli, "audit", "."], { cwd: dir.path })
    expect(proc.exitCode).toBe(1)
    expect(proc.stdout.toString()).toBe(io.stdout)
  })

  test("no critical finding: exit 0", async () => {
    await using dir = await tmpdir({
      "index.ts": "import fs from 'fs'\nexport const read = () => fs.readFileSync('x')\n",
    })
    const io = memoryIO(dir.path)
    expect(await run(["."], io)).toBe(0)
    expect(io.stdout).toContain("Risk: MEDIUM: direct file system, process or network access")
  })

  test("bad usage and unusable targets: exit 2 with a clear message", async () => {
    await using dir = await tmpdir({ "file.js": "x" })
    for (const [argv, message] of [
      [[], "takes exactly one npm package name or plugin directory"],
      [["a", "b"], "takes exactly one"],
      // An empty argument (an unset shell variable) is not the current folder.
      [[""], "takes exactly one npm package name or plugin directory"],
      [["  "], "takes exactly one npm package name or plugin directory"],
      [["--nope", "."], "audit: unknown option --nope; see audit --help"],
      [["file.js"], "it is a file; give a plugin directory or an npm package name"],
      [["./missing"], "no such directory"],
      [["git+ssh://host/repo.git"], "neither an existing directory nor a valid npm package name"],
      [["Bad Name"], "neither an existing directory nor a valid npm package name"],
    ] as [string[], string][]) {
      const io = memoryIO(dir.path)
      expect([argv, await run(argv, io)]).toEqual([argv, 2])
      expect(io.stderr).toContain(message)
    }
    const help = memoryIO(dir.path)
    expect(await run(["--help"], help)).toBe(0)
    expect(help.stdout).toContain("into a private folder of the built-ins' cache and never installed or run")
  })

  test("package specs: names, scopes, versions and tags are accepted; paths and URLs are not", () => {
    for (const ok of ["oh-my-opencode", "@scope/pkg", "pkg@1.2.3", "@scope/pkg@latest", "pkg@^1.0.0"])
      expect([ok, AuditTarget.isPackageSpec(ok)]).toEqual([ok, true])
    for (const bad of ["../pkg", "/abs", "https://x/y.tgz", "file:../x", "UPPER", "a b", "pkg@1.0.0; rm -rf /"])
      expect([bad, AuditTarget.isPackageSpec(bad)]).toEqual([bad, false])
  })
})

describe("opencode-builtins audit <npm-name>", () => {
  test("fetched with the real npm client from a registry (local, on 127.0.0.1), never installed or run", async () => {
    await using work = await tmpdir()
    const marker = work.file("executed")
    const script = `node -e "require('fs').writeFileSync('${marker}', 'ran')"`
    await work.write({
      "src/package.json": JSON.stringify({
        name: "local-evil",
        version: "2.0.0",
        main: "index.js",
        scripts: { preinstall: script, install: script, postinstall: script, prepare: script, prepack: script },
        dependencies: { "left-pad": "^1.0.0" },
      }),
      "src/index.js": `require("fs").writeFileSync(${JSON.stringify(marker)}, "ran")\nnew Function("return this")()\nrequire("left-pad")\n`,
    })
    const packed = bunSpawnSync(["npm", "pack", "--ignore-scripts", "--json", "--pack-destination", work.path], {
      cwd: work.file("src"),
      env: { ...process.env, npm_config_cache: work.file("cache") },
    })
    expect(packed.exitCode).toBe(0)
    const tarball = await fs.readFile(work.file("local-evil-2.0.0.tgz"))
    let port = 0
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req): Response {
        const url = new URL(req.url)
        if (url.pathname === "/local-evil")
          return Response.json({
            name: "local-evil",
            "dist-tags": { latest: "2.0.0" },
            versions: {
              "2.0.0": {
                name: "local-evil",
                version: "2.0.0",
                dist: {
                  tarball: `http://127.0.0.1:${port}/local-evil/-/local-evil-2.0.0.tgz`,
                  shasum: createHash("sha1").update(tarball).digest("hex"),
                  integrity: "sha512-" + createHash("sha512").update(tarball).digest("base64"),
                },
              },
            },
          })
        if (url.pathname === "/local-evil/-/local-evil-2.0.0.tgz") return new Response(tarball)
        return new Response("{}", { status: 404 })
      },
    })
    port = server.port!
    try {
      const env = {
        ...process.env,
        npm_config_registry: `http://127.0.0.1:${server.port}/`,
        npm_config_cache: work.file("cache2"),
        XDG_CACHE_HOME: work.file("xdg-cache"),
      }
      const io = memoryIO(work.path, env)
      expect(await run(["local-evil", "--json"], io)).toBe(1)
      const report = JSON.parse(io.stdout)
      expect(report.target).toBe("local-evil@2.0.0")
      // Its install scripts are reported (prepack runs at packing, and prepare is not run for a package installed
      // from the registry: see realworld.test.ts); none of them ran.
      expect(report.findings.map((f: any) => `${f.severity}:${f.rule}:${f.file}`)).toEqual([
        "critical:function-constructor:index.js",
        ...["preinstall", "install", "postinstall"].map(() => "high:install-script:package.json"),
        "medium:fs-write:index.js",
      ])
      expect(await Bun.file(marker).exists()).toBe(false) // no script ran, no code was executed
      // Downloaded into the built-ins' own cache, never the shared temporary folder (resolve.test.ts, GE3).
      expect(path.dirname(report.dir)).toStartWith(work.file("xdg-cache/opencode-builtins/audit/pack-"))
      expect(report.fetched).toEqual({
        registry: `http://127.0.0.1:${server.port}/`,
        tarball: `http://127.0.0.1:${server.port}/local-evil/-/local-evil-2.0.0.tgz`,
      })
      expect(await Bun.file(report.dir).exists()).toBe(false) // the temporary download is removed
      // Only unpacked: its dependencies are not there, so --include-dependencies is not offered as the way to audit
      // them; how to get them installed without running anything is (with the flag too: nothing was found).
      const advice =
        "A package fetched from npm is only unpacked, never installed, so its dependencies are not there " +
        "(--include-dependencies finds none). To audit them, install it into a scratch folder without running any " +
        "script: npm install --ignore-scripts --prefix <folder> local-evil@2.0.0, then audit " +
        "<folder>/node_modules/local-evil --include-dependencies"
      const text = memoryIO(work.path, env)
      expect(await run(["local-evil"], text)).toBe(1)
      expect(text.stdout).toContain(
        "Not audited: 1 package(s) the code imports (left-pad); what they do is not in these findings. " + advice,
      )
      expect(text.stdout).not.toContain("--include-dependencies audits them too")
      const flag = memoryIO(work.path, env)
      expect(await run(["local-evil", "--include-dependencies"], flag)).toBe(1)
      expect(flag.stdout).toContain("  not installed: left-pad (for local-evil)\n  " + advice)
      const missing = memoryIO(work.path, env)
      expect(await run(["not-published"], missing)).toBe(2)
      expect(missing.stderr).toContain(
        "cannot audit 'not-published': no package of that name on the registry (check the spelling and the scope) (npm pack: E404)",
      )
      const noVersion = memoryIO(work.path, env)
      expect(await run(["local-evil@9.9.9"], noVersion)).toBe(2)
      expect(noVersion.stderr).toContain(
        "cannot audit 'local-evil@9.9.9': the registry has no version matching that range (npm pack: ETARGET)",
      )
    } finally {
      server.stop(true)
    }
  }, 60_000)
})
