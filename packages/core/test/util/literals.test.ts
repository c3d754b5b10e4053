import { describe, expect, test } from "bun:test"
import { Literals } from "../../util/literals"

/** Seeded generator: the same cases on every run. */
function rng(seed: number) {
  let s = seed >>> 0
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32
}

/** The longest literal starting at each position, by brute force. */
function expected(text: string, literals: string[], nocase: boolean) {
  const fold = (s: string) => (nocase ? s.replace(/[A-Z]/g, (c) => c.toLowerCase()) : s)
  const hay = fold(text)
  return Array.from(text, (_, i) =>
    Math.max(0, ...literals.filter((l) => l && hay.startsWith(fold(l), i)).map((l) => l.length)),
  )
}

function actual(text: string, literals: string[], nocase: boolean) {
  const re = new RegExp(Literals.source(literals, { nocase })!, nocase ? "iy" : "y")
  return Array.from(text, (_, i) => {
    re.lastIndex = i
    return re.exec(text)?.[0].length ?? 0
  })
}

describe("Literals.source", () => {
  test("prefix tree: shared prefixes folded, the longest literal wins, regex characters escaped", () => {
    expect(Literals.source(["secrets", "secrets-1", ".env"])).toBe("(?:secrets(?:-1)?|\\.env)")
    const re = new RegExp(Literals.source(["a+b", "(x)", "c|d", "[e]", "f/g", "h\\i", "^$.*?{}"])!, "g")
    expect("a+b (x) c|d [e] f/g h\\i ^$.*?{}".match(re)).toEqual(["a+b", "(x)", "c|d", "[e]", "f/g", "h\\i", "^$.*?{}"])
    expect("ab x c d e fg hi".match(re)).toBeNull()
  })

  test("nothing to match: undefined (empty strings are ignored)", () => {
    expect(Literals.source([])).toBeUndefined()
    expect(Literals.source(["", ""])).toBeUndefined()
    expect(Literals.source(["", "x"])).toBe("x")
  })

  test("same matches as a brute-force search: random literal sets and texts, with and without case folding", () => {
    const random = rng(11)
    const alphabet = "aAbB-./_é😀"
    const word = (max: number) =>
      Array.from(
        { length: 1 + Math.floor(random() * max) },
        () => alphabet[Math.floor(random() * alphabet.length)],
      ).join("")
    for (let round = 0; round < 300; round++) {
      const literals = Array.from({ length: 1 + Math.floor(random() * 12) }, () => word(6))
      const text = word(80)
      const nocase = round % 2 === 1
      expect(actual(text, literals, nocase)).toEqual(expected(text, literals, nocase))
    }
  })

  test("a long literal and many literals compile (no deep recursion, no size blow-up)", () => {
    const long = "x".repeat(20_000)
    expect(new RegExp(Literals.source([long, `${long}y`])!).test(`${long}y`)).toBe(true)
    const many = Array.from({ length: 5000 }, (_, i) => `config/private-${i}.json`)
    const source = Literals.source(many)!
    expect(source.length).toBeLessThan(many.join("|").length)
    expect(new RegExp(source).exec("see config/private-4321.json now")?.[0]).toBe("config/private-4321.json")
  })
})
