import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import type { Host } from "../../host"
import { LspServers } from "../../lsp/servers"
import { LspFormat } from "../../lsp/format"
import { LspProjects } from "../../lsp/projects"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import { Logger } from "../../util/log"
import { recordingExclusive } from "../fixture"
import {
  LAYOUTS,
  POINTING,
  RECORDING,
  processesIn,
  project,
  SILENT,
  SOLUTION,
  THREE_FILES,
  toolContext,
  tsc,
} from "./fixtures"
import { bunSpawnSync } from "../spawn-sync"

// The `lsp` tool definition over the service: the text the model gets and the permissions it asks. Real
// typescript-language-server for the rename; the deliberately silent fake server only for the timeout.
const log = Logger.silent

const context = toolContext

function tool(dir: string, config: unknown, extra: Partial<Lsp.Input> = {}) {
  const host: Host = { directory: dir, worktree: dir, log }
  const service = Lsp.create({ directory: dir, worktree: dir, log, config, ...extra })
  return { service, lsp: LspTools.create(host, () => service).lsp }
}

describe("the lsp tool", () => {
  // With a security layer, a command started beside the tool could swap a link between its check of a file and the
  // server's read of it, or the write of a rename: the whole call runs under `host.exclusive`.
  test("the whole call runs under host.exclusive when the host has it (a failing call releases it)", async () => {
    const spans: string[] = []
    const host: Host = {
      directory: "/x",
      worktree: "/x",
      log,
      exclusive: recordingExclusive(spans),
    }
    const service = Lsp.create({ directory: "/x", worktree: "/x", log, config: true })
    const { lsp } = LspTools.create(host, () => service)
    await expect(lsp.execute({ operation: "hover" }, context("/x", []))).rejects.toThrow("hover needs filePath")
    expect(spans).toEqual(["hold", "release"])
  })
  test("the description states the limits: project file cap, per-file wait, item cap, timeout is not clean", () => {
    const { lsp } = tool("/x", true)
    expect(lsp.description).toContain(`at most ${Lsp.MAX_PROJECT_FILES} files`)
    expect(lsp.description).toContain(`within ${Lsp.DIAGNOSTICS_TIMEOUT_MS / 1000} s per file`)
    expect(lsp.description).toContain("at most 200 items")
    expect(lsp.description).toContain("NOT clean")
    expect(lsp.description).toContain(
      `first (at most ${Lsp.MAX_OPENED_MENTIONS}), so files outside its configured project`,
    )
  })

  test("a silent server: the text says status timeout and NOT clean, never 'no diagnostics'", async () => {
    await using proj = await project({ "a.silent": "anything\n" })
    const { lsp, service } = tool(
      proj.dir,
      { silent: { command: ["node", SILENT], extensions: [".silent"] } },
      {
        diagnosticsTimeoutMs: 300,
      },
    )
    try {
      const out = await lsp.execute({ operation: "diagnostics", filePath: "a.silent" }, context(proj.dir) as any)
      expect(out).toStartWith("status: timeout — no diagnostics result came for 1 file(s) within the wait.")
      expect(out).toContain("This is NOT a clean result")
      expect(out).toContain("  no result: a.silent (silent)")
      expect(out).not.toContain("no diagnostics in")
    } finally {
      await service.stop()
    }
    expect(await processesIn(proj.dir)).toEqual([])
  }, 60_000)

  test("no server for the file type: the error names the setting; a known server not installed names its package", async () => {
    await using proj = await project({ "a.xyz": "x\n", "conf.yaml": "a: 1\n" })
    const { lsp, service } = tool(proj.dir, true)
    const ctx = context(proj.dir) as any
    const none = await lsp.execute({ operation: "diagnostics", filePath: "a.xyz" }, ctx).catch((e) => e)
    expect(LspServers.NotConfigured.is(none)).toBe(true)
    expect(none.message).toContain(
      'opencode.json, e.g. "lsp": { "my-server": { "command": ["my-language-server", "--stdio"]',
    )
    expect(none.message).toContain('"extensions": [".xyz"]')
    // yaml-language-server is in the catalog but not a dependency of this repository (asserted, so a machine that
    // has it fails here rather than passing on another path).
    expect(LspServers.packageDir("yaml-language-server", proj.dir, { directory: proj.dir, worktree: proj.dir })).toBe(
      undefined,
    )
    expect(LspServers.which("yaml-language-server")).toBe(undefined)
    const missing = await lsp
      .execute({ operation: "hover", filePath: "conf.yaml", line: 1, character: 1 }, ctx)
      .catch((e) => e)
    expect(LspServers.NotInstalled.is(missing)).toBe(true)
    expect(missing.message).toContain("npm install -D yaml-language-server")
    expect(missing.message).toContain('"lsp": { "yaml-ls": { "command": ["/path/to/server", "--stdio"] } }')
    await service.stop()
  })

  test("bad arguments are refused before any server starts", async () => {
    await using proj = await project({ "a.ts": "export {}\n" })
    const { lsp, service } = tool(proj.dir, true)
    const ctx = context(proj.dir) as any
    expect((await lsp.execute({ operation: "hover", filePath: "a.ts" }, ctx).catch((e) => e)).message).toBe(
      "hover needs line and character (1-based)",
    )
    expect(
      (await lsp.execute({ operation: "rename", filePath: "a.ts", line: 1, character: 1 }, ctx).catch((e) => e))
        .message,
    ).toBe("rename needs newName")
    expect((await lsp.execute({ operation: "documentSymbol" }, ctx).catch((e) => e)).message).toBe(
      "documentSymbol needs filePath",
    )
    expect(await service.running()).toEqual([])
  })

  test(
    "rename asks the edit permission for every file it writes and lists each with its edit count",
    async () => {
      await using proj = await project(THREE_FILES)
      const { lsp, service } = tool(proj.dir, true)
      const asks: any[] = []
      try {
        const out = await lsp.execute(
          { operation: "rename", filePath: "src/util.ts", line: 1, character: 17, newName: "sumAll" },
          context(proj.dir, asks) as any,
        )
        const [head, ...files] = out.split("\n")
        expect(head).toBe(
          "Renamed `computeTotal` to `sumAll`: 6 edits in 3 files (typescript). All files were written.",
        )
        expect(files.sort()).toEqual(["src/a.ts: 2 edits", "src/b.ts: 3 edits", "src/util.ts: 1 edit"])
        expect(asks.map((a) => a.permission)).toEqual(["lsp", "edit"])
        expect([...asks[1].patterns].sort()).toEqual(["src/a.ts", "src/b.ts", "src/util.ts"])
        expect(await fs.readFile(path.join(proj.dir, "src/b.ts"), "utf8")).toContain("sumAll([3]) + sumAll([4])")
      } finally {
        await service.stop()
      }
      expect(await processesIn(proj.dir)).toEqual([])
    },
    { timeout: 120_000 },
  )

  test(
    "rename on a TypeScript solution from a cold server: every referenced project's files rewritten; a project that could not be loaded is named",
    async () => {
      // hono's layout, plus a reference to a configuration that does not exist (the one project left out).
      const references = [
        { path: "./tsconfig.build.json" },
        { path: "./tsconfig.spec.json" },
        { path: "./tsconfig.gone.json" },
      ]
      await using proj = await project({ ...SOLUTION, "tsconfig.json": JSON.stringify({ files: [], references }) })
      expect(tsc(path.join(proj.dir, "tsconfig.spec.json"))).toMatchObject({ code: 0 })
      const { lsp, service } = tool(proj.dir, true)
      try {
        const out = await lsp.execute(
          { operation: "rename", filePath: "src/util.ts", line: 1, character: 17, newName: "sumAll" },
          context(proj.dir) as any,
        )
        const [head, ...rest] = out.split("\n")
        // A project not loaded: its files were not searched, so the rename does not claim to be complete.
        expect(head).toBe(
          "Renamed `computeTotal` to `sumAll`: 6 edits in 3 files (typescript). The server's edit was written to every file it named, but it may be incomplete: see the WARNING below.",
        )
        expect(rest.slice(0, 3).sort()).toEqual([
          "src/a.ts: 2 edits",
          "src/util.test.ts: 3 edits",
          "src/util.ts: 1 edit",
        ])
        expect(rest.slice(3)).toEqual([
          "[WARNING] 1 TypeScript project of this solution could not be loaded; files only it holds were NOT searched, so this result may be incomplete:",
          "  tsconfig.gone.json: TypeScript cannot read it",
        ])
        expect(tsc(path.join(proj.dir, "tsconfig.spec.json"))).toMatchObject({ code: 0 })
        expect(tsc(path.join(proj.dir, "tsconfig.build.json"))).toMatchObject({ code: 0 })
        const after = await lsp.execute(
          { operation: "diagnostics", filePath: "src/util.test.ts", severity: "error" },
          context(proj.dir) as any,
        )
        expect(after).toStartWith("status: ok")
        expect(after).not.toContain("TS")
      } finally {
        await service.stop()
      }
      expect(await processesIn(proj.dir)).toEqual([])
    },
    { timeout: 180_000 },
  )

  // A server is project code (node_modules) the agent can write: one planted to answer every definition with
  // /etc/passwd or ~/.netrc had the tool print that file's lines, which OpenCode's read would not show without asking
  // `external_directory`.
  test("a location outside the project is listed without its line; one inside keeps it", async () => {
    await using outside = await project({ netrc: "machine example.com login me password hunter2\n" })
    await using p = await project({ "a.point": "alpha beta\n" })
    const { service, lsp } = tool(p.dir, {
      pointing: { command: ["node", POINTING, path.join(outside.dir, "netrc")], extensions: [".point"] },
    })
    try {
      const out = await lsp.execute(
        { operation: "goToDefinition", filePath: "a.point", line: 1, character: 1 },
        context(p.dir) as any,
      )
      expect(out).toContain("goToDefinition: 2 locations")
      expect(out).toContain(`${path.join(outside.dir, "netrc")}:1:1`)
      expect(out).not.toContain("hunter2")
      expect(out).toContain("a.point:1:1  alpha beta")
    } finally {
      await service.stop()
    }
  }, 60_000)

  // Red team CC2: a UTF-16 file's segments were looked for in its UTF-8 reading (NUL bytes splitting the markers): the
  // answer filter showed locations on a segment's line, and the server was sent the segment as the file's text.
  test("CC2: a UTF-16 file whose decoded text holds a read-protected segment is sent blank and its locations are left out; the same in UTF-8 keeps the other lines", async () => {
    const pair = { start: "@secure-start", end: "@secure-end" }
    const text = "alpha beta\n// @secure-start\nwide pin value\n// @secure-end\ngamma\n"
    const le = (t: string) => Buffer.from("\ufeff" + t, "utf16le")
    const be = (t: string) => {
      const b = le(t)
      b.swap16()
      return b
    }
    for (const [name, bytes] of [
      ["UTF-8", Buffer.from(text)],
      ["UTF-16LE", le(text)],
      ["UTF-16BE", be(text)],
    ] as const) {
      await using p = await project({ "x.point": "" })
      await fs.writeFile(path.join(p.dir, "x.point"), bytes)
      const record = path.join(p.dir, "sent.jsonl")
      const segments = () => ({ read: [pair], write: [] })
      const host: Host = { directory: p.dir, worktree: p.dir, log, segments }
      const service = Lsp.create({
        directory: p.dir,
        worktree: p.dir,
        log,
        segments,
        config: { recording: { command: ["node", RECORDING, record], extensions: [".point"] } },
      })
      const pointing = Lsp.create({
        directory: p.dir,
        worktree: p.dir,
        log,
        segments,
        config: { pointing: { command: ["node", POINTING, path.join(p.dir, "x.point")], extensions: [".point"] } },
      })
      const view = LspTools.create(host, () => pointing).lsp
      try {
        // The service as every operation uses it (the tool itself answers a hover on a hidden line without a server).
        await service.hover({ file: path.join(p.dir, "x.point"), line: 0, character: 0 })
        const sent = (await fs.readFile(record, "utf8"))
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as string)
        expect(sent.length).toBeGreaterThan(0)
        for (const t of sent)
          expect({ name, leaked: t.replace(/\0/g, "").includes("wide pin value") }).toEqual({ name, leaked: false })
        // The pointing server answers line 1 of the file: kept for UTF-8 (not a segment line), left out for UTF-16.
        const out = await view.execute(
          { operation: "goToDefinition", filePath: "x.point", line: 1, character: 1 },
          context(p.dir) as any,
        )
        expect(out.replace(/\0/g, "")).not.toContain("wide pin value")
        if (name === "UTF-8") expect(out).toContain("x.point:1:1  alpha beta")
        else expect(out).not.toContain("x.point:1:1")
      } finally {
        await service.stop()
        await pointing.stop()
      }
    }
  }, 60_000)

  test("positions and new names are checked before any server starts", async () => {
    await using proj = await project({ "a.ts": "export const a = 1\n" })
    const { lsp, service } = tool(proj.dir, true)
    const ctx = context(proj.dir) as any
    const far = await lsp.execute({ operation: "hover", filePath: "a.ts", line: 3, character: 1 }, ctx).catch((e) => e)
    expect(far.message).toBe(
      "No position 3:1 in a.ts: line 3 is past the end of the file (it has 2 lines). Nothing was asked of the server.",
    )
    const name = await lsp
      .execute({ operation: "rename", filePath: "a.ts", line: 1, character: 14, newName: "class" }, ctx)
      .catch((e) => e)
    expect(name.message).toBe(
      'The new name "class" is not a valid name in a.ts: it is a reserved word in TypeScript/JavaScript. Nothing was ' +
        "changed; call rename again with a valid identifier.",
    )
    expect(await service.running()).toEqual([])
    expect(await fs.readFile(path.join(proj.dir, "a.ts"), "utf8")).toBe("export const a = 1\n")
  })
})

