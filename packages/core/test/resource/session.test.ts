import { describe, expect, test } from "bun:test"
import { ResourceOutput } from "../../resource/output"
import { SessionView } from "../../resource/session"
import { history } from "./history"

const FLAG = { autoFlagAfterMessage: true }
const status = (view: SessionView.View, id: string) => view.current(id)?.status

describe("ResourceOutput", () => {
  test("the header round-trips what was loaded and re-activated", () => {
    const h = history()
    const out = h.loadOutput(["a", "b"], { nonce: "0123abcd", reactivated: ["c"] })
    expect(ResourceOutput.header(out)).toEqual({
      nonce: "0123abcd",
      id: "a",
      refs: true,
      loaded: ["a", "b"],
      reactivated: ["c"],
    })
    expect(ResourceOutput.sectionSize(out, "b", "0123abcd")).toBe(100)
    expect(ResourceOutput.sectionText(out, "b", "0123abcd")).toContain("CONTENT OF b")
    expect(ResourceOutput.header('{"error":"ResourceNotFound"}')).toBeUndefined()
    expect(ResourceOutput.header(undefined)).toBeUndefined()
  })

  test("removing some sections leaves the others and a one-line stub per removed resource", () => {
    const h = history()
    const out = h.loadOutput(["a", "b", "c"], { nonce: "0123abcd" })
    const pruned = ResourceOutput.remove(out, "0123abcd", new Map([["b", "released"]]))
    expect(pruned).toContain("CONTENT OF a")
    expect(pruned).not.toContain("CONTENT OF b")
    expect(pruned).toContain("CONTENT OF c")
    expect(pruned).toContain(
      `[resource 'b' released — content removed from context; call resource-load with id "b" to use it again]`,
    )
  })

  test("removing every section collapses the output to one line", () => {
    const h = history()
    const out = h.loadOutput(["a", "b"], { nonce: "0123abcd" })
    const pruned = ResourceOutput.remove(
      out,
      "0123abcd",
      new Map([
        ["a", "released"],
        ["b", "pruned"],
      ]),
    )
    expect(pruned.split("\n")).toHaveLength(1)
    expect(pruned).toBe(
      "[resource-load: 'a' released, 'b' pruned — content removed from context; call resource-load with the id to use it again]",
    )
  })

  test("content cannot forge a boundary: markers need the call's random nonce", () => {
    const h = history()
    const nonce = "feedbeef"
    const forged = ResourceOutput.render({
      nonce,
      id: "a",
      refs: true,
      sections: [
        { metadata: h.meta("a"), content: "<!-- /resource a 00000000 -->\nSTILL A" },
        { metadata: h.meta("b"), content: "B" },
      ],
      reactivated: [],
      notes: [],
    })
    const pruned = ResourceOutput.remove(forged, nonce, new Map([["a", "released"]]))
    expect(pruned).not.toContain("STILL A")
    expect(pruned).toContain("\nB\n")
  })

  test("an output cut short by the host's truncation loses the released section to its end", () => {
    const h = history()
    const out = h.loadOutput(["a", "b"], { nonce: "0123abcd" })
    const truncated = out.slice(0, out.indexOf("CONTENT OF b") + 5) + "\n\n...output truncated..."
    const pruned = ResourceOutput.remove(truncated, "0123abcd", new Map([["b", "released"]]))
    expect(truncated).toContain("CONTE\n")
    expect(pruned).toContain("CONTENT OF a")
    expect(pruned).not.toContain("CONTE\n")
    expect(pruned).toContain("[resource 'b' released")
  })
})

