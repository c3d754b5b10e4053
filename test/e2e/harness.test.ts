import { afterAll, describe, expect, test } from "bun:test"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

describe("scripted model server", () => {
  const server = ModelServer.start([ModelServer.text("first"), ModelServer.call("read", { filePath: "x" })])
  afterAll(() => server.stop())

  const post = (body: object) =>
    fetch(`${server.url}/chat/completions`, { method: "POST", body: JSON.stringify(body) }).then((r) => r.text())

  test("requests without tools get a title and consume no step", async () => {
    const reply = await post({ messages: [{ role: "user", content: "title?" }], stream: true })
    expect(reply).toContain("Scripted session")
    expect(server.requests[0].agentTurn).toBe(false)
    expect(server.requests[0].step).toBe(-1)
  })

  test("agent turns receive the scenario in order, streamed as SSE, and are recorded verbatim", async () => {
    const tools = [{ type: "function", function: { name: "read", parameters: {} } }]
    const first = await post({ messages: [{ role: "user", content: "marker-123" }], tools, stream: true })
    expect(first).toContain('"content":"first"')
    expect(first.trim().endsWith("data: [DONE]")).toBe(true)
    const second = await post({ messages: [], tools, stream: true })
    expect(second).toContain('"name":"read"')
    expect(second).toContain('"finish_reason":"tool_calls"')
    expect(server.turns().map((r) => r.step)).toEqual([0, 1])
    expect(server.turns()[0].raw).toContain("marker-123")
  })

  test("running past the scenario is answered and counted, not hung", async () => {
    const tools = [{ type: "function", function: { name: "read", parameters: {} } }]
    const reply = await post({ messages: [], tools, stream: true })
    expect(reply).toContain("scenario finished")
    expect(server.overruns).toBe(1)
  })

  test("a body that is not JSON is refused with 400", async () => {
    const res = await fetch(`${server.url}/chat/completions`, { method: "POST", body: "{nope" })
    expect(res.status).toBe(400)
  })
})

for (const target of targets()) {
  describe(`stock opencode ${target.label}`, () => {
    test(
      "runs headless against the scripted model: built-in tool call, then text",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("read", { filePath: "hello.txt" }),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: { "hello.txt": "greetings from the fixture\n" },
        })
        try {
          const result = await Harness.run(project, server, "read hello.txt")
          expect(result.exitCode).toBe(0)
          expect(result.tools.map((t) => [t.tool, t.status])).toEqual([["read", "completed"]])
          expect(result.text).toContain("done")
          // The second agent turn carries the tool result back to the model.
          expect(server.turns()).toHaveLength(2)
          expect(server.turns()[1].raw).toContain("greetings from the fixture")
          expect(server.overruns).toBe(0)
        } finally {
          server.stop()
        }
      },
      { timeout: 90_000 },
    )
  })
}