// Real layouts where the server's configured project does not hold every file using the symbol (express: no
// jsconfig.json; ky: tsconfig.json includes only source/; itsdangerous: pyright includes only src/). Before, each
// rename wrote the defining side only and said "All files were written" (tester U, U-F1 and U-F2).
describe("rename beyond the server's configured project", () => {
  async function rename(layout: (typeof LAYOUTS)[keyof typeof LAYOUTS], files = layout.files) {
    const proj = await project(files)
    const { lsp, service } = tool(proj.dir, true)
    const { from, to, ...at } = layout.rename
    try {
      const out = await lsp.execute({ operation: "rename", ...at, newName: to }, context(proj.dir) as any)
      const read = (rel: string) => fs.readFile(path.join(proj.dir, rel), "utf8")
      return { proj, out, read }
    } finally {
      await service.stop()
      expect(await processesIn(proj.dir)).toEqual([])
    }
  }
  const run = (cmd: string[], cwd: string) => {
    const proc = bunSpawnSync(cmd, { cwd })
    return { code: proc.exitCode, out: proc.stdout.toString() + proc.stderr.toString() }
  }

  test(
    "express (CommonJS, no jsconfig.json): the files that require or import the export are renamed and still run",
    async () => {
      const { proj, out, read } = await rename(LAYOUTS.express)
      await using _ = proj
      expect(out.split("\n").sort()).toEqual([
        "Renamed `compileETag` to `compileEtagFn`: 4 edits in 3 files (typescript). All files were written.",
        "lib/application.js: 1 edit",
        "lib/esm-user.mjs: 2 edits",
        "lib/utils.js: 1 edit",
      ])
      // The local variable keeps its name; the property it reads is the renamed export.
      expect(await read("lib/application.js")).toContain("var compileETag = require('./utils').compileEtagFn;")
      expect(await read("lib/esm-user.mjs")).not.toContain("compileETag")
      expect(
        run(["node", "-e", "process.exit(require('./lib/application.js').set(7) === 7 ? 0 : 1)"], proj.dir),
      ).toEqual({ code: 0, out: "" })
    },
    { timeout: 120_000 },
  )

  test(
    "ky (tsconfig.json includes only source/): the tests in test/ importing the symbol are renamed",
    async () => {
      const { proj, out, read } = await rename(LAYOUTS.ky)
      await using _ = proj
      expect(out.split("\n").sort()).toEqual([
        "Renamed `getBodySize` to `bodySizeOf`: 4 edits in 3 files (typescript). All files were written.",
        "source/index.ts: 1 edit",
        "source/utils/body.ts: 1 edit",
        "test/body-size.ts: 2 edits",
      ])
      expect(await read("test/body-size.ts")).toBe(
        "import { bodySizeOf } from '../source/utils/body.js'\n\nexport const n = bodySizeOf('abc')\n",
      )
    },
    { timeout: 120_000 },
  )

  test(
    'itsdangerous (pyright include = ["src"]): the tests in tests/ are renamed through the server\'s references, and said so',
    async () => {
      const { proj, out, read } = await rename(LAYOUTS.itsdangerous)
      await using _ = proj
      expect(out.split("\n")).toEqual([
        "Renamed `want_bytes` to `to_bytes`: 5 edits in 3 files (pyright). All files were written.",
        "src/pkg/encoding.py: 1 edit",
        "src/pkg/signer.py: 2 edits",
        "tests/test_encoding.py: 2 edits",
        "[NOTE] pyright's rename left out tests/test_encoding.py (outside the `include` of pyproject.toml [tool.pyright]); its references there were renamed as well.",
      ])
      expect(await read("tests/test_encoding.py")).toBe(
        "from pkg.encoding import to_bytes\n\n\ndef test_it():\n    assert to_bytes('a') == b'a'\n",
      )
      const script = "import sys; sys.path[:0] = ['src', 'tests']; import test_encoding; test_encoding.test_it()"
      expect(run(["python3", "-c", script], proj.dir)).toEqual({ code: 0, out: "" })
    },
    { timeout: 120_000 },
  )

  test(
    "a file the server cannot link to the symbol still mentions it: a WARNING names it and its line, never 'All files were written'",
    async () => {
      // ky with a `paths` alias: test/alias.ts, outside `include`, opens in an inferred project without the alias, so
      // TypeScript cannot resolve its import; a comment elsewhere mentions the name too.
      const files = {
        ...LAYOUTS.ky.files,
        "tsconfig.json": JSON.stringify({
          compilerOptions: { strict: true, module: "NodeNext", paths: { "#app/*": ["./source/*"] } },
          include: ["source"],
        }),
        "test/alias.ts": "import { getBodySize } from '#app/utils/body.js'\n\nexport const m = getBodySize('ab')\n",
        "test/notes.ts": "// getBodySize counts characters\nexport {}\n",
      }
      const { proj, out, read } = await rename(LAYOUTS.ky, files)
      await using _ = proj
      const lines = out.split("\n")
      expect(lines[0]).toBe(
        "Renamed `getBodySize` to `bodySizeOf`: 4 edits in 3 files (typescript). The server's edit was written to every file it named, but it may be incomplete: see the WARNING below.",
      )
      expect(out).not.toContain("All files were written")
      expect(lines.slice(4)).toEqual([
        "[WARNING] 2 files of this language still mention `getBodySize` and were NOT changed by this rename. Check each: a use of the renamed symbol there now breaks (rename it by hand); another symbol of that name, a comment or a string is fine:",
        "  test/alias.ts:1",
        "  test/notes.ts:1",
      ])
      expect(await read("test/alias.ts")).toContain("getBodySize")
    },
    { timeout: 120_000 },
  )
})

