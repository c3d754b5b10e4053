import { createHash } from "crypto"
import fs from "fs/promises"
import path from "path"
import { fileURLToPath, pathToFileURL } from "url"
import z from "zod"
import type {
  CallHierarchyItem,
  Diagnostic,
  Location,
  LocationLink,
  Range,
  TextEdit,
  WorkspaceEdit,
} from "vscode-languageserver-protocol"
import { AstFiles } from "../ast/files"
import type { HostSandbox } from "../host"
import { SecurityOutput } from "../security/output"
import type { SecuritySegments } from "../security/segments"
import { Dependencies } from "../util/dependencies"
import { NamedError } from "../util/error"
import type { Logger } from "../util/log"
import { LspClient, RequestTimeout } from "./client"
import { LspEdit } from "./edit"
import { LspNames } from "./names"
import { LspProjects } from "./projects"
import { LspServers } from "./servers"
import { LspScope } from "./scope"
import { LspText } from "./text"

/**
 * The language servers of one project and the operations over them. Servers start on first use (one per server id
 * and root) and run until `stop`; a server that died is started again on next use. Every file is read from disk
 * (after the `read` access check) and synchronised before the server is asked, so answers are about the content on
 * disk now.
 *
 * @example
 * await using lsp = Lsp.create({ directory: "/repo", worktree: "/repo", log })
 * const report = await lsp.diagnostics({ file: "src/a.ts" })
 * // { status: "ok", files: [{ file: "/repo/src/a.ts", items: [{ code: 2322, … }] }], … }
 */
export namespace Lsp {
  export const SEVERITIES = ["error", "warning", "information", "hint", "all"] as const
  export type Severity = (typeof SEVERITIES)[number]
  export const DIAGNOSTICS_TIMEOUT_MS = 20_000
  /** Project-wide diagnostics look at most this many files. */
  export const MAX_PROJECT_FILES = 500
  /**
   * A rename first searches the server's workspace for files of its language that mention the old name (whole word,
   * ignore files respected, each file through the `read` access check): at most this many files are read…
   */
  export const MAX_SCANNED_FILES = 5000
  /** …none larger than this… */
  export const MAX_SCANNED_BYTES = 1024 * 1024
  /** …and at most this many of those that mention it are opened in the server, so it searches them too. */
  export const MAX_OPENED_MENTIONS = 50
  /**
   * A server that ended (crashed) this many times in a row on a file's same content is not started again for that
   * content (`LspClient.Exited` with `gaveUp`): calling again would only crash it again. A change of the file or of
   * the server's command lets it try again; other files keep using it.
   */
  export const MAX_CRASHES = 2
  /** A rename asks the server's references from at most this many mentions of the old name in stubs (`.pyi`). */
  export const MAX_STUB_QUERIES = 40

  export type Input = LspServers.Context & {
    log: Logger
    /** OpenCode's `lsp` configuration (default: read from its configuration files). */
    config?: unknown
    env?: Record<string, string | undefined>
    access?: (file: string, op: "read" | "write") => Promise<string | undefined>
    /**
     * Marker pairs of protected segments: a file's lines inside one the role may not `read` reach its servers blank
     * (same lines, so every position outside stays), and no edit may change one it may not `write`.
     */
    segments?: () => { read?: SecuritySegments.Pair[]; write: SecuritySegments.Pair[] }
    /**
     * The kernel sandbox servers start in (`Host.sandbox`): a server reads the project by itself (a TypeScript server
     * every file a project or an import names), so under a security policy it runs where protected files are
     * unreadable and protected segments redacted. A server started under other protections is restarted.
     */
    sandbox?: () => Promise<HostSandbox | undefined>
    diagnosticsTimeoutMs?: number
    /** How long a starting server may take to answer `initialize` (default 45 s). */
    initializeTimeoutMs?: number
  }

  export type Position = { file: string; line: number; character: number }

  export type FileDiagnostics = { file: string; server: string; status: "ok" | "timeout"; items: Diagnostic[] }
  export type DiagnosticsReport = {
    /** `timeout` when any file's server gave no result in time: its list is unknown, not empty. */
    status: "ok" | "timeout"
    files: FileDiagnostics[]
    /**
     * Files of the project left out (no server installed, refused by the security policy, not checked because their
     * server gave no result for an earlier file).
     */
    skipped: { file: string; reason: string }[]
    /** Files of the project the security policy keeps from reading: counted, never named. */
    denied?: number
    truncated: boolean
    /**
     * Over `MAX_PROJECT_FILES`: how many files were not checked, and the folders (relative to the project) they are
     * in, most files first, each with its count, so they can be checked folder by folder.
     */
    notChecked?: { files: number; folders: { folder: string; files: number }[] }
  }

  export type RenameCheck =
    { ok: true; range: Range; placeholder: string; server: string } | { ok: false; reason: string; server?: string }

  /** A TypeScript project of the file's solution that was not loaded: results may miss its files. */
  export type NotLoaded = { config: string; reason: string }

  /** A file of the rename's language that still mentions the old name and that the edit did not change. */
  export type Leftover = {
    file: string
    /** 1-based line of its first mention. */
    line: number
    /** False when it was not opened in the server (over `MAX_OPENED_MENTIONS`): the server may not have searched it. */
    opened: boolean
  }

  export type RenameResult = {
    server: string
    /** The name renamed, as the server's prepareRename (or the word at the position) gave it once its project loaded. */
    from: string
    /** Projects of the solution not loaded (see `projects`): files only they hold were not searched. */
    notLoaded?: NotLoaded[]
    /**
     * Files still mentioning the old name (whole word) that the edit did not change: uses the server did not find
     * (a file outside its project it could not resolve), or another symbol of that name, a comment, a string.
     */
    leftovers?: Leftover[]
    /**
     * Files the server's rename left out that its references found (each reference holding exactly the old name): a
     * server renaming only in its configured files (pyright and `include`) while it references the open ones too.
     */
    viaReferences?: { file: string; reason?: string }[]
    /**
     * Stub declarations (`.pyi`) of the renamed symbol the server holds for another symbol (pyright: a package's
     * `__init__.pyi` declaring what its `.py` re-exports): each with the 1-based line its references were asked from;
     * those references were renamed too.
     */
    stubs?: { file: string; line: number }[]
    /** Files of the language not searched for mentions (over `MAX_SCANNED_FILES` or `MAX_SCANNED_BYTES`). */
    unscanned?: number
    files: { file: string; edits: number; renamedFrom?: string; created?: boolean; deleted?: boolean }[]
    edits: number
    /** The symbol already has the new name: nothing was asked of the server and nothing written. */
    unchanged?: true
  }

  export const NotFound = NamedError.create(
    "LspFileNotFound",
    z.object({ file: z.string() }),
    (d) => `File not found: ${d.file}`,
  )
  /** A folder given where the operation needs a file (only diagnostics takes a folder). */
  export const NotAFile = NamedError.create(
    "LspNotAFile",
    z.object({ file: z.string(), operation: z.string() }),
    (d) =>
      `${d.file} is a folder; ${d.operation} needs a file in it` +
      (d.operation === "workspaceSymbol" ? " (any file of the language picks its server)" : "") +
      ". Only diagnostics takes a folder (every file under it).",
  )
  export const Refused = NamedError.create(
    "LspAccessRefused",
    z.object({ file: z.string(), reason: z.string() }),
    (d) => `${d.file} is protected by the security policy: ${d.reason}`,
  )
  /**
   * A rename whose symbol is also declared in a stub (`.pyi`) whose references could not all be established: nothing
   * is written (half a rename breaks the package's import).
   */
  export const StubNotCovered = NamedError.create(
    "LspRenameStubNotCovered",
    z.object({ file: z.string(), from: z.string(), stub: z.string(), server: z.string(), reason: z.string() }),
    (d) =>
      `\`${d.from}\` may also be declared in the stub ${d.stub}, which ${d.server} treats as another symbol, and its ` +
      `uses from there could not be established: ${d.reason}. Nothing was changed (renaming the implementation ` +
      `alone, ${d.file}, would leave the stub and its users with the old name).`,
  )
  export const CannotRename = NamedError.create(
    "LspCannotRename",
    z.object({ file: z.string(), reason: z.string() }),
    (d) => `Cannot rename here (${d.file}): ${d.reason}`,
  )

