import fs from "fs"
import path from "path"
import type { Parser } from "web-tree-sitter"
import { SecurityPath } from "../paths"
import type { SecurityShell } from "./index"

/**
 * What the shell analysis carries while it walks a command: where results go, the shell's state at each point
 * (working directory, variables) and the helpers that turn evaluated words into reported accesses. Command readers
 * (`commands.ts`, `git.ts`, `interpreters.ts`) only report through these helpers, so every path is resolved the same
 * way.
 *
 * @example
 * const ctx = ShellContext.create(parser, { cwd: "/r" })
 * ShellContext.emit(ctx, ShellContext.literal("a"), "read", "cat", { cwd: "/r", vars: new Map() })
 * ctx.out.accesses // [{ path: "/r/a", op: "read", command: "cat" }]
 */
export namespace ShellContext {
  export type Op = SecurityShell.Op

  /** A word after expansion: its literal values, or the known prefix of a value built at run time. */
  export type Word = {
    values: string[]
    dynamic: boolean
    /** Text known before the first part built at run time; absolute, relative to the working directory, or "". */
    prefix: string
    raw: string
  }

  /** A variable: a literal, unknown (undefined), or a value built at run time whose prefix is known. */
  export type Value = string | Word | undefined

  export type State = { cwd: string | undefined; vars: Map<string, Value> }

  export type Context = {
    parser: Parser
    out: SecurityShell.Analysis
    options: SecurityShell.Options
    /** Git aliases and remotes defined earlier in the same command (`git config alias.x …`, `git remote add …`). */
    git: { aliases: Map<string, string>; remotes: Set<string> }
  }

  /**
   * A fresh analysis context.
   *
   * @example
   * ShellContext.create(parser, { cwd: "/r" }).out // { accesses: [], dynamic: [], objects: [], gits: [], notes: [] }
   */
  export function create(parser: Parser, options: SecurityShell.Options): Context {
    return {
      parser,
      out: { accesses: [], dynamic: [], objects: [], gits: [], notes: [] },
      options,
      git: { aliases: new Map(), remotes: new Set() },
    }
  }

  /** The same state with its own copy of the variables (subshells, pipeline stages, nested shells). */
  export function fork(state: State, cwd = state.cwd): State {
    return { cwd, vars: new Map(state.vars) }
  }

  /** The home folder `~` stands for: `HOME` when the command assigned it, else the user's; undefined when unknown. */
  export function home(ctx: Context, state?: State): string {
    const assigned = state?.vars.get("HOME")
    if (typeof assigned === "string" && assigned) return assigned
    return ctx.options.home ?? ctx.options.env?.HOME ?? "/"
  }

  export function note(ctx: Context, text: string) {
    ctx.out.notes.push(text)
  }

  /**
   * Space-separated names as a list, for tables of option and command names.
   *
   * @example
   * ShellContext.list("-n --lines") // ["-n", "--lines"]
   */
  export function list(names: string): string[] {
    return names.split(/\s+/).filter(Boolean)
  }

  export function literal(value: string): Word {
    return { values: [value], dynamic: false, prefix: value, raw: value }
  }

  /** A value built at run time: `prefix` is absolute ("" when nothing is known). */
  export function unknown(prefix: string): Word {
    return { values: [], dynamic: true, prefix, raw: "$(…)" }
  }

  export function isDir(abs: string | undefined) {
    if (!abs) return false
    try {
      return fs.statSync(abs).isDirectory()
    } catch {
      return false
    }
  }

  export function exists(abs: string | undefined) {
    if (!abs) return false
    try {
      fs.lstatSync(abs)
      return true
    } catch {
      return false
    }
  }

  /** The working directory with a trailing slash, "" when unknown. */
  export function dir(state: State): string {
    return state.cwd === undefined ? "" : state.cwd.endsWith("/") ? state.cwd : state.cwd + "/"
  }

  /**
   * Absolute path of a literal in the current folder (undefined when the folder is not known). `..` is taken the
   * way the kernel takes it (links before it resolved first); `/proc/self/cwd` and `/proc/self/root` are the shell's.
   * `lexical` takes `..` the way `cd` does (removing the previous name).
   *
   * @example
   * ShellContext.abs(ctx, "../x", { cwd: "/r/src", vars: new Map() }) // "/r/x"
   */
  export function abs(ctx: Context, value: string, state: State, lexical = false): string | undefined {
    let out: string | undefined
    if (value.startsWith("file://")) {
      try {
        out = decodeURIComponent(new URL(value).pathname)
      } catch {
        return undefined
      }
    } else if (value === "~" || value.startsWith("~/")) out = path.join(home(ctx, state), value.slice(1))
    else if (path.isAbsolute(value)) out = value
    else if (state.cwd === undefined) return undefined
    else out = state.cwd + "/" + value
    return lexical ? path.resolve(out) : physical(out, state)
  }