describe("findReferences beyond the server's configured project", () => {
  test(
    "ky and itsdangerous layouts: the tests outside tsconfig.json's or pyright's include are among the references",
    async () => {
      for (const [layout, expected] of [
        [
          LAYOUTS.ky,
          ["source/index.ts:1:10", "source/utils/body.ts:1:14", "test/body-size.ts:1:10", "test/body-size.ts:3:18"],
        ],
        [
          LAYOUTS.itsdangerous,
          [
            "src/pkg/encoding.py:1:5",
            "src/pkg/signer.py:1:23",
            "src/pkg/signer.py:5:12",
            "tests/test_encoding.py:1:26",
            "tests/test_encoding.py:5:12",
          ],
        ],
      ] as const) {
        await using proj = await project(layout.files)
        const { lsp, service } = tool(proj.dir, true)
        try {
          const { filePath, line, character } = layout.rename
          const out = await lsp.execute(
            { operation: "findReferences", filePath, line, character },
            context(proj.dir) as any,
          )
          const [head, ...rest] = out.split("\n")
          expect(head).toBe(`findReferences: ${expected.length} locations`)
          expect(rest.map((l) => l.split("  ")[0]).sort()).toEqual([...expected])
        } finally {
          await service.stop()
        }
        expect(await processesIn(proj.dir)).toEqual([])
      }
    },
    { timeout: 180_000 },
  )
})

