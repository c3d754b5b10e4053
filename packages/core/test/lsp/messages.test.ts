import { describe, expect, test } from "bun:test"
import path from "path"
import type { Host } from "../../host"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import { Logger } from "../../util/log"
import { processesIn, project, toolContext } from "./fixtures"

// What the model reads when its arguments or the project are not what an operation expects.
const log = Logger.silent

const context = toolContext

function tool(dir: string, config: unknown = true) {
  const host: Host = { directory: dir, worktree: dir, log }
  const service = Lsp.create({ directory: dir, worktree: dir, log, config })
  return { service, lsp: LspTools.create(host, () => service).lsp }
}

describe("lsp tool messages", () => {
  test("a folder where a file is needed: named as a folder (not 'File not found'), before any server starts; diagnostics takes it", async () => {
    await using proj = await project({ "package.json": '{ "name": "p" }\n', "src/util.ts": "export const a = 1\n" })
    const { lsp, service } = tool(proj.dir)
    try {
      for (const args of [
        { operation: "rename", filePath: "src", line: 1, character: 14, newName: "b" },
        { operation: "hover", filePath: "src", line: 1, character: 1 },
        { operation: "documentSymbol", filePath: "src/" },
        { operation: "workspaceSymbol", filePath: "src", query: "a" },
      ]) {
        const error = await lsp.execute(args as any, context(proj.dir)).catch((e: any) => e)
        // Before: LspFileNotFound "File not found: src".
        expect(Lsp.NotAFile.is(error)).toBe(true)
        expect(error.message).toStartWith(`src is a folder; ${args.operation} needs a file in it`)
        expect(error.message).toContain("Only diagnostics takes a folder")
      }
      expect(await service.running()).toEqual([])
      // The service itself (as the fork may call it) says the same.
      const direct = await service.hover({ file: "src", line: 0, character: 0 }).catch((e: any) => e)
      expect(direct.message).toStartWith("src is a folder; this operation needs a file in it")
      const out = await lsp.execute({ operation: "diagnostics", filePath: "src" }, context(proj.dir))
      expect(out).toStartWith("status: ok — no diagnostics in src (1 file checked; typescript")
    } finally {
      await service.stop()
    }
    expect(await processesIn(proj.dir)).toEqual([])
  }, 120_000)

  test("project diagnostics: a missing server's install hint is given once with the count of files it skipped, at most 20 named", async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 25; i++) files[`conf/w${String(i).padStart(2, "0")}.mine`] = "x\n"
    files["notes/one.other"] = "y\n"
    await using proj = await project(files)
    const { lsp, service } = tool(proj.dir, {
      mine: { command: ["no-such-mine-language-server"], extensions: [".mine"] },
      other: { command: ["no-such-other-language-server"], extensions: [".other"] },
    })
    try {
      const out: string = await lsp.execute({ operation: "diagnostics" }, context(proj.dir))
      // Before: 25 lines "skipped conf/wNN.mine: The mine language server (for conf/wNN.mine) is not installed: …".
      expect(out.split('"no-such-mine-language-server"').length - 1).toBe(1)
      expect(out).toContain(
        'skipped 25 files: The mine language server (for .mine files) is not installed: the command "no-such-mine-language-server"',
      )
      const named = Array.from({ length: 20 }, (_, i) => `conf/w${String(i).padStart(2, "0")}.mine`)
      expect(out).toContain(`  ${named.join(", ")} and 5 more`)
      // The 20 names are spent: the other server's one file is counted, its hint still given.
      expect(out).toContain("skipped 1 file: The other language server (for .other files) is not installed")
      expect(out).not.toContain("one.other")
    } finally {
      await service.stop()
    }
  })
})

describe("project diagnostics over the file cap (red team CE-8)", () => {
  test("the first line and the end say how many files were not checked, in which folders, and how to check them", async () => {
    // A fake server (publishes no diagnostics) over 700 files in 7 folders: 200 are over the 500-file cap.
    const files: Record<string, string> = {}
    for (let i = 0; i < 700; i++) files[`src/m${Math.floor(i / 100)}/f${String(i).padStart(3, "0")}.fake`] = "x\n"
    await using proj = await project(files)
    const server = path.join(import.meta.dir, "fixtures/dies-on-open.mjs")
    const { lsp, service } = tool(proj.dir, {
      fake: { command: ["node", server, "NEVER-IN-THESE-FILES"], extensions: [".fake"] },
    })
    try {
      const out = String(await lsp.execute({ operation: "diagnostics" } as any, context(proj.dir)))
      const lines = out.split("\n")
      // Before: "status: ok — … (500 checked; …)" and "[TRUNCATED: only the first 500 files were checked]", no more.
      expect(lines[0]).toStartWith("status: ok — no diagnostics in the project (500 files checked;")
      expect(lines[0]).toEndWith("— but 200 more files were NOT checked (over the 500-file cap; see the end)")
      const at = lines.findIndex((l) => l.startsWith("[TRUNCATED"))
      expect(lines[at]).toBe(
        "[TRUNCATED: only the first 500 files were checked; 200 more files were not. Check them folder by folder " +
          "(diagnostics with filePath set to a folder; each call checks up to 500 files). Not checked, by folder:]",
      )
      expect(lines.slice(at + 1, at + 3)).toEqual(["  src/m5 (100 files)", "  src/m6 (100 files)"])
      // Doing what it says checks them.
      const rest = String(await lsp.execute({ operation: "diagnostics", filePath: "src/m6" } as any, context(proj.dir)))
      expect(rest.split("\n")[0]).toStartWith("status: ok — no diagnostics in src/m6 (100 files checked;")
    } finally {
      await service.stop()
    }
  }, 120_000)
})
