import { describe, expect, test } from "bun:test"
import picomatch from "picomatch"
import { SecurityGlob } from "../../security/glob"

const glob = (pattern: string, options: SecurityGlob.Options = {}) => SecurityGlob.compile(pattern, options)
const matches = (pattern: string, input: string, nocase = false) => SecurityGlob.test(glob(pattern, { nocase }), input)
const reason = (pattern: string) => {
  try {
    SecurityGlob.compile(pattern)
  } catch (error) {
    if (SecurityGlob.PatternError.is(error)) return error.data.reason
    throw error
  }
  return "compiled"
}
const pico = (pattern: string, nocase = false) => picomatch.makeRe(pattern, { dot: true, nocase })

/** A small seeded generator, so every run checks the same corpus. */
function random(seed: number) {
  let s = seed >>> 0
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]
  return { next, int, pick }
}

/** Characters of names; some are special to picomatch and are escaped when used literally in a pattern. */
const NAME = ["a", "b", "c", "A", "B", "x", "1", "2", ".", "-", "_", " ", "é", "É", "σ", "ς", "Σ", "ǅ", "~", "#", "@"]
const ODD = ["[", "]", "{", "}", ",", "!", "+", "(", ")", "$", "^", "*", "?"]

type Part = { pattern: string; sample: () => string }

/** Benign patterns built from parts that also know how to produce an input that (usually) matches them. */
function generator(seed: number) {
  const r = random(seed)
  const literal = (): Part => {
    let pattern = ""
    let text = ""
    for (let i = 1 + r.int(3); i > 0; i--) {
      if (r.next() < 0.15) {
        const c = r.pick(["[", "]", "{", "}", "(", ")", "!", "@", ",", "$", "^"])
        pattern += `\\${c}`
        text += c
      } else {
        const c = r.pick(NAME)
        pattern += c
        text += c
      }
    }
    return { pattern, sample: () => text }
  }
  const cls = (): Part => {
    const negate = r.next() < 0.25
    const members: string[] = []
    let body = ""
    for (let i = 1 + r.int(3); i > 0; i--) {
      const kind = r.next()
      if (kind < 0.2) {
        const name = r.pick(["alpha", "digit", "upper", "lower", "alnum", "punct", "space", "xdigit", "word"])
        body += `[:${name}:]`
        members.push(
          (
            {
              alpha: "q",
              digit: "7",
              upper: "Q",
              lower: "q",
              alnum: "9",
              punct: "%",
              space: " ",
              xdigit: "e",
              word: "_",
            } as Record<string, string>
          )[name],
        )
      } else if (kind < 0.45) {
        const lo = r.pick(["a", "A", "0", "à", "α"])
        const hi = String.fromCharCode(lo.charCodeAt(0) + r.int(6))
        body += `${lo}-${hi}`
        members.push(lo, hi)
      } else {
        const c = r.pick([...NAME.filter((c) => c !== " "), "]", "-", "^", "\\]", "\\-"])
        if (c === "]" && body === "") body += "]"
        else if (c === "]" || c === "^") body += c === "]" ? "\\]" : body === "" ? "\\^" : "^"
        else body += c
        members.push(c.replace("\\", ""))
      }
    }
    const pattern = `[${negate ? "^" : ""}${body}]`
    return {
      pattern,
      sample: () => (negate ? r.pick(["z", "Z", "é", "/", "k"]) : r.next() < 0.1 ? pattern : r.pick(members)),
    }
  }
  const atom = (depth: number): Part => {
    const k = r.next()
    if (k < 0.35) return literal()
    if (k < 0.5) return { pattern: "*", sample: () => r.pick(["", "a", "xy", ".e", "é", "b.c"]) }
    if (k < 0.6) return { pattern: "?", sample: () => r.pick(["a", ".", "é", "Z", " "]) }
    if (k < 0.78) return cls()
    if (depth > 2) return literal()
    const alts = Array.from({ length: 2 + r.int(3) }, () =>
      r.next() < 0.1 ? { pattern: "", sample: () => "" } : sequence(depth + 1, r.next() < 0.2),
    )
    return { pattern: `{${alts.map((a) => a.pattern).join(",")}}`, sample: () => r.pick(alts).sample() }
  }
  const sequence = (depth: number, slashes: boolean): Part => {
    const parts = Array.from({ length: 1 + r.int(3) }, () => atom(depth))
    if (slashes && parts.length > 1) parts.splice(1, 0, { pattern: "/", sample: () => "/" })
    // '**' only as a whole segment, '***' never: no two stars side by side; '..' never inside braces.
    const fixed: Part[] = []
    for (const part of parts) {
      const prev = fixed[fixed.length - 1]
      if (prev && prev.pattern.endsWith("*") && part.pattern.startsWith("*")) continue
      if (prev && depth > 0 && prev.pattern.endsWith(".") && part.pattern.startsWith(".")) continue
      fixed.push(part)
    }
    return { pattern: fixed.map((p) => p.pattern).join(""), sample: () => fixed.map((p) => p.sample()).join("") }
  }
  const segment = (): Part => {
    if (r.next() < 0.15) return { pattern: "**", sample: () => r.pick(["", "a", "a/b", "x/.y/z"]) }
    return sequence(0, false)
  }
  return (): Part => {
    const segments = Array.from({ length: 1 + r.int(4) }, segment)
    const absolute = r.next() < 0.15
    const pattern = (absolute ? "/" : "") + segments.map((s) => s.pattern).join("/")
    const sample = () => {
      const parts = segments.map((s) => s.sample())
      return ((absolute ? "/" : "") + parts.join("/")).replace(/\/{2,}/g, "/").replace(/(.)\/$/, "$1")
    }
    return { pattern, sample }
  }
}

