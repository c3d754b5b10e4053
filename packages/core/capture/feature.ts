import z from "zod"
import type { BuiltinFeature } from "../builtins/feature"
import { LocalState } from "../learning/local"
import { validSection } from "../options"
import { errorMessage } from "../util/error"
import type { Logger } from "../util/log"
import { CaptureStore } from "./store"
import { CaptureTools } from "./tools"

/**
 * Tool-execution capture: every tool call that ends (built-in, plugin, MCP, a subagent's `task` and the calls inside
 * the subagent's session) is appended once to the project's capture store (see `CaptureStore`).
 *
 * - A call that succeeds is taken at `tool.execute.after`. The composition root lists this feature before the
 *   security layer, and outbound hooks run in reverse order, so this hook runs after the security layer's and sees the
 *   output, title and (MCP) content as `scanAndRedact` left them. Arguments are redacted here (nothing else redacts
 *   them).
 * - A call that fails never reaches `tool.execute.after` (OpenCode 1.2.15 through 1.18.x; 1.18 may report a failed
 *   subtask's end with no result, which the composition drops): it is taken from the `message.part.updated` event
 *   whose tool part has `state.status: "error"`, marked `status: "error"`, with the error text redacted.
 * - Each call (session and call id) is captured once (the last `Capture.SEEN` calls are remembered).
 * - A capture that fails (an unwritable folder, a full disk) never fails the tool: it is logged once, and once again
 *   when capture works again.
 *
 * Options (`capture` section of `.opencode/opencode-builtins.json`): `enabled` (default true; false switches capture
 * off), `maxBytes`, `maxEntries`, `maxOutputChars`, `segments` (see `CaptureStore.Limits`), `exclude` (tool ids
 * never captured; `capture-list`, the MCP server's reader, never is).
 *
 * @example
 * // .opencode/opencode-builtins.json
 * { "capture": { "maxEntries": 1000, "exclude": ["todowrite"] } }
 */
export namespace Capture {
  export const Config = CaptureStore.Limits.extend({
    exclude: z.array(z.string()).max(200).optional().describe("Tool ids never captured"),
  })
  export type Config = z.infer<typeof Config>

  /**
   * The store limits of a `capture` section (invalid values left to their defaults; `validSection` reports them).
   *
   * @example
   * Capture.limits({ maxEntries: 100, enabled: true }) // { maxEntries: 100 }
   */
  export function limits(section: Record<string, unknown> | undefined): CaptureStore.Limits {
    const limits: Record<string, unknown> = {}
    for (const [key, schema] of Object.entries(CaptureStore.Limits.shape))
      if (section?.[key] !== undefined && schema.safeParse(section[key]).success) limits[key] = section[key]
    return limits as CaptureStore.Limits
  }

  /** Call ids remembered to capture each call once; calls that started and never ended, at most this many. */
  export const SEEN = 4_096

  type Part = {
    type?: string
    callID?: string
    tool?: string
    sessionID?: string
    state?: { status?: string; input?: unknown; error?: unknown; time?: { start?: number; end?: number } }
  }

