import { describe, expect, test } from "bun:test"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"
import { Serve } from "./serve"

const TODOS = [
  { content: "Write the parser", status: "in_progress", priority: "high" },
  { content: "Document the format", status: "pending", priority: "medium" },
]
const SLOW = "Parser written. Next I will document the format."

/** A proxy in front of the scripted server that holds the stream of the step whose text is `SLOW` for `holdMs`. */
function slowProxy(server: ModelServer.Instance, holdMs: number) {
  const proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const upstream = await fetch(server.url.replace(/\/v1$/, "") + url.pathname, {
        method: req.method,
        headers: { "content-type": "application/json" },
        body: req.method === "POST" ? await req.text() : undefined,
      })
      const text = await upstream.text()
      if (!text.includes("Parser written")) return new Response(text, { headers: upstream.headers })
      const events = text.split("\n\n")
      const stream = new ReadableStream({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode(events.slice(0, 2).join("\n\n") + "\n\n"))
          await Bun.sleep(holdMs)
          controller.enqueue(new TextEncoder().encode(events.slice(2).join("\n\n")))
          controller.close()
        },
      })
      return new Response(stream, { headers: { "content-type": "text/event-stream" } })
    },
  })
  return { ...server, url: `http://127.0.0.1:${proxy.port}/v1`, stop: () => (proxy.stop(true), server.stop()) }
}

const lastUserText = (r: ModelServer.RecordedRequest) => ModelServer.userTexts(r).at(-1) ?? ""

