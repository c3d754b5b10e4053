import { expect, test } from "bun:test"
import path from "path"

// The whole repository (core, plugin, scripts, tests) type-checks under the strict tsconfig.
test(
  "tsc --noEmit passes on the strict project configuration",
  async () => {
    const root = path.resolve(import.meta.dir, "..")
    const proc = Bun.spawn(["node", path.join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", root], {
      cwd: root,
      stdout: "pipe",
      stderr: "pipe",
    })
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    expect(out + err).toBe("")
    expect(code).toBe(0)
  },
  { timeout: 120_000 },
)
