// The seal of the built-ins' local state (LocalSeal, red team GH): only what this machine's built-ins wrote for this
// project, as this kind of file, is trusted; the key is one per user, made once, never read through a link.
import { afterEach, beforeEach, describe, expect, test } from "bun:test"
import { spawn } from "child_process"
import fs from "fs"
import path from "path"
import { LocalSeal } from "../../learning/seal"
import { LocalState } from "../../learning/local"
import { tmpdir } from "../fixture"

let saved: { cache?: string; state?: string }
let cache: string
beforeEach(() => {
  saved = { cache: process.env.XDG_CACHE_HOME, state: process.env.XDG_STATE_HOME }
  cache = fs.realpathSync(fs.mkdtempSync("/tmp/ocb-seal-cache-"))
  process.env.XDG_CACHE_HOME = cache
  process.env.XDG_STATE_HOME = path.join(cache, "state")
  LocalSeal.forget()
})
afterEach(() => {
  for (const [name, value] of [
    ["XDG_CACHE_HOME", saved.cache],
    ["XDG_STATE_HOME", saved.state],
  ] as const)
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  LocalSeal.forget()
  fs.rmSync(cache, { recursive: true, force: true })
})

const state = (root: string, name: string) => path.join(LocalState.dir(root), name)

/** Waits (polling, no assertion on time) until the clock is past `ms`, so what is made next is strictly later. */
async function after(ms: number) {
  while (Date.now() <= ms + 20) await Bun.sleep(10)
}

