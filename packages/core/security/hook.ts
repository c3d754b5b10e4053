import { SecurityRedact } from "./redact"

/**
 * Hook payload guard: plugins' hooks get a deep clone of the messages with every text-bearing field
 * redacted (text, reasoning, tool input and output, file contents in data URLs, …); afterwards only structural changes
 * come back: messages the hooks added (scanned, and refused when they carry redaction markers, so removing a message
 * and adding it back edited cannot smuggle content edits), messages they removed, in the original order, the original
 * winning on duplicate ids. Edits to existing messages are discarded.
 *
 * Plain data in, plain data out: the fork calls it from `Plugin.trigger`; tests call it directly.
 *
 * @example
 * const result = await SecurityHook.guardMessages(messages, redact, async (clone) => {
 *   for (const hook of hooks) await hook({}, { messages: clone })
 *   return clone
 * })
 */
export namespace SecurityHook {
  export type Message = { info: { id?: string; [k: string]: unknown }; parts: unknown[]; [k: string]: unknown }

  /** Keys whose values are identifiers or enums, never content: left untouched so the structure stays valid. */
  const STRUCTURAL = new Set([
    "id",
    "sessionID",
    "messageID",
    "parentID",
    "callID",
    "partID",
    "type",
    "role",
    "status",
    "time",
    "mime",
    "providerID",
    "modelID",
    "mode",
    "agent",
    "tool",
    "hash",
    "snapshot",
    "cost",
    "tokens",
    "finish",
    "variant",
  ])
  const MAX_DEPTH = 32
  /** Binary payloads (base64 characters) read for protected content; a larger one is left as it is (Limits). */
  export const MAX_BINARY_SCAN = 48 * 1024 * 1024

  export type Redactor = (text: string) => string

  /**
   * Applies `redact` to every content string of `value`, in place, including the text inside `data:` URLs.
   * Returns how many strings changed.
   */
  export function redactDeep(value: unknown, redact: Redactor, depth = 0): number {
    if (!value || typeof value !== "object" || depth > MAX_DEPTH) return 0
    let changed = 0
    const entries: [string | number, unknown][] = Array.isArray(value)
      ? value.map((v, i) => [i, v])
      : Object.entries(value)
    for (const [key, item] of entries) {
      if (typeof key === "string" && STRUCTURAL.has(key) && typeof item !== "object") continue
      if (typeof item === "string") {
        const next = key === "url" || item.startsWith("data:") ? redactDataUrl(item, redact) : redact(item)
        if (next !== item) {
          ;(value as Record<string | number, unknown>)[key] = next
          changed++
        }
      } else if (item && typeof item === "object") changed += redactDeep(item, redact, depth + 1)
    }
    return changed
  }

  /**
   * A `data:` URL whose payload is text gets its decoded payload redacted and re-encoded; other URLs as text. A
   * payload of any other type (an image, a PDF) is read as bytes: when they hold anything the scanner finds (a
   * segment, a secret: a source file given a `%PDF-` line is sent whole as a PDF), the payload is replaced by a note,
   * since its bytes cannot be redacted in place.
   *
   * @example
   * SecurityHook.redactDataUrl("data:application/pdf;base64,…", redact) // unchanged, or the note when something is found
   */
  export function redactDataUrl(url: string, redact: Redactor): string {
    const m = /^data:([^,]*?)(;base64)?,(.*)$/s.exec(url)
    if (!m) return redact(url)
    const [, mime, b64, payload] = m
    if (
      mime &&
      !/^(text\/|application\/(json|xml|javascript|x-sh|x-yaml|toml)|$)/.test(mime) &&
      !/charset/.test(mime)
    ) {
      if (payload.length > MAX_BINARY_SCAN) return url
      let bytes: string
      try {
        bytes = b64 ? Buffer.from(payload, "base64").toString("latin1") : decodeURIComponent(payload)
      } catch {
        return url
      }
      if (redact(bytes) === bytes) return url
      const note = `[REDACTED: a ${mime.split(";")[0]} attachment holding protected content]`
      return `data:${mime};base64,${Buffer.from(note).toString("base64")}`
    }
    let text: string
    try {
      text = b64 ? Buffer.from(payload, "base64").toString("utf8") : decodeURIComponent(payload)
    } catch {
      return redact(url)
    }
    const next = redact(text)
    if (next === text) return url
    return `data:${mime}${b64 ?? ""},${b64 ? Buffer.from(next, "utf8").toString("base64") : encodeURIComponent(next)}`
  }

  /** A redacted deep clone of `messages`. */
  export function redactedClone<T>(messages: T, redact: Redactor): T {
    const clone = structuredClone(messages)
    redactDeep(clone, redact)
    return clone
  }

  export type Diff<M> = {
    messages: M[]
    added: number
    removed: number
    /** Added messages refused because they carry redaction markers. */
    refused: number
    /** Existing messages whose content the hooks changed (the change was discarded). */
    discarded: number
  }

