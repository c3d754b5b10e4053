// Shared machinery of the red-team and benign-session suites: a real temporary project with a policy, opened on either
// delivery route, and tool calls made the way OpenCode makes them. On both routes every call goes through the real
// hook functions (`tool.execute.before`, `shell.env`, `tool.execute.after`, …):
//
// - "plugin": the external plugin itself (`OpencodeBuiltins`), all features composed in their order, as stock OpenCode
//   loads it (default options: the policy is re-checked every 500 ms, the index waits at most 3 s);
// - "core": the core rules the fork calls from its seams (`SecurityHooks.create({ guard, … })` over
//   `SecurityGuard.create`), with the AST, resource, discovery and comment-checker features wired to the guard the way
//   the fork's glue wires them.
//
// Built-in tools are executed as OpenCode executes them (read's numbered output and the AGENTS.md it appends, edit and
// apply_patch through the layer's own replay of OpenCode's replacers, grep and glob through ripgrep with OpenCode's
// arguments and the process's RIPGREP_CONFIG_PATH, bash as `bash -c` with the shell.env variables). The RAW output —
// what the tool produced before the after hook — is kept, so assertions can tell the kernel's or the tool's refusal
// from the output scanner's redaction.
import fs from "fs"
import os from "os"
import path from "path"
import { AstTools } from "../../ast/tools"
import { CommentHooks } from "../../comment/hooks"
import { DynamicDiscovery } from "../../discovery/discover"
import { DiscoveryHooks } from "../../discovery/hooks"
import { DiscoveryLocate } from "../../discovery/locate"
import type { Host } from "../../host"
import { loadOptions } from "../../options"
import { ResourceHooks } from "../../resource/hooks"
import { ResourceLoader } from "../../resource/loader"
import { ResourceTools } from "../../resource/tools"
import { SecurityEdit } from "../../security/edit"
import { SecurityFeature } from "../../security/feature"
import { SecurityError } from "../../security/errors"
import { SecurityGuard } from "../../security/guard"
import { SecurityHooks } from "../../security/hooks"
import { SecurityMcp } from "../../security/mcp"
import { SecurityPatch } from "../../security/patch"
import { SecurityTemplateShell } from "../../security/template-shell"
import { Sandbox } from "../../security/sandbox"
import { SecurityTools } from "../../security/tools"
import { LocalState } from "../../learning/local"
import { Logger } from "../../util/log"
import OpencodeBuiltins from "../../../plugin/index"
import { tmpdir } from "../fixture"
import { APP, POLICY, SECRET_FILE, project } from "./fixture"
import { spawnSync } from "../spawn-sync"

export const ROUTES = ["plugin", "core"] as const
export type RouteName = (typeof ROUTES)[number]

export const BLOCKED = "Blocked by the project's security policy"

/** Secret tokens and phrases of the red-team project: none may appear in raw output, nor encoded, reversed, … */
export const TOKENS = [
  "Zx81Qp0vLk27mNb5Yt3RwE9u", // secrets/api.key
  "Hq83kfP2mZ0xQ7vB", // .env
  "prodtoken99887766aabbccdd", // app/.env.production
  "Kd93mVx71LqPz0Rw", // src/app.ts secure segment (a second line)
  "Wm4Tq9Zs2Lp8Xv6N", // team/AGENTS.md
  "Sk7Vault3Qy9Lw2P", // the protected skill's body
  "Ag5Spy8Mx2Kq7Rt1", // the protected agent's prompt
  "Rs6Hid4Nw9Pe3Jv8", // the protected resource's body
  "Nz5Pol2Qw8Xe4Ty7", // the nested team/private folder (added mid-session)
]
export const PHRASES = [
  "line two of the api key file",
  "line three of the api key file",
  "deep secret content",
  "the confidential pricing algorithm",
  "server key material",
  "the private roadmap sentence",
  "vault skill instructions",
  "spy agent system prompt",
  "hidden release procedure",
]

