import { expect, test } from "bun:test"
import { pluginSessions } from "../sessions"

/** The SDK client's answer shape (`{ data, error, response }`), as stock OpenCode's client resolves it. */
const client = (answer: { data?: unknown; error?: unknown; response?: { status: number } }) =>
  ({ session: { get: async () => answer } }) as any

test("get: undefined only when OpenCode says the session does not exist; it rejects when OpenCode cannot tell (X14)", async () => {
  const found = pluginSessions(client({ data: { id: "ses_1" }, response: { status: 200 } }))
  expect(await found.get("ses_1")).toEqual({ id: "ses_1" })
  // Stock 1.2.15 / 1.18.33 for a deleted session.
  const deleted = { name: "NotFoundError", data: { message: "Session not found: ses_1" } }
  expect(await pluginSessions(client({ error: deleted, response: { status: 404 } })).get("ses_1")).toBeUndefined()
  // A 404 of another kind, a server error, no answer: crash recovery must not take the session for deleted.
  await expect(pluginSessions(client({ error: "Not Found", response: { status: 404 } })).get("ses_1")).rejects.toThrow()
  await expect(
    pluginSessions(client({ error: { name: "UnknownError" }, response: { status: 500 } })).get("ses_1"),
  ).rejects.toThrow()
  await expect(pluginSessions(client({ error: new Error("fetch failed") })).get("ses_1")).rejects.toThrow(
    "fetch failed",
  )
})
