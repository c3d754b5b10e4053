import { describe, expect, test } from "bun:test"
import { Terminal } from "../../util/terminal"
import { bunSpawnSync } from "../spawn-sync"

describe("Terminal", () => {
  test("shown: C0, DEL, C1 and bidirectional overrides written as \\uXXXX; line feeds, tabs and CRLF kept", () => {
    expect(Terminal.shown("a\x1b]0;T\x07b\x1b[2K\x7f\x9b2J\u202eevil\u2066\n\tc\r\nd\re\x00")).toBe(
      "a\\u001b]0;T\\u0007b\\u001b[2K\\u007f\\u009b2J\\u202eevil\\u2066\n\tc\r\nd\\u000de\\u0000",
    )
    expect(Terminal.shown("plain text, ünïcödé ✓")).toBe("plain text, ünïcödé ✓")
  })

  test("shown leaves JSON parsing to the same value (C1, DEL and overrides stand raw only inside strings)", () => {
    const value = { output: "x\x1b[31m\x7f\x85\x9b\u202e\u2069\r\n\ty", list: ["\x00", "\u2028"] }
    const json = JSON.stringify(value, null, 2)
    expect(JSON.parse(Terminal.shown(json))).toEqual(value)
    expect(Terminal.shown(json)).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/)
  })

  test("line: line feeds, tabs and carriage returns escaped as well", () => {
    expect(Terminal.line("a\nb\tc\r\nd\x1b")).toBe("a\\u000ab\\u0009c\\u000d\\u000ad\\u001b")
    expect(Terminal.hasControls("a\nb")).toBe(true)
    expect(Terminal.hasControls("a b")).toBe(false)
  })

  test("shellWord: plain words as they are, others in single quotes ('\\''); none for a control character", () => {
    expect(Terminal.shellWord("/repo/src-1.2_x")).toBe("/repo/src-1.2_x")
    expect(Terminal.shellWord("/p/$(sh .x)")).toBe("'/p/$(sh .x)'")
    expect(Terminal.shellWord("it's")).toBe("'it'\\''s'")
    expect(Terminal.shellWord("")).toBe("''")
    expect(Terminal.shellWord("a\nb")).toBeUndefined()
    expect(Terminal.shellWord("a\x1bb")).toBeUndefined()
    for (const word of ["`id`", "$HOME", 'a"b\\c', "x;y|z&", "*?[a]", "it's '$(x)'", "~user", "-n"]) {
      const run = bunSpawnSync(["sh", "-c", `printf %s ${Terminal.shellWord(word)}`])
      expect(run.stdout.toString()).toBe(word)
    }
  })
})
