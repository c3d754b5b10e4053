import { describe, expect, test } from "bun:test"
import type { Host } from "../../host"
import { RecoveryDecide } from "../../recovery/decide"
import { RecoveryHooks } from "../../recovery/hooks"
import { SessionRecovery } from "../../recovery/schema"
import { RecoveryStore } from "../../recovery/store"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import { beat } from "./beat"
import { crashed, memorySessions } from "./sessions"

// Red team AI, AI4: `/recover list` in a viewer session gave the viewer's model an admin session's interrupted command
// (which held what only admin may read). Heartbeats record the security scope (role and policy) they were written
// under; a session of another scope is told the session exists, never what it held.

const ADMIN = "admin:0123456789abcdef"
const VIEWER = "viewer:0123456789abcdef"
const SECRET = "launch on the fourth of july"
const DEAD = { ...beat().owner, pid: 2 ** 22 + 11 }

/** One OpenCode process of the scope `scope` (undefined: no policy) over the project `dir`. */
function processOf(dir: string, scope: string | undefined, notify: string[] = []) {
  const log = Logger.memory()
  const store = memorySessions(crashed("ses_adm"), [])
  const host: Host = {
    directory: dir,
    worktree: dir,
    log,
    sessions: { ...store.sessions, notify: async (message) => void notify.push(message) },
    messages: store.messages as unknown as Host["messages"],
    accessScope: () => scope,
  }
  const recovery = RecoveryHooks.create({ host, settings: SessionRecovery.DEFAULTS, log })
  const run = async (args: string) => {
    const output = { parts: [{ type: "text", text: "template" }] }
    await (recovery.hooks as any)["command.execute.before"](
      { command: "recover", sessionID: "ses_now", arguments: args },
      output,
    )
    return output.parts[0].text
  }
  return { log, store, recovery, run }
}

/** A heartbeat of a crashed process: an admin session's command holding the secret, its title and todos too. */
function crash(folder: string, scope: string | undefined, sessionID = "ses_adm") {
  RecoveryStore.write(
    folder,
    beat({
      sessionID,
      owner: DEAD,
      title: `Plan: ${SECRET}`,
      todos: [{ content: `announce ${SECRET}`, status: "pending" }],
      running: [{ callID: "call_1", tool: "bash", title: `printf '%s' '${SECRET}'`, started: Date.now() }],
      ...(scope === undefined ? {} : { scope }),
    }),
  )
}

