import { spawn } from "child_process"
import { createHash, randomBytes } from "crypto"
import fs from "fs"
import os from "os"
import path from "path"
import z from "zod"
import { OpenCode } from "../opencode"
import { OPTIONS_FILE } from "../options"
import { Logger } from "../util/log"
import { SecurityAccess } from "./access"
import { SecurityAudit } from "./audit"
import { SecurityClosure } from "./closure"
import { SecurityTemplates } from "./templates"
import { SecurityCompile } from "./compile"
import { SecurityConfig } from "./config"
import { SecurityDecide } from "./decide"
import { SecurityEdit } from "./edit"
import { SecurityError } from "./errors"
import { SecurityFingerprint } from "./fingerprint"
import { SecurityGitConfig } from "./gitconfig"
import { SecurityHookManagers } from "./hook-managers"
import { SecurityHeld, SecurityWatched } from "./held"
import { SecurityHistory } from "./history"
import { SecurityHook } from "./hook"
import { SecurityInventory } from "./inventory"
import { SecurityMcp } from "./mcp"
import { SecurityOutput } from "./output"
import { SecurityOwnServer } from "./own-server"
import { SecurityPath } from "./paths"
import { SecurityPluginTool } from "./plugin-tool"
import { SecurityPythonPath } from "./python-path"
import { SecurityRedact } from "./redact"
import { SecurityRipgrep } from "./ripgrep"
import { SecuritySearch } from "./search"
import { SecurityRole } from "./role"
import { Sandbox } from "./sandbox"
import { SandboxPlan } from "./sandbox/plan"
import { SandboxWritable } from "./sandbox/writable"
import { SandboxSeccomp } from "./sandbox/seccomp"
import { ScanCache } from "./scan-cache"
import { LLMScanner } from "./scanner"
import type { HostSandbox, Outside } from "../host"
import { SecuritySchema } from "./schema"
import type { SecurityShell } from "./shell"
import { SecuritySearchPath } from "./search-path"
import { SecuritySegments } from "./segments"
import { TextFile } from "../util/text-file"
import { SyncProcess } from "../util/sync-process"
import { SecurityTools } from "./tools"
import { SecurityTree } from "./tree"

