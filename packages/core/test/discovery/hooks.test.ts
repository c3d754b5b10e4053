import { describe, expect, test } from "bun:test"
import { DynamicDiscovery } from "../../discovery/discover"
import { DiscoveryFormat } from "../../discovery/format"
import { DiscoveryHooks } from "../../discovery/hooks"
import { Logger } from "../../util/log"
import type { Host } from "../../host"
import { md, tmpdir } from "../fixture"
import { guarded } from "../resource/guarded"

const message = { id: "msg_01", sessionID: "ses_01", role: "user" }
const userPart = (text: string, id = "prt_000000000001aaaaaaaaaaaaaa") => ({
  id,
  sessionID: "ses_01",
  messageID: "msg_01",
  type: "text",
  text,
})

async function setup(config: Record<string, unknown> = {}) {
  const dir = await tmpdir({
    "project/.opencode/agent/release-manager.md": md({ description: "Prepares and ships releases" }),
    "home/.claude/skills/release-notes/SKILL.md": md({ name: "release-notes", description: "Drafts release notes" }),
  })
  const engine = DynamicDiscovery.create({
    directory: dir.file("project"),
    env: { HOME: dir.file("home") },
    config,
    resources: async () => [
      {
        id: "ship-release",
        type: "task",
        name: "Ship a release",
        description: "Ship and tag a release",
        tags: ["ship"],
      },
    ],
  })
  return { dir, engine, [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose]() }
}

describe("DiscoveryHooks chat.message", () => {
  test("adds one synthetic text part with the suggestion, after the user's parts", async () => {
    await using s = await setup()
    const hooks = DiscoveryHooks.create(s.engine)
    const output = {
      message,
      parts: [userPart("prepare, tag and ship the release with its release notes")] as DiscoveryHooks.Part[],
    }
    await hooks["chat.message"]({ sessionID: "ses_01" }, output)
    expect(output.parts).toHaveLength(2)
    const added = output.parts[1]
    expect(added).toMatchObject({ type: "text", synthetic: true, sessionID: "ses_01", messageID: "msg_01" })
    expect(added.id! > output.parts[0].id!).toBe(true)
    expect(added.text).toStartWith(DiscoveryFormat.OPEN)
    expect(added.text).toContain("- @release-manager: Prepares and ships releases")
    expect(added.text).toContain("- release-notes: Drafts release notes")
    expect(added.text).toContain("- ship-release: Ship and tag a release")
  })

  test("adds nothing when nothing matches, when disabled, or when the message has no text of the user", async () => {
    await using s = await setup()
    const hooks = DiscoveryHooks.create(s.engine)
    const none = { message, parts: [userPart("what time is it?")] as DiscoveryHooks.Part[] }
    await hooks["chat.message"]({ sessionID: "ses_01" }, none)
    expect(none.parts).toHaveLength(1)
    const onlyFile = { message, parts: [{ id: "prt_1", type: "file", url: "file:///x.png" }] as DiscoveryHooks.Part[] }
    await hooks["chat.message"]({ sessionID: "ses_01" }, onlyFile)
    expect(onlyFile.parts).toHaveLength(1)
    const synthetic = {
      message,
      parts: [{ ...userPart("ship the release"), synthetic: true }] as DiscoveryHooks.Part[],
    }
    await hooks["chat.message"]({ sessionID: "ses_01" }, synthetic)
    expect(synthetic.parts).toHaveLength(1)

    await using off = await setup({ enabled: false })
    const disabled = { message, parts: [userPart("ship the release")] as DiscoveryHooks.Part[] }
    await DiscoveryHooks.create(off.engine)["chat.message"]({ sessionID: "ses_01" }, disabled)
    expect(disabled.parts).toHaveLength(1)
  })

  test("is idempotent: a message that already carries a suggestion gets no second one", async () => {
    await using s = await setup()
    const hooks = DiscoveryHooks.create(s.engine)
    const output = { message, parts: [userPart("ship the release")] as DiscoveryHooks.Part[] }
    await hooks["chat.message"]({ sessionID: "ses_01" }, output)
    await hooks["chat.message"]({ sessionID: "ses_01" }, output)
    expect(output.parts).toHaveLength(2)
  })

  test("leaves out what the host's access check protects, read at call time", async () => {
    await using s = await setup()
    const host: { access?: (p: string, op: "read" | "write" | "llm") => Promise<string | undefined> } = {}
    const hooks = DiscoveryHooks.create(s.engine, { host })
    host.access = async (file) => (file.includes("release-manager") ? "protected" : undefined)
    const output = { message, parts: [userPart("ship the release and write release notes")] as DiscoveryHooks.Part[] }
    await hooks["chat.message"]({ sessionID: "ses_01" }, output)
    expect(output.parts[1].text).not.toContain("release-manager")
    expect(output.parts[1].text).toContain("release-notes")
  })

  test("with the real security layer as host: the stored suggestion names nothing the policy protects", async () => {
    await using s = await setup()
    await using g = await guarded(s.dir.file("project"), [
      { pattern: ".opencode/agent/release-manager.md", type: "file", deniedOperations: ["llm"] },
    ])
    const host: Pick<Host, "access" | "accessVersion"> = {}
    const hooks = DiscoveryHooks.create(s.engine, { host })
    const ask = () => ({
      message,
      parts: [userPart("prepare, tag and ship the release notes")] as DiscoveryHooks.Part[],
    })
    const before = ask()
    await hooks["chat.message"]({ sessionID: "ses_01" }, before)
    expect(before.parts[1].text).toContain("@release-manager")
    Object.assign(host, g.host)
    const after = ask()
    await hooks["chat.message"]({ sessionID: "ses_01" }, after)
    expect(after.parts[1].text).not.toContain("release-manager")
    expect(after.parts[1].text).not.toContain("Prepares and ships releases")
    expect(after.parts[1].text).toContain("- release-notes: Drafts release notes")
  })

  test("never throws: a malformed output is logged", async () => {
    await using s = await setup()
    const log = Logger.memory()
    const hooks = DiscoveryHooks.create(s.engine, { log })
    await hooks["chat.message"]({ sessionID: "ses_01" }, { message, parts: null } as any)
    expect(log.entries.map((e) => e.message)).toEqual(["discovery: chat.message failed"])
  })
})

describe("DiscoveryHooks.partID", () => {
  test("OpenCode's part id format, unique", () => {
    const a = DiscoveryHooks.partID([])
    const b = DiscoveryHooks.partID([])
    expect(a).toMatch(/^prt_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
    expect(a).not.toBe(b)
  })

  test("sorts after every existing id, even one minted in the same millisecond or ahead of this clock", () => {
    const now = (BigInt(Date.now()) * 4096n + 4000n).toString(16).padStart(12, "0")
    const ahead = (BigInt(Date.now() + 60_000) * 4096n).toString(16).padStart(12, "0")
    for (const existing of [`prt_${now}zzzzzzzzzzzzzz`, `prt_${ahead}00000000000000`]) {
      const id = DiscoveryHooks.partID([existing, undefined, "not-an-id"])
      expect(id > existing).toBe(true)
    }
  })

  test("promptText joins the user's text parts and skips synthetic, ignored and non-text parts", () => {
    expect(
      DiscoveryHooks.promptText([
        { type: "text", text: "one" },
        { type: "text", text: "hidden", ignored: true },
        { type: "text", text: "added", synthetic: true },
        { type: "file" },
        { type: "text", text: "two" },
      ]),
    ).toBe("one\ntwo")
  })
})