  export const InvalidName = NamedError.create(
    "LspInvalidNewName",
    z.object({ file: z.string(), newName: z.string(), reason: z.string() }),
    (d) =>
      `The new name ${JSON.stringify(d.newName)} is not a valid name in ${d.file}: ${d.reason}. Nothing was changed; ` +
      "call rename again with a valid identifier.",
  )
  export const RenameRefused = NamedError.create(
    "LspRenameRefused",
    z.object({ file: z.string(), from: z.string(), newName: z.string(), server: z.string(), reason: z.string() }),
    (d) =>
      `${d.server} refused to rename \`${d.from}\` to ${JSON.stringify(d.newName)} (${d.file}): ${d.reason}. The symbol ` +
      "itself can be renamed (prepareRename accepts it): the new name is likely not valid there or clashes with " +
      "another name. Nothing was changed.",
  )
  /** A 1-based line or character outside the file's text (positions are checked before any server is asked). */
  export const BadPosition = NamedError.create(
    "LspPositionOutOfRange",
    z.object({ file: z.string(), line: z.number(), character: z.number(), reason: z.string() }),
    (d) => `No position ${d.line}:${d.character} in ${d.file}: ${d.reason}. Nothing was asked of the server.`,
  )

  export type Service = ReturnType<typeof create>

  const live = new Set<LspClient>()
  let exitHook = false

  /** The operations on a file whose servers' crashes are remembered (see `MAX_CRASHES`). */
  const GUARDED = [
    "hover",
    "definition",
    "implementation",
    "projects",
    "references",
    "documentSymbol",
    "prepareCallHierarchy",
    "calls",
    "prepareRename",
    "rename",
  ] as const

