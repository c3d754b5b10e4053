import { describe, expect, test } from "bun:test"
import { SecurityJson } from "../../security/json"
import { SecuritySchema } from "../../security/schema"

describe("SecurityJson", () => {
  const error = (text: string) => {
    const r = SecurityJson.parse(text)
    return "error" in r ? r.error : "ok"
  }
  test("valid JSON parses", () =>
    expect(SecurityJson.parse('{"a":[1,true,null,"x"]}')).toEqual({ value: { a: [1, true, null, "x"] } }))
  test("errors say where and what", () => {
    expect(error('{"a": 1,}')).toBe("line 1, column 9: expected a string key, found '}'")
    expect(error('{\n "a": "b\n"}')).toContain("line 2, column 9: control character inside a string")
    expect(error('{"a": 1} x')).toContain("after the end of the document")
    expect(error('{"a": [1, 2')).toContain("the end of the file (is it truncated?)")
    expect(error('{"a": tru}')).toContain("expected a value")
  })
})

describe("SecurityJson: keys JSON.parse would accept silently", () => {
  const parse = (text: string) =>
    SecurityJson.parse(text) as { error?: string; offset?: number; pointer?: string; value?: unknown }
  test("a key twice in one object is an error with both places and the object's pointer", () => {
    const text = '{\n  "version": "1.0",\n  "rules": [{ "pattern": "secrets/**" }],\n  "rules": []\n}'
    expect(parse(text)).toEqual({
      error:
        'line 4, column 3: duplicate key "rules" (first at line 3, column 3); JSON.parse would keep only the last one',
      offset: text.lastIndexOf('"rules"'),
      pointer: "",
    })
    expect(parse('{"rules": [{"type": "file", "type": "directory"}]}').pointer).toBe("/rules/0")
    expect(parse('{"a/b~c": {"x": 1, "x": 2}}').pointer).toBe("/a~1b~0c")
  })
  test("keys are compared as JSON.parse reads them (escapes decoded)", () => {
    expect(parse('{"rules": [], "rul\\u0065s": []}').error).toContain('duplicate key "rules"')
    expect(parse('{"a\\"b": 1, "a\\"b": 2}').error).toContain('duplicate key "a\\"b"')
  })
  test("equal keys in different objects, and strings that look like keys, are fine", () => {
    expect(parse('{"a": [{"k": 1}, {"k": 2}], "k": {"k": "k\\",\\"k\\":"}}').value).toEqual({
      a: [{ k: 1 }, { k: 2 }],
      k: { k: 'k","k":' },
    })
  })
  test("many keys in one object: still found (a map past a few keys)", () => {
    const keys = Array.from({ length: 500 }, (_, i) => `"s${i}": 1`)
    expect("value" in SecurityJson.parse(`{${keys.join(",")}}`)).toBe(true)
    expect(parse(`{${keys.join(",")}, "s250": 2}`).error).toContain('duplicate key "s250"')
  })
  test("__proto__ is refused wherever it appears", () => {
    expect(parse('{"mcp": {"servers": {"__proto__": "trusted"}}}')).toMatchObject({
      error: 'line 1, column 22: the key "__proto__" is not allowed in a policy',
      pointer: "/mcp/servers",
    })
  })
  test("invisible characters and unusual spaces are named in errors", () => {
    expect(parse('\ufeff{"a": 1}').error).toContain("U+FEFF (a byte order mark)")
    expect(parse('{\u00a0"a": 1}').error).toContain("U+00A0 (a space JSON does not allow)")
    expect(parse('{"a": 1}\u200b').error).toContain("U+200B")
  })
  test("a policy of 1 MB is checked in one pass", () => {
    const rules = Array.from({ length: 12_000 }, (_, i) => ({ pattern: `secrets-${i}/**`, type: "directory" }))
    const text = JSON.stringify({ version: "1.0", rules }, null, 2)
    expect(text.length).toBeGreaterThan(900_000)
    expect("value" in SecurityJson.parse(text)).toBe(true)
    expect(SecurityJson.parse(text.replace('"version"', '"rules": [], "version"'))).toMatchObject({ pointer: "" })
  }, 60_000)
})

describe("SecuritySchema", () => {
  test("the JSON Schema is generated from the zod schema and forbids unknown properties", () => {
    const json = SecuritySchema.json() as any
    expect(json.additionalProperties).toBe(false)
    expect(json.properties.rules.items.properties.deniedOperations.items.enum).toEqual(["read", "write", "llm"])
    expect(json.required).toEqual(["version"])
  })
})
