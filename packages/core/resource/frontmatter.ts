import { Frontmatter } from "../util/frontmatter"

/**
 * Frontmatter of resource files, fast for the common case: a header of `key: value` lines whose values are plain,
 * quoted or `[flow, lists]` scalars, or block lists of them (`- item`), is read by a small scanner that gives exactly
 * what gray-matter with js-yaml gives; anything else (nested mappings, block scalars `|`/`>`, anchors, tags, escapes,
 * multi-line values, comments after values, CRLF, timestamps with a time, numbers other than plain decimals, a key
 * given twice) goes to `Frontmatter.parse` unchanged. gray-matter + js-yaml cost ≈ 25-40 µs per file, more than
 * reading it; the scanner ≈ 1-3 µs. `test/resource/frontmatter.test.ts` compares both on every shape it accepts.
 *
 * @example
 * ResourceFrontmatter.parse("---\ntitle: Git\ntags: [vcs, 'git']\n---\n# Body")
 * // { data: { title: "Git", tags: ["vcs", "git"] }, body: "# Body" }
 */
export namespace ResourceFrontmatter {
  export function parse(text: string): Frontmatter.Result {
    return fast(text) ?? Frontmatter.parse(text, { languages: true })
  }

  /**
   * The text after a header that could not be parsed (a `---` or `+++` line closes it), or undefined when there is
   * no closed header: what a header holds (TOML's `[[extra.see_also]]`) is never read as the document's links.
   */
  export function afterHeader(text: string): string | undefined {
    const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
    const open = /^(---|\+\+\+)[A-Za-z]*[ \t]*\r?\n/.exec(source)
    if (!open) return undefined
    const close = new RegExp(`\\n${open[1] === "---" ? "---" : "\\+\\+\\+"}[ \\t]*(?:\\r?\\n|$)`).exec(source)
    return close ? source.slice(close.index + close[0].length) : undefined
  }

  /** Marks a shape the scanner leaves to gray-matter. */
  const FALLBACK = Symbol("fallback")
  type Value = string | number | boolean | null | Value[]

  /** The scanner alone: undefined when the text needs gray-matter (exported for the differential tests). */
  export function fast(text: string): Frontmatter.Result | undefined {
    const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
    if (!source.startsWith("---\n"))
      return source.startsWith("---") || source.startsWith("+++") ? undefined : { data: {}, body: source }
    // gray-matter's rule: the block ends at the first "\n---" (whatever follows it on that line).
    const str = source.slice(3)
    let close = str.indexOf("\n---")
    if (close === -1) close = str.length
    const block = str.slice(0, close)
    let body = close === str.length ? "" : str.slice(close + 4)
    if (body.charCodeAt(0) === 13) body = body.slice(1)
    if (body.charCodeAt(0) === 10) body = body.slice(1)
    if (block.includes("\r") || block.includes("\t")) return undefined
    const data: Record<string, Value> = {}
    let listKey: string | undefined
    let listIndent = -1
    let start = 1 // the block starts with the newline after the opening delimiter
    while (start <= block.length) {
      let end = block.indexOf("\n", start)
      if (end === -1) end = block.length
      const line = block.slice(start, end)
      start = end + 1
      const first = line.charCodeAt(0)
      if (line.length === 0 || first === 35 /* # */) continue
      if (first === 32 /* space */ || first === 45 /* - */) {
        const indent = line.length - line.trimStart().length
        // Blank and comment lines may be indented.
        if (indent === line.length || line.charCodeAt(indent) === 35) continue
        if (listKey === undefined) return undefined
        if (listIndent >= 0 && indent !== listIndent) return undefined
        if (line.charCodeAt(indent) !== 45 || line.charCodeAt(indent + 1) !== 32) return undefined
        listIndent = indent
        const item = scalar(line.slice(indent + 2).trim(), false)
        if (item === FALLBACK) return undefined
        const list = data[listKey]
        if (Array.isArray(list)) list.push(item)
        else data[listKey] = [item]
        continue
      }
      const colon = line.indexOf(":")
      if (colon <= 0) return undefined
      const key = line.slice(0, colon)
      if (!KEY.test(key) || key === "__proto__" || Object.hasOwn(data, key)) return undefined
      const rest = line.slice(colon + 1)
      if (rest.length && rest.charCodeAt(0) !== 32) return undefined
      const raw = rest.trim()
      listKey = undefined
      listIndent = -1
      if (!raw) {
        data[key] = null
        listKey = key
        continue
      }
      const value = raw.charCodeAt(0) === 91 /* [ */ ? flowList(raw) : scalar(raw, false)
      if (value === FALLBACK) return undefined
      data[key] = value
    }
    // A header of comments only is `{}` for gray-matter but null (an error) for js-yaml when a bare `#` is in it.
    for (const _ in data) return { data, body }
    return undefined
  }

