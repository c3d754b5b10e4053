import { expect, test } from "bun:test"
import { ContinuationHistory } from "../../continuation/history"
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
test("AD-2 no continuation (reason user-waiting) when the user wrote a new message after the turn whose text completed", async () => {
  const todos = [
    { content: "Write the parser", status: "in_progress", priority: "high" },
    { content: "Document the format", status: "pending", priority: "medium" },
  ]
  const messages = [
    {
      info: { id: "msg_1", role: "user", agent: "build" },
      parts: [{ type: "text", text: "Build the parser and document the format" }],
    },
    {
      info: { id: "msg_2", role: "assistant", agent: "build", mode: "build" },
      parts: [
        { type: "step-start" },
        { type: "tool", tool: "todowrite", callID: "c1", state: { status: "completed" } },
        { type: "step-finish" },
      ],
    },
    {
      info: { id: "msg_3", role: "assistant", agent: "build", mode: "build" },
      parts: [{ type: "step-start" }, { type: "text", text: "Parser written. Next I will document the format." }],
    },
    {
      info: { id: "msg_4", role: "user", agent: "build" },
      parts: [{ type: "text", text: "Also add a --verbose flag to the CLI" }],
    },
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
  const instance = ContinuationHooks.create({ host, settings: TodoContinuation.DEFAULTS, log: Logger.silent })
  await (instance.hooks as any)["experimental.text.complete"](
    { sessionID: "ses_1", messageID: "msg_3", partID: "prt_x" },
    { text: "Parser written. Next I will document the format." },
  )
  expect(appended).toEqual([])
  expect(instance.decisions.at(-1)?.decision).toEqual({ continue: false, reason: "user-waiting" })
})

const A = (id: string, text: string): ContinuationHistory.Message => ({
  info: { id, role: "assistant", agent: "build" },
  parts: [{ type: "step-start" }, { type: "text", text }],
})
const U = (id: string, text: string): ContinuationHistory.Message => ({
  info: { id, role: "user", agent: "build" },
  parts: [{ type: "text", text }],
})
const C = (id: string, after: string): ContinuationHistory.Message => ({
  info: { id, role: "user", agent: "build" },
  parts: [
    {
      type: "text",
      text: "[todo continuation 1/3] …",
      synthetic: true,
      metadata: { [TodoContinuation.MARK]: { index: 1, of: 3, after, counts: { open: 2, completed: 0, total: 2 } } },
    },
  ],
})

test("AD-2 a continuation stored after a newer user message (written before the hook saw it) is not sent to the model", () => {
  // The order the e2e scenario stored on 1.18.33 and 1.2.15 before the fix: the user's message, then the continuation.
  const stored = [
    U("msg_1", "Build it"),
    A("msg_3", "Parser written."),
    U("msg_4", "Also add --verbose"),
    C("msg_5", "msg_3"),
  ]
  expect([...ContinuationHistory.dropped(stored)]).toEqual(["msg_5"])
  // The other race: the continuation was appended first, the user's message is stored after it.
  const racing = [
    U("msg_1", "Build it"),
    A("msg_3", "Parser written."),
    C("msg_4", "msg_3"),
    U("msg_5", "Also add --verbose"),
  ]
  expect([...ContinuationHistory.dropped(racing)]).toEqual(["msg_4"])
  // Control: no user message in between, the continuation is sent.
  const plain = [U("msg_1", "Build it"), A("msg_3", "Parser written."), C("msg_4", "msg_3")]
  expect([...ContinuationHistory.dropped(plain)]).toEqual([])
})

test("AD-2 userAfter: a real user message newer than the turn, by position or (turn not stored yet) by id", () => {
  const stored = [U("msg_1", "Build it"), A("msg_3", "Parser written."), U("msg_4", "Also add --verbose")]
  expect(ContinuationHistory.userAfter(stored, "msg_3")).toBe(true)
  expect(ContinuationHistory.userAfter(stored.slice(0, 2), "msg_3")).toBe(false)
  expect(ContinuationHistory.userAfter([U("msg_1", "Build it"), U("msg_4", "more")], "msg_3")).toBe(true)
  // Continuations and synthetic messages are not the user's.
  expect(ContinuationHistory.userAfter([...stored.slice(0, 2), C("msg_4", "msg_3")], "msg_3")).toBe(false)
})