describe("LocalSeal", () => {
  test("a sealed file is still JSON, and opens to exactly the text written", async () => {
    await using dir = await tmpdir({})
    const file = state(dir.path, "learnings.json")
    const text = JSON.stringify({ version: 1, learnings: [{ text: "Use pnpm — not npm" }] }, null, 1) + "\n"
    const sealed = LocalSeal.seal(file, "learnings", text)
    expect(JSON.parse(sealed).seal).toMatch(/^[0-9a-f]{64}$/)
    expect(sealed.endsWith("}\n")).toBe(true)
    expect(LocalSeal.open(file, "learnings", sealed)).toEqual({ text })
  })

  test("tampered content, another project, another kind: not trusted, with the reason", async () => {
    await using a = await tmpdir({})
    await using b = await tmpdir({})
    const file = state(a.path, "recovery/ses_1.json")
    const sealed = LocalSeal.seal(file, "recovery", JSON.stringify({ sessionID: "ses_1", directory: a.path }))
    const bad = `${LocalSeal.UNTRUSTED} (bad seal)`
    expect(LocalSeal.open(file, "recovery", sealed.replace(a.path, "/tmp/evil")).problem).toBe(bad)
    // A genuine heartbeat copied into another project's (a nested repository's) state folder.
    expect(LocalSeal.open(state(b.path, "recovery/ses_1.json"), "recovery", sealed).problem).toBe(bad)
    expect(LocalSeal.open(state(path.join(a.path, "svc"), "recovery/ses_1.json"), "recovery", sealed).problem).toBe(bad)
    // Passed off as another store's file.
    expect(LocalSeal.open(state(a.path, "look-at/ses_1.json"), "look-at", sealed).problem).toBe(bad)
    // A seal of another key (another user, another machine).
    const other = sealed.replace(/"seal":"[0-9a-f]{64}"/, `"seal":"${"0".repeat(64)}"`)
    expect(LocalSeal.open(file, "recovery", other).problem).toBe(bad)
    // No seal at all, written after the key existed.
    const { ctimeMs } = fs.statSync(LocalSeal.key().file)
    expect(LocalSeal.open(file, "recovery", '{"sessionID":"ses_1"}', ctimeMs + 1).problem).toBe(
      `${LocalSeal.UNTRUSTED} (no seal)`,
    )
  })

  test("the key: 32 bytes, mode 0600, in the built-ins' cache folder, read once per process", async () => {
    const key = LocalSeal.key()
    expect(key.file).toBe(path.join(cache, "opencode-builtins", LocalSeal.KEY_FILE))
    expect(key.bytes.length).toBe(32)
    expect(fs.statSync(key.file).mode & 0o777).toBe(0o600)
    expect(fs.readdirSync(path.dirname(key.file))).toEqual([LocalSeal.KEY_FILE])
    expect(LocalSeal.key()).toBe(key)
  })

  test("a missing key is made again, and what the old one sealed is no longer trusted", async () => {
    await using dir = await tmpdir({})
    const file = state(dir.path, "learnings.json")
    const sealed = LocalSeal.seal(file, "learnings", '{"version":1,"learnings":[]}\n')
    fs.rmSync(LocalSeal.key().file)
    LocalSeal.forget()
    expect(LocalSeal.open(file, "learnings", sealed).problem).toBe(`${LocalSeal.UNTRUSTED} (bad seal)`)
    expect(fs.existsSync(LocalSeal.keyFile())).toBe(true)
  })

  test("a key that is a link, not a plain file or not 32 bytes is never used: nothing is sealed or trusted", async () => {
    await using dir = await tmpdir({ "planted.key": "k".repeat(32) })
    const file = state(dir.path, "learnings.json")
    const key = LocalSeal.keyFile()
    fs.mkdirSync(path.dirname(key), { recursive: true })
    fs.symlinkSync(dir.file("planted.key"), key)
    expect(() => LocalSeal.seal(file, "learnings", '{"a":1}')).toThrow(/is a symbolic link/)
    expect(() => LocalSeal.open(file, "learnings", '{"a":1}', 0)).toThrow(LocalSeal.KeyError)
    fs.rmSync(key)
    fs.mkdirSync(key)
    expect(() => LocalSeal.key()).toThrow(/is not a plain file/)
    fs.rmdirSync(key)
    fs.writeFileSync(key, "short", { mode: 0o600 })
    expect(() => LocalSeal.key()).toThrow(/holds 5 bytes/)
  })

  test("processes making the key at the same time end with one key, and no temporary file is left", async () => {
    const go = path.join(cache, "go")
    const script = [
      `import fs from "fs"`,
      `import { LocalSeal } from ${JSON.stringify(path.resolve(import.meta.dir, "../../learning/seal.ts"))}`,
      `while (!fs.existsSync(${JSON.stringify(go)})) {}`,
      `process.stdout.write(LocalSeal.key().bytes.toString("hex"))`,
    ].join("\n")
    const children = Array.from({ length: 4 }, () => {
      const child = spawn(process.execPath, ["-e", script], {
        env: { ...process.env, XDG_CACHE_HOME: cache },
        stdio: ["ignore", "pipe", "inherit"],
      })
      let out = ""
      child.stdout!.on("data", (d) => (out += d))
      return new Promise<string>((resolve) => child.once("exit", () => resolve(out)))
    })
    await Bun.sleep(300)
    fs.writeFileSync(go, "")
    const keys = await Promise.all(children)
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/)
    expect(new Set(keys).size).toBe(1)
    expect(LocalSeal.key().bytes.toString("hex")).toBe(keys[0])
    expect(fs.readdirSync(path.join(cache, "opencode-builtins"))).toEqual([LocalSeal.KEY_FILE])
  }, 60_000)

  test("migration: an unsealed file is trusted only when it was last changed before the key was made", async () => {
    await using dir = await tmpdir({})
    const file = state(dir.path, "learnings.json")
    LocalState.write(file, '{"version":1,"learnings":[]}\n')
    await after(fs.statSync(file).ctimeMs)
    const key = LocalSeal.key()
    expect(LocalSeal.readFile(file, "learnings")).toEqual({ text: '{"version":1,"learnings":[]}\n', legacy: true })
    // A cache has no legacy.
    expect(LocalSeal.readFile(file, "learnings", false).problem).toBe(`${LocalSeal.UNTRUSTED} (no seal)`)
    // Changed (rewritten, renamed, chmod: a command can only move the change time forward) after the key: refused.
    await after(key.created)
    fs.chmodSync(file, 0o644)
    expect(LocalSeal.readFile(file, "learnings").problem).toBe(`${LocalSeal.UNTRUSTED} (no seal)`)
  })

  test("a key made again (the cache cleared) never moves when sealing began: files planted meanwhile stay refused (GJ1)", async () => {
    await using dir = await tmpdir({})
    const file = state(dir.path, "learnings.json")
    const first = LocalSeal.key()
    expect(first.legacyBefore).toBe(Math.floor(first.created))
    expect(fs.readFileSync(LocalSeal.epochFile(), "utf8")).toBe(`${Math.floor(first.created)}\n`)
    await after(first.created)
    LocalState.write(file, '{"version":1,"learnings":[]}\n') // what a command plants while the key lives
    expect(LocalSeal.readFile(file, "learnings").problem).toBe(`${LocalSeal.UNTRUSTED} (no seal)`)
    await after(fs.statSync(file).ctimeMs)
    fs.rmSync(LocalSeal.keyFile())
    LocalSeal.forget()
    const second = LocalSeal.key()
    expect(second.created).toBeGreaterThan(fs.statSync(file).ctimeMs)
    expect(second.legacyBefore).toBe(first.legacyBefore)
    expect(LocalSeal.readFile(file, "learnings").problem).toBe(`${LocalSeal.UNTRUSTED} (no seal)`)
  })

  test("a record of when sealing began that is a link, not a number or unreadable accepts no file without a seal", async () => {
    await using dir = await tmpdir({ "far.txt": "99999999999999\n" })
    const file = state(dir.path, "learnings.json")
    LocalState.write(file, '{"version":1,"learnings":[]}\n')
    const record = LocalSeal.epochFile()
    fs.mkdirSync(path.dirname(record), { recursive: true })
    for (const plant of [() => fs.symlinkSync(dir.file("far.txt"), record), () => fs.writeFileSync(record, "soon\n")]) {
      fs.rmSync(record, { force: true })
      plant()
      LocalSeal.forget()
      expect(LocalSeal.key().legacyBefore).toBe(-Infinity)
      expect(LocalSeal.readFile(file, "learnings").problem).toBe(`${LocalSeal.UNTRUSTED} (no seal)`)
    }
  })
})
