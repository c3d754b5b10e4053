import path from "path"
import { Frontmatter } from "../util/frontmatter"
import { titleCase } from "./format"
import { Resource } from "./schema"

/**
 * Turns the text of one resource file into its metadata. Pure: no I/O, so the index builder, the cache and the
 * lint command share it.
 *
 * Reference syntax in markdown bodies (used when the frontmatter has no `references`):
 * - `[[id]]` or `[[id|label]]` — a wiki link to a resource id;
 * - `[text](relative/path.md)` — a markdown link to another resource file (relative to the linking file).
 * Links inside fenced code blocks and inline code are ignored.
 * JSON schemas reference other schemas through `$ref` (a relative file, or another schema's `$id`), or list ids
 * in `x-references`.
 *
 * @example
 * const parsed = ResourceParse.parse({ type: "task", relativePath: ".opencode/task/dev/ship.md", path: "/p/...",
 *   size: 40, lastModified: 0, text: "---\ntags: [release]\n---\nSee [[pre-commit]]." })
 * parsed.metadata.domain // "dev"
 * parsed.refs // [{ kind: "id", value: "pre-commit" }]
 */
export namespace ResourceParse {
  /** A reference as written, resolved to an id once every file is known. */
  export type RawRef = { kind: "id"; value: string } | { kind: "path"; value: string } | { kind: "uri"; value: string }

  export type Input = {
    type: Resource.Type
    /** Project-relative path with forward slashes, e.g. `.opencode/task/dev/ship.md`. */
    relativePath: string
    path: string
    size: number
    lastModified: number
    text: string
  }

  export type Result = {
    metadata: Resource.Metadata
    refs: RawRef[]
    /** For JSON schemas: the `$id` as written, so other schemas can `$ref` it. */
    uri?: string
    warnings: Resource.Warning[]
  }

  export const MAX_ID_LENGTH = 200
  const DOMAINS: ReadonlySet<string> = new Set(Resource.DOMAINS)

  /** Why `id` is not usable as a resource id, or undefined when it is. */
  const SIMPLE_ID = /^[A-Za-z0-9][A-Za-z0-9._@+-]*$/

