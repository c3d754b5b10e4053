import { errorMessage } from "../util/error"
import type { ResourceLoader } from "./loader"
import { ResourceOutput } from "./output"
import { SessionView } from "./session"

/**
 * The resource loader's lifecycle, as handlers named after OpenCode's hooks. The external plugin returns them as
 * plugin hooks; the fork calls the same handlers at its native seams. Inputs are structural, so no OpenCode type is
 * imported. Handlers never throw: a failure is logged and the conversation goes on unpruned.
 *
 * @example
 * const hooks = ResourceHooks.create(loader)
 * await hooks["experimental.chat.messages.transform"]({}, { messages }) // released content replaced by stubs
 */
export namespace ResourceHooks {
  export type Event = { type: string; properties?: Record<string, any> }

  export function create(loader: ResourceLoader.Loader) {
    const log = loader.host.log
    const guard = async (name: string, fn: () => Promise<void>) => {
      try {
        await fn()
      } catch (error) {
        log.error(`resource loader: ${name} failed`, { error: errorMessage(error) })
      }
    }

    return {
      /** A new user message: earlier loads become flagged (derived from the history; logged here). */
      "chat.message": async (input: { sessionID: string; messageID?: string }, _output?: unknown) =>
        guard("chat.message", async () => {
          const view = await loader.view(input.sessionID)
          const flagged = view.inContext().filter((i) => i.status === "flagged")
          if (flagged.length)
            log.debug("resources flagged for pruning", { sessionID: input.sessionID, ids: flagged.map((i) => i.id) })
        }),

      /** After `resource-load`: mark the result prunable and record what it loaded in the part's metadata. */
      "tool.execute.after": async (
        input: { tool: string; sessionID: string; callID: string },
        output: { title: string; output: string; metadata: any },
      ) =>
        guard("tool.execute.after", async () => {
          if (input.tool !== SessionView.LOAD_TOOL) return
          const head = ResourceOutput.header(output.output)
          if (!head) return
          output.metadata = {
            ...(output.metadata ?? {}),
            prunable: true,
            retentionPolicy: loader.config.autoFlagAfterMessage ? "release-or-next-turn" : "until-released",
            resourceLoader: { nonce: head.nonce, loaded: head.loaded, reactivated: head.reactivated },
          }
          if (!output.title) output.title = [...head.loaded, ...head.reactivated].join(", ")
        }),

      /** Session lifecycle and index invalidation. */
      event: async (input: { event: Event }) =>
        guard("event", async () => {
          const { type, properties = {} } = input.event
          if (type === "session.created" && properties.info?.id) loader.session(properties.info.id)
          if (type === "session.deleted" && properties.info?.id) loader.forget(properties.info.id)
          if (type === "session.idle" && properties.sessionID) {
            // Pruning is derived from the history; idle is when flagged and released resources take that effect.
            const view = await loader.view(properties.sessionID)
            const due = view.inContext().filter((i) => i.status === "flagged")
            const released = view.instances.filter((i) => i.status === "released")
            if (due.length || released.length)
              log.info("resources pruned from the next request", {
                sessionID: properties.sessionID,
                ids: [...due, ...released].map((i) => i.id),
              })
          }
          if ((type === "file.edited" || type === "file.watcher.updated") && typeof properties.file === "string")
            loader.invalidate(properties.file)
        }),

      /**
       * Before the history becomes model messages: every released or pruned load's content is replaced by a
       * one-line stub. Runs on every request and yields the same text until something else is released.
       */
      "experimental.chat.messages.transform": async (_input: unknown, output: { messages: SessionView.Message[] }) =>
        guard("experimental.chat.messages.transform", async () => {
          const sessionID = output.messages.find((m) => m.info.sessionID)?.info.sessionID
          const pending = sessionID ? (loader.sessions.get(sessionID)?.pending ?? []) : []
          const removals = SessionView.derive(output.messages, loader.config, pending).removals()
          if (removals.size === 0) return
          for (const msg of output.messages) {
            for (const part of msg.parts) {
              if (part.type !== "tool" || part.tool !== SessionView.LOAD_TOOL) continue
              const state = part.state
              if (state?.status !== "completed" || !state.output) continue
              const head = ResourceOutput.header(state.output)
              const gone = head && removals.get(head.nonce)
              if (gone) state.output = ResourceOutput.remove(state.output, head.nonce, gone)
            }
          }
        }),

      /** Compaction: still-active resources are carried into the summary (content within the budget, else ids). */
      "experimental.session.compacting": async (input: { sessionID: string }, output: { context: string[] }) =>
        guard("experimental.session.compacting", async () => {
          const view = await loader.view(input.sessionID)
          const live = view.inContext()
          if (live.length === 0) return
          let budget = loader.config.compactionBudget
          const carried: string[] = []
          const listed: string[] = []
          for (const instance of live) {
            const text = budget > 0 ? await loader.contentOf(instance.id) : undefined
            if (text !== undefined && Buffer.byteLength(text) <= budget) {
              budget -= Buffer.byteLength(text)
              carried.push(`### ${instance.id}\n\n${text}`)
            } else listed.push(instance.id)
          }
          output.context.push(
            [
              "Project resources were loaded with resource-load and were still in use when this conversation was",
              "compacted. After compaction they are no longer loaded: keep what the summary needs from them, and",
              "tell the user that resource-load <id> brings one back.",
              ...(carried.length ? ["", ...carried] : []),
              ...(listed.length ? ["", `Also in use (not carried, over the size budget): ${listed.join(", ")}`] : []),
            ].join("\n"),
          )
        }),
    }
  }
}
