import { LocalSeal } from "../learning/seal"
import type { HostSessions } from "../sessions"
import type { Logger } from "../util/log"
import { RecoveryDecide } from "./decide"
import { RecoveryLease } from "./lease"
import { SessionRecovery } from "./schema"
import { RecoveryStore } from "./store"

/**
 * What the user can do with an interrupted session, through the host's session operations (the plugin's in-process
 * client, the CLI's HTTP client, the fork's services). Nothing here runs unless the user asks for it.
 *
 * - `resume`: every tool call left pending or running gets an error result (never re-run), the todo list is checked
 *   against the heartbeat's and written back where the host can write todos, a synthetic note tells the model what
 *   happened and the working directory, and the heartbeat is removed.
 * - `dismiss`: the same tool calls are closed, the session is archived, the heartbeat removed.
 *
 * Both refuse a session whose owner is alive, and leave the heartbeat in place when a step fails (a retry is safe:
 * calls already closed are no longer pending). A session the host says does not exist (deleted after the crash) is
 * final: its heartbeat is removed and `SessionRecovery.Deleted` thrown; a host that cannot tell (a server that does
 * not answer, any other failure) changes nothing.
 *
 * @example
 * const result = await RecoveryActions.resume({ folder, sessions, messages }, "ses_1")
 * result.closed // [{ callID: "call_2", tool: "bash", title: "sleep 30", started: … }]
 */
export namespace RecoveryActions {
  export type Message = { info: { id: string; role?: string }; parts: { type: string; [key: string]: unknown }[] }

  export type Context = {
    folder: string
    sessions: HostSessions
    messages: (sessionID: string) => Promise<Message[]>
    probe?: RecoveryLease.Probe
    now?: () => number
    log?: Logger
  }

  export type Result = {
    sessionID: string
    action: "resume" | "dismiss"
    /** The calls closed with an error result. */
    closed: SessionRecovery.Running[]
    /** unchanged: the host's list is JSON-equal to the heartbeat's; restored: written back; differs: could not be. */
    todos: RecoveryDecide.TodoState | "restored"
    /** The project directory and the last working directory of the session. */
    directory: string
    workdir: string
  }

  /** The heartbeat of an interrupted session, or a named error (none, unreadable, owner alive). */
  export function load(context: Context, sessionID: string): SessionRecovery.Heartbeat {
    const parsed = RecoveryStore.find(context.folder, sessionID)
    if ("missing" in parsed) throw new SessionRecovery.NotFound({ sessionID, folder: context.folder })
    if ("unreadable" in parsed) {
      const [first] = parsed.unreadable
      // One the built-ins did not write (LocalSeal) is named as such: nothing of it is used.
      if (first.reason.startsWith(LocalSeal.UNTRUSTED))
        throw new Error(`heartbeat ${first.file}: ${first.reason}; nothing of it is used (remove it by hand)`)
      throw new Error(`heartbeat ${first.file} is unreadable (${first.reason}); remove it by hand`)
    }
    const verdict = RecoveryLease.judge(
      parsed.beat,
      context.probe ?? RecoveryLease.probe(),
      (context.now ?? Date.now)(),
    )
    if (!verdict.interrupted)
      throw new SessionRecovery.OwnerAlive({
        sessionID,
        pid: parsed.beat.owner.pid,
        namespace: verdict.reason === "other-namespace" || undefined,
      })
    return parsed.beat
  }

  /**
   * The heartbeat of an interrupted session that still exists in the host. When the host answers that there is no
   * such session, the heartbeat is removed and `SessionRecovery.Deleted` thrown; when the host fails, its error.
   */
  async function existing(context: Context, sessionID: string): Promise<SessionRecovery.Heartbeat> {
    const beat = load(context, sessionID)
    if ((await context.sessions.get(sessionID)) !== undefined) return beat
    RecoveryStore.remove(context.folder, sessionID)
    context.log?.info("the interrupted session was deleted; its heartbeat is removed", { sessionID })
    throw new SessionRecovery.Deleted({ sessionID })
  }