/**
 * Inputs match.ts passes: no empty, '.' or '..' segment, no trailing '/'; the root "/" for absolute patterns. Line
 * breaks are a deviation (see below).
 */
const normalised = (input: string, pattern: string) =>
  input !== "" &&
  !/[\n\r\u2028\u2029]/.test(input) &&
  input.startsWith("/") === pattern.startsWith("/") &&
  (input === "/" ||
    (!input.endsWith("/") &&
      input.split("/").every((s, i) => (s !== "" || (i === 0 && input.startsWith("/"))) && s !== "." && s !== "..")))

/** The shapes where SecurityGlob deliberately matches more than picomatch (see the namespace notes). */
function deviation(pattern: string): boolean {
  if (pattern.startsWith("/**/")) return true
  // '.' then '*' inside braces (outside a class).
  let depth = 0
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === "\\") i++
    else if (c === "[" && pattern.includes("]", i + 2)) i = pattern.indexOf("]", i + 2)
    else if (c === "{") depth++
    else if (c === "}" && depth > 0) depth--
    else if (c === "." && depth > 0 && pattern[i + 1] === "*") return true
  }
  return false
}

function mutate(r: ReturnType<typeof random>, input: string): string {
  if (!input) return "a"
  const at = r.int(input.length)
  const k = r.next()
  if (k < 0.3) return input.slice(0, at) + input.slice(at + 1)
  if (k < 0.6) return input.slice(0, at) + r.pick([...NAME, ...ODD, "/"]) + input.slice(at + 1)
  if (k < 0.8) return input.toUpperCase()
  return input + r.pick(["a", "/x", ".", "é"])
}

