// Held links across sessions (tester O5): what a session that ended during a command left changed is put back at the
// next start, or disputed when it may be the user's own change.
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityConfig } from "../../security/config"
import { SecurityHeld, SecurityWatched } from "../../security/held"
import { tmpdir } from "../fixture"

const POLICY = '{"version":"1.0","rules":[{"pattern":"secrets/**","type":"directory","deniedOperations":["read"]}]}'

async function setup() {
  const dir = await tmpdir({ "shared/policy.json": POLICY, "project/a.txt": "a\n" })
  const root = path.join(dir.path, "project")
  const target = path.join(dir.path, "shared/policy.json")
  const link = path.join(root, ".opencode-security.json")
  fs.symlinkSync(target, link)
  const folder = SecurityHeld.folder(path.join(dir.path, "state/held-links"))
  const record = SecurityHeld.file(folder, root)
  const recover = (now = 1000) =>
    SecurityHeld.recover(record, { root, movable: () => true, now, display: (p) => path.relative(root, p) })
  return { dir, root, target, link, folder, record, recover, [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose]() }
}

describe("SecurityHeld", () => {
  test("a record armed before a command and never disarmed: a replaced link is put back, the replacement kept aside", async () => {
    await using t = await setup()
    SecurityHeld.arm(t.record, t.root, "s1", new Map([[t.link, t.target]]), 1)
    fs.rmSync(t.link)
    fs.writeFileSync(t.link, '{"version":"1.0"}')
    const r = t.recover(42)
    expect(r.problem).toBeUndefined()
    expect(fs.readlinkSync(t.link)).toBe(t.target)
    expect(fs.readFileSync(`${t.link}.blocked-by-security-42`, "utf8")).toBe('{"version":"1.0"}')
    expect(r.repaired.map((x) => x.path)).toEqual([t.link])
    expect(r.repaired[0]!.note).toContain(".opencode-security.json.blocked-by-security-42")
    // The session (this process) is alive: its entry stays until it disarms; then the record is gone.
    SecurityHeld.disarm(t.record, "s1")
    expect(fs.existsSync(t.record)).toBe(false)
  })

  test("a removed link is put back; an unchanged one is left alone", async () => {
    await using t = await setup()
    SecurityHeld.arm(t.record, t.root, "s1", new Map([[t.link, t.target]]), 1)
    expect(t.recover().repaired).toEqual([])
    fs.rmSync(t.link)
    const r = t.recover()
    expect(fs.readlinkSync(t.link)).toBe(t.target)
    expect(r.repaired[0]!.aside).toBeUndefined()
  })

  test("a disarmed record (the command's end was seen) repairs nothing: the user's change between sessions is kept", async () => {
    await using t = await setup()
    SecurityHeld.arm(t.record, t.root, "s1", new Map([[t.link, t.target]]), 1)
    SecurityHeld.disarm(t.record, "s1")
    fs.rmSync(t.link)
    fs.writeFileSync(t.link, '{"version":"1.0"}')
    expect(t.recover().repaired).toEqual([])
    expect(fs.lstatSync(t.link).isFile()).toBe(true)
  })

  test("a link re-pointed while the command ran is left, disputed until put back", async () => {
    await using t = await setup()
    SecurityHeld.arm(t.record, t.root, "s1", new Map([[t.link, t.target]]), 1)
    fs.rmSync(t.link)
    fs.symlinkSync("weak.json", t.link)
    const r = t.recover()
    expect(r.repaired).toEqual([])
    expect(r.disputed).toBe(1)
    expect(fs.readlinkSync(t.link)).toBe("weak.json")
    const problems = SecurityHeld.disputes(t.record)
    expect(problems.map((p) => p.file)).toEqual([t.link])
    expect(problems[0]!.message).toContain(`ln -sfn '${t.target}'`)
    expect(problems[0]!.message).toContain(`delete ${t.record}`)
    // The watcher keeps the policy invalid while disputed, and valid again once the link is back.
    const w = SecurityConfig.watch(t.root, { problems: () => SecurityHeld.disputes(t.record), intervalMs: 0 })
    expect(w.state().status).toBe("invalid")
    expect(w.links().has(t.link)).toBe(false)
    fs.rmSync(t.link)
    fs.symlinkSync(t.target, t.link)
    expect(w.refresh().status).toBe("valid")
    expect(w.links().get(t.link)).toBe(t.target)
    SecurityHeld.disarm(t.record, "s1")
    t.recover()
    expect(fs.existsSync(t.record)).toBe(false)
  })

  test("entries of sessions that no longer run are forgotten after the check", async () => {
    await using t = await setup()
    SecurityHeld.arm(t.record, t.root, "dead", new Map([[t.link, t.target]]), 1)
    const raw = JSON.parse(fs.readFileSync(t.record, "utf8"))
    raw.sessions.dead.pid = 2 ** 22 + 12345
    fs.writeFileSync(t.record, JSON.stringify(raw))
    t.recover()
    expect(fs.existsSync(t.record)).toBe(false)
  })

  test("an unreadable record is moved aside and said, not trusted", async () => {
    await using t = await setup()
    fs.writeFileSync(t.record, "{ not json")
    const r = t.recover(7)
    expect(r.problem).toContain(t.record)
    expect(r.problem).toContain("could not be read")
    expect(fs.existsSync(`${t.record}.unreadable-7`)).toBe(true)
    fs.rmSync(t.record + ".unreadable-7")
    fs.symlinkSync(path.join(t.dir.path, "shared/policy.json"), t.record)
    expect(t.recover(8).problem).toContain("not a regular file")
  })

  test("the record's folder is refused when it is a link", async () => {
    await using t = await setup()
    const other = path.join(t.dir.path, "elsewhere")
    fs.mkdirSync(other)
    fs.symlinkSync(other, path.join(t.dir.path, "state/linked"))
    expect(() => SecurityHeld.folder(path.join(t.dir.path, "state/linked"))).toThrow("not a private folder")
  })
})

