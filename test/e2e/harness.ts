import fs from "fs/promises"
import { existsSync, realpathSync } from "fs"
import os from "os"
import path from "path"
import { pathToFileURL } from "url"
import { ModelServer } from "./model-server"

/**
 * Drives a real `opencode` binary in an isolated temporary project against the scripted model server.
 *
 * @example
 * const server = ModelServer.start([ModelServer.call("resource-query", {}), ModelServer.text("ok")])
 * await using project = await Harness.project({ files: { ".opencode/task/a.md": "# A" } })
 * const result = await Harness.run(project, server, "find tasks")
 * expect(result.exitCode).toBe(0)
 */
export namespace Harness {
  /**
   * Runs `fn` (a read of the project's local state through its store) as the project's OpenCode would: with its cache
   * folder, which holds the key sealing that state (LocalSeal); read with the test's own key, all of it is skipped.
   *
   * @example
   * const records = Harness.asProject(project, () => CaptureStore.open(project.dir).list())
   */
  export function asProject<T>(project: { env: Record<string, string> }, fn: () => T): T {
    const saved = process.env.XDG_CACHE_HOME
    process.env.XDG_CACHE_HOME = project.env.XDG_CACHE_HOME
    try {
      return fn()
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME
      else process.env.XDG_CACHE_HOME = saved
    }
  }

  export const ROOT = path.resolve(import.meta.dir, "../..")
  export const PLUGIN_URL = pathToFileURL(path.join(ROOT, "packages/plugin/index.ts")).href
  export const PROVIDER = "scripted"
  export const MODEL = "scripted-model"

  /** The binary under test: `OPENCODE_BIN`, else the pinned stock `opencode-ai` from node_modules. */
  export function bin(): string {
    const env = process.env.OPENCODE_BIN
    if (env) {
      if (!existsSync(env)) throw new Error(`OPENCODE_BIN points at ${env}, which does not exist`)
      return env
    }
    const found = installed("opencode-ai")
    if (!found) throw new Error("no opencode binary found: run `npm install` (opencode-ai is a pinned dev dependency)")
    return found
  }

  /**
   * The native binary of an installed `opencode-ai` package (or an npm alias of it), or undefined. Resolves the
   * binary itself rather than the node launcher, so stopping the process stops OpenCode.
   */
  export function installed(alias: string): string | undefined {
    const pkg = path.join(ROOT, "node_modules", alias)
    if (!existsSync(pkg)) return undefined
    const cached = path.join(pkg, "bin/.opencode")
    if (existsSync(cached)) return cached
    const arch = os.arch() === "arm64" ? "arm64" : "x64"
    const platform = os.platform() === "win32" ? "windows" : os.platform()
    for (const base of [path.join(pkg, "node_modules"), path.join(ROOT, "node_modules")]) {
      for (const suffix of ["", "-baseline", "-musl", "-baseline-musl"]) {
        const candidate = path.join(base, `opencode-${platform}-${arch}${suffix}`, "bin/opencode")
        if (!existsSync(candidate)) continue
        // A platform package at the top level belongs to the pinned version; only accept it for that package.
        if (base === path.join(ROOT, "node_modules") && alias !== "opencode-ai") continue
        return candidate
      }
    }
    return undefined
  }