describe("SecurityGlob: the same results as picomatch", () => {
  test("differential: generated patterns × paths, case-sensitive and not, identical to picomatch's regular expression", () => {
    const r = random(20240611)
    const next = generator(7)
    let patterns = 0
    let checks = 0
    let positive = 0
    const differences: string[] = []
    for (let n = 0; n < 1500; n++) {
      const { pattern, sample } = next()
      if (deviation(pattern)) continue
      let compiled: SecurityGlob.Glob
      try {
        compiled = glob(pattern)
      } catch {
        continue
      }
      patterns++
      const folded = glob(pattern, { nocase: true })
      const re = pico(pattern)
      const ri = pico(pattern, true)
      const inputs = new Set<string>()
      for (let i = 0; i < 12; i++) {
        const s = sample()
        inputs.add(s)
        inputs.add(mutate(r, s))
      }
      for (const input of inputs) {
        if (!normalised(input, pattern)) continue
        checks++
        const expected = re.test(input)
        if (expected) positive++
        if (SecurityGlob.test(compiled, input) !== expected) differences.push(`${pattern} ${JSON.stringify(input)}`)
        if (SecurityGlob.test(folded, input) !== ri.test(input))
          differences.push(`${pattern} (nocase) ${JSON.stringify(input)}`)
      }
    }
    expect(differences.slice(0, 10)).toEqual([])
    expect(patterns).toBeGreaterThan(1200)
    expect(checks).toBeGreaterThan(15_000)
    expect(positive).toBeGreaterThan(checks / 5)
  }, 60_000)

  test("differential: random character soup, every pattern that compiles agrees with picomatch", () => {
    const r = random(99)
    const tokens = [
      ...NAME,
      ...ODD,
      "/",
      "**",
      "\\[",
      "\\{",
      "[[:alpha:]]",
      "[a-c]",
      "[^a]",
      "{a,b}",
      "{,a}",
      "./",
      "]",
    ]
    let compiled = 0
    const differences: string[] = []
    for (let n = 0; n < 3000; n++) {
      let pattern = ""
      for (let i = 1 + r.int(8); i > 0; i--) pattern += r.pick(tokens)
      if (deviation(pattern)) continue
      let g: SecurityGlob.Glob
      try {
        g = glob(pattern)
      } catch {
        continue
      }
      compiled++
      const re = pico(pattern)
      for (let i = 0; i < 20; i++) {
        let input = ""
        for (let j = 1 + r.int(5); j > 0; j--) input += r.pick([...NAME, ...ODD, "/"])
        if (i % 2) input = pattern.replace(/\*\*|[*?[\]{},\\^]/g, () => r.pick(["", "a", "/", "b", "[", "]"]))
        if (!normalised(input, pattern)) continue
        if (SecurityGlob.test(g, input) !== re.test(input)) differences.push(`${pattern} ${JSON.stringify(input)}`)
      }
    }
    expect(differences.slice(0, 10)).toEqual([])
    expect(compiled).toBeGreaterThan(1000)
  }, 60_000)

  test("case folding is the `i` flag's: Unicode letters, classes, ranges and negated classes", () => {
    const chars = [
      "a",
      "A",
      "σ",
      "ς",
      "Σ",
      "µ",
      "Μ",
      "μ",
      "k",
      "K",
      "K",
      "ſ",
      "s",
      "S",
      "ß",
      "ǅ",
      "Ǆ",
      "ǆ",
      "θ",
      "ϑ",
      "Θ",
      "İ",
      "i",
      "ı",
      "é",
      "É",
      "ÿ",
      "Ÿ",
    ]
    const patterns = [
      ...chars,
      ...chars.map((c) => `[${c}]`),
      ...chars.map((c) => `[^${c}]`),
      "[a-z]",
      "[à-þ]",
      "[Α-Ω]",
      "[^a-z]",
    ]
    const differences: string[] = []
    for (const pattern of patterns) {
      const re = pico(pattern, true)
      const g = glob(pattern, { nocase: true })
      for (const c of chars) if (SecurityGlob.test(g, c) !== re.test(c)) differences.push(`${pattern} ${c}`)
    }
    expect(differences).toEqual([])
  })

  test("POSIX classes and negated classes are picomatch's, character by character", () => {
    const names = [
      "alnum",
      "alpha",
      "ascii",
      "blank",
      "cntrl",
      "digit",
      "graph",
      "lower",
      "print",
      "punct",
      "space",
      "upper",
      "word",
      "xdigit",
    ]
    const differences: string[] = []
    for (const name of names)
      for (const pattern of [`[[:${name}:]]`, `[^[:${name}:]]`, `[x[:${name}:]]`])
        for (let c = 0; c < 0x80; c++) {
          const input = String.fromCharCode(c)
          if (c !== 0x2f && !normalised(input, pattern)) continue
          if (matches(pattern, input) !== pico(pattern).test(input)) differences.push(`${pattern} U+${c.toString(16)}`)
        }
    expect(differences).toEqual([])
  })

  test("deviations, all matching more: a root '/**/x' matches '/x', '.*' in braces a trailing '.', line breaks", () => {
    expect(matches("/**/x", "/x")).toBe(true)
    expect(pico("/**/x").test("/x")).toBe(false)
    expect(matches("{a.*,c}", "a.")).toBe(true)
    expect(pico("{a.*,c}").test("a.")).toBe(false)
    // picomatch's '**' (and a leading '*' or POSIX class) is built on '.', which stops at line breaks.
    expect(matches("secrets/**", "secrets/a\nb")).toBe(true)
    expect(pico("secrets/**").test("secrets/a\nb")).toBe(false)
    expect(matches("**/*.key", "a\u2028b/\nx.key")).toBe(true)
    // Elsewhere the same as picomatch.
    for (const [pattern, input] of [
      ["/**/x", "/a/b/x"],
      ["{a.*,c}", "a.b"],
      ["a.*", "a."],
    ])
      expect(matches(pattern, input)).toBe(pico(pattern).test(input))
  })
})

