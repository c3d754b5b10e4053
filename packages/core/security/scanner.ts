import path from "path"
import type { SecurityConfig } from "./config"
import { Literals } from "../util/literals"
import { SecurityEncoding } from "./encoding"
import { SecurityFingerprint } from "./fingerprint"
import { SecurityRole } from "./role"
import type { SecuritySchema } from "./schema"
import { SecuritySecrets } from "./secrets"
import { SecuritySegments } from "./segments"

/**
 * Finds protected content in any text bound for the model or a hook: protected marker segments, mentions of
 * protected paths, well-known secrets, copies of protected file content — also base64- or hex-encoded, at any
 * wrapping, as hex dumps, byte lists or escape strings, and encoded more than once (`SecurityEncoding`). Returns
 * ranges; `SecurityRedact` replaces them.
 *
 * A scanner is compiled once per policy, role and scope: `tool` (tool output: what `read` or `llm` protects) or `llm`
 * (other model-bound text: what `llm` protects).
 *
 * @example
 * const scanner = LLMScanner.create(config, { role: "viewer", scope: "llm" })
 * const ranges = LLMScanner.scanForProtectedContent("…", scanner)
 */
export namespace LLMScanner {
  export type Kind = "segment" | "secret" | "copy" | "encoded" | "path"
  export type Range = { start: number; end: number; kind: Kind; label: string; id?: string }
  export type Scope = "tool" | "llm"

  export type Scanner = {
    scope: Scope
    markers: (SecuritySegments.Pair & { id: string })[]
    secrets: boolean
    indexes: SecurityFingerprint.Index[]
    pathRules: SecurityConfig.Rule[]
    literals?: RegExp
    root: string
    home: string
    nocase: boolean
    /** True when the scanner can find nothing (no policy): scanning is then a no-op. */
    inert: boolean
  }

  export type ScanOptions = {
    /** Mentions of protected paths: redact the whole line (tool listings), only the path, or ignore them. */
    paths?: "line" | "token" | "off"
    /** Folder relative path mentions resolve against (default: the policy root). */
    base?: string
    /** Extra fingerprints for this text only (e.g. segments of the file a tool just read). */
    extra?: SecurityFingerprint.Index[]
  }

  /** A scanner that finds nothing. */
  export const INERT: Scanner = {
    scope: "llm",
    markers: [],
    secrets: false,
    indexes: [],
    pathRules: [],
    root: "/",
    home: "/",
    nocase: false,
    inert: true,
  }

  /** Operations whose protection a scope enforces. */
  export function operations(scope: Scope): SecuritySchema.Operation[] {
    return scope === "tool" ? ["read", "llm"] : ["llm"]
  }

  /**
   * Compiles a scanner for a policy (undefined: no policy, inert), the role in force and a scope.
   *
   * @example
   * LLMScanner.create(undefined, { role: "viewer", scope: "tool" }).inert // true
   */
  export function create(
    config: SecurityConfig.Loaded | undefined,
    options: { role: string; scope: Scope; indexes?: SecurityFingerprint.Index[] },
  ): Scanner {
    if (!config) return INERT
    const ops = operations(options.scope)
    const denies = (
      set: ReadonlySet<SecuritySchema.Operation>,
      roles: SecurityRole.Table,
      allowed: readonly string[],
    ) => ops.some((op) => set.has(op)) && !SecurityRole.allowed(roles, options.role, allowed)
    const markers = config.markers
      .filter((m) => denies(m.deniedOperations, m.roles, m.allowedRoles))
      .map((m) => ({ start: m.start, end: m.end, id: m.id }))
    const pathRules = config.rules.filter((r) => !r.implicit && denies(r.deniedOperations, r.roles, r.allowedRoles))
    const literals = Literals.source(
      pathRules.map((r) => r.literal ?? ""),
      { nocase: config.nocase },
    )
    return {
      scope: options.scope,
      markers,
      secrets: config.secrets,
      indexes: options.indexes ?? [],
      pathRules,
      literals: literals === undefined ? undefined : new RegExp(literals, config.nocase ? "gi" : "g"),
      root: config.root,
      home: config.home,
      nocase: config.nocase,
      inert: false,
    }
  }

  /**
   * Every protected range of `text` sorted by position; ranges may
   * overlap.
   *
   * @example
   * LLMScanner.scanForProtectedContent("token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", scanner)
   * // [{ start: 6, end: 46, kind: "secret", label: "secret (github-token)", … }]
   */
  export function scanForProtectedContent(text: string, scanner: Scanner, options: ScanOptions = {}): Range[] {
    if (scanner.inert || !text) return []
    const out: Range[] = []
    content(text, scanner, options.extra, out)
    const mode = options.paths ?? "off"
    if (mode !== "off") mentions(text, scanner, mode, options.base ?? scanner.root, out)
    if (scanner.markers.length || scanner.secrets || scanner.indexes.length || options.extra?.length) {
      for (const block of SecurityEncoding.blocks(text)) {
        const label = decodedLabel(block.decoded, scanner, options.extra, 1)
        if (label)
          out.push({ start: block.start, end: block.end, kind: "encoded", label: `${block.encoding}-encoded ${label}` })
      }
      for (const run of percentRuns(text)) {
        const label = run.decoded.map((d) => decodedLabel(d, scanner, options.extra, 1)).find(Boolean)
        if (label) out.push({ start: run.start, end: run.end, kind: "encoded", label: `url-encoded ${label}` })
      }
    }
    return out.sort((a, b) => a.start - b.start || b.end - a.end)
  }

