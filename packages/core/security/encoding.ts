/**
 * Encoded copies of text, in the forms tools print them: base64 (standard and URL-safe, padded or not) and hex, on one
 * line or wrapped at any width, and hex dumps (`xxd`, `xxd -p`, `xxd -i`, `hexdump -C`, `hexdump`, `od -t x…`),
 * `\xNN` escape strings, `0xNN` byte lists and spaced hex pairs. Each block comes with its decoded text, for the
 * scanner to check like any other text; the scanner redacts the whole block when the decoded text carries something
 * protected (a dump's ASCII column leaks 16-character pieces: the dump goes as a whole).
 *
 * Finding blocks costs one pass over the lines (a few code units each: most lines fail on their first word or their
 * last one) plus searches for `0x`, `\x` and runs of encoding characters. Decoding is what keeps ordinary text
 * intact: a block is only handed on when it decodes to readable text — or, for forms that cannot be ordinary text
 * (dumps, byte lists, escape strings, wrapped blocks), to bytes with printable runs, which are then scanned as
 * those runs (a token inside a binary file).
 *
 * @example
 * SecurityEncoding.blocks("data: " + Buffer.from("the key is 8f2c1e9a7b6d5c4e3f2a1b0c").toString("base64"))
 * // [{ start: 6, end: 54, encoding: "base64", format: "run", decoded: "the key is 8f2c1e9a7b6d5c4e3f2a1b0c" }]
 */
export namespace SecurityEncoding {
  /**
   * `run`: one run of base64 or hex characters (continued on the next lines when they start with one, as before);
   * `wrapped`: lines of one width after one prefix; `dump`: offset / grouped hex / ASCII column lines; `bytes`: `0xNN`
   * lists; `escapes`: `\xNN` strings; `pairs`: spaced hex pairs inside lines.
   */
  export type Format = "run" | "wrapped" | "dump" | "bytes" | "escapes" | "pairs"
  /** `binary`: the bytes were not readable text; `decoded` holds their printable runs, one a line. */
  export type Block = {
    start: number
    end: number
    encoding: "base64" | "hex"
    format: Format
    decoded: string
    binary?: boolean
  }

  /**
   * ASCII lookup table of a character class, for `nextRun`.
   *
   * @example
   * SecurityEncoding.charClass("ab")[97] // 1
   */
  export function charClass(chars: string): Uint8Array {
    const table = new Uint8Array(128)
    for (const c of chars) table[c.charCodeAt(0)] = 1
    return table
  }

  export const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

  /**
   * The first maximal run of `table` characters at least `min` long, starting the search at `from`; what the regex
   * `/[class]{min,}/g` finds, in one linear pass. The regex restarts inside every shorter run (quadratic in the run
   * length; identifiers are such runs) and measured 2–3 times slower on 1 MB of source.
   *
   * Only every `min`-th position is probed: a run of `min` characters or more covers one of them. A probe inside a
   * run extends it both ways; a probe outside any run skips `min` positions. Source code alternates short runs and
   * other characters about every position, which a test per position pays for in mispredicted branches.
   *
   * @example
   * SecurityEncoding.nextRun("a bc defg", 0, SecurityEncoding.charClass("abcdefg"), 3) // { start: 5, end: 9 }
   */
  export function nextRun(
    text: string,
    from: number,
    table: Uint8Array,
    min: number,
  ): { start: number; end: number } | undefined {
    const n = text.length
    let probe = from + min - 1
    while (probe < n) {
      const c = text.charCodeAt(probe)
      if (c >= 128 || table[c] === 0) {
        probe += min
        continue
      }
      let start = probe
      while (start > from) {
        const d = text.charCodeAt(start - 1)
        if (d >= 128 || table[d] === 0) break
        start--
      }
      let end = probe + 1
      while (end < n) {
        const d = text.charCodeAt(end)
        if (d >= 128 || table[d] === 0) break
        end++
      }
      if (end - start >= min) return { start, end }
      // `end` is outside any run: the next run starts after it.
      probe = end + min
    }
    return undefined
  }

  /** Characters of base64 (standard and URL-safe) and hex, padding aside. */
  const B64 = charClass(ALNUM + "+/_-")
  const HEX = charClass("0123456789abcdefABCDEF")
  const WORD = charClass(ALNUM)
  const WORD_ = charClass(ALNUM + "_")
  /** Spaced hex pairs: hex digits and the space. */
  const HEX_SPACE = charClass("0123456789abcdefABCDEF ")
  /** What ends a `\x` escape string: quotes and line ends. */
  const QUOTE_OR_LINE = charClass("\"'`\n\r")
  /** What may join two escape strings into one value: quotes, white space, `+`, `,`, `\` (line continuation). */
  const JOIN = charClass("\"'` \t\r\n+,\\")

  /** Shortest wrapped block (payload characters of all its lines) and shortest run, hex runs. */
  const MIN_WRAPPED = 16
  const MIN_RUN = 24
  const MIN_HEX_RUN = 32
  /** Fewest items of a `0xNN` list or of spaced pairs inside a line; fewest bytes of any block. */
  const MIN_ITEMS = 8
  /** Fewest spaced pairs inside a line (probed every `3 × MIN_PAIRS - 3` characters: fewer would cost more). */
  const MIN_PAIRS = 12
  const MIN_BYTES = 8
  /** Longest hex group of a dump (`xxd -g 16`, `od -t x8`), longest offset. */
  const MAX_GROUP = 32
  const MAX_OFFSET = 16
  /** Lines a wrapped block may lose at each end when they spoil its decoding; blocks searched for such lines. */
  const MAX_TRIM = 3
  const MAX_SEARCH = 24

  /**
   * Every encoded block of `text` that decodes to something worth scanning, sorted by position; blocks do not
   * overlap. Forms are tried in turn (lines, byte lists, escapes, spaced pairs, single runs); a later form skips what
   * an earlier one recognised.
   *
   * @example
   * SecurityEncoding.blocks("4150495f4b45593d\n5a78383151703076\n").map((b) => b.decoded) // ["API_KEY=Zx81Qp0v"]
   */
  export function blocks(text: string): Block[] {
    const out: Block[] = []
    if (text.length < MIN_BYTES) return out
    const seen = new Claims()
    const taken = new Claims()
    lines(text, out, seen, taken)
    byteLists(text, "0x", out, seen, taken)
    byteLists(text, "0X", out, seen, taken)
    escapes(text, out, seen, taken)
    pairs(text, out, seen, taken)
    runs(text, out, taken)
    return out.sort((a, b) => a.start - b.start)
  }

