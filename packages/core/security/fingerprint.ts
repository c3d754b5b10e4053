import { SecurityEncoding } from "./encoding"

/**
 * Copies of protected content, the second line of defence: lines and secret-like tokens of protected files (and of
 * protected segments) are remembered, and any text carrying them — whatever route it took — can be recognised,
 * including when it is base64- or hex-encoded.
 *
 * To keep ordinary text intact, a copy counts when it is a run of at least `MIN_RUN` consecutive remembered lines
 * (short lines such as `}` in between neither count nor break the run), or a run whose remembered lines total
 * `MIN_RUN_CHARS` characters, or a single high-entropy token (keys, passwords, connection strings) of a protected file.
 * One common line such as `import fs from "fs"` never counts on its own. A line or token reversed (`rev`) counts as
 * the line or token itself.
 *
 * @example
 * const index = SecurityFingerprint.create()
 * SecurityFingerprint.add(index, "API_TOKEN=8f2c1e9a7b6d5c4e3f2a1b0c\n")
 * SecurityFingerprint.find(index, "echo 8f2c1e9a7b6d5c4e3f2a1b0c") // [{ start: 5, end: 29, how: "token" }]
 */
export namespace SecurityFingerprint {
  export const MIN_LINE = 16
  export const MIN_RUN = 3
  export const MIN_RUN_CHARS = 96
  export const MIN_TOKEN = 16

  /**
   * `strict` indexes hold text the user marked as protected (segments): one remembered line is enough to count as a
   * copy, since such lines were chosen, not merely present in a protected file.
   */
  export type Index = {
    lines: Set<string>
    tokens: Set<string>
    bytes: number
    strict?: boolean
    /**
     * One bit per `shape` of the lines and tokens remembered: a line of a scanned text whose bit is clear in every
     * index is not remembered, which spares cutting it out and hashing it. Absent: every line is looked up.
     */
    shapes?: Uint32Array
    /** A second filter, by other code units (`shape2`): a line must pass both. */
    shapes2?: Uint32Array
  }
  export type Match = { start: number; end: number; how: "lines" | "token" }

  export function create(options: { strict?: boolean } = {}): Index {
    return {
      lines: new Set(),
      tokens: new Set(),
      bytes: 0,
      strict: options.strict,
      shapes: new Uint32Array(SHAPES / 32),
      shapes2: new Uint32Array(SHAPES / 32),
    }
  }

  const SHAPES = 1 << 16

  /** A hash of `text[a, b)` (non-empty) by its length and its first, middle and last code units. */
  function shape(text: string, a: number, b: number): number {
    let h = Math.imul(b - a, 0x9e3779b1)
    h = Math.imul(h ^ text.charCodeAt(a), 0x85ebca6b)
    h = Math.imul(h ^ text.charCodeAt((a + b) >> 1), 0xc2b2ae35)
    h = Math.imul(h ^ text.charCodeAt(b - 1), 0x27d4eb2f)
    return (h ^ (h >>> 16)) & (SHAPES - 1)
  }

  /** `shape` of the reverse of `text[a, b)`: its first, middle and last code units are the last, mirrored middle and first. */
  function reversedShape(text: string, a: number, b: number): number {
    const length = b - a
    let h = Math.imul(length, 0x9e3779b1)
    h = Math.imul(h ^ text.charCodeAt(b - 1), 0x85ebca6b)
    h = Math.imul(h ^ text.charCodeAt(a + length - 1 - (length >> 1)), 0xc2b2ae35)
    h = Math.imul(h ^ text.charCodeAt(a), 0x27d4eb2f)
    return (h ^ (h >>> 16)) & (SHAPES - 1)
  }

  /** A second hash of `text[a, b)` (at least 4 code units), by its length and three other code units. */
  function shape2(text: string, a: number, b: number): number {
    let h = Math.imul(b - a, 0x85ebca77)
    h = Math.imul(h ^ text.charCodeAt(a + 1), 0xc2b2ae3d)
    h = Math.imul(h ^ text.charCodeAt(a + ((b - a) >> 2)), 0x27d4eb2f)
    h = Math.imul(h ^ text.charCodeAt(b - 2), 0x165667b1)
    return (h ^ (h >>> 15)) & (SHAPES - 1)
  }

