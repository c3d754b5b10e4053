import crypto from "crypto"
import fs from "fs"
import os from "os"
import path from "path"
import { SandboxDetect } from "./detect"
import { SandboxNetwork } from "./network"
import { SandboxPlan } from "./plan"

/**
 * Runs OpenCode's shell commands inside the kernel sandbox without changing the command OpenCode sees.
 *
 * OpenCode runs a shell command as `bash -c <command>` (or zsh) with an environment plugins may extend (the
 * `shell.env` hook, called with the tool call's id just before the process starts). The sandbox adds `BASH_ENV` (for
 * zsh, `ZDOTDIR`) pointing at an entry script of its own: the shell reads it before the command, and it replaces the
 * shell with bubblewrap running the same shell and the same command inside the sandbox. So permissions, titles and
 * the stored tool call all keep the command as the model wrote it, and no quoting of the command is involved. Before
 * it moves into the sandbox the entry script leaves a marker named after the call; the guard checks it afterwards,
 * so a command that ran outside the sandbox (a shell that ignored the hook) is noticed.
 *
 * The sandbox's own files (entry scripts, the argument file, placeholders, redacted copies, markers) live in a fresh
 * private folder (mode 0700) per process, hidden (an empty tmpfs) inside the sandbox. While a sandbox exists, git run
 * by the host process takes no optional locks (`quietHostGit`), so OpenCode's own snapshots leave no lock file
 * appearing and vanishing in the tree a command walks.
 *
 * @example
 * const sandbox = Sandbox.create({ root: "/repo" })
 * sandbox.prepare({ hide: [{ path: "/repo/.env", dir: false }], lock: [], mask: [], pin: ["/repo"] })
 * const env = sandbox.env("call_1", "/bin/bash") // merged into the shell's environment by the shell.env hook
 * // … OpenCode runs the command …
 * sandbox.entered("call_1") // true: the command ran inside
 */
export namespace Sandbox {
  /** Environment variables the sandbox sets on the shell (and removes again inside). */
  export const ENV = {
    call: "OPENCODE_BUILTINS_CALL",
    zdotdir: "OPENCODE_BUILTINS_ZDOTDIR",
    home: "OPENCODE_BUILTINS_HOME",
    inside: "OPENCODE_BUILTINS_SANDBOX",
  } as const

  /** Set on the host process while the sandbox is in use, removed again inside it (see `quietHostGit`). */
  export const GIT_LOCKS = "GIT_OPTIONAL_LOCKS"

  /** Shells whose startup the sandbox can take over: bash (`BASH_ENV`) and zsh (`ZDOTDIR/.zshenv`). */
  export const SHELLS = ["bash", "zsh"] as const

  /** Variables never passed into the sandbox (credentials of the host OpenCode process). */
  export const UNSET = ["OPENCODE_SERVER_PASSWORD", "OPENCODE_SERVER_USERNAME"]

  export type Protections = {
    hide: SandboxPlan.Entry[]
    lock: SandboxPlan.Entry[]
    /**
     * Files shown redacted: the path, the text shown in its place and the file's modification time, which the copy
     * keeps (with the same size, git inside the sandbox takes the copy for the unchanged file).
     */
    mask: { path: string; text: string | Uint8Array; mtimeMs?: number }[]
    pin: string[]
    /** Folders inside locked folders that stay writable (OpenCode's plans and worktrees in its data folder). */
    open?: string[]
    /**
     * Folders replaced by an empty folder of the command's own (the user's runtime folder, `SecurityGuard.runtimeFolders`);
     * the other protections and writable folders inside them are mounted again.
     */
    empty?: string[]
    /** The folders commands may write (`SandboxWritable`); everything else is read-only. */
    write?: string[]
    /** Folders inside a writable one that are read-only again (the home inside `/tmp`). */
    readOnly?: string[]
    /** The commands' private caches bound over the host's cache folders (`SandboxWritable.prepare`). */
    over?: { path: string; source: string }[]
    /** Variables set inside the sandbox (the private caches' folders, `SandboxWritable.prepare`). */
    env?: Record<string, string>
    /**
     * Files in the private folder that commands may read (read-only at the same path): ripgrep's exclusion file, so
     * `rg` run by a command skips protected paths instead of failing on them.
     */
    expose?: string[]
  }

