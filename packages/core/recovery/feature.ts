import type { BuiltinFeature } from "../builtins/feature"
import { validSection } from "../options"
import { RecoveryHooks } from "./hooks"
import { SessionRecovery } from "./schema"

/**
 * Crash recovery: while a session is busy it keeps a heartbeat (owner pid and process start time, a lease renewed
 * every third of `leaseMs`, running tool calls, last todo list, working directory) in the project's local state
 * folder; at start, sessions whose owner is gone are reported (log line, TUI toast where one listens). Nothing is
 * resumed without the user: `/recover [list | resume <id> | dismiss <id>]` in a session, or
 * `opencode-builtins recovery list|resume <id>|dismiss <id>` in a terminal.
 * Options (section `sessionRecovery`): `leaseMs` (default 30 000), `maxAgeDays` (default 7), `enabled`.
 */
export const SessionRecoveryFeature: BuiltinFeature = {
  id: "crash-recovery",
  section: "sessionRecovery",
  async init({ options, log, host }) {
    const config = validSection(SessionRecovery.Config, options, "sessionRecovery", log)
    const recovery = RecoveryHooks.create({ host, settings: SessionRecovery.settings(config), log })
    try {
      recovery.report()
    } catch (error) {
      log.warn(`recovery scan failed: ${error instanceof Error ? error.message : String(error)}`)
    }
    return recovery.hooks
  },
}
