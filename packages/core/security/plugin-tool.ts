import fs from "fs"
import path from "path"

/**
 * Paths hidden in the arguments of tools whose meaning is unknown (other plugins' tools, MCP tools): every string,
 * however deeply nested (bounded), as a whole and split into path-like tokens, resolved against the project folder,
 * the working directory and `~`. A candidate that exists is read by the tool as far as anyone can tell; any candidate
 * might be created or changed.
 *
 * @example
 * SecurityPluginTool.candidates({ files: [{ p: "secrets/x" }] }, { directory: "/repo", home: "/home/me" })
 * // [{ path: "/repo/secrets/x", exists: true, from: "files[0].p" }]
 */
export namespace SecurityPluginTool {
  /**
   * How far arguments are read. Each is far beyond what a model writes in one call (its output is a few hundred KB at
   * most); arguments past one are not allowed unread: `scan` says so and the call is refused (`SecurityDecide.opaque`).
   */
  export const LIMITS = { depth: 64, strings: 20_000, length: 4096, text: 4 * 1024 * 1024, candidates: 5_000 }

  /** The longest path the kernel accepts (`PATH_MAX`): a longer one, once normalised, names no file. */
  const PATH_MAX = 4096

  export type Candidate = { path: string; exists: boolean; from: string }

  /** Every string in `value` with where it was found (`a.b[2]`), bounded in depth and count. Keys count too. */
  export function strings(value: unknown): { text: string; at: string }[] {
    return walk(value).strings
  }

  function walk(value: unknown): { strings: { text: string; at: string }[]; incomplete?: string } {
    const out: { text: string; at: string }[] = []
    const seen = new Set<unknown>()
    let incomplete: string | undefined
    const visit = (v: unknown, at: string, depth: number) => {
      if (incomplete) return
      if (out.length >= LIMITS.strings) return void (incomplete = `more than ${LIMITS.strings} strings`)
      if (depth > LIMITS.depth) return void (incomplete = `nested deeper than ${LIMITS.depth} levels (at ${at})`)
      if (typeof v === "string") {
        if (v.length > LIMITS.text)
          return void (incomplete = `a string of ${v.length} characters (at ${at || "(argument)"})`)
        out.push({ text: v, at })
        return
      }
      if (!v || typeof v !== "object" || seen.has(v)) return
      seen.add(v)
      if (Array.isArray(v)) v.forEach((item, i) => visit(item, `${at}[${i}]`, depth + 1))
      else
        for (const [k, item] of Object.entries(v)) {
          // A key can name a file as well as a value can (`{ files: { "opencode.json": "…" } }`); a plain word
          // (`secrets: true`) is an option's name.
          if (/[./~]/.test(k)) out.push({ text: k, at: `${at}{key}` })
          visit(item, at ? `${at}.${k}` : k, depth + 1)
        }
    }
    visit(value, "", 0)
    return { strings: out, incomplete }
  }

  /**
   * The whole string plus tokens that look like paths (contain `/`, start with `.` or `~`, or carry an extension), the
   * parts of a list (lines, or split at `,` `;` tabs and backquotes: a name with a space survives whole), quoted
   * names, and the same again for the text with `%XX` and `\ ` escapes undone.
   */
  function pieces(text: string): string[] {
    const out = new Set(piecesOf(text))
    const unescaped = unescape(text)
    if (unescaped !== text) for (const p of piecesOf(unescaped)) out.add(p)
    return [...out]
  }

  function unescape(text: string): string {
    let t = text.replaceAll("\\ ", " ")
    if (/%[0-9a-f]{2}/i.test(t))
      try {
        t = decodeURIComponent(t)
      } catch {
        t = t.replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
      }
    return t
  }

