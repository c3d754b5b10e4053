import { spawn, type ChildProcess } from "child_process"
import fs from "fs"
import os from "os"
import { pathToFileURL } from "url"
import path from "path"
import type { Writable } from "stream"
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node"
import type {
  Diagnostic,
  DocumentDiagnosticReport,
  InitializeResult,
  PublishDiagnosticsParams,
  ServerCapabilities,
} from "vscode-languageserver-protocol"
import z from "zod"
import type { HostSandbox } from "../host"
import { NamedError } from "../util/error"
import { Pid } from "../util/pid"
import type { Logger } from "../util/log"
import { LspServers } from "./servers"

/**
 * One running language server over JSON-RPC on its stdio (framing by vscode-jsonrpc), with the document state and
 * the diagnostics logic the tools rely on.
 *
 * Documents are synchronised from disk before every operation: the first use sends `didOpen` (version 1); a later use
 * whose content differs sends `didChange` with the next version. Diagnostics are then awaited for *that* version:
 *
 * - `tsserver` servers (typescript-language-server): TypeScript's syntactic, semantic and suggestion diagnostics are
 *   requested through its `typescript.tsserverRequest` command. Requests are processed after the change, so the
 *   answer is for the current content — and a clean file answers an empty list at once.
 * - servers with pull diagnostics (`textDocument/diagnostic`, static or registered): the report answers the request.
 * - otherwise the first `publishDiagnostics` for the document that carries the current version, or, from a server
 *   that sends no versions, the first one received after the change was sent.
 *
 * A wait that sees no result within its limit says `timeout`; it is never reported as a clean file.
 *
 * @example
 * await using client = await LspClient.start({ id: "typescript", root, launch, log })
 * const { status, items } = await client.diagnostics("/repo/a.ts", { timeoutMs: 15_000 })
 */
export class LspClient {
  static readonly INITIALIZE_TIMEOUT_MS = 45_000
  static readonly REQUEST_TIMEOUT_MS = 30_000
  /** How long a closed connection waits for the process to exit before it is called closed without an exit. */
  static readonly CLOSE_GRACE_MS = 1000

  readonly id: string
  readonly root: string
  capabilities: ServerCapabilities = {}
  /** Set when the process exited or the connection closed; the client is then replaced on next use. */
  dead?: string
  /**
   * Why it ended, once it did: how the process exited (code or signal, the end of its stderr), or that its connection
   * closed while the process went on (after `CLOSE_GRACE_MS`). A closed connection waits for the exit, so a crash is
   * reported as the crash it is, never as a bare "connection closed".
   */
  ended: Promise<string> = new Promise(() => {})
  /** The connection closed: the process is ending (see `ended`). */
  private closing = false
  /** The command it was started with (a crash is remembered per command: a changed one is tried again). */
  command: string[] = []
  /** Milliseconds the `initialize` handshake took (spawn to answer). */
  initMs = 0

  /** The server's process id, also the id of its process group (its helpers, e.g. tsserver, are in it). */
  get pid(): number | undefined {
    return this.proc.pid
  }

  private readonly docs = new Map<string, { uri: string; version: number; text: string; languageId: string }>()
  /** Latest publish per URI: its diagnostics, its version when the server gave one, and its arrival number. */
  private readonly published = new Map<string, { items: Diagnostic[]; version?: number; seq: number }>()
  /** Arrival number of the last change sent per URI (publishes after it are about that change or later). */
  private readonly changedAt = new Map<string, number>()
  private readonly waiters = new Set<() => void>()
  private readonly registrations = new Map<string, { method: string; options?: any }>()
  private readonly pullResults = new Map<string, { resultId?: string; items: Diagnostic[] }>()
  private seq = 0
  /** Started inside the kernel sandbox (see `start`). */
  private sandboxed = false
  /**
   * The server's own temporary folder (its `TMPDIR`, `TMP`, `TEMP`), removed when it ends: servers leave theirs in
   * the shared one (typescript-language-server a folder of tscancellation pipes at every start, pyright its folder
   * when it is killed), one more after every session.
   */
  private scratch?: string

