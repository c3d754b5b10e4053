import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const FILES = {
  ".gitignore": "dist/\n",
  "src/a.ts": "export function f(x: number) {\n  console.log('f', x)\n  return x\n}\n",
  "src/b.ts": "console.log('b')\n",
  "dist/a.js": "console.log('built')\n",
}

const SLOP = [
  "// Initialize the total",
  "let total = 0",
  "// Loop through the items",
  "for (const item of [1, 2]) {",
  "  // Add the item to the total",
  "  total += item",
  "}",
  "// Log the total",
  "logger.info('b', total)",
].join("\n")

const NOTE = "Note: The generated code contains excessive comments. Consider removing obvious comments."
const TIMEOUT = { timeout: 120_000 }

for (const target of targets()) {
  describe(`AST tools and comment checker on stock opencode ${target.label}`, () => {
    test(
      "Go: `errors.New($A)` and `os.Getenv($K)`, one-argument calls of a package function, find the calls (red team X12)",
      async () => {
        // Before: "No matches (go, pattern `errors.New($A)`, 1 file searched)." and nothing else (the pattern alone
        // reads as a type conversion); see docs/ast.md, "Patterns with two readings".
        const go =
          'package x\n\nimport (\n\t"errors"\n\t"os"\n)\n\nfunc f() error {\n\tif os.Getenv("HOME") == "" {\n\t\treturn errors.New("no home")\n\t}\n\treturn nil\n}\n'
        await using project = await Harness.project({ bin: target.bin, files: { "x.go": go } })
        const server = ModelServer.start([
          ModelServer.call("ast_grep_search", { pattern: "errors.New($A)", lang: "go" }),
          ModelServer.call("ast_grep_search", { pattern: "os.Getenv($K)", lang: "go" }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "Find every errors.New call and every os.Getenv call")
          expect(result.exitCode).toBe(0)
          const [errors, getenv] = result.tools
          expect(errors.output).toStartWith("Found 1 match in 1 file (go, pattern `errors.New($A)`, 1 file searched).")
          expect(errors.output).toContain('x.go\n10:10: \t\treturn errors.New("no home")')
          expect(getenv.output).toStartWith("Found 1 match in 1 file (go, pattern `os.Getenv($K)`, 1 file searched).")
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )

    test(
      "search, dry-run replace, live replace, then an edit adding narrating comments gets the advisory note",
      async () => {
        await using project = await Harness.project({ bin: target.bin, files: FILES })
        const b = path.join(project.dir, "src/b.ts")
        const pattern = "console.log($$$ARGS)"
        const server = ModelServer.start([
          ModelServer.call("ast_grep_search", { pattern, lang: "typescript", context: 1 }),
          ModelServer.call("ast_grep_replace", { pattern, rewrite: "logger.info($$$ARGS)", lang: "typescript" }),
          ModelServer.call("ast_grep_replace", {
            pattern,
            rewrite: "logger.info($$$ARGS)",
            lang: "typescript",
            dryRun: false,
          }),
          ModelServer.call("read", { filePath: b }),
          ModelServer.call("edit", { filePath: b, oldString: "logger.info('b')", newString: SLOP }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "Replace console.log with logger.info")
          expect(result.exitCode).toBe(0)
          expect(result.tools.map((t) => [t.tool, t.status])).toEqual([
            ["ast_grep_search", "completed"],
            ["ast_grep_replace", "completed"],
            ["ast_grep_replace", "completed"],
            ["read", "completed"],
            ["edit", "completed"],
          ])
          const [search, dry, live, , edit] = result.tools
          expect(search.output).toStartWith(
            "Found 2 matches in 2 files (typescript, pattern `console.log($$$ARGS)`, 2 files searched).",
          )
          expect(search.output).toContain(
            "src/a.ts\n1- export function f(x: number) {\n2:3:   console.log('f', x)\n3-   return x",
          )
          expect(search.output).not.toContain("dist/") // .gitignore respected
          expect(dry.output).toContain("No file was written; call again with dryRun: false to apply.")
          expect(dry.output).toContain("-  console.log('f', x)\n+  logger.info('f', x)")
          expect(live.output).toStartWith("Replaced 2 matches in 2 files")
          expect(edit.output).toContain(NOTE)
          expect(edit.output).toContain("src/b.ts: ")

          // Files on disk: the live replace and the edit; the ignored file untouched.
          expect(await fs.readFile(path.join(project.dir, "src/a.ts"), "utf8")).toBe(
            "export function f(x: number) {\n  logger.info('f', x)\n  return x\n}\n",
          )
          expect(await fs.readFile(b, "utf8")).toBe(SLOP + "\n")
          expect(await fs.readFile(path.join(project.dir, "dist/a.js"), "utf8")).toBe("console.log('built')\n")

          // What the model was sent: the tools offered, each result in the next request.
          const turns = server.turns()
          expect(turns).toHaveLength(6)
          expect(server.overruns).toBe(0)
          const offered = turns[0].body.tools.map((t: any) => t.function?.name)
          expect(offered).toEqual(expect.arrayContaining(["ast_grep_search", "ast_grep_replace"]))
          const searchTool = turns[0].body.tools.find((t: any) => t.function?.name === "ast_grep_search")
          expect(searchTool.function.parameters.properties.lang.enum).toHaveLength(25)
          expect(turns[1].raw).toContain("Found 2 matches in 2 files")
          expect(turns[2].raw).toContain("Dry run: would replace 2 matches in 2 files")
          expect(turns[3].raw).toContain("Replaced 2 matches in 2 files")
          expect(turns[5].raw).toContain("Note: The generated code contains excessive comments.")
          expect(turns[4].raw).not.toContain("excessive comments")
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )
  })
}
