import fs from "fs"
import fsp from "fs/promises"
import os from "os"
import path from "path"
import z from "zod"
import { OPTIONS_FILE } from "../options"
import { Logger } from "../util/log"
import { SecurityAccess } from "./access"
import { SecurityAudit } from "./audit"
import { SecurityConfig } from "./config"
import { SecurityFingerprint } from "./fingerprint"
import { SecurityHook } from "./hook"
import { SecurityMcp } from "./mcp"
import { SecurityPath } from "./paths"
import { SecurityPluginTool } from "./plugin-tool"
import { SecurityRedact } from "./redact"
import { SecurityRole } from "./role"
import { ScanCache } from "./scan-cache"
import { LLMScanner } from "./scanner"
import type { SecuritySchema } from "./schema"
import { SecuritySegments } from "./segments"
import type { SecurityShell } from "./shell"
import { SecurityTools } from "./tools"

/**
 * The security layer of one project, for both delivery routes: the external plugin calls it from hooks on stock
 * OpenCode; the fork calls the same functions from `ToolRegistry.fromPlugin`, `Plugin.trigger`, its built-in tools
 * and the LLM call. Plain data in, plain data out; no OpenCode type. With no policy file every function is a fast
 * no-op.
 *
 * @example
 * const guard = await SecurityGuard.create({ directory: "/repo" })
 * const verdict = await guard.before({ tool: "read", args: { filePath: "secrets/x" }, source: "builtin-tool" })
 * if (!verdict.allowed) throw new Error(verdict.reason)
 * const output = guard.after({ tool: "read", args: { filePath: "README.md" } }, "1: hello")
 */
export namespace SecurityGuard {
  export type Source = SecurityAudit.Source
  export type Operation = SecuritySchema.Operation

  /** The options a host may set (the plugin's `security` section of `.opencode/opencode-builtins.json`). */
  export const Config = z.object({
    intervalMs: z.number().int().min(0).max(60_000).optional().describe("How often policy files are re-checked"),
    indexRefreshMs: z.number().int().min(1000).max(3_600_000).optional().describe("Background re-index period"),
    maxIndexEntries: z.number().int().min(0).max(10_000_000).optional().describe("Entries the index walk visits"),
  })
  export type Config = z.infer<typeof Config>

  export type Options = Config & {
    /** The project directory (OpenCode's `Instance.directory`). */
    directory: string
    /** The worktree root; the policy root is the worktree when it contains `directory` (and is not `/`). */
    worktree?: string
    home?: string
    /** Environment the role is read from (default `process.env`). */
    env?: Record<string, string | undefined>
    log?: Logger
    /** Host configuration files no role may write while a policy exists (see `SecurityConfig.LoadOptions.protect`). */
    protect?: string[]
    /** Configured MCP server names, used to tell MCP tools apart (the plugin learns them from the config hook). */
    mcpServers?: string[]
    now?: () => number
  }

  export type Call = {
    tool: string
    args: unknown
    /** Who runs the tool; undefined: decided from the name (built-in, MCP server, else plugin). */
    source?: Source
    plugin?: string
    sessionID?: string
    callID?: string
  }

  export type Verdict =
    | { allowed: true; notes?: string[] }
    | { allowed: false; reason: string; path?: string; op?: Operation; rule?: string }

  export type Status = {
    root: string
    state: SecurityConfig.State["status"]
    role: string
    files: string[]
    problems: SecurityConfig.Problem[]
    index: { files: number; fingerprintedBytes: number; truncated: boolean; builtAt?: number }
    auditFailures: number
  }

