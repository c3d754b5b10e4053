import type { Host, HostModel } from "../host"

/**
 * Which model a tool call runs under and what input it accepts, known without a model call:
 *
 * - OpenCode passes every model it calls, with its capabilities (`capabilities.input.image`/`pdf`, which the
 *   provider configuration's `modalities` set), to `chat.params`; `observe` keeps them by id, and the session's
 *   current model from the user message the request answers.
 * - Failing that (a model never called in this process, a host that does not call `chat.params`), the session's
 *   stored messages name the model, and `Host.models` lists what it accepts.
 *
 * @example
 * const models = LookModels.create(host)
 * models.observe({ sessionID, model, message }) // from chat.params
 * await models.current(sessionID, messageID) // { providerID: "anthropic", modelID: "claude-…", input: { image: true, pdf: true } }
 */
export namespace LookModels {
  export type Ref = { providerID: string; modelID: string }
  export type Known = Ref & { input?: HostModel["input"] }

  export const key = (ref: Ref) => `${ref.providerID}/${ref.modelID}`

  /**
   * "provider/model" as a reference (the model id may hold slashes), or undefined.
   *
   * @example
   * LookModels.parse("openrouter/google/gemini-2.5-flash") // { providerID: "openrouter", modelID: "google/gemini-2.5-flash" }
   */
  export function parse(text: string): Ref | undefined {
    const at = text.indexOf("/")
    if (at <= 0 || at === text.length - 1) return undefined
    return { providerID: text.slice(0, at), modelID: text.slice(at + 1) }
  }

  /** What a model object of OpenCode (or of the SDK's provider list) says it accepts. */
  export function inputOf(model: any): HostModel["input"] | undefined {
    const caps = model?.capabilities?.input
    if (caps && typeof caps === "object") return { image: caps.image === true, pdf: caps.pdf === true }
    const modalities = model?.modalities?.input
    if (Array.isArray(modalities)) return { image: modalities.includes("image"), pdf: modalities.includes("pdf") }
    return undefined
  }

  export type Models = {
    /** `chat.params` input: the model called (with its capabilities) and the user message it answers. */
    observe(input: { sessionID?: string; model?: any; message?: any }): void
    /** The model the session's current step runs, with what it accepts when known. */
    current(sessionID: string, messageID?: string): Promise<Known | undefined>
    /** What `ref` accepts, or undefined when no source knows the model. */
    input(ref: Ref): Promise<HostModel["input"] | undefined>
  }

  export function create(host: Host): Models {
    const seen = new Map<string, HostModel["input"]>()
    const sessions = new Map<string, Ref>()
    let listed: Promise<HostModel[]> | undefined

    async function list(): Promise<HostModel[]> {
      if (!host.models) return []
      listed ??= host.models().catch((error) => {
        listed = undefined
        host.log.warn("look_at: the host's model list is unavailable", { error: String(error) })
        return []
      })
      return listed
    }

    async function input(ref: Ref): Promise<HostModel["input"] | undefined> {
      const known = seen.get(key(ref))
      if (known) return known
      return (await list()).find((m) => m.providerID === ref.providerID && m.modelID === ref.modelID)?.input
    }

    async function fromHistory(sessionID: string, messageID?: string): Promise<Ref | undefined> {
      if (!host.messages) return undefined
      const messages = (await host.messages(sessionID)) as unknown as { info: Record<string, any> }[]
      const own = messageID ? messages.find((m) => m.info.id === messageID)?.info : undefined
      if (own?.providerID && own?.modelID) return { providerID: own.providerID, modelID: own.modelID }
      for (let i = messages.length - 1; i >= 0; i--) {
        const info = messages[i].info
        if (info.role === "assistant" && info.providerID && info.modelID)
          return { providerID: info.providerID, modelID: info.modelID }
        if (info.role === "user" && info.model?.providerID && info.model?.modelID)
          return { providerID: info.model.providerID, modelID: info.model.modelID }
      }
      return undefined
    }

    return {
      observe({ sessionID, model, message }) {
        const providerID = model?.providerID
        const modelID = model?.id ?? model?.modelID
        if (typeof providerID !== "string" || typeof modelID !== "string") return
        const caps = inputOf(model)
        if (caps) seen.set(key({ providerID, modelID }), caps)
        // Title and summary requests run a small model for the same session: only the model the user message asks
        // for is the session's model.
        const asked = message?.model
        if (sessionID && asked?.providerID === providerID && asked?.modelID === modelID)
          sessions.set(sessionID, { providerID, modelID })
      },
      async current(sessionID, messageID) {
        const ref = sessions.get(sessionID) ?? (await fromHistory(sessionID, messageID))
        if (!ref) return undefined
        return { ...ref, input: await input(ref) }
      },
      input,
    }
  }
}