  function piecesOf(text: string): string[] {
    const out = new Set<string>()
    const trimmed = text.trim()
    if (trimmed && trimmed.length <= LIMITS.length && !trimmed.includes("\n")) out.add(trimmed)
    // A name with spaces (`docs/Private Notes.md`) as one part of a list, or quoted inside a longer text.
    if (/[\n,;\t`]/.test(text))
      for (const part of text.split(/[\n,;\t`]+/)) {
        const t = part.trim()
        if (t && t.length <= LIMITS.length) out.add(t)
      }
    if (text.includes('"') || text.includes("'"))
      for (const m of text.matchAll(/"([^"\n]{1,4096})"|'([^'\n]{1,4096})'/g)) out.add((m[1] ?? m[2]).trim())
    for (const token of text.split(/[\s,;"'`()<>[\]{}|]+/)) {
      let t = token
      const eq = t.indexOf("=")
      if (eq > 0 && !t.startsWith("/")) t = t.slice(eq + 1)
      if (t.startsWith("@")) t = t.slice(1)
      let cut = t.length
      while (cut > 0 && (t[cut - 1] === "." || t[cut - 1] === ":")) cut--
      t = t.slice(0, cut)
      if (!t) continue
      if (t.includes("/") || t.startsWith(".") || t.startsWith("~") || /\.[A-Za-z0-9]{1,8}$/.test(t)) out.add(t)
    }
    return [...out]
  }

  export type Context = { directory: string; cwd?: string; home: string }

  export type Scan = {
    candidates: Candidate[]
    /** Set when the arguments go past `LIMITS`: what was not read, so nothing may be allowed on what was. */
    incomplete?: string
  }

  /**
   * Candidate paths of a tool's arguments, and whether all of them were read. A token is resolved however long it
   * is (`/././…/.env` normalises to a short path); one whose normalised path is longer than the kernel accepts names
   * no file. Any `file:` URL (`file:///x`, `file:/x`) is read as the path it names.
   *
   * @example
   * SecurityPluginTool.scan({ paths: ["a.md", "secrets/x"] }, { directory: "/repo", home: "/h" }).candidates.length // 2
   */
  export function scan(args: unknown, ctx: Context): Scan {
    const out = new Map<string, Candidate>()
    const walked = walk(args)
    for (const { text, at } of walked.strings) {
      for (const piece of pieces(text)) {
        const bases = new Set<string>()
        if (/^file:/i.test(piece)) {
          try {
            bases.add(decodeURIComponent(new URL(piece).pathname))
          } catch {
            continue
          }
        } else if (piece === "~" || piece.startsWith("~/")) bases.add(path.join(ctx.home, piece.slice(1)))
        else if (path.isAbsolute(piece)) bases.add(path.resolve(piece))
        else {
          bases.add(path.resolve(ctx.directory, piece))
          if (ctx.cwd && ctx.cwd !== ctx.directory) bases.add(path.resolve(ctx.cwd, piece))
        }
        for (const p of bases) {
          if (p.length > PATH_MAX) continue
          const abs = p.normalize("NFC")
          if (out.has(abs)) continue
          if (out.size >= LIMITS.candidates)
            return { candidates: [...out.values()], incomplete: `more than ${LIMITS.candidates} path-like values` }
          out.set(abs, { path: abs, exists: exists(abs), from: at || "(argument)" })
        }
      }
    }
    return { candidates: [...out.values()], incomplete: walked.incomplete }
  }

  /**
   * Candidate paths of a tool's arguments (`scan` without the completeness flag, for callers that only look).
   *
   * @example
   * SecurityPluginTool.candidates({ query: "hello world" }, { directory: "/repo", home: "/h" }) // the text, resolved
   */
  export function candidates(args: unknown, ctx: Context): Candidate[] {
    return scan(args, ctx).candidates
  }

  function exists(p: string) {
    try {
      fs.lstatSync(p)
      return true
    } catch {
      return false
    }
  }

  /** The text of a tool result as the model will see it: strings as they are, anything else as JSON (what OpenCode sends the model for an object result). */
  export function serialise(result: unknown): string {
    if (typeof result === "string") return result
    if (result === undefined) return ""
    try {
      return JSON.stringify(result, null, 2) ?? String(result)
    } catch {
      return String(result)
    }
  }
}
