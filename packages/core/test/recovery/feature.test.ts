import { describe, expect, test } from "bun:test"
import { SessionRecoveryFeature } from "../../recovery/feature"
import { RecoveryStore } from "../../recovery/store"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import { beat } from "./beat"

describe("the crash-recovery feature", () => {
  test("reports at start; an invalid option is named in the log and replaced by its default", async () => {
    await using dir = await tmpdir()
    RecoveryStore.write(
      RecoveryStore.folder(dir.path),
      beat({ sessionID: "ses_dead", owner: { ...beat().owner, pid: 2 ** 22 + 5 } }),
    )
    const log = Logger.memory()
    const hooks = await SessionRecoveryFeature.init({
      host: { directory: dir.path, worktree: dir.path, log },
      options: { leaseMs: 100, maxAgeDays: 3 },
      all: {},
      log,
      native: () => false,
    })
    expect(Object.keys(hooks).sort()).toEqual([
      "chat.params",
      "command.execute.before",
      "config",
      "dispose",
      "event",
      "tool.execute.after",
      "tool.execute.before",
    ])
    const errors = log.entries.filter((e) => e.level === "error").map((e) => e.message)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toStartWith("sessionRecovery.leaseMs: ")
    expect(errors[0]).toEndWith("— using the default")
    expect(log.entries.some((e) => e.level === "warn" && e.message.startsWith("interrupted session: ses_dead"))).toBe(
      true,
    )
  })
})
