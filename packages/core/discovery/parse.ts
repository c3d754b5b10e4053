import path from "path"
import { Frontmatter } from "../util/frontmatter"
import { Keywords } from "./keywords"
import { Discovery } from "./schema"

/**
 * Turns the text of an agent, command, skill or output-style file into a validated `DiscoveredItem`, through the
 * frontmatter parser the resource loader uses. Never throws: problems come back as `{ success: false, error }`.
 *
 * - `name`: frontmatter `name`, else `fallbackName` (the file's name); 1–200 characters after trimming.
 * - `description`: frontmatter `description` (empty when missing); longer than 1,000 characters it is shortened at a
 *   word boundary with "…" (keywords are taken from the whole text first).
 * - `keywords`: frontmatter `keywords` (or `tags`), else the description's words, else the name's; at most 100.
 *
 * @example
 * const r = DiscoveryParse.parse({
 *   text: "---\ndescription: Reviews diffs\n---\nYou review code.", filePath: "/p/.claude/agents/reviewer.md",
 *   fallbackName: "reviewer", type: "agent", source: "local", origin: "claude",
 * })
 * r.item?.name // "reviewer"
 */
export namespace DiscoveryParse {
  export type Input = {
    text: string
    filePath: string
    /** Name used when the frontmatter has none. */
    fallbackName: string
    type: Discovery.ResourceType
    source: Discovery.ResourceSource
    origin: Discovery.Origin
  }

  export function parse(input: Input): Discovery.ParseResult {
    if (!path.isAbsolute(input.filePath)) return fail(`filePath must be an absolute path: ${input.filePath}`)
    if (input.text.includes("\u0000")) return fail("binary file (contains NUL bytes), not markdown")
    const fm = Frontmatter.parse(input.text)
    if (fm.error) return fail(`malformed frontmatter: ${fm.error}`)

    const rawName = fm.data.name
    if (rawName !== undefined && rawName !== null && !isScalar(rawName)) return fail("frontmatter `name` must be text")
    const rawDescription = fm.data.description
    if (rawDescription !== undefined && rawDescription !== null && !isScalar(rawDescription))
      return fail("frontmatter `description` must be text")

    const name = Frontmatter.string(rawName) ?? input.fallbackName
    const fullDescription = (Frontmatter.string(rawDescription) ?? "").trim()
    const explicit = Frontmatter.list(fm.data.keywords ?? fm.data.tags)
    const extracted = Keywords.extract({ name, description: fullDescription, explicit })

    const checked = Discovery.DiscoveredItem.safeParse({
      name,
      description: shorten(fullDescription, Discovery.DESCRIPTION_MAX),
      keywords: extracted.keywords,
      filePath: input.filePath,
      resourceType: input.type,
      source: input.source,
      origin: input.origin,
    })
    if (!checked.success) return fail(checked.error.issues.map((i) => i.message).join("; "))
    return { success: true, item: checked.data }
  }

  /**
   * `text` cut to at most `max` characters, at a word boundary when one is near, ending with "…".
   *
   * @example
   * DiscoveryParse.shorten("alpha beta gamma delta", 12) // "alpha beta…"
   */
  export function shorten(text: string, max: number): string {
    if (text.length <= max) return text
    const cut = text.slice(0, max - 1)
    const space = cut.search(/\s\S*$/)
    return (space > max * 0.8 ? cut.slice(0, space) : cut).trimEnd() + "…"
  }

  function isScalar(value: unknown) {
    return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
  }

  function fail(error: string): Discovery.ParseResult {
    return { success: false, error }
  }
}
