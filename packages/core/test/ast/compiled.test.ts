import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { tmpdir } from "../fixture"
import { bunSpawnSync } from "../spawn-sync"

const ROOT = path.resolve(import.meta.dir, "../../../..")

// The fork compiles OpenCode with `bun build --compile`: its modules live inside the binary, where worker.ts beside
// pool.ts does not exist as a file. Built with the worker as an extra entry point (from the repository root), the
// search finds it under that name; built without, it searches on the calling thread with the same result.
describe("ast_grep_search in a binary built with bun build --compile", () => {
  const probe = [
    `import { AstSearch } from ${JSON.stringify(path.join(ROOT, "packages/core/ast/search.ts"))}`,
    "const r = await AstSearch.run({ directory: process.argv[2], lang: 'typescript', pattern: 'hit($A)' }, { workers: 2, batchSize: 1 })",
    "console.log(JSON.stringify({ total: r.totalMatches, workers: r.workers }))",
  ].join("\n")

  for (const withWorker of [true, false])
    test(`${withWorker ? "with" : "without"} worker.ts as an entry point`, async () => {
      await using build = await tmpdir({ "entry.ts": probe })
      await using work = await tmpdir({ "a.ts": "hit(1)\nhit(2)\n", "b.ts": "hit(3)\n", "c.ts": "x()\n" })
      const entries = [build.file("entry.ts"), ...(withWorker ? ["./packages/core/ast/worker.ts"] : [])]
      const compile = bunSpawnSync(
        [process.execPath, "build", "--compile", ...entries, "--outfile", build.file("probe")],
        { cwd: ROOT, stderr: "pipe", stdout: "pipe" },
      )
      expect(compile.exitCode).toBe(0)
      const run = bunSpawnSync([build.file("probe"), work.path], { cwd: build.path, stderr: "pipe", stdout: "pipe" })
      expect(run.stderr.toString()).toBe("")
      expect(JSON.parse(run.stdout.toString())).toEqual({ total: 3, workers: withWorker ? 2 : 0 })
    }, 120_000)
})