  private constructor(
    private readonly proc: ChildProcess,
    readonly connection: MessageConnection,
    private readonly spec: Pick<LspServers.Spec, "id" | "diagnostics">,
    root: string,
    private readonly initialization: Record<string, unknown> | undefined,
    private readonly log: Logger,
  ) {
    this.id = spec.id
    this.root = root
  }

  /**
   * Spawns the server in its own process group (so stopping it also stops the helpers it starts), connects and
   * initialises it. Throws `LspClient.StartFailed` when it cannot be started, exits, or does not answer `initialize`
   * within `initializeTimeoutMs` (default 45 s); the process is then stopped.
   */
  static async start(input: {
    spec: Pick<LspServers.Spec, "id" | "diagnostics">
    root: string
    launch: LspServers.Launch
    /** Start the server inside this kernel sandbox (`Host.sandbox`): bubblewrap reads its arguments on fd 3. */
    sandbox?: HostSandbox
    log: Logger
    initializeTimeoutMs?: number
  }): Promise<LspClient> {
    const limit = input.initializeTimeoutMs ?? LspClient.INITIALIZE_TIMEOUT_MS
    const started = performance.now()
    const box = input.sandbox
    const [bin, ...args] = box ? [box.bwrap, "--args", "3", "--", ...input.launch.command] : input.launch.command
    const scratch = LspClient.scratchFolder()
    const temp = scratch ? { TMPDIR: scratch, TMP: scratch, TEMP: scratch } : {}
    const proc = spawn(bin, args, {
      cwd: input.root,
      // The configuration's own environment wins (a server told where its temporary files go keeps it).
      env: { ...process.env, ...temp, ...input.launch.env },
      stdio: box ? ["pipe", "pipe", "pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe"],
      detached: process.platform !== "win32",
    })
    if (box) {
      if (proc.pid !== undefined) box.register?.(proc.pid)
      const channel = proc.stdio[3] as Writable | null
      channel?.on("error", () => {})
      channel?.end(box.args.map((a) => a + "\0").join(""))
      // The seccomp filter the args name (`--seccomp 4`), or nothing on that descriptor.
      const filter = proc.stdio[4] as Writable | null
      filter?.on("error", () => {})
      filter?.end(box.seccomp ? Buffer.from(box.seccomp) : undefined)
    }
    const connection = createMessageConnection(
      new StreamMessageReader(proc.stdout!),
      new StreamMessageWriter(proc.stdin!),
    )
    const client = new LspClient(proc, connection, input.spec, input.root, input.launch.initialization, input.log)
    client.scratch = scratch
    // In the sandbox's own process namespace this process's id names nothing: a server watching it would exit.
    client.sandboxed = box !== undefined
    // The first of it (what a server that exits at once says) and the last (what one that dies later says).
    let stderr = ""
    let head = ""
    const stderrEnded = new Promise<void>((resolve) => {
      proc.stderr!.on("end", resolve)
      proc.stderr!.on("error", () => resolve())
    })
    proc.stderr!.on("data", (chunk) => {
      if (head.length < 2000) head = (head + chunk.toString()).slice(0, 2000)
      stderr = (stderr + chunk.toString()).slice(-2000)
    })
    /** How the process ended: why it is dead, and what to say when that was before `initialize` answered. */
    const exited = new Promise<{ reason: string; early: string }>((resolve) => {
      const program = path.basename(input.launch.command[0] ?? bin)
      proc.on("error", (error) =>
        resolve({
          reason: `could not start ${bin}: ${error.message}`,
          early: `${bin} could not be run (${error.message})`,
        }),
      )
      proc.on("exit", async (code, signal) => {
        client.removeScratch()
        // What it wrote before exiting, once its stderr is read to the end (not waiting on a helper holding it open).
        await Promise.race([stderrEnded, delay(200)])
        const how = signal ?? `code ${code}`
        resolve({
          reason: `${input.spec.id} exited (${how})${stderr ? `: ${LspClient.brief(stderr, "last")}` : ""}`,
          early:
            `${program} exited at once (${how}) without answering initialize` +
            (head ? `: ${LspClient.brief(head)}` : ""),
        })
      })
    })
    client.command = [...input.launch.command]
    let closed!: () => void
    const closes = new Promise<void>((resolve) => (closed = resolve))
    client.ended = Promise.race([
      exited.then(({ reason }) => reason),
      closes
        .then(() => delay(LspClient.CLOSE_GRACE_MS))
        .then(() => `${input.spec.id}'s connection closed while its process kept running`),
    ])
    void client.ended.then((reason) => client.markDead(reason))
    connection.onClose(() => {
      client.closing = true
      closed()
    })
    connection.onError(([error]) => input.log.debug?.(`lsp ${input.spec.id}: ${error.message}`))
    client.listen()
    connection.listen()
    try {
      const result = await Promise.race([
        connection.sendRequest<InitializeResult>("initialize", client.initializeParams()),
        exited.then(({ early }) => Promise.reject(new Exited(early))),
        delay(limit).then(() => Promise.reject(new Error(`it did not answer initialize within ${limit / 1000} s`))),
      ])
      client.capabilities = result.capabilities ?? {}
      await connection.sendNotification("initialized", {})
      if (input.launch.initialization)
        await connection.sendNotification("workspace/didChangeConfiguration", {
          settings: input.launch.initialization,
        })
      client.initMs = performance.now() - started
      return client
    } catch (error) {
      // The connection closing as the process exits can win the race: the exit, when it follows, says what happened.
      const early =
        error instanceof Exited
          ? error.message
          : await Promise.race([exited.then((e) => e.early), delay(500).then(() => undefined)])
      await client.stop()
      throw new LspClient.StartFailed({
        server: input.spec.id,
        reason: early ?? (error instanceof Error ? error.message : String(error)),
        ...(early ? { exited: true } : {}),
      })
    }
  }