  export type Guard = {
    readonly root: string
    state(): SecurityConfig.State
    /** True when a policy file exists (valid or not). */
    active(): boolean
    role(): string
    status(): Status
    /** Resolves when the background index of protected files is built. */
    ready(): Promise<void>
    /** The decision for one path and operation; an invalid policy denies everything. */
    check(target: string, op: Operation): SecurityAccess.Decision | { allowed: false; path: string; reason: string }
    /** `Host.access`: a denial reason, or undefined. `read` also requires `llm` (the content goes to the model). */
    access(target: string, op: Operation, source?: Source): Promise<string | undefined>
    /** Before a tool runs: may it? */
    before(call: Call): Promise<Verdict>
    /** After a tool ran: its output with protected content redacted. */
    after(call: Call, output: string): string
    /** Every string of a tool result object redacted in place (MCP results, metadata). */
    afterValue(call: Call, value: unknown): number
    /** PRD `scanAndRedact`: scan a text and redact what is protected for `scope`. */
    scanAndRedact(
      text: string,
      options?: { scope?: LLMScanner.Scope; paths?: LLMScanner.ScanOptions["paths"]; base?: string },
    ): { text: string; ranges: LLMScanner.Range[] }
    /** Model-bound messages redacted: elements of `messages` that carry protected content are replaced by redacted copies. */
    redactMessages(messages: SecurityHook.Message[], options?: { paths?: boolean }): number
    /** The fork's `Plugin.trigger` for `experimental.chat.messages.transform`: clone, redact, run hooks, structural diff. */
    guardMessages<M extends SecurityHook.Message>(
      messages: M[],
      run: (clone: M[]) => Promise<unknown>,
    ): Promise<SecurityHook.Diff<M>>
    /** System prompts for hooks (the fork's `experimental.chat.system.transform`). */
    guardSystem(system: string[], run: (copy: string[]) => Promise<unknown>): Promise<string[]>
    /** Wraps a tool definition (the fork's `ToolRegistry.fromPlugin`): arguments checked, output scanned. */
    wrapTool<D extends { execute: (args: any, context: any) => Promise<unknown> }>(
      id: string,
      def: D,
      plugin?: string,
    ): D
    /** MCP policy of a server (exact name). */
    mcpPolicy(server: string): SecuritySchema.McpPolicy
    setMcpServers(servers: string[]): void
    readonly audit: SecurityAudit.Log | undefined
    close(): void
  }

  /**
   * OpenCode configuration files whose change could switch enforcement off (the plugin list, the built-ins' own
   * options): hosts pass them as `protect`, so no role may write them while a policy exists.
   *
   * @example
   * SecurityGuard.hostConfigFiles("/repo", "/repo") // ["/repo/opencode.json", …, "~/.config/opencode/opencode.json"]
   */
  export function hostConfigFiles(
    directory: string,
    worktree: string,
    env: Record<string, string | undefined> = process.env,
  ): string[] {
    const globalDir = path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config"), "opencode")
    const dirs = [...new Set([directory, worktree])]
    return [
      ...dirs.flatMap((d) =>
        ["opencode.json", "opencode.jsonc", ".opencode/opencode.json", ".opencode/opencode.jsonc"].map((f) =>
          path.join(d, f),
        ),
      ),
      ...dirs.map((d) => path.join(d, OPTIONS_FILE)),
      path.join(globalDir, "opencode.json"),
      path.join(globalDir, "opencode.jsonc"),
    ]
  }

  /** Operations a tool-side read needs: tool results go to the model, so `llm` protection counts too. */
  const READ_OPS: Operation[] = ["read", "llm"]

