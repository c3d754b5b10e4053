import { describe, expect, test } from "bun:test"
import { ReadmeHistory } from "../../readme/history"

const FILE = "/r/pkg/README.md"
const LONG = "x".repeat(2000) + "... (line truncated to 2000 chars)"

/** A `read` result as OpenCode stores it: 1.2.15 writes the first line right after `<content>`, 1.18 on its own. */
function read(
  version: "1.2.15" | "1.18",
  lines: string[],
  trailer: string,
  input: Record<string, unknown> = {},
  truncated = false,
): ReadmeHistory.Part {
  const start = Number(input.offset ?? 1) || 1
  const body = lines.map((l, i) => `${i + start}: ${l}`).join("\n")
  const open = version === "1.2.15" ? "<content>" : "<content>\n"
  return {
    type: "tool",
    tool: "read",
    callID: "c",
    state: {
      status: "completed",
      input: { filePath: FILE, ...input },
      output: `<path>${FILE}</path>\n<type>file</type>\n${open}${body}\n\n${trailer}\n</content>`,
      metadata: { preview: lines.join("\n"), truncated, loaded: [] },
      time: {},
    },
  }
}

const session = (part: ReadmeHistory.Part): ReadmeHistory.Message[] => [
  { info: { id: "u", role: "user" }, parts: [{ type: "text" }] },
  { info: { id: "a", role: "assistant" }, parts: [part] },
]

describe("ReadmeHistory: a README the model read counts as in context only when it saw all of it", () => {
  for (const version of ["1.2.15", "1.18"] as const) {
    test(`${version}: whole reads count; a later offset, a limit before the end, OpenCode's cut or a shortened line do not`, () => {
      const end = "(End of file - total 2 lines)"
      const whole = [
        read(version, ["# pkg", "text"], end),
        read(version, ["# pkg", "text"], end, { offset: 1, limit: 10 }),
        read(version, ["# pkg", "text"], end, { offset: "1" }), // 1.2.15 coerces a string
        read(version, ["# pkg", "text"], end, { offset: 0 }), // 1.18 reads from the first line
        read(version, ["# pkg", "a line that ends in ... (line truncated to 9 chars)"], end), // not OpenCode's cut
      ]
      const partial = [
        read(version, ["text"], end, { offset: 2 }),
        read(version, ["# pkg"], "(Showing lines 1-1 of 2. Use offset=2 to continue.)", { limit: 1 }, true),
        read(version, ["# pkg"], "(Output capped at 50 KB. Showing lines 1-1. Use offset=2 to continue.)", {}, true),
        read(version, [LONG, "text"], end),
        read(version, ["# pkg", LONG], end),
      ]
      for (const part of whole) {
        expect(ReadmeHistory.whole(part)).toBe(true)
        expect([...ReadmeHistory.inContext(session(part), "/r")]).toEqual([FILE])
      }
      for (const part of partial) {
        expect(ReadmeHistory.whole(part)).toBe(false)
        expect([...ReadmeHistory.inContext(session(part), "/r")]).toEqual([])
      }
    })
  }

  test("an injected block counts even when cut to its budget (it points at the file for the rest)", () => {
    const part: ReadmeHistory.Part = {
      type: "tool",
      tool: "read",
      state: {
        status: "completed",
        input: { filePath: "/r/pkg/a.ts", offset: 5, limit: 1 },
        output: `…[truncated at ~2000 tokens — read ${FILE} for the rest]`,
        metadata: { truncated: true, [ReadmeHistory.KEY]: [FILE] },
      },
    }
    expect([...ReadmeHistory.inContext(session(part), "/r")]).toEqual([FILE])
  })
})
