import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

// A PEP 263 Latin-1 Python file and the plugin's ast_grep_replace on stock OpenCode: the live replace wrote it back as
// UTF-8 with U+FFFD outside the match (real-world tester Q, Q9). Now refused, naming the file; its bytes are kept.
const TEXT = '# -*- coding: latin-1 -*-\n# Auteur: José\ndef f():\n    print("café")\n'
for (const target of targets()) {
  describe(`files that are not UTF-8 on stock opencode ${target.label}`, () => {
    test("ast_grep_replace refuses a live replace matching in a Latin-1 file, naming it; the file keeps its bytes", async () => {
      await using project = await Harness.project({ bin: target.bin, files: {} })
      await fs.writeFile(path.join(project.dir, "l1.py"), Buffer.from(TEXT, "latin1"))
      const server = ModelServer.start([
        ModelServer.calls({
          name: "ast_grep_replace",
          args: { pattern: "print($A)", rewrite: "log($A)", lang: "python", dryRun: false },
        }),
        ModelServer.text("done"),
      ])
      let result: Awaited<ReturnType<typeof Harness.run>>
      try {
        result = await Harness.run(project, server, "rename print to log", { timeoutMs: 120_000 })
      } finally {
        server.stop()
      }
      expect(result.tools.map((t) => `${t.tool}:${t.status}`)).toEqual(["ast_grep_replace:error"])
      const error = result.tools[0].error ?? result.tools[0].output
      expect(error).toContain("l1.py")
      expect(error).toContain("not UTF-8 text")
      expect(await fs.readFile(path.join(project.dir, "l1.py"))).toEqual(Buffer.from(TEXT, "latin1"))
    }, 200_000)
  })
}
