import fs from "fs/promises"
import os from "os"
import path from "path"
import { bunSpawnSync } from "../spawn-sync"

/**
 * The context OpenCode gives a tool call in `directory`; the permissions the tool asks are pushed to `asks`.
 *
 * @example
 * await LspTools.create(input).lsp.execute(args, toolContext(dir.path))
 */
export function toolContext(directory: string, asks: any[] = []): any {
  return {
    sessionID: "s",
    messageID: "m",
    agent: "build",
    directory,
    worktree: directory,
    abort: new AbortController().signal,
    metadata() {},
    async ask(input: any) {
      asks.push(input)
    },
  }
}

/** Temporary projects for the LSP tests (removed by `await using`). */
export async function project(files: Record<string, string>) {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "ocb-lsp-")))
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true })
    await fs.writeFile(path.join(dir, rel), content)
  }
  return { dir, [Symbol.asyncDispose]: () => fs.rm(dir, { recursive: true, force: true }) }
}

export const SILENT = path.join(import.meta.dir, "fixtures/silent-server.mjs")
/** Accepts every prepareRename, refuses every rename (`--null`: answers it with no edit). */
export const REFUSING = path.join(import.meta.dir, "fixtures/refusing-server.mjs")
/** A server whose definitions point into the file named by its argument (`pointing-server.mjs`). */
export const POINTING = path.join(import.meta.dir, "fixtures/pointing-server.mjs")
/** A server that records the text of every document it is sent in the file named by its argument. */
export const RECORDING = path.join(import.meta.dir, "fixtures/recording-server.mjs")

export const TSCONFIG = JSON.stringify({
  compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "ESNext", moduleResolution: "Bundler" },
  include: ["src"],
})

/** An exported symbol used in three files (and a TS2322 nowhere). */
export const THREE_FILES = {
  "package.json": '{ "name": "p", "private": true, "type": "module" }\n',
  "tsconfig.json": TSCONFIG,
  "src/util.ts":
    "export function computeTotal(items: number[]): number {\n  return items.reduce((a, b) => a + b, 0)\n}\n",
  "src/a.ts": 'import { computeTotal } from "./util"\n\nexport const a = computeTotal([1, 2])\n',
  "src/b.ts":
    'import { computeTotal } from "./util"\n\nexport function b() {\n  return computeTotal([3]) + computeTotal([4])\n}\n',
}

/**
 * A TypeScript "solution" as hono has one: `tsconfig.json` lists no files and references `tsconfig.build.json`
 * (sources, tests excluded) and `tsconfig.spec.json` (everything under src, tests included). TypeScript's server
 * loads the first referenced project holding an opened file and no other.
 */
export const SOLUTION = {
  "package.json": '{ "name": "s", "private": true, "type": "module" }\n',
  "tsconfig.base.json": JSON.stringify({
    compilerOptions: {
      composite: true,
      declaration: true,
      strict: true,
      target: "ES2022",
      module: "ESNext",
      moduleResolution: "Bundler",
      skipLibCheck: true,
      outDir: "${configDir}/dist",
    },
  }),
  "tsconfig.build.json": JSON.stringify({
    extends: "./tsconfig.base.json",
    compilerOptions: { rootDir: "./src", outDir: "./dist/types" },
    include: ["src/**/*.ts"],
    exclude: ["src/**/*.test.ts"],
  }),
  "tsconfig.spec.json": JSON.stringify({
    extends: "./tsconfig.base.json",
    compilerOptions: { noEmit: true, rootDir: "./src" },
    include: ["src"],
  }),
  "tsconfig.json": JSON.stringify({
    files: [],
    references: [{ path: "./tsconfig.build.json" }, { path: "./tsconfig.spec.json" }],
  }),
  "src/util.ts":
    "export function computeTotal(items: number[]): number {\n  return items.reduce((a, b) => a + b, 0)\n}\n",
  "src/a.ts": 'import { computeTotal } from "./util"\n\nexport const a = computeTotal([1, 2])\n',
  "src/util.test.ts":
    'import { computeTotal } from "./util"\n\nexport const checks = [computeTotal([5]) === 5, computeTotal([]) === 0]\n',
}

/** `tsc --noEmit -p dir`: exit code and output. */
export function tsc(dir: string) {
  const bin = path.resolve(import.meta.dir, "../../../../node_modules/typescript/bin/tsc")
  const proc = bunSpawnSync(["node", bin, "--noEmit", "-p", dir])
  return { code: proc.exitCode, out: proc.stdout.toString() + proc.stderr.toString() }
}

