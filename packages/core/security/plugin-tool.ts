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
  export const LIMITS = { depth: 8, strings: 2000, length: 4096, candidates: 500 }

  export type Candidate = { path: string; exists: boolean; from: string }

  /** Every string in `value` with where it was found (`a.b[2]`), bounded in depth and count. Keys count too. */
  export function strings(value: unknown): { text: string; at: string }[] {
    const out: { text: string; at: string }[] = []
    const seen = new Set<unknown>()
    const walk = (v: unknown, at: string, depth: number) => {
      if (out.length >= LIMITS.strings || depth > LIMITS.depth) return
      if (typeof v === "string") {
        out.push({ text: v, at })
        return
      }
      if (!v || typeof v !== "object" || seen.has(v)) return
      seen.add(v)
      if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${at}[${i}]`, depth + 1))
      else
        for (const [k, item] of Object.entries(v)) {
          if (k.includes("/") || k.startsWith(".") || k.startsWith("~")) out.push({ text: k, at: `${at}{key}` })
          walk(item, at ? `${at}.${k}` : k, depth + 1)
        }
    }
    walk(value, "", 0)
    return out
  }

  /** The whole string plus tokens that look like paths (contain `/`, start with `.` or `~`, or carry an extension). */
  function pieces(text: string): string[] {
    const out = new Set<string>()
    const trimmed = text.trim()
    if (trimmed && trimmed.length <= LIMITS.length && !trimmed.includes("\n")) out.add(trimmed)
    if (text.length > LIMITS.length * 16) return [...out]
    for (const token of text.split(/[\s,;"'`()<>[\]{}|]+/)) {
      let t = token
      const eq = t.indexOf("=")
      if (eq > 0 && !t.startsWith("/")) t = t.slice(eq + 1)
      if (t.startsWith("@")) t = t.slice(1)
      if (t.length > 1024) continue
      let cut = t.length
      while (cut > 0 && (t[cut - 1] === "." || t[cut - 1] === ":")) cut--
      t = t.slice(0, cut)
      if (!t) continue
      if (t.includes("/") || t.startsWith(".") || t.startsWith("~") || /\.[A-Za-z0-9]{1,8}$/.test(t)) out.add(t)
    }
    return [...out]
  }

  export type Context = { directory: string; cwd?: string; home: string }

  /**
   * Candidate paths of a tool's arguments.
   *
   * @example
   * SecurityPluginTool.candidates({ query: "hello world" }, { directory: "/repo", home: "/h" }) // the text, resolved
   */
  export function candidates(args: unknown, ctx: Context): Candidate[] {
    const out = new Map<string, Candidate>()
    for (const { text, at } of strings(args)) {
      for (const piece of pieces(text)) {
        const bases = new Set<string>()
        if (piece.startsWith("file://")) {
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
          const abs = p.normalize("NFC")
          if (out.has(abs)) continue
          out.set(abs, { path: abs, exists: exists(abs), from: at || "(argument)" })
          if (out.size >= LIMITS.candidates) return [...out.values()]
        }
      }
    }
    return [...out.values()]
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
