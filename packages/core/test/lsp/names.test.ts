import { describe, expect, test } from "bun:test"
import { LspNames } from "../../lsp/names"

// The new name of a rename, checked before any server is asked (the servers write whatever they are given).
describe("LspNames.check", () => {
  test("TypeScript/JavaScript: IdentifierName (Unicode included), not a reserved word", () => {
    for (const ok of ["getRequestPath", "$el", "_x", "ĉapelo", "naïve", "x1", "a\u200cb", "Ωmega", "type", "of"])
      expect([ok, LspNames.check("src/a.ts", ok)]).toEqual([ok, undefined])
    expect(LspNames.check("a.ts", "class")).toBe("it is a reserved word in TypeScript/JavaScript")
    for (const word of ["let", "yield", "await", "enum", "implements", "static", "null", "true"])
      expect(LspNames.check("a.mjs", word)).toBe("it is a reserved word in TypeScript/JavaScript")
    expect(LspNames.check("a.tsx", "merge-path; process.exit(1)")).toBe("it contains a space (a name is one word)")
    expect(LspNames.check("a.ts", "merge-path")).toStartWith('it contains "-", which cannot be part of a name')
    expect(LspNames.check("a.ts", "1x")).toStartWith('it starts with "1", which cannot start a name')
    expect(LspNames.check("a.js", "a.b")).toStartWith('it contains ".", which cannot be part of a name')
    expect(LspNames.check("a.ts", "x\ty")).toBe("it contains white space (U+0009) (a name is one word)")
    expect(LspNames.check("a.ts", "")).toBe("it is empty")
  })

  test("Python: str.isidentifier() and not a keyword (soft keywords are names)", () => {
    for (const ok of ["is_subclass_safe", "_private", "ĉapelo", "match", "case", "type", "_"])
      expect([ok, LspNames.check("a.py", ok)]).toEqual([ok, undefined])
    expect(LspNames.check("a.py", "not valid name")).toBe("it contains a space (a name is one word)")
    for (const word of ["class", "None", "def", "lambda", "async", "await", "nonlocal"])
      expect(LspNames.check("a.pyi", word)).toBe("it is a keyword in Python")
    expect(LspNames.check("a.py", "$x")).toStartWith('it starts with "$", which cannot start a name in Python')
    expect(LspNames.check("a.py", "a-b")).toStartWith('it contains "-"')
    // ZWNJ continues a JavaScript name, not a Python one (str.isidentifier() is False).
    expect(LspNames.check("a.py", "a\u200cb")).toContain("U+200C")
  })

  test("other languages: a conservative check (no white space, quotes, brackets or operators)", () => {
    for (const ok of ["foo_bar", "foo-bar", "Ünïcode", "$var"])
      expect([ok, LspNames.check("main.go", ok)]).toEqual([ok, undefined])
    expect(LspNames.check("main.go", "a b")).toBe("it contains a space (a name is one word)")
    for (const bad of ["a+b", "f()", 'a"b', "a;b", "x.y"])
      expect(LspNames.check("main.rs", bad)).toContain("which cannot be part of a name")
    expect(LspNames.check("main.go", "9lives")).toContain("which cannot start a name")
  })
})
