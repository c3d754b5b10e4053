import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { RecoveryStore } from "../../recovery/store"
import { tmpdir } from "../fixture"
import { beat } from "./beat"

const DAY = 86_400_000

describe("RecoveryStore: heartbeat files", () => {
  test("written atomically under .opencode/builtins-local/recovery/, read back equal; no temporary file left", async () => {
    await using dir = await tmpdir()
    const folder = RecoveryStore.folder(dir.path)
    expect(folder).toBe(path.join(dir.path, ".opencode/builtins-local/recovery"))
    const b = beat()
    const file = RecoveryStore.write(folder, b)
    expect(fs.readdirSync(folder)).toEqual([path.basename(file)])
    expect(path.basename(file)).toMatch(/^ses_test1~[0-9a-z]+\.json$/)
    const read = RecoveryStore.read(folder)
    expect(read.beats).toEqual([b])
    expect(read.skipped).toEqual([])
    expect(RecoveryStore.exists(folder, b.sessionID)).toBe(true)
    expect(RecoveryStore.remove(folder, b.sessionID)).toBe(true)
    expect(RecoveryStore.remove(folder, b.sessionID)).toBe(false)
    expect(RecoveryStore.exists(folder, b.sessionID)).toBe(false)
    expect(RecoveryStore.read(folder).beats).toEqual([])
  })

  test("each write is a new generation; two stay (the newest counts), older ones go; remove takes them all", async () => {
    await using dir = await tmpdir()
    const folder = RecoveryStore.folder(dir.path)
    const files = [1, 2, 3, 4].map((n) => RecoveryStore.write(folder, beat({ title: `v${n}` })))
    expect(fs.readdirSync(folder).sort()).toEqual(files.slice(2).map((f) => path.basename(f)))
    expect(RecoveryStore.read(folder).beats.map((b) => b.title)).toEqual(["v4"])
    // A newest generation cut short (power loss before its data reached the disk): the previous one still counts.
    fs.writeFileSync(files[3], "")
    const read = RecoveryStore.read(folder)
    expect(read.beats.map((b) => b.title)).toEqual(["v3"])
    expect(read.skipped.map((s) => s.file)).toEqual([files[3]])
    // A plain <session>.json (another writer) is read too, and removed with the rest.
    fs.writeFileSync(RecoveryStore.file(folder, "ses_test1"), JSON.stringify(beat()))
    expect(RecoveryStore.remove(folder, "ses_test1")).toBe(true)
    expect(fs.readdirSync(folder)).toEqual([])
  })

  test("a missing folder reads as no heartbeats", async () => {
    await using dir = await tmpdir()
    const read = RecoveryStore.read(path.join(dir.path, "nowhere"))
    expect([read.beats, read.skipped, read.files.size]).toEqual([[], [], 0])
  })

  test("truncated, corrupt, foreign and misnamed files are skipped with the reason; the good one is kept", async () => {
    await using dir = await tmpdir()
    const folder = RecoveryStore.folder(dir.path)
    const good = beat({ sessionID: "ses_good" })
    RecoveryStore.write(folder, good)
    const text = JSON.stringify(beat({ sessionID: "ses_cut" }))
    await dir.write({
      ".opencode/builtins-local/recovery/ses_cut.json": text.slice(0, text.length / 2),
      ".opencode/builtins-local/recovery/ses_bin.json": new Uint8Array([0xff, 0x00, 0x13]),
      ".opencode/builtins-local/recovery/ses_old.json": JSON.stringify({ version: 0, sessionID: "ses_old" }),
      ".opencode/builtins-local/recovery/ses_other.json": JSON.stringify(beat({ sessionID: "ses_else" })),
      ".opencode/builtins-local/recovery/notes.txt": "not a heartbeat",
      // A time beyond the Date range (valid JSON): `recovery list` and the recovery note formatted it and threw.
      ".opencode/builtins-local/recovery/ses_far.json": JSON.stringify(beat({ sessionID: "ses_far" }, 1e20)),
    })
    const { beats, skipped } = RecoveryStore.read(folder)
    expect(beats).toEqual([good])
    const reasons = Object.fromEntries(skipped.map((s) => [path.basename(s.file), s.reason]))
    expect(Object.keys(reasons).sort()).toEqual([
      "ses_bin.json",
      "ses_cut.json",
      "ses_far.json",
      "ses_old.json",
      "ses_other.json",
    ])
    expect(reasons["ses_far.json"]).toContain("lease.renewed")
    expect(reasons["ses_cut.json"]).toStartWith("not JSON (truncated or corrupt")
    expect(reasons["ses_bin.json"]).toStartWith("not JSON")
    expect(reasons["ses_old.json"]).toStartWith("not a heartbeat: version")
    expect(reasons["ses_other.json"]).toContain("holds session ses_else")
  })

  test("a session id that is not one is refused, never used as a path", async () => {
    await using dir = await tmpdir()
    expect(() => RecoveryStore.file(dir.path, "../../etc/passwd")).toThrow("is not a session id")
    expect(() => RecoveryStore.write(dir.path, beat({ sessionID: "a/b" }))).toThrow("is not a session id")
    expect(fs.readdirSync(dir.path)).toEqual([])
  })

  test("collectable: heartbeats not renewed for maxAge, unreadable files as old, temporary files after a minute", () => {
    const now = 100 * DAY
    const fresh = beat({}, now - DAY)
    const old = beat({ sessionID: "ses_old" }, now - 8 * DAY)
    expect(
      RecoveryStore.collectable(
        [
          { name: "ses_test1.json", mtime: now - DAY, beat: fresh },
          { name: "ses_old.json", mtime: now - 8 * DAY, beat: old },
          { name: "ses_corrupt.json", mtime: now - 8 * DAY },
          { name: "ses_corrupt2.json", mtime: now - DAY },
          { name: "ses_x.json.1.abc.tmp", mtime: now - 61_000 },
          { name: "ses_y.json.1.abc.tmp", mtime: now - 1_000 },
          { name: "README", mtime: 0 },
        ],
        now,
        7 * DAY,
      ),
    ).toEqual(["ses_old.json", "ses_corrupt.json", "ses_x.json.1.abc.tmp"])
  })

  test("collect removes what collectable selects, on disk", async () => {
    await using dir = await tmpdir()
    const folder = RecoveryStore.folder(dir.path)
    const old = beat({ sessionID: "ses_old" }, Date.now() - 8 * DAY)
    const fresh = beat({ sessionID: "ses_new" })
    const oldFile = path.basename(RecoveryStore.write(folder, old))
    const freshFile = path.basename(RecoveryStore.write(folder, fresh))
    const tmp = path.join(folder, "ses_new.json.1.x.tmp")
    fs.writeFileSync(tmp, "{")
    const past = new Date(Date.now() - 120_000)
    fs.utimesSync(tmp, past, past)
    const removed = RecoveryStore.collect(folder, RecoveryStore.read(folder).files, Date.now(), 7 * DAY)
    expect(removed.sort()).toEqual(["ses_new.json.1.x.tmp", oldFile].sort())
    expect(fs.readdirSync(folder)).toEqual([freshFile])
  })
})
