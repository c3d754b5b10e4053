import type { Hooks } from "@opencode-ai/plugin"
import path from "path"
import type { Host } from "../host"
import { LocalState } from "../learning/local"
import { errorMessage } from "../util/error"
import type { Logger } from "../util/log"
import { RecoveryActions } from "./actions"
import { RecoveryDecide } from "./decide"
import { RecoveryLease } from "./lease"
import { SessionRecovery } from "./schema"
import { RecoveryStore } from "./store"

/**
 * Crash recovery inside OpenCode — the I/O around `RecoveryLease` and `RecoveryDecide`:
 *
 * - At start (`report`): reads the project's heartbeats, logs one line per unreadable file and collects old ones,
 *   and reports every session whose owner is gone (OpenCode's log, and a toast where a TUI listens) with the
 *   commands that resume or dismiss it. Nothing is resumed.
 * - `/recover [list | resume <id> | dismiss <id>]` (a command registered in `config`, carried out in
 *   `command.execute.before`): the user's way in the TUI and over the server's command route; the command's message
 *   is replaced by the outcome, which the model reports. Under a security policy, a heartbeat written under another
 *   role or policy (`Host.accessScope`, stored in it) is listed without its title, calls or todos, and is not resumed
 *   or dismissed from here (`RecoveryDecide.visible`); the start report withholds them the same way.
 * - While a session is busy (`session.status` busy, a model request's `chat.params`, a tool starting), its heartbeat is written: owner
 *   identity and lease, the tool calls running (`tool.execute.before/after`), the last todo list (`todowrite`,
 *   `todo.updated`, and the host's list when the session starts), the last shell working directory. The lease is
 *   renewed every third of its length; the heartbeat is removed when the session goes idle, is deleted, or the
 *   process exits normally — so a clean exit leaves nothing to report. A deleted session's heartbeat is removed
 *   whichever process wrote it (one left by a crash included).
 *
 * @example
 * const recovery = RecoveryHooks.create({ host, settings: SessionRecovery.DEFAULTS, log })
 * recovery.report() // [{ beat, reason: "owner-dead" }] after a kill -9
 */
export namespace RecoveryHooks {
  export type Options = {
    host: Host
    settings: SessionRecovery.Settings
    log: Logger
    now?: () => number
    probe?: RecoveryLease.Probe
    owner?: SessionRecovery.Owner
  }

  export type Instance = {
    hooks: Hooks
    folder: string
    /** Scans the heartbeats and reports the interrupted sessions (called once when the feature starts). */
    report(): RecoveryDecide.Found[]
    /** Heartbeats this process holds, by session (tests, benchmark). */
    tracked(): ReadonlyMap<string, SessionRecovery.Heartbeat>
    /** Stops renewing and removes this process's heartbeats (what a normal exit does). */
    close(): void
  }

  type Tracked = {
    beat: SessionRecovery.Heartbeat
    written?: string
    failed?: boolean
    /**
     * The session was interrupted by a crash and is being used again here before it was resumed: its crash record is
     * kept (not overwritten, not removed) until the crash's calls are closed (`settling`).
     */
    hold?: boolean
    settling?: Promise<void>
  }

  /** How long a model request waits for a crash's calls to be closed before it goes on without. */
  const SETTLE_WAIT_MS = 10_000

  /** When this module was loaded: with the plugin, before any feature starts. */
  const LOADED = performance.now()

  const live = new Set<Instance>()
  let exitHook = false
  function onExit() {
    for (const instance of live) instance.close()
  }