  export type Options = {
    /**
     * The private folder (mode 0700) every sandbox state folder of this user is made in, hidden as a whole inside
     * every sandbox (default: `opencode-builtins-<uid>` in the OS temporary folder).
     */
    base?: string
    env?: Record<string, string | undefined>
    /**
     * The host process's environment, which OpenCode's own git commands inherit (default `process.env`; see
     * `quietHostGit`).
     */
    host?: Record<string, string | undefined>
    /** The OpenCode servers a command could reach (default `SandboxNetwork.servers`, read before every command). */
    servers?: () => SandboxNetwork.Listener[]
  }

  /**
   * The user's private folder for sandbox state: created with mode 0700, refused when it exists but is a link, is
   * not a folder, or belongs to someone else (another user could otherwise place files in it).
   *
   * @example
   * Sandbox.privateFolder() // "/tmp/opencode-builtins-1000"
   */
  export function privateFolder(base = path.join(os.tmpdir(), `opencode-builtins-${process.getuid?.() ?? "user"}`)) {
    try {
      fs.mkdirSync(base, { mode: 0o700 })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const stat = fs.lstatSync(base)
    if (!stat.isDirectory() || (process.getuid && stat.uid !== process.getuid()))
      throw new Error(`${base} is not a private folder of this user; remove it or set another temporary folder`)
    if ((stat.mode & 0o077) !== 0) fs.chmodSync(base, 0o700)
    return fs.realpathSync(base)
  }

  const quieted = new WeakSet<object>()

  /**
   * Makes git run by the host process take no optional locks (`GIT_OPTIONAL_LOCKS=0`, unless the user set it), and
   * returns the variables to remove again inside the sandbox, so commands keep the user's environment.
   *
   * OpenCode's snapshots run `git diff-files` over the project, and git checks a nested repository by running
   * `git status` in it, which refreshes that repository's index through `.git/index.lock`: a file that appears and
   * is gone within milliseconds, several times a step. A command walking the project meanwhile (`grep -r`, `find`) lists
   * it and then finds it missing ("No such file or directory"), so two commands asking the same of the same files
   * answer differently for reasons that have nothing to do with what they asked (a right and a wrong guess of a
   * protected value would look like an answer). Only optional work is skipped: git reads the index as before and
   * just does not write refreshed stat data back.
   *
   * @example
   * const env: Record<string, string | undefined> = {}
   * Sandbox.quietHostGit(env) // ["GIT_OPTIONAL_LOCKS"]; env.GIT_OPTIONAL_LOCKS === "0"
   */
  export function quietHostGit(env: Record<string, string | undefined> = process.env): string[] {
    if (env[GIT_LOCKS] === undefined) {
      env[GIT_LOCKS] = "0"
      quieted.add(env)
    }
    return quieted.has(env) ? [GIT_LOCKS] : []
  }

  export type Instance = {
    /** The private state folder (write-protected for tools by the guard, hidden inside the sandbox). */
    readonly dir: string
    /** Whether the sandbox can start here (probed once per process). */
    probe(): SandboxDetect.Result
    /** Writes the argument file for these protections when they differ from the current ones. */
    prepare(protections: Protections): SandboxPlan.Plan
    /**
     * The OpenCode servers the last `prepare` found listening: while there is one, commands run in a network
     * namespace of their own (no network), since through its HTTP API a command could act outside the sandbox.
     */
    servers(): SandboxNetwork.Listener[]
    /** The plan in force (undefined before the first `prepare`). */
    plan(): SandboxPlan.Plan | undefined
    /**
     * The variables the `shell.env` hook adds for one command: the entry script for bash and zsh, and the call id
     * for the marker. `current` is the environment the shell would get (its `ZDOTDIR` is restored inside).
     */
    env(callID: string, current?: Record<string, string | undefined>): Record<string, string>
    /** True when the call's shell moved into the sandbox; the marker is removed. */
    entered(callID: string): boolean
    /**
     * The launcher a command template's shell line is handed to (`bash <launcher> <line>`, see `templateEntry`),
     * written afresh in the private folder; it runs the line inside the sandbox with the plan in force when it runs.
     */
    template(): string
    /** True when a template's shell line went through the launcher since the last call; its markers are removed. */
    templatesRan(): boolean
    close(): void
  }

  /** Process ids of this process's read-only helper sandboxes (language servers), whichever guard started them. */
  const helpers = new Map<number, string | undefined>()

  /** Shell commands admitted by a guard of this process (`admit`), by key → when, until their result comes back. */
  const admitted = new Map<string, number>()

  /**
   * Records that a shell command is about to start (it becomes a sandbox a moment later). Process-wide, so that the
   * guards of two projects in one process see each other's commands starting.
   */
  export function admit(key: string) {
    admitted.set(key, Date.now())
  }

  /** The command's result came back (or it is known to have ended). */
  export function release(key: string) {
    admitted.delete(key)
  }

  /**
   * True when a command was admitted within the last `windowMs` (it may not have become a sandbox yet); older
   * admissions are forgotten: by then the command is a running sandbox or has ended.
   *
   * @example
   * Sandbox.admit("g1:call_1"); Sandbox.starting(1000) // true for a second
   */
  export function starting(windowMs: number): boolean {
    const now = Date.now()
    for (const [key, at] of admitted) if (now - at >= windowMs) admitted.delete(key)
    return admitted.size > 0
  }

  /** A process's start time (`/proc/<pid>/stat` field 22), telling a process from a later one given the same id. */
  function startOf(pid: number): string | undefined {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
    } catch {
      return undefined
    }
  }