  export function invalidIdReason(id: string): string | undefined {
    // Fast path for the common ASCII ids; the checks below explain what is wrong with the others.
    if (id.length <= MAX_ID_LENGTH && SIMPLE_ID.test(id) && !id.includes("..")) return undefined
    if (!id) return "it is empty"
    if (id.length > MAX_ID_LENGTH) return `it is longer than ${MAX_ID_LENGTH} characters`
    if (/[\\/]/.test(id)) return "it contains a path separator"
    if (id.includes("..")) return "it contains '..'"
    if (/[\s\p{Cc}]/u.test(id)) return "it contains whitespace or control characters"
    if (!/^[\p{L}\p{N}]/u.test(id)) return "it must start with a letter or digit"
    if (/[<>:"|?*#,=\[\]{}`]/.test(id)) return 'it contains one of < > : " | ? * # , = [ ] { } `'
    return undefined
  }

  /** A valid id made from any string (file names with spaces, `$id` URIs…). */
  export function slug(text: string): string {
    return text
      .normalize("NFC")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}._-]+/gu, "-")
      .replace(/\.{2,}/g, ".")
      .replace(/^[^\p{L}\p{N}]+/u, "")
      .replace(/-+/g, "-")
      .replace(/[-.]+$/, "")
      .slice(0, MAX_ID_LENGTH)
  }

  /**
   * The id a file has when it declares none: its file name without extension, made valid when it is not. Known
   * without reading the file, so a file the security policy protects can still be named in a refusal.
   *
   * @example
   * ResourceParse.defaultId(".opencode/task/Ship It.md") // "ship-it"
   */
  export function defaultId(relativePath: string): string {
    const fileStem = stem(relativePath)
    return invalidIdReason(fileStem) ? slug(fileStem) || slug(relativePath) : fileStem
  }

  export function stem(relativePath: string): string {
    return path.posix.basename(relativePath).replace(/\.(md|markdown|json)$/i, "")
  }

  /** The domain from the directories between the type folder and the file (`/dev/`, `/docs/`…), else `common`. */
  export function domainFromPath(relativePath: string, type: Resource.Type): Resource.Domain {
    const parts = relativePath.split("/")
    const typeIndex = parts.lastIndexOf(type)
    const dirs = parts.slice(typeIndex + 1, -1)
    for (const domain of ["opencode", "core", "docs", "dev"] as const) if (dirs.includes(domain)) return domain
    return "common"
  }

  export function parse(input: Input): Result {
    return input.type === "schema" ? parseSchema(input) : parseMarkdown(input)
  }

  function base(input: Input, warnings: Resource.Warning[], declaredId: string | undefined, name?: string) {
    let id: string | undefined
    if (declaredId !== undefined) {
      const reason = invalidIdReason(declaredId)
      if (reason) {
        warnings.push({
          severity: "error",
          code: "invalid-id",
          path: input.relativePath,
          id: declaredId,
          message: `declared id '${declaredId}' is invalid (${reason}); using the file name instead`,
        })
      } else id = declaredId
    }
    if (!id) id = defaultId(input.relativePath)
    return {
      id,
      type: input.type,
      path: input.path,
      relativePath: input.relativePath,
      name: name ?? titleCase(stem(input.relativePath)),
      size: input.size,
      lastModified: input.lastModified,
    }
  }

  function parseMarkdown(input: Input): Result {
    const warnings: Resource.Warning[] = []
    const fm = Frontmatter.parse(input.text)
    if (fm.error) {
      warnings.push({
        severity: "error",
        code: "malformed-frontmatter",
        path: input.relativePath,
        message: `frontmatter could not be parsed (${fm.error}); indexed with names derived from the file`,
      })
    }
    const d = fm.data
    const s = Frontmatter.string
    const declaredDomain = s(d.domain)
    const domain = DOMAINS.has(declaredDomain ?? "")
      ? (declaredDomain as Resource.Domain)
      : domainFromPath(input.relativePath, input.type)
    const declaredRefs = d.references !== undefined ? Frontmatter.list(d.references) : undefined
    const refs = declaredRefs
      ? declaredRefs.map((r) => classify(r, input.relativePath))
      : inlineReferences(fm.body, input.relativePath)
    const metadata: Resource.Metadata = {
      ...base(input, warnings, s(d.id), s(d.title) ?? s(d.name)),
      domain,
      category: s(d.category),
      tags: unique(Frontmatter.list(d.tags)),
      description: s(d.description),
      version: s(d.version),
      references: [],
      referencedBy: unique(Frontmatter.list(d.referencedBy ?? d["referenced-by"])),
      author: s(d.author),
      created: s(d.created),
      updated: s(d.updated),
      difficulty: s(d.difficulty),
      status: s(d.status),
    }
    if (!input.text.trim()) {
      warnings.push({
        severity: "warning",
        code: "empty-file",
        path: input.relativePath,
        id: metadata.id,
        message: "the file is empty",
      })
    }
    return { metadata, refs, warnings }
  }

  function parseSchema(input: Input): Result {
    const warnings: Resource.Warning[] = []
    let json: any
    try {
      json = JSON.parse(input.text)
    } catch (error) {
      warnings.push({
        severity: "error",
        code: input.text.trim() ? "invalid-json" : "empty-file",
        path: input.relativePath,
        message: input.text.trim()
          ? `not valid JSON (${error instanceof Error ? error.message : String(error)}); indexed by file name only`
          : "the file is empty",
      })
      json = undefined
    }
    if (json !== undefined && (json === null || typeof json !== "object" || Array.isArray(json))) {
      warnings.push({
        severity: "error",
        code: "invalid-json",
        path: input.relativePath,
        message: "a schema must be a JSON object; indexed by file name only",
      })
      json = undefined
    }
    const j = json ?? {}
    const s = Frontmatter.string
    const uri = s(j.$id)
    const declaredId = uri === undefined ? undefined : idFromUri(uri)
    const declaredRefs = j["x-references"] !== undefined ? Frontmatter.list(j["x-references"]) : undefined
    const refs = declaredRefs
      ? declaredRefs.map((r) => classify(r, input.relativePath))
      : schemaRefs(j, input.relativePath)
    const metadata: Resource.Metadata = {
      ...base(input, warnings, declaredId, s(j.title)),
      domain: domainFromPath(input.relativePath, input.type),
      category: s(j["x-category"]),
      tags: unique(Frontmatter.list(j["x-tags"])),
      description: s(j.description),
      version: s(j["x-version"]),
      references: [],
      referencedBy: unique(Frontmatter.list(j["x-referenced-by"])),
      author: s(j["x-author"]),
      status: s(j["x-status"]),
    }
    return { metadata, refs, uri, warnings }
  }

  /** `$id` values are often URIs (`https://x/schemas/user.schema.json`); their last segment names the schema. */
  function idFromUri(uri: string): string {
    if (!/[\\/:]/.test(uri)) return uri
    const last =
      uri
        .replace(/[#?].*$/, "")
        .replace(/\/+$/, "")
        .split(/[\\/:]/)
        .pop() ?? ""
    return last.replace(/(\.schema)?\.json$/i, "")
  }

  function schemaRefs(json: unknown, from: string): RawRef[] {
    const out: RawRef[] = []
    const seen = new Set<unknown>()
    const visit = (node: unknown, depth: number) => {
      if (!node || typeof node !== "object" || seen.has(node) || depth > 64) return
      seen.add(node)
      if (Array.isArray(node)) return node.forEach((n) => visit(n, depth + 1))
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string") {
          const target = value.split("#")[0]
          if (!target) continue
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) out.push({ kind: "uri", value: target })
          else out.push({ kind: "path", value: resolveRelative(from, target) })
        } else visit(value, depth + 1)
      }
    }
    visit(json, 0)
    return out
  }

  /** A declared reference: a path when it looks like one, otherwise an id. */
  function classify(ref: string, from: string): RawRef {
    const value = ref.replace(/^\[\[|\]\]$/g, "").trim()
    if (/[\\/]/.test(value) || /\.(md|markdown|json)$/i.test(value))
      return { kind: "path", value: resolveRelative(from, value) }
    return { kind: "id", value }
  }

  function resolveRelative(from: string, target: string): string {
    const clean = decodeSafe(target.trim()).replace(/\\/g, "/")
    return path.posix.normalize(path.posix.join(path.posix.dirname(from), clean))
  }

  function decodeSafe(text: string): string {
    try {
      return decodeURIComponent(text)
    } catch {
      return text
    }
  }

  const INLINE_CODE = /`[^`\n]*`/g
  const WIKI = /\[\[([^\]|\n]+)(?:\|[^\]\n]*)?\]\]/g
  const LINK = /\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g

  /** `[[id]]` wiki links and markdown links to `.md`/`.json` files, outside code. */
  export function inlineReferences(body: string, from: string): RawRef[] {
    // Most files have no link at all: skip the code-stripping passes for them.
    if (!body.includes("[[") && !body.includes("](")) return []
    const fenced = body.includes("```") || body.includes("~~~")
    const text = (fenced ? withoutFencedCode(body) : body).replace(INLINE_CODE, "")
    const out: RawRef[] = []
    for (const m of text.matchAll(WIKI)) out.push({ kind: "id", value: m[1].trim() })
    for (const m of text.matchAll(LINK)) {
      const target = m[1].split("#")[0]
      if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("/")) continue
      if (!/\.(md|markdown|json)$/i.test(target)) continue
      out.push({ kind: "path", value: resolveRelative(from, target) })
    }
    return out
  }

  /** The text with fenced code blocks (``` or ~~~, closed by the same fence or the end of text) removed. */
  function withoutFencedCode(body: string): string {
    const kept: string[] = []
    let fence: string | undefined
    for (const line of body.split("\n")) {
      const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line)
      if (fence) {
        if (m && m[1][0] === fence[0] && m[1].length >= fence.length && !line.trim().slice(m[1].length).trim())
          fence = undefined
        continue
      }
      if (m) {
        fence = m[1]
        continue
      }
      kept.push(line)
    }
    return kept.join("\n")
  }

  function unique(values: string[]): string[] {
    return [...new Set(values)]
  }
}
