import crypto from "crypto"
import type { Host } from "../host"
import { errorMessage } from "../util/error"
import { Logger } from "../util/log"
import type { DynamicDiscovery } from "./discover"
import { DiscoveryFormat } from "./format"

/**
 * Discovery as handlers named after OpenCode's hooks. `chat.message` adds one synthetic text part with the
 * suggestions to the user's message when something matches, nothing otherwise. OpenCode stores the parts of
 * `chat.message`'s output after the hook and sends every non-ignored text part of a user message to the model, so
 * the suggestion reaches the model with the prompt, and stays in the history for later turns. Never throws.
 *
 * When the host has an access check (`host.access`, installed by the security layer), definitions and resources
 * whose file the policy protects (read or llm) are left out of the suggestion; `host.accessVersion`, when present,
 * lets their verdicts be remembered between prompts. For an MCP client (`host.client`), the suggestion names each
 * agent's, skill's, command's and style's file instead of OpenCode's tools (`DiscoveryFormat.Options.mcp`).
 *
 * @example
 * const hooks = DiscoveryHooks.create(DynamicDiscovery.create({ directory: "/repo" }), { log, host })
 * await hooks["chat.message"]({ sessionID }, { message, parts }) // parts gains the suggestion when one matches
 */
export namespace DiscoveryHooks {
  /** The parts of `chat.message`'s output this module reads and writes (structural; no OpenCode type imported). */
  export type Part = {
    id?: string
    type: string
    text?: string
    synthetic?: boolean
    ignored?: boolean
    [key: string]: unknown
  }
  export type Output = { message: { id: string; sessionID?: string; [key: string]: unknown }; parts: Part[] }

  export function create(
    engine: DynamicDiscovery.Engine,
    options: {
      log?: Logger
      host?: Pick<Host, "access" | "accessVersion" | "segments" | "accessScope"> &
        Partial<Pick<Host, "client" | "directory">>
    } = {},
  ) {
    const log = options.log ?? Logger.silent
    return {
      "chat.message": async (input: { sessionID: string; messageID?: string; agent?: string }, output: Output) => {
        try {
          const prompt = promptText(output.parts)
          if (!prompt) return
          // Read at call time: the security layer installs `access` on the shared host after this was created.
          const host = options.host
          const result = await engine.gather(prompt, {
            access: host?.access,
            accessVersion: host?.accessVersion,
            accessScope: host?.accessScope,
            segments: host?.segments,
            agent: typeof input.agent === "string" ? input.agent : undefined,
          })
          if (!result.success || !result.context) {
            if (result.skipReason && result.skipReason !== "disabled" && result.skipReason !== "no_resources_found")
              log.warn(`discovery skipped: ${result.skipReason}`, { error: result.error })
            return
          }
          // An MCP client has none of OpenCode's tools: it is given files to read.
          const mcp = host?.client === "mcp" ? { directory: host.directory ?? process.cwd() } : undefined
          const text = DiscoveryFormat.context(result.context, { mcp })
          if (!text) return
          output.parts.push({
            id: partID(output.parts.map((p) => p.id)),
            sessionID: output.message.sessionID ?? input.sessionID,
            messageID: output.message.id,
            type: "text",
            text,
            synthetic: true,
          })
        } catch (error) {
          log.error("discovery: chat.message failed", { error: errorMessage(error) })
        }
      },
    }
  }

  /**
   * The user's own words in a message: its text parts that are neither synthetic nor ignored. Empty when the message
   * already carries a suggestion (the hook then adds nothing, so it is idempotent).
   *
   * @example
   * DiscoveryHooks.promptText([{ type: "text", text: "ship it" }, { type: "text", text: "x", synthetic: true }]) // "ship it"
   */
  export function promptText(parts: readonly Part[]): string {
    if (parts.some((p) => p.type === "text" && p.text?.startsWith(DiscoveryFormat.OPEN))) return ""
    return parts
      .filter((p) => p.type === "text" && !p.synthetic && !p.ignored && typeof p.text === "string")
      .map((p) => p.text)
      .join("\n")
      .trim()
  }

  const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

  /**
   * A part id in OpenCode's format (`prt_` + 12 hex digits of time×4096+counter + 14 random base62 characters) that
   * sorts after every id in `existing`: OpenCode orders a message's parts by id, and the suggestion belongs after
   * the user's text.
   *
   * @example
   * DiscoveryHooks.partID(output.parts.map((p) => p.id)) // "prt_…", sorting after every id of the message
   */
  export function partID(existing: readonly (string | undefined)[]): string {
    let value = BigInt(Date.now()) * 4096n
    for (const id of existing) {
      const match = id && /^prt_([0-9a-f]{12})/.exec(id)
      if (match) {
        const v = BigInt("0x" + match[1]) + 1n
        if (v > value) value = v
      }
    }
    const hex = (value & 0xffffffffffffn).toString(16).padStart(12, "0")
    const random = Array.from(crypto.randomBytes(14), (b) => BASE62[b % 62]).join("")
    return `prt_${hex}${random}`
  }
}
