import { describe, expect, test } from "bun:test"
import type { Host } from "../../host"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import { Logger } from "../../util/log"
import { project, toolContext } from "./fixtures"

// The first pyright rename of a session said "Renamed `symbol` to …" (real-world tester Q, Q10): the tool asked its
// own prepareRename before the rename had loaded the file's project, a cold pyright refused it, and the fallback word
// was printed. The name now comes from the rename's own check. Real pyright.
describe("the rename summary names the old name", () => {
  test("pyright, first call of a session: `Renamed \\`total\\``, not `Renamed \\`symbol\\``", async () => {
    await using proj = await project({
      "pyrightconfig.json": "{}\n",
      "l1.py": "def total():\n    return 1\n",
      "use.py": "from l1 import total\nprint(total())\n",
    })
    const log = Logger.silent
    const host: Host = { directory: proj.dir, worktree: proj.dir, log }
    const service = Lsp.create({ directory: proj.dir, worktree: proj.dir, log, config: true })
    const lsp = LspTools.create(host, () => service).lsp
    try {
      const out = String(
        await lsp.execute(
          { operation: "rename", filePath: "use.py", line: 2, character: 8, newName: "grand_total" },
          toolContext(proj.dir),
        ),
      )
      expect(out).toContain("All files were written.")
      expect(out.split("\n")[0]).toStartWith("Renamed `total` to `grand_total`")
    } finally {
      await service.stop()
    }
  }, 120_000)
})
