import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { Serve } from "./serve"
import { targets } from "./targets"

const CLI = path.join(Harness.ROOT, "packages/plugin/cli.ts")

async function cli(project: Harness.Project, args: string[]) {
  const proc = Bun.spawn([process.execPath, CLI, ...args], {
    cwd: project.dir,
    env: project.env,
    stdout: "pipe",
    stderr: "pipe",
  })
  const timer = setTimeout(() => proc.kill("SIGKILL"), 120_000)
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  clearTimeout(timer)
  return { stdout, stderr, code }
}

function strays(dir: string): number[] {
  const out: number[] = []
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (fs.readlinkSync(`/proc/${name}/cwd`) === dir) out.push(Number(name))
    } catch {}
  }
  return out
}

for (const target of targets()) {
  describe(`AD crash recovery on stock opencode ${target.label}`, () => {
    test(
      "AD-3 the user goes on in the crashed session (types a message) instead of /recover: the interrupted call is not left running forever, or the crash stays reported",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("todowrite", {
            todos: [
              { content: "Run the test suite", status: "in_progress", priority: "high" },
              { content: "Fix the failures", status: "pending", priority: "high" },
            ],
          }),
          // The shape of a real long test run (pallets/itsdangerous: tox / pytest), blocked here by sleep.
          ModelServer.call("bash", {
            command: "echo ran >> runs.txt; sleep 60 # python -m pytest tests",
            description: "Run the test suite",
          }),
          ModelServer.text("Looking at it again."),
          ModelServer.text("Done."),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: { ".opencode/opencode-builtins.json": JSON.stringify({ todoContinuation: { enabled: false } }) },
        })
        try {
          let id = ""
          {
            await using first = await Serve.start(project, server)
            id = await first.createSession()
            await first.promptAsync(id, "Run the tests and fix what fails")
            await first.waitFor(async () => (await first.runningTools(id)).includes("bash"), 120_000)
            process.kill(first.pid, "SIGKILL")
          }
          for (const pid of strays(project.dir)) process.kill(pid, "SIGKILL")
          expect(
            JSON.parse((await cli(project, ["recovery", "list", "--json"])).stdout).map((x: any) => x.sessionID),
          ).toEqual([id])

          // The user opens OpenCode again, picks the session from the list and types a message (no /recover).
          await using second = await Serve.start(project, server)
          await second.promptAsync(id, "continue")
          await second.waitFor(async () => server.turns().length >= 3, 120_000)
          await second.waitFor(async () => !(await second.busy(id)), 120_000)
          await Bun.sleep(1_000)
          const running = (await second.messages(id))
            .flatMap((m: any) => m.parts)
            .filter((p: any) => p.type === "tool" && ["running", "pending"].includes(p.state?.status))
            .map((p: any) => `${p.tool}:${p.state.status}`)
          const msgs = server.turns()[2].body.messages as any[]
          const answered = new Set(msgs.filter((m) => m.role === "tool").map((m) => m.tool_call_id))
          const listed = (await cli(project, ["recovery", "list"])).stdout
          // Either the crash's call was closed, or the crash is still reported so the user can close it.
          expect({ running, reported: listed.includes(id) }).toEqual(
            running.length ? { running, reported: true } : { running: [], reported: listed.includes(id) },
          )
        } finally {
          for (const pid of strays(project.dir)) process.kill(pid, "SIGKILL")
          server.stop()
        }
      },
      { timeout: 300_000 },
    )
    test(
      "AD-6 two OpenCodes on one project: A killed mid-bash while B works; B lists A's session, resumes it from B's own session; B's heartbeat and work are untouched",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("bash", { command: "echo a >> runs-a.txt; sleep 60", description: "job A" }),
          ModelServer.call("bash", { command: "echo b >> runs-b.txt; sleep 8", description: "job B" }),
          ModelServer.text("B done."),
          ModelServer.text("Reported."),
          ModelServer.text("Reported again."),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: { ".opencode/opencode-builtins.json": JSON.stringify({ todoContinuation: { enabled: false } }) },
        })
        const folder = path.join(project.dir, ".opencode/builtins-local/recovery")
        try {
          await using b = await Serve.start(project, server)
          let idA = ""
          {
            await using a = await Serve.start(project, server)
            idA = await a.createSession()
            await a.promptAsync(idA, "Run job A")
            await a.waitFor(async () => (await a.runningTools(idA)).includes("bash"), 120_000)
            const idB0 = await b.createSession()
            await b.promptAsync(idB0, "Run job B")
            await b.waitFor(async () => (await b.runningTools(idB0)).includes("bash"), 120_000)
            process.kill(a.pid, "SIGKILL")
            ;(globalThis as any).idB = idB0
          }
          const idB = (globalThis as any).idB as string
          const beatsBefore = fs.readdirSync(folder).filter((f) => f.includes(idB))
          // Through B's server (the TUI's command route), in another session of B.
          const other = await b.createSession()
          const res = await fetch(`${b.url}/session/${other}/command?directory=${encodeURIComponent(project.dir)}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ command: "recover", arguments: `resume ${idA}` }),
          })
          const body = await res.text()
          await b.waitFor(async () => !(await b.busy(idB)), 120_000)
          const partsA = (await b.messages(idA)).flatMap((m: any) => m.parts)
          const statusA = partsA.filter((p: any) => p.type === "tool").map((p: any) => p.state.status)
          const partsB = (await b.messages(idB)).flatMap((m: any) => m.parts)
          const statusB = partsB.filter((p: any) => p.type === "tool").map((p: any) => p.state.status)
          const runs = (x: string) =>
            fs
              .readFileSync(path.join(project.dir, `runs-${x}.txt`), "utf8")
              .split("\n")
              .filter(Boolean).length
          expect({ statusA, statusB, a: runs("a"), b: runs("b"), beatB: beatsBefore.length > 0 }).toEqual({
            statusA: ["error"],
            statusB: ["completed"],
            a: 1,
            b: 1,
            beatB: true,
          })
          expect(fs.readdirSync(folder).filter((f) => f.endsWith(".json"))).toEqual([])
        } finally {
          for (const pid of strays(project.dir)) process.kill(pid, "SIGKILL")
          server.stop()
        }
      },
      { timeout: 300_000 },
    )
  })
}
