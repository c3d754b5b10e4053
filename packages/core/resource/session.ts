import { ResourceOutput } from "./output"
import type { Resource } from "./schema"

/**
 * A session's resources, derived from its message history — never kept as separate state, so compaction, pruning,
 * reverts or a restart cannot leave phantom entries.
 *
 * Rules (turns are the user messages the model sees, after the last compaction):
 * - each completed, not compacted `resource-load` part loads the ids in its header (and re-activates others);
 * - a completed `resource-release` part releases the ids in its `released` list: their content leaves what the model
 *   is sent from the next request on, and they count as pruned once a later turn starts;
 * - with `autoFlagAfterMessage`, a resource loaded (or re-activated) in turn k is flagged when turn k+1 starts and
 *   pruned when the session goes idle after turn k+1 — i.e. for every request of turn k+2 onwards.
 * Each load is judged on its own: once a load's content is removed it stays removed; loading again adds new content.
 * The history therefore changes only when something is released or pruned, never on every turn, which keeps
 * provider prompt caches warm.
 *
 * @example
 * const view = SessionView.derive(messages, { autoFlagAfterMessage: true })
 * view.current("git-ops")?.status // "active" | "flagged" | "released" | "pruned"
 */
export namespace SessionView {
  /** The parts of OpenCode's message shape the loader reads (structural: no OpenCode import). */
  export type ToolState = {
    status: string
    input?: Record<string, unknown>
    output?: string
    metadata?: Record<string, unknown>
    time?: { start?: number; end?: number; compacted?: number }
  }
  export type Part = {
    id?: string
    type: string
    tool?: string
    callID?: string
    state?: ToolState
    text?: string
    synthetic?: boolean
  }
  export type Message = {
    info: {
      id: string
      sessionID?: string
      role: string
      parentID?: string
      summary?: unknown
      finish?: string
      time?: { created?: number }
    }
    parts: Part[]
  }

  export const LOAD_TOOL = "resource-load"
  export const RELEASE_TOOL = "resource-release"

  export type Instance = {
    id: string
    nonce: string
    /** Turn (1-based user message count) of the load. */
    turn: number
    /** Last turn the resource was loaded or re-activated in. */
    touched: number
    loadedAt: number
    messageID: string
    callID?: string
    size: number
    includeReferences: boolean
    /** The resource this one was loaded for, when it came in as a reference. */
    via?: string
    released?: { at: number; turn: number }
    status: Resource.Status
    flaggedAt?: number
    prunedAt?: number
  }

  /** Something done in this process that the stored history may not show yet (parallel calls in one step). */
  export type Pending =
    | { kind: "load"; nonce: string; output: string; at: number; messageID: string }
    | { kind: "release"; released: string[]; at: number; messageID: string; key: string }

  export type View = {
    turn: number
    instances: Instance[]
    /** The latest load of an id (whatever its status), or undefined when never loaded in the visible history. */
    current(id: string): Instance | undefined
    /** Loads whose content the model still sees (active or flagged), one per id. */
    inContext(): Instance[]
    /** Per load nonce, the ids whose content must be replaced by a stub. */
    removals(): Map<string, Map<string, "released" | "pruned">>
    /** The pending entries the history does not show yet. */
    unseen: Pending[]
  }

  /** The messages the model sees: from the last completed compaction on (the compaction request itself included). */
  export function visible(messages: Message[]): Message[] {
    const completed = new Set<string>()
    for (let i = messages.length - 1; i >= 0; i--) {
      const msg = messages[i]
      if (msg.info.role === "user" && completed.has(msg.info.id) && msg.parts.some((p) => p.type === "compaction"))
        return messages.slice(i)
      if (msg.info.role === "assistant" && msg.info.summary === true && msg.info.finish && msg.info.parentID)
        completed.add(msg.info.parentID)
    }
    return messages
  }

  function isTurn(msg: Message) {
    return msg.info.role === "user" && !msg.parts.some((p) => p.type === "compaction")
  }

