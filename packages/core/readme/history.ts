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
      output?: string
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
   * True when a completed `read` result shows the whole file: it starts at the first line (`offset` absent, 0 or 1)
   * and OpenCode did not cut it (1.2.15 through 1.18 set `metadata.truncated` when lines follow — a `limit`, the
   * 2,000-line default or the 50 KB cap — and end every line they shorten with `... (line truncated to N chars)`).
   *
   * @example
   * ReadmeHistory.whole({ type: "tool", tool: "read", state: { status: "completed", input: { filePath: "a/README.md", offset: 40 } } }) // false
   */
  export function whole(part: Part): boolean {
    const offset = Number(part.state?.input?.offset ?? 1)
    if (!Number.isFinite(offset) || offset > 1) return false
    if (part.state?.metadata?.truncated === true) return false
    const output = part.state?.output
    if (typeof output !== "string") return true
    for (const line of output.split("\n")) {
      // 1.2.15 writes the first line right after `<content>`, 1.18 on a line of its own.
      const m = /^(?:<content>)?\d+: ([^]*)\.\.\. \(line truncated to (\d+) chars\)$/.exec(line)
      if (m && m[1].length === Number(m[2])) return false
    }
    return true
  }

  /**
   * The README paths (absolute) whose content the model still sees in the session: from the `readme` metadata of
   * completed tool results (an injected block, cut to its budget with a pointer to the file, counts), and from `read`
   * calls of the README itself that showed all of it (`whole`: a read from a later line, one whose `limit` stops
   * before the end, or one OpenCode cut does not count), among the visible, not compacted parts. `directory` resolves relative `filePath`
   * arguments.
   */
  export function inContext(messages: Message[], directory: string): Set<string> {
    const seen = new Set<string>()
    for (const msg of visible(messages)) {
      for (const part of msg.parts) {
        if (part.type !== "tool" || part.state?.status !== "completed" || part.state.time?.compacted) continue
        const listed = part.state.metadata?.[KEY]
        if (Array.isArray(listed)) for (const p of listed) if (typeof p === "string") seen.add(p)
        const file = part.tool === "read" ? part.state.input?.filePath : undefined
        if (typeof file === "string" && /readme/i.test(file) && whole(part)) seen.add(path.resolve(directory, file))
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
