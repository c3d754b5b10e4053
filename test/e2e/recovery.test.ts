import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { Serve } from "./serve"
import { targets } from "./targets"

const TODOS = [
  { content: "Write the parser", status: "in_progress", priority: "high" },
  { content: "Document the format", status: "pending", priority: "medium" },
  { content: "Set up the project", status: "completed", priority: "low" },
]
/** The side effect the model's long bash call has before it blocks: one line per run. */
const BASH = (name: string) => `echo ran >> ${name}; sleep 30`
const TIMEOUT = { timeout: 300_000 }
const CLI = path.join(Harness.ROOT, "packages/plugin/cli.ts")
const HEARTBEATS = ".opencode/builtins-local/recovery"

/** `opencode-builtins …` as a user runs it, in the project, with the project's isolated home. */
async function cli(project: Harness.Project, args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, CLI, ...args], {
    cwd: project.dir,
    env: { ...project.env, ...env },
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

/** OpenCode's log files of the project's isolated home (where the plugin's log lines go). */
function logs(project: Harness.Project): string {
  const dir = path.join(project.env.XDG_DATA_HOME, "opencode/log")
  if (!fs.existsSync(dir)) return ""
  return fs
    .readdirSync(dir)
    .map((f) => fs.readFileSync(path.join(dir, f), "utf8"))
    .join("\n")
}

/** Processes whose working directory is the project: the bash calls a killed OpenCode left behind. */
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

function lines(file: string): number {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0
}

/** Every tool call of an assistant message in a chat-completions request has a result message (what APIs demand). */
function unanswered(messages: any[]): string[] {
  const answered = new Set(messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id))
  return messages.flatMap((m) => (m.tool_calls ?? []).map((c: any) => c.id)).filter((id: string) => !answered.has(id))
}