  /**
   * The capture hooks over one store (the feature's `init` and the tests call this).
   *
   * @example
   * const hooks = Capture.hooks({ store: CaptureStore.open(root), redact: (t) => t, log })
   * await hooks["tool.execute.after"]({ tool: "read", sessionID: "s", callID: "c", args: {} }, { title: "", output: "x" })
   */
  export function hooks(options: {
    store: CaptureStore.Store
    redact: LocalState.Redactor
    log: Logger
    exclude?: readonly string[]
    now?: () => number
    /** Awaited before redacting (the guard's first index of protected files; see `LocalState.ready`). */
    ready?: () => Promise<void>
    /** The security role and policy in force (`LocalState.scope`), stored with each record. */
    scope?: () => string | undefined
  }) {
    const { store, redact, log } = options
    const now = options.now ?? Date.now
    // Reading the captures is never a capture.
    const exclude = new Set([...CaptureTools.IDS, ...(options.exclude ?? [])])
    const seen = new Set<string>()
    const started = new Map<string, number>()
    const parents = new Map<string, string>()
    let failing = false

    const remember = <K, V>(map: Map<K, V> | Set<K>, key: K, value?: V) => {
      if (map instanceof Set) map.add(key)
      else map.set(key, value as V)
      if (map.size > SEEN) map.delete(map.keys().next().value as K)
    }

    const json = (value: unknown) => {
      if (value === undefined) return undefined
      try {
        return redact(typeof value === "string" ? value : (JSON.stringify(value) ?? String(value)))
      } catch {
        return undefined
      }
    }

    function save(input: CaptureStore.Input) {
      try {
        store.append({ ...input, scope: options.scope?.() })
        if (failing) log.info("capture works again", { file: store.file })
        failing = false
      } catch (error) {
        if (!failing)
          log.error("capture failed; tool calls go on uncaptured", { file: store.file, error: errorMessage(error) })
        failing = true
      }
    }

    /** Calls are keyed by session and call id: a call id is the model's, and some providers number calls per response. */
    const keyOf = (sessionID: string | undefined, callID: string) => `${sessionID ?? ""}\u0000${callID}`
    /** True the first time a call is seen ending (captured from now on). */
    function first(sessionID: string | undefined, callID: string | undefined, tool: string) {
      if (!callID || exclude.has(tool)) return false
      const key = keyOf(sessionID, callID)
      if (seen.has(key)) return false
      remember(seen, key)
      return true
    }

    return {
      async "tool.execute.before"(input: { tool: string; sessionID?: string; callID?: string }, _output: unknown) {
        if (input.callID && !exclude.has(input.tool)) remember(started, keyOf(input.sessionID, input.callID), now())
      },
      async "tool.execute.after"(
        input: { tool: string; sessionID?: string; callID?: string; args?: unknown },
        output: { title?: unknown; output?: unknown; content?: unknown } | undefined,
      ) {
        try {
          if (!output || !first(input.sessionID, input.callID, input.tool)) return
          await options.ready?.()
          // MCP tools come with `content` (their result parts) and no `output` at this point.
          const text =
            typeof output.output === "string" ? output.output : (contentText(output.content) ?? output.output)
          save({
            callID: input.callID!,
            sessionID: input.sessionID ?? "",
            parentID: input.sessionID ? parents.get(input.sessionID) : undefined,
            tool: input.tool,
            status: "completed",
            title: typeof output.title === "string" && output.title ? output.title : undefined,
            args: json(input.args),
            // Already redacted by the security layer's hook, which ran before this one.
            output: typeof text === "string" ? text : text === undefined ? undefined : JSON.stringify(text),
            startedAt: started.get(keyOf(input.sessionID, input.callID!)),
            at: now(),
          })
          started.delete(keyOf(input.sessionID, input.callID!))
        } catch (error) {
          log.error("capture: tool.execute.after failed", { error: errorMessage(error) })
        }
      },
      async event(input: { event: { type: string; properties?: any } }) {
        const { type, properties } = input.event
        if (type === "message.part.updated") {
          const part = properties?.part as Part | undefined
          if (part?.type !== "tool" || part.state?.status !== "error") return
          try {
            if (!first(part.sessionID, part.callID, part.tool ?? "")) return
            await options.ready?.()
            save({
              callID: part.callID!,
              sessionID: part.sessionID ?? "",
              parentID: part.sessionID ? parents.get(part.sessionID) : undefined,
              tool: part.tool ?? "",
              status: "error",
              args: json(part.state.input),
              error: json(typeof part.state.error === "string" ? part.state.error : errorMessage(part.state.error)),
              startedAt: part.state.time?.start ?? started.get(keyOf(part.sessionID, part.callID!)),
              at: part.state.time?.end ?? now(),
            })
            started.delete(keyOf(part.sessionID, part.callID!))
          } catch (error) {
            log.error("capture: a failed call could not be captured", { error: errorMessage(error) })
          }
          return
        }
        if ((type === "session.created" || type === "session.updated") && properties?.info?.parentID)
          remember(parents, properties.info.id as string, properties.info.parentID as string)
      },
    }
  }
}

/** The text parts of an MCP result joined (other parts named by type), or undefined when it is not one. */
function contentText(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined
  return content
    .map((part: { type?: unknown; text?: unknown }) =>
      part?.type === "text" && typeof part.text === "string" ? part.text : `[${String(part?.type)}]`,
    )
    .join("\n\n")
}

/**
 * The capture feature (`tool-capture`): listed before the security layer in the composition root, so its
 * `tool.execute.after` sees redacted output (see `Capture`).
 */
export const CaptureFeature: BuiltinFeature = {
  id: "tool-capture",
  section: "capture",
  async init({ options, log, host }) {
    const config = validSection(Capture.Config, options, "capture", log)
    const { exclude, ...limits } = config
    const store = CaptureStore.open(LocalState.root(host.directory, host.worktree), limits)
    return Capture.hooks({
      store,
      redact: LocalState.redactor(host),
      log,
      exclude,
      ready: () => LocalState.ready(host),
      scope: () => LocalState.scope(host),
    })
  },
}
