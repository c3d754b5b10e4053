import { describe, expect, test } from "bun:test"
import fs from "fs"
import type { Host } from "../../host"
import { LocalState } from "../../learning/local"
import { RecoveryHooks } from "../../recovery/hooks"
import { RecoveryLease } from "../../recovery/lease"
import { SessionRecovery } from "../../recovery/schema"
import { RecoveryStore } from "../../recovery/store"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import { beat } from "./beat"
import { crashed, memorySessions } from "./sessions"
import { bunSpawnSync } from "../spawn-sync"

const TODOS = [{ content: "Write the parser", status: "in_progress", priority: "high" }]

function setup(dir: string, options: { leaseMs?: number; todos?: typeof TODOS; notify?: string[] } = {}) {
  const log = Logger.memory()
  const store = memorySessions([], options.todos ?? [])
  const sessions = { ...store.sessions }
  if (options.notify) sessions.notify = async (message) => void options.notify!.push(message)
  const host: Host = { directory: dir, worktree: dir, log, sessions }
  const recovery = RecoveryHooks.create({
    host,
    settings: { ...SessionRecovery.DEFAULTS, leaseMs: options.leaseMs ?? 30_000 },
    log,
  })
  const read = (id = "ses_1") => {
    const found = RecoveryStore.find(recovery.folder, id)
    return "beat" in found ? found.beat : undefined
  }
  return { log, host, recovery, hooks: recovery.hooks as any, read }
}

const status = (sessionID: string, type: string) => ({
  event: { type: "session.status", properties: { sessionID, status: { type } } },
})