for (const target of targets()) {
  describe(`crash recovery on stock opencode ${target.label}`, () => {
    test(
      "kill -9 mid-bash: the next start reports the sessions; resume closes the call (not re-run), todos and directory kept, the next request succeeds; dismiss archives; a clean run reports nothing",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("todowrite", { todos: TODOS }),
          ModelServer.call("bash", { command: BASH("runs-a.txt"), description: "long job A" }),
          ModelServer.call("bash", { command: BASH("runs-b.txt"), description: "long job B" }),
          ModelServer.text("The job was interrupted; I will check runs-a.txt before running it again."),
        ])
        // Todo continuation is switched off so every model request in this scenario is one the test asks for.
        await using project = await Harness.project({
          bin: target.bin,
          files: { ".opencode/opencode-builtins.json": JSON.stringify({ todoContinuation: { enabled: false } }) },
        })
        const folder = path.join(project.dir, HEARTBEATS)
        try {
          // 1. Two sessions busy in a long bash call, then OpenCode is killed with SIGKILL.
          let a: string
          let b: string
          {
            await using first = await Serve.start(project, server)
            a = await first.createSession()
            await first.promptAsync(a, "Build the parser")
            await first.waitFor(async () => (await first.runningTools(a)).includes("bash"), 60_000)
            b = await first.createSession()
            await first.promptAsync(b, "Run job B")
            await first.waitFor(async () => (await first.runningTools(b)).includes("bash"), 60_000)
            await first.waitFor(async () => lines(path.join(project.dir, "runs-b.txt")) === 1, 10_000)
            const beat = JSON.parse(fs.readFileSync(path.join(folder, `${a}.json`), "utf8"))
            expect(beat.todos).toEqual(TODOS)
            expect(beat.running.map((r: any) => r.title)).toEqual([BASH("runs-a.txt")])
            expect(beat.owner.pid).toBe(first.pid)
            // Owned by a live process: not reported.
            const live = await cli(project, ["recovery", "list", "--json"])
            expect(live.code).toBe(0)
            expect(JSON.parse(live.stdout)).toEqual([])
            process.kill(first.pid, "SIGKILL")
          }
          for (const pid of strays(project.dir)) process.kill(pid, "SIGKILL")
          expect(lines(path.join(project.dir, "runs-a.txt"))).toBe(1)
          // .gitignore got the local state folder once.
          expect(fs.readFileSync(path.join(project.dir, ".gitignore"), "utf8").match(/builtins-local/g)).toHaveLength(1)

          // 2. The next start reports both sessions (log line at plugin start; the CLI lists them).
          const listed = await cli(project, ["recovery", "list", "--json"])
          expect(
            JSON.parse(listed.stdout)
              .map((x: any) => [x.sessionID, x.reason])
              .sort(),
          ).toEqual(
            [
              [a, "owner-dead"],
              [b, "owner-dead"],
            ].sort(),
          )
          const spawned = performance.now()
          await using second = await Serve.start(project, server)
          const listening = performance.now()
          // The instance (and the plugin) starts with the first request for the project.
          const request = performance.now()
          await fetch(`${second.url}/session?directory=${encodeURIComponent(project.dir)}`)
          await second.waitFor(async () => logs(project).includes(`interrupted session: ${a}`), 30_000)
          const reported = performance.now()
          expect(logs(project)).toContain(`interrupted session: ${b}`)
          expect(logs(project)).toContain(`opencode-builtins recovery resume ${a}`)
          // The figures the feature logs itself: the scan, and when it reported, from the plugin's load.
          const scan =
            /recovery scan: \d+ heartbeat\(s\), 2 interrupted, ([\d.]+) ms; reported (\d+) ms after the plugin loaded, (\d+) ms after the process started/.exec(
              logs(project),
            )
          expect(scan).not.toBeNull()
          console.log(
            `[recovery ${target.version}] scan ${scan![1]} ms, reported ${scan![2]} ms after the plugin loaded ` +
              `(${scan![3]} ms after the process started); the line was in the log ${Math.round(reported - request)} ms ` +
              `after the first request (server listening ${Math.round(listening - spawned)} ms after spawn)`,
          )
          // Baseline: stock OpenCode leaves the call running in the stored history.
          expect(await second.runningTools(a)).toEqual(["bash"])

          // 3. Resume through the running server.
          const resumed = await cli(project, ["recovery", "resume", a, "--server", second.url, "--json"])
          expect(resumed.stderr).toBe("")
          expect(resumed.code).toBe(0)
          const result = JSON.parse(resumed.stdout)
          expect(result.closed.map((c: any) => c.tool)).toEqual(["bash"])
          expect(result.todos).toBe("unchanged")
          expect(result.workdir).toBe(project.dir)
          expect(fs.existsSync(path.join(folder, `${a}.json`))).toBe(false)
          const parts = (await second.messages(a)).flatMap((m: any) => m.parts)
          const bash = parts.find((p: any) => p.type === "tool" && p.tool === "bash")
          expect(bash.state.status).toBe("error")
          expect(bash.state.error).toContain("was not re-run")
          const todos = await fetch(`${second.url}/session/${a}/todo?directory=${encodeURIComponent(project.dir)}`)
          expect((await todos.json()) as unknown).toEqual(TODOS)

          // The next model request succeeds: every call has its result, the note names the working directory.
          const before = server.turns().length
          await second.promptAsync(a, "What happened?")
          await second.waitFor(async () => server.turns().length > before && !(await second.busy(a)), 60_000)
          const sent = server.turns().at(-1)!.body.messages as any[]
          expect(unanswered(sent)).toEqual([])
          const call = sent.flatMap((m) => m.tool_calls ?? []).find((c: any) => c.function.name === "bash")
          const answer = sent.find((m) => m.role === "tool" && m.tool_call_id === call.id)
          expect(JSON.stringify(answer.content)).toContain("Interrupted: OpenCode stopped")
          expect(JSON.stringify(sent)).toContain(`Working directory: ${project.dir}`)
          const last = (await second.messages(a)).at(-1)
          expect(last.info.role).toBe("assistant")
          expect(last.info.error).toBeUndefined()
          expect(last.parts.map((p: any) => p.text ?? "").join("")).toContain("I will check runs-a.txt")
          // Never re-run: the side effect happened once.
          expect(lines(path.join(project.dir, "runs-a.txt"))).toBe(1)
          expect(fs.existsSync(path.join(folder, `${a}.json`))).toBe(false)

          // 4. Dismiss without a running server: the command starts its own `opencode serve` and stops it.
          const dismissed = await cli(project, ["recovery", "dismiss", b, "--json"], { OPENCODE_BIN: target.bin })
          expect(dismissed.stderr).toBe("")
          expect(dismissed.code).toBe(0)
          expect(JSON.parse(dismissed.stdout).closed.map((c: any) => c.tool)).toEqual(["bash"])
          const info = await fetch(`${second.url}/session/${b}?directory=${encodeURIComponent(project.dir)}`)
          expect(((await info.json()) as any).time.archived).toBeNumber()
          expect(fs.existsSync(path.join(folder, `${b}.json`))).toBe(false)
          expect(lines(path.join(project.dir, "runs-b.txt"))).toBe(1)

          // 5. A clean run leaves nothing to report.
          const clean = await Harness.run(project, server, "Say hello", { timeoutMs: 120_000 })
          expect(clean.exitCode).toBe(0)
          expect(fs.readdirSync(folder)).toEqual([])
          const after = await cli(project, ["recovery", "list"])
          expect(after.stdout).toBe("No interrupted sessions in this project.\n")
        } finally {
          for (const pid of strays(project.dir)) process.kill(pid, "SIGKILL")
          server.stop()
        }
      },
      TIMEOUT,
    )
  })
}
