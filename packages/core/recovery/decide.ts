import { TodoContinuation } from "../continuation/schema"
import { SecuritySecrets } from "../security/secrets"
import type { HostSessions } from "../sessions"
import { RecoveryLease } from "./lease"
import { SessionRecovery } from "./schema"
import { StoredTime } from "../util/time"

/**
 * The decisions of crash recovery as pure functions over values (heartbeats, the machine probe, stored messages):
 * which sessions were interrupted, which tool calls a resume closes and with what, whether the todo list survived,
 * and the texts shown to the user and the model.
 *
 * @example
 * const found = RecoveryDecide.interrupted(beats, RecoveryLease.probe(), Date.now())
 */
export namespace RecoveryDecide {
  export type Found = { beat: SessionRecovery.Heartbeat; reason: RecoveryLease.Verdict["reason"] }

  /** The heartbeats whose owner is gone (see `RecoveryLease.judge`), oldest first. */
  export function interrupted(beats: SessionRecovery.Heartbeat[], probe: RecoveryLease.Probe, now: number): Found[] {
    const out: Found[] = []
    for (const beat of beats) {
      const verdict = RecoveryLease.judge(beat, probe, now)
      if (verdict.interrupted) out.push({ beat, reason: verdict.reason })
    }
    return out.sort((a, b) => a.beat.lease.renewed - b.beat.lease.renewed)
  }

  type Message = { info: { id: string; role?: string }; parts: { type: string; [key: string]: unknown }[] }
  type ToolPart = HostSessions.Part & {
    type: "tool"
    callID?: string
    tool?: string
    state: { status: string; input?: unknown; title?: string; metadata?: unknown; time?: { start?: number } }
  }

  /** Tool parts a crash left pending or running (never ended), in message order. */
  export function unfinished(messages: Message[]): ToolPart[] {
    const out: ToolPart[] = []
    for (const message of messages)
      for (const part of message.parts) {
        if (part.type !== "tool") continue
        const status = (part.state as { status?: string } | undefined)?.status
        if (status === "pending" || status === "running") out.push(part as unknown as ToolPart)
      }
    return out
  }

  /**
   * The part with its call ended by an error result (what OpenCode stores for a failed call): the model's next
   * request carries a result for every call it made, and nothing runs the tool again.
   *
   * @example
   * RecoveryDecide.closed(part, Date.now()).state // { status: "error", error: "Interrupted: …", input, time }
   */
  export function closed(part: ToolPart, now: number): HostSessions.Part {
    const state = part.state
    const start = typeof state.time?.start === "number" ? state.time.start : now
    return {
      ...part,
      state: {
        status: "error",
        input: (state.input ?? {}) as Record<string, unknown>,
        error: SessionRecovery.INTERRUPTED,
        ...(state.metadata && typeof state.metadata === "object" ? { metadata: state.metadata } : {}),
        time: { start, end: Math.max(now, start) },
      },
    }
  }

  export type TodoState = "unchanged" | "differs" | "unknown"

  /** Whether the host's todo list is JSON-equal to the heartbeat's (the last state before the crash). */
  export function todoState(snapshot: SessionRecovery.Todo[] | null, current: unknown[]): TodoState {
    if (snapshot === null) return "unknown"
    return canonical(snapshot) === canonical(current) ? "unchanged" : "differs"
  }