describe("RecoveryHooks: the heartbeat of a busy session", () => {
  test("busy writes it (owner, lease, host's todos); tool calls come and go; idle removes it", async () => {
    await using dir = await tmpdir({ ".git/HEAD": "x" })
    const { hooks, read, recovery } = setup(dir.path, { todos: TODOS })
    await hooks.event(status("ses_1", "busy"))
    await Bun.sleep(10) // the host's todo list is read without holding up the hook
    const first = read()!
    expect(first.owner.pid).toBe(process.pid)
    expect(first.lease.expires - first.lease.renewed).toBe(30_000)
    expect(first.todos).toEqual(TODOS)
    expect(first.directory).toBe(dir.path)

    await hooks["tool.execute.before"](
      { tool: "bash", sessionID: "ses_1", callID: "c1" },
      { args: { command: "sleep 30", workdir: "pkg" } },
    )
    expect(read()!.running).toMatchObject([{ callID: "c1", tool: "bash", title: "sleep 30" }])
    expect(read()!.workdir).toBe(`${dir.path}/pkg`)
    const next = [...TODOS, { content: "Document it", status: "pending", priority: "low" }]
    await hooks["tool.execute.after"](
      { tool: "bash", sessionID: "ses_1", callID: "c1", args: {} },
      { title: "", output: "", metadata: {} },
    )
    await hooks["tool.execute.after"](
      { tool: "todowrite", sessionID: "ses_1", callID: "c2", args: { todos: next } },
      { title: "", output: "", metadata: {} },
    )
    expect(read()!.running).toEqual([])
    expect(read()!.todos).toEqual(next)
    const updated = [{ content: "Write the parser", status: "completed", priority: "high" }]
    await hooks.event({ event: { type: "todo.updated", properties: { sessionID: "ses_1", todos: updated } } })
    expect(read()!.todos).toEqual(updated)

    await hooks.event(status("ses_1", "idle"))
    expect(read()).toBeUndefined()
    expect(recovery.tracked().size).toBe(0)
  })

  test("in a git repository the user's files stay untouched: git status is clean while busy and after", async () => {
    await using dir = await tmpdir({ ".gitignore": "node_modules\n", "src/a.ts": "export const a = 1\n" })
    const git = (...args: string[]) => {
      const run = bunSpawnSync(["git", "-C", dir.path, ...args], {
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: dir.path },
      })
      expect(run.exitCode).toBe(0)
      return run.stdout.toString()
    }
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "init")
    const { hooks, read } = setup(dir.path, { todos: TODOS })
    await hooks.event(status("ses_1", "busy"))
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_1", callID: "c1" }, { args: { command: "ls" } })
    expect(read()).toBeDefined()
    // The heartbeat is there, covered by the local state folder's own `*` .gitignore.
    expect(fs.readFileSync(dir.file(".opencode/builtins-local/.gitignore"), "utf8")).toBe(LocalState.OWN_GITIGNORE)
    expect(git("status", "--porcelain", "--untracked-files=all")).toBe("")
    await hooks.event(status("ses_1", "idle"))
    expect(git("status", "--porcelain", "--untracked-files=all")).toBe("")
    expect(fs.readFileSync(dir.file(".gitignore"), "utf8")).toBe("node_modules\n")
  })

  test("a tool starting or a model request starts it too (session.status may come late); title agents do not", async () => {
    await using dir = await tmpdir()
    const { hooks, read } = setup(dir.path)
    await hooks["chat.params"]({ sessionID: "ses_t", agent: "title" }, {})
    expect(read("ses_t")).toBeUndefined()
    await hooks["chat.params"]({ sessionID: "ses_1", agent: "build" }, {})
    expect(read()).toBeDefined()
    await hooks["tool.execute.before"]({ tool: "read", sessionID: "ses_2", callID: "c" }, { args: { filePath: "a" } })
    expect(read("ses_2")!.running[0].title).toBe("a")
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_2" } } })
    await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses_1" } } } })
    expect(read()).toBeUndefined()
    expect(read("ses_2")).toBeUndefined()
  })

  test("the same state twice (todowrite, then its todo.updated event) is written once", async () => {
    await using dir = await tmpdir()
    const { hooks, read } = setup(dir.path)
    await hooks.event(status("ses_1", "busy"))
    await hooks["tool.execute.after"](
      { tool: "todowrite", sessionID: "ses_1", callID: "c", args: { todos: TODOS } },
      { title: "", output: "", metadata: {} },
    )
    expect(read()!.todos).toEqual(TODOS)
    const folder = RecoveryStore.folder(dir.path)
    const before = fs.readdirSync(folder)
    await hooks.event({ event: { type: "todo.updated", properties: { sessionID: "ses_1", todos: TODOS } } })
    // No new generation written.
    expect(fs.readdirSync(folder)).toEqual(before)
    await hooks.event({ event: { type: "todo.updated", properties: { sessionID: "ses_1", todos: [] } } })
    expect(read()!.todos).toEqual([])
  })

  test("a folder that cannot be written: the session goes on, one warning names it", async () => {
    await using dir = await tmpdir()
    // A file where the local state folder should be: every write fails.
    await dir.write({ ".opencode/builtins-local": "not a folder" })
    const { hooks, log } = setup(dir.path)
    await hooks.event(status("ses_1", "busy"))
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_1", callID: "c" }, { args: { command: "ls" } })
    await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_1", callID: "c", args: {} }, {})
    const warnings = log.entries.filter((e) => e.level === "warn")
    expect(warnings.map((w) => w.message)).toEqual([
      "heartbeat not written; this session cannot be recovered after a crash",
    ])
    expect(warnings[0].extra?.error).toContain("builtins-local")
  })

  test("close (a normal exit) removes every heartbeat this process holds", async () => {
    await using dir = await tmpdir()
    const { hooks, read, recovery } = setup(dir.path)
    await hooks.event(status("ses_1", "busy"))
    await hooks.event(status("ses_2", "busy"))
    recovery.close()
    expect(read()).toBeUndefined()
    expect(read("ses_2")).toBeUndefined()
  })

  test("the instance disposed (a configuration reload): its heartbeats are removed and no longer renewed", async () => {
    await using dir = await tmpdir()
    const { hooks, read, recovery } = setup(dir.path)
    await hooks.event(status("ses_1", "busy"))
    expect(read()).toBeDefined()
    await hooks.dispose()
    expect(read()).toBeUndefined()
    expect(recovery.tracked().size).toBe(0)
  })

  test("the lease is renewed every third of its length while busy", async () => {
    await using dir = await tmpdir()
    const { hooks, read, recovery } = setup(dir.path, { leaseMs: 3_000 })
    await hooks.event(status("ses_1", "busy"))
    const before = read()!.lease
    await Bun.sleep(1_300)
    const after = read()!.lease
    recovery.close()
    expect(after.renewed).toBeGreaterThan(before.renewed)
    expect(after.expires).toBe(after.renewed + 3_000)
  }, 60_000)

  test("a subagent's session is not tracked (its parent's task call is)", async () => {
    await using dir = await tmpdir()
    const { hooks, read, host } = setup(dir.path)
    host.sessions!.get = async (id) => ({ id, parentID: "ses_parent" })
    await hooks.event(status("ses_child", "busy"))
    await Bun.sleep(10)
    expect(read("ses_child")).toBeUndefined()
  })
})

