import z from "zod"
import type { BuiltinFeature } from "../builtins/feature"
import { DiscoveryHooks } from "../discovery/hooks"
import { validSection } from "../options"
import { errorMessage } from "../util/error"
import { LearningDetect } from "./detect"
import { LocalState } from "./local"
import { LearningStore } from "./store"
import { LearningTools } from "./tools"

/**
 * Session learning: each user message is examined when it arrives (`chat.message`; the security layer has redacted
 * its parts by then), what it teaches is held for the session, and written to the project's learnings when the
 * session goes idle (`session.idle`), redacted once more. Rule-based: no model call, ever.
 *
 * Only a user's message in a top-level session makes a learning, and that is decided from what OpenCode says, not from
 * what this process happened to see: before a learning is held, the host is asked for the session's record
 * (`host.sessions.get`), and a session with a `parentID` (a subagent's, whose "user" messages are the agent's prompts,
 * wherever and whenever it was created), a session the host does not know or cannot be asked about, and a host
 * without session records give nothing (fail closed). A session the agent named in a tool call's arguments (the
 * `task` tool's `task_id` resumes any session, a top-level one too, and sends the agent's prompt into it as a user
 * message) gives nothing for the rest of the process. Synthetic and ignored parts (OpenCode's file and agent-mention
 * notes, the continuation and recovery notes of these built-ins) are never examined.
 *
 * Only what the user typed makes a learning. A command (`/lint`, `opencode run --command lint`) reaches
 * `chat.message` as its template expanded into ordinary text parts, and a template is a file under `.opencode/`
 * the agent may have written: for such a message only the command's arguments (from `command.execute.before`, which
 * both OpenCode 1.2.15 and 1.18 call just before they create the message) are examined. The next message of the
 * session with text or a subtask is the command's; any later part whose text is the expansion's is left out too.
 *
 * Options (`learning` section): `enabled` (default true), `maxLearnings` (kept in the store, default 200).
 */
export namespace Learning {
  export const Config = z.object({
    maxLearnings: z.number().int().min(1).max(10_000).optional().describe("Learnings kept in the store"),
  })

  export type Pending = { kind: LearningDetect.Kind; text: string; source: LearningStore.Source }

  /**
   * A command run in a session whose message has not been seen yet: what the user typed after it, and the parts
   * array OpenCode passed to `command.execute.before` (the expansion as every hook left it; OpenCode sends that array).
   */
  export type Expansion = { arguments: string; parts: readonly { type?: string; text?: unknown }[] }

  /** The texts of an expansion's text parts. */
  export function expansionTexts(expansion: Expansion): string[] {
    return expansion.parts.flatMap((p) => (p?.type === "text" && typeof p.text === "string" ? [p.text] : []))
  }
}

/** Commands remembered per session, waiting or seen. */
const EXPANSIONS_KEPT = 8

/** A session id in a tool call's arguments (OpenCode's ids: `ses_` and letters and digits). */
const SESSION_ID = /^ses_[A-Za-z0-9_-]+$/

/** The session ids a tool call's arguments name (top-level string values and strings in top-level arrays). */
function sessionIdsIn(args: unknown): string[] {
  if (!args || typeof args !== "object") return []
  return Object.values(args as Record<string, unknown>)
    .flatMap((v) => (Array.isArray(v) ? v : [v]))
    .filter((v): v is string => typeof v === "string" && SESSION_ID.test(v.trim()))
    .map((v) => v.trim())
}