describe("SecurityGlob semantics", () => {
  test("'*' stays in a segment and matches dot files; '**' is any number of whole segments, zero included", () => {
    expect(matches("*.key", ".hidden.key")).toBe(true)
    expect(matches("*.key", "a/b.key")).toBe(false)
    expect(matches("**/.env*", ".env")).toBe(true)
    expect(matches("**/.env*", "a/.b/.env.local")).toBe(true)
    expect(matches("a/**/b", "a/b")).toBe(true)
    expect(matches("a/**/b", "a/x/.y/b")).toBe(true)
    expect(matches("a/**/b", "a/xb")).toBe(false)
    expect(matches("a/**", "a")).toBe(true)
    expect(matches("*/**", "a")).toBe(false) // as in picomatch: after a '*', 'x/**' needs the '/'
    expect(matches("a/**/{,b}", "a")).toBe(true) // picomatch's `(?:/…/|/|$)`
    expect(matches("**", "a/b/c")).toBe(true)
    expect(matches("**/**/**/x", "x")).toBe(true)
  })

  test("classes: ranges, negation (never '/'), POSIX classes, and a plain class also matches its own text", () => {
    expect(matches("[a-c]x", "bx")).toBe(true)
    expect(matches("[^a]", "/")).toBe(false)
    expect(matches("[^a]", "b")).toBe(true)
    expect(matches("[[:digit:][:upper:]]", "Q")).toBe(true)
    expect(matches("[ab]", "[ab]")).toBe(true)
    expect(matches("[a-b]", "[a-b]")).toBe(false)
    expect(matches("[]a]", "]")).toBe(true)
    expect(matches("a[b", "a[b")).toBe(true) // no ']' after it: text
  })

  test("braces: alternatives, nested, empty ones, '/' inside, and '{a}' as text", () => {
    expect(matches("{a,b/c}.md", "b/c.md")).toBe(true)
    expect(matches("x{a,{b,c}}", "xc")).toBe(true)
    expect(matches("x{,y}", "x")).toBe(true)
    expect(matches("{a}", "{a}")).toBe(true)
    expect(matches("{a}", "a")).toBe(false)
  })

  test("testWithParents: the input, any prefix before a '/', and the root of an absolute input", () => {
    const secrets = glob("secrets")
    expect(SecurityGlob.testWithParents(secrets, "secrets/a/b")).toBe(true)
    expect(SecurityGlob.testWithParents(secrets, "a/secrets")).toBe(false)
    expect(SecurityGlob.testWithParents(glob("/{,x}"), "/etc/passwd")).toBe(true) // the root "/" matches
    expect(SecurityGlob.testWithParents(glob("/*"), "/")).toBe(false) // picomatch: '/*' needs a name after '/'
    expect(SecurityGlob.testWithParents(glob("/*"), "/etc")).toBe(true)
    expect(SecurityGlob.testWithParents(glob("a/*"), "a/b/c/d")).toBe(true)
    const r = random(3)
    const next = generator(11)
    for (let n = 0; n < 300; n++) {
      const { pattern, sample } = next()
      let g: SecurityGlob.Glob
      try {
        g = glob(pattern)
      } catch {
        continue
      }
      for (let i = 0; i < 5; i++) {
        const input = mutate(r, sample())
        if (!normalised(input, pattern)) continue
        const prefixes = [input]
        for (let at = input.indexOf("/", 1); at > 0; at = input.indexOf("/", at + 1)) prefixes.push(input.slice(0, at))
        if (input.startsWith("/") && input.length > 1) prefixes.push("/")
        expect(SecurityGlob.testWithParents(g, input)).toBe(prefixes.some((p) => SecurityGlob.test(g, p)))
      }
    }
  })

  test("test(from, to) checks a slice without copying it", () => {
    const g = glob("b*")
    expect(SecurityGlob.test(g, "a/bcd/e", 2, 5)).toBe(true)
    expect(SecurityGlob.test(g, "a/bcd/e", 0, 5)).toBe(false)
  })

  test("a full DFA falls back to stepping the NFA, with the same results", () => {
    const r = random(5)
    const next = generator(13)
    for (let n = 0; n < 200; n++) {
      const { pattern, sample } = next()
      let full: SecurityGlob.Glob
      let tiny: SecurityGlob.Glob
      try {
        full = glob(pattern)
        tiny = glob(pattern, { dfaStates: 3 })
      } catch {
        continue
      }
      for (let i = 0; i < 8; i++) {
        const input = mutate(r, sample())
        expect(SecurityGlob.test(tiny, input)).toBe(SecurityGlob.test(full, input))
        expect(SecurityGlob.testWithParents(tiny, input)).toBe(SecurityGlob.testWithParents(full, input))
      }
    }
  })
})