  /** JSON with object keys sorted, so key order does not count as a difference. */
  export function canonical(value: unknown): string {
    return JSON.stringify(value, (_key, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
    )
  }

  /** One line for the startup report and `recovery list`. */
  export function line(found: Found): string {
    const b = found.beat
    const tools = b.running.map((r) => (r.title ? `${r.tool} (${clip(r.title, 60)})` : r.tool))
    const open = b.todos?.filter(TodoContinuation.isOpen).length
    const head = `${b.sessionID}${b.title ? ` "${clip(b.title, 50)}"` : ""} interrupted ${StoredTime.iso(b.lease.renewed)}`
    const why = ` (${REASONS[found.reason as keyof typeof REASONS] ?? found.reason})`
    return `${head}${why}${tools.length ? ` during ${tools.join(", ")}` : ""}${open ? `, ${open} open todo${open === 1 ? "" : "s"}` : ""}`
  }

  /**
   * Whether a session of the scope `reader` (`Host.accessScope`; undefined without a policy) may be shown what a
   * heartbeat holds — its title (OpenCode's title agent writes it from the first prompt), the commands and paths of
   * its calls, its todos. Under a policy only a heartbeat written under the same role and policy is: an admin
   * session's interrupted command held what only admin may read, and `/recover list` in a viewer session gave it to
   * the viewer's model (red team AI4). A heartbeat without a scope (written before it was recorded, or without a
   * policy) is of unknown role, withheld under a policy. Without a policy every heartbeat is shown.
   *
   * @example
   * RecoveryDecide.visible({ ...beat, scope: "admin:3f2a…" }, "viewer:3f2a…") // false
   */
  export function visible(beat: SessionRecovery.Heartbeat, reader: string | undefined): boolean {
    return reader === undefined || beat.scope === reader
  }

  /**
   * The line of an interrupted session whose heartbeat the reader may not see (`visible`): its id, when and why it was
   * interrupted, nothing of its title, calls or todos.
   */
  export function withheldLine(found: Found): string {
    const b = found.beat
    const why = ` (${REASONS[found.reason as keyof typeof REASONS] ?? found.reason})`
    return `${b.sessionID} interrupted ${StoredTime.iso(b.lease.renewed)}${why}; ${WITHHELD}`
  }

  /** What `withheldLine` says instead of the title, calls and todos. */
  export const WITHHELD = "recorded under another security role or policy: its title, calls and todos are withheld here"

  /** Why `/recover resume|dismiss` refuses a heartbeat the session may not see (`visible`). */
  export function otherScope(sessionID: string, verb: string): string {
    return `Session ${sessionID} was interrupted under another security role or policy, so it cannot be ${verb === "resume" ? "resumed" : "dismissed"} from this session (its calls and todos would be shown here): ${verb} it with /recover in an OpenCode started with that role, or with \`opencode-builtins recovery ${verb} ${sessionID}\` in a terminal.`
  }

  const REASONS = {
    "owner-dead": "its OpenCode process is gone",
    "pid-reused": "its OpenCode process is gone; the pid now belongs to another process",
    rebooted: "the machine restarted",
    "lease-expired": "its lease expired",
  }

  /**
   * The synthetic message a resumed session gets: what was interrupted, that it was not re-run, the working
   * directory, and the todo list when the host could not confirm it survived.
   */
  export function note(beat: SessionRecovery.Heartbeat, closedTools: SessionRecovery.Running[], todos: TodoState) {
    const lines = [
      `[session recovered] OpenCode stopped unexpectedly at ${StoredTime.iso(beat.lease.renewed)} while this session was working.`,
    ]
    if (closedTools.length)
      lines.push(
        `Tool calls that were running were closed with an error and NOT re-run: ${closedTools.map((t) => (t.title ? `${t.tool} (${clip(t.title, 120)})` : t.tool)).join("; ")}. Their effects are unknown: check before repeating them.`,
      )
    lines.push(`Working directory: ${beat.workdir}`)
    if (todos === "differs" && beat.todos)
      lines.push(
        "The todo list before the interruption was:",
        ...beat.todos.map((t) => `- [${t.status}] ${t.content}${t.priority ? ` (${t.priority})` : ""}`),
      )
    lines.push("Wait for the user's next instruction before continuing.")
    return lines.join("\n")
  }

  export function clip(text: string, max: number) {
    const one = text.replace(/\s+/g, " ").trim()
    return one.length > max ? `${one.slice(0, max - 1)}…` : one
  }

  /**
   * A short description of a call for the report: the bash command, a file path, a pattern. It is written to the
   * heartbeat on disk, so well-known secret formats in it (a token in a `curl` command) are masked first.
   *
   * @example
   * RecoveryDecide.title("bash", { command: "sleep  30\n" }) // "sleep 30"
   */
  export function title(tool: string, args: unknown): string | undefined {
    if (!args || typeof args !== "object") return undefined
    const a = args as Record<string, unknown>
    const key = ["command", "filePath", "path", "pattern", "url", "description"].find(
      (k) => typeof a[k] === "string" && a[k],
    )
    const text = key ? (a[key] as string) : tool === "task" && typeof a.prompt === "string" ? a.prompt : undefined
    return text === undefined ? undefined : clip(SecuritySecrets.mask(text), 200)
  }
}
