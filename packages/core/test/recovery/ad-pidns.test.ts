import { expect, test } from "bun:test"
import path from "path"
import { RecoveryLease } from "../../recovery/lease"
import { beat } from "./beat"

/**
 * AD-1: an OpenCode in a container that shares the host's hostname (docker --network host) and boot id (never
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
