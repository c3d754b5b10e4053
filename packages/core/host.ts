import type { Resource } from "./resource/schema"
import type { SessionView } from "./resource/session"
import type { HostSessions } from "./sessions"
import type { Logger } from "./util/log"

/**
 * What core features need from the program hosting them, as a small explicit object. The external plugin builds it
 * from `PluginInput`; the fork's patches build it from `Instance`, `Log` and `Session`. Core never imports OpenCode.
 *
 * @example
 * const host: Host = { directory: "/repo", worktree: "/repo", log: Logger.silent }
 */
export type Host = {
  /** The project directory OpenCode runs in. */
  directory: string
  /** The worktree root (the git root, or `directory` outside git). */
  worktree: string
  log: Logger
  /**
   * Optional access check a security layer provides: resolves to a denial reason when `path` may not be used for
   * `op`, or undefined when it may. Features that read or write files on the model's behalf consult it; listings
   * that only leave protected files out pass `quiet` (no audit entry per file and prompt).
   */
  access?: (path: string, op: "read" | "write" | "llm", options?: { quiet?: boolean }) => Promise<string | undefined>
  /**
   * Optional companion of `access`: a number that changes whenever an answer of `access` may change (the policy was
   * reloaded or became invalid, the role changed, the index of protected files was rebuilt). Features that check
   * many paths on every request (discovery, the resource index) keep verdicts per path while it stays the same;
   * without it they ask `access` again on every request.
   */
  accessVersion?: () => number
  /**
   * Optional companion of `access`: the security role and policy its answers are given under (`LocalState.scope`:
   * the role and a hash of the policy files), or undefined without a policy in force. Caches that keep what `access`
   * let through across processes (the resource index, discovery's parse cache) keep one file per scope, so a process
   * of another role or policy never reads what this one could read.
   */
  accessScope?: () => string | undefined
  /**
   * Marker pairs of the protected segments the role in force may not read, and may not change (installed by a
   * security layer): tools that show or rewrite file content (AST search and replace) honour them.
   */
  segments?: () => { read: { start: string; end: string }[]; write: { start: string; end: string }[] }
  /**
   * Optional companion of `access` (installed by a security layer): how to start a long-running helper process the
   * agent's calls drive (a language server, which reads the project by itself) inside the kernel sandbox shell
   * commands run in, so it cannot read protected files and sees protected segments redacted. Resolves to undefined
   * when the helper may run as it is; rejects when it must be sandboxed and cannot be.
   */
  sandbox?: () => Promise<HostSandbox | undefined>
  /**
   * Runs `work` (a built-in tool that checks paths, then reads or writes them: AST search and rewrite, LSP) while no
   * shell command starts: a command running beside it could swap a link or folder between the check of a path and its
   * use. Commands wait until it ends (installed by the security layer; absent, `work` just runs).
   */
  exclusive?: <T>(work: (outside: Outside) => Promise<T>) => Promise<T>
  /** Folders holding the code of the host's own plugin or build: read-only for the agent (changed code would run). */
  code?: string[]
  /**
   * Set by a host whose client owns its context (the MCP server): every tool call is answered on its own, nothing is
   * tracked between calls and no lifecycle tool (`resource-release`) is offered, so texts say nothing of releasing
   * and a limit is one answer's, not a session's.
   */
  stateless?: boolean
  /**
   * Who reads what features add to a prompt: OpenCode's model (the default), or the client of the MCP server
   * (`"mcp"`), which has none of OpenCode's tools (`skill`, `task`) nor its `@agent` and `/command` syntax, so
   * discovery names each suggestion's file to read instead.
   */
  client?: "opencode" | "mcp"
  /**
   * The stored messages of a session, oldest first, in OpenCode's `{ info, parts }` shape. Features derive session
   * state from it instead of shadowing it.
   */
  messages?: (sessionID: string) => Promise<SessionView.Message[]>
  /** Session operations beyond reading messages (todo continuation, crash recovery); see `HostSessions`. */
  sessions?: HostSessions
  /**
   * The project's resources as the resource loader indexes them, when the loader runs in this host (installed by
   * the resources feature); other features (discovery) match against them instead of indexing twice.
   */
  resources?: () => Promise<Iterable<Resource.Metadata>>
  /** The models the host can call and the input they accept (look_at's capability check and fallback model). */
  models?: () => Promise<HostModel[]>
  /**
   * One model call in a new child session of `sessionID`, without tools, removed afterwards: its file parts never
   * enter the parent conversation. Resolves to the reply's text; rejects with the model's error.
   */
  child?: (call: HostChildCall) => Promise<string>
  /**
   * Deletes the child sessions `child` left behind when OpenCode was killed during a call (recorded while each call
   * runs, see `LookOrphans`); resolves to how many it deleted. look_at runs it once, before the first request.
   */
  childOrphans?: () => Promise<number>
  /**
   * True when `child` denies the child session every tool by itself (the fork: OpenCode 1.18 turns the call's
   * `tools: { "*": false }` into the session's permission). Otherwise look_at adds a hidden agent that denies every
   * tool to the host's configuration and runs its calls as that agent (OpenCode 1.2.15 offers a session's tools
   * whatever the call says).
   */
  childDeniesTools?: boolean
}

/**
 * `Host.sandbox`'s answer: run `bwrap --args <fd> -- <command…>` with `args` (NUL-terminated) readable on that
 * descriptor; `key` changes whenever the protections do (a helper started under another key is out of date).
 */
export type HostSandbox = {
  bwrap: string
  args: string[]
  key: string
  /** Called with the helper's process id once started: a helper's sandbox is not a shell command file tools wait for. */
  register?: (pid: number) => void
  /** A seccomp filter to give bubblewrap on descriptor 4 (`args` name it: `--seccomp 4`). */
  seccomp?: Uint8Array
}

/** A model as `Host.models` lists it. */
export type HostModel = { providerID: string; modelID: string; name?: string; input: { image: boolean; pdf: boolean } }

/** What `Host.child` sends: text parts and file parts (data URLs) in one user message. */
export type HostChildCall = {
  sessionID: string
  model: { providerID: string; modelID: string }
  agent?: string
  system?: string
  title?: string
  parts: ({ type: "text"; text: string } | { type: "file"; mime: string; url: string; filename?: string })[]
  signal?: AbortSignal
}

/**
 * Runs `f` with an exclusive hold let go (a permission prompt the user may leave open), and takes the hold again
 * once no shell command runs. What was checked before must be checked again after it.
 */
export type Outside = <U>(f: () => Promise<U>) => Promise<U>

/**
 * `work` under `host.exclusive` when the host has it (a security layer is installed), else just `work`.
 *
 * @example
 * return exclusively(host, (outside) => AstSearch.run(scan))
 */
export function exclusively<T>(host: Pick<Host, "exclusive">, work: (outside: Outside) => Promise<T>): Promise<T> {
  return host.exclusive ? host.exclusive(work) : work((f) => f())
}

/**
 * A tool context whose permission prompts (`ask`) run outside the exclusive hold: shell commands of the same step
 * need not wait for the user's answer.
 *
 * @example
 * exclusively(host, async (outside) => run(args, releasing(ctx, outside)))
 */
export function releasing<C extends { ask?: (...args: any[]) => Promise<any> }>(ctx: C, outside: Outside): C {
  const ask = ctx.ask
  return ask ? { ...ctx, ask: (...args: any[]) => outside(() => ask.apply(ctx, args)) } : ctx
}
