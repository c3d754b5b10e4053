import path from "path"

/**
 * Whether a rename's new name is a name at all in the file's language, checked before any server is asked (a server
 * may write whatever it is given: `class`, `a b` or `x; process.exit(1)` into every file).
 *
 * - TypeScript/JavaScript (`.ts .tsx .mts .cts .js .jsx .mjs .cjs`): an ECMAScript IdentifierName (first character
 *   ID_Start, `$` or `_`; then ID_Continue, `$`, ZWNJ or ZWJ; Unicode included, `\u` escapes not accepted) that is not
 *   a reserved word (strict mode and modules: `class`, `let`, `yield`, `await`, `enum`, `implements`, …).
 * - Python (`.py .pyi`): `str.isidentifier()` (first XID_Start or `_`, then XID_Continue) and not a keyword of
 *   `keyword.kwlist` (soft keywords such as `match`, `case`, `type` are names).
 * - other languages: a conservative check only: letters, digits, combining marks, `_`, `$` and `-`, not starting
 *   with a digit or `-` (no white space, quotes, brackets or operators); the server decides the rest.
 *
 * @example
 * LspNames.check("src/a.ts", "class") // "it is a reserved word in TypeScript/JavaScript"
 * LspNames.check("src/a.ts", "total") // undefined
 */
export namespace LspNames {
  const SCRIPT = new Set([".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"])
  const PYTHON = new Set([".py", ".pyi"])

  /** ECMAScript reserved words, with those reserved in strict mode code and modules (TypeScript files are both). */
  export const SCRIPT_RESERVED = new Set(
    (
      "await break case catch class const continue debugger default delete do else enum export extends false finally " +
      "for function if import in instanceof new null return super switch this throw true try typeof var void while " +
      "with yield implements interface let package private protected public static"
    ).split(" "),
  )

  /** Python 3's `keyword.kwlist`. */
  export const PYTHON_KEYWORDS = new Set(
    (
      "False None True and as assert async await break class continue def del elif else except finally for from " +
      "global if import in is lambda nonlocal not or pass raise return try while with yield"
    ).split(" "),
  )

  export type Language = "TypeScript/JavaScript" | "Python" | "other"

  export function language(file: string): Language {
    const ext = path.extname(file).toLowerCase()
    if (SCRIPT.has(ext)) return "TypeScript/JavaScript"
    if (PYTHON.has(ext)) return "Python"
    return "other"
  }

  /** Why `name` cannot be the new name of a symbol in `file`, or undefined when it can. */
  export function check(file: string, name: string): string | undefined {
    if (!name) return "it is empty"
    const lang = language(file)
    const odd = [...name].find((ch) => /[\s\p{Cc}]/u.test(ch))
    if (odd) return `it contains ${describe(odd)} (a name is one word)`
    if (lang === "TypeScript/JavaScript") {
      const bad = firstBad(name, /[\p{ID_Start}$_]/u, /[\p{ID_Continue}$\u200c\u200d]/u)
      if (bad)
        return `${bad} in ${lang}: an identifier starts with a letter, $ or _ and goes on with letters, digits, $ or _`
      if (SCRIPT_RESERVED.has(name)) return `it is a reserved word in ${lang}`
      return undefined
    }
    if (lang === "Python") {
      const bad = firstBad(name, /[\p{XID_Start}_]/u, /(?![\u200c\u200d])\p{XID_Continue}/u)
      if (bad) return `${bad} in ${lang}: an identifier starts with a letter or _ and goes on with letters, digits or _`
      if (PYTHON_KEYWORDS.has(name)) return `it is a keyword in ${lang}`
      return undefined
    }
    const bad = firstBad(name, /[\p{L}\p{Nl}_$]/u, /[\p{L}\p{M}\p{N}\p{Pc}$-]/u)
    if (bad)
      return `${bad} (for this file type only letters, digits, _, $ and - are accepted, not starting with a digit or -)`
    return undefined
  }

  function firstBad(name: string, start: RegExp, rest: RegExp) {
    const chars = [...name]
    if (!start.test(chars[0])) return `it starts with ${describe(chars[0])}, which cannot start a name`
    const odd = chars.slice(1).find((ch) => !rest.test(ch))
    return odd ? `it contains ${describe(odd)}, which cannot be part of a name` : undefined
  }

  function describe(ch: string) {
    const code = "U+" + ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")
    if (ch === " ") return "a space"
    if (/\s/u.test(ch)) return `white space (${code})`
    if (/\p{C}/u.test(ch)) return `a control or invisible character (${code})`
    return `"${ch}"`
  }
}