// Tester U, U-F4: 260 errors printed "[TRUNCATED: 200 of 203 …]" and file names with nothing under them.
describe("diagnostics text over the item cap", () => {
  test("the truncation line gives the real total; files past the cap are counted, not listed empty", () => {
    const items = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        range: { start: { line: i, character: 0 }, end: { line: i, character: 1 } },
        severity: 1 as const,
        code: 2322,
        source: "typescript",
        message: "Type 'string' is not assignable to type 'number'.",
      }))
    const report: Lsp.DiagnosticsReport = {
      status: "ok",
      files: [150, 100, 5, 5].map((n, i) => ({
        file: `/p/src/${"abcd"[i]}.ts`,
        server: "typescript",
        status: "ok",
        items: items(n),
      })),
      skipped: [],
      truncated: false,
    }
    const out = LspFormat.diagnostics(report, { directory: "/p", severity: "error", scope: "the project" })
    const lines = out.split("\n")
    expect(lines[0]).toBe("status: ok — 260 errors in 4 files of the project (4 checked; typescript; severity: error)")
    expect(lines.filter((l) => l.startsWith("src/"))).toEqual(["src/a.ts", "src/b.ts"])
    expect(lines.filter((l) => l.startsWith("  error"))).toHaveLength(200)
    expect(lines.at(-1)).toBe("[TRUNCATED: 200 of 260 diagnostics shown] (2 more files with diagnostics not listed)")
    // Exactly at the cap: nothing is left out, no truncation line.
    report.files = [{ file: "/p/src/a.ts", server: "typescript", status: "ok", items: items(200) }]
    expect(LspFormat.diagnostics(report, { directory: "/p", severity: "error", scope: "x" })).not.toContain("TRUNCATED")
  })
})