  /**
   * A server that could not be started or initialised: its answers are unknown (never an empty result). `exited`: its
   * process ended (or could not be run) before answering `initialize`, as a stand-in program does (rustup's
   * `rust-analyzer` proxy without the component), so calling again cannot help; `install`: the catalog's hint.
   */
  static readonly StartFailed = NamedError.create(
    "LspServerStartFailed",
    z.object({
      server: z.string(),
      reason: z.string(),
      exited: z.boolean().optional(),
      install: z.string().optional(),
    }),
    (d) =>
      d.exited
        ? `The ${d.server} language server cannot run: ${d.reason.replace(/[.\s]+$/, "")}. Calling again will not ` +
          `help; to fix: ${d.install ? `${d.install}, or name` : "name"} a working command in opencode.json ("lsp": ` +
          `{ "${d.server}": { "command": ["/path/to/server"] } }), or turn it off ("lsp": { "${d.server}": { ` +
          `"disabled": true } }).`
        : `The ${d.server} language server did not start: ${d.reason}. Nothing is known about the file (this is not a ` +
          `clean result); check the server's command in opencode.json "lsp" or call again.`,
  )

  /**
   * A running server that ended (crashed) while it was asked something: its result is unknown. `reason` says how
   * (exit code or signal and the end of its stderr). `crashes`: how many times in a row it ended on this file's
   * current content; `gaveUp`: that was too often, so it is not started again for that content (see `Lsp`).
   */
  static readonly Exited = NamedError.create(
    "LspServerExited",
    z.object({
      server: z.string(),
      reason: z.string(),
      during: z.string().optional(),
      file: z.string().optional(),
      crashes: z.number().optional(),
      gaveUp: z.boolean().optional(),
      /** Given up before this call: the server was neither started nor sent the file for it. */
      notStarted: z.boolean().optional(),
      command: z.string().optional(),
    }),
    (d) =>
      `The ${d.server} language server ended ${d.during ? `during ${d.during}` : "while in use"}` +
      `${d.file ? ` for ${d.file}` : ""}: ${d.reason.replace(/[.\s]+$/, "")}. Nothing is known about the result ` +
      "(this is not an empty one). " +
      (d.gaveUp
        ? `It ended like this ${d.crashes} times in a row on this file as it is now, so it is not started again for ` +
          "it (other files still use it; the file changing, or a changed server command, lets it try again). To " +
          `fix: update the server, name a working command in opencode.json ("lsp": { "${d.server}": { "command": ` +
          `["/path/to/server"] } }) or turn it off ("disabled": true); the crash is the server's bug, worth ` +
          "reporting to its authors with this file."
        : "Calling again starts it again; it may well crash again on the same file."),
  )

