import { describe, expect, test } from "bun:test"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"
import { Serve } from "./serve"

const TODOS = [
  { content: "Write the parser", status: "in_progress", priority: "high" },
  { content: "Document the format", status: "pending", priority: "medium" },
  { content: "Set up the project", status: "completed", priority: "low" },
]
const TIMEOUT = { timeout: 150_000 }
const marker = (k: number, n: number) => `[todo continuation ${k}/${n}]`

/** The text of the last user message of a recorded request (string or parts). */
function lastUser(request: ModelServer.RecordedRequest): string {
  const users = (request.body.messages as any[]).filter((m) => m.role === "user")
  const content = users.at(-1)?.content
  return typeof content === "string" ? content : (content ?? []).map((p: any) => p.text ?? "").join("\n")
}

for (const target of targets()) {
  describe(`todo continuation on stock opencode ${target.label}`, () => {
    test(
      "opencode run: a model that never updates its todos gets exactly 3 continuations, then the run ends",
      async () => {
        // More replies than needed: the model would go on as long as it is asked.
        const server = ModelServer.start([
          ModelServer.call("todowrite", { todos: TODOS }),
          ...Array.from({ length: 8 }, (_, i) => ModelServer.text(`Made some progress (${i}).`)),
        ])
        await using project = await Harness.project({ bin: target.bin })
        try {
          const result = await Harness.run(project, server, "Build the parser", { timeoutMs: 120_000 })
          expect(result.exitCode).toBe(0)
          const turns = server.turns()
          // The todowrite step, the reply that ended the turn, then exactly 3 continuation requests.
          expect(turns).toHaveLength(5)
          expect(lastUser(turns[1])).toContain("Build the parser")
          for (const k of [1, 2, 3]) {
            const text = lastUser(turns[1 + k])
            expect(text).toContain(marker(k, 3))
            expect(text).toContain("- [in_progress] Write the parser (high)")
            expect(text).toContain("- [pending] Document the format (medium)")
            expect(text).not.toContain("Set up the project")
          }
          // Every continuation is still in the history the model is sent, once each.
          const last = JSON.stringify(turns[4].body.messages)
          for (const k of [1, 2, 3]) expect(last.split(marker(k, 3)).length).toBe(2)
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )

    test(
      "opencode run: todos OpenCode stored with statuses spelled otherwise (in-progress, todo) are continued (red team CE-6)",
      async () => {
        // OpenCode's todowrite accepts any string as a status; before, these todos were neither open nor done.
        const server = ModelServer.start([
          ModelServer.call("todowrite", {
            todos: [
              { content: "Set up the project", status: "completed", priority: "high" },
              { content: "Write the parser", status: "in-progress", priority: "high" },
              { content: "Document the format", status: "todo", priority: "medium" },
            ],
          }),
          ...Array.from({ length: 6 }, (_, i) => ModelServer.text(`Made some progress (${i}).`)),
        ])
        await using project = await Harness.project({ bin: target.bin })
        try {
          const result = await Harness.run(project, server, "Build the parser", { timeoutMs: 120_000 })
          expect(result.exitCode).toBe(0)
          expect(result.tools.filter((t) => t.tool === "todowrite").map((t) => t.status)).toEqual(["completed"])
          const turns = server.turns()
          // The todowrite step, the reply that ended the turn, then the 3 continuations.
          expect(turns).toHaveLength(5)
          expect(lastUser(turns[2])).toContain("- [in-progress] Write the parser (high)")
          expect(lastUser(turns[2])).toContain("- [todo] Document the format (medium)")
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )

    test(
      "server: no continuation after an abort (Esc) while todos are open",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("todowrite", { todos: TODOS }),
          ModelServer.call("bash", { command: "sleep 30", description: "wait" }),
          ...Array.from({ length: 4 }, () => ModelServer.text("Working on it.")),
        ])
        await using project = await Harness.project({ bin: target.bin })
        await using serve = await Serve.start(project, server)
        try {
          const id = await serve.createSession()
          await serve.promptAsync(id, "Build the parser")
          await serve.waitFor(async () => (await serve.runningTools(id)).includes("bash"), 120_000)
          expect(server.turns()).toHaveLength(2)
          await serve.abort(id)
          await serve.waitFor(async () => (await serve.busy(id)) === false, 90_000)
          // Give a continuation every chance to show up: the old enforcer fired ~2 s after the idle event.
          await Bun.sleep(4_000)
          expect(server.turns()).toHaveLength(2)
          expect(await serve.busy(id)).toBe(false)
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )
  })
}