describe("SecurityGlob: hostile patterns", () => {
  const long = (n: number, salt: number) =>
    Array.from(
      { length: n },
      (_, i) => "ab/"[Math.imul(i + salt, 2654435761) >>> 30 === 3 ? 2 : (i * 7 + salt) % 2],
    ).join("")

  test("many stars, nested braces, repeated '**', long classes, exponential DFAs: correct, and done in one pass", () => {
    const stars = "**/" + "*a".repeat(12) + "*b"
    expect(matches(stars, "a".repeat(32))).toBe(false)
    expect(matches(stars, "a".repeat(12) + "b")).toBe(true)
    expect(matches(stars, "x/" + "ya".repeat(12) + "zb")).toBe(true)
    expect(matches(stars, "a".repeat(11) + "b")).toBe(false)
    const many = "*a".repeat(500) + "*b"
    expect(matches(many, "a".repeat(4095))).toBe(false)
    expect(matches(many, "a".repeat(500) + "b")).toBe(true)
    const nested = "{a,".repeat(30) + "z" + "}".repeat(30)
    expect(matches(nested, "a")).toBe(true)
    expect(matches(nested, "z")).toBe(true)
    expect(matches(nested, "y")).toBe(false)
    const deep = "{x,".repeat(SecurityGlob.MAX_GROUPS) + "y/k/z" + "}".repeat(SecurityGlob.MAX_GROUPS)
    expect(matches(deep, "y/k/z")).toBe(true)
    expect(matches("**/".repeat(300) + "x", "a/b/x")).toBe(true)
    expect(matches("**/".repeat(300) + "x", "a/b/y")).toBe(false)
    const cls = "[" + "abcdefghijklmnopqrstuvwxy".repeat(40) + "]"
    expect(matches(cls, "q")).toBe(true)
    expect(matches(cls, "z")).toBe(false)
    expect(matches(cls, cls)).toBe(true) // picomatch: a plain class also matches its own text
    const exponential = "**/a" + "?".repeat(24)
    expect(matches(exponential, "b/a" + "c".repeat(24))).toBe(true)
    expect(matches(exponential, "b/a" + "c".repeat(23))).toBe(false)
    const groups = "**/" + "*{ab,cd}".repeat(SecurityGlob.MAX_GROUPS)
    expect(matches(groups, "x/" + "ab".repeat(SecurityGlob.MAX_GROUPS))).toBe(true)
    expect(matches(groups, "x/" + "ab".repeat(SecurityGlob.MAX_GROUPS - 1))).toBe(false)
    // Every one against long adversarial inputs, compared with a fresh automaton that keeps no DFA (NFA steps).
    for (const pattern of [stars, many, nested, deep, cls, exponential, groups, "**/" + "[abc][^d]*".repeat(90)]) {
      const g = glob(pattern)
      const nfa = glob(pattern, { dfaStates: 2 })
      for (let salt = 0; salt < 4; salt++) {
        const input = long(4096, salt)
        expect(SecurityGlob.test(g, input)).toBe(SecurityGlob.test(nfa, input))
      }
    }
  }, 60_000)

  test("brace groups are bounded: every one is work on every step", () => {
    expect(() => glob("{ab,c}".repeat(SecurityGlob.MAX_GROUPS))).not.toThrow()
    expect(reason("{ab,c}".repeat(SecurityGlob.MAX_GROUPS + 1))).toContain("brace groups in one pattern")
    // Alternatives of one character each are a class, not a group.
    expect(() => glob("{a,b}".repeat(200))).not.toThrow()
  })
})

