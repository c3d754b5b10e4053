import { describe, expect, test } from "bun:test"
import os from "os"
import { RecoveryLease } from "../../recovery/lease"
import { beat, probe } from "./beat"

const owner = (over = {}) => ({ pid: 4242, startTime: "1000", boot: "boot-1", hostname: os.hostname(), ...over })
const NOW = 1_800_000_000_000

describe("RecoveryLease.judge: ownership lease plus process identity", () => {
  test("a live owner (same pid and start time) keeps its session, even with the lease lapsed (a stall)", () => {
    const b = beat({ owner: owner() }, NOW - 120_000)
    expect(RecoveryLease.judge(b, probe({ 4242: { alive: true, startTime: "1000" } }), NOW)).toEqual({
      interrupted: false,
      reason: "owner-alive",
    })
  })

  test("a dead owner is a crash at once, while its lease is still valid", () => {
    const b = beat({ owner: owner() }, NOW - 100)
    expect(RecoveryLease.judge(b, probe({}), NOW)).toEqual({ interrupted: true, reason: "owner-dead" })
  })

  test("pid reuse does not hide a crash: same pid, another start time", () => {
    const b = beat({ owner: owner() }, NOW - 100)
    expect(RecoveryLease.judge(b, probe({ 4242: { alive: true, startTime: "99999" } }), NOW)).toEqual({
      interrupted: true,
      reason: "pid-reused",
    })
  })

  test("after a reboot (another boot id) every heartbeat of this machine is interrupted", () => {
    const b = beat({ owner: owner() }, NOW - 100)
    const verdict = RecoveryLease.judge(b, probe({ 4242: { alive: true, startTime: "1000" } }, "boot-2"), NOW)
    expect(verdict).toEqual({ interrupted: true, reason: "rebooted" })
  })

  test("identity unknown (another machine, or no start time): the lease decides", () => {
    const remote = beat({ owner: owner({ hostname: "elsewhere" }) }, NOW - 10_000)
    expect(RecoveryLease.judge(remote, probe({}), NOW)).toEqual({ interrupted: false, reason: "lease-valid" })
    expect(RecoveryLease.judge(remote, probe({}), NOW + 30_000)).toEqual({
      interrupted: true,
      reason: "lease-expired",
    })
    const noStart = beat({ owner: owner({ startTime: undefined }) }, NOW - 10_000)
    const alive = probe({ 4242: { alive: true } })
    expect(RecoveryLease.judge(noStart, alive, NOW)).toEqual({ interrupted: false, reason: "lease-valid" })
    expect(RecoveryLease.judge(noStart, alive, NOW + 30_000).interrupted).toBe(true)
    // No boot id on this platform, pid gone: dead at once.
    const noBoot = beat({ owner: owner({ boot: undefined }) }, NOW - 10_000)
    expect(RecoveryLease.judge(noBoot, probe({}), NOW)).toEqual({ interrupted: true, reason: "owner-dead" })
  })
})

describe("RecoveryLease on this machine (real processes)", () => {
  test.skipIf(process.platform !== "linux")(
    "a child killed with SIGKILL is dead once reaped; its pid's identity is its start time",
    async () => {
      const child = Bun.spawn(["sleep", "30"], { stdout: "ignore", stderr: "ignore" })
      const real = RecoveryLease.probe()
      const proc = real.process(child.pid)
      expect(proc.alive).toBe(true)
      const startTime = proc.alive ? proc.startTime : undefined
      expect(startTime).toMatch(/^\d+$/)
      const b = beat({ owner: { ...RecoveryLease.self(), pid: child.pid, startTime } })
      expect(RecoveryLease.judge(b, real, Date.now())).toEqual({ interrupted: false, reason: "owner-alive" })
      child.kill("SIGKILL")
      await child.exited
      expect(RecoveryLease.judge(b, real, Date.now())).toEqual({ interrupted: true, reason: "owner-dead" })
    },
  )

  test.skipIf(process.platform !== "linux")("a killed child not yet reaped (a zombie) counts as dead", async () => {
    // A shell that starts a child and execs into a long sleep never reaps the child: it stays a zombie.
    const parent = Bun.spawn(["sh", "-c", "sleep 0.1 & echo $!; exec sleep 30"], { stdout: "pipe" })
    try {
      const reader = parent.stdout.getReader()
      const { value } = await reader.read()
      const pid = Number(new TextDecoder().decode(value).trim())
      await Bun.sleep(400)
      expect(RecoveryLease.state(await Bun.file(`/proc/${pid}/stat`).text())).toBe("Z")
      expect(RecoveryLease.probe().process(pid)).toEqual({ alive: false })
    } finally {
      parent.kill("SIGKILL")
      await parent.exited
    }
  })

  test("this process: alive with its recorded identity", () => {
    const self = RecoveryLease.self()
    expect(self.pid).toBe(process.pid)
    expect(RecoveryLease.judge(beat({ owner: self }), RecoveryLease.probe(), Date.now()).interrupted).toBe(false)
  })

  test("the start time is read after the last ')' of /proc/<pid>/stat (names may hold spaces and parentheses)", () => {
    const rest = Array.from({ length: 50 }, (_, i) => String(i + 3))
    rest[0] = "S"
    expect(RecoveryLease.startTime(`77 (a) b (c)) ${rest.join(" ")}`)).toBe("22")
    expect(RecoveryLease.state(`77 (a) b (c)) ${rest.join(" ")}`)).toBe("S")
    expect(RecoveryLease.startTime("garbage")).toBeUndefined()
  })
})