describe("RecoveryHooks: a deleted session (X14)", () => {
  test("session.deleted removes the session's heartbeat whoever wrote it: a crashed process's is never reported again", async () => {
    await using dir = await tmpdir()
    const { recovery, hooks } = setup(dir.path)
    // Left by an OpenCode killed with kill -9 (its pid is gone); this process never tracked the session.
    RecoveryStore.write(recovery.folder, beat({ sessionID: "ses_dead", owner: { ...beat().owner, pid: 2 ** 22 + 7 } }))
    RecoveryStore.write(recovery.folder, beat({ sessionID: "ses_other", owner: { ...beat().owner, pid: 2 ** 22 + 7 } }))
    expect(recovery.report().map((f) => f.beat.sessionID)).toEqual(["ses_dead", "ses_other"])
    await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses_dead" } } } })
    expect(RecoveryStore.exists(recovery.folder, "ses_dead")).toBe(false)
    expect(recovery.report().map((f) => f.beat.sessionID)).toEqual(["ses_other"])
    // An id that is not a session id is ignored, not used as a path.
    await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "../x" } } } })
    expect(RecoveryStore.exists(recovery.folder, "ses_other")).toBe(true)
  })
})

describe("RecoveryHooks.report: what the next start says", () => {
  test("reports a dead owner's session with the commands, skips corrupt files with a log line, collects old ones", async () => {
    await using dir = await tmpdir()
    const notices: string[] = []
    const { recovery, log } = setup(dir.path, { notify: notices })
    const dead = beat({ sessionID: "ses_dead", owner: { ...beat().owner, pid: 2 ** 22 + 7 } })
    RecoveryStore.write(recovery.folder, dead)
    RecoveryStore.write(recovery.folder, beat({ sessionID: "ses_live" })) // owned by this live process
    RecoveryStore.write(recovery.folder, beat({ sessionID: "ses_ancient" }, Date.now() - 30 * 86_400_000))
    fs.writeFileSync(RecoveryStore.file(recovery.folder, "ses_cut"), '{"version":1,')
    const found = recovery.report()
    expect(found.map((f) => [f.beat.sessionID, f.reason])).toEqual([["ses_dead", "owner-dead"]])
    const warnings = log.entries.filter((e) => e.level === "warn").map((e) => e.message)
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toStartWith(`skipping heartbeat ${RecoveryStore.file(recovery.folder, "ses_cut")}: not JSON`)
    expect(warnings[1]).toStartWith("interrupted session: ses_dead interrupted")
    expect(warnings[1]).toContain("opencode-builtins recovery resume ses_dead")
    expect(RecoveryStore.exists(recovery.folder, "ses_ancient")).toBe(false)
    await Bun.sleep(0)
    expect(notices).toHaveLength(1)
    expect(notices[0]).toContain("ses_dead")
  })

  test("nothing to report after a clean run: no line, no notice", async () => {
    await using dir = await tmpdir()
    const notices: string[] = []
    const { hooks, recovery, log } = setup(dir.path, { notify: notices })
    await hooks.event(status("ses_1", "busy"))
    await hooks.event(status("ses_1", "idle"))
    expect(recovery.report()).toEqual([])
    expect(log.entries.filter((e) => e.level === "warn")).toEqual([])
    expect(notices).toEqual([])
  })

  test("a session whose owner is alive elsewhere on this machine is not reported; once it dies, it is", async () => {
    await using dir = await tmpdir()
    // The other OpenCode: a real process whose identity the heartbeat records.
    const child = Bun.spawn(["sleep", "30"])
    try {
      const log = Logger.memory()
      const host: Host = { directory: dir.path, worktree: dir.path, log }
      const proc = RecoveryLease.probe().process(child.pid)
      const owner = { ...RecoveryLease.self(), pid: child.pid, startTime: proc.alive ? proc.startTime : undefined }
      const other = RecoveryHooks.create({ host, settings: SessionRecovery.DEFAULTS, log, owner })
      await (other.hooks as any).event(status("ses_other", "busy"))
      const me = RecoveryHooks.create({ host, settings: SessionRecovery.DEFAULTS, log })
      expect(me.report()).toEqual([])
      child.kill("SIGKILL")
      await child.exited
      expect(me.report().map((f) => [f.beat.sessionID, f.reason])).toEqual([["ses_other", "owner-dead"]])
      other.close()
    } finally {
      child.kill("SIGKILL")
    }
  })
})

