import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { RecoveryStore } from "../../packages/core/recovery/store"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { Serve } from "./serve"
import { targets } from "./targets"
import { bunSpawnSync } from "../../packages/core/test/spawn-sync"

const TODOS = [
  { content: "Write the parser", status: "in_progress", priority: "high" },
  { content: "Document the format", status: "pending", priority: "medium" },
  { content: "Set up the project", status: "completed", priority: "low" },
]
/** The side effect the model's long bash call has before it blocks: one line per run. */
const BASH = (name: string) => `echo ran >> ${name}; sleep 30`
const TIMEOUT = { timeout: 360_000 }
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

/** Runs a slash command in a session through the server's command route (what the TUI sends when the user types it). */
async function slash(serve: Serve.Instance, dir: string, sessionID: string, command: string, args: string) {
  const response = await fetch(`${serve.url}/session/${sessionID}/command?directory=${encodeURIComponent(dir)}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ command, arguments: args }),
  })
  if (!response.ok) throw new Error(`/${command} ${args}: HTTP ${response.status} ${await response.text()}`)
  await serve.waitFor(async () => !(await serve.busy(sessionID)), 120_000)
}

/** The text of the last user message of a recorded request. */
function lastUser(request: ModelServer.RecordedRequest): string {
  const content = (request.body.messages as any[]).filter((m) => m.role === "user").at(-1)?.content
  return typeof content === "string" ? content : (content ?? []).map((p: any) => p.text ?? "").join("\n")
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
          ModelServer.call("bash", { command: BASH("runs-c.txt"), description: "long job C" }),
          ModelServer.text("Three sessions were interrupted."),
          ModelServer.text("The job was interrupted; I will check runs-a.txt before running it again."),
          ModelServer.text("Session B is archived."),
        ])
        // Todo continuation is switched off so every model request in this scenario is one the test asks for.
        await using project = await Harness.project({
          bin: target.bin,
          files: { ".opencode/opencode-builtins.json": JSON.stringify({ todoContinuation: { enabled: false } }) },
        })
        const folder = path.join(project.dir, HEARTBEATS)
        const runs = (x: string) => lines(path.join(project.dir, `runs-${x}.txt`))
        try {
          // 1. Three sessions busy in a long bash call, then OpenCode is killed with SIGKILL.
          const ids: Record<string, string> = {}
          {
            await using first = await Serve.start(project, server)
            for (const [x, prompt] of [
              ["a", "Build the parser"],
              ["b", "Run job B"],
              ["c", "Run job C"],
            ]) {
              const id = (ids[x] = await first.createSession())
              await first.promptAsync(id, prompt)
              await first.waitFor(async () => (await first.runningTools(id)).includes("bash"), 120_000)
              await first.waitFor(async () => runs(x) === 1, 30_000)
            }
            const found = Harness.asProject(project, () => RecoveryStore.find(folder, ids.a))
            const beat = "beat" in found ? found.beat : undefined
            expect(beat).toBeDefined()
            expect(beat!.todos).toEqual(TODOS)
            expect(beat!.running.map((r) => r.title)).toEqual([BASH("runs-a.txt")])
            expect(beat!.owner.pid).toBe(first.pid)
            // Owned by a live process: not reported.
            const live = await cli(project, ["recovery", "list", "--json"])
            expect(live.code).toBe(0)
            expect(JSON.parse(live.stdout)).toEqual([])
            process.kill(first.pid, "SIGKILL")
          }
          const { a, b, c } = ids
          for (const pid of strays(project.dir)) process.kill(pid, "SIGKILL")
          // No file of the user's changed: the local state folder is kept out of git by its own `*` .gitignore.
          const status = bunSpawnSync(
            ["git", "status", "--porcelain", "--untracked-files=all", "--", ".gitignore", ".opencode"],
            {
              cwd: project.dir,
            },
          )
          expect(status.stdout.toString()).toBe("")

          // 2. The next start reports the three sessions (log line at plugin start; the CLI lists them).
          const listed = await cli(project, ["recovery", "list", "--json"])
          expect(
            JSON.parse(listed.stdout)
              .map((x: any) => `${x.sessionID} ${x.reason}`)
              .sort(),
          ).toEqual([a, b, c].map((id) => `${id} owner-dead`).sort())
          const spawned = performance.now()
          await using second = await Serve.start(project, server)
          const listening = performance.now()
          // The instance (and the plugin) starts with the first request for the project.
          const request = performance.now()
          await fetch(`${second.url}/session?directory=${encodeURIComponent(project.dir)}`)
          await second.waitFor(async () => logs(project).includes(`interrupted session: ${a}`), 30_000)
          const reported = performance.now()
          for (const id of [b, c]) expect(logs(project)).toContain(`interrupted session: ${id}`)
          expect(logs(project)).toContain(`/recover resume ${a}`)
          // The figures the feature logs itself: the scan, and when it reported, from the plugin's load.
          const figures =
            /recovery scan: \d+ heartbeat\(s\), 3 interrupted, ([\d.]+) ms; reported (\d+) ms after the plugin loaded, (\d+) ms after the process started/
          await second.waitFor(async () => figures.test(logs(project)), 10_000)
          const scan = figures.exec(logs(project))
          console.log(
            `[recovery ${target.version}] scan ${scan![1]} ms, reported ${scan![2]} ms after the plugin loaded ` +
              `(${scan![3]} ms after the process started); the line was in the log ${Math.round(reported - request)} ms ` +
              `after the first request (server listening ${Math.round(listening - spawned)} ms after spawn)`,
          )
          // Baseline: stock OpenCode leaves the call running in the stored history.
          expect(await second.runningTools(a)).toEqual(["bash"])

          // 3. `opencode run --command recover list` (a second OpenCode, beside the server) lists them; the model is
          // sent the outcome, not the template.
          const run = await Harness.run(project, server, "list", { args: ["--command", "recover"], timeoutMs: 120_000 })
          expect(run.exitCode).toBe(0)
          const listing = lastUser(server.turns().at(-1)!)
          expect(listing).toContain("[session recovery] 3 interrupted sessions:")
          for (const id of [a, b, c]) expect(listing).toMatch(new RegExp(`^- ${id} .* interrupted .* during bash`, "m"))

          // 4. Resume A through the running server with the CLI.
          const resumed = await cli(project, ["recovery", "resume", a, "--server", second.url, "--json"])
          expect(resumed.stderr).toBe("")
          expect(resumed.code).toBe(0)
          const result = JSON.parse(resumed.stdout)
          expect(result.closed.map((x: any) => x.tool)).toEqual(["bash"])
          expect(result.todos).toBe("unchanged")
          expect(result.workdir).toBe(project.dir)
          expect(RecoveryStore.exists(folder, a)).toBe(false)
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
          const call = sent.flatMap((m) => m.tool_calls ?? []).find((x: any) => x.function.name === "bash")
          const answer = sent.find((m) => m.role === "tool" && m.tool_call_id === call.id)
          expect(JSON.stringify(answer.content)).toContain("Interrupted: OpenCode stopped")
          expect(JSON.stringify(sent)).toContain(`Working directory: ${project.dir}`)
          const last = (await second.messages(a)).at(-1)
          expect(last.info.role).toBe("assistant")
          expect(last.info.error).toBeUndefined()
          expect(last.parts.map((p: any) => p.text ?? "").join("")).toContain("I will check runs-a.txt")
          expect(RecoveryStore.exists(folder, a)).toBe(false)

          // 5. /recover dismiss B from a session, through the server's command route (what the TUI sends): closed,
          // archived, heartbeat gone.
          const d = await second.createSession()
          await slash(second, project.dir, d, "recover", `dismiss ${b}`)
          expect(lastUser(server.turns().at(-1)!)).toContain(`[session recovery] Session ${b} dismissed and archived`)
          const infoB = await fetch(`${second.url}/session/${b}?directory=${encodeURIComponent(project.dir)}`)
          expect(((await infoB.json()) as any).time.archived).toBeNumber()
          const bashB = (await second.messages(b)).flatMap((m: any) => m.parts).find((p: any) => p.tool === "bash")
          expect(bashB.state.status).toBe("error")
          expect(RecoveryStore.exists(folder, b)).toBe(false)

          // 6. Dismiss C without a running server: the command starts its own `opencode serve` and stops it.
          const dismissed = await cli(project, ["recovery", "dismiss", c, "--json"], { OPENCODE_BIN: target.bin })
          expect(dismissed.stderr).toBe("")
          expect(dismissed.code).toBe(0)
          expect(JSON.parse(dismissed.stdout).closed.map((x: any) => x.tool)).toEqual(["bash"])
          const infoC = await fetch(`${second.url}/session/${c}?directory=${encodeURIComponent(project.dir)}`)
          expect(((await infoC.json()) as any).time.archived).toBeNumber()
          expect(RecoveryStore.exists(folder, c)).toBe(false)

          // Never re-run: each side effect happened once.
          expect([runs("a"), runs("b"), runs("c")]).toEqual([1, 1, 1])

          // 7. A clean run leaves nothing to report.
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
    test(
      "X14: a session deleted after the crash leaves no crash report: session.deleted removes a dead process's heartbeat; dismiss of a deleted session is final",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("bash", { command: BASH("runs-x.txt"), description: "long job" }),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: { ".opencode/opencode-builtins.json": JSON.stringify({ todoContinuation: { enabled: false } }) },
        })
        const folder = path.join(project.dir, HEARTBEATS)
        try {
          let id = ""
          {
            await using first = await Serve.start(project, server)
            id = await first.createSession()
            await first.promptAsync(id, "Run the long job")
            await first.waitFor(async () => (await first.runningTools(id)).includes("bash"), 120_000)
            process.kill(first.pid, "SIGKILL")
          }
          for (const pid of strays(project.dir)) process.kill(pid, "SIGKILL")
          expect(
            JSON.parse((await cli(project, ["recovery", "list", "--json"])).stdout).map((x: any) => x.sessionID),
          ).toEqual([id])
          const saved = new Map(fs.readdirSync(folder).map((f) => [f, fs.readFileSync(path.join(folder, f))]))

          // The user opens OpenCode again and deletes the broken session (the TUI's delete; here the server route).
          {
            await using second = await Serve.start(project, server)
            const route = `${second.url}/session/${id}?directory=${encodeURIComponent(project.dir)}`
            expect((await fetch(route, { method: "DELETE" })).ok).toBe(true)
            expect((await fetch(route)).status).toBe(404)
            await second.waitFor(async () => !RecoveryStore.exists(folder, id), 30_000)
          }
          expect((await cli(project, ["recovery", "list"])).stdout).toBe("No interrupted sessions in this project.\n")

          // A heartbeat the deleting OpenCode never saw (deleted where the plugin did not run): dismiss is final.
          for (const [f, bytes] of saved) fs.writeFileSync(path.join(folder, f), bytes)
          const dismissed = await cli(project, ["recovery", "dismiss", id, "--opencode", target.bin])
          expect(dismissed.stderr).toContain(`session '${id}' no longer exists in OpenCode (it was deleted)`)
          expect(dismissed.stderr).not.toContain("retry is safe")
          expect(dismissed.code).toBe(0)
          expect(RecoveryStore.exists(folder, id)).toBe(false)
        } finally {
          for (const pid of strays(project.dir)) process.kill(pid, "SIGKILL")
          server.stop()
        }
      },
      TIMEOUT,
    )
  })
}

/** `opencode serve` processes started with the project's isolated home. */
function servesIn(home: string): number[] {
  const out: number[] = []
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      const cmd = fs.readFileSync(`/proc/${name}/cmdline`, "utf8")
      const env = fs.readFileSync(`/proc/${name}/environ`, "utf8")
      if (cmd.includes("serve") && env.includes(`HOME=${home}\0`)) out.push(Number(name))
    } catch {}
  }
  return out
}

// The `opencode` npm installs for opencode-ai 1.2.x is a node launcher that runs the native bin/.opencode as its child
// (1.18.x installs the native binary itself); the scenarios above pass the native binary (Harness.installed).
const LAUNCHER = path.join(Harness.ROOT, "node_modules/opencode-ai/bin/opencode")
describe.skipIf(Boolean(process.env.OPENCODE_BIN) || !fs.existsSync(LAUNCHER))(
  "crash recovery through the opencode-ai@1.2.15 npm launcher",
  () => {
    test(
      "X15: recovery dismiss without --server exits when done and leaves no opencode serve behind",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("bash", { command: BASH("runs-l.txt"), description: "long job" }),
        ])
        await using project = await Harness.project({
          bin: Harness.installed("opencode-ai")!,
          files: { ".opencode/opencode-builtins.json": JSON.stringify({ todoContinuation: { enabled: false } }) },
        })
        const left: number[] = []
        try {
          let id = ""
          {
            await using first = await Serve.start(project, server)
            id = await first.createSession()
            await first.promptAsync(id, "Run the long job")
            await first.waitFor(async () => (await first.runningTools(id)).includes("bash"), 120_000)
            process.kill(first.pid, "SIGKILL")
          }
          for (const pid of strays(project.dir)) process.kill(pid, "SIGKILL")
          // cli() kills the command after 120 s; before the fix it printed its result, then waited until killed.
          const dismissed = await cli(project, ["recovery", "dismiss", id, "--opencode", LAUNCHER])
          left.push(...servesIn(project.home))
          expect(dismissed.stdout).toContain(`Dismissed (archived) ${id}: closed bash`)
          expect(dismissed.code).toBe(0)
          expect(left).toEqual([])
        } finally {
          for (const pid of [...left, ...strays(project.dir)]) process.kill(pid, "SIGKILL")
          server.stop()
        }
      },
      TIMEOUT,
    )
  },
)