  /** A run of characters a URL or a query string can hold (linear: each character is looked at once). */
  const URL_RUN = /[^\s"'`<>]+/g
  const ESCAPE = /%[0-9A-Fa-f]{2}/

  /**
   * Percent-encoded runs (`urllib.parse.quote`, `encodeURIComponent`, `jq @uri`, `curl --data-urlencode`) with their
   * decoded text: as written, and with `+` read as a space (`quote_plus`, form encoding) when the run has one.
   */
  function percentRuns(text: string): { start: number; end: number; decoded: string[] }[] {
    if (!text.includes("%")) return []
    const out: { start: number; end: number; decoded: string[] }[] = []
    URL_RUN.lastIndex = 0
    for (let m = URL_RUN.exec(text); m; m = URL_RUN.exec(text)) {
      const run = m[0]
      if (!ESCAPE.test(run)) continue
      const decode = (s: string) =>
        s.replace(/(?:%[0-9A-Fa-f]{2})+/g, (escapes) =>
          Buffer.from(escapes.replaceAll("%", ""), "hex").toString("utf8"),
        )
      const decoded = [decode(run)]
      if (run.includes("+")) decoded.push(decode(run.replaceAll("+", " ")))
      out.push({ start: m.index, end: m.index + run.length, decoded })
    }
    return out
  }

  /** Encodings undone in turn (base64 of a hex dump of a file): at most this many. */
  const MAX_LAYERS = 3

  /**
   * The label of the first protected range of a decoded text, looking inside its own encoded blocks up to
   * `MAX_LAYERS` encodings deep; undefined when it holds nothing protected.
   */
  function decodedLabel(
    decoded: string,
    scanner: Scanner,
    extra: SecurityFingerprint.Index[] | undefined,
    layer: number,
  ): string | undefined {
    const inner: Range[] = []
    content(decoded, scanner, extra, inner)
    if (inner.length) return inner[0].label
    if (layer >= MAX_LAYERS) return undefined
    for (const block of SecurityEncoding.blocks(decoded)) {
      const label = decodedLabel(block.decoded, scanner, extra, layer + 1)
      if (label) return `${block.encoding}-encoded ${label}`
    }
    for (const run of percentRuns(decoded))
      for (const d of run.decoded) {
        const label = decodedLabel(d, scanner, extra, layer + 1)
        if (label) return `url-encoded ${label}`
      }
    return undefined
  }

  /** Segments, secrets and copies (the content kinds, also applied to decoded blocks). */
  function content(text: string, scanner: Scanner, extra: SecurityFingerprint.Index[] | undefined, out: Range[]) {
    if (scanner.markers.length) {
      for (const seg of SecuritySegments.find(text, scanner.markers)) {
        out.push({
          start: seg.start,
          end: seg.end,
          kind: "segment",
          id: scanner.markers[seg.marker].id,
          label: seg.closed ? "protected segment" : "protected segment (no end marker)",
        })
      }
    }
    if (scanner.secrets) {
      for (const s of SecuritySecrets.find(text))
        out.push({ start: s.start, end: s.end, kind: "secret", id: s.id, label: `secret (${s.id})` })
    }
    const indexes = extra?.length ? [...scanner.indexes, ...extra] : scanner.indexes
    if (indexes.length) {
      for (const m of SecurityFingerprint.find(indexes, text))
        out.push({ start: m.start, end: m.end, kind: "copy", label: "content of a protected file" })
    }
  }

  const DELIMITER = /[\s"'`<>()[\]{},;=|&!?*$]/

  function mentions(text: string, scanner: Scanner, mode: "line" | "token", base: string, out: Range[]) {
    const re = scanner.literals
    if (!re) return
    re.lastIndex = 0
    let coveredTo = -1
    for (let hit = re.exec(text); hit; hit = re.exec(text)) {
      if (hit.index < coveredTo) continue
      let start = hit.index
      let end = hit.index + hit[0].length
      while (start > 0 && !DELIMITER.test(text[start - 1]) && text[start - 1] !== ":") start--
      while (end < text.length && !DELIMITER.test(text[end]) && text[end] !== ":") end++
      let token = text.slice(start, end)
      while (/[.,:]$/.test(token)) token = token.slice(0, -1)
      if (!token || token.length > 4096) continue
      const rule = protectedMention(token, scanner, base)
      coveredTo = end
      re.lastIndex = Math.max(re.lastIndex, end)
      if (!rule) continue
      if (mode === "token") {
        out.push({ start, end: start + token.length, kind: "path", id: rule.id, label: "protected path" })
        continue
      }
      const lineStart = text.lastIndexOf("\n", start - 1) + 1
      let lineEnd = text.indexOf("\n", end)
      if (lineEnd < 0) lineEnd = text.length
      if (text[lineEnd - 1] === "\r") lineEnd--
      out.push({ start: lineStart, end: lineEnd, kind: "path", id: rule.id, label: "line naming a protected path" })
      coveredTo = lineEnd
      re.lastIndex = Math.max(re.lastIndex, lineEnd)
    }
  }

  function protectedMention(token: string, scanner: Scanner, base: string): SecurityConfig.Rule | undefined {
    const candidates = new Set<string>()
    const add = (p: string) => candidates.add(p.normalize("NFC"))
    if (token.startsWith("/")) add(path.resolve(token))
    else if (token.startsWith("~/")) add(path.join(scanner.home, token.slice(2)))
    else {
      add(path.resolve(base, token))
      if (base !== scanner.root) add(path.resolve(scanner.root, token))
    }
    for (const abs of candidates) {
      for (const rule of scanner.pathRules) if (rule.test(abs)) return rule
    }
    return undefined
  }

  /** Short description of ranges for audit events (kinds and rule ids, never the content). */
  export function summary(ranges: readonly Range[]): { kinds: string[]; ids: string[] } {
    return {
      kinds: [...new Set(ranges.map((r) => r.kind))],
      ids: [...new Set(ranges.map((r) => r.id).filter((i): i is string => !!i))],
    }
  }
}