  async function close(context: Context, beat: SessionRecovery.Heartbeat): Promise<SessionRecovery.Running[]> {
    const now = (context.now ?? Date.now)()
    const parts = RecoveryDecide.unfinished(await context.messages(beat.sessionID))
    const closed: SessionRecovery.Running[] = []
    for (const part of parts) {
      await context.sessions.updatePart(RecoveryDecide.closed(part, now))
      const known = beat.running.find((r) => r.callID === part.callID)
      closed.push({
        callID: String(part.callID ?? part.id),
        tool: String(part.tool ?? "tool"),
        title: known?.title ?? RecoveryDecide.title(String(part.tool), part.state.input),
        started: typeof part.state.time?.start === "number" ? part.state.time.start : now,
      })
    }
    return closed
  }

  /** Which crash a heartbeat records (its owner and busy period): the recovery note carries it. */
  export function crashKey(beat: SessionRecovery.Heartbeat): string {
    return `${beat.owner.hostname}/${beat.owner.boot ?? ""}/${beat.owner.pid}/${beat.owner.startTime ?? ""}/${beat.busySince}`
  }

  /**
   * Resumes an interrupted session (see the namespace). Idempotent: a retry after the note was stored (its answer
   * lost) closes what is left and adds no second note (tester AD, AD-4).
   *
   * @example
   * await RecoveryActions.resume(context, "ses_1") // { action: "resume", closed: [...], todos: "unchanged", … }
   */
  export async function resume(context: Context, sessionID: string): Promise<Result> {
    const beat = await existing(context, sessionID)
    const crash = crashKey(beat)
    // A retry after the note was stored but its answer lost (a timeout, Ctrl-C): the note is there, say it once.
    const noted = (await context.messages(sessionID)).some((m) =>
      m.parts.some(
        (p) => (p.metadata as Record<string, { crash?: unknown }> | undefined)?.[SessionRecovery.MARK]?.crash === crash,
      ),
    )
    const closed = await close(context, beat)
    let todos: Result["todos"] = RecoveryDecide.todoState(beat.todos, await context.sessions.todos(sessionID))
    if (todos === "differs" && beat.todos && context.sessions.setTodos) {
      await context.sessions.setTodos(sessionID, beat.todos as HostSessions.Todo[])
      todos = "restored"
    }
    if (todos === "differs")
      context.log?.warn("the todo list differs from the one before the interruption and this host cannot write it", {
        sessionID,
      })
    if (!noted)
      await context.sessions.append(sessionID, {
        parts: [
          {
            type: "text",
            text: RecoveryDecide.note(beat, closed, todos === "restored" ? "unchanged" : todos),
            synthetic: true,
            metadata: { [SessionRecovery.MARK]: { closed: closed.map((c) => c.callID), todos, crash } },
          },
        ],
      })
    else context.log?.info("the recovery note of this crash is already in the session; none added", { sessionID })
    RecoveryStore.remove(context.folder, sessionID)
    return { sessionID, action: "resume", closed, todos, directory: beat.directory, workdir: beat.workdir }
  }

  /**
   * Dismisses an interrupted session: its unfinished calls closed, the session archived, the heartbeat removed.
   *
   * @example
   * await RecoveryActions.dismiss(context, "ses_1")
   */
  export async function dismiss(context: Context, sessionID: string): Promise<Result> {
    const beat = await existing(context, sessionID)
    const closed = await close(context, beat)
    const todos = RecoveryDecide.todoState(beat.todos, await context.sessions.todos(sessionID))
    await context.sessions.archive(sessionID)
    RecoveryStore.remove(context.folder, sessionID)
    return { sessionID, action: "dismiss", closed, todos, directory: beat.directory, workdir: beat.workdir }
  }
}