// Red-team Q4: a record written through any write primitive (the layer's own template put-back once was one) made the
// next start move a user's file aside and replace it with a link the agent chose.
describe("SecurityHeld.recover trusts no entry blindly", () => {
  /** A record as a forger writes it: no `arm`, any path and target, written after the files it names. */
  function forge(record: string, links: Record<string, string>) {
    fs.writeFileSync(
      record,
      JSON.stringify({ version: 1, root: "", sessions: { x: { pid: 1, at: 0, links } }, disputed: {} }),
    )
    const later = new Date(Date.now() + 60_000)
    fs.utimesSync(record, later, later)
  }

  test("a path the configuration holds no link at is reported and dropped, never moved aside or linked", async () => {
    await using t = await setup()
    const keys = path.join(t.dir.path, "home/.ssh/authorized_keys")
    fs.mkdirSync(path.dirname(keys), { recursive: true })
    fs.writeFileSync(keys, "ssh-ed25519 AAAA user@laptop\n")
    const evil = path.join(t.root, "keys.txt")
    fs.writeFileSync(evil, "ssh-ed25519 ATTACKER attacker@evil\n")
    SecurityHeld.arm(t.record, t.root, "s1", new Map([[keys, evil]]), 1)
    fs.writeFileSync(keys, "ssh-ed25519 AAAA user@laptop\n")
    const r = SecurityHeld.recover(t.record, {
      root: t.root,
      movable: () => true,
      now: 5,
      display: (p) => p,
      holds: (p) => (p === t.link ? undefined : "the configuration being loaded holds no link there"),
    })
    expect(r.repaired).toEqual([])
    expect(fs.lstatSync(keys).isFile()).toBe(true)
    expect(fs.readFileSync(keys, "utf8")).toBe("ssh-ed25519 AAAA user@laptop\n")
    expect(fs.readdirSync(path.dirname(keys))).toEqual(["authorized_keys"])
    expect(r.ignored.map((i) => i.path)).toEqual([keys])
    expect(r.ignored[0]!.note).toContain("not acted on")
    expect(r.ignored[0]!.note).toContain("holds no link there")
    // Dropped: nothing of it is left to act on or to dispute later.
    expect(fs.readFileSync(t.record, "utf8")).not.toContain("authorized_keys")
    expect(SecurityHeld.disputes(t.record)).toEqual([])
  })

  test("an entry whose path did not change after the record was written is not acted on (no command under it changed it)", async () => {
    await using t = await setup()
    // The user's own policy file, a regular file; a forged record claims it was a link to a weak policy.
    fs.rmSync(t.link)
    fs.writeFileSync(t.link, POLICY)
    const weak = path.join(t.root, "weak.json")
    fs.writeFileSync(weak, '{"version":"1.0"}')
    forge(t.record, { [t.link]: weak })
    const r = t.recover(9)
    expect(r.repaired).toEqual([])
    expect(fs.lstatSync(t.link).isFile()).toBe(true)
    expect(fs.readFileSync(t.link, "utf8")).toBe(POLICY)
    expect(fs.existsSync(`${t.link}.blocked-by-security-9`)).toBe(false)
    expect(r.ignored[0]!.note).toContain("has not changed since the record was written")
    // Nor a link made where nothing was: its folder did not change either.
    const absent = path.join(t.root, "plugin")
    forge(t.record, { [absent]: path.join(t.root, "evil") })
    expect(t.recover(10).repaired).toEqual([])
    expect(fs.existsSync(absent)).toBe(false)
  })

  test("a disputed entry the configuration does not hold is dropped, not shown to the user as a link to put back", async () => {
    await using t = await setup()
    const keys = path.join(t.dir.path, "keys")
    fs.writeFileSync(keys, "x\n")
    fs.writeFileSync(
      t.record,
      JSON.stringify({ version: 1, root: t.root, sessions: {}, disputed: { [keys]: path.join(t.root, "a.txt") } }),
    )
    const r = SecurityHeld.recover(t.record, {
      root: t.root,
      movable: () => true,
      now: 3,
      display: (p) => p,
      holds: () => "the configuration being loaded holds no link there",
    })
    expect(r.disputed).toBe(0)
    expect(r.ignored.map((i) => i.path)).toEqual([keys])
    expect(SecurityHeld.disputes(t.record)).toEqual([])
  })
})

