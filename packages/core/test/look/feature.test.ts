import { expect, test } from "bun:test"
import type { FeatureContext } from "../../builtins/feature"
import type { Host } from "../../host"
import { LookAtFeature } from "../../look/feature"
import { LookSource } from "../../look/source"
import { LookTool } from "../../look/tool"
import { Logger } from "../../util/log"
import { GIF, PNG } from "./fixtures"

test("the hidden look-at agent joins the configuration only where the host's child call cannot deny tools", async () => {
  for (const childDeniesTools of [false, true]) {
    const host: Host = { directory: "/p", worktree: "/p", log: Logger.silent, child: async () => "", childDeniesTools }
    const context = { host, options: {}, all: {}, log: Logger.silent, native: () => false, expose: () => {} }
    const hooks = await LookAtFeature.init(context as unknown as FeatureContext)
    const cfg: { agent?: Record<string, unknown> } = {}
    await hooks.config?.(cfg as never)
    expect(Boolean(cfg.agent?.[LookTool.AGENT])).toBe(!childDeniesTools)
  }
})

test("past look_at calls' image_data is a short note in every later request; file_path calls and running calls are left alone", async () => {
  const host: Host = {
    directory: "/p",
    worktree: "/p",
    log: Logger.silent,
    child: async () => "",
    childDeniesTools: true,
  }
  const context = { host, options: {}, all: {}, log: Logger.silent, native: () => false, expose: () => {} }
  const hooks = (await LookAtFeature.init(context as unknown as FeatureContext)) as any
  // A 70 KB PNG as a model writes it into its tool call (1.18 stores the call as sent).
  const png = Buffer.concat([PNG, Buffer.alloc(70 * 1024 - PNG.length, 7)])
  const b64 = png.toString("base64")
  const call = (callID: string, status: string, input: Record<string, unknown>) => ({
    type: "tool",
    tool: callID.startsWith("other") ? "read" : LookTool.ID,
    callID,
    state: { status, input, output: status === "completed" ? "A title." : undefined },
  })
  const stored = { image_data: `data:image/png;base64,${b64}`, goal: "read the title" }
  const messages = [
    { info: { id: "m1", sessionID: "s", role: "user" }, parts: [{ type: "text", text: "what does it say?" }] },
    {
      info: { id: "m2", sessionID: "s", role: "assistant" },
      parts: [
        call("done", "completed", stored),
        call("raw", "completed", { image_data: GIF.toString("base64") + "A".repeat(400), goal: "g" }),
        call("failed", "error", { image_data: "%%%".repeat(200), goal: "g" }),
        call("file", "completed", { file_path: "docs/a.png", goal: "g" }),
        call("small", "completed", { image_data: GIF.toString("base64"), goal: "g" }),
        call("running", "running", { image_data: `data:image/png;base64,${b64}`, goal: "g" }),
        call("other", "completed", { image_data: b64 }),
      ],
    },
  ]
  await hooks["experimental.chat.messages.transform"]({}, { messages })
  const inputs = Object.fromEntries(messages[1].parts.map((p: any) => [p.callID, p.state.input]))
  // The same note look_at gives where OpenCode stores its shortened argument (1.2).
  const source = LookSource.data(stored.image_data, { maxBytes: 1 << 24, maxSvgBytes: 1 << 20 })
  expect(inputs.done).toEqual({ image_data: LookSource.note(source.type.mime, source.size), goal: "read the title" })
  expect(inputs.done.image_data).toBe("[image/png, 70 KB: given to look_at, not kept here]")
  expect(inputs.raw.image_data).toMatch(/^\[image\/gif, 0\.3 KB: given to look_at, not kept here\]$/)
  expect(inputs.failed.image_data).toBe("[image_data, 0.4 KB: given to look_at, not kept here]")
  expect(inputs.file).toEqual({ file_path: "docs/a.png", goal: "g" })
  expect(inputs.small.image_data).toBe(GIF.toString("base64"))
  expect(inputs.running.image_data).toContain(b64)
  expect(inputs.other.image_data).toBe(b64)
  // No base64 of a finished look_at call left; the stored input object itself is not edited.
  expect(
    JSON.stringify(
      messages.map((m) => ({
        ...m,
        parts: m.parts.filter((p: any) => p.callID !== "running" && p.callID !== "other"),
      })),
    ),
  ).not.toContain(b64.slice(0, 200))
  expect(stored.image_data).toBe(`data:image/png;base64,${b64}`)
  // A second pass (the next request) changes nothing more.
  const before = JSON.stringify(messages)
  await hooks["experimental.chat.messages.transform"]({}, { messages })
  expect(JSON.stringify(messages)).toBe(before)
})
