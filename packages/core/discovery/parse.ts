import path from "path"
import { Frontmatter } from "../util/frontmatter"
import { Keywords } from "./keywords"
import { DiscoveryLocate } from "./locate"
import { Discovery } from "./schema"

/**
 * Turns the text of an agent, command, skill or output-style file into a validated `DiscoveredItem`, through the
 * frontmatter parser the resource loader uses. Never throws: problems come back as `{ success: false, error }`.
 *
 * Frontmatter that YAML refuses is read again the way OpenCode retries it (`DiscoveryLocate.frontmatter`: a value
 * holding `: `, such as `description: Use when: asked`, read as text), since Claude Code loads such files too; the
 * item then carries a `warning`. Frontmatter that fails that retry too (`argument-hint: [id] [reason]`, a stray
 * line) does not stop Claude Code either: it loads the file with no frontmatter. So does discovery for Claude Code's
 * files, taking `name`, `description` and `keywords`/`tags` from their own lines as text (`salvage`), with a warning.
 * Files OpenCode loads itself (its own agents and commands, every skill) are refused, as OpenCode refuses them: a
 * suggestion to invoke them would fail.
 *
 * - `name`: frontmatter `name`, else `fallbackName` (the file's name); 1–200 characters after trimming. A skill has
 *   no fallback: a SKILL.md OpenCode's skill tool would not load (no frontmatter, no text `name`, no `description`)
 *   is refused with the reason (`skillRefusal`).
 * - `description`: frontmatter `description`, else the first paragraph of the body (as Claude Code shows a command
 *   without one), else empty; longer than 1,000 characters it is shortened at a word boundary with "…" (keywords are
 *   taken from the whole text first).
 * - `lead`: the first paragraph of the body (`lead`), matched with a low weight.
 * - the start of the body (`body`, `Discovery.BODY_MAX` characters), kept beside the item and matched with a lower one.
 * - `keywords`: frontmatter `keywords` (or `tags`), else the description's words, else the name's; at most 100.
 * - `unavailable`: an agent with `disable: true` or `mode: primary`, which OpenCode offers no subagent for.
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

  /**
   * Why a SKILL.md is skipped: OpenCode's skill tool would not load it (`DiscoveryLocate.skillRefusal`, per version),
   * so a suggestion to load it would fail. OpenCode names a skill by its frontmatter `name` alone (never its folder),
   * 1.2.15 also needs a `description`; a file without frontmatter is loaded by neither.
   *
   * @example
   * DiscoveryParse.skillRefusal("# Kube\n", {}) // "not a skill OpenCode loads: SKILL.md has no frontmatter …"
   */
  export function skillRefusal(text: string, data: Record<string, unknown>): string | undefined {
    const old = DiscoveryLocate.skillRefusal(data, "1.2.15")
    const now = DiscoveryLocate.skillRefusal(data, "1.18")
    if (!old && !now) return undefined
    if (!now) return `${NOT_EVERY_SKILL}: ${old} (OpenCode 1.2.15 skips it; 1.18 loads it without one)`
    if (!/^\uFEFF?---[ \t]*\r?\n/.test(text))
      return `${NOT_A_SKILL}: SKILL.md has no frontmatter (OpenCode names a skill by its frontmatter \`name\` and needs a \`description\`)`
    return `${NOT_A_SKILL}: ${now} in its frontmatter (OpenCode names a skill by its frontmatter \`name\` and needs a \`description\`)`
  }

  /** The start of the reason for a SKILL.md no OpenCode loads. */
  export const NOT_A_SKILL = "not a skill OpenCode loads"
  /** The start of the reason for a SKILL.md only some OpenCode versions load. */
  export const NOT_EVERY_SKILL = "not a skill every OpenCode loads"

  /** Why a file in `.claude/agents` without a name or description is skipped (`parse`). */
  export const NOT_AN_AGENT =
    "not a Claude Code agent: its frontmatter gives no name and no description (Claude Code requires both); a document kept among the agents"

  export function parse(input: Input): Discovery.ParseResult {
    if (!path.isAbsolute(input.filePath)) return fail(`filePath must be an absolute path: ${input.filePath}`)
    if (input.text.includes("\u0000")) return fail("binary file (contains NUL bytes), not markdown")
    let fm = Frontmatter.parse(input.text)
    let warning: string | undefined
    let salvaged = false
    if (fm.error) {
      const retried = DiscoveryLocate.frontmatter(input.text)
      const data = retried?.data
      if (retried && data !== null && typeof data === "object" && !Array.isArray(data)) {
        warning = `frontmatter is not valid YAML (${fm.error}); read leniently, values holding ": " taken as text`
        fm = { data: data as Record<string, unknown>, body: retried.content }
      } else if (input.origin === "opencode" || input.type === "skill")
        return fail(`malformed frontmatter: ${fm.error}`)
      else {
        warning = `frontmatter is not valid YAML (${fm.error}); loaded without it as Claude Code does, name, description and keywords taken from their lines as text`
        fm = { ...salvage(input.text), error: undefined }
        salvaged = true
      }
    }

    if (input.type === "skill") {
      const refused = skillRefusal(input.text, fm.data)
      if (refused) return fail(refused)
    }

    const rawName = fm.data.name
    if (rawName !== undefined && rawName !== null && !isScalar(rawName)) return fail("frontmatter `name` must be text")
    const rawDescription = fm.data.description
    if (rawDescription !== undefined && rawDescription !== null && !isScalar(rawDescription))
      return fail("frontmatter `description` must be text")

    // A Markdown file in `.claude/agents` whose frontmatter gives neither `name` nor `description` (or that has none: a
    // category's README.md, notes, an attribution) is no agent definition: Claude Code loads none without them (its
    // documentation marks both required). One giving either is an agent missing a field, which discovery still suggests
    // as a file to read and follow (OpenCode never invokes Claude Code agents), and so is a file whose frontmatter block
    // no YAML reading accepts (read line by line above: it was written as an agent). Commands and output styles need
    // neither: a command file without frontmatter is a command. Skills were checked above (`skillRefusal`).
    if (
      input.type === "agent" &&
      input.origin === "claude" &&
      !salvaged &&
      Frontmatter.string(fm.data.name) === undefined &&
      Frontmatter.string(fm.data.description) === undefined
    )
      return fail(NOT_AN_AGENT)
    const unavailable =
      input.type !== "agent"
        ? undefined
        : fm.data.disable === true
          ? ("disabled" as const)
          : fm.data.mode === "primary"
            ? ("primary" as const)
            : undefined
    const made = make({
      name: Frontmatter.string(rawName) ?? input.fallbackName,
      description: Frontmatter.string(rawDescription),
      explicit: Frontmatter.list(fm.data.keywords ?? fm.data.tags),
      body: fm.body,
      unavailable,
      filePath: input.filePath,
      type: input.type,
      source: input.source,
      origin: input.origin,
    })
    if ("error" in made) return fail(made.error)
    return { success: true, item: made.item, ...(warning ? { warning } : {}) }
  }

  /**
   * An item defined by fields rather than a file's text (an agent or command in OpenCode's configuration, whose
   * `prompt` or `template` is its body), built by the same rules as `parse`. Undefined when the fields make no valid
   * item (an empty name).
   *
   * @example
   * DiscoveryParse.entry({ name: "reviewer", description: "Reviews diffs", body: "You review code.",
   *   filePath: "/repo/opencode.json", type: "agent", source: "local", origin: "opencode" })?.name // "reviewer"
   */
  export function entry(input: {
    name: string
    description: string
    body: string
    filePath: string
    type: Discovery.ResourceType
    source: Discovery.ResourceSource
    origin: Discovery.Origin
  }): Discovery.DiscoveredItem | undefined {
    const made = make({ ...input, description: input.description || undefined, explicit: undefined })
    return "item" in made ? made.item : undefined
  }

  function make(input: {
    name: string
    description: string | undefined
    explicit: string[] | undefined
    body: string
    unavailable?: "disabled" | "primary"
    filePath: string
    type: Discovery.ResourceType
    source: Discovery.ResourceSource
    origin: Discovery.Origin
  }): { item: Discovery.DiscoveredItem } | { error: string } {
    const name = input.name
    const first = lead(input.body)
    const fullDescription = (input.description ?? first?.replace("\n", ": ") ?? "").trim()
    const extracted = Keywords.extract({ name, description: fullDescription, explicit: input.explicit })
    const unavailable = input.unavailable
    const candidate = {
      ...(unavailable ? { unavailable } : {}),
      name,
      description: shorten(fullDescription, Discovery.DESCRIPTION_MAX),
      keywords: extracted.keywords,
      keywordSource: extracted.source,
      ...(first ? { lead: first } : {}),
      filePath: input.filePath,
      resourceType: input.type,
      source: input.source,
      origin: input.origin,
    }
    // The schema's rules, checked directly for the usual item (a zod parse per file was ~15 % of a cold scan); any
    // item they do not clearly pass goes through the schema, which gives the reasons.
    const trimmed = name.trim()
    const text = input.body.slice(0, Discovery.BODY_MAX)
    if (
      trimmed.length >= 1 &&
      trimmed.length <= Discovery.NAME_MAX &&
      candidate.keywords.length <= Discovery.KEYWORDS_MAX &&
      candidate.keywords.every((k) => k.length > 0) &&
      (candidate.lead === undefined || candidate.lead.length <= Discovery.LEAD_MAX) &&
      Discovery.RESOURCE_TYPES.includes(input.type) &&
      (input.source === "global" || input.source === "local") &&
      (input.origin === "claude" || input.origin === "opencode")
    )
      return { item: withBody(Object.freeze({ ...candidate, name: trimmed }), text) }
    const checked = Discovery.DiscoveredItem.safeParse(candidate)
    if (!checked.success) return { error: checked.error.issues.map((i) => i.message).join("; ") }
    return { item: withBody(checked.data, text) }
  }

  /**
   * The start of each parsed item's body (`Discovery.BODY_MAX` characters), kept beside the item rather than in it: it
   * is matched, never shown, so it stays out of results, `--list` and everything else that prints items.
   */
  const bodies = new WeakMap<Discovery.DiscoveredItem, string>()

  /**
   * `item` with `text` as the start of its body (what `body` returns for it): how an item read back from a cache gets
   * the body it was parsed with. Returns `item`.
   *
   * @example
   * DiscoveryParse.body(DiscoveryParse.withBody(item, "# A\nDoes a.\n")) // "# A\nDoes a.\n"
   */
  export function withBody(item: Discovery.DiscoveredItem, text: string): Discovery.DiscoveredItem {
    if (text.trim()) bodies.set(item, text)
    return item
  }

  /**
   * The start of the body of an item `parse` returned (empty for other items).
   *
   * @example
   * DiscoveryParse.body(parse({ text: "---\nname: a\n---\n# A\nDoes a.\n", ... }).item!) // "# A\nDoes a.\n"
   */
  export function body(item: Discovery.DiscoveredItem): string {
    return bodies.get(item) ?? ""
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

  /**
   * The first paragraph of a markdown body: a heading's text and the line after it (when that is not a heading too),
   * or the first line; code fences, rules and comments skipped; at most `LEAD_MAX` characters. Undefined when the body
   * has no text.
   *
   * @example
   * DiscoveryParse.lead("# Security Scan\n\nFinds vulnerabilities.\n\n## Steps") // "Security Scan\nFinds vulnerabilities."
   */
  export function lead(body: string): string | undefined {
    const lines: string[] = []
    for (const raw of body.split(/\r?\n/, 200)) {
      const line = raw.trim()
      if (!line || /^(---|```|~~~|<!--)/.test(line)) continue
      lines.push(line)
      if (lines.length === 2) break
    }
    if (!lines.length) return undefined
    const heading = /^#{1,6}\s/.test(lines[0])
    const first = lines[0].replace(/^#{1,6}\s+/, "")
    const text = heading && lines[1] && !/^#/.test(lines[1]) ? `${first}\n${lines[1]}` : first
    return shorten(text, Discovery.LEAD_MAX)
  }

  /** The fields discovery reads; others (`tools`, `argument-hint`…) are not needed to match a file. */
  const SALVAGED = new Set(["name", "description", "keywords", "tags"])

  /**
   * Frontmatter no YAML reading accepts, read line by line: each top-level `name`, `description`, `keywords` or `tags`
   * line's value as text (with the indented lines under it, joined by spaces; surrounding quotes or brackets
   * removed; a name still opening a bracket dropped), the rest left out. The body starts after the closing `---`, or is the whole text when there is none.
   *
   * @example
   * DiscoveryParse.salvage("---\ndescription: Close an issue\nargument-hint: [id] [reason]\n---\nBody").data
   * // { description: "Close an issue" }
   */
  export function salvage(text: string): { data: Record<string, unknown>; body: string } {
    const block = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text)
    if (!block) return { data: {}, body: text }
    const data: Record<string, unknown> = {}
    let key: string | undefined
    for (const line of block[1].split(/\r?\n/)) {
      const pair = keyValue(line)
      if (pair) {
        key = SALVAGED.has(pair.key) && !(pair.key in data) ? pair.key : undefined
        if (key) data[key] = pair.value
      } else if (key && /^\s/.test(line) && line.trim()) data[key] = `${data[key]} ${line.trim()}`.trim()
      else if (!/^\s/.test(line)) key = undefined
    }
    for (const [k, v] of Object.entries(data)) {
      const value = v as string
      const quoted = /^(["'])([\s\S]*)\1$/.exec(value) ?? /^\[([\s\S]*)\]$/.exec(value)
      const text = quoted ? quoted[quoted.length - 1] : value
      // A name that opens a flow collection it never closes (`name: [unclosed`) is not a name: the file's is used.
      if (text && !(k === "name" && /^[[{]/.test(text))) data[k] = text.replace(/^[|>][+-]?\s*/, "")
      else delete data[k]
    }
    return { data, body: text.slice(block[0].length) }
  }

  /**
   * A `key: value` line as `/^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$/` reads it (the value trimmed), undefined
   * for any other line, including one whose value holds a line break the split left (a lone `\r`, U+2028 or U+2029),
   * which `.` does not match. That expression retried every split of the blanks after the colon before failing on
   * such a line (31 s for 100 KB); here the key is matched alone and the value is the rest of the line.
   */
  function keyValue(line: string): { key: string; value: string } | undefined {
    const head = /^([A-Za-z_][\w-]*)[ \t]*:/.exec(line)
    if (!head) return undefined
    const rest = line.slice(head[0].length)
    if (rest !== "" && (!/^[ \t]/.test(rest) || /[\r\n\u2028\u2029]/.test(rest))) return undefined
    return { key: head[1], value: rest.trim() }
  }

  function isScalar(value: unknown) {
    return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
  }

  function fail(error: string): Discovery.ParseResult {
    return { success: false, error }
  }
}