  /**
   * A server's stderr cut to what an agent can act on: its first (or `last`) non-empty lines up to a blank line or a
   * stack trace (Rust's `Stack backtrace:` and numbered frames, Python's `Traceback`, JavaScript's `    at …`), at
   * most 3 lines and 300 characters, on one line.
   *
   * @example
   * LspClient.brief("error: Unknown binary 'rust-analyzer'\n\nStack backtrace:\n   0: anyhow") // "error: Unknown binary 'rust-analyzer'"
   */
  static brief(text: string, end: "first" | "last" = "first"): string {
    const trace = /^(stack backtrace:|traceback \(most recent call last\):|\s+at\s|\s*\d+:\s)/i
    const all = text.split(/\r?\n/)
    const kept: string[] = []
    for (const raw of end === "first" ? all : all.reverse()) {
      const line = raw.trim()
      const stop = !line || trace.test(raw)
      if (stop && kept.length) break
      if (stop) continue
      kept.push(line)
      if (kept.length >= 3) break
    }
    const joined = (end === "first" ? kept : kept.reverse()).join(" ")
    return joined.length > 300 ? joined.slice(0, 299) + "…" : joined
  }

  /** The `Exited` error of this client, once its final reason is known (`ended`). */
  async exitedError(during?: string): Promise<InstanceType<typeof LspClient.Exited>> {
    const reason = await this.ended
    return new LspClient.Exited({ server: this.id, reason, during, command: this.command.join(" ") })
  }

  /** Whether the process is gone or going on its own (not stopped here): its connection closed or it died. */
  get crashed(): boolean {
    return !this.stopping && (this.closing || this.dead !== undefined)
  }
  private stopping = false

  private markDead(reason: string) {
    if (this.dead) return
    this.dead = reason
    for (const wake of [...this.waiters]) wake()
  }