/** The red-team policy: the shared fixture's rules (without `~` rules) plus side doors (skills, agents, instructions). */
export const REDTEAM_POLICY = {
  ...POLICY,
  rules: [
    ...POLICY.rules.filter((r) => !r.pattern.startsWith("~")),
    { pattern: ".opencode/skill/vault", type: "directory", deniedOperations: ["read", "llm"], allowedRoles: [] },
    { pattern: ".opencode/agent/spy.md", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] },
    { pattern: "team/AGENTS.md", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] },
    { pattern: ".opencode/task/hidden-release.md", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] },
  ],
}

/** src/app.ts with a second secure line holding a token, so copies of it can be looked for in every encoding. */
export const APP_TS = APP.replace(
  'const pricing = "the confidential pricing algorithm"',
  'const pricing = "the confidential pricing algorithm"\nconst salt = "Kd93mVx71LqPz0Rw"',
)

/** Short secure lines (too short for copy fingerprints: only their line numbers identify them). */
export const SHORT_TS = ["// @secure-start", "Qz7", "k=4", "// @secure-end", "export const after = 1", ""].join("\n")

/** A file whose first line is inside a segment (unclosed start on line 1 would make everything protected). */
export const FIRST_TS = [
  "/* @secure-start */ // the segment starts on line 1",
  "const first = 'Kd93mVx71LqPz0Rw'",
  "// @secure-end",
  "export const open = 2",
  "",
].join("\n")

/** base64 of the protected key file wrapped at 16 columns, stored in an ordinary file (only the scanner sees it). */
export const ENCODED_COPY =
  (
    Buffer.from(SECRET_FILE)
      .toString("base64")
      .match(/.{1,16}/g) ?? []
  ).join("\n") + "\n"

/** Files of the red-team project (on top of the fixture's). */
export const REDTEAM_FILES: Record<string, string> = {
  "src/app.ts": APP_TS,
  "src/short.ts": SHORT_TS,
  "src/first.ts": FIRST_TS,
  "src/locked.py": [
    "def keep():",
    "    return 0",
    "# @locked-start",
    'LIMIT = "prod"  # do not change',
    "RATE = 10",
    "# @locked-end",
    "def tail():",
    "    return RATE",
    "",
  ].join("\n"),
  "team/AGENTS.md": "# Team rules\nThe team deploy password is Wm4Tq9Zs2Lp8Xv6N.\n",
  "team/notes.txt": "team notes anyone may read\n",
  ".opencode/skill/vault/SKILL.md":
    "---\nname: vault\ndescription: Opens the vault of release credentials\n---\nThe vault skill instructions: use Sk7Vault3Qy9Lw2P.\n",
  ".opencode/skill/open-notes/SKILL.md":
    "---\nname: open-notes\ndescription: Writes meeting notes in the team format\n---\nWrite notes as bullet points.\n",
  ".opencode/agent/spy.md":
    "---\ndescription: Audits payroll exports for the finance team\nmode: subagent\n---\nThe spy agent system prompt: Ag5Spy8Mx2Kq7Rt1.\n",
  ".opencode/agent/helper.md":
    "---\ndescription: Helps with formatting of markdown documents\nmode: subagent\n---\nYou format markdown.\n",
  ".opencode/task/hidden-release.md":
    "---\ntitle: Hidden release\ndescription: The hidden release procedure for the payroll service\ntags: [payroll, release]\n---\nStep one of the hidden release procedure: Rs6Hid4Nw9Pe3Jv8.\n",
  ".opencode/task/ship-docs.md":
    "---\ntitle: Ship the docs\ndescription: Publish the documentation site\ntags: [docs, release]\n---\nRun the docs build, then publish.\n",
  "notes/todo.md": "- [ ] write tests\n",
  "build/a.tmp": "tmp\n",
  "build/b.tmp": "tmp\n",
  "build/keep.txt": "kept\n",
  "package.json": JSON.stringify(
    { name: "redteam-project", private: true, scripts: { test: "node test.js" } },
    null,
    2,
  ),
  "test.js": "const assert = require('assert')\nassert.equal(1 + 1, 2)\nconsole.log('tests passed')\n",
}

function b64(s: string) {
  return Buffer.from(s).toString("base64")
}