for (const target of targets()) {
  describe(`AD todo continuation on stock opencode ${target.label}`, () => {
    test(
      "AD-2 a message the user sends while the model writes its final text is answered; no continuation is sent after it",
      async () => {
        const scripted = ModelServer.start([
          ModelServer.call("todowrite", { todos: TODOS }),
          ModelServer.text(SLOW),
          ...Array.from({ length: 5 }, (_, i) => ModelServer.text(`Reply ${i}.`)),
        ])
        const server = slowProxy(scripted, 6_000)
        await using project = await Harness.project({ bin: target.bin })
        await using serve = await Serve.start(project, server as ModelServer.Instance)
        try {
          const id = await serve.createSession()
          await serve.promptAsync(id, "Build the parser and document the format")
          // The final text step is streaming (held by the proxy): the user types a new instruction.
          await serve.waitFor(async () => scripted.turns().length >= 2, 120_000)
          await Bun.sleep(1_000)
          await serve.promptAsync(id, "Also add a --verbose flag to the CLI")
          await serve.waitFor(async () => scripted.turns().length >= 3, 60_000)
          await serve.waitFor(async () => (await serve.busy(id)) === false, 90_000)
          const turns = scripted.turns()
          const after = turns.slice(2).map(lastUserText)
          const stored = await serve.messages(id)
          // The request after the interrupted step answers the user's new instruction, which is its last user message.
          expect(after[0]).toContain("Also add a --verbose flag")
          expect(after[0]).not.toContain("[todo continuation")
        } finally {
          server.stop()
        }
      },
      { timeout: 200_000 },
    )
    test(
      "AD-5 Esc while the model streams its final text: no continuation is added or sent; the next message goes to the model alone",
      async () => {
        const scripted = ModelServer.start([
          ModelServer.call("todowrite", { todos: TODOS }),
          ModelServer.text(SLOW),
          ...Array.from({ length: 5 }, (_, i) => ModelServer.text(`Reply ${i}.`)),
        ])
        const server = slowProxy(scripted, 6_000)
        await using project = await Harness.project({ bin: target.bin })
        await using serve = await Serve.start(project, server as ModelServer.Instance)
        try {
          const id = await serve.createSession()
          await serve.promptAsync(id, "Build the parser and document the format")
          await serve.waitFor(async () => scripted.turns().length >= 2, 120_000)
          await Bun.sleep(1_000)
          await serve.abort(id)
          await serve.waitFor(async () => (await serve.busy(id)) === false, 90_000)
          await Bun.sleep(8_000)
          const stored = await serve.messages(id)
          expect(scripted.turns()).toHaveLength(2)
          expect(JSON.stringify(stored)).not.toContain("[todo continuation")
        } finally {
          server.stop()
        }
      },
      { timeout: 200_000 },
    )
    test(
      "AD-7 a permission prompt cancelled by Esc does not switch continuation off for the rest of the session",
      async () => {
        const scripted = ModelServer.start([
          ModelServer.call("todowrite", { todos: TODOS }),
          ModelServer.call("bash", { command: "npm test", description: "Run the tests" }),
          ModelServer.text("Made some progress on the parser."),
          ...Array.from({ length: 5 }, (_, i) => ModelServer.text(`Reply ${i}.`)),
        ])
        await using project = await Harness.project({ bin: target.bin, permission: { "*": "allow", bash: "ask" } })
        await using serve = await Serve.start(project, scripted)
        try {
          const events: string[] = []
          const sse = new AbortController()
          void (async () => {
            const r = await fetch(`${serve.url}/event?directory=${encodeURIComponent(project.dir)}`, {
              signal: sse.signal,
            })
            const dec = new TextDecoder()
            for await (const chunk of r.body as any)
              for (const m of dec.decode(chunk).matchAll(/"type":"((permission|question)\.[a-z]+)"/g)) events.push(m[1])
          })().catch(() => {})
          const id = await serve.createSession()
          await serve.promptAsync(id, "Build the parser and document the format")
          // The bash call waits for the user's permission; the user presses Esc instead of answering.
          await serve.waitFor(async () => scripted.turns().length >= 2, 120_000)
          await Bun.sleep(3_000)
          await serve.abort(id)
          await serve.waitFor(async () => (await serve.busy(id)) === false, 90_000)
          await Bun.sleep(1_000)
          const before = scripted.turns().length
          await serve.promptAsync(id, "Skip the tests for now, go on with the parser")
          await serve.waitFor(async () => scripted.turns().length > before, 60_000)
          await serve.waitFor(async () => (await serve.busy(id)) === false, 90_000)
          const after = scripted.turns().slice(before).map(lastUserText)
          sse.abort()
          // The scenario reached the prompt: OpenCode asked for the permission the user then cancelled.
          expect(events.some((e) => e.startsWith("permission."))).toBe(true)
          // The model stopped with two todos open: the first continuation follows, as in any session.
          expect(after.some((t) => t.includes("[todo continuation 1/3]"))).toBe(true)
        } finally {
          scripted.stop()
        }
      },
      { timeout: 200_000 },
    )
    test(
      "AD-7 control: the same session with bash allowed and Esc during the command continues",
      async () => {
        const scripted = ModelServer.start([
          ModelServer.call("todowrite", { todos: TODOS }),
          ModelServer.call("bash", { command: "sleep 30; npm test", description: "Run the tests" }),
          ModelServer.text("Made some progress on the parser."),
          ...Array.from({ length: 5 }, (_, i) => ModelServer.text(`Reply ${i}.`)),
        ])
        await using project = await Harness.project({ bin: target.bin, permission: { "*": "allow", bash: "allow" } })
        await using serve = await Serve.start(project, scripted)
        try {
          const id = await serve.createSession()
          await serve.promptAsync(id, "Build the parser and document the format")
          // The bash call waits for the user's permission; the user presses Esc instead of answering.
          await serve.waitFor(async () => scripted.turns().length >= 2, 120_000)
          await Bun.sleep(3_000)
          await serve.abort(id)
          await serve.waitFor(async () => (await serve.busy(id)) === false, 90_000)
          await Bun.sleep(1_000)
          const before = scripted.turns().length
          await serve.promptAsync(id, "Skip the tests for now, go on with the parser")
          await serve.waitFor(async () => scripted.turns().length > before, 60_000)
          await serve.waitFor(async () => (await serve.busy(id)) === false, 90_000)
          const after = scripted.turns().slice(before).map(lastUserText)
          // The model stopped with two todos open: the first continuation follows, as in any session.
          expect(after.some((t) => t.includes("[todo continuation 1/3]"))).toBe(true)
        } finally {
          scripted.stop()
        }
      },
      { timeout: 200_000 },
    )
  })
}
