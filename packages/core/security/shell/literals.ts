/**
 * The quoted string literals of program text (Python, Node, Perl, awk… given to an interpreter), found in one pass.
 * A literal opens at a quote outside any other literal and closes at the next unescaped same quote on its line
 * (a backslash escapes the next character in `"…"` and `'…'`, not in backquotes). A quote that never closes on its
 * line opens nothing, and neither does any same quote it passed over: scanned from those, the text reads the same and
 * fails at the same place. That keeps the scan linear where a pattern such as `"((?:[^"\\\n]|\\.)*)"` retried every
 * quote of a long unterminated run (64 KB of `\"`: seconds).
 *
 * @example
 * ShellLiterals.scan(`open("a.txt") + 'b'`, `"'`).map((l) => l.raw) // ["a.txt", "b"]
 */
export namespace ShellLiterals {
  export type Literal = {
    /** The quote character. */
    quote: string
    /** Where the opening quote is, and just after the closing one. */
    start: number
    end: number
    /** The text between the quotes, escapes as written. */
    raw: string
  }

  /**
   * The literals of `code` quoted with one of `quotes`, in order; those longer than `max` characters are left out
   * (and their text is not searched for others).
   *
   * @example
   * ShellLiterals.scan(`x = "a\\"b"`, `"`)[0].raw // 'a\\"b'
   */
  export function scan(code: string, quotes: string, max = Infinity): Literal[] {
    const out: Literal[] = []
    /** Per quote character, the position before which it opens nothing (a failed scan passed there). */
    const dead = new Map<string, number>()
    let i = 0
    while (i < code.length) {
      const q = code[i]
      if (!quotes.includes(q) || i < (dead.get(q) ?? 0)) {
        i++
        continue
      }
      const escapes = q !== "`"
      let j = i + 1
      let closed = -1
      while (j < code.length) {
        const ch = code[j]
        if (ch === "\n") break
        if (escapes && ch === "\\") {
          if (j + 1 >= code.length || code[j + 1] === "\n") break
          j += 2
          continue
        }
        if (ch === q) {
          closed = j
          break
        }
        j++
      }
      if (closed < 0) {
        dead.set(q, j)
        i++
        continue
      }
      if (closed - i - 1 <= max) out.push({ quote: q, start: i, end: closed + 1, raw: code.slice(i + 1, closed) })
      i = closed + 1
    }
    return out
  }
}