function rot13(s: string) {
  return s.replace(/[a-z]/gi, (c) => {
    const base = c <= "Z" ? 65 : 97
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base)
  })
}

/**
 * Forms in which a protected token or phrase could show up in raw output: as is, reversed, upper-cased, rot13, spread
 * out by white space (one character a line, spaced letters), base64 (at each alignment, any wrapping: white space is
 * removed first), hex (any grouping), and 8-character windows of tokens (the ASCII column of a hex dump splits
 * lines). Returns what was found.
 */
export function leaks(text: string): string[] {
  const found = new Set<string>()
  const squeezed = text.replace(/\s+/g, "")
  const lowerSqueezed = squeezed.toLowerCase()
  for (const s of [...TOKENS, ...PHRASES]) {
    if (text.includes(s)) found.add(s)
    if (text.includes([...s].reverse().join(""))) found.add(`rev(${s})`)
    if (s !== s.toUpperCase() && text.includes(s.toUpperCase())) found.add(`upper(${s})`)
    if (text.includes(rot13(s))) found.add(`rot13(${s})`)
    if (squeezed.includes(s.replace(/\s+/g, ""))) found.add(`spread(${s})`)
    for (let k = 0; k < 3; k++) {
      const enc = b64(s.slice(k)).slice(0, -4)
      if (enc.length >= 12 && squeezed.includes(enc)) found.add(`base64(${s})`)
    }
    if (lowerSqueezed.includes(Buffer.from(s).toString("hex"))) found.add(`hex(${s})`)
  }
  for (const t of TOKENS)
    for (let i = 0; i + 8 <= t.length; i++) {
      const w = t.slice(i, i + 8)
      if (text.includes(w)) found.add(`window(${t})`)
      if (lowerSqueezed.includes(Buffer.from(w).toString("hex"))) found.add(`hexwindow(${t})`)
    }
  return [...found]
}

export type Result = {
  refused: boolean
  /** What the before hook threw (a typed `SecurityError` for a policy refusal). */
  error?: unknown
  reason?: string
  /** The tool's output before the after hook (for bash: stdout + stderr of the real process). */
  raw: string
  /** What the model receives (after the after hook). */
  output: string
  /** Exit code of a shell command. */
  code?: number | null
  /** The result's metadata after the after hook. */
  metadata?: Record<string, unknown>
  /** The tool itself failed (OpenCode reports the error to the model; not a policy refusal). */
  failed?: string
}

export type CallOptions = {
  /** 1.2.15's read gutter (`<content>` glued to the first line) instead of 1.18's. */
  version?: "1.2.15" | "1.18"
  /** Shell to run bash commands with (default /bin/bash). */
  shell?: string
  timeoutMs?: number
  /** Only the before hook: for calls that must never run on this machine even if the layer let them through. */
  noExecute?: boolean
  /**
   * Run the command without blocking the test (as OpenCode runs it): other calls, such as a `webfetch` whose hooks
   * do not wait for commands, can come while it runs.
   */
  concurrent?: boolean
}

export type Session = {
  route: RouteName
  dir: string
  hooks: Record<string, (...args: any[]) => Promise<void>>
  tools: Record<string, { execute: (args: any, ctx: any) => Promise<string> }>
  /** One tool call as OpenCode makes it: before hook, the tool, after hook. */
  call(tool: string, args: Record<string, unknown>, options?: CallOptions): Promise<Result>
  bash(command: string, options?: CallOptions & { workdir?: string }): Promise<Result>
  /** Ends the session as OpenCode ends an instance; resolves once its processes (language servers) are stopped. */
  close(): Promise<void>
}

let counter = 0
const nextID = () => `call_rt_${process.pid}_${++counter}`

/** Roots of the projects this process made (to find the plugin's sandbox state folders afterwards). */
const roots = new Set<string>()

/**
 * The plugin has no dispose hook, so the sandbox state folders of its guards outlive the test: those whose mount plan
 * names one of this process's projects are removed (other processes' folders are left alone).
 */