  export function create(options: Options): Instance {
    const { host, settings, log } = options
    const now = options.now ?? Date.now
    const probe = () => options.probe ?? RecoveryLease.probe()
    const root = LocalState.root(host.directory, host.worktree)
    const folder = RecoveryStore.folder(root)
    const owner = options.owner ?? RecoveryLease.self()
    const sessions = new Map<string, Tracked>()
    const todos = new Map<string, SessionRecovery.Todo[]>()
    const workdirs = new Map<string, string>()
    let timer: ReturnType<typeof setInterval> | undefined

    /** The security scope of this process's sessions, stored in their heartbeats and compared with the reader's. */
    const scope = () => host.accessScope?.()

    const write = (tracked: Tracked) => {
      if (tracked.hold) return
      // Read at every write: a policy created or edited mid-session changes what the session may have seen.
      const current = scope()
      if (current === undefined) delete tracked.beat.scope
      else tracked.beat.scope = current
      try {
        // The same state twice (todowrite's result, then its todo.updated event) is written once.
        const text = JSON.stringify(tracked.beat)
        if (text === tracked.written) return
        RecoveryStore.write(folder, tracked.beat, text)
        tracked.written = text
      } catch (error) {
        // Once per session: a folder that cannot be written stays so, and the session must go on.
        if (tracked.failed) return
        tracked.failed = true
        log.warn("heartbeat not written; this session cannot be recovered after a crash", {
          sessionID: tracked.beat.sessionID,
          folder,
          error: errorMessage(error),
        })
      }
    }

    const renew = () => {
      const t = now()
      for (const tracked of sessions.values()) {
        tracked.beat.lease = { renewed: t, expires: t + settings.leaseMs }
        write(tracked)
      }
    }

    function start(sessionID: string): Tracked {
      const known = sessions.get(sessionID)
      if (known) return known
      const t = now()
      const tracked: Tracked = {
        beat: {
          version: 1,
          sessionID,
          directory: host.directory,
          workdir: workdirs.get(sessionID) ?? host.directory,
          owner,
          lease: { renewed: t, expires: t + settings.leaseMs },
          busySince: t,
          todos: todos.get(sessionID) ?? null,
          running: [],
        },
      }
      sessions.set(sessionID, tracked)
      const crash = crashed(sessionID)
      if (crash) {
        tracked.hold = true
        tracked.settling = settle(sessionID, tracked, crash, Date.now())
      }
      if (sessions.size === 1) {
        live.add(instance)
        if (!exitHook) process.once("exit", onExit)
        exitHook = true
        timer = setInterval(renew, Math.max(1_000, Math.floor(settings.leaseMs / 3)))
        timer.unref?.()
      }
      write(tracked)
      void learn(sessionID, tracked)
      return tracked
    }

    /** The heartbeat a crashed owner left for the session (another process, judged interrupted), if any. */
    function crashed(sessionID: string): SessionRecovery.Heartbeat | undefined {
      try {
        const found = RecoveryStore.find(folder, sessionID)
        if (!("beat" in found)) return undefined
        const other = found.beat.owner
        if (other.pid === owner.pid && other.hostname === owner.hostname && other.startTime === owner.startTime)
          return undefined
        return RecoveryLease.judge(found.beat, probe(), now()).interrupted ? found.beat : undefined
      } catch {
        return undefined
      }
    }

    /**
     * The user went on in a session a crash interrupted without resuming it (tester AD, AD-3): the calls the crash
     * left pending or running — in messages stored before this process took the session over — get the error result
     * a resume gives them (never re-run), then this process's heartbeat replaces the crash record. Until then, and
     * for good when they cannot be closed (a host that cannot update parts, a failure), the crash record is kept, so
     * the start report and `recovery list` still show the session and `/recover resume` still closes them.
     */
    async function settle(sessionID: string, tracked: Tracked, crash: SessionRecovery.Heartbeat, since: number) {
      const api = host.sessions
      if (!api || !host.messages) {
        log.warn("interrupted session used again: its crash record is kept; /recover resume closes its calls", {
          sessionID,
        })
        return
      }
      try {
        const messages = (await host.messages(sessionID)) as { info: { time?: { created?: number } } }[]
        const before = messages.filter(
          (m) => !(typeof m.info.time?.created === "number" && m.info.time.created >= since),
        )
        const mine = new Set(tracked.beat.running.map((r) => r.callID))
        const parts = RecoveryDecide.unfinished(before as never).filter((p) => !mine.has(String(p.callID)))
        for (const part of parts) await api.updatePart(RecoveryDecide.closed(part, now()))
        RecoveryStore.remove(folder, sessionID)
        tracked.hold = false
        if (sessions.get(sessionID) === tracked) write(tracked)
        log.info(`interrupted session used again: closed ${parts.length} call(s) the crash left running (not re-run)`, {
          sessionID,
          crashedPid: crash.owner.pid,
          calls: parts.map((p) => String(p.tool)),
        })
      } catch (error) {
        log.warn("interrupted session used again: its calls could not be closed; the crash record is kept", {
          sessionID,
          error: errorMessage(error),
        })
      }
    }

    /** The session's record and todo list from the host, once, without holding up the hook that started it. */
    async function learn(sessionID: string, tracked: Tracked) {
      const api = host.sessions
      if (!api) return
      try {
        const [info, list] = await Promise.all([
          api.get(sessionID).catch(() => undefined),
          tracked.beat.todos === null ? api.todos(sessionID).catch(() => undefined) : undefined,
        ])
        if (sessions.get(sessionID) !== tracked) return
        if (info?.parentID) {
          // A subagent's session: its parent's heartbeat covers it (the parent's task call is what was running).
          stop(sessionID)
          return
        }
        if (info?.title) tracked.beat.title = info.title
        if (list && tracked.beat.todos === null) tracked.beat.todos = list.map((t) => ({ ...t }))
        write(tracked)
      } catch (error) {
        log.debug("session record not read", { sessionID, error: errorMessage(error) })
      }
    }

    function stop(sessionID: string) {
      const tracked = sessions.get(sessionID)
      if (!tracked || !sessions.delete(sessionID)) return
      if (!tracked.hold) RecoveryStore.remove(folder, sessionID)
      if (sessions.size === 0) {
        if (timer) clearInterval(timer)
        timer = undefined
        live.delete(instance)
      }
    }

    function setTodos(sessionID: string, list: unknown) {
      if (!Array.isArray(list)) return
      const copy = list.map((t) => ({ ...(t as SessionRecovery.Todo) }))
      todos.set(sessionID, copy)
      const tracked = sessions.get(sessionID)
      if (!tracked) return
      tracked.beat.todos = copy
      write(tracked)
    }

    /** What `/recover [list | resume <id> | dismiss <id>]` did, as the text the command's message carries. */
    async function command(args: string): Promise<string> {
      const [verb = "list", id, ...extra] = args.trim().split(/\s+/).filter(Boolean)
      const usage = "usage: /recover [list | resume <session-id> | dismiss <session-id>]"
      // What reaches this session's model: the heartbeats of another role or policy are named, never shown.
      const reader = scope()
      if (verb === "list" && !id) {
        const found = RecoveryDecide.interrupted(RecoveryStore.read(folder).beats, probe(), now())
        if (!found.length) return "No interrupted sessions in this project."
        return [
          `${found.length} interrupted session${found.length === 1 ? "" : "s"}:`,
          ...found.map((f) => `- ${shown(f, reader)}`),
          "Resume one with /recover resume <session-id>, or archive it with /recover dismiss <session-id>.",
        ].join("\n")
      }
      if ((verb !== "resume" && verb !== "dismiss") || !id || extra.length)
        return `Not understood: /recover ${args}. ${usage}`
      // Resume and dismiss say which calls they closed, and resume writes the calls and todos into a note: not for a
      // session of another role or policy.
      const recorded = RecoveryStore.find(folder, id)
      if ("beat" in recorded && !RecoveryDecide.visible(recorded.beat, reader))
        return RecoveryDecide.otherScope(id, verb)
      if (!host.sessions || !host.messages)
        return new SessionRecovery.HostUnsupported({ operation: "updatePart" }).message
      const context: RecoveryActions.Context = {
        folder,
        sessions: host.sessions,
        messages: host.messages as RecoveryActions.Context["messages"],
        probe: options.probe,
        now,
        log,
      }
      try {
        const result =
          verb === "resume" ? await RecoveryActions.resume(context, id) : await RecoveryActions.dismiss(context, id)
        const calls = result.closed.map((c) => (c.title ? `${c.tool} (${RecoveryDecide.clip(c.title, 80)})` : c.tool))
        const closed = calls.length
          ? `closed ${calls.join(", ")} with an error result (not re-run)`
          : "no call was left running"
        return verb === "resume"
          ? `Session ${id} resumed: ${closed}; todo list ${result.todos}; working directory ${result.workdir}. Open it from the session list to continue.`
          : `Session ${id} dismissed and archived: ${closed}.`
      } catch (error) {
        return `Could not ${verb} session ${id}: ${errorMessage(error)}`
      }
    }

    const hooks = {
      async config(config: unknown) {
        const c = config as { command?: Record<string, unknown> }
        c.command ??= {}
        // The text below reaches the model only where command.execute.before does not run; there it is replaced by
        // the outcome.
        c.command[SessionRecovery.COMMAND] ??= {
          description: "Sessions interrupted by a crash: /recover | /recover resume <id> | /recover dismiss <id>",
          template:
            "The user ran /recover $ARGUMENTS, which this OpenCode could not carry out. Tell the user to run " +
            "`opencode-builtins recovery $ARGUMENTS` in a terminal instead, in one sentence, and do nothing else.",
        }
      },
      async "command.execute.before"(input, output) {
        if (input.command !== SessionRecovery.COMMAND) return
        const outcome = await command(input.arguments ?? "")
        const text = `[session recovery] ${outcome}\nReport this to the user in one or two sentences and do nothing else.`
        const parts = output.parts as { type: string; text?: string }[]
        const first = parts.find((p) => p.type === "text")
        if (first) first.text = text
        else parts.push({ type: "text", text } as never)
        for (const p of parts) if (p !== first && p.type === "text") p.text = ""
      },
      // Called before every model request of a running loop. Not `chat.message`: a message added without a reply
      // (noReply, as a resume adds its note) starts no loop, and would leave a heartbeat no idle ever removes.
      // The title and summary agents run beside the loop and may finish after the session went idle.
      async "chat.params"(input) {
        if (input.agent === "title" || input.agent === "summary") return
        const tracked = start(input.sessionID)
        // The crash's calls closed before the model is asked, so it reads their error results.
        if (tracked.settling)
          await Promise.race([
            tracked.settling,
            new Promise((resolve) => setTimeout(resolve, SETTLE_WAIT_MS).unref?.()),
          ])
      },
      async "tool.execute.before"(input, output) {
        const tracked = start(input.sessionID)
        const args = output.args as Record<string, unknown> | undefined
        if (input.tool === "bash" && typeof args?.workdir === "string" && args.workdir) {
          const dir = path.resolve(host.directory, args.workdir)
          workdirs.set(input.sessionID, dir)
          tracked.beat.workdir = dir
        }
        tracked.beat.running = tracked.beat.running.filter((r) => r.callID !== input.callID)
        tracked.beat.running.push({
          callID: input.callID,
          tool: input.tool,
          title: RecoveryDecide.title(input.tool, args),
          started: now(),
        })
        write(tracked)
      },
      async "tool.execute.after"(input) {
        if (input.tool === "todowrite") {
          const next = (input as { args?: { todos?: unknown } }).args?.todos
          if (Array.isArray(next)) todos.set(input.sessionID, next as SessionRecovery.Todo[])
        }
        const tracked = sessions.get(input.sessionID)
        if (!tracked) return
        tracked.beat.running = tracked.beat.running.filter((r) => r.callID !== input.callID)
        const list = todos.get(input.sessionID)
        if (input.tool === "todowrite" && list) tracked.beat.todos = list.map((t) => ({ ...t }))
        write(tracked)
      },
      async event({ event }) {
        const e = event as { type: string; properties?: any }
        const p = e.properties ?? {}
        switch (e.type) {
          case "todo.updated":
            if (typeof p.sessionID === "string") setTodos(p.sessionID, p.todos)
            return
          case "session.status":
            if (typeof p.sessionID !== "string") return
            if (p.status?.type === "idle") stop(p.sessionID)
            else if (p.status?.type === "busy" || p.status?.type === "retry") start(p.sessionID)
            return
          case "session.idle":
            if (typeof p.sessionID === "string") stop(p.sessionID)
            return
          case "session.deleted": {
            const id = p.info?.id ?? p.sessionID
            if (typeof id === "string") {
              stop(id)
              todos.delete(id)
              workdirs.delete(id)
              // Whoever wrote it (a crashed process's heartbeat included): a deleted session has nothing to recover.
              try {
                if (RecoveryStore.remove(folder, id))
                  log.info("deleted session: its heartbeat is removed", { sessionID: id })
              } catch {}
            }
            return
          }
        }
      },
      // OpenCode disposes the project's instance (a configuration reload, `opencode serve` letting a project go): its
      // sessions end with it, as at a normal exit. Before, the lease timer went on renewing their heartbeats for as
      // long as the process lived, into a project folder that might be gone.
      async dispose() {
        instance.close()
      },
    } as Hooks

    /** A heartbeat's line for a reader of the scope `reader`: whole, or withheld (`RecoveryDecide.visible`). */
    function shown(found: RecoveryDecide.Found, reader: string | undefined): string {
      return RecoveryDecide.visible(found.beat, reader)
        ? RecoveryDecide.line(found)
        : RecoveryDecide.withheldLine(found)
    }

    function report(): RecoveryDecide.Found[] {
      const started = performance.now()
      const { beats, files, skipped } = RecoveryStore.read(folder)
      for (const s of skipped) log.warn(`skipping heartbeat ${s.file}: ${s.reason}`)
      const t = now()
      const removed = new Set(RecoveryStore.collect(folder, files, t, settings.maxAgeDays * 86_400_000))
      if (removed.size) log.info(`collected ${removed.size} old heartbeat file(s)`, { removed: [...removed] })
      const kept = new Set([...files].filter(([file]) => !removed.has(path.basename(file))).map(([, b]) => b.sessionID))
      const found = RecoveryDecide.interrupted(
        beats.filter((b) => kept.has(b.sessionID)),
        probe(),
        t,
      )
      const ms = Math.round((performance.now() - started) * 100) / 100
      const reader = scope()
      for (const f of found)
        log.warn(
          `interrupted session: ${shown(f, reader)}. Resume: /recover resume ${f.beat.sessionID} (or opencode-builtins recovery resume ${f.beat.sessionID}); dismiss: /recover dismiss ${f.beat.sessionID}`,
          { sessionID: f.beat.sessionID, reason: f.reason, scanMs: ms },
        )
      // The figures in the text, so they can be read from any log format: the scan, and when it reported, counted
      // from the plugin's load and from the process's start.
      const age = Math.round(process.uptime() * 1000)
      const sinceLoad = Math.round(performance.now() - LOADED)
      log.info(
        `recovery scan: ${beats.length} heartbeat(s), ${found.length} interrupted, ${ms} ms; reported ${sinceLoad} ms after the plugin loaded, ${age} ms after the process started`,
      )
      if (found.length && host.sessions?.notify) {
        const text =
          found.length === 1
            ? `Interrupted session ${shown(found[0], reader)}. Resume: /recover resume ${found[0].beat.sessionID}`
            : `${found.length} interrupted sessions: /recover lists them`
        void host.sessions.notify(text, "warning").catch(() => {})
      }
      return found
    }

    const instance: Instance = {
      hooks,
      folder,
      report,
      tracked: () => new Map([...sessions].map(([id, t]) => [id, t.beat])),
      close() {
        for (const id of [...sessions.keys()]) stop(id)
      },
    }
    return instance
  }
}
