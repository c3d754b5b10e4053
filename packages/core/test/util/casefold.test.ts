import { describe, expect, test } from "bun:test"
import { CaseFold } from "../../util/casefold"

// Red team CC7: markers (and case-insensitive paths) were compared in `toLowerCase()` copies whose offsets were used
// on the original; `fold` keeps every offset by construction.
describe("CaseFold.fold", () => {
  test("every code point folds to the same number of code units, its lower case wherever that has that length", () => {
    const bad: string[] = []
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp < 0xe000) continue
      const c = String.fromCodePoint(cp)
      const f = CaseFold.fold("É" + c)
      const lower = c.toLowerCase()
      const want = lower.length === c.length ? lower : c
      if (f !== "é" + want) bad.push(cp.toString(16))
    }
    expect(bad).toEqual([])
  }, 60_000)
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
