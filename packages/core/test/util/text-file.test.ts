import { describe, expect, test } from "bun:test"
import { TextFile } from "../../util/text-file"
import { tmpdir } from "../fixture"

const bytes = (...b: number[]) => new Uint8Array(b)

describe("TextFile: strict UTF-8 for the writers that rewrite a user's file", () => {
  test("UTF-8 is decoded, a leading byte-order mark kept in the text (as readFile(…, 'utf8') keeps it)", async () => {
    await using dir = await tmpdir({ "a.ts": "\uFEFFconst é = '😀'\n" })
    expect(await TextFile.read(dir.file("a.ts"))).toBe("\uFEFFconst é = '😀'\n")
    expect(TextFile.readSync(dir.file("a.ts"))).toBe("\uFEFFconst é = '😀'\n")
  })

  test("Latin-1 is a named error naming the file, the first bad byte, why and what to do", async () => {
    await using dir = await tmpdir({ "l1.py": Buffer.from("# Auteur: José\n", "latin1") })
    const error = await TextFile.read(dir.file("l1.py")).catch((e) => e)
    expect(TextFile.NotUtf8.is(error)).toBe(true)
    expect(error.data).toEqual({ file: dir.file("l1.py"), offset: 13 })
    expect(error.message).toContain(`${dir.file("l1.py")} is not UTF-8 text (byte 13`)
    expect(error.message).toContain("U+FFFD")
    // No encoding is guessed for a file that names none (converting Shift-JIS "from Latin-1" garbles it for good).
    expect(error.message).toContain("iconv -f <its encoding> -t UTF-8")
  })

  test("a file that names its encoding is told to convert from that one", async () => {
    const sjis = Buffer.concat([
      Buffer.from("# -*- coding: shift_jis -*-\nmsg = '"),
      Buffer.from([0x95, 0x5c]),
      Buffer.from("'\n"),
    ])
    await using dir = await tmpdir({ "sjis.py": sjis })
    const error = await TextFile.read(dir.file("sjis.py")).catch((e) => e)
    expect(error.data.encoding).toBe("shift_jis")
    expect(error.message).toContain("iconv -f shift_jis -t UTF-8")
  })

  test("invalidAt finds what TextDecoder's fatal mode refuses: overlong forms, surrogates, truncation", () => {
    const cases: [Uint8Array, number][] = [
      [bytes(0x61, 0x62), -1],
      [bytes(0xc3, 0xa9), -1],
      [bytes(0xf0, 0x9f, 0x98, 0x80), -1],
      [bytes(0x61, 0xe9, 0x62), 1],
      [bytes(0xc0, 0xaf), 0],
      [bytes(0xe0, 0x80, 0xaf), 0],
      [bytes(0xed, 0xa0, 0x80), 0],
      [bytes(0xf4, 0x90, 0x80, 0x80), 0],
      [bytes(0x61, 0xe2, 0x82), 1],
    ]
    for (const [input, at] of cases) {
      expect(TextFile.invalidAt(input)).toBe(at)
      let fatal = false
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(input)
      } catch {
        fatal = true
      }
      expect(fatal).toBe(at >= 0)
    }
  })
})
