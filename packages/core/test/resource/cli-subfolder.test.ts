import { describe, expect, test } from "bun:test"
import { existsSync } from "fs"
import path from "path"
import { run } from "../../resource/cli"
import { memoryIO } from "../../util/cli"
import { md, tmpdir } from "../fixture"
import { policy } from "./guarded"

// The resources command run from a package folder of a repository reads what OpenCode and the MCP server started
// there read: every .opencode from that folder up to the git root (real-world tester R, R5).
const REPO = {
  ".git/HEAD": "ref: refs/heads/main\n",
  ".opencode/knowledge-base/routers.md": md({ title: "Routers" }) + "\n[missing](./nope.md)\n",
  "packages/server/.opencode/knowledge-base/adapters.md": md({ title: "Adapters", tags: ["router"] }),
  "packages/server/src/index.ts": "export {}\n",
}

describe("opencode-builtins resources from a package folder of a repository", () => {
  test("at the repository root, lint reports the dangling link with its project path", async () => {
    await using dir = await tmpdir(REPO)
    const io = memoryIO(dir.path)
    expect(await run(["lint"], io)).toBe(1)
    expect(io.stdout).toContain("dangling-reference  .opencode/knowledge-base/routers.md:")
  })

  test("lint in packages/server reports the repository's dangling link, its path relative to that folder", async () => {
    await using dir = await tmpdir(REPO)
    const sub = path.join(dir.path, "packages/server")
    const io = memoryIO(sub)
    expect(await run(["lint"], io)).toBe(1)
    expect(io.stdout).toContain("2 resource(s)")
    expect(io.stdout).toContain("dangling-reference  ../../.opencode/knowledge-base/routers.md:")
    const json = memoryIO(sub)
    expect(await run(["lint", "--json"], json)).toBe(1)
    const report = JSON.parse(json.stdout) as { problems: { path: string }[] }
    for (const p of report.problems) expect(existsSync(path.resolve(sub, p.path))).toBe(true)
  })

  test("query in packages/server finds the repository's pages and the package's, paths relative to that folder", async () => {
    await using dir = await tmpdir(REPO)
    const sub = path.join(dir.path, "packages/server")
    const io = memoryIO(sub)
    expect(await run(["query", "--json"], io)).toBe(0)
    const result = JSON.parse(io.stdout) as { results: { id: string; path: string }[] }
    expect(result.results.map((r) => r.id).sort()).toEqual(["adapters", "routers"])
    for (const r of result.results) expect(existsSync(path.resolve(sub, r.path))).toBe(true)
    const text = memoryIO(sub)
    await run(["query", "routers"], text)
    expect(text.stdout).not.toContain("No resources in this project")
  })

  test("an explicit folder is read as if the command ran there (lint [dir], query --dir)", async () => {
    await using dir = await tmpdir(REPO)
    const lint = memoryIO(dir.path)
    expect(await run(["lint", "packages/server", "--json"], lint)).toBe(1)
    expect(JSON.parse(lint.stdout).resources).toBe(2)
    const query = memoryIO(dir.path)
    expect(await run(["query", "--dir", "packages/server", "--json"], query)).toBe(0)
    expect(JSON.parse(query.stdout).total).toBe(2)
  })

  test("the repository's security policy applies in the package folder: its protected pages are not shown", async () => {
    await using dir = await tmpdir({
      ...REPO,
      ".opencode/knowledge-base/merger.md": md({ title: "Merger", description: "Project Falcon terms" }),
      ".opencode-security.json": policy([
        { pattern: ".opencode/knowledge-base/merger.md", type: "file", deniedOperations: ["read"] },
      ]),
    })
    const sub = path.join(dir.path, "packages/server")
    const query = memoryIO(sub)
    expect(await run(["query", "--json"], query)).toBe(0)
    expect(query.stdout).not.toContain("Falcon")
    expect(query.stderr).toContain("security policy applied")
    const lint = memoryIO(sub)
    await run(["lint", "--json"], lint)
    expect(lint.stdout).not.toContain("merger")
  })

  test("EF-7: lint in a subfolder names the file and its missing target from the same folder", async () => {
    await using dir = await tmpdir({
      ".git/HEAD": "ref: refs/heads/main\n",
      ".opencode/knowledge-base/guide.md": "# Guide\n\nSee [the API](api/missing.md).\n",
      "packages/app/.keep": "",
    })
    const sub = path.join(dir.path, "packages/app")
    const io = memoryIO(sub)
    expect(await run(["lint"], io)).toBe(1)
    expect(io.stdout).toContain(
      "dangling-reference  ../../.opencode/knowledge-base/guide.md: 'guide' references " +
        "'../../.opencode/knowledge-base/api/missing.md', which matches no resource",
    )
    const json = memoryIO(sub)
    expect(await run(["lint", "--json"], json)).toBe(1)
    const [problem] = (JSON.parse(json.stdout) as { problems: { files?: string[] }[] }).problems
    expect(problem.files).toEqual(["../../.opencode/knowledge-base/api/missing.md"])
    // At the root both are project paths, as before.
    const root = memoryIO(dir.path)
    expect(await run(["lint"], root)).toBe(1)
    expect(root.stdout).toContain("references '.opencode/knowledge-base/api/missing.md', which matches no resource")
  }, 60_000)

  test("EF-7: query counts the index's errors and warnings as lint does, and gives each result's file, not resource-load", async () => {
    await using dir = await tmpdir(REPO)
    const io = memoryIO(path.join(dir.path, "packages/server"))
    expect(await run(["query", "router"], io)).toBe(0)
    expect(io.stdout).toContain("1 error(s), 0 warning(s) in the index: Run `npx opencode-builtins resources lint`")
    expect(io.stdout).not.toContain("index warning")
    expect(io.stdout).not.toContain("resource-load")
    expect(io.stdout).toContain("(../../.opencode/knowledge-base/routers.md)")
    expect(io.stdout).toContain("Each result ends with its file (in parentheses); read it there.")
  }, 60_000)
})
