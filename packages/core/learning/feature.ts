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
 * session goes idle (`session.idle`), redacted once more. Rule-based: no model call, ever. Messages of subagent
 * sessions (written by the agent, not the user) and synthetic parts are never examined.
 *
 * Options (`learning` section): `enabled` (default true), `maxLearnings` (kept in the store, default 200).
 */
export namespace Learning {
  export const Config = z.object({
    maxLearnings: z.number().int().min(1).max(10_000).optional().describe("Learnings kept in the store"),
  })

  export type Pending = { kind: LearningDetect.Kind; text: string; source: LearningStore.Source }
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
    /** Subagent sessions: their "user" messages are the parent agent's prompts. */
    const children = new Set<string>()

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

    return {
      tool: LearningTools.create(store, { role: () => LocalState.role(host) }),
      "chat.message": async (
        input: { sessionID: string; messageID?: string },
        output: { message: { id?: string; sessionID?: string }; parts: DiscoveryHooks.Part[] },
      ) => {
        try {
          if (children.has(input.sessionID)) return
          const text = output.parts
            .filter((p) => p.type === "text" && !p.synthetic && !p.ignored && typeof p.text === "string")
            .map((p) => p.text)
            .join("\n")
          const found = LearningDetect.detect(text)
          if (!found?.text) return
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
      event: async (input: { event: { type: string; properties?: any } }) => {
        const { type, properties = {} } = input.event
        if ((type === "session.created" || type === "session.updated") && properties.info?.parentID)
          children.add(properties.info.id)
        // session.status (idle) comes just before session.idle: the earliest moment, before `opencode run` can exit.
        const idle = type === "session.idle" || (type === "session.status" && properties.status?.type === "idle")
        if (idle && typeof properties.sessionID === "string") flush(properties.sessionID)
        if (type === "session.deleted" && properties.info?.id) {
          pending.delete(properties.info.id)
          children.delete(properties.info.id)
        }
      },
    }
  },
}
