import os from "os"
import { RecoveryLease } from "../../recovery/lease"
import type { SessionRecovery } from "../../recovery/schema"

/** A heartbeat owned by `owner` (default: this process), renewed at `renewed`, with a 30 s lease. */
export function beat(over: Partial<SessionRecovery.Heartbeat> = {}, renewed = Date.now()): SessionRecovery.Heartbeat {
  return {
    version: 1,
    sessionID: "ses_test1",
    directory: "/repo",
    workdir: "/repo",
    owner: RecoveryLease.self(),
    lease: { renewed, expires: renewed + 30_000 },
    busySince: renewed - 1_000,
    todos: [{ content: "Write the parser", status: "in_progress", priority: "high" }],
    running: [{ callID: "call_1", tool: "bash", title: "sleep 30", started: renewed - 500 }],
    ...over,
  }
}

/** The machine as `judge` sees it, with chosen processes. */
export function probe(processes: Record<number, RecoveryLease.Process>, boot = "boot-1"): RecoveryLease.Probe {
  return { hostname: os.hostname(), boot, process: (pid) => processes[pid] ?? { alive: false } }
}
