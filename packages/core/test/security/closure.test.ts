import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityClosure } from "../../security/closure"
import { tmpdir } from "../fixture"
import { bunSpawnSync } from "../spawn-sync"

const pkg = (name: string, main = "index.js") => ({
  [`node_modules/${name}/package.json`]: JSON.stringify({ name, main }),
  [`node_modules/${name}/${main}`]: "module.exports = 1\n",
})

describe("SecurityClosure.of", () => {
  test("relative imports are followed transitively; type-only imports are not code", async () => {
    await using dir = await tmpdir({
      ".opencode/tool/db.ts": 'import { query } from "../../src/db"\nexport default { query }\n',
      "src/db.ts": 'import type { Row } from "./types"\nimport { pool } from "./pool.js"\nexport const query = pool\n',
      "src/pool.js": 'const cfg = require("../config/pool.json")\nmodule.exports = { pool: cfg }\n',
      "config/pool.json": "{}\n",
      "src/types.ts": "export type Row = {}\n",
      "src/unrelated.ts": "export const u = 1\n",
    })
    const { paths, unread, dynamic, truncated } = SecurityClosure.of([dir.file(".opencode/tool/db.ts")])
    for (const f of ["src/db.ts", "src/pool.js", "config/pool.json"]) expect(paths).toContain(dir.file(f))
    expect(paths).not.toContain(dir.file("src/types.ts"))
    expect(paths).not.toContain(dir.file("src/unrelated.ts"))
    expect([unread, dynamic, truncated]).toEqual([[], [], false])
  })

  test("every name Bun would try before the file it resolves is named too (a db.tsx created would win)", async () => {
    await using dir = await tmpdir({
      "tool.ts": 'import "./src/db"\nimport "./lib"\n',
      "src/db.ts": "export {}\n",
      "lib/index.ts": "export {}\n",
    })
    const { paths } = SecurityClosure.of([dir.file("tool.ts")])
    // Checked with Bun itself: ./src/db picks db.tsx over db.ts, and ./lib picks lib.mjs over lib/index.ts.
    for (const f of ["src/db.tsx", "src/db.ts", "src/db.js", "src/db/index.ts", "lib.mjs", "lib/index.ts"])
      expect(paths).toContain(dir.file(f))
    // In a fresh process (this one's resolver remembers the folders it has read).
    fs.writeFileSync(dir.file("src/db.tsx"), "export const hijacked = 1\n")
    const fresh = bunSpawnSync([
      process.execPath,
      "-e",
      `console.log(Bun.resolveSync("./src/db", ${JSON.stringify(dir.path)}))`,
    ])
    expect(fresh.stdout.toString().trim()).toBe(dir.file("src/db.tsx"))
  })

  test("a package: its folder, the nearer node_modules folders that would shadow it, and what it imports", async () => {
    await using dir = await tmpdir({
      ".opencode/tool/q.ts":
        'import pg from "pg"\nimport { z } from "@scope/zed/sub"\nimport fs from "node:fs"\nimport path from "path"\n',
      ...pkg("pg"),
      "node_modules/pg/index.js": 'module.exports = require("pg-pool")\n',
      ...pkg("pg-pool"),
      "node_modules/@scope/zed/package.json": JSON.stringify({ name: "@scope/zed" }),
      "node_modules/@scope/zed/sub.js": "export const z = 1\n",
    })
    const { paths } = SecurityClosure.of([dir.file(".opencode/tool/q.ts")])
    const folder = (p: string) => dir.file(p) + path.sep
    for (const f of [
      "node_modules/pg",
      ".opencode/tool/node_modules/pg",
      ".opencode/node_modules/pg",
      "node_modules/pg-pool",
      "node_modules/@scope/zed",
      ".opencode/node_modules/@scope/zed",
    ])
      expect(paths).toContain(folder(f))
    // Only up to the folder that holds the package: one above it would not be looked in.
    expect(paths).not.toContain(path.join(path.dirname(dir.path), "node_modules", "pg") + path.sep)
    expect(paths.filter((p) => /node:|[/\\](fs|path)$/.test(p))).toEqual([])
  })

  test("a package that is not installed: every node_modules folder up to the root, where it would be found", async () => {
    await using dir = await tmpdir({ "tool.ts": 'import "left-pad"\n' })
    const { paths } = SecurityClosure.of([dir.file("tool.ts")])
    expect(paths).toContain(dir.file("node_modules/left-pad") + path.sep)
    expect(paths).toContain(path.join(path.parse(dir.path).root, "node_modules", "left-pad") + path.sep)
  })

  test("a path mapping (tsconfig paths) names the mapped file and the files that map it", async () => {
    await using dir = await tmpdir({
      "tsconfig.json": JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "@app/*": ["src/*"] } } }),
      "package.json": JSON.stringify({ name: "p", imports: { "#cfg": "./config.ts" } }),
      ".opencode/tool/t.ts": 'import { a } from "@app/a"\nimport cfg from "#cfg"\n',
      "src/a.ts": "export const a = 1\n",
      "config.ts": "export default 1\n",
    })
    const { paths } = SecurityClosure.of([dir.file(".opencode/tool/t.ts")])
    for (const f of ["src/a.ts", "config.ts", "tsconfig.json", "package.json"]) expect(paths).toContain(dir.file(f))
  })

  test("what cannot be followed is reported: computed names, unparseable and oversized files; cycles end", async () => {
    await using dir = await tmpdir({
      "a.ts": 'import "./b"\nconst name = "./c" + Date.now()\nawait import(name)\nrequire("./d")\n',
      "b.ts": 'import "./a"\nexport {}\n',
      "broken.ts": "import { from '\n",
      "big.js": "// " + "x".repeat(SecurityClosure.MAX_BYTES) + "\n",
    })
    const r = SecurityClosure.of([dir.file("a.ts"), dir.file("broken.ts"), dir.file("big.js")])
    expect(r.dynamic).toEqual([dir.file("a.ts")])
    expect(r.unread.sort()).toEqual([dir.file("big.js"), dir.file("broken.ts")].sort())
    expect(r.paths).toContain(dir.file("b.ts"))
    // ./d does not exist: the names it would take are still named.
    expect(r.paths).toContain(dir.file("d.ts"))
    expect(r.truncated).toBe(false)
  })

  test(`at most ${SecurityClosure.MAX_FILES} files are read; the rest is reported as truncated`, async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i <= SecurityClosure.MAX_FILES; i++) files[`m${i}.js`] = `require("./m${i + 1}.js")\n`
    await using dir = await tmpdir(files)
    const r = SecurityClosure.of([dir.file("m0.js")])
    expect(r.truncated).toBe(true)
    expect(r.paths).toContain(dir.file(`m${SecurityClosure.MAX_FILES - 1}.js`))
  }, 60_000)
})