  let versionCache: Record<string, string> = {}
  /** `opencode --version` of the binary under test, e.g. "1.2.15". */
  export async function version(binary = bin()): Promise<string> {
    if (versionCache[binary]) return versionCache[binary]
    // Its own temporary folder, removed after: a 1.18 binary unpacks a native library there at every start.
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "ocb-version-"))
    try {
      const env = { ...baseEnv(os.tmpdir()), TMPDIR: tmp }
      const proc = Bun.spawn([binary, "--version"], { stdout: "pipe", stderr: "pipe", env })
      const out = (await new Response(proc.stdout).text()).trim().split("\n").pop() ?? ""
      await proc.exited
      return (versionCache[binary] = out)
    } finally {
      await fs.rm(tmp, { recursive: true, force: true })
    }
  }

  export type ProjectOptions = {
    /** Files to create, relative to the project root. */
    files?: Record<string, string | Uint8Array>
    /** Load the project's plugin (default true). */
    plugin?: boolean
    /** Extra plugin entries (file:// URLs or paths) loaded after ours. */
    plugins?: string[]
    /** Merged into the generated opencode.json. */
    config?: Record<string, unknown>
    /** Permission block; defaults allow everything so `opencode run` never auto-rejects. */
    permission?: Record<string, unknown>
    /** The opencode binary this project will be run with (default `Harness.bin()`). */
    bin?: string
  }

  export type Project = {
    /** The temporary project directory (git-initialised). */
    dir: string
    /** The root holding the project, the isolated home and the XDG directories. */
    root: string
    home: string
    /** The opencode binary runs of this project use. */
    bin: string
    env: Record<string, string>
    cleanup(): Promise<void>
    [Symbol.asyncDispose](): Promise<void>
  }

  function baseEnv(root: string): Record<string, string> {
    const keep = ["PATH", "LANG", "LC_ALL", "TERM", "TMPDIR"]
    const env: Record<string, string> = {}
    for (const key of keep) if (process.env[key]) env[key] = process.env[key]!
    return {
      ...env,
      HOME: path.join(root, "home"),
      XDG_DATA_HOME: path.join(root, "xdg/data"),
      XDG_CONFIG_HOME: path.join(root, "xdg/config"),
      XDG_CACHE_HOME: path.join(root, "xdg/cache"),
      XDG_STATE_HOME: path.join(root, "xdg/state"),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_SHARE: "1",
      NO_COLOR: "1",
    }
  }

  /** Creates an isolated, git-initialised temporary project with its own home and XDG directories. */
  export async function project(options: ProjectOptions = {}): Promise<Project> {
    const binary = options.bin ?? bin()
    const root = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), "ocb-e2e-")))
    const dir = path.join(root, "project")
    // OpenCode's own temporary folder too: each start of a 1.18 binary unpacks a 4 MB native library there and never
    // removes it (a thousand runs left 4.5 GB in /tmp); here it goes with the project.
    const env: Record<string, string> = { ...baseEnv(root), TMPDIR: path.join(root, "tmp") }
    for (const d of [
      dir,
      env.HOME,
      env.XDG_DATA_HOME,
      env.XDG_CONFIG_HOME,
      env.XDG_CACHE_HOME,
      env.XDG_STATE_HOME,
      env.TMPDIR,
    ])
      await fs.mkdir(d, { recursive: true })
    const cleanup = () => fs.rm(root, { recursive: true, force: true })
    try {
      for (const [rel, content] of Object.entries(options.files ?? {})) {
        const file = path.join(dir, rel)
        await fs.mkdir(path.dirname(file), { recursive: true })
        await fs.writeFile(file, content)
      }
      const version = await Harness.version(binary)
      // OpenCode runs `bun install` in every config directory whose @opencode-ai/plugin dependency does not match
      // its own version. Declaring the matching version up front keeps runs offline and fast; our plugin resolves
      // its own dependencies from this repository's node_modules.
      for (const configDir of [path.join(dir, ".opencode"), path.join(env.XDG_CONFIG_HOME, "opencode")]) {
        await fs.mkdir(path.join(configDir, "node_modules"), { recursive: true })
        await fs.writeFile(
          path.join(configDir, "package.json"),
          JSON.stringify({ dependencies: { "@opencode-ai/plugin": version } }),
        )
        // OpenCode 1.14+ skips its npm install when the lock file records every declared dependency; without one it
        // asks the registry on every start (10-15 s here) before loading plugins.
        await fs.writeFile(
          path.join(configDir, "package-lock.json"),
          JSON.stringify({ packages: { "": { dependencies: { "@opencode-ai/plugin": version } } } }),
        )
        if (!existsSync(path.join(configDir, ".gitignore")))
          await fs.writeFile(
            path.join(configDir, ".gitignore"),
            "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore\n",
          )
      }
      await git(dir, ["init", "-q"])
      await git(dir, ["add", "-A"])
      await git(dir, [
        "-c",
        "user.name=e2e",
        "-c",
        "user.email=e2e@example.invalid",
        "commit",
        "--allow-empty",
        "-qm",
        "init",
      ])
    } catch (error) {
      await cleanup()
      throw error
    }
    const plugins = [...(options.plugin === false ? [] : [PLUGIN_URL]), ...(options.plugins ?? [])]
    const config = {
      $schema: "https://opencode.ai/config.json",
      autoupdate: false,
      share: "disabled",
      model: `${PROVIDER}/${MODEL}`,
      small_model: `${PROVIDER}/${MODEL}`,
      plugin: plugins,
      permission: options.permission ?? { "*": "allow", read: "allow", edit: "allow", bash: "allow" },
      ...options.config,
    }
    await fs.writeFile(path.join(dir, "opencode.json"), JSON.stringify(config, null, 2))
    return { dir, root, home: env.HOME, bin: binary, env, cleanup, [Symbol.asyncDispose]: cleanup }
  }

  async function git(cwd: string, args: string[]) {
    const proc = Bun.spawn(["git", ...args], { cwd, stdout: "ignore", stderr: "pipe" })
    const code = await proc.exited
    if (code !== 0) throw new Error(`git ${args.join(" ")} failed: ${await new Response(proc.stderr).text()}`)
  }

  /** Every file under `dir` (relative path → content), e.g. an example project to copy into a test project. */
  export async function filesOf(dir: string): Promise<Record<string, Uint8Array>> {
    const out: Record<string, Uint8Array> = {}
    for (const rel of await fs.readdir(dir, { recursive: true })) {
      const full = path.join(dir, rel)
      if ((await fs.stat(full)).isFile()) out[rel] = await fs.readFile(full)
    }
    return out
  }

  /** The provider block pointing OpenCode at a scripted model server. */
  export function provider(server: ModelServer.Instance) {
    return {
      [PROVIDER]: {
        npm: "@ai-sdk/openai-compatible",
        name: "Scripted model",
        options: { baseURL: server.url, apiKey: "scripted" },
        models: {
          [MODEL]: { name: "Scripted model", tool_call: true, limit: { context: 200_000, output: 8_192 } },
        },
      },
    }
  }

  async function withProvider(project: Project, server: ModelServer.Instance) {
    const file = path.join(project.dir, "opencode.json")
    const config = JSON.parse(await fs.readFile(file, "utf8"))
    config.provider = { ...config.provider, ...provider(server) }
    await fs.writeFile(file, JSON.stringify(config, null, 2))
  }

  export type RunResult = {
    exitCode: number
    /** OpenCode was killed at the run's time limit (`timeoutMs`). */
    timedOut: boolean
    /** Parsed JSON events printed by `opencode run --format json`. */
    events: any[]
    stdout: string
    stderr: string
    /** Tool parts seen in the events, in order. */
    tools: { tool: string; status: string; input: any; output: string; error?: string }[]
    /** Concatenated assistant text. */
    text: string
  }

  const live = new Set<{ pid: number; kill(signal?: number | NodeJS.Signals): void }>()
  process.on("exit", () => {
    for (const proc of live) stopGroup(proc)
  })

  /**
   * Kills a process spawned with `detached: true` and everything still in its process group: the MCP servers, shells
   * and language servers OpenCode started, which would otherwise outlive a killed OpenCode and hold its output pipes.
   *
   * @example
   * const proc = Bun.spawn([bin, "serve"], { detached: true, stdout: "pipe" })
   * Harness.stopGroup(proc)
   */
  export function stopGroup(proc: { pid: number; kill(signal?: number | NodeJS.Signals): void }) {
    try {
      process.kill(-proc.pid, "SIGKILL")
    } catch {
      // The group is gone already.
    }
    proc.kill("SIGKILL")
  }

  /**
   * Reads a process's pipe to the end, or until `ended` settles and `graceMs` more pass: a process that left the group
   * (a new session of its own) can keep the pipe open for ever, and a test must not wait on it.
   */
  export async function drain(stream: ReadableStream<Uint8Array>, ended: Promise<unknown>, graceMs = 10_000) {
    const reader = stream.getReader()
    const decoder = new TextDecoder()
    let text = ""
    let timer: Timer | undefined
    void ended.finally(() => {
      timer = setTimeout(() => void reader.cancel().catch(() => {}), graceMs)
    })
    try {
      while (true) {
        const { value, done } = await reader.read()
        if (done) break
        text += decoder.decode(value, { stream: true })
      }
    } catch {
      // Cancelled or broken: what was read is kept.
    } finally {
      clearTimeout(timer)
    }
    return text + decoder.decode()
  }

  /** Runs `opencode run --format json <prompt>` in the project; the process is always stopped (timeout included). */
  export async function run(
    project: Project,
    server: ModelServer.Instance,
    prompt: string,
    options: {
      timeoutMs?: number
      args?: string[]
      env?: Record<string, string>
      /** Checked every 100 ms: when it holds, OpenCode is killed (SIGKILL), as a crash or the user quitting would. */
      killWhen?: () => boolean
      /**
       * Run OpenCode in this folder instead of the project's, given as a `printf` format relative to `project.root`
       * (`caf\\351`): a folder whose name is not UTF-8, which no string path of Bun's can name; a shell enters it. The
       * provider is then not added to the project's opencode.json (OpenCode reads no project configuration there): the
       * test puts its configuration in `$XDG_CONFIG_HOME/opencode/opencode.json` (with `Harness.provider`).
       */
      cd?: string
    } = {},
  ): Promise<RunResult> {
    if (!options.cd) await withProvider(project, server)
    const requestsBefore = server.requests.length
    const command = [project.bin, "run", "--format", "json", ...(options.args ?? []), prompt]
    const proc = Bun.spawn(
      options.cd ? ["sh", "-c", 'cd "$(printf "$0")" && exec "$@"', options.cd, ...command] : command,
      {
        cwd: options.cd ? project.root : project.dir,
        env: { ...project.env, ...(options.cd ? {} : { PWD: project.dir }), ...options.env },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
        detached: true,
      },
    )
    live.add(proc)
    let timedOut = false
    const timeout = setTimeout(() => {
      timedOut = true
      stopGroup(proc)
    }, options.timeoutMs ?? 120_000)
    const watch = options.killWhen
      ? setInterval(() => {
          if (options.killWhen!()) proc.kill("SIGKILL")
        }, 100)
      : undefined
    // Once OpenCode is gone, what it left in its group goes too, so the pipes end.
    const exited = proc.exited.finally(() => stopGroup(proc))
    try {
      const [stdout, stderr, exitCode] = await Promise.all([
        drain(proc.stdout, exited),
        drain(proc.stderr, exited),
        exited,
      ])
      const events = parseEvents(stdout)
      // A run killed at its limit is a finding in itself: what OpenCode last did goes to the test log.
      if (timedOut)
        console.error(
          `opencode run was killed after ${options.timeoutMs ?? 120_000} ms; tools: ${events.tools.map((t) => `${t.tool}:${t.status}`).join(", ")}; stderr: ${stderr.slice(-2000)}`,
        )
      // So is a run that never reached the model (most scenarios expect it to): when a test then fails, the log says
      // how OpenCode ended (a refused command, a configuration error, a crash) instead of only "0 requests".
      if (!timedOut && server.requests.length === requestsBefore)
        console.error(`opencode run made no model request (exit ${exitCode}); stderr: ${stderr.slice(-2000)}`)
      return { exitCode, timedOut, stdout, stderr, ...events }
    } finally {
      clearTimeout(timeout)
      clearInterval(watch)
      stopGroup(proc)
      live.delete(proc)
    }
  }

  export function parseEvents(stdout: string) {
    const events: any[] = []
    for (const line of stdout.split("\n")) {
      const trimmed = line.trim()
      if (!trimmed.startsWith("{")) continue
      try {
        events.push(JSON.parse(trimmed))
      } catch {
        // Non-JSON lines (log noise) are ignored; the raw stdout stays available to the test.
      }
    }
    const tools: RunResult["tools"] = []
    let text = ""
    for (const event of events) {
      const part = event.part
      if (!part) continue
      if (part.type === "tool") {
        tools.push({
          tool: part.tool,
          status: part.state?.status,
          input: part.state?.input,
          output: part.state?.output ?? "",
          error: part.state?.error,
        })
      }
      if (part.type === "text" && typeof part.text === "string") text += part.text
    }
    return { events, tools, text }
  }
}