  /**
   * Marks a sandbox this process started as a long-lived helper (`SecurityGuard.helper`): not a command, so neither
   * file tools nor other commands wait for it. Process-wide: another project's guard in the same process sees it too.
   */
  export function registerHelper(pid: number) {
    helpers.set(pid, startOf(pid))
  }

  /**
   * The command sandboxes running now for this process: `running` without the helpers. A helper is known by its id
   * and start time, so a command given the id of a helper that has ended is a command; a helper is forgotten once its
   * process is gone.
   *
   * @example
   * Sandbox.commands() // [48213] while one sandboxed command runs beside a language server
   */
  export function commands(pid = process.pid): number[] {
    const all = running(pid)
    for (const [helper, start] of helpers) if (startOf(helper) !== start) helpers.delete(helper)
    return all.filter((p) => !helpers.has(p))
  }

  /**
   * The sandboxes running now for this process: its child processes that are bubblewrap (a shell that moved into the
   * sandbox `exec`s it, keeping its process id). Read from `/proc/<pid>/task/<tid>/children`, or from every process's
   * `stat` where the kernel does not list children. Empty where there is no `/proc`.
   *
   * @example
   * Sandbox.running() // [48213] while one sandboxed command runs
   */
  export function running(pid = process.pid): number[] {
    let children: number[] | undefined
    try {
      const tasks = fs.readdirSync(`/proc/${pid}/task`)
      children = []
      for (const tid of tasks) {
        const text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim()
        if (text) children.push(...text.split(/\s+/).map(Number))
      }
    } catch {
      children = undefined
    }
    const candidates = children ?? allProcesses()
    const out: number[] = []
    for (const child of candidates) {
      let stat: string
      try {
        stat = fs.readFileSync(`/proc/${child}/stat`, "utf8")
      } catch {
        continue
      }
      // "<pid> (<comm>) <state> <ppid> …": the name may hold spaces and parentheses, so split at the last ")".
      const close = stat.lastIndexOf(")")
      const comm = stat.slice(stat.indexOf("(") + 1, close)
      const [state, ppid] = stat.slice(close + 2).split(" ")
      // A sandbox that ended and is not yet reaped (a zombie: the runtime waits for it when its event loop next turns,
      // `SyncProcess` never) runs nothing any more.
      if (comm === "bwrap" && Number(ppid) === pid && state !== "Z" && state !== "X") out.push(child)
    }
    return out
  }

  function allProcesses(): number[] {
    try {
      return fs
        .readdirSync("/proc")
        .filter((n) => /^\d+$/.test(n))
        .map(Number)
    } catch {
      return []
    }
  }

  /** The shell OpenCode runs commands with is one whose startup the sandbox can take over. */
  export function supports(shell: string): boolean {
    return (SHELLS as readonly string[]).includes(path.basename(shell).toLowerCase())
  }

