import { describe, expect, test } from "bun:test"
import fs from "fs"
import { run } from "../../recovery/cli"
import { RecoveryStore } from "../../recovery/store"
import { memoryIO } from "../../util/cli"
import { tmpdir } from "../fixture"
import { beat } from "./beat"

/** A heartbeat whose owner pid does not exist on this machine. */
const dead = (sessionID = "ses_dead") => beat({ sessionID, owner: { ...beat().owner, pid: 2 ** 22 + 11 } })

describe("opencode-builtins recovery", () => {
  test("list: nothing, then the interrupted session (text and JSON); a live owner's session is left out", async () => {
    await using dir = await tmpdir()
    const io = memoryIO(dir.path)
    expect(await run(["list"], io)).toBe(0)
    expect(io.stdout).toBe("No interrupted sessions in this project.\n")
    const folder = RecoveryStore.folder(dir.path)
    RecoveryStore.write(folder, dead())
    RecoveryStore.write(folder, beat({ sessionID: "ses_live" }))
    const text = memoryIO(dir.path)
    expect(await run(["list"], text)).toBe(0)
    expect(text.stdout).toContain("ses_dead interrupted")
    expect(text.stdout).toContain("during bash (sleep 30)")
    expect(text.stdout).not.toContain("ses_live")
    const json = memoryIO(dir.path)
    expect(await run(["list", "--json"], json)).toBe(0)
    expect(JSON.parse(json.stdout).map((x: any) => [x.sessionID, x.reason])).toEqual([["ses_dead", "owner-dead"]])
  })

  test("list reports unreadable heartbeats on stderr and goes on", async () => {
    await using dir = await tmpdir({ ".opencode/builtins-local/recovery/ses_x.json": "{" })
    const io = memoryIO(dir.path)
    expect(await run(["list"], io)).toBe(0)
    expect(io.stderr).toContain("skipping heartbeat")
    expect(io.stderr).toContain("ses_x.json: not JSON")
  })

  test("resume/dismiss refuse an unknown session or a live owner before reaching any server", async () => {
    await using dir = await tmpdir()
    RecoveryStore.write(RecoveryStore.folder(dir.path), beat({ sessionID: "ses_live" }))
    const unknown = memoryIO(dir.path)
    expect(await run(["resume", "ses_nope", "--server", "http://127.0.0.1:9"], unknown)).toBe(1)
    expect(unknown.stderr).toContain("no heartbeat of session 'ses_nope'")
    const live = memoryIO(dir.path)
    expect(await run(["dismiss", "ses_live", "--server", "http://127.0.0.1:9"], live)).toBe(1)
    expect(live.stderr).toContain(`still owned by a live OpenCode process (pid ${process.pid})`)
  })

  test("a server that cannot be reached: a clear failure, the heartbeat kept for a retry", async () => {
    await using dir = await tmpdir()
    const folder = RecoveryStore.folder(dir.path)
    RecoveryStore.write(folder, dead())
    const io = memoryIO(dir.path)
    expect(await run(["resume", "ses_dead", "--server", "http://127.0.0.1:9"], io)).toBe(1)
    expect(io.stderr).toContain("recovery: resume ses_dead failed:")
    expect(io.stderr).toContain("the heartbeat is kept; retry is safe")
    expect(RecoveryStore.exists(folder, "ses_dead")).toBe(true)
  })

  test("an opencode that cannot be started is named, with the options that avoid it", async () => {
    await using dir = await tmpdir()
    RecoveryStore.write(RecoveryStore.folder(dir.path), dead())
    const io = memoryIO(dir.path)
    expect(await run(["dismiss", "ses_dead", "--opencode", `${dir.path}/no-such-opencode`], io)).toBe(1)
    expect(io.stderr).toContain("pass --opencode <bin> or --server <url>")
  })

  test("usage errors exit 2 with the usage", async () => {
    await using dir = await tmpdir()
    for (const argv of [
      [],
      ["resume"],
      ["frobnicate"],
      ["list", "x"],
      ["resume", "a", "--server", "u", "--opencode", "o"],
      ["list", "--nope"],
    ]) {
      const io = memoryIO(dir.path)
      expect(await run(argv, io)).toBe(2)
      expect(io.stderr).toContain("usage:")
    }
    const help = memoryIO(dir.path)
    expect(await run(["--help"], help)).toBe(0)
    expect(help.stdout).toContain("opencode-builtins recovery resume <session-id>")
  })
})