  /**
   * `..` after links resolved like the kernel and `/proc/self/{cwd,root}` replaced by the shell's; undefined when the
   * path names no known place.
   */
  function physical(value: string, state: State): string | undefined {
    // The process's own links are the shell's, not this analysis's: replace them before anything is resolved.
    const proc = /^\/+proc\/+([^/]+)\/+(?:task\/+[^/]+\/+)?(cwd|root|fd\/+[^/]+)(?=\/|$)(.*)$/.exec(value)
    if (proc) {
      const self = proc[1] === "self" || proc[1] === "thread-self"
      if (proc[2] === "root") return physical("/" + proc[3], state)
      // Another process's working directory or open files are nowhere a static reading knows.
      if (!self || proc[2] !== "cwd") return self ? path.resolve(value) : undefined
      return state.cwd === undefined ? undefined : physical(state.cwd + "/" + proc[3], state)
    }
    return value.includes("..") ? SecurityPath.collapse(value) : path.resolve(value)
  }

  /**
   * The absolute prefix of a dynamic word ("" when not even its folder is known).
   *
   * @example
   * ShellContext.prefixOf(ctx, word, { cwd: "/r", vars }) // "/r/secrets/" for `secrets/$X`
   */
  export function prefixOf(ctx: Context, word: Word, state: State): string {
    let prefix = word.prefix
    if (prefix === "") return ""
    if (prefix === "~" || prefix.startsWith("~/")) prefix = home(ctx, state) + "/" + prefix.slice(1)
    else if (!path.isAbsolute(prefix)) {
      if (state.cwd === undefined) return ""
      prefix = state.cwd + "/" + prefix
    }
    const cut = prefix.lastIndexOf("/..") + 3
    if (cut > 2 && (prefix.length === cut || prefix[cut] === "/")) {
      // Everything up to the last `..` is taken like the kernel would; what follows it is a text prefix.
      const head = SecurityPath.collapse(prefix.slice(0, cut))
      prefix = (head.endsWith("/") ? head : head + "/") + prefix.slice(cut + 1)
    }
    const slash = prefix.endsWith("/")
    prefix = path.join(prefix)
    if (slash && !prefix.endsWith("/")) prefix += "/"
    if (!prefix.startsWith("/proc/")) return prefix
    // Below /proc only the shell's own working directory and root are known places; anything else may link anywhere.
    const proc = /^\/proc\/(?:self|thread-self)\/(cwd|root)(\/.*)$/.exec(prefix)
    if (!proc) return ""
    if (proc[1] === "root") return proc[2]
    return state.cwd === undefined ? "" : state.cwd.replace(/\/$/, "") + proc[2]
  }

  /** Paths that are no file: descriptors and devices. */
  const NO_FILE =
    /^\/dev\/(null|stdin|stdout|stderr|tty|zero|u?random|full|fd\/\d+)$|^\/proc\/(self|thread-self)\/fd\/\d+$/

  export type EmitOptions = { recursive?: boolean; destructive?: boolean; into?: boolean; filter?: string[] }

  /** Reports what a command does to one of its words: exact paths, or a dynamic region. */
  export function emit(ctx: Context, word: Word, op: Op, command: string, state: State, options: EmitOptions = {}) {
    if (word.dynamic) return region(ctx, prefixOf(ctx, word, state), op, command, !!options.destructive, options.filter)
    for (const v of word.values) {
      if (!v || v === "-" || NO_FILE.test(v)) continue
      const abs = ShellContext.abs(ctx, v, state)
      if (!abs) {
        region(ctx, "", op, command, !!options.destructive, options.filter)
        continue
      }
      if (NO_FILE.test(abs)) continue
      push(ctx, { path: abs, op, command, recursive: options.recursive, filter: options.filter })
      // Copying or moving into an existing folder writes a file of the source's name inside it.
      if (options.into && isDir(abs)) region(ctx, abs.endsWith("/") ? abs : abs + "/", op, command, true)
    }
  }

  /** Reports a dynamic region. */
  export function region(
    ctx: Context,
    prefix: string,
    op: Op,
    command: string,
    destructive: boolean,
    filter?: string[],
  ) {
    ctx.out.dynamic.push(filter ? { prefix, op, command, destructive, filter } : { prefix, op, command, destructive })
  }

  /**
   * Code not known statically runs (`eval $X`, `bash -c "$X"`, `python -c "$X"`, `$CMD …`): it may read or change
   * anything, reported as regions with no prefix, and noted.
   *
   * @example
   * ShellContext.anything(ctx, "eval", "eval of text not known statically")
   * ctx.out.dynamic // [{ prefix: "", op: "read", … }, { prefix: "", op: "write", destructive: true, … }]
   */
  export function anything(ctx: Context, command: string, why: string) {
    note(ctx, why)
    region(ctx, "", "read", command, false)
    region(ctx, "", "write", command, true)
  }

  /** An argument whose role is unknown: read when it exists, and possibly written. */
  export function opaque(ctx: Context, word: Word, name: string, state: State) {
    if (word.dynamic) return region(ctx, prefixOf(ctx, word, state), "read", name, false)
    for (const v of word.values) {
      if (!v || v.length > 1024 || v.includes("\n")) continue
      const abs = ShellContext.abs(ctx, v, state)
      if (!abs) continue
      if (exists(abs)) push(ctx, { path: abs, op: "read", command: name })
      push(ctx, { path: abs, op: "write", command: name, opaque: true })
    }
  }

  export function push(ctx: Context, access: SecurityShell.Access & { opaque?: boolean }) {
    if (access.filter === undefined) delete access.filter
    ctx.out.accesses.push(access)
  }
}
