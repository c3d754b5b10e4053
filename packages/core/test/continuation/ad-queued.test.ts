import { expect, test } from "bun:test"
import { ContinuationHooks } from "../../continuation/hooks"
import { TodoContinuation } from "../../continuation/schema"
import type { Host } from "../../host"
import { Logger } from "../../util/log"

/**
 * AD-2 (core): the history OpenCode 1.18.33 / 1.2.15 holds when the user sends a message while the model streams its
 * final text (read from the stock binaries' stored session in test/e2e/rt/ad-continuation.test.ts): the user's new
 * message is stored after the assistant message whose text is completing. OpenCode's loop will answer it; a
 * continuation appended now lands after it and becomes the last instruction the model reads.
 */
test("AD-2 no continuation when the user wrote a new message after the turn whose text completed", async () => {
  const todos = [
    { content: "Write the parser", status: "in_progress", priority: "high" },
    { content: "Document the format", status: "pending", priority: "medium" },
  ]
  const messages = [
    { info: { id: "msg_1", role: "user", agent: "build" }, parts: [{ type: "text", text: "Build the parser and document the format" }] },
    { info: { id: "msg_2", role: "assistant", agent: "build", mode: "build" }, parts: [{ type: "step-start" }, { type: "tool", tool: "todowrite", callID: "c1", state: { status: "completed" } }, { type: "step-finish" }] },
    { info: { id: "msg_3", role: "assistant", agent: "build", mode: "build" }, parts: [{ type: "step-start" }, { type: "text", text: "Parser written. Next I will document the format." }] },
    { info: { id: "msg_4", role: "user", agent: "build" }, parts: [{ type: "text", text: "Also add a --verbose flag to the CLI" }] },
  ]
  const appended: unknown[] = []
  const host: Host = {
    directory: "/r",
    worktree: "/r",
    log: Logger.silent,
    messages: async () => structuredClone(messages) as any,
    sessions: {
      get: async (id) => ({ id }),
      todos: async () => structuredClone(todos) as any,
      agents: async () => [{ name: "build", permission: [{ permission: "*", pattern: "*", action: "allow" }] }],
      append: async (_id, input) => (appended.push(input), "msg_5"),
      updatePart: async () => {},
      archive: async () => {},
    },
  }
  const { hooks } = ContinuationHooks.create({ host, settings: TodoContinuation.DEFAULTS, log: Logger.silent })
  await (hooks as any)["experimental.text.complete"](
    { sessionID: "ses_1", messageID: "msg_3", partID: "prt_x" },
    { text: "Parser written. Next I will document the format." },
  )
  expect(appended).toEqual([])
})
