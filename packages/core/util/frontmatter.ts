import grayMatter from "gray-matter"
import type matter from "gray-matter"
import { parse as parseToml } from "smol-toml"
import { errorMessage } from "./error"

/**
 * Frontmatter parsing shared by every feature that reads markdown with a YAML header (resources, discovery).
 * Uses gray-matter (YAML with arrays, nested values, dates); never throws.
 *
 * @example
 * const parsed = Frontmatter.parse("---\ntitle: Git\ntags: [vcs]\n---\n# Body")
 * parsed.data.title // "Git"
 * parsed.body // "# Body"
 */
export namespace Frontmatter {
  /** gray-matter evaluates a `---js` / `---javascript` block: text from files the agent can write must never be run. */
  const REFUSED = {
    parse(): never {
      throw new Error("frontmatter in JavaScript is not read (it would be evaluated)")
    },
  }

  /**
   * gray-matter with its JavaScript engine switched off (a `---js` block throws instead of being evaluated); every
   * caller in this project parses through it.
   *
   * @example
   * Frontmatter.matter("---js\n{ a: 1 }\n---\n") // throws: frontmatter in JavaScript is not read
   */
  export function matter(text: string, options: { delimiters?: string; language?: string } = {}) {
    // A fresh options object also bypasses gray-matter's cache by input string, so a malformed document never
    // returns a stale result.
    return grayMatter(text, {
      ...options,
      engines: { javascript: REFUSED, js: REFUSED, toml: TOML },
    } as unknown as matter.GrayMatterOption<string, any>) as matter.GrayMatterFile<string>
  }

  /**
   * TOML headers (`+++` as Zola and Hugo write them, or `---toml`), read by smol-toml; never evaluated. gray-matter
   * leaves a CRLF header's last `\r` alone at its end, which TOML refuses: line ends are made `\n` first.
   */
  const TOML = { parse: (text: string) => parseToml(text.replace(/\r\n?/g, "\n")) }

  export type Result = {
    /** The parsed YAML mapping; `{}` when there is none or it is malformed. */
    data: Record<string, unknown>
    /** The content after the frontmatter block. */
    body: string
    /** Set when a frontmatter block exists but could not be parsed (the body then is the whole text). */
    error?: string
  }

  /**
   * `languages`: also read the headers static site generators write besides YAML — TOML between `+++` lines (Zola,
   * Hugo) or after `---toml`, JSON after `---json`, YAML after `---yaml` — as gray-matter reads them. A `---js` header
   * is then an error (never evaluated). Without it only a `---` YAML header is read (what OpenCode itself reads).
   */
  export function parse(text: string, options: { languages?: boolean } = {}): Result {
    const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
    const toml = options.languages && /^\+\+\+[ \t]*\r?\n/.test(source)
    if (!toml && !(options.languages ? /^---([A-Za-z]+)?[ \t]*\r?\n/ : /^---[ \t]*\r?\n/).test(source))
      return { data: {}, body: source }
    try {
      const parsed = toml ? matter(source, { delimiters: "+++", language: "toml" }) : matter(source)
      const data = parsed.data
      if (data === null || typeof data !== "object" || Array.isArray(data)) {
        return { data: {}, body: parsed.content, error: "frontmatter is not a mapping of keys to values" }
      }
      normalise(data)
      return { data: data as Record<string, unknown>, body: parsed.content }
    } catch (error) {
      return { data: {}, body: source, error: firstLine(errorMessage(error)) }
    }
  }

  function firstLine(message: string) {
    return message.split("\n")[0].trim()
  }

  /** YAML dates become ISO strings (date-only when there is no time part), in place, so metadata stays JSON. */
  function normalise(value: Record<string, unknown> | unknown[]): void {
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key]
      if (item instanceof Date) (value as Record<string, unknown>)[key] = dateText(item)
      else if (item && typeof item === "object") normalise(item as Record<string, unknown>)
    }
  }

  function dateText(date: Date): string | undefined {
    if (Number.isNaN(date.getTime())) return undefined
    const iso = date.toISOString()
    return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso
  }

  /** A string field, or undefined when absent or not a scalar. */
  export function string(value: unknown): string | undefined {
    if (typeof value === "string") return value.trim() || undefined
    if (typeof value === "number" || typeof value === "boolean") return String(value)
    return undefined
  }

  /** A list field: YAML lists, or a comma-separated string. Non-string items are stringified; empties dropped. */
  export function list(value: unknown): string[] {
    const items = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : []
    const out: string[] = []
    for (const item of items) {
      const s = string(item)
      if (s) out.push(s)
    }
    return out
  }
}
