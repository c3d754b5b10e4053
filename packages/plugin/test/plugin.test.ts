import { describe, expect, test } from "bun:test"
import OpencodeBuiltins from "../index"
import * as mod from "../index"
import { tmpdir } from "../../core/test/fixture"
import { pluginInput as input } from "./input"

describe("the external plugin", () => {
  test("exports only the plugin function (1.2.15 calls every export as a plugin)", () => {
    expect(Object.keys(mod)).toEqual(["default"])
    expect(typeof OpencodeBuiltins).toBe("function")
  })

  test("on stock OpenCode it registers the resource tools and lifecycle hooks", async () => {
    await using dir = await tmpdir()
    const { input: i } = input(dir.path)
    const hooks = await OpencodeBuiltins(i)
    expect(Object.keys(hooks.tool ?? {})).toEqual(
      expect.arrayContaining(["resource-query", "resource-load", "resource-list-loaded", "resource-release"]),
    )
    for (const name of [
      "chat.message",
      "tool.execute.after",
      "event",
      "experimental.chat.messages.transform",
      "experimental.session.compacting",
    ])
      expect(typeof (hooks as any)[name]).toBe("function")
  })

  test("when the host has the feature built in, it registers none of it and says so once", async () => {
    await using dir = await tmpdir()
    const { input: i, logs } = input(dir.path, (feature) => feature === "resource-loader")
    const hooks = await OpencodeBuiltins(i)
    expect(Object.keys(hooks.tool ?? {}).filter((t) => t.startsWith("resource-"))).toEqual([])
    await Bun.sleep(1)
    expect(logs.filter((l) => l.message.includes("built into this OpenCode")).map((l) => l.message)).toEqual([
      expect.stringContaining("resource-loader"),
    ])
  })

  test("a feature can be switched off in the options", async () => {
    await using dir = await tmpdir({
      ".opencode/opencode-builtins.json": JSON.stringify({ resources: { enabled: false } }),
    })
    const hooks = await OpencodeBuiltins(input(dir.path).input)
    expect(Object.keys(hooks.tool ?? {}).filter((t) => t.startsWith("resource-"))).toEqual([])
  })

  test("explicit options (OpenCode 1.18+) reach the feature", async () => {
    await using dir = await tmpdir()
    const hooks = await (OpencodeBuiltins as any)(input(dir.path).input, { resources: { maxResourcesPerSession: 3 } })
    expect(hooks.tool["resource-load"].description).toContain("3 resources")
  })

  test("EF-5: publishes, per directory, the features it built there (options respected) for other plugins on stock", async () => {
    await using on = await tmpdir()
    await using off = await tmpdir({ ".opencode/opencode-builtins.json": JSON.stringify({ ast: { enabled: false } }) })
    const answer = () => (globalThis as any)[Symbol.for("opencode-builtins.provided")]
    const hooks = await OpencodeBuiltins(input(on.path).input)
    await OpencodeBuiltins(input(off.path).input)
    expect(answer().has(on.path, "ast-grep")).toBe(true)
    expect(answer().has(on.path, "resource-loader")).toBe(true)
    expect(answer().has(off.path, "ast-grep")).toBe(false)
    expect(answer().has(off.path, "resource-loader")).toBe(true)
    // Features the host has built in are the host's to answer (`hasBuiltIn`), not published.
    await using forked = await tmpdir()
    await OpencodeBuiltins(input(forked.path, (id) => id === "ast-grep").input)
    expect(answer().has(forked.path, "ast-grep")).toBe(false)
    await hooks.event!({ event: { type: "server.instance.disposed", properties: { directory: on.path } } } as never)
    expect(answer().list(on.path)).toEqual([])
  }, 60_000)
})
