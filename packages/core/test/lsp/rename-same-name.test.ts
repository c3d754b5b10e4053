import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import type { Host } from "../../host"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import { Logger } from "../../util/log"
import { project, THREE_FILES, toolContext } from "./fixtures"

// Real-world tester AC, AC-3: a rename repeated after it succeeded (a model retrying after a slow answer, or a newName
// equal to the current name) gave "0 edits in 0 files … may be incomplete" and a WARNING that every file using the
// symbol "still mentions" it and "now breaks (rename it by hand)". Nothing is broken: the name is already the new one.
// Real typescript-language-server and pyright.
describe("rename to the name the symbol already has (AC-3)", () => {
  const cases = [
    {
      server: "typescript",
      files: THREE_FILES,
      args: { operation: "rename", filePath: "src/util.ts", line: 1, character: 17, newName: "sumAll" },
      user: "src/b.ts",
    },
    {
      server: "pyright",
      files: {
        "pyrightconfig.json": "{}\n",
        "cart.py": "def total(a: int) -> int:\n    return a\n",
        "use.py": "from cart import total\n\nprint(total(1))\n",
      },
      args: { operation: "rename", filePath: "cart.py", line: 1, character: 5, newName: "grand_total" },
      user: "use.py",
    },
  ]
  for (const c of cases)
    test(`${c.server}: "Already named", no WARNING that files using the symbol now break, nothing written`, async () => {
      await using proj = await project(c.files)
      const log = Logger.silent
      const host: Host = { directory: proj.dir, worktree: proj.dir, log }
      const service = Lsp.create({ directory: proj.dir, worktree: proj.dir, log, config: true })
      const lsp = LspTools.create(host, () => service).lsp
      try {
        const first = String(await lsp.execute(c.args, toolContext(proj.dir)))
        expect(first).toContain("All files were written.")
        const before = await fs.readFile(path.join(proj.dir, c.user), "utf8")
        const asks: any[] = []
        const again = String(await lsp.execute(c.args, toolContext(proj.dir, asks)))
        expect(again).toBe(`Already named \`${c.args.newName}\` (${c.server}): nothing to change; no file was written.`)
        expect(await fs.readFile(path.join(proj.dir, c.user), "utf8")).toBe(before)
        // no edit permission asked: nothing is written
        expect(asks.filter((a) => a.permission === "edit")).toEqual([])
      } finally {
        await service.stop()
      }
    }, 120_000)
})
