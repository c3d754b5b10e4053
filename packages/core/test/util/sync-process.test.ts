import { describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import { SyncProcess } from "../../util/sync-process"

describe("SyncProcess.run", () => {
  test("exit codes, standard output, input, cwd and env", () => {
    const ok = SyncProcess.run("sh", ["-c", 'printf "%s|%s|" "$PWD" "$GREETING"; cat'], {
      cwd: os.tmpdir(),
      env: { PATH: process.env.PATH, GREETING: "hello" },
      input: "from stdin",
    })
    expect(ok.error).toBeUndefined()
    expect(ok.status).toBe(0)
    expect(ok.signal).toBeNull()
    expect(ok.stdout.toString("utf8")).toBe(`${fs.realpathSync(os.tmpdir())}|hello|from stdin`)
    const failed = SyncProcess.run("sh", ["-c", "echo out; echo err >&2; exit 3"], { stderr: true })
    expect(failed.status).toBe(3)
    expect(failed.stdout.toString("utf8")).toBe("out\n")
    expect(failed.stderr.toString("utf8")).toBe("err\n")
    // Without `input`, standard input is empty (a program reading it ends at once).
    expect(SyncProcess.run("cat", []).stdout.length).toBe(0)
  })

  test("a program ended by a signal reports it, with no exit code", () => {
    const r = SyncProcess.run("sh", ["-c", "kill -TERM $$"])
    expect(r.status).toBeNull()
    expect(r.signal).toBe("SIGTERM")
  })

  test("a program that is not there is an error, not a throw", () => {
    const r = SyncProcess.run("/nonexistent/program-ocb", [])
    expect(r.status).toBeNull()
    expect(r.error).toBeDefined()
  })

  test("past its timeout the program is ended and the result says why", () => {
    const r = SyncProcess.run("sleep", ["30"], { timeout: 200 })
    expect(r.error?.message).toContain("timed out after 200 ms")
    expect(r.signal).toBe("SIGTERM")
  }, 60_000)

  test("output past maxBuffer is cut there and named", () => {
    const r = SyncProcess.run("sh", ["-c", "head -c 5000 /dev/zero"], { maxBuffer: 1000 })
    expect(r.stdout.length).toBe(1000)
    expect(r.error?.message).toContain("maxBuffer")
  })

  test("its temporary files are removed", () => {
    const ours = () => new Set(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith("ocb-sync-")))
    const before = ours()
    SyncProcess.run("sh", ["-c", "echo x"], { input: "y", stderr: true })
    SyncProcess.run("/nonexistent/program-ocb", [])
    // No folder of these two calls is left (another process's may come and go meanwhile).
    expect([...ours()].filter((n) => !before.has(n))).toEqual([])
  })

  // The reason it exists: while timers and child processes of the main loop come and go (what a test run or an
  // OpenCode session does), many waits in a row all see their program's end.
  test("many runs beside busy main-loop work all end", async () => {
    const timers: ReturnType<typeof setTimeout>[] = []
    const children: Promise<number>[] = []
    for (let i = 0; i < 60; i++) {
      timers.push(setTimeout(() => {}, 5 + (i % 7)))
      if (i % 10 === 0) children.push(Bun.spawn(["true"]).exited)
      const r = SyncProcess.run("sh", ["-c", `echo ${i}`])
      expect(r.status).toBe(0)
      expect(r.stdout.toString("utf8")).toBe(`${i}\n`)
      if (i % 5 === 0) Bun.gc(true)
      await Bun.sleep(0)
    }
    for (const t of timers) clearTimeout(t)
    expect(await Promise.all(children)).toEqual(children.map(() => 0))
  }, 60_000)
})
