import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser"
import path from "path"
import { Frontmatter } from "../util/frontmatter"
import { titleCase } from "./format"
import { ResourceFrontmatter } from "./frontmatter"
import { Resource } from "./schema"

/**
 * Turns the text of one resource file into its metadata. Pure: no I/O, so the index builder, the cache and the
 * lint command share it.
 *
 * Reference syntax in markdown bodies (used when the frontmatter has no `references`):
 * - `[[id]]`, `[[id|label]]` or `[[label|id]]` — a wiki link to a resource id (either side, see `inlineReferences`);
 * - `[text](relative/path.md)` — a markdown link to another resource file (relative to the linking file);
 * - `[text][label]`, `[label][]`, `[label]` or `[[label]]` with a definition `[label]: relative/path.md` — the same.
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
  export type RawRef =
    /**
     * `section`: written with a `#heading` (`[[Note#Setup]]`), so linking its own page is no mistake. `or`: the other
     * side of `[[a|b]]`, the note when `value` names none (Dendron writes the label first, Obsidian and Foam the note;
     * `ResourceParse.inlineReferences`). `vault`: a Dendron cross-vault link (`[[dendron://vault/note]]`).
     */
    | { kind: "id"; value: string; section?: true; or?: { value: string; section?: true }; vault?: string }
    /**
     * `fallback`: for a bare relative link (`api/Store.md`, no `./` or `../`), the same target from the type folder
     * holding the linking file, tried when `value` does not exist (Docusaurus resolves such links from its docs folder).
     * `section`: written with a `#anchor` (`page.md#setup`), so a page linking its own section is no mistake.
     */
    | { kind: "path"; value: string; fallback?: string; section?: true }
    /**
     * A JSON schema `$ref` to another document: `value` as written (without its fragment), `uri` the absolute URI it
     * resolves to (against the `$id` in scope), `path` the project file it names when read as a relative path.
     * `external`: written as an absolute URI, so one that matches no schema of the project is a document elsewhere
     * (a meta-schema, a schema published on the web), not a dangling reference.
     */
    | { kind: "schema"; value: string; uri?: string; path?: string; external: boolean }

  export type Input = {
    type: Resource.Type
    /** Project-relative path with forward slashes, e.g. `.opencode/task/dev/ship.md`. */
    relativePath: string
    path: string
    size: number
    lastModified: number
    text: string
    /** Only the head of a file too large to read whole (see `ResourceRead`). */
    truncated?: boolean
  }

  export type Result = {
    metadata: Resource.Metadata
    refs: RawRef[]
    /** For JSON schemas: the `$id` as written, so other schemas can `$ref` it. */
    uri?: string
    /**
     * For JSON schemas: the absolute URIs naming the document (its `$id`, or a draft-04 root `id`, resolved and
     * without fragment; `ResourceParse.uriKey` form), which `$ref`s of other schemas resolve against.
     */
    uris?: string[]
    /**
     * Set when the id was derived from the schema's `$id`: the id the file name gives, used instead when another
     * schema with a different `$id` already holds the derived one (two `…/schema` URIs on different hosts).
     */
    fallbackId?: string
    /**
     * Set when a Markdown file's id is its folder's name, inherited as the folder's `README`/`index`/`_index`/`SKILL`
     * (`defaultId`), not declared: a file of that folder named so keeps the id (`ResourceIndex.assemble`).
     */
    inherited?: true
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
    const collapsed = text
      .normalize("NFC")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}._-]+/gu, "-")
      .replace(/\.{2,}/g, ".")
      .replace(/^[^\p{L}\p{N}]+/u, "")
      .replace(/-+/g, "-")
    // Trailing `-` and `.` cut by a loop: `/[-.]+$/` is retried from every `-.` of a long `-.-.-.` run (13 s for 100 KB).
    let end = collapsed.length
    while (end > 0 && (collapsed[end - 1] === "-" || collapsed[end - 1] === ".")) end--
    return collapsed.slice(0, Math.min(end, MAX_ID_LENGTH))
  }

  /**
   * The id a file has when it declares none: its file name without extension, made valid when it is not; for a file
   * that stands for its folder (`README`, `index`, `_index`, `SKILL`: a folder's readme, a page bundle, a skill) the
   * folder's name, unless that folder is the type folder itself. Known without reading the file, so a file the
   * security policy protects can still be named in a refusal.
   *
   * @example
   * ResourceParse.defaultId(".opencode/task/Ship It.md") // "ship-it"
   * ResourceParse.defaultId(".opencode/knowledge-base/skills/api-design/SKILL.md") // "api-design"
   */
  export function defaultId(relativePath: string): string {
    const name = baseName(relativePath)
    return invalidIdReason(name) ? slug(name) || slug(relativePath) : name
  }

  /** File names that stand for the folder holding them. */
  const FOLDER_NOTE = /^(readme|index|_index|skill)$/i

  /** The file name without extension, or the folder's name for a file that stands for its folder (`defaultId`). */
  function baseName(relativePath: string): string {
    const fileStem = stem(relativePath)
    if (!FOLDER_NOTE.test(fileStem)) return fileStem
    const parts = relativePath.split("/")
    const folder = parts.length >= 2 ? parts[parts.length - 2] : ""
    if (!folder || folder === ".opencode" || (Resource.TYPES as readonly string[]).includes(folder)) return fileStem
    return folder
  }

  export function stem(relativePath: string): string {
    return path.posix.basename(relativePath).replace(/\.(md|mdx|markdown|json)$/i, "")
  }

  /** The domain from the directories between the type folder and the file (`/dev/`, `/docs/`…), else `common`. */
  export function domainFromPath(relativePath: string, type: Resource.Type): Resource.Domain {
    // The folders as "/a/b/" between the last folder named like the type and the file name (no split: hot path).
    const full = "/" + relativePath
    const end = full.lastIndexOf("/") + 1
    const at = full.lastIndexOf(`/${type}/`, end - 1)
    const dirs = at < 0 ? full.slice(0, end) : full.slice(at + type.length + 1, end)
    for (const domain of ["opencode", "core", "docs", "dev"] as const) if (dirs.includes(`/${domain}/`)) return domain
    return "common"
  }

  const NOT_BLANK = /\S/
  /** An ATX level-one heading line (`# Services top-level element`, closing `#`s allowed). */
  const ATX_H1 = /^ {0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$/
  /** A setext level-one underline (`====`). */
  const SETEXT_H1 = /^ {0,3}=+[ \t]*$/

  /**
   * The title a page without a `title` gives itself: its first non-blank line when that is a level-one heading
   * (`# Title`, or `Title` over `===`), at most 200 characters; undefined otherwise (the file name is used).
   *
   * @example
   * ResourceParse.heading("\n# Services top-level element\n\nA service is…") // "Services top-level element"
   */
  export function heading(body: string): string | undefined {
    let start = 0
    while (start < body.length && /\s/.test(body[start]!)) start++
    // Two lines are enough to tell; nothing past them is split.
    const lines = body.slice(start, start + 1024).split("\n", 2)
    const first = (lines[0] ?? "").replace(/\r$/, "")
    const atx = ATX_H1.exec(first)
    const text = atx ? atx[1] : SETEXT_H1.test((lines[1] ?? "").replace(/\r$/, "")) ? first.trim() : undefined
    const title = text?.trim()
    return title && title.length <= 200 ? title : undefined
  }

  export function parse(input: Input): Result {
    return input.type === "schema" ? parseSchema(input) : parseMarkdown(input)
  }

  function identity(input: Input, warnings: Resource.Warning[], declaredId: string | undefined, name?: string) {
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
      name: name ?? titleCase(baseName(input.relativePath)),
      size: input.size,
      lastModified: input.lastModified,
    }
  }

  function parseMarkdown(input: Input): Result {
    const warnings: Resource.Warning[] = []
    const fm = ResourceFrontmatter.parse(input.text)
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
      : inlineReferences(
          fm.error ? (ResourceFrontmatter.afterHeader(input.text) ?? fm.body) : fm.body,
          input.relativePath,
          MDX.test(input.relativePath),
        )
    const metadata: Resource.Metadata = {
      ...identity(input, warnings, s(d.id), s(d.title) ?? s(d.name) ?? heading(fm.error ? "" : fm.body)),
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
    // A search stops at the first non-blank character; trim() would copy the whole text.
    if (!NOT_BLANK.test(input.text)) {
      warnings.push({
        severity: "warning",
        code: "empty-file",
        path: input.relativePath,
        id: metadata.id,
        message: "the file is empty",
      })
    }
    if (metadata.id !== s(d.id) && baseName(input.relativePath) !== stem(input.relativePath))
      return { metadata, refs, inherited: true, warnings }
    return { metadata, refs, warnings }
  }

  /**
   * Where strict JSON first goes wrong, for a file `JSON.parse` refused (its message carries no position): " at line L,
   * column C: <what>", or "" when the strict reader finds nothing either.
   *
   * @example
   * jsonErrorAt('{\n  "a": 1,\n}') // " at line 3, column 1: property name expected"
   */
  export function jsonErrorAt(text: string): string {
    const errors: ParseError[] = []
    parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false })
    const first = errors[0]
    if (!first) return ""
    const before = text.slice(0, first.offset)
    const line = before.split("\n").length
    const column = first.offset - (before.lastIndexOf("\n") + 1) + 1
    const what = printParseErrorCode(first.error)
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .toLowerCase()
    return ` at line ${line}, column ${column}: ${what}`
  }

  function parseSchema(input: Input): Result {
    const warnings: Resource.Warning[] = []
    let json: any
    // A head cut off a file too large to read whole is not JSON: such a schema is listed by its name only.
    if (!input.truncated) {
      try {
        json = JSON.parse(input.text)
      } catch (error) {
        warnings.push({
          severity: "error",
          code: input.text.trim() ? "invalid-json" : "empty-file",
          path: input.relativePath,
          message: input.text.trim()
            ? `not valid JSON${jsonErrorAt(input.text)} (${error instanceof Error ? error.message : String(error)}); indexed by file name only`
            : "the file is empty",
        })
        json = undefined
      }
    }
    // `true` and `false` are schemas too (draft-06 on: anything, nothing), with nothing to read: listed by file name.
    if (typeof json === "boolean") json = undefined
    else if (json !== undefined && (json === null || typeof json !== "object" || Array.isArray(json))) {
      warnings.push({
        severity: "error",
        code: "invalid-json",
        path: input.relativePath,
        message: "a schema must be a JSON object or a boolean; indexed by file name only",
      })
      json = undefined
    }
    const j = json ?? {}
    const s = Frontmatter.string
    const uri = s(j.$id)
    // Draft-04 and earlier name a document (and subschemas) by `id`.
    const legacy = j.$id === undefined && (typeof j.id === "string" || /draft-0[34]\b/.test(s(j.$schema) ?? ""))
    const name = uri ?? (legacy ? s(j.id) : undefined)
    const base = name && SCHEME.test(name) ? absolute(name) : undefined
    const declaredId = uri === undefined ? undefined : idFromUri(uri)
    const declaredRefs = j["x-references"] !== undefined ? Frontmatter.list(j["x-references"]) : undefined
    const refs = declaredRefs
      ? declaredRefs.map((r) => classify(r, input.relativePath))
      : schemaRefs(j, input.relativePath, base ?? name, legacy)
    const metadata: Resource.Metadata = {
      ...identity(input, warnings, declaredId, s(j.title)),
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
    const result: Result = { metadata, refs, uri, warnings }
    if (name) result.uris = unique([uriKey(base ?? name), uriKey(name)])
    if (declaredId !== undefined && metadata.id === declaredId) {
      const fallback = defaultId(input.relativePath)
      if (fallback !== declaredId) result.fallbackId = fallback
    }
    return result
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

  const SCHEME = /^[a-z][a-z0-9+.-]*:/i

  /**
   * The form URIs are compared in: without fragment, `http:` read as `https:` (schemas name the same published
   * document either way).
   *
   * @example
   * ResourceParse.uriKey("http://json.schemastore.org/feed-1#") // "https://json.schemastore.org/feed-1"
   */
  export function uriKey(uri: string): string {
    const hash = uri.indexOf("#")
    const bare = hash < 0 ? uri : uri.slice(0, hash)
    return bare.startsWith("http://") ? "https://" + bare.slice(7) : bare
  }

  /** An absolute URI in normal form (host lower-cased, dot segments removed), or as given when it cannot be parsed. */
  function absolute(uri: string): string {
    try {
      return new URL(uri).href
    } catch {
      return uri
    }
  }

  /** `ref` resolved against `base` as JSON Schema does, or undefined when there is no absolute base to resolve on. */
  function resolveUri(ref: string, base: string | undefined): string | undefined {
    if (SCHEME.test(ref)) return absolute(ref)
    if (!base || !SCHEME.test(base)) return undefined
    try {
      return new URL(ref, base).href
    } catch {
      return undefined
    }
  }

  /** Keywords whose values are instance data, never schemas: a `$ref` key inside them is not a reference. */
  const DATA_KEYWORDS: ReadonlySet<string> = new Set(["enum", "const", "default", "examples", "example"])
  /** Keywords whose values map names to schemas: their keys are names, not keywords. */
  const SCHEMA_MAPS: ReadonlySet<string> = new Set([
    "properties",
    "patternProperties",
    "definitions",
    "$defs",
    "dependentSchemas",
    "dependencies",
  ])

  /**
   * The `$ref`s of a schema that name another document, each resolved against the `$id` (draft-04: `id`) in scope
   * as JSON Schema resolves them. Fragments (`#/definitions/a`), references to the document itself and to its own
   * subschemas' ids (draft-04 `"id": "path"` next to `"$ref": "path"`) are internal and left out; instance data
   * (`enum`, `const`, `default`, `examples`) is never searched. Each target is listed once.
   */
  function schemaRefs(root: Record<string, unknown>, from: string, rootName: string | undefined, legacy: boolean) {
    const found: { target: string; base: string | undefined }[] = []
    const internal = new Set<string>()
    const seen = new Set<unknown>()
    const visit = (node: unknown, base: string | undefined, depth: number, map: boolean) => {
      if (!node || typeof node !== "object" || seen.has(node) || depth > 64) return
      seen.add(node)
      if (Array.isArray(node)) {
        for (const item of node) visit(item, base, depth + 1, false)
        return
      }
      const object = node as Record<string, unknown>
      if (map) {
        for (const key in object) visit(object[key], base, depth + 1, false)
        return
      }
      let scope = base
      if (depth > 0) {
        const own =
          typeof object.$id === "string" ? object.$id : legacy && typeof object.id === "string" ? object.id : ""
        if (own && !own.startsWith("#")) {
          const resolved = resolveUri(own, base)
          internal.add(uriKey(resolved ?? own))
          if (resolved) scope = resolved
        }
      }
      for (const key in object) {
        const value = object[key]
        if (key === "$ref") {
          if (typeof value === "string") found.push({ target: value, base: scope })
        } else if (!DATA_KEYWORDS.has(key)) visit(value, scope, depth + 1, SCHEMA_MAPS.has(key))
      }
    }
    visit(root, rootName, 0, false)
    const self = rootName === undefined ? undefined : uriKey(resolveUri(rootName, undefined) ?? rootName)
    const out: RawRef[] = []
    const listed = new Set<string>()
    for (const { target: raw, base } of found) {
      const hash = raw.indexOf("#")
      const target = (hash < 0 ? raw : raw.slice(0, hash)).trim()
      if (!target) continue
      const external = SCHEME.test(target)
      const uri = uriKey(resolveUri(target, base) ?? target)
      if (uri === self || internal.has(uri) || listed.has(uri)) continue
      listed.add(uri)
      out.push(
        external
          ? { kind: "schema", value: target, uri, external }
          : { kind: "schema", value: target, uri, path: resolveRelative(from, target), external },
      )
    }
    return out
  }

  /** A declared reference: a path when it looks like one, otherwise an id. */
  function classify(ref: string, from: string): RawRef {
    const value = ref.replace(/^\[\[|\]\]$/g, "").trim()
    if (/[\\/]/.test(value) || /\.(md|mdx|markdown|json)$/i.test(value))
      return { kind: "path", value: resolveRelative(from, value) }
    return { kind: "id", value }
  }

  /** Plain relative targets (`b.md`, `sub/c.json`): no dot segment, escape, backslash or empty segment to resolve. */
  const PLAIN_TARGET = /^(?!\.{1,2}(?:\/|$))[^%\\/\s][^%\\\s]*$/

  function resolveRelative(from: string, target: string): string {
    const dir = from.lastIndexOf("/")
    if (PLAIN_TARGET.test(target) && !target.includes("/.") && !target.includes("//") && !target.endsWith("/"))
      return dir < 0 ? target : from.slice(0, dir + 1) + target
    const clean = decodeSafe(target.trim()).replace(/\\/g, "/")
    return path.posix.normalize(path.posix.join(path.posix.dirname(from), clean))
  }

  /** `target` from the type folder holding `from` (`.opencode/knowledge-base/` for `.opencode/knowledge-base/a/b.md`). */
  function fromTypeRoot(from: string, target: string): string {
    const at = from.lastIndexOf(".opencode/")
    const type = at < 0 ? -1 : from.indexOf("/", at + ".opencode/".length)
    const root = type < 0 ? from.slice(0, from.lastIndexOf("/") + 1) : from.slice(0, type + 1)
    return path.posix.normalize(root + decodeSafe(target.trim()).replace(/\\/g, "/"))
  }

  function decodeSafe(text: string): string {
    try {
      return decodeURIComponent(text)
    } catch {
      return text
    }
  }

  const INLINE_CODE = /`[^`\n]*`/g
  /** `[[a]]` or `[[a|b]]`; no bracket inside, so a long run of `[` costs linear time, not quadratic. */
  const WIKI = /\[\[([^[\]|\n]+)(?:\|([^[\]\n]*))?\]\]/g
  /**
   * A CommonMark link reference definition, `[label]: target "title"`, indented at most 3 spaces, its target on the
   * same line or the next; a label of 1–999 characters without unescaped brackets. Anchored at line starts, so each
   * line is tried once. The blanks before the target are `[ \t]*(?:\n[ \t]*)?`, never two runs that could share them
   * (`[ \t]*\n?[ \t]*` retried every split of a long run of blanks: 2 s for 40 KB).
   */
  const DEFINITION = /^ {0,3}\[((?:[^[\]\\\n]|\\.){1,999})\]:[ \t]*(?:\n[ \t]*)?(<[^<>\n]*>|[^\s<]\S*)/gm
  /** A bracketed text without brackets inside (`[label]`, the `[label]` of `[text][label]`): where a label is used. */
  const BRACKETED = /\[([^[\]\n]{1,999})\]/g
  /** A Dendron cross-vault link target, `dendron://<vault>/<note>`. */
  const DENDRON = /^dendron:\/\/([^/]+)\/(.+)$/i
  /**
   * A markdown link; its text may hold one level of brackets, as CommonMark allows (`[[1]](notes.md)`). The text is
   * bounded (512 characters, pieces in brackets 128) and the destination holds no `(`, so text made of nothing but
   * unfinished links (`[a](` repeated, a long line of `[a]`) costs linear time, not quadratic.
   */
  const LINK = /\[(?:[^[\]\n]|\[[^[\]\n]{0,128}\]){0,512}\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)/g
  /**
   * Code blocks that are not markdown fences, opener and closer: Hugo's code shortcodes (`{{< highlight go >}}`…
   * `{{< /highlight >}}`, `code-toggle`, `code`; `{{% … %}}` alike; a self-closing `/>}}` has no body), Docsy's
   * `{{< tab >}}` in a `{{< tabpane >}}` without `text=true`, Jekyll's `{% highlight %}`…`{% endhighlight %}` and
   * HTML `<pre>`…`</pre>`. An opener never closed later hides nothing. Openers are found with `Opener.first`.
   */
  const CODE_BLOCKS: {
    open: Opener
    names: string[]
    close: (name: string) => RegExp
    /** Whether this opener starts code, given whether it lies in a Docsy tab pane whose tabs are code. */
    when?: (opener: string, inCodePane: boolean) => boolean
  }[] = [
    {
      // As /\{\{[<%]\s*(code-toggle|code|highlight)\b(?:[^}/]|\/(?!\s*[>%]\}\})|\}(?!\}))*[>%]\}\}/ reads it.
      open: { head: /\{\{[<%]\s*(code-toggle|code|highlight)\b/g, stop: "}}", full: shortcode(">%") },
      names: ["code-toggle", "code", "highlight"],
      close: (name) => new RegExp(`\\{\\{[<%]\\s*\\/\\s*${name}\\s*[>%]\\}\\}`),
    },
    {
      // Docsy: inside `{{< tabpane >}}` (without `text=true`) each `{{< tab lang=… >}}` is shown as code. As
      // /\{\{<\s*(tab)\b(?:[^}/]|\/(?!\s*>\}\})|\}(?!\}))*>\}\}/ reads it.
      open: { head: /\{\{<\s*(tab)\b/g, stop: "}}", full: shortcode(">") },
      names: ["tab"],
      close: () => /\{\{[<%]\s*\/\s*tab\s*[>%]\}\}/,
      when: (opener, inCodePane) => inCodePane && !TEXT_TRUE.test(opener),
    },
    // Linear as it is: its scan ends at the `%` of the next `{%`.
    { open: /\{%-?\s*(highlight)\b[^%]*%\}/g, names: ["highlight"], close: () => /\{%-?\s*endhighlight\s*-?%\}/ },
    {
      open: { head: /<(pre)\b/gi, stop: ">", full: sticky(/<(pre)\b[^>]*>/iy) },
      names: ["pre"],
      close: () => /<\/pre\s*>/i,
    },
  ]
  const CLOSERS = new Map<string, RegExp>(
    CODE_BLOCKS.flatMap((kind, k) => kind.names.map((name) => [`${k}:${name}`, kind.close(name)] as const)),
  )
  const CODE_BLOCK_HINT = /\{\{[<%]|\{%|<pre\b/i
  const TEXT_TRUE = /\btext\s*=\s*"?true\b/
  const PANE_OPEN: Opener = {
    head: /\{\{[<%]\s*tabpane\b/g,
    stop: "}",
    full: sticky(/\{\{[<%]\s*tabpane\b([^}]*)[>%]\}\}/y),
  }
  const PANE_CLOSE = /\{\{[<%]\s*\/\s*tabpane\s*[>%]\}\}/

  /**
   * An opening tag, found as one expression would find it but in linear time (or a plain expression that is linear).
   * From a `head`, that expression reads to the first `stop` after it (`}}`, `}` or `>`, none of which a head holds)
   * and matches or not there: `full` says which, given the head and where that `stop` is. Tried from every head of
   * an unterminated line (`{{<code ` or `<pre ` repeated), each scan went to the end of the line: 8 s for 100 KB.
   * Here a failed head is not retried from the heads after it up to that `stop`: they meet the same `stop` first and
   * fail too. When no `stop` follows a head, no opener starts there or later.
   */
  type Opener =
    | RegExp
    | {
        head: RegExp
        stop: string
        full: (line: string, head: RegExpExecArray, stop: number) => RegExpExecArray | null
      }

  namespace Opener {
    /** The first opener at `from` or after it. */
    export function first(opener: Opener, line: string, from = 0): RegExpExecArray | null {
      if (opener instanceof RegExp) {
        opener.lastIndex = from
        return opener.exec(line)
      }
      const { head, stop, full } = opener
      head.lastIndex = from
      let h: RegExpExecArray | null
      while ((h = head.exec(line))) {
        const at = line.indexOf(stop, head.lastIndex)
        if (at < 0) return null
        const m = full(line, h, at)
        if (m) return m
        head.lastIndex = at + stop.length
      }
      return null
    }
  }

  /** The `full` of an opener whose expression is `expression` (sticky): tried at the head, it reads up to the `stop`. */
  function sticky(expression: RegExp) {
    return (line: string, head: RegExpExecArray) => {
      expression.lastIndex = head.index
      return expression.exec(line)
    }
  }

  /**
   * The `full` of a shortcode opener: its head, any text, one of `ends` and `}}`, that `}}` being the first after the
   * head, and no `/` just before the `ends` character but blanks (`/>}}` closes itself). Computed rather than matched:
   * the expression's repeated group failed in JavaScriptCore on a 1 MB opener (no match, as if it were unterminated).
   */
  function shortcode(ends: string) {
    return (line: string, head: RegExpExecArray, stop: number): RegExpExecArray | null => {
      if (!ends.includes(line[stop - 1])) return null
      const start = head.index + head[0].length
      let last = stop - 2
      while (last >= start && /\s/.test(line[last])) last--
      if (last >= start && line[last] === "/") return null
      const match = [line.slice(head.index, stop + 2), head[1]] as string[] as RegExpExecArray
      match.index = head.index
      match.input = line
      return match
    }
  }

  /** A template placeholder in a link target: `{baseDir}`, `${VAR}`, `{{ … }}`. */
  const PLACEHOLDER = /[{}]/

  /** A shell test (`[[ -f file ]]`, `[[ $a ]]`, `[[ ! -e x ]]`), not a wiki link. */
  const NOT_A_NOTE = /^[-$!]/
  /**
   * A character right before `[[` that makes it an index into a value (`df[[col]]`, `x()[[1]]`); not `]`, so two
   * wiki links written together (`[[a]][[b]]`) stay two links.
   */
  const INDEXED = /[\p{L}\p{N}_)]/u

  /** Characters no wiki link target has, but TOML and JSON arrays of strings do (`[['\\(', '\\)']]`). */
  const NOT_A_TARGET = /['"\\,=`{}<>]/

  /**
   * `[[id]]` wiki links, markdown links to `.md`/`.json` files and reference-style links through a link reference
   * definition, outside code: fenced blocks (at any indentation, as inside list items), inline code spans and the code
   * blocks of static site generators (`CODE_BLOCKS`), where TOML's `[[menus.main]]` table headers live. A `[[…]]`
   * whose target holds quotes, commas or `=` is an array literal, not a link.
   *
   * `[[a|b]]`: Obsidian and Foam write the note first (`[[note|label]]`), Dendron the label (`[[label|note]]`), and the
   * text does not say which. Both sides are kept: `a` is the target and `b` (`or`) is tried when `a` names no note,
   * except that a `dendron://vault/note` side is the note whichever side it is on.
   *
   * A definition `[label]: target` (CommonMark; labels matched case-insensitively, blanks collapsed) is read as a link
   * to its target when its label is used: `[text][label]`, `[label][]`, `[label]`, or a wiki link `[[label]]` (Foam
   * writes a definition for each wiki link and resolves the link to it). A wiki link with a definition follows the
   * definition when that names a resource file or a URL; otherwise (`[note]: note`, no extension) it stays a wiki link.
   *
   * @example
   * ResourceParse.inlineReferences("{{< code-toggle >}}\n[[menus.main]]\n{{< /code-toggle >}}\n[[git-ops]]", "a.md")
   * // [{ kind: "id", value: "git-ops" }]
   */
  export function inlineReferences(body: string, from: string, mdx = false): RawRef[] {
    // Most files have no link at all: skip the code-stripping passes for them.
    const definable = body.includes("]:")
    if (!body.includes("[[") && !body.includes("](") && !definable) return []
    const codeless =
      body.includes("```") ||
      body.includes("~~~") ||
      ((body.includes("{") || body.includes("<")) && CODE_BLOCK_HINT.test(body))
        ? withoutCode(body)
        : body
    // Definitions are read before inline code is cut: a label may hold code (`` [`GenericArgs`]: ./generic_args.md ``).
    const defining = definable ? (mdx ? withoutJsx(codeless) : codeless) : undefined
    const definitions = defining === undefined ? undefined : definitionsOf(defining)
    const plain = codeless.replace(INLINE_CODE, "")
    const text = mdx ? withoutJsx(plain) : plain
    const out: RawRef[] = []
    // exec loops: matchAll copies the expression on every call.
    let m: RegExpExecArray | null
    WIKI.lastIndex = 0
    while ((m = WIKI.exec(text))) {
      // `[[1]](page.md)` and `[[1]][ref]` are markdown links whose text is `[1]`, not wiki links.
      const next = text[m.index + m[0].length]
      if (next === "(" || next === "[") continue
      // `df[[col]]` (R, a nested index) is code, not a link.
      if (m.index > 0 && INDEXED.test(text[m.index - 1])) continue
      // A shell test (`[[ -f file ]]`, `[[ $a || $b ]]`).
      const raw = m[1].trim()
      if (!raw || NOT_A_NOTE.test(raw)) continue
      // `[[#Heading|label]]` links the page's own section: its label is no note.
      if (raw.startsWith("#")) continue
      const definition =
        definitions?.get(label(m[2] === undefined ? m[1] : `${m[1]}|${m[2]}`)) ?? definitions?.get(label(m[1]))
      if (definition !== undefined) {
        const ref = linkTarget(definition, from)
        if (ref !== null) {
          if (ref) out.push(ref)
          continue
        }
      }
      // Obsidian escapes the pipe inside tables: `[[note\|label]]`.
      const left = wikiSide(m[1].endsWith("\\") ? m[1].slice(0, -1) : m[1])
      // A side that is no target (`'`, `,`…) is a label; a label of a shell test (`[[ "$a" = b || c ]]`) never counts.
      const right = m[2] === undefined || m[2].includes("|") || (!left && /^\s/.test(m[1])) ? undefined : wikiSide(m[2])
      // `[[label|#section]]` (Dendron) links the page's own section, `[[label|https://…]]` a page elsewhere: the label is
      // no note.
      if (left === "self" || right === "self" || left === "elsewhere" || right === "elsewhere") continue
      if (right?.vault !== undefined && left?.vault === undefined) out.push({ kind: "id", ...right })
      else if (left && right && left.vault === undefined) out.push({ kind: "id", ...left, or: right })
      else if (left) out.push({ kind: "id", ...left })
      else if (right) out.push({ kind: "id", ...right })
    }
    LINK.lastIndex = 0
    while ((m = LINK.exec(text))) {
      const ref = linkTarget(m[1], from)
      if (ref) out.push(ref)
    }
    if (definitions?.size && defining !== undefined) {
      // A definition is a link where its label is used: `[text][label]`, `[label][]`, `[label]`, `[[label]]`.
      const uses = new Set<string>()
      const rest = defining.replace(DEFINITION, "")
      // Inline code stays in (a label may hold some), but a bracket inside a code span (`` `[x]` ``) is no use.
      const spans: [number, number][] = []
      INLINE_CODE.lastIndex = 0
      while ((m = INLINE_CODE.exec(rest))) spans.push([m.index, m.index + m[0].length])
      let span = 0
      BRACKETED.lastIndex = 0
      while ((m = BRACKETED.exec(rest))) {
        while (span < spans.length && spans[span][1] <= m.index) span++
        if (span < spans.length && spans[span][0] < m.index) continue
        uses.add(label(m[1]))
      }
      for (const [name, target] of definitions) {
        if (!uses.has(name)) continue
        const ref = linkTarget(target, from)
        if (ref) out.push(ref)
      }
    }
    return out
  }

  /** A link label as CommonMark matches it: blanks collapsed, case folded. */
  function label(text: string): string {
    return text.trim().replace(/\s+/g, " ").toLowerCase()
  }

  /** The link reference definitions of a text (code blocks out), by label; the first of a label wins, as in CommonMark. */
  function definitionsOf(text: string): Map<string, string> {
    const found = new Map<string, string>()
    DEFINITION.lastIndex = 0
    let m: RegExpExecArray | null
    while ((m = DEFINITION.exec(text))) {
      const name = label(m[1])
      // `[^1]: text` is a footnote (GitHub), not a definition.
      if (!name || name.startsWith("^") || found.has(name)) continue
      const target = m[2].startsWith("<") ? m[2].slice(1, -1) : m[2]
      found.set(name, target)
    }
    return found
  }

  /**
   * The reference a link destination makes: a path for a `.md`/`.mdx`/`.markdown`/`.json` target (relative to the
   * linking file, with the type folder as `fallback` for a bare one; from the type folder for Zola's `@/`), undefined
   * for a link to anything else that is nothing here (a URL, an absolute path, an anchor, a placeholder), null for a
   * target that is no file link at all (an extensionless name, which a wiki link then keeps as its own target).
   */
  function linkTarget(destination: string, from: string): RawRef | undefined | null {
    // `page.md#setup` and `page.md?plain=1` (GitHub's source view) name the file `page.md`.
    const cut = destination.search(/[#?]/)
    const target = cut < 0 ? destination : destination.slice(0, cut)
    // Zola's internal links name a page from the content root (`@/blog/post.md`): here the type folder.
    const fromRoot = target.startsWith("@/")
    if (!target || (!fromRoot && SCHEME.test(target)) || target.startsWith("/")) return undefined
    // A placeholder filled in later (a skill's `{baseDir}/references/x.md`, `${CLAUDE_PLUGIN_ROOT}/…`, a Hugo
    // `{{< ref … >}}`) names no file that exists as written.
    if (PLACEHOLDER.test(target)) return undefined
    if (!/\.(md|mdx|markdown|json)$/i.test(target)) return path.posix.extname(target) ? undefined : null
    const section = destination[cut] === "#" ? { section: true as const } : {}
    if (fromRoot) return { kind: "path", value: fromTypeRoot(from, target.slice(2)), ...section }
    const value = resolveRelative(from, target)
    // Docusaurus resolves a link not starting with `./` or `../` next to the file, then from its docs folder.
    if (target.startsWith("./") || target.startsWith("../") || target.startsWith(".\\"))
      return { kind: "path", value, ...section }
    const fallback = fromTypeRoot(from, target)
    return fallback === value ? { kind: "path", value, ...section } : { kind: "path", value, fallback, ...section }
  }

  /**
   * One side of a wiki link as a note: `Note`, `Note#Heading` (the note, `section`; whatever the section holds, as
   * Dendron's ranges `note#a,1:#*` do), `dendron://vault/note` (`vault`); "self" for `#Heading` alone (the page's own
   * section); "elsewhere" for a URL; undefined for a side that is no target (quotes, commas…: a label).
   */
  function wikiSide(
    side: string,
  ): { value: string; section?: true; vault?: string } | "self" | "elsewhere" | undefined {
    let target = side.trim()
    if (!target) return undefined
    const dendron = DENDRON.exec(target)
    const vault = dendron?.[1]
    if (dendron) target = dendron[2].trim()
    // As Obsidian reads them: `[[Note#Heading]]` and `[[Note#^block]]` link the note, `[[#Heading]]` the page itself.
    const hash = target.indexOf("#")
    // `.md`/`.mdx` only: resources are no `.markdown` files, and Dendron names notes with dots (`concepts.markdown`).
    const note = (hash < 0 ? target : target.slice(0, hash)).trim().replace(/\.mdx?$/i, "")
    if (!note) return hash < 0 ? undefined : "self"
    // A URL (`[[Awesome Dendron|https://github.com/…]]`) names a page elsewhere, as a markdown link to one does.
    if (vault === undefined && SCHEME.test(note) && !/^[a-z]:[\\/]/i.test(note)) return "elsewhere"
    if (NOT_A_TARGET.test(note) || NOT_A_NOTE.test(note)) return undefined
    return {
      value: note,
      ...(hash < 0 ? {} : { section: true as const }),
      ...(vault === undefined ? {} : { vault }),
    }
  }

  const MDX = /\.mdx$/i
  /** An MDX file's ESM lines (`import Card from '…'`, `export const x = …`). */
  const ESM = /^[ \t]*(?:import|export)\b.*$/gm

  /**
   * An MDX text (code already out) without what is code there: its `import`/`export` lines and its `{…}` JavaScript
   * expressions (JSX attributes and children: `{[[1, 2]]}`, `items={[…]}`), nested braces counted; a `{` never closed
   * is left as text. Markdown links in the text and inside JSX children stay.
   */
  function withoutJsx(text: string): string {
    const lines = text.replace(ESM, "")
    if (!lines.includes("{")) return lines
    let out = ""
    let from = 0
    let open = lines.indexOf("{")
    while (open >= 0) {
      let depth = 0
      let end = -1
      for (let i = open; i < lines.length; i++) {
        const c = lines.charCodeAt(i)
        if (c === 123) depth++
        else if (c === 125 && --depth === 0) {
          end = i
          break
        }
      }
      if (end < 0) break
      out += lines.slice(from, open)
      from = end + 1
      open = lines.indexOf("{", from)
    }
    return out + lines.slice(from)
  }

  /**
   * The text without its code blocks: fences (``` or ~~~, closed by the same fence or the end of text, recognised at
   * any indentation: inside a list item a fence is indented as deep as the item's text) and `CODE_BLOCKS`. Linear:
   * whether an opener is ever closed is known from the last line each closer appears on.
   */
  function withoutCode(body: string): string {
    const lines = body.split("\n")
    const lastClose = new Map<string, number>()
    if (CODE_BLOCK_HINT.test(body))
      lines.forEach((line, i) => {
        if (line.includes("{{") || line.includes("{%") || line.includes("</"))
          for (const [key, close] of CLOSERS) if (close.test(line)) lastClose.set(key, i)
      })
    const kept: string[] = []
    let fence: string | undefined
    let block: RegExp | undefined
    let inCodePane = false
    for (let i = 0; i < lines.length; i++) {
      let line = lines[i]
      if (fence) {
        const m = /^\s*(`{3,}|~{3,})/.exec(line)
        if (m && m[1][0] === fence[0] && m[1].length >= fence.length && !line.trim().slice(m[1].length).trim())
          fence = undefined
        continue
      }
      if (block) {
        const m = block.exec(line)
        if (!m) continue
        block = undefined
        line = line.slice(m.index + m[0].length)
      }
      const m = /^\s*(`{3,}|~{3,})/.exec(line)
      if (m) {
        fence = m[1]
        continue
      }
      if (line.includes("tabpane")) {
        const pane = Opener.first(PANE_OPEN, line)
        if (pane) inCodePane = !TEXT_TRUE.test(pane[1])
        if (PANE_CLOSE.test(line)) inCodePane = false
      }
      // Openers, possibly several on one line (`<pre>a</pre> <pre>b`): cut each closed block out. The next opener is
      // looked for after the block, not in the line joined again from its start: that was quadratic in the blocks of a
      // long line (`<pre>a</pre>` repeated after 500 KB of text: 16 s for 1 MB). So an opener whose text a block
      // split (`{{<` block `code >}}`) is no longer put together.
      for (let k = 0; k < CODE_BLOCKS.length && !block; k++) {
        const kind = CODE_BLOCKS[k]
        const parts: string[] = []
        let from = 0
        let open: RegExpExecArray | null
        while (!block && (open = Opener.first(kind.open, line, from))) {
          const key = `${k}:${open[1].toLowerCase()}`
          if ((lastClose.get(key) ?? -1) < i) break
          if (kind.when && !kind.when(open[0], inCodePane)) break
          const close = CLOSERS.get(key)!
          const after = open.index + open[0].length
          const end = close.exec(line.slice(after))
          parts.push(line.slice(from, open.index))
          if (end) from = after + end.index + end[0].length
          else {
            from = line.length
            block = close
          }
        }
        if (parts.length) line = parts.join("") + line.slice(from)
      }
      kept.push(line)
    }
    return kept.join("\n")
  }

  function unique(values: string[]): string[] {
    // Lists are short (tags, names): a scan is cheaper than a Set.
    if (values.length < 2) return values
    const out: string[] = []
    for (const v of values) if (!out.includes(v)) out.push(v)
    return out
  }
}
