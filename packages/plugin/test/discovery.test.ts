import { afterEach, beforeEach, describe, expect, test } from "bun:test"
import OpencodeBuiltins from "../index"
import { md, tmpdir } from "../../core/test/fixture"
import { pluginInput as input } from "./input"

const FILES = {
  ".opencode/agent/release-manager.md": md({ description: "Prepares and ships releases" }),
  ".opencode/task/ship-release.md": md({
    title: "Ship a release",
    description: "Cut, tag and publish",
    tags: ["release"],
  }),
}

async function prompt(hooks: any, text: string) {
  const output = {
    message: { id: "msg_1", sessionID: "ses_1", role: "user" },
    parts: [{ id: "prt_000000000001aaaaaaaaaaaaaa", sessionID: "ses_1", messageID: "msg_1", type: "text", text }],
  }
  await hooks["chat.message"]({ sessionID: "ses_1", messageID: "msg_1" }, output)
  return output.parts.slice(1).map((p: any) => p.text as string)
}

describe("the plugin's discovery feature", () => {
  // An empty home, so the machine's own ~/.claude does not leak into the suggestions.
  let home: Awaited<ReturnType<typeof tmpdir>>
  let saved: string | undefined
  beforeEach(async () => {
    home = await tmpdir()
    saved = process.env.HOME
    process.env.HOME = home.path
  })
  afterEach(async () => {
    process.env.HOME = saved
    await home[Symbol.asyncDispose]()
  })

  test("on by default: chat.message adds the suggestion, with project resources by id", async () => {
    await using dir = await tmpdir(FILES)
    const hooks = await OpencodeBuiltins(input(dir.path).input)
    const added = await prompt(hooks, "let's ship the release")
    expect(added).toHaveLength(1)
    expect(added[0]).toContain("- @release-manager: Prepares and ships releases")
    expect(added[0]).toContain("- ship-release: Cut, tag and publish")
    expect(await prompt(hooks, "what time is it?")).toEqual([])
  })

  test("a resource edited through OpenCode is suggested with its new description on the next prompt", async () => {
    await using dir = await tmpdir(FILES)
    const hooks = await OpencodeBuiltins(input(dir.path).input)
    expect((await prompt(hooks, "let's ship the release"))[0]).toContain("- ship-release: Cut, tag and publish")
    const file = dir.file(".opencode/task/ship-release.md")
    await Bun.write(
      file,
      md({ title: "Ship a release", description: "Publish via the release train", tags: ["release"] }),
    )
    // OpenCode reports edits made through its tools as file.edited; the shared resource index re-reads the file.
    await hooks.event!({ event: { type: "file.edited", properties: { file } } as any })
    expect((await prompt(hooks, "let's ship the release"))[0]).toContain(
      "- ship-release: Publish via the release train",
    )
  })

  test('"discovery": { "enabled": false } turns it off', async () => {
    await using dir = await tmpdir({
      ...FILES,
      ".opencode/opencode-builtins.json": JSON.stringify({ discovery: { enabled: false } }),
    })
    const hooks = await OpencodeBuiltins(input(dir.path).input)
    expect(await prompt(hooks, "let's ship the release")).toEqual([])
  })

  test("with the resources feature off, resources are not suggested (resource-load would not exist)", async () => {
    await using dir = await tmpdir({
      ...FILES,
      ".opencode/opencode-builtins.json": JSON.stringify({ resources: { enabled: false } }),
    })
    const added = await prompt(await OpencodeBuiltins(input(dir.path).input), "let's ship the release")
    expect(added[0]).toContain("@release-manager")
    expect(added[0]).not.toContain("ship-release")
  })

  test("when the host has dynamic-discovery built in, the plugin adds nothing and says so", async () => {
    await using dir = await tmpdir(FILES)
    const { input: i, logs } = input(dir.path, (f) => f === "dynamic-discovery")
    const hooks = await OpencodeBuiltins(i)
    expect(await prompt(hooks, "let's ship the release")).toEqual([])
    await Bun.sleep(1)
    expect(
      logs.some((l) => l.message.includes("built into this OpenCode") && l.message.includes("dynamic-discovery")),
    ).toBe(true)
  })

  test("an invalid option is reported and replaced by its default", async () => {
    await using dir = await tmpdir({
      ...FILES,
      ".opencode/opencode-builtins.json": JSON.stringify({ discovery: { scanTimeoutMs: "soon" } }),
    })
    const { input: i, logs } = input(dir.path)
    const hooks = await OpencodeBuiltins(i)
    expect(await prompt(hooks, "let's ship the release")).toHaveLength(1)
    await Bun.sleep(1)
    expect(logs.some((l) => l.level === "error" && l.message.startsWith("discovery.scanTimeoutMs:"))).toBe(true)
  })
})