describe("/recover: the user's way in from a session", () => {
  const run = async (hooks: any, args: string, command = "recover") => {
    const output = { parts: [{ type: "text", text: "template" }] }
    await hooks["command.execute.before"]({ command, sessionID: "ses_now", arguments: args }, output)
    return output.parts[0].text
  }

  test("registered in the config with a template that points to the CLI where the hook does not run", async () => {
    await using dir = await tmpdir()
    const { hooks } = setup(dir.path)
    const config: any = {}
    await hooks.config(config)
    expect(config.command.recover.template).toContain("opencode-builtins recovery $ARGUMENTS")
  })

  test("list, resume and dismiss replace the command's text by the outcome; other commands are left alone", async () => {
    await using dir = await tmpdir()
    const log = Logger.memory()
    const store = memorySessions(crashed("ses_dead"), TODOS)
    const host: Host = {
      directory: dir.path,
      worktree: dir.path,
      log,
      sessions: store.sessions,
      messages: store.messages as unknown as Host["messages"],
    }
    const { hooks, folder } = RecoveryHooks.create({ host, settings: SessionRecovery.DEFAULTS, log })
    expect(await run(hooks, "")).toStartWith("[session recovery] No interrupted sessions in this project.")
    RecoveryStore.write(
      folder,
      beat({ sessionID: "ses_dead", todos: TODOS, owner: { ...beat().owner, pid: 2 ** 22 + 3 } }),
    )
    RecoveryStore.write(folder, beat({ sessionID: "ses_gone", owner: { ...beat().owner, pid: 2 ** 22 + 4 } }))
    const list = await run(hooks, "list")
    expect(list).toContain("2 interrupted sessions:")
    expect(list).toContain("- ses_dead interrupted")
    expect(await run(hooks, "", "continuation")).toBe("template")
    const resumed = await run(hooks, "resume ses_dead")
    expect(resumed).toContain(
      "Session ses_dead resumed: closed bash (sleep 30), read with an error result (not re-run)",
    )
    expect(resumed).toContain("todo list unchanged")
    expect(store.writes.map((w) => w.op)).toEqual(["updatePart", "updatePart", "append"])
    expect(await run(hooks, "resume ses_dead")).toContain("Could not resume session ses_dead: no heartbeat")
    expect(await run(hooks, "dismiss ses_gone")).toContain("Session ses_gone dismissed and archived")
    expect(await run(hooks, "resume")).toContain("Not understood: /recover resume. usage:")
    expect(await run(hooks, "frob x")).toContain("Not understood")
  })
})
