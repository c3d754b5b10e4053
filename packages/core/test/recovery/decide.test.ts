import { describe, expect, test } from "bun:test"
import { RecoveryDecide } from "../../recovery/decide"
import { SessionRecovery } from "../../recovery/schema"
import { beat, probe } from "./beat"
import { crashed } from "./sessions"

describe("RecoveryDecide", () => {
  test("interrupted: only heartbeats whose owner is gone, oldest first, with the reason", () => {
    const now = Date.now()
    const dead = beat(
      { sessionID: "ses_b", owner: { ...beat().owner, pid: 11, boot: "boot-1", startTime: "5" } },
      now - 10,
    )
    const older = beat(
      { sessionID: "ses_a", owner: { ...beat().owner, pid: 12, boot: "boot-1", startTime: "5" } },
      now - 20,
    )
    const alive = beat({ sessionID: "ses_c", owner: { ...beat().owner, pid: 13, boot: "boot-1", startTime: "5" } }, now)
    const found = RecoveryDecide.interrupted([dead, alive, older], probe({ 13: { alive: true, startTime: "5" } }), now)
    expect(found.map((f) => [f.beat.sessionID, f.reason])).toEqual([
      ["ses_a", "owner-dead"],
      ["ses_b", "owner-dead"],
    ])
  })

  test("unfinished: the pending and running tool parts, nothing else", () => {
    expect(RecoveryDecide.unfinished(crashed()).map((p) => p.callID)).toEqual(["call_1", "call_2"])
  })

  test("closed: an error result with the input, start time and metadata kept, ended now", () => {
    const [running, pending] = RecoveryDecide.unfinished(crashed())
    expect(RecoveryDecide.closed(running, 50)).toEqual({
      ...running,
      state: {
        status: "error",
        input: { command: "sleep 30" },
        error: SessionRecovery.INTERRUPTED,
        metadata: { output: "" },
        time: { start: 10, end: 50 },
      },
    })
    expect(RecoveryDecide.closed(pending, 50).state).toEqual({
      status: "error",
      input: {},
      error: SessionRecovery.INTERRUPTED,
      time: { start: 50, end: 50 },
    })
  })

  test("todoState: JSON-equal (key order aside) is unchanged; any other difference differs; null is unknown", () => {
    const list = [{ content: "a", status: "pending", priority: "high" }]
    expect(RecoveryDecide.todoState(list, [{ priority: "high", status: "pending", content: "a" }])).toBe("unchanged")
    expect(RecoveryDecide.todoState(list, [{ content: "a", status: "completed", priority: "high" }])).toBe("differs")
    expect(RecoveryDecide.todoState(list, [])).toBe("differs")
    expect(RecoveryDecide.todoState([], [])).toBe("unchanged")
    expect(RecoveryDecide.todoState(null, list)).toBe("unknown")
  })

  test("line: id, title, time, why, what was running and the open todos", () => {
    const b = beat({ title: "Parser work" }, Date.UTC(2026, 10, 23, 12))
    expect(RecoveryDecide.line({ beat: b, reason: "owner-dead" })).toBe(
      'ses_test1 "Parser work" interrupted 2026-11-23T12:00:00.000Z (its OpenCode process is gone) during bash (sleep 30), 1 open todo',
    )
  })

  test("note: what was closed and not re-run, the working directory; the todo list only when it was lost", () => {
    const b = beat({ workdir: "/repo/pkg" })
    const kept = RecoveryDecide.note(b, b.running, "unchanged")
    expect(kept).toContain("NOT re-run: bash (sleep 30)")
    expect(kept).toContain("Working directory: /repo/pkg")
    expect(kept).not.toContain("todo list before")
    expect(RecoveryDecide.note(b, [], "differs")).toContain("- [in_progress] Write the parser (high)")
    expect(RecoveryDecide.note(b, [], "differs")).not.toContain("NOT re-run")
  })

  test("title: the bash command, else a path or pattern; nothing for unknown shapes", () => {
    expect(RecoveryDecide.title("bash", { command: "sleep  30\n", description: "wait" })).toBe("sleep 30")
    expect(RecoveryDecide.title("read", { filePath: "/a/b.ts" })).toBe("/a/b.ts")
    expect(RecoveryDecide.title("x", 3)).toBeUndefined()
  })

  test("title: well-known secret formats in a command are masked before the heartbeat keeps it", () => {
    const token = "ghp_" + "A1b2C3d4".repeat(5)
    const title = RecoveryDecide.title("bash", {
      command: `curl -H "Authorization: token ${token}" https://deploy:hunter2@example.com/x`,
    })
    expect(title).toBe(
      'curl -H "Authorization: token [REDACTED: github-token]" https://deploy:[REDACTED: url-credentials]@example.com/x',
    )
    expect(RecoveryDecide.title("task", { prompt: `use ${token} for the release` })).toBe(
      "use [REDACTED: github-token] for the release",
    )
  })
})
