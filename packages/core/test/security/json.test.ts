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

describe("SecuritySchema", () => {
  test("the JSON Schema is generated from the zod schema and forbids unknown properties", () => {
    const json = SecuritySchema.json() as any
    expect(json.additionalProperties).toBe(false)
    expect(json.properties.rules.items.properties.deniedOperations.items.enum).toEqual(["read", "write", "llm"])
    expect(json.required).toEqual(["version"])
  })
})
