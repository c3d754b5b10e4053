import z from "zod"
import { NamedError } from "../util/error"
import { lastAtMost } from "../util/sorted"

/**
 * Glob patterns of the security policy compiled to an automaton that cannot backtrack: every check walks the input
 * once, in time linear in its length (a lazily built DFA over the pattern's NFA, falling back to stepping the NFA's
 * state set when the DFA cache is full), so no pattern can make a check slow.
 *
 * Semantics: those of picomatch 4 with `{ dot: true }` (and `nocase`, the `i` flag of a regular expression) on
 * normalised paths (no empty, `.` or `..` segments, no trailing `/`):
 *
 * - `*` any run of characters within a segment (dot files too), `?` one character but `/`;
 * - `**` as a whole segment any number of segments, zero included (`a/**` also matches `a`, but not right after a
 *   `*`: `*\/**` needs the `/`, as in picomatch);
 * - `[a-z]`, `[^a-z]` (never matches `/`, unless it holds a POSIX class), POSIX classes `[[:alpha:]]`; a class with
 *   no range or special character also matches its own text (`[ab]` matches `a`, `b` and `[ab]`, as in picomatch);
 * - `{a,b}` alternatives, nested; `{a}` is literal text; `\` escapes a special character.
 *
 * What picomatch would read as a regular expression or as nothing at all is an error instead of a silent surprise:
 * extglobs (`@(…)`, `!(…)`, `+(…)`, `*(…)`, `?(…)`), parentheses, `|`, double quotes, brace ranges (`{1..3}`),
 * `[!…]` (a class containing `!` in picomatch, a negation elsewhere), unclosed `[` or `{`, reversed ranges, `**`
 * that is not a whole segment, `***`, `**` inside braces, and backslashes that look like Windows separators.
 * Deviations, all matching more than picomatch's regular expression: `/**\/x` also matches `/x`; `.*` inside braces
 * also matches a name ending in `.` (`{a.*,b}` and `a.`); and `**`, a leading `*` or POSIX class also match at line
 * breaks (`\n`, `\r`, U+2028, U+2029), where picomatch's `.` stops (`secrets/**` did not match `secrets/a\nb`). A
 * pattern has at most {@link MAX_GROUPS} brace groups (alternatives of one character each do not count).
 *
 * @example
 * const glob = SecurityGlob.compile("**\/.env*")
 * SecurityGlob.test(glob, "a/b/.env.local") // true
 */
export namespace SecurityGlob {
  export const PatternError = NamedError.create(
    "SecurityGlobPattern",
    z.object({ pattern: z.string(), offset: z.number(), reason: z.string() }),
    (d) => `${d.reason} (at '${d.pattern.slice(d.offset, d.offset + 24)}')`,
  )
  export type PatternError = InstanceType<typeof PatternError>

  export type Options = {
    /** Ignore case as a regular expression's `i` flag does (without `u`). */
    nocase?: boolean
    /** Most DFA states to keep (default: from the pattern's size); past it, checks step the NFA. */
    dfaStates?: number
  }

  /** A compiled pattern. Its DFA grows as inputs are checked (bounded); it is not shared between threads. */
  export type Glob = {
    readonly source: string
    readonly nocase: boolean
    /** States of the NFA (the DFA's states are sets of them). */
    readonly states: number
    /** @internal */
    readonly m: Machine
  }

  /**
   * Compiles a pattern; throws {@link PatternError} for a pattern that is not supported (see the namespace notes).
   *
   * @example
   * SecurityGlob.compile("src/{a,b}/*.key", { nocase: true })
   * SecurityGlob.compile("a(1).txt") // throws: parentheses are not supported …
   */
  export function compile(pattern: string, options: Options = {}): Glob {
    const nocase = options.nocase ?? false
    // Like picomatch, a leading './' (repeated) is dropped.
    const items = new Parser(pattern.replace(/^(\.\/)+(?=.)/, "")).parse()
    const nfa = build(pattern, items)
    return { source: pattern, nocase, states: nfa.atom.length, m: machine(nfa, nocase, options.dfaStates) }
  }

  /**
   * Whether `input` (or `input.slice(from, to)`) matches the whole pattern.
   *
   * @example
   * SecurityGlob.test(SecurityGlob.compile("*.key"), "id.key") // true
   * SecurityGlob.test(SecurityGlob.compile("*.key"), "a/id.key") // false: '*' stays within a segment
   */
  export function test(glob: Glob, input: string, from = 0, to = input.length): boolean {
    return run(glob.m, input, from, to, false)
  }

