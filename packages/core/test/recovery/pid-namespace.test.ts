import { expect, test } from "bun:test"
import path from "path"
import { RecoveryActions } from "../../recovery/actions"
import { RecoveryLease } from "../../recovery/lease"
import { RecoveryStore } from "../../recovery/store"
import { tmpdir } from "../fixture"
import { beat, probe } from "./beat"
import { crashed, memorySessions } from "./sessions"

/**
 * Tester AD, AD-1: an OpenCode in a container that shares the host's hostname (docker --network host) and boot id (never
 * namespaced) but has its own pid namespace writes a heartbeat whose pid means nothing on the host. The host's
 * OpenCode (same project, bind-mounted) judges it by that pid: a live session is taken for a crash ("pid-reused" or
 * "owner-dead"), reported, and resume/dismiss (which refuse only live owners) close its running calls.
 * The container is a real process in its own pid namespace (unshare --pid), recording its identity with
 * RecoveryLease.self() exactly as the heartbeat writer does.
 */
test("AD-1 a live owner in another pid namespace (same hostname and boot id, fresh lease) is not a crash", async () => {
  const lease = path.resolve(import.meta.dir, "../../recovery/lease.ts")
  const script = `const { RecoveryLease } = await import(${JSON.stringify(lease)}); console.log(JSON.stringify(RecoveryLease.self())); await Bun.sleep(60_000)`
  const child = Bun.spawn(
    ["unshare", "--pid", "--fork", "--map-root-user", "--mount-proc", process.execPath, "-e", script],
    { stdout: "pipe", stderr: "inherit" },
  )
  try {
    const reader = child.stdout.getReader()
    let text = ""
    while (!text.includes("\n")) {
      const { value, done } = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    const owner = JSON.parse(text.trim())
    // The container's OpenCode is alive and renewed its lease a second ago.
    const b = beat({ owner }, Date.now() - 1_000)
    const verdict = RecoveryLease.judge(b, RecoveryLease.probe(), Date.now())
    // Expected: not interrupted (the lease decides when the pid cannot be checked, or the owner is known alive).
    expect(verdict).toMatchObject({ interrupted: false })
  } finally {
    child.kill(9)
    await child.exited
  }
}, 30_000)

test("AD-1 judge: another pid namespace on this host is decided by the lease, never by the pid", () => {
  const here = { ...probe({}), pidns: "pid:[1]" }
  const owner = { ...beat().owner, pid: 1, boot: "boot-1", startTime: "5", pidns: "pid:[2]" }
  const now = Date.now()
  // pid 1 here is another process (init), and a dead pid: neither says anything about the container's owner.
  for (const proc of [{ alive: true, startTime: "1" } as const, { alive: false } as const]) {
    const p = { ...here, process: () => proc }
    expect(RecoveryLease.judge(beat({ owner }, now - 1_000), p, now)).toEqual({
      interrupted: false,
      reason: "other-namespace",
    })
    expect(RecoveryLease.judge(beat({ owner }, now - 60_000), p, now)).toEqual({
      interrupted: true,
      reason: "lease-expired",
    })
  }
  // Control: the same namespace is judged by the pid as before.
  expect(RecoveryLease.judge(beat({ owner: { ...owner, pidns: "pid:[1]" } }, now - 1_000), here, now)).toEqual({
    interrupted: true,
    reason: "owner-dead",
  })
})

test("AD-1 resume and dismiss refuse an owner in another namespace with a valid lease, and say why", async () => {
  await using dir = await tmpdir()
  const folder = RecoveryStore.folder(dir.path)
  const owner = { ...beat().owner, pid: 1, boot: "boot-1", startTime: "5", pidns: "pid:[2]" }
  RecoveryStore.write(folder, beat({ owner }, Date.now() - 1_000))
  const store = memorySessions(crashed(), [])
  const context: RecoveryActions.Context = {
    folder,
    sessions: store.sessions,
    messages: store.messages,
    probe: { ...probe({ 1: { alive: true, startTime: "1" } }), pidns: "pid:[1]" },
  }
  for (const action of [RecoveryActions.resume, RecoveryActions.dismiss])
    await expect(action(context, "ses_test1")).rejects.toThrow("another pid namespace")
  expect(store.writes).toEqual([])
  expect(RecoveryStore.exists(folder, "ses_test1")).toBe(true)
})
