import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { LAYOUTS, processesIn, THREE_FILES, tsc } from "../../packages/core/test/lsp/fixtures"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { FORK, targets } from "./targets"

// The plugin's `lsp` tool through the real stock binaries: the language servers (typescript-language-server 6.0.2,
// TypeScript 5.9.3) come from this repository's node_modules, started by the plugin inside OpenCode; nothing is
// downloaded. Every run checks that no process is left in the project afterwards.
const FILES = { ...THREE_FILES, "src/bad.ts": "export const count: number = 'three'\n" }
const TIMEOUT = { timeout: 180_000 }
// The fork's binary carries no language server and the test project has no node_modules: there the server is named
// in opencode.json, as a user of the fork would (this repository's copy, run by the test's own runtime).
const TLS = path.join(import.meta.dir, "../../node_modules/typescript-language-server/lib/cli.mjs")
const CONFIG = FORK ? { lsp: { typescript: { command: [process.execPath, TLS, "--stdio"] } } } : undefined
const RUN = { timeoutMs: 150_000 }

/** The `lsp` tools OpenCode offered the model in its first agent turn. */
function offered(server: ModelServer.Instance) {
  return server
    .turns()[0]
    .body.tools.filter((t: any) => t.function?.name === "lsp")
    .map((t: any) => t.function)
}

