import path from "path"

/**
 * What the model still sees of a session, read from its stored messages: the READMEs a `read` result carried (in its
 * metadata) or that the model read itself, in tool results that are neither compacted (pruned) nor hidden by a
 * compaction. Never kept as separate state, so compaction resets it: after a completed compaction, what came before
 * its summary is gone unless OpenCode 1.18 kept it as the verbatim tail (`tail_start_id`), which the model still sees.
 *
 * @example
 * ReadmeHistory.inContext(messages, "/repo") // Set { "/repo/pkg/a/README.md" }
 */
export namespace ReadmeHistory {
  /** The metadata key of a `read` result listing the READMEs appended to it (absolute paths). */
  export const KEY = "readme"

  /** The parts of OpenCode's message shape read here (structural; no OpenCode import). */
  export type Part = {
    type: string
    tool?: string
    callID?: string
    /** 1.18: the first message of the verbatim tail a compaction kept. */
    tail_start_id?: string
    state?: {
      status?: string
      input?: Record<string, unknown>
      metadata?: Record<string, unknown>
      time?: { compacted?: number }
    }
  }
  export type Message = {
    info: { id: string; role: string; parentID?: string; summary?: unknown; finish?: string; error?: unknown }
    parts: Part[]
  }

  /**
   * The messages the model is sent, in stored order: everything when no compaction completed; otherwise the last
   * completed compaction's request and what follows it, plus (1.18) the retained tail before it.
   *
   * @example
   * ReadmeHistory.visible([oldTurn, compactionUser, summary, newTurn]) // [compactionUser, summary, newTurn]
   */
  export function visible<M extends Message>(messages: M[]): M[] {
    const completed = new Set<string>()
    for (let i = messages.length - 1; i >= 0; i--) {
      const msg = messages[i]
      if (msg.info.role === "assistant" && msg.info.summary && msg.info.finish && !msg.info.error && msg.info.parentID)
        completed.add(msg.info.parentID)
      if (msg.info.role !== "user" || !completed.has(msg.info.id)) continue
      const part = msg.parts.find((p) => p.type === "compaction")
      if (!part) continue
      const tail = part.tail_start_id ? messages.findIndex((m) => m.info.id === part.tail_start_id) : -1
      return tail >= 0 && tail < i ? messages.slice(tail) : messages.slice(i)
    }
    return messages
  }

  /**
   * The README paths (absolute) whose content the model still sees in the session: from the `readme` metadata of
   * completed tool results, and from `read` calls of the README itself, among the visible, not compacted parts.
   * `directory` resolves relative `filePath` arguments.
   */
  export function inContext(messages: Message[], directory: string): Set<string> {
    const seen = new Set<string>()
    for (const msg of visible(messages)) {
      for (const part of msg.parts) {
        if (part.type !== "tool" || part.state?.status !== "completed" || part.state.time?.compacted) continue
        const listed = part.state.metadata?.[KEY]
        if (Array.isArray(listed)) for (const p of listed) if (typeof p === "string") seen.add(p)
        const file = part.tool === "read" ? part.state.input?.filePath : undefined
        if (typeof file === "string" && /readme/i.test(file)) seen.add(path.resolve(directory, file))
      }
    }
    return seen
  }

  /**
   * The call ids of tool parts stored in a final state, completed or failed (to retire claims the history now
   * answers; a part still running may not show its metadata yet).
   */
  export function settled(messages: Message[]): Set<string> {
    const ids = new Set<string>()
    for (const msg of messages)
      for (const part of msg.parts)
        if (part.callID && (part.state?.status === "completed" || part.state?.status === "error")) ids.add(part.callID)
    return ids
  }
}