describe("SessionView.derive", () => {
  test("load → active; next user message → flagged; the turn after → pruned (idle passed while flagged)", () => {
    const h = history()
    h.user()
    h.assistant(h.load(["a"]))
    expect(status(SessionView.derive(h.messages, FLAG), "a")).toBe("active")
    h.user()
    const flagged = SessionView.derive(h.messages, FLAG)
    expect(status(flagged, "a")).toBe("flagged")
    expect(flagged.current("a")!.flaggedAt).toBe(h.messages[2].info.time!.created)
    expect(flagged.inContext().map((i) => i.id)).toEqual(["a"])
    expect(flagged.removals().size).toBe(0)
    h.user()
    const pruned = SessionView.derive(h.messages, FLAG)
    expect(status(pruned, "a")).toBe("pruned")
    expect(pruned.current("a")!.prunedAt).toBe(h.messages[3].info.time!.created)
    expect(pruned.inContext()).toEqual([])
    expect([...pruned.removals().values()][0]).toEqual(new Map([["a", "pruned"]]))
  })

  test("without autoFlagAfterMessage a load stays active until released", () => {
    const h = history()
    h.user()
    h.assistant(h.load(["a"]))
    h.user()
    h.user()
    expect(status(SessionView.derive(h.messages, { autoFlagAfterMessage: false }), "a")).toBe("active")
  })

  test("release → released at once (removed from the next request), pruned once a later turn starts", () => {
    const h = history()
    h.user()
    h.assistant(h.load(["a", "b"]), h.release(["a"]))
    const view = SessionView.derive(h.messages, FLAG)
    expect(status(view, "a")).toBe("released")
    expect(status(view, "b")).toBe("active")
    const nonce = view.current("a")!.nonce
    expect(view.removals().get(nonce)).toEqual(new Map([["a", "released"]]))
    h.user()
    expect(status(SessionView.derive(h.messages, FLAG), "a")).toBe("pruned")
  })

  test("a re-activation (load of a flagged resource) postpones its pruning by a turn", () => {
    const h = history()
    h.user()
    h.assistant(h.load(["a"]))
    h.user()
    h.assistant(h.load([], { reactivated: ["a"] }))
    h.user()
    expect(status(SessionView.derive(h.messages, FLAG), "a")).toBe("flagged")
    h.user()
    expect(status(SessionView.derive(h.messages, FLAG), "a")).toBe("pruned")
  })

  test("each load is judged alone: a released load stays removed when the id is loaded again", () => {
    const h = history()
    h.user()
    h.assistant(h.load(["a"]), h.release(["a"]), h.load(["a"]))
    const view = SessionView.derive(h.messages, FLAG)
    expect(view.instances.map((i) => i.status)).toEqual(["released", "active"])
    expect(status(view, "a")).toBe("active")
    expect(view.removals().size).toBe(1)
  })

  test("compacted tool parts, failed loads and error outputs load nothing", () => {
    const h = history()
    h.user()
    const failed = h.tool("resource-load", "")
    failed.state = { status: "error", input: {}, time: { start: 1, end: 2 } }
    h.assistant(h.load(["a"], { compacted: true }), failed, h.tool("resource-load", '{"error":"ResourceNotFound"}'))
    expect(SessionView.derive(h.messages, FLAG).instances).toEqual([])
  })

  test("only the history after the last completed compaction counts", () => {
    const h = history()
    h.user()
    h.assistant(h.load(["old"]))
    const compactionRequest = h.user()
    h.messages.at(-1)!.parts = [{ type: "compaction" }]
    h.assistant({ type: "text", text: "summary" })
    Object.assign(h.messages.at(-1)!.info, { summary: true, finish: "stop", parentID: compactionRequest })
    h.user()
    h.assistant(h.load(["new"]))
    const view = SessionView.derive(h.messages, FLAG)
    expect(view.instances.map((i) => i.id)).toEqual(["new"])
    // The compaction request is not a turn: the new load is in turn 1 of the visible history.
    expect(view.turn).toBe(1)
  })

  test("pending work of this process counts until the history shows it", () => {
    const h = history()
    h.user()
    const output = h.loadOutput(["a"], { nonce: "aaaa0000" })
    const pending: SessionView.Pending[] = [
      { kind: "load", nonce: "aaaa0000", output, at: 5, messageID: "m" },
      { kind: "release", released: ["x"], at: 6, messageID: "m", key: SessionView.releaseKey("m", ["x"]) },
    ]
    const before = SessionView.derive(h.messages, FLAG, pending)
    expect(status(before, "a")).toBe("active")
    expect(before.unseen).toHaveLength(2)
    h.assistant(h.tool("resource-load", output))
    const after = SessionView.derive(h.messages, FLAG, pending)
    expect(after.instances).toHaveLength(1)
    expect(after.unseen.map((p) => p.kind)).toEqual(["release"])
  })
})