for (const target of targets()) {
  describe(`lsp tool on stock opencode ${target.label}`, () => {
    test(
      "diagnostics of a TS2322 file, then a three-file rename of an exported symbol: all files rewritten, tsc passes",
      async () => {
        await using project = await Harness.project({ bin: target.bin, files: FILES, config: CONFIG })
        // bad.ts is diagnosed first; it would fail tsc, so the rename's project check runs without it.
        const server = ModelServer.start([
          ModelServer.call("lsp", { operation: "diagnostics", filePath: "src/bad.ts" }),
          ModelServer.call("bash", { command: "rm src/bad.ts", description: "remove the broken file" }),
          ModelServer.call("lsp", {
            operation: "rename",
            filePath: "src/util.ts",
            line: 1,
            character: 17,
            newName: "sumAll",
          }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "Check src/bad.ts, then rename computeTotal", RUN)
          expect(result.exitCode).toBe(0)
          expect(result.tools.map((t) => [t.tool, t.status])).toEqual([
            ["lsp", "completed"],
            ["bash", "completed"],
            ["lsp", "completed"],
          ])
          const [diagnostics, , rename] = result.tools
          expect(diagnostics.output).toStartWith("status: ok — 1 error in 1 file of src/bad.ts")
          expect(diagnostics.output).toContain("src/bad.ts\n  error 1:14 TS2322 Type 'string' is not assignable")
          expect(rename.output).toStartWith(
            "Renamed `computeTotal` to `sumAll`: 6 edits in 3 files (typescript). All files were written.",
          )
          expect(rename.output.split("\n").slice(1).sort()).toEqual([
            "src/a.ts: 2 edits",
            "src/b.ts: 3 edits",
            "src/util.ts: 1 edit",
          ])

          const read = (rel: string) => fs.readFile(path.join(project.dir, rel), "utf8")
          expect(await read("src/util.ts")).toStartWith("export function sumAll(items: number[]): number {")
          expect(await read("src/a.ts")).toBe('import { sumAll } from "./util"\n\nexport const a = sumAll([1, 2])\n')
          expect(await read("src/b.ts")).toBe(
            'import { sumAll } from "./util"\n\nexport function b() {\n  return sumAll([3]) + sumAll([4])\n}\n',
          )
          expect(tsc(project.dir)).toMatchObject({ code: 0 })

          // What the model saw: one `lsp` tool (ours), and each result in the next request.
          const turns = server.turns()
          expect(turns).toHaveLength(4)
          expect(server.overruns).toBe(0)
          const tools = offered(server)
          expect(tools).toHaveLength(1)
          expect(tools[0].parameters.properties.operation.enum).toContain("diagnostics")
          expect(turns[1].raw).toContain("TS2322")
          expect(turns[3].raw).toContain("6 edits in 3 files")
        } finally {
          server.stop()
        }
        // The plugin stops its language servers when OpenCode exits.
        expect(await processesIn(project.dir)).toEqual([])
      },
      TIMEOUT,
    )

    // Files saved with a UTF-8 byte-order mark (Visual Studio): the server's positions are on the text after the mark.
    // Before, b.ts (which the tool never opened) became `import {gammaa, beta }`, reported as success (tester U-F10).
    test(
      "rename across files starting with a byte-order mark: the one the tool did not open is rewritten exactly, tsc passes",
      async () => {
        const BOM = "\uFEFF"
        const a = `${BOM}export const alpha = 1; export const beta = alpha + 1\r\n`
        const b = `${BOM}/* ü */ import { alpha, beta } from "./a"\r\nexport const c = alpha + beta\r\n`
        const files = {
          "package.json": '{ "name": "b" }\n',
          "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ["src"] }),
          "src/a.ts": a,
          "src/b.ts": b,
        }
        await using project = await Harness.project({ bin: target.bin, files, config: CONFIG })
        const server = ModelServer.start([
          ModelServer.call("lsp", {
            operation: "rename",
            filePath: "src/a.ts",
            line: 1,
            character: 14,
            newName: "gamma",
          }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "rename alpha", RUN)
          expect(result.exitCode).toBe(0)
          expect(result.tools[0].output).toStartWith(
            "Renamed `alpha` to `gamma`: 4 edits in 2 files (typescript). All files were written.",
          )
          const read = (rel: string) => fs.readFile(path.join(project.dir, rel), "utf8")
          expect(await read("src/b.ts")).toBe(b.replaceAll("alpha", "gamma"))
          expect(await read("src/a.ts")).toBe(a.replaceAll("alpha", "gamma"))
          expect(tsc(project.dir)).toMatchObject({ code: 0 })
        } finally {
          server.stop()
        }
        expect(await processesIn(project.dir)).toEqual([])
      },
      TIMEOUT,
    )

    // Under a policy the server runs in the sandbox, read-only, for the whole session. Counted as a running shell
    // command, it made the read after a shell command wait 60 s and fail (red-team helper, 1.18.33).
    test(
      "with a security policy: diagnostics, a shell command, a read and a rename all complete; the rename is written by the host",
      async () => {
        const policy = {
          version: "1.0",
          rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"] }],
        }
        const files = { ...FILES, "secrets/key.txt": "k\n", ".opencode-security.json": JSON.stringify(policy) }
        await using project = await Harness.project({ bin: target.bin, files, config: CONFIG })
        const server = ModelServer.start([
          ModelServer.call("lsp", { operation: "diagnostics", filePath: "src/bad.ts" }),
          ModelServer.call("bash", { command: "rm src/bad.ts", description: "remove the broken file" }),
          ModelServer.call("read", { filePath: path.join(project.dir, "src/a.ts") }),
          ModelServer.call("lsp", {
            operation: "rename",
            filePath: "src/util.ts",
            line: 1,
            character: 17,
            newName: "sumAll",
          }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "Check src/bad.ts, then rename computeTotal", RUN)
          expect(result.exitCode).toBe(0)
          expect(result.tools.map((t) => [t.tool, t.status])).toEqual([
            ["lsp", "completed"],
            ["bash", "completed"],
            ["read", "completed"],
            ["lsp", "completed"],
          ])
          expect(result.tools[0].output).toContain("TS2322")
          expect(result.tools[2].output).toContain("computeTotal")
          expect(result.tools[3].output).toContain("All files were written.")
          expect(await fs.readFile(path.join(project.dir, "src/b.ts"), "utf8")).toContain("sumAll([3])")
        } finally {
          server.stop()
        }
        expect(await processesIn(project.dir)).toEqual([])
      },
      TIMEOUT,
    )

    // Tester U, U-F1 on the plugin route: express's layout (CommonJS, no jsconfig.json); the rename wrote lib/utils.js
    // alone, "All files were written", and lib/application.js then read an undefined export.
    test(
      "a rename in a JavaScript project without jsconfig.json rewrites the files that require the export",
      async () => {
        await using project = await Harness.project({ bin: target.bin, files: LAYOUTS.express.files, config: CONFIG })
        const { from, to, ...at } = LAYOUTS.express.rename
        const server = ModelServer.start([
          ModelServer.call("lsp", { operation: "rename", ...at, newName: to }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, `rename ${from}`, RUN)
          expect(result.exitCode).toBe(0)
          expect(result.tools.map((t) => [t.tool, t.status])).toEqual([["lsp", "completed"]])
          expect(result.tools[0].output).toStartWith(
            "Renamed `compileETag` to `compileEtagFn`: 4 edits in 3 files (typescript). All files were written.",
          )
          const read = (rel: string) => fs.readFile(path.join(project.dir, rel), "utf8")
          expect(await read("lib/application.js")).toContain("require('./utils').compileEtagFn;")
          expect(await read("lib/esm-user.mjs")).not.toContain(from)
        } finally {
          server.stop()
        }
        expect(await processesIn(project.dir)).toEqual([])
      },
      TIMEOUT,
    )

    test(
      "with upstream's experimental lsp tool turned on (OPENCODE_EXPERIMENTAL_LSP_TOOL=1), the model still gets one lsp tool: the plugin's",
      async () => {
        // OpenCode's default permissions here (no permission block): the lsp permission the tool asks is allowed.
        await using project = await Harness.project({ bin: target.bin, files: FILES, permission: {}, config: CONFIG })
        const server = ModelServer.start([
          ModelServer.call("lsp", { operation: "diagnostics", filePath: "src/bad.ts", severity: "error" }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "Check src/bad.ts", {
            ...RUN,
            env: { OPENCODE_EXPERIMENTAL_LSP_TOOL: "1" },
          })
          expect(result.exitCode).toBe(0)
          const tools = offered(server)
          expect(tools).toHaveLength(1)
          // Upstream's own tool has nine operations and no diagnostics; the plugin's, registered later, replaced it.
          expect(tools[0].parameters.properties.operation.enum).toEqual(
            expect.arrayContaining(["diagnostics", "prepareRename", "rename", "goToDefinition"]),
          )
          expect(result.tools.map((t) => [t.tool, t.status])).toEqual([["lsp", "completed"]])
          expect(result.tools[0].output).toContain("error 1:14 TS2322")
        } finally {
          server.stop()
        }
        expect(await processesIn(project.dir)).toEqual([])

        // Control, same binary and flag, without the plugin: an lsp tool is there under the same name.
        await using bare = await Harness.project({ bin: target.bin, files: FILES, plugin: false, config: CONFIG })
        const control = ModelServer.start([ModelServer.text("done")])
        try {
          const result = await Harness.run(bare, control, "hello", {
            ...RUN,
            env: { OPENCODE_EXPERIMENTAL_LSP_TOOL: "1" },
          })
          expect(result.exitCode).toBe(0)
          const upstream = offered(control)
          expect(upstream).toHaveLength(1)
          expect(upstream[0].parameters.properties.operation.enum).toContain("goToDefinition")
          // On the fork core's lsp is native and takes the flag-gated one's place (registry patch); on stock it is
          // upstream's own, without diagnostics.
          if (FORK) expect(upstream[0].parameters.properties.operation.enum).toContain("diagnostics")
          else expect(upstream[0].parameters.properties.operation.enum).not.toContain("diagnostics")
        } finally {
          control.stop()
        }
      },
      TIMEOUT,
    )
  })
}
