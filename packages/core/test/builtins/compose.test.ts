import { describe, expect, test } from "bun:test"
import type { Hooks } from "@opencode-ai/plugin"
import { compose } from "../../builtins/compose"

describe("compose", () => {
  test("inbound hooks run in feature order, outbound ones in reverse (the first feature touches results last)", async () => {
    const calls: string[] = []
    const feature = (name: string): Hooks => ({
      "tool.execute.before": async () => void calls.push(`${name}:before`),
      "chat.message": async () => void calls.push(`${name}:chat`),
      "tool.execute.after": async () => void calls.push(`${name}:after`),
      "experimental.chat.messages.transform": async () => void calls.push(`${name}:transform`),
    })
    const hooks = compose([feature("security"), feature("resources")])
    await hooks["tool.execute.before"]!({ tool: "read", sessionID: "s", callID: "c" }, { args: {} })
    await hooks["chat.message"]!({ sessionID: "s" }, { message: {} as any, parts: [] })
    await hooks["tool.execute.after"]!(
      { tool: "read", sessionID: "s", callID: "c", args: {} },
      { title: "", output: "", metadata: {} },
    )
    await hooks["experimental.chat.messages.transform"]!({}, { messages: [] })
    expect(calls).toEqual([
      "security:before",
      "resources:before",
      "security:chat",
      "resources:chat",
      "resources:after",
      "security:after",
      "resources:transform",
      "security:transform",
    ])
  })

  test("a throw in an inbound hook stops the chain and reaches the host (that is how a tool call is denied)", async () => {
    const later: string[] = []
    const hooks = compose([
      { "tool.execute.before": async () => Promise.reject(new Error("denied")) },
      { "tool.execute.before": async () => void later.push("ran") },
    ])
    await expect(
      hooks["tool.execute.before"]!({ tool: "x", sessionID: "s", callID: "c" }, { args: {} }),
    ).rejects.toThrow("denied")
    expect(later).toEqual([])
  })

  test("tools are merged; the same tool id from two features is a programming error", () => {
    const def = { description: "d", args: {}, execute: async () => "" }
    expect(Object.keys(compose([{ tool: { a: def } }, { tool: { b: def } }]).tool!)).toEqual(["a", "b"])
    expect(() => compose([{ tool: { a: def } }, { tool: { a: def } }])).toThrow("two features register the tool 'a'")
  })

  test("no features, no hooks", () => {
    expect(compose([])).toEqual({})
  })
})
