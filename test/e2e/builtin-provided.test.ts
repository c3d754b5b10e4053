import { expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { pathToFileURL } from "url"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"

/**
 * EF-5: on stock OpenCode (no `hasBuiltIn`), a plugin using docs/builtin.md's helper learns what opencode-builtins
 * provides from its published answer. OpenCode starts plugins one after the other in the config's order, and the
 * later plugin's tool of a name wins: placed after opencode-builtins, the other plugin sees `ast-grep` at its start and
 * registers nothing; placed before, it sees nothing at its start (its tool is then replaced by opencode-builtins'),
 * and its lazy check at the call sees `ast-grep`. Either way the model gets opencode-builtins' one `ast_grep_search`.
 */
const OTHER = pathToFileURL(path.join(import.meta.dir, "fixtures-provided/other-plugin.js")).href

for (const order of ["opencode-builtins first", "the other plugin first"] as const) {
  test(`EF-5: a plugin using the docs' helper beside opencode-builtins (${order})`, async () => {
    const server = ModelServer.start([
      ModelServer.call("ast_grep_search", { pattern: "print($X)", lang: "python" }),
      ModelServer.text("done"),
    ])
    const first = order === "opencode-builtins first"
    await using project = await Harness.project({
      plugin: first,
      plugins: first ? [OTHER] : [OTHER, Harness.PLUGIN_URL],
      files: { "a.py": "print(1)\n" },
    })
    try {
      const result = await Harness.run(project, server, "search")
      expect(result.exitCode).toBe(0)
      const offered = server.turns()[0].body.tools.filter((t: any) => t.function.name === "ast_grep_search")
      expect(offered).toHaveLength(1)
      expect(offered[0].function.description).not.toContain("OTHER")
      const call = result.tools.find((t) => t.tool === "ast_grep_search")
      expect(call?.output).toContain("Found 1 match")
      const log = await fs.readFile(path.join(project.dir, ".other.log"), "utf8")
      expect(log).toBe(`start-ast-grep=${first}\ncall-ast-grep=true\n`)
    } finally {
      server.stop()
    }
  }, 180_000)
}