  private initializeParams() {
    const uri = pathToFileURL(this.root).href
    return {
      processId: this.sandboxed ? null : process.pid,
      rootUri: uri,
      rootPath: this.root,
      workspaceFolders: [{ uri, name: path.basename(this.root) || "root" }],
      initializationOptions: this.initialization ?? {},
      capabilities: {
        general: { positionEncodings: ["utf-16"] },
        window: { workDoneProgress: true },
        workspace: {
          configuration: true,
          workspaceFolders: true,
          applyEdit: false,
          workspaceEdit: {
            documentChanges: true,
            resourceOperations: ["create", "rename", "delete"],
            failureHandling: "abort",
          },
          symbol: { dynamicRegistration: false },
          diagnostics: { refreshSupport: false },
          didChangeWatchedFiles: { dynamicRegistration: false },
        },
        textDocument: {
          synchronization: { dynamicRegistration: false, didSave: false, willSave: false },
          publishDiagnostics: { versionSupport: true, relatedInformation: true, codeDescriptionSupport: true },
          diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false },
          hover: { contentFormat: ["markdown", "plaintext"] },
          definition: { linkSupport: true },
          implementation: { linkSupport: true },
          references: {},
          documentSymbol: { hierarchicalDocumentSymbolSupport: true },
          callHierarchy: {},
          rename: { prepareSupport: true, prepareSupportDefaultBehavior: 1, honorsChangeAnnotations: false },
        },
      },
    }
  }

  private listen() {
    const c = this.connection
    c.onNotification("textDocument/publishDiagnostics", (params: PublishDiagnosticsParams) => {
      this.published.set(params.uri, {
        items: params.diagnostics ?? [],
        version: typeof params.version === "number" ? params.version : undefined,
        seq: ++this.seq,
      })
      for (const wake of [...this.waiters]) wake()
    })
    c.onNotification("window/logMessage", () => {})
    c.onNotification("window/showMessage", () => {})
    c.onNotification("$/progress", () => {})
    c.onNotification("telemetry/event", () => {})
    c.onRequest("window/workDoneProgress/create", () => null)
    c.onRequest("window/showMessageRequest", () => null)
    c.onRequest("workspace/configuration", (params: { items?: { section?: string }[] }) =>
      (params.items ?? []).map((item) => section(this.initialization, item.section)),
    )
    c.onRequest("workspace/workspaceFolders", () => [
      { uri: pathToFileURL(this.root).href, name: path.basename(this.root) || "root" },
    ])
    c.onRequest("client/registerCapability", (params: { registrations?: any[] }) => {
      for (const r of params.registrations ?? [])
        this.registrations.set(r.id, { method: r.method, options: r.registerOptions })
      for (const wake of [...this.waiters]) wake()
      return null
    })
    c.onRequest("client/unregisterCapability", (params: { unregisterations?: any[] }) => {
      for (const r of params.unregisterations ?? []) this.registrations.delete(r.id)
      return null
    })
    c.onRequest("workspace/diagnostic/refresh", () => null)
    c.onRequest("workspace/semanticTokens/refresh", () => null)
    c.onRequest("workspace/inlayHint/refresh", () => null)
    // Edits are applied by the rename operation itself, atomically and under the security checks.
    c.onRequest("workspace/applyEdit", () => ({ applied: false, failureReason: "the client applies edits itself" }))
  }

  /** The tsserver.js typescript-language-server was started with (its `typescript` package), when it is one. */
  get tsserverPath(): string | undefined {
    const found = (this.initialization as any)?.tsserver?.path
    return typeof found === "string" ? found : undefined
  }

  /** A request to TypeScript's server itself, through typescript-language-server's `typescript.tsserverRequest`. */
  async tsserverRequest<T>(command: string, args: unknown, options: { timeoutMs?: number; signal?: AbortSignal } = {}) {
    const result = await this.request<any>(
      "workspace/executeCommand",
      { command: "typescript.tsserverRequest", arguments: [command, args, { executionTarget: 0 }] },
      options,
    )
    return (result?.body ?? result) as T
  }

  /** Files open in the server (sent with `sync`). */
  openFiles(): string[] {
    return [...this.docs.keys()]
  }

  async notify(method: string, params: unknown): Promise<void> {
    this.alive()
    await this.connection.sendNotification(method, params)
  }

  /** Kills the process group at once (the host is exiting). */
  kill() {
    try {
      if (this.proc.pid && process.platform !== "win32") process.kill(-this.proc.pid, "SIGKILL")
      else this.proc.kill("SIGKILL")
    } catch {}
    this.removeScratch()
  }

  /**
   * A new temporary folder for one server (`opencode-builtins-lsp-<host pid>-…` in the system's), or undefined when
   * none can be made (the server then uses the system's, as before). The first call also sweeps the folders of hosts
   * that are gone (`sweepScratch`).
   *
   * @example
   * LspClient.scratchFolder() // "/tmp/opencode-builtins-lsp-4242-a1B2c3"
   */
  static scratchFolder(): string | undefined {
    if (!swept) {
      swept = true
      LspClient.sweepScratch()
    }
    try {
      return fs.mkdtempSync(path.join(os.tmpdir(), `${SCRATCH}${process.pid}-`))
    } catch {
      return undefined
    }
  }

  /**
   * Removes the servers' temporary folders (`scratchFolder`) left by hosts that are gone (killed, so nothing of theirs
   * ran at exit): those of this user whose host process id no longer runs. Called once per process, at the first
   * server start. Returns the names removed.
   *
   * @example
   * LspClient.sweepScratch() // ["opencode-builtins-lsp-4242-a1B2c3"]
   */
  static sweepScratch(dir = os.tmpdir()): string[] {
    const removed: string[] = []
    let names: string[]
    try {
      names = fs.readdirSync(dir)
    } catch {
      return removed
    }
    for (const name of names) {
      const pid = Number(SCRATCH_NAME.exec(name)?.[1])
      if (!pid || pid === process.pid || Pid.running(pid)) continue
      const full = path.join(dir, name)
      try {
        const stat = fs.lstatSync(full)
        if (!stat.isDirectory() || stat.uid !== process.getuid?.()) continue
        fs.rmSync(full, { recursive: true, force: true })
        removed.push(name)
      } catch {
        // Gone meanwhile or not ours to remove.
      }
    }
    return removed
  }

  /** Removes the server's temporary folder (its process has ended or is being killed with its group). */
  private removeScratch() {
    if (!this.scratch) return
    try {
      fs.rmSync(this.scratch, { recursive: true, force: true, maxRetries: 2 })
    } catch {
      // Left for the system to clear; the server is gone either way.
    }
    this.scratch = undefined
  }

  /** The document's current version as last sent, or undefined when it is not open. */
  version(file: string): number | undefined {
    return this.docs.get(file)?.version
  }

  /** The text last sent for an open document. */
  text(file: string): string | undefined {
    return this.docs.get(file)?.text
  }

  /**
   * Makes the server's copy of `file` equal `text`: `didOpen` (version 1) the first time, `didChange` with the next
   * version when the text differs from what was last sent. Returns the version the server now holds.
   */
  async sync(file: string, text: string): Promise<{ version: number; changed: boolean }> {
    if (this.crashed) throw await this.exitedError("opening the file")
    this.alive()
    const uri = pathToFileURL(file).href
    const doc = this.docs.get(file)
    if (doc && doc.text === text) return { version: doc.version, changed: false }
    this.changedAt.set(uri, this.seq)
    if (!doc) {
      const opened = { uri, version: 1, text, languageId: LspServers.languageId(file) }
      this.docs.set(file, opened)
      await this.connection
        .sendNotification("textDocument/didOpen", {
          textDocument: { uri, languageId: opened.languageId, version: 1, text },
        })
        .catch(async (error) => {
          throw this.crashed ? await this.exitedError("opening the file") : error
        })
      return { version: 1, changed: true }
    }
    doc.version += 1
    doc.text = text
    await this.connection
      .sendNotification("textDocument/didChange", {
        textDocument: { uri, version: doc.version },
        contentChanges: [{ text }],
      })
      .catch(async (error) => {
        throw this.crashed ? await this.exitedError("updating the file") : error
      })
    return { version: doc.version, changed: true }
  }

  /** Closes a document opened by `sync` (the project-wide diagnostics close what they opened). */
  async close(file: string): Promise<void> {
    const doc = this.docs.get(file)
    if (!doc || this.dead) return
    this.docs.delete(file)
    this.changedAt.delete(doc.uri)
    this.published.delete(doc.uri)
    this.pullResults.delete(doc.uri)
    await this.connection.sendNotification("textDocument/didClose", { textDocument: { uri: doc.uri } })
  }

  /** True when the server can answer `method` (by its static capabilities or a dynamic registration). */
  supports(capability: keyof ServerCapabilities, method?: string): boolean {
    if (this.capabilities[capability]) return true
    return method ? [...this.registrations.values()].some((r) => r.method === method) : false
  }

  /** A request with a time limit and the caller's abort signal. */
  async request<T>(method: string, params: unknown, options: { timeoutMs?: number; signal?: AbortSignal } = {}) {
    if (this.crashed) throw await this.exitedError(method)
    this.alive()
    const limit = options.timeoutMs ?? LspClient.REQUEST_TIMEOUT_MS
    let timer: ReturnType<typeof setTimeout> | undefined
    const abort = new AbortController()
    const onAbort = () => abort.abort()
    options.signal?.addEventListener("abort", onAbort)
    try {
      return await Promise.race([
        // A request the closing connection rejects ("connection got disposed") waits for how the process ended.
        this.connection.sendRequest<T>(method, params).catch(async (error) => {
          if (this.crashed) throw await this.exitedError(method)
          throw error
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new RequestTimeout(this.id, method, limit)), limit)
          abort.signal.addEventListener("abort", () => reject(new Error("aborted")))
        }),
        new Promise<never>((_, reject) => {
          const wake = () =>
            this.dead &&
            (this.crashed ? this.exitedError(method).then(reject) : reject(new Error(`${this.id}: ${this.dead}`)))
          this.waiters.add(wake)
          abort.signal.addEventListener("abort", () => this.waiters.delete(wake))
          setTimeout(() => this.waiters.delete(wake), limit + 10)
        }),
      ])
    } finally {
      clearTimeout(timer)
      options.signal?.removeEventListener("abort", onAbort)
      abort.abort()
    }
  }

  /**
   * Diagnostics of an open document for the version last sent (call `sync` first). `timeout` when no result for
   * that version came within `timeoutMs`.
   */
  async diagnostics(
    file: string,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<{ status: "ok" | "timeout"; items: Diagnostic[]; via: "tsserver" | "pull" | "push" }> {
    const doc = this.docs.get(file)
    if (!doc) throw new Error(`${file} is not open in ${this.id}`)
    const deadline = performance.now() + options.timeoutMs
    if (this.spec.diagnostics === "tsserver") {
      const items = await this.tsserverDiagnostics(file, options.timeoutMs, options.signal).catch((error) => {
        if (error instanceof RequestTimeout) return "timeout" as const
        if (LspClient.Exited.is(error)) throw error
        this.log.debug?.(`lsp ${this.id}: tsserverRequest failed, using published diagnostics: ${error}`)
        return undefined
      })
      if (items === "timeout") return { status: "timeout", items: [], via: "tsserver" }
      if (items) return { status: "ok", items, via: "tsserver" }
    }
    if (this.supports("diagnosticProvider", "textDocument/diagnostic")) {
      const items = await this.pull(doc.uri, Math.max(1, deadline - performance.now()), options.signal).catch(
        (error) => {
          if (error instanceof RequestTimeout) return "timeout" as const
          if (LspClient.Exited.is(error)) throw error
          this.log.debug?.(`lsp ${this.id}: textDocument/diagnostic failed, waiting for a publish: ${error}`)
          return undefined
        },
      )
      if (items === "timeout") return { status: "timeout", items: [], via: "pull" }
      if (items) return { status: "ok", items, via: "pull" }
    }
    const pullable = () => this.supports("diagnosticProvider", "textDocument/diagnostic")
    const items = await this.waitForPublish(doc.uri, doc.version, deadline, options.signal, pullable)
    // The server registered pull diagnostics while we waited (pyright does so after `initialized`): ask it.
    if (items === "pull")
      return this.diagnostics(file, { ...options, timeoutMs: Math.max(1, deadline - performance.now()) })
    // The server ended while we waited: a crash, not a slow server (it was reported as a timeout to call again).
    if (!items && this.crashed && !options.signal?.aborted) throw await this.exitedError("diagnostics")
    return items ? { status: "ok", items, via: "push" } : { status: "timeout", items: [], via: "push" }
  }

  private async tsserverDiagnostics(file: string, timeoutMs: number, signal?: AbortSignal) {
    const ask = (command: string) =>
      this.request<any>(
        "workspace/executeCommand",
        { command: "typescript.tsserverRequest", arguments: [command, { file }, { executionTarget: 0 }] },
        { timeoutMs, signal },
      )
    const results = await Promise.all(
      ["syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync"].map(ask),
    )
    const items: Diagnostic[] = []
    for (const result of results) {
      const body = result?.body ?? result
      if (!Array.isArray(body)) throw new Error(`unexpected tsserver answer: ${JSON.stringify(result)?.slice(0, 200)}`)
      for (const d of body) items.push(fromTsserver(d))
    }
    return items
  }

  private async pull(uri: string, timeoutMs: number, signal?: AbortSignal): Promise<Diagnostic[]> {
    for (let attempt = 0; ; attempt++) {
      const previous = this.pullResults.get(uri)
      try {
        const report = await this.request<DocumentDiagnosticReport>(
          "textDocument/diagnostic",
          { textDocument: { uri }, previousResultId: previous?.resultId },
          { timeoutMs, signal },
        )
        if (report?.kind === "unchanged") return previous?.items ?? []
        const items = (report as any)?.items ?? []
        this.pullResults.set(uri, { resultId: (report as any)?.resultId, items })
        return items
      } catch (error: any) {
        // ServerCancelled with retriggerRequest: the server asks to be asked again (its state moved on).
        if (error?.code === -32802 && attempt < 5) continue
        throw error
      }
    }
  }

  private waitForPublish(
    uri: string,
    version: number,
    deadline: number,
    signal: AbortSignal | undefined,
    pullable: () => boolean,
  ) {
    const current = () => {
      const hit = this.published.get(uri)
      if (!hit) return undefined
      if (hit.version !== undefined) return hit.version === version ? hit.items : undefined
      return hit.seq > (this.changedAt.get(uri) ?? 0) ? hit.items : undefined
    }
    return new Promise<Diagnostic[] | "pull" | undefined>((resolve) => {
      const finish = (value: Diagnostic[] | "pull" | undefined) => {
        clearTimeout(timer)
        this.waiters.delete(wake)
        signal?.removeEventListener("abort", onAbort)
        resolve(value)
      }
      const wake = () => {
        const items = current()
        if (items) finish(items)
        else if (pullable()) finish("pull")
        else if (this.dead || this.closing) finish(undefined)
      }
      const onAbort = () => finish(undefined)
      const timer = setTimeout(() => finish(undefined), Math.max(0, deadline - performance.now()))
      this.waiters.add(wake)
      signal?.addEventListener("abort", onAbort)
      wake()
    })
  }

  private alive() {
    if (this.dead) throw new Error(`${this.id} is not running: ${this.dead}`)
  }

  /** Polite shutdown (`shutdown` then `exit`, 2 s), then SIGTERM and SIGKILL to the whole process group. */
  async stop(): Promise<void> {
    this.stopping = true
    const proc = this.proc
    const gone = new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) resolve()
      else proc.once("exit", () => resolve())
    })
    if (!this.dead) {
      await Promise.race([
        this.connection
          .sendRequest("shutdown")
          .then(() => this.connection.sendNotification("exit"))
          .catch(() => {}),
        delay(2000),
      ])
    }
    const kill = (signal: NodeJS.Signals) => {
      try {
        if (proc.pid && process.platform !== "win32") process.kill(-proc.pid, signal)
        else proc.kill(signal)
      } catch {}
    }
    if (!(await Promise.race([gone.then(() => true), delay(1000).then(() => false)]))) kill("SIGTERM")
    if (!(await Promise.race([gone.then(() => true), delay(2000).then(() => false)]))) kill("SIGKILL")
    // Helpers of the server (tsserver under typescript-language-server) share its group.
    kill("SIGKILL")
    this.removeScratch()
    this.markDead("stopped")
    this.connection.dispose()
  }

  async [Symbol.asyncDispose]() {
    await this.stop()
  }
}

