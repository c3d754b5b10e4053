// Held links across sessions (tester O5): what a session that ended during a command left changed is put back at the
// next start, or disputed when it may be the user's own change.
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityConfig } from "../../security/config"
import { SecurityHeld } from "../../security/held"
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
