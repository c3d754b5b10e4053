import { describe, expect, test } from "bun:test"
import { SecurityFingerprint } from "../../security/fingerprint"

const file =
  "first protected line of this file\nsecond protected line of this file\nthird protected line of this file\nTOKEN=8f2c1e9a7b6d5c4e3f2a1b0c\n"
const index = SecurityFingerprint.create()
SecurityFingerprint.add(index, file)

describe("SecurityFingerprint", () => {
  test("a run of three remembered lines is a copy, with numbered gutters and short lines in between", () => {
    const text =
      "intro\n1: first protected line of this file\n}\n2: second protected line of this file\n3: third protected line of this file\nafter"
    const [m] = SecurityFingerprint.find(index, text)
    expect(m.how).toBe("lines")
    expect(text.slice(m.start, m.end)).toStartWith("1: first")
    expect(text.slice(m.end)).toBe("\nafter")
  })
  test("one common remembered line alone is not a copy", () => {
    expect(
      SecurityFingerprint.find(index, "first protected line of this file\nsomething else entirely different"),
    ).toEqual([])
  })
  test("a secret-like token is a copy wherever it appears", () => {
    const text = "curl -H 'x: 8f2c1e9a7b6d5c4e3f2a1b0c'"
    const [m] = SecurityFingerprint.find(index, text)
    expect(text.slice(m.start, m.end)).toBe("8f2c1e9a7b6d5c4e3f2a1b0c")
  })
  test("strict indexes (segments) count a single line", () => {
    const strict = SecurityFingerprint.create({ strict: true })
    SecurityFingerprint.add(strict, "the confidential pricing line")
    expect(SecurityFingerprint.find([strict], "x\n  the confidential pricing line\ny")).toHaveLength(1)
  })
  test("secretLike separates keys from identifiers", () => {
    expect(SecurityFingerprint.secretLike("8f2c1e9a7b6d5c4e3f2a1b0c")).toBe(true)
    expect(SecurityFingerprint.secretLike("handlePaymentProcessing")).toBe(false)
    expect(SecurityFingerprint.secretLike("version2release3")).toBe(false)
  })
  test("decodedBlocks finds base64 (wrapped, URL-safe) and hex that decode to text", () => {
    const b64 = Buffer.from(file).toString("base64")
    const wrapped = b64.match(/.{1,76}/g)!.join("\n")
    const blocks = SecurityFingerprint.decodedBlocks(`a ${wrapped} b ${Buffer.from(file).toString("hex")} c`)
    expect(blocks.map((b) => b.encoding)).toEqual(["base64", "hex"])
    for (const b of blocks) expect(b.decoded).toBe(file)
    expect(SecurityFingerprint.decodedBlocks("getOwnPropertyDescriptorsForAllTheThings and 0123456789abcdef")).toEqual(
      [],
    )
  })

  test("tokens finds every run however it falls against the probed positions, as a per-character search does", () => {
    // Reference: the regex the linear search replaced, then the `=` split and edge trim.
    const reference = (text: string) => {
      const out: { token: string; start: number }[] = []
      for (const m of text.matchAll(/[A-Za-z0-9+/_=.~@%-]{16,}/g)) {
        let offset = 0
        for (const piece of m[0].split("=")) {
          const trimmed = piece.replace(/^[./~@%-]+|[./~@%-]+$/g, "")
          if (trimmed.length >= 16) out.push({ token: trimmed, start: m.index + offset + piece.indexOf(trimmed) })
          offset += piece.length + 1
        }
      }
      return out
    }
    const runs = [
      "Zx81Qp0vLk27mNb5",
      "Zx81Qp0vLk27mNb5Y",
      "Zx81Qp0vLk27mNb",
      "a=Zx81Qp0vLk27mNb5Yt3R==",
      "..~k9Lm2Pq8Rs4Tv6Wx-.",
    ]
    let cases = 0
    for (const run of runs)
      for (let before = 0; before <= 34; before++)
        for (const gap of [" ", "é", "\n", " x ", "😀"]) {
          const text = "ab cd".repeat(8).slice(0, before) + gap + run + gap + run.slice(0, 15) + gap + run
          expect(SecurityFingerprint.tokens(text)).toEqual(reference(text))
          cases++
        }
    expect(cases).toBe(5 * 35 * 5)
    expect(SecurityFingerprint.tokens("Zx81Qp0vLk27mNb5")).toEqual([{ token: "Zx81Qp0vLk27mNb5", start: 0 }])
    expect(SecurityFingerprint.tokens("Zx81Qp0vLk27mNb")).toEqual([])
  })
  test("decodedBlocks finds a block at the start, the end, or alone", () => {
    const hex = Buffer.from(file).toString("hex")
    for (const text of [hex, `${hex} tail`, `head ${hex}`, `x\n${hex}\ny`])
      expect(SecurityFingerprint.decodedBlocks(text).map((b) => b.decoded)).toEqual([file])
  })

  test("lines are compared after the gutter and white space come off, as normaliseLine does, for any gutter or space", () => {
    const lines = [
      "first protected line of this file",
      "second protected line of this file",
      "third protected line of this file",
    ]
    const decorations: ((line: string, n: number) => string)[] = [
      (l, n) => `${n}: ${l}`,
      (l, n) => `  Line ${n}: ${l}  `,
      (l, n) => `${String(n).padStart(5, "0")}| ${l}\r`,
      (l, n) => `${n}:\t${l}`,
      (l, n) => `\u00a0${n}: ${l}\u00a0`, // non-ASCII white space is trimmed too
      (l, n) => `${n}|\u3000${l}`,
      (l) => `\ufeff${l}`,
      (l) => `\u200b${l}`, // a zero-width space is not white space: no longer the remembered line
      (l, n) => `Line ${n}:${l}`,
      (l, n) => `Line x: ${l}`, // not a gutter
      (l, n) => `${n}; ${l}`, // not a gutter
    ]
    let found = 0
    for (const decorate of decorations) {
      const text = lines.map((l, n) => decorate(l, n + 1)).join("\n")
      const remembered = text.split("\n").every((l) => index.lines.has(SecurityFingerprint.normaliseLine(l)))
      expect(SecurityFingerprint.find(index, text).length > 0).toBe(remembered)
      if (remembered) found++
    }
    expect(found).toBe(8)
  })
  test("lines and tokens reversed (rev) count as themselves, with non-ASCII and astral characters", () => {
    const rev = (s: string) => Array.from(s).reverse().join("")
    const lines = file.trim().split("\n")
    const reversed = lines.map(rev).join("\n")
    const found = SecurityFingerprint.find(index, reversed)
    expect(found.map((m) => m.how)).toEqual(["lines", "token"])
    expect(reversed.slice(found[1].start, found[1].end)).toBe(rev("8f2c1e9a7b6d5c4e3f2a1b0c"))
    // Two reversed lines and one forward line make a run too.
    expect(SecurityFingerprint.find(index, [rev(lines[0]), lines[1], rev(lines[2])].join("\n"))[0].how).toBe("lines")
    const astral = SecurityFingerprint.create({ strict: true })
    SecurityFingerprint.add(astral, "😀 the confidential pricing line é 😀")
    expect(SecurityFingerprint.find([astral], `x\n${rev("😀 the confidential pricing line é 😀")}\ny`)).toHaveLength(1)
    // A reversed ordinary line is not a remembered one.
    expect(SecurityFingerprint.find(index, rev("something else entirely different here"))).toEqual([])
  })
  test("an index built without its shape filters is still consulted line by line, reversed lines too", () => {
    const bare: SecurityFingerprint.Index = { lines: new Set(index.lines), tokens: new Set(index.tokens), bytes: 1 }
    const rev = (s: string) => Array.from(s).reverse().join("")
    expect(SecurityFingerprint.find(bare, file.split("\n").map(rev).join("\n")).map((m) => m.how)).toEqual([
      "lines",
      "token",
    ])
  })
  test("an index built without its shape filter is still consulted line by line", () => {
    const bare: SecurityFingerprint.Index = { lines: new Set(index.lines), tokens: new Set(index.tokens), bytes: 1 }
    expect(SecurityFingerprint.find(bare, file).map((m) => m.how)).toEqual(["lines", "token"])
  })
})
