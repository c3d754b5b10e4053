import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import type { Host } from "../../host"
import { LspServers } from "../../lsp/servers"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import { Logger } from "../../util/log"
import { processesIn, project, toolContext, tsc } from "./fixtures"

// Where a server is rooted. TypeScript looks for a file's tsconfig.json from its folder up to the server's root only,
// so a root at a workspace package (every one has a package.json) hid the repository's tsconfig.json (changesets
// layout: one root tsconfig, a package.json per package): configured errors came back as hints, renames stopped at
// the package. Real typescript-language-server below.
const log = Logger.silent

const context = toolContext

/** A workspace monorepo: root tsconfig (noUnusedParameters) over packages a and b; c has its own tsconfig without it. */
const WORKSPACE = {
  "package.json": '{ "name": "root", "private": true, "workspaces": ["packages/*"] }\n',
  "package-lock.json": "{}\n",
  "tsconfig.json": JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, noUnusedParameters: true },
    include: ["packages/a", "packages/b"],
  }),
  "packages/a/package.json": '{ "name": "a" }\n',
  "packages/b/package.json": '{ "name": "b" }\n',
  "packages/c/package.json": '{ "name": "c" }\n',
  "packages/c/tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ["src"] }),
  "packages/a/src/a.ts": "export const alpha = 1\n",
  "packages/a/src/unused.ts": "export function g(y: number) {\n  return 1\n}\n",
  "packages/b/src/b.ts": 'import { alpha } from "../../a/src/a"\nexport const b = alpha\n',
  "packages/c/src/unused.ts": "export function h(z: number) {\n  return 2\n}\n",
}

describe("server roots", () => {
  test("typescript and yaml: the lock file's folder, not a package's package.json; no lock file: the project", async () => {
    await using proj = await project({
      ...WORKSPACE,
      "tools/site/package.json": '{ "name": "site" }\n',
      "tools/site/yarn.lock": "\n",
      "tools/site/page.ts": "export {}\n",
    })
    const resolved = LspServers.resolve({ directory: proj.dir, worktree: proj.dir, config: true })
    const rootOf = (rel: string, id: string) =>
      resolved.forFile(path.join(proj.dir, rel)).find((m) => m.spec.id === id)?.root
    expect(rootOf("packages/a/src/a.ts", "typescript")).toBe(proj.dir)
    expect(rootOf("packages/c/src/unused.ts", "typescript")).toBe(proj.dir)
    expect(rootOf("packages/a/x.yaml", "yaml-ls")).toBe(proj.dir)
    // A folder with its own lock file is a project of its own.
    expect(rootOf("tools/site/page.ts", "typescript")).toBe(path.join(proj.dir, "tools/site"))
    await fs.rm(path.join(proj.dir, "package-lock.json"))
    expect(rootOf("packages/a/src/a.ts", "typescript")).toBe(proj.dir)
  })

  test("a workspace package under a root tsconfig: its options apply (TS6133 an error, as tsc says) and a rename reaches the other package; a package with its own tsconfig keeps it", async () => {
    await using proj = await project(WORKSPACE)
    expect(tsc(proj.dir).out).toContain("packages/a/src/unused.ts(1,19): error TS6133")
    const host: Host = { directory: proj.dir, worktree: proj.dir, log }
    const service = Lsp.create({ directory: proj.dir, worktree: proj.dir, log, config: true })
    const { lsp } = LspTools.create(host, () => service)
    const run = (args: Record<string, unknown>) => lsp.execute(args as any, context(proj.dir))
    try {
      // Before: "status: ok — no diagnostics" (an inferred project: the unused parameter only a hint).
      expect(
        await run({ operation: "diagnostics", filePath: "packages/a/src/unused.ts", severity: "error" }),
      ).toContain("error 1:19 TS6133")
      // packages/c/tsconfig.json has no noUnusedParameters: no error there, the hint editors show.
      const c = await run({ operation: "diagnostics", filePath: "packages/c/src/unused.ts" })
      expect(c).not.toContain("error")
      expect(c).toContain("hint 1:19 TS6133")
      // Before: "1 edit in 1 file"; packages/b kept importing alpha (TS2305).
      const out = await run({
        operation: "rename",
        filePath: "packages/a/src/a.ts",
        line: 1,
        character: 14,
        newName: "gamma",
      })
      expect(out).toContain("3 edits in 2 files")
      expect((await service.running()).map((c) => c.root)).toEqual([proj.dir])
    } finally {
      await service.stop()
    }
    expect(await fs.readFile(path.join(proj.dir, "packages/b/src/b.ts"), "utf8")).toBe(
      'import { gamma } from "../../a/src/a"\nexport const b = gamma\n',
    )
    await fs.rm(path.join(proj.dir, "packages/a/src/unused.ts"))
    expect(tsc(proj.dir)).toMatchObject({ code: 0 })
    expect(await processesIn(proj.dir)).toEqual([])
  }, 180_000)
})