  /**
   * Ranges recognised so far, one sorted list per form (each form finds its blocks in order), so that a later form
   * can skip them in logarithmic time.
   */
  class Claims {
    lists: number[][] = []
    current: number[] = []
    /** Starts a new sorted list (the next form). */
    next() {
      if (this.current.length) this.lists.push(this.current)
      this.current = []
    }
    add(start: number, end: number) {
      const c = this.current
      // Forms find blocks in order; the line pass closes its two kinds of block out of order at most by one.
      if (c.length && c[c.length - 2] > start) {
        this.next()
      }
      this.current.push(start, end)
    }
    /** The end of a range overlapping [start, end), or -1. */
    overlap(start: number, end: number): number {
      let found = Claims.search(this.current, start, end)
      for (let k = 0; found < 0 && k < this.lists.length; k++) found = Claims.search(this.lists[k], start, end)
      return found
    }
    static search(list: number[], start: number, end: number): number {
      if (!list.length) return -1
      // The last range starting before `end`.
      let lo = 0
      let hi = list.length >> 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (list[mid * 2] < end) lo = mid + 1
        else hi = mid
      }
      return lo > 0 && list[lo * 2 - 1] > start ? list[lo * 2 - 1] : -1
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Decoding

  /** The bytes as text when they are mostly printable UTF-8, else undefined. */
  function readable(bytes: Buffer): string | undefined {
    if (bytes.length < MIN_BYTES) return undefined
    const text = bytes.toString("utf8")
    let bad = 0
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === 0xfffd || (c < 32 && c !== 9 && c !== 10 && c !== 13)) bad++
    }
    return bad / text.length < 0.05 ? text : undefined
  }

  /**
   * Between two readings of the same bytes in a decoded text: a line of its own, long enough to end a run of copied
   * lines (the readings hold the same lines: together they would look like a longer run).
   */
  const READINGS = Buffer.from("\n---- another reading of the same bytes ----\n")

  const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f\ufffd]+/g

  /** The printable runs of binary bytes, one a line, when one is at least `MIN_BYTES` long. */
  function printable(bytes: Buffer): string | undefined {
    const text = bytes.toString("utf8").replace(UNPRINTABLE, "\n")
    let run = 0
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) === 10) run = 0
      else if (++run >= MIN_BYTES) return text
    }
    return undefined
  }

  /** Pushes a block for `bytes` when they are readable, or (`binaryOk`) have printable runs; true when pushed. */
  function emit(
    out: Block[],
    taken: Claims,
    bytes: Buffer,
    binaryOk: boolean,
    block: Omit<Block, "decoded" | "binary">,
  ): boolean {
    const text = readable(bytes)
    if (text !== undefined) out.push({ ...block, decoded: text })
    else {
      const runs = binaryOk && bytes.length >= MIN_BYTES ? printable(bytes) : undefined
      if (runs === undefined) return false
      out.push({ ...block, decoded: runs, binary: true })
    }
    taken.add(block.start, block.end)
    return true
  }

  function base64Bytes(compact: string): Buffer {
    return Buffer.from(compact.replace(/-/g, "+").replace(/_/g, "/"), "base64")
  }

  /** Words and identifiers are runs too; real base64 mixes cases with digits or symbols. */
  function looksBase64(compact: string): boolean {
    return /[0-9+/_-]/.test(compact) && /[a-z]/.test(compact) && /[A-Z]/.test(compact)
  }

  function allHex(text: string): boolean {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c >= 128 || HEX[c] === 0) return false
    }
    return true
  }

  /** Values of hex digits (-1 for other code units below 128). */
  const HEX_VALUE = new Int8Array(128).fill(-1)
  for (let i = 0; i < 16; i++) {
    HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i
    HEX_VALUE["0123456789ABCDEF".charCodeAt(i)] = i
  }

  /** The byte written by the two hex digits at `i` (valid digits). */
  function hexByte(text: string, i: number): number {
    return (HEX_VALUE[text.charCodeAt(i)] << 4) | HEX_VALUE[text.charCodeAt(i + 1)]
  }

  /** The bytes of hex digit ranges (pairs of `ranges`), each range's bytes in reverse order when `reversed`. */
  function hexBytes(text: string, ranges: number[], reversed = false): Buffer {
    let size = 0
    for (let k = 0; k < ranges.length; k += 2) size += (ranges[k + 1] - ranges[k]) >> 1
    const out = Buffer.allocUnsafe(size)
    let at = 0
    for (let k = 0; k < ranges.length; k += 2) {
      const a = ranges[k]
      const n = (ranges[k + 1] - a) >> 1
      for (let j = 0; j < n; j++) out[reversed ? at + n - 1 - j : at + j] = hexByte(text, a + 2 * j)
      at += n
    }
    return out
  }

  function hexRange(text: string, a: number, b: number): boolean {
    return hexEnd(text, a, b) === b
  }

  function hexEnd(text: string, i: number, end: number): number {
    while (i < end) {
      const c = text.charCodeAt(i)
      if (c >= 128 || HEX[c] === 0) break
      i++
    }
    return i
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Lines: wrapped blocks and dumps

  /**
   * Where a line-number gutter (`12: `, `00012| `, `  Line 12: `, `cat -n`'s `     1<tab>`) ends, or `a` when the
   * line has none.
   */
  function gutterEnd(text: string, a: number, b: number): number {
    let i = a
    while (i < b && text.charCodeAt(i) === 32) i++
    const first = text.charCodeAt(i)
    if ((first < 48 || first > 57) && first !== 76) return a
    if (text.startsWith("Line ", i)) i += 5
    const d = i
    while (i < b) {
      const c = text.charCodeAt(i)
      if (c < 48 || c > 57) break
      i++
    }
    if (i === d || i >= b) return a
    const sep = text.charCodeAt(i)
    if (sep === 9) return i + 1
    if (sep !== 58 && sep !== 124) return a
    i++
    return i < b && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) ? i + 1 : i
  }

  /** True when `text[a1, b1)` and `text[a2, b2)` are equal. */
  function same(text: string, a1: number, b1: number, a2: number, b2: number): boolean {
    if (b1 - a1 !== b2 - a2) return false
    for (let k = 0; k < b1 - a1; k++) if (text.charCodeAt(a1 + k) !== text.charCodeAt(a2 + k)) return false
    return true
  }

  /** First letter or digit (or code unit above 127) of `text[i, b)`: where a line's prefix (`> `, `# `, indent) ends. */
  function prefixEnd(text: string, i: number, b: number): number {
    while (i < b) {
      const c = text.charCodeAt(i)
      if (c >= 128 || WORD[c] === 1) break
      i++
    }
    return i
  }

  /** A wrapped block being assembled: lines of `width` payload characters after the same prefix. */
  type Wrapped = {
    start: number
    end: number
    prefixA: number
    prefixB: number
    width: number
    lines: number
    /** A shorter or padded line was seen: the block ends with it. */
    done: boolean
    /** Width and padding of the last line. */
    last: number
    pad: number
    /** Payload characters so far, padding aside, and whether they are all hex digits. */
    chars: number
    hex: boolean
    /** Payload ranges, in pairs. */
    parts: number[]
    /** Where in `parts` another output joined (a new width after a shorter line, or another prefix). */
    cuts: number[]
  }

  /** A dump being assembled. */
  type Dump = {
    start: number
    end: number
    prefixA: number
    prefixB: number
    offset: number
    group: number
    width: number
    done: boolean
    /** Group ranges, in pairs. */
    groups: number[]
  }

  /** What `dumpLine` found on a line. */
  type DumpLine = {
    kind: "data" | "lone"
    start: number
    offset: number
    group: number
    bytes: number
    groups: number[]
  }

  /**
   * One line of a hex dump starting at `q` (after the line's prefix): an optional offset (`00000010:` for xxd,
   * `0000020 ` for od and hexdump), groups of hex digits of one length separated by single spaces (hexdump -C puts
   * two in the middle), then an optional ASCII column after two or more spaces (`|…|`, `>…<`, or xxd's bare one).
   * A line holding a single hex token is `lone`: an od/hexdump end offset, or a line of `xxd -p`.
   */
  function dumpLine(text: string, q: number, b: number, scratch: number[]): DumpLine | undefined {
    let i = q
    let j = hexEnd(text, i, b)
    if (j === i) return undefined
    let offset = 0
    const after = j < b ? text.charCodeAt(j) : -1
    if (after === 58) {
      // xxd: `00000010: `
      if (j - i < 4 || j - i > MAX_OFFSET || text.charCodeAt(j + 1) !== 32) return undefined
      offset = j - i
      i = j + 2
    } else if (after === -1) {
      return { kind: "lone", start: q, offset: j - i, group: 0, bytes: 0, groups: scratch }
    } else if (after === 32) {
      // od / hexdump: an offset is a token of another length than the groups after it.
      let t = j
      while (t < b && text.charCodeAt(t) === 32) t++
      const u = hexEnd(text, t, b)
      if (j - i >= 6 && j - i <= MAX_OFFSET && u > t && u - t !== j - i && (u === b || text.charCodeAt(u) === 32)) {
        offset = j - i
        i = t
      }
    } else return undefined
    const pipe = text.charCodeAt(b - 1) === 124
    scratch.length = 0
    let group = 0
    let short = false
    let digits = 0
    while (i < b) {
      j = hexEnd(text, i, b)
      const len = j - i
      if (len === 0 || len & 1 || (j < b && text.charCodeAt(j) !== 32)) break
      if (group === 0) {
        if (len > MAX_GROUP) return undefined
        group = len
      } else if (len > group || short) break
      else if (len < group) short = true
      scratch.push(i, j)
      digits += len
      i = j
      let s = 0
      while (i + s < b && text.charCodeAt(i + s) === 32) s++
      if (s === 1 || (s === 2 && pipe && text.charCodeAt(i + s) !== 124)) i += s
      else break
    }
    if (group === 0) return undefined
    return { kind: "data", start: q, offset, group, bytes: digits / 2, groups: scratch }
  }

  function lines(text: string, out: Block[], seen: Claims, taken: Claims) {
    const n = text.length
    let wrapped: Wrapped | undefined
    let dump: Dump | undefined
    const scratch: number[] = []
    const closeWrapped = () => {
      const w = wrapped
      wrapped = undefined
      if (!w) return
      let parts = w.parts
      let cuts = w.cuts
      // A lead line (`data: QUJD…`): text, then a payload of the block's width ending the line before the block.
      const first = parts[1] - parts[0]
      if (first * (w.lines + 1) >= MIN_WRAPPED) {
        const lead = leadBefore(text, parts[0], first)
        if (lead >= 0 && seen.overlap(lead, lead + first) < 0) {
          parts = [lead, lead + first, ...parts]
          cuts = cuts.map((c) => c + 2)
        }
      }
      // A trailing line that starts with the rest of the payload and goes on with other text (taken, as the single
      // runs' continuation took it, after a payload of whole base64 quanta).
      if (w.pad === 0 && w.chars % 4 === 0) {
        const trail = trailAfter(text, w)
        if (trail) parts = [...parts, trail.start, trail.end]
      }
      // Outputs joined as one stream decode as one, when that decodes; else each on its own.
      const chosen = parts.length >= 4 ? boundaries(text, parts) : undefined
      if (cuts.length && !chosen?.decoded.readable) {
        let from = 0
        for (const cut of [...cuts, parts.length]) {
          const member = parts.slice(from, cut)
          if (member.length >= 4) finishWrapped(boundaries(text, member))
          from = cut
        }
      } else finishWrapped(chosen)
    }
    const finishWrapped = (chosen: ReturnType<typeof boundaries>) => {
      if (!chosen) return
      const start = chosen.parts[0]
      const end = chosen.parts[chosen.parts.length - 1]
      const { encoding, readable } = chosen.decoded
      const bytes = chosen.decoded.split
        ? Buffer.concat([chosen.decoded.bytes, READINGS, chosen.decoded.split])
        : chosen.decoded.bytes
      if (chosen.parts.length === 2) {
        // One line left: decoded as the single runs are, when it is text.
        if (!readable) return
        seen.add(start, end)
        emit(out, taken, bytes, false, { start, end, encoding, format: "run" })
        return
      }
      seen.add(start, end)
      // A large block that decodes to nothing: the single runs would join the same lines and fail again.
      if (
        !emit(out, taken, bytes, true, { start, end, encoding, format: "wrapped" }) &&
        chosen.parts.length > 2 * MAX_SEARCH
      )
        taken.add(start, end)
    }
    const closeDump = () => {
      const d = dump
      dump = undefined
      if (!d) return
      const bytes = hexBytes(text, d.groups)
      if (bytes.length < MIN_BYTES) return
      seen.add(d.start, d.end)
      const block = { start: d.start, end: d.end, encoding: "hex" as const, format: "dump" as const }
      if (d.group > 2) {
        // hexdump, od -x and xxd -e print little-endian words (the bytes of each group in reverse order); text
        // read in the wrong order is still printable, so both orders are scanned.
        emit(out, taken, Buffer.concat([bytes, READINGS, hexBytes(text, d.groups, true)]), true, block)
        return
      }
      emit(out, taken, bytes, true, block)
    }

    let pos = 0
    while (pos <= n) {
      let nl = text.indexOf("\n", pos)
      if (nl < 0) nl = n
      // The line without its line break and trailing blanks.
      let le = nl
      while (le > pos) {
        const c = text.charCodeAt(le - 1)
        if (c !== 13 && c !== 32 && c !== 9) break
        le--
      }
      if (le === pos) {
        if (wrapped) closeWrapped()
        if (dump) closeDump()
        pos = nl + 1
        continue
      }
      // Past the indentation once: a gutter starts with a digit or `Line` there, the prefix goes on from there.
      let ind = pos
      while (ind < le && text.charCodeAt(ind) === 32) ind++
      const first = text.charCodeAt(ind)
      const g = (first >= 48 && first <= 57) || first === 76 ? gutterEnd(text, pos, le) : pos
      if (!wrapped && !dump && !mayStart(text, g === pos ? ind : g, le)) {
        pos = nl + 1
        continue
      }

      // Dumps: parsed from the line start, or after its gutter (an xxd offset reads like a gutter).
      let line: DumpLine | undefined
      let base = pos
      const q0 = prefixEnd(text, pos, le)
      let q = q0
      // Dump lines are parsed while a dump is open, or when the line may start one.
      if (q < le && (dump || mayStartDump(text, q, le))) line = dumpLine(text, q, le, scratch)
      if (!line && g > pos) {
        base = g
        q = prefixEnd(text, g, le)
        if (q < le && (dump || mayStartDump(text, q, le))) line = dumpLine(text, q, le, scratch)
      }
      let consumed = false
      if (dump) {
        const d = dump
        const prefixed = line && same(text, d.prefixA, d.prefixB, base, q)
        if (
          line?.kind === "data" &&
          prefixed &&
          !d.done &&
          line.offset === d.offset &&
          line.bytes <= d.width &&
          (line.group === d.group || (line.group < d.group && line.groups.length === 2))
        ) {
          for (const x of line.groups) d.groups.push(x)
          d.done = line.bytes < d.width
          d.end = le
          consumed = true
        } else if (line?.kind === "lone" && prefixed && d.offset > 0 && line.offset === d.offset) {
          // od and hexdump end with the offset past the last byte.
          d.end = le
          closeDump()
          consumed = true
        } else if (star(text, d, pos, g, le)) {
          // A repeated line (`*`).
          d.end = le
          consumed = true
        } else closeDump()
      }
      // A dump starts with an offset or with two groups.
      if (!dump && !consumed && line?.kind === "data" && (line.offset > 0 || line.groups.length >= 4)) {
        dump = {
          start: line.start,
          end: le,
          prefixA: base,
          prefixB: q,
          offset: line.offset,
          group: line.group,
          width: line.bytes,
          done: false,
          groups: [...line.groups],
        }
        consumed = true
      }

      // Wrapped blocks: the line is a payload of base64 characters (and padding) after a prefix without letters or
      // digits.
      let e = le
      let pad = 0
      while (pad < 2 && e > g && text.charCodeAt(e - 1) === 61) {
        e--
        pad++
      }
      let s = e
      while (s > g) {
        const c = text.charCodeAt(s - 1)
        if (c >= 128 || B64[c] === 0) break
        s--
      }
      const payload = !consumed && le > s && (g === pos ? q0 >= s : prefixEnd(text, g, s) === s)
      if (wrapped) {
        const w = wrapped
        // Lines under the block's prefix; or, as the single runs' continuation took them, a line starting at the
        // line start after a payload of whole base64 quanta (the block's prefix is then the empty one).
        const bare = payload && s === g && w.pad === 0 && w.chars % 4 === 0
        // A hex block does not go on with base64 (a hex line, then a base64 block).
        const alphabet = !w.hex || w.chars < MIN_HEX_RUN || hexRange(text, s, e)
        const prefixed = payload && same(text, w.prefixA, w.prefixB, g, s)
        const fits = payload && alphabet && (prefixed || bare)
        /** Another output joins at the line start: the block's prefix is the empty one, and where it joined is kept. */
        const join = () => {
          if (prefixed) return
          w.prefixA = w.prefixB = g
          if (w.cuts[w.cuts.length - 1] !== w.parts.length) w.cuts.push(w.parts.length)
        }
        if (fits && !w.done && e - s + pad <= w.width) {
          join()
          w.parts.push(s, le)
          w.lines++
          w.end = le
          w.done = pad > 0 || e - s < w.width
          w.last = e - s
          w.pad = pad
          w.chars += e - s
          w.hex &&= hexRange(text, s, e)
        } else if (fits && w.done && w.pad === 0 && w.chars % 4 === 0) {
          // Another block right after one whose payload fills whole base64 quanta (and hex bytes): the two decode as
          // one, as the single runs' continuation decoded them.
          join()
          if (w.cuts[w.cuts.length - 1] !== w.parts.length) w.cuts.push(w.parts.length)
          w.parts.push(s, le)
          w.lines++
          w.end = le
          w.width = w.last = e - s
          w.done = pad > 0
          w.pad = pad
          w.chars += e - s
          w.hex &&= hexRange(text, s, e)
        } else if (fits && w.done && w.pad === 0 && w.last < w.width && e - s === w.last) {
          // The shorter line starts the next block, as wide as it: it goes there.
          const shorter = w.parts.splice(-2, 2)
          w.lines--
          w.chars -= w.last
          w.end = w.parts[w.parts.length - 1]
          w.cuts = w.cuts.filter((c) => c < w.parts.length)
          w.hex = true
          for (let k = 0; k < w.parts.length && w.hex; k += 2) w.hex = hexRange(text, w.parts[k], w.parts[k + 1])
          closeWrapped()
          wrapped = {
            ...w,
            prefixA: prefixed ? w.prefixA : g,
            prefixB: prefixed ? w.prefixB : g,
            start: shorter[0],
            end: le,
            width: e - s,
            lines: 2,
            done: pad > 0,
            last: e - s,
            pad,
            chars: 2 * (e - s),
            hex: hexRange(text, shorter[0], shorter[1]) && hexRange(text, s, e),
            parts: [...shorter, s, le],
            cuts: [],
          }
        } else if (
          fits &&
          w.lines === 2 &&
          w.pad === 0 &&
          e - s + pad <= w.last &&
          !decodeLines(payloadOf(text, w.parts), 0, 2)?.readable
        ) {
          // The first line was a longer one before the block (the two do not decode to text): the block starts at
          // the second.
          const done = pad > 0 || e - s < w.last
          wrapped = {
            ...w,
            prefixA: prefixed ? w.prefixA : g,
            prefixB: prefixed ? w.prefixB : g,
            start: w.parts[2],
            end: le,
            width: w.last,
            done,
            last: e - s,
            pad,
            chars: w.last + e - s,
            hex: hexRange(text, w.parts[2], w.parts[3]) && hexRange(text, s, e),
            parts: [w.parts[2], w.parts[3], s, le],
            cuts: [],
          }
        } else closeWrapped()
      }
      if (!wrapped && payload && e > s) {
        const w = e - s
        wrapped = {
          start: s,
          end: le,
          prefixA: g,
          prefixB: s,
          width: w,
          lines: 1,
          done: pad > 0,
          last: w,
          pad,
          chars: w,
          hex: hexRange(text, s, e),
          parts: [s, le],
          cuts: [],
        }
      }
      pos = nl + 1
    }
    closeWrapped()
    closeDump()
    seen.next()
    taken.next()
  }

  /**
   * Whether the line `text[g, le)` (past its gutter) may start a block: a payload of base64 characters after a
   * prefix without letters or digits, or a hex token followed by `:` or a space (a dump line). Most lines fail on
   * their last word or their first one; the full parse runs only for the others.
   */
  function mayStart(text: string, g: number, le: number): boolean {
    let q = g
    while (q < le) {
      const c = text.charCodeAt(q)
      if (c >= 128 || WORD[c] === 1) break
      q++
    }
    if (q === le) return false
    let e = le
    if (text.charCodeAt(e - 1) === 61) e -= text.charCodeAt(e - 2) === 61 ? 2 : 1
    let s = e
    while (s > q) {
      const c = text.charCodeAt(s - 1)
      if (c >= 128 || B64[c] === 0) break
      s--
    }
    if (s === q && e > q) return true
    return mayStartDump(text, q, le)
  }

  /** Whether the line may be a dump's first line from `q` (its first letter or digit): a hex token, then `:` or a space. */
  function mayStartDump(text: string, q: number, le: number): boolean {
    const c = text.charCodeAt(q)
    if (c >= 128 || HEX[c] === 0) return false
    let j = q + 1
    while (j < le) {
      const d = text.charCodeAt(j)
      if (d >= 128 || HEX[d] === 0) break
      j++
    }
    const after = j < le ? text.charCodeAt(j) : -1
    return after === 58 || after === 32
  }

  /** A wrapped block's payload: its lines' characters joined once, and where each line starts in them. */
  type Payload = { compact: string; offsets: number[] }

  function payloadOf(text: string, parts: number[]): Payload {
    const pieces: string[] = []
    const offsets = [0]
    let at = 0
    for (let k = 0; k < parts.length; k += 2) {
      pieces.push(text.slice(parts[k], parts[k + 1]))
      at += parts[k + 1] - parts[k]
      offsets.push(at)
    }
    return { compact: pieces.join(""), offsets }
  }

  type Decoded = { bytes: Buffer; split?: Buffer; encoding: "hex" | "base64"; readable: boolean }

  /**
   * Lines `[from, to)` of a wrapped block's payload decoded: as hex when every character is a hex digit and the bytes
   * are readable, else as base64 when it looks like base64 (readable first, then binary).
   *
   * `split` is a second reading, for the scanner: a line shorter than the one before it may end its block or be a
   * block of its own (two outputs one after the other: a two-line block, or more lines after the shorter one), and
   * such lines can start other blocks; when the payload before each such line fills whole base64 quanta (hex bytes),
   * the pieces are also decoded apart, one a line.
   */
  function decodeLines(payload: Payload, from: number, to: number): Decoded | undefined {
    const { offsets } = payload
    const compact = payload.compact.slice(offsets[from], offsets[to])
    const data = compact.replace(/=+$/, "")
    if (data.length < MIN_WRAPPED || data.includes("=")) return undefined
    const b64 = looksBase64(data)
    let encoding: "hex" | "base64" | undefined
    let bytes: Buffer | undefined
    let ok = false
    if (allHex(data)) {
      bytes = Buffer.from(data.length % 2 ? data.slice(0, -1) : data, "hex")
      ok = readable(bytes) !== undefined
      if (ok || !b64) encoding = "hex"
    }
    if (!encoding) {
      if (!b64) return undefined
      encoding = "base64"
      bytes = base64Bytes(compact)
      ok = readable(bytes) !== undefined
    }
    const decode = (piece: string) =>
      encoding === "hex" ? Buffer.from(piece.length % 2 ? piece.slice(0, -1) : piece, "hex") : base64Bytes(piece)
    const quantum = encoding === "hex" ? 2 : 4
    const width = (line: number) => offsets[line + 1] - offsets[line]
    const pieces: Buffer[] = []
    let cut = 0
    for (let line = from + 1; line < to; line++) {
      const at = offsets[line] - offsets[from]
      // Before a line shorter than the one before it (a shorter last line after two or more full ones is the block's
      // own end); after one when the next line is not as wide (a shorter line followed by lines of its width starts
      // the next block).
      const shorter = width(line) < width(line - 1) && (line + 1 < to || to - from === 2)
      const endsShorter = line - 2 >= from && width(line - 1) < width(line - 2) && width(line) !== width(line - 1)
      if (!shorter && !endsShorter) continue
      if (at % quantum !== 0 || compact.slice(cut, at).includes("=")) continue
      pieces.push(decode(compact.slice(cut, at)), Buffer.from("\n"))
      cut = at
    }
    if (!pieces.length) return { bytes: bytes!, encoding, readable: ok }
    pieces.push(decode(compact.slice(cut)))
    return { bytes: bytes!, split: Buffer.concat(pieces), encoding, readable: ok }
  }

  /** The bytes the payload of lines `[from, to)` decodes to, counted without decoding. */
  function decodedLength(payload: Payload, from: number, to: number, encoding: "hex" | "base64"): number {
    const chars = payload.offsets[to] - payload.offsets[from]
    return encoding === "hex" ? chars >> 1 : Math.floor((chars * 3) / 4)
  }

  /**
   * Which lines of a wrapped block (`parts`) decode to text: all of them, or without first or last lines that spoil
   * the decoding (an identifier, a hash or a word next to the block): lines without which the rest is text while the
   * whole is not (the fewest such lines are taken off, at most `MAX_TRIM` at each end of a block of at most
   * `MAX_SEARCH` lines, one of longer ones), then lines whose bytes are control characters or not UTF-8. Undefined
   * when nothing decodes. Large blocks decode at most four times (binary ones twice).
   */
  function boundaries(text: string, parts: number[]): { parts: number[]; decoded: Decoded } | undefined {
    const payload = payloadOf(text, parts)
    const lines = parts.length / 2
    const full = decodeLines(payload, 0, lines)
    let from = 0
    let to = lines
    let decoded = full
    if (!full?.readable && lines <= MAX_SEARCH) {
      search: for (let off = 1; off <= 2 * MAX_TRIM; off++)
        for (let head = Math.max(0, off - MAX_TRIM); head <= Math.min(off, MAX_TRIM); head++) {
          if (lines - off < 1) break search
          const d = decodeLines(payload, head, lines - (off - head))
          if (d?.readable) {
            from = head
            to = lines - (off - head)
            decoded = d
            break search
          }
        }
    } else if (!full?.readable && lines > 2) {
      // Large blocks: both ends off (binary data stops here), then one put back when the rest stays text.
      const inner = decodeLines(payload, 1, lines - 1)
      if (inner?.readable) {
        const noFirst = decodeLines(payload, 1, lines)
        const noLast = noFirst?.readable ? undefined : decodeLines(payload, 0, lines - 1)
        if (noFirst?.readable) [from, decoded] = [1, noFirst]
        else if (noLast?.readable) [to, decoded] = [lines - 1, noLast]
        else [from, to, decoded] = [1, lines - 1, inner]
      }
    }
    if (!decoded?.readable) return full && { parts, decoded: full }
    // Ends that decode to control characters or not to UTF-8 go (large blocks: the lengths are counted, not decoded).
    const small = to - from <= MAX_SEARCH
    for (let trims = 0; trims < 2 * MAX_TRIM && to - from > 1; trims++) {
      const noLast = small ? decodeLines(payload, from, to - 1) : undefined
      const lastAt = small ? (noLast?.bytes.length ?? -1) : decodedLength(payload, from, to - 1, decoded.encoding)
      if (
        (!small || (noLast?.readable && noLast.encoding === decoded.encoding)) &&
        lastAt >= 0 &&
        spoils(decoded.bytes, lastAt)
      ) {
        to--
        decoded = noLast ?? decodeLines(payload, from, to)
        if (!decoded?.readable) return full && { parts, decoded: full }
        continue
      }
      const noFirst = small ? decodeLines(payload, from + 1, to) : undefined
      const firstEnd = small
        ? decoded.bytes.length - (noFirst?.bytes.length ?? decoded.bytes.length)
        : decodedLength(payload, from, from + 1, decoded.encoding)
      if (
        (!small || (noFirst?.readable && noFirst.encoding === decoded.encoding)) &&
        spoils(decoded.bytes, 0, firstEnd - 1)
      ) {
        from++
        decoded = noFirst ?? decodeLines(payload, from, to)
        if (!decoded?.readable) return full && { parts, decoded: full }
        continue
      }
      break
    }
    return { parts: parts.slice(from * 2, to * 2), decoded }
  }

  /**
   * The line after a block of full lines, when it starts (after the block's prefix) with a payload no wider than the
   * block followed by white space (as the single runs' continuation took such lines): that payload's range.
   */
  function trailAfter(
    text: string,
    w: { end: number; prefixA: number; prefixB: number; width: number },
  ): { start: number; end: number } | undefined {
    const nl = text.indexOf("\n", w.end)
    if (nl < 0 || nl - w.end > 1) return undefined
    const ls = nl + 1
    const g = gutterEnd(text, ls, Math.min(text.length, ls + 32))
    const a = g + (w.prefixB - w.prefixA)
    if (!same(text, w.prefixA, w.prefixB, g, a)) return undefined
    let b = a
    while (b < text.length && b - a <= w.width) {
      const c = text.charCodeAt(b)
      if (c >= 128 || B64[c] === 0) break
      b++
    }
    if (b === a) return undefined
    let pad = 0
    while (pad < 2 && text.charCodeAt(b) === 61) {
      b++
      pad++
    }
    // At least four characters, padding included (not a `//` starting a comment).
    if (b - a < 4) return undefined
    // White space as the single runs' continuation tests it (`\s`, no-break spaces included).
    if (b - a > w.width || (b < text.length && !/\s/.test(text[b]))) return undefined
    return { start: a, end: b }
  }

  /**
   * True when `bytes[from, to)` hold a control character (tab and line breaks aside) or bytes that are not UTF-8
   * (a piece decoded out of step, or not encoded text at all).
   */
  function spoils(bytes: Buffer, from: number, to = bytes.length): boolean {
    let a = Math.max(0, from)
    // Past the continuation bytes of a character that started before `from`.
    for (let k = 0; k < 3 && a < to && (bytes[a] & 0xc0) === 0x80; k++) a++
    const piece = bytes.toString("utf8", a, Math.max(a, to))
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i)
      if (c === 0xfffd || (c < 32 && c !== 9 && c !== 10 && c !== 13) || c === 127) return true
    }
    return false
  }

  /**
   * Where a lead line's payload starts: the line before `start`'s line ends with a run of exactly `width` base64
   * characters; -1 when it does not.
   */
  function leadBefore(text: string, start: number, width: number): number {
    const ls = text.lastIndexOf("\n", start - 1)
    if (ls <= 0) return -1
    let le = ls
    while (le > 0) {
      const c = text.charCodeAt(le - 1)
      if (c !== 13 && c !== 32 && c !== 9) break
      le--
    }
    let s = le
    while (s > 0 && le - s <= width) {
      const c = text.charCodeAt(s - 1)
      if (c >= 128 || B64[c] === 0 || c === 10) break
      s--
    }
    return le - s === width ? s : -1
  }

  /** True when the line is a dump's `*` (repeated lines) under the dump's prefix. */
  function star(text: string, d: Dump, pos: number, g: number, le: number): boolean {
    if (text.charCodeAt(le - 1) !== 42) return false
    return same(text, d.prefixA, d.prefixB, pos, le - 1) || same(text, d.prefixA, d.prefixB, g, le - 1)
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Inline forms

  /** `0x41, 0x50, …` (C arrays of `xxd -i`, JS and Python byte lists): at least `MIN_ITEMS` items of one or two digits. */
  function byteLists(text: string, needle: string, out: Block[], seen: Claims, taken: Claims) {
    const n = text.length
    /** The end of a `0xN` / `0xNN` item at `i`, or -1. */
    const item = (i: number) => {
      if (!text.startsWith(needle, i)) return -1
      const j = hexEnd(text, i + 2, Math.min(n, i + 4))
      if (j === i + 2) return -1
      const c = j < n ? text.charCodeAt(j) : 32
      return c < 128 && WORD_[c] === 1 ? -1 : j
    }
    let i = text.indexOf(needle)
    while (i >= 0) {
      const before = i > 0 ? text.charCodeAt(i - 1) : 32
      let end = before < 128 && WORD_[before] === 1 ? -1 : item(i)
      if (end < 0) {
        i = text.indexOf(needle, i + 2)
        continue
      }
      const start = i
      const bytes: number[] = []
      let at = i
      for (;;) {
        bytes.push(end - at === 3 ? HEX_VALUE[text.charCodeAt(at + 2)] : hexByte(text, at + 2))
        let k = end
        while (k < n) {
          const c = text.charCodeAt(k)
          if (c !== 44 && c !== 32 && c !== 9 && c !== 10 && c !== 13) break
          k++
        }
        const next = k > end ? item(k) : -1
        if (next < 0) break
        at = k
        end = next
      }
      if (bytes.length >= MIN_ITEMS && seen.overlap(start, end) < 0) {
        seen.add(start, end)
        emit(out, taken, Buffer.from(bytes), true, { start, end, encoding: "hex", format: "bytes" })
      }
      i = text.indexOf(needle, end)
    }
    seen.next()
    taken.next()
  }

  const SIMPLE_ESCAPES: Record<string, number> = { n: 10, t: 9, r: 13, "0": 0, e: 27, a: 7, b: 8, f: 12, v: 11 }

  /**
   * `\xNN` escape strings (`printf`, C and Python literals), with the literal characters between escapes: a value
   * partly escaped decodes whole. A string runs between quotes or line ends; strings joined by quotes, `+`, `,` or
   * line continuations decode as one.
   */
  function escapes(text: string, out: Block[], seen: Claims, taken: Claims) {
    const n = text.length
    const valid = (i: number) => i + 4 <= n && hexEnd(text, i + 2, i + 4) === i + 4
    let i = text.indexOf("\\x")
    while (i >= 0) {
      if (!valid(i)) {
        i = text.indexOf("\\x", i + 2)
        continue
      }
      let start = i
      while (start > 0) {
        const c = text.charCodeAt(start - 1)
        if (c < 128 && QUOTE_OR_LINE[c] === 1) break
        start--
      }
      const bytes: number[] = []
      /** White space between strings: where in `bytes`, and its range in `text` (in threes). */
      const gaps: number[] = []
      let count = 0
      let end = start
      let from = start
      for (;;) {
        // Decode one string from `from` to its closing quote or line end.
        let k = from
        while (k < n) {
          const c = text.charCodeAt(k)
          if (c < 128 && QUOTE_OR_LINE[c] === 1) break
          if (c === 92 && k + 1 < n) {
            const d = text[k + 1]
            if (d === "x" && valid(k)) {
              bytes.push(hexByte(text, k + 2))
              count++
              k += 4
              continue
            }
            const simple = SIMPLE_ESCAPES[d]
            if (simple !== undefined) bytes.push(simple)
            else if (d === "\\" || d === '"' || d === "'" || d === "`") bytes.push(d.charCodeAt(0))
            else if (d !== "\n" && d !== "\r") bytes.push(92, ...Buffer.from(d))
            k += 2
            continue
          }
          if (c < 128) bytes.push(c)
          else {
            const cp = text.codePointAt(k)!
            for (const b of Buffer.from(String.fromCodePoint(cp))) bytes.push(b)
            k += cp > 0xffff ? 2 : 1
            continue
          }
          k++
        }
        end = k
        // Another string with escapes after quotes, spaces, `+`, `,` or a line continuation only?
        let m = k
        while (m < n && m - k < 64) {
          const c = text.charCodeAt(m)
          if (c >= 128 || JOIN[c] === 0) break
          // A backslash joins as a line continuation only (else it starts the next escape).
          if (c === 92 && text[m + 1] !== "\n" && text[m + 1] !== "\r") break
          m++
        }
        if (m === k) break
        // The next string (to its quote or line end) must hold an escape.
        let stop = m
        let escaped = false
        while (stop < n && !escaped) {
          const c = text.charCodeAt(stop)
          if (c < 128 && QUOTE_OR_LINE[c] === 1) break
          escaped = c === 92 && text.charCodeAt(stop + 1) === 120 && valid(stop)
          stop++
        }
        if (!escaped) break
        // Quotes, `+`, `,` or a continuation join strings (the gap is not content); a bare line break may be content
        // (escaped text) or not (one escape a line): both are read.
        let literal = true
        for (let j = k; j < m && literal; j++) {
          const c = text.charCodeAt(j)
          literal = c === 32 || c === 9 || c === 10 || c === 13
        }
        if (literal) gaps.push(bytes.length, k, m)
        from = m
      }
      if (seen.overlap(start, end) < 0) {
        seen.add(start, end)
        let decoded = Buffer.from(bytes)
        if (gaps.length) {
          // The reading with the white space kept, then the one without.
          const kept: number[] = []
          let at = 0
          for (let g = 0; g < gaps.length; g += 3) {
            for (; at < gaps[g]; at++) kept.push(bytes[at])
            for (let j = gaps[g + 1]; j < gaps[g + 2]; j++) kept.push(text.charCodeAt(j))
          }
          for (; at < bytes.length; at++) kept.push(bytes[at])
          decoded = Buffer.concat([Buffer.from(kept), READINGS, decoded])
        }
        emit(out, taken, decoded, count >= 4, { start, end, encoding: "hex", format: "escapes" })
      }
      i = text.indexOf("\\x", Math.max(end, i + 2))
    }
    seen.next()
    taken.next()
  }

  /**
   * Hex pairs separated by one or two spaces inside a line (`echo "x: 41 50 49 5f …"`), at least `MIN_PAIRS` of them
   * (pairs starting a line are dump lines).
   */
  function pairs(text: string, out: Block[], seen: Claims, taken: Claims) {
    const n = text.length
    // Twelve pairs span 35 characters: a probe every 33rd position lands where it and the next two characters are
    // inside the sequence, and any three characters of a sequence are hex digits and one or two spaces.
    const stride = MIN_PAIRS * 3 - 3
    let probe = stride - 1
    while (probe + 2 < n) {
      let spaces = 0
      let k = 0
      for (; k < 3; k++) {
        const c = text.charCodeAt(probe + k)
        if (c >= 128 || HEX_SPACE[c] === 0) break
        if (c === 32) spaces++
      }
      if (k < 3 || spaces === 0 || spaces === 3) {
        probe += stride
        continue
      }
      const run = { start: probe, end: probe + 3 }
      while (run.start > 0) {
        const c = text.charCodeAt(run.start - 1)
        if (c >= 128 || HEX_SPACE[c] === 0) break
        run.start--
      }
      while (run.end < n) {
        const c = text.charCodeAt(run.end)
        if (c >= 128 || HEX_SPACE[c] === 0) break
        run.end++
      }
      probe = run.end + stride
      if (run.end - run.start < MIN_PAIRS * 3 - 1) continue
      let i = run.start
      while (i < run.end) {
        // The next sequence of pairs: tokens of exactly two digits, one or two spaces apart.
        while (i < run.end && text.charCodeAt(i) === 32) i++
        const start = i
        /** The pairs' ranges, in twos. */
        const found: number[] = []
        let end = pairsAt(text, i, run.end, (a, b) => found.push(a, b))
        if (found.length / 2 >= MIN_PAIRS) {
          // Sequences ending their lines go on after the same prefix on the next lines (`data: 41 50 …` lines).
          const ls = text.lastIndexOf("\n", start - 1) + 1
          for (let nl = lineEnd(text, end); nl >= 0; nl = lineEnd(text, end)) {
            const at = nl + 1 + (start - ls)
            if (at > n || !same(text, ls, start, nl + 1, at)) break
            let le = text.indexOf("\n", at)
            if (le < 0) le = n
            while (le > at && (text.charCodeAt(le - 1) === 13 || text.charCodeAt(le - 1) === 32)) le--
            const more = pairsAt(text, at, le, (a, b) => found.push(a, b))
            if (more === at) break
            end = more
          }
          probe = Math.max(probe, end + stride)
          if (seen.overlap(start, end) < 0) {
            seen.add(start, end)
            emit(out, taken, hexBytes(text, found), true, { start, end, encoding: "hex", format: "pairs" })
          }
        }
        // Past this token.
        i = Math.max(end, start + 1)
        while (i < run.end && text.charCodeAt(i) !== 32) i++
      }
    }
    seen.next()
    taken.next()
  }

  /**
   * The end of the spaced pairs starting at `i` (before `end`), each pair's range passed to `visit`; `i` when there
   * are none.
   */
  function pairsAt(text: string, i: number, end: number, visit: (a: number, b: number) => void): number {
    let last = i
    while (i + 2 <= end && (i + 2 === end || text.charCodeAt(i + 2) === 32) && hexEnd(text, i, i + 2) === i + 2) {
      visit(i, i + 2)
      last = i + 2
      let s = 0
      while (last + s < end && s < 3 && text.charCodeAt(last + s) === 32) s++
      if (s === 0 || s > 2) break
      i = last + s
    }
    return last
  }

  /** The index of the line break ending `i`'s line when only blanks come between; -1 else (or at the text's end). */
  function lineEnd(text: string, i: number): number {
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === 10) return i
      if (c !== 32 && c !== 9 && c !== 13) return -1
    }
    return -1
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Single runs (the original finder): what the other forms did not decode

  const CONTINUATION = /[A-Za-z0-9+/_-]{4,}={0,2}/y
  const HEX_RUN = /^[0-9a-fA-F]+$/

  /**
   * Runs of at least `MIN_RUN` base64 characters (a run filling its line continues on the next line when that line
   * starts with a run), and hex runs of at least `MIN_HEX_RUN` digits; outside the blocks the other forms decoded.
   */
  function runs(text: string, out: Block[], taken: Claims) {
    let from = 0
    /** The end of lines whose joined decoding failed once: within them, a second failure decodes each line alone. */
    let retried = -1
    for (let run = nextRun(text, 0, B64, MIN_RUN); run; run = nextRun(text, from, B64, MIN_RUN)) {
      const claimed = taken.overlap(run.start, run.end)
      if (claimed >= 0) {
        from = Math.max(run.end, claimed)
        continue
      }
      const start = run.start
      let end = run.end
      // Up to two `=` of padding.
      if (text[end] === "=") end += text[end + 1] === "=" ? 2 : 1
      let compact = text.slice(start, end)
      const pieces = [start, end]
      // Wrapped blocks: the run ends its line and the next line is another run. Not after padding: decoding stops
      // at the first `=`, a line after it would only widen the block.
      while (
        compact.length % 4 === 0 &&
        text[end - 1] !== "=" &&
        (text[end] === "\n" || (text[end] === "\r" && text[end + 1] === "\n"))
      ) {
        const next = end + (text[end] === "\r" ? 2 : 1)
        CONTINUATION.lastIndex = next
        const c = CONTINUATION.exec(text)
        if (!c || taken.overlap(next, next + c[0].length) >= 0) break
        const after = text[next + c[0].length]
        if (after !== undefined && !/\s/.test(after)) break
        compact += c[0]
        end = next + c[0].length
        pieces.push(next, end)
      }
      from = end
      const found = decodeRun(compact)
      if (found) {
        out.push({ start, end, format: "run", ...found })
        continue
      }
      if (pieces.length === 2) continue
      if (start >= retried) {
        // Lines taken after the run that spoil its decoding: the run alone, then the next lines again (once).
        retried = end
        from = pieces[1]
        const alone = decodeRun(text.slice(start, pieces[1]))
        if (alone) out.push({ start, end: pieces[1], format: "run", ...alone })
        continue
      }
      // Within lines retried already: each line on its own (joining them again would be quadratic).
      for (let k = 0; k < pieces.length; k += 2) {
        const alone = decodeRun(text.slice(pieces[k], pieces[k + 1]))
        if (alone) out.push({ start: pieces[k], end: pieces[k + 1], format: "run", ...alone })
      }
    }
  }

  /** A run's text decoded: hex of at least `MIN_HEX_RUN` digits, or base64, when readable. */
  function decodeRun(compact: string): { encoding: "hex" | "base64"; decoded: string } | undefined {
    if (HEX_RUN.test(compact) && compact.length >= MIN_HEX_RUN) {
      const decoded = readable(Buffer.from(compact.length % 2 ? compact.slice(0, -1) : compact, "hex"))
      return decoded === undefined ? undefined : { encoding: "hex", decoded }
    }
    if (!looksBase64(compact)) return undefined
    const decoded = readable(base64Bytes(compact))
    return decoded === undefined ? undefined : { encoding: "base64", decoded }
  }
}
