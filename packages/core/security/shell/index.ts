import { ShellContext } from "./context"
import { ShellParse } from "./parse"
import { ShellWords } from "./words"

/**
 * Static reading of a shell command: which files it reads and writes, and which git invocations print content from
 * the object store. The command is parsed with tree-sitter-bash (a real bash grammar, run as WebAssembly) and walked
 * statement by statement, following `cd`, variables assigned in the command, loops, pipelines (what a stage prints
 * feeds `xargs`), command and process substitutions, redirects, here-docs, wrappers (`sudo`, `env`, `timeout`, …),
 * nested shells (`bash -c`, `eval`, scripts run with `bash file`) and interpreter one-liners (`python -c`, `node -e`,
 * …). Brace expansion and globs are expanded against the file system as bash would. What each command does to its
 * arguments is a table (`commands.ts`), with custom readers for `git` (`git.ts`), interpreters (`interpreters.ts`),
 * `find`, `xargs` and a few more.
 *
 * The reading reports and never decides: what it cannot pin down comes back as `dynamic` regions (a path whose
 * literal prefix is known), recursive operations carry `recursive` (and `filter` when `find -name` narrows a
 * `-delete`),
 * and content printed from git's object store comes back as `objects`; the guard decides what to refuse.
 *
 * @example
 * const a = await SecurityShell.analyze("cd secrets && cat x | base64", { cwd: "/repo" })
 * a.accesses // [{ path: "/repo/secrets/x", op: "read", command: "cat" }]
 */
export namespace SecurityShell {
  export type Op = "read" | "write"

  export type Access = {
    path: string
    op: Op
    command: string
    /** The command works on everything below a folder (`rm -r`, `cp -r`, `tar c`, `find -delete`, …). */
    recursive?: boolean
    /**
     * Only on `find … -delete`: name globs every file it deletes below `path` matches — all of them (`-name` tests of
     * a plain conjunction; `-iname` as `[aA]` classes). Each is matched against a file's base name, fnmatch-style
     * (`*`, `?`, `[…]`, leading dots matched). Absent: any file below `path`. A deleted folder is removed only when
     * empty, so files below a matching folder are not reached unless they match too.
     */
    filter?: string[]
  }

  export type Dynamic = {
    /**
     * Absolute text every path the command may reach starts with ("" when nothing is known). It ends with `/` when a
     * whole folder is known (`/r/secrets/`); otherwise it is a text prefix (`/r/.e` for `open('.e' + x)`). The run-time
     * part is assumed not to climb with `..`.
     */
    prefix: string
    op: Op
    command: string
    /** The command removes, moves, truncates or overwrites what it names. */
    destructive: boolean
    /** Name globs, as in `Access.filter`, when a `find -delete` starts in a folder not known statically. */
    filter?: string[]
  }

  /**
   * A git invocation that prints or exports file content from the object store (history, the index, stashes) —
   * content the kernel sandbox cannot guard because it is not read from the protected file. `git log --oneline`,
   * `git diff --stat`, `git show --stat HEAD` and `git status` print no content and are not reported; plain
   * `git diff` (work tree against the index) reads the work tree and is reported as reads instead.
   */
  export type ObjectRead = {
    /** The folder git runs in (after `-C`), or the source repository of `git clone`; "" when not known. */
    cwd: string
    /** `git <subcommand>`. */
    command: string
    /** Absolute paths the printed content is restricted to (files or folders); absent when `all`. */
    pathspecs?: string[]
    /** May print the content of any tracked (or staged, or stashed) path. */
    all: boolean
    /** The repository given by `--git-dir`/`GIT_DIR`, absolute ("" when not known statically). */
    gitDir?: string
  }

  /** One git invocation as written: where it runs, its subcommand and its arguments (literal text). */
  export type GitRun = { cwd: string; sub: string; args: string[] }

  export type Analysis = {
    accesses: Access[]
    dynamic: Dynamic[]
    objects: ObjectRead[]
    /** Every git invocation met (for checks that depend on the repository's state). */
    gits: GitRun[]
    notes: string[]
    error?: string
  }

  export type Options = {
    cwd: string
    home?: string
    env?: Record<string, string | undefined>
    /** Nested shells and scripts are followed this deep (default 4). */
    depth?: number
  }

  /** Overrides where the WebAssembly files are (hosts that bundle core, e.g. a compiled OpenCode binary). */
  export function configure(paths: { runtime?: string; bash?: string }) {
    ShellParse.configure(paths)
  }

  /** The bash parser, initialised once per process (about 40 ms). */
  export function parser() {
    return ShellParse.parser()
  }

  /** Longest command text analysed; longer commands are refused by the guard rather than half-read. */
  export const MAX_COMMAND = 64 * 1024

  /**
   * The files a command reads and writes, as far as a static reading can tell.
   *
   * @example
   * (await SecurityShell.analyze("rm -rf build/$X", { cwd: "/r" })).dynamic
   * // [{ prefix: "/r/build/", op: "write", command: "rm", destructive: true }]
   */
  export async function analyze(command: string, options: Options): Promise<Analysis> {
    const p = await parser()
    const ctx = ShellContext.create(p, options)
    if (command.length > MAX_COMMAND) {
      ctx.out.error = `the command is ${command.length} characters long; commands over ${MAX_COMMAND} are not analysed`
      return ctx.out
    }
    ShellParse.script(ctx, command, { cwd: options.cwd, vars: new Map() }, options.depth ?? 4)
    return ctx.out
  }

  /**
   * Bash brace expansion (`a{b,c}d`, `{1..3}`), bounded to 256 results.
   *
   * @example
   * SecurityShell.braces("{a,b}.md") // ["a.md", "b.md"]
   */
  export function braces(text: string): string[] {
    return ShellWords.braces(text)
  }
}