// Tester U, U-F5: ky as cloned (no node_modules) has a tsconfig.json whose `extends` is missing; `tsc -p` prints its
// two configuration errors, the tool printed only the thousand errors they cause in the code.
describe("a broken tsconfig.json", () => {
  test(
    "its own errors, as tsc -p prints them, come first in project, folder and file diagnostics",
    async () => {
      await using proj = await project({
        "package.json": '{ "name": "p", "type": "module" }\n',
        "tsconfig.json":
          '{\n  "extends": "@sindresorhus/tsconfig",\n  "compilerOptions": { "declarationMap": true },\n  "include": ["source"]\n}\n',
        "source/index.ts": "export const m = new Map<string, number>()\n",
      })
      const printed = tsc(proj.dir).out
      const expected = [...printed.matchAll(/tsconfig\.json\((\d+),(\d+)\): error (TS\d+)/gm)].map(
        (m) => `  error ${m[1]}:${m[2]} ${m[3]}`,
      )
      // TS6053 (the `extends` not found) and TS5069 (declarationMap without declaration).
      expect(expected.map((e) => e.split(" ").at(-1))).toEqual(["TS6053", "TS5069"])
      const { lsp, service } = tool(proj.dir, true)
      try {
        for (const filePath of [undefined, "source", "source/index.ts"]) {
          const out = await lsp.execute(
            { operation: "diagnostics", ...(filePath ? { filePath } : {}), severity: "error" },
            context(proj.dir) as any,
          )
          const lines = out.split("\n")
          expect(lines[1]).toBe("tsconfig.json")
          expect(lines.slice(2, 4).map((l) => l.split(" ").slice(0, 5).join(" "))).toEqual(expected)
          expect(lines[2]).toContain("File '@sindresorhus/tsconfig' not found.")
        }
      } finally {
        await service.stop()
      }
      expect(await processesIn(proj.dir)).toEqual([])
    },
    { timeout: 120_000 },
  )

  test(
    "a types entry not installed (TS2688) is listed first as tsc -p prints it, and a long message is cut",
    async () => {
      // changesets' and zustand's shape: `types` names a package not installed (`tsc -p` prints TS2688 only there,
      // the code's errors then advise installing it), and `lib` entries TypeScript does not know (TS6046, whose
      // message lists every valid lib: 1.7 KB each).
      await using proj = await project({
        "package.json": '{ "name": "p", "type": "module" }\n',
        "tsconfig.json":
          '{\n  "compilerOptions": {\n    "strict": true,\n    "lib": ["ES2024", "ES2099.Nothing"],\n    "types": ["types-not-installed-here"]\n  },\n  "include": ["src"]\n}\n',
        "src/index.ts": "export const m = new Map<string, number>()\n",
      })
      const printed = tsc(proj.dir).out
      expect(printed.split("\n")[0]).toBe(
        "error TS2688: Cannot find type definition file for 'types-not-installed-here'.",
      )
      const located = [...printed.matchAll(/tsconfig\.json\((\d+),(\d+)\): error (TS\d+)/gm)].map(
        (m) => `  error ${m[1]}:${m[2]} ${m[3]}`,
      )
      expect(located).toEqual(["  error 4:23 TS6046"])
      const { lsp, service } = tool(proj.dir, true)
      try {
        for (const filePath of [undefined, "src/index.ts"]) {
          const out = await lsp.execute(
            { operation: "diagnostics", ...(filePath ? { filePath } : {}), severity: "error" },
            context(proj.dir) as any,
          )
          const lines = out.split("\n")
          expect(lines[1]).toBe("tsconfig.json")
          // `tsc`'s order: the one without a position first (shown at 1:1), then the located ones.
          expect(lines[2]).toStartWith(
            "  error 1:1 TS2688 Cannot find type definition file for 'types-not-installed-here'.",
          )
          expect(lines[3].split(" ").slice(0, 5).join(" ")).toBe(located[0])
          expect(lines[3]).toContain("Argument for '--lib' option must be: 'es5', ")
          expect(lines[3]).toMatch(/, … \[\d+ more characters cut\] \(the entry: "ES2099\.Nothing"\)$/)
          expect(lines[3].length).toBeLessThan(450)
        }
      } finally {
        await service.stop()
      }
      expect(await processesIn(proj.dir)).toEqual([])
    },
    { timeout: 120_000 },
  )

  test("errors tsc -p finds only with the root files: a files entry missing (TS6053), a file outside rootDir (TS6059)", async () => {
    const tsserver = path.resolve(import.meta.dir, "../../../../node_modules/typescript/lib/tsserver.js")
    await using missing = await project({
      "tsconfig.json": '{ "compilerOptions": { "strict": true }, "files": ["src/index.ts", "src/gone.ts"] }\n',
      "src/index.ts": "export const a = 1\n",
    })
    await using outside = await project({
      "tsconfig.json": '{ "compilerOptions": { "rootDir": "src", "outDir": "dist" }, "include": ["src", "scripts"] }\n',
      "src/index.ts": "export const a = 1\n",
      "scripts/build.ts": "export const b = 1\n",
    })
    for (const [dir, code] of [
      [missing.dir, 6053],
      [outside.dir, 6059],
    ] as const) {
      expect(tsc(dir).out).toContain(`error TS${code}: `)
      const found = await LspProjects.configDiagnostics(tsserver, path.join(dir, "tsconfig.json"))
      expect([...found.values()].flat().map((d) => d.code)).toEqual([code])
    }
  })

  test(
    "a valid configuration adds nothing to the diagnostics",
    async () => {
      await using proj = await project(THREE_FILES)
      const { lsp, service } = tool(proj.dir, true)
      try {
        const out = await lsp.execute({ operation: "diagnostics" }, context(proj.dir) as any)
        expect(out).toBe("status: ok — no diagnostics in the project (3 files checked; typescript; severity: all)")
      } finally {
        await service.stop()
      }
    },
    { timeout: 120_000 },
  )
})