  /**
   * Opens the security layer of a project. Loads the policy synchronously, then indexes protected files in the
   * background (`ready()`).
   */
  export async function create(options: Options): Promise<Guard> {
    const log = options.log ?? Logger.silent
    const home = (options.home ?? os.homedir()).normalize("NFC")
    const env = options.env ?? process.env
    const now = options.now ?? Date.now
    const root = rootOf(options)
    const directory = realpath(options.directory)
    let mcpServers = options.mcpServers ?? []

    type Derived = {
      version: number
      config?: SecurityConfig.Loaded
      role: string
      tool: LLMScanner.Scanner
      llm: LLMScanner.Scanner
      audit?: SecurityAudit.Log
      writeMarkers: SecuritySegments.Pair[]
    }
    type Index = {
      files: Map<string, Set<Operation>>
      inodes: Map<string, string>
      read: SecurityFingerprint.Index
      llm: SecurityFingerprint.Index
      truncated: boolean
      builtAt?: number
      version: number
    }
    const emptyIndex = (version = -1): Index => ({
      files: new Map(),
      inodes: new Map(),
      read: SecurityFingerprint.create(),
      llm: SecurityFingerprint.create(),
      truncated: false,
      version,
    })
    let index = emptyIndex()
    /** Scan results of long texts (history messages are scanned again on every request). */
    const scans = ScanCache.create()
    const segments = {
      tool: SecurityFingerprint.create({ strict: true }),
      llm: SecurityFingerprint.create({ strict: true }),
      seen: new Map<string, string>(),
    }
    let derived: Derived | undefined
    let lastStatus: string | undefined
    let building: Promise<void> | undefined
    let closed = false

    const watcher = SecurityConfig.watch(root, { home, intervalMs: options.intervalMs, now, protect: options.protect })

    const derive = (state: SecurityConfig.State): Derived => {
      const config = state.status === "valid" ? state.config : state.status === "invalid" ? state.lastValid : undefined
      const effectiveRole = config ? roleOf(config) : SecurityRole.IMPLICIT
      const indexes = (scope: LLMScanner.Scope) =>
        scope === "tool" ? [index.read, segments.tool] : [index.llm, segments.llm]
      let tool = LLMScanner.create(config, { role: effectiveRole, scope: "tool", indexes: indexes("tool") })
      let llm = LLMScanner.create(config, { role: effectiveRole, scope: "llm", indexes: indexes("llm") })
      if (state.status === "invalid" && !config) {
        // Nothing valid to go by: still redact well-known secrets.
        tool = { ...LLMScanner.INERT, root, home, secrets: true, inert: false, scope: "tool" }
        llm = { ...LLMScanner.INERT, root, home, secrets: true, inert: false }
      }
      const logging = config?.logging ?? {
        path: path.join(root, ".opencode-security-audit.log"),
        level: "normal" as const,
        maxBytes: 10 * 1024 * 1024,
        keep: 3,
      }
      const audit =
        state.status === "none"
          ? undefined
          : derived?.audit && derived.audit.path === logging.path && derived.audit.level === logging.level
            ? derived.audit
            : SecurityAudit.create({
                path: logging.path,
                level: logging.level,
                maxBytes: logging.maxBytes,
                keep: logging.keep,
                log,
              })
      const writeMarkers = (config?.markers ?? []).filter(
        (m) => m.deniedOperations.has("write") && !SecurityRole.allowed(m.roles, effectiveRole, m.allowedRoles),
      )
      return { version: watcher.version, config, role: effectiveRole, tool, llm, audit, writeMarkers }
    }

    let warnedRole: string | undefined
    const roleOf = (config: SecurityConfig.Loaded) => {
      const wanted = env[SecurityRole.ENV]?.trim()
      if (!wanted) return config.defaultRole
      if (config.roles.has(wanted)) return wanted
      if (warnedRole !== wanted) {
        warnedRole = wanted
        log.warn(
          `${SecurityRole.ENV}=${wanted} is not a role of the security policy (known: ${[...config.roles.keys()].join(", ")}); using '${config.defaultRole}'`,
        )
      }
      return config.defaultRole
    }

    const current = (): { state: SecurityConfig.State; d: Derived } => {
      const state = watcher.state()
      if (!derived || derived.version !== watcher.version) {
        derived = derive(state)
        announce(state)
        if (state.status !== "none") scheduleIndex(true)
      }
      return { state, d: derived }
    }

    const announce = (state: SecurityConfig.State) => {
      const key = state.status === "invalid" ? `invalid:${SecurityConfig.describe(state.problems)}` : state.status
      if (key === lastStatus) return
      lastStatus = key
      if (state.status === "invalid") {
        log.error(
          `security policy is invalid; file access is refused until it is fixed:\n${SecurityConfig.describe(state.problems)}`,
        )
        derived?.audit?.logSecurityEvent({
          action: "policy-invalid",
          source: "policy",
          reason: SecurityConfig.describe(state.problems),
        })
      } else if (state.status === "valid") {
        log.info(`security policy loaded from ${state.config.files.join(", ")}`)
        derived?.audit?.logSecurityEvent({ action: "policy-loaded", source: "policy", role: derived.role })
      }
    }

    const scheduleIndex = (force: boolean) => {
      if (closed) return
      if (building) return
      const stale = index.builtAt === undefined || now() - index.builtAt > (options.indexRefreshMs ?? 30_000)
      if (!force && !stale) return
      building = buildIndex()
        .catch((error) =>
          log.warn(`security index could not be built: ${error instanceof Error ? error.message : String(error)}`),
        )
        .finally(() => {
          building = undefined
        })
    }

    /** Walks the project: finds nested policy files, and indexes protected files (paths, inodes, fingerprints). */
    const buildIndex = async () => {
      const startVersion = watcher.version
      // One walk: nested policy files first (they decide what is protected), then the protected files among the
      // same entries, within the index's own bound.
      const walked = await SecurityConfig.walk(root, { maxEntries: options.maxIndexEntries })
      if (closed) return
      watcher.add(SecurityConfig.policyFiles(root, walked.entries))
      const { state, d } = current()
      const next = emptyIndex(watcher.version)
      const max = options.maxIndexEntries ?? 100_000
      next.truncated = walked.truncated || walked.entries.length > max
      const config = d.config
      if (config && state.status !== "none") {
        let bytes = 0
        const entries = walked.entries.length > max ? walked.entries.slice(0, max) : walked.entries
        for (let visited = 1; visited <= entries.length; visited++) {
          const entry = entries[visited - 1]
          if (visited % 2000 === 0) await new Promise((r) => setImmediate(r))
          if (closed) return
          if (entry.kind !== "file") continue
          const full = entry.path.normalize("NFC")
          const ops = new Set<Operation>()
          for (const op of ["read", "write", "llm"] as const)
            if (SecurityAccess.firstDenying(config, full, op, d.role)) ops.add(op)
          if (!ops.size) continue
          next.files.set(full, ops)
          try {
            const stat = await fsp.stat(entry.path)
            next.inodes.set(`${stat.dev}:${stat.ino}`, full)
            if ((ops.has("read") || ops.has("llm")) && stat.size <= 1024 * 1024 && bytes < 32 * 1024 * 1024) {
              const buffer = await fsp.readFile(entry.path)
              if (buffer.includes(0)) continue
              const text = buffer.toString("utf8")
              bytes += text.length
              SecurityFingerprint.add(next.read, text)
              if (ops.has("llm")) SecurityFingerprint.add(next.llm, text)
            }
          } catch {
            // Vanished or unreadable: path rules still protect it.
          }
        }
      }
      next.builtAt = now()
      if (watcher.version !== startVersion && watcher.version !== next.version) return scheduleIndexLater()
      index = next
      // Scanners hold their fingerprint indexes: recompile them against the new index.
      derived = derive(state)
    }
    const scheduleIndexLater = () => {
      setTimeout(() => scheduleIndex(true), 0)
    }

    const denyInvalid = (state: Extract<SecurityConfig.State, { status: "invalid" }>): string =>
      `the security policy is invalid, so tools that may touch files are refused until it is fixed:\n${SecurityConfig.describe(state.problems)}`

    const decide = (config: SecurityConfig.Loaded, role: string, target: string, op: Operation) =>
      SecurityAccess.checkAccess(config, target, op, role, { inodes: index.inodes, home, base: directory })

    const writeProtected = (config: SecurityConfig.Loaded, role: string): string[] => {
      const out = new Set<string>()
      for (const [file, ops] of index.files) if (ops.has("write")) out.add(file)
      for (const file of config.files) out.add(file)
      out.add(config.logging.path)
      for (const file of options.protect ?? []) out.add(path.resolve(file))
      return [...out].filter((f) => SecurityAccess.firstDenying(config, f, "write", role))
    }
    const readProtected = (config: SecurityConfig.Loaded, role: string): string[] => {
      const out: string[] = []
      for (const [file, ops] of index.files)
        if (
          (ops.has("read") || ops.has("llm")) &&
          READ_OPS.some((op) => SecurityAccess.firstDenying(config, file, op, role))
        )
          out.push(file)
      return out
    }

    const message = (reason: string) =>
      `Blocked by the project's security policy (.opencode-security.json): ${reason}. Do not try to reach this content another way; ask the user if it is needed.`

    type Denial = { reason: string; path?: string; op?: Operation; rule?: string }

    /** Checks one planned request; returns the denial or undefined. */
    const checkRequest = (
      config: SecurityConfig.Loaded,
      d: Derived,
      req: SecurityTools.Request,
    ): Denial | undefined => {
      const ops: Operation[] = req.op === "read" ? READ_OPS : ["write"]
      for (const op of ops) {
        const decision = decide(config, d.role, req.path, op)
        if (!decision.allowed) return { reason: decision.reason, path: decision.path, op, rule: decision.rule.id }
      }
      const abs = SecurityPath.expand(req.path, directory, home)
      if (req.recursive) {
        const inside = (req.op === "write" ? writeProtected(config, d.role) : readProtected(config, d.role)).find(
          (f) => f !== abs && SecurityPath.isInside(f, abs, config.nocase),
        )
        if (inside) {
          const shown = SecurityAccess.display(root, inside)
          return {
            reason: `${req.via} on ${SecurityAccess.display(root, abs)} would ${req.op === "write" ? "change or remove" : "read"} ${shown}, which the policy protects`,
            path: inside,
            op: req.op,
          }
        }
      }
      if (req.op === "write" && req.change && d.writeMarkers.length) return checkSegments(d, abs, req)
      return undefined
    }

    /** Edits that would change a write-protected segment of an existing file. */
    const checkSegments = (d: Derived, abs: string, req: SecurityTools.Request): Denial | undefined => {
      let text: string
      try {
        const stat = fs.statSync(abs)
        if (!stat.isFile() || stat.size > 4 * 1024 * 1024) return undefined
        text = fs.readFileSync(abs, "utf8")
      } catch {
        return undefined
      }
      const found = SecuritySegments.find(text, d.writeMarkers)
      if (!found.length) return undefined
      const shown = SecurityAccess.display(root, abs)
      const deny = (why: string): Denial => ({ reason: `${req.via}: ${shown} ${why}`, path: abs, op: "write" })
      const change = req.change!
      if (change.kind === "replace") {
        for (const seg of found)
          if (!change.content.includes(text.slice(seg.start, seg.end)))
            return deny("has a write-protected segment that the new content does not keep unchanged")
        return undefined
      }
      if (change.kind === "edit") {
        if (!change.oldString) return undefined
        for (let at = text.indexOf(change.oldString); at >= 0; at = text.indexOf(change.oldString, at + 1)) {
          const end = at + change.oldString.length
          if (found.some((seg) => at < seg.end && end > seg.start))
            return deny(": the edit changes a write-protected segment")
        }
        return undefined
      }
      const protectedLines = new Set(
        found
          .flatMap((seg) => text.slice(seg.start, seg.end).split(/\r?\n/))
          .map((l) => l.trim())
          .filter(Boolean),
      )
      if (change.removed.some((l) => l.trim() && protectedLines.has(l.trim())))
        return deny(": the patch removes lines of a write-protected segment")
      return undefined
    }

    /** Dynamic regions (paths only partly known statically). */
    const checkDynamic = (
      config: SecurityConfig.Loaded,
      d: Derived,
      dyn: SecurityShell.Dynamic,
    ): Denial | undefined => {
      const region = dyn.prefix
      if (region) {
        const probe = region.endsWith("/") ? region + "\u2063any" : region
        for (const op of dyn.op === "read" ? READ_OPS : (["write"] as Operation[])) {
          const rule = SecurityAccess.firstDenying(config, SecurityPath.expand(probe, directory, home), op, d.role)
          if (rule)
            return {
              reason: `${dyn.command}: a path starting with ${SecurityAccess.display(root, region)} is not known statically, and that folder is protected`,
              op,
              rule: rule.id,
            }
        }
      }
      if (dyn.op === "write" && dyn.destructive) {
        const hit = writeProtected(config, d.role).find((f) => (region ? f.startsWith(region) : true))
        if (hit)
          return {
            reason: `${dyn.command}: cannot tell statically which file it changes${region ? ` below ${SecurityAccess.display(root, region)}` : ""}, and it could reach ${SecurityAccess.display(root, hit)}, which the policy protects; write the path literally`,
            path: hit,
            op: "write",
          }
      }
      return undefined
    }

    /** Arguments of tools whose meaning is unknown. */
    const checkOpaque = (
      config: SecurityConfig.Loaded,
      d: Derived,
      tool: string,
      args: unknown,
    ): Denial | undefined => {
      for (const c of SecurityPluginTool.candidates(args, { directory, home })) {
        const ops: Operation[] = c.exists ? [...READ_OPS, "write"] : ["write"]
        for (const op of ops) {
          const decision = decide(config, d.role, c.path, op)
          if (!decision.allowed)
            return {
              reason: `${tool} argument ${c.from}: ${decision.reason}${op === "write" && c.exists ? " (the tool could change it)" : ""}`,
              path: decision.path,
              op,
              rule: decision.rule.id,
            }
        }
      }
      return undefined
    }

    const sourceOf = (call: Call): Source => {
      if (call.source) return call.source
      if (SecurityTools.FILE_TOOLS.has(call.tool) || SecurityTools.NO_FILES.has(call.tool)) return "builtin-tool"
      if (SecurityMcp.serversOf(call.tool, mcpServers).length) return "mcp"
      return "plugin-tool"
    }

    /** Computes segments of files a tool reads, so copies of them are recognised in its output and later. */
    const learnSegments = (d: Derived, files: string[]) => {
      const markers = d.tool.markers
      if (!markers.length) return
      const llmMarkers = d.llm.markers
      for (const file of files.slice(0, 64)) {
        let stamp: string
        try {
          const stat = fs.statSync(file)
          if (!stat.isFile() || stat.size > 2 * 1024 * 1024) continue
          stamp = `${stat.mtimeMs}:${stat.size}`
          if (segments.seen.get(file) === stamp) continue
          segments.seen.set(file, stamp)
          const text = fs.readFileSync(file, "utf8")
          for (const line of SecuritySegments.lines(text, markers)) SecurityFingerprint.add(segments.tool, line)
          if (llmMarkers.length)
            for (const line of SecuritySegments.lines(text, llmMarkers)) SecurityFingerprint.add(segments.llm, line)
        } catch {
          continue
        }
      }
    }

    const mentionedFiles = (text: string): string[] => {
      const out = new Set<string>()
      for (const m of text.matchAll(/(?:^|[\s'"(])((?:\/|\.{1,2}\/)?[\w.@+-]+(?:\/[\w.@+-]+)*)(?=[:\s'")]|$)/gm)) {
        const p = m[1]
        if (!p.includes("/") && !p.includes(".")) continue
        const abs = path.resolve(directory, p)
        if (out.size >= 64) break
        out.add(abs)
      }
      return [...out]
    }

    const OUTPUT_MODE = (tool: string, source: Source): LLMScanner.ScanOptions["paths"] => {
      if (source !== "builtin-tool") return "token"
      if (tool === "read" || tool === "lsp") return "off"
      if (["glob", "grep", "list", "ls", "bash", "batch"].includes(tool)) return "line"
      return "token"
    }

    const audit = (d: Derived, event: SecurityAudit.Event) => d.audit?.logSecurityEvent({ role: d.role, ...event })

    const guard: Guard = {
      root,
      state: () => current().state,
      active: () => current().state.status !== "none",
      role: () => current().d.role,
      status() {
        const { state, d } = current()
        return {
          root,
          state: state.status,
          role: d.role,
          files: state.status === "valid" ? state.config.files : state.status === "invalid" ? state.files : [],
          problems: state.status === "invalid" ? state.problems : [],
          index: {
            files: index.files.size,
            fingerprintedBytes: index.read.bytes,
            truncated: index.truncated,
            builtAt: index.builtAt,
          },
          auditFailures: d.audit?.failures ?? 0,
        }
      },
      async ready() {
        current()
        if (!building && index.builtAt === undefined) scheduleIndex(true)
        while (building) await building
      },
      check(target, op) {
        const { state, d } = current()
        const abs = SecurityPath.expand(target, directory, home)
        if (state.status === "none") {
          watcher.notice(abs)
          if (watcher.state().status === "none") return { allowed: true, path: abs }
          return guard.check(target, op)
        }
        if (state.status === "invalid") return { allowed: false, path: abs, reason: denyInvalid(state) }
        return decide(state.config, d.role, abs, op)
      },
      async access(target, op, source = "builtin-tool") {
        const ops: Operation[] = op === "read" ? READ_OPS : [op]
        for (const o of ops) {
          const decision = guard.check(target, o)
          if (!decision.allowed) {
            const { d } = current()
            audit(d, {
              action: "deny",
              source,
              operation: o,
              path: SecurityAccess.display(root, decision.path),
              reason: decision.reason,
              rule: "rule" in decision ? decision.rule.id : undefined,
            })
            return decision.reason
          }
        }
        return undefined
      },
      async before(call) {
        let { state, d } = current()
        const source = sourceOf(call)
        if (state.status === "none") {
          const a = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>
          const direct = typeof a.filePath === "string" ? a.filePath : typeof a.path === "string" ? a.path : undefined
          if (direct === undefined) return { allowed: true }
          watcher.notice(SecurityPath.expand(direct, directory, home))
          ;({ state, d } = current())
          if (state.status === "none") return { allowed: true }
        }
        scheduleIndex(false)
        const base = { source, tool: call.tool, plugin: call.plugin, sessionID: call.sessionID, callID: call.callID }
        const refuse = (denial: Denial): Verdict => {
          audit(d, {
            ...base,
            action: "deny",
            operation: denial.op,
            path: denial.path ? SecurityAccess.display(root, denial.path) : undefined,
            rule: denial.rule,
            reason: denial.reason,
          })
          return { allowed: false, reason: message(denial.reason), path: denial.path, op: denial.op, rule: denial.rule }
        }
        if (state.status === "invalid") {
          if (SecurityTools.NO_FILES.has(call.tool) && source === "builtin-tool") return { allowed: true }
          return refuse({ reason: denyInvalid(state) })
        }
        const config = state.config
        if (source === "mcp") {
          const policy = SecurityMcp.policyOfTool(state, call.tool, mcpServers)
          if (policy?.policy === "blocked")
            return refuse({ reason: `MCP server ${policy.servers.join(" or ")} is blocked by the policy` })
          if (policy?.policy === "trusted") {
            audit(d, { ...base, action: "allow", server: policy.servers.join(",") })
            return { allowed: true }
          }
          const denial = checkOpaque(config, d, call.tool, call.args)
          if (denial) return refuse(denial)
          audit(d, { ...base, action: "allow" })
          return { allowed: true }
        }
        const plan =
          source === "builtin-tool"
            ? await SecurityTools.plan(call.tool, call.args, { directory, home, env })
            : undefined
        if (!plan) {
          const denial = checkOpaque(config, d, call.tool, call.args)
          if (denial) return refuse(denial)
          audit(d, { ...base, action: "allow" })
          return { allowed: true }
        }
        if (plan.error) return refuse({ reason: plan.error })
        const seen = new Set<string>()
        for (const req of plan.requests) {
          const key = `${req.op}\0${req.path}\0${req.recursive ?? ""}\0${req.change ? JSON.stringify(req.change).length : ""}`
          if (seen.has(key)) continue
          seen.add(key)
          const denial = checkRequest(config, d, req)
          if (denial) return refuse(denial)
        }
        for (const dyn of plan.dynamic) {
          const denial = checkDynamic(config, d, dyn)
          if (denial) return refuse(denial)
        }
        for (const inner of plan.opaque) {
          const denial = checkOpaque(config, d, inner.tool, inner.args)
          if (denial) return refuse(denial)
        }
        learnSegments(
          d,
          plan.requests.filter((r) => r.op === "read").map((r) => SecurityPath.expand(r.path, directory, home)),
        )
        audit(d, { ...base, action: "allow", count: plan.requests.length })
        return { allowed: true, notes: plan.notes.length ? plan.notes : undefined }
      },
      after(call, output) {
        if (typeof output !== "string" || !output) return output
        const { state, d } = current()
        if (state.status === "none") return output
        const source = sourceOf(call)
        if (
          source === "mcp" &&
          state.status === "valid" &&
          SecurityMcp.policyOfTool(state, call.tool, mcpServers)?.policy === "trusted"
        )
          return output
        const mode = OUTPUT_MODE(call.tool, source)
        if (d.tool.markers.length) learnSegments(d, mentionedFiles(output))
        let ranges = LLMScanner.scanForProtectedContent(output, d.tool, { paths: mode, base: directory })
        if (!ranges.length) return output
        if (call.tool === "grep") ranges = SecurityTools.widenGrepBlocks(output, ranges)
        const redacted = SecurityRedact.redactContent(
          output,
          ranges.map((r) => ({ start: r.start, end: r.end, label: r.label })),
          { gutter: true },
        )
        const summary = LLMScanner.summary(ranges)
        audit(d, {
          action: "redact",
          source,
          tool: call.tool,
          plugin: call.plugin,
          sessionID: call.sessionID,
          callID: call.callID,
          kinds: summary.kinds,
          rule: summary.ids.join(",") || undefined,
          count: ranges.length,
        })
        return redacted
      },
      afterValue(call, value) {
        const { state } = current()
        if (state.status === "none") return 0
        return SecurityHook.redactDeep(value, (text) => guard.after(call, text))
      },
      scanAndRedact(text, opts = {}) {
        const { state, d } = current()
        if (state.status === "none" || !text) return { text, ranges: [] }
        const scanner = (opts.scope ?? "llm") === "tool" ? d.tool : d.llm
        const ranges = ScanCache.scan(scans, text, scanner, {
          paths: opts.paths ?? "off",
          base: opts.base ?? directory,
        })
        if (!ranges.length) return { text, ranges }
        return { text: SecurityRedact.redactContent(text, ranges, { gutter: true }), ranges }
      },
      redactMessages(messages, opts = {}) {
        const { state, d } = current()
        if (state.status === "none" || !Array.isArray(messages)) return 0
        const paths = opts.paths === false ? "off" : "token"
        let changed = 0
        const kinds = new Set<string>()
        const redact = (text: string) => {
          const ranges = ScanCache.scan(scans, text, d.llm, { paths, base: directory })
          if (!ranges.length) return text
          for (const r of ranges) kinds.add(r.kind)
          return SecurityRedact.redactContent(text, ranges, { gutter: true })
        }
        for (let i = 0; i < messages.length; i++) {
          const message = messages[i]
          if (!message || typeof message !== "object") continue
          if (
            !needsRedaction(
              message,
              (text) => ScanCache.scan(scans, text, d.llm, { paths, base: directory }).length > 0,
            )
          )
            continue
          const copy = structuredClone(message)
          if (SecurityHook.redactDeep(copy, redact) > 0) {
            messages[i] = copy
            changed++
          }
        }
        if (changed)
          audit(d, {
            action: "redact",
            source: "llm",
            hook: "experimental.chat.messages.transform",
            kinds: [...kinds],
            count: changed,
          })
        return changed
      },
      async guardMessages(messages, run) {
        const { state, d } = current()
        if (state.status === "none") {
          const returned = await run(messages)
          const final = Array.isArray(returned) ? (returned as typeof messages) : messages
          return { messages: final, added: 0, removed: 0, refused: 0, discarded: 0 }
        }
        const redact = (text: string) => guard.scanAndRedact(text, { scope: "llm", paths: "token" }).text
        const diff = await SecurityHook.guardMessages(messages, redact, run)
        if (diff.refused || diff.discarded)
          audit(d, {
            action: "refuse",
            source: "plugin-hook",
            hook: "experimental.chat.messages.transform",
            count: diff.refused + diff.discarded,
            reason: `${diff.refused} added message(s) carried redaction markers; ${diff.discarded} content edit(s) discarded`,
          })
        return diff
      },
      async guardSystem(system, run) {
        const { state } = current()
        if (state.status === "none") {
          const returned = await run(system)
          return Array.isArray(returned) ? (returned as string[]) : system
        }
        return SecurityHook.guardSystem(
          system,
          (text) => guard.scanAndRedact(text, { scope: "llm", paths: "token" }).text,
          run,
        )
      },
      wrapTool(id, def, plugin) {
        return {
          ...def,
          execute: async (args: unknown, context: unknown) => {
            const call: Call = { tool: id, args, source: "plugin-tool", plugin }
            const verdict = await guard.before(call)
            if (!verdict.allowed) return `Error: ${verdict.reason}`
            const result = await def.execute(args, context)
            return guard.after(call, SecurityPluginTool.serialise(result))
          },
        }
      },
      mcpPolicy: (server) => SecurityConfig.getMcpPolicy(current().state, server),
      setMcpServers(servers) {
        mcpServers = [...servers]
      },
      get audit() {
        return current().d.audit
      },
      close() {
        closed = true
      },
    }
    current()
    scheduleIndex(true)
    return guard
  }

  /** True when any string of `value` has something to redact (a scan without copying). */
  function needsRedaction(value: unknown, protectedIn: (text: string) => boolean, depth = 0): boolean {
    if (typeof value === "string") return protectedIn(value)
    if (!value || typeof value !== "object" || depth > 32) return false
    for (const item of Array.isArray(value) ? value : Object.values(value))
      if (needsRedaction(item, protectedIn, depth + 1)) return true
    return false
  }

  /** The policy root: the worktree when it contains the directory (and is not `/`), else the directory; real path. */
  export function rootOf(options: Pick<Options, "directory" | "worktree">): string {
    const directory = realpath(options.directory)
    const worktree = options.worktree ? realpath(options.worktree) : undefined
    if (worktree && worktree !== "/" && SecurityPath.isInside(directory, worktree)) return worktree
    return directory
  }

  function realpath(p: string): string {
    try {
      return fs.realpathSync.native(path.resolve(p)).normalize("NFC")
    } catch {
      return path.resolve(p).normalize("NFC")
    }
  }
}