/** Processes whose working directory is inside `dir` (language servers a test forgot to stop). */
export async function processesIn(dir: string): Promise<number[]> {
  // A killed process can take a moment to leave the table.
  for (let i = 0; i < 30; i++) {
    const found = await scan(dir)
    if (!found.length) return found
    await Bun.sleep(100)
  }
  return scan(dir)
}

async function scan(dir: string): Promise<number[]> {
  const out: number[] = []
  for (const pid of await fs.readdir("/proc").catch(() => [])) {
    if (!/^\d+$/.test(pid)) continue
    const cwd = await fs.readlink(`/proc/${pid}/cwd`).catch(() => "")
    if (cwd === dir || cwd.startsWith(dir + "/")) out.push(Number(pid))
  }
  return out
}

/**
 * Live processes in the given process groups (a server and the helpers it started; pyright changes its working
 * directory to its own package, so `processesIn` cannot see it).
 */
export async function processesInGroups(groups: number[], waitMs = 3000): Promise<number[]> {
  const deadline = Date.now() + waitMs
  for (;;) {
    const found = await groupScan(new Set(groups))
    if (!found.length || Date.now() > deadline) return found
    await Bun.sleep(100)
  }
}

async function groupScan(groups: Set<number>): Promise<number[]> {
  const out: number[] = []
  for (const pid of await fs.readdir("/proc").catch(() => [])) {
    if (!/^\d+$/.test(pid)) continue
    const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (fields[0] === "Z") continue
    if (groups.has(Number(fields[2]))) out.push(Number(pid))
  }
  return out
}

/**
 * Real project layouts a rename must cover beyond the server's configured project (shapes of expressjs/express,
 * sindresorhus/ky and pallets/itsdangerous): each renames `rename.at` to `rename.to`, and a correct rename leaves
 * no file mentioning `rename.from`.
 */
export const LAYOUTS = {
  /** CommonJS JavaScript with no jsconfig.json: TypeScript's inferred project holds the open file and its imports. */
  express: {
    files: {
      "package.json": '{ "name": "e", "version": "1.0.0" }\n',
      "lib/utils.js": "'use strict';\n\nexports.compileETag = function(val) {\n  return val;\n};\n",
      "lib/application.js":
        "'use strict';\nvar compileETag = require('./utils').compileETag;\n\nexports.set = function(v) {\n  return compileETag(v);\n};\n",
      "lib/esm-user.mjs": "import { compileETag } from './utils.js';\nexport const x = compileETag(1);\n",
    },
    rename: { filePath: "lib/utils.js", line: 3, character: 9, from: "compileETag", to: "compileEtagFn" },
  },
  /** tsconfig.json includes only source/; the tests in test/ import from it. */
  ky: {
    files: {
      "package.json": '{ "name": "k", "type": "module" }\n',
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, module: "NodeNext" }, include: ["source"] }),
      "source/utils/body.ts": "export const getBodySize = (b?: string | null): number => (b ? b.length : 0)\n",
      "source/index.ts": "export { getBodySize } from './utils/body.js'\n",
      "test/body-size.ts":
        "import { getBodySize } from '../source/utils/body.js'\n\nexport const n = getBodySize('abc')\n",
    },
    rename: { filePath: "source/utils/body.ts", line: 1, character: 14, from: "getBodySize", to: "bodySizeOf" },
  },
  /** pyright's include = ["src"]; the tests in tests/ import the package. */
  itsdangerous: {
    files: {
      "pyproject.toml": '[project]\nname = "pkg"\n\n[tool.pyright]\ninclude = ["src"]\n',
      "src/pkg/__init__.py": "",
      "src/pkg/encoding.py": "def want_bytes(s):\n    return s.encode() if isinstance(s, str) else s\n",
      "src/pkg/signer.py": "from .encoding import want_bytes\n\n\ndef sign(v):\n    return want_bytes(v)\n",
      "tests/test_encoding.py":
        "from pkg.encoding import want_bytes\n\n\ndef test_it():\n    assert want_bytes('a') == b'a'\n",
    },
    rename: { filePath: "src/pkg/encoding.py", line: 1, character: 5, from: "want_bytes", to: "to_bytes" },
  },
}