describe("SecurityWatched", () => {
  const state = (file: string) => ({
    roots: [{ folder: path.dirname(file), kind: "command" }],
    templates: { [file]: { stamp: "1:2:3:4", kind: "command", risks: [], text: "kept\n" } },
    bins: {},
  })

  test("a record armed and not disarmed is taken once at the next start; disarmed, nothing is left", async () => {
    await using t = await setup()
    const record = SecurityWatched.file(t.folder, t.root)
    expect(record).not.toBe(t.record)
    const file = path.join(t.root, ".opencode/command/deploy.md")
    SecurityWatched.arm(record, t.root, "s1", state(file), 1)
    // Written whole by a rename: no temporary file is left beside it.
    expect(fs.readdirSync(t.folder).filter((f) => f.endsWith(".tmp"))).toEqual([])
    const left = SecurityWatched.take(record, 5)!
    expect(left.templates.get(file)).toEqual({ stamp: "1:2:3:4", kind: "command", risks: [], text: "kept\n" })
    expect(left.roots).toEqual([{ folder: path.dirname(file), kind: "command" }])
    // This process's sessions (and ended ones) are dropped once taken: the next start does not act on them again.
    expect(fs.existsSync(record)).toBe(false)
    expect(SecurityWatched.take(record, 6)).toBeUndefined()
    SecurityWatched.arm(record, t.root, "s2", state(file), 7)
    SecurityWatched.disarm(record, "s2")
    expect(fs.existsSync(record)).toBe(false)
  })

  test("an unreadable record is moved aside and said, never acted on", async () => {
    await using t = await setup()
    const record = SecurityWatched.file(t.folder, t.root)
    fs.writeFileSync(record, "{not json")
    const left = SecurityWatched.take(record, 9)!
    expect(left.problem).toContain("could not be read")
    expect(left.templates.size).toBe(0)
    expect(fs.existsSync(record)).toBe(false)
    expect(fs.existsSync(`${record}.unreadable-9`)).toBe(true)
  })
})
