import path from "path"
import { CaseFold } from "../util/casefold"
import { SecurityGlob } from "./glob"

/**
 * Rule patterns, gitignore-like: relative to the folder holding the policy file (`base`); a pattern without `/`
 * matches a name at any depth below `base`; `./name` anchors a single name to `base`; `**` and `*` match dot files
 * and dot folders; `/abs/…` and `~/…` match absolute paths anywhere. A `directory` rule protects the matched folder
 * and everything below it; a `file` rule protects exactly the matched paths.
 *
 * @example
 * const m = SecurityMatch.compile({ pattern: "secrets/**", type: "directory", base: "/repo" })
 * if ("error" in m) throw new Error(m.error)
 * SecurityMatch.test(m, "/repo/secrets/a/b.key") // true
 * SecurityMatch.test(m, "/repo/secrets")         // true
 */
export namespace SecurityMatch {
  export type Kind = "name" | "anchored" | "absolute"

  export type Compiled = {
    kind: Kind
    type: "file" | "directory"
    /** Folder the pattern is relative to (absolute, NFC; lower case when `nocase`). */
    base: string
    nocase: boolean
    /** The pattern compiled to an automaton (linear-time checks, see `SecurityGlob`). */
    glob: SecurityGlob.Glob
    /** The pattern as written. */
    source: string
    /**
     * The longest literal run of the pattern (at least 3 characters), used to find mentions of protected paths in
     * text quickly; undefined when the pattern has none.
     */
    literal?: string
  }

  export type Input = { pattern: string; type: "file" | "directory"; base: string; home?: string; nocase?: boolean }

  /**
   * Escapes a literal path for use as a pattern: `*`, `?` and `\\` become one-character classes (`[*]`), other
   * special characters get a backslash.
   *
   * @example
   * SecurityMatch.escape("notes (v2)*.md") // "notes \\(v2\\)[*].md"
   */
  export function escape(literal: string): string {
    return literal.replace(/[*?\\[\]{}()!+@,|"$^]/g, (c) =>
      c === "\\" ? "[\\\\]" : c === "*" || c === "?" ? `[${c}]` : `\\${c}`,
    )
  }

  /**
   * Compiles one pattern, or explains why it cannot be used.
   *
   * @example
   * SecurityMatch.compile({ pattern: "../x", type: "file", base: "/repo" }) // { error: "'..' may not appear …" }
   */
  export function compile(input: Input): Compiled | { error: string } {
    const nocase = input.nocase ?? false
    const written = input.pattern.normalize("NFC")
    const typo = typos(written, input.type)
    if (typo) return { error: typo }
    let p = written
    if (p.startsWith("!")) return { error: "negated patterns are not supported: a policy only adds protections" }
    if (p.includes("\0")) return { error: "the pattern contains a NUL character" }
    p = p.replace(/\/{2,}/g, "/")
    const dotted = p.startsWith("./")
    p = p.replace(/^(\.\/)+/, "")
    if (p.split("/").some((s) => s === ".." || s === "."))
      return { error: "'..' and '.' may not appear inside a pattern; use an absolute path to reach outside" }
    let kind: Kind
    let base = input.base.normalize("NFC")
    if (p === "~" || p.startsWith("~/")) {
      kind = "absolute"
      p = path.posix.join(input.home ?? "/", p.slice(1))
    } else if (p.startsWith("/")) {
      kind = "absolute"
    } else {
      kind = dotted || p.replace(/\/+$/, "").includes("/") ? "anchored" : "name"
    }
    if (p.length > 1) p = p.replace(/\/+$/, "")
    if (!p || p === "/") return { error: "the pattern matches nothing" }
    let glob: SecurityGlob.Glob
    try {
      glob = SecurityGlob.compile(p, { nocase })
    } catch (error) {
      if (SecurityGlob.PatternError.is(error)) return { error: error.message }
      return { error: `not a valid pattern: ${error instanceof Error ? error.message : String(error)}` }
    }
    return { kind, type: input.type, base, nocase, glob, source: input.pattern, literal: longestLiteral(p) }
  }

  /** Invisible characters: a pattern holding one never matches the name it shows. */
  const INVISIBLE =
    /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]/

