// The host's caches are read-only in the sandbox; commands get caches of their own (`SandboxWritable.PRIVATE`).
// The host runs what its caches hold without a check a command cannot forge (red team GI):
// - GI3 (critical): bun's runtime transpiler cache (`$XDG_CACHE_HOME/bun/@t@/<input hash>.pile`, else
//   `~/.bun/install/cache/@t@`) holds the transpiled output of every source file over 50 KB that bun, and OpenCode, a
//   bun binary, loads: the plugin route's 300 KB guard.ts and any big plugin. The entry is trusted while its source is
//   unchanged, so one command rewrote the output (and its wyhash, seed 42) and the next load ran it on the host.
// - GI1 (high): bun's install cache is hard-linked into what bun installs (`~/.cache/opencode/node_modules`, where
//   OpenCode 1.2.15 installs npm plugins): a protected file was rewritten through the cache's name of the same inode.
// - GI5 (medium): jiti keeps transpiled configs in the shared temporary folder (`node-jiti/`, `jiti/`) and runs a
//   cached copy that ends with the source's hash comment: another project's `tailwind.config.ts` ran a command's code.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { ROUTES, fresh, isolateHome } from "./redteam-helpers"
import { spawnSync } from "../spawn-sync"

/** A plugin over bun's 50 KB threshold, so its transpiled output is cached; it records each load in the home. */
const PLUGIN =
  'import fs from "fs"\nfs.appendFileSync(process.env.HOME + "/loaded.txt", "REAL-PLUGIN\\n")\nexport const Big = async () => ({})\n' +
  Array.from({ length: 2500 }, (_, i) => `export const v${i} = "padding padding padding padding ${i}"`).join("\n") +
  "\n"

/**
 * What the attacking command runs (GI3's): in every transpiler cache entry of the folder given whose output holds the
 * plugin's text, the text is swapped and the output's hash fixed (bun's `.pile` header: output offset at 0x1e, length
 * at 0x26, wyhash of the output with seed 42 at 0x2e).
 */
const PATCH = `
const fs = require("fs")
for (const dir of process.argv.slice(2)) {
  let names = []
  try { names = fs.readdirSync(dir) } catch { continue }
  for (const n of names) {
    const f = dir + "/" + n
    const b = fs.readFileSync(f)
    const off = Number(b.readBigUInt64LE(0x1e)), len = Number(b.readBigUInt64LE(0x26))
    const s = b.subarray(off, off + len).toString("latin1")
    if (!s.includes("REAL-PLUGIN")) continue
    const t = Buffer.from(s.replace("REAL-PLUGIN", "EVIL-PLUGIN"), "latin1")
    t.copy(b, off)
    b.writeBigUInt64LE(Bun.hash.wyhash(t, 42n), 0x2e)
    try { fs.writeFileSync(f, b); console.log("patched", f) } catch (e) { console.log("refused", f, e.code) }
  }
}`

let home: ReturnType<typeof isolateHome>
beforeAll(() => {
  home = isolateHome()
})
afterAll(() => home.restore(), 60_000)