  /**
   * Whether `input` or one of its parent folders matches: the input cut before any `/` (not at index 0), or the root
   * `/` of an absolute input. One pass over the input.
   *
   * @example
   * SecurityGlob.testWithParents(SecurityGlob.compile("secrets"), "secrets/a/b.txt") // true
   * SecurityGlob.testWithParents(SecurityGlob.compile("/"), "/etc/passwd") // true (the root)
   */
  export function testWithParents(glob: Glob, input: string): boolean {
    return run(glob.m, input, 0, input.length, true)
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Parsing

  type Item =
    | { t: "char"; c: number }
    | { t: "set"; pred: Pred }
    | { t: "star" }
    | { t: "slash" }
    | { t: "globstar" }
    | { t: "alt"; alts: Item[][]; at: number }
    /** A class that also matches its own text (`[ab]` or the literal `[ab]`), as picomatch's `(?:\[ab\]|[ab])`. */
    | { t: "either"; pred: Pred; text: number[] }

  /** Sorted, disjoint, inclusive code-unit ranges: [lo0, hi0, lo1, hi1, …]. */
  type Ranges = number[]
  /** A set of code units: its members, or (negate) everything else; case folding applies to the members. */
  type Pred = { set: Ranges; negate: boolean; key?: string }

  const SLASH = 0x2f
  const MAX_CODE = 0xffff
  const NOT_SLASH: Pred = { set: [SLASH, SLASH], negate: true }
  const ANY: Pred = { set: [], negate: true }
  const only = (c: number): Pred => ({ set: [c, c], negate: false })

  /** What picomatch's POSIX classes stand for (its POSIX_REGEX_SOURCE), as ranges. */
  const POSIX: Record<string, { ranges: Ranges; text?: string }> = {
    alnum: { ranges: [0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a] },
    alpha: { ranges: [0x41, 0x5a, 0x61, 0x7a] },
    ascii: { ranges: [0, 0x7f] },
    blank: { ranges: [0x09, 0x09, 0x20, 0x20], text: " \t" },
    cntrl: { ranges: [0, 0x1f, 0x7f, 0x7f] },
    digit: { ranges: [0x30, 0x39] },
    graph: { ranges: [0x21, 0x7e] },
    lower: { ranges: [0x61, 0x7a] },
    print: { ranges: [0x20, 0x7e] },
    punct: { ranges: [0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x5b, 0x5d, 0x60, 0x7b, 0x7e] },
    space: { ranges: [0x09, 0x0d, 0x20, 0x20], text: " \t\r\n\v\f" },
    upper: { ranges: [0x41, 0x5a] },
    word: { ranges: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a] },
    xdigit: { ranges: [0x30, 0x39, 0x41, 0x46, 0x61, 0x66] },
  }