  /**
   * Mistakes that still make a pattern, one that protects nothing or less than it shows; undefined when none.
   * (Windows separators, stray quotes and the like are refused by `SecurityGlob`.)
   */
  function typos(p: string, type: "file" | "directory"): string | undefined {
    if (!p.trim()) return "the pattern is empty"
    if (/^\s/.test(p) || (/\s$/.test(p) && !/\\ $/.test(p)))
      return "the pattern starts or ends with white space, which would be part of the name; remove it"
    const invisible = INVISIBLE.exec(p)
    if (invisible)
      return `the pattern contains an invisible character (U+${invisible[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}), so it cannot match the name it shows; retype it`
    if (/^[A-Za-z]:[\\/]/.test(p))
      return "a Windows drive path matches nothing here; use a path relative to the policy's folder, or an absolute POSIX path"
    if (/^~[^/]/.test(p)) return "only '~/' is expanded (to the home folder); '~name' would be a literal folder name"
    const variable = /^\$(\{[A-Za-z_]\w*\}|[A-Za-z_]\w*)(\/|$)/.exec(p)
    if (variable)
      return `environment variables are not expanded ('${variable[1]}' would be a literal name); write the path itself`
    if (type === "file" && p.length > 1 && p.endsWith("/"))
      return "the pattern ends with '/', so it names a folder, but a 'file' rule would protect only the folder itself, not what is inside; use type 'directory'"
    return undefined
  }

  function longestLiteral(pattern: string): string | undefined {
    const runs = pattern.split(/[*?[\]{}()!+@\\]+/).map((r) => r.replace(/^\/+|\/+$/g, ""))
    let best = ""
    for (const run of runs) if (run.length > best.length) best = run
    return best.length >= 3 ? best : undefined
  }

  /**
   * Whether an absolute, normalised NFC path is protected by the compiled pattern.
   *
   * @example
   * SecurityMatch.test(SecurityMatch.compile({ pattern: ".env*", type: "file", base: "/r" }) as any, "/r/a/.env.local")
   * // true
   */
  export function test(m: Compiled, absolute: string): boolean {
    // The glob compares case-insensitively itself (`nocase`): a lower-cased copy of the path was compared with the
    // pattern's own characters, and `İ` (lower-cased to two code units) or an astral capital then matched nothing.
    const abs = absolute
    if (m.kind === "absolute")
      return m.type === "directory" ? SecurityGlob.testWithParents(m.glob, abs) : SecurityGlob.test(m.glob, abs)
    const rel = relative(m.base, abs, m.nocase)
    if (rel === undefined || rel === "") return false
    if (m.kind === "anchored")
      return m.type === "directory" ? SecurityGlob.testWithParents(m.glob, rel) : SecurityGlob.test(m.glob, rel)
    // A name pattern: the path's own name, or for a directory rule the name of any folder on the way.
    const last = rel.lastIndexOf("/")
    if (SecurityGlob.test(m.glob, rel, last + 1)) return true
    if (m.type !== "directory") return false
    for (let start = 0, end = rel.indexOf("/"); end >= 0; start = end + 1, end = rel.indexOf("/", start))
      if (SecurityGlob.test(m.glob, rel, start, end)) return true
    return false
  }

  /**
   * `abs` relative to `base` with `/` separators, or undefined when it is outside; "" for `base` itself. With `nocase`
   * the prefix is compared in `CaseFold.fold`, whose offsets are the path's.
   */
  export function relative(base: string, abs: string, nocase = false): string | undefined {
    const a = nocase ? CaseFold.fold(abs) : abs
    const b = nocase ? CaseFold.fold(base) : base
    if (a === b) return ""
    const prefix = b.endsWith("/") ? b : b + "/"
    if (!a.startsWith(prefix)) return undefined
    return abs.slice(prefix.length)
  }
}