  /** The ids a completed `resource-release` result says it released. */
  export function releasedIds(output: string | undefined): string[] {
    if (!output) return []
    try {
      const parsed = JSON.parse(output)
      return Array.isArray(parsed?.released) ? parsed.released.filter((x: unknown) => typeof x === "string") : []
    } catch {
      return []
    }
  }

  export function derive(
    messages: Message[],
    config: Pick<Resource.Config, "autoFlagAfterMessage">,
    pending: Pending[] = [],
  ): View {
    const msgs = visible(messages)
    const instances: Instance[] = []
    const latest = new Map<string, Instance>()
    const turnStart: number[] = [0]
    const seenNonces = new Set<string>()
    const seenReleases = new Set<string>()
    let turn = 0

    const applyLoad = (output: string, at: number, messageID: string, callID?: string) => {
      const head = ResourceOutput.header(output)
      if (!head) return
      seenNonces.add(head.nonce)
      for (const id of head.loaded) {
        const instance: Instance = {
          id,
          nonce: head.nonce,
          turn,
          touched: turn,
          loadedAt: at,
          messageID,
          callID,
          size: ResourceOutput.sectionSize(output, id, head.nonce) ?? 0,
          includeReferences: head.refs,
          via: id === head.id ? undefined : head.id,
          status: "active",
        }
        instances.push(instance)
        latest.set(id, instance)
      }
      for (const id of head.reactivated) {
        const instance = latest.get(id)
        if (instance && !instance.released) instance.touched = turn
      }
    }
    /** `before`: only loads that happened before `at` (pending releases are applied after the whole history). */
    const applyRelease = (ids: string[], at: number, before = false) => {
      for (const id of ids) {
        const instance = latest.get(id)
        if (!instance || instance.released || (before && instance.loadedAt > at)) continue
        instance.released = { at, turn }
      }
    }

    for (const msg of msgs) {
      if (isTurn(msg)) {
        turn++
        turnStart[turn] = msg.info.time?.created ?? 0
      }
      for (const part of msg.parts) {
        if (part.type !== "tool" || part.state?.status !== "completed" || part.state.time?.compacted) continue
        const at = part.state.time?.end ?? msg.info.time?.created ?? 0
        if (part.tool === LOAD_TOOL) applyLoad(part.state.output ?? "", at, msg.info.id, part.callID)
        if (part.tool === RELEASE_TOOL) {
          const ids = releasedIds(part.state.output)
          seenReleases.add(releaseKey(msg.info.id, ids))
          applyRelease(ids, at)
        }
      }
    }
    const unseen: Pending[] = []
    for (const p of pending) {
      if (p.kind === "load" && !seenNonces.has(p.nonce)) {
        unseen.push(p)
        applyLoad(p.output, p.at, p.messageID)
      }
      if (p.kind === "release" && !seenReleases.has(p.key)) {
        unseen.push(p)
        applyRelease(p.released, p.at, true)
      }
    }

    for (const instance of instances) {
      if (instance.released) {
        instance.status = turn > instance.released.turn ? "pruned" : "released"
        if (instance.status === "pruned") instance.prunedAt = turnStart[instance.released.turn + 1]
      } else if (config.autoFlagAfterMessage && turn > instance.touched) {
        instance.flaggedAt = turnStart[instance.touched + 1]
        if (turn > instance.touched + 1) {
          instance.status = "pruned"
          instance.prunedAt = turnStart[instance.touched + 2]
        } else instance.status = "flagged"
      }
    }

    return {
      turn,
      instances,
      unseen,
      current: (id) => latest.get(id),
      inContext: () => [...latest.values()].filter((i) => i.status === "active" || i.status === "flagged"),
      removals() {
        const out = new Map<string, Map<string, "released" | "pruned">>()
        for (const i of instances) {
          if (i.status !== "released" && i.status !== "pruned") continue
          let gone = out.get(i.nonce)
          if (!gone) out.set(i.nonce, (gone = new Map()))
          gone.set(i.id, i.released ? "released" : "pruned")
        }
        return out
      },
    }
  }

  /** The key a pending release is recognised by once it appears in the history. */
  export function releaseKey(messageID: string, released: string[]) {
    return `${messageID}:${released.join(",")}`
  }
}
