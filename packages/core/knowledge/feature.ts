import z from "zod"
import type { BuiltinFeature } from "../builtins/feature"
import { DiscoveryHooks } from "../discovery/hooks"
import { LocalState } from "../learning/local"
import { LearningStore } from "../learning/store"
import { validSection } from "../options"
import { SessionView } from "../resource/session"
import { errorMessage } from "../util/error"
import { KnowledgeBuild } from "./build"

/**
 * Knowledge injection: at the first user message of a session, and at the first one after each compaction, one
 * synthetic text part is added to the message (`chat.message`) with the project's learnings and the knowledge-base
 * articles relevant to the prompt, within a token budget. OpenCode stores the part with the message, so every later
 * request of the session carries the same bytes at the same place: the request prefix stays cacheable. Whether a
 * session already has it is derived from its history (a part opening with `<project-knowledge>` in a user message
 * after the last compaction), so a restart does not inject twice.
 *
 * Options (`knowledge` section): `budget` (tokens, default 1000; 0 disables), `maxLearnings` (default 5),
 * `learningsBudget` (tokens, default 500).
 */
export namespace Knowledge {
  export const Config = z.object({
    budget: z.number().int().min(0).max(100_000).optional().describe("Tokens of the injected block (0: none)"),
    maxLearnings: z.number().int().min(0).max(50).optional().describe("Learnings injected at most"),
    learningsBudget: z.number().int().min(0).max(100_000).optional().describe("Tokens of the learnings at most"),
  })
  export const DEFAULTS = { budget: 1000, maxLearnings: 5, learningsBudget: 500 } as const

  type Message = { info: { role?: string; [k: string]: unknown }; parts: { type: string; text?: string }[] }

  /** True when a user message after the session's last compaction carries the knowledge block. */
  export function injectedSinceCompaction(messages: readonly Message[]): boolean {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]
      if (m.info.role !== "user") continue
      if (m.parts.some((p) => p.type === "text" && p.text?.startsWith(KnowledgeBuild.OPEN))) return true
      if (m.parts.some((p) => p.type === "compaction")) return false
    }
    return false
  }

  /**
   * Before the history becomes model messages: an article of a knowledge block that a later `resource-release`
   * released is replaced by one line, as the resource loader does with loaded content. Nothing changes until a
   * release, so the request prefix stays the same from one request to the next.
   *
   * @example
   * Knowledge.prune(messages) // the block's git-operations article is now "- git-operations: released (…)"
   */
  export function prune(messages: readonly SessionView.Message[]): void {
    const released = new Set<string>()
    for (let i = messages.length - 1; i >= 0; i--) {
      const parts = messages[i].parts
      for (let j = parts.length - 1; j >= 0; j--) {
        const part = parts[j]
        if (part.type === "tool" && part.tool === SessionView.RELEASE_TOOL && part.state?.status === "completed")
          for (const id of SessionView.releasedIds(part.state.output)) released.add(id)
        if (
          released.size &&
          messages[i].info.role === "user" &&
          part.type === "text" &&
          part.text?.startsWith(KnowledgeBuild.OPEN)
        )
          part.text = KnowledgeBuild.withoutArticles(part.text, released)
      }
    }
  }
}

export const KnowledgeFeature: BuiltinFeature = {
  id: "knowledge-injection",
  section: "knowledge",
  async init({ options, log, host }) {
    const config = { ...Knowledge.DEFAULTS, ...validSection(Knowledge.Config, options, "knowledge", log) }
    const root = LocalState.root(host.directory, host.worktree)
    const redact = LocalState.redactor(host)
    /** Article bodies are files' text: filtered as `resource-load`'s output is (segments the role may not read). */
    const redactBody = LocalState.fileRedactor(host)
    /** Sessions whose current stretch (since the start or the last compaction) has been decided. */
    const decided = new Set<string>()
    /** The last problem of each source said (said again only when it changes). */
    const said = new Map<string, string>()
    const report = (source: string, error: unknown) => {
      const problem = errorMessage(error)
      if (said.get(source) === problem) return
      said.set(source, problem)
      log.warn(`knowledge: ${source} left out of the injected knowledge`, { error: problem })
    }

    /**
     * The learnings a reader of this role may be given, or none when learnings.json cannot be read: the two sources
     * fail apart, so a learnings file cut short (or written by a newer version) never takes the knowledge-base
     * articles out of the block too; its problem is logged once, naming the file.
     */
    const learnings = (): LearningStore.Learning[] => {
      try {
        const store = LearningStore.open(root)
        const loaded = store.load()
        // A file the built-ins did not write (LocalSeal) is named once, and gives nothing.
        if (loaded.skipped.length) report("learnings", new Error(loaded.skipped.join("; ")))
        else said.delete("learnings")
        return store.sort(loaded.learnings).filter((l) => LearningStore.visibleTo(l, LocalState.role(host)))
      } catch (error) {
        report("learnings", error)
        return []
      }
    }
    /** The project's resources, or none when they cannot be listed (the learnings are still injected). */
    const resources = async () => {
      try {
        const list = host.resources ? [...(await host.resources())] : []
        said.delete("resources")
        return list
      } catch (error) {
        report("resources", error)
        return []
      }
    }

    return {
      "chat.message": async (
        input: { sessionID: string; messageID?: string },
        output: { message: { id: string; sessionID?: string }; parts: DiscoveryHooks.Part[] },
      ) => {
        try {
          if (config.budget <= 0 || decided.has(input.sessionID)) return
          if (output.parts.some((p) => p.type === "text" && p.text?.startsWith(KnowledgeBuild.OPEN))) return
          if (host.messages) {
            const history = await host.messages(input.sessionID).catch(() => [])
            if (Knowledge.injectedSinceCompaction(history as never)) {
              decided.add(input.sessionID)
              return
            }
          }
          decided.add(input.sessionID)
          await LocalState.ready(host)
          const prompt = output.parts
            .filter((p) => p.type === "text" && !p.synthetic && !p.ignored && typeof p.text === "string")
            .map((p) => p.text)
            .join("\n")
          const text = await KnowledgeBuild.block({
            prompt,
            learnings: learnings(),
            resources: await resources(),
            budget: config.budget,
            maxLearnings: config.maxLearnings,
            learningsBudget: config.learningsBudget,
            content: (r) => KnowledgeBuild.readBody(root, host, r, redactBody),
          })
          if (!text) return
          output.parts.push({
            id: DiscoveryHooks.partID(output.parts.map((p) => p.id)),
            sessionID: output.message.sessionID ?? input.sessionID,
            messageID: output.message.id,
            type: "text",
            text: redact(text),
            synthetic: true,
          })
        } catch (error) {
          log.error("knowledge: chat.message failed", { error: errorMessage(error) })
        }
      },
      "experimental.chat.messages.transform": async (_input: unknown, output: { messages: SessionView.Message[] }) => {
        try {
          Knowledge.prune(output.messages)
        } catch (error) {
          log.error("knowledge: messages.transform failed", { error: errorMessage(error) })
        }
      },
      event: async (input: { event: { type: string; properties?: any } }) => {
        const { type, properties = {} } = input.event
        if (type === "session.compacted" && typeof properties.sessionID === "string")
          decided.delete(properties.sessionID)
        if (type === "session.deleted" && properties.info?.id) decided.delete(properties.info.id)
      },
    }
  },
}