  /**
   * Structural diff between the original messages and what hooks returned (from the redacted clone).
   * `redactedOriginal` (the clone as hooks received it, or its `snapshot`) lets edits to existing messages be counted.
   *
   * @example
   * SecurityHook.structuralDiff(original, mutated, (m) => m).messages
   */
  export function structuralDiff<M extends Message>(
    original: M[],
    final: unknown,
    accept: (added: M) => M | undefined,
    redactedOriginal?: M[] | ReadonlyMap<string, string>,
  ): Diff<M> {
    const byId = new Map<string, M>()
    for (const m of original) {
      const id = m?.info?.id
      if (typeof id === "string" && !byId.has(id)) byId.set(id, m)
    }
    const list = Array.isArray(final) ? (final as M[]) : []
    const kept = new Set<string>()
    const anchored = new Map<string | undefined, M[]>()
    let anchor: string | undefined
    let added = 0
    let refused = 0
    let discarded = 0
    const before = redactedOriginal instanceof Map ? redactedOriginal : snapshot((redactedOriginal as M[]) ?? [])
    for (const m of list) {
      if (!m || typeof m !== "object") continue
      const id = typeof m.info?.id === "string" ? m.info.id : undefined
      if (id !== undefined && byId.has(id)) {
        if (kept.has(id)) continue
        kept.add(id)
        anchor = id
        if (before.size && before.get(id) !== safeJson(m)) discarded++
        continue
      }
      if (id !== undefined && list.indexOf(m) !== list.findIndex((x) => x?.info?.id === id)) continue
      const accepted = accept(m)
      if (!accepted) {
        refused++
        continue
      }
      added++
      const bucket = anchored.get(anchor) ?? []
      bucket.push(accepted)
      anchored.set(anchor, bucket)
    }
    const messages: M[] = [...(anchored.get(undefined) ?? [])]
    let removed = 0
    for (const m of original) {
      const id = m?.info?.id
      if (typeof id === "string" && !kept.has(id) && byId.get(id) === m) {
        removed++
        continue
      }
      if (typeof id === "string" && byId.get(id) !== m) continue
      messages.push(m)
      if (typeof id === "string") messages.push(...(anchored.get(id) ?? []))
    }
    return { messages, added, removed, refused, discarded }
  }

  /**
   * Each message's JSON by id (the last of a duplicated id wins), to tell later whether hooks edited it.
   *
   * @example
   * SecurityHook.snapshot([{ info: { id: "m1" }, parts: [] }]).get("m1") // '{"info":{"id":"m1"},"parts":[]}'
   */
  export function snapshot(messages: readonly Message[]): Map<string, string> {
    const out = new Map<string, string>()
    for (const m of messages) if (typeof m?.info?.id === "string") out.set(m.info.id, safeJson(m))
    return out
  }

  function safeJson(value: unknown) {
    try {
      return JSON.stringify(value)
    } catch {
      return ""
    }
  }

  /** True when any string of `value` carries a redaction marker. */
  export function carriesMarker(value: unknown, depth = 0): boolean {
    if (typeof value === "string") return SecurityRedact.carriesMarker(value)
    if (!value || typeof value !== "object" || depth > MAX_DEPTH) return false
    for (const item of Array.isArray(value) ? value : Object.values(value))
      if (carriesMarker(item, depth + 1)) return true
    return false
  }

  /**
   * The whole messages route: clone and redact, let `run` (the hooks) work on the clone, then apply only structural
   * changes to the originals. Added messages are scanned (`redact`) and refused when they carry markers.
   *
   * @example
   * const { messages } = await SecurityHook.guardMessages(original, redact, async (clone) => clone)
   */
  export async function guardMessages<M extends Message>(
    original: M[],
    redact: Redactor,
    run: (clone: M[]) => Promise<unknown>,
  ): Promise<Diff<M>> {
    const clone = redactedClone(original, redact)
    // What hooks receive, as JSON: the clone holds only plain data, so no second clone is needed to keep it.
    const reference = snapshot(clone)
    const returned = await run(clone)
    const final = Array.isArray(returned) ? returned : clone
    return structuralDiff(
      original,
      final,
      (m) => {
        if (carriesMarker(m)) return undefined
        const copy = structuredClone(m)
        redactDeep(copy, redact)
        return copy
      },
      reference,
    )
  }

  /**
   * System prompts for hooks: redacted copies go to `run`; what comes back is scanned again before use, so a hook can
   * add instructions but cannot put protected content back.
   */
  export async function guardSystem(
    system: string[],
    redact: Redactor,
    run: (copy: string[]) => Promise<unknown>,
  ): Promise<string[]> {
    const copy = system.map(redact)
    const returned = await run(copy)
    const final = Array.isArray(returned) ? returned : copy
    return final.filter((s): s is string => typeof s === "string").map(redact)
  }
}
