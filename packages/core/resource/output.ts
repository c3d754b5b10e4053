import { formatBytes } from "./format"
import type { Resource } from "./schema"

/**
 * The text `resource-load` returns, and how to read it back. The output itself records what was loaded, so the
 * session's resource state can always be derived from the message history (in both routes, across restarts):
 *
 * ```
 * <!-- resource-load 1a2b3c4d id=git-ops refs=1 loaded=git-ops,pre-commit reactivated= -->
 * Loaded 2 resources: git-ops, pre-commit. Release them with resource-release when done.
 *
 * <!-- resource git-ops 1a2b3c4d size=2048 -->
 * # Resource: Git Operations
 * **Type:** knowledge-base
 * …the spec's header block…
 * ---
 * …content…
 * <!-- /resource git-ops 1a2b3c4d -->
 * ```
 *
 * The 8-hex nonce is random per call, so resource content cannot forge a section boundary.
 *
 * @example
 * const header = ResourceOutput.header(output) // { nonce, id, refs, loaded: [...], reactivated: [...] }
 * const pruned = ResourceOutput.remove(output, header!.nonce, new Map([["git-ops", "released"]]))
 */
export namespace ResourceOutput {
  export type Header = {
    nonce: string
    id: string
    refs: boolean
    loaded: string[]
    reactivated: string[]
  }

  export type Section = {
    metadata: Resource.Metadata
    content: string
    /** For references: the ids that led to this one. */
    referencedBy?: string[]
  }

  const HEADER = /^<!-- resource-load ([0-9a-f]{8}) id=(\S*) refs=([01]) loaded=(\S*) reactivated=(\S*) -->/

  export function nonce(): string {
    return crypto.getRandomValues(new Uint32Array(1))[0].toString(16).padStart(8, "0")
  }

  const list = (text: string) => (text ? text.split(",").filter(Boolean) : [])

  /** The machine-readable first line of a `resource-load` output, or undefined for other text (errors included). */
  export function header(output: string | undefined): Header | undefined {
    if (!output) return undefined
    const m = HEADER.exec(output)
    if (!m) return undefined
    return { nonce: m[1], id: m[2], refs: m[3] === "1", loaded: list(m[4]), reactivated: list(m[5]) }
  }

  export const begin = (id: string, nonce: string, size: number) => `<!-- resource ${id} ${nonce} size=${size} -->`
  export const end = (id: string, nonce: string) => `<!-- /resource ${id} ${nonce} -->`

  /** Size recorded in a section's begin marker, or undefined when the section is absent. */
  export function sectionSize(output: string, id: string, nonce: string): number | undefined {
    const m = new RegExp(`^<!-- resource ${escape(id)} ${nonce} size=(\\d+) -->$`, "m").exec(output)
    return m ? Number(m[1]) : undefined
  }

  /** The content of one section (between its markers), or undefined. */
  export function sectionText(output: string, id: string, nonce: string): string | undefined {
    const start = output.indexOf(begin(id, nonce, sectionSize(output, id, nonce) ?? 0))
    if (start < 0) return undefined
    const from = output.indexOf("\n", start) + 1
    const stop = output.indexOf(end(id, nonce), from)
    return output.slice(from, stop < 0 ? output.length : stop).replace(/\n$/, "")
  }

  function escape(text: string) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  }

  function block(section: Section, nonce: string): string {
    const m = section.metadata
    const lines = [
      begin(m.id, nonce, m.size),
      `# Resource: ${m.name}`,
      `**Type:** ${m.type}`,
      `**Domain:** ${m.domain}`,
      `**ID:** ${m.id}`,
      m.description ? `**Description:** ${m.description}` : undefined,
      m.tags.length ? `**Tags:** ${m.tags.join(", ")}` : undefined,
      m.version ? `**Version:** ${m.version}` : undefined,
      section.referencedBy?.length ? `**Loaded as a reference of:** ${section.referencedBy.join(", ")}` : undefined,
      `**Path:** ${m.relativePath}`,
      `**Size:** ${formatBytes(m.size)}`,
      "",
      "---",
      "",
      section.content.replace(/\s+$/, ""),
      end(m.id, nonce),
    ]
    return lines.filter((l) => l !== undefined).join("\n")
  }

  export type Render = {
    nonce: string
    id: string
    refs: boolean
    sections: Section[]
    reactivated: string[]
    /** Notes shown after the summary line: references already loaded, unresolved, skipped and why. */
    notes: string[]
    /** False where no `resource-release` tool is offered (over MCP): the summary does not point to it. */
    releasable?: boolean
  }

  export function render(input: Render): string {
    const loaded = input.sections.map((s) => s.metadata.id)
    const head = `<!-- resource-load ${input.nonce} id=${input.id} refs=${input.refs ? 1 : 0} loaded=${loaded.join(",")} reactivated=${input.reactivated.join(",")} -->`
    const summary: string[] = []
    if (loaded.length)
      summary.push(
        `Loaded ${loaded.length} resource${loaded.length === 1 ? "" : "s"}: ${loaded.join(", ")}.` +
          (input.releasable === false ? "" : " Release with resource-release when no longer needed."),
      )
    if (input.reactivated.length)
      summary.push(
        `Still in context from an earlier message, now re-activated (not pruned after this turn): ${input.reactivated.join(", ")}.`,
      )
    const [primary, ...refs] = input.sections
    const parts = [head, [...summary, ...input.notes].join("\n")]
    if (primary && primary.metadata.id === input.id) parts.push(block(primary, input.nonce))
    else if (primary) refs.unshift(primary)
    if (refs.length) parts.push("# Referenced Resources", ...refs.map((s) => block(s, input.nonce)))
    return parts.join("\n\n")
  }

  /**
   * The output with the sections of the given ids replaced by one-line stubs (status says why). When every loaded
   * section goes, the whole output becomes a single line.
   */
  export function remove(output: string, nonce: string, gone: Map<string, "released" | "pruned">): string {
    const head = header(output)
    if (!head || head.nonce !== nonce || gone.size === 0) return output
    const removed = head.loaded.filter((id) => gone.has(id))
    if (removed.length === 0) return output
    if (removed.length === head.loaded.length && head.reactivated.length === 0) {
      return `[resource-load: ${removed.map((id) => `'${id}' ${gone.get(id)}`).join(", ")} — content removed from context; call resource-load with the id to use it again]`
    }
    let text = output
    for (const id of removed) {
      const size = sectionSize(text, id, nonce)
      if (size === undefined) continue
      const startMarker = begin(id, nonce, size)
      const start = text.indexOf(startMarker)
      const endMarker = end(id, nonce)
      const stop = text.indexOf(endMarker, start)
      const after = stop < 0 ? text.length : stop + endMarker.length
      text =
        text.slice(0, start) +
        `[resource '${id}' ${gone.get(id)} — content removed from context; call resource-load with id "${id}" to use it again]` +
        text.slice(after)
    }
    return text
  }
}