/**
 * The security layer of one project, for both delivery routes: the external plugin calls it from hooks on stock
 * OpenCode; the fork calls the same functions from its seams. It ties the three stages together — load (the policy
 * files, watched), compile (`SecurityCompile`: scanners, markers, sandbox mode for the role in force) and decide
 * (`SecurityDecide`: a pure function of the policy, the inventory of protected files and the call's plan) — and owns
 * the I/O around them: the project tree and inventory kept fresh, the kernel sandbox for shell commands, the audit
 * log, and redaction of what tools return. Plain data in, plain data out; no OpenCode type. With no policy file every
 * function is a fast no-op.
 *
 * @example
 * const guard = await SecurityGuard.create({ directory: "/repo" })
 * const verdict = await guard.before({ tool: "read", args: { filePath: "secrets/x" }, source: "builtin-tool" })
 * if (!verdict.allowed) throw verdict.error
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
    /**
     * Folders below `node_modules`, `.hg` and `.svn` whose state is kept to find repositories made there (default
     * 100,000; past it the rest are walked again at each look: see `SecurityTree.below`).
     */
    maxSkippedFolders?: number
    /**
     * Host paths no role may write while a policy exists: configuration files, and (ending in `/`) folders such as
     * plugin and tool folders, whose change could switch enforcement off (see `hostProtected`).
     */
    protect?: string[]
    /** Folders inside `protect` folders that stay writable (see `hostWritable`). */
    writable?: string[]
    /**
     * Folders of `protect` that the host itself writes during a session (its local state): created before a sandboxed
     * command starts, so the command finds them read-only instead of creating them (what a command creates is moved
     * aside afterwards, which would also take the host's own writes made meanwhile).
     */
    ensure?: string[]
    /**
     * Folders the host keeps for itself (its local state): no role may read or write them while a policy exists, and
     * shell commands see them as unreadable (see `SecurityConfig.LoadOptions.hide`).
     */
    hide?: string[]
    /**
     * Relative paths of the host's state that every project keeps at its own root (`.opencode/builtins-local`): hidden
     * like `hide` wherever they lie inside the project, at any depth (a nested repository's, a subfolder session's:
     * found by the index, which lists folders anyway, and by name in the tools' checks and ripgrep's exclusions), and in
     * every folder above the project (see `SecurityConfig.LoadOptions.hideNamed`).
     */
    hideNamed?: string[]
    /** Configured MCP server names, used to tell MCP tools apart (the plugin learns them from the config hook). */
    mcpServers?: string[]
    /**
     * Write the policy's audit log (default true). The read-only commands (`resources`, `discover`, `security check`)
     * pass false: asking what the policy says is no access, and a command that only reads writes nothing in the project.
     */
    audit?: boolean
    /** The shell OpenCode runs commands with (default: as OpenCode picks it from `SHELL`). */
    shell?: string
    /** Where the sandbox keeps its private state folder (default: the OS temporary folder). */
    sandboxBase?: string
    /**
     * Where the layer records the links it holds while a command runs (`SecurityHeld`; default
     * `<XDG_CACHE_HOME or ~/.cache>/opencode-builtins/held-links`, a protected host folder).
     */
    heldState?: string
    /** Keep OpenCode's own ripgrep searches away from protected files (default true; see `SecurityRipgrep`). */
    ripgrep?: boolean
    /** How long a file tool waits for running sandboxed shell commands (default `SHELL_RACE_MS`). */
    shellRaceMs?: number
    /** How long a shell command waits for a built-in tool's exclusive work before it is refused (`EXCLUSIVE_MS`). */
    exclusiveMs?: number
    /** How long a shell command waits for the one running before it (`SHELL_QUEUE_MS`). */
    shellQueueMs?: number
    /** How long an allowed file tool call whose result never came back holds shell commands (default `FILE_CALL_MS`). */
    fileCallMs?: number
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
    | { allowed: true; notes?: string[]; sandboxed?: boolean }
    | {
        allowed: false
        /** The full message shown to the model. */
        reason: string
        error:
          SecurityError.Denied | SecurityError.PolicyInvalid | SecurityError.SandboxUnavailable | SecurityError.Busy
        path?: string
        op?: Operation
        rule?: string
      }

  export type Status = {
    root: string
    state: SecurityConfig.State["status"]
    role: string
    files: string[]
    problems: SecurityConfig.Problem[]
    index: { files: number; fingerprintedBytes: number; truncated: boolean; builtAt?: number; segmented: number }
    sandbox: {
      mode: SecurityCompile.Mode
      available: boolean
      reason?: string
      mounts?: number
      bypassed?: string
      /** OpenCode's own formatters and language servers may stay on (`sandbox.allowHostTools`). */
      allowHostTools: boolean
    }
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
    access(target: string, op: Operation, source?: Source, options?: { quiet?: boolean }): Promise<string | undefined>
    /** Increments whenever a decision `access` gave may change (policy reloaded, files re-indexed). */
    accessVersion(): number
    /** Before a tool runs: may it? Shell commands are prepared for the sandbox. */
    before(call: Call): Promise<Verdict>
    /**
     * Resolves when no file tool call is between its check and its result (at most `FILE_CALL_MS`): the shell
     * environment hook waits for it before a command starts.
     */
    settleFiles(): Promise<void>
    /**
     * Runs a built-in tool's work (`Host.exclusive`) while no shell command starts: `settleFiles` waits for it, at
     * most `EXCLUSIVE_MS`, then refuses the command (`ToolRunning`).
     */
    exclusive<T>(work: (outside: Outside) => Promise<T>): Promise<T>
    /**
     * Resolves when no other sandboxed shell command is starting or running, at most `SHELL_QUEUE_MS` (then
     * `ShellRunning`): commands run one at a time, since a descriptor one command passes another over a Unix socket
     * keeps the first one's mounts, and once the first has ended they no longer hold what the policy protects.
     */
    settleShells(callID?: string): Promise<void>
    /**
     * The environment the `shell.env` hook adds for a shell started with `callID`: the sandbox entry. Throws
     * `SandboxUnavailable` when shell commands need the sandbox and it cannot start.
     */
    shellEnv(
      input: { callID?: string; sessionID?: string },
      env?: Record<string, string | undefined>,
    ): Record<string, string>
    /**
     * A command template's shell lines (`` !`cmd` ``) made to run inside the sandbox: OpenCode runs them itself, with
     * the user's shell in its own process and no hook before them, when the user runs the command (a line naming a
     * project script runs whatever the agent left in it). Each line is handed to the sandbox's launcher, which runs it
     * under the protections in force (prepared here, and again before every shell command); with an invalid policy,
     * or a `required` sandbox that cannot start, each line is replaced by a note saying it was not run. The template
     * unchanged when nothing needs it (no policy, sandbox `off`, `optional` and unavailable) or it has no shell line.
     */
    containTemplate(template: string): Promise<{ template: string; note?: string }>
    /**
     * `text` (a command's expansion, as `command.execute.before` gets it) with each line `containTemplate` held back
     * (a line holding an argument placeholder: `SecurityTemplates.hold`) replaced by its output, run now inside the
     * sandbox with the arguments OpenCode substituted, handed to the launcher as one argument no host shell parses;
     * or by a note saying it was not run (no valid policy, no sandbox, its marks out of order).
     */
    runHeldLines(text: string): Promise<string>
    /**
     * After a command's template lines may have run (the hooks right after them: `command.execute.before`,
     * `chat.message`): when one went through the sandbox's launcher, the host paths the sandbox cannot hold while
     * absent are swept as after a shell command the user typed (now when no command runs, else with the next repairs),
     * and the notes come with the next tool result.
     */
    templatesRan(): void
    /**
     * After a tool call: when the user's command lines go through the launcher and what the policy protects changed
     * since it was last prepared for them (a protected file appeared, a rule was added), the plan is prepared again,
     * so the next line runs under the protections in force (`planTemplates`).
     */
    refreshTemplates(): Promise<void>
    /**
     * How to start a long-running helper the agent's calls drive (a language server) inside the kernel sandbox, with
     * the protections in force now: bubblewrap and the arguments it reads on a descriptor (`key` changes with them).
     * Undefined when nothing needs it (no valid policy, sandbox `off`) or `optional` cannot start it; throws
     * `SandboxUnavailable` when it is `required` and cannot start.
     */
    helper(): Promise<HostSandbox | undefined>
    /**
     * A `grep` or `glob` call whose scope can reach protected content (a protected entry below or above its folder,
     * read-protected segments anywhere for grep, a path that no longer resolves): the result of the layer's own
     * contained search (`SecuritySearch`), to stand in for OpenCode's. Undefined when OpenCode's may stand.
     */
    search(call: Call): Promise<SecuritySearch.Result | undefined>
    /** Whether a `grep` or `glob` call's scope can reach protected content (when `search` stands in for OpenCode). */
    searchReaches(call: Call): boolean
    /** After a tool ran: its output with protected content removed or redacted. */
    after(call: Call, output: string): string
    /** Every string of a tool result object redacted in place (MCP results, metadata). */
    afterValue(call: Call, value: unknown): number
    /** A tool's description as sent to the model (`tool.definition`), with protected content redacted. */
    definition(toolID: string, description: string): string
    /** Marker pairs of the segments the role in force may not read, and may not change (`Host.segments`). */
    segments(): { read: SecuritySegments.Pair[]; write: SecuritySegments.Pair[] }
    /** `scanAndRedact`: scan a text and redact what is protected for `scope`. */
    scanAndRedact(
      text: string,
      options?: { scope?: LLMScanner.Scope; paths?: LLMScanner.ScanOptions["paths"]; base?: string },
    ): { text: string; ranges: LLMScanner.Range[] }
    /**
     * Model-bound text (a system prompt, compaction context) without the instruction blocks (`Instructions from:
     * <path>`) of files whose content the policy keeps from the model (links followed: an `AGENTS.md` made a link to a
     * protected file is that file).
     */
    withoutInstructions(text: string): string
    /**
     * Read output of `file` OpenCode put in model-bound text without its read tool (a synthetic read in a prompt: an
     * `@` mention, an attachment, an editor's selection, `offset`/`limit` from a line range): the lines of segments the
     * role may not read (`read` or `llm`) redacted by their numbers, and its instruction blocks as `withoutInstructions`
     * leaves them, as the read tool's after hook does.
     */
    redactRead(file: string, text: string): string
    /** Whether the policy denies one of `ops` on a path (links followed): its content must not reach the model. */
    hidesContent(target: string, ops: readonly Operation[]): boolean
    /**
     * The protected file (denied one of `ops`) a file OpenCode attached to a prompt under `name` stands for, or
     * undefined. `name` is a path as `hidesContent` takes it, or, for what an attaching client sends by its base name
     * alone (OpenCode 1.18's `run --attach … -f secrets/pin.txt` sends `pin.txt`), any protected file of that base
     * name: such a name says nothing of the folder, so a protected file of that name is assumed (fail closed).
     */
    attachedFile(name: string, ops: readonly Operation[]): string | undefined
    /**
     * Whether `text`, as a whole, is the text of an `llm`-protected file (`SecurityInventory.wholeDigest`): a prompt
     * part that carries such a file with nothing to name it.
     */
    isProtectedText(text: string): boolean
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
    /** The shell OpenCode runs commands with (learned from the host's configuration). */
    setShell(shell: string): void
    /**
     * More host paths no role may write (as `protect`): files OpenCode loads code from that only its configuration
     * names, such as plugins given by path in the `plugin` list. An entry `<folder>/*.py` (`SecurityPythonPath.entry`:
     * a folder on a local Python MCP server's `sys.path` before the standard library) holds every importable top-level
     * name of the folder the same way, present or not, new names included (`SecurityPythonPath.held`): present ones
     * read-only in the sandbox, the write tools refused, and one a command creates or changes moved aside (the
     * previous content put back).
     */
    protectHost(paths: string[]): void
    /**
     * More folders OpenCode reads definitions from, which only its configuration names (`skills.paths`): held like
     * the config folders' from now on, their current files taken as the user's.
     */
    watchTemplates(roots: SecurityTemplates.Root[]): void
    /**
     * Definitions moved aside at start because a session that ended during a command left them changed (S5-5), by kind
     * and the name OpenCode gives them (path below the root, without `.md`): OpenCode may have read them before this
     * layer started, so the configuration hook takes them out of the live configuration for this session.
     */
    recoveredDefinitions(): { kind: SecurityTemplates.Root["kind"]; name: string }[]
    /**
     * The files under the definition folders the guard watches that OpenCode could load as the command (or, by the
     * folder holding its `SKILL.md`, the skill) `name`: the path below the root without `.md`, as OpenCode names it.
     */
    definitionFiles(kind: "command" | "skill", name: string): string[]
    /**
     * `package.json` files that stay writable but may not gain a `bin` of these names (npm exec runs it for a local
     * MCP server started as `npx <name>`): the bins they declare now are the user's; one a call adds is undone (the
     * previous content put back, the agent's version moved aside).
     */
    watchPackageBins(entries: { file: string; bins: string[] }[]): void
    readonly audit: SecurityAudit.Log | undefined
    close(): void
  }

  /** How long a file tool waits for running sandboxed shell commands before it is refused (`before`). */
  export const SHELL_RACE_MS = 60_000
  /** Entries below a new link to a folder checked against the write rules; past it the link is moved aside. */
  export const LINK_WALK_MAX = 10_000
  /** How long a write-tool call whose result never came back waits before its host check runs anyway. */
  export const HOST_CHECK_MS = 10 * 60_000
  /** How long after its start a shell counts as running before it shows as bubblewrap (`Sandbox.running`). */
  export const SHELL_START_MS = 1_000
  /**
   * How long a file tool call counts as running when its result never comes back (a tool that failed, a permission
   * the user refused, another plugin's hook that threw): file tools take milliseconds, and a command should not wait
   * long for a call that will never report.
   */
  export const FILE_CALL_MS = 3_000

  /** Guards created in this process (each keys its shell admissions with its number). */
  let instances = 0

  /** The descriptor a helper's seccomp filter is read from (`Host.sandbox`'s `seccomp`). */
  export const SECCOMP_FD = 4

  /** How long a shell command waits for the one running before it (`settleShells`) before it is refused. */
  export const SHELL_QUEUE_MS = 300_000

  /** How long a shell command waits for a built-in tool's exclusive work (`exclusive`) before it is refused. */
  export const EXCLUSIVE_MS = 120_000

  /**
   * What is kept, before a call whose writes are not known in advance (another plugin's or an MCP tool, an lsp rename),
   * of the files with write-protected segments: at most this many files and bytes (see `snapshotSegmented`).
   */
  export const SNAPSHOT_FILES = 256
  export const SNAPSHOT_BYTES = 64 * 1024 * 1024

  /** Loose git objects with protected content hidden one by one inside the sandbox, at most. */
  const MAX_HIDDEN_OBJECTS = 512

  /** Folders the tree did not list are hidden one by one up to this many; past it, their parents are hidden instead. */
  export const MAX_UNLISTED_MOUNTS = 256

  /** Git commands that read or write the work tree against the index (a redacted copy would mislead them). */
  const GIT_WORKTREE = new Set([
    "add",
    "commit",
    "stash",
    "diff",
    "checkout",
    "restore",
    "reset",
    "apply",
    "am",
    "rm",
    "mv",
    "cherry-pick",
    "merge",
    "rebase",
    "pull",
    "switch",
    "worktree",
    "update-index",
    "difftool",
  ])

  /**
   * Whether a git invocation would read or write `file` in the work tree: a path argument covering it; without
   * paths, `add -A/-u`, `commit -a`, and every other work-tree command (stash, diff, checkout of a branch…), except
   * creating a branch.
   */
  /** Whether a git invocation names `file` (or a folder holding it) among its path arguments. */
  function gitNames(run: SecurityShell.GitRun, file: string): boolean {
    const cwd = run.cwd || path.dirname(file)
    const dash = run.args.indexOf("--")
    const values = new Set(["-m", "--message", "-F", "--file", "-C", "-c", "--author", "--date", "--fixup", "--squash"])
    const candidates: string[] = []
    for (let i = 0; i < run.args.length; i++) {
      const a = run.args[i]
      if (dash >= 0 && i > dash) candidates.push(a)
      else if (dash >= 0 && i === dash) continue
      else if (values.has(a)) i++
      else if (!a.startsWith("-")) candidates.push(a)
    }
    return candidates
      .map((a) => path.resolve(cwd, a))
      .filter((p) => dash >= 0 || fs.existsSync(p))
      .some((p) => SecurityPath.isInside(file, p))
  }

  /** An entry named in bytes that are not valid UTF-8, as a key: its folder and its name in hex. */
  function unspelledKey(u: SecurityTree.Unspelled): string {
    return `${u.dir}\0${u.name.toString("hex")}`
  }

  /** A name in bytes spelled in printable ASCII: every other byte, and `%`, as `%XX` (`caf\xe9` → `caf%E9`). */
  export function spell(name: Buffer): string {
    let out = ""
    for (const b of name)
      out +=
        b >= 0x20 && b < 0x7f && b !== 0x25
          ? String.fromCharCode(b)
          : `%${b.toString(16).toUpperCase().padStart(2, "0")}`
    return out
  }

  /** The most bytes a name may have on the file systems the layer runs on (Linux `NAME_MAX`). */
  const NAME_MAX = 255

  /**
   * A spelling of `name` (bytes not valid UTF-8) in printable ASCII that always fits in `NAME_MAX` and names nothing
   * yet in `dir`: `spell(name)` when it fits, else the longest prefix of it cut before an escape, `~` and the first
   * 16 hex digits of the name's SHA-256; a suffix `~2`, `~3` … when that exists. `%XX` triples each escaped byte, so
   * a 255-byte name with one bad byte has a 257-byte spelling the rename failed on (red team AN1, AN2).
   *
   * @example
   * SecurityGuard.spellWithin(Buffer.from("caf\xe9", "latin1"), "/repo") // "caf%E9"
   */
  export function spellWithin(name: Buffer, dir: string): string {
    const full = spell(name)
    const exists = (n: string) => {
      try {
        fs.lstatSync(path.join(dir, n))
        return true
      } catch {
        return false
      }
    }
    if (full.length <= NAME_MAX && !exists(full)) return full
    const hash = createHash("sha256").update(name).digest("hex").slice(0, 16)
    for (let n = 1; ; n++) {
      const tail = `~${hash}${n > 1 ? `~${n}` : ""}`
      let head = full.slice(0, NAME_MAX - tail.length)
      const cut = head.lastIndexOf("%")
      if (cut >= 0 && cut > head.length - 3) head = head.slice(0, cut)
      if (!exists(head + tail)) return head + tail
    }
  }

  /**
   * What identifies a repository's config and hooks, given its `.git` by byte path: the inode, size and change time
   * of `.git`, of the files git reads a command from (`config`, `config.worktree`, `commondir`) and of `hooks` and
   * each entry of it. Any change of one of them changes it.
   */
  function repoBytesIdentity(dot: Buffer): string {
    const stamp = (p: Buffer) => {
      try {
        const st = fs.lstatSync(p)
        return `${st.ino}:${st.size}:${st.ctimeMs}:${st.mtimeMs}`
      } catch {
        return "-"
      }
    }
    const under = (n: string) => Buffer.concat([dot, Buffer.from(path.sep + n)])
    const parts = [stamp(dot), ...["config", "config.worktree", "commondir", "hooks"].map((n) => stamp(under(n)))]
    try {
      for (const h of fs
        .readdirSync(under("hooks"), { encoding: "buffer" })
        .map((b) => Buffer.from(b))
        .sort(Buffer.compare))
        parts.push(`${h.toString("hex")}=${stamp(Buffer.concat([under("hooks"), Buffer.from(path.sep), h]))}`)
    } catch {}
    return parts.join(",")
  }

  function mtimeOf(file: string) {
    try {
      return fs.statSync(file).mtimeMs
    } catch {
      return 0
    }
  }

  function gitCovers(run: SecurityShell.GitRun, file: string): boolean {
    const flags = run.args.filter((a) => a.startsWith("-"))
    // Only commands that compare the work tree's content with the index and print it (a patch), or store it away:
    // the others either work on the index and history only, or fail on the read-only copy before changing anything.
    // `git diff` prints the work tree against the index; its output is filtered like any patch (`gitPatches`).
    if (run.sub === "stash" && run.args[0] && !["push", "save"].includes(run.args[0]) && !run.args[0].startsWith("-"))
      return false
    if (!["add", "commit", "stash"].includes(run.sub)) return false
    const cwd = run.cwd || path.dirname(file)
    const dash = run.args.indexOf("--")
    const candidates = dash >= 0 ? run.args.slice(dash + 1) : run.args.filter((a) => !a.startsWith("-"))
    const paths = candidates.map((a) => path.resolve(cwd, a)).filter((p) => dash >= 0 || fs.existsSync(p))
    if (paths.length) return paths.some((p) => SecurityPath.isInside(file, p))
    switch (run.sub) {
      case "add":
        return flags.some((f) => ["-A", "--all", "-u", "--update"].includes(f) || /^-[a-zA-Z]*[Au]/.test(f))
      case "commit":
        return flags.some((f) => f === "--all" || (/^-[a-zA-Z]+$/.test(f) && f.includes("a")))
      case "checkout":
      case "switch":
        return !flags.some((f) => ["-b", "-B", "-c", "-C", "--orphan"].includes(f))
      default:
        return true
    }
  }

  /**
   * The shell startup files of the home folder: the user's next terminal runs them outside any sandbox (zsh reads
   * `.zshenv` even for `zsh -c`), so a line the agent added there would run unseen.
   */
  /** The zsh startup files (in the home, or in `ZDOTDIR` when it is set: `HOME_RUN`). */
  const ZSH_FILES = [".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"] as const

  export const STARTUP_FILES = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish/config.fish",
  ] as const

  /**
   * What programs on the host run or trust from the home folder without the user looking, beyond the shells' first
   * startup files: what the distributions' default rc files source (`~/.bash_aliases` from Debian's and Ubuntu's
   * `~/.bashrc`, `~/.bashrc.d/` from Fedora's, `~/.alias` from openSUSE's `/etc/bash.bashrc`, `~/.bash_completion`
   * and `$XDG_CONFIG_HOME/bash_completion` from bash-completion), the other shells' startup files (csh, tcsh, ksh, mksh,
   * fish's whole configuration folder with its `conf.d/` and autoloaded functions, its `vendor_*.d/` data folders, the
   * conventional `$XDG_CONFIG_HOME/zsh/`), what a login or desktop session starts (X session scripts, pam_env,
   * systemd's user units, generators and `environment.d/`, XDG and Plasma autostart), what sshd and ssh run or trust
   * (`authorized_keys`, `rc`, `environment`, `config` and a `config.d/`; `known_hosts` stays writable), rustup's `env`
   * files `~/.profile` sources, every Python's user site-packages (its `.pth` files and `usercustomize` run at each
   * start, its packages are imported before the system's; `PYTHON_MINORS`), and the terminal editors' startup files
   * and plugin folders (vim, neovim with the plugins its managers keep in its data folder, emacs), which run code at
   * every start. The environment adds `ZDOTDIR`'s zsh files and the files `ENV`, `BASH_ENV` and
   * `PYTHONSTARTUP` name (`homeRun`).
   * Relative to the home (`home`), the configuration folder (`config`: `XDG_CONFIG_HOME` and `~/.config`) or the data
   * folder (`data`: `XDG_DATA_HOME` and `~/.local/share`) or the cache folder (`cache`, below); folders end in `/` and
   * are held whole. Present ones are read-only in the sandbox, created ones are moved aside after the command, and no
   * role's write tools may write them.
   */
  export const HOME_RUN = {
    home: [
      ...STARTUP_FILES,
      ".bash_aliases",
      ".bashrc.d/",
      ".alias",
      ".bash_completion",
      ".cshrc",
      ".tcshrc",
      ".login",
      ".logout",
      ".kshrc",
      ".mkshrc",
      ".xprofile",
      ".xsessionrc",
      ".xsession",
      ".xinitrc",
      ".pam_environment",
      ".ssh/authorized_keys",
      ".ssh/authorized_keys2",
      ".ssh/rc",
      ".ssh/environment",
      ".ssh/config",
      ".ssh/config.d/",
      ".cargo/env",
      ".cargo/env.fish",
      ".cargo/env.nu",
      ".vimrc",
      ".gvimrc",
      ".exrc",
      ".vim/",
      ".emacs",
      ".emacs.el",
      ".emacs.d/",
      // zsh runs a compiled `<file>.zwc` in place of its startup file when it is newer, or when the file is missing
      // (red team GF1), and compinit sources its dump at every interactive start (GF2; `.zcompdump-*` present are added).
      ...ZSH_FILES.map((f) => `${f}.zwc`),
      ".zcompdump",
      ".zcompdump.zwc",
      // Interpreters and version managers installed in the home: their site-packages, global npmrc, shims, hooks and
      // the init scripts a line of the user's rc sources run in the user's shells and programs on the host (GF4, GF5).
      ".pyenv/",
      ".nvm/",
      ".asdf/",
      ".rbenv/",
      ".volta/",
      ".rye/",
      ".fnm/",
      ".sdkman/",
      ".conda/",
      "miniconda3/",
      "anaconda3/",
      "miniforge3/",
      "mambaforge/",
      ".ghcup/env",
      ".deno/env",
      ".opam/opam-init/",
      ".fzf.bash",
      ".fzf.zsh",
    ],
    config: [
      "fish/",
      "zsh/",
      "bash_completion",
      "environment.d/",
      "systemd/",
      "autostart/",
      "autostart-scripts/",
      "plasma-workspace/",
      "nvim/",
      "emacs/",
      // The default URL and file handlers (`xdg-open`, `gio open`; OpenCode opens links with xdg-open) (GF3); the
      // desktop-specific `*-mimeapps.list` present are added.
      "mimeapps.list",
    ],
    data: [
      "systemd/",
      "fish/vendor_conf.d/",
      "fish/vendor_functions.d/",
      "fish/vendor_completions.d/",
      "bash-completion/",
      "nvim/",
      // The session bus starts the services named here on demand; the launcher entries and URL handlers (GF3).
      "dbus-1/",
      "applications/",
      // Pythons and node versions installed by uv and fnm.
      "uv/python/",
      "fnm/",
    ],
    // The cache folder (`cache`: `XDG_CACHE_HOME` and `~/.cache`) is read-only to commands (red team GI), but the write
    // tools may write it: held here is what a shell sources at every interactive start (red team GG4): Powerlevel10k's instant prompt and dump (`$USER` is the user's name; the
    // `p10k-*` present are added), the gitstatus daemon it runs, and the completion dumps zsh frameworks keep there.
    cache: [
      "p10k-instant-prompt-$USER.zsh",
      "p10k-instant-prompt-$USER.zsh.zwc",
      "p10k-dump-$USER.zsh",
      "p10k-dump-$USER.zsh.zwc",
      "gitstatus/",
      "zsh/",
      "prezto/",
      "oh-my-zsh/",
    ],
  } as const

  /**
   * The Python versions whose user site-packages (`<user base>/lib/python3.N/site-packages/`) are held, present or
   * not: a fixed range, so that a folder a command creates for a Python the user installs later is moved aside too;
   * the `python*` folders present in `<user base>/lib` are added (a free-threaded `python3.13t`).
   */
  const PYTHON_MINORS = { from: 6, to: 20 } as const

  /**
   * The names of the user OpenCode runs as (what zsh's `%n` gives): `/etc/passwd`'s entry for the uid (Bun's
   * `os.userInfo()` answers "unknown" where it finds none) and `os.userInfo()`'s.
   */
  function userNames(): string[] {
    const names: string[] = []
    const uid = typeof process.getuid === "function" ? process.getuid() : undefined
    try {
      for (const line of fs.readFileSync("/etc/passwd", "utf8").split("\n")) {
        const [name, , id] = line.split(":")
        if (name && id === String(uid)) names.push(name)
      }
    } catch {
      // No passwd file: `os.userInfo()` only.
    }
    try {
      names.push(os.userInfo().username)
    } catch {
      // No entry for the uid.
    }
    return names
  }

  /**
   * The absolute paths of `HOME_RUN` for an environment (folders end in `/`).
   *
   * @example
   * SecurityGuard.homeRun({ HOME: "/home/me" }) // ["/home/me/.bashrc", …, "/home/me/.config/systemd/", …]
   */
  export function homeRun(env: Record<string, string | undefined> = process.env, home?: string): string[] {
    const present = (dirs: string[], name: RegExp) =>
      [...new Set(dirs)].flatMap((d) => {
        try {
          return fs
            .readdirSync(d)
            .filter((n) => name.test(n))
            .map((n) => path.join(d, n))
        } catch {
          return []
        }
      })
    const base = home ?? (env.HOME || os.homedir())
    const under = (dirs: string[], rel: readonly string[]) =>
      [...new Set(dirs)].flatMap((d) =>
        rel.map((r) => (r.endsWith("/") ? path.join(d, r.slice(0, -1)) + path.sep : path.join(d, r))),
      )
    const absolute = (p: string | undefined): p is string => !!p && path.isAbsolute(p)
    const userBase = absolute(env.PYTHONUSERBASE) ? env.PYTHONUSERBASE : path.join(base, ".local")
    const lib = path.join(userBase, "lib")
    const pythons = new Set<string>()
    for (let minor = PYTHON_MINORS.from; minor <= PYTHON_MINORS.to; minor++) pythons.add(`python3.${minor}`)
    try {
      for (const name of fs.readdirSync(lib)) if (/^python\d/.test(name)) pythons.add(name)
    } catch {
      // No user base yet: the fixed range only.
    }
    const all = [
      ...under([base], HOME_RUN.home),
      ...under(
        [path.join(base, ".config"), ...(absolute(env.XDG_CONFIG_HOME) ? [env.XDG_CONFIG_HOME] : [])],
        HOME_RUN.config,
      ),
      ...under(
        [path.join(base, ".local", "share"), ...(absolute(env.XDG_DATA_HOME) ? [env.XDG_DATA_HOME] : [])],
        HOME_RUN.data,
      ),
      ...under(
        [path.join(base, ".cache"), ...(absolute(env.XDG_CACHE_HOME) ? [env.XDG_CACHE_HOME] : [])],
        [
          ...new Set([env.USER, env.LOGNAME, ...userNames()].filter((u): u is string => !!u && !u.includes("/"))),
        ].flatMap((user) => HOME_RUN.cache.map((r) => r.replace("$USER", user))),
      ),
      ...present(
        [path.join(base, ".cache"), ...(absolute(env.XDG_CACHE_HOME) ? [env.XDG_CACHE_HOME] : [])],
        /^p10k-(instant-prompt|dump)-/,
      ),
      ...(absolute(env.ZDOTDIR)
        ? under([env.ZDOTDIR], [...ZSH_FILES, ...ZSH_FILES.map((f) => `${f}.zwc`), ".zcompdump", ".zcompdump.zwc"])
        : []),
      // oh-my-zsh's `.zcompdump-<host>-<version>` and the desktops' `<desktop>-mimeapps.list` that exist.
      ...present([base, ...(absolute(env.ZDOTDIR) ? [env.ZDOTDIR] : [])], /^\.zcompdump/),
      ...present(
        [path.join(base, ".config"), ...(absolute(env.XDG_CONFIG_HOME) ? [env.XDG_CONFIG_HOME] : [])],
        /-mimeapps\.list$/,
      ),
      ...[env.ENV, env.BASH_ENV, env.PYTHONSTARTUP].filter(absolute).map((p) => path.resolve(p)),
      ...[...pythons].map((name) => path.join(lib, name, "site-packages") + path.sep),
    ]
    return [...new Set(all)]
  }

  /**
   * The package managers' own configuration in the home folder: OpenCode installs its npm plugins, provider packages
   * and, when it updates itself (the TUI's automatic update), a new OpenCode from the registry these name, so a
   * registry the agent wrote there would run its install scripts and replace OpenCode.
   */
  export const PACKAGE_MANAGER_FILES = [".npmrc", ".bunfig.toml"] as const

  /** Names of OpenCode's plugin and tool folders (1.2.15 and 1.18 read both spellings). */
  export const PLUGIN_FOLDERS = ["plugin", "plugins", "tool", "tools"] as const

  /**
   * Protected host paths a shell command must not create: configuration and plugin folders, which only a person (or
   * the agent) makes. Folders OpenCode itself creates during a session (`node_modules`, its cache, `bin`) are only
   * locked when they exist: one appearing during a command may be OpenCode's own.
   */
  const SWEPT = new Set<string>([
    ".git",
    "tui.json",
    "tui.jsonc",
    "opencode.json",
    "opencode.jsonc",
    "config.json",
    "package.json",
    "bun.lock",
    "bun.lockb",
    "package-lock.json",
    path.basename(OPTIONS_FILE),
    // The global configuration folder's legacy TOML file (`hostProtected`).
    "config",
    ...PLUGIN_FOLDERS,
    ...STARTUP_FILES.map((f) => path.basename(f)),
    ...PACKAGE_MANAGER_FILES,
    "bunfig.toml",
    // npm's global configuration (`<prefix>/etc/npmrc`).
    "npmrc",
  ])

  /**
   * Host paths whose change could switch enforcement off: the plugin list and options (`opencode.json`/`.jsonc` of
   * every folder from the directory up to the worktree and of `~/.config/opencode` and `~/.opencode`, `.opencode/opencode.json`, the built-ins' own options), the folders
   * OpenCode loads code from at start (`.opencode/plugin(s)`, `.opencode/tool(s)` and their global counterparts, the
   * config folders' `node_modules`, OpenCode's cache with the npm plugins it installed) and the programs it
   * downloads (`~/.local/share/opencode/bin`).
   * Folders end in `/`. Hosts pass them as `protect`, so no role may write them while a policy exists.
   *
   * @example
   * SecurityGuard.hostProtected("/repo", "/repo") // ["/repo/opencode.json", …, "/repo/.opencode/plugin/", …]
   */
  export function hostProtected(
    directory: string,
    worktree: string,
    env: Record<string, string | undefined> = process.env,
    execPath: string = process.execPath,
  ): string[] {
    const home = env.HOME || os.homedir()
    const globalDir = path.join(env.XDG_CONFIG_HOME || path.join(home, ".config"), "opencode")
    const cacheDir = path.join(env.XDG_CACHE_HOME || path.join(home, ".cache"), "opencode")
    const dataDir = path.join(env.XDG_DATA_HOME || path.join(home, ".local", "share"), "opencode")
    // OpenCode looks for `opencode.json(c)` and `.opencode/` in every folder from the directory up to the worktree
    // (up to `/` when the worktree is not above it, as for a project without git), and always in `~/.opencode/`.
    const dirs = [...new Set([...upTo(directory, worktree), ...upTo(realpath(directory), realpath(worktree))])]
    const configDirs = [...new Set([...dirs.map((d) => path.join(d, ".opencode")), path.join(home, ".opencode")])]
    configDirs.push(globalDir)
    if (env.OPENCODE_CONFIG_DIR) configDirs.push(env.OPENCODE_CONFIG_DIR)
    // OpenCode takes the worktree from the nearest `.git` above the directory (a folder or a file, even an empty one):
    // one created in another of these folders than the root (`git init` in a subfolder OpenCode started in, or in a
    // parent of a project without git) moves the next session's root, and the root's policy would no longer apply.
    const root = rootOf({ directory, worktree })
    const given = worktree && worktree !== "/" && SecurityPath.isInside(path.resolve(directory), path.resolve(worktree))
    const givenRoot = given ? path.resolve(worktree) : path.resolve(directory)
    const gitLevels = dirs.filter((d) => d !== root && d !== givenRoot)
    const search = SecuritySearchPath.folders(env, { root, home, directory })
    const searchFolders = search.protect
    return [
      ...gitLevels.map((d) => path.join(d, ".git")),
      // `tui.json(c)` (OpenCode 1.18) has a plugin list of its own, loaded into the TUI at its next start.
      ...dirs.flatMap((d) => [...CONFIG_FILES, ...TUI_FILES].map((f) => path.join(d, f))),
      ...dirs.map((d) => path.join(d, OPTIONS_FILE)),
      ...configDirs.flatMap((d) => [...CONFIG_FILES, "config.json", ...TUI_FILES].map((f) => path.join(d, f))),
      // The TUI looks for them in every folder up to `/`, past the worktree, and in each one's `.opencode/`.
      ...[...new Set([...upTo(directory, "/"), ...upTo(realpath(directory), "/")])].flatMap((d) =>
        TUI_FILES.flatMap((f) => [path.join(d, f), path.join(d, ".opencode", f)]),
      ),
      ...configDirs.flatMap((d) => PLUGIN_FOLDERS.map((f) => path.join(d, f) + path.sep)),
      // The packages plugins import (a config folder's node_modules), the npm plugins OpenCode installed and the
      // programs it downloaded (ripgrep): changed code there runs inside OpenCode at its next start.
      ...configDirs.map((d) => path.join(d, "node_modules") + path.sep),
      // OpenCode installs a config folder's package.json (lifecycle scripts included) at its next start.
      ...configDirs.flatMap((d) =>
        ["package.json", "bun.lock", "bun.lockb", "package-lock.json", ".npmrc", "bunfig.toml"].map((f) =>
          path.join(d, f),
        ),
      ),
      cacheDir + path.sep,
      // npm takes the `.npmrc` of the first folder above where it installs that holds a package.json or node_modules
      // (its "project" config: `registry`, and `git`, a program it runs for git dependencies even with scripts off).
      // OpenCode installs into each config folder and into its cache at start, so every `.npmrc` from there up to `/`
      // may be that one: the agent's `<project>/.npmrc` ran a program on the host at the next start.
      ...[...new Set([...configDirs, path.join(cacheDir, "packages")].flatMap((d) => upTo(d, "/")))].map((d) =>
        path.join(d, ".npmrc"),
      ),
      // OpenCode writes each config folder's `.gitignore` at every start, following a link a command left there.
      ...configDirs.map((d) => path.join(d, ".gitignore")),
      // Bun loads the `.env` files of the folder it installs in (OpenCode 1.2.15 runs `bun install` in each config
      // folder): `BUN_CONFIG_REGISTRY` there served a planted package to the next install.
      ...configDirs.flatMap((d) => SecurityMcp.BUN_ENV_FILES.map((f) => path.join(d, f))),
      // OpenCode's state folder (the TUI's model, key-value and history files), written on the host without a hook:
      // a link left there would have OpenCode write through it (into .git, onto a policy file).
      path.join(env.XDG_STATE_HOME || path.join(home, ".local", "state"), "opencode") + path.sep,
      // The built-ins' own cache: tree-sitter grammars found there by name are loaded into OpenCode's process.
      path.join(env.XDG_CACHE_HOME || path.join(home, ".cache"), "opencode-builtins") + path.sep,
      // bun's transpiler cache: OpenCode (a bun binary) and every bun run take a file's transpiled code from there
      // while the source is unchanged (red team GI3; commands cannot write the host's caches, the write tools not these).
      ...bunTranspilerCaches(env, home).map((d) => d + path.sep),
      // OpenCode's data folder: its snapshot repository (OpenCode runs git there at every step, with that repository's
      // config), auth.json (a "wellknown" entry loads remote configuration at start), the database (accounts whose
      // configuration is fetched at start, worktree start commands), the programs it downloaded. Its plans and
      // worktrees stay writable (`hostWritable`).
      dataDir + path.sep,
      ...(env.OPENCODE_DB && path.isAbsolute(env.OPENCODE_DB)
        ? ["", "-wal", "-shm", "-journal"].map((s) => env.OPENCODE_DB + s)
        : []),
      // The legacy TOML configuration, merged into the global one at start.
      path.join(globalDir, "config"),
      ...homeRun(env, home),
      ...PACKAGE_MANAGER_FILES.map((f) => path.join(home, f)),
      path.join(env.XDG_CONFIG_HOME || path.join(home, ".config"), ".bunfig.toml"),
      // PATH folders the user can write: a program planted there runs in place of one OpenCode starts by name (`git`
      // at every step), outside the sandbox, and in the user's own later commands.
      ...searchFolders.map((d) => d + path.sep),
      // In PATH entries that cannot be held (relative, in the project), the programs OpenCode starts by name.
      ...search.programs,
      // What the links in them lead to (a package's own folder), and the running OpenCode's own files: changed, its
      // next start runs without this layer.
      ...SecuritySearchPath.linked(searchFolders, { root, home }).map((d) => (isDir(d) ? d + path.sep : d)),
      ...SecuritySearchPath.installation(execPath, { root, home }).map((d) => d + path.sep),
      ...(env.NPM_CONFIG_USERCONFIG ? [path.resolve(env.NPM_CONFIG_USERCONFIG)] : []),
      // npm's global configuration, read when OpenCode installs plugins (its registry): `<prefix>/etc/npmrc`, the
      // prefix taken from the binary's path (`~/.opencode/etc/npmrc` for the install script's) or the environment.
      ...[
        ...new Set([
          ...[execPath, realpath(execPath)].map((p) => path.join(path.dirname(path.dirname(p)), "etc", "npmrc")),
          ...[env.PREFIX, env.NPM_CONFIG_PREFIX, env.npm_config_prefix]
            .filter((p): p is string => !!p && path.isAbsolute(p))
            .map((p) => path.join(p, "etc", "npmrc")),
          ...[env.NPM_CONFIG_GLOBALCONFIG, env.npm_config_globalconfig]
            .filter((p): p is string => !!p && path.isAbsolute(p))
            .map((p) => path.resolve(p)),
        ]),
      ],
      ...(env.OPENCODE_CONFIG ? [env.OPENCODE_CONFIG] : []),
      ...(env.OPENCODE_TUI_CONFIG ? [env.OPENCODE_TUI_CONFIG] : []),
    ]
  }

  /**
   * The user's runtime folders (`XDG_RUNTIME_DIR`, and `/run/user/<uid>`), real paths, that are emptied in the sandbox
   * as a whole (`Sandbox.Protections.empty`): the session's servers keep their sockets there (the bus, the systemd user
   * manager, PulseAudio and PipeWire, Podman and Docker, gpg-agent, the keyring, Wayland), and red teams kept finding
   * one a list of names lacked (GI4: PulseAudio `dlopen`ed a command's file on request; GI2: rootless Podman's API).
   * Only a folder that is the user's own and private (mode `0700`, as the XDG specification requires of it) and holds
   * neither the home nor the project is emptied; one that is not (a shared folder named as the runtime folder) keeps
   * the sockets `controlSockets` names hidden one by one.
   *
   * @example
   * SecurityGuard.runtimeFolders({ XDG_RUNTIME_DIR: "/run/user/1000" }, { home: "/home/me", root: "/home/me/app" })
   * // ["/run/user/1000"]
   */
  export function runtimeFolders(
    env: Record<string, string | undefined>,
    at: { home: string; root: string },
  ): string[] {
    const uid = typeof process.getuid === "function" ? process.getuid() : undefined
    const out = new Set<string>()
    for (const dir of [env.XDG_RUNTIME_DIR, uid === undefined ? undefined : `/run/user/${uid}`]) {
      if (!dir || !path.isAbsolute(dir)) continue
      try {
        const real = fs.realpathSync(dir)
        const stat = fs.statSync(real)
        if (!stat.isDirectory() || real === "/" || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0)
          continue
        const holds = (p: string) => SecurityPath.isInside(realOrAsIs(p), real)
        if (holds(at.home) || holds(at.root)) continue
        out.add(real)
      } catch {
        continue
      }
    }
    return [...out]
  }

  /**
   * The sockets of the runtime folder that commands still reach: the ssh-agent's (`SSH_AUTH_SOCK`: gnome-keyring's
   * `keyring/ssh`, gcr's `gcr/ssh`, systemd's `ssh-agent.socket`), so that git and npm fetch and push over ssh as
   * outside OpenCode. The agent signs with the user's keys for whoever connects (Limits). Only a socket counts.
   *
   * @example
   * SecurityGuard.passedSockets({ SSH_AUTH_SOCK: "/run/user/1000/keyring/ssh" }) // ["/run/user/1000/keyring/ssh"]
   */
  export function passedSockets(env: Record<string, string | undefined>): string[] {
    const sock = env.SSH_AUTH_SOCK
    if (!sock || !path.isAbsolute(sock)) return []
    try {
      const real = fs.realpathSync(sock)
      return fs.statSync(real).isSocket() ? [real] : []
    } catch {
      return []
    }
  }

  /**
   * Where bun keeps its runtime transpiler cache (`BUN_RUNTIME_TRANSPILER_CACHE_PATH`, `$XDG_CACHE_HOME/bun/@t@`,
   * `$BUN_INSTALL/install/cache/@t@`, `~/.bun/install/cache/@t@`): the transpiled code of every source file over 50 KB
   * that bun loads, taken while the source is unchanged.
   *
   * @example
   * SecurityGuard.bunTranspilerCaches({ HOME: "/home/me" }) // ["/home/me/.cache/bun/@t@", "/home/me/.bun/install/cache/@t@"]
   */
  export function bunTranspilerCaches(env: Record<string, string | undefined> = process.env, home?: string): string[] {
    const base = home ?? (env.HOME || os.homedir())
    const absolute = (p: string | undefined): p is string => !!p && path.isAbsolute(p)
    return [
      ...new Set([
        ...(absolute(env.BUN_RUNTIME_TRANSPILER_CACHE_PATH)
          ? [path.resolve(env.BUN_RUNTIME_TRANSPILER_CACHE_PATH)]
          : []),
        path.join(absolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(base, ".cache"), "bun", "@t@"),
        ...(absolute(env.BUN_INSTALL) ? [path.join(env.BUN_INSTALL, "install", "cache", "@t@")] : []),
        path.join(base, ".bun", "install", "cache", "@t@"),
      ]),
    ]
  }

  /**
   * Sockets and their folders through which a process of the user's session can have a server run a command for it,
   * outside any sandbox: tmux's and screen's servers, the session bus (the systemd user manager starts units on
   * request), the systemd user manager's own socket, Docker's and Podman's, the sound servers'. Commands in the
   * sandbox find them hidden. Those in a runtime folder that is emptied whole (`runtimeFolders`) are covered by it;
   * the names here hold where it cannot be.
   *
   * @example
   * SecurityGuard.controlSockets({ XDG_RUNTIME_DIR: "/run/user/1000", NVIM: "/run/user/1000/nvim.42.0" }, "/home/me")
   * // ["/tmp/tmux-1000", …, "/run/user/1000/bus", …, "/run/user/1000/nvim.42.0", …]
   */
  export function controlSockets(env: Record<string, string | undefined>, home: string): string[] {
    const uid = typeof process.getuid === "function" ? process.getuid() : 0
    const runtime = env.XDG_RUNTIME_DIR || `/run/user/${uid}`
    const tmux = [...new Set(["/tmp", env.TMUX_TMPDIR].filter((d): d is string => !!d))]
    return [
      ...tmux.map((d) => path.join(d, `tmux-${uid}`)),
      ...(env.TMUX ? [env.TMUX.split(",")[0]!] : []),
      "/run/screen",
      "/var/run/screen",
      path.join(home, ".screen"),
      ...(env.SCREENDIR ? [env.SCREENDIR] : []),
      ...RUNTIME_SOCKETS.map((name) => path.join(runtime, name)),
      ...ROOTFUL_SOCKETS,
      ...(["DOCKER_HOST", "CONTAINER_HOST"] as const)
        .map((name) => env[name])
        .filter((v): v is string => !!v?.startsWith("unix://"))
        .map((v) => v.slice("unix://".length)),
      // The sound servers the environment names: PulseAudio's (`PULSE_SERVER`, a list of `[{host}]unix:/path`,
      // `/path` or network addresses; `PULSE_RUNTIME_PATH`, the folder of its `native` socket) and PipeWire's (a name
      // in its runtime folder, or a path).
      ...pulseSockets(env.PULSE_SERVER ?? ""),
      ...(env.PULSE_RUNTIME_PATH ? [env.PULSE_RUNTIME_PATH] : []),
      ...(env.PIPEWIRE_RUNTIME_DIR
        ? ["pipewire-0", "pipewire-0-manager"].map((n) => path.join(env.PIPEWIRE_RUNTIME_DIR!, n))
        : []),
      ...(env.PIPEWIRE_REMOTE
        ? [path.resolve(env.PIPEWIRE_RUNTIME_DIR || runtime, env.PIPEWIRE_REMOTE.replace(/^unix:/, ""))]
        : []),
      // gpg-agent's sockets where there is no runtime folder (in its home folder).
      ...presentSockets(env.GNUPGHOME || path.join(home, ".gnupg"), /^S\.(?:gpg-agent|keyboxd|dirmngr)/),
      // Editors and terminals OpenCode runs inside, whose servers run commands or type into a shell on request: the
      // socket their variable names (Neovim's `:terminal` sets `NVIM`; `nvim --server "$NVIM" --remote-expr
      // "system(…)"` ran on the host), and their default socket folders.
      ...EDITOR_SOCKET_VARIABLES.map((name) => env[name]?.replace(/^unix:/, "")).filter((p): p is string => !!p),
      path.join(runtime, "zellij"),
      `/tmp/zellij-${uid}`,
      path.join(runtime, "emacs"),
      `/tmp/emacs${uid}`,
      path.join(runtime, "kitty"),
      // Every socket the session's environment names (red team GG6: a bus at `unix:path=/tmp/dbus-…`, the default
      // without systemd, started a host service with the command's LD_PRELOAD), and the default folders of these.
      ...SESSION_SOCKET_FOLDERS.map((f) => f.replace("$RUNTIME", runtime)),
      ...(["DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"] as const).flatMap((name) =>
        busSockets(env[name] ?? ""),
      ),
      ...(env.WAYLAND_DISPLAY ? [path.resolve(runtime, env.WAYLAND_DISPLAY)] : []),
      ...xSockets(env.DISPLAY ?? ""),
      ...presentSockets("/tmp", /^dbus-/),
    ].filter((p) => path.isAbsolute(p))
  }

  /**
   * The session's servers in the runtime folder, by name: the bus and the systemd user manager, the container engines'
   * APIs (Docker's, rootless Podman's from `podman.socket`: a container bind-mounts the home), the sound servers
   * (PulseAudio's and pipewire-pulse's `pulse/native`, whose `module-ladspa-sink` loads a file by path: red team GI4;
   * PipeWire's), gpg-agent's, the keyrings' (gnome-keyring's `control`, gcr's), snapd's session agent and
   * speech-dispatcher's. The ssh-agent's (`SSH_AUTH_SOCK`) is not among them (`passedSockets`).
   */
  const RUNTIME_SOCKETS = [
    "bus",
    "systemd",
    "docker.sock",
    "docker",
    "podman",
    "pulse",
    "pipewire-0",
    "pipewire-0-manager",
    "gnupg",
    "keyring/control",
    "gcr/control",
    "snapd-session-agent.socket",
    "speech-dispatcher",
  ] as const

  /**
   * The system's servers a user commonly reaches whose API amounts to root's or the user's own: the container engines
   * (Docker, rootful Podman, containerd, LXD, Incus, libvirt) and the system manager's private socket (root's).
   */
  const ROOTFUL_SOCKETS = [
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman",
    "/var/run/podman",
    "/run/containerd/containerd.sock",
    "/var/snap/lxd/common/lxd/unix.socket",
    "/var/lib/lxd/unix.socket",
    "/var/lib/incus/unix.socket",
    "/run/incus/unix.socket",
    "/run/libvirt/libvirt-sock",
    "/var/run/libvirt/libvirt-sock",
    "/run/systemd/private",
  ] as const

  /**
   * The local sockets of a `PULSE_SERVER` list: entries are separated by spaces, may start with `{machine id}`, and are
   * `unix:/path`, a bare `/path`, or network addresses (which name no file).
   */
  function pulseSockets(servers: string): string[] {
    return servers
      .split(/\s+/)
      .map((s) => s.replace(/^\{[^}]*\}/, ""))
      .map((s) => (s.startsWith("unix:") ? s.slice("unix:".length) : s))
      .filter((s) => s.startsWith("/"))
  }

  /**
   * Sockets and folders of the session's servers, hidden whole (`$RUNTIME` is `XDG_RUNTIME_DIR`): X11's and ICE's
   * (an X client types into the user's terminal), the Wayland compositor's, the session bus's runtime folder and the
   * accessibility bus's (which types as well).
   */
  const SESSION_SOCKET_FOLDERS = [
    "/tmp/.X11-unix",
    "/tmp/.ICE-unix",
    "$RUNTIME/wayland-0",
    "$RUNTIME/wayland-1",
    "$RUNTIME/dbus-1",
    "$RUNTIME/at-spi",
  ] as const

  /**
   * The paths a D-Bus address names: `unix:path=` sockets, and the `dbus-*` sockets present in a `unix:tmpdir=` or
   * `unix:dir=` folder. `unix:abstract=` names no file and cannot be hidden (Limits).
   */
  function busSockets(address: string): string[] {
    return address.split(";").flatMap((entry) => {
      const [transport, rest = ""] = entry.split(/:(.*)/s)
      if (transport !== "unix") return []
      const keys = Object.fromEntries(
        rest.split(",").map((kv) => {
          const [k, v = ""] = kv.split(/=(.*)/s)
          // D-Bus escapes bytes as `%XX`; a malformed escape is taken as written.
          const decoded = (() => {
            try {
              return decodeURIComponent(v)
            } catch {
              return v
            }
          })()
          return [k, decoded] as const
        }),
      )
      return [
        ...(keys.path ? [keys.path] : []),
        ...[keys.tmpdir, keys.dir].filter((d): d is string => !!d).flatMap((d) => presentSockets(d, /^dbus-/)),
      ]
    })
  }

  /** The X server socket `DISPLAY` names (`:0`, `unix:0.0`, `unix/:0`; a TCP display is not a file). */
  function xSockets(display: string): string[] {
    const m = /^(?:unix\/?)?:(\d+)(?:\.\d+)?$/.exec(display)
    if (m) return [`/tmp/.X11-unix/X${m[1]}`]
    return display.startsWith("/") ? [display.split(":")[0]!] : []
  }

  /** The entries of a folder whose names match. */
  function presentSockets(dir: string, name: RegExp): string[] {
    try {
      return fs
        .readdirSync(dir)
        .filter((n) => name.test(n))
        .map((n) => path.join(dir, n))
    } catch {
      return []
    }
  }

  /** Variables naming the server socket of the editor or terminal OpenCode runs in. */
  const EDITOR_SOCKET_VARIABLES = [
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "WEZTERM_UNIX_SOCKET",
    "KITTY_LISTEN_ON",
    "VSCODE_IPC_HOOK",
    "VSCODE_IPC_HOOK_CLI",
    "ZELLIJ_SOCKET_DIR",
    "EMACS_SOCKET_NAME",
  ] as const

  /**
   * The parts of OpenCode's data folder that hold what earlier sessions saw, of every project and every role: its
   * snapshot repositories (git objects with the content of files, protected ones included, untracked or not), the
   * session store (`opencode.db` with its `-wal`/`-shm`/`-journal`, a channel's `opencode-<channel>.db`,
   * `OPENCODE_DB`, and 1.2.15's `storage/`), its logs and the full tool outputs 1.18 saves (`tool-output/`), and the
   * credentials it keeps (`auth.json`, `mcp-auth.json`). OpenCode reads them in its own process, outside the sandbox;
   * hosts pass them as `hide`, so no role reads or writes them with a tool or a command while a policy exists.
   *
   * @example
   * SecurityGuard.hostHidden({ HOME: "/home/me" }) // ["/home/me/.local/share/opencode/snapshot", …]
   */
  export function hostHidden(env: Record<string, string | undefined> = process.env): string[] {
    const home = env.HOME || os.homedir()
    const dataDir = path.join(env.XDG_DATA_HOME || path.join(home, ".local", "share"), "opencode")
    const databases = new Set([path.join(dataDir, "opencode.db")])
    try {
      for (const name of fs.readdirSync(dataDir)) {
        const db = /^(opencode(?:-[A-Za-z0-9._-]+)?\.db)(?:-wal|-shm|-journal)?$/.exec(name)
        if (db) databases.add(path.join(dataDir, db[1]!))
      }
    } catch {
      // No data folder yet: the default database name only.
    }
    // OpenCode takes a relative OPENCODE_DB inside its data folder; ":memory:" is no file.
    if (env.OPENCODE_DB && env.OPENCODE_DB !== ":memory:") databases.add(path.resolve(dataDir, env.OPENCODE_DB))
    return [
      ...["snapshot", "storage", "log", "tool-output", "auth.json", "mcp-auth.json"].map((f) => path.join(dataDir, f)),
      ...[...databases].flatMap((db) => ["", "-wal", "-shm", "-journal"].map((suffix) => db + suffix)),
    ]
  }

  /**
   * The folders inside `hostProtected` folders that OpenCode's agent writes to through OpenCode itself: plans (plan
   * mode writes them with the write tool). A project inside the data folder (a worktree OpenCode made there) stays
   * writable too, but not the other worktrees beside it, which load their own plugins when a session starts in them.
   *
   * @example
   * SecurityGuard.hostWritable({ HOME: "/home/me" }) // ["/home/me/.local/share/opencode/plans/"]
   */
  export function hostWritable(env: Record<string, string | undefined> = process.env): string[] {
    const home = env.HOME || os.homedir()
    const dataDir = path.join(env.XDG_DATA_HOME || path.join(home, ".local", "share"), "opencode")
    return [path.join(dataDir, "plans") + path.sep]
  }

  /**
   * What git reads from a repository's `.git` that runs code or sends it to other files that do: its config and hooks,
   * `commondir` (git then takes config and hooks from the folder it names) and `config.worktree`, and OpenCode's own
   * `opencode` (the project id, which names the folder OpenCode keeps its snapshot repository in and runs git on at
   * every step: `../../<project>/x` put it in the project, with a config the agent wrote) — in the `.git`
   * folder, the folder a `.git` file names, and the folders of existing submodules and linked worktrees (`gitDirsOf`).
   */
  const GIT_REDIRECTS = ["config", "hooks", "commondir", "config.worktree", "opencode"] as const

  /** At most this many files of the plugin and tool folders are followed for their imports. */
  const MAX_PLUGIN_FILES = 500

  /**
   * The code files in the plugin and tool folders of `protect` (OpenCode loads them at start), at any depth, at most
   * `MAX_PLUGIN_FILES`: the entries of the closure the guard protects with them.
   */
  /**
   * A protected folder that is a config folder's plugin or tool folder (`.opencode/plugin/`, `~/.config/opencode/tools/`,
   * `$OPENCODE_CONFIG_DIR/plugins/`), not any protected folder that happens to have such a name (a `PATH` folder
   * `~/tools`, a package folder `…/plugin` a `PATH` link leads into).
   */
  function isPluginFolder(p: string): boolean {
    if (!p.endsWith(path.sep)) return false
    const folder = p.slice(0, -1)
    if (!(PLUGIN_FOLDERS as readonly string[]).includes(path.basename(folder))) return false
    const parent = path.dirname(folder)
    const configDir = process.env.OPENCODE_CONFIG_DIR ? path.resolve(process.env.OPENCODE_CONFIG_DIR) : undefined
    return [".opencode", "opencode"].includes(path.basename(parent)) || parent === configDir
  }

  function pluginFiles(protect: readonly string[]): string[] {
    const out: string[] = []
    const folders = protect.filter(isPluginFolder)
    for (const folder of folders) {
      let entries: fs.Dirent[]
      try {
        entries = fs.readdirSync(folder, { recursive: true, withFileTypes: true })
      } catch {
        continue
      }
      for (const e of entries)
        if (e.isFile() && /\.[cm]?[jt]sx?$/i.test(e.name) && !e.parentPath.split(path.sep).includes("node_modules"))
          if (out.push(path.join(e.parentPath, e.name)) >= MAX_PLUGIN_FILES) return out
    }
    return out
  }

  /** A template up to this many characters is kept to be put back when a change adds a shell command. */
  const TEMPLATE_KEEP = 1_000_000
  /** How many bytes of held Python modules are kept in all to be put back (see `takeModules`). */
  const MODULES_KEEP = 32_000_000
  /** What the policy files and the audit log are kept from (`lockedLinks`). */
  const WRITE_ONLY: ReadonlySet<SecurityAccess.Operation> = new Set(["write"])

  const CONFIG_FILES = ["opencode.json", "opencode.jsonc"]
  const TUI_FILES = ["tui.json", "tui.jsonc"]

  /**
   * The text of `file` when the path itself is a regular file, read without following a link (and without waiting on
   * a FIFO); undefined otherwise. For host-side reads of paths a command can change, whose text the layer keeps.
   *
   * @example
   * readOwnText("/p/.opencode/command/x.md") // undefined when x.md is a link to secrets/key.txt
   */
  function readOwnText(file: string): string | undefined {
    let fd: number | undefined
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
      if (!fs.fstatSync(fd).isFile()) return undefined
      return fs.readFileSync(fd, "utf8")
    } catch {
      return undefined
    } finally {
      if (fd !== undefined) fs.closeSync(fd)
    }
  }

  /**
   * Whether the configuration being loaded holds `p` as a link to `target` (`SecurityHeld.recover` asks, for each
   * entry of a record of held links left by a session that ended during a command): the reason when it does not. The
   * record lies in a folder no tool or command can write, but a record planted through any write primitive would
   * otherwise have a user's file moved aside and replaced by a link the agent chose (`~/.ssh/authorized_keys` → a
   * project file). Held, as the layer holds them while it runs: a policy file of the project (`SecuritySchema.FILE`)
   * leading to a policy file; a protected host path, a folder above one or a link of its chain, not leading into the
   * project (which the agent writes); the audit log the policy names or a folder above it; a link the policy's rules
   * keep from writes. The policy is loaded once policy files are put back (they are asked about first).
   */
  function heldAtStart(
    root: string,
    home: string,
    env: Record<string, string | undefined>,
    protect: readonly string[],
  ): (p: string, target: string) => string | undefined {
    const above = (p: string, into: Set<string>) => {
      for (let at = p; at !== path.dirname(at); at = path.dirname(at)) into.add(at)
    }
    const hostChain = new Set<string>()
    for (const p of protect) {
      const bare = p.endsWith(path.sep) ? p.slice(0, -1) : p
      above(bare, hostChain)
      for (const hop of SecurityPath.resolve(bare).hops) hostChain.add(hop)
    }
    let loaded: { config: SecurityConfig.Loaded; log: Set<string>; role: string } | null | undefined
    const policy = () => {
      if (loaded !== undefined) return loaded
      const state = SecurityConfig.load(root, { home, protect: [...protect] })
      if (state.status !== "valid") return (loaded = null)
      const log = new Set<string>()
      above(state.config.logging.path, log)
      const wanted = env[SecurityRole.ENV]?.trim()
      const role = wanted && state.config.roles.has(wanted) ? wanted : state.config.defaultRole
      return (loaded = { config: state.config, log, role })
    }
    const isPolicy = (file: string) => {
      try {
        if (!fs.statSync(file).isFile()) return false
        const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as unknown
        return !!parsed && typeof parsed === "object" && "version" in parsed
      } catch {
        return false
      }
    }
    return (p, target) => {
      const to = path.resolve(path.dirname(p), target)
      if (path.basename(p) === SecuritySchema.FILE && SecurityPath.isInside(p, root))
        return isPolicy(to) ? undefined : `its target ${to} is not a policy file`
      if (hostChain.has(p)) {
        if (SecurityPath.isInside(to, root) && !SecurityPath.isInside(root, to))
          return `a protected host path is never put back as a link into the project, which the agent writes (${to})`
        return undefined
      }
      const held = policy()
      if (held?.log.has(p)) return undefined
      if (held && SecurityPath.isInside(p, root) && SecurityAccess.firstDenying(held.config, p, "write", held.role))
        return undefined
      return held
        ? "the configuration being loaded holds no link there (not a policy file, a protected host path or a folder above one, the audit log, or a path its rules keep from writes)"
        : "the configuration being loaded holds no link there (no valid policy to name the audit log or rule-locked links)"
    }
  }

  /** `directory` and each of its parents up to `stop` (included), or up to `/` when `stop` is not one of them. */
  function upTo(directory: string, stop: string): string[] {
    const out: string[] = []
    let current = path.resolve(directory)
    const end = path.resolve(stop)
    while (true) {
      out.push(current)
      if (current === end) break
      const parent = path.dirname(current)
      if (parent === current) break
      current = parent
    }
    return out
  }

  /** @deprecated the files of `hostProtected` (folders left out). */
  export function hostConfigFiles(
    directory: string,
    worktree: string,
    env: Record<string, string | undefined> = process.env,
  ): string[] {
    return hostProtected(directory, worktree, env).filter((p) => !p.endsWith(path.sep))
  }

  /** The shell OpenCode runs commands with when nothing configures it: `SHELL` unless fish or nu, else bash. */
  export function defaultShell(env: Record<string, string | undefined> = process.env): string {
    const s = env.SHELL
    if (s && !["fish", "nu"].includes(path.basename(s))) return s
    for (const candidate of ["/bin/bash", "/usr/bin/bash"]) if (fs.existsSync(candidate)) return candidate
    return "/bin/sh"
  }

  /**
   * Opens the security layer of a project. Loads the policy synchronously, then indexes protected files in the
   * background (`ready()`).
   */
  export async function create(options: Options): Promise<Guard> {
    const log = options.log ?? Logger.silent
    const home = (options.home ?? os.homedir()).normalize("NFC")
    const env = options.env ?? process.env
    const now = options.now ?? Date.now
    /**
     * Names the layer moved something aside to (`<name>.blocked-by-security-<time>`) since the last look for paths a
     * call created (`createdDenied`): new entries of the layer's own making, not the call's (the aside of a path in a
     * held folder is still in that folder).
     */
    const layerAsides = new Set<string>()
    const asideOf = (p: string) => {
      const aside = `${p}.blocked-by-security-${now()}`
      layerAsides.add(aside)
      return aside
    }
    const root = rootOf(options)
    const directory = realpath(options.directory)
    const protect = withTargets(
      (options.protect ?? []).map((p) => (p.endsWith(path.sep) ? path.resolve(p) + path.sep : path.resolve(p))),
    )
    /**
     * Protected host paths that are symbolic links (dotfiles kept by stow, a PATH folder linked elsewhere), with where
     * they lead. Their targets are protected too (`withTargets`) and the sandbox holds the target (a mount cannot hold
     * a link); a command that replaces the link itself has the replacement moved aside and the link put back.
     */
    const links = new Map<string, string>()
    /** The user's home and the project, where the layer may always rename what a command planted. */
    const ownFolders = [...new Set([env.HOME || home, home, root].flatMap((d) => [path.resolve(d), realOrAsIs(d)]))]
    /**
     * The record of held links (`SecurityHeld`): a session that ended during a command (OpenCode quit, crashed or was
     * killed) left it armed, and what that command changed is put back before the policy is loaded.
     */
    const heldFolder = path.resolve(
      options.heldState ??
        path.join(env.XDG_CACHE_HOME || path.join(env.HOME || home, ".cache"), "opencode-builtins", "held-links"),
    )
    let heldFile: string | undefined = SecurityHeld.file(heldFolder, root)
    /**
     * The record's folder exists before any command runs (made now when absent), so that the sandbox holds it
     * read-only: a command could otherwise create it and leave a record of its own for the next session.
     */
    let heldReady = false
    const ensureHeld = () => {
      if (heldReady || !heldFile) return
      try {
        SecurityHeld.folder(heldFolder)
        heldReady = true
      } catch (error) {
        heldFile = undefined
        log.error(
          `[security] the record of held links cannot be kept in ${heldFolder} (${error instanceof Error ? error.message : String(error)}): a linked policy a command replaces is put back only while OpenCode runs; make that folder an ordinary folder of yours`,
        )
      }
    }
    /** Notes of the repairs made at start, for the first tool call's output (and the audit log, once it is open). */
    let startNotes: string[] = []
    let startAudit: { path: string; reason: string }[] = []
    if (heldFile) {
      const recovered = SecurityHeld.recover(heldFile, {
        root,
        movable: (p) => SecurityPath.movable(p, ownFolders),
        now: now(),
        display: (p) => SecurityAccess.display(root, p),
        holds: heldAtStart(root, home, env, protect),
      })
      if (recovered.problem) log.error(`[security] ${recovered.problem}`)
      for (const r of recovered.repaired) log.warn(r.note)
      for (const r of recovered.ignored) log.error(r.note)
      startNotes = [...recovered.repaired, ...recovered.ignored].map((r) => r.note)
      startAudit = recovered.repaired.map((r) => ({
        path: r.path,
        reason:
          "a held link was changed by a command of a session that ended before the command did; put back at start",
      }))
    }
    /**
     * The record of watched definitions (`SecurityWatched`), next to the held links: what a session that ended during a
     * command knew of the templates and watched package.json files, compared with the disk when they are first taken.
     */
    const watchedFile = heldFile ? SecurityWatched.file(heldFolder, root) : undefined
    const leftWatched = watchedFile ? SecurityWatched.take(watchedFile, now()) : undefined
    if (leftWatched?.problem) log.error(`[security] ${leftWatched.problem}`)
    let watchedArmed = false
    let watchedLast = ""
    /** Records, before a command, the definitions as last checked (`templates`, `packageBins`). */
    const armWatched = () => {
      if (!heldFile || !watchedFile) return
      const state = {
        roots: templateRoots.map((r) => ({ folder: r.folder, kind: r.kind })),
        templates: Object.fromEntries(templates),
        bins: Object.fromEntries(
          [...packageBins].map(([file, e]) => [
            file,
            { stamp: e.stamp, bins: [...e.bins], allowed: [...e.allowed], text: e.text },
          ]),
        ),
      }
      const key = JSON.stringify(state)
      if (watchedArmed && key === watchedLast) return
      try {
        SecurityWatched.arm(watchedFile, root, ripgrepOwner, state, now())
        watchedArmed = true
        watchedLast = key
      } catch (error) {
        log.error(
          `[security] could not record the watched definitions in ${watchedFile} (${error instanceof Error ? error.message : String(error)}): a template a command changes is put back only if OpenCode sees the command end`,
        )
      }
    }
    /** Records, before a command, the links held now: a session that ends during it leaves them to the next one. */
    const armHeld = () => {
      ensureHeld()
      armWatched()
      if (!heldFile || !links.size) return
      try {
        SecurityHeld.arm(heldFile, root, ripgrepOwner, links, now())
        heldArmed = true
      } catch (error) {
        log.error(
          `[security] could not record the held links in ${heldFile} (${error instanceof Error ? error.message : String(error)}): one a command replaces is put back only if OpenCode sees the command end`,
        )
      }
    }
    /** No command is running any more, and what it may have changed was checked: the record is dropped. */
    const disarmHeld = () => {
      if (!heldFile || pending.size || sweepDue) return
      if (watchedArmed && watchedFile && !deferred.size)
        try {
          SecurityWatched.disarm(watchedFile, ripgrepOwner)
          watchedArmed = false
        } catch (error) {
          log.warn(
            `[security] could not update ${watchedFile}: ${error instanceof Error ? error.message : String(error)}`,
          )
        }
      if (!heldArmed) return
      try {
        SecurityHeld.disarm(heldFile, ripgrepOwner)
        heldArmed = false
      } catch (error) {
        log.warn(`[security] could not update ${heldFile}: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
    let heldArmed = false
    const noteLinks = (list: string[]) => {
      const seen = new Set<string>()
      // Links a session that ended during a command left changed, not repaired (`SecurityHeld.disputes`): not held as
      // they are now until the user puts them back.
      const disputed = new Set(heldFile ? SecurityHeld.disputes(heldFile).map((p) => p.file) : [])
      const note = (at: string) => {
        if (disputed.has(at)) return
        try {
          if (fs.lstatSync(at).isSymbolicLink() && SecurityPath.movable(at, ownFolders) && !links.has(at))
            links.set(at, fs.readlinkSync(at))
        } catch {
          // Gone or unreadable: nothing to put back.
        }
      }
      for (const p of list) {
        const bare = p.endsWith(path.sep) ? p.slice(0, -1) : p
        // The path and the folders above it (`~/.config` linked into a dotfiles repository holds the configuration),
        // and every link of the chain it resolves through (`~/.gitconfig` → `.dotfiles/…` with `~/.dotfiles` → `src/…`).
        for (let at = bare; at !== path.dirname(at); at = path.dirname(at)) {
          if (seen.has(at)) break
          seen.add(at)
          note(at)
        }
        if (leadsElsewhere(bare)) for (const hop of SecurityPath.resolve(bare).hops) note(hop)
      }
    }
    noteLinks(protect)
    /** Where absent protected paths would be created, when a link leads there: created by a command, moved aside. */
    const danglingTargets = new Set(
      protect.flatMap((p) => {
        const target = danglingTarget(p.endsWith(path.sep) ? p.slice(0, -1) : p)
        return target ? [target] : []
      }),
    )
    let mcpServers = options.mcpServers ?? []
    let shell = options.shell ?? defaultShell(env)
    const ripgrepOwner = `guard:${root}:${Math.random().toString(36).slice(2)}`

    /** Absent config files and hook folders of repositories: created by a command, they are inspected, not moved. */
    const inspected = new Set<string>()
    /** Nested repositories a call made, already inspected by `newRepositories` (their tops). */
    const inspectedRepos = new Set<string>()
    /**
     * Repositories inside folders the tree did not list, as they were when the layer started and before each command
     * (the sandbox hides those folders from it, so they are not its doing): `newRepositories` inspects only those that appear besides them.
     */
    const unlistedRepos = new Set<string>()
    /**
     * Repositories below the folders the tree does not enter (`node_modules`, `.hg`, `.svn`) when the layer started:
     * OpenCode's snapshot runs git in them too, so their config and hooks are read-only like any other's. What is
     * known of those folders (`SecurityTree.below`) is kept between looks.
     */
    const skippedRepos = new Set<string>()
    let belowState: SecurityTree.Below | undefined
    let belowOverNoted = false
    /** Names that are not valid UTF-8 found by the first listing: the user's own, never renamed (`respell`). */
    const unspelledKnown = new Set<string>()
    /** Names a call made that could be neither renamed nor removed (`respell`): named once, not tried again. */
    const unspelledStuck = new Set<string>()
    /**
     * Repositories below those names when the layer started (`.git` by byte path, as hex), with what identifies their
     * config and hooks (`repoBytesIdentity`): one that appears there later, or whose config or hooks change, is moved
     * aside (`newRepositories`; red team AN1e).
     */
    const unspelledRepos = new Map<string, string>()
    /**
     * The root had no `.git` when the layer started: one made later is inspected (`newRepositories`), again whenever
     * it is another (`rootSeen`: the device and inode of the one last inspected).
     */
    const rootHadGit = kindOf(path.join(root, ".git")) !== undefined
    let rootSeen: string | undefined
    const rootIdentity = () => {
      try {
        const s = fs.lstatSync(path.join(root, ".git"), { bigint: true })
        const content = s.isDirectory() ? "" : `:${s.ctimeNs}:${s.size}:${s.nlink}`
        return `${s.dev}:${s.ino}${content}:${s.isDirectory() ? "dir" : "file"}`
      } catch {
        return undefined
      }
    }
    /**
     * What each known repository was before the last call that may write, by top: the device and inode of its `.git`
     * entry (with the folder a `.git` file resolves to), of each of its git folders (`gitDirsOf`) and of their
     * `config`, `config.worktree`, `commondir` and `hooks`. The sandbox makes those read-only in place, but a command
     * can rename a folder above them (the repository's folder, the git folder a `.git` file names, `.git/modules`, a
     * link on the `gitdir:` path) and put another in its place: knowing a path is not knowing the repository, so
     * `newRepositories` inspects again whatever is no longer what it was (of a file, its content too: `idOf`). Taken
     * before a call that may write — a command, a write tool, another plugin's tool — (`repoIdsArmed`), not
     * between calls: what the user changes meanwhile (`git config` on the host) is theirs. A command whose after-hook
     * never ran leaves the record armed, so the next command's comparison still covers what that one changed.
     */
    const repoIds = new Map<string, Map<string, string>>()
    let repoIdsArmed = false
    // A file's content can change in place through another name (a hard link made while the repository was new and
    // not yet read-only): its change time, size and number of names are part of what it is, a folder's are not (git
    // writes in `.git` on every command, and a changed one only has its files inspected again).
    const idOf = (p: string) => {
      try {
        const s = fs.lstatSync(p, { bigint: true })
        const kind = s.isDirectory() ? "d" : s.isFile() ? "f" : "o"
        const content = kind === "d" ? "" : `:${s.ctimeNs}:${s.size}:${s.nlink}`
        return `${s.dev}:${s.ino}:${kind}${content}`
      } catch {
        return "-"
      }
    }
    const REPO_FILES = ["config", "config.worktree", "commondir", "hooks"] as const
    const repoIdentity = (top: string): Map<string, string> => {
      const out = new Map<string, string>()
      const dot = path.join(top, ".git")
      const kind = kindOf(dot)
      out.set(dot, `${idOf(dot)}${kind === "file" ? `>${gitFileTarget(dot)?.real ?? "?"}` : ""}`)
      if (!kind) return out
      for (const dir of gitDirsOf(top)) {
        out.set(dir, idOf(dir))
        for (const name of REPO_FILES) out.set(path.join(dir, name), idOf(path.join(dir, name)))
      }
      return out
    }
    const recordRepos = () => {
      for (const top of repositories()) repoIds.set(top, repoIdentity(top))
    }
    const reposBelow = (dirs: readonly string[]) =>
      SecurityTree.find(dirs, ".git")
        .map((e) => path.dirname(e.path))
        .filter((top) => top !== root)
    /**
     * The project files OpenCode's plugins and custom tools import (`SecurityClosure`), by path → their stamp when last
     * seen. They run at OpenCode's next start outside the sandbox, but they are ordinary sources the agent must keep
     * editing (and `git checkout`, `npm install` and compilers must keep writing): they are watched, not locked. A
     * change is named in the output of the call that made it, in the log and in the audit log, so the user reviews
     * it before starting OpenCode again.
     */
    const imported = new Map<string, string>()
    const stampOf = (file: string) => {
      try {
        const st = fs.statSync(file)
        // ctime too: a command can put back a file's size and mtime (`touch -r`), not its ctime.
        return `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`
      } catch {
        return "absent"
      }
    }
    /** What plugins `entries` import is watched from now on; what cannot be followed is said in the log. */
    const watchImports = (entries: string[]) => {
      if (!entries.length) return
      const result = SecurityClosure.of(entries)
      const folders = protect.filter((p) => p.endsWith(path.sep))
      for (const p of result.paths) {
        // Package folders and the names Bun would try first are not files of the project's sources.
        if (p.endsWith(path.sep) || !fs.existsSync(p) || p.split(path.sep).includes("node_modules")) continue
        if (entries.includes(p) || folders.some((d) => p.startsWith(d))) continue
        if (!imported.has(p)) imported.set(p, stampOf(p))
      }
      for (const file of result.dynamic)
        log.warn(
          `[security] ${file} imports a module whose name is computed at run time: OpenCode loads it at start outside the sandbox, and the security layer cannot tell which file that is`,
        )
      for (const file of result.unread)
        log.warn(
          `[security] could not read the imports of ${file} (a plugin imports it): what it imports is not watched`,
        )
      if (result.truncated)
        log.warn(
          `[security] the plugins import more than ${SecurityClosure.MAX_FILES} files: only the first are watched`,
        )
    }
    watchImports(pluginFiles(protect))

    /**
     * Definitions OpenCode reads from markdown the agent can write (`SecurityTemplates`), by path → stamp, kind, content
     * (to put back) and what in them reaches past the sandbox, as first seen: a command's or skill's `` !`cmd` ``, which
     * OpenCode runs with the user's shell outside the sandbox when the command is used, and an agent's or mode's
     * permission grants, which override the user's approvals. Neither may be gained while a policy exists
     * (`allowCommandShell`, `allowAgentPermissions` lift this).
     */
    const templateRoots = SecurityTemplates.roots({
      configDirs: [...new Set(protect.filter(isPluginFolder).map((p) => path.dirname(p.slice(0, -1))))],
      dirs: [...new Set([...upTo(options.directory, root), ...upTo(directory, root)])],
      home,
    })
    type Template = {
      stamp: string
      kind: SecurityTemplates.Root["kind"]
      text?: string
      risks: string[]
      /** A command's or skill's `@file` references, resolved as OpenCode resolves them when it runs the template. */
      mentions: string[]
    }
    const templates = new Map<string, Template>()
    /**
     * A definition as OpenCode would read it (through a link: its risks), and the text to put back later only when the
     * path is a file of its own: a link's content is another file's (a read-denied one a command linked there), which
     * the put-back would copy into an ordinary project file.
     */
    /**
     * The first folder of `file`'s path inside the project, from the project down, that is a link, or undefined (none,
     * or a file outside the project, whose folders commands cannot write). A template or package.json reached through
     * such a link is another file (a read-denied one, the user's global command): its text is never kept, and a repair
     * never renames or writes through the link.
     */
    const linkInChain = (file: string): string | undefined => {
      if (!SecurityPath.isInside(file, root) || file === root) return undefined
      const parts = path.relative(root, path.dirname(file)).split(path.sep).filter(Boolean)
      let at = root
      for (const part of parts) {
        at = path.join(at, part)
        try {
          if (fs.lstatSync(at).isSymbolicLink()) return at
        } catch {
          return undefined
        }
      }
      return undefined
    }
    /**
     * What a repair of `file` renames aside: the file itself, or the folder link it was reached through. Never the file
     * a link leads to: outside the project it is the user's (their global commands), inside it may be a protected file
     * whose new name (`….blocked-by-security-…`) no rule would match any more.
     */
    const repairTarget = (file: string): { move: string; putBack: boolean } => {
      const link = linkInChain(file)
      return link ? { move: link, putBack: false } : { move: file, putBack: true }
    }
    const readTemplate = (file: string, kind: Template["kind"]): Template | undefined => {
      try {
        const stamp = stampOf(file)
        const own = linkInChain(file) ? undefined : readOwnText(file)
        const text = own ?? fs.readFileSync(file, "utf8")
        return {
          stamp,
          kind,
          text: own !== undefined && own.length <= TEMPLATE_KEEP ? own : undefined,
          risks: SecurityTemplates.risks(kind, text, file),
          mentions:
            kind === "command" || kind === "skill"
              ? SecurityTools.mentions(text, {
                  directory,
                  worktree: options.worktree ? path.resolve(options.worktree) : root,
                  home,
                })
              : [],
        }
      } catch {
        return undefined
      }
    }
    /** `package.json` files watched for a `bin` an MCP server would run (`watchPackageBins`): their last good state. */
    const packageBins = new Map<string, { bins: Set<string>; allowed: Set<string>; text?: string; stamp: string }>()
    /** A watched package.json's text, kept to be put back: never through a link (see `readTemplate`). */
    const readText = (file: string) => (linkInChain(file) ? undefined : readOwnText(file))
    /** What npm would read there, links followed (for what it declares, never kept). */
    const readThrough = (file: string) => {
      try {
        return fs.readFileSync(file, "utf8")
      } catch {
        return undefined
      }
    }
    /** Undoes a `bin` of a watched name that a call added to a watched `package.json` (see `watchPackageBins`). */
    const packageBinsChanged = (d: Derived, call: Call): string[] => {
      const notes: string[] = []
      for (const [file, entry] of packageBins) {
        const stamp = stampOf(file)
        if (stamp === entry.stamp) continue
        const text = readText(file)
        const seen = text ?? readThrough(file)
        const added =
          seen === undefined ? [] : SecurityMcp.declaredBins(seen, [...entry.bins]).filter((b) => !entry.allowed.has(b))
        const target = repairTarget(file)
        if (!added.length || !SecurityPath.movable(target.move, ownFolders)) {
          Object.assign(entry, { text, stamp })
          continue
        }
        const shown = SecurityAccess.display(root, file)
        const aside = asideOf(target.move)
        if (!target.putBack) entry.text = undefined
        try {
          // The previous text goes in as a fresh file renamed over the path: a write to the path would follow a link a
          // command put there after the rename (it ran on the host, over the policy file).
          fs.renameSync(target.move, aside)
          if (entry.text !== undefined) SecurityPath.replace(file, entry.text)
        } catch (error) {
          log.error(`could not put back ${file}: ${error instanceof Error ? error.message : String(error)}`)
          continue
        }
        entry.stamp = stampOf(file)
        audit(d, {
          action: "refuse",
          source: sourceOf(call),
          tool: call.tool,
          callID: call.callID,
          path: shown,
          reason: "a package.json gained a bin a local MCP server runs; moved aside",
        })
        const moved = `${entry.text !== undefined ? "its previous content was put back and this version" : "the file"} was moved to ${SecurityAccess.display(root, aside)}`
        const note = `[security] ${shown} gained a bin named ${added.join(", ")}. OpenCode starts a local MCP server with npx ${added[0]} at its next start, outside the sandbox, and npm would run this bin, so ${moved}.`
        log.warn(note)
        notes.push(note)
      }
      return notes
    }
    const listTemplates = () => SecurityTemplates.list(templateRoots).kinds
    /** Takes the definitions under `roots` as they are now (the user's) for those not seen yet. */
    const baseline = (roots: readonly SecurityTemplates.Root[]) => {
      for (const [file, kind] of SecurityTemplates.list(roots).kinds) {
        if (templates.has(file)) continue
        const t = readTemplate(file, kind)
        if (t) templates.set(file, t)
      }
    }

    /**
     * Definitions under `roots` that gained what reaches past the sandbox since a session that ended during a command
     * recorded them (`leftWatched`), or that appeared with it under a root that session watched: moved aside and the
     * recorded content put back, as `templatesChanged` would have after that command. Only files listed under the
     * roots the configuration has are considered: a record's other paths are never acted on.
     */
    const recoveredDefs: { kind: SecurityTemplates.Root["kind"]; name: string }[] = []
    const recoverTemplates = (roots: readonly SecurityTemplates.Root[], allow: { shell: boolean; agent: boolean }) => {
      if (!leftWatched) return
      for (const [file, kind] of SecurityTemplates.list(roots).kinds) {
        if (templates.has(file)) continue
        const was = leftWatched.templates.get(file)
        const watched = leftWatched.roots.some((r) => r.kind === kind && SecurityPath.isInside(file, r.folder))
        if (!was ? !watched : was.stamp === stampOf(file)) continue
        const next = readTemplate(file, kind)
        if (!next) continue
        const shell = kind === "command" || kind === "skill"
        const added = SecurityTemplates.added(was?.risks ?? [], next.risks)
        if (!added.length || (shell ? allow.shell : allow.agent) || !SecurityPath.movable(file, ownFolders)) continue
        const shown = SecurityAccess.display(root, file)
        const aside = asideOf(file)
        const text = was?.kind === kind ? was.text : undefined
        try {
          fs.renameSync(file, aside)
          if (text !== undefined) SecurityPath.replace(file, text)
        } catch (error) {
          log.error(`could not put back ${file}: ${error instanceof Error ? error.message : String(error)}`)
          continue
        }
        const under = roots.find((r) => r.kind === kind && SecurityPath.isInside(file, r.folder))
        if (under)
          recoveredDefs.push({
            kind,
            name: path
              .relative(under.folder, kind === "skill" ? path.dirname(file) : file)
              .replace(/\.md$/, "")
              .split(path.sep)
              .join("/"),
          })
        const first = added[0]!.length > 80 ? `${added[0]!.slice(0, 77)}...` : added[0]!
        const more = added.length > 1 ? ` and ${added.length - 1} more` : ""
        const moved = `${text !== undefined ? "its previous content was put back and this version" : "the file"} was moved to ${SecurityAccess.display(root, aside)}`
        const gained = shell ? `a shell command (!\`${first}\`${more})` : `a permission grant (${first}${more})`
        const note = `[security] ${shown} gained ${gained} while a shell command of an earlier OpenCode session ran, which ended before that command did (OpenCode quit, crashed or was killed), so no session checked it: ${moved}. If you added it yourself, put it back: it is kept from now on.`
        log.warn(note)
        startNotes.push(note)
        startAudit.push({
          path: file,
          reason: `a ${shell ? "command or skill template gained a shell command" : "agent definition gained a permission grant"} during a command of a session that ended before the command did; moved aside at start`,
        })
      }
    }
    /** What the policy allows of definitions, for `recoverTemplates` (undefined: no policy, nothing is checked). */
    const allowedNow = (state: SecurityConfig.State) => {
      const config = state.status === "valid" ? state.config : state.status === "invalid" ? state.lastValid : undefined
      if (state.status === "none") return undefined
      return {
        shell: config?.sandbox.allowCommandShell ?? false,
        agent: config?.sandbox.allowAgentPermissions ?? false,
      }
    }

    // The sandbox's own state (its entry scripts, which every command's shell reads on the host before bubblewrap
    // starts, its login home, ripgrep's exclusions) is hidden from commands by the sandbox, and from the file tools,
    // which run on the host, here: a write of the entry script through a link ran on the host at the next command.
    const sandboxState = (() => {
      try {
        return Sandbox.privateFolder(options.sandboxBase)
      } catch {
        return undefined
      }
    })()
    // The host's state kept at each project's root, in the folders above this one (a session in a subfolder of a
    // project without git, or in a repository nested in another): those inside the project are the index's.
    const namedAbove: string[] = []
    for (const name of options.hideNamed ?? [])
      for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
        namedAbove.push(path.join(dir, name))
        if (dir === path.dirname(dir)) break
      }
    // Each also by its physical path (`/home` → `var/home` on Fedora Silverblue): the tools and the contained search
    // judge real paths, so a hidden path known only by its link spelling was read, searched and listed by the other.
    const hostHidden = withTargets(
      [...(options.hide ?? []), ...namedAbove, ...(sandboxState ? [sandboxState] : [])].map((p) => path.resolve(p)),
    )
    /** `PATH` folders that do not exist yet: a command creating one has it moved aside, like a plugin folder. */
    const searchPaths = SecuritySearchPath.folders(env, { root, home: env.HOME || home, directory })
    const searchFolders = new Set([...searchPaths.protect, ...searchPaths.programs])
    /** Host paths `protectHost` added (plugins named by path, what local MCP servers run): absent ones are swept. */
    const hostSwept = new Set<string>()
    /** What the user's shell, session, ssh or Python on the host runs from the home folder (`homeRun`): swept when absent. */
    const homeSwept = new Set(homeRun(env, env.HOME || home).map((p) => (p.endsWith(path.sep) ? p.slice(0, -1) : p)))
    /** Whether an absent protected host path is moved aside when a command creates it. */
    const sweptHost = (p: string) => SWEPT.has(path.basename(p)) || hostSwept.has(p) || homeSwept.has(p)
    /** Folders whose importable Python names `protectHost` holds (`<folder>/*.py`); the watcher reads the same list. */
    const hostModules: string[] = []
    /**
     * Their held names as they were when the first of the commands since the last sweep started: stamps, and the
     * bytes to put back (up to `TEMPLATE_KEEP` each, `MODULES_KEEP` in all). Present ones are read-only in the sandbox;
     * one that is new or changed at the sweep is moved aside.
     */
    let moduleSnapshot: Map<string, { stamp: string; bytes?: Buffer }> | undefined
    const takeModules = () => {
      if (moduleSnapshot || !hostModules.length) return
      moduleSnapshot = new Map()
      let kept = 0
      for (const folder of hostModules)
        for (const file of SecurityPythonPath.present(folder)) {
          const stamp = stampOf(file)
          let bytes: Buffer | undefined
          try {
            const st = fs.lstatSync(file)
            if (st.isFile() && !linkInChain(file) && st.size <= TEMPLATE_KEEP && kept + st.size <= MODULES_KEEP) {
              bytes = fs.readFileSync(file)
              kept += bytes.length
            }
          } catch {
            bytes = undefined
          }
          moduleSnapshot.set(file, { stamp, bytes })
        }
    }
    /** Held Python names a command created or changed since `takeModules`: moved aside, the previous bytes put back. */
    const modulesChanged = (d: Derived, call?: Call): string[] => {
      const before = moduleSnapshot
      moduleSnapshot = undefined
      if (!before) return []
      const notes: string[] = []
      for (const folder of hostModules)
        for (const file of SecurityPythonPath.present(folder)) {
          const was = before.get(file)
          if (was && was.stamp === stampOf(file)) continue
          const target = repairTarget(file)
          const bytes = target.putBack ? was?.bytes : undefined
          const putBack = bytes ? () => SecurityPath.replace(file, bytes) : undefined
          notes.push(
            ...moveAside(
              d,
              target.move,
              call,
              `${SecurityAccess.display(root, folder)} is on the sys.path of a local Python MCP server OpenCode starts at its next start, outside the sandbox, where this module would shadow one it imports${putBack ? " (its previous content was put back)" : ""}`,
              putBack,
            ),
          )
        }
      return notes
    }
    const hostOpen = [
      ...(options.writable ?? []).map((p) => path.resolve(p) + path.sep),
      // A project inside a protected folder (a worktree OpenCode made elsewhere) stays writable.
      ...(protect.some((p) => p.endsWith(path.sep) && SecurityPath.isInside(root, p.slice(0, -1)))
        ? [root + path.sep]
        : []),
    ]
    const watcher = SecurityConfig.watch(root, {
      home,
      intervalMs: options.intervalMs,
      now,
      protect,
      hide: hostHidden,
      hideNamed: options.hideNamed,
      writable: hostOpen,
      modules: hostModules,
      problems: () => (heldFile ? SecurityHeld.disputes(heldFile) : []),
    })
    {
      const allow = allowedNow(watcher.state())
      if (allow) recoverTemplates(templateRoots, allow)
    }
    baseline(templateRoots)

    let tree: SecurityTree.Tree | undefined
    /** Set once the first listing's unlisted repositories are recorded (`unlistedRepos`). */
    let baselined = false
    let index = SecurityInventory.empty()
    let indexVersion = 0
    const files: SecurityInventory.Cache = new Map()
    const learned = SecurityCompile.learned()
    const seenSegments = new Map<string, string>()
    /** Scan results of long texts (history messages are scanned again on every request). */
    const scans = ScanCache.create()
    type Derived = SecurityCompile.Compiled & { version: number; indexVersion: number; audit?: SecurityAudit.Log }
    let derived: Derived | undefined
    let lastStatus: string | undefined
    let building: Promise<void> | undefined
    /**
     * An unplanned writer (another plugin's or an MCP tool, run on the host) ended, or is still out, since the tree was
     * last brought up to date: the next call's checks wait for `fresh`, so that what it moved or renamed (the folder
     * holding a protected link's target: `move_file config conf2`) is judged where it is now, not 30 s later.
     */
    let hostMoved = false
    /** Unplanned writers whose after hook has not come, by call (a lost hook is forgotten after the shell wait). */
    const hostOut = new Map<string, number>()
    let closed = false
    let sandbox: Sandbox.Instance | undefined
    /** Set when a shell command did not enter the sandbox: shell commands are refused from then on. */
    let bypassed: string | undefined
    /** Whether the model was told once that commands run without network while OpenCode serves its API. */
    let networkNoted = false
    /** Shell calls prepared for the sandbox, by call id: protected host paths absent when the call started. */
    const pending = new Map<
      string,
      { absent: string[]; at: number; unlisted?: string[]; refused?: SandboxWritable.Areas["skipped"] }
    >()
    /**
     * Protected host paths absent when a sandboxed command started whose end no hook reports (a command the user
     * typed): checked at the next tool call.
     */
    let sweepDue: string[] | undefined
    /** The host paths absent when a template's shell lines were last handed to the sandbox (`containTemplate`). */
    let templateAbsent: string[] = []
    /** Marks the lines `containTemplate` holds back (`SecurityTemplates.hold`) as this guard's own. */
    const templateNonce = randomBytes(9).toString("hex")
    /**
     * bash and the launcher of template lines, with the plan prepared under the protections in force (the policy
     * valid and the sandbox started: the caller checks), or why a line cannot run there.
     */
    const templateLauncher = async (): Promise<{ bash: string; launcher: string } | { why: string }> => {
      const bash = SecuritySearchPath.which("bash", process.env)
      if (!bash) return { why: "the shell sandbox runs the lines with bash, which was not found" }
      const { state } = current()
      await fresh()
      const latest = current()
      const config =
        latest.state.status === "valid" ? latest.state.config : state.status === "valid" ? state.config : undefined
      if (!config) return { why: "the security policy is invalid" }
      const planned = protections(latest.d, config)
      const sb = ensureSandbox()
      sb.prepare(planned.sandbox)
      // The host paths a line must not create, swept once a line has run (`templatesRan`).
      templateAbsent = planned.absent
      templateLaunch = true
      templatePlanned = accessVersion
      return { bash, launcher: sb.template() }
    }
    /**
     * The output of `bash <launcher> <cmd>` (standard output, as OpenCode keeps of a line), `cmd` an argument of the
     * process: no shell of the host reads it. In the project folder (OpenCode runs its own lines in its folder, the
     * project's) and with OpenCode's environment.
     */
    const runLauncher = (bash: string, launcher: string, cmd: string) =>
      new Promise<string>((resolve) => {
        const chunks: Buffer[] = []
        const child = spawn(bash, [launcher, cmd], {
          cwd: directory,
          env: process.env,
          stdio: ["ignore", "pipe", "ignore"],
        })
        child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
        child.on("error", (error) => resolve(`opencode-builtins: not run (${error.message})`))
        child.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")))
      })
    /** Whether a template's lines were handed to the launcher, and the `accessVersion` its plan was prepared at. */
    let templateLaunch = false
    let templatePlanned = -1
    let accessVersion = 0
    let lastProtectedKey: string | undefined

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
    let warnedRole: string | undefined

    const current = (): { state: SecurityConfig.State; d: Derived } => {
      const state = watcher.state()
      if (!derived || derived.version !== watcher.version || derived.indexVersion !== index.version) {
        const config =
          state.status === "valid" ? state.config : state.status === "invalid" ? state.lastValid : undefined
        const compiled = SecurityCompile.compile(state, {
          role: config ? roleOf(config) : SecurityRole.IMPLICIT,
          index,
          segments: learned,
          root,
        })
        const policyChanged = !derived || derived.version !== watcher.version
        if (policyChanged) holdPolicyLinks(config)
        const audit =
          state.status === "none" || options.audit === false
            ? undefined
            : derived?.audit &&
                derived.audit.path === compiled.logging.path &&
                derived.audit.level === compiled.logging.level
              ? derived.audit
              : SecurityAudit.create({
                  path: compiled.logging.path,
                  root,
                  level: compiled.logging.level,
                  maxBytes: compiled.logging.maxBytes,
                  keep: compiled.logging.keep,
                  log,
                })
        // Decisions of `access` change with the policy, the role or the set of protected files, not with every
        // re-index: listings (discovery, resources) keep their verdicts until then.
        const protectedKey = `${watcher.version}\0${compiled.role}\0${index.files.size}\0${index.inodes.size}\0${protectedDigest(index)}`
        if (protectedKey !== lastProtectedKey) {
          lastProtectedKey = protectedKey
          accessVersion++
        }
        derived = { ...compiled, version: watcher.version, indexVersion: index.version, audit }
        announce(state)
        if (startAudit.length && audit) {
          for (const { path: p, reason } of startAudit)
            audit.logSecurityEvent({
              action: "refuse",
              source: "builtin-tool",
              tool: "shell",
              role: compiled.role,
              path: SecurityAccess.display(root, p),
              reason,
            })
          startAudit = []
        }
        if (policyChanged && state.status !== "none") scheduleIndex(true)
      }
      return { state, d: derived }
    }

    /**
     * Policy files and the audit log that are symbolic links (a shared policy kept elsewhere): the sandbox's read-only
     * mount lands on the target, and a command could replace the link itself with a weaker policy. They are held like
     * protected host links (`links`): a replaced one is moved aside and the link put back after the command, and until
     * then the policy is invalid (`SecurityConfig.watch`), so nothing is decided under the replacement.
     */
    const holdPolicyLinks = (config: SecurityConfig.Loaded | undefined) => {
      for (const [file, target] of watcher.links())
        if (!links.has(file) && SecurityPath.movable(file, ownFolders)) links.set(file, target)
      if (config) noteLinks([config.logging.path])
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

    /** The policy version the current index was built under (-1 before the first build). */
    let indexedVersion = -1
    const scheduleIndex = (force: boolean) => {
      if (closed || building) return
      const stale = index.builtAt === undefined || now() - index.builtAt > (options.indexRefreshMs ?? 30_000)
      if (!force && !stale) return
      building = rebuild(force || stale ? "full" : "refresh")
        .catch((error) =>
          log.warn(`security index could not be built: ${error instanceof Error ? error.message : String(error)}`),
        )
        .finally(() => {
          building = undefined
        })
    }

    /** Lists (or refreshes) the tree, adds nested policies it holds, then rebuilds the inventory. */
    const rebuild = async (mode: "full" | "refresh") => {
      const startVersion = watcher.version
      tree =
        !tree || mode === "full"
          ? await SecurityTree.list(root, { maxEntries: options.maxIndexEntries ?? 100_000 })
          : SecurityTree.refresh(tree).tree
      if (closed) return
      if (!baselined) {
        baselined = true
        for (const top of reposBelow(tree.unlisted)) unlistedRepos.add(top)
        const below = SecurityTree.below(tree, ".git", undefined, options.maxSkippedFolders)
        belowState = below
        for (const e of below.hits) skippedRepos.add(path.dirname(e.path))
        const odd: SecurityTree.Unspelled[] = [...tree.unspelled, ...below.unspelled]
        if (tree.unlisted.length) SecurityTree.find(tree.unlisted, ".git", undefined, odd)
        for (const u of odd) unspelledKnown.add(unspelledKey(u))
        for (const g of SecurityTree.findBytes(
          odd.map((u) => u.path),
          ".git",
        ))
          unspelledRepos.set(g.toString("hex"), repoBytesIdentity(g))
      }
      watcher.add(policyFilesOf(tree))
      const { state, d } = current()
      const next =
        d.config && state.status !== "none"
          ? await SecurityInventory.build({
              config: d.config,
              role: d.role,
              tree,
              cache: files,
              now,
              version: ++indexVersion,
              policyKey: String(watcher.version),
            })
          : { ...SecurityInventory.empty(++indexVersion), builtAt: now() }
      if (closed) return
      next.truncated ||= tree.truncated
      index = next
      indexedVersion = startVersion
      if (options.ripgrep !== false) updateRipgrep()
      planTemplates()
      if (watcher.version !== startVersion) setTimeout(() => scheduleIndex(true), 0)
    }

    /**
     * The launcher's plan prepared again when the user's command lines go through it and what the policy protects
     * changed since (`accessVersion`: the policy, the role or the protected paths): OpenCode runs the lines with no
     * hook before them, so the plan must be current before the user runs a command, not only before a shell command.
     */
    const planTemplates = () => {
      if (!templateLaunch || closed || !sandbox) return
      const { state, d } = current()
      if (state.status !== "valid" || d.sandbox === "off" || accessVersion === templatePlanned) return
      try {
        const planned = protections(d, state.config)
        sandbox.prepare(planned.sandbox)
        templateAbsent = planned.absent
        templatePlanned = accessVersion
      } catch (error) {
        log.error(`[security] ${error instanceof Error ? error.message : String(error)}`)
      }
    }

    /** Brings the tree and inventory up to date before a call that depends on them (shell commands, searches). */
    const fresh = async () => {
      if (building) await building
      if (!tree) {
        scheduleIndex(true)
        while (building) await building
        return
      }
      const next = SecurityTree.refresh(tree)
      tree = next.tree
      if (!next.changed) return
      building = rebuild("refresh").finally(() => {
        building = undefined
      })
      await building
    }

    const policyFilesOf = (t: SecurityTree.Tree) => {
      const out: string[] = []
      for (const e of SecurityTree.entries(t))
        if (e.name === ".opencode-security.json" && e.kind !== "dir" && path.dirname(e.path) !== root)
          out.push(e.path.normalize("NFC"))
      return out
    }

    /** Entries whose content no search may show: read- or llm-protected paths, what protected links lead to, host paths. */
    const searchHidden = (d: Derived): { path: string; dir: boolean }[] =>
      d.config
        ? [
            ...index.top
              .filter((e) => e.ops.has("read") || e.ops.has("llm"))
              .map((e) => ({ path: e.path, dir: e.dir })),
            // What a read-protected link leads to, by its own name (ripgrep does not follow the link there).
            ...index.aliases
              .filter((a) => a.ops.has("read") || a.ops.has("llm"))
              .map((a) => ({ path: a.target, dir: a.dir })),
            ...hostHidden.map((p) => ({ path: p, dir: true })),
          ]
        : []

    /**
     * The host's state every project keeps at its root (`hideNamed`), excluded by name at any depth: one a session of a
     * nested project makes after the index was built is skipped by OpenCode's ripgrep too.
     */
    const namedGlobs = (options.hideNamed ?? []).flatMap((name) => {
      const glob = name
        .split(/[\\/]+/)
        .filter(Boolean)
        .map(SecurityRipgrep.escape)
        .join("/")
      return [`!**/${glob}`, `!**/${glob}/**`]
    })
    const updateRipgrep = () => {
      const d = current().d
      SecurityRipgrep.set(ripgrepOwner, [...SecurityRipgrep.globs(searchHidden(d)), ...(d.config ? namedGlobs : [])])
    }

    const sourceOf = (call: Call): Source => {
      if (call.source) return call.source
      if (SecurityTools.FILE_TOOLS.has(call.tool) || SecurityTools.NO_FILES.has(call.tool)) return "builtin-tool"
      if (OpenCode.MCP_RESOURCE_TOOLS.has(call.tool) || SecurityMcp.serversOf(call.tool, mcpServers).length)
        return "mcp"
      return "plugin-tool"
    }

    const audit = (d: Derived, event: SecurityAudit.Event) => d.audit?.logSecurityEvent({ role: d.role, ...event })

    const facts = (d: Derived, config: SecurityConfig.Loaded, extra: Partial<SecurityDecide.Facts> = {}) =>
      ({
        config,
        role: d.role,
        index,
        root,
        directory,
        home,
        sandboxed: false,
        segments: (file, change) => segmentChange(d, file, change),
        readSegments: (file) => readSegmented(d, file),
        aliases: [...index.aliases, ...lockedLinks(config)],
        ...extra,
      }) satisfies SecurityDecide.Facts

    /**
     * Whether a file holds a segment the role may not read (`read` or `llm` denied), read from disk now, whatever its
     * size or encoding (`SecurityOutput.fileRanges`). What OpenCode reads whole into a prompt with no read-tool output
     * step (a `task` prompt's or an agent-written template's `@file`) would carry that segment's lines to the model.
     */
    const readSegmented = (d: Derived, file: string): boolean =>
      d.readMarkers.length > 0 && SecurityOutput.fileRanges(file, d.readMarkers, "any").length > 0

    /**
     * The policy files and the audit log that are symbolic links (a shared policy linked into the project), with
     * where they lead now: that target is the policy under another name, refused to every writer like the policy.
     * Read at each decision, not only at the index's builds: the index may not hold a policy that appeared since.
     */
    const lockedLinks = (config: SecurityConfig.Loaded): SecurityAccess.Alias[] => {
      const out: SecurityAccess.Alias[] = []
      for (const file of [...config.files, config.logging.path]) {
        if (!isLink(file)) continue
        const target = SecurityPath.resolve(file).real
        if (target !== file) out.push({ link: file, target, dir: false, ops: WRITE_ONLY })
      }
      return out
    }

    /**
     * A change to a file with protected segments: a reason when it would touch one. Write-protected segments may not
     * change; an edit or patch may not even match inside a segment the role may not read (whether it applies would
     * tell what the segment holds, guess by guess). Replacing the whole file tells nothing and is judged by `write`.
     */
    const segmentChange = (d: Derived, file: string, change: SecurityTools.Change): string | undefined => {
      const hidden = change.kind === "write" ? [] : d.readMarkers
      if (!d.writeMarkers.length && !hidden.length) return undefined
      let bytes: Buffer
      try {
        const stat = fs.statSync(file)
        if (!stat.isFile()) return undefined
        bytes = fs.readFileSync(file)
      } catch {
        return undefined
      }
      const text = bytes.toString("utf8")
      // OpenCode's edit, write and patch tools read the file as UTF-8 and write the whole of it back as UTF-8: in a
      // file that is not UTF-8 (Latin-1, …) every byte that is not UTF-8 becomes U+FFFD, a write-protected segment's
      // too, and compared as "utf8" text the segment looks unchanged. Refused whatever the change, and before the
      // read-protected check, so the answer says nothing about a hidden segment (only that the file is not UTF-8,
      // which the AST search tells too).
      if (d.writeMarkers.length && TextFile.invalidAt(bytes) >= 0 && SecuritySegments.find(text, d.writeMarkers).length)
        return "the file is not UTF-8 text (UTF-16, Latin-1 or another encoding) and holds write-protected segments: OpenCode's edit and write tools rewrite the whole file as UTF-8, which would change the segments' bytes (every byte that is not UTF-8 becomes U+FFFD). Convert the file to UTF-8 first (with iconv from its own encoding, with the user's agreement), then change it"
      // UTF-16 with a byte-order mark (ripgrep searches it decoded): segments found in its decoded text protect the file
      // whole, with one answer whichever kind they are and whatever the change (OpenCode's tools would rewrite it as
      // UTF-8, and a match of the UTF-16 bytes would tell what a hidden segment holds).
      const wide = SecuritySegments.wide(bytes)
      if (
        wide !== undefined &&
        (SecuritySegments.find(wide, d.writeMarkers).length || SecuritySegments.find(wide, hidden).length)
      )
        return "the file is UTF-16 text and holds protected segments, which protect it whole: OpenCode's edit and write tools rewrite the whole file as UTF-8. Convert the file to UTF-8 first (with iconv -f UTF-16, with the user's agreement), then change it outside its segments"
      // Segments the role may not read come first, with one answer whatever the reason: the write-locked check says
      // "not in the file" for a wrong guess, so answered first it told a right guess of a hidden segment's text from a
      // wrong one (a red-team helper bisected a token that way).
      const unreadable = hidden.length ? SecuritySegments.find(text, hidden) : []
      if (unreadable.length && SecurityEdit.touches(text, change, unreadable))
        return "does not apply outside the segments the policy keeps from being read: it matches inside one or not at all, and which of the two would tell what the segment holds"
      const locked = SecuritySegments.find(text, d.writeMarkers)
      return locked.length ? SecurityEdit.touches(text, change, locked) : undefined
    }

    /**
     * The text of every file an allowed write will change that holds write-protected segments, kept until the call
     * ends: the check before the call models the tool, and a formatter OpenCode runs after an edit, or a file changed
     * between check and write, could still alter a segment. `verifySnapshots` compares and puts the file back.
     */
    const snapshots = new Map<string, { file: string; text: string; bytes: Buffer }[]>()
    /** A UTF-16 file (`SecuritySegments.wide`) whose decoded text holds write-protected segments. */
    const wideLocked = (d: Derived, bytes: Buffer) => {
      const wide = SecuritySegments.wide(bytes)
      return wide !== undefined && SecuritySegments.find(wide, d.writeMarkers).length > 0
    }
    const snapshot = (d: Derived, callID: string, plan: SecurityTools.Plan) => {
      const kept: { file: string; text: string; bytes: Buffer }[] = []
      for (const req of plan.requests) {
        if (req.op !== "write" || req.shell) continue
        const file = SecurityPath.expand(req.path, directory, home)
        try {
          const stat = fs.statSync(file)
          if (!stat.isFile() || stat.size > 16 * 1024 * 1024) continue
          // The bytes are what is put back: a file that is not UTF-8 comes back byte for byte, not with U+FFFD.
          const bytes = fs.readFileSync(file)
          const text = bytes.toString("utf8")
          if (SecuritySegments.find(text, d.writeMarkers).length || wideLocked(d, bytes))
            kept.push({ file, text, bytes })
        } catch {
          continue
        }
      }
      if (kept.length) snapshots.set(callID, kept)
      if (snapshots.size > 64) snapshots.delete(snapshots.keys().next().value!)
    }
    const verifySnapshots = (d: Derived, call: Call): string[] => {
      const kept = snapshots.get(call.callID!)
      if (!kept) return []
      snapshots.delete(call.callID!)
      const notes: string[] = []
      for (const { file, text, bytes } of kept) {
        let now: Buffer | undefined
        try {
          now = fs.readFileSync(file)
        } catch {
          now = undefined
        }
        // Compared as text and as bytes (the Latin-1 reading maps each byte to one character): read as "utf8", a
        // segment's Latin-1 byte turned into U+FFFD reads the same before and after.
        const why =
          now === undefined
            ? "the file was removed"
            : (SecuritySegments.kept(text, now.toString("utf8"), d.writeMarkers) ??
              SecuritySegments.kept(bytes.toString("latin1"), now.toString("latin1"), d.writeMarkers) ??
              SecuritySegments.kept(
                SecuritySegments.wide(bytes) ?? "",
                SecuritySegments.wide(now) ?? "",
                d.writeMarkers,
              ))
        if (!why) continue
        try {
          fs.mkdirSync(path.dirname(file), { recursive: true })
          SecurityPath.replace(file, bytes)
        } catch (error) {
          log.error(`could not restore ${file}: ${error instanceof Error ? error.message : String(error)}`)
        }
        audit(d, {
          action: "refuse",
          source: "builtin-tool",
          tool: call.tool,
          callID: call.callID,
          path: SecurityAccess.display(root, file),
          reason: `after ${call.tool}, ${why}; the file was restored`,
        })
        notes.push(
          `[security] After ${call.tool}, ${SecurityAccess.display(root, file)} no longer kept its write-protected segment (${why}, e.g. by a formatter); the file was put back as it was before this call.`,
        )
      }
      return notes
    }

    /** Computes segments of files a tool reads, so copies of them are recognised in its output and later. */
    const learnSegments = (d: Derived, list: string[]) => {
      if (!d.readMarkers.length) return
      const toolMarkers = d.tool.markers
      const llmMarkers = d.llm.markers
      for (const file of list.slice(0, 64)) {
        let stamp: string
        try {
          const stat = fs.statSync(file)
          if (!stat.isFile() || stat.size > 2 * 1024 * 1024) continue
          stamp = `${stat.mtimeMs}:${stat.ctimeMs}:${stat.size}:${stat.ino}`
          if (seenSegments.get(file) === stamp) continue
          seenSegments.set(file, stamp)
          const text = fs.readFileSync(file, "utf8")
          for (const line of SecuritySegments.lines(text, toolMarkers)) SecurityFingerprint.add(learned.tool, line)
          if (llmMarkers.length)
            for (const line of SecuritySegments.lines(text, llmMarkers)) SecurityFingerprint.add(learned.llm, line)
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
        if (out.size >= 64) break
        out.add(path.resolve(directory, p))
      }
      return [...out]
    }

    const OUTPUT_MODE = (tool: string, source: Source): LLMScanner.ScanOptions["paths"] => {
      // Another plugin's or an MCP server's tool that names a protected path likely shows its content beside it
      // (`<path>: <content>` from a batch reader): the whole line goes, as for the shell.
      if (source !== "builtin-tool") return "line"
      if (tool === "read" || tool === "lsp") return "off"
      if (["glob", "grep", "list", "ls", "bash", "batch"].includes(tool)) return "line"
      return "token"
    }

    const ensureSandbox = () => {
      sandbox ??= Sandbox.create({ base: options.sandboxBase })
      return sandbox
    }

    /**
     * The folders above a protected host path outside the project (`~/.config` above `~/.config/opencode/plugin/`), up
     * to the first whose parent a command cannot write: pinned, so a command cannot rename one aside, carrying the
     * read-only mount with it, and make the path anew (a plugin planted in a fresh `~/.config/opencode/plugin/`).
     */
    const pinAbove = (p: string, into: Set<string>, seen: Set<string>) => {
      for (let dir = path.dirname(p); dir !== path.dirname(dir); dir = path.dirname(dir)) {
        if (seen.has(dir)) return
        seen.add(dir)
        if (!writable(path.dirname(dir))) return
        if (kindOf(dir) === "dir") into.add(dir)
      }
    }

    /** What the sandbox hides, locks, masks and pins for the current policy and inventory. */
    const protections = (
      d: Derived,
      config: SecurityConfig.Loaded,
    ): {
      sandbox: Sandbox.Protections
      absent: string[]
      unlisted: string[]
      /** Writable folders left read-only (`SandboxWritable.areas`), named in the command's output. */
      refused: SandboxWritable.Areas["skipped"]
    } => {
      const hide: SandboxPlan.Entry[] = []
      const lock: SandboxPlan.Entry[] = []
      const pin = new Set<string>()
      const stillProtected = (entry: SecurityInventory.Protected) => (renamed: string) =>
        [...entry.ops].some((op) => SecurityAccess.firstDenying(config, renamed, op, d.role))
      // Folders the tree did not list (its budget ran out — a command can make 200,000 files — or they could not be
      // read): what lies below them is unknown to the inventory, so they are hidden whole rather than taken for empty.
      const unlisted = unlistedFolders()
      for (const dir of unlisted) hide.push({ path: dir, dir: true })
      // A write-protected path that is a link is locked at its target (a mount cannot hold a link); the link itself is
      // an entry of a writable folder, so it is held like a protected host link: replaced by a command (`rm vendor;
      // mkdir vendor`), the replacement is moved aside and the link put back.
      // (Only a link whose own path a rule keeps from writes: one that is protected for where it leads may go.)
      noteLinks(
        index.top
          .filter(
            (e) =>
              e.ops.has("write") &&
              isLink(e.path) &&
              SecurityAccess.firstDenying(config, e.path.normalize("NFC"), "write", d.role),
          )
          .map((e) => e.path),
      )
      for (const entry of [...index.top, ...index.links]) {
        const item = { path: entry.path, dir: entry.dir }
        if (entry.ops.has("read") || entry.ops.has("llm")) hide.push(item)
        else if (entry.ops.has("write")) lock.push(item)
        else continue
        for (const p of SandboxPlan.pins(root, entry.path, stillProtected(entry))) pin.add(p)
      }
      // Host paths that exist are read-only; those absent now are watched: a shell command creating one (a plugin
      // folder, an opencode.json naming a plugin) has its creation moved aside afterwards.
      const absent: string[] = []
      for (const dir of options.ensure ?? []) {
        try {
          fs.mkdirSync(dir, { recursive: true })
        } catch (error) {
          log.warn(`could not create ${dir}: ${error instanceof Error ? error.message : String(error)}`)
        }
      }
      for (const p of hostHidden) {
        const kind = kindOf(p)
        if (kind) hide.push({ path: p, dir: kind === "dir" })
      }
      // Servers of the user's session that run commands outside the sandbox for whoever connects (tmux run-shell,
      // screen, the systemd user manager over the session bus, Docker, PulseAudio's module loader). The runtime folder
      // is emptied whole, all but the ssh-agent's socket; the names hold elsewhere.
      const empty = runtimeFolders(env, { home, root })
      const emptied = (p: string) => empty.some((dir) => SecurityPath.isInside(realOrAsIs(p), dir))
      for (const p of controlSockets(env, home)) {
        const kind = kindOf(p)
        if (kind && !emptied(p)) hide.push({ path: p, dir: kind === "dir" })
      }
      for (const p of passedSockets(env)) if (emptied(p)) lock.push({ path: p, dir: false })
      /** Folders above protected host paths outside the project, pinned (see `pinAbove`), and those looked at. */
      const above = new Set<string>()
      const looked = new Set<string>()
      for (const p of protect.map((p) => (p.endsWith(path.sep) ? p.slice(0, -1) : p))) {
        const kind = kindOf(p)
        if (kind) {
          // A path through a link is held at its target, which is protected as well (a mount cannot hold a link, and
          // one over a link that leads nowhere fails every command).
          if (!leadsElsewhere(p) && !isLink(p)) lock.push({ path: p, dir: kind === "dir" })
        } else if (sweptHost(p) || searchFolders.has(p) || danglingTargets.has(p)) absent.push(p)
        if (!SecurityPath.isInside(p, root)) pinAbove(p, above, looked)
      }
      // `.git/config` and `.git/hooks` run code outside the sandbox (hooks, fsmonitor, aliases, pagers) when the
      // user next uses git: read-only unless the policy allows them, in the project's repository and in any nested
      // one. The `.git` folder itself is pinned: renamed aside, its config was no longer locked, and renamed back with
      // a new `core.fsmonitor` it ran at the user's next `git status`. A repository created inside the sandbox is fine.
      if (!d.allowGitConfig) {
        for (const top of repositories()) {
          const git = path.join(top, ".git")
          if (kindOf(git) === "dir") pin.add(git)
        }
        for (const p of gitConfigPaths()) {
          const kind = kindOf(p)
          if (!SecurityPath.isInside(p, root)) pinAbove(p, above, looked)
          if (kind) {
            // A link (a stow-kept ~/.gitconfig) is held at its target, which is in the list too.
            if (!leadsElsewhere(p) && !isLink(p)) lock.push({ path: p, dir: kind === "dir" })
          }
          // What redirects a repository, or lies outside the project, may not appear. A repository's own config
          // and hooks may (`git init`), but not with a setting or hook that runs a program (`inspected`).
          else {
            absent.push(p)
            if (SecurityPath.isInside(p, root) && ["config", "hooks"].includes(path.basename(p))) inspected.add(p)
          }
        }
      }
      // A policy file or audit log that is a link is held at its target: the folders the target lies in are pinned
      // too, or a command could rename one aside and write a weaker policy where the unchanged link leads.
      for (const file of [config.logging.path, ...config.files]) {
        if (!isLink(file)) continue
        const target = realOrAsIs(file)
        if (!SecurityPath.isInside(target, root)) pinAbove(target, above, looked)
        else for (let dir = path.dirname(target); dir !== root; dir = path.dirname(dir)) pin.add(dir)
      }
      for (const dir of above) pin.add(dir)
      for (const file of [...config.files, config.logging.path])
        if (fs.existsSync(file)) lock.push({ path: file, dir: false })
      const mask: Sandbox.Protections["mask"] = []
      for (const [file, ops] of index.segmented) {
        if (ops.has("read") || ops.has("llm")) {
          // A file that cannot be shown with its segments redacted (too large to read whole, or unreadable now) is
          // hidden whole, never shown whole.
          if (index.whole.has(file)) {
            hide.push({ path: file, dir: false })
            continue
          }
          try {
            const mtimeMs = fs.statSync(file).mtimeMs
            const text = fs.readFileSync(file, "utf8")
            mask.push({ path: file, text: SecurityOutput.maskInPlace(text, d.readMarkers), mtimeMs })
          } catch {
            if (fs.existsSync(file)) hide.push({ path: file, dir: false })
          }
        } else if (ops.has("write")) lock.push({ path: file, dir: false })
      }
      // Every folder above a protected path of the project (hidden, read-only or shown redacted, and the folders
      // hidden whole because they could not be listed) is pinned, up to the root: a command can then neither rename
      // nor move it, so nothing protected leaves the place where the index sees it and the next command's sandbox
      // covers it again. Moved where the index does not look (below `node_modules`, a folder whose name is not UTF-8,
      // a path longer than PATH_MAX), a folder carried its file's mount along for that one command only, and the next
      // command read it (red team AH3, AH4, AH5). A rename across a pinned folder's boundary fails with "Invalid
      // cross-device link" (`mv` copies instead).
      const pinnedAbove = new Set<string>()
      for (const e of [...hide, ...lock, ...mask]) {
        if (!SecurityPath.isInside(e.path, root)) continue
        for (
          let dir = path.dirname(e.path);
          dir !== root && SecurityPath.isInside(dir, root);
          dir = path.dirname(dir)
        ) {
          if (pinnedAbove.has(dir)) break
          pinnedAbove.add(dir)
          pin.add(dir)
        }
      }
      // The project root and its own parents are pinned: moving them would move every protected path out of reach
      // of the policy.
      for (let dir = root; dir !== path.dirname(dir); dir = path.dirname(dir)) {
        if (dir !== root && !writable(path.dirname(dir))) break
        pin.add(dir)
      }
      const objects = historyObjects(d, config)
      hide.push(...objects.hide)
      mask.push(...objects.mask)
      // A repository with objects shown redacted gets a read-only pack folder: `git gc` or `repack` inside would
      // write the redacted versions into a pack, which git on the host reads before the real loose objects.
      for (const dir of new Set(objects.mask.map((m) => path.join(path.dirname(path.dirname(m.path)), "pack"))))
        if (kindOf(dir) === "dir") lock.push({ path: dir, dir: true })
      // OpenCode's ripgrep exclusions, read by `rg` inside the sandbox too: it skips protected paths (which it could
      // not read there anyway) instead of exiting with an error for each.
      const ripgrepFile = options.ripgrep !== false ? SecurityRipgrep.file() : undefined
      const open = hostOpen.map((p) => p.slice(0, -1)).filter((p) => kindOf(p) === "dir")
      // Everything else is read-only: the project, its git folders (a linked worktree commits into its main
      // repository's), OpenCode's writable folders, and the temporary folders of `SandboxWritable.TABLE` and the commands' own caches.
      // The host's caches are read-only (the host runs what they hold): commands get private ones instead, and the
      // code caches tools keep in the shared temporary folders are held read-only (red team GI1, GI3, GI5).
      const caches = SandboxWritable.prepare(env)
      for (const p of SandboxWritable.tempCodeCaches(env)) lock.push({ path: p, dir: true })
      const allowed = SandboxWritable.areas(env, {
        root,
        extra: [
          ...(caches.folder ? [caches.folder] : []),
          root,
          ...gitHomesOf(root).writable,
          ...open,
          ...config.sandbox.writable.map((p) => SecurityPath.expand(p, root, env.HOME || home)),
        ],
      })
      // Mounts go where the kernel resolves each path: through a linked home (`/home` → `var/home`) bubblewrap cannot
      // make a mount point at the path as written, and every command would fail.
      const real = <E extends { path: string }>(e: E): E => ({ ...e, path: realOrAsIs(e.path) })
      // A locked path that is a link (a policy file or a rule-locked file linked elsewhere) is held at its target; the
      // link itself is an ordinary entry of its folder, so a command replacing it has it put back (`sweep`).
      for (const e of lock)
        if (!links.has(e.path) && isLink(e.path) && SecurityPath.movable(e.path, ownFolders))
          try {
            links.set(e.path, fs.readlinkSync(e.path))
          } catch {
            continue
          }
      return {
        sandbox: {
          hide: hide.map(real),
          lock: lock.map(real),
          mask: mask.map(real),
          pin: [...new Set([...pin].map(realOrAsIs))],
          open: open.map(realOrAsIs),
          empty,
          write: allowed.write,
          over: caches.folder && allowed.write.includes(caches.folder) ? caches.over : [],
          env: caches.folder && allowed.write.includes(caches.folder) ? caches.env : {},
          readOnly: allowed.readOnly,
          expose: ripgrepFile ? [ripgrepFile] : [],
        },
        absent,
        unlisted,
        refused: [...allowed.skipped, ...(caches.skipped ? [caches.skipped] : [])],
      }
    }

    /**
     * The folders of the tree that exist but were not listed (`SecurityTree.Tree.unlisted`), outermost only; more than
     * `MAX_UNLISTED_MOUNTS` are replaced by their parents, deepest first, until they fit (the root at worst).
     */
    const unlistedFolders = (): string[] => {
      if (!tree?.unlisted.length) return []
      const outermost = (dirs: string[]) => {
        const sorted = [...new Set(dirs)].sort((a, b) => a.length - b.length)
        const out: string[] = []
        for (const d of sorted) if (!out.some((o) => SecurityPath.isInside(d, o))) out.push(d)
        return out
      }
      let dirs = outermost(tree.unlisted.filter((d) => kindOf(d) === "dir" && SecurityPath.isInside(d, root)))
      while (dirs.length > MAX_UNLISTED_MOUNTS) {
        const deepest = Math.max(...dirs.map((d) => d.split(path.sep).length))
        dirs = outermost(dirs.map((d) => (d.split(path.sep).length === deepest && d !== root ? path.dirname(d) : d)))
      }
      return dirs
    }
    /** What lifts the hiding of unlisted folders, for messages (empty when the budget is not what hid them). */
    const unlistedFix = () =>
      tree?.truncated
        ? ` Remove the files that fill it, or raise "maxIndexEntries" in the "security" section of .opencode/opencode-builtins.json.`
        : ""
    /** Why folders are unlisted, for messages: the budget, and the largest folders listed (usually what filled it). */
    const unlistedWhy = () => {
      if (!tree?.truncated && tree?.unspelled.length) {
        // The user's own names (the first listing's) apart from those a command made that the layer could neither
        // rename nor remove (`respell`), so that the message does not present the agent's name as the user's.
        const show = (list: SecurityTree.Unspelled[]) =>
          list
            .slice(0, 3)
            .map((u) => JSON.stringify(SecurityAccess.display(root, path.join(u.dir, spell(u.name))) || "."))
            .join(", ")
        const own = tree.unspelled.filter((u) => unspelledKnown.has(unspelledKey(u)))
        const made = tree.unspelled.filter((u) => !unspelledKnown.has(unspelledKey(u)))
        const parts = [
          ...(own.length
            ? [
                `some folders of the project hold names that are not valid UTF-8 (${show(own)}, non-ASCII bytes shown as %XX), below which the security layer cannot look; rename them to UTF-8 names outside OpenCode`,
              ]
            : []),
          ...(made.length
            ? [
                `a command of this session made names that are not valid UTF-8 (${show(made)}, non-ASCII bytes shown as %XX) that the security layer could neither rename nor remove; remove them outside OpenCode`,
              ]
            : []),
        ]
        return parts.join("; and ")
      }
      if (!tree?.truncated) return "some folders of the project could not be read by the security layer"
      const cut = tree.cut
        ? `; it stopped at ${SecurityAccess.display(root, tree.cut.dir) || "."}, which holds ${tree.cut.entries} entries`
        : ""
      return `the project has more than ${tree.maxEntries} files and folders, the most the security index lists${cut}`
    }

    /**
     * Loose objects of the project's repositories (its own and any nested one) that hold protected content: files
     * committed or staged before the policy protected them are hidden (a command could decompress them from
     * `.git/objects` without git); every version of a tracked file with protected segments is shown with them
     * redacted in place (same length), so git inside the sandbox still diffs, shows and blames that file. Packed
     * objects cannot be hidden or redacted one by one; the first time a repository has some, the log and the audit
     * say so.
     */
    /** Files with segments the role may not read: shown redacted inside the sandbox. */
    const maskedFiles = () =>
      index.segmented.size
        ? [...index.segmented].filter(([, ops]) => ops.has("read") || ops.has("llm")).map(([f]) => f)
        : []
    /**
     * Why a write to `target` is refused when it would change git's configuration or hooks (`gitConfigPaths`): by its
     * name, or through a link on the way (`zz/config` with `zz` a link to `.git`), checked on every hop and on the real
     * path. Every writer asks it: the file tools' calls (`decideCall`) and the built-in tools' own writes
     * (`host.access(…, "write")`: AST rewrites, LSP edits).
     */
    const gitWriteDenial = (d: Derived, target: string, via: string): string | undefined => {
      if (d.allowGitConfig) return undefined
      const lexical = SecurityPath.expand(target, directory, home)
      const resolved = SecurityPath.resolve(lexical)
      const gitPaths = gitConfigPaths()
      const hit = [lexical, ...resolved.hops, resolved.real].find((c) =>
        gitPaths.some((p) => SecurityPath.isInside(c, p)),
      )
      if (!hit) return undefined
      const through = hit === lexical ? "" : ` (through a link, ${SecurityAccess.display(root, hit)})`
      return `${via} would change ${SecurityAccess.display(root, lexical)}${through}, which runs code outside the sandbox; the policy keeps git's configuration and hooks read-only (set "sandbox": { "allowGitConfig": true } to allow it)`
    }

    /**
     * The git configuration that runs code outside the sandbox when the user next uses git (hooks, fsmonitor,
     * aliases, pagers): `.git/config` and `.git/hooks` of the project's repository and of every nested one, and the
     * user's own configuration (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`, `GIT_CONFIG_GLOBAL`), which applies to
     * every repository.
     */
    const gitConfigPaths = () => {
      // Where git itself looks: `HOME` as the environment has it now.
      const user = env.HOME || home
      const xdg = env.XDG_CONFIG_HOME || path.join(user, ".config")
      const above: string[] = []
      for (let dir = path.dirname(root); dir !== path.dirname(dir); dir = path.dirname(dir)) above.push(dir)
      const globals = [
        path.join(user, ".gitconfig"),
        path.join(xdg, "git", "config"),
        ...(env.GIT_CONFIG_GLOBAL ? [path.resolve(SecurityPath.expand(env.GIT_CONFIG_GLOBAL, directory, home))] : []),
      ]
      const managed = hookManagerPaths(user, globals)
      hookRun = new Set(managed)
      return withTargets([
        ...repositories().flatMap((top) =>
          gitDirsOf(top).flatMap((dir) => GIT_REDIRECTS.map((name) => path.join(dir, name))),
        ),
        // What a hook manager's installed hooks run outside the hooks folder (husky 9's `.husky/<hook>`, the
        // pre-commit framework's and lefthook's configuration): hooks too.
        ...managed,
        // A `.git` file (a linked worktree, a submodule checkout) says where the repository is: rewritten, git takes
        // config and hooks from a folder the agent made.
        ...repositories()
          .map((top) => path.join(top, ".git"))
          .filter((p) => kindOf(p) === "file"),
        // A `.git` git would find above the project when the project's own is not a repository (its HEAD broken),
        // or for a project without one.
        ...above.map((dir) => path.join(dir, ".git")),
        ...globals,
        // What they and the repositories' own configs include, and the hooks folders and attributes files they name.
        ...SecurityGitConfig.referenced(
          [
            ...globals,
            "/etc/gitconfig",
            ...repositories().flatMap((top) => gitDirsOf(top).map((dir) => path.join(dir, "config"))),
          ],
          { home: user, root },
        ),
      ])
    }
    /**
     * The scripts and configuration that a hook manager's installed hooks run directly (`SecurityHookManagers.held`),
     * for each repository's hooks folders: its git folders' `hooks` and the `core.hooksPath` its configuration, the
     * user's or the system's names (relative to its work tree).
     */
    const hookManagerPaths = (user: string, globals: string[]): string[] => {
      // Asked several times per call (each write's check, the sandbox's plan, the sweep): one look serves a second.
      // What it reads (hooks folders, git configuration) commands cannot change, and a change by another writer is
      // put back or moved aside; the user's own install on the host is seen within the second.
      const tops = repositories()
      const key = `${user}\0${globals.join("\0")}\0${tops.join("\0")}`
      if (managedLook && managedLook.key === key && Date.now() - managedLook.at < 1000) return managedLook.paths
      const out = new Set<string>()
      for (const top of tops) {
        const dirs = gitDirsOf(top)
        const folders = new Set([
          ...dirs.map((dir) => path.join(dir, "hooks")),
          ...SecurityGitConfig.referenced(
            [
              ...globals,
              "/etc/gitconfig",
              ...dirs.flatMap((dir) => ["config", "config.worktree"].map((n) => path.join(dir, n))),
            ],
            { home: user, root: top },
          ).filter((p) => p.endsWith(path.sep)),
        ])
        for (const folder of folders)
          for (const p of SecurityHookManagers.held(folder, { top, home: user, env })) out.add(p)
      }
      managedLook = { key, at: Date.now(), paths: [...out] }
      return managedLook.paths
    }
    let managedLook: { key: string; at: number; paths: string[] } | undefined
    /** The paths `hookManagerPaths` found at the last look: a command creating one has it moved aside, as a hook. */
    let hookRun = new Set<string>()
    noteLinks([
      path.join(env.HOME || home, ".gitconfig"),
      path.join(env.XDG_CONFIG_HOME || path.join(env.HOME || home, ".config"), "git", "config"),
    ])
    /**
     * The folders holding a `.git`: the root (whether or not it has one) and every nested repository the tree saw.
     * Kept per tree (a refresh that changes it makes a new one): it is asked on every write-tool call and several
     * times per shell command, and a walk of the tree costs as many steps as it has entries.
     */
    let repositoriesOf: { tree: SecurityTree.Tree | undefined; tops: string[] } | undefined
    const repositories = () => {
      if (!repositoriesOf || repositoriesOf.tree !== tree) {
        const tops = [root]
        if (tree)
          for (const e of SecurityTree.entries(tree))
            if (e.name === ".git" && path.dirname(e.path) !== root) tops.push(path.dirname(e.path))
        repositoriesOf = { tree, tops }
      }
      // Repositories a call made, known before the tree is listed again.
      const tops = repositoriesOf.tops
      return inspectedRepos.size || unlistedRepos.size || skippedRepos.size
        ? [...new Set([...tops, ...unlistedRepos, ...skippedRepos, ...inspectedRepos])]
        : tops
    }
    /**
     * The git folders of a repository whose config and hooks git uses: its own (`gitHomesOf`), and in each, the folders
     * of its submodules (`modules/**`) and linked worktrees (`worktrees/*`), which git uses when it works in those. For a
     * linked worktree that includes the main repository's submodules and other worktrees: its git folder is writable
     * (a commit goes there), so their config and hooks are held like the project's own.
     */
    const gitDirsOf = (top: string): string[] => {
      const out = gitHomesOf(top).real
      // Only what lies in the repository's own git folders: a link a command put at `modules` or `worktrees` is not
      // followed out of them (its target's files are neither held nor swept as this repository's).
      const homes = out.map(realOrAsIs)
      const within = (folder: string) => {
        const r = realOrAsIs(folder)
        return homes.some((h) => r === h || SecurityPath.isInside(r, h))
      }
      const walk = (folder: string, depth: number) => {
        if (depth > 6 || out.length > 256 || !within(folder)) return
        let entries: fs.Dirent[]
        try {
          entries = fs.readdirSync(folder, { withFileTypes: true })
        } catch {
          return
        }
        for (const e of entries) {
          if (!e.isDirectory()) continue
          const sub = path.join(folder, e.name)
          if (fs.existsSync(path.join(sub, "HEAD"))) out.push(sub)
          walk(path.join(sub, "modules"), depth + 1)
          if (!fs.existsSync(path.join(sub, "HEAD"))) walk(sub, depth + 1)
        }
      }
      for (const dir of new Set(out)) {
        walk(path.join(dir, "modules"), 0)
        try {
          if (!within(path.join(dir, "worktrees"))) continue
          for (const e of fs.readdirSync(path.join(dir, "worktrees"), { withFileTypes: true }))
            if (e.isDirectory()) out.push(path.join(dir, "worktrees", e.name))
        } catch {}
      }
      return [...new Set(out)]
    }
    /**
     * A repository's own git folders: `real`, where git goes: its `.git` folder, or the folder a `.git` file names
     * (`gitdir: …`), and the main repository's that a linked worktree's `commondir` names. `writable`, the same as
     * named by the user's own files, for the sandbox to bind (`SandboxWritable.areas` refuses one with a link on its
     * way in a writable folder): a `.git` file's folder as written, and the main repository's only when that folder is
     * `<common>/worktrees/<id>` as git makes it (named from the path, so that a link a command put there is seen; a
     * `commondir` pointing elsewhere binds neither). Submodules' and worktrees' folders lie inside these.
     */
    const gitHomesOf = (top: string): { real: string[]; writable: string[] } => {
      const dot = path.join(top, ".git")
      const target = kindOf(dot) === "file" ? gitFileTarget(dot) : undefined
      const dir = target ? (target.real ?? target.named) : dot
      const real = [dir]
      const writable = [target ? target.named : dot]
      // A linked worktree's git folder names the main repository's in `commondir`: git takes config and hooks from
      // there, and OpenCode its project id.
      let common: string | undefined
      try {
        const named = fs.readFileSync(path.join(dir, "commondir"), "utf8").trim()
        if (named) common = path.resolve(dir, named)
      } catch {}
      if (!common) return { real, writable }
      real.push(common)
      const shaped = target && path.basename(path.dirname(target.named)) === "worktrees"
      const lexical = target && path.dirname(path.dirname(target.named))
      if (shaped && lexical && realOrAsIs(lexical) === realOrAsIs(common)) writable.push(lexical)
      else writable.length = 0
      return { real, writable }
    }
    const warnedPacked = new Set<string>()
    const maskedObjects = new Map<string, { key: string; result: Uint8Array | "same" | "hide" }>()
    const historyObjects = (
      d: Derived,
      config: SecurityConfig.Loaded,
    ): { hide: SandboxPlan.Entry[]; mask: Sandbox.Protections["mask"] } => {
      const hide: SandboxPlan.Entry[] = []
      const mask: Sandbox.Protections["mask"] = []
      if (!tree) return { hide, mask }
      const masked = maskedFiles()
      const tops = repositories()
      const warn = (top: string, packed: number, loose: number) => {
        if (warnedPacked.has(top)) return
        warnedPacked.add(top)
        const why = `the git history of ${SecurityAccess.display(root, top)} holds protected content the sandbox cannot hide (${packed} packed object(s)${loose > MAX_HIDDEN_OBJECTS ? `, ${loose} loose ones` : ""}); a command can read it from .git/objects. Remove it from the history (e.g. git filter-repo) to close this`
        log.warn(why)
        audit(d, { action: "refuse", source: "policy", reason: why })
      }
      for (const top of tops) {
        const specs = SecurityHistory.pathspecs(config, d.role, top)
        if (specs.length) {
          const blobs = SecurityHistory.blobs(top, specs, [], watcher.version)
          for (const file of blobs.loose.slice(0, MAX_HIDDEN_OBJECTS)) hide.push({ path: file, dir: false })
          if (blobs.packed || blobs.loose.length > MAX_HIDDEN_OBJECTS) warn(top, blobs.packed, blobs.loose.length)
        }
        const inside = masked.filter(
          (f) =>
            SecurityPath.isInside(f, top) &&
            !tops.some((t) => t !== top && t.length > top.length && SecurityPath.isInside(f, t)),
        )
        if (!inside.length) continue
        // Lines of today's segments, by text: an older version may hold one without its markers (short lines such
        // as a closing brace are left out, they would redact every version's code).
        const known = new Set<string>()
        for (const file of inside) {
          let text: string
          try {
            text = fs.readFileSync(file, "utf8")
          } catch {
            continue
          }
          for (const line of SecuritySegments.lines(text, d.readMarkers)) {
            const t = line.trim()
            if (t.replace(/\s/g, "").length >= 6) known.add(t)
          }
        }
        const key = `${JSON.stringify(d.readMarkers)}\0${[...known].sort().join("\n")}`
        const blobs = SecurityHistory.blobs(top, [], inside, watcher.version)
        for (const file of blobs.loose.slice(0, MAX_HIDDEN_OBJECTS)) {
          let hit = maskedObjects.get(file)
          if (!hit || hit.key !== key) {
            hit = {
              key,
              result: SecurityHistory.maskObject(file, (t) => SecurityOutput.maskInPlace(t, d.readMarkers, known)),
            }
            maskedObjects.set(file, hit)
            if (maskedObjects.size > 4 * MAX_HIDDEN_OBJECTS) maskedObjects.delete(maskedObjects.keys().next().value!)
          }
          if (hit.result === "hide") hide.push({ path: file, dir: false })
          else if (hit.result !== "same") mask.push({ path: file, text: hit.result })
        }
        if (blobs.packed || blobs.loose.length > MAX_HIDDEN_OBJECTS) warn(top, blobs.packed, blobs.loose.length)
      }
      return { hide, mask }
    }

    /** Prepares the sandbox for a shell command (or refuses): the tree refreshed, protections written. */
    const prepareShell = async (
      d: Derived,
      config: SecurityConfig.Loaded,
      call: Call,
    ): Promise<{ sandboxed: boolean } | { error: SecurityError.SandboxUnavailable | SecurityError.Denied }> => {
      if (d.sandbox === "off") return { sandboxed: false }
      if (bypassed)
        return {
          error: new SecurityError.Denied({
            reason: `a previous shell command ran outside the sandbox (${bypassed}); shell commands are refused until OpenCode is restarted`,
            tool: call.tool,
          }),
        }
      const sb = ensureSandbox()
      const probe = sb.probe()
      const unavailable = !probe.ok
        ? { reason: probe.reason, install: probe.install }
        : !Sandbox.supports(shell)
          ? {
              reason: `OpenCode runs commands with ${shell}, and the sandbox can take over only bash and zsh`,
              install: "Set SHELL (or the `shell` option of opencode.json) to bash or zsh",
            }
          : undefined
      if (unavailable) {
        if (d.sandbox === "required") return { error: new SecurityError.SandboxUnavailable(unavailable) }
        return { sandboxed: false }
      }
      await fresh()
      const latest = current()
      // Before the protections are planned: the record's folder is then held read-only for the command.
      armHeld()
      const planned = protections(latest.d, latest.state.status === "valid" ? latest.state.config : config)
      takeModules()
      if (planned.unlisted.includes(root))
        return {
          error: new SecurityError.Denied({
            reason: `${unlistedWhy()}; the project folder itself would be hidden, so shell commands are refused.${unlistedFix()}`,
            tool: call.tool,
          }),
        }
      if (planned.unlisted.length) for (const top of reposBelow(planned.unlisted)) unlistedRepos.add(top)
      if (!repoIdsArmed) {
        repoIds.clear()
        recordRepos()
        repoIdsArmed = true
      }
      const plan = sb.prepare(planned.sandbox)
      // bubblewrap reads at most 9,000 arguments (3 per mount): past that every command fails with its terse
      // "Exceeded maximum number of arguments"; refused here instead, saying why (fail closed either way).
      if (plan.args.length > SandboxPlan.MAX_ARGS)
        return {
          error: new SecurityError.Denied({
            reason: `the sandbox for this policy needs ${plan.mounts.length} mounts (a protected path and every folder above it, up to the project, is one each), more than bubblewrap accepts (${SandboxPlan.MAX_ARGS} arguments), so shell commands are refused. Protect fewer paths one by one: a directory rule over a folder holding many protected files counts once`,
            tool: call.tool,
          }),
        }
      // What the command creates is compared with the tree as it is now (`createdDenied`).
      baseCreated(tree)
      if (call.callID)
        pending.set(call.callID, {
          absent: planned.absent,
          at: now(),
          unlisted: planned.unlisted,
          refused: planned.refused,
        })
      if (pending.size > 256) pending.delete(pending.keys().next().value!)
      return { sandboxed: true }
    }

    const refusedNoted = new Set<string>()
    /** After a shell command: did it enter the sandbox, and did it create protected host paths that were absent? */
    const settleShell = (d: Derived, call: Call): string[] => {
      const notes: string[] = []
      const info = call.callID ? pending.get(call.callID) : undefined
      if (!info || !call.callID || !sandbox) return notes
      pending.delete(call.callID)
      if (!sandbox.entered(call.callID)) {
        bypassed = `call ${call.callID}`
        audit(d, {
          action: "refuse",
          source: "builtin-tool",
          tool: call.tool,
          callID: call.callID,
          reason: "the shell command did not enter the sandbox (the shell ignored its startup hook)",
        })
        notes.push(
          "[security] This command ran outside the kernel sandbox (the shell did not read its startup hook); further shell commands are refused until OpenCode is restarted.",
        )
      }
      const servers = sandbox.servers()
      if (servers.length && !networkNoted) {
        networkNoted = true
        const where = [
          ...new Set(
            servers.map(
              (s) =>
                SecurityOwnServer.display(s) + (s.pid === process.pid ? "" : ` by another OpenCode, process ${s.pid}`),
            ),
          ),
        ]
        notes.push(
          `[security] Shell commands run without network access while an OpenCode of this user serves its HTTP API (${where.join(", ")}): through it a command could read protected files and run programs outside the sandbox. Ask the user to run commands that need the network (installs, fetches) outside OpenCode.`,
        )
      }
      // Each once per session: a cache folder the environment makes the home would otherwise be named on every command.
      const refused = (info.refused ?? []).filter((r) => !refusedNoted.has(`${r.path}\0${r.why}`))
      for (const r of refused) refusedNoted.add(`${r.path}\0${r.why}`)
      if (refused.length)
        notes.push(
          `[security] Left read-only for shell commands (a link on the way, which a command could have made, or a folder that would open the home): ${refused
            .slice(0, 5)
            .map((r) => `${SecurityAccess.display(root, r.path)} (${r.why})`)
            .join(", ")}${refused.length > 5 ? ` and ${refused.length - 5} more` : ""}.`,
        )
      if (info.unlisted?.length) {
        const shown = info.unlisted.slice(0, 5).map((p) => SecurityAccess.display(root, p))
        const more = info.unlisted.length > 5 ? ` and ${info.unlisted.length - 5} more` : ""
        notes.push(
          `[security] ${unlistedWhy()}; the folders it could not list were hidden from this command ("Permission denied"): ${shown.join(", ")}${more}.${unlistedFix()}`,
        )
      }
      // Another command may already run (admitted as this one ended): the sweep then waits for it (see `repair`).
      if (quiet()) {
        notes.push(...flushRepairs(d), ...sweep(d, info.absent, call))
        disarmHeld()
      } else {
        sweepDue = [...new Set([...(sweepDue ?? []), ...info.absent])]
        armRepairTimer()
      }
      notes.push(...repair(d, "repositories", (d) => newRepositories(d, call)))
      notes.push(...repair(d, "created", (d) => createdDenied(d, call)))
      notes.push(...importsChanged(d, call))
      return notes
    }

    /** Notes of the checks `before` ran, by call, added to that call's output. */
    const carried = new Map<string, string[]>()
    /** Calls that may write (file tools, commands, other plugins' tools) whose after hook has not come, by call. */
    const writers = new Map<string, number>()
    const writes = (call: Call) =>
      OpenCode.WRITE_TOOLS.has(call.tool) ||
      call.tool === "bash" ||
      call.tool === "batch" ||
      sourceOf(call) !== "builtin-tool" ||
      unplanned(call)

    /**
     * Calls that write on the host, outside the sandbox, files their arguments do not name or not all of them: this
     * product's own writers (`ast_grep_replace` when it writes, whose paths may be folders; the `lsp` rename, whose
     * files a language server chooses), and every other plugin's and MCP server's tool (their code runs in OpenCode's
     * process or the server's, and may write anything). They get what OpenCode's write tools and the shell get after
     * the call (`afterHost`): before, a policy file such a call changed stayed changed, a change to what a custom tool
     * imports went unnamed, and a repository it made kept its `core.fsmonitor` (red team T2, T4, T5).
     */
    const unplanned = (call: Call, depth = 0): boolean => {
      if (sourceOf(call) !== "builtin-tool") return true
      const a = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>
      if (call.tool === "ast_grep_replace") return a.dryRun === false
      if (call.tool === "lsp") return a.operation === "rename"
      // A batch's inner calls (its own write tools included: a batch is not checked after like one).
      if (call.tool === "batch" && depth < 3)
        return (Array.isArray(a.tool_calls) ? a.tool_calls : []).some((c) => {
          const inner = (c && typeof c === "object" ? c : {}) as { tool?: unknown; parameters?: unknown }
          const tool = String(inner.tool ?? "")
          return OpenCode.WRITE_TOOLS.has(tool) || unplanned({ tool, args: inner.parameters }, depth + 1)
        })
      return false
    }

    /**
     * Before an unplanned writer (see `unplanned`): the text of every file with write-protected segments, since which
     * files it writes is not known (as the sandbox keeps them read-only for commands); `verifySnapshots` puts back one
     * whose segment changed. Bounded: past `SNAPSHOT_FILES` files or `SNAPSHOT_BYTES` bytes the rest is not kept and
     * the log says so.
     */
    const snapshotSegmented = (d: Derived, callID: string) => {
      if (!d.writeMarkers.length) return
      const kept = snapshots.get(callID) ?? []
      const known = new Set(kept.map((k) => k.file))
      let bytes = kept.reduce((n, k) => n + k.text.length, 0)
      for (const [file, ops] of index.segmented) {
        if (!ops.has("write") || known.has(file)) continue
        if (kept.length >= SNAPSHOT_FILES || bytes > SNAPSHOT_BYTES) {
          log.warn(
            `[security] more files with write-protected segments than a tool call's snapshot keeps (${SNAPSHOT_FILES} files, ${SNAPSHOT_BYTES / 1024 / 1024} MB): a change another plugin's or an MCP tool makes to the others is not put back`,
          )
          break
        }
        try {
          const stat = fs.statSync(file)
          if (!stat.isFile() || stat.size > 16 * 1024 * 1024) continue
          const raw = fs.readFileSync(file)
          const text = raw.toString("utf8")
          if (!SecuritySegments.find(text, d.writeMarkers).length && !wideLocked(d, raw)) continue
          kept.push({ file, text, bytes: raw })
          bytes += text.length
        } catch {
          continue
        }
      }
      if (kept.length) snapshots.set(callID, kept)
      if (snapshots.size > 64) snapshots.delete(snapshots.keys().next().value!)
    }

    /**
     * Before an unplanned writer, the rest of what a command's sandbox keeps it from (the policy files and the host
     * paths `recordHost` keeps are the write tools' share, which their static check covers otherwise): absent `PATH`
     * folders, where a link leads an absent protected path, and git's configuration — the absent files that redirect
     * git or run programs (swept after the call like a command's), the bytes of the existing ones and the hooks of
     * each hooks folder (`gitChanged`). Unless `allowGitConfig`.
     */
    const gitBefore = new Map<string, { files: Map<string, Buffer>; hooks: Map<string, Set<string>> }>()
    const recordUnplanned = (d: Derived, id: string) => {
      baseCreated()
      const kept = hostBefore.get(id)
      if (!kept) return
      for (const p of protect.map((p) => (p.endsWith(path.sep) ? p.slice(0, -1) : p)))
        if ((searchFolders.has(p) || danglingTargets.has(p)) && !kindOf(p) && !kept.absent.includes(p))
          kept.absent.push(p)
      if (d.allowGitConfig) return
      const files = new Map<string, Buffer>()
      const hooks = new Map<string, Set<string>>()
      for (const p of gitConfigPaths()) {
        const kind = kindOf(p)
        if (!kind) {
          if (kept.absent.includes(p)) continue
          kept.absent.push(p)
          if (SecurityPath.isInside(p, root) && ["config", "hooks"].includes(path.basename(p))) inspected.add(p)
          continue
        }
        // A link is held at its target, which the list holds too.
        if (isLink(p)) continue
        try {
          if (kind === "dir") {
            // A hooks folder, or a hook manager's script folder (`.lefthook/`): what a call adds there is moved aside.
            if (path.basename(p) === "hooks" || hookRun.has(p)) hooks.set(p, new Set(fs.readdirSync(p)))
            continue
          }
          if (fs.statSync(p).size <= 1024 * 1024) files.set(p, fs.readFileSync(p))
        } catch {
          continue
        }
      }
      gitBefore.set(id, { files, hooks })
      if (gitBefore.size > 64) gitBefore.delete(gitBefore.keys().next().value!)
    }
    /**
     * After an unplanned writer: git's configuration it changed put back (read-only to every other route), and hooks
     * it added moved aside. Run while no command runs (see `repair`).
     */
    const gitChanged = (d: Derived, call: Call): string[] => {
      const kept = call.callID ? gitBefore.get(call.callID) : undefined
      if (!kept) return []
      gitBefore.delete(call.callID!)
      const notes: string[] = []
      const why = "git would run what it names outside the sandbox when you next use git"
      for (const [file, bytes] of kept.files) {
        let now: Buffer | undefined
        try {
          now = fs.readFileSync(file)
        } catch {
          now = undefined
        }
        if (now?.equals(bytes)) continue
        const shown = SecurityAccess.display(root, file)
        if (!SecurityPath.movable(file, ownFolders) || isLink(file)) {
          const note = `[security] ${shown} (git's configuration) was changed during ${call.tool}, but the layer does not put back files there: review it before you next use git.`
          log.error(note)
          notes.push(note)
          continue
        }
        try {
          SecurityPath.replace(file, bytes)
        } catch (error) {
          log.error(`could not restore ${file}: ${error instanceof Error ? error.message : String(error)}`)
          continue
        }
        audit(d, {
          action: "refuse",
          source: sourceOf(call),
          tool: call.tool,
          callID: call.callID,
          path: shown,
          reason: "git's configuration changed during a tool call; restored",
        })
        notes.push(
          `[security] ${shown} (git's configuration) was ${now ? "changed" : "removed"} by ${call.tool}; ${why}, so it was put back as it was before this call.`,
        )
      }
      for (const [folder, names] of kept.hooks) {
        let list: string[]
        try {
          list = fs.readdirSync(folder)
        } catch {
          continue
        }
        for (const name of list)
          if (!names.has(name) && !name.endsWith(".sample"))
            notes.push(...moveAside(d, path.join(folder, name), call, why))
      }
      return notes
    }

    /**
     * After a call that may have written on the host (OpenCode's write tools and the unplanned writers), what the
     * shell's after hook does for a command: a policy file it changed or removed put back (`verifyHost`, first, so
     * that a removed policy is back before the state is read), a change to what a plugin imports named
     * (`importsChanged`), and for the unplanned writers a file whose write-protected segment changed put back
     * (`verifySnapshots`) and a repository it made stripped of what runs a program (`newRepositories`). The write tools'
     * own checks of a segment and a `.git` they name stay in `after`.
     */
    const afterHost = (call: Call): string[] => {
      const notes = call.callID && hostBefore.size ? verifyHost(current().d, call.callID) : []
      const free = unplanned(call)
      if (!free && !OpenCode.WRITE_TOOLS.has(call.tool)) return notes
      const { state, d } = current()
      if (state.status === "none") return notes
      if (imported.size) notes.push(...importsChanged(d, call))
      if (!free) return notes
      if (call.callID && snapshots.has(call.callID))
        notes.push(...repair(d, `snapshot:${call.callID}`, (d) => verifySnapshots(d, call)))
      // What the call changed in a git configuration the layer holds is put back first, so the repositories' check
      // after it judges the configuration as it is again (not a put-back one as "created by the command").
      if (call.callID && gitBefore.has(call.callID))
        notes.push(...repair(d, `git:${call.callID}`, (d) => gitChanged(d, call)))
      notes.push(...repair(d, "repositories", (d) => newRepositories(d, call)))
      notes.push(...repair(d, "created", (d) => createdDenied(d, call)))
      return notes
    }

    /**
     * Repositories a call created below the root, and at the root of a project that had none. OpenCode's snapshot
     * (its own git, outside the sandbox) runs `git status` in every repository of the project at the end of each
     * step, with that repository's config — those below `node_modules`, `.hg` and `.svn` too, which the tree does not
     * enter (`SecurityTree.below` looks there for `.git` entries, folders only) — and the user's git runs a root one's
     * at its next use: what in a new one runs a program — a config setting (`SecurityGitConfig.risky`), `commondir`
     * (config and hooks taken from elsewhere), a hook, or a `.git` file sending git to a repository outside the
     * project or to one the layer cannot name exactly as git does (`gitFileTarget`, checked against git itself) — is
     * moved aside at once; from the next command on its config and hooks are read-only like any other repository's.
     */
    const newRepositories = (d: Derived, call: Call): string[] => {
      if (d.allowGitConfig) repoIdsArmed = false
      if (!tree) return []
      const notes: string[] = []
      const why =
        "OpenCode's snapshot runs git in every repository of the project at the end of each step, outside the sandbox"
      // A repository made where the tree's budget no longer reaches (a command that made 200,000 files first, then
      // `zzz/sub` with a `core.fsmonitor`) is found by a walk of the unlisted folders with no budget.
      const look = (t: SecurityTree.Tree) => {
        const listed = SecurityTree.refresh(t).tree
        const skipped = SecurityTree.below(listed, ".git", belowState, options.maxSkippedFolders)
        belowState = skipped
        const unspelled = [...listed.unspelled, ...skipped.unspelled]
        const inUnlisted = listed.unlisted.length
          ? SecurityTree.find(listed.unlisted, ".git", undefined, unspelled)
          : []
        // The same name is met by the listing and again by the walk of the unlisted folder holding it: once each.
        const once = [...new Map(unspelled.map((u) => [unspelledKey(u), u])).values()]
        return {
          listed,
          skipped,
          unspelled: once,
          found: [...SecurityTree.entries(listed), ...inUnlisted, ...skipped.hits],
        }
      }
      let seen = look(tree)
      // Names a call made that are not valid UTF-8 are renamed first, so that the repositories below them are found;
      // again while a rename shows more below it (`$'\xff'/$'\xfe'`). Each pass renames at least one name for good.
      for (;;) {
        const renamed = respell(d, call, seen.unspelled)
        if (!renamed.length) break
        notes.push(...renamed)
        seen = look(tree)
      }
      if (d.allowGitConfig) return notes
      // Repositories below names the layer cannot spell that stay (the user's own, below `node_modules` where nothing
      // hides them, or one no rename nor removal took): found by a walk of byte paths, one that is new there or
      // whose config or hooks changed is moved aside, as the layer cannot follow it by name (red team AN1e).
      for (const u of seen.unspelled) {
        if (!SecurityPath.movable(u.dir, ownFolders)) continue
        for (const g of SecurityTree.findBytes([u.path], ".git")) {
          const key = g.toString("hex")
          const was = unspelledRepos.get(key)
          if (was !== undefined && was === repoBytesIdentity(g)) continue
          const shown = JSON.stringify(SecurityAccess.display(root, g.toString("latin1")))
          const aside = Buffer.concat([g, Buffer.from(`.blocked-by-security-${now()}`)])
          let failed: string | undefined
          try {
            fs.renameSync(g, aside)
          } catch (error) {
            failed = error instanceof Error ? error.message : String(error)
            try {
              fs.rmSync(g, { recursive: true, force: true })
              failed = undefined
            } catch {}
          }
          unspelledRepos.delete(key)
          audit(d, {
            action: "refuse",
            source: "builtin-tool",
            tool: call.tool,
            callID: call.callID,
            path: SecurityAccess.display(root, g.toString("latin1")),
            reason: `a repository below a name that is not valid UTF-8 was ${was === undefined ? "made" : "changed"}; ${failed === undefined ? "moved aside" : `it could not be moved (${failed})`}`,
          })
          const note =
            failed === undefined
              ? `[security] ${shown} (bytes shown as Latin-1), a repository below a name that is not valid UTF-8, was ${was === undefined ? "made" : "changed"} by the command; ${why}, and the security layer cannot inspect it by name: it was moved aside (${SecurityAccess.display(root, aside.toString("latin1"))}).`
              : `[security] ${shown} (bytes shown as Latin-1), a repository below a name that is not valid UTF-8, was ${was === undefined ? "made" : "changed"} by the command and could not be moved aside (${failed}): remove it before using git in this project.`
          if (failed !== undefined) log.error(note)
          notes.push(note)
        }
      }
      const known = new Set(repositories())
      const { skipped, found } = seen
      if (skipped.over && !belowOverNoted) {
        belowOverNoted = true
        log.warn(
          `[security] more than ${skipped.budget} folders below node_modules, .hg and .svn: the rest are walked again after each command to find repositories made there`,
        )
      }
      // The root's own `.git`, when the project had none: made by the agent, it is inspected as a nested one is.
      const rootDot = path.join(root, ".git")
      const rootNow = rootHadGit ? undefined : rootIdentity()
      if (rootNow && rootNow !== rootSeen)
        found.push({ path: rootDot, name: ".git", kind: rootNow.endsWith(":dir") ? "dir" : "file" })
      for (const e of found) {
        if (e.name !== ".git") continue
        const top = path.dirname(e.path)
        if (top === root) {
          if (!rootNow || rootNow === rootSeen || e.path !== rootDot) continue
          rootSeen = rootNow
        } else {
          if (known.has(top) || inspectedRepos.has(top)) continue
          inspectedRepos.add(top)
        }
        let gitDir = e.path
        if (e.kind !== "dir") {
          notes.push(...ownCopy(e.path))
          const target = gitFileTarget(e.path)
          const says = target?.real && SecurityPath.isInside(target.real, root) ? gitSaysGitDir(e.path, env) : undefined
          const unsafe = !target?.real
            ? "and the layer cannot tell which folder this file sends it to as git reads it (it is moved aside rather than trusted)"
            : !SecurityPath.isInside(target.real, root)
              ? "and this file sends it to a repository outside the project"
              : Buffer.isBuffer(says) && !says.equals(Buffer.from(target.real))
                ? "and git reads this file as naming another folder than the layer does (it is moved aside rather than trusted)"
                : undefined
          if (unsafe) {
            // Gone, the place is inspected again when a `.git` reappears there.
            if (top === root) rootSeen = undefined
            else inspectedRepos.delete(top)
            notes.push(...moveAside(d, e.path, call, `${why}, ${unsafe}`))
            continue
          }
          gitDir = target!.real!
        }
        for (const name of REPO_FILES) inspect(path.join(gitDir, name))
      }
      // A known place whose repository is another than the one inspected (a folder above the read-only config renamed
      // and a new one put in its place): what changed is inspected as in a new repository.
      for (const top of repoIdsArmed ? known : []) {
        const was = repoIds.get(top)
        if (!was) continue
        const now = repoIdentity(top)
        const changed = [...now.keys()].filter((k) => was.get(k) !== now.get(k))
        if (!changed.length) continue
        const dot = path.join(top, ".git")
        if (changed.includes(dot) && kindOf(dot) === "file") {
          notes.push(...ownCopy(dot))
          const target = gitFileTarget(dot)
          const says = target?.real && SecurityPath.isInside(target.real, root) ? gitSaysGitDir(dot, env) : undefined
          if (
            !target?.real ||
            !SecurityPath.isInside(target.real, root) ||
            (Buffer.isBuffer(says) && !says.equals(Buffer.from(target.real)))
          ) {
            notes.push(
              ...moveAside(
                d,
                dot,
                call,
                `${why}, and this .git file now sends git to a folder the layer did not inspect (outside the project, or one it cannot name exactly as git does)`,
              ),
            )
            continue
          }
        }
        const dirs = new Set(gitDirsOf(top))
        for (const k of changed) {
          if (k === dot) {
            for (const dir of dirs) for (const name of REPO_FILES) inspect(path.join(dir, name))
          } else if (dirs.has(k)) for (const name of REPO_FILES) inspect(path.join(k, name))
          else inspect(k)
        }
      }
      if (repoIdsArmed) {
        repoIds.clear()
        recordRepos()
        repoIdsArmed = false
      }
      return notes

      function inspect(p: string) {
        if (!fs.existsSync(p)) return
        if (kindOf(p) === "dir") {
          try {
            for (const name of fs.readdirSync(p)) notes.push(...ownCopy(path.join(p, name)))
          } catch {}
        } else notes.push(...ownCopy(p))
        if (!fs.existsSync(p)) return
        const runs = path.basename(p) === "commondir" ? [p] : planted(p)
        for (const t of runs) notes.push(...moveAside(d, t, call, `${why}, and git would run what it names`))
      }

      /**
       * A git file the layer guards must be the repository's own: with another name (a hard link elsewhere in the
       * project, made while the repository was new and not yet read-only), a write through that name would change it
       * where the sandbox cannot keep it read-only. The link is broken — the file replaced by a copy of itself (written
       * beside it, renamed over it), the other name left a separate file — or, when that fails, the file moved aside.
       */
      function ownCopy(p: string): string[] {
        let s: fs.Stats
        try {
          s = fs.lstatSync(p)
        } catch {
          return []
        }
        if (!s.isFile() || s.nlink <= 1) return []
        const shown = SecurityAccess.display(root, p)
        const names = `it had ${s.nlink} names (hard links), and a write through another one would change it where the sandbox cannot keep it read-only`
        const tmp = path.join(path.dirname(p), `.${path.basename(p)}.own-${Math.random().toString(36).slice(2)}`)
        try {
          fs.copyFileSync(p, tmp, fs.constants.COPYFILE_EXCL)
          fs.chmodSync(tmp, s.mode & 0o7777)
          fs.renameSync(tmp, p)
        } catch (error) {
          fs.rmSync(tmp, { force: true })
          log.error(`could not break the links of ${p}: ${error instanceof Error ? error.message : String(error)}`)
          return moveAside(d, p, call, `${why}, and ${names}`)
        }
        audit(d, {
          action: "refuse",
          source: "builtin-tool",
          tool: call.tool,
          callID: call.callID,
          path: shown,
          reason: "a repository's git file had another name (hard link); the link was broken",
        })
        const note = `[security] ${shown} ${names} (${why}): the link was broken, so the repository has its own copy and the other name is now a separate file.`
        log.warn(note)
        return [note]
      }
    }

    /** Files plugins import that changed since last seen: named (see `imported`). */
    const importsChanged = (d: Derived, call: Call): string[] => {
      const notes: string[] = []
      for (const [file, was] of imported) {
        const now = stampOf(file)
        if (now === was) continue
        imported.set(file, now)
        const shown = SecurityAccess.display(root, file)
        const note = `[security] ${shown} ${now === "absent" ? "was removed" : "changed"}: a plugin or custom tool of this project imports it, and OpenCode runs it at its next start outside the sandbox. Review this change before starting OpenCode again.`
        log.warn(note)
        audit(d, {
          action: "allow",
          source: "builtin-tool",
          tool: call.tool,
          callID: call.callID,
          path: shown,
          reason: "a file a plugin imports changed",
        })
        notes.push(note)
      }
      return notes
    }

    /**
     * Definitions that gained a shell command or a permission grant since last seen (see `templates`), or, for a
     * command or skill, an `@file` reference to a file the agent may not read (`read` or `llm` denied): the agent's
     * version is moved aside (`<name>.blocked-by-security-<time>`, which OpenCode does not load) and the previous
     * content put back, or the new file moved aside; every other change is recorded as the new state.
     */
    const templatesChanged = (d: Derived, call: Call): string[] => {
      const notes: string[] = []
      const listed = listTemplates()
      const changed: { file: string; was?: Template; next: Template }[] = []
      // What left the definitions in this same change (a file removed, a command taken out) may reappear elsewhere
      // without counting as new: `git mv` of a template, a command moved from one file to another.
      const left: string[] = []
      for (const file of new Set([...listed.keys(), ...templates.keys()])) {
        const was = templates.get(file)
        if (was && was.stamp === stampOf(file)) continue
        const kind = listed.get(file) ?? was!.kind
        const next = fs.existsSync(file) ? readTemplate(file, kind) : undefined
        if (!next) {
          templates.delete(file)
          left.push(...(was?.risks ?? []))
          continue
        }
        if (was) left.push(...SecurityTemplates.added(next.risks, was.risks))
        changed.push({ file, was, next })
      }
      /**
       * The `@file` references of a template to files the agent may not read, or that hold a segment it may not read
       * (OpenCode reads the file whole into the prompt: red team GA2b); the task guard refuses both.
       */
      const deniedMentions = (t: Template | undefined) =>
        (t?.mentions ?? []).filter(
          (m) =>
            SecurityDecide.READ_OPS.some((op) => !SecurityDecide.access(facts(d, d.config!), m, op).allowed) ||
            readSegmented(d, m),
        )
      for (const { file, was, next } of changed) {
        const kind = next.kind
        const shell = kind === "command" || kind === "skill"
        const fresh = SecurityTemplates.added(was?.risks ?? [], next.risks)
        const gained = SecurityTemplates.added(left, fresh)
        // The ones found among what left are used up.
        for (const risk of SecurityTemplates.added(gained, fresh)) left.splice(left.indexOf(risk), 1)
        const added = (shell ? d.allowCommandShell : d.allowAgentPermissions) ? [] : gained
        // OpenCode reads a template's `@file` into the prompt when the user runs it, with no tool hook: a reference the
        // agent adds to a file it may not read would show it that file (AS5). No setting lifts this.
        const referenced = d.config ? SecurityTemplates.added(deniedMentions(was), deniedMentions(next)) : []
        if (!added.length && !referenced.length) {
          templates.set(file, next)
          continue
        }
        const shown = SecurityAccess.display(root, file)
        const target = repairTarget(file)
        const text = target.putBack ? was?.text : undefined
        // A folder link moved aside still leads to the skill, which OpenCode's scan still finds below the new name: when
        // the name is the risk (a skill's folder line, red team FF2), the new name loses its `!` and backquotes.
        const aside = asideOf(
          target.move === file
            ? target.move
            : path.join(path.dirname(target.move), path.basename(target.move).replace(/[!`]/g, "_")),
        )
        try {
          // As in `packageBinsChanged`: renamed over the path, never written through what is there.
          fs.renameSync(target.move, aside)
          if (text !== undefined) SecurityPath.replace(file, text)
        } catch (error) {
          log.error(`could not put back ${file}: ${error instanceof Error ? error.message : String(error)}`)
          continue
        }
        const restored = text !== undefined ? readTemplate(file, kind) : undefined
        if (restored) templates.set(file, restored)
        else templates.delete(file)
        // What the moved link still leads to is known under its new name: it is not judged again at every later call.
        if (target.move !== file) {
          const again = path.join(aside, path.relative(target.move, file))
          const known = readTemplate(again, kind)
          if (known) templates.set(again, known)
        }
        const what =
          target.move === file ? "the file" : `${SecurityAccess.display(root, target.move)} (it was reached through)`
        const moved = `${restored ? "its previous content was put back and this version" : what} was moved to ${SecurityAccess.display(root, aside)}`
        if (!added.length) {
          const names = referenced.map((m) => SecurityAccess.display(root, m)).join(", ")
          audit(d, {
            action: "refuse",
            source: sourceOf(call),
            tool: call.tool,
            callID: call.callID,
            path: shown,
            reason:
              "a command or skill template gained an @file reference to a file the policy keeps from the agent; moved aside",
          })
          const note = `[security] ${shown} gained an @file reference to ${names}, which the security policy keeps from the agent (the whole file, or a segment of it). OpenCode reads a template's @file whole into the prompt when the command is run, with no check, so ${moved}. Refer to files the policy lets you read and that hold no protected segment (the user can add such a reference themselves).`
          log.warn(note)
          notes.push(note)
          continue
        }
        const first = added[0]!.length > 80 ? `${added[0]!.slice(0, 77)}...` : added[0]!
        const more = added.length > 1 ? ` and ${added.length - 1} more` : ""
        audit(d, {
          action: "refuse",
          source: sourceOf(call),
          tool: call.tool,
          callID: call.callID,
          path: shown,
          reason: shell
            ? "a command or skill template gained a shell command; moved aside"
            : "an agent definition gained a permission grant; moved aside",
        })
        const note = shell
          ? `[security] ${shown} gained a shell command (!\`${first}\`${more}). OpenCode runs a command's or skill's !\`…\` with the user's shell when it is used, outside the sandbox, so ${moved}. Write the template without !\`…\` (ask the user to add the command), or the user can set "sandbox": { "allowCommandShell": true } in the root .opencode-security.json.`
          : `[security] ${shown} gained a permission grant (${first}${more}). An agent's permissions override the user's approvals in the next session, so ${moved}. Write the agent without granting permissions (ask the user to add them), or the user can set "sandbox": { "allowAgentPermissions": true } in the root .opencode-security.json.`
        log.warn(note)
        notes.push(note)
      }
      return notes
    }

    /**
     * Links a command made in a folder above an absent protected host path, outside the project: `~/.config/git` → a
     * project folder, where a write tool then creates `config` as an ordinary project file. Links there at start are
     * the user's (`links`).
     */
    const linkedAbove = (d: Derived, p: string, call?: Call): string[] => {
      for (let at = path.dirname(p); at !== path.dirname(at); at = path.dirname(at)) {
        if (SecurityPath.isInside(at, root) || !SecurityPath.movable(at, ownFolders) || links.has(at)) continue
        try {
          if (!fs.lstatSync(at).isSymbolicLink()) continue
        } catch {
          continue
        }
        return moveAside(
          d,
          at,
          call,
          `it is a link above ${SecurityAccess.display(root, p)}, which the policy protects`,
        )
      }
      return []
    }

    let policyLinkBack = false
    /** Moves aside protected host paths a sandboxed command created (they were absent when it started). */
    const sweep = (d: Derived, absent: string[], call?: Call): string[] => {
      const notes: string[] = []
      for (const [link, target] of links) {
        if (!SecurityPath.movable(link, ownFolders)) continue
        let current: string | null
        try {
          current = fs.lstatSync(link).isSymbolicLink() ? fs.readlinkSync(link) : ""
        } catch {
          current = null
        }
        if (current === target) continue
        const putBack = () => {
          try {
            fs.symlinkSync(target, link)
          } catch (error) {
            log.error(`could not put back the link ${link}: ${error instanceof Error ? error.message : String(error)}`)
          }
        }
        // Put back before the audit entry is written: the audit log may be the link.
        if (current !== null)
          notes.push(
            ...moveAside(d, link, call, `it replaced a protected link to ${target}, which was put back`, putBack),
          )
        else {
          putBack()
          notes.push(
            `[security] ${SecurityAccess.display(root, link)} was a protected link to ${target}, which the command removed; it was put back.`,
          )
        }
        if (watcher.links().has(link)) policyLinkBack = true
      }
      // The policy the link leads to is in force again from the next check.
      if (policyLinkBack) {
        policyLinkBack = false
        watcher.reload()
      }
      for (const p of absent) {
        let st: fs.Stats | undefined
        try {
          // lstat: a link made at the path counts even when it leads nowhere yet (a write tool could fill its target).
          st = fs.lstatSync(p)
        } catch {
          // Not there; a folder above it may now be a link the command made, leading it into writable space.
          notes.push(...linkedAbove(d, p, call))
          continue
        }
        if (searchFolders.has(p))
          notes.push(
            ...moveAside(
              d,
              p,
              call,
              "it is on PATH: a program there would run in place of one OpenCode starts by name, outside the sandbox",
            ),
          )
        else if (hostSwept.has(p) && !SWEPT.has(path.basename(p)))
          notes.push(
            ...moveAside(
              d,
              p,
              call,
              "OpenCode's configuration has it run or loaded outside the sandbox at its next start (a plugin, or what a local MCP server's command resolves to)",
            ),
          )
        else if (homeSwept.has(p))
          notes.push(
            ...moveAside(
              d,
              p,
              call,
              "your shell, login session, ssh or Python runs or trusts it on the host, outside the sandbox, without showing it to you",
            ),
          )
        else if (hookRun.has(p) || hookRun.has(p + path.sep))
          notes.push(
            ...moveAside(
              d,
              p,
              call,
              'a hook manager\'s installed git hooks run it outside the sandbox when you next use git (set "sandbox": { "allowGitConfig": true } to allow it)',
            ),
          )
        else if (!inspected.has(p) || st.isSymbolicLink())
          notes.push(...moveAside(d, p, call, "it could switch the security policy off"))
        else
          for (const t of planted(p))
            notes.push(
              ...moveAside(d, t, call, "git would run what it names outside the sandbox when you next use git"),
            )
      }
      notes.push(...modulesChanged(d, call))
      return notes
    }

    /**
     * Of a repository's config or hooks folder a command created, what runs a program: the config when it has such
     * a setting (`SecurityGitConfig.risky`), each hook that is not one of git's `.sample` files.
     */
    const planted = (p: string): string[] => {
      try {
        if (["config", "config.worktree"].includes(path.basename(p)))
          return SecurityGitConfig.risky(fs.readFileSync(p, "utf8")).length ? [p] : []
        return fs
          .readdirSync(p)
          .filter((name) => !name.endsWith(".sample"))
          .map((name) => path.join(p, name))
      } catch {
        return [p]
      }
    }

    /**
     * Entries whose names are not valid UTF-8 that a call made (not among those of the first listing, the user's
     * own), renamed to a spelling the layer can follow: each byte outside printable ASCII, and `%`, as `%XX`. Such a
     * name cannot be spelled as a path by the layer (Node and Bun give U+FFFD in its place), so nothing below it was
     * listed: a folder renamed so carried a protected file out of the sandbox's sight, and a repository made there
     * kept its `core.fsmonitor`, which OpenCode's snapshot and the user's next `git status` ran outside the sandbox
     * (red team AH1, AH1b, AH3). The user's own such names stay, and the folder holding one is hidden whole
     * (`SecurityTree.Tree.unspelled`).
     */
    const respell = (d: Derived, call: Call, found: SecurityTree.Unspelled[]): string[] => {
      const notes: string[] = []
      for (const u of found) {
        // The user's own names, and names already found impossible to rename or remove (named once: the caller
        // repeats until a pass changes nothing, so one that can never change must not be tried again).
        if (unspelledKnown.has(unspelledKey(u)) || unspelledStuck.has(unspelledKey(u))) continue
        if (!SecurityPath.movable(u.dir, ownFolders)) continue
        // Gone already (a listing older than a rename): nothing to rename, and nothing to claim removed.
        if (!fs.existsSync(u.path)) continue
        const shown = JSON.stringify(SecurityAccess.display(root, path.join(u.dir, u.name.toString("latin1"))))
        const to = path.join(u.dir, spellWithin(u.name, u.dir))
        let failed: string | undefined
        try {
          fs.renameSync(u.path, to)
        } catch (error) {
          failed = error instanceof Error ? error.message : String(error)
        }
        if (failed === undefined) {
          audit(d, {
            action: "refuse",
            source: "builtin-tool",
            tool: call.tool,
            callID: call.callID,
            path: SecurityAccess.display(root, to),
            reason: "a call made a name that is not valid UTF-8; renamed",
          })
          notes.push(
            `[security] The command made ${shown} (bytes shown as Latin-1), a name that is not valid UTF-8, which the security layer cannot follow: it was renamed to ${SecurityAccess.display(root, to)}. Use UTF-8 names.`,
          )
          continue
        }
        // Fail closed: left in place, what is below it (a repository, moved content) would stay where the layer
        // cannot look. The name this call made is moved aside under a short name of printable ASCII, or else removed
        // with everything below it.
        let removed: string | undefined
        const short = path.join(
          u.dir,
          `blocked-by-security-${now()}-${createHash("sha256").update(u.name).digest("hex").slice(0, 8)}`,
        )
        let aside: string | undefined = short
        layerAsides.add(short)
        try {
          fs.renameSync(u.path, short)
        } catch {
          aside = undefined
          try {
            fs.rmSync(u.path, { recursive: true, force: true })
          } catch (error) {
            removed = error instanceof Error ? error.message : String(error)
          }
        }
        audit(d, {
          action: "refuse",
          source: "builtin-tool",
          tool: call.tool,
          callID: call.callID,
          path: SecurityAccess.display(root, path.join(u.dir, spell(u.name))),
          reason: `a call made a name that is not valid UTF-8; it could not be renamed (${failed}); ${aside ? `moved aside to ${SecurityAccess.display(root, aside)}` : removed === undefined ? "removed" : `nor removed (${removed})`}`,
        })
        const note = aside
          ? `[security] The command made ${shown} (bytes shown as Latin-1), a name that is not valid UTF-8, which the security layer cannot follow, and it could not be renamed to its spelling (${failed}): it was moved aside to ${SecurityAccess.display(root, aside)}. Use UTF-8 names.`
          : removed === undefined
            ? `[security] The command made ${shown} (bytes shown as Latin-1), a name that is not valid UTF-8, which the security layer cannot follow, and it could not be renamed (${failed}): it was removed with everything below it. Use UTF-8 names.`
            : `[security] The command made ${shown} (bytes shown as Latin-1), a name that is not valid UTF-8, which the security layer cannot follow; it could be neither renamed (${failed}) nor removed (${removed}): remove it before using git in this project.`
        if (removed !== undefined) {
          unspelledStuck.add(unspelledKey(u))
          log.error(note)
        }
        notes.push(note)
      }
      return notes
    }

    const moveAside = (d: Derived, p: string, call: Call | undefined, why: string, then?: () => void): string[] => {
      // A folder named with its separator (a hooks folder, `.lefthook/`): the folder itself, not a name inside it.
      if (p.length > 1 && p.endsWith(path.sep)) p = p.slice(0, -1)
      // Never the system's own folders, whatever a rule or a bug says: running as root, every folder is writable.
      if (!SecurityPath.movable(p, ownFolders)) {
        const note = `[security] ${SecurityAccess.display(root, p)} was created or changed by the command, but it is in a system folder, which the layer never renames (${why}): it was left in place; remove it before starting OpenCode again.`
        log.error(note)
        return [note]
      }
      const aside = asideOf(p)
      try {
        fs.renameSync(p, aside)
        then?.()
        audit(d, {
          action: "refuse",
          source: "builtin-tool",
          tool: call?.tool ?? "shell",
          callID: call?.callID,
          path: SecurityAccess.display(root, p),
          reason: "a shell command created a protected host path; moved aside",
        })
        return [
          `[security] ${SecurityAccess.display(root, p)} was created by the command; ${why}, so it was moved to ${SecurityAccess.display(root, aside)}.`,
        ]
      } catch (error) {
        log.error(`could not move aside ${p}: ${error instanceof Error ? error.message : String(error)}`)
        return []
      }
    }

    /**
     * The tree as it stood before the first call whose creations `createdDenied` has not looked at yet (a sandboxed
     * command, a command the user typed, another plugin's or an MCP tool): what exists now and not then was made (or
     * moved, or linked) by such a call.
     */
    let createdBase: SecurityTree.Tree | undefined
    /** Takes the tree as it is now as `createdBase`, unless an older one waits. `known`: already brought up to date. */
    const baseCreated = (known?: SecurityTree.Tree) => {
      if (createdBase) return
      if (known) createdBase = known
      else if (tree) createdBase = SecurityTree.refresh(tree).tree
      layerAsides.clear()
    }

    /**
     * After such a call: every path it created that a rule of the policy denies `write` to the session's role is moved
     * aside (`<name>.blocked-by-security-<time>`), the outermost one only (`db/migrations`, not each file below it).
     * The sandbox binds a write-protected path read-only only when it exists; one that did not (a folder of
     * `.github/workflows/**`, an anchored `db/migrations`, a name-only `Dockerfile` or `vendor` at any depth) was
     * created by a command unseen — made, renamed or hard-linked there — and stayed (red team AO3). `SecurityTree.added`
     * compares only the folders its refresh finds changed. The layer's own files are not the call's: its asides, the
     * audit log, its state folders. Fail closed: a path that cannot be renamed is removed; one that can be neither is
     * named in the output and the log. Run while no command starts or runs (see `repair`).
     */
    const createdDenied = (d: Derived, call?: Call): string[] => {
      const base = createdBase
      const config = d.config
      if (!base || !config) return []
      const { tree: after, added } = SecurityTree.added(base)
      const logFile = config.logging.path
      const own = [...(options.ensure ?? []), ...hostHidden].map((p) => path.resolve(p))
      const layers = (p: string) =>
        layerAsides.has(p) ||
        p === logFile ||
        // Its rotated files only (`<log>.1`, `<log>.2`…): a prefix took a folder `<log>.dist/` and all below it (BB6).
        (p.startsWith(logFile + ".") && /^\d+$/.test(p.slice(logFile.length + 1))) ||
        own.some((o) => SecurityPath.isInside(p, o))
      const notes: string[] = []
      const taken: string[] = []
      const writeRules = config.rules.filter(
        (r) => !r.implicit && r.deniedOperations.has("write") && SecurityAccess.denies(r, "write", d.role),
      )
      const denying = (p: string) => writeRules.find((r) => r.test(p.normalize("NFC")))
      for (const e of added.sort((a, b) => a.path.length - b.path.length)) {
        if (taken.some((t) => SecurityPath.isInside(e.path, t)) || layers(e.path)) continue
        const rule =
          denying(e.path) ?? (e.kind === "other" && writeRules.length ? linkDenied(e.path, writeRules) : undefined)
        if (!rule) continue
        try {
          fs.lstatSync(e.path)
        } catch {
          continue
        }
        taken.push(e.path)
        notes.push(...setAside(d, e.path, rule, call))
      }
      // A call whose after hook has not come may still write (another plugin's or an MCP tool), or not have started
      // yet (a command prepared in the same step as the call whose before hook runs this): what it makes is compared
      // with the tree as it is now. Otherwise the next such call takes its own.
      createdBase = hostOut.size || writers.size ? SecurityTree.refresh(after).tree : undefined
      layerAsides.clear()
      return notes
    }

    /**
     * The rule a new symbolic link breaks, if any: its target's path (`ln -s .github/workflows/ci.yml x`), or a path
     * below the link when it leads to a folder — `ln -s gh .github` with `gh/workflows/ci.yml` makes
     * `.github/workflows/ci.yml` exist for everything that follows links (a CI runner, `docker build`), though no new
     * entry's own path matches `.github/workflows/**` and the tree does not follow links (red team BB2). The folder is
     * walked under the link's path, links inside it not entered, within `LINK_WALK_MAX` entries; past that (or when it
     * cannot be read) the first rule is returned: fail closed, the link is moved aside.
     */
    const linkDenied = (link: string, rules: SecurityConfig.Rule[]): SecurityConfig.Rule | undefined => {
      const denying = (p: string) => rules.find((r) => r.test(p.normalize("NFC")))
      let target: string
      try {
        if (!fs.lstatSync(link).isSymbolicLink()) return undefined
        target = path.resolve(path.dirname(link), fs.readlinkSync(link))
      } catch {
        return undefined
      }
      const byTarget = denying(target)
      if (byTarget) return byTarget
      let real: string
      try {
        if (!fs.statSync(link).isDirectory()) return undefined
        real = fs.realpathSync(link)
      } catch {
        return undefined
      }
      // As the tree: what is below `node_modules`, `.git`… is not looked at (see `SecurityTree.SKIP`).
      if (SecurityTree.SKIP.has(path.basename(link))) return undefined
      let seen = 0
      const queue: [string, string][] = [[real, link]]
      while (queue.length) {
        const [dir, shown] = queue.shift()!
        let names: fs.Dirent[]
        try {
          names = fs.readdirSync(dir, { withFileTypes: true })
        } catch {
          return rules[0]
        }
        for (const n of names) {
          if (++seen > LINK_WALK_MAX) return rules[0]
          const under = path.join(shown, n.name)
          const rule = denying(under)
          if (rule) return rule
          if (n.isDirectory() && !SecurityTree.SKIP.has(n.name)) queue.push([path.join(dir, n.name), under])
        }
      }
      return undefined
    }

    /** Moves aside (or else removes) a path a call created that `rule` keeps from writes, and says so. */
    const setAside = (d: Derived, p: string, rule: SecurityConfig.Rule, call?: Call): string[] => {
      const shown = SecurityAccess.display(root, p)
      const by = `rule '${rule.pattern}' (${SecurityAccess.display(root, rule.file ?? "")}${rule.id.slice(rule.id.indexOf("#"))})`
      const what = `${shown} was created by the ${call?.tool === "bash" || !call ? "command" : `${call.tool} call`} (made, moved or linked there), but writing it is denied by ${by} to role '${d.role}'`
      const aside = asideOf(p)
      let outcome: string
      let failed: string | undefined
      try {
        fs.renameSync(p, aside)
        outcome = `it was moved to ${SecurityAccess.display(root, aside)}`
      } catch (error) {
        const renaming = error instanceof Error ? error.message : String(error)
        try {
          fs.rmSync(p, { recursive: true, force: true })
          outcome = `it could not be moved aside (${renaming}), so it was removed`
        } catch (again) {
          failed = again instanceof Error ? again.message : String(again)
          outcome = `it could be neither moved aside (${renaming}) nor removed (${failed}): remove it yourself`
        }
      }
      audit(d, {
        action: "refuse",
        source: call ? sourceOf(call) : "builtin-tool",
        tool: call?.tool ?? "shell",
        callID: call?.callID,
        operation: "write",
        path: shown,
        rule: rule.id,
        reason: `a call created a path the policy keeps from writes; ${failed === undefined ? (outcome.startsWith("it was moved") ? "moved aside" : "removed") : "left in place"}`,
      })
      const note = `[security] ${what}; ${outcome}.`
      if (failed !== undefined) log.error(note)
      else log.warn(note)
      return [note]
    }

    const refuse = (
      d: Derived,
      base: { source: Source; tool?: string; plugin?: string; sessionID?: string; callID?: string },
      denial: SecurityDecide.Denial & { tool?: string },
    ): Verdict => {
      audit(d, {
        ...base,
        action: "deny",
        operation: denial.op,
        path: denial.path ? SecurityAccess.display(root, denial.path) : undefined,
        rule: denial.rule,
        reason: denial.reason,
      })
      const error = new SecurityError.Denied({
        reason: denial.reason,
        path: denial.path,
        op: denial.op,
        rule: denial.rule,
        tool: denial.tool,
      })
      return { allowed: false, reason: error.message, error, path: denial.path, op: denial.op, rule: denial.rule }
    }

    /** A search tool's include glob that selects protected files under its folder (it would override exclusions). */
    const includeDenial = (search: NonNullable<SecurityTools.Plan["search"]>): SecurityDecide.Denial | undefined => {
      if (!search.include) return undefined
      const glob = search.include
      for (const [file, ops] of index.files) {
        if (!(ops.has("read") || ops.has("llm"))) continue
        if (!SecurityPath.isInside(file, search.base)) continue
        if (includeMatches(glob, path.relative(search.base, file)))
          return {
            reason: `grep include '${glob}' selects ${SecurityAccess.display(root, file)}, which the policy protects; use an include pattern that does not match it`,
            path: file,
            op: "read",
          }
      }
      return undefined
    }

    /** The decision of `before`, without the wait for running shell commands (`SHELL_RACE_MS`). */
    const decideCall = async (call: Call): Promise<Verdict> => {
      // Host repairs that waited for commands to end run before anything is decided (see `repair`).
      if ((sweepDue || deferred.size) && quiet()) laterNotes.push(...flushRepairs(current().d))
      let { state, d } = current()
      const source = sourceOf(call)
      const a = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>
      const direct = typeof a.filePath === "string" ? a.filePath : typeof a.path === "string" ? a.path : undefined
      if (direct !== undefined) {
        watcher.notice(SecurityPath.expand(direct, directory, home))
        ;({ state, d } = current())
      }
      if (state.status === "none") return { allowed: true }
      scheduleIndex(false)
      const base = { source, tool: call.tool, plugin: call.plugin, sessionID: call.sessionID, callID: call.callID }
      // OpenCode's own HTTP API (under `acp`, `serve`, `web`, `--port`) reads any file and runs programs on the host:
      // a tool that fetches in OpenCode's process (webfetch, an MCP server's, a plugin's) must not be pointed at it,
      // whatever the policy's state (an invalid policy keeps file tools from every file too).
      const served = SecurityOwnServer.fetched(call.tool, call.args, source === "builtin-tool")
      const hit = served === undefined ? undefined : await SecurityOwnServer.find(served)
      if (hit)
        return refuse(d, base, {
          reason: `${hit.url} reaches OpenCode's own HTTP API at ${SecurityOwnServer.display(hit.listener)} (its process ${hit.listener.pid} serves it without the policy: it reads any file and runs programs on the host); fetch other addresses`,
          tool: call.tool,
        })
      if (state.status === "invalid") {
        if (SecurityTools.NO_FILES.has(call.tool) && source === "builtin-tool") return { allowed: true }
        const error = new SecurityError.PolicyInvalid({ problems: state.problems })
        audit(d, { ...base, action: "deny", reason: SecurityConfig.describe(state.problems) })
        return { allowed: false, reason: error.message, error }
      }
      // The policy changed since the index was built (a nested policy appeared, a rule was added): the hard links
      // and content fingerprints of what is newly protected are not known until the index is rebuilt, so this
      // call waits for it (a read through an older hard link would otherwise show the file).
      if (indexedVersion !== -1 && indexedVersion !== watcher.version) {
        scheduleIndex(true)
        while (building) await building
        ;({ state, d } = current())
        if (state.status !== "valid") return decideCall(call)
      }
      const config = state.config
      if (source === "mcp") {
        const policy = SecurityMcp.policyOfTool(state, call.tool, mcpServers, call.args)
        if (policy?.policy === "blocked")
          return refuse(d, base, { reason: `MCP server ${policy.servers.join(" or ")} is blocked by the policy` })
        if (policy?.policy === "trusted") {
          audit(d, { ...base, action: "allow", server: policy.servers.join(",") })
          return { allowed: true }
        }
        const denial = SecurityDecide.opaque(facts(d, config), call.tool, call.args)
        if (denial) return refuse(d, base, denial)
        audit(d, { ...base, action: "allow" })
        return { allowed: true }
      }
      const plan =
        source === "builtin-tool"
          ? await SecurityTools.plan(call.tool, call.args, {
              directory,
              // OpenCode's own worktree (`/` for a project without git): where it resolves a prompt's `@` mentions.
              worktree: options.worktree ? path.resolve(options.worktree) : root,
              home,
              env,
            })
          : undefined
      if (!plan) {
        const denial = SecurityDecide.opaque(facts(d, config), call.tool, call.args)
        if (denial) return refuse(d, base, denial)
        audit(d, { ...base, action: "allow" })
        return { allowed: true }
      }
      const shellCall =
        call.tool === "bash" ||
        (call.tool === "batch" &&
          (Array.isArray(a.tool_calls) ? a.tool_calls : []).some(
            (c) => c && typeof c === "object" && (c as { tool?: unknown }).tool === "bash",
          ))
      let sandboxed = false
      if (shellCall && !plan.error) {
        const prepared = await prepareShell(d, config, call)
        if ("error" in prepared) {
          audit(d, { ...base, action: "deny", reason: prepared.error.message })
          return { allowed: false, reason: prepared.error.message, error: prepared.error }
        }
        sandboxed = prepared.sandboxed
        ;({ state, d } = current())
      }
      // Files with segments this role may not read are shown redacted inside the sandbox: git there must not stage
      // the redaction or diff it against the real text it holds.
      const masked = maskedFiles()
      const worktreeGits = shellCall ? plan.gits.filter((g) => GIT_WORKTREE.has(g.sub)) : []
      // Files git cannot change inside the sandbox: shown redacted (read-protected segments) or read-only
      // (write-protected segments and files).
      const fixed =
        sandboxed && worktreeGits.length
          ? [
              ...new Set([
                ...masked,
                ...[...index.segmented].filter(([, ops]) => ops.has("write")).map(([f]) => f),
                ...[...index.files].filter(([, ops]) => ops.has("write") && !ops.has("read")).map(([f]) => f),
              ]),
            ]
          : []
      if (sandboxed && fixed.length && worktreeGits.length) {
        const work = gitWork(worktreeGits, masked, fixed)
        if (work.denial) return refuse(d, base, work.denial)
        // The staged versions are new objects: the sandbox must show them redacted too.
        if (work.staged) {
          const again = await prepareShell(d, config, call)
          if ("error" in again) {
            audit(d, { ...base, action: "deny", reason: again.error.message })
            return { allowed: false, reason: again.error.message, error: again.error }
          }
        }
      }
      if (plan.objects.length) {
        // Versions of a tracked file with protected segments are shown redacted in the sandbox (see
        // `historyObjects`), except those in packfiles: then the file counts as protected for history reads.
        const packed =
          masked.length && SecurityHistory.blobs(root, [], masked, watcher.version).packed
            ? masked.map((f) => `:(literal)${path.relative(root, f)}`)
            : []
        const specs = [...SecurityHistory.pathspecs(config, d.role, root), ...packed]
        const history = new Map<string, string>()
        for (const read of plan.objects) {
          // A repository not known statically (`cd $X; git log -p`) is taken to be the project's own.
          const held = SecurityHistory.held(read.cwd || root, specs, watcher.version, { gitDir: read.gitDir })
          if (held) history.set(SecurityDecide.historyKey(read), held)
        }
        const denial = SecurityDecide.decide(facts(d, config, { sandboxed, history }), plan)
        if (denial) return refuse(d, base, denial)
      } else {
        const denial = SecurityDecide.decide(facts(d, config, { sandboxed }), plan)
        if (denial) return refuse(d, base, denial)
      }
      if (plan.search) {
        await fresh()
        const denial = includeDenial(plan.search)
        if (denial) return refuse(d, base, denial)
      }
      if (!d.allowGitConfig) {
        for (const r of plan.requests) {
          if (r.op !== "write" || r.shell) continue
          const reason = gitWriteDenial(d, r.path, r.via)
          if (reason) return refuse(d, base, { reason, path: r.path, op: "write" })
        }
      }
      if (d.writeMarkers.length && call.callID) snapshot(d, call.callID, plan)
      learnSegments(
        d,
        plan.requests.filter((r) => r.op === "read").map((r) => SecurityPath.expand(r.path, directory, home)),
      )
      audit(d, { ...base, action: "allow", count: plan.requests.length })
      return { allowed: true, notes: plan.notes.length ? plan.notes : undefined, sandboxed: sandboxed || undefined }
    }

    /**
     * File tools (every tool but the shell and those that touch no file) and sandboxed shell commands do not overlap:
     * a command running beside a `write` could swap a link or a folder between the check of its path and the write,
     * which would then land on the policy. A file tool waits until no sandboxed command runs (at most `SHELL_RACE_MS`)
     * and counts as running until its result comes back (at most `FILE_CALL_MS`); a shell command waits for those
     * before it starts (`settleFiles`).
     */
    const racesShell = (call: Call) =>
      !!call.callID && call.tool !== "bash" && call.tool !== "batch" && !SecurityTools.NO_FILES.has(call.tool)
    const fileCalls = new Map<string, number>()
    /**
     * Write-tool calls allowed and not yet verified, by call id: the policy files' bytes and the protected host paths
     * absent when the call was allowed. A write whose path a command swapped after the check (a permission prompt
     * can hold the write long after it) is then undone (`verifyHost`).
     */
    /** Per write-tool call: each policy file's bytes and where it really lay when the call began (`real`). */
    const hostBefore = new Map<
      string,
      {
        at: number
        policies: Map<string, { bytes: Buffer; real: string }>
        /** Every symbolic link of the policy files' and the audit log's link chains, with its own text (`chainLinks`). */
        chain: Map<string, string>
        /** The project folders the chains' links, the policy files and the audit log lie in (`rebuildFolders`). */
        folders: string[]
        /** The audit log where its chain ends: its size and first bytes (all of them up to `TEMPLATE_KEEP`). */
        log?: { file: string; real: string; size: number; head: Buffer }
        absent: string[]
      }
    >()
    const shellRaceMs = options.shellRaceMs ?? SHELL_RACE_MS
    const fileCallMs = options.fileCallMs ?? FILE_CALL_MS
    /** Built-in tools' exclusive work in progress (`exclusive`): shell commands wait for it. */
    const held = new Set<symbol>()
    /** Exclusive sections begun (ids for `recordHost`). */
    let exclusives = 0
    const exclusiveMs = options.exclusiveMs ?? EXCLUSIVE_MS
    const shellQueueMs = options.shellQueueMs ?? SHELL_QUEUE_MS
    /** Shell commands started since the last time no sandboxed command was found running. */
    let shellsSince = 0
    /** Shell commands this guard admitted are known process-wide (`Sandbox.admit`) under this guard's own keys. */
    const instance = ++instances
    /** Keys this guard admitted (released when their result comes back, or all when the guard closes). */
    const admittedHere = new Set<string>()
    const shellKey = (callID: string) => `${instance}\0${callID}`
    const admit = (callID: string) => {
      const key = shellKey(callID)
      admittedHere.add(key)
      Sandbox.admit(key)
    }
    const release = (callID: string) => {
      const key = shellKey(callID)
      admittedHere.delete(key)
      Sandbox.release(key)
    }
    const shellSandboxes = () => Sandbox.commands()
    /** A shell command admitted within `SHELL_START_MS` (it may not have become a sandbox yet), by any guard. */
    const shellStarting = () => Sandbox.starting(SHELL_START_MS)
    /**
     * Resolves true once no shell command is starting or running (and `also` is false), false after `limitMs`. A shell
     * just started is still itself until its entry script replaces it with bubblewrap: it counts as starting. `take`
     * runs in the same turn as the check that passed (an admission or a hold taken there cannot be raced by another
     * waiter whose check comes before the caller resumes).
     */
    const shellsQuiet = async (limitMs: number, also = () => false, take = () => {}): Promise<boolean> => {
      const started = Date.now()
      while (also() || shellStarting() || shellSandboxes().length) {
        if (Date.now() - started > limitMs) return false
        await Bun.sleep(25)
      }
      take()
      return true
    }
    const shellsSettled = async (): Promise<boolean> => {
      if (!shellsSince || !sandbox) return true
      if (!(await shellsQuiet(shellRaceMs))) return false
      shellsSince = 0
      return true
    }

    /**
     * Host-side repairs (a template or `package.json` put back, a file with a write-protected segment restored, what a
     * command planted moved aside, a held link put back) rename and re-create paths in folders sandboxed commands can
     * write (a policy file a write changed is the exception, see `verifyHost`). A command
     * running beside one could swap the path, or a folder above it, for a link between two of its steps, and the
     * repair — OpenCode's own process, outside the sandbox — would land where the link leads (the policy file, a
     * dotfile). So they run only while no sandboxed command starts or runs, in any guard of this process; otherwise
     * they wait (`deferred`, by kind) for the first moment none does: the next hook that finds none, the admission of
     * the next command (in the same turn as its check, before it starts), or a timer while commands run. Tools that
     * touch no file (`webfetch`, `todowrite`, …) neither wait for commands nor hold them, so their hooks may come while
     * one runs: the reason for this gate.
     */
    const quiet = () => !shellStarting() && !shellSandboxes().length
    const deferred = new Map<string, (d: Derived) => string[]>()
    /** Notes of deferred repairs, for the next tool output. */
    const laterNotes: string[] = []
    let repairTimer: ReturnType<typeof setInterval> | undefined
    /**
     * Runs what waits (deferred repairs, and with `sweeps` the sweep of commands whose end no hook reported): only call
     * while `quiet()`. A command's admission runs the repairs, not that sweep, which waits for the next tool call as
     * before (a user's command typed between two of the agent's may be followed by the user's own changes).
     */
    const flushRepairs = (d: Derived, sweeps = true): string[] => {
      const notes: string[] = []
      if (sweeps && sweepDue) {
        const due = sweepDue
        sweepDue = undefined
        notes.push(...sweep(d, due), ...createdDenied(d))
        disarmHeld()
      }
      for (const [key, work] of [...deferred]) {
        deferred.delete(key)
        notes.push(...work(d))
      }
      // The repairs ran: a record of the definitions as they were before the commands is no longer needed.
      disarmHeld()
      return notes
    }
    const armRepairTimer = () => {
      if (repairTimer || closed) return
      repairTimer = setInterval(() => {
        if (!quiet()) return
        clearInterval(repairTimer)
        repairTimer = undefined
        try {
          const { state, d } = current()
          if (state.status === "none") deferred.clear()
          else laterNotes.push(...flushRepairs(d))
        } catch (error) {
          log.error(`[security] ${error instanceof Error ? error.message : String(error)}`)
        }
      }, 50)
      repairTimer.unref?.()
    }
    /** `work` now, after what waits, when no sandboxed command starts or runs; else deferred (once per `key`). */
    const repair = (d: Derived, key: string, work: (d: Derived) => string[]): string[] => {
      if (quiet()) return [...flushRepairs(d, false), ...work(d)]
      if (!deferred.has(key)) deferred.set(key, work)
      armRepairTimer()
      return []
    }
    /** Templates and `package.json` files a call changed, put back (`templatesChanged`, `packageBinsChanged`). */
    const hostRepairs = (d: Derived, call: Call): string[] => [
      ...repair(d, "templates", (d) => templatesChanged(d, call)),
      ...repair(d, "bins", (d) => packageBinsChanged(d, call)),
    ]

    /**
     * The symbolic links `file` is reached through, each with its own text: the path itself and every hop of its chain
     * (`.opencode-security.json` → `org/current` → `org/policy.json`: the first two), folder links included. Only a
     * link whose folder is itself (no link above it) is kept: one reached through another link is that link's to hold.
     */
    const chainLinks = (file: string, into: Map<string, string>) => {
      for (const at of [file, ...SecurityPath.resolve(file).hops])
        try {
          if (into.has(at) || realOrAsIs(path.dirname(at)) !== path.dirname(at)) continue
          if (fs.lstatSync(at).isSymbolicLink()) into.set(at, fs.readlinkSync(at))
        } catch {
          continue
        }
    }

    /**
     * Before a write-tool call or an unplanned writer: the bytes of every policy file (where its chain ends), every
     * link of the policy files' and the audit log's link chains, and the protected host paths that are absent.
     */
    const recordHost = (id: string) => {
      const { state } = current()
      const policies = new Map<string, { bytes: Buffer; real: string }>()
      const chain = new Map<string, string>()
      for (const file of state.status === "valid" ? state.config.files : []) {
        chainLinks(file, chain)
        try {
          policies.set(file, { bytes: fs.readFileSync(file), real: realOrAsIs(file) })
        } catch {
          continue
        }
      }
      let log: { file: string; real: string; size: number; head: Buffer } | undefined
      if (state.status === "valid") {
        const file = state.config.logging.path
        chainLinks(file, chain)
        const real = realOrAsIs(file)
        const head = headOf(real)
        if (head) log = { file, real, ...head }
      }
      const absent = protect
        .map((p) => (p.endsWith(path.sep) ? p.slice(0, -1) : p))
        .filter((p) => sweptHost(p) && !kindOf(p))
      // The project's folders these lie in (all real folders now: links and targets are taken where they really are).
      const folders = new Set<string>()
      for (const p of [...chain.keys(), ...[...policies.values()].map((v) => v.real), ...(log ? [log.real] : [])])
        for (let dir = path.dirname(p); dir !== root && SecurityPath.isInside(dir, root); dir = path.dirname(dir))
          folders.add(dir)
      hostBefore.set(id, { at: Date.now(), policies, chain, folders: [...folders], log, absent })
    }

    /**
     * After the call, while no command starts or runs: a project folder of the policy's or the audit log's way that is
     * now a link or gone (renamed aside, replaced by a link to a folder holding a weaker `current`) is made again, the
     * link moved aside, so that the links and bytes below can go back where they were. While a command runs, the
     * folders are left as they are (a command may have moved a nested policy's folder, the policy with it) and the
     * links and bytes below them are not put back (see `verifyChain`).
     */
    const rebuildFolders = (d: Derived, id: string, folders: string[]): string[] => {
      if (!folders.length || !quiet()) return []
      const notes: string[] = []
      for (const dir of [...folders].sort((a, b) => a.length - b.length)) {
        let st: fs.Stats | undefined
        try {
          st = fs.lstatSync(dir)
        } catch {
          st = undefined
        }
        if (st?.isDirectory()) continue
        const parent = path.dirname(dir)
        if (realOrAsIs(parent) !== parent || !SecurityPath.movable(dir, ownFolders)) continue
        const shown = SecurityAccess.display(root, dir)
        const aside = asideOf(dir)
        try {
          if (st) fs.renameSync(dir, aside)
          fs.mkdirSync(dir)
        } catch (error) {
          log.error(`could not make ${dir} again: ${error instanceof Error ? error.message : String(error)}`)
          continue
        }
        notes.push(
          `[security] ${shown}, a folder the security policy or the audit log is reached through, was ${st ? `replaced during a tool call; the replacement was moved to ${SecurityAccess.display(root, aside)} and` : "removed or renamed during a tool call;"} the folder was made again for what the layer puts back in it.`,
        )
        audit(d, {
          action: "refuse",
          source: "builtin-tool",
          callID: id,
          path: shown,
          reason: "a folder of the policy's or the audit log's way changed during a tool call; made again",
        })
      }
      return notes
    }

    /** A regular file's size and its first bytes (up to `TEMPLATE_KEEP`), or undefined. */
    const headOf = (file: string): { size: number; head: Buffer } | undefined => {
      let fd: number | undefined
      try {
        fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
        const st = fs.fstatSync(fd)
        if (!st.isFile()) return undefined
        const head = Buffer.alloc(Math.min(st.size, TEMPLATE_KEEP))
        const n = fs.readSync(fd, head, 0, head.length, 0)
        return { size: st.size, head: head.subarray(0, n) }
      } catch {
        return undefined
      } finally {
        if (fd !== undefined) fs.closeSync(fd)
      }
    }

    /**
     * After the call: an audit log that no longer begins with what it held before (truncated, rewritten or removed;
     * the layer only appends, or rotates it to `<log>.1`) has its previous bytes put back as a fresh file renamed over
     * its path, the changed version (with anything appended during the call) moved aside. Past `TEMPLATE_KEEP` bytes
     * the change is named only. With `keep: 0` a removed log is taken for a rotation (the layer removes it then).
     */
    const verifyLog = (
      d: Derived,
      id: string,
      entry: NonNullable<ReturnType<typeof hostBefore.get>>["log"],
    ): string[] => {
      if (!entry || !entry.size) return []
      const e = entry
      const kept = (file: string) => {
        const now = headOf(file)
        return !!now && now.size >= e.size && now.head.subarray(0, e.head.length).equals(e.head)
      }
      if (kept(e.real) || kept(`${e.real}.1`)) return []
      const exists = !!kindOf(e.real) || isLink(e.real)
      const state = current().state
      if (!exists && state.status === "valid" && state.config.logging.keep === 0) return []
      const shown = SecurityAccess.display(root, e.file)
      const folder = path.dirname(e.real)
      if (e.head.length < e.size || realOrAsIs(folder) !== folder || !SecurityPath.movable(e.real, ownFolders)) {
        const note = `[security] the audit log ${shown} was ${exists ? "truncated or rewritten" : "removed"} during a tool call (written by a tool its arguments did not name it to); it was not put back (${e.head.length < e.size ? "larger than the layer keeps" : "a folder above it is no longer itself"}).`
        log.warn(note)
        return [note]
      }
      const aside = asideOf(e.real)
      try {
        if (exists) fs.renameSync(e.real, aside)
        SecurityPath.replace(e.real, e.head, 0o600)
      } catch (error) {
        log.error(`could not put back ${e.real}: ${error instanceof Error ? error.message : String(error)}`)
        return []
      }
      audit(d, {
        action: "refuse",
        source: "builtin-tool",
        callID: id,
        path: shown,
        reason: "the audit log was truncated, rewritten or removed during a tool call; restored",
      })
      return [
        `[security] the audit log ${shown} was ${exists ? "truncated or rewritten" : "removed"} during a tool call (written by a tool its arguments did not name it to); its previous content was put back${exists ? ` and the changed version moved to ${SecurityAccess.display(root, aside)}` : ""}.`,
      ]
    }

    /**
     * After the call: a link of a policy's or the audit log's chain that now leads elsewhere, was replaced or removed
     * is put back (the replacement moved aside, a fresh link made at the path: nothing is written through a link).
     * A link whose folder is no longer itself (a folder above it moved or linked) is left alone with a note, as
     * `verifyHost` leaves a policy there.
     */
    const verifyChain = (d: Derived, id: string, chain: Map<string, string>): string[] => {
      const notes: string[] = []
      for (const [link, target] of chain) {
        let was: string | null
        try {
          was = fs.lstatSync(link).isSymbolicLink() ? fs.readlinkSync(link) : ""
        } catch {
          was = null
        }
        if (was === target) continue
        const shown = SecurityAccess.display(root, link)
        const folder = path.dirname(link)
        if (realOrAsIs(folder) !== folder || !SecurityPath.movable(link, ownFolders)) {
          const note = `[security] ${shown}, a link the security policy or the audit log is reached through, was changed during a tool call, but a folder above it is no longer itself (or it lies in a system folder): it was not put back there; put it back as a link to ${target}.`
          log.warn(note)
          notes.push(note)
          watcher.reload()
          continue
        }
        const putBack = () => fs.symlinkSync(target, link)
        try {
          if (was !== null) {
            const aside = asideOf(link)
            fs.renameSync(link, aside)
            putBack()
            notes.push(
              `[security] ${shown} was a link to ${target} that the security policy or the audit log is reached through; it was ${was ? `sent to ${was}` : "replaced"} during a tool call (written by a tool its arguments did not name it to), so it was put back and the replacement moved to ${SecurityAccess.display(root, aside)}.`,
            )
          } else {
            putBack()
            notes.push(
              `[security] ${shown} was a link to ${target} that the security policy or the audit log is reached through; it was removed during a tool call and was put back.`,
            )
          }
        } catch (error) {
          log.error(`could not put back the link ${link}: ${error instanceof Error ? error.message : String(error)}`)
          continue
        }
        watcher.reload()
        audit(d, {
          action: "refuse",
          source: "builtin-tool",
          callID: id,
          path: shown,
          reason: "a link of the policy's or the audit log's chain changed during a tool call; restored",
        })
      }
      return notes
    }

    /**
     * After a write-tool call (or at the next call, when its result never came back): a policy file it changed is put
     * back, a protected host path it created is moved aside. Only a write through a path swapped after the check can
     * do either, so this is the guard of last resort against such races. The policy is put back at once, even while a
     * command runs (a weaker policy must not stay in force until it ends): every command's sandbox locks the policy
     * files and pins the folders a linked one's target lies in; a command may still move a folder above a nested
     * policy, so the bytes go back only where the policy lay when the call began, its folder chain unchanged, as a
     * fresh file renamed over that path (`SecurityPath.replace`). The sweep waits (see `repair`).
     */
    const verifyHost = (d: Derived, only?: string): string[] => {
      const notes: string[] = []
      for (const [id, kept] of [...hostBefore]) {
        // Others are left to their own result, unless it never came (`HOST_CHECK_MS`).
        if (id !== only && Date.now() - kept.at < HOST_CHECK_MS) continue
        hostBefore.delete(id)
        // The links first: the bytes go back where the chain ends as it was, never where a retargeted link leads.
        notes.push(...rebuildFolders(d, id, kept.folders))
        notes.push(...verifyChain(d, id, kept.chain))
        notes.push(...verifyLog(d, id, kept.log))
        for (const [file, { bytes, real }] of kept.policies) {
          // Where the policy lay when the call began, never where its path leads now: a command may since have moved
          // a folder above a nested policy and linked another policy's folder in its place (the root one's), and the
          // nested bytes would have replaced it. A folder of that chain that is no longer itself is left alone (the
          // policy moved with it); the watcher reloads what is there.
          const folder = path.dirname(real)
          if (realOrAsIs(folder) !== folder) {
            const note = `[security] a folder above ${SecurityAccess.display(root, file)} was moved or replaced by a link during a tool call; the policy file was not put back there.`
            log.warn(note)
            notes.push(note)
            watcher.reload()
            continue
          }
          let now: Buffer | undefined
          try {
            now = fs.readFileSync(real)
          } catch {
            now = undefined
          }
          if (now && now.equals(bytes)) continue
          try {
            // Where a linked policy leads (the link stays), as a fresh file renamed there: never written through a link.
            SecurityPath.replace(real, bytes)
            watcher.reload()
            notes.push(
              `[security] ${SecurityAccess.display(root, file)} was changed during a file tool call (a path swapped after its check, or written by a tool its arguments did not name it to); it was put back.`,
            )
            audit(d, {
              action: "refuse",
              source: "builtin-tool",
              callID: id,
              path: SecurityAccess.display(root, file),
              reason: "a policy file changed during a write-tool call; restored",
            })
          } catch (error) {
            log.error(`could not restore ${file}: ${error instanceof Error ? error.message : String(error)}`)
          }
        }
        // What a command could redirect (renames in folders it writes) waits for commands to end (see `repair`).
        if (quiet()) notes.push(...sweep(d, kept.absent))
        else if (kept.absent.length) {
          sweepDue = [...new Set([...(sweepDue ?? []), ...kept.absent])]
          armRepairTimer()
        }
      }
      return notes
    }

    /** Calls of plugin tools wrapped by `wrapTool` (their call ids). */
    let wrappedCalls = 0

    const guard: Guard = {
      root,
      state: () => current().state,
      active: () => current().state.status !== "none",
      role: () => current().d.role,
      accessVersion: () => (current(), accessVersion),
      status() {
        const { state, d } = current()
        const probe = sandbox?.probe()
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
            segmented: index.segmented.size,
          },
          sandbox: {
            mode: d.sandbox,
            allowHostTools: d.allowHostTools,
            available: probe?.ok ?? false,
            reason: probe && !probe.ok ? probe.reason : undefined,
            mounts: sandbox?.plan()?.mounts.length,
            bypassed,
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
        watcher.notice(abs)
        if (watcher.version !== d.version) return guard.check(target, op)
        if (state.status === "none") return { allowed: true, path: abs }
        if (state.status === "invalid")
          return {
            allowed: false,
            path: abs,
            reason: new SecurityError.PolicyInvalid({ problems: state.problems }).message,
          }
        return SecurityDecide.access(facts(d, state.config), abs, op)
      },
      async access(target, op, source = "builtin-tool", opts = {}) {
        const ops: Operation[] = op === "read" ? [...SecurityDecide.READ_OPS] : [op]
        const { state, d } = current()
        const git = op === "write" && state.status !== "none" ? gitWriteDenial(d, target, "this write") : undefined
        if (git) {
          if (!opts.quiet)
            audit(d, {
              action: "deny",
              source,
              operation: "write",
              path: SecurityAccess.display(root, SecurityPath.expand(target, directory, home)),
              reason: git,
            })
          return git
        }
        for (const o of ops) {
          const decision = guard.check(target, o)
          if (!decision.allowed) {
            if (opts.quiet) return decision.reason
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
        // Policy files are put back at once, commands running or not (see `verifyHost`).
        if (hostBefore.size) laterNotes.push(...verifyHost(current().d))
        // OpenCode runs no after hook for a tool that fails, and apply_patch can fail after writing some files: what a
        // call may have written is checked again before every call, and its notes go with this call's output.
        const start = current()
        if (start.state.status !== "none") {
          // A policy link replaced by a call whose after hook never came (or outside any call) is put back first.
          const notes =
            start.state.status === "invalid" && watcher.links().size
              ? repair(start.d, "links", (d) => sweep(d, [], call))
              : []
          notes.push(...hostRepairs(start.d, call))
          if (writers.size) {
            notes.push(...repair(start.d, "repositories", (d) => newRepositories(d, call)))
            notes.push(...repair(start.d, "created", (d) => createdDenied(d)))
            // A call whose after hook has not come within the shell wait failed (or its hook was lost): it has been
            // checked now, so later calls stop walking the tree for it.
            for (const [id, at] of writers) if (Date.now() - at > shellRaceMs) writers.delete(id)
          }
          if (notes.length && call.callID) carried.set(call.callID, notes)
        }
        for (const [id, at] of hostOut) if (Date.now() - at > shellRaceMs) hostOut.delete(id)
        if (hostMoved || hostOut.size) {
          hostMoved = false
          await fresh()
        }
        if (call.callID && writes(call)) writers.set(call.callID, Date.now())
        // What the repositories are before a call that may write (see `repoIds`): its after hook compares.
        if (writes(call) && !repoIdsArmed && current().state.status !== "none") {
          repoIds.clear()
          recordRepos()
          repoIdsArmed = true
        }
        if (call.callID && unplanned(call)) hostOut.set(call.callID, Date.now())
        if (!racesShell(call)) {
          const decision = await decideCall(call)
          // A batch is no file tool (it may hold commands), but it may hold writers: checked after like them.
          if (decision.allowed && call.callID && call.tool === "batch" && unplanned(call)) {
            recordHost(call.callID)
            recordUnplanned(current().d, call.callID)
            snapshotSegmented(current().d, call.callID)
          }
          return decision
        }
        const id = call.callID!
        fileCalls.set(id, Date.now())
        try {
          if (!(await shellsSettled())) {
            fileCalls.delete(id)
            const { d } = current()
            const error = new SecurityError.Busy({ seconds: shellRaceMs / 1000 })
            audit(d, {
              action: "deny",
              source: sourceOf(call),
              tool: call.tool,
              sessionID: call.sessionID,
              callID: id,
              reason: error.message,
            })
            return { allowed: false, reason: error.message, error }
          }
          const decision = await decideCall(call)
          if (!decision.allowed) fileCalls.delete(id)
          else if (OpenCode.WRITE_TOOLS.has(call.tool)) recordHost(id)
          else if (unplanned(call)) {
            recordHost(id)
            recordUnplanned(current().d, id)
            snapshotSegmented(current().d, id)
          }
          return decision
        } catch (error) {
          fileCalls.delete(id)
          throw error
        }
      },
      async exclusive(work) {
        const token = Symbol("exclusive")
        held.add(token)
        // The built-in tools' own writes (AST rewrites, LSP edits) are checked file by file (`access`); the policy
        // files are still compared after the work, as after a write-tool call, and put back if it changed one (a
        // policy link's target written under its own name, or a link swapped after a check).
        const id = `exclusive:${++exclusives}`
        if (current().state.status === "valid") recordHost(id)
        // Let go for a permission prompt; taken again in the same turn as a check that no command starts or runs.
        const outside: Outside = async (f) => {
          held.delete(token)
          try {
            return await f()
          } finally {
            const taken = await shellsQuiet(shellRaceMs, undefined, () => held.add(token))
            if (!taken) throw new SecurityError.Busy({ seconds: shellRaceMs / 1000 })
          }
        }
        try {
          return await work(outside)
        } finally {
          held.delete(token)
          if (hostBefore.has(id)) laterNotes.push(...verifyHost(current().d, id))
        }
      },
      async settleShells(callID) {
        // Without a policy in force, or with the sandbox off, there is no sandbox whose protections a descriptor
        // could outlive. (Not "no sandbox made yet": the first commands of a session may come in parallel.)
        const { state, d } = current()
        if (state.status === "none" || d.sandbox === "off") return
        // A built-in tool's exclusive work is waited for too, in the same check that admits the command.
        // Admitted in the same turn as the check: OpenCode starts a step's commands at once, and two hooks that both
        // checked before either registered ran side by side.
        // What host repairs wait for no command (see `repair`) runs first, in that same turn, before this one starts.
        const admitted = await shellsQuiet(
          shellQueueMs,
          () => held.size > 0,
          () => {
            if (deferred.size) laterNotes.push(...flushRepairs(current().d, false))
            if (callID) admit(callID)
          },
        )
        if (!admitted) throw new SecurityError.ShellRunning({ seconds: shellQueueMs / 1000 })
      },
      async settleFiles() {
        const started = Date.now()
        while (held.size) {
          if (Date.now() - started > exclusiveMs) throw new SecurityError.ToolRunning({ seconds: exclusiveMs / 1000 })
          await Bun.sleep(10)
        }
        while ([...fileCalls.values()].some((at) => Date.now() - at < fileCallMs)) {
          if (Date.now() - started > fileCallMs) break
          await Bun.sleep(10)
        }
        for (const [id, at] of fileCalls) if (Date.now() - at >= fileCallMs) fileCalls.delete(id)
      },
      async helper() {
        const { state, d } = current()
        if (state.status !== "valid" || d.sandbox === "off") return undefined
        const sb = ensureSandbox()
        const probe = sb.probe()
        if (!probe.ok) {
          if (d.sandbox !== "required") return undefined
          throw new SecurityError.SandboxUnavailable({ reason: probe.reason, install: probe.install })
        }
        await fresh()
        const latest = current()
        const config = latest.state.status === "valid" ? latest.state.config : state.config
        const plan = sb.prepare(protections(latest.d, config).sandbox)
        // Read-only: a helper runs beside file tools, which do not wait for it (see `SandboxPlan.readOnly`).
        // No Unix sockets: a descriptor a command passed it would outlive that command's sandbox and its protections.
        const args = [...SandboxPlan.readOnly(plan.args), "--seccomp", String(SECCOMP_FD)]
        return {
          bwrap: probe.bwrap,
          args,
          key: args.join("\0"),
          register: (pid: number) => Sandbox.registerHelper(pid),
          seccomp: SandboxSeccomp.denyUnixSockets(),
        }
      },
      async containTemplate(template) {
        // A template with no shell line may still form one once OpenCode substitutes the user's arguments
        // (`SecurityTemplates.splices`): it is separated whatever the sandbox.
        if (SecurityTemplates.expansions(template).length === 0 && SecurityTemplates.splices(template).length === 0)
          return { template }
        const { state, d } = current()
        const refuse = (why: string) => ({
          template: SecurityTemplates.contain(
            template,
            () => `echo 'opencode-builtins: not run (${why.replace(/['`\\\n\r]/g, " ")})'`,
          ),
          note: why,
        })
        if (state.status === "none") return { template }
        // Invalid policies fail closed: no line runs until the policy is fixed.
        if (state.status !== "valid") return refuse("the security policy is invalid")
        if (d.sandbox === "off") return { template: SecurityTemplates.separated(template) }
        const sb = ensureSandbox()
        const probe = sb.probe()
        if (!probe.ok) {
          if (d.sandbox !== "required") return { template: SecurityTemplates.separated(template) }
          return refuse(`the shell sandbox cannot start: ${probe.reason}`)
        }
        const ready = await templateLauncher()
        if ("why" in ready) return refuse(ready.why)
        const { bash, launcher } = ready
        let index = 0
        const out = SecurityTemplates.contain(
          template,
          (cmd) =>
            SecurityTemplates.launch(bash, launcher, cmd) ??
            "echo 'opencode-builtins: not run (the sandbox folder cannot be named in a shell line)'",
          // A line with an argument placeholder: whatever quoting it got, the argument OpenCode puts there would be
          // host shell code (`hold`); it runs from `runHeldLines` instead.
          (cmd) => SecurityTemplates.hold(cmd, templateNonce, index++),
        )
        return { template: out }
      },
      async runHeldLines(text) {
        const lines = SecurityTemplates.held(text, templateNonce)
        if (!lines.length) return text
        const notRun = (why: string) => `opencode-builtins: not run (${why})`
        const ready = await (async () => {
          const { state, d } = current()
          if (state.status === "none") return { why: "there is no security policy to run it under" }
          if (state.status !== "valid") return { why: "the security policy is invalid" }
          if (d.sandbox === "off") return { why: "the shell sandbox is off" }
          const probe = ensureSandbox().probe()
          if (!probe.ok) return { why: `the shell sandbox cannot start: ${probe.reason}` }
          return templateLauncher()
        })().catch((error: unknown) => ({ why: error instanceof Error ? error.message : String(error) }))
        const outputs = await Promise.all(
          lines.map((line) => {
            if (line.cmd === undefined) return notRun("its marks were changed by the arguments")
            if ("why" in ready) return notRun(ready.why)
            return runLauncher(ready.bash, ready.launcher, line.cmd)
          }),
        )
        let out = text
        for (let i = lines.length - 1; i >= 0; i--)
          out = out.slice(0, lines[i]!.start) + outputs[i] + out.slice(lines[i]!.end)
        return out
      },
      async refreshTemplates() {
        if (!templateLaunch || closed) return
        // A changed policy schedules a full index (`current`); new paths are found by a refresh of the tree (one
        // `stat` per known folder) and a rebuild only when a folder changed, whose end prepares the plan if needed.
        current()
        await fresh()
        planTemplates()
      },
      templatesRan() {
        let ran = false
        try {
          ran = sandbox?.templatesRan() ?? false
        } catch (error) {
          log.error(`[security] ${error instanceof Error ? error.message : String(error)}`)
        }
        if (!ran) return
        sweepDue = [...new Set([...(sweepDue ?? []), ...templateAbsent])]
        if (quiet()) laterNotes.push(...flushRepairs(current().d))
        else armRepairTimer()
      },
      shellEnv(input, shellEnv = process.env) {
        const { state, d } = current()
        if (state.status === "none" || d.sandbox === "off" || !input.callID) return {}
        if (bypassed && pending.has(input.callID))
          throw new SecurityError.Denied({ reason: `a previous shell command ran outside the sandbox (${bypassed})` })
        const sb = ensureSandbox()
        const probe = sb.probe()
        if (!probe.ok || !Sandbox.supports(shell)) {
          if (d.sandbox === "required")
            throw new SecurityError.SandboxUnavailable({
              reason: probe.ok
                ? `OpenCode runs commands with ${shell}, which the sandbox cannot take over`
                : probe.reason,
              install: probe.ok ? "Set SHELL to bash or zsh" : probe.install,
            })
          return {}
        }
        if (state.status === "valid" && (!sb.plan() || !pending.has(input.callID))) {
          // A command no before hook prepared (one the user typed): protections as currently known, and the host
          // paths it must not create checked at the next call.
          armHeld()
          const planned = protections(d, state.config)
          sb.prepare(planned.sandbox)
          if (!pending.has(input.callID)) {
            sweepDue = [...new Set([...(sweepDue ?? []), ...planned.absent])]
            baseCreated()
          }
        }
        if (!sb.plan()) return {}
        // The held Python names as the command finds them (a sweep between the check and now took the last record).
        takeModules()
        if (pending.has(input.callID) || sweepDue) armHeld()
        const out = sb.env(input.callID, shellEnv)
        shellsSince++
        admit(input.callID)
        // Inside the sandbox ripgrep reads the exclusions (shown read-only there, with the user's own lines first), so
        // a search from the root skips protected paths instead of failing on them; without them, the user's file.
        const file = SecurityRipgrep.file()
        out[SecurityRipgrep.ENV] =
          file && sb.plan()?.exposed.includes(file) ? file : (SecurityRipgrep.userConfig() ?? "")
        return out
      },
      searchReaches(call) {
        if (call.tool !== "grep" && call.tool !== "glob") return false
        const { state, d } = current()
        if (state.status === "none" || !d.config) return false
        const a = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>
        const base = SecurityTools.toolPath(typeof a.path === "string" ? a.path : ".", directory)
        let real: string | undefined
        try {
          real = fs.realpathSync(base)
        } catch {
          // Nothing there now (it may have been there when OpenCode searched): the contained search says so.
          return true
        }
        if (call.tool === "grep" && d.readMarkers.length > 0) return true
        const near = (p: string) => [base, real].some((b) => SecurityPath.isInside(p, b) || SecurityPath.isInside(b, p))
        return searchHidden(d).some((e) => near(e.path))
      },
      async search(call) {
        if (!guard.searchReaches(call)) return undefined
        const { d } = current()
        const config = d.config
        const a = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>
        if (!config || typeof a.pattern !== "string") return undefined
        const base = SecurityTools.toolPath(typeof a.path === "string" ? a.path : ".", directory)
        const exclude = searchHidden(d)
        const hidden = (p: string) => hiddenInstruction(d, config, p)
        const result =
          call.tool === "grep"
            ? await SecuritySearch.grep({
                base,
                pattern: a.pattern,
                include: typeof a.include === "string" ? a.include : undefined,
                hidden,
                lines: (p) => segmentLines(d, p, "lf"),
                exclude,
              })
            : await SecuritySearch.glob({ base, pattern: a.pattern, hidden, exclude })
        audit(d, {
          action: "redact",
          source: "builtin-tool",
          tool: call.tool,
          callID: call.callID,
          kinds: ["contained-search"],
          count: 1,
        })
        return result
      },
      after(call, output) {
        const early = (call.callID && carried.get(call.callID)) || []
        if (unplanned(call)) hostMoved = true
        if (call.callID) hostOut.delete(call.callID)
        if (call.callID) {
          fileCalls.delete(call.callID)
          release(call.callID)
          carried.delete(call.callID)
          writers.delete(call.callID)
        }
        // What the call may have written on the host is checked whatever its output (see `afterHost`).
        const host = afterHost(call)
        if (typeof output !== "string") {
          laterNotes.push(...host)
          return output
        }
        const { state, d } = current()
        if (state.status === "none") return host.length ? [output, ...host].filter(Boolean).join("\n\n") : output
        const source = sourceOf(call)
        let text = output
        const notes: string[] = [...startNotes.splice(0), ...laterNotes.splice(0), ...early, ...host]
        const isShell = call.tool === "bash" || call.tool === "batch"
        if (isShell && source === "builtin-tool") notes.push(...settleShell(d, call))
        notes.push(...hostRepairs(d, call))
        // git's own message for a read-only config ("could not lock config file …: Device or resource busy") does not
        // say why: the policy keeps it read-only.
        if (isShell && !d.allowGitConfig && /could not (?:lock|write) config file/.test(output))
          notes.push(
            `[security] git's configuration is read-only in the sandbox: its settings can run programs outside it when you next use git (hooks, core.fsmonitor, aliases, pagers). To change it, ask the user, or set "sandbox": { "allowGitConfig": true } in the root .opencode-security.json.`,
          )
        // Outside the allow-list everything is read-only: the error ("Read-only file system") does not say why.
        if (isShell && source === "builtin-tool" && sandbox?.plan() && /Read-only file system|EROFS/.test(output)) {
          const open = (sandbox.plan()?.mounts ?? [])
            .filter((m) => (m.kind === "write" || m.kind === "open") && m.source === m.path)
            .map((m) => SecurityAccess.display(root, m.path))
          notes.push(
            `[security] The sandbox is read-only outside the folders commands may write (${open.join(", ")}): elsewhere a command could leave files that programs on the host run later (shell startup files, session services, interpreters and package managers in the home). The host's caches (~/.cache, ~/.npm, ~/.bun, …) are read-only too, since the host runs what they hold: commands have caches of their own, named by XDG_CACHE_HOME, npm_config_cache, BUN_INSTALL_CACHE_DIR, GOCACHE and the like inside the sandbox (a tool that ignores them and writes the home's cache fails). A tool that needs another folder fails with "Read-only file system": ask the user to run the command outside OpenCode, or to add the folder to "sandbox": { "writable": [...] } in the root .opencode-security.json.`,
          )
        }
        if (OpenCode.WRITE_TOOLS.has(call.tool) && source === "builtin-tool") {
          if (call.callID && snapshots.has(call.callID))
            notes.push(...repair(d, `snapshot:${call.callID}`, (d) => verifySnapshots(d, call)))
          // Also when it names no `.git`: a file it wrote may be another name of a repository's config (a hard link).
          notes.push(...repair(d, "repositories", (d) => newRepositories(d, call)))
          const a = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>
          const named = [a.filePath, a.path, a.patchText].filter((v): v is string => typeof v === "string")
          if (named.some((n) => n.includes(".opencode-security.json"))) {
            const found = named
              .flatMap((n) => n.split(/\s+/))
              .filter((n) => n.endsWith(".opencode-security.json"))
              .map((n) => SecurityPath.expand(n, directory, home))
            watcher.add(found.filter((f) => fs.existsSync(f)))
          }
        }
        if (!text) return notes.length ? notes.join("\n") : text
        if (
          source === "mcp" &&
          state.status === "valid" &&
          SecurityMcp.policyOfTool(state, call.tool, mcpServers, call.args)?.policy === "trusted"
        )
          return text
        const config = d.config
        // Read and grep output had their segments redacted by line number: the scanner must not find the markers
        // again and redact around them (it cannot tell the lines' numbers apart from their text).
        // Output whose structure was recognised (read's numbered lines, grep's file and line blocks, git patches) had
        // its segments redacted by line: the scanner must not find the markers again and redact around them (it
        // cannot tell the lines' numbers apart from their text). Anything else is scanned for markers as text.
        let byLine = false
        if (source === "builtin-tool" && config) ({ text, byLine } = structured(d, config, call, text))
        // OpenCode 1.18's read lists a folder's entries: protected names go like in any listing.
        const listing = call.tool === "read" && text.includes("<type>directory</type>")
        const mode = listing ? "line" : OUTPUT_MODE(call.tool, source)
        if (d.tool.markers.length) learnSegments(d, mentionedFiles(text))
        const scanner = byLine ? { ...d.tool, markers: [] } : d.tool
        let ranges = LLMScanner.scanForProtectedContent(text, scanner, { paths: mode, base: directory })
        if (ranges.length) {
          if (call.tool === "grep") ranges = SecurityTools.widenGrepBlocks(text, ranges)
          text = SecurityRedact.redactContent(
            text,
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
        }
        return notes.length ? `${text}\n\n${notes.join("\n")}` : text
      },
      afterValue(call, value) {
        const { state, d } = current()
        if (state.status === "none") return 0
        let changed = 0
        if (call.tool === "read" && value && typeof value === "object" && d.readMarkers.length) {
          // A read's metadata keeps raw lines of the file (`preview`, and in 1.18 `display.text` from `lineStart`):
          // protected lines go by number, like in the output.
          const a = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>
          const meta = value as Record<string, unknown>
          const ranges =
            typeof a.filePath === "string" ? segmentLines(d, SecurityTools.toolPath(a.filePath, directory), "any") : []
          const first = typeof a.offset === "number" && a.offset > 0 ? a.offset : 1
          if (ranges.length && typeof meta.preview === "string") {
            meta.preview = SecurityOutput.rawLines(meta.preview, first, ranges)
            changed++
          }
          const display = meta.display as Record<string, unknown> | undefined
          if (ranges.length && display && typeof display.text === "string") {
            const start = typeof display.lineStart === "number" ? display.lineStart : first
            display.text = SecurityOutput.rawLines(display.text, start, ranges)
            changed++
          }
        }
        return changed + SecurityHook.redactDeep(value, (text) => guard.after({ ...call, callID: undefined }, text))
      },
      segments() {
        const { state, d } = current()
        if (state.status === "none") return { read: [], write: [] }
        return { read: d.readMarkers, write: d.writeMarkers }
      },
      definition(_toolID, description) {
        const { state } = current()
        if (state.status === "none" || !description) return description
        return guard.scanAndRedact(description, { scope: "llm", paths: "token" }).text
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
      withoutInstructions(text) {
        const { state, d } = current()
        if (state.status !== "valid" || !d.config || !text.includes("Instructions from: ")) return text
        const config = d.config
        const out = SecurityOutput.instructions(text, (p) => instructionFile(d, config, p))
        auditFiltered(d, out, { source: "plugin-hook" })
        return out.text
      },
      redactRead(file, text) {
        const { state, d } = current()
        if (state.status !== "valid" || !d.config) return text
        const config = d.config
        const lines = segmentLines(d, SecurityTools.toolPath(file, directory), "any")
        // Text with protected lines whose lines carry no numbers cannot be filtered by them: it goes (fail closed).
        const reminder = text.indexOf("\n<system-reminder>")
        const body = reminder >= 0 ? text.slice(0, reminder) : text
        if (lines.length && !SecurityOutput.numbered(body) && body.trim()) {
          audit(d, { action: "redact", source: "plugin-hook", kinds: ["segment"], count: 1 })
          const tail = reminder >= 0 ? text.slice(reminder) : ""
          return (
            SecurityRedact.marker(SecurityOutput.SEGMENT_LABEL) +
            SecurityOutput.instructions(tail, (p) => instructionFile(d, config, p)).text
          )
        }
        const out = SecurityOutput.read(text, {
          lines,
          instruction: (p) => instructionFile(d, config, p),
        })
        auditFiltered(d, out, { source: "plugin-hook" })
        return out.text
      },
      hidesContent(target, ops) {
        const { state, d } = current()
        if (state.status !== "valid" || !d.config) return false
        const abs = SecurityPath.expand(target, directory, home)
        return ops.some((op) => !SecurityDecide.access(facts(d, d.config!), abs, op).allowed)
      },
      attachedFile(name, ops) {
        const { state, d } = current()
        if (state.status !== "valid" || !d.config || !name) return undefined
        const abs = SecurityPath.expand(name, directory, home)
        if (ops.some((op) => !SecurityDecide.access(facts(d, d.config!), abs, op).allowed)) return abs
        if (/[\\/]/.test(name) || name === "." || name === "..") return undefined
        const base = name.normalize("NFC")
        for (const [file, denied] of index.files)
          if (path.basename(file).normalize("NFC") === base && ops.some((op) => denied.has(op))) return file
        return undefined
      },
      isProtectedText(text) {
        const { state } = current()
        if (state.status !== "valid" || !index.llmWhole.size) return false
        const digest = SecurityInventory.wholeDigest(text)
        return digest !== undefined && index.llmWhole.has(digest)
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
          (text) => guard.scanAndRedact(guard.withoutInstructions(text), { scope: "llm", paths: "token" }).text,
          run,
        )
      },
      wrapTool(id, def, plugin) {
        return {
          ...def,
          execute: async (args: unknown, context: unknown) => {
            // A call id of its own: what the tool writes on the host is checked after it as for any writer (`afterHost`).
            const call: Call = { tool: id, args, source: "plugin-tool", plugin, callID: `wrapped_${++wrappedCalls}` }
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
      setShell(next) {
        shell = next
      },
      protectHost(entries) {
        const modules = entries.map(SecurityPythonPath.folderOf).filter((f): f is string => f !== undefined)
        const paths = entries.filter((p) => SecurityPythonPath.folderOf(p) === undefined)
        const folders = [...new Set(modules.map((p) => path.resolve(p)))].filter((p) => !hostModules.includes(p))
        if (folders.length) {
          hostModules.push(...folders)
          watcher.reload()
        }
        const named = paths.map((p) => path.resolve(p) + (p.endsWith(path.sep) && p !== path.sep ? path.sep : ""))
        // Absent ones are moved aside when a command creates them (`sweep`): OpenCode loads or starts what they name.
        for (const p of named) hostSwept.add(p.endsWith(path.sep) ? p.slice(0, -1) : p)
        // What JavaScript and TypeScript entries import is followed; other languages' imports are not (Limits).
        watchImports(named.filter((p) => /\.[cm]?[jt]sx?$/.test(p)))
        const fresh = withTargets(named).filter((p) => !protect.includes(p))
        if (!fresh.length) return
        noteLinks(fresh)
        // The watcher reads the same list on every load.
        protect.push(...fresh)
        watcher.reload()
      },
      watchPackageBins(entries) {
        for (const { file, bins } of entries) {
          const at = path.resolve(file)
          const known = packageBins.get(at)
          const text = known ? known.text : readText(at)
          const present = text === undefined ? [] : SecurityMcp.declaredBins(text, bins)
          if (known) {
            // A name new to the list: what the file declares of it now is the user's.
            for (const b of bins) if (!known.bins.has(b) && present.includes(b)) known.allowed.add(b)
            for (const b of bins) known.bins.add(b)
            continue
          }
          const left = leftWatched?.bins.get(at)
          const added =
            left && left.stamp !== stampOf(at) && allowedNow(watcher.state())
              ? present.filter((b) => left.bins.includes(b) && !left.allowed.includes(b))
              : []
          if (added.length && SecurityPath.movable(at, ownFolders)) {
            // A session that ended during a command recorded this file without these bins (see `recoverTemplates`).
            const aside = asideOf(at)
            try {
              fs.renameSync(at, aside)
              if (left!.text !== undefined) SecurityPath.replace(at, left!.text)
              const moved = `${left!.text !== undefined ? "its previous content was put back and this version" : "the file"} was moved to ${SecurityAccess.display(root, aside)}`
              const note = `[security] ${SecurityAccess.display(root, at)} gained a bin named ${added.join(", ")} while a shell command of an earlier OpenCode session ran, which ended before that command did (OpenCode quit, crashed or was killed), so no session checked it. OpenCode starts a local MCP server with npx ${added[0]}, outside the sandbox, and npm would run this bin, so ${moved}. If you added it yourself, put it back: it is kept from now on.`
              log.warn(note)
              startNotes.push(note)
              startAudit.push({
                path: at,
                reason:
                  "a package.json gained a bin a local MCP server runs during a command of a session that ended before the command did; moved aside at start",
              })
              const kept = left!.text
              packageBins.set(at, {
                bins: new Set(bins),
                allowed: new Set(kept === undefined ? [] : SecurityMcp.declaredBins(kept, bins)),
                text: kept,
                stamp: stampOf(at),
              })
              continue
            } catch (error) {
              log.error(`could not put back ${at}: ${error instanceof Error ? error.message : String(error)}`)
            }
          }
          packageBins.set(at, { bins: new Set(bins), allowed: new Set(present), text, stamp: stampOf(at) })
        }
      },
      recoveredDefinitions() {
        return [...recoveredDefs]
      },
      definitionFiles(kind, name) {
        const out: string[] = []
        const roots = templateRoots.filter((r) => r.kind === kind)
        for (const [file] of SecurityTemplates.list(roots).kinds) {
          const under = roots.find((r) => SecurityPath.isInside(file, r.folder))
          if (!under) continue
          const relative = path.relative(under.folder, kind === "skill" ? path.dirname(file) : file)
          const own = relative.replace(/\.md$/, "").split(path.sep).join("/")
          if (own === name || (kind === "skill" && path.basename(own) === name)) out.push(file)
        }
        return out
      },
      watchTemplates(roots) {
        const fresh = roots
          .map((r) => ({ ...r, folder: path.resolve(r.folder) }))
          .filter((r) => !templateRoots.some((t) => t.folder === r.folder && t.kind === r.kind))
        if (!fresh.length) return
        const allow = allowedNow(watcher.state())
        if (allow) recoverTemplates(fresh, allow)
        baseline(fresh)
        templateRoots.push(...fresh)
      },
      get audit() {
        return current().d.audit
      },
      close() {
        closed = true
        if (repairTimer) clearInterval(repairTimer)
        repairTimer = undefined
        // Repairs still waiting for commands to end run now if none runs (else the next session's start takes over).
        if (deferred.size && quiet())
          try {
            for (const note of flushRepairs(current().d, false)) log.warn(note)
          } catch (error) {
            log.error(`[security] ${error instanceof Error ? error.message : String(error)}`)
          }
        disarmHeld()
        // Its project's commands have ended with it: other projects' commands no longer wait for them.
        for (const key of admittedHere) Sandbox.release(key)
        admittedHere.clear()
        SecurityRipgrep.set(ripgrepOwner, [])
        sandbox?.close()
      },
    }

    /**
     * The protected line ranges of a file (its read-denying segments), read from disk now, numbered as the tool that
     * shows them breaks lines: `any` for OpenCode's read (a lone `\r` ends a line there), `lf` for grep (ripgrep).
     * Whatever the file's size: one too large to read whole is protected whole if it holds a start marker at all.
     */
    const segmentLines = (d: Derived, file: string, breaks: SecuritySegments.Breaks): SecurityOutput.Lines[] => {
      if (!d.readMarkers.length) return []
      return SecurityOutput.fileRanges(SecurityPath.expand(file, directory, home), d.readMarkers, breaks)
    }

    /**
     * Git work-tree commands inside the sandbox, where files with read-protected segments are redacted copies and
     * write-protected ones are read-only: a change the command stages anyway (add, commit -a) is staged here from the
     * real file first, so the copy matches the index and git sees nothing to re-read; a commit naming such a file
     * (git would take its content from the copy) and a stash of one with unrecorded changes (it would store the copy,
     * then fail to reset it) are refused with what to do instead.
     */
    const gitWork = (
      runs: SecurityShell.GitRun[],
      masked: string[],
      fixed: string[],
    ): { denial?: SecurityDecide.Denial; staged?: boolean } => {
      const show = (files: string[]) => files.map((f) => SecurityAccess.display(root, f)).join(", ")
      const named = masked.filter((f) => runs.some((g) => g.sub === "commit" && gitNames(g, f)))
      if (named.length)
        return {
          denial: {
            reason: `git commit with paths takes ${show(named)} from the sandbox's redacted copy (it holds a segment the policy keeps from being read); stage it with git add, then commit without paths`,
            path: named[0],
            op: "read",
          },
        }
      // A change within the file system's time granularity of the index makes git re-read a file to be sure: wait it
      // out, so no redacted copy is ever compared with the real text.
      const newest = Math.max(0, ...fixed.map((f) => mtimeOf(f)))
      const wait = newest + 2_000 - Date.now()
      if (wait > 0) Bun.sleepSync(Math.min(wait, 2_000))
      const unrecorded = SecurityHistory.unrecorded(directory, fixed)
      const stashing = unrecorded.filter((f) => runs.some((g) => g.sub === "stash" && gitCovers(g, f)))
      if (stashing.length)
        return {
          denial: {
            reason: `${show(stashing)} has changes git has not recorded and cannot be stashed inside the sandbox (it is read-only there, or shown with a protected segment redacted); commit it first (git add names it), or stash only other files (git stash push -- <paths>)`,
            path: stashing[0],
            op: "write",
          },
        }
      const stage = unrecorded.filter(
        (f) => masked.includes(f) && runs.some((g) => (g.sub === "add" || g.sub === "commit") && gitCovers(g, f)),
      )
      if (!stage.length) return {}
      if (!SecurityHistory.stage(directory, stage))
        return {
          denial: { reason: `${show(stage)} could not be staged before the command`, path: stage[0], op: "read" },
        }
      return { staged: true }
    }

    /** A file named in git patch output (relative to a repository; the project's own is assumed), when it holds segments. */
    const patchFile = (d: Derived, rel: string): SecurityOutput.PatchFile | undefined => {
      const abs = path.resolve(root, rel)
      const ops = index.segmented.get(abs)
      if (!ops || !(ops.has("read") || ops.has("llm"))) return undefined
      try {
        const text = fs.readFileSync(abs, "utf8")
        return {
          lines: new Set(
            SecuritySegments.lines(text, d.readMarkers)
              .map((l) => l.trim())
              .filter(Boolean),
          ),
          ranges: SecurityOutput.lineRanges(text, d.readMarkers),
        }
      } catch {
        return undefined
      }
    }

    /**
     * Whether an instruction block (`Instructions from: <path>`) OpenCode put in model-bound text must go: its file is
     * protected from reading, or the path as written names no file. OpenCode only reads files that exist, so a path
     * that does not is one the header cannot show, such as a folder whose name holds a newline (`x\ny/AGENTS.md` read
     * as `x`). URLs (remote instructions) are left to the scanner.
     */
    const hiddenInstruction = (d: Derived, config: SecurityConfig.Loaded, p: string) => {
      if (/^https?:\/\//i.test(p)) return false
      const abs = SecurityPath.expand(p, directory, home)
      if (!fs.existsSync(abs)) return true
      return SecurityDecide.READ_OPS.some((op) => !SecurityDecide.access(facts(d, config), abs, op).allowed)
    }

    /**
     * An instruction block's file (`SecurityOutput.InstructionFile`): hidden whole (`hiddenInstruction`); else its
     * current text, links followed as OpenCode follows them, with the `\n`-numbered lines of segments the role may not
     * read (`read` or `llm`), so the block is kept only where it starts with that text. A header names its path up to
     * the line's end, and a folder named with a line break would otherwise lend its block to the path before the break
     * (`src` for `src\nq/AGENTS.md`, red team GD1): a path that is no regular file, one that cannot be read now, or one
     * too large or not text (`fileRanges` protects it whole) goes whole. Remote instructions (URLs) are kept.
     */
    const instructionFile = (d: Derived, config: SecurityConfig.Loaded, p: string): SecurityOutput.InstructionFile => {
      if (hiddenInstruction(d, config, p)) return true
      if (/^https?:\/\//i.test(p)) return false
      const abs = SecurityPath.expand(p, directory, home)
      try {
        if (!fs.statSync(abs).isFile()) return true
        const lines = d.readMarkers.length ? SecurityOutput.fileRanges(abs, d.readMarkers, "lf") : []
        if (lines.some((r) => r.to === Infinity)) return true
        return { text: fs.readFileSync(abs, "utf8"), lines }
      } catch {
        return true
      }
    }

    /**
     * Audits what filtering a read's text or its instruction blocks took out: segment lines redacted, instruction
     * blocks removed. Nothing is written when nothing went.
     */
    const auditFiltered = (
      d: Derived,
      out: { redacted: number; removed: readonly string[] },
      entry: Pick<SecurityAudit.Event, "source" | "tool" | "callID">,
    ) => {
      if (!out.redacted && !out.removed.length) return
      audit(d, {
        action: "redact",
        ...entry,
        kinds: [out.redacted ? "segment" : "", out.removed.length ? "instructions" : ""].filter(Boolean),
        count: out.redacted + out.removed.length,
      })
    }

    /** Structure-aware filtering of built-in tool output: read by line number, grep by file and line. */
    const structured = (
      d: Derived,
      config: SecurityConfig.Loaded,
      call: Call,
      text: string,
    ): { text: string; byLine: boolean } => {
      const a = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>
      const hiddenFile = (p: string) => hiddenInstruction(d, config, p)
      const linesOf = (p: string) => segmentLines(d, p, "lf")
      if (call.tool === "read" && typeof a.filePath === "string") {
        const out = SecurityOutput.read(text, {
          lines: segmentLines(d, SecurityTools.toolPath(a.filePath, directory), "any"),
          instruction: (p) => instructionFile(d, config, p),
        })
        auditFiltered(d, out, { source: "builtin-tool", tool: call.tool, callID: call.callID })
        return { text: out.text, byLine: SecurityOutput.numbered(text) }
      }
      if ((call.tool === "bash" || call.tool === "batch") && text.includes("diff --git ") && d.readMarkers.length) {
        const out = SecurityOutput.patches(text, (rel) => patchFile(d, rel), d.readMarkers)
        if (out.redacted)
          audit(d, {
            action: "redact",
            source: "builtin-tool",
            tool: call.tool,
            callID: call.callID,
            kinds: ["segment"],
            count: out.redacted,
          })
        return { text: out.text, byLine: true }
      }
      if (call.tool === "grep") {
        const out = SecurityOutput.grep(text, { hidden: hiddenFile, lines: linesOf })
        if (out.removed || out.redacted)
          audit(d, {
            action: "redact",
            source: "builtin-tool",
            tool: call.tool,
            callID: call.callID,
            kinds: ["search"],
            count: out.removed + out.redacted,
          })
        return { text: out.text, byLine: /^Found (?:at least )?\d+ match/.test(text) }
      }
      return { text, byLine: false }
    }

    current()
    scheduleIndex(true)
    return guard
  }

  /** A short digest of the protected paths and their operations (changes when any is added, removed or changed). */
  function protectedDigest(index: SecurityInventory.Index): string {
    let hash = 0
    for (const [file, ops] of index.files) {
      const key = `${file}\0${[...ops].join(",")}`
      for (let i = 0; i < key.length; i++) hash = (Math.imul(hash, 31) + key.charCodeAt(i)) | 0
    }
    return hash.toString(36)
  }

  /** True when any string of `value` has something to redact (a scan without copying). */
  function needsRedaction(value: unknown, protectedIn: (text: string) => boolean, depth = 0): boolean {
    if (typeof value === "string") return protectedIn(value)
    if (!value || typeof value !== "object" || depth > 32) return false
    for (const item of Array.isArray(value) ? value : Object.values(value))
      if (needsRedaction(item, protectedIn, depth + 1)) return true
    return false
  }

  /** A `grep` include glob (ripgrep's `--glob`: no `/` matches the name at any depth) against a relative path. */
  function includeMatches(glob: string, rel: string): boolean {
    const target = glob.includes("/") ? rel : path.basename(rel)
    const expanded = braces(glob)
    return expanded.some((g) => wildcard(g.includes("/") ? g.replace(/^\//, "") : g, target))
  }

  function braces(glob: string, depth = 0): string[] {
    const open = glob.indexOf("{")
    if (open < 0 || depth > 4) return [glob]
    let level = 0
    for (let i = open; i < glob.length; i++) {
      if (glob[i] === "{") level++
      else if (glob[i] === "}" && --level === 0) {
        const inner = glob.slice(open + 1, i)
        const parts: string[] = []
        let start = 0
        let nest = 0
        for (let j = 0; j < inner.length; j++) {
          if (inner[j] === "{") nest++
          else if (inner[j] === "}") nest--
          else if (inner[j] === "," && nest === 0) {
            parts.push(inner.slice(start, j))
            start = j + 1
          }
        }
        parts.push(inner.slice(start))
        return parts.slice(0, 64).flatMap((p) => braces(glob.slice(0, open) + p + glob.slice(i + 1), depth + 1))
      }
    }
    return [glob]
  }

  /** `*` (not across `/`), `**` (across), `?`, `[…]`: dynamic programming, linear in pattern × text. */
  function wildcard(glob: string, text: string): boolean {
    let states = new Set<number>([0])
    const close = (set: Set<number>) => {
      for (const s of [...set])
        if (glob[s] === "*") {
          const double = glob[s + 1] === "*"
          set.add(double ? s + 2 : s + 1)
          if (double && glob[s + 2] === "/") set.add(s + 3)
        }
      return set
    }
    states = close(states)
    for (const ch of text) {
      const next = new Set<number>()
      for (const s of states) {
        const g = glob[s]
        if (g === undefined) continue
        if (g === "*") {
          const double = glob[s + 1] === "*"
          if (double || ch !== "/") next.add(s)
          continue
        }
        if (g === "?") {
          if (ch !== "/") next.add(s + 1)
          continue
        }
        if (g === "[") {
          const end = glob.indexOf("]", s + 2)
          if (end > 0) {
            const body = glob.slice(s + 1, end)
            const negate = body[0] === "!" || body[0] === "^"
            const set = negate ? body.slice(1) : body
            let hit = false
            for (let i = 0; i < set.length; i++) {
              if (set[i + 1] === "-" && i + 2 < set.length) {
                if (ch >= set[i] && ch <= set[i + 2]) hit = true
                i += 2
              } else if (set[i] === ch) hit = true
            }
            if (hit !== negate) next.add(end + 1)
            continue
          }
        }
        if (g === "\\" && glob[s + 1] === ch) {
          next.add(s + 2)
          continue
        }
        if (g === ch) next.add(s + 1)
      }
      states = close(next)
      if (!states.size) return false
    }
    return states.has(glob.length)
  }

  const GITDIR = Buffer.from("gitdir: ")
  /**
   * The folder a `.git` file sends git to, read as git reads it (`read_gitfile_gently`): the file starts with the
   * 8 bytes `gitdir: `, and everything after them, raw, with only the line ends (`\n`, `\r`) at its end cut, names the
   * folder, relative to the `.git` file's own folder. `named` is that path as written; `real` where it leads, its links
   * and `..` resolved as git resolves them (`SecurityPath.physical`), undefined when it does not exist. Undefined as a
   * whole when the layer cannot name the folder exactly as git would: no `gitdir: ` prefix, an empty path, bytes
   * that are not UTF-8, a NUL or a line break inside it (git reads up to the NUL; a line break is kept in the name),
   * a file over git's 1 MiB limit, or one that cannot be read.
   */
  function gitFileTarget(file: string): { named: string; real?: string } | undefined {
    let bytes: Buffer
    try {
      if (fs.statSync(file).size > 1 << 20) return undefined
      bytes = fs.readFileSync(file)
    } catch {
      return undefined
    }
    if (bytes.length < GITDIR.length || !bytes.subarray(0, GITDIR.length).equals(GITDIR)) return undefined
    let end = bytes.length
    while (end > GITDIR.length && (bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d)) end--
    const raw = bytes.subarray(GITDIR.length, end)
    if (!raw.length || raw.includes(0) || raw.includes(0x0a) || raw.includes(0x0d)) return undefined
    const text = raw.toString("utf8")
    if (!Buffer.from(text, "utf8").equals(raw)) return undefined
    // git joins the two as strings (`<folder>/<path>`) and resolves the result name by name.
    const joined = text.startsWith("/") ? text : `${path.dirname(file)}/${text}`
    return { named: path.resolve(joined), real: SecurityPath.physical(joined) }
  }

  /**
   * Where git itself says a `.git` file sends it (`git --git-dir=<file> rev-parse --absolute-git-dir`), as bytes:
   * "fails" when git does not take it for a repository (it then runs nothing there), undefined when git cannot be
   * run. The repository's own settings cannot run a program here: `rev-parse` reads no index (no `core.fsmonitor`,
   * which is also set off), runs no hook, no pager, no alias; the system configuration and the environment's
   * `GIT_*` variables are left out, optional locks are off.
   */
  function gitSaysGitDir(file: string, env: Record<string, string | undefined>): Buffer | "fails" | undefined {
    const clean: Record<string, string> = {}
    for (const [k, v] of Object.entries(env)) if (v !== undefined && !k.startsWith("GIT_")) clean[k] = v
    Object.assign(clean, { GIT_CONFIG_NOSYSTEM: "1", GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0" })
    const git = SecuritySearchPath.which("git", env)
    if (!git) return undefined
    const result = SyncProcess.run(
      git,
      [`--git-dir=${file}`, "-c", "core.fsmonitor=false", "rev-parse", "--absolute-git-dir"],
      { cwd: path.dirname(file), env: clean, timeout: 10_000 },
    )
    if (result.error) return undefined
    if (result.status !== 0) return "fails"
    let out = result.stdout
    while (out.length && (out[out.length - 1] === 0x0a || out[out.length - 1] === 0x0d)) out = out.subarray(0, -1)
    return out
  }

  /** The paths and, for those a link leads elsewhere, where they lead (folders keep their trailing separator). */
  function withTargets(list: string[]): string[] {
    const out = new Set(list)
    for (const p of list) {
      const folder = p.endsWith(path.sep)
      const bare = folder ? p.slice(0, -1) : p
      const target = leadsElsewhere(bare) ? fs.realpathSync.native(bare) : danglingTarget(bare)
      if (target) out.add(folder ? target + path.sep : target)
    }
    return [...out]
  }

  /**
   * Where an absent path would be created (a link that leads nowhere, a leftover stow link; or a path below a linked
   * folder, `~/.config/git/config` with `~/.config` → `dotfiles/config`): whoever creates that path decides what the
   * protected path holds, so it is protected too.
   */
  function danglingTarget(p: string): string | undefined {
    try {
      if (fs.existsSync(p)) return undefined
      const lexical = path.resolve(p)
      const resolved = SecurityPath.resolve(lexical)
      return resolved.loop || resolved.real === lexical ? undefined : resolved.real
    } catch {
      return undefined
    }
  }

  /** The real path of an existing path, else the path as given. */
  function realOrAsIs(p: string): string {
    try {
      return fs.realpathSync.native(p)
    } catch {
      return p
    }
  }

  function isDir(p: string): boolean {
    try {
      return fs.statSync(p).isDirectory()
    } catch {
      return false
    }
  }

  function isLink(p: string): boolean {
    try {
      return fs.lstatSync(p).isSymbolicLink()
    } catch {
      return false
    }
  }

  /** The path exists and is a link or lies below one (its real path differs). */
  function leadsElsewhere(p: string): boolean {
    try {
      return fs.realpathSync.native(p) !== path.resolve(p)
    } catch {
      return false
    }
  }

  function kindOf(p: string): "dir" | "file" | undefined {
    try {
      return fs.lstatSync(p).isDirectory() ? "dir" : "file"
    } catch {
      return undefined
    }
  }

  function writable(dir: string) {
    try {
      fs.accessSync(dir, fs.constants.W_OK)
      return true
    } catch {
      return false
    }
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