describe("crash recovery across security roles (red team AI4)", () => {
  test("a heartbeat records the scope of the process that wrote it, at every write; none without a policy", async () => {
    await using dir = await tmpdir()
    let scope: string | undefined = ADMIN
    const log = Logger.memory()
    const host: Host = { directory: dir.path, worktree: dir.path, log, accessScope: () => scope }
    const recovery = RecoveryHooks.create({ host, settings: SessionRecovery.DEFAULTS, log })
    const hooks = recovery.hooks as any
    const read = () => {
      const found = RecoveryStore.find(recovery.folder, "ses_1")
      return "beat" in found ? found.beat : undefined
    }
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_1", callID: "c1" }, { args: { command: "ls" } })
    expect(read()?.scope).toBe(ADMIN)
    // The policy edited mid-session: the next write carries the new scope.
    scope = "admin:fedcba9876543210"
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_1", callID: "c2" }, { args: { command: "pwd" } })
    expect(read()?.scope).toBe("admin:fedcba9876543210")
    scope = undefined
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_1", callID: "c3" }, { args: { command: "id" } })
    expect(read()).toBeDefined()
    expect("scope" in read()!).toBe(false)
    recovery.close()
  })

  test("/recover list in a session of another role names the session and withholds its title, calls and todos", async () => {
    await using dir = await tmpdir()
    const viewer = processOf(dir.path, VIEWER)
    crash(viewer.recovery.folder, ADMIN)
    const list = await viewer.run("list")
    expect(list).toContain("1 interrupted session:")
    expect(list).toContain("- ses_adm interrupted")
    expect(list).toContain(RecoveryDecide.WITHHELD)
    expect(list).not.toContain(SECRET)
    expect(list).not.toContain("printf")
    expect(list).not.toContain("Plan:")
    expect(list).not.toContain("open todo")
    // The same role under the same policy sees it all.
    const admin = processOf(dir.path, ADMIN)
    const own = await admin.run("list")
    expect(own).toContain(`during bash (printf '%s' '${SECRET}')`)
    expect(own).toContain("1 open todo")
  })

  test("the same role under another policy (its files changed since) is another scope: withheld", async () => {
    await using dir = await tmpdir()
    const later = processOf(dir.path, "admin:fedcba9876543210")
    crash(later.recovery.folder, ADMIN)
    const list = await later.run("list")
    expect(list).toContain(RecoveryDecide.WITHHELD)
    expect(list).not.toContain(SECRET)
  })

  test("a heartbeat written before the scope was recorded is of unknown role: withheld under a policy, shown without", async () => {
    await using dir = await tmpdir()
    const viewer = processOf(dir.path, VIEWER)
    crash(viewer.recovery.folder, undefined)
    expect(await viewer.run("list")).toContain(RecoveryDecide.WITHHELD)
    expect(await viewer.run("list")).not.toContain(SECRET)
    const none = processOf(dir.path, undefined)
    expect(await none.run("list")).toContain(SECRET)
    // Without a policy nothing is protected: a heartbeat of any scope is shown.
    crash(none.recovery.folder, ADMIN, "ses_two")
    const both = await none.run("list")
    expect(both).toContain(`ses_two "Plan: ${SECRET}"`)
    expect(both).toContain(`ses_adm "Plan: ${SECRET}"`)
  })

  test("resume and dismiss of another scope's session are refused from the session, nothing written; the CLI is named", async () => {
    await using dir = await tmpdir()
    const viewer = processOf(dir.path, VIEWER)
    crash(viewer.recovery.folder, ADMIN)
    for (const verb of ["resume", "dismiss"]) {
      const said = await viewer.run(`${verb} ses_adm`)
      expect(said).toContain("another security role or policy")
      expect(said).toContain(`opencode-builtins recovery ${verb} ses_adm`)
      expect(said).not.toContain(SECRET)
    }
    expect(viewer.store.writes).toEqual([])
    expect("beat" in RecoveryStore.find(viewer.recovery.folder, "ses_adm")).toBe(true)
    // Its own role resumes it, with the calls named and noted.
    const admin = processOf(dir.path, ADMIN)
    expect(await admin.run("resume ses_adm")).toContain("Session ses_adm resumed")
    expect(admin.store.writes.map((w) => w.op)).toContain("append")
  })

  test("the start report (log line and toast) withholds another scope's heartbeat too", async () => {
    await using dir = await tmpdir()
    const notify: string[] = []
    const viewer = processOf(dir.path, VIEWER, notify)
    crash(viewer.recovery.folder, ADMIN)
    expect(viewer.recovery.report().map((f) => f.beat.sessionID)).toEqual(["ses_adm"])
    await Bun.sleep(10)
    expect(notify.join("\n")).toContain(RecoveryDecide.WITHHELD)
    expect(notify.join("\n")).not.toContain(SECRET)
    expect(JSON.stringify(viewer.log.entries)).toContain(RecoveryDecide.WITHHELD)
    expect(JSON.stringify(viewer.log.entries)).not.toContain(SECRET)
  })

  test("visible: without a policy every heartbeat; under one, only a heartbeat of the same scope", () => {
    expect(RecoveryDecide.visible(beat({ scope: ADMIN }), undefined)).toBe(true)
    expect(RecoveryDecide.visible(beat(), undefined)).toBe(true)
    expect(RecoveryDecide.visible(beat({ scope: ADMIN }), ADMIN)).toBe(true)
    expect(RecoveryDecide.visible(beat({ scope: ADMIN }), VIEWER)).toBe(false)
    expect(RecoveryDecide.visible(beat(), VIEWER)).toBe(false)
  })
})