/** The name of a server's temporary folder starts with this and its host's process id (`LspClient.scratchFolder`). */
const SCRATCH = "opencode-builtins-lsp-"
const SCRATCH_NAME = /^opencode-builtins-lsp-(\d+)-/
let swept = false

export class RequestTimeout extends Error {
  constructor(server: string, method: string, ms: number) {
    super(`${server} did not answer ${method} within ${Math.round(ms / 1000)} s`)
    this.name = "LspRequestTimeout"
  }
}

function delay(ms: number) {
  return new Promise<void>((resolve) => setTimeout(resolve, ms))
}

/** The process ended before `initialize` answered (its message says how). */
class Exited extends Error {}

function section(settings: unknown, name?: string) {
  if (!name) return settings ?? null
  let value: unknown = settings
  for (const key of name.split(".")) {
    if (!value || typeof value !== "object") return null
    value = (value as Record<string, unknown>)[key]
  }
  return value ?? null
}

/** A tsserver diagnostic (1-based line/offset) as an LSP one (0-based, UTF-16). */
function fromTsserver(d: any): Diagnostic {
  const severity = d.category === "error" ? 1 : d.category === "warning" ? 2 : d.category === "suggestion" ? 4 : 3
  const out: Diagnostic = {
    range: {
      start: { line: d.start.line - 1, character: d.start.offset - 1 },
      end: { line: d.end.line - 1, character: d.end.offset - 1 },
    },
    severity: severity as Diagnostic["severity"],
    code: d.code,
    source: d.source ?? "typescript",
    message: typeof d.text === "string" ? d.text : String(d.message ?? ""),
  }
  if (d.reportsUnnecessary) out.tags = [1]
  if (d.reportsDeprecated) out.tags = [...(out.tags ?? []), 2]
  return out
}
