import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import type { Host } from "../../host"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import { Logger } from "../../util/log"
import { processesIn, processesInGroups, project, toolContext, tsc } from "./fixtures"

// Files saved with a UTF-8 byte-order mark (Visual Studio, many Windows editors), with CRLF line ends and characters
// outside ASCII on the mark's line. Editors hide the mark; the tool sends the text after it, so columns are the ones
// an editor shows. Servers disagree about files they read themselves (TypeScript drops the mark, pyright counts it):
// such a file named in an answer is opened and the request asked again. Real typescript-language-server and pyright.
const BOM = "\uFEFF"
const SLOW = 180_000
const log = Logger.silent

const context = toolContext

function tool(dir: string) {
  const host: Host = { directory: dir, worktree: dir, log }
  const service = Lsp.create({ directory: dir, worktree: dir, log, config: true })
  return { service, lsp: LspTools.create(host, () => service).lsp }
}

/** 1-based column of `word` on the first line as an editor shows it (no mark; UTF-16 code units). */
const column = (text: string, word: string) => text.replace(BOM, "").indexOf(word) + 1

describe("files starting with a byte-order mark", () => {
  test(
    "typescript: a rename writes the right names into a marked file the server read itself; diagnostics and references give editor columns",
    async () => {
      const a = `${BOM}/* é😀 */ export const alpha = 1; export const beta = alpha + 1\r\n`
      const b = `${BOM}/* ü */ import { alpha, beta } from "./a"\r\nexport const c = alpha + beta\r\n`
      const bad = `${BOM}/* é😀 */ export const count: number = "three"\r\n`
      await using proj = await project({
        "package.json": '{ "name": "b" }\n',
        "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ["src"] }),
        "src/a.ts": a,
        "src/b.ts": b,
        "src/bad.ts": bad,
      })
      expect(tsc(proj.dir).out).toContain("TS2322")
      const { lsp, service } = tool(proj.dir)
      try {
        const diagnostics = await lsp.execute(
          { operation: "diagnostics", filePath: "src/bad.ts", severity: "error" },
          context(proj.dir),
        )
        expect(diagnostics).toContain(`error 1:${column(bad, "count")} TS2322`)
        const at = column(a, "alpha")
        const refs = await lsp.execute(
          { operation: "findReferences", filePath: "src/a.ts", line: 1, character: at },
          context(proj.dir),
        )
        expect(refs).toContain(`src/b.ts:1:${column(b, "alpha")}`)
        expect(refs).toContain(`src/a.ts:1:${at}`)
        const out = await lsp.execute(
          { operation: "rename", filePath: "src/a.ts", line: 1, character: at, newName: "gamma" },
          context(proj.dir),
        )
        expect(out).toContain("All files were written.")
      } finally {
        await service.stop()
      }
      // Before: `import {gammaa, beta }` — the server's positions (after the mark) applied counting the mark.
      expect(await fs.readFile(path.join(proj.dir, "src/b.ts"), "utf8")).toBe(b.replaceAll("alpha", "gamma"))
      expect(await fs.readFile(path.join(proj.dir, "src/a.ts"), "utf8")).toBe(a.replaceAll("alpha", "gamma"))
      await fs.rm(path.join(proj.dir, "src/bad.ts"))
      expect(tsc(proj.dir)).toMatchObject({ code: 0 })
      expect(await processesIn(proj.dir)).toEqual([])
    },
    SLOW,
  )

  test(
    "pyright: on a marked first line the column an editor shows finds the symbol; references into an unopened marked file and a rename give editor columns",
    async () => {
      const m = `${BOM}def alpha():  # é😀\r\n    return 1\r\n`
      const n = `${BOM}from pkg.m import alpha  # ü\r\nx = alpha()\r\n`
      await using proj = await project({
        "pyproject.toml": '[project]\nname = "x"\n',
        "pkg/__init__.py": "",
        "pkg/m.py": m,
        "pkg/n.py": n,
      })
      const { lsp, service } = tool(proj.dir)
      const groups: number[] = []
      try {
        const at = column(m, "alpha")
        // Before: "Cannot rename … the server says this element cannot be renamed" (pyright counted the mark).
        const check = await lsp.execute(
          { operation: "prepareRename", filePath: "pkg/m.py", line: 1, character: at },
          context(proj.dir),
        )
        expect(check).toStartWith(`Can rename at pkg/m.py:1:${at}: \`alpha\``)
        groups.push(...(await service.running()).map((c) => c.pid!))
        // n.py is read by pyright from disk (mark counted there): the answer is asked again with it open.
        const refs = await lsp.execute(
          { operation: "findReferences", filePath: "pkg/m.py", line: 1, character: at },
          context(proj.dir),
        )
        expect(refs).toContain(`pkg/n.py:1:${column(n, "alpha")}`)
        const out = await lsp.execute(
          { operation: "rename", filePath: "pkg/m.py", line: 1, character: at, newName: "gamma" },
          context(proj.dir),
        )
        expect(out).toContain("All files were written.")
      } finally {
        await service.stop()
      }
      expect(await fs.readFile(path.join(proj.dir, "pkg/m.py"), "utf8")).toBe(m.replaceAll("alpha", "gamma"))
      expect(await fs.readFile(path.join(proj.dir, "pkg/n.py"), "utf8")).toBe(n.replaceAll("alpha", "gamma"))
      expect(await processesIn(proj.dir)).toEqual([])
      expect(await processesInGroups(groups)).toEqual([])
    },
    SLOW,
  )
})
