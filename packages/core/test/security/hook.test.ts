import { describe, expect, test } from "bun:test"
import { SecurityHook } from "../../security/hook"

const redact = (t: string) => t.replaceAll("SECRET", "[REDACTED: x]")
const msgs = () => [
  { info: { id: "a", role: "user" }, parts: [{ id: "p1", type: "text", text: "SECRET one" }] },
  {
    info: { id: "b", role: "assistant" },
    parts: [{ id: "p2", type: "tool", state: { input: { q: "SECRET" }, output: "SECRET out" } }],
  },
  { info: { id: "c", role: "user" }, parts: [{ id: "p3", type: "text", text: "plain" }] },
]

describe("SecurityHook", () => {
  test("redactDeep touches content, never ids or types", () => {
    const m = msgs()
    expect(SecurityHook.redactDeep(m, redact)).toBe(3)
    expect(JSON.stringify(m)).not.toContain("SECRET")
    const tricky = { id: "SECRET", type: "SECRET", text: "SECRET" }
    SecurityHook.redactDeep(tricky, redact)
    expect(tricky).toEqual({ id: "SECRET", type: "SECRET", text: "[REDACTED: x]" })
  })
  test("data URLs: text payloads redacted and re-encoded; binary ones kept, or replaced whole when their bytes hold something", () => {
    const text = `data:text/plain;base64,${Buffer.from("a SECRET b").toString("base64")}`
    expect(Buffer.from(SecurityHook.redactDataUrl(text, redact).split(",")[1], "base64").toString()).toBe(
      "a [REDACTED: x] b",
    )
    const clean = `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00]).toString("base64")}`
    expect(SecurityHook.redactDataUrl(clean, redact)).toBe(clean)
    // A "PDF" that is a source file with a %PDF- line: its bytes are scanned, and the payload replaced.
    const pdf = `data:application/pdf;base64,${Buffer.from("%PDF-1.4\nconst k = SECRET\n\xff").toString("base64")}`
    const out = SecurityHook.redactDataUrl(pdf, redact)
    expect(out.startsWith("data:application/pdf;base64,")).toBe(true)
    expect(Buffer.from(out.split(",")[1], "base64").toString()).toBe(
      "[REDACTED: a application/pdf attachment holding protected content]",
    )
  })
  test("structural diff: added kept in place, removed dropped, edits discarded, order kept, originals win", async () => {
    const original = msgs()
    const diff = await SecurityHook.guardMessages(original, redact, async (clone) => {
      clone.splice(2, 1) // remove c
      ;(clone[0].parts[0] as any).text = "edited"
      clone.splice(1, 0, { info: { id: "new" }, parts: [{ type: "text", text: "added SECRET" }] } as any)
      clone.reverse()
    })
    expect(diff.messages.map((m) => m.info.id)).toEqual(["a", "b", "new"])
    expect((diff.messages[0].parts[0] as any).text).toBe("SECRET one")
    expect((diff.messages[2].parts[0] as any).text).toBe("added [REDACTED: x]")
    expect(diff).toMatchObject({ added: 1, removed: 1, refused: 0, discarded: 1 })
  })
  test("structural diff counts edits against a snapshot taken before the hooks ran, as against a kept clone", () => {
    const original = msgs()
    const received = structuredClone(original)
    const snapshot = SecurityHook.snapshot(received)
    ;(received[1].parts[0] as any).text = "edited in place"
    const accept = (m: any) => m
    const withSnapshot = SecurityHook.structuralDiff(original, received, accept, snapshot)
    const withClone = SecurityHook.structuralDiff(original, received, accept, structuredClone(original))
    expect(withSnapshot).toMatchObject({ added: 0, removed: 0, discarded: 1 })
    expect(withClone.discarded).toBe(1)
    expect(withSnapshot.messages).toEqual(original)
  })
  test("a hook may return a new array; messages with markers are refused", async () => {
    const diff = await SecurityHook.guardMessages(msgs(), redact, async (clone) => [
      ...clone,
      { info: { id: "x" }, parts: [{ type: "text", text: "[REDACTED: x] smuggled" }] },
    ])
    expect(diff.refused).toBe(1)
    expect(diff.messages.map((m) => m.info.id)).toEqual(["a", "b", "c"])
  })
  test("system prompts: hooks get redacted copies, what they return is scanned again", async () => {
    const out = await SecurityHook.guardSystem(["base SECRET"], redact, async (copy) => {
      expect(copy).toEqual(["base [REDACTED: x]"])
      copy.push("added SECRET")
    })
    expect(out).toEqual(["base [REDACTED: x]", "added [REDACTED: x]"])
  })
})