  /** A call id reduced to characters safe in a file name (the entry script does the same). */
  export function marker(callID: string): string {
    return callID.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 200) || "_"
  }

  /**
   * A private sandbox state folder for this process.
   *
   * @example
   * const sandbox = Sandbox.create()
   */
  export function create(options: Options = {}): Instance {
    const probe = () => SandboxDetect.probe(options.env ? { env: options.env } : {})
    const restore = quietHostGit(options.host ?? process.env)
    const parent = privateFolder(options.base)
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(parent, "sandbox-")))
    fs.chmodSync(dir, 0o700)
    const placeholders = { file: path.join(dir, "deny-file"), dir: path.join(dir, "deny-dir") }
    fs.writeFileSync(placeholders.file, "")
    fs.chmodSync(placeholders.file, 0o000)
    fs.mkdirSync(placeholders.dir)
    fs.chmodSync(placeholders.dir, 0o000)
    fs.mkdirSync(path.join(dir, "calls"))
    fs.mkdirSync(path.join(dir, "masks"))
    fs.mkdirSync(path.join(dir, "zsh"))
    // The home the shell starts with on the host: empty, so a login shell (OpenCode runs the user's `!` commands with
    // `bash -l`) sources no startup file of the user's before the entry moves it into the sandbox.
    fs.mkdirSync(path.join(dir, "home"))
    const argsFile = path.join(dir, "args")
    let current: SandboxPlan.Plan | undefined
    let currentKey: string | undefined
    let masks = new Map<string, string>()
    let servers: SandboxNetwork.Listener[] = []

    // Written before every command (and the login home emptied), not once: whatever reached them since (only the
    // host's own processes can) does not last to the next command.
    const writeScripts = (bwrap: string) => {
      atomicWrite(path.join(dir, "enter.bash"), bashEntry(dir, bwrap), 0o644)
      atomicWrite(path.join(dir, "zsh", ".zshenv"), zshEntry(dir, bwrap), 0o644)
      const home = path.join(dir, "home")
      fs.rmSync(home, { recursive: true, force: true })
      fs.mkdirSync(home)
    }

    const maskFile = (m: Protections["mask"][number]) => {
      const hash = crypto
        .createHash("sha256")
        .update(`${m.path}\0${m.mtimeMs ?? ""}\0`)
        .update(m.text)
        .digest("hex")
        .slice(0, 32)
      const file = path.join(dir, "masks", hash)
      if (!fs.existsSync(file)) {
        atomicWrite(file, m.text, 0o444)
        if (m.mtimeMs !== undefined) fs.utimesSync(file, new Date(), new Date(m.mtimeMs))
      }
      return file
    }

    return {
      dir,
      probe,
      prepare(protections) {
        servers = (options.servers ?? SandboxNetwork.servers)()
        const nextMasks = new Map<string, string>()
        const mask = protections.mask.map((m) => {
          const copy = maskFile(m)
          nextMasks.set(copy, m.path)
          return { path: m.path, copy }
        })
        const plan = SandboxPlan.build({
          hide: protections.hide,
          lock: protections.lock,
          mask,
          pin: protections.pin,
          open: protections.open,
          empty: protections.empty,
          write: protections.write,
          over: protections.over,
          readOnly: protections.readOnly,
          placeholders,
          // Every sandbox state folder of this user (other projects' and other processes' too) is hidden.
          conceal: [parent],
          expose: (protections.expose ?? []).filter((f) => fs.existsSync(f)),
          unset: [...UNSET, ENV.call, ...restore],
          set: { ...protections.env, [ENV.inside]: "1", ...gitStat(options.env ?? process.env) },
          isolateNetwork: servers.length > 0,
        })
        const key = plan.args.join("\0")
        if (key !== currentKey) {
          atomicWrite(argsFile, plan.args.join("\0") + "\0", 0o600)
          currentKey = key
          // Copies no longer used by the plan in force go; the files of a command already running stay mounted.
          for (const copy of masks.keys()) if (!nextMasks.has(copy)) fs.rmSync(copy, { force: true })
          masks = nextMasks
        }
        current = plan
        return plan
      },
      plan: () => current,
      servers: () => servers,
      env(callID, env = process.env) {
        const probed = probe()
        if (!probed.ok) throw new Error(`${probed.reason}. ${probed.install}`)
        if (!current) throw new Error("the sandbox has no plan yet (prepare() was not called)")
        writeScripts(probed.bwrap)
        const out: Record<string, string> = {
          BASH_ENV: path.join(dir, "enter.bash"),
          ZDOTDIR: path.join(dir, "zsh"),
          [ENV.call]: marker(callID),
        }
        if (env.ZDOTDIR !== undefined) out[ENV.zdotdir] = env.ZDOTDIR
        // The real home comes back in the entry, before the command runs (inside, a login shell reads its startup
        // files there, sandboxed).
        if (env.HOME) {
          out[ENV.home] = env.HOME
          out.HOME = path.join(dir, "home")
        }
        return out
      },
      template() {
        const probed = probe()
        if (!probed.ok) throw new Error(`${probed.reason}. ${probed.install}`)
        const file = path.join(dir, "template.bash")
        atomicWrite(file, templateEntry(dir, probed.bwrap), 0o644)
        return file
      },
      templatesRan() {
        let ran = false
        for (const name of fs.readdirSync(path.join(dir, "calls"))) {
          if (!name.startsWith("template-")) continue
          fs.rmSync(path.join(dir, "calls", name), { force: true })
          ran = true
        }
        return ran
      },
      entered(callID) {
        const file = path.join(dir, "calls", marker(callID))
        try {
          fs.rmSync(file)
          return true
        } catch {
          return false
        }
      },
      close() {
        // The placeholders are mode 000: give the folder back its permissions so it can be listed and removed.
        try {
          fs.chmodSync(placeholders.dir, 0o700)
        } catch {
          // Already gone.
        }
        fs.rmSync(dir, { recursive: true, force: true })
      },
    }
  }

  /**
   * Git settings added inside the sandbox (after any the user passes in the environment): compare only size and
   * modification time, so a redacted copy shown in place of a file with protected segments is not taken for a change
   * (`git status` stays clean, `git commit -a` does not stage the redaction); never pack objects on the side (the
   * sandbox shows some objects redacted: packing them would store the redaction where git on the host reads first),
   * and keep fetched objects loose, since the pack folder may be read-only inside.
   *
   * @example
   * Sandbox.gitStat({}) // { GIT_CONFIG_COUNT: "7", GIT_CONFIG_KEY_0: "core.checkStat", … }
   */
  export function gitStat(env: Record<string, string | undefined>): Record<string, string> {
    const given = Number.parseInt(env.GIT_CONFIG_COUNT ?? "0", 10)
    const n = Number.isFinite(given) && given > 0 ? given : 0
    const settings: [string, string][] = [
      ["core.checkStat", "minimal"],
      ["core.trustctime", "false"],
      ["gc.auto", "0"],
      ["maintenance.auto", "false"],
      ["fetch.unpackLimit", "2147483647"],
      ["transfer.unpackLimit", "2147483647"],
      ["receive.unpackLimit", "2147483647"],
    ]
    const out: Record<string, string> = { GIT_CONFIG_COUNT: String(n + settings.length) }
    settings.forEach(([key, value], i) => {
      out[`GIT_CONFIG_KEY_${n + i}`] = key
      out[`GIT_CONFIG_VALUE_${n + i}`] = value
    })
    return out
  }

  function atomicWrite(file: string, text: string | Uint8Array, mode: number) {
    const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`
    fs.writeFileSync(temp, text, { mode })
    fs.renameSync(temp, file)
  }

  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

  /**
   * The bash entry (`BASH_ENV`): bash reads it before running the `-c` command and sees the shell's own positional
   * parameters, so `exec` hands the same command and parameters to the same bash inside the sandbox. If bubblewrap
   * cannot be started the shell exits before the command runs.
   */
  export function bashEntry(dir: string, bwrap: string): string {
    return [
      "# OpenCode Built-ins: moves this shell command into the sandbox before it runs (read by bash as BASH_ENV).",
      "unset BASH_ENV",
      `if [ -n "\${${ENV.home}+set}" ]; then export HOME="$${ENV.home}"; unset ${ENV.home}; fi`,
      `__ocb_dir=${quote(dir)}`,
      `if [ -n "\${${ENV.call}-}" ]; then : > "$__ocb_dir/calls/\${${ENV.call}//[^A-Za-z0-9_-]/_}" 2>/dev/null; fi`,
      `unset ${ENV.call}`,
      'if [ -z "${BASH_EXECUTION_STRING+set}" ]; then',
      '  echo "opencode-builtins: this shell has no -c command, so it cannot be moved into the sandbox" >&2',
      "  exit 126",
      "fi",
      // A login shell stays one inside, where its startup files (read with the real home) run sandboxed.
      "__ocb_login=-c",
      "if shopt -q login_shell; then __ocb_login=-lc; fi",
      `exec ${quote(bwrap)} --args 3 -- "$BASH" "$__ocb_login" "$BASH_EXECUTION_STRING" "$0" "$@" 3<"$__ocb_dir/args"`,
      'echo "opencode-builtins: the shell sandbox could not be started" >&2',
      "exit 126",
      "",
    ].join("\n")
  }

  /**
   * The launcher of a command template's shell line (`` !`…` ``, which OpenCode runs itself, in its own process, with
   * no hook before it): run as `bash <launcher> <line>`, it replaces itself with bubblewrap running `bash -c <line>`
   * under the plan in force. With no plan, or when bubblewrap cannot start, the line is not run and the output says so.
   */
  export function templateEntry(dir: string, bwrap: string): string {
    return [
      "# OpenCode Built-ins: runs a command template's shell line inside the sandbox (OpenCode runs it outside).",
      "unset BASH_ENV",
      `__ocb_dir=${quote(dir)}`,
      // The guard sweeps what the line may have created on the host once it sees this marker (see `templatesRan`).
      ': > "$__ocb_dir/calls/template-$$" 2>/dev/null',
      'if [ -z "${1+set}" ] || [ ! -s "$__ocb_dir/args" ]; then',
      '  echo "opencode-builtins: the shell sandbox has no plan, so this shell line of the command was not run"',
      "  exit 126",
      "fi",
      `exec ${quote(bwrap)} --args 3 -- "$BASH" -c "$1" opencode-command 3<"$__ocb_dir/args"`,
      'echo "opencode-builtins: the shell sandbox could not be started, so this shell line of the command was not run"',
      "exit 126",
      "",
    ].join("\n")
  }

  /** The zsh entry (`$ZDOTDIR/.zshenv`), read by every zsh; the user's own `ZDOTDIR` is restored inside. */
  export function zshEntry(dir: string, bwrap: string): string {
    return [
      "# OpenCode Built-ins: moves this shell command into the sandbox before it runs (zsh reads it as .zshenv).",
      `if [[ -n \${${ENV.zdotdir}+set} ]]; then export ZDOTDIR=$${ENV.zdotdir}; else unset ZDOTDIR; fi`,
      `unset ${ENV.zdotdir} BASH_ENV`,
      `if [[ -n \${${ENV.home}+set} ]]; then export HOME=$${ENV.home}; unset ${ENV.home}; fi`,
      `__ocb_dir=${quote(dir)}`,
      `if [[ -n \${${ENV.call}-} ]]; then : > "$__ocb_dir/calls/\${${ENV.call}//[^A-Za-z0-9_-]/_}" 2>/dev/null; fi`,
      `unset ${ENV.call}`,
      "if [[ -z ${ZSH_EXECUTION_STRING+set} ]]; then",
      '  echo "opencode-builtins: this shell has no -c command, so it cannot be moved into the sandbox" >&2',
      "  exit 126",
      "fi",
      // A login shell stays one inside (its .zprofile and .zlogin then run there).
      "__ocb_login=-c",
      "if [[ -o login ]]; then __ocb_login=-lc; fi",
      `exec ${quote(bwrap)} --args 3 -- \${\${:-/proc/$$/exe}:A} "$__ocb_login" "$ZSH_EXECUTION_STRING" "$ZSH_ARGZERO" "$@" 3<"$__ocb_dir/args"`,
      'echo "opencode-builtins: the shell sandbox could not be started" >&2',
      "exit 126",
      "",
    ].join("\n")
  }
}
