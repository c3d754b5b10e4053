import { describe, expect, test } from "bun:test"
import { Encoding } from "../../util/encoding"

describe("Encoding.read", () => {
  test("UTF-8 as is (its byte-order mark kept); UTF-16 with a byte-order mark decoded, in both byte orders", () => {
    expect(Encoding.read(Buffer.from("\ufeffconst é = 1\n"))).toEqual({ text: "\ufeffconst é = 1\n", utf8: true })
    const le = Buffer.from("\ufeffclass A { }\n", "utf16le")
    expect(Encoding.read(le)).toEqual({ text: "\ufeffclass A { }\n", utf8: false, encoding: "UTF-16LE" })
    const be = Buffer.from(le)
    be.swap16()
    expect(Encoding.read(be)).toEqual({ text: "\ufeffclass A { }\n", utf8: false, encoding: "UTF-16BE" })
  })

  test("other text is read as Latin-1 with the encoding it names; NUL bytes without a UTF-16 mark are binary", () => {
    expect(Encoding.read(Buffer.from([0x4a, 0x6f, 0x73, 0xe9]))).toEqual({ text: "José", utf8: false })
    const sjis = Buffer.concat([
      Buffer.from("# -*- coding: shift_jis -*-\nmsg = '"),
      Buffer.from([0x95, 0x5c]),
      Buffer.from("'\n"),
    ])
    expect(Encoding.read(sjis)?.encoding).toBe("shift_jis")
    expect(Encoding.read(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]))).toBeUndefined()
    // UTF-32LE's mark (FF FE 00 00) is not taken for UTF-16.
    expect(Encoding.read(Buffer.from([0xff, 0xfe, 0, 0, 0x41, 0, 0, 0]))).toBeUndefined()
  })
})

describe("Encoding.declared and advice", () => {
  test("coding lines, XML declarations and @charset name the encoding; the advice uses it or names none", () => {
    expect(Encoding.declared(Buffer.from("#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n"))).toBe("cp1252")
    expect(Encoding.declared(Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?>\n<a/>'))).toBe("ISO-8859-1")
    expect(Encoding.declared(Buffer.from('@charset "windows-1251";\nbody {}'))).toBe("windows-1251")
    // A coding line below the second line is not a declaration (PEP 263).
    expect(Encoding.declared(Buffer.from("a = 1\nb = 2\n# coding: latin-1\n"))).toBeUndefined()
    expect(Encoding.advice("shift_jis")).toContain("iconv -f shift_jis -t UTF-8")
    // Without a declaration no encoding is guessed: "from Latin-1" would garble Shift-JIS text for good.
    expect(Encoding.advice(undefined)).not.toMatch(/-f [A-Z]/i)
  })
})
