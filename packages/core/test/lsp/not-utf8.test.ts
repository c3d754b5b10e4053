import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import type { Host } from "../../host"
import { LspEdit } from "../../lsp/edit"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import { project, toolContext } from "./fixtures"

// Files that are not UTF-8 (Latin-1: older European code bases; Python files declaring `# -*- coding: latin-1 -*-`
// per PEP 263, valid Python). Read as "utf8" and written back they came out with U+FFFD for every accented letter
// while the rename reported "All files were written" (real-world tester Q, Q9). Real typescript-language-server and
// pyright.
const log = Logger.silent
function tool(dir: string) {
  const host: Host = { directory: dir, worktree: dir, log }
  const service = Lsp.create({ directory: dir, worktree: dir, log, config: true })
  return { service, lsp: LspTools.create(host, () => service).lsp }
}
const latin1 = (s: string) => Buffer.from(s, "latin1")

type Case = {
  lang: string
  files: Record<string, string>
  other: string
  target: string
  text: string
  at: { filePath: string; line: number; character: number }
}

describe("rename over a file that is not UTF-8", () => {
  test.each<Case>([
    {
      lang: "typescript",
      files: {
        "package.json": '{ "name": "p", "private": true }\n',
        "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ["src"] }),
        "src/use.ts": 'import { total } from "./l1"\nexport const t2 = total + 1\n',
      },
      other: "src/use.ts",
      target: "src/l1.ts",
      text: "// Auteur: José Müller\nexport const total = 1\n",
      at: { filePath: "src/use.ts", line: 2, character: 20 },
    },
    {
      lang: "pyright",
      files: { "pyrightconfig.json": "{}\n", "use.py": "from l1 import total\nprint(total())\n" },
      other: "use.py",
      target: "l1.py",
      text: '# -*- coding: latin-1 -*-\n# Auteur: José\ndef total():\n    return "café"\n',
      at: { filePath: "use.py", line: 2, character: 8 },
    },
  ])(
    "$lang: the whole rename is refused, naming the Latin-1 file; no file changes (not even the UTF-8 one)",
    async ({ files, other, target, text, at }) => {
      await using proj = await project(files)
      await fs.writeFile(path.join(proj.dir, target), latin1(text))
      const { lsp, service } = tool(proj.dir)
      let out = ""
      try {
        out = String(await lsp.execute({ operation: "rename", ...at, newName: "grand_total" }, toolContext(proj.dir)))
      } catch (e) {
        out = String(e)
      } finally {
        await service.stop()
      }
      expect(await fs.readFile(path.join(proj.dir, target))).toEqual(latin1(text))
      expect(await fs.readFile(path.join(proj.dir, other), "utf8")).toBe(files[other])
      expect(out).toContain(path.join(proj.dir, target))
      expect(out).toContain("not UTF-8 text")
      expect(out).toContain("no file was changed")
      expect(out).toContain("iconv")
      expect(out).not.toContain("All files were written")
    },
    180_000,
  )
})

describe("LspEdit.plan: files that are not UTF-8", () => {
  test("an edit changing two such files is refused naming both, before any other check; nothing is written", async () => {
    await using dir = await tmpdir({ "a.ts": latin1("// é\nconst a = 1\n"), "b.ts": latin1("// ü\nconst a = 2\n") })
    const uri = (f: string) => `file://${path.join(dir.path, f)}`
    const edit = (f: string) => [
      { range: { start: { line: 1, character: 6 }, end: { line: 1, character: 7 } }, newText: "b" },
    ]
    const error = await LspEdit.plan({ changes: { [uri("a.ts")]: edit("a.ts"), [uri("b.ts")]: edit("b.ts") } }).catch(
      (e) => e,
    )
    expect(LspEdit.Refused.is(error)).toBe(true)
    expect(error.data.file).toBe(`${path.join(dir.path, "a.ts")}, ${path.join(dir.path, "b.ts")}`)
    expect(error.message).toContain("they are not UTF-8 text")
  })

  test("a UTF-8 file with a byte-order mark is still edited, the mark kept (strict decoding keeps it)", async () => {
    await using dir = await tmpdir({ "a.ts": "\uFEFFconst a = 1 // é\n" })
    const file = path.join(dir.path, "a.ts")
    const plan = await LspEdit.plan({
      changes: {
        [`file://${file}`]: [
          { range: { start: { line: 0, character: 6 }, end: { line: 0, character: 7 } }, newText: "b" },
        ],
      },
    })
    await LspEdit.apply(plan)
    expect(await fs.readFile(file, "utf8")).toBe("\uFEFFconst b = 1 // é\n")
  })

  test("a file that is not UTF-8 and that the edit leaves unchanged does not refuse it", async () => {
    await using dir = await tmpdir({ "a.ts": "const a = 1\n", "b.ts": latin1("// é\n") })
    const plan = await LspEdit.plan({
      changes: {
        [`file://${path.join(dir.path, "a.ts")}`]: [
          { range: { start: { line: 0, character: 6 }, end: { line: 0, character: 7 } }, newText: "b" },
        ],
        [`file://${path.join(dir.path, "b.ts")}`]: [],
      },
    })
    expect(plan.files.map((f) => path.basename(f.file))).toEqual(["a.ts"])
  })
})
