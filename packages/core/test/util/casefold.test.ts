import { describe, expect, test } from "bun:test"
import { CaseFold } from "../../util/casefold"

// Red team CC7: markers (and case-insensitive paths) were compared in `toLowerCase()` copies whose offsets were used
// on the original; `fold` keeps every offset by construction.
describe("CaseFold.fold", () => {
  test("every code point folds to the same number of code units: the lower case of its upper case, or its lower case, where that has that length", () => {
    const bad: string[] = []
    const astralLower: string[] = []
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp < 0xe000) continue
      const c = String.fromCodePoint(cp)
      const f = CaseFold.fold("É" + c)
      const upper = c.toUpperCase()
      const back = upper.length === c.length ? upper.toLowerCase() : ""
      const lower = c.toLowerCase()
      const want = back.length === c.length ? back : lower.length === c.length ? lower : c
      if (f !== "é" + want) bad.push(cp.toString(16))
      // Lower-case text skips the table unless it holds a lower-case form that folds to another (BMP only).
      if (cp > 0xffff && lower === c && want !== c) astralLower.push(cp.toString(16))
      if (lower === c && CaseFold.fold("é" + c) !== "é" + want) bad.push(`lower ${cp.toString(16)}`)
    }
    expect(bad).toEqual([])
    expect(astralLower).toEqual([])
  }, 120_000)
  test("DD-F1 the forms a letter takes in lower case meet: final sigma, long s, Greek symbol forms, the Kelvin sign", () => {
    expect(CaseFold.fold("ΤΈΛΟΣ τέλος τέλοσ")).toBe("τέλοσ τέλοσ τέλοσ")
    expect(CaseFold.fold("@απόρρητος-start")).toBe("@απόρρητοσ-start")
    expect(CaseFold.fold("ſecret ϐ ϑ ϕ \u212a µ")).toBe("secret β θ φ k μ")
    // Lengths kept where the full folding would change them: ß stays, İ stays.
    expect(CaseFold.fold("ß ẞ İ")).toBe("ß ß İ")
  })
  test("mixed text keeps its length and each offset: İ, ß, ﬁ, NFD, astral capitals, lone surrogates", () => {
    const text = "İİ ẞ ß ﬁ Fİ e\u0301 É 𐐀𐐨 😀 \ud800x \udc00 ΣΑΣ ABC @SECURE-START"
    const f = CaseFold.fold(text)
    expect(f.length).toBe(text.length)
    expect(f).toBe("İİ ß ß ﬁ fİ e\u0301 é 𐐨𐐨 😀 \ud800x \udc00 σασ abc @secure-start")
    expect(f.indexOf("@secure-start")).toBe(text.indexOf("@SECURE-START"))
    // The quick answers: ASCII, and text with nothing to lower.
    expect(CaseFold.fold("AbC")).toBe("abc")
    expect(CaseFold.fold("漢字 ü")).toBe("漢字 ü")
  })
})