describe("rename: the search for files mentioning the old name goes through the security checks", () => {
  test(
    "a protected file and a read-protected segment mentioning the name are neither opened nor named",
    async () => {
      const pair = { start: "@secret-start", end: "@secret-end" }
      await using proj = await project({
        ...LAYOUTS.ky.files,
        "test/private.ts": "import { getBodySize } from '../source/utils/body.js'\nexport const p = getBodySize('x')\n",
        "test/segment.ts": "export {}\n// @secret-start\n// getBodySize is used by the billing job\n// @secret-end\n",
      })
      const opened: string[] = []
      const { lsp, service } = tool(proj.dir, true, {
        access: async (f) => (f.endsWith("private.ts") ? "protected for the test" : undefined),
        segments: () => ({ read: [pair], write: [pair] }),
      })
      try {
        const { from, to, ...at } = LAYOUTS.ky.rename
        const out = await lsp.execute({ operation: "rename", ...at, newName: to }, context(proj.dir) as any)
        for (const client of await service.running()) opened.push(...client.openFiles())
        expect(out.split("\n").sort()).toEqual([
          "Renamed `getBodySize` to `bodySizeOf`: 4 edits in 3 files (typescript). All files were written.",
          "source/index.ts: 1 edit",
          "source/utils/body.ts: 1 edit",
          "test/body-size.ts: 2 edits",
        ])
        expect(out).not.toContain("private")
        expect(out).not.toContain("segment")
        expect(await fs.readFile(path.join(proj.dir, "test/private.ts"), "utf8")).toContain(from)
      } finally {
        await service.stop()
      }
      // Had private.ts been opened, TypeScript would have put it in the edit and the whole rename been refused.
      expect(opened.filter((f) => f.endsWith("private.ts") || f.endsWith("segment.ts"))).toEqual([])
      expect(await processesIn(proj.dir)).toEqual([])
    },
    { timeout: 120_000 },
  )
})
