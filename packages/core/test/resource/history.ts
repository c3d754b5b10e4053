import { ResourceOutput } from "../../resource/output"
import type { Resource } from "../../resource/schema"
import type { SessionView } from "../../resource/session"

/**
 * Builds message histories in OpenCode's `{ info, parts }` shape, with `resource-load` outputs rendered by the real
 * renderer, for tests of everything derived from a session's history.
 */
export function history(sessionID = "ses_test") {
  let n = 0
  const messages: SessionView.Message[] = []
  const next = () => `msg_${String(++n).padStart(4, "0")}`

  const meta = (id: string, size = 100): Resource.Metadata => ({
    id,
    type: "knowledge-base",
    path: `/p/.opencode/knowledge-base/${id}.md`,
    relativePath: `.opencode/knowledge-base/${id}.md`,
    name: id,
    domain: "common",
    tags: [],
    references: [],
    referencedBy: [],
    size,
    lastModified: 0,
  })

  const tool = (name: string, output: string, extra: Partial<SessionView.ToolState> = {}): SessionView.Part => ({
    id: `prt_${n}_${name}`,
    type: "tool",
    tool: name,
    callID: `call_${n}`,
    state: {
      status: "completed",
      input: {},
      output,
      metadata: {},
      time: { start: n * 1000, end: n * 1000 + 1 },
      ...extra,
    },
  })

  return {
    messages,
    meta,
    user(text = "hello") {
      const id = next()
      messages.push({
        info: { id, sessionID, role: "user", time: { created: n * 1000 } },
        parts: [{ type: "text", text }],
      })
      return id
    },
    assistant(...parts: SessionView.Part[]) {
      const id = next()
      messages.push({ info: { id, sessionID, role: "assistant", time: { created: n * 1000 } }, parts })
      return id
    },
    /** A rendered `resource-load` output loading `ids` (the first is the requested one). */
    loadOutput(ids: string[], options: { reactivated?: string[]; nonce?: string; refs?: boolean } = {}) {
      return ResourceOutput.render({
        nonce: options.nonce ?? ResourceOutput.nonce(),
        id: ids[0] ?? options.reactivated?.[0] ?? "",
        refs: options.refs ?? ids.length > 1,
        sections: ids.map((id) => ({ metadata: meta(id), content: `CONTENT OF ${id}` })),
        reactivated: options.reactivated ?? [],
        notes: [],
      })
    },
    load(ids: string[], options: { reactivated?: string[]; compacted?: boolean } = {}) {
      const output = this.loadOutput(ids, options)
      return tool("resource-load", output, options.compacted ? { time: { start: 1, end: 2, compacted: 3 } } : {})
    },
    release(ids: string[]) {
      return tool("resource-release", JSON.stringify({ released: ids }))
    },
    tool,
  }
}
