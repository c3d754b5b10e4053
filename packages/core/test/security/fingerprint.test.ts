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
})