  export function create(input: Input) {
    const directory = path.resolve(input.directory)
    const ctx = { directory, worktree: input.worktree || directory }
    const clients = new Map<string, Promise<LspClient>>()
    /** The sandbox key each server was started under (see `Input.sandbox`). */
    const boxes = new Map<string, string | undefined>()
    /** What was sent to the servers for a file whose protected segments were blanked: that text and the real one. */
    const shownAs = new Map<string, { shown: string; real: string }>()
    const timeoutMs = input.diagnosticsTimeoutMs ?? DIAGNOSTICS_TIMEOUT_MS
    /** Crashes in a row per server and file (`${server}\0${file}`): of which content, under which command. */
    const crashes = new Map<string, { hash: string; command: string; count: number; reason: string; during?: string }>()
    /** A digest of the text last sent to the servers per file (what a crash is remembered against). */
    const sentHash = new Map<string, string>()
    const digest = (text: string) => createHash("sha1").update(text).digest("hex")
    let stopped = false
    if (!exitHook) {
      exitHook = true
      // OpenCode exiting: no time for a polite shutdown; the servers' process groups go with it.
      process.once("exit", () => {
        for (const client of live) client.kill()
      })
    }

    const servers = () => LspServers.resolve({ ...ctx, config: input.config, env: input.env })

    const absolute = (file: string) => path.resolve(directory, file)

    /** The running (or started) clients for `file`; throws the named error when none can serve it. */
    async function clientsFor(file: string, hash?: string): Promise<LspClient[]> {
      if (stopped) throw new Error("the language servers were stopped")
      const resolved = servers()
      if (resolved.disabled) throw new LspServers.Disabled({ source: resolved.disabled })
      const matches = resolved.forFile(file)
      if (!matches.length) throw new LspServers.NotConfigured({ file: rel(file), extension: path.extname(file) })
      // A server that crashed on this content too often is not started (nor sent the file) again.
      for (const { spec, root } of hash ? matches : []) {
        const known = crashes.get(`${spec.id}\0${file}`)
        if (!known || known.hash !== hash || known.count < MAX_CRASHES) continue
        if (spec.find(root, resolved.ctx)?.command.join(" ") !== known.command) continue
        throw new LspClient.Exited({
          server: spec.id,
          reason: known.reason,
          during: known.during,
          file: rel(file),
          crashes: known.count,
          gaveUp: true,
          notStarted: true,
        })
      }
      const out: LspClient[] = []
      let missing: { spec: LspServers.Spec } | undefined
      const box = input.sandbox ? await input.sandbox() : undefined
      for (const { spec, root } of matches) {
        const key = `${spec.id}\0${root}`
        let pending = clients.get(key)
        const existing = pending && (await pending.catch(() => undefined))
        if (existing && !existing.dead && !existing.crashed && boxes.get(key) === box?.key) {
          out.push(existing)
          continue
        }
        // Started under other protections (a file protected since, a segment changed): it may hold what it read then.
        if (existing && !existing.dead && !existing.crashed) {
          clients.delete(key)
          live.delete(existing)
          await existing.stop()
        }
        const launch = spec.find(root, resolved.ctx)
        if (!launch) {
          missing ??= { spec }
          continue
        }
        boxes.set(key, box?.key)
        pending = LspClient.start({
          spec,
          root,
          launch,
          sandbox: box,
          log: input.log,
          initializeTimeoutMs: input.initializeTimeoutMs,
        }).then((client) => {
          live.add(client)
          return client
        })
        clients.set(key, pending)
        try {
          out.push(await pending)
        } catch (error) {
          clients.delete(key)
          // A catalog server whose program runs but is no server (a stand-in such as rustup's proxy): its install hint.
          if (LspClient.StartFailed.is(error) && error.data.exited && LspServers.CATALOG.includes(spec))
            throw new LspClient.StartFailed({ ...error.data, install: spec.install })
          throw error
        }
      }
      if (!out.length && missing)
        throw new LspServers.NotInstalled({ server: missing.spec.id, file: rel(file), install: missing.spec.install })
      return out
    }

    async function read(file: string) {
      const reason = await input.access?.(file, "read")
      if (reason) throw new Refused({ file: rel(file), reason })
      return fs.readFile(file, "utf8").catch((error) => {
        if (error?.code === "EISDIR") throw new NotAFile({ file: rel(file), operation: "this operation" })
        if (error?.code === "ENOENT") throw new NotFound({ file: rel(file) })
        throw error
      })
    }

    /**
     * The text a server gets for `file`: lines inside segments the role may not read are blank (their length kept),
     * so no answer about this file (hover, symbols, diagnostics, a rename's edit) carries them.
     */
    function shown(file: string, real: string) {
      // A leading byte-order mark is not sent, as editors do not: see `LspText`.
      const body = LspText.withoutBom(real)
      const pairs = input.segments?.().read ?? []
      // A file starting with a UTF-16 byte-order mark reads here as two U+FFFD: its segments are judged on its bytes
      // as the security layer judges them (`SecurityOutput.fileRanges`: every line when its decoded text holds one),
      // or the server got the segment, a NUL between its characters.
      const ranges = !pairs.length
        ? []
        : real.startsWith("\uFFFD\uFFFD")
          ? SecurityOutput.fileRanges(file, pairs, "lf")
          : SecurityOutput.lineRanges(body, pairs)
      let text = body
      if (ranges.length) {
        const lines = body.split("\n")
        for (const r of ranges)
          for (let n = r.from; n <= r.to && n <= lines.length; n++) lines[n - 1] = lines[n - 1].replace(/[^\r]/g, " ")
        text = lines.join("\n")
      }
      if (text === real) shownAs.delete(file)
      else shownAs.set(file, { shown: text, real })
      return text
    }

    /** The file's text on disk when `sent` is what the servers were given for it. */
    function realOf(file: string, sent: string) {
      const known = shownAs.get(file)
      return known && known.shown === sent ? known.real : sent
    }

    /**
     * Opens in `client` the files of `answer` that start with a byte-order mark and that it does not hold open (it
     * read them from disk, where servers disagree about the mark: `LspText`), so that asking again gives positions on
     * the text after the mark. Files the policy keeps from reading, or of another language, are left. How many opened.
     */
    async function openMarked(client: LspClient, answer: unknown): Promise<number> {
      let opened = 0
      const extensions = servers().specs.find((s) => s.id === client.id)?.extensions ?? []
      for (const file of LspText.files(answer)) {
        if (client.version(file) !== undefined) continue
        // A file of this server's language, wherever its root (an editor opens such a file in the same server).
        if (!extensions.includes(path.extname(file))) continue
        if (await input.access?.(file, "read")) continue
        if (!(await startsWithBom(file))) continue
        const text = await read(file).catch(() => undefined)
        if (text === undefined) continue
        await client.sync(file, shown(file, text))
        opened++
      }
      return opened
    }

    /**
     * `run` again (at most twice more) while its answer names files with a byte-order mark `clients` did not hold
     * open, after opening them (`openMarked`).
     */
    async function settled<T>(clients: LspClient[], run: () => Promise<T>, answerOf: (r: T) => unknown = (r) => r) {
      for (let round = 0; ; round++) {
        const result = await run()
        if (round >= 2) return result
        let opened = 0
        for (const client of clients) opened += await openMarked(client, answerOf(result))
        if (!opened) return result
      }
    }

    /** Opens or updates `file` in its servers; returns them. `position`: checked against the text first. */
    async function prepare(file: string, position?: Position) {
      const text = await read(file)
      // Positions are checked on the text the server gets (no byte-order mark: columns as an editor shows them).
      if (position) within(rel(file), LspText.withoutBom(text), position)
      const sent = shown(file, text)
      const hash = digest(sent)
      sentHash.set(file, hash)
      const list = await clientsFor(file, hash)
      await Promise.all(list.map((c) => c.sync(file, sent)))
      return { list, text: sent }
    }

    /**
     * A server's crash during an operation on `file`, remembered against the content it was sent: the error again,
     * with how many times in a row it crashed on it and whether it is given up for it (`MAX_CRASHES`).
     */
    function crashed(file: string, error: InstanceType<typeof LspClient.Exited>) {
      const key = `${error.data.server}\0${file}`
      const hash = sentHash.get(file) ?? ""
      const command = error.data.command ?? ""
      const known = crashes.get(key)
      const count = known && known.hash === hash && known.command === command ? known.count + 1 : 1
      crashes.set(key, { hash, command, count, reason: error.data.reason, during: error.data.during })
      return new LspClient.Exited({
        ...error.data,
        file: rel(file),
        crashes: count,
        ...(count >= MAX_CRASHES ? { gaveUp: true } : {}),
      })
    }

    /** Runs an operation on `file`: a crash is remembered (see `crashed`); a success forgets the file's crashes. */
    async function guarded<T>(file: string, run: () => Promise<T>): Promise<T> {
      try {
        const result = await run()
        for (const key of crashes.keys()) if (key.endsWith(`\0${file}`)) crashes.delete(key)
        return result
      } catch (error) {
        if (LspClient.Exited.is(error) && !error.data.gaveUp) throw crashed(file, error)
        throw error
      }
    }

    /** Per TypeScript client: each solution project it loaded and the file opened for it (kept open). */
    const loadedBy = new WeakMap<LspClient, Map<string, string>>()
    /** Per TypeScript client: projects that could not be loaded, and the plan that said so (not retried until it changes). */
    const failedBy = new WeakMap<LspClient, Map<string, { plan: LspProjects.Plan; reason: string }>>()
    const plans = new Map<string, { stamps: [string, number | undefined][]; plan: LspProjects.Plan }>()
    const stamp = (file: string) =>
      fs.stat(file).then(
        (s) => s.mtimeMs,
        () => undefined,
      )

    /** The solution projects of `roots`, re-read when one of their configurations changed. */
    async function planOf(tsserver: string, roots: string[]) {
      const key = `${tsserver}\0${roots.join("\0")}`
      const known = plans.get(key)
      if (known) {
        const now = await Promise.all(known.stamps.map(([f]) => stamp(f)))
        if (known.stamps.every(([, t], i) => t === now[i])) return known.plan
      }
      const plan = await LspProjects.plan(tsserver, roots)
      const configs = [...new Set([...roots, ...plan.configs.map((c) => c.config)])]
      plans.set(key, {
        plan,
        stamps: await Promise.all(configs.map(async (f) => [f, await stamp(f)] as [string, number | undefined])),
      })
      return plan
    }

    /**
     * Makes each TypeScript server of `list` load every project of the solutions `file` belongs to (`LspProjects`):
     * one file of each project not loaded yet is opened and TypeScript's `projectInfo` confirms which project took
     * it. Returns the projects that could not be loaded, with why (their files may be missing from results).
     */
    async function projects(list: LspClient[], file: string, signal?: AbortSignal): Promise<NotLoaded[]> {
      const missing: NotLoaded[] = []
      for (const client of list) {
        const tsserver = client.tsserverPath
        if (!tsserver) continue
        const roots: string[] = []
        for (const root of await LspProjects.roots(file, client.root))
          if (!(await input.access?.(root, "read"))) roots.push(root)
        if (!roots.length) continue
        const plan = await planOf(tsserver, roots).catch((error) => {
          missing.push({
            config: rel(roots[0]),
            reason: `TypeScript's configuration parser failed: ${error?.message ?? error}`,
          })
          return undefined
        })
        if (!plan) continue
        for (const e of plan.errors) missing.push({ config: rel(e.config), reason: e.reason })
        let loaded = loadedBy.get(client)
        if (!loaded) loadedBy.set(client, (loaded = new Map()))
        for (const [config, opened] of loaded) if (client.version(opened) === undefined) loaded.delete(config)
        const info = (f: string) =>
          client
            .tsserverRequest<any>("projectInfo", { file: f, needFileNameList: false }, { signal })
            .then((r) => (typeof r?.configFileName === "string" ? path.resolve(r.configFileName) : undefined))
            .catch(() => undefined)
        let failed = failedBy.get(client)
        if (!failed) failedBy.set(client, (failed = new Map()))
        const own = await info(file)
        let started = 0
        for (const config of plan.configs) {
          if (config.config === own || loaded.has(config.config)) continue
          const before = failed.get(config.config)
          if (before?.plan === plan) {
            missing.push({ config: rel(config.config), reason: before.reason })
            continue
          }
          if (started >= LspProjects.MAX_PROJECTS) {
            missing.push({
              config: rel(config.config),
              reason: `not loaded: at most ${LspProjects.MAX_PROJECTS} projects per call`,
            })
            continue
          }
          started++
          let reason = "none of its files can be read"
          let tried = 0
          for (const candidate of LspProjects.candidates(plan, config)) {
            if (tried >= 3 || signal?.aborted) break
            const text = await read(candidate).catch(() => undefined)
            if (text === undefined) continue
            tried++
            await client.sync(candidate, shown(candidate, text))
            const took = await info(candidate)
            if (took === config.config) {
              loaded.set(config.config, candidate)
              reason = ""
              break
            }
            if (took && took !== own && !loaded.has(took)) loaded.set(took, candidate)
            reason = took
              ? `its files are also in ${rel(took)}, which TypeScript loads for them instead`
              : "TypeScript did not say which project holds its files"
          }
          // A project TypeScript would not load apart, all of whose files loaded projects hold, hides no file.
          const held = new Set(
            plan.configs.filter((c) => c.config === own || loaded.has(c.config)).flatMap((c) => c.files),
          )
          if (reason && config.files.every((f) => held.has(f))) reason = ""
          if (reason) {
            missing.push({ config: rel(config.config), reason })
            if (!signal?.aborted) failed.set(config.config, { plan, reason })
          }
        }
      }
      return missing
    }

    /**
     * Files of `client`'s language under its root that mention `name` as a whole word (what the server is given of
     * them: read-protected segments blank), with the 1-based line of the first mention. A TypeScript server searches
     * only the projects it has loaded (a file outside `tsconfig.json`'s `include`, or every file of a JavaScript
     * project without one, is loaded only when it or a file importing it is open); pyright only the files its
     * configuration includes and the open ones. Opening these makes them part of the search (see `rename`).
     */
    async function mentions(client: LspClient, name: string, signal?: AbortSignal) {
      const spec = servers().specs.find((s) => s.id === client.id)
      const out = { files: [] as { file: string; line: number }[], unscanned: 0 }
      if (!spec) return out
      const found = await AstFiles.collect({
        directory: client.root,
        extensions: spec.extensions.map((e) => e.slice(1)),
        maxFileBytes: MAX_SCANNED_BYTES,
        access: input.access ? (f) => input.access!(f, "read") : undefined,
        signal,
        // An installed package (a virtual environment no ignore file names) is no use of the project's symbol.
        skipDependencies: true,
      }).catch(() => undefined)
      if (!found) return out
      out.unscanned = found.tooLarge.length + Math.max(0, found.files.length - MAX_SCANNED_FILES)
      const pattern = mentionPattern(name)
      const files = found.files.slice(0, MAX_SCANNED_FILES)
      for (let i = 0; i < files.length && !signal?.aborted; i += 32) {
        const batch = await Promise.all(
          files.slice(i, i + 32).map(async (file) => {
            const text = await fs.readFile(file, "utf8").catch(() => undefined)
            if (text === undefined || !text.includes(name)) return undefined
            const line = firstLine(shown(file, text), pattern)
            return line ? { file, line } : undefined
          }),
        )
        for (const hit of batch) if (hit) out.files.push(hit)
      }
      return out
    }

    /**
     * The folders holding `files`, relative to the project, most files first: the first level below `top` that splits
     * them into several folders (at most 3 levels down), each with its count.
     */
    function folders(files: string[], top: string): { folder: string; files: number }[] {
      let groups = new Map<string, number>()
      for (let depth = 1; depth <= 3; depth++) {
        groups = new Map()
        for (const file of files) {
          const parts = path.relative(top, path.dirname(file)).split(path.sep).filter(Boolean)
          const folder = rel(path.join(top, ...parts.slice(0, depth))) || "."
          groups.set(folder, (groups.get(folder) ?? 0) + 1)
        }
        if (groups.size > 1) break
      }
      return [...groups].map(([folder, n]) => ({ folder, files: n })).sort((a, b) => b.files - a.files)
    }

    function rel(file: string) {
      const r = path.relative(directory, file)
      return r && !r.startsWith("..") && !path.isAbsolute(r) ? r : file
    }

    function at(p: Position) {
      return { textDocument: { uri: pathToFileURL(p.file).href }, position: { line: p.line, character: p.character } }
    }

    async function ask<T>(p: Position, capability: string, method: string, params: unknown, signal?: AbortSignal) {
      const { list } = await prepare(p.file, p)
      const able = list.filter((c) => c.supports(capability as any, method))
      if (!able.length) throw new Error(`${list.map((c) => c.id).join(", ")} cannot answer ${method}`)
      return Promise.all(
        able.map((c) =>
          settled([c], () => c.request<T>(method, params, { signal })).then((r) => ({ server: c.id, r })),
        ),
      )
    }

    /** `configs`: collects the TypeScript configuration each file's project comes from, with its client. */
    async function diagnosticsOf(
      file: string,
      severity: Severity,
      signal?: AbortSignal,
      keepOpen = true,
      configs?: Map<string, LspClient>,
    ) {
      const { list, text } = await prepare(file)
      const out: FileDiagnostics[] = []
      for (const client of list) {
        const wasOpen = client.version(file) !== undefined
        await client.sync(file, text)
        const result = await client.diagnostics(file, { timeoutMs, signal })
        out.push({ file, server: client.id, status: result.status, items: filter(result.items, severity) })
        if (configs && client.tsserverPath) {
          const config = await client
            .tsserverRequest<any>("projectInfo", { file, needFileNameList: false }, { signal })
            .then((r) => (typeof r?.configFileName === "string" ? r.configFileName : undefined))
            .catch(() => undefined)
          // An inferred project (no configuration) is named `/dev/null/inferredProject1*`.
          if (config && config.endsWith(".json") && path.isAbsolute(config) && !configs.has(path.resolve(config)))
            configs.set(path.resolve(config), client)
        }
        if (!keepOpen && !wasOpen) await client.close(file)
      }
      return out
    }

    /**
     * The errors of the configurations in `configs` themselves (`LspProjects.configDiagnostics`), one entry per file
     * that has some: a broken `tsconfig.json` is what to fix first, not the errors it causes in every file.
     */
    async function configErrors(configs: Map<string, LspClient>, severity: Severity): Promise<FileDiagnostics[]> {
      const out: FileDiagnostics[] = []
      for (const [config, client] of configs) {
        if (await input.access?.(config, "read")) continue
        const found = await LspProjects.configDiagnostics(client.tsserverPath!, config).catch((error) => {
          input.log.debug?.(`lsp: the configuration ${config} could not be checked: ${error}`)
          return undefined
        })
        for (const [file, items] of found ?? []) {
          const kept = filter(items, severity)
          if (kept.length && !out.some((o) => o.file === file))
            out.push({ file, server: client.id, status: "ok", items: kept })
        }
      }
      return out
    }

    const api = {
      directory,
      /** The running clients (for the benchmark and tests). */
      async running() {
        const out: LspClient[] = []
        for (const pending of clients.values()) {
          const client = await pending.catch(() => undefined)
          if (client && !client.dead) out.push(client)
        }
        return out
      },
      clientsFor: (file: string) => clientsFor(absolute(file)),

      /**
       * Diagnostics of a file, or of every file under a folder (the whole project when `file` is omitted), at least
       * as severe as `severity` (`all` and `hint`: everything).
       */
      async diagnostics(options: { file?: string; severity?: Severity; signal?: AbortSignal }) {
        const severity = options.severity ?? "all"
        const target = absolute(options.file ?? ".")
        const stat = await fs.stat(target).catch(() => undefined)
        if (!stat) throw new NotFound({ file: rel(target) })
        const report: DiagnosticsReport = { status: "ok", files: [], skipped: [], truncated: false }
        const configs = new Map<string, LspClient>()
        if (stat.isFile()) {
          report.files = await guarded(target, () => diagnosticsOf(target, severity, options.signal, true, configs))
        } else {
          const resolved = servers()
          if (resolved.disabled) throw new LspServers.Disabled({ source: resolved.disabled })
          const extensions = [...new Set(resolved.specs.flatMap((s) => s.extensions.map((e) => e.slice(1))))]
          const found = await AstFiles.collect({
            directory,
            paths: [target],
            extensions,
            access: input.access ? (f) => input.access!(f, "read") : undefined,
            signal: options.signal,
            // Installed packages are not the project's code, ignore files or not (a `.venv` sorts before `src`).
            skipDependencies: true,
          })
          report.denied = found.denied.length
          const files = found.files.slice(0, MAX_PROJECT_FILES)
          report.truncated = found.files.length > files.length
          if (report.truncated) {
            const left = found.files.slice(MAX_PROJECT_FILES)
            report.notChecked = { files: left.length, folders: folders(left, target) }
          }
          // A server that gave no result for one file is not waited for again in this run (a silent server would
          // otherwise cost the full wait per file): its other files are listed as not checked, and the status says
          // timeout.
          const silent = new Set<string>()
          // A server that could not start is not started again in this run: its files are listed as not checked,
          // with its error once (the other languages' results stand).
          const broken = new Map<string, string>()
          /** Files each server crashed on in this run. */
          const crashedOn = new Map<string, number>()
          let unchecked = false
          for (const file of files) {
            if (options.signal?.aborted) break
            const ids = resolved.forFile(file).map((m) => m.spec.id)
            const failed = ids.find((id) => broken.has(id))
            if (failed) {
              report.skipped.push({ file, reason: broken.get(failed)! })
              continue
            }
            if (ids.length && ids.every((id) => silent.has(id))) {
              report.skipped.push({ file, reason: `not checked: ${ids.join(", ")} gave no result for an earlier file` })
              unchecked = true
              continue
            }
            try {
              const results = await guarded(file, () => diagnosticsOf(file, severity, options.signal, false, configs))
              for (const r of results) if (r.status === "timeout") silent.add(r.server)
              report.files.push(...results)
            } catch (error) {
              if (LspClient.Exited.is(error)) {
                // A crash on one file: that file is not checked; a server crashing on several is not restarted for
                // the rest of this run (its files listed as not checked).
                report.skipped.push({ file, reason: error.message })
                // A file it is given up for (crashed on in earlier calls) was not started for: no restart to spare.
                const n = (crashedOn.get(error.data.server) ?? 0) + (error.data.notStarted ? 0 : 1)
                crashedOn.set(error.data.server, n)
                if (n >= MAX_CRASHES)
                  broken.set(
                    error.data.server,
                    `not checked: ${error.data.server} ended (crashed) on ${n} files of this run before it; ` +
                      "check them one at a time (filePath) or fix the server",
                  )
              } else if (LspServers.NotInstalled.is(error) || LspServers.NotConfigured.is(error))
                report.skipped.push({ file, reason: skipReason(error, file) })
              else if (LspClient.StartFailed.is(error)) {
                broken.set(error.data.server, error.message)
                report.skipped.push({ file, reason: error.message })
              } else throw error
            }
          }
          if (unchecked) report.status = "timeout"
        }
        // The configurations' own errors come first: the agent fixes the configuration, not the code.
        report.files = [...(await configErrors(configs, severity)), ...report.files]
        if (report.files.some((f) => f.status === "timeout")) report.status = "timeout"
        return report
      },

      async hover(p: Position, signal?: AbortSignal) {
        p = { ...p, file: absolute(p.file) }
        return ask<any>(p, "hoverProvider", "textDocument/hover", at(p), signal)
      },
      async definition(p: Position, signal?: AbortSignal) {
        p = { ...p, file: absolute(p.file) }
        return locations(await ask<any>(p, "definitionProvider", "textDocument/definition", at(p), signal))
      },
      async implementation(p: Position, signal?: AbortSignal) {
        p = { ...p, file: absolute(p.file) }
        await projects((await prepare(p.file, p)).list, p.file, signal)
        return locations(await ask<any>(p, "implementationProvider", "textDocument/implementation", at(p), signal))
      },
      /**
       * Loads every project of the TypeScript solutions `file` belongs to into its server (references, renames,
       * implementations and incoming calls need them all; TypeScript loads them lazily). The projects that could not
       * be loaded, with why. The operations below call it themselves; a caller reports what it returns.
       */
      async projects(file: string, signal?: AbortSignal) {
        file = absolute(file)
        const { list } = await prepare(file)
        return projects(list, file, signal)
      },
      async references(p: Position, signal?: AbortSignal) {
        p = { ...p, file: absolute(p.file) }
        const { list, text } = await prepare(p.file, p)
        await projects(list, p.file, signal)
        // As for a rename: the files mentioning the name are opened, so files outside the server's projects count.
        const word = wordAt(text, p.line, p.character)
        const opened: [LspClient, string][] = []
        try {
          const mentioned = new Map<LspClient, { file: string }[]>()
          if (word)
            for (const client of list.filter((c) => c.supports("referencesProvider", "textDocument/references"))) {
              const found = await mentions(client, word.text, signal)
              mentioned.set(client, found.files)
              for (const file of await openMentions(client, found.files, signal)) opened.push([client, file])
            }
          const params = { ...at(p), context: { includeDeclaration: true } }
          const found = locations(await ask<any>(p, "referencesProvider", "textDocument/references", params, signal))
          // As for a rename: the uses only a stub declaration of the symbol leads to (`stubUses`); what cannot be
          // established is left out (a list of places, not an edit).
          for (const [client, files] of mentioned) {
            const stubsOpened: string[] = []
            const uses = await stubUses(client, p.file, found, files, stubsOpened, word!.text, signal)
              .catch((error) => {
                if (signal?.aborted) throw error
                return undefined
              })
              .finally(() => {
                for (const file of stubsOpened) opened.push([client, file])
              })
            found.push(...(uses?.places ?? []))
          }
          return found
        } finally {
          for (const [client, file] of opened) await client.close(file).catch(() => {})
        }
      },
      async documentSymbol(file: string, signal?: AbortSignal) {
        file = absolute(file)
        const p = { file, line: 0, character: 0 }
        const params = { textDocument: { uri: pathToFileURL(file).href } }
        const results = await ask<any[]>(p, "documentSymbolProvider", "textDocument/documentSymbol", params, signal)
        return results.flatMap((x) => x.r ?? [])
      },
      async workspaceSymbol(query: string, file: string | undefined, signal?: AbortSignal) {
        let list: LspClient[]
        if (file) {
          list = (await prepare(absolute(file))).list
          await projects(list, absolute(file), signal)
        } else {
          list = await this.running()
          if (!list.length)
            throw new Error("no language server is running yet: give filePath (any file of the language) to start one")
        }
        const able = list.filter((c) => c.supports("workspaceSymbolProvider", "workspace/symbol"))
        const results = await Promise.all(
          able.map((c) =>
            settled([c], () => c.request<any[]>("workspace/symbol", { query }, { signal })).then((r) => r ?? []),
          ),
        )
        return results.flat()
      },
      async prepareCallHierarchy(p: Position, signal?: AbortSignal) {
        p = { ...p, file: absolute(p.file) }
        const results = await ask<CallHierarchyItem[] | null>(
          p,
          "callHierarchyProvider",
          "textDocument/prepareCallHierarchy",
          at(p),
          signal,
        )
        return results.flatMap((x) => x.r ?? [])
      },
      async calls(p: Position, direction: "incoming" | "outgoing", signal?: AbortSignal) {
        p = { ...p, file: absolute(p.file) }
        const { list } = await prepare(p.file, p)
        if (direction === "incoming") await projects(list, p.file, signal)
        const out: any[] = []
        for (const client of list.filter((c) =>
          c.supports("callHierarchyProvider", "textDocument/prepareCallHierarchy"),
        )) {
          const items = await client.request<CallHierarchyItem[] | null>("textDocument/prepareCallHierarchy", at(p), {
            signal,
          })
          if (!items?.length) continue
          const calls = await settled([client], () =>
            client.request<any[] | null>(`callHierarchy/${direction}Calls`, { item: items[0] }, { signal }),
          )
          out.push(...(calls ?? []))
        }
        return out
      },

      /** Throws `InvalidName` when `newName` is no name in `file`'s language (`LspNames`); no server is asked. */
      checkName(file: string, newName: string) {
        const invalid = LspNames.check(file, newName)
        if (invalid) throw new InvalidName({ file: rel(absolute(file)), newName, reason: invalid })
      },

      /** Whether the symbol at `p` can be renamed: its range and current name, or why not (never throws for that). */
      async prepareRename(p: Position, signal?: AbortSignal): Promise<RenameCheck> {
        p = { ...p, file: absolute(p.file) }
        const { list, text } = await prepare(p.file, p)
        const client = list.find((c) => c.supports("renameProvider", "textDocument/rename"))
        if (!client) return { ok: false, reason: `${list.map((c) => c.id).join(", ")} cannot rename` }
        return stubbed(client, p, text, await check(client, p, text, signal), signal)
      },

      /**
       * Renames the symbol at `p` across the workspace and applies the server's edit atomically (see `LspEdit`).
       * `confirm` runs with the planned files before anything is written (the tool asks OpenCode's edit permission).
       */
      async rename(
        p: Position,
        newName: string,
        options: { signal?: AbortSignal; confirm?: (files: string[]) => Promise<void> } = {},
      ): Promise<RenameResult> {
        p = { ...p, file: absolute(p.file) }
        // The new name first: a server writes whatever it is given (a keyword, `a b`, `x; y()`) into every file.
        this.checkName(p.file, newName)
        const { list, text } = await prepare(p.file, p)
        const client = list.find((c) => c.supports("renameProvider", "textDocument/rename"))
        if (!client)
          throw new CannotRename({ file: rel(p.file), reason: `${list.map((c) => c.id).join(", ")} cannot rename` })
        // Documents the server holds open are brought up to date first, so its edit is computed on disk content.
        for (const file of client.openFiles()) {
          if (file === p.file) continue
          const current = await fs.readFile(file, "utf8").catch(() => undefined)
          if (current === undefined) await client.close(file)
          else await client.sync(file, shown(file, current))
        }
        const notLoaded = await projects([client], p.file, options.signal)
        const checked = await stubbed(client, p, text, await check(client, p, text, options.signal), options.signal)
        if (!checked.ok) throw new CannotRename({ file: rel(p.file), reason: checked.reason })
        // Already the new name (a rename repeated after it succeeded): nothing to do, and no file mentioning the name
        // is one the rename "left out".
        if (checked.placeholder === newName)
          return { server: client.id, from: checked.placeholder, unchanged: true, files: [], edits: 0 }
        // The files that mention the name are opened, so the server searches them even when no project of its holds
        // them (a JavaScript project without jsconfig.json, tests outside tsconfig.json's or pyright's `include`).
        const mentioned = await mentions(client, checked.placeholder, options.signal)
        const opened: string[] = []
        try {
          opened.push(...(await openMentions(client, mentioned.files, options.signal)))
          return await renameWith(client, p, newName, checked, notLoaded, mentioned, opened, options)
        } finally {
          // Closed again (what `projects` opened stays open): the server's copies follow the disk meanwhile.
          for (const file of opened) await client.close(file).catch(() => {})
        }
      },

      /** Stops every server (polite shutdown, then the process groups are killed). */
      async stop() {
        stopped = true
        const all = [...clients.values()]
        clients.clear()
        await Promise.all(
          all.map(async (pending) => {
            const client = await pending.catch(() => undefined)
            if (!client) return
            await client.stop()
            live.delete(client)
          }),
        )
      },
      async [Symbol.asyncDispose]() {
        await this.stop()
      },
    }
    // Each operation on a file remembers a server's crash on it (see `guarded`).
    for (const name of GUARDED) {
      const run = api[name] as (...args: any[]) => Promise<unknown>
      ;(api as any)[name] = (...args: any[]) => {
        const first = args[0] as string | Position
        return guarded(absolute(typeof first === "string" ? first : first.file), () => run.apply(api, args))
      }
    }
    return api

    /**
     * Adds to `edit` the references the server finds in `opened` files its rename left out, each a range holding
     * exactly `from`; returns those files. pyright renames only in the files its configuration includes (a test folder
     * outside `include` is not), though its references cover the open files too.
     */
    async function viaReferences(
      client: LspClient,
      p: Position,
      edit: WorkspaceEdit,
      opened: string[],
      from: string,
      newName: string,
      signal?: AbortSignal,
    ): Promise<{ file: string; reason?: string }[]> {
      if (!opened.length || !client.supports("referencesProvider", "textDocument/references")) return []
      const uris: string[] = Object.keys(edit.changes ?? {})
      for (const change of edit.documentChanges ?? []) {
        if ("textDocument" in change) uris.push(change.textDocument.uri)
        else if ("uri" in change) uris.push(change.uri)
        else if ("kind" in change && change.kind === "rename") uris.push(change.oldUri, change.newUri)
      }
      const named = new Set(uris.filter((u) => u.startsWith("file:")).map((u) => fileURLToPath(u)))
      const open = new Set(opened)
      const found = await client
        .request<any>("textDocument/references", { ...at(p), context: { includeDeclaration: true } }, { signal })
        .catch(() => null)
      const edits = new Map<string, TextEdit[]>()
      for (const ref of locations([{ server: client.id, r: found }])) {
        const text = client.text(ref.file)
        if (!open.has(ref.file) || named.has(ref.file) || text === undefined || slice(text, ref.range) !== from)
          continue
        const list = edits.get(ref.file) ?? []
        list.push({ range: ref.range, newText: newName })
        edits.set(ref.file, list)
      }
      for (const [file, list] of edits) {
        const uri = pathToFileURL(file).href
        if (edit.documentChanges)
          edit.documentChanges.push({ textDocument: { uri, version: client.version(file) ?? null }, edits: list })
        else edit.changes = { ...edit.changes, [uri]: list }
      }
      return Promise.all(
        [...edits.keys()].map(async (file) => {
          const reason = await LspScope.excludedBy(client.id, client.root, file)
          return reason ? { file, reason } : { file }
        }),
      )
    }

    /**
     * A refused rename (`check`) of a symbol declared in a stub (`.pyi`): the reason says so, and where to start the
     * rename instead, its implementation (the rename from there includes the stub and its uses: `withStubs`). pyright
     * refuses a symbol declared in a stub it does not count as the project's code (attrs: `resolve_types` from a test,
     * its stub outside `[tool.pyright]`'s `include`), with no reason given.
     */
    async function stubbed(
      client: LspClient,
      p: Position,
      text: string,
      checked: RenameCheck,
      signal?: AbortSignal,
    ): Promise<RenameCheck> {
      if (checked.ok || !client.supports("definitionProvider", "textDocument/definition")) return checked
      const word = wordAt(text, p.line, p.character)
      if (!word) return checked
      const answer = await client.request<any>("textDocument/definition", at(p), { signal }).catch(() => null)
      const found = locations([{ server: client.id, r: answer }])
      // The project's own stubs: a library's or the server's bundled ones (typeshed's `builtins.pyi` for `int`) are not
      // the project's to rename.
      const stubs: typeof found = []
      for (const l of found) if (l.file.endsWith(".pyi") && (await projectFile(client.root, l.file))) stubs.push(l)
      if (!stubs.length) return checked
      const place = (l: { file: string; range: Range }) =>
        `${rel(l.file)}:${l.range.start.line + 1}:${l.range.start.character + 1}`
      const stub = stubs.map(place).join(", ")
      let implementation: (typeof found)[number] | undefined
      for (const l of found)
        if (!implementation && !l.file.endsWith(".pyi") && (await projectFile(client.root, l.file))) implementation = l
      return {
        ...checked,
        reason:
          `${checked.reason}: \`${word.text}\` is declared in the stub ${stub}` +
          (implementation
            ? `; start the rename at its implementation, ${place(implementation)} (the rename there includes the ` +
              "stub and its uses)"
            : "; no implementation of it was found to start the rename from: rename it by hand"),
      }
    }

    /**
     * Adds to `edit` the uses of the symbol's stub declarations (`stubUses`), returning where each stub was asked
     * from. pyright holds a declaration in a `.pyi` (a package's `__init__.pyi` declaring what its `__init__.py`
     * re-exports from `_funcs.py`) for another symbol than the implementation: a rename from the implementation left
     * the stub and every use typed through it (attrs: 3 of 39 places), and pyright refuses a rename from those. When
     * the uses cannot be established `StubNotCovered` is thrown: nothing written. Stubs opened here are pushed to
     * `opened` (the caller closes them after the edit).
     */
    async function withStubs(
      client: LspClient,
      p: Position,
      edit: WorkspaceEdit,
      mentioned: { file: string }[],
      opened: string[],
      from: string,
      newName: string,
      signal?: AbortSignal,
    ): Promise<{ file: string; line: number }[]> {
      const { lists: existing, places } = textEdits(edit)
      const known = places.map((place) => ({ file: place.file, range: place.edit.range }))
      const uses = await stubUses(client, p.file, known, mentioned, opened, from, signal)
      for (const use of uses.places) {
        const add = { range: use.range, newText: newName }
        const list = existing.get(use.file)
        if (list) {
          list.push(add)
          continue
        }
        const uri = pathToFileURL(use.file).href
        const fresh = [add]
        if (edit.documentChanges)
          edit.documentChanges.push({ textDocument: { uri, version: client.version(use.file) ?? null }, edits: fresh })
        else edit.changes = { ...edit.changes, [uri]: fresh }
        existing.set(use.file, fresh)
      }
      return uses.stubs
    }

    /**
     * The places of the symbol known at `known` (a rename's edit, a findReferences answer) that only its stub
     * declarations lead to, each holding exactly `from` and none of `known`; and where each stub was asked from. The
     * candidates are the `.pyi` files of `mentioned` and the `.pyi` beside `start` and each `.py` of `known`; at every
     * whole-word mention in them not known yet the server's references are asked: an answer holding a known place is
     * the same symbol (its places are taken), another answer a different symbol (left alone). Throws `StubNotCovered`
     * when that cannot be established (no references, a failed request, over `MAX_STUB_QUERIES` mentions, a use's file
     * unreadable). Stubs opened here are pushed to `opened` (the caller closes them).
     */
    async function stubUses(
      client: LspClient,
      start: string,
      known: { file: string; range: Range }[],
      mentioned: { file: string }[],
      opened: string[],
      from: string,
      signal?: AbortSignal,
    ) {
      const out = { stubs: [] as { file: string; line: number }[], places: [] as { file: string; range: Range }[] }
      const candidates = new Set(mentioned.map((m) => m.file).filter((f) => f.endsWith(".pyi")))
      for (const file of new Set([start, ...known.map((k) => k.file)]))
        if (file.endsWith(".py") && (await isFile(file + "i"))) candidates.add(file + "i")
      if (!candidates.size || !known.length) return out
      const key = (file: string, at: { line: number; character: number }) => `${file}\0${at.line}:${at.character}`
      /** Places of the symbol, and of other symbols a stub's mention turned out to be. */
      const covered = new Set(known.map((k) => key(k.file, k.range.start)))
      const unrelated = new Set<string>()
      let asked = 0
      for (const stub of [...candidates].sort()) {
        if (await input.access?.(stub, "read")) continue
        const real = await fs.readFile(stub, "utf8").catch(() => undefined)
        if (real === undefined) continue
        let text = client.text(stub)
        if (text === undefined) {
          text = shown(stub, real)
          await client.sync(stub, text)
          opened.push(stub)
        }
        const notCovered = (reason: string) =>
          new StubNotCovered({ file: rel(start), from, stub: rel(stub), server: client.id, reason })
        const lines = text.split(/\r\n|\r|\n/)
        const pattern = new RegExp(mentionPattern(from).source, "gu")
        for (let line = 0; line < lines.length; line++) {
          for (const match of lines[line].matchAll(pattern)) {
            const at = { line, character: match.index! }
            if (covered.has(key(stub, at)) || unrelated.has(key(stub, at))) continue
            if (!client.supports("referencesProvider", "textDocument/references"))
              throw notCovered(`${client.id} cannot list references`)
            if (++asked > MAX_STUB_QUERIES)
              throw notCovered(`over ${MAX_STUB_QUERIES} mentions in stubs to check; rename by hand`)
            const answer = await client
              .request<any>(
                "textDocument/references",
                {
                  textDocument: { uri: pathToFileURL(stub).href },
                  position: at,
                  context: { includeDeclaration: true },
                },
                { signal },
              )
              .catch((error) => {
                if (signal?.aborted) throw error
                throw notCovered(`the server's references from line ${line + 1} failed (${error?.message ?? error})`)
              })
            const refs = locations([{ server: client.id, r: answer }])
            if (!refs.some((r) => covered.has(key(r.file, r.range.start)))) {
              unrelated.add(key(stub, at))
              for (const r of refs) unrelated.add(key(r.file, r.range.start))
              continue
            }
            if (!out.stubs.some((f) => f.file === stub)) out.stubs.push({ file: stub, line: line + 1 })
            for (const ref of refs) {
              const k = key(ref.file, ref.range.start)
              if (covered.has(k)) continue
              covered.add(k)
              // An installed copy of the package (site-packages, a virtual environment) is no use of the project's
              // symbol (pyright's references from attrs' stub named its installed copy once); a file the policy keeps
              // from reading is neither edited nor named (as in the mention search).
              if (!(await ownCode(client.root, ref.file))) continue
              if (await input.access?.(ref.file, "read")) continue
              let held = client.text(ref.file)
              if (held === undefined) {
                const disk = await fs.readFile(ref.file, "utf8").catch(() => undefined)
                if (disk === undefined) throw notCovered(`${rel(ref.file)}, one of its uses, could not be read`)
                held = shown(ref.file, disk)
              }
              if (slice(held, ref.range) === from) out.places.push(ref)
            }
          }
        }
      }
      return out
    }

    /**
     * Each file's text edits in `edit` (the first entry's array itself: what is pushed to it is in the edit), and the
     * places of every text edit.
     */
    function textEdits(edit: WorkspaceEdit) {
      const lists = new Map<string, TextEdit[]>()
      const places: { file: string; edit: TextEdit }[] = []
      const entries: [string, TextEdit[]][] = Object.entries(edit.changes ?? {})
      for (const change of edit.documentChanges ?? [])
        if ("textDocument" in change) entries.push([change.textDocument.uri, change.edits as TextEdit[]])
      for (const [uri, list] of entries) {
        if (!uri.startsWith("file:")) continue
        const file = fileURLToPath(uri)
        if (!lists.has(file)) lists.set(file, list)
        for (const e of list) places.push({ file, edit: e })
      }
      return { lists, places }
    }

    /**
     * Opens in `client` up to `MAX_OPENED_MENTIONS` of `files` it does not hold open yet (each through the `read`
     * check, segments blank); returns them, for the caller to close.
     */
    async function openMentions(client: LspClient, files: { file: string }[], signal?: AbortSignal) {
      const opened: string[] = []
      for (const { file } of files) {
        if (opened.length >= MAX_OPENED_MENTIONS || signal?.aborted) break
        if (client.version(file) !== undefined) continue
        const content = await read(file).catch(() => undefined)
        if (content === undefined) continue
        await client.sync(file, shown(file, content))
        opened.push(file)
      }
      return opened
    }

    /** The rename itself, once the server holds every file it should search (see `rename`). */
    async function renameWith(
      client: LspClient,
      p: Position,
      newName: string,
      checked: Extract<RenameCheck, { ok: true }>,
      notLoaded: NotLoaded[],
      mentioned: { files: { file: string; line: number }[]; unscanned: number },
      opened: string[],
      options: { signal?: AbortSignal; confirm?: (files: string[]) => Promise<void> },
    ): Promise<RenameResult> {
      let sent = Date.now()
      let held = new Map<string, string>()
      // The symbol passed prepareRename: a refusal from here on is about the new name, not the element.
      const refused = (reason: string) =>
        new RenameRefused({ file: rel(p.file), from: checked.placeholder, newName, server: client.id, reason })
      // Asked again after opening the files with a byte-order mark it edits unopened (`settled`): its positions in
      // them are then on the text after the mark, where `LspEdit` applies them.
      const edit = await settled([client], async () => {
        sent = Date.now()
        held = new Map(client.openFiles().map((f) => [f, realOf(f, client.text(f)!)]))
        return client
          .request<WorkspaceEdit | null>("textDocument/rename", { ...at(p), newName }, { signal: options.signal })
          .catch((error) => {
            if (options.signal?.aborted || error instanceof RequestTimeout) throw error
            throw refused(String(error?.message ?? error).replace(/^Request \S+ failed with message: /, ""))
          })
      })
      if (!edit || (!edit.documentChanges?.length && !Object.keys(edit.changes ?? {}).length))
        throw refused("it returned no edit")
      // Still a file with a mark the server did not hold (it could not be read, or a third answer named more):
      // where its positions start is unknown, so nothing is written.
      for (const file of LspText.files(edit)) {
        if (client.version(file) === undefined && (await startsWithBom(file)))
          throw new LspEdit.Refused({
            file,
            reason: "it starts with a byte-order mark and the server edited it without having been sent it",
          })
      }
      const added = await viaReferences(client, p, edit, opened, checked.placeholder, newName, options.signal)
      const stubs = await withStubs(
        client,
        p,
        edit,
        mentioned.files,
        opened,
        checked.placeholder,
        newName,
        options.signal,
      )
      const plan = await LspEdit.plan(edit, {
        access: input.access,
        segments: input.segments?.(),
        expect: (file) => held.get(file),
        version: (file) => client.version(file),
      })
      // Files the server read from disk itself: changed on disk after the request was sent → refused.
      for (const change of plan.files) {
        if (held.has(change.file) || change.before === undefined) continue
        const stat = await fs.stat(change.file).catch(() => undefined)
        if (stat && stat.mtimeMs > sent)
          throw new LspEdit.Refused({ file: change.file, reason: "it changed since the request was sent" })
      }
      await options.confirm?.(plan.files.map((f) => f.file))
      // Checked again: a command may have run while the user answered the permission prompt (a folder made a link).
      for (const change of plan.files) {
        const reason = await input.access?.(change.file, "write")
        if (reason) throw new LspEdit.Refused({ file: change.file, reason })
      }
      await LspEdit.apply(plan)
      // The server's copies follow the disk: edited documents get their new text, removed ones are closed.
      for (const change of plan.files) {
        if (client.version(change.file) === undefined) continue
        if (change.after === undefined) await client.close(change.file)
        else await client.sync(change.file, shown(change.file, change.after))
      }
      await client
        .notify("workspace/didChangeWatchedFiles", {
          changes: plan.files.map((f) => ({
            uri: pathToFileURL(f.file).href,
            type: f.before === undefined ? 1 : f.after === undefined ? 3 : 2,
          })),
        })
        .catch(() => {})
      // Every file that mentioned the name and that the edit left alone: a use the server did not find, or another
      // symbol of that name (the caller is told which; never "all files were written" over them unsaid).
      const changed = new Set(plan.files.flatMap((f) => [f.file, ...(f.renamedFrom ? [f.renamedFrom] : [])]))
      const pattern = mentionPattern(checked.placeholder)
      const leftovers: Leftover[] = []
      for (const { file } of mentioned.files) {
        if (changed.has(file)) continue
        const now = await fs.readFile(file, "utf8").catch(() => undefined)
        const line = now === undefined ? undefined : firstLine(shown(file, now), pattern)
        if (line) leftovers.push({ file, line, opened: client.version(file) !== undefined })
      }
      return {
        server: client.id,
        from: checked.placeholder,
        ...(notLoaded.length ? { notLoaded } : {}),
        ...(leftovers.length ? { leftovers } : {}),
        ...(added.length ? { viaReferences: added } : {}),
        ...(stubs.length ? { stubs } : {}),
        ...(mentioned.unscanned ? { unscanned: mentioned.unscanned } : {}),
        edits: plan.edits,
        files: plan.files
          .filter((f) => f.after !== undefined || !plan.renames.some((r) => r.from === f.file))
          .map((f) => ({
            file: f.file,
            edits: f.edits,
            ...(f.renamedFrom ? { renamedFrom: f.renamedFrom } : {}),
            ...(f.before === undefined && !f.renamedFrom ? { created: true } : {}),
            ...(f.after === undefined ? { deleted: true } : {}),
          })),
      }
    }
  }

