import { describe, expect, test } from "bun:test"
import path from "path"
import OpencodeBuiltins from "../index"
import { pluginInput } from "./input"
import { tmpdir } from "../../core/test/fixture"
import { bunSpawnSync } from "../../core/test/spawn-sync"

// The options file in real layouts (tester Q): a monorepo package as OpenCode's directory; an editor's BOM.
async function toolsOf(directory: string, worktree: string) {
  const { input, logs } = pluginInput(directory)
  input.worktree = worktree
  const hooks = (await OpencodeBuiltins(input)) as { tool?: Record<string, unknown> }
  return { tools: Object.keys(hooks.tool ?? {}), logs }
}

describe("plugin: the options file", () => {
  test("Q6 OpenCode started in a package of a monorepo: the repository's .opencode/opencode-builtins.json still applies", async () => {
    await using dir = await tmpdir({
      ".opencode/opencode-builtins.json": JSON.stringify({ lsp: { enabled: false }, lookAt: { enabled: false } }),
      "packages/server/package.json": "{}\n",
      "packages/server/src/index.ts": "export {}\n",
    })
    bunSpawnSync(["git", "init", "-q"], { cwd: dir.path })
    // control: started at the root, lsp is off
    const atRoot = await toolsOf(dir.path, dir.path)
    expect(atRoot.tools).not.toContain("lsp")
    // started in packages/server (worktree = the repository, as OpenCode reports it): the same file, the same options
    const inPackage = await toolsOf(path.join(dir.path, "packages/server"), dir.path)
    expect(inPackage.tools).not.toContain("lsp")
  })

  test("Q7 an options file saved with a UTF-8 byte-order mark is read, not replaced by the defaults", async () => {
    await using dir = await tmpdir({
      ".opencode/opencode-builtins.json": "\uFEFF" + JSON.stringify({ lsp: { enabled: false } }, null, 2) + "\n",
    })
    const { tools, logs } = await toolsOf(dir.path, dir.path)
    expect(logs.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([])
    expect(tools).not.toContain("lsp")
  })
})