describe.each([...ROUTES])("route %s", (route) => {
  test("GI3: a protected plugin's transpiled code in bun's transpiler cache cannot be replaced by a command", async () => {
    await using box = await fresh(route, { ".opencode/plugin/big.ts": PLUGIN, "p.js": PATCH })
    const plugin = path.join(box.dir.path, ".opencode/plugin/big.ts")
    const loaded = path.join(home.home, "loaded.txt")
    fs.rmSync(loaded, { force: true })
    // How OpenCode loads a plugin at start (checked with `opencode debug config` on the three binaries): both places
    // bun keeps the cache, with `XDG_CACHE_HOME` set and without.
    const xdg = { XDG_CACHE_HOME: path.join(home.home, ".cache") }
    const load = (extra: Record<string, string>) =>
      spawnSync("bun", ["-e", `await import(${JSON.stringify(plugin)})`], {
        env: { PATH: process.env.PATH!, HOME: home.home, ...extra },
        encoding: "utf8",
      })
    load(xdg)
    load({})
    const caches = [path.join(home.home, ".cache/bun/@t@"), path.join(home.home, ".bun/install/cache/@t@")]
    for (const c of caches) expect(fs.readdirSync(c).length).toBeGreaterThan(0)
    const before = caches.map((c) => fs.readdirSync(c).map((n) => fs.readFileSync(path.join(c, n))))
    // Every spelling a command could use: the home's folders and the variables as the host has them.
    const r = await box.s.bash(
      `bun p.js ~/.cache/bun/@t@ ~/.bun/install/cache/@t@ ${caches.join(" ")} "$XDG_CACHE_HOME/bun/@t@" "$BUN_RUNTIME_TRANSPILER_CACHE_PATH"; echo rc=$?`,
    )
    // Only the commands' own cache may be changed (the host never reads it).
    const own = path.join(home.home, ".cache", "opencode-builtins-commands") + "/"
    const patched = r.raw.split("\n").filter((l) => l.startsWith("patched "))
    expect(patched.filter((l) => !l.slice("patched ".length).startsWith(own))).toEqual([])
    expect(caches.map((c) => fs.readdirSync(c).map((n) => fs.readFileSync(path.join(c, n))))).toEqual(before)
    // Nor through the write tools: the transpiler caches are protected host folders.
    for (const c of caches) {
      const entry = path.join(c, fs.readdirSync(c)[0]!)
      expect((await box.s.call("write", { filePath: entry, content: "x" })).refused).toBe(true)
    }
    expect(caches.map((c) => fs.readdirSync(c).map((n) => fs.readFileSync(path.join(c, n))))).toEqual(before)
    load(xdg)
    load({})
    expect(fs.readFileSync(plugin, "utf8")).toBe(PLUGIN)
    expect(fs.readFileSync(loaded, "utf8")).toBe("REAL-PLUGIN\n".repeat(4))
  }, 180_000)

  test("GI3: bun inside a command keeps its transpiler cache in the commands' own folder, which the host never reads", async () => {
    await using box = await fresh(route, {
      "big.ts": PLUGIN.replace("process.env.HOME", "process.cwd()").replace("REAL-PLUGIN", "SANDBOXED"),
    })
    const r = await box.s.bash(
      `bun -e 'await import(process.cwd() + "/big.ts")' && echo "xdg=$XDG_CACHE_HOME t=$BUN_RUNTIME_TRANSPILER_CACHE_PATH"`,
    )
    const own = path.join(home.home, ".cache", "opencode-builtins-commands")
    expect(r.raw).toContain(`xdg=${own}/xdg t=${own}/bun-transpiler`)
    expect(fs.readdirSync(path.join(own, "bun-transpiler")).length).toBeGreaterThan(0)
  }, 180_000)

  test("GI1: a package bun hard-linked from its install cache into OpenCode's protected node_modules cannot be rewritten through the cache", async () => {
    const oc = path.join(home.home, ".cache", "opencode")
    fs.mkdirSync(oc, { recursive: true })
    const env = { PATH: process.env.PATH!, HOME: home.home, XDG_CACHE_HOME: path.join(home.home, ".cache") }
    const cacheRoot = path.join(home.home, ".cache", ".bun", "install", "cache")
    // A cache entry and the installed file sharing an inode, as OpenCode 1.2.15's install (`bun add --force --exact
    // --cwd ~/.cache/opencode <pkg>@<version>`, bun's default cache) leaves them.
    const entry = path.join(cacheRoot, "ocb-hl@1.0.0@@@1")
    fs.mkdirSync(entry, { recursive: true })
    fs.writeFileSync(path.join(entry, "index.js"), "module.exports = 1\n")
    const installed = path.join(oc, "node_modules", "ocb-hl", "index.js")
    fs.mkdirSync(path.dirname(installed), { recursive: true })
    fs.rmSync(installed, { force: true })
    fs.linkSync(path.join(entry, "index.js"), installed)
    expect(fs.statSync(installed).nlink).toBe(2)
    // Both the default folder and the one bun uses with XDG_CACHE_HOME.
    fs.mkdirSync(path.join(home.home, ".bun", "install", "cache"), { recursive: true })
    await using box = await fresh(route)
    const line = 'require("child_process").execSync("touch $HOME/GI1-PWNED")'
    const r = await box.s.bash(
      [
        `echo '${line}' >> ~/.cache/opencode/node_modules/ocb-hl/index.js; echo direct=$?`,
        `for f in ${entry}/index.js ~/.cache/.bun/install/cache/ocb-hl@1.0.0@@@1/index.js; do echo '${line}' >> "$f"; echo via=$?; done`,
      ].join("; "),
    )
    expect(r.raw).not.toContain("via=0")
    expect(r.raw).not.toContain("direct=0")
    expect(fs.readFileSync(installed, "utf8")).toBe("module.exports = 1\n")
    spawnSync("bun", ["-e", `require(${JSON.stringify(installed)})`], { env, encoding: "utf8" })
    expect(fs.existsSync(path.join(home.home, "GI1-PWNED"))).toBe(false)
  }, 180_000)

  test("GI5: the code caches in the shared temporary folder (jiti's, Node's compile cache) are read-only to commands", async () => {
    const tmp = process.env.TMPDIR || "/tmp"
    const cached = path.join(tmp, "node-jiti", `ocb-other-project-tailwind.config.ts.${route}.js`)
    await using box = await fresh(route)
    // The folders exist once a command ran (made on the host when missing, so a command cannot make them first).
    for (const name of ["node-jiti", "jiti", "node-compile-cache"])
      expect(fs.statSync(path.join(tmp, name)).isDirectory()).toBe(true)
    // A transpiled config jiti left there for another project (jiti runs it while it ends with the source's hash).
    fs.writeFileSync(cached, 'module.exports = { content: ["REAL"] }\n/* v7-0123456789 */\n')
    const planted = ["/tmp/jiti/planted.mjs", "/tmp/node-compile-cache/planted", "/tmp/GI5-PWNED", `${cached}.n`]
    try {
      const r = await box.s.bash(
        [
          `f=${cached}; { printf 'require("fs").writeFileSync("/tmp/GI5-PWNED","ran");'; cat "$f"; } > "$f.n" && mv "$f.n" "$f"; echo a=$?`,
          `echo x > /tmp/jiti/planted.mjs; echo b=$?`,
          `echo x > /tmp/node-compile-cache/planted; echo c=$?`,
          `echo "jiti=$JITI_CACHE"`,
        ].join("; "),
      )
      expect(r.raw).toContain("a=1")
      expect(r.raw).toContain("b=1")
      expect(r.raw).toContain("c=1")
      // jiti inside commands uses the commands' own folder.
      expect(r.raw).toContain(`jiti=${path.join(home.home, ".cache", "opencode-builtins-commands", "jiti")}`)
      expect(fs.readFileSync(cached, "utf8")).toStartWith("module.exports")
      expect(fs.existsSync("/tmp/jiti/planted.mjs")).toBe(false)
    } finally {
      for (const f of [cached, ...planted]) fs.rmSync(f, { force: true })
    }
  }, 120_000)
})