function removeOwnSandboxes() {
  const base = Sandbox.privateFolder()
  for (const name of fs.readdirSync(base)) {
    if (!name.startsWith("sandbox-")) continue
    const dir = path.join(base, name)
    let args: string
    try {
      args = fs.readFileSync(path.join(dir, "args"), "utf8")
    } catch {
      continue
    }
    if (![...roots].some((r) => args.includes(`\0${r}\0`))) continue
    try {
      fs.chmodSync(path.join(dir, "deny-dir"), 0o700)
    } catch {
      // Already gone.
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** A temporary home for the whole test process: skills, global config and plugin folders stay inside it. */
export function isolateHome() {
  const saved = {
    HOME: process.env.HOME,
    XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME,
    XDG_DATA_HOME: process.env.XDG_DATA_HOME,
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
    // `npm test` gives its scripts npm's cache folder: npm exec's cache (held for MCP servers) is in the home here.
    npm_config_cache: process.env.npm_config_cache,
    NPM_CONFIG_CACHE: process.env.NPM_CONFIG_CACHE,
  }
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-rt-home-")))
  fs.mkdirSync(path.join(home, ".config"), { recursive: true })
  process.env.HOME = home
  process.env.XDG_CONFIG_HOME = path.join(home, ".config")
  process.env.XDG_DATA_HOME = path.join(home, ".local", "share")
  process.env.XDG_CACHE_HOME = path.join(home, ".cache")
  process.env.npm_config_cache = path.join(home, ".npm")
  delete process.env.NPM_CONFIG_CACHE
  delete process.env.OPENCODE_SECURITY_ROLE
  return {
    home,
    restore() {
      removeOwnSandboxes()
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      fs.rmSync(home, { recursive: true, force: true })
    },
  }
}

/**
 * A red-team project opened on `route` with OpenCode's `mcp` configuration given (the local servers' holds); disposing
 * it closes the session and removes the folder.
 *
 * @example
 * await using box = await withMcp("plugin", { srv: { type: "local", command: ["python3", "srv.py"] } })
 */
export async function withMcp(route: RouteName, mcp: Record<string, unknown>, extra: Record<string, string> = {}) {
  const dir = await redteamProject(extra)
  const s = await open(route, dir.path)
  await s.hooks.config({ mcp })
  return {
    dir,
    s,
    async [Symbol.asyncDispose]() {
      await s.close()
      await dir[Symbol.asyncDispose]()
    },
  }
}

/** The red-team project: fixture files, red-team files, `extra`, and a git repository holding the ordinary files. */
export async function redteamProject(extra: Record<string, string> = {}, policy: unknown = REDTEAM_POLICY) {
  const dir = await project({ ...REDTEAM_FILES, ...extra }, policy)
  roots.add(dir.path)
  fs.rmSync(dir.file(".git"), { recursive: true, force: true })
  git(dir.path, "init", "-q")
  fs.writeFileSync(dir.file(".gitignore"), ".opencode-security-audit.log*\n")
  git(dir.path, "add", "src", "README.md", "docs/public.md", "package.json", "test.js", ".gitignore")
  git(dir.path, "commit", "-qm", "init")
  return dir
}

/** A project of only `files` (its policy among them), for cases the red-team project's many files would crowd. */
export async function smallProject(files: Record<string, string>) {
  const dir = await tmpdir(files)
  roots.add(dir.path)
  return dir
}

export function git(dir: string, ...args: string[]) {
  const r = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
    cwd: dir,
    encoding: "utf8",
  })
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`)
  return r.stdout
}

/**
 * Whether git run on the host in `dir/sub` (as OpenCode's snapshot runs it) runs a planted `core.fsmonitor` that
 * touches `marker`; the marker is removed before and after.
 */
export function fsmonitorRuns(dir: string, sub: string, marker: string): boolean {
  fs.rmSync(marker, { force: true })
  spawnSync("git", ["status", "--porcelain"], { cwd: path.join(dir, sub), encoding: "utf8" })
  const ran = fs.existsSync(marker)
  fs.rmSync(marker, { force: true })
  return ran
}

/** A shell fragment that commits one file in the repository `sub` (for commands a scenario runs). */
export const commitIn = (sub: string) =>
  `(cd ${sub} && echo x > f && git add f && git -c user.name=a -c user.email=a@b.c commit -qm x)`

/** Opens a session on one route over the project in `dir`. */
export async function open(route: RouteName, dir: string): Promise<Session> {
  const wired = route === "plugin" ? await pluginRoute(dir) : await coreRoute(dir)
  const session: Session = {
    route,
    dir,
    hooks: wired.hooks,
    tools: wired.tools,
    async call(tool, args, options = {}) {
      const callID = nextID()
      const input = { tool, sessionID: "ses_redteam", callID }
      const payload = { args }
      try {
        await wired.hooks["tool.execute.before"](input, payload)
      } catch (error) {
        // A refusal is the layer's named error; anything else is a failure inside a hook, logged whole so a case that
        // fails on it (rarely, in a long run) says what it was.
        if (!SecurityError.is(error))
          console.error(
            `[redteam] ${tool} on the ${route} route: the before hook failed: ${(error as Error)?.stack ?? error}`,
          )
        return {
          refused: true,
          error,
          reason: error instanceof Error ? error.message : String(error),
          raw: "",
          output: "",
        }
      }
      if (options.noExecute) return { refused: false, raw: "", output: "" }
      let raw = ""
      let code: number | null | undefined
      let failed: string | undefined
      let metadata: Record<string, unknown> = {}
      try {
        const done = await execute(session, wired, tool, payload.args, callID, options)
        raw = done.output
        code = done.code
        metadata = done.metadata ?? {}
      } catch (error) {
        failed = error instanceof Error ? error.message : String(error)
        raw = `Error: ${failed}`
      }
      const out = { title: "", output: raw, metadata }
      await wired.hooks["tool.execute.after"]({ ...input, args: payload.args }, out)
      return { refused: false, raw, output: out.output as string, code, metadata: out.metadata, failed }
    },
    bash(command, options = {}) {
      const args: Record<string, unknown> = { command, description: "run a command" }
      if (options.workdir) args.workdir = options.workdir
      return session.call("bash", args, options)
    },
    close: wired.close,
  }
  return session
}

type Wired = {
  hooks: Record<string, (...args: any[]) => Promise<void>>
  tools: Record<string, { execute: (args: any, ctx: any) => Promise<string> }>
  close(): Promise<void>
}

async function pluginRoute(dir: string): Promise<Wired> {
  const client = {
    app: { log: async () => {} },
    session: { messages: async () => ({ data: [] }) },
  }
  const input = { client, directory: dir, worktree: dir, project: {}, serverUrl: new URL("http://x"), $: {} } as any
  const hooks: any = await OpencodeBuiltins(input)
  await hooks.config?.({})
  // The plugin has no dispose hook: OpenCode tells it an instance is gone with `server.instance.disposed`.
  return {
    hooks,
    tools: hooks.tool ?? {},
    async close() {
      await hooks.event?.({ event: { type: "server.instance.disposed", properties: { directory: dir } } } as never)
    },
  }
}

async function coreRoute(dir: string): Promise<Wired> {
  const log = Logger.silent
  // The project's security options, as the security feature passes them (a case may set a small index budget).
  const options = loadOptions(dir, undefined).options.security ?? {}
  const guard = await SecurityGuard.create({
    directory: dir,
    worktree: dir,
    log,
    shell: "/bin/bash",
    maxIndexEntries: typeof options.maxIndexEntries === "number" ? options.maxIndexEntries : undefined,
    protect: SecurityGuard.hostProtected(dir, dir),
    writable: SecurityGuard.hostWritable(),
    // As the security feature passes them: the built-ins' local state and cache folder are the host's alone.
    ensure: LocalState.hidden(dir),
    hide: [...LocalState.hidden(dir), ...SecurityGuard.hostHidden()],
    hideNamed: [LocalState.DIR],
  })
  await Promise.race([guard.ready(), Bun.sleep(3000)])
  const host: Host = {
    directory: dir,
    worktree: dir,
    log,
    access: (target, op, options) => guard.access(target, op, "builtin-tool", options),
    accessVersion: () => guard.accessVersion(),
    accessScope: () => LocalState.guardScope(guard),
    exclusive: (work) => guard.exclusive(work),
    segments: () => guard.segments(),
  }
  const locator = DiscoveryLocate.create({ directory: dir, worktree: dir, config: {} })
  const security = SecurityHooks.create({
    guard,
    item: (kind, name) => locator.refusal(kind, name, host),
    describe: async (_tool, description) => {
      let out = description
      for (const r of await locator.redactions(host)) for (const t of r.texts) if (t) out = out.replaceAll(t, "")
      return out
    },
  })
  const loader = ResourceLoader.create(host, {})
  host.resources = async () => (await loader.index()).resources.values()
  const resources = ResourceHooks.create(loader)
  const discovery = DiscoveryHooks.create(
    DynamicDiscovery.create({ directory: dir, worktree: dir, log, resources: host.resources }),
    { log, host },
  )
  const tools = { ...ResourceTools.create(loader), ...AstTools.create(host) } as unknown as Wired["tools"]
  // The comment checker, as the fork's glue runs it (BuiltinsSeams: the same feature, on the same host).
  const comments = CommentHooks.create({ host, sensitivity: "normal" })
  const hooks: Wired["hooks"] = {
    ...(security as unknown as Wired["hooks"]),
    // As the fork's glue passes OpenCode's configuration to the security feature (`SecurityFeature` config hook).
    async config(cfg: any) {
      guard.protectHost(await SecurityFeature.configuredHostFiles(cfg ?? {}, dir))
      // Command templates' and skills' shell lines handed to the sandbox (AS4), as the feature's config hook does.
      await SecurityTemplateShell.contain(cfg ?? {}, {
        guard,
        skills: () => locator.all("skill"),
        protectedSkill: (name) => locator.refusal("skill", name, host),
        worktree: dir,
        log,
      })
      guard.watchPackageBins(SecurityMcp.packageBins(cfg?.mcp, { directory: dir }))
    },
    // Inbound: the security layer first; outbound: it runs last (it sees what reaches the model).
    async "chat.message"(input: any, output: any) {
      await security["chat.message"](input, output)
      await discovery["chat.message"](input, output)
    },
    async "tool.execute.before"(input: any, output: any) {
      await security["tool.execute.before"](input, output)
      await comments["tool.execute.before"]!(input, output)
    },
    async "tool.execute.after"(input: any, output: any) {
      await (resources as any)["tool.execute.after"]?.(input, output)
      await comments["tool.execute.after"]!(input, output)
      await security["tool.execute.after"](input, output)
    },
  }
  return {
    hooks,
    tools,
    async close() {
      guard.close()
      await loader.dispose()
    },
  }
}

type Done = { output: string; code?: number | null; metadata?: Record<string, unknown> }

/** The built-in tools as OpenCode runs them (plugin tools run their real code). */
async function execute(
  session: Session,
  wired: Wired,
  tool: string,
  args: Record<string, unknown>,
  callID: string,
  options: CallOptions,
): Promise<Done> {
  const dir = session.dir
  const abs = (p: unknown) => SecurityTools.toolPath(String(p), dir)
  if (wired.tools[tool]) {
    const ctx = {
      directory: dir,
      worktree: dir,
      sessionID: "ses_redteam",
      messageID: "msg_redteam",
      callID,
      agent: "build",
      abort: new AbortController().signal,
      ask: async () => {},
      metadata: () => {},
    }
    return { output: String(await wired.tools[tool].execute(args, ctx)) }
  }
  switch (tool) {
    case "read":
      return readTool(dir, abs(args.filePath), args, options.version ?? "1.18")
    case "write": {
      const file = abs(args.filePath)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, String(args.content ?? ""))
      return { output: "Wrote file successfully." }
    }
    case "edit": {
      const file = abs(args.filePath)
      const edit = {
        oldString: String(args.oldString ?? ""),
        newString: String(args.newString ?? ""),
        replaceAll: args.replaceAll === true,
      }
      const current = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
      const o = SecurityEdit.outcome(current, edit, "1.18")
      const next = SecurityEdit.result(current, o, "1.18")
      if (next === undefined) throw new Error(`edit could not be applied (${o.kind})`)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, next)
      return { output: "Edit applied successfully." }
    }
    case "apply_patch": {
      const parsed = SecurityPatch.parse(String(args.patchText ?? ""), { directory: dir })
      if (!parsed.files.length) throw new Error("apply_patch verification failed: no hunks found")
      const writes: [string, string | undefined][] = []
      for (const f of parsed.files) {
        const at = SecurityPatch.resolve(dir, f.path)
        if (f.change === "add") {
          writes.push([at, f.content ?? ""])
          continue
        }
        if (!fs.existsSync(at)) throw new Error(`apply_patch verification failed: ${f.path} not found`)
        if (f.change === "delete") {
          writes.push([at, undefined])
          continue
        }
        const d = SecurityPatch.derive(f, fs.readFileSync(at, "utf8"), "1.18")
        if (!d.ok) throw new Error(`apply_patch verification failed for ${f.path}`)
        if (f.change === "move") writes.push([SecurityPatch.resolve(dir, f.to!), d.content], [at, undefined])
        else writes.push([at, d.content])
      }
      for (const [file, text] of writes) {
        if (text === undefined) fs.rmSync(file, { force: true })
        else {
          fs.mkdirSync(path.dirname(file), { recursive: true })
          fs.writeFileSync(file, text)
        }
      }
      return { output: `Success. Updated the following files:\n${writes.map(([f]) => f).join("\n")}` }
    }
    case "grep":
      return grepTool(dir, args)
    case "glob":
      return globTool(dir, args)
    case "list":
      return globTool(dir, { pattern: "**/*", path: args.path })
    case "bash":
      return bashTool(session, wired, args, callID, options)
    default:
      // skill, task, todowrite, webfetch, …: what they do after an allowed call is not the layer's concern here.
      return { output: `${tool} ran` }
  }
}

/**
 * OpenCode's read tool: numbered lines, the AGENTS.md files of the folders between the file and the project root.
 * Lines end at `\r\n`, `\n` or a lone `\r`, as Node's readline (1.2.15) and Effect's splitLines (1.18) split them.
 */
function readTool(dir: string, file: string, args: Record<string, unknown>, version: "1.2.15" | "1.18"): Done {
  const text = fs.readFileSync(file, "utf8")
  const lines = text.split(/\r\n|\n|\r/)
  if (lines.at(-1) === "") lines.pop()
  const offset = typeof args.offset === "number" && args.offset > 0 ? args.offset : 1
  const limit = typeof args.limit === "number" ? args.limit : 2000
  const shown = lines.slice(offset - 1, offset - 1 + limit)
  const numbered = shown.map((l, i) => `${offset + i}: ${l}`)
  const last = offset - 1 + shown.length
  const tail =
    last < lines.length
      ? `(Showing lines ${offset}-${last} of ${lines.length}. Use offset=${last + 1} to continue.)`
      : `(End of file - total ${lines.length} lines)`
  const content = version === "1.2.15" ? `<content>${numbered.join("\n")}` : `<content>\n${numbered.join("\n")}`
  let output = `<path>${file}</path>\n<type>file</type>\n${content}\n\n${tail}\n</content>`
  const instructions: string[] = []
  for (let d = path.dirname(file); d !== dir && d.startsWith(dir + path.sep); d = path.dirname(d)) {
    const agents = path.join(d, "AGENTS.md")
    if (fs.existsSync(agents)) instructions.push(`Instructions from: ${agents}\n${fs.readFileSync(agents, "utf8")}`)
  }
  if (instructions.length) output += `\n\n<system-reminder>\n${instructions.join("\n")}\n</system-reminder>`
  return { output, metadata: { preview: shown.slice(0, 20).join("\n"), truncated: last < lines.length } }
}

/** OpenCode's grep tool: ripgrep with its arguments (and the process's RIPGREP_CONFIG_PATH), its output format. */
function grepTool(dir: string, args: Record<string, unknown>): Done {
  const base = SecurityTools.toolPath(String(args.path ?? "."), dir)
  const rgArgs = ["-nH", "--hidden", "--no-messages", "--field-match-separator=|", "--regexp", String(args.pattern)]
  if (typeof args.include === "string") rgArgs.push("--glob", args.include)
  rgArgs.push(base)
  const r = spawnSync("rg", rgArgs, { cwd: dir, encoding: "utf8", env: process.env, timeout: 120_000 })
  const rows = (r.stdout ?? "").split("\n").filter(Boolean)
  if (!rows.length) return { output: "No files found" }
  const byFile = new Map<string, string[]>()
  for (const row of rows) {
    const [file, line, ...rest] = row.split("|")
    const list = byFile.get(file) ?? []
    list.push(`  Line ${line}: ${rest.join("|")}`)
    byFile.set(file, list)
  }
  const blocks = [...byFile].map(([file, list]) => `${file}:\n${list.join("\n")}`)
  return { output: `Found ${rows.length} matches\n${blocks.join("\n\n")}` }
}

function globTool(dir: string, args: Record<string, unknown>): Done {
  const base = SecurityTools.toolPath(String(args.path ?? "."), dir)
  const r = spawnSync("rg", ["--files", "--hidden", "--glob", String(args.pattern ?? "**/*"), base], {
    cwd: dir,
    encoding: "utf8",
    env: process.env,
    timeout: 120_000,
  })
  const files = (r.stdout ?? "").split("\n").filter(Boolean).sort()
  return { output: files.length ? files.join("\n") : "No files found" }
}

async function bashTool(
  session: Session,
  wired: Wired,
  args: Record<string, unknown>,
  callID: string,
  options: CallOptions,
): Promise<Done> {
  const cwd = typeof args.workdir === "string" ? SecurityTools.toolPath(args.workdir, session.dir) : session.dir
  // OpenCode asks the shell.env hook for variables to add, then starts `<shell> -c <command>` with them.
  const extra = { env: {} as Record<string, string> }
  await wired.hooks["shell.env"]({ cwd, sessionID: "ses_redteam", callID }, extra)
  // No standard input, as in OpenCode (a pipe would make ripgrep search it instead of the folder).
  if (options.concurrent) {
    const proc = Bun.spawn([options.shell ?? "/bin/bash", "-c", String(args.command)], {
      cwd,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, ...extra.env },
    })
    const timer = setTimeout(() => proc.kill(), options.timeoutMs ?? 60_000)
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    clearTimeout(timer)
    return { output: out + err, code }
  }
  const r = spawnSync(options.shell ?? "/bin/bash", ["-c", String(args.command)], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...extra.env },
    encoding: "utf8",
    timeout: options.timeoutMs ?? 60_000,
    maxBuffer: 64 * 1024 * 1024,
  })
  return { output: (r.stdout ?? "") + (r.stderr ?? ""), code: r.status }
}

/** True when the refusal is the layer's typed error (what OpenCode shows the model as the tool's error). */
export function typedRefusal(result: Result): boolean {
  return result.refused && SecurityError.is(result.error) && (result.reason ?? "").includes(BLOCKED)
}

/** The policy file's bytes, to compare after a case. */
export function policyBytes(dir: string, rel = ".opencode-security.json"): Buffer {
  return fs.readFileSync(path.join(dir, rel))
}

/**
 * A session on `route` over a new red-team project (`redteamProject` with `extra` files and the red-team policy),
 * both disposed together.
 *
 * @example
 * await using box = await fresh("core")
 * await box.s.bash("ls")
 */
export async function fresh(route: RouteName, extra: Record<string, string> = {}) {
  const dir = await redteamProject(extra, REDTEAM_POLICY)
  const s = await open(route, dir.path)
  return {
    dir,
    s,
    async [Symbol.asyncDispose]() {
      await s.close()
      await dir[Symbol.asyncDispose]()
    },
  }
}