export const LearningFeature: BuiltinFeature = {
  id: "session-learning",
  section: "learning",
  async init({ options, log, host }) {
    const config = validSection(Learning.Config, options, "learning", log)
    const root = LocalState.root(host.directory, host.worktree)
    const store = () => LearningStore.open(root, { max: config.maxLearnings })
    const redact = LocalState.redactor(host)
    const pending = new Map<string, Learning.Pending[]>()
    /** Sessions whose "user" messages are not the user's: subagent sessions (known by their parentID) and sessions
     * the agent named in a tool call. Never a source of learnings. */
    const agents = new Set<string>()
    /** Sessions the host said are top-level (a session's parent never changes). */
    const topLevel = new Set<string>()
    const sessions = host.sessions
    if (!sessions?.get)
      log.warn(
        "session learning needs the host's session records (sessions.get) to tell the user's sessions from subagent sessions: nothing will be learned",
      )
    /** Per session: commands whose message is still to come, oldest first. */
    const commands = new Map<string, Learning.Expansion[]>()
    /** Per session: the last expansions seen (bounded), whose text is never examined wherever it turns up. */
    const expanded = new Map<string, Learning.Expansion[]>()

    /** Synchronous, so the write is done before OpenCode (e.g. `opencode run`) can exit after the idle event. */
    function flush(sessionID: string) {
      const items = pending.get(sessionID)
      if (!items?.length) return
      pending.delete(sessionID)
      try {
        const { added, counted, movedAside, skipped } = store().record(
          items.map((i) => ({
            kind: i.kind,
            text: redact(i.text),
            source: { ...i.source, role: LocalState.role(host) },
          })),
        )
        for (const warning of skipped ?? []) log.warn("learnings: bad entry", { warning })
        if (movedAside) log.warn("learnings: the file could not be used; it was kept aside", { keptAt: movedAside })
        if (added.length || counted.length)
          log.info("learnings recorded", {
            sessionID,
            added: added.map((l) => l.id),
            counted: counted.map((l) => l.id),
          })
      } catch (error) {
        log.error("learnings could not be recorded", { sessionID, error: errorMessage(error) })
      }
    }

    /**
     * Whether messages of `sessionID` are the user's: the host knows it as a top-level session and the agent never
     * named it. False when that cannot be established (no session records, unknown session, the host failed).
     */
    async function usersSession(sessionID: string): Promise<boolean> {
      if (agents.has(sessionID)) return false
      if (topLevel.has(sessionID)) return true
      if (!sessions?.get) return false
      let info: Awaited<ReturnType<typeof sessions.get>>
      try {
        info = await sessions.get(sessionID)
      } catch (error) {
        log.warn("learning: the session's record could not be read; nothing learned from this message", {
          sessionID,
          error: errorMessage(error),
        })
        return false
      }
      if (!info || info.id !== sessionID) return false
      if (info.parentID) {
        agents.add(sessionID)
        return false
      }
      topLevel.add(sessionID)
      return !agents.has(sessionID)
    }

    return {
      tool: LearningTools.create(store, { role: () => LocalState.role(host) }),
      "chat.message": async (
        input: { sessionID: string; messageID?: string },
        output: { message: { id?: string; sessionID?: string }; parts: DiscoveryHooks.Part[] },
      ) => {
        try {
          if (agents.has(input.sessionID)) return
          const typed = output.parts.filter(
            (p) => p.type === "text" && !p.synthetic && !p.ignored && typeof p.text === "string",
          )
          const waiting = commands.get(input.sessionID)
          let text: string
          if (waiting?.length && (typed.length || output.parts.some((p) => p.type === "subtask"))) {
            // The command's message: its text is the template's, only the arguments are the user's.
            const expansion = waiting.shift()!
            if (!waiting.length) commands.delete(input.sessionID)
            const seen = expanded.get(input.sessionID) ?? []
            seen.push(expansion)
            expanded.set(input.sessionID, seen.slice(-EXPANSIONS_KEPT))
            text = expansion.arguments
          } else {
            const template = new Set((expanded.get(input.sessionID) ?? []).flatMap(Learning.expansionTexts))
            text = typed
              .map((p) => p.text as string)
              .filter((t) => !template.has(t))
              .join("\n")
          }
          const found = LearningDetect.detect(text)
          if (!found?.text) return
          // Asked only when there is something to learn: most messages teach nothing.
          if (!(await usersSession(input.sessionID))) return
          const list = pending.get(input.sessionID) ?? []
          list.push({
            kind: found.kind,
            text: found.text,
            source: {
              sessionID: input.sessionID,
              messageID: output.message?.id ?? input.messageID,
              at: Date.now(),
              rule: found.rule,
            },
          })
          pending.set(input.sessionID, list)
        } catch (error) {
          log.error("learning: chat.message failed", { error: errorMessage(error) })
        }
      },
      "command.execute.before": async (
        input: { command: string; sessionID: string; arguments?: string },
        output: { parts: Learning.Expansion["parts"] },
      ) => {
        if (agents.has(input.sessionID)) return
        const list = commands.get(input.sessionID) ?? []
        list.push({ arguments: input.arguments ?? "", parts: output.parts })
        commands.set(input.sessionID, list.slice(-EXPANSIONS_KEPT))
      },
      // The agent names a session in a call (the task tool's task_id): that session's next "user" message is the
      // agent's prompt, whatever the session is. Marked before the call runs.
      "tool.execute.before": async (_input: { tool: string; sessionID: string }, output: { args?: unknown }) => {
        for (const id of sessionIdsIn(output?.args)) agents.add(id)
      },
      event: async (input: { event: { type: string; properties?: any } }) => {
        const { type, properties = {} } = input.event
        if ((type === "session.created" || type === "session.updated") && properties.info?.parentID)
          agents.add(properties.info.id)
        // session.status (idle) comes just before session.idle: the earliest moment, before `opencode run` can exit.
        const idle = type === "session.idle" || (type === "session.status" && properties.status?.type === "idle")
        if (idle && typeof properties.sessionID === "string") flush(properties.sessionID)
        if (type === "session.deleted" && properties.info?.id) {
          pending.delete(properties.info.id)
          agents.delete(properties.info.id)
          topLevel.delete(properties.info.id)
          commands.delete(properties.info.id)
          expanded.delete(properties.info.id)
        }
      },
    }
  },
}
