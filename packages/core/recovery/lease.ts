import fs from "fs"
import os from "os"
import { SessionRecovery } from "./schema"

/**
 * Who owns a busy session, and whether that owner is still alive: an ownership lease (renewed while the session is
 * busy, with an expiry) plus the owner's process identity — pid and process start time on one boot of one machine.
 * A bare pid check would take a new process that reused a crashed owner's pid for the owner, and hide the crash.
 *
 * @example
 * const verdict = RecoveryLease.judge(beat, RecoveryLease.probe(), Date.now())
 * if (verdict.interrupted) report(beat, verdict.reason)
 */
export namespace RecoveryLease {
  /** What the current machine says about a pid: gone, alive with a start time, or alive with no identity known. */
  export type Process = { alive: false } | { alive: true; startTime?: string }

  /** The facts `judge` needs about the machine it runs on, as a value (tests pass their own). */
  export type Probe = {
    hostname: string
    boot?: string
    /** The pid namespace of the process judging (see `SessionRecovery.Owner.pidns`). */
    pidns?: string
    process(pid: number): Process
  }

  export type Verdict =
    | { interrupted: false; reason: "owner-alive" | "lease-valid" | "other-namespace" }
    | { interrupted: true; reason: "owner-dead" | "pid-reused" | "rebooted" | "lease-expired" }

  /**
   * The decision, pure. The owner's identity decides whenever it can be checked (same machine, same boot, start time
   * recorded and readable): a live owner keeps its session even when a stall (a suspended laptop) let the lease
   * lapse, a dead one or a reused pid is a crash at once, without waiting for the lease. When the identity cannot be
   * checked (another machine, no start time on this platform, an owner in another pid namespace — a container with
   * the host's hostname and boot id, tester AD's AD-1), the lease decides: expired means interrupted. An owner in
   * another namespace with a valid lease is "other-namespace": maybe alive, never closed from here.
   *
   * @example
   * RecoveryLease.judge(beat, { hostname: "h", boot: "b", process: () => ({ alive: false }) }, now)
   * // { interrupted: true, reason: "owner-dead" } when beat.owner is on h, boot b
   */
  export function judge(beat: SessionRecovery.Heartbeat, probe: Probe, now: number): Verdict {
    const owner = beat.owner
    const expired = now > beat.lease.expires
    const sameMachine = owner.hostname === probe.hostname
    if (sameMachine && owner.boot && probe.boot && owner.boot !== probe.boot)
      return { interrupted: true, reason: "rebooted" }
    if (sameMachine && owner.pidns && probe.pidns && owner.pidns !== probe.pidns)
      return expired
        ? { interrupted: true, reason: "lease-expired" }
        : { interrupted: false, reason: "other-namespace" }
    if (sameMachine && owner.boot && probe.boot) {
      const proc = probe.process(owner.pid)
      if (!proc.alive) return { interrupted: true, reason: "owner-dead" }
      if (owner.startTime && proc.startTime) {
        if (proc.startTime !== owner.startTime) return { interrupted: true, reason: "pid-reused" }
        return { interrupted: false, reason: "owner-alive" }
      }
    } else if (sameMachine && !probe.process(owner.pid).alive) return { interrupted: true, reason: "owner-dead" }
    return expired ? { interrupted: true, reason: "lease-expired" } : { interrupted: false, reason: "lease-valid" }
  }

  /** This machine: hostname, boot id and /proc (Linux); elsewhere a signal-0 check with no start time. */
  export function probe(): Probe {
    return { hostname: os.hostname(), boot: bootID(), pidns: pidNamespace(), process: inspect }
  }

  /** The identity of the current process, recorded as a heartbeat's owner. */
  export function self(): SessionRecovery.Owner {
    const proc = inspect(process.pid)
    return {
      pid: process.pid,
      startTime: proc.alive ? proc.startTime : undefined,
      boot: bootID(),
      hostname: os.hostname(),
      pidns: pidNamespace(),
    }
  }

  let namespace: string | undefined | null = null
  /** The pid namespace of this process (Linux), read once; undefined where there is none to read. */
  export function pidNamespace(): string | undefined {
    if (namespace !== null) return namespace
    try {
      namespace = fs.readlinkSync("/proc/self/ns/pid") || undefined
    } catch {
      namespace = undefined
    }
    return namespace
  }

  let boot: string | undefined | null = null
  /** The kernel's boot id (Linux), read once. */
  export function bootID(): string | undefined {
    if (boot !== null) return boot
    try {
      boot = fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined
    } catch {
      boot = undefined
    }
    return boot
  }

  /**
   * Field 22 of /proc/<pid>/stat (start time in clock ticks since boot). The command name (field 2) is in parentheses
   * and may hold spaces or parentheses, so fields are counted after the last ')'.
   *
   * @example
   * RecoveryLease.startTime("123 (a) b) S 1 2 3 …") // the 20th field after ") "
   */
  export function startTime(stat: string): string | undefined {
    const close = stat.lastIndexOf(")")
    if (close < 0) return undefined
    const fields = stat.slice(close + 2).split(" ")
    // Fields after the name start at field 3 (state); starttime is field 22.
    const value = fields[22 - 3]
    return value && /^\d+$/.test(value) ? value : undefined
  }

  const hasProc = (() => {
    try {
      return fs.existsSync("/proc/self/stat")
    } catch {
      return false
    }
  })()

  /** Field 3 of /proc/<pid>/stat: the process state (R, S, D, Z for a zombie, …). */
  export function state(stat: string): string | undefined {
    const close = stat.lastIndexOf(")")
    return close < 0 ? undefined : stat.slice(close + 2).split(" ")[0]
  }

  function inspect(pid: number): Process {
    if (hasProc) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
        // A zombie (killed, not yet reaped by its parent) or dead process no longer runs anything.
        if (/^[ZX]$/.test(state(stat) ?? "")) return { alive: false }
        return { alive: true, startTime: startTime(stat) }
      } catch {
        return { alive: false }
      }
    }
    // No /proc (macOS, Windows): whether the pid exists at all, identity unknown (the lease decides).
    try {
      process.kill(pid, 0)
      return { alive: true }
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM" ? { alive: true } : { alive: false }
    }
  }
}