  /** `shape2` of the reverse of `text[a, b)`. */
  function reversedShape2(text: string, a: number, b: number): number {
    const length = b - a
    let h = Math.imul(length, 0x85ebca77)
    h = Math.imul(h ^ text.charCodeAt(b - 2), 0xc2b2ae3d)
    h = Math.imul(h ^ text.charCodeAt(b - 1 - (length >> 2)), 0x27d4eb2f)
    h = Math.imul(h ^ text.charCodeAt(a + 1), 0x165667b1)
    return (h ^ (h >>> 15)) & (SHAPES - 1)
  }

  /**
   * True when a code unit the reversed shapes read is half of a surrogate pair: reversing by code points keeps
   * pairs in order, so there the reversed shapes are not those of the reversed text (elsewhere they are).
   */
  function sampledSurrogate(text: string, a: number, b: number): boolean {
    const length = b - a
    const surrogate = (i: number) => (text.charCodeAt(i) & 0xf800) === 0xd800
    return (
      surrogate(a) ||
      surrogate(a + 1) ||
      surrogate(b - 2) ||
      surrogate(b - 1) ||
      surrogate(a + length - 1 - (length >> 1)) ||
      surrogate(b - 1 - (length >> 2))
    )
  }

  const REVERSED = new Uint16Array(4096)