  /** Characters a backslash may escape outside a class (besides a space). */
  const ESCAPABLE = '[]{}()!+@,|"$^'
  /** Characters that make picomatch keep a class as a class only (its REGEX_SPECIAL_CHARS). */
  const REGEX_SPECIAL = "-*+?.^${}(|)[]"
  const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c)

  class Parser {
    i = 0
    depth = 0
    /** A '.' right after literal text (outside braces), and whether a POSIX class was seen: see parse(). */
    textDot = -1
    posix = false
    constructor(readonly p: string) {}

    fail(reason: string, at = this.i): never {
      throw new PatternError({ pattern: this.p, offset: at, reason })
    }

    parse(): Item[] {
      if (!this.p) this.fail("the pattern is empty", 0)
      if (this.p[0] === "!" && this.p[1] !== "(")
        this.fail(
          "a leading '!' negates a pattern in picomatch; negation is not supported: a policy only adds protections",
          0,
        )
      // picomatch reads a pattern with none of these characters by a shortcut that escapes only the first of a run
      // of equal characters: its '++', '$$' and '^^' become a repetition and anchors.
      if (!/(^[*!]|[/()[\]{}"])/.test(this.p))
        for (const m of this.p.matchAll(/(\\?)((\W)(\3*))/g))
          if (m[4] && "$^+".includes(m[3]))
            this.fail(
              `picomatch reads '${m[2]}' here as a repetition or an anchor, not as text; escape each one: '${m[2].replace(/./g, "\\$&")}'`,
              m.index,
            )
      const items = this.sequence()
      // picomatch rebuilds its expression from merged text tokens when it meets a POSIX class, and a '.' merged into
      // the text before it then loses its escape: it matches any character.
      if (this.posix && this.textDot >= 0)
        this.fail(
          "with a POSIX class in the pattern, picomatch reads this '.' as any character; write '[.]' for a literal '.'",
          this.textDot,
        )
      return items
    }

    /** Items up to the end, or (inside braces) up to the next top-level ',' or '}'. */
    sequence(): Item[] {
      const p = this.p
      const items: Item[] = []
      let lastDot = -2
      while (this.i < p.length) {
        const at = this.i
        const c = p[at]
        if (this.depth > 0 && (c === "," || c === "}")) break
        if (c === "\\") {
          this.escape(items)
          continue
        }
        if (c === "*") {
          this.star(items)
          continue
        }
        if (c === "?") {
          if (p[at + 1] === "(") this.fail("'?(…)' (an extglob) is not supported; write '{x,}' for an optional part")
          items.push({ t: "set", pred: NOT_SLASH })
          this.i++
          continue
        }
        if (c === "[") {
          this.bracket(items)
          continue
        }
        if (c === "{") {
          this.brace(items)
          continue
        }
        if (c === "(" || c === ")")
          this.fail(
            "parentheses are not supported (picomatch reads them as a regular-expression group, so 'a (1).txt' " +
              "would not match that name); write '\\(' and '\\)' for literal parentheses, or '{a,b}' for alternatives",
          )
        if (c === "|")
          this.fail(
            "'|' is not supported (picomatch may read it as an alternation); use '{a,b}', or '\\|' for a literal '|'",
          )
        if (c === '"')
          this.fail(
            "double quotes are not supported (picomatch drops them and reads what they enclose literally); write the " +
              "name without them, or '\\\"' for a literal quote",
          )
        if (c === "!" || c === "@" || c === "+") {
          if (p[at + 1] === "(") {
            if (c === "!")
              this.fail("'!(…)' (negation) is not supported: a policy only adds protections; list what to protect")
            if (c === "@") this.fail("'@(…)' (an extglob) is not supported; write '{a,b}' for alternatives")
            this.fail("'+(…)' (an extglob) is not supported; use '*' or list the forms with '{a,b}'")
          }
          if (c === "+" && at > 0 && "[]{}".includes(p[at - 1]) && p[at - 2] !== "\\")
            this.fail("'+' right after a bracket or brace repeats it in picomatch; write '\\+' for a literal '+'")
        }
        if (c === "." && this.depth === 0 && items[items.length - 1]?.t === "char" && this.textDot < 0)
          this.textDot = at
        if (c === "." && this.depth > 0) {
          if (lastDot === at - 1)
            this.fail(
              "brace ranges like '{1..3}' are not supported (picomatch reads them as one character); list the values: '{1,2,3}'",
            )
          lastDot = at
        }
        if (c === "/") {
          items.push(this.depth === 0 ? { t: "slash" } : { t: "char", c: SLASH })
          this.i++
          continue
        }
        const code = p.charCodeAt(at)
        if (code < 0x20 || code === 0x7f) this.fail(`the pattern contains a control character (U+${hex(code)})`)
        items.push({ t: "char", c: code })
        this.i++
      }
      return items
    }

    escape(items: Item[]) {
      const p = this.p
      const at = this.i
      const next = p[at + 1]
      if (next === undefined) this.fail("the pattern ends with a backslash; paths use '/' as the separator")
      if (next === "\\") {
        if (p[at + 2] === "\\") this.fail("three or more backslashes in a row are read inconsistently by picomatch")
        this.fail("a literal backslash in a name is written as the class '[\\\\]'; paths use '/' as the separator")
      }
      if (next === "*" || next === "?")
        this.fail(
          `'\\${next}' would match a literal '${next}': if you meant a folder separator write '/' (as in 'secrets/**'); ` +
            `for a literal '${next}' write '[${next}]'`,
        )
      if (next === "+" && p[at + 2] === "+")
        this.fail("write '\\+\\+' for literal '++' (picomatch reads '\\++' as a repetition)")
      if (next !== " " && !ESCAPABLE.includes(next))
        this.fail(
          `'\\${next}' is not an escape: a backslash escapes only the special characters ${ESCAPABLE} and a space; ` +
            "paths use '/' as the separator (write 'secrets/.env', not 'secrets\\.env')",
        )
      items.push({ t: "char", c: next.charCodeAt(0) })
      this.i += 2
    }

    star(items: Item[]) {
      const p = this.p
      const at = this.i
      let end = at
      while (p[end] === "*") end++
      const run = end - at
      if (p[end] === "(")
        this.fail("'*(…)' (an extglob) is not supported; use '*' or list the forms with '{a,b}'", end - 1)
      if (run >= 3)
        this.fail(
          `'${"*".repeat(run)}' is read as a single '*' (one level); write '**' as a whole segment for any depth, or '*'`,
        )
      this.i = end
      if (run === 1) {
        items.push({ t: "star" })
        return
      }
      if (this.depth > 0) this.fail("'**' inside braces is not supported; write one rule per alternative", at)
      const before = items[items.length - 1]
      const whole = (before === undefined || before.t === "slash") && (end === p.length || p[end] === "/")
      if (!whole)
        this.fail(
          "'**' means any depth only as a whole segment ('a/**/b'); here picomatch reads it as a single '*': " +
            "write '*', or put '**' between slashes",
          at,
        )
      items.push({ t: "globstar" })
    }

    brace(items: Item[]) {
      const p = this.p
      const open = this.i
      this.i++
      this.depth++
      const alts: Item[][] = []
      for (;;) {
        alts.push(this.sequence())
        if (this.i >= p.length)
          this.fail(
            "unclosed '{' (picomatch would then match nothing); close it, or write '\\{' for a literal '{'",
            open,
          )
        const c = p[this.i++]
        if (c === "}") break
      }
      this.depth--
      if (alts.length === 1) {
        // No comma: picomatch keeps the braces as text.
        items.push({ t: "char", c: 0x7b }, ...alts[0], { t: "char", c: 0x7d })
        return
      }
      // Alternatives that are each one character or class are one class (no branching).
      const single = (alt: Item[]) =>
        alt.length === 1 && (alt[0].t === "char" || (alt[0].t === "set" && !alt[0].pred.negate))
      if (alts.every(single)) {
        const ranges: Ranges = []
        for (const [item] of alts)
          ranges.push(...(item.t === "char" ? [item.c, item.c] : item.t === "set" ? item.pred.set : []))
        items.push({ t: "set", pred: { set: normalize(ranges), negate: false } })
        return
      }
      items.push({ t: "alt", alts, at: open })
    }

    bracket(items: Item[]) {
      const p = this.p
      const open = this.i
      if (!p.includes("]", open + 1)) {
        // picomatch: a '[' with no ']' after it is text.
        items.push({ t: "char", c: 0x5b })
        this.i++
        return
      }
      let j = open + 1
      let negate = false
      if (p[j] === "!")
        this.fail(
          "'[!…]' is a class containing '!' in picomatch, not a negation; write '[^…]' to exclude characters, " +
            "or '\\!' for a literal '!'",
          j,
        )
      if (p[j] === "^") {
        negate = true
        j++
      }
      const ranges: Ranges = []
      let posix = false
      let special = negate
      let text = ""
      const first = j
      const atom = (): number | undefined => {
        const c = p[j]
        if (c === "\\") {
          const n = p[j + 1]
          if (n === undefined) this.fail("unclosed '[': close the class, or write '\\[' for a literal '['", open)
          if (n === "\\" && p[j + 2] === "\\")
            this.fail("three or more backslashes in a row are read inconsistently by picomatch", j)
          if (n === "[")
            this.fail(
              "'\\[' inside a class is read inconsistently by picomatch; match a literal '[' outside a class",
              j,
            )
          if (isAlnum(n))
            this.fail(
              `'\\${n}' inside a class is a regular-expression escape in picomatch; write the characters themselves`,
              j,
            )
          j += 2
          if (REGEX_SPECIAL.includes(n)) special = true
          text += n
          return n.charCodeAt(0)
        }
        if (c === "[") {
          if (p[j + 1] !== ":")
            this.fail(
              "a '[' inside a class is only allowed to start a POSIX class like '[:alpha:]'; match a literal '[' with '\\['",
              j,
            )
          const close = p.indexOf(":]", j + 2)
          const name = close < 0 ? "" : p.slice(j + 2, close)
          const known = POSIX[name]
          if (!known)
            this.fail(
              `unknown POSIX class '[:${name || "…"}:]' (known: ${Object.keys(POSIX).join(", ")}), or a '[' inside a class`,
              j,
            )
          ranges.push(...known.ranges)
          posix = true
          this.posix = true
          if (known.text === undefined) special = true
          else text += known.text
          j = close + 2
          return undefined
        }
        if (j === first && c === "]") {
          // A ']' right after '[' or '[^' is a member; picomatch escapes it, which keeps the class a class.
          special = true
        } else if (REGEX_SPECIAL.includes(c)) special = true
        const code = p.charCodeAt(j)
        if (code < 0x20 || code === 0x7f) this.fail(`the pattern contains a control character (U+${hex(code)})`, j)
        text += c
        j++
        return code
      }
      for (;;) {
        if (j >= p.length)
          this.fail(
            "unclosed '[' (a ']' right after '[' is a member); close the class, or write '\\[' for a literal '['",
            open,
          )
        if (p[j] === "]" && j > first) break
        const start = j
        const lo = atom()
        if (lo === undefined) {
          if (p[j] === "-" && p[j + 1] !== "]")
            this.fail(
              "a '-' right after a POSIX class makes a range from its last character in picomatch; put the '-' first or last",
              j,
            )
          continue
        }
        if (p[j] === "-" && j + 1 < p.length && p[j + 1] !== "]") {
          j++
          if (p[j] === "[") this.fail("a range cannot end with a POSIX class", j)
          const hi = atom()!
          if (hi < lo)
            this.fail(
              `the range '${p.slice(start, j)}' is reversed (picomatch would then match nothing); write it low to high`,
              start,
            )
          special = true
          ranges.push(lo, hi)
          continue
        }
        ranges.push(lo, lo)
      }
      const content = p.slice(first, j)
      if (!negate && /^:[a-z]+:$/.test(content) && POSIX[content.slice(1, -1)])
        this.fail(
          `'[${content}]' is a class of the characters in '${content}'; a POSIX class goes inside a class: '[[${content}]]'`,
          open,
        )
      if (negate && !posix) ranges.push(SLASH, SLASH)
      this.i = j + 1
      const pred: Pred = { set: normalize(ranges), negate }
      if (special) {
        items.push({ t: "set", pred })
        return
      }
      // picomatch: `(?:\[ab\]|[ab])`, the class or its own text.
      const codes = [0x5b]
      for (let k = 0; k < text.length; k++) codes.push(text.charCodeAt(k))
      codes.push(0x5d)
      items.push({ t: "either", pred, text: codes })
    }
  }

  const hex = (code: number) => code.toString(16).toUpperCase().padStart(4, "0")

  function normalize(ranges: Ranges): Ranges {
    const pairs: [number, number][] = []
    for (let k = 0; k < ranges.length; k += 2) pairs.push([ranges[k], ranges[k + 1]])
    pairs.sort((a, b) => a[0] - b[0])
    const out: Ranges = []
    for (const [lo, hi] of pairs) {
      const last = out.length - 1
      if (last > 0 && lo <= out[last] + 1) out[last] = Math.max(out[last], hi)
      else out.push(lo, hi)
    }
    return out
  }

  function complement(ranges: Ranges): Ranges {
    const out: Ranges = []
    let next = 0
    for (let k = 0; k < ranges.length; k += 2) {
      if (ranges[k] > next) out.push(next, ranges[k] - 1)
      next = ranges[k + 1] + 1
    }
    if (next <= MAX_CODE) out.push(next, MAX_CODE)
    return out
  }

  // ---------------------------------------------------------------------------------------------------------------
  // NFA. State i moves to i + 1 on its atom and stays on its loop; a jump moves `dist` states ahead on its class;
  // a brace group's opener reaches the starts of its alternatives, and their ends reach the state after the group,
  // without consuming a character (ε). Every edge but a loop leads to a later state.

  type Group = { open: number; starts: number[]; ends: number[]; after: number }
  type Nfa = {
    atom: (Pred | undefined)[]
    loop: (Pred | undefined)[]
    jumps: { from: number; pred: Pred; dist: number }[]
    groups: Group[]
    initial: number[]
    accept: number[]
    /** picomatch's `/*` needs a character after the '/': the root "/" alone does not match it. */
    rootless: boolean
  }

  /** Brace groups (after one-character alternatives became classes) a pattern may have: each costs every step. */
  export const MAX_GROUPS = 16

  function build(pattern: string, items: Item[]): Nfa {
    const nfa: Nfa = {
      atom: [undefined],
      loop: [undefined],
      jumps: [],
      groups: [],
      initial: [0],
      accept: [],
      rootless: items[0]?.t === "slash" && items[1]?.t === "star",
    }
    const fresh = () => {
      nfa.atom.push(undefined)
      nfa.loop.push(undefined)
      return nfa.atom.length - 1
    }
    const shift = (cur: number, pred: Pred) => {
      nfa.atom[cur] = pred
      return fresh()
    }
    const sequence = (list: Item[], cur: number): number => {
      for (const item of list) {
        if (item.t === "char") cur = shift(cur, only(item.c))
        else if (item.t === "set") cur = shift(cur, item.pred)
        else if (item.t === "slash") cur = shift(cur, only(SLASH))
        else if (item.t === "star") {
          if (!nfa.loop[cur]) nfa.loop[cur] = NOT_SLASH
        } else if (item.t === "either") {
          // The text along the states, the class as a jump over it.
          const from = cur
          for (const c of item.text) cur = shift(cur, only(c))
          nfa.jumps.push({ from, pred: item.pred, dist: cur - from })
        } else if (item.t === "alt") {
          if (nfa.groups.length >= MAX_GROUPS)
            throw new PatternError({
              pattern,
              offset: item.at,
              reason: `more than ${MAX_GROUPS} brace groups in one pattern; split it into several rules`,
            })
          const group: Group = { open: cur, starts: [], ends: [], after: -1 }
          nfa.groups.push(group)
          const ends = item.alts.map((alt) => {
            const start = fresh()
            group.starts.push(start)
            return sequence(alt, start)
          })
          const last = ends[ends.length - 1]
          cur = nfa.loop[last] ? fresh() : last
          group.after = cur
          group.ends = ends.filter((end) => end !== cur)
        } else throw new Error("globstar outside the top level")
      }
      return cur
    }
    // Consecutive '**' segments are one.
    const top: Item[] = []
    for (const item of items) {
      const n = top.length
      if (item.t === "globstar" && top[n - 1]?.t === "slash" && top[n - 2]?.t === "globstar") top.pop()
      else top.push(item)
    }
    if (top.length === 1 && top[0].t === "globstar") {
      nfa.loop[0] = ANY
      nfa.accept.push(0)
      return nfa
    }
    let cur = 0
    for (let k = 0; k < top.length; k++) {
      const item = top[k]
      if (item.t === "slash" && top[k + 1]?.t === "globstar") {
        if (k + 2 === top.length) {
          // `x/**`: x itself (not right after a '*', as in picomatch), or x/ and anything.
          if (top[k - 1]?.t !== "star") nfa.accept.push(cur)
          const rest = shift(cur, only(SLASH))
          nfa.loop[rest] = ANY
          nfa.accept.push(rest)
          return nfa
        }
        // `x/**/rest`: x/ then whole segments, each with its '/' (a state looping on anything, then '/'), or none (a
        // jump over that state on the first '/'); x alone when rest can match nothing (picomatch's `(?:/…/|/|$)`).
        const rest = top.slice(k + 3)
        if (emptyAtEnd(rest)) nfa.accept.push(cur)
        const from = cur
        const any = shift(cur, only(SLASH))
        nfa.loop[any] = ANY
        cur = shift(any, only(SLASH))
        nfa.jumps.push({ from, pred: only(SLASH), dist: 2 })
        k += 2
        continue
      }
      if (item.t === "globstar") {
        // `**/` at the start: the same without the '/' before it.
        nfa.loop[cur] = ANY
        cur = shift(cur, only(SLASH))
        nfa.initial.push(cur)
        k++
        continue
      }
      cur = sequence([item], cur)
    }
    nfa.accept.push(cur)
    return nfa
  }

  /**
   * Whether what follows a middle `**\/` can match nothing at the end of the input, as picomatch's expression does:
   * a '*' right after the '/' needs a character (`(?=.)`), a final `/**` is `(?:/…|$)` (but not after a '*'), and a
   * further middle `/**\/` is `(?:/…/|/|$)`.
   */
  function emptyAtEnd(items: Item[]): boolean {
    if (!items.length || items[0].t === "star") return false
    for (let k = 0; k < items.length; k++) {
      const item = items[k]
      if (item.t === "slash" && items[k + 1]?.t === "globstar")
        return k + 2 === items.length ? items[k - 1]?.t !== "star" : emptyAtEnd(items.slice(k + 3))
      if (!(item.t === "star" || (item.t === "alt" && item.alts.some(nullable)))) return false
    }
    return true
  }

  /** Whether a sequence (inside braces) can match the empty string. */
  function nullable(items: Item[]): boolean {
    return items.every(
      (item) => item.t === "star" || item.t === "globstar" || (item.t === "alt" && item.alts.some(nullable)),
    )
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Case folding as a regular expression's `i` flag does it without `u`: both sides compared by Canonicalize.

  let CANON: Uint16Array | undefined
  /** Code units whose canonical form differs from them, sorted. */
  let FOLDED: Uint16Array | undefined

  function canonTable(): Uint16Array {
    if (CANON) return CANON
    const canon = new Uint16Array(MAX_CODE + 1)
    const folded: number[] = []
    const codes: number[] = []
    for (let lo = 0; lo <= MAX_CODE; lo += 256) {
      codes.length = 0
      for (let c = lo; c < lo + 256; c++) codes.push(c >= 0xd800 && c < 0xe000 ? 0x20 : c)
      const upper = String.fromCharCode(...codes).toUpperCase()
      for (let c = lo; c < lo + 256; c++) {
        let u: number
        if (c >= 0xd800 && c < 0xe000) u = c
        else if (upper.length === 256) u = upper.charCodeAt(c - lo)
        else {
          const one = String.fromCharCode(c).toUpperCase()
          u = one.length === 1 ? one.charCodeAt(0) : c
        }
        if (c >= 128 && u < 128) u = c
        canon[c] = u
        if (u !== c) folded.push(c)
      }
    }
    FOLDED = Uint16Array.from(folded)
    CANON = canon
    return canon
  }

  /** The set's members plus the canonical forms of its members (what `Canonicalize(c)` is tested against). */
  function fold(set: Ranges): Ranges {
    const canon = canonTable()
    const folded = FOLDED!
    const out = set.slice()
    for (let k = 0; k < set.length; k += 2) {
      let lo = 0
      let hi = folded.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (folded[mid] < set[k]) lo = mid + 1
        else hi = mid
      }
      for (let f = lo; f < folded.length && folded[f] <= set[k + 1]; f++) out.push(canon[folded[f]], canon[folded[f]])
    }
    return normalize(out)
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The machine: character classes, bit masks of states (W words of 32), and the lazily built DFA.

  type Machine = {
    W: number
    K: number
    canon?: Uint16Array
    /** Class of every ASCII code unit (after folding). */
    ascii: Uint16Array
    /** Interval starts and the class of each interval, for the rest. */
    bounds: Uint32Array
    boundClass: Uint16Array
    /** Per class, W words: states whose atom accepts the class, states whose loop does. */
    shift: Int32Array
    loop: Int32Array
    /** Per class, jumps grouped by source word and distance: [jumpStart[k], jumpStart[k + 1]) into the arrays. */
    jumpStart: Int32Array
    jumpWord: Int32Array
    jumpMask: Int32Array
    jumpDist: Int32Array
    /** Brace groups in an order where every ε-edge's source comes before its use; see closure(). */
    groups: Int32Array
    accept: Int32Array
    rootless: boolean
    // The DFA: state 0 is dead (no NFA state), 1 the start.
    sets: Int32Array
    acc: Uint8Array
    trans: Int32Array
    count: number
    capacity: number
    maxStates: number
    /** DFA states by hash of their set, and the next state with the same hash. */
    index: Map<number, number>
    chain: Int32Array
    scratch: Int32Array
    cur: Int32Array
  }

  /** Most transition-table cells one pattern's DFA may hold (4 bytes each). */
  const MAX_CELLS = 1 << 20
  const MAX_DFA_STATES = 20_000
  /**
   * New DFA states one check may add: a pattern whose DFA is exponential (`*a???…`) would otherwise pay for a new
   * state at every character, which costs more than stepping the NFA.
   */
  const NEW_STATES_PER_CHECK = 256

  function machine(nfa: Nfa, nocase: boolean, dfaStates?: number): Machine {
    const n = nfa.atom.length
    const W = (n + 31) >>> 5
    // Distinct predicates, each with the states using it.
    type Use = { set: Ranges; atoms: number[]; loops: number[]; jumps: { from: number; dist: number }[] }
    const preds = new Map<number | string, Use>()
    const pred = (p: Pred) => {
      const single = !p.negate && p.set.length === 2 && p.set[0] === p.set[1]
      const key = single ? p.set[0] : (p.key ??= `${p.negate ? "^" : ""}${p.set.join(",")}`)
      let found = preds.get(key)
      if (!found) {
        const members = nocase ? fold(p.set) : p.set
        found = { set: p.negate ? complement(members) : members, atoms: [], loops: [], jumps: [] }
        preds.set(key, found)
      }
      return found
    }
    nfa.atom.forEach((p, s) => p && pred(p).atoms.push(s))
    nfa.loop.forEach((p, s) => p && pred(p).loops.push(s))
    for (const j of nfa.jumps) pred(j.pred).jumps.push(j)
    const list = [...preds.values()]
    // Intervals of code units on which every predicate is constant; intervals alike are one class.
    const cuts = new Set<number>([0])
    for (const p of list)
      for (let k = 0; k < p.set.length; k += 2) {
        cuts.add(p.set[k])
        if (p.set[k + 1] < MAX_CODE) cuts.add(p.set[k + 1] + 1)
      }
    const bounds = Uint32Array.from([...cuts].sort((a, b) => a - b))
    const covering: number[][] = Array.from({ length: bounds.length }, () => [])
    list.forEach((p, id) => {
      for (let k = 0; k < p.set.length; k += 2)
        for (let j = lastAtMost(bounds, p.set[k]); j < bounds.length && bounds[j] <= p.set[k + 1]; j++)
          covering[j].push(id)
    })
    const classes = new Map<number | string, number>()
    const boundClass = new Uint16Array(bounds.length)
    const members: number[][] = []
    covering.forEach((ids, j) => {
      const key = ids.length === 1 ? ids[0] : ids.join(",")
      let k = classes.get(key)
      if (k === undefined) {
        classes.set(key, (k = members.length))
        members.push(ids)
      }
      boundClass[j] = k
    })
    const K = members.length
    const shift = new Int32Array(K * W)
    const loop = new Int32Array(K * W)
    const jumpStart = new Int32Array(K + 1)
    const jumpWord: number[] = []
    const jumpMask: number[] = []
    const jumpDist: number[] = []
    members.forEach((ids, k) => {
      const jumps = new Map<number, number>()
      for (const id of ids) {
        for (const s of list[id].atoms) shift[k * W + (s >>> 5)] |= 1 << (s & 31)
        for (const s of list[id].loops) loop[k * W + (s >>> 5)] |= 1 << (s & 31)
        for (const j of list[id].jumps) {
          const at = (j.dist << 16) | (j.from >>> 5)
          jumps.set(at, (jumps.get(at) ?? 0) | (1 << (j.from & 31)))
        }
      }
      for (const [at, mask] of jumps) {
        jumpWord.push(at & 0xffff)
        jumpDist.push(at >>> 16)
        jumpMask.push(mask)
      }
      jumpStart[k + 1] = jumpWord.length
    })
    const canon = nocase ? canonTable() : undefined
    const ascii = new Uint16Array(128)
    for (let c = 0; c < 128; c++) ascii[c] = boundClass[lastAtMost(bounds, canon ? canon[c] : c)]
    const accept = new Int32Array(W)
    for (const s of nfa.accept) accept[s >>> 5] |= 1 << (s & 31)
    const m: Machine = {
      W,
      K,
      canon,
      ascii,
      bounds,
      boundClass,
      shift,
      loop,
      jumpStart,
      jumpWord: Int32Array.from(jumpWord),
      jumpMask: Int32Array.from(jumpMask),
      jumpDist: Int32Array.from(jumpDist),
      groups: groupProgram(nfa.groups),
      accept,
      rootless: nfa.rootless,
      sets: new Int32Array(0),
      acc: new Uint8Array(0),
      trans: new Int32Array(0),
      count: 0,
      capacity: 0,
      maxStates: dfaStates ?? Math.max(64, Math.min(MAX_DFA_STATES, Math.floor(MAX_CELLS / (K + W)))),
      index: new Map(),
      chain: new Int32Array(0),
      scratch: new Int32Array(W),
      cur: new Int32Array(W),
    }
    intern(m, m.scratch)
    for (const s of nfa.initial) m.scratch[s >>> 5] |= 1 << (s & 31)
    closure(m, m.scratch)
    intern(m, m.scratch)
    return m
  }

  /**
   * The brace groups as a flat program, ordered by position: an opener (`0, word, bit, count, (word, bits)…`) adds
   * the starts of its alternatives when it is set; a closer (`1, word, bit, count, (word, bits)…`) sets the state
   * after the group when any end is set. Every ε-edge leads to a later state, so one pass in this order is enough.
   */
  function groupProgram(groups: Group[]): Int32Array {
    const sparse = (states: number[]) => {
      const words = new Map<number, number>()
      for (const s of states) words.set(s >>> 5, (words.get(s >>> 5) ?? 0) | (1 << (s & 31)))
      return [words.size, ...[...words].flat()]
    }
    const ops: { at: number; code: number[] }[] = []
    for (const g of groups) {
      ops.push({ at: 2 * g.open, code: [0, g.open >>> 5, 1 << (g.open & 31), ...sparse(g.starts)] })
      if (g.ends.length)
        ops.push({ at: 2 * g.after - 1, code: [1, g.after >>> 5, 1 << (g.after & 31), ...sparse(g.ends)] })
    }
    ops.sort((a, b) => a.at - b.at)
    return Int32Array.from(ops.flatMap((op) => op.code))
  }

  function classOf(m: Machine, c: number): number {
    if (m.canon) c = m.canon[c]
    return m.boundClass[lastAtMost(m.bounds, c)]
  }

  /** Follows the ε-edges of brace groups from every state of `set` (in place). */
  function closure(m: Machine, set: Int32Array) {
    const g = m.groups
    for (let i = 0; i < g.length;) {
      const closer = g[i] === 1
      const word = g[i + 1]
      const bit = g[i + 2]
      const count = g[i + 3]
      i += 4
      if (closer) {
        let hit = 0
        for (let e = 0; e < count; e++) hit |= set[g[i + 2 * e]] & g[i + 2 * e + 1]
        if (hit !== 0) set[word] |= bit
      } else if ((set[word] & bit) !== 0) {
        for (let e = 0; e < count; e++) set[g[i + 2 * e]] |= g[i + 2 * e + 1]
      }
      i += 2 * count
    }
  }

  /** `out` = the states reached from the W words at `offset` of `source` on a character of class `k`. */
  function step(m: Machine, source: Int32Array, offset: number, k: number, out: Int32Array) {
    const { W, shift, loop } = m
    const base = k * W
    let carry = 0
    for (let w = 0; w < W; w++) {
      const x = source[offset + w]
      const moved = x & shift[base + w]
      out[w] = (moved << 1) | carry | (x & loop[base + w])
      carry = moved >>> 31
    }
    const { jumpWord, jumpMask, jumpDist } = m
    for (let j = m.jumpStart[k]; j < m.jumpStart[k + 1]; j++) {
      const moved = source[offset + jumpWord[j]] & jumpMask[j]
      if (moved === 0) continue
      const dist = jumpDist[j]
      const word = jumpWord[j] + (dist >>> 5)
      const bits = dist & 31
      out[word] |= moved << bits
      if (bits !== 0 && word + 1 < W) out[word + 1] |= moved >>> (32 - bits)
    }
    if (m.groups.length) closure(m, out)
  }

  function hash(m: Machine, set: Int32Array): number {
    let h = 0x811c9dc5
    for (let w = 0; w < m.W; w++) h = Math.imul(h ^ set[w], 0x01000193)
    return h
  }

  /** The DFA state of `set`, added when new (and `add`); -1 when it is not there and cannot be added. */
  function intern(m: Machine, set: Int32Array, add = true): number {
    const { W, sets } = m
    const h = hash(m, set)
    let id = m.index.get(h) ?? -1
    for (; id >= 0; id = m.chain[id]) {
      let same = true
      for (let w = 0; w < W && same; w++) same = sets[id * W + w] === set[w]
      if (same) return id
    }
    if (!add || m.count >= m.maxStates) return -1
    if (m.count === m.capacity) grow(m)
    id = m.count++
    m.sets.set(set, id * W)
    let acc = 0
    for (let w = 0; w < W; w++) acc |= set[w] & m.accept[w]
    m.acc[id] = acc !== 0 ? 1 : 0
    m.chain[id] = m.index.get(h) ?? -1
    m.index.set(h, id)
    return id
  }

  function grow(m: Machine) {
    const capacity = Math.min(m.maxStates, Math.max(8, m.capacity * 2))
    const sets = new Int32Array(capacity * m.W)
    sets.set(m.sets)
    const acc = new Uint8Array(capacity)
    acc.set(m.acc)
    const chain = new Int32Array(capacity)
    chain.set(m.chain)
    m.chain = chain
    const trans = new Int32Array(capacity * m.K).fill(-1)
    trans.set(m.trans)
    m.sets = sets
    m.acc = acc
    m.trans = trans
    m.capacity = capacity
  }

  const DEAD = 0
  const START = 1

  function run(m: Machine, input: string, from: number, to: number, parents: boolean): boolean {
    const { ascii, K } = m
    let s = START
    let budget = NEW_STATES_PER_CHECK
    for (let i = from; i < to; i++) {
      const c = input.charCodeAt(i)
      if (parents && c === SLASH && i > from && m.acc[s] === 1) return true
      const k = c < 128 ? ascii[c] : classOf(m, c)
      let t = m.trans[s * K + k]
      if (t < 0) {
        step(m, m.sets, s * m.W, k, m.scratch)
        const count = m.count
        t = intern(m, m.scratch, budget > 0)
        if (t < 0) return simulate(m, input, i + 1, to, parents, from)
        if (m.count > count) budget--
        m.trans[s * K + k] = t
      }
      s = t
      if (s === DEAD) return false
      if (parents && i === from && c === SLASH && to - from > 1 && m.acc[s] === 1 && !m.rootless) return true
    }
    return m.acc[s] === 1 && !(m.rootless && to - from === 1)
  }

  function accepting(m: Machine, set: Int32Array): boolean {
    for (let w = 0; w < m.W; w++) if ((set[w] & m.accept[w]) !== 0) return true
    return false
  }

  /** NFA simulation from the set in `m.scratch`, for when the DFA is full: no new DFA states. */
  function simulate(m: Machine, input: string, i: number, to: number, parents: boolean, from: number): boolean {
    let cur = m.cur
    let next = m.scratch
    const root = parents && i - 1 === from && input.charCodeAt(from) === SLASH && to - from > 1
    if (root && accepting(m, next) && !m.rootless) return true
    for (; i < to; i++) {
      const swap = cur
      cur = next
      next = swap
      const c = input.charCodeAt(i)
      if (parents && c === SLASH && i > from && accepting(m, cur)) return true
      step(m, cur, 0, c < 128 ? m.ascii[c] : classOf(m, c), next)
      let live = 0
      for (let w = 0; w < m.W; w++) live |= next[w]
      if (live === 0) return false
    }
    return accepting(m, next) && !(m.rootless && to - from === 1)
  }
}
