import type { Server } from "bun"

/**
 * A scripted OpenAI-compatible chat-completions server for end-to-end tests.
 *
 * Each model request that carries tools (an agent turn) receives the next step of the scenario; requests without
 * tools (OpenCode's title and summary generation) get a short fixed title and consume no step. Every request body is
 * recorded so a test can assert on exactly what the model was sent.
 *
 * @example
 * const server = ModelServer.start([
 *   ModelServer.call("resource-query", { query: "git" }),
 *   ModelServer.text("done"),
 * ])
 * // ... point opencode at server.url ...
 * server.stop()
 */
export namespace ModelServer {
  export type ToolCall = { name: string; args: Record<string, unknown> }
  export type Step =
    | { type: "text"; text: string }
    | { type: "tools"; calls: ToolCall[] }
    /** Decide the reply from the request itself (e.g. echo an id the previous tool returned). */
    | { type: "dynamic"; reply: (request: RecordedRequest) => Step }

  export type RecordedRequest = {
    /** The parsed request body as OpenCode sent it. */
    body: any
    /** The raw request body; what byte-level assertions should search. */
    raw: string
    /** True when the request offered tools, i.e. it was an agent turn and consumed a scenario step. */
    agentTurn: boolean
    /** Index of the scenario step this request consumed, or -1. */
    step: number
  }

  export type Instance = {
    url: string
    port: number
    requests: RecordedRequest[]
    /** Agent-turn requests only, in order. */
    turns(): RecordedRequest[]
    /** Steps requested after the scenario ran out (each got a plain "scenario finished" reply). */
    overruns: number
    /** Append more steps, e.g. for the next prompt of a multi-turn session. */
    push(...steps: Step[]): void
    stop(): void
  }

  export const text = (text: string): Step => ({ type: "text", text })
  export const call = (name: string, args: Record<string, unknown> = {}): Step => ({
    type: "tools",
    calls: [{ name, args }],
  })
  export const calls = (...calls: ToolCall[]): Step => ({ type: "tools", calls })
  export const dynamic = (reply: (request: RecordedRequest) => Step): Step => ({ type: "dynamic", reply })

  const TITLE = "Scripted session"

  /**
   * The text of each user message of a recorded request (OpenAI chat format: a string or text parts, joined by lines).
   *
   * @example
   * ModelServer.userTexts(server.turns()[0]) // ["Please tag and ship…\n<dynamic-context>…"]
   */
  export function userTexts(request: RecordedRequest): string[] {
    return (request.body.messages as any[])
      .filter((m) => m.role === "user")
      .map((m) =>
        typeof m.content === "string"
          ? m.content
          : (m.content as any[])
              .filter((c) => c.type === "text")
              .map((c) => c.text)
              .join("\n"),
      )
  }

  export function start(scenario: Step[] = []): Instance {
    const steps = [...scenario]
    let next = 0
    const instance: Instance = {
      url: "",
      port: 0,
      requests: [],
      overruns: 0,
      turns: () => instance.requests.filter((r) => r.agentTurn),
      push: (...more) => void steps.push(...more),
      stop: () => server.stop(true),
    }
    const server: Server<undefined> = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        const url = new URL(req.url)
        if (req.method === "GET" && url.pathname.endsWith("/models")) {
          return Response.json({ object: "list", data: [{ id: "scripted-model", object: "model" }] })
        }
        if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions")) {
          return new Response("not found", { status: 404 })
        }
        const raw = await req.text()
        let body: any
        try {
          body = JSON.parse(raw)
        } catch {
          return Response.json({ error: { message: "request body is not JSON" } }, { status: 400 })
        }
        const agentTurn = Array.isArray(body.tools) && body.tools.length > 0
        const record: RecordedRequest = { body, raw, agentTurn, step: -1 }
        instance.requests.push(record)
        let step: Step
        if (!agentTurn) step = text(TITLE)
        else if (next < steps.length) {
          record.step = next
          step = steps[next++]
        } else {
          instance.overruns++
          step = text("(scenario finished)")
        }
        while (step.type === "dynamic") step = step.reply(record)
        return stream(step, body.stream !== false)
      },
    })
    instance.port = server.port!
    instance.url = `http://127.0.0.1:${server.port}/v1`
    return instance
  }

  let callCounter = 0

  function stream(step: Exclude<Step, { type: "dynamic" }>, sse: boolean): Response {
    const id = `chatcmpl-${Date.now()}`
    const created = Math.floor(Date.now() / 1000)
    const chunk = (delta: object, finish: string | null) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model: "scripted-model",
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
    const chunks: object[] = [chunk({ role: "assistant", content: "" }, null)]
    let finish = "stop"
    if (step.type === "text") {
      // Split so the client sees a real stream of several deltas.
      for (const piece of step.text.match(/[\s\S]{1,40}/g) ?? [""]) chunks.push(chunk({ content: piece }, null))
    } else {
      finish = "tool_calls"
      step.calls.forEach((c, index) => {
        chunks.push(
          chunk(
            {
              tool_calls: [
                {
                  index,
                  id: `call_${++callCounter}`,
                  type: "function",
                  function: { name: c.name, arguments: JSON.stringify(c.args) },
                },
              ],
            },
            null,
          ),
        )
      })
    }
    chunks.push(chunk({}, finish))
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
    if (!sse) {
      const message =
        step.type === "text"
          ? { role: "assistant", content: step.text }
          : {
              role: "assistant",
              content: null,
              tool_calls: step.calls.map((c) => ({
                id: `call_${++callCounter}`,
                type: "function",
                function: { name: c.name, arguments: JSON.stringify(c.args) },
              })),
            }
      return Response.json({
        id,
        object: "chat.completion",
        created,
        model: "scripted-model",
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      })
    }
    chunks.push({ id, object: "chat.completion.chunk", created, model: "scripted-model", choices: [], usage })
    const body = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n"
    return new Response(body, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    })
  }
}
