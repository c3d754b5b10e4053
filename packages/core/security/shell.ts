import fs from "fs"
import path from "path"
import { createRequire } from "module"
import { Language, Parser, type Node } from "web-tree-sitter"

/**
 * Static reading of a shell command: which files it reads and writes. The command is parsed with tree-sitter-bash (a
 * real bash grammar, run as WebAssembly) and walked statement by statement, following `cd`, variables assigned in the
 * command, loops over literal lists, pipelines into `xargs`, command and process substitutions, redirects, here-docs,
 * wrappers (`sudo`, `env`, `timeout`, …), nested shells (`bash -c`, `eval`, scripts run with `bash file`) and the
 * string literals of interpreter one-liners (`python -c`, `node -e`, `perl -e`, …). Brace expansion and globs are
 * expanded against the file system as bash would.
 *
 * What a static reading cannot decide comes back as `dynamic` regions (a path whose literal prefix is known); the
 * guard refuses destructive commands that could reach a protected file through one, and the output scanner catches
 * content that reaches the model by a route no static reading sees.
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
  }
  export type Dynamic = {
    /** Absolute path prefix known statically ("" when even the folder is unknown). */
    prefix: string
    op: Op
    command: string
    /** The command removes, moves, truncates or overwrites what it names. */
    destructive: boolean
  }
  export type Analysis = { accesses: Access[]; dynamic: Dynamic[]; notes: string[]; error?: string }

  export type Options = {
    cwd: string
    home?: string
    env?: Record<string, string | undefined>
    /** Nested shells and scripts are followed this deep (default 4). */
    depth?: number
  }

  let wasm: { runtime?: string; bash?: string } = {}
  /** Overrides where the WebAssembly files are (hosts that bundle core, e.g. a compiled OpenCode binary). */
  export function configure(paths: { runtime?: string; bash?: string }) {
    wasm = paths
    loading = undefined
  }

  let loading: Promise<Parser> | undefined
  /** The bash parser, initialised once per process (about 40 ms). */
  export function parser(): Promise<Parser> {
    loading ??= (async () => {
      const require = createRequire(import.meta.url)
      const runtime = wasm.runtime ?? require.resolve("web-tree-sitter/tree-sitter.wasm")
      const bash = wasm.bash ?? require.resolve("tree-sitter-bash/tree-sitter-bash.wasm")
      await Parser.init({ locateFile: () => runtime })
      const language = await Language.load(bash)
      const p = new Parser()
      p.setLanguage(language)
      return p
    })()
    loading.catch(() => (loading = undefined))
    return loading
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
    const result: Analysis = { accesses: [], dynamic: [], notes: [] }
    if (command.length > MAX_COMMAND) {
      result.error = `the command is ${command.length} characters long; commands over ${MAX_COMMAND} are not analysed`
      return result
    }
    const walker = new Walker(p, result, options)
    walker.script(command, { cwd: options.cwd, vars: new Map() }, options.depth ?? 4)
    return result
  }

  type State = { cwd: string | undefined; vars: Map<string, string | undefined> }

  /** A word after expansion: its literal values, or the literal prefix of a value that is not known statically. */
  type Word = { values: string[]; dynamic: boolean; prefix: string; raw: string }

  const WRAPPERS = new Set([
    "sudo",
    "doas",
    "env",
    "nice",
    "nohup",
    "time",
    "timeout",
    "stdbuf",
    "ionice",
    "command",
    "builtin",
    "exec",
    "chronic",
    "unbuffer",
    "caffeinate",
    "setsid",
    "strace",
    "ltrace",
    "taskset",
    "chroot",
    "flock",
    "watch",
  ])
  const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"])
  const INTERPRETERS = new Set([
    "python",
    "python2",
    "python3",
    "node",
    "nodejs",
    "bun",
    "deno",
    "ruby",
    "perl",
    "php",
    "lua",
    "luajit",
    "Rscript",
    "julia",
    "osascript",
    "pwsh",
    "powershell",
    "tclsh",
    "groovy",
    "scala",
    "kotlin",
    "swift",
  ])
  const READERS = new Set([
    "cat",
    "tac",
    "nl",
    "head",
    "tail",
    "less",
    "more",
    "most",
    "wc",
    "sort",
    "uniq",
    "cut",
    "paste",
    "fold",
    "fmt",
    "strings",
    "od",
    "hexdump",
    "hd",
    "xxd",
    "base64",
    "base32",
    "basenc",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "file",
    "stat",
    "diff",
    "diff3",
    "sdiff",
    "cmp",
    "comm",
    "iconv",
    "column",
    "expand",
    "unexpand",
    "rev",
    "shuf",
    "look",
    "pr",
    "ls",
    "tree",
    "du",
    "exa",
    "eza",
    "lsd",
    "dir",
    "vdir",
    "bat",
    "batcat",
    "view",
    "open",
    "xdg-open",
    "readlink",
    "realpath",
    "source",
    ".",
    "zcat",
    "bzcat",
    "xzcat",
    "zstdcat",
    "zless",
    "zmore",
    "lz4cat",
    "tr",
    "jq",
    "yq",
    "xq",
    "gojq",
    "csvlook",
    "mlr",
    "fd",
    "fdfind",
    "locate",
    "wc",
    "pdftotext",
    "exiftool",
    "identify",
    "lsattr",
    "getfacl",
    "namei",
  ])
  const FILTER_FIRST = new Set(["jq", "yq", "xq", "gojq"])
  const SEARCHERS = new Set(["grep", "egrep", "fgrep", "rg", "ag", "ack", "ugrep", "zgrep", "pcregrep", "git-grep"])
  const REMOVERS = new Set(["rm", "unlink", "shred", "rmdir", "srm", "trash", "trash-put", "gio"])
  const MODIFIERS = new Set([
    "touch",
    "mkdir",
    "truncate",
    "chmod",
    "chown",
    "chgrp",
    "chattr",
    "setfacl",
    "mkfifo",
    "mknod",
    "tee",
    "sponge",
    "vim",
    "vi",
    "nvim",
    "nano",
    "emacs",
    "ed",
    "ex",
    "pico",
    "micro",
    "code",
    "subl",
    "kak",
    "hx",
    "sqlite3",
    "gzip",
    "gunzip",
    "bzip2",
    "bunzip2",
    "xz",
    "unxz",
    "zstd",
    "unzstd",
    "lz4",
    "compress",
    "uncompress",
    "dos2unix",
    "unix2dos",
    "setfattr",
    "xattr",
    "utimes",
  ])
  const NO_FILES = new Set([
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "test",
    "[",
    "[[",
    "pwd",
    "export",
    "local",
    "declare",
    "typeset",
    "readonly",
    "unset",
    "set",
    "shopt",
    "read",
    "sleep",
    "which",
    "type",
    "hash",
    "alias",
    "unalias",
    "wait",
    "jobs",
    "kill",
    "exit",
    "return",
    "break",
    "continue",
    "shift",
    "trap",
    "umask",
    "ulimit",
    "date",
    "whoami",
    "id",
    "uname",
    "hostname",
    "seq",
    "yes",
    "expr",
    "let",
    "history",
    "clear",
    "tput",
    "sync",
    "nproc",
    "arch",
    "uptime",
    "ps",
    "top",
    "free",
    "df",
    "getconf",
    "locale",
    "tty",
    "logname",
    "users",
    "groups",
    "printenv",
  ])
  const GIT_WRITES = new Set([
    "checkout",
    "restore",
    "reset",
    "rm",
    "mv",
    "clean",
    "stash",
    "apply",
    "am",
    "merge",
    "rebase",
    "pull",
    "cherry-pick",
    "revert",
    "switch",
    "commit",
    "add",
    "worktree",
    "filter-branch",
    "update-index",
    "read-tree",
  ])
  const GIT_DESTRUCTIVE_WITHOUT_PATHS = new Set(["clean"])

  class Walker {
    constructor(
      private p: Parser,
      private out: Analysis,
      private options: Options,
    ) {}

    private home() {
      return this.options.home ?? this.options.env?.HOME ?? "/"
    }

    script(text: string, state: State, depth: number) {
      if (depth < 0) {
        this.out.notes.push("nested shells deeper than the analysis follows")
        return
      }
      const tree = this.p.parse(text)
      if (!tree) {
        this.out.error = "the command could not be parsed"
        return
      }
      try {
        if (tree.rootNode.hasError) this.out.notes.push("the command has syntax errors; analysed as far as it parses")
        this.statements(tree.rootNode.namedChildren, state, depth)
      } finally {
        tree.delete()
      }
    }

    private statements(nodes: (Node | null)[], state: State, depth: number) {
      for (const node of nodes) if (node) this.statement(node, state, depth)
    }

    private statement(node: Node, state: State, depth: number): void {
      switch (node.type) {
        case "command":
          return this.command(node, state, depth, [])
        case "redirected_statement": {
          const body = node.childForFieldName("body")
          const before: State = { cwd: state.cwd, vars: state.vars }
          const heredoc = this.heredocText(node)
          if (body?.type === "command") this.command(body, state, depth, node.childrenForFieldName("redirect"), heredoc)
          else if (body) this.statement(body, state, depth)
          for (const r of node.childrenForFieldName("redirect")) {
            if (!r) continue
            this.redirect(r, state, depth)
            if (before.cwd !== state.cwd) this.redirect(r, before, depth)
          }
          return
        }
        case "variable_assignment":
          return this.assign(node, state, depth)
        case "declaration_command":
          for (const child of node.namedChildren)
            if (child?.type === "variable_assignment") this.assign(child, state, depth)
          return
        case "subshell":
        case "process_substitution":
        case "command_substitution":
          return this.statements(node.namedChildren, { cwd: state.cwd, vars: new Map(state.vars) }, depth)
        case "pipeline":
          return this.pipeline(node, state, depth)
        case "for_statement":
          return this.forLoop(node, state, depth)
        case "list":
        case "program":
        case "compound_statement":
        case "do_group":
        case "if_statement":
        case "elif_clause":
        case "else_clause":
        case "while_statement":
        case "case_statement":
        case "case_item":
        case "negated_command":
        case "function_definition":
        case "c_style_for_statement":
          for (const child of node.namedChildren) {
            if (!child) continue
            if (child.type === "word" || child.type === "variable_name") continue
            this.statement(child, state, depth)
          }
          return
        case "test_command":
          // `[[ -f x ]]` tests names, it reads no content; substitutions inside still run.
          return this.substitutions(node, state, depth)
        default:
          return this.substitutions(node, state, depth)
      }
    }

    /** Runs the command and process substitutions found anywhere below `node`. */
    private substitutions(node: Node, state: State, depth: number) {
      for (const child of node.namedChildren) {
        if (!child) continue
        if (child.type === "command_substitution" || child.type === "process_substitution")
          this.statement(child, state, depth)
        else this.substitutions(child, state, depth)
      }
    }

    private assign(node: Node, state: State, depth: number) {
      const name = node.childForFieldName("name")?.text
      const value = node.childForFieldName("value")
      if (!name) return
      if (!value) {
        state.vars.set(name, "")
        return
      }
      this.substitutions(node, state, depth)
      const word = this.word(value, state, false)
      state.vars.set(name, word.dynamic || word.values.length !== 1 ? undefined : word.values[0])
    }

    private forLoop(node: Node, state: State, depth: number) {
      const variable = node.childForFieldName("variable")?.text
      const body = node.childForFieldName("body")
      const values: string[] = []
      let dynamic = false
      for (const v of node.childrenForFieldName("value")) {
        if (!v) continue
        const w = this.word(v, state, true)
        if (w.dynamic) dynamic = true
        values.push(...w.values)
      }
      if (!body) return
      if (!variable || dynamic || values.length === 0 || values.length > 32) {
        if (variable) state.vars.set(variable, undefined)
        this.statement(body, state, depth)
        return
      }
      for (const value of values) {
        state.vars.set(variable, value)
        this.statement(body, state, depth)
      }
    }

    private pipeline(node: Node, state: State, depth: number) {
      const stages = node.namedChildren.filter((c): c is Node => !!c)
      const produced: Word[] = []
      for (const stage of stages) {
        const command =
          stage.type === "command"
            ? stage
            : stage.type === "redirected_statement"
              ? stage.childForFieldName("body")
              : null
        if (command?.type === "command" && this.nameOf(command, state) === "xargs") {
          this.command(command, { cwd: state.cwd, vars: new Map(state.vars) }, depth, [], undefined, produced)
          if (stage.type === "redirected_statement")
            for (const r of stage.childrenForFieldName("redirect")) if (r) this.redirect(r, state, depth)
        } else this.statement(stage, { cwd: state.cwd, vars: new Map(state.vars) }, depth)
        produced.push(...this.producedBy(stage, state))
      }
    }

    /** What a pipeline stage writes to stdout, as words for a following `xargs`. */
    private producedBy(stage: Node, state: State): Word[] {
      const command = stage.type === "redirected_statement" ? stage.childForFieldName("body") : stage
      if (command?.type !== "command") return [this.unknownWord("")]
      const name = this.nameOf(command, state)
      const args = this.args(command, state)
      if (name === "echo" || name === "printf") return args.filter((a) => !a.raw.startsWith("-"))
      const herestring =
        stage.type === "redirected_statement"
          ? this.herestring(stage, state)
          : command.namedChildren.find((c) => c?.type === "herestring_redirect")
      if (name === "cat" && herestring)
        return typeof herestring === "object" && "values" in herestring ? [herestring] : []
      // Listings produce names below the folders they list.
      if (name && ["find", "ls", "fd", "fdfind", "tree"].includes(name)) {
        const dirs = args.filter((a) => !a.raw.startsWith("-") && !a.dynamic)
        const roots = dirs.length ? dirs.flatMap((d) => d.values) : ["."]
        return roots.map((r) => this.unknownWord(this.abs(r, state) + "/"))
      }
      return [this.unknownWord("")]
    }

    private unknownWord(prefix: string): Word {
      return { values: [], dynamic: true, prefix, raw: "$(…)" }
    }

    private herestring(node: Node, state: State): Word | undefined {
      for (const r of node.childrenForFieldName("redirect")) {
        if (r?.type !== "herestring_redirect") continue
        const value = r.namedChildren[0]
        if (value) return this.word(value, state, false)
      }
      return undefined
    }

    private heredocText(node: Node): string | undefined {
      for (const r of node.childrenForFieldName("redirect")) {
        if (r?.type !== "heredoc_redirect") continue
        const body = r.namedChildren.find((c) => c?.type === "heredoc_body")
        if (body) return body.text
      }
      return undefined
    }

    private nameOf(command: Node, state: State): string | undefined {
      const name = command.childForFieldName("name")
      if (!name) return undefined
      const word = this.word(name.namedChildren[0] ?? name, state, false)
      return word.dynamic ? undefined : path.basename(word.values[0] ?? "")
    }

    private args(command: Node, state: State): Word[] {
      const out: Word[] = []
      for (const a of command.childrenForFieldName("argument")) if (a) out.push(this.word(a, state, true))
      return out
    }

    private command(
      node: Node,
      state: State,
      depth: number,
      redirects: (Node | null)[],
      heredoc?: string,
      piped: Word[] = [],
    ) {
      this.substitutions(node, state, depth)
      const nameNode = node.childForFieldName("name")
      if (!nameNode) return
      const nameWord = this.word(nameNode.namedChildren[0] ?? nameNode, state, false)
      const args = this.args(node, state)
      for (const r of node.namedChildren)
        if (r?.type === "herestring_redirect" || r?.type === "file_redirect") this.redirect(r, state, depth)
      let stdin = heredoc
      if (stdin === undefined) {
        for (const r of [...redirects, ...node.namedChildren]) {
          if (r?.type !== "herestring_redirect") continue
          const v = r.namedChildren[0]
          if (v) stdin = this.word(v, state, false).values.join(" ")
        }
      }
      if (nameWord.dynamic) {
        this.out.notes.push(`the command name '${nameWord.raw}' is not known statically`)
        this.generic("(dynamic)", args, state)
        return
      }
      this.run(nameWord.values[0] ?? "", args, state, depth, stdin, piped)
    }

    /** Dispatches one simple command by name. */
    private run(
      full: string,
      args: Word[],
      state: State,
      depth: number,
      stdin: string | undefined,
      piped: Word[],
    ): void {
      const name = path.basename(full)
      if (!name) return
      if (name === "cd" || name === "pushd") return this.cd(args, state)
      if (name === "popd") {
        state.cwd = undefined
        return
      }
      if (WRAPPERS.has(name)) return this.wrapper(name, args, state, depth, stdin, piped)
      if (name === "xargs") return this.xargs(args, state, depth, piped)
      if (name === "eval") {
        if (args.some((a) => a.dynamic)) return this.note("eval of text not known statically")
        return this.script(args.flatMap((a) => a.values).join(" "), state, depth - 1)
      }
      if (SHELLS.has(name)) return this.shell(name, args, state, depth, stdin)
      if (/^(python|pypy|node|ruby|perl|php|lua)\d*(\.\d+)*$/.test(name) || INTERPRETERS.has(name))
        return this.interpreter(name, args, state, stdin)
      if (name === "awk" || name === "gawk" || name === "mawk" || name === "nawk") return this.awk(name, args, state)
      if (NO_FILES.has(name)) return
      if (name === "git") return this.git(args, state)
      if (SEARCHERS.has(name)) return this.search(name, args, state)
      if (name === "sed") return this.sed(args, state)
      if (name === "cp" || name === "install" || name === "rsync" || name === "scp") return this.copy(name, args, state)
      if (name === "mv") return this.move(args, state)
      if (name === "ln" || name === "link") return this.link(name, args, state)
      if (REMOVERS.has(name)) {
        const recursive = name === "rmdir" || args.some((a) => /^-[a-zA-Z]*[rR]|^--recursive$/.test(a.raw))
        for (const a of this.operands(args)) this.emit(a, "write", name, state, { recursive, destructive: true })
        return
      }
      if (name === "find") return this.find(args, state, depth)
      if (name === "dd") return this.dd(args, state)
      if (name === "tar" || name === "bsdtar") return this.tar(name, args, state)
      if (name === "zip" || name === "7z" || name === "7za") return this.zip(name, args, state)
      if (name === "unzip") return this.unzip(args, state)
      if (name === "patch") return this.destructiveCwd("patch", args, state, ["-d", "--directory"])
      if (name === "curl" || name === "wget") return this.transfer(name, args, state)
      if (name === "openssl" || name === "gpg" || name === "age" || name === "ssh-keygen")
        return this.crypto(name, args, state)
      if (name === "split" || name === "csplit") {
        for (const a of this.operands(args)) this.emit(a, "read", name, state)
        return
      }
      if (MODIFIERS.has(name)) {
        const recursive = args.some((a) => /^-[a-zA-Z]*R|^--recursive$/.test(a.raw))
        for (const a of this.operands(args)) {
          this.emit(a, "read", name, state)
          this.emit(a, "write", name, state, { recursive, destructive: true })
        }
        return
      }
      if (READERS.has(name)) {
        const operands = this.operands(args)
        const files =
          FILTER_FIRST.has(name) && !args.some((a) => a.raw === "-f" || a.raw === "--from-file")
            ? operands.slice(1)
            : operands
        if (name === "source" || name === ".") {
          for (const f of files) this.scriptFile(f, state, depth)
        }
        const writes = this.optionValues(args, ["-o", "--output"])
        for (const f of files) if (!writes.includes(f)) this.emit(f, "read", name, state)
        if (name === "sort" || name === "shuf")
          for (const w of writes) this.emit(w, "write", name, state, { destructive: true })
        return
      }
      this.generic(name, args, state)
    }

    private note(text: string) {
      this.out.notes.push(text)
    }

    private cd(args: Word[], state: State) {
      const target = args.find((a) => !a.raw.startsWith("-") || a.raw === "-")
      if (!target) {
        state.cwd = this.home()
        return
      }
      if (target.raw === "-" || target.dynamic || target.values.length !== 1) {
        state.cwd = undefined
        this.note(`cd ${target.raw}: the working directory after it is not known statically`)
        return
      }
      state.cwd =
        state.cwd === undefined && !path.isAbsolute(target.values[0]) ? undefined : this.abs(target.values[0], state)
    }

    private wrapper(name: string, args: Word[], state: State, depth: number, stdin: string | undefined, piped: Word[]) {
      let i = 0
      const takesValue: Record<string, string[]> = {
        sudo: ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
        doas: ["-u", "-C"],
        env: ["-u", "--unset", "-C", "--chdir", "-S"],
        nice: ["-n", "--adjustment"],
        timeout: ["-s", "--signal", "-k", "--kill-after"],
        stdbuf: ["-i", "-o", "-e"],
        ionice: ["-c", "-n", "-p"],
        flock: ["-w", "-E", "-c"],
        watch: ["-n", "-d"],
        taskset: [],
        chroot: [],
      }
      const values = takesValue[name] ?? []
      while (i < args.length) {
        const raw = args[i].raw
        if (name === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(raw)) {
          i++
          continue
        }
        if (name === "env" && (raw === "-C" || raw === "--chdir") && args[i + 1]) {
          const dir = args[i + 1]
          state = { cwd: dir.dynamic ? undefined : this.abs(dir.values[0] ?? ".", state), vars: state.vars }
          i += 2
          continue
        }
        if (raw === "--") {
          i++
          break
        }
        if (raw.startsWith("-")) {
          i += values.includes(raw) ? 2 : 1
          continue
        }
        break
      }
      if (name === "timeout" && i < args.length) i++ // the duration
      if (name === "taskset" && i < args.length) i++ // the mask
      if (name === "chroot" && i < args.length) i++ // the new root
      if (name === "flock" && i < args.length) i++ // the lock file
      const rest = args.slice(i)
      if (!rest.length) return
      const head = rest[0]
      if (head.dynamic) {
        this.note(`${name} runs a command not known statically`)
        return this.generic("(dynamic)", rest.slice(1), state)
      }
      this.run(head.values[0] ?? "", rest.slice(1), state, depth, stdin, piped)
    }

    private xargs(args: Word[], state: State, depth: number, piped: Word[]) {
      let i = 0
      const values = [
        "-I",
        "-i",
        "-n",
        "-L",
        "-l",
        "-P",
        "-s",
        "-d",
        "-E",
        "-e",
        "-a",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--replace",
      ]
      while (i < args.length && args[i].raw.startsWith("-")) {
        const raw = args[i].raw
        if ((raw === "-a" || raw === "--arg-file") && args[i + 1]) this.emit(args[i + 1], "read", "xargs", state)
        i += values.includes(raw) ? 2 : 1
      }
      const rest = args.slice(i)
      const inputs = piped.length ? piped : [this.unknownWord("")]
      if (!rest.length) return
      const head = rest[0]
      if (head.dynamic) return this.note("xargs runs a command not known statically")
      this.run(head.values[0] ?? "", [...rest.slice(1), ...inputs], state, depth, undefined, [])
    }

    private shell(name: string, args: Word[], state: State, depth: number, stdin: string | undefined) {
      const c = args.findIndex((a) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a.raw))
      if (c >= 0) {
        const code = args[c + 1]
        if (!code) return
        if (code.dynamic) return this.note(`${name} -c with text not known statically`)
        return this.script(code.values.join(" "), { cwd: state.cwd, vars: new Map(state.vars) }, depth - 1)
      }
      const operands = args.filter((a) => !a.raw.startsWith("-"))
      if (operands.length) return this.scriptFile(operands[0], state, depth)
      if (stdin !== undefined) this.script(stdin, { cwd: state.cwd, vars: new Map(state.vars) }, depth - 1)
    }

    /** A script run by a shell: read it, and analyse it when it is a small text file. */
    private scriptFile(word: Word, state: State, depth: number) {
      this.emit(word, "read", "script", state)
      if (word.dynamic) return
      for (const value of word.values) {
        const file = this.abs(value, state)
        if (!file) continue
        try {
          const stat = fs.statSync(file)
          if (!stat.isFile() || stat.size > 64 * 1024) continue
          this.script(fs.readFileSync(file, "utf8"), { cwd: state.cwd, vars: new Map() }, depth - 1)
        } catch {
          // Missing or unreadable: nothing more to analyse.
        }
      }
    }

    private interpreter(name: string, args: Word[], state: State, stdin: string | undefined) {
      const codeFlags = [
        "-c",
        "-e",
        "-E",
        "--eval",
        "-p",
        "--print",
        "-r",
        "-x",
        "-ne",
        "-pe",
        "-le",
        "-lne",
        "-lpe",
        "-n",
        "-pi",
        "-i",
      ]
      let code: string | undefined
      let codeIndex = -1
      args.forEach((a, i) => {
        if (code !== undefined) return
        if (codeFlags.includes(a.raw) || /^-[a-zA-Z]*[ceE]$/.test(a.raw)) {
          const next = args[i + 1]
          if (next && !next.raw.startsWith("-")) {
            codeIndex = i + 1
            code = next.dynamic ? undefined : next.values.join(" ")
            if (next.dynamic) this.note(`${name}: inline code not known statically`)
          }
        }
      })
      if (name === "deno" && args[0]?.raw === "eval" && args[1]) {
        codeIndex = 1
        code = args[1].values.join(" ")
      }
      const inPlace = args.some(
        (a) => /^-[a-zA-Z]*i/.test(a.raw) && (name.startsWith("perl") || name.startsWith("ruby")),
      )
      const rest = args.filter((a, i) => i !== codeIndex && !a.raw.startsWith("-"))
      if (code === undefined && codeIndex < 0) {
        // `python script.py args…`: the script is read; other arguments might be anything the script opens.
        const [script, ...more] =
          name === "deno" || name === "bun" ? rest.filter((r) => !["run", "x", "test"].includes(r.raw)) : rest
        if (script) this.emit(script, "read", name, state)
        for (const a of more) this.opaque(a, name, state)
        if (stdin !== undefined) this.literals(stdin, name, state)
        return
      }
      if (code !== undefined) this.literals(code, name, state)
      for (const a of rest) {
        this.emit(a, "read", name, state)
        if (inPlace) this.emit(a, "write", name, state, { destructive: true })
        else this.opaque(a, name, state)
      }
    }

    /** String literals of program text: each could be a file the program opens (read, and write if protected). */
    private literals(code: string, name: string, state: State) {
      const re = /"((?:[^"\\\n]|\\.){1,1024})"|'((?:[^'\\\n]|\\.){1,1024})'|`([^`\n]{1,1024})`/g
      for (let m = re.exec(code); m; m = re.exec(code)) {
        const value = (m[1] ?? m[2] ?? m[3] ?? "").replace(/\\(.)/g, "$1")
        if (!value || /\s{2,}|\n/.test(value) || value.length > 1024) continue
        this.opaque({ values: [value], dynamic: false, prefix: value, raw: value }, name, state)
      }
    }

    private awk(name: string, args: Word[], state: State) {
      let i = 0
      let program: string | undefined
      while (i < args.length) {
        const raw = args[i].raw
        if (raw === "-f" && args[i + 1]) {
          this.emit(args[i + 1], "read", name, state)
          program = ""
          i += 2
          continue
        }
        if (raw === "-v" || raw === "-F") {
          i += 2
          continue
        }
        if (raw.startsWith("-")) {
          i++
          continue
        }
        break
      }
      if (program === undefined && i < args.length) {
        if (!args[i].dynamic) this.literals(args[i].values.join(" "), name, state)
        i++
      }
      for (const a of args.slice(i)) if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(a.raw)) this.emit(a, "read", name, state)
    }

    private git(args: Word[], state: State) {
      let i = 0
      while (i < args.length && args[i].raw.startsWith("-")) {
        if (args[i].raw === "-C" && args[i + 1]) {
          const dir = args[i + 1]
          state = { cwd: dir.dynamic ? undefined : this.abs(dir.values[0] ?? ".", state), vars: state.vars }
          i += 2
          continue
        }
        i += args[i].raw === "-c" ? 2 : 1
      }
      const sub = args[i]?.values[0]
      if (!sub) return
      const rest = args.slice(i + 1)
      const operands = rest.filter((a) => !a.raw.startsWith("-"))
      if (GIT_WRITES.has(sub)) {
        if (GIT_DESTRUCTIVE_WITHOUT_PATHS.has(sub) && !operands.length) {
          this.out.dynamic.push({ prefix: this.dir(state), op: "write", command: `git ${sub}`, destructive: true })
          return
        }
        const dashdash = rest.findIndex((a) => a.raw === "--")
        const paths = dashdash >= 0 ? rest.slice(dashdash + 1) : operands
        for (const a of paths) {
          if (!a.dynamic && a.values.every((v) => !this.exists(this.abs(v, state)) && !v.includes("/"))) continue
          this.emit(a, "write", `git ${sub}`, state, {
            recursive: true,
            destructive: sub !== "add" && sub !== "commit",
          })
        }
        return
      }
      for (const a of operands) {
        for (const v of a.values) {
          // `git show HEAD:secrets/x` names a file in history.
          const colon = v.indexOf(":")
          if (colon > 0 && !v.startsWith("/")) {
            const file = v.slice(colon + 1)
            if (file) this.emit(this.literal(file), "read", `git ${sub}`, state)
          }
        }
        this.emit(a, "read", `git ${sub}`, state)
      }
    }

    private search(name: string, args: Word[], state: State) {
      const explicit = args.some(
        (a) => a.raw === "-e" || a.raw === "-f" || a.raw.startsWith("--regexp") || a.raw === "--file",
      )
      const valueFlags = [
        "-e",
        "-f",
        "--regexp",
        "--file",
        "-m",
        "-A",
        "-B",
        "-C",
        "-g",
        "--glob",
        "-t",
        "-T",
        "--type",
        "--include",
        "--exclude",
        "--exclude-dir",
        "-d",
        "-D",
        "--max-count",
        "--context",
        "--after-context",
        "--before-context",
      ]
      const operands: Word[] = []
      for (let i = 0; i < args.length; i++) {
        const raw = args[i].raw
        if ((raw === "-f" || raw === "--file") && args[i + 1]) this.emit(args[i + 1], "read", name, state)
        if (valueFlags.includes(raw)) {
          i++
          continue
        }
        if (raw.startsWith("-")) continue
        operands.push(args[i])
      }
      for (const a of explicit ? operands : operands.slice(1)) this.emit(a, "read", name, state)
    }

    private sed(args: Word[], state: State) {
      const inPlace = args.some((a) => /^-[a-zA-Z]*i|^--in-place/.test(a.raw))
      const explicit = args.some(
        (a) => a.raw === "-e" || a.raw === "-f" || a.raw.startsWith("--expression") || a.raw === "--file",
      )
      const operands: Word[] = []
      for (let i = 0; i < args.length; i++) {
        const raw = args[i].raw
        if (raw === "-f" || raw === "--file") {
          if (args[i + 1]) this.emit(args[i + 1], "read", "sed", state)
          i++
          continue
        }
        if (raw === "-e" || raw === "--expression" || raw === "-l") {
          i++
          continue
        }
        if (raw.startsWith("-")) continue
        operands.push(args[i])
      }
      const files = explicit ? operands : operands.slice(1)
      for (const f of files) {
        this.emit(f, "read", "sed", state)
        if (inPlace) this.emit(f, "write", "sed", state, { destructive: true })
      }
      // `w file` commands inside the script write files.
      const script = explicit ? undefined : operands[0]
      if (script && !script.dynamic) {
        for (const m of script.values.join("\n").matchAll(/(?:^|[;\n}])\s*\d*\s*w\s+(\S+)/g))
          this.emit({ values: [m[1]], dynamic: false, prefix: m[1], raw: m[1] }, "write", "sed", state, {
            destructive: true,
          })
      }
    }

    private copy(name: string, args: Word[], state: State) {
      const recursive =
        name === "rsync" || name === "scp" || args.some((a) => /^-[a-zA-Z]*[rRa]|^--recursive$|^--archive$/.test(a.raw))
      const target = this.optionValues(args, ["-t", "--target-directory"])
      const operands = this.operands(args, [
        "-t",
        "--target-directory",
        "-S",
        "--suffix",
        "-m",
        "--mode",
        "-o",
        "--owner",
        "-g",
        "--group",
        "-e",
        "--rsh",
        "--exclude",
        "--include",
        "-f",
        "--filter",
      ])
      const remote = (w: Word) => w.values.some((v) => /^[^/]*:/.test(v) && !v.startsWith("./"))
      const sources = target.length ? operands : operands.slice(0, -1)
      const dest = target.length ? target : operands.slice(-1)
      for (const s of sources) if (!remote(s)) this.emit(s, "read", name, state, { recursive })
      for (const d of dest) if (!remote(d)) this.emit(d, "write", name, state, { destructive: true, into: true })
    }

    private move(args: Word[], state: State) {
      const target = this.optionValues(args, ["-t", "--target-directory"])
      const operands = this.operands(args, ["-t", "--target-directory", "-S", "--suffix"])
      const sources = target.length ? operands : operands.slice(0, -1)
      const dest = target.length ? target : operands.slice(-1)
      for (const s of sources) {
        this.emit(s, "read", "mv", state)
        this.emit(s, "write", "mv", state, { recursive: true, destructive: true })
      }
      for (const d of dest) this.emit(d, "write", "mv", state, { destructive: true, into: true })
    }

    private link(name: string, args: Word[], state: State) {
      const operands = this.operands(args, ["-t", "--target-directory", "-S", "--suffix"])
      if (!operands.length) return
      const [target, ...links] = operands
      const symbolic = args.some((a) => /^-[a-zA-Z]*s/.test(a.raw) || a.raw === "--symbolic")
      const linkPath = links[0] && !links[0].dynamic ? this.abs(links[0].values[0] ?? "", state) : undefined
      // A symbolic link's target is relative to the folder of the link, not to the working directory.
      const base =
        symbolic && linkPath && !target.values.some((v) => path.isAbsolute(v))
          ? this.isDir(linkPath)
            ? linkPath
            : path.dirname(linkPath)
          : state.cwd
      this.emit(target, "read", name, { cwd: base, vars: state.vars })
      if (links.length) for (const l of links) this.emit(l, "write", name, state, { destructive: true, into: true })
      else if (!target.dynamic)
        for (const v of target.values)
          this.emit({ values: [path.basename(v)], dynamic: false, prefix: "", raw: v }, "write", name, state, {
            destructive: true,
          })
    }

    private find(args: Word[], state: State, depth: number) {
      let i = 0
      while (i < args.length && ["-H", "-L", "-P"].includes(args[i].raw)) i++
      const starts: Word[] = []
      while (i < args.length && !/^[-(!]/.test(args[i].raw)) starts.push(args[i++])
      if (!starts.length) starts.push({ values: ["."], dynamic: false, prefix: ".", raw: "." })
      for (const s of starts) this.emit(s, "read", "find", state)
      const expr = args.slice(i)
      const destructive = expr.some((a) => a.raw === "-delete")
      for (let j = 0; j < expr.length; j++) {
        const raw = expr[j].raw
        if (["-fprint", "-fprint0", "-fprintf", "-fls"].includes(raw) && expr[j + 1])
          this.emit(expr[j + 1], "write", "find", state, { destructive: true })
        if (!["-exec", "-execdir", "-ok", "-okdir"].includes(raw)) continue
        let k = j + 1
        const inner: Word[] = []
        while (k < expr.length && expr[k].raw !== ";" && expr[k].raw !== "\\;" && expr[k].raw !== "+")
          inner.push(expr[k++])
        j = k
        if (!inner.length || inner[0].dynamic) continue
        const found = starts.map((s) =>
          s.dynamic ? this.unknownWord(s.prefix) : this.unknownWord(this.abs(s.values[0] ?? ".", state) + "/"),
        )
        const replaced = inner.slice(1).flatMap((w) => (w.raw.includes("{}") ? found : [w]))
        this.run(inner[0].values[0] ?? "", replaced, state, depth, undefined, [])
      }
      if (destructive)
        for (const s of starts) this.emit(s, "write", "find -delete", state, { recursive: true, destructive: true })
    }

    private dd(args: Word[], state: State) {
      for (const a of args) {
        for (const v of a.values) {
          if (v.startsWith("if=")) this.emit(this.literal(v.slice(3)), "read", "dd", state)
          if (v.startsWith("of=")) this.emit(this.literal(v.slice(3)), "write", "dd", state, { destructive: true })
        }
      }
    }

    private tar(name: string, args: Word[], state: State) {
      const first = args[0]?.raw ?? ""
      const flags =
        args
          .filter((a) => a.raw.startsWith("-"))
          .map((a) => a.raw)
          .join("") + (first.startsWith("-") ? "" : first)
      const create = /[cru]|--create|--append|--update/.test(flags)
      const extract = /x|--extract|--get/.test(flags)
      const archive = this.optionValues(args, ["-f", "--file"])
      const attached = args.find((a) => /^-?[a-zA-Z]*f$/.test(a.raw) && !a.raw.startsWith("--"))
      if (!archive.length && attached) {
        const idx = args.indexOf(attached)
        if (args[idx + 1]) archive.push(args[idx + 1])
      }
      const dirOption = this.optionValues(args, ["-C", "--directory"])
      const skip = new Set([...archive, ...dirOption])
      const operands = args.slice(first.startsWith("-") ? 0 : 1).filter((a) => !a.raw.startsWith("-") && !skip.has(a))
      for (const a of archive)
        if (!a.values.includes("-")) this.emit(a, create ? "write" : "read", name, state, { destructive: create })
      if (create) for (const o of operands) this.emit(o, "read", name, state, { recursive: true })
      if (extract) {
        const where = dirOption.length ? dirOption : [this.literal(".")]
        for (const d of where) this.emit(d, "write", `${name} -x`, state, { recursive: true, destructive: true })
      }
    }

    private zip(name: string, args: Word[], state: State) {
      const operands = this.operands(args, ["-x", "-i", "-P", "--password"])
      if (name !== "zip") {
        const [, archive, ...files] = operands
        if (archive) this.emit(archive, "write", name, state, { destructive: true })
        for (const f of files) this.emit(f, "read", name, state, { recursive: true })
        return
      }
      const [archive, ...files] = operands
      if (archive) this.emit(archive, "write", name, state, { destructive: true })
      for (const f of files) this.emit(f, "read", name, state, { recursive: true })
    }

    private unzip(args: Word[], state: State) {
      const dir = this.optionValues(args, ["-d"])
      const operands = this.operands(args, ["-d", "-x", "-P"])
      if (operands[0]) this.emit(operands[0], "read", "unzip", state)
      const listing = args.some((a) => /^-[a-zA-Z]*[lvtpc]/.test(a.raw))
      if (listing) return
      for (const d of dir.length ? dir : [this.literal(".")])
        this.emit(d, "write", "unzip", state, { recursive: true, destructive: true })
    }

    private destructiveCwd(name: string, args: Word[], state: State, dirFlags: string[]) {
      const dirs = this.optionValues(args, dirFlags)
      const input = this.optionValues(args, ["-i", "--input"])
      for (const i of input) this.emit(i, "read", name, state)
      const explicit = this.operands(args, [
        ...dirFlags,
        "-i",
        "--input",
        "-p",
        "-o",
        "--output",
        "-r",
        "-F",
        "-z",
        "-B",
        "-V",
      ])
      if (explicit.length) {
        for (const e of explicit) this.emit(e, "write", name, state, { destructive: true })
        return
      }
      for (const d of dirs.length ? dirs : [this.literal(".")])
        this.emit(d, "write", name, state, { recursive: true, destructive: true })
    }

    private transfer(name: string, args: Word[], state: State) {
      const reads = [
        "-T",
        "--upload-file",
        "-K",
        "--config",
        "--post-file",
        "--body-file",
        "-i",
        "--input-file",
        "--cacert",
        "--cert",
        "--key",
      ]
      const writes = [
        "-o",
        "--output",
        "-O",
        "--output-document",
        "-D",
        "--dump-header",
        "-c",
        "--cookie-jar",
        "--trace",
        "--trace-ascii",
        "-a",
        "--append-output",
      ]
      for (let i = 0; i < args.length; i++) {
        const raw = args[i].raw
        const next = args[i + 1]
        const eq = raw.indexOf("=")
        const flag = raw.startsWith("--") && eq > 0 ? raw.slice(0, eq) : raw
        const value = raw.startsWith("--") && eq > 0 ? this.literal(raw.slice(eq + 1)) : next
        if (
          ["-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "-F", "--form", "--json"].includes(
            flag,
          ) &&
          value
        ) {
          for (const v of value.values) {
            const at = v.indexOf("@")
            if (at >= 0 && (at === 0 || flag === "-F" || flag === "--form" || flag === "--data-urlencode")) {
              const file = v.slice(at + 1).split(";")[0]
              if (file && file !== "-") this.emit(this.literal(file), "read", name, state)
            }
          }
        }
        if (reads.includes(flag) && value) this.emit(value, "read", name, state)
        if (writes.includes(flag) && value && !(name === "wget" && flag === "-O" && value.raw === "-"))
          this.emit(value, "write", name, state, { destructive: true })
        if (!raw.startsWith("-"))
          for (const v of args[i].values) if (v.startsWith("file://")) this.emit(this.literal(v), "read", name, state)
      }
    }

    private crypto(name: string, args: Word[], state: State) {
      const reads = [
        "-in",
        "-inkey",
        "-key",
        "-signkey",
        "-kfile",
        "-pass",
        "-CAfile",
        "-cert",
        "--recipient-file",
        "-i",
        "-f",
      ]
      const writes = ["-out", "-o", "--output", "-keyout"]
      for (let i = 0; i < args.length; i++) {
        const raw = args[i].raw
        if (reads.includes(raw) && args[i + 1]) this.emit(args[i + 1], "read", name, state)
        if (writes.includes(raw) && args[i + 1]) this.emit(args[i + 1], "write", name, state, { destructive: true })
      }
      for (const a of this.operands(args, [
        ...reads,
        ...writes,
        "-r",
        "--recipient",
        "-u",
        "--local-user",
        "-passin",
        "-passout",
        "-t",
        "-b",
        "-C",
        "-N",
      ])) {
        if (!/^[a-z0-9]+$/.test(a.raw)) this.emit(a, "read", name, state)
      }
    }

    /** Unknown commands: arguments that name existing paths are read; any naming a protected path might be written. */
    private generic(name: string, args: Word[], state: State) {
      for (const a of args) {
        if (a.raw.startsWith("-")) {
          const eq = a.raw.indexOf("=")
          if (eq > 0 && !a.dynamic)
            for (const v of a.values) this.opaque(this.literal(v.slice(v.indexOf("=") + 1)), name, state)
          continue
        }
        this.opaque(a, name, state)
      }
    }

    /** An argument whose role is unknown: read when it exists, and possibly written. */
    private opaque(word: Word, name: string, state: State) {
      if (word.dynamic) {
        this.out.dynamic.push({ prefix: this.prefixOf(word, state), op: "read", command: name, destructive: false })
        return
      }
      for (const v of word.values) {
        if (!v || v.length > 1024 || v.includes("\n")) continue
        const abs = this.abs(v.startsWith("file://") ? v : v, state)
        if (!abs) continue
        if (this.exists(abs)) this.push({ path: abs, op: "read", command: name })
        this.push({ path: abs, op: "write", command: name, opaque: true })
      }
    }

    private push(access: Access & { opaque?: boolean }) {
      this.out.accesses.push(access)
    }

    private literal(value: string): Word {
      return { values: [value], dynamic: false, prefix: value, raw: value }
    }

    private isDir(abs: string) {
      try {
        return fs.statSync(abs).isDirectory()
      } catch {
        return false
      }
    }

    private exists(abs: string | undefined) {
      if (!abs) return false
      try {
        fs.lstatSync(abs)
        return true
      } catch {
        return false
      }
    }

    /** The operands of a command: arguments that are not options (and not values of `valueFlags`). */
    private operands(args: Word[], valueFlags: string[] = []): Word[] {
      const out: Word[] = []
      let dashdash = false
      for (let i = 0; i < args.length; i++) {
        const raw = args[i].raw
        if (!dashdash && raw === "--") {
          dashdash = true
          continue
        }
        if (!dashdash && valueFlags.includes(raw)) {
          i++
          continue
        }
        if (!dashdash && raw.startsWith("-") && raw !== "-") {
          const eq = raw.indexOf("=")
          if (eq > 0) out.push(this.literal(raw.slice(eq + 1)))
          continue
        }
        if (raw === "-") continue
        out.push(args[i])
      }
      return out
    }

    private optionValues(args: Word[], flags: string[]): Word[] {
      const out: Word[] = []
      for (let i = 0; i < args.length; i++) {
        const raw = args[i].raw
        if (flags.includes(raw) && args[i + 1]) out.push(args[i + 1])
        for (const f of flags)
          if (f.startsWith("--") && raw.startsWith(f + "=")) out.push(this.literal(raw.slice(f.length + 1)))
      }
      return out
    }

    private dir(state: State): string {
      return state.cwd === undefined ? "" : state.cwd.endsWith("/") ? state.cwd : state.cwd + "/"
    }

    /** Absolute path of a literal in the current folder, or undefined when the folder is not known. */
    private abs(value: string, state: State): string | undefined {
      if (value.startsWith("file://")) {
        try {
          return decodeURIComponent(new URL(value).pathname)
        } catch {
          return undefined
        }
      }
      if (value === "~" || value.startsWith("~/")) return path.join(this.home(), value.slice(1))
      if (path.isAbsolute(value)) return path.resolve(value)
      if (state.cwd === undefined) return undefined
      return path.resolve(state.cwd, value)
    }

    private prefixOf(word: Word, state: State): string {
      if (word.raw === "$(…)" || (word.dynamic && path.isAbsolute(word.prefix))) return word.prefix
      if (state.cwd === undefined) return path.isAbsolute(word.prefix) ? word.prefix : ""
      if (word.prefix.startsWith("~/")) return path.join(this.home(), word.prefix.slice(2))
      const joined = path.join(state.cwd, word.prefix)
      return word.prefix === "" || word.prefix.endsWith("/") ? joined.replace(/\/?$/, "/") : joined
    }

    private emit(
      word: Word,
      op: Op,
      command: string,
      state: State,
      options: { recursive?: boolean; destructive?: boolean; into?: boolean } = {},
    ) {
      if (word.dynamic) {
        this.out.dynamic.push({ prefix: this.prefixOf(word, state), op, command, destructive: !!options.destructive })
        return
      }
      for (const v of word.values) {
        if (!v || v === "-" || /^\/dev\/(null|stdin|stdout|stderr|tty|zero|u?random|fd\/\d+)$/.test(v)) continue
        const abs = this.abs(v, state)
        if (!abs) {
          this.out.dynamic.push({ prefix: "", op, command, destructive: !!options.destructive })
          continue
        }
        this.push({ path: abs, op, command, recursive: options.recursive })
        if (options.into) {
          // Copying or moving into an existing folder writes a file of the source's name inside it.
          try {
            if (fs.statSync(abs).isDirectory())
              this.out.dynamic.push({ prefix: abs.endsWith("/") ? abs : abs + "/", op, command, destructive: true })
          } catch {
            // Not an existing folder.
          }
        }
      }
    }

    private redirect(node: Node, state: State, depth: number) {
      if (node.type === "heredoc_redirect" || node.type === "herestring_redirect") {
        this.substitutions(node, state, depth)
        return
      }
      if (node.type !== "file_redirect") return
      const destination = node.childForFieldName("destination")
      if (!destination) return
      let operator = ""
      for (let i = 0; i < node.childCount; i++) {
        const c = node.child(i)
        if (c && !c.isNamed) operator += c.type
      }
      if (/&$/.test(operator) || operator === ">&" || operator === "<&") {
        // Descriptor duplication (`2>&1`, `<&3`) touches no file; `>&file` does.
        if (/^\d+$|^-$/.test(destination.text)) return
      }
      this.substitutions(node, state, depth)
      const word = this.word(destination, state, true)
      const reads = operator.includes("<")
      const writes = operator.includes(">")
      if (reads) this.emit(word, "read", "redirect", state)
      if (writes) this.emit(word, "write", "redirect", state, { destructive: true })
    }

    /** Evaluates a word node: quotes removed, known variables substituted, braces and globs expanded. */
    private word(node: Node, state: State, expand: boolean): Word {
      const parts = this.parts(node, state)
      let text = ""
      let prefix = ""
      let dynamic = false
      let expandable = false
      for (const part of parts) {
        if (part.dynamic) {
          if (!dynamic) prefix = text
          dynamic = true
          continue
        }
        text += part.text
        if (!part.quoted && /[*?[{]/.test(part.text)) expandable = true
      }
      if (dynamic) return { values: [], dynamic: true, prefix, raw: node.text }
      if (parts.length && !parts[0].quoted && (text === "~" || text.startsWith("~/")))
        text = path.join(this.home(), text.slice(1))
      let values = [text]
      if (expand && expandable) {
        values = braces(text)
        values = values.flatMap((v) => (/[*?[]/.test(v) ? this.glob(v, state) : [v]))
      }
      return { values, dynamic: false, prefix: text, raw: node.text }
    }

    private parts(node: Node, state: State): { text: string; quoted: boolean; dynamic: boolean }[] {
      switch (node.type) {
        case "word":
        case "command_name":
        case "number":
        case "variable_name":
          if (node.type === "command_name" && node.namedChildren[0]) return this.parts(node.namedChildren[0], state)
          return [{ text: node.text.replace(/\\(.)/gs, "$1"), quoted: false, dynamic: false }]
        case "raw_string":
          return [{ text: node.text.slice(1, -1), quoted: true, dynamic: false }]
        case "ansi_c_string":
          return [{ text: ansiC(node.text.slice(2, -1)), quoted: true, dynamic: false }]
        case "string": {
          const out: { text: string; quoted: boolean; dynamic: boolean }[] = []
          for (const child of node.namedChildren) {
            if (!child) continue
            if (child.type === "string_content")
              out.push({ text: child.text.replace(/\\([$`"\\\n])/g, "$1"), quoted: true, dynamic: false })
            else out.push(...this.parts(child, state).map((p) => ({ ...p, quoted: true })))
          }
          if (!node.namedChildren.length) out.push({ text: "", quoted: true, dynamic: false })
          return out
        }
        case "concatenation":
          return node.namedChildren.flatMap((c) => (c ? this.parts(c, state) : []))
        case "simple_expansion":
        case "expansion": {
          const inner = node.namedChildren
          const name = inner[0]?.type === "variable_name" ? inner[0].text : undefined
          if (!name || inner.length > 1) return [{ text: "", quoted: false, dynamic: true }]
          const value = this.variable(name, state)
          return value === undefined
            ? [{ text: "", quoted: false, dynamic: true }]
            : [{ text: value, quoted: true, dynamic: false }]
        }
        case "command_substitution": {
          const literal = echoed(node)
          if (literal !== undefined) return [{ text: literal, quoted: true, dynamic: false }]
          return [{ text: "", quoted: false, dynamic: true }]
        }
        default:
          return [{ text: "", quoted: false, dynamic: true }]
      }
    }

    private variable(name: string, state: State): string | undefined {
      if (state.vars.has(name)) return state.vars.get(name)
      if (name === "HOME") return this.home()
      if (name === "PWD") return state.cwd
      if (["TMPDIR", "USER", "LOGNAME", "SHELL"].includes(name)) return this.options.env?.[name]
      return undefined
    }

    private glob(pattern: string, state: State): string[] {
      const absolute = path.isAbsolute(pattern)
      const cwd = absolute ? "/" : state.cwd
      if (!cwd) return [pattern]
      try {
        const glob = new Bun.Glob(absolute ? pattern.slice(1) : pattern)
        const found: string[] = []
        // Like bash: `*` skips dot files unless the pattern's own segment starts with a dot.
        const dot = pattern.split("/").some((segment) => segment.startsWith("."))
        for (const f of glob.scanSync({ cwd, dot, onlyFiles: false, followSymlinks: false })) {
          found.push(absolute ? "/" + f : f)
          if (found.length >= 1000) {
            this.note(`${pattern}: more than 1000 matches; analysed the first 1000`)
            break
          }
        }
        return found.length ? found : [pattern]
      } catch {
        return [pattern]
      }
    }
  }

  /** `$(echo x)` / `$(printf x)` with literal arguments: the text they print, else undefined. */
  function echoed(node: Node): string | undefined {
    const inner = node.namedChildren.filter((c): c is Node => !!c)
    if (inner.length !== 1 || inner[0].type !== "command") return undefined
    const cmd = inner[0]
    const name = cmd.childForFieldName("name")?.text
    if (name !== "echo" && name !== "printf") return undefined
    const args = cmd.childrenForFieldName("argument").filter((a): a is Node => !!a)
    const texts: string[] = []
    for (const a of args) {
      if (!["word", "raw_string", "string", "number", "concatenation"].includes(a.type)) return undefined
      if (a.type === "string" && a.namedChildren.some((c) => c && c.type !== "string_content")) return undefined
      if (
        a.type === "concatenation" &&
        a.namedChildren.some((c) => c && !["word", "raw_string", "string"].includes(c.type))
      )
        return undefined
      const t = a.text
        .replace(/^'(.*)'$/s, "$1")
        .replace(/^"(.*)"$/s, "$1")
        .replace(/['"]/g, "")
      if (name === "echo" && texts.length === 0 && /^-[neE]+$/.test(t)) continue
      texts.push(t)
    }
    if (name === "printf") {
      const [format, ...rest] = texts
      if (format === undefined) return ""
      if (!format.includes("%")) return format.replace(/\\n/g, "\n")
      if (/^%s(\\n)?$/.test(format)) return rest.join("")
      return undefined
    }
    return texts.join(" ")
  }

  /** Decodes the escapes of a `$'…'` string. */
  function ansiC(s: string): string {
    return s.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)/g, (_, e: string) => {
      if (e[0] === "x" || e[0] === "u" || e[0] === "U") return String.fromCodePoint(parseInt(e.slice(1), 16))
      if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8))
      return (
        ({ n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", f: "\f", v: "\v" } as Record<string, string>)[e] ??
        e
      )
    })
  }

  /** Bash brace expansion (`a{b,c}d`, `{1..3}`), bounded to 256 results. */
  export function braces(text: string): string[] {
    const out: string[] = []
    const expand = (s: string) => {
      if (out.length >= 256) return
      let depth = 0
      let open = -1
      for (let i = 0; i < s.length; i++) {
        if (s[i] === "\\") {
          i++
          continue
        }
        if (s[i] === "{") {
          if (depth++ === 0) open = i
        } else if (s[i] === "}" && depth > 0 && --depth === 0) {
          const body = s.slice(open + 1, i)
          const pre = s.slice(0, open)
          const post = s.slice(i + 1)
          const range = /^(-?\d+)\.\.(-?\d+)$/.exec(body) ?? /^([a-zA-Z])\.\.([a-zA-Z])$/.exec(body)
          if (range) {
            const numeric = /\d/.test(range[1])
            const a = numeric ? Number(range[1]) : range[1].charCodeAt(0)
            const b = numeric ? Number(range[2]) : range[2].charCodeAt(0)
            const step = a <= b ? 1 : -1
            for (let v = a; step > 0 ? v <= b : v >= b; v += step) {
              expand(pre + (numeric ? String(v) : String.fromCharCode(v)) + post)
              if (out.length >= 256) return
            }
            return
          }
          const items: string[] = []
          let d = 0
          let last = 0
          for (let j = 0; j < body.length; j++) {
            if (body[j] === "{") d++
            else if (body[j] === "}") d--
            else if (body[j] === "," && d === 0) {
              items.push(body.slice(last, j))
              last = j + 1
            }
          }
          items.push(body.slice(last))
          if (items.length < 2) continue
          for (const item of items) expand(pre + item + post)
          return
        }
      }
      out.push(s)
    }
    expand(text)
    return out
  }
}