  /** `name` as a whole word: not inside a longer identifier (letters, digits, `_`, `$`). */
  function mentionPattern(name: string) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    return new RegExp(`(?<![\\p{L}\\p{N}_$])${escaped}(?![\\p{L}\\p{N}_$])`, "u")
  }

  /** The 1-based line of the first match of `pattern` in `text`, or undefined. */
  function firstLine(text: string, pattern: RegExp) {
    const match = pattern.exec(text)
    if (!match) return undefined
    let line = 1
    for (let i = 0; i < match.index; i++) if (text.charCodeAt(i) === 10) line++
    return line
  }

  /**
   * Why project diagnostics skipped `file`: a missing server's hint is about the file type, not the file, so the
   * skipped files of one type share it and the text gives it once (`LspFormat.skipped`).
   */
  function skipReason(error: Error, file: string): string {
    if (!LspServers.NotInstalled.is(error)) return error.message
    const type = path.extname(file) ? `${path.extname(file)} files` : "extension-less files"
    return new LspServers.NotInstalled({ ...error.data, file: type }).message
  }

  async function isFile(file: string): Promise<boolean> {
    return fs.stat(file).then(
      (s) => s.isFile(),
      () => false,
    )
  }

  /**
   * Whether `file` is no installed dependency: no folder of `Dependencies.FOLDERS` on its path (below `root` when it
   * is inside it), and, inside `root`, no virtual environment under another name (a folder with `pyvenv.cfg`).
   */
  export async function ownCode(root: string, file: string): Promise<boolean> {
    const relative = path.relative(root, file)
    const inside = !!relative && !relative.startsWith("..") && !path.isAbsolute(relative)
    const parts = (inside ? relative : path.resolve(file)).split(path.sep).filter(Boolean).slice(0, -1)
    if (parts.some((part) => Dependencies.FOLDERS.has(part))) return false
    if (inside)
      for (let n = 1; n <= parts.length; n++)
        if (await isFile(path.join(root, ...parts.slice(0, n), Dependencies.VENV_MARKER))) return false
    return true
  }

  /** Whether `file` is inside `root` and no installed dependency there (`ownCode`). */
  async function projectFile(root: string, file: string): Promise<boolean> {
    const relative = path.relative(root, file)
    if (!relative || relative.startsWith("..") || path.isAbsolute(relative)) return false
    return ownCode(root, file)
  }

  /** Whether `file` starts with a UTF-8 byte-order mark (EF BB BF). */
  async function startsWithBom(file: string): Promise<boolean> {
    // Only regular files (a FIFO a server names would block the open).
    if (
      !(await fs.stat(file).then(
        (s) => s.isFile(),
        () => false,
      ))
    )
      return false
    const handle = await fs.open(file, "r").catch(() => undefined)
    if (!handle) return false
    try {
      const buffer = Buffer.alloc(3)
      const { bytesRead } = await handle.read(buffer, 0, 3, 0)
      return bytesRead === 3 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf
    } catch {
      return false
    } finally {
      await handle.close()
    }
  }

  async function check(client: LspClient, p: Position, text: string, signal?: AbortSignal): Promise<RenameCheck> {
    const provider = client.capabilities.renameProvider
    const word = wordAt(text, p.line, p.character)
    if (!(typeof provider === "object" && provider?.prepareProvider)) {
      if (!word) return { ok: false, reason: "no identifier at this position", server: client.id }
      return { ok: true, range: word.range, placeholder: word.text, server: client.id }
    }
    try {
      const ask = () =>
        client.request<any>(
          "textDocument/prepareRename",
          { textDocument: { uri: pathToFileURL(p.file).href }, position: { line: p.line, character: p.character } },
          { signal },
        )
      // Asked once more after a refusal: a server just started answers before it has loaded its workspace (pyright
      // waits for its settings, answers null, and only then lists its source files, so a symbol declared in another
      // file is not yet its user's code). The second request is queued behind that work.
      const result = (await ask()) ?? (await ask())
      if (!result) return { ok: false, reason: "the server says this element cannot be renamed", server: client.id }
      if ("defaultBehavior" in result) {
        if (!word) return { ok: false, reason: "no identifier at this position", server: client.id }
        return { ok: true, range: word.range, placeholder: word.text, server: client.id }
      }
      const range: Range = "range" in result ? result.range : result
      const placeholder = "placeholder" in result ? result.placeholder : slice(text, range)
      return { ok: true, range, placeholder, server: client.id }
    } catch (error: any) {
      const reason = String(error?.message ?? error).replace(/^Request \S+ failed with message: /, "")
      return { ok: false, reason, server: client.id }
    }
  }

  /**
   * Throws `BadPosition` unless `p` (0-based) lies in `text`: a line the file has, a character from the line's start
   * to just after its last one. Characters count UTF-16 code units, as LSP does (an emoji counts 2).
   */
  function within(file: string, text: string, p: { line: number; character: number }) {
    const lines = text.split(/\r\n|\r|\n/)
    const shown = { file, line: p.line + 1, character: p.character + 1 }
    if (p.line < 0 || p.line >= lines.length)
      throw new BadPosition({
        ...shown,
        reason: `line ${p.line + 1} is past the end of the file (it has ${lines.length} line${lines.length === 1 ? "" : "s"})`,
      })
    const content = lines[p.line]
    if (p.character < 0 || p.character > content.length) {
      const wide = [...content].length !== content.length
      throw new BadPosition({
        ...shown,
        reason:
          `character ${p.character + 1} is past the end of line ${p.line + 1} (${content.length} characters; ` +
          `${content.length + 1} is just after the last one)` +
          (wide
            ? "; characters count UTF-16 code units: one outside the Basic Multilingual Plane (an emoji) counts 2"
            : ""),
      })
    }
  }

  function wordAt(text: string, line: number, character: number) {
    const content = text.split(/\r\n|\r|\n/)[line]
    if (content === undefined) return undefined
    const isWord = (ch: string | undefined) => !!ch && /[\p{L}\p{N}_$]/u.test(ch)
    let start = character
    let end = character
    while (isWord(content[start - 1])) start--
    while (isWord(content[end])) end++
    if (start === end) return undefined
    return {
      text: content.slice(start, end),
      range: { start: { line, character: start }, end: { line, character: end } },
    }
  }

  function slice(text: string, range: Range) {
    const lines = text.split(/\r\n|\r|\n/)
    if (range.start.line === range.end.line)
      return (lines[range.start.line] ?? "").slice(range.start.character, range.end.character)
    return [
      (lines[range.start.line] ?? "").slice(range.start.character),
      ...lines.slice(range.start.line + 1, range.end.line),
      (lines[range.end.line] ?? "").slice(0, range.end.character),
    ].join("\n")
  }

  export function filter(items: Diagnostic[], severity: Severity): Diagnostic[] {
    const max = { error: 1, warning: 2, information: 3, hint: 4, all: 4 }[severity]
    return items.filter((d) => (d.severity ?? 1) <= max)
  }

  /** Location | Location[] | LocationLink[] from each server, as a flat list of file + range. */
  function locations(results: { server: string; r: any }[]): { file: string; range: Range }[] {
    const out: { file: string; range: Range }[] = []
    for (const { r } of results) {
      for (const item of Array.isArray(r) ? r : r ? [r] : []) {
        const link = item as LocationLink
        const loc = item as Location
        const uri = link.targetUri ?? loc.uri
        const range = link.targetSelectionRange ?? link.targetRange ?? loc.range
        if (!uri?.startsWith("file:") || !range) continue
        out.push({ file: fileURLToPath(uri), range })
      }
    }
    return out
  }
}