describe("SecurityGlob: what picomatch would misread is an error that says what to write", () => {
  const cases: [string, string][] = [
    ["report (1).pdf", "parentheses are not supported"],
    ["@(a|b)", "'@(…)'"],
    ["!(a)", "negat"],
    ["+(a)", "'+(…)'"],
    ["*(a)", "'*(…)'"],
    ["?(a)", "'{x,}'"],
    ["a|b", "'|' is not supported"],
    ['"a b"', "double quotes"],
    ["{1..3}", "'{1,2,3}'"],
    ["{a,b", "unclosed '{'"],
    ["[!a]", "write '[^…]'"],
    ["[]", "unclosed '['"],
    ["[z-a]", "reversed"],
    ["[:alpha:]", "'[[:alpha:]]'"],
    ["[[:punct:]-a]", "put the '-' first or last"],
    ["[[:alfa:]]", "unknown POSIX class"],
    ["[a[b]", "only allowed to start a POSIX class"],
    ["secrets\\**", "write '/'"],
    ["secrets\\*.key", "write '[*]'"],
    ["C:\\Users", "not an escape"],
    ["secrets\\.env", "not an escape"],
    ["a\\\\b", "'[\\\\]'"],
    ["a\\", "ends with a backslash"],
    ["a**", "whole segment"],
    ["**a/b", "whole segment"],
    ["a/***/b", "'***'"],
    ["{a/**,b}", "inside braces"],
    ["[ab]+", "'\\+'"],
    ["c++", "repetition"],
    ["a$$", "anchor"],
    ["a.[[:digit:]]", "'[.]'"],
    ["!secrets", "negat"],
    ["a\tb", "control character"],
  ]
  for (const [pattern, hint] of cases)
    test(`${JSON.stringify(pattern)}: ${hint}`, () => {
      const why = reason(pattern)
      expect(why).not.toBe("compiled")
      expect(why).toContain(hint)
    })

  test("the error names the place in the pattern", () => {
    expect(() => glob("docs/report (1).pdf")).toThrow("(at '(1).pdf')")
  })

  test("what these errors point to instead compiles and matches as meant", () => {
    expect(matches("report \\(1\\).pdf", "report (1).pdf")).toBe(true)
    expect(matches("{a,b}", "b")).toBe(true)
    expect(matches("[^a]x", "bx")).toBe(true)
    expect(matches("[[:alpha:]]", "q")).toBe(true)
    expect(matches("secrets/**", "secrets/a")).toBe(true)
    expect(matches("a[*]", "a*")).toBe(true)
    expect(matches("a[\\\\]b", "a\\b")).toBe(true)
    expect(matches("c\\+\\+", "c++")).toBe(true)
    expect(matches("src/c++/**", "src/c++/x")).toBe(true) // with a '/', picomatch reads '++' as text
    expect(matches("a[.][[:digit:]]", "a.1")).toBe(true)
  })
})
