import { afterAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

describe("scripted model server", () => {
  const server = ModelServer.start([ModelServer.text("first"), ModelServer.call("read", { filePath: "x" })])
  afterAll(() => server.stop())

  const post = (body: object) =>
    fetch(`${server.url}/chat/completions`, { method: "POST", body: JSON.stringify(body) }).then((r) => r.text())

  test("requests without tools get a title and consume no step", async () => {
    const reply = await post({ messages: [{ role: "user", content: "title?" }], stream: true })
    expect(reply).toContain("Scripted session")
    expect(server.requests[0].agentTurn).toBe(false)
    expect(server.requests[0].step).toBe(-1)
  })

  test("agent turns receive the scenario in order, streamed as SSE, and are recorded verbatim", async () => {
    const tools = [{ type: "function", function: { name: "read", parameters: {} } }]
    const first = await post({ messages: [{ role: "user", content: "marker-123" }], tools, stream: true })
    expect(first).toContain('"content":"first"')
    expect(first.trim().endsWith("data: [DONE]")).toBe(true)
    const second = await post({ messages: [], tools, stream: true })
    expect(second).toContain('"name":"read"')
    expect(second).toContain('"finish_reason":"tool_calls"')
    expect(server.turns().map((r) => r.step)).toEqual([0, 1])
    expect(server.turns()[0].raw).toContain("marker-123")
  })

  test("running past the scenario is answered and counted, not hung", async () => {
    const tools = [{ type: "function", function: { name: "read", parameters: {} } }]
    const reply = await post({ messages: [], tools, stream: true })
    expect(reply).toContain("scenario finished")
    expect(server.overruns).toBe(1)
  })

  test("a body that is not JSON is refused with 400", async () => {
    const res = await fetch(`${server.url}/chat/completions`, { method: "POST", body: "{nope" })
    expect(res.status).toBe(400)
  })
})

/**
 * A stand-in for the binary that answers `--version`, prints one event, leaves a process behind as `mode` says and
 * exits (or never exits): what OpenCode does when an MCP server or shell it started outlives it.
 */
function standIn(dir: string, mode: "in-group" | "own-session" | "hang") {
  const file = path.join(dir, `stand-in-${mode}.sh`)
  const left = {
    "in-group": `sleep 600 & echo $! > ${dir}/left.pid`,
    // Written from inside the new session, and waited for: the process has left the group before the stand-in exits.
    "own-session": `setsid sh -c 'echo $$ > ${dir}/left.pid; exec sleep 600' & while [ ! -s ${dir}/left.pid ]; do sleep 0.05; done`,
    hang: `echo $$ > ${dir}/left.pid; exec sleep 600`,
  }[mode]
  fs.writeFileSync(
    file,
    `#!/bin/sh\nif [ "$1" = "--version" ]; then echo 1.2.15; exit 0; fi\n` +
      `echo '{"part":{"type":"text","text":"ran"}}'\n${left}\nexit 0\n`,
    { mode: 0o755 },
  )
  return file
}

/** Whether `pid` still runs: a zombie (killed, not yet reaped by init) does not. Waits up to 10 s for a kill to land. */
async function alive(pid: number) {
  for (let i = 0; i < 100; i++) {
    const file = `/proc/${pid}/stat`
    const stat = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
    if (!stat || stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false
    await Bun.sleep(100)
  }
  return true
}

describe("Harness.run stops what OpenCode leaves behind", () => {
  const server = ModelServer.start([])
  afterAll(() => server.stop())

  test(
    "a process left in OpenCode's group holding its output is stopped, and the run returns",
    async () => {
      await using project = await Harness.project({ bin: standIn(fs.mkdtempSync("/tmp/ocb-standin-"), "in-group") })
      const dir = path.dirname(project.bin)
      const result = await Harness.run(project, server, "go", { timeoutMs: 120_000 })
      const pid = Number(fs.readFileSync(path.join(dir, "left.pid"), "utf8"))
      expect({
        text: result.text,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        alive: await alive(pid),
      }).toEqual({
        text: "ran",
        exitCode: 0,
        timedOut: false,
        alive: false,
      })
      fs.rmSync(dir, { recursive: true, force: true })
    },
    { timeout: 60_000 },
  )

  test(
    "a process in a session of its own keeps the pipe open: the run returns after the grace period with what was read",
    async () => {
      await using project = await Harness.project({ bin: standIn(fs.mkdtempSync("/tmp/ocb-standin-"), "own-session") })
      const dir = path.dirname(project.bin)
      try {
        const result = await Harness.run(project, server, "go", { timeoutMs: 120_000 })
        expect({ text: result.text, exitCode: result.exitCode, timedOut: result.timedOut }).toEqual({
          text: "ran",
          exitCode: 0,
          timedOut: false,
        })
      } finally {
        const pid = Number(fs.readFileSync(path.join(dir, "left.pid"), "utf8"))
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // Gone already.
        }
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    { timeout: 60_000 },
  )

  test(
    "an OpenCode that never ends is killed at the run's limit and the result says so",
    async () => {
      await using project = await Harness.project({ bin: standIn(fs.mkdtempSync("/tmp/ocb-standin-"), "hang") })
      const dir = path.dirname(project.bin)
      const result = await Harness.run(project, server, "go", { timeoutMs: 3_000 })
      const pid = Number(fs.readFileSync(path.join(dir, "left.pid"), "utf8"))
      expect({ text: result.text, timedOut: result.timedOut, alive: await alive(pid) }).toEqual({
        text: "ran",
        timedOut: true,
        alive: false,
      })
      fs.rmSync(dir, { recursive: true, force: true })
    },
    { timeout: 60_000 },
  )
})

for (const target of targets()) {
  describe(`stock opencode ${target.label}`, () => {
    test(
      "runs headless against the scripted model: built-in tool call, then text",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("read", { filePath: "hello.txt" }),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: { "hello.txt": "greetings from the fixture\n" },
        })
        try {
          const result = await Harness.run(project, server, "read hello.txt")
          expect(result.exitCode).toBe(0)
          expect(result.tools.map((t) => [t.tool, t.status])).toEqual([["read", "completed"]])
          expect(result.text).toContain("done")
          // The second agent turn carries the tool result back to the model.
          expect(server.turns()).toHaveLength(2)
          expect(server.turns()[1].raw).toContain("greetings from the fixture")
          expect(server.overruns).toBe(0)
        } finally {
          server.stop()
        }
      },
      { timeout: 90_000 },
    )
  })
}