  const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/
  /** Characters a plain scalar may not start with (YAML indicators), or that make it something else. */
  const INDICATOR = /^(?:[-?:,[\]{}#&*!|>%@`+]|\.[0-9]|\.(?:inf|Inf|INF|nan|NaN|NAN)$)/
  const INT = /^-?(?:0|[1-9][0-9]*)$/
  const FLOAT = /^-?(?:0|[1-9][0-9]*)\.[0-9]+$/
  const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/
  const NOT_NUMERIC = /[^0-9A-Za-z_.:+-]/
  const DATE_START = /^[0-9]{4}-/

  /** One scalar as js-yaml's default schema reads it, or FALLBACK for forms left to it. */
  function scalar(raw: string, flow: boolean): Value | typeof FALLBACK {
    const first = raw.charCodeAt(0)
    if (first === 34 /* " */) {
      const close = raw.indexOf('"', 1)
      if (close !== raw.length - 1 || raw.includes("\\")) return FALLBACK
      return raw.slice(1, -1)
    }
    if (first === 39 /* ' */) {
      let out = ""
      let i = 1
      while (true) {
        const q = raw.indexOf("'", i)
        if (q === -1) return FALLBACK
        out += raw.slice(i, q)
        if (raw.charCodeAt(q + 1) === 39) {
          out += "'"
          i = q + 2
          continue
        }
        return q === raw.length - 1 ? out : FALLBACK
      }
    }
    if (INDICATOR.test(raw) && !(first === 45 && raw.length > 1 && raw.charCodeAt(1) >= 48 && raw.charCodeAt(1) <= 57))
      return FALLBACK
    if (raw.includes(" #") || raw.includes(": ") || raw.endsWith(":")) return FALLBACK
    if (flow && /[[\]{},]/.test(raw)) return FALLBACK
    switch (raw) {
      case "~":
      case "null":
      case "Null":
      case "NULL":
        return null
      case "true":
      case "True":
      case "TRUE":
        return true
      case "false":
      case "False":
      case "FALSE":
        return false
    }
    if (first === 45 || (first >= 48 && first <= 57)) {
      if (INT.test(raw) || FLOAT.test(raw)) return Number(raw)
      // js-yaml's numbers hold only these characters; with another one (a space: `10 tips`) only a timestamp could
      // still match, and those start with a date.
      if (NOT_NUMERIC.test(raw) && !DATE_START.test(raw)) return raw
      // Nor has any of them two dots: `1.2.0` is a string.
      if (raw.indexOf(".") !== raw.lastIndexOf(".")) return raw
      // js-yaml makes a UTC date, which Frontmatter turns back into its ISO date text: the same text for a real
      // date (2025-02-30 would roll over: left to them).
      const date = DATE.exec(raw)
      if (!date) return FALLBACK
      const year = Number(date[1])
      const month = Number(date[2])
      const day = Number(date[3])
      const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      const days = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
      return year >= 1000 && month >= 1 && month <= 12 && day >= 1 && day <= days ? raw : FALLBACK
    }
    return raw
  }

  /** `[a, "b", 'c', 1]` on one line; nested collections and empty items are left to js-yaml. */
  function flowList(raw: string): Value[] | typeof FALLBACK {
    if (raw.charCodeAt(raw.length - 1) !== 93 /* ] */) return FALLBACK
    const inner = raw.slice(1, -1)
    if (!inner.trim()) return []
    const out: Value[] = []
    let i = 0
    while (i <= inner.length) {
      while (inner.charCodeAt(i) === 32) i++
      let end: number
      const q = inner.charCodeAt(i)
      if (q === 34 || q === 39) {
        // A quoted item ends at its closing quote ('' is an escaped quote in single quotes).
        let j = i + 1
        while (true) {
          const k = inner.indexOf(q === 34 ? '"' : "'", j)
          if (k === -1) return FALLBACK
          if (q === 39 && inner.charCodeAt(k + 1) === 39) {
            j = k + 2
            continue
          }
          end = k + 1
          break
        }
        const after = inner.indexOf(",", end)
        const stop = after === -1 ? inner.length : after
        if (inner.slice(end, stop).trim()) return FALLBACK
        const item = scalar(inner.slice(i, end), true)
        if (item === FALLBACK) return FALLBACK
        out.push(item)
        i = stop + 1
        continue
      }
      const comma = inner.indexOf(",", i)
      end = comma === -1 ? inner.length : comma
      const piece = inner.slice(i, end).trim()
      if (!piece) return FALLBACK
      const item = scalar(piece, true)
      if (item === FALLBACK) return FALLBACK
      out.push(item)
      i = end + 1
    }
    return out
  }
}