  /** `text` reversed by code points (as `rev` reverses characters). */
  function reverse(text: string): string {
    const n = text.length
    if (n > REVERSED.length) return Array.from(text).reverse().join("")
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i)
      // A surrogate pair keeps its order.
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const d = text.charCodeAt(i + 1)
        if (d >= 0xdc00 && d <= 0xdfff) {
          REVERSED[n - 2 - i] = c
          REVERSED[n - 1 - i] = d
          i++
          continue
        }
      }
      REVERSED[n - 1 - i] = c
    }
    return String.fromCharCode.apply(null, REVERSED.subarray(0, n) as unknown as number[])
  }

  function remember(index: Index, set: Set<string>, value: string) {
    set.add(value)
    if (index.shapes) {
      const h = shape(value, 0, value.length)
      index.shapes[h >>> 5] |= 1 << (h & 31)
    }
    if (index.shapes2) {
      const h = shape2(value, 0, value.length)
      index.shapes2[h >>> 5] |= 1 << (h & 31)
    }
  }

  export function empty(index: Index | undefined): boolean {
    return !index || (index.lines.size === 0 && index.tokens.size === 0)
  }

  /** Tool outputs prefix lines with numbers (`12: `, `00012| `, `  Line 12: `); they are not part of the content. */
  const GUTTER = /^\s*(?:Line \d+: ?|\d+[:|]\s?)/

  const { charClass, nextRun, ALNUM } = SecurityEncoding
  /** Characters of secret-like tokens. */
  const TOKEN_CHARS = charClass(ALNUM + "+/_=.~@%-")

  const TRIM = charClass("./~@%-")

  export function normaliseLine(line: string): string {
    const trimmed = line.trim()
    // A gutter starts with a digit or `Line` after the leading white space.
    const c = trimmed.charCodeAt(0)
    return (c >= 48 && c <= 57) || c === 76 ? line.replace(GUTTER, "").trim() : trimmed
  }

  /** True for tokens that look like generated secrets rather than words or identifiers. */
  export function secretLike(token: string): boolean {
    if (token.length < MIN_TOKEN) return false
    let digits = 0
    let letters = 0
    const counts = new Map<string, number>()
    for (const c of token) {
      if (c >= "0" && c <= "9") digits++
      else if ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z")) letters++
      counts.set(c, (counts.get(c) ?? 0) + 1)
    }
    if (digits < 2 || letters < 2) return false
    let entropy = 0
    for (const n of counts.values()) {
      const p = n / token.length
      entropy -= p * Math.log2(p)
    }
    return entropy >= 3.3
  }

  /** Tokens of a text, split also at `=`, `:` and quotes so `KEY=value` yields `value`. */
  export function tokens(text: string): { token: string; start: number }[] {
    const out: { token: string; start: number }[] = []
    eachToken(text, (a, b) => out.push({ token: text.slice(a, b), start: a }))
    return out
  }

  /** The bounds of each token of `tokens`, in order, without cutting them out. */
  function eachToken(text: string, visit: (start: number, end: number) => void) {
    for (
      let run = nextRun(text, 0, TOKEN_CHARS, MIN_TOKEN);
      run;
      run = nextRun(text, run.end, TOKEN_CHARS, MIN_TOKEN)
    ) {
      // Pieces between `=`, without leading or trailing `./~@%-`.
      let piece = run.start
      while (piece <= run.end) {
        let stop = piece
        while (stop < run.end && text.charCodeAt(stop) !== 61) stop++
        let a = piece
        let b = stop
        while (a < b && TRIM[text.charCodeAt(a)] === 1) a++
        while (b > a && TRIM[text.charCodeAt(b - 1)] === 1) b--
        if (b - a >= MIN_TOKEN) visit(a, b)
        piece = stop + 1
      }
    }
  }

  const SPACE = charClass("\t\n\v\f\r ")

  /** Past the ASCII white space of `text[i, end)`; -1 at a code unit above 127 (it may be white space too). */
  function skipSpace(text: string, i: number, end: number): number {
    for (; i < end; i++) {
      const c = text.charCodeAt(i)
      if (c >= 128) return -1
      if (SPACE[c] === 0) return i
    }
    return i
  }

  function digitsEnd(text: string, i: number, end: number): number {
    while (i < end) {
      const c = text.charCodeAt(i)
      if (c < 48 || c > 57) break
      i++
    }
    return i
  }

  /**
   * Where `normaliseLine(text.slice(a, b))` starts in `text`: past white space, a gutter and white space again; -1
   * when a code unit above 127 leaves that to `normaliseLine`.
   */
  function contentStart(text: string, a: number, b: number): number {
    const i = skipSpace(text, a, b)
    if (i < 0) return -1
    let gutter = -1
    if (text.startsWith("Line ", i)) {
      const d = digitsEnd(text, i + 5, b)
      if (d > i + 5 && d < b && text.charCodeAt(d) === 58)
        gutter = d + 1 < b && text.charCodeAt(d + 1) === 32 ? d + 2 : d + 1
    } else {
      const d = digitsEnd(text, i, b)
      const sep = d < b ? text.charCodeAt(d) : 0
      if (d > i && (sep === 58 || sep === 124)) {
        gutter = d + 1
        const c = gutter < b ? text.charCodeAt(gutter) : 0
        if (c >= 128) return -1
        if (gutter < b && SPACE[c] === 1) gutter++
      }
    }
    return gutter < 0 ? i : skipSpace(text, gutter, b)
  }

  /** Where `normaliseLine(text.slice(a, b))` ends in `text` (trailing white space off); -1 as for `contentStart`. */
  function contentEnd(text: string, a: number, b: number): number {
    for (; b > a; b--) {
      const c = text.charCodeAt(b - 1)
      if (c >= 128) return -1
      if (SPACE[c] === 0) return b
    }
    return b
  }

  /** Remembers the content of a protected file or segment. */
  export function add(index: Index, text: string): void {
    index.bytes += text.length
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trim()
      if (line.length >= MIN_LINE) remember(index, index.lines, line)
    }
    for (const { token } of tokens(text)) if (secretLike(token)) remember(index, index.tokens, token)
  }

  /**
   * Where `text` carries remembered content. `indexes` are consulted together.
   *
   * @example
   * SecurityFingerprint.find([index], output)
   */
  export function find(indexes: Index | readonly Index[], text: string): Match[] {
    const list = (Array.isArray(indexes) ? indexes : [indexes]).filter((i) => !empty(i)) as Index[]
    if (!list.length || !text) return []
    const hasLine = (line: string) => list.some((i) => i.lines.has(line))
    const strictLine = (line: string) => list.some((i) => i.strict && i.lines.has(line))
    const hasToken = (token: string) => list.some((i) => i.tokens.has(token))
    /**
     * Whether `s[a, b)` (or its reverse) may be remembered: its shape is set in an index's first filter and its
     * second shape in the same index's second one (computed only then).
     */
    const filtered = (s: string, a: number, b: number, reversed: boolean) => {
      const h = reversed ? reversedShape(s, a, b) : shape(s, a, b)
      let h2 = -1
      for (const i of list) {
        const f = i.shapes
        if (f !== undefined && ((f[h >>> 5] >>> (h & 31)) & 1) === 0) continue
        const g = i.shapes2
        if (g === undefined) return true
        if (h2 < 0) h2 = reversed ? reversedShape2(s, a, b) : shape2(s, a, b)
        if (((g[h2 >>> 5] >>> (h2 & 31)) & 1) === 1) return true
      }
      return false
    }
    const mayHave = (a: number, b: number) => filtered(text, a, b, false)
    /** `text[a, b)` reversed, when its shapes may be remembered (they need no reversed copy). */
    const reversed = (s: string, a: number, b: number) =>
      filtered(s, a, b, true) || sampledSurrogate(s, a, b) ? reverse(s.slice(a, b)) : undefined
    const out: Match[] = []

    // Runs of remembered lines.
    let runStart = -1
    let runEnd = -1
    let runLines = 0
    let runChars = 0
    const close = () => {
      if (runLines >= MIN_RUN || (runLines > 0 && runChars >= MIN_RUN_CHARS))
        out.push({ start: runStart, end: runEnd, how: "lines" })
      runStart = -1
      runLines = 0
      runChars = 0
    }
    let pos = 0
    while (pos <= text.length) {
      let nl = text.indexOf("\n", pos)
      if (nl < 0) nl = text.length
      // The normalised line, found in place; cut out only when its shape may be remembered. Normalising only
      // shortens a line.
      let line: string | undefined
      let length = 0
      let a = -1
      let b = -1
      if (nl - pos >= MIN_LINE) {
        a = contentStart(text, pos, nl)
        b = a < 0 ? -1 : contentEnd(text, a, nl)
        if (b < 0) line = normaliseLine(text.slice(pos, nl))
        else if (b - a >= MIN_LINE && mayHave(a, b)) line = text.slice(a, b)
        length = line?.length ?? Math.max(0, b - a)
      }
      // The remembered line this line is, read forwards or reversed.
      let found: string | undefined
      if (length >= MIN_LINE) {
        if (line !== undefined && hasLine(line)) found = line
        else {
          const r = b < 0 ? reversed(line!, 0, line!.length) : reversed(text, a, b)
          if (r !== undefined && hasLine(r)) found = r
        }
      }
      if (length < MIN_LINE) {
        // Short lines neither count nor break a run.
      } else if (found !== undefined) {
        if (runStart < 0) runStart = pos
        runEnd = nl > pos && text[nl - 1] === "\r" ? nl - 1 : nl
        runLines++
        runChars += found.length
        if (strictLine(found)) runLines = Math.max(runLines, MIN_RUN)
      } else close()
      pos = nl + 1
    }
    close()

    // Secret-like tokens.
    if (list.some((i) => i.tokens.size)) {
      eachToken(text, (start, end) => {
        if (mayHave(start, end) && hasToken(text.slice(start, end))) out.push({ start, end, how: "token" })
        else {
          const r = reversed(text, start, end)
          if (r !== undefined && hasToken(r)) out.push({ start, end, how: "token" })
        }
      })
    }
    return out.sort((a, b) => a.start - b.start)
  }

  export type Encoded = SecurityEncoding.Block

  /**
   * Encoded blocks of `text` with their decoded form, for the scanner to check like any other text: base64 and hex
   * at any wrapping, hex dumps, byte lists and escape strings (`SecurityEncoding.blocks`).
   *
   * @example
   * SecurityFingerprint.decodedBlocks(Buffer.from("the key is 8f2c1e9a7b6d5c4e3f2a1b0c").toString("hex"))[0].decoded
   * // "the key is 8f2c1e9a7b6d5c4e3f2a1b0c"
   */
  export function decodedBlocks(text: string): Encoded[] {
    return SecurityEncoding.blocks(text)
  }
}
