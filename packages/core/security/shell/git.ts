import fs from "fs"
import path from "path"
import { ShellCommands } from "./commands"
import { ShellContext } from "./context"
import { ShellParse } from "./parse"

/**
 * `git` read statically: which work-tree files a subcommand reads or writes, and — the part no kernel rule covers —
 * which invocations print or export file content from the object store (`show rev:path`, `cat-file -p`, `log -p`,
 * `diff --cached`, `archive`, `grep --cached`, `blame`, `format-patch`, `bundle`, `clone` of a local repository, …),
 * reported as `objects` with the paths they are restricted to. Global options (`-C`, `-c`, `--git-dir`,
 * `--work-tree`), `GIT_DIR=`-style environment, aliases (from `-c alias.x=…`, an earlier `git config alias.x …` in the
 * same command, or the repository's and user's config files) and commands git runs for you (`!` aliases,
 * `core.pager`, `diff.external`, `rebase --exec`, `submodule foreach`, `filter-branch` filters) are followed.
 *
 * @example
 * // git show HEAD:secrets/x in /r (a repository):
 * // objects: [{ cwd: "/r", command: "git show", pathspecs: ["/r/secrets/x"], all: false }]
 */
export namespace ShellGit {
  type Word = ShellContext.Word
  const list = ShellContext.list
  type State = ShellContext.State
  type Context = ShellContext.Context
  type Call = ShellCommands.Call

  /** One git invocation after its global options. */
  type Git = {
    c: Call
    /** The working directory git runs in (after `-C`); undefined when not known. */
    state: State
    sub: string
    /** Arguments after the subcommand. */
    args: Word[]
    config: Map<string, string>
    gitDir?: string
    workTree?: string
    /** The repository's location is not known statically (`GIT_DIR=$X`, `--git-dir=$X`). */
    unknownRepo?: boolean
    literal: boolean
    /** Aliases already expanded (loops end). */
    seen: Set<string>
  }

  /**
   * Reads one `git …` command.
   *
   * @example
   * ShellGit.run({ ctx, name: "git", args: words("log -p -- src"), state, depth: 4 }) // objects restricted to /r/src
   */
  export function run(c: Call) {
    invoke(c, c.args, c.state, new Set())
  }

  function invoke(c: Call, args: Word[], start: State, seen: Set<string>) {
    const { ctx } = c
    let state = start
    const config = new Map<string, string>()
    let gitDir = literalVar(start, "GIT_DIR")
    let workTree = literalVar(start, "GIT_WORK_TREE")
    let unknownRepo = start.vars.has("GIT_DIR") && gitDir === undefined
    let literal = start.vars.get("GIT_LITERAL_PATHSPECS") === "1"
    for (const key of ["GIT_PAGER", "GIT_EXTERNAL_DIFF", "GIT_EDITOR", "GIT_SSH_COMMAND", "GIT_ASKPASS"]) {
      const v = literalVar(start, key)
      if (v) runs(c, v, state)
    }
    const count = Number(literalVar(start, "GIT_CONFIG_COUNT") ?? 0)
    for (let k = 0; k < Math.min(count, 64); k++) {
      const key = literalVar(start, `GIT_CONFIG_KEY_${k}`)
      const value = literalVar(start, `GIT_CONFIG_VALUE_${k}`)
      if (key && value !== undefined) setConfig(c, config, key, value, state)
    }
    let i = 0
    const value = (flag: string): Word | undefined => {
      const raw = args[i].raw
      if (raw.startsWith(flag + "=")) return ShellContext.literal(raw.slice(flag.length + 1))
      return args[++i]
    }
    for (; i < args.length && args[i].raw.startsWith("-"); i++) {
      const raw = args[i].raw
      if (raw === "-C") {
        const dir = args[++i]
        state = {
          cwd: !dir || dir.dynamic ? undefined : ShellContext.abs(ctx, dir.values[0] ?? ".", state, true),
          vars: state.vars,
        }
      } else if (raw === "-c") {
        const kv = args[++i]
        if (kv && !kv.dynamic) {
          const text = kv.values[0] ?? ""
          const eq = text.indexOf("=")
          setConfig(c, config, eq < 0 ? text : text.slice(0, eq), eq < 0 ? "true" : text.slice(eq + 1), state)
        }
      } else if (raw === "--git-dir" || raw.startsWith("--git-dir=")) {
        const w = value("--git-dir")
        gitDir = w && !w.dynamic ? w.values[0] : undefined
        unknownRepo = gitDir === undefined
      } else if (raw === "--work-tree" || raw.startsWith("--work-tree=")) {
        const w = value("--work-tree")
        workTree = w && !w.dynamic ? w.values[0] : ""
      } else if (raw === "--literal-pathspecs") literal = true
      else if (raw === "--namespace" || raw === "--config-env") i++
    }
    const head = args[i]
    if (!head) return
    const g: Git = {
      c,
      state,
      sub: head.values[0] ?? "",
      args: args.slice(i + 1),
      config,
      gitDir: gitDir === undefined ? undefined : (ShellContext.abs(ctx, gitDir, state) ?? ""),
      workTree: workTree === undefined ? undefined : workTree && (ShellContext.abs(ctx, workTree, state) ?? ""),
      unknownRepo,
      literal,
      seen,
    }
    if (head.dynamic) {
      ShellContext.anything(ctx, "git", "git runs a subcommand not known statically")
      return objects(g, "all")
    }
    ctx.out.gits.push({
      cwd: state.cwd ?? "",
      sub: g.sub,
      args: g.args.map((a) => (a.dynamic ? a.raw : (a.values[0] ?? a.raw))),
    })
    // Naming a repository's folder reads it, like naming any folder.
    if (g.gitDir) ShellContext.emit(ctx, ShellContext.literal(g.gitDir), "read", `git ${g.sub}`, state)
    if (g.workTree !== undefined)
      ShellContext.emit(ctx, ShellContext.literal(g.workTree || "/"), "read", `git ${g.sub}`, state)
    const sub = SUBCOMMANDS[g.sub]
    if (sub) return sub.custom ? sub.custom(g) : apply(g, sub)
    if (BUILTIN.has(g.sub)) return
    if (alias(g)) return
    // `git foo` runs `git-foo`, a program git does not know.
    ShellCommands.generic({ ...c, name: `git-${g.sub}`, args: g.args, state })
  }

  /** The value of a variable when it is a literal. */
  function literalVar(state: State, name: string): string | undefined {
    const v = state.vars.get(name)
    return typeof v === "string" ? v : undefined
  }

  /** Config entries that make git run a command: the command is read as if it ran now. */
  const RUNS_COMMAND = new RegExp(
    "^(?:" +
      list(`core\\.(?:pager|editor|sshcommand|fsmonitor|askpass) diff\\.external gpg\\.program credential\\.helper
        (?:diff|filter|merge)\\..+\\.(?:command|textconv|clean|smudge|process|driver) sequence\\.editor pager\\..+
        interactive\\.difffilter`).join("|") +
      ")$",
  )

  /** One config entry: for this invocation (`-c`, `GIT_CONFIG_*`), or stored for later ones (`git config`). */
  function setConfig(c: Call, config: Map<string, string>, key: string, value: string, state: State, stored = false) {
    const k = key.toLowerCase()
    config.set(k, value)
    if (stored && k.startsWith("alias.")) c.ctx.git.aliases.set(key.slice(6), value)
    else if (RUNS_COMMAND.test(k) && value && value !== "true" && value !== "false") runs(c, value, state)
  }

  function runs(c: Call, text: string, state: State) {
    ShellParse.script(c.ctx, text.replace(/^!/, ""), ShellContext.fork(state), c.depth - 1)
  }

  /** `git x …` where x is an alias: `!cmd` runs a shell command, anything else is git arguments. */
  function alias(g: Git): boolean {
    if (g.seen.has(g.sub)) return false
    const value = g.config.get(`alias.${g.sub.toLowerCase()}`) ?? g.c.ctx.git.aliases.get(g.sub) ?? configured(g, g.sub)
    if (value === undefined) return false
    const seen = new Set([...g.seen, g.sub])
    if (value.startsWith("!")) {
      // git runs `sh -c '<alias> "$@"' <alias> args…`.
      runs(g.c, `${value.slice(1)} ${g.args.map((a) => a.raw).join(" ")}`, g.state)
      return true
    }
    const words = split(value).map(ShellContext.literal)
    invoke(g.c, [...words, ...g.args], g.state, seen)
    return true
  }

  /** An alias defined in the repository's or the user's git config files. */
  function configured(g: Git, name: string): string | undefined {
    const home = ShellContext.home(g.c.ctx, g.state)
    const dir = g.gitDir ?? gitDirOf(g)
    const files = [
      ...(dir ? [path.join(dir, "config")] : []),
      path.join(home, ".gitconfig"),
      path.join(g.c.ctx.options.env?.XDG_CONFIG_HOME ?? path.join(home, ".config"), "git", "config"),
    ]
    for (const file of files) {
      let text: string
      try {
        if (fs.statSync(file).size > 1024 * 1024) continue
        text = fs.readFileSync(file, "utf8")
      } catch {
        continue
      }
      let section = ""
      for (const line of text.split(/\r?\n/)) {
        const header = /^\s*\[\s*([^\]\s"]+)/.exec(line)
        if (header) section = header[1].toLowerCase()
        // The value is trimmed in code: `\s*(.*?)\s*$` retried every split of a long blank run (cubic).
        const entry = /^\s*([A-Za-z0-9-]+)\s*=(.*)$/s.exec(line)
        if (section === "alias" && entry && entry[1].toLowerCase() === name.toLowerCase())
          return entry[2]
            .trim()
            .replace(/^"(.*)"$/s, "$1")
            .replace(/\\"/g, '"')
      }
    }
    return undefined
  }

  /** Splits an alias like git does: on spaces, with quotes. */
  function split(text: string): string[] {
    const out: string[] = []
    for (const m of text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3])
    return out
  }

  /** The repository's `.git` (found from the working directory upwards), undefined when none. */
  function gitDirOf(g: Git): string | undefined {
    const top = toplevel(g)
    return top === undefined ? undefined : path.join(top, ".git")
  }

  /** The top of the work tree: from `--work-tree`, `--git-dir=…/.git`, or the folder holding `.git` above cwd. */
  function toplevel(g: Git): string | undefined {
    if (g.workTree) return g.workTree
    if (g.gitDir) return path.basename(g.gitDir) === ".git" ? path.dirname(g.gitDir) : undefined
    if (g.unknownRepo) return undefined
    return top(g.state.cwd)
  }

  function top(cwd: string | undefined): string | undefined {
    if (cwd === undefined) return undefined
    for (let d = cwd; ; d = path.dirname(d)) {
      if (ShellContext.exists(path.join(d, ".git"))) return d
      if (d === path.dirname(d)) return undefined
    }
  }

  /**
   * Reports content printed or exported from the object store: restricted to `paths` (absolute), or "all".
   * The entry's `cwd` is "" when the repository is not known statically.
   */
  function objects(g: Git, paths: string[] | "all", cwd = g.state.cwd) {
    const entry: { cwd: string; command: string; pathspecs?: string[]; all: boolean; gitDir?: string } = {
      cwd: g.unknownRepo ? "" : (cwd ?? ""),
      command: `git ${g.sub}`,
      all: paths === "all",
    }
    if (paths !== "all") entry.pathspecs = [...new Set(paths)]
    if (g.gitDir !== undefined) entry.gitDir = g.gitDir
    g.c.ctx.out.objects.push(entry)
  }

  /** Parsed arguments of a subcommand. */
  type Args = { operands: Word[]; paths: Word[]; flags: string[]; values: Map<string, Word[]>; dashdash: boolean }

  /** Splits a subcommand's arguments: `values` take the next argument (or `=value`, or attached after a short flag). */
  function parse(args: Word[], values: string[]): Args {
    const out: Args = { operands: [], paths: [], flags: [], values: new Map(), dashdash: false }
    const record = (flag: string, w: Word | undefined) => {
      if (!w) return
      out.values.set(flag, [...(out.values.get(flag) ?? []), w])
    }
    for (let i = 0; i < args.length; i++) {
      const raw = args[i].raw
      if (out.dashdash) {
        out.paths.push(args[i])
        continue
      }
      if (raw === "--") {
        out.dashdash = true
        continue
      }
      if (!raw.startsWith("-") || raw === "-") {
        out.operands.push(args[i])
        continue
      }
      out.flags.push(raw)
      const eq = raw.indexOf("=")
      if (raw.startsWith("--") && eq > 0) {
        record(raw.slice(0, eq), ShellContext.literal(raw.slice(eq + 1)))
        continue
      }
      if (values.includes(raw)) {
        record(raw, args[++i])
        continue
      }
      if (!raw.startsWith("--") && raw.length > 2 && values.includes(raw.slice(0, 2)))
        record(raw.slice(0, 2), ShellContext.literal(raw.slice(2)))
    }
    return out
  }

  const has = (a: Args, re: RegExp) => a.flags.some((f) => re.test(f))
  const given = (a: Args, ...flags: string[]) => flags.flatMap((f) => a.values.get(f) ?? [])

  /** An operand before `--` that names an existing file (git takes it as a path); the rest are revisions. */
  function splitRevisions(g: Git, a: Args): { revisions: Word[]; paths: Word[] } {
    if (a.dashdash) return { revisions: a.operands, paths: a.paths }
    const revisions: Word[] = []
    const paths: Word[] = []
    for (const w of a.operands) {
      if (
        !w.dynamic &&
        w.values.length &&
        w.values.every((v) => ShellContext.exists(ShellContext.abs(g.c.ctx, v, g.state)))
      )
        paths.push(w)
      else revisions.push(w)
    }
    return { revisions, paths }
  }

  /** Absolute paths of pathspecs (relative to cwd, `:/`/`:(top)` to the top); "all" when one cannot be bounded. */
  function pathspecs(g: Git, words: Word[]): string[] | "all" {
    const out: string[] = []
    let excludes = 0
    for (const w of words) {
      if (w.dynamic) return "all"
      for (let v of w.values) {
        let base = g.state.cwd
        let literal = g.literal
        const magic = /^:\(([^)]*)\)|^:([/!^]+)/.exec(v)
        if (magic) {
          const words = (magic[1] ?? "").split(",")
          const short = magic[2] ?? ""
          if (words.includes("exclude") || short.includes("!") || short.includes("^")) {
            excludes++
            continue
          }
          if (words.includes("glob") || words.includes("icase") || words.some((m) => m.startsWith("attr"))) return "all"
          if (words.includes("literal")) literal = true
          if (words.includes("top") || short.includes("/")) base = toplevel(g)
          v = v.slice(magic[0].length)
        }
        if (!literal && /[*?[]/.test(v)) return "all"
        if (base === undefined) return "all"
        const abs = ShellContext.abs(g.c.ctx, v || ".", { cwd: base, vars: g.state.vars })
        if (!abs) return "all"
        out.push(abs)
      }
    }
    return out.length ? out : excludes || !words.length ? "all" : out
  }

  /** `rev:path`, `:path`, `:N:path` → the path (relative to the top, or to cwd after `./` or `../`). */
  function blobPath(g: Git, value: string): string | undefined {
    // Up to the first colon, an optional stage number, then the path on one line (read in code: the pattern this
    // replaces retried every split of a long revision).
    const colon = value.indexOf(":")
    if (colon < 0 || value.startsWith("/") || /^:\//.test(value)) return undefined
    const after = value.slice(colon + 1)
    const rest = /^[0-3]:/.test(after) ? after.slice(2) : after
    if (/[\n\r\u2028\u2029]/.test(rest)) return undefined
    if (!rest && !value.endsWith(":")) return undefined
    if (value.startsWith(":/")) return undefined
    const relative = rest.startsWith("./") || rest.startsWith("../")
    // Outside any repository git fails; the working directory is the best guess at what was meant.
    const base = relative ? g.state.cwd : (toplevel(g) ?? (g.unknownRepo || g.gitDir ? undefined : g.state.cwd))
    if (base === undefined) return ""
    return ShellContext.abs(g.c.ctx, rest || ".", { cwd: base, vars: g.state.vars }) ?? ""
  }

  /** A revision that may be a blob: an object id, `rev^{blob}`, `rev:path`. */
  const OBJECT_ID = /^[0-9a-f]{4,64}$/i

  /** Space-separated option patterns as one anchored expression. */
  function options(text: string) {
    return new RegExp(`^(?:${list(text).join("|")})$`)
  }
  /** Options that print patches (file content). */
  const PATCH = options(`-p -u --patch -U\\d* --unified(=.*)? --patch-with-stat --patch-with-raw -W --function-context
    --word-diff(=.*)? --word-diff-regex=.* --color-words(=.*)? --cc -c --dd --remerge-diff -m --diff-merges=.* --binary
    --full-diff --textconv --ext-diff --check`)
  /** Options that print only names, counts or ids instead of the default patch. */
  const NAMES_ONLY = options(`--stat(=.*)? --numstat --shortstat --dirstat(=.*)? --dirstat-by-file(=.*)? --cumulative
    --summary --name-only --name-status --raw -s --no-patch --quiet --compact-summary`)
  /** Pickaxe searches read content to choose commits (an oracle on content even without a patch). */
  const PICKAXE = /^(-S|-G)/

  /** Whether a log-like command prints file content; `patchByDefault` for show, diff, format-patch. */
  function printsContent(a: Args, patchByDefault: boolean) {
    if (has(a, PATCH) || a.values.has("-S") || a.values.has("-G") || a.values.has("-L") || has(a, PICKAXE)) return true
    if (!patchByDefault) return false
    return !a.flags.some((f) => NAMES_ONLY.test(f))
  }

  /** Reports pathspec-restricted content and the explicit reads of named paths. */
  function content(g: Git, pathWords: Word[], extraPaths: string[] = [], all = false) {
    const specs = pathWords.length ? pathspecs(g, pathWords) : []
    const named = specs === "all" ? [] : specs
    for (const p of [...named, ...extraPaths])
      if (p) ShellContext.push(g.c.ctx, { path: p, op: "read", command: `git ${g.sub}` })
    if (all || specs === "all" || extraPaths.includes("") || (!named.length && !extraPaths.length))
      return objects(g, "all")
    objects(g, [...named, ...extraPaths])
  }

  /** Writes `-o`/`--output` style options. */
  function outputs(g: Git, a: Args, ...flags: string[]) {
    for (const w of given(a, ...flags))
      ShellContext.emit(g.c.ctx, w, "write", `git ${g.sub}`, g.state, { destructive: true })
  }
  function inputs(g: Git, a: Args, ...flags: string[]) {
    for (const w of given(a, ...flags)) ShellContext.emit(g.c.ctx, w, "read", `git ${g.sub}`, g.state)
  }

  /** Work-tree writes of named paths (relative to cwd, or to the work tree when cwd is outside it). */
  function writes(g: Git, words: Word[], options: { recursive?: boolean; destructive?: boolean } = {}) {
    const base =
      g.workTree !== undefined && g.workTree && !insideOf(g.state.cwd, g.workTree)
        ? { cwd: g.workTree, vars: g.state.vars }
        : g.state
    for (const w of words)
      ShellContext.emit(g.c.ctx, w, "write", `git ${g.sub}`, base, {
        recursive: options.recursive ?? true,
        destructive: options.destructive ?? true,
      })
  }

  function insideOf(cwd: string | undefined, dir: string) {
    return cwd !== undefined && (cwd === dir || cwd.startsWith(dir.replace(/\/?$/, "/")))
  }

  /** Subcommands that restore history into the work tree export it elsewhere when the work tree is another folder. */
  function exported(g: Git, paths: Word[]) {
    if (g.workTree === undefined) return
    objects(g, paths.length ? pathspecs(g, paths) : "all")
    if (!paths.length)
      ShellContext.emit(g.c.ctx, ShellContext.literal(g.workTree || "/"), "write", `git ${g.sub}`, g.state, {
        recursive: true,
        destructive: true,
      })
  }

  /** Reads of work-tree paths (`git add`, `git commit <paths>`, `git hash-object`). */
  function reads(g: Git, words: Word[]) {
    for (const w of words) ShellContext.emit(g.c.ctx, w, "read", `git ${g.sub}`, g.state)
  }

  /** Subcommands git knows that print no file content and write no work-tree file (unless the table says more). */
  const BUILTIN = new Set(
    list(`status log shortlog ls-files ls-tree ls-remote rev-parse rev-list branch tag describe show-ref for-each-ref
     check-ignore check-attr check-mailmap count-objects fsck gc prune prune-packed repack maintenance help version
     var init fetch remote symbolic-ref update-ref verify-commit verify-tag verify-pack name-rev merge-base cherry
     notes bisect submodule config commit-graph multi-pack-index show-branch stripspace interpret-trailers column
     credential hook replace pack-refs bugreport diagnose rerere fast-import index-pack unpack-objects receive-pack
     mktree mktag write-tree commit-tree merge-file diff-files lfs`),
  )

  /** What a subcommand does, as a declaration; `custom` where a declaration cannot say it. */
  type Sub = {
    /** Options that take a value (the next argument, `=value`, or attached to a short option). */
    values?: string
    /** Options whose value is a file it reads. */
    reads?: string
    /** Options whose value is a file it writes. */
    writes?: string
    /** Its path operands in the work tree: read (`add`), or restored, removed or moved (`restore`, `rm`). */
    paths?: "read" | "write"
    /** Options under which it leaves the work tree alone (`--cached`, `--dry-run`). */
    dry?: RegExp
    /**
     * Content it prints or exports from the object store: `always` (restricted to its paths), `patch` (only with a
     * patch option such as `-p`, or a pickaxe `-S`/`-G`, or `-L`), `all` (anything, whatever the arguments).
     */
    prints?: "always" | "patch" | "all"
    /** Restores history into the work tree: an export of it when the work tree is another folder. */
    restores?: boolean
    /** Options whose value is a shell command git runs (`rebase --exec`). */
    runs?: string
    custom?: (g: Git) => void
  }

  /** Options of log, show, diff and friends that take a separate value. */
  const LOG_VALUES = `-n --max-count --skip --since --after --until --before --author --committer --grep -S -G -L
    --format --pretty -O --output --diff-filter --encoding --date --find-object --exclude --glob -I
    --ignore-matching-lines --src-prefix --dst-prefix --line-prefix --word-diff-regex --anchored --color-moved --abbrev`
  const LOG: Sub = { values: LOG_VALUES, reads: "-O", writes: "--output", prints: "patch" }

  /** Applies a declaration. */
  function apply(g: Git, sub: Sub) {
    const a = parse(g.args, list(`${sub.values ?? ""} ${sub.reads ?? ""} ${sub.writes ?? ""} ${sub.runs ?? ""}`))
    inputs(g, a, ...list(sub.reads ?? ""))
    outputs(g, a, ...list(sub.writes ?? ""))
    for (const cmd of given(a, ...list(sub.runs ?? ""))) if (!cmd.dynamic) runs(g.c, cmd.values.join(" "), g.state)
    const dry = !!sub.dry && has(a, sub.dry)
    if (sub.paths === "read") reads(g, [...a.operands, ...a.paths])
    if (sub.paths === "write" && !dry) writes(g, [...a.operands, ...a.paths])
    if (sub.prints === "all") objects(g, "all")
    if (sub.prints === "always" || (sub.prints === "patch" && printsContent(a, false))) {
      // `-L range:file` shows the history of a file's lines; `--full-diff` shows every file of the commits chosen.
      const lines = given(a, "-L")
        .flatMap((w) => w.values.map((v) => v.slice(v.lastIndexOf(":") + 1)))
        .map(ShellContext.literal)
      content(g, [...splitRevisions(g, a).paths, ...lines], [], has(a, /^--full-diff$/))
    }
    if (sub.restores) exported(g, sub.paths === "write" && !dry ? [...a.operands, ...a.paths] : [])
  }

  /** Every subcommand with a reading beyond "prints names, writes nothing". */
  const SUBCOMMANDS: Record<string, Sub> = {
    // Content from the object store.
    show: { custom: show },
    diff: { custom: diff },
    "cat-file": { custom: catFile },
    grep: { custom: grep },
    archive: { custom: archive },
    blame: { custom: blame },
    annotate: { custom: blame },
    "format-patch": { custom: formatPatch },
    stash: { custom: stash },
    bundle: { custom: bundle },
    clone: { custom: clone },
    push: { custom: push },
    "upload-pack": { custom: served },
    "upload-archive": { custom: served },
    "unpack-file": { custom: unpackFile },
    "checkout-index": { custom: checkoutIndex },
    "filter-branch": { custom: filterBranch },
    worktree: { custom: worktree },
    log: LOG,
    whatchanged: LOG,
    "diff-tree": LOG,
    "diff-index": LOG,
    reflog: { custom: (g) => ["expire", "delete", "exists"].includes(g.args[0]?.values[0] ?? "") || apply(g, LOG) },
    "request-pull": { prints: "patch" },
    "fast-export": {
      values: "--signed-tags --tag-of-filtered-object",
      reads: "--import-marks",
      writes: "--export-marks",
      prints: "always",
    },
    difftool: { values: `${LOG_VALUES} -t --tool`, runs: "-x --extcmd", prints: "always" },
    ...Object.fromEntries(
      list("range-diff mergetool merge-tree pack-objects send-email daemon instaweb http-backend").map((n) => [
        n,
        { prints: "all" } satisfies Sub,
      ]),
    ),
    // The work tree.
    checkout: { custom: checkout },
    restore: { custom: restore },
    reset: { custom: (g) => g.args.some((a) => /^--(hard|merge|keep)$/.test(a.raw)) && exported(g, []) },
    clean: { custom: clean },
    apply: { custom: applyPatch },
    am: { custom: applyPatch },
    "read-tree": { custom: (g) => g.args.some((a) => a.raw === "-u") && belowTop(g) },
    "sparse-checkout": {
      custom: (g) => ["set", "add", "init", "reapply", "disable"].includes(g.args[0]?.values[0] ?? "") && belowTop(g),
    },
    rm: { reads: "--pathspec-from-file", paths: "write", dry: /^--cached$|^-[a-zA-Z]*n$|^--dry-run$/ },
    mv: { paths: "write", dry: /^-[a-zA-Z]*n$|^--dry-run$/ },
    ...Object.fromEntries(
      list("switch merge pull cherry-pick revert").map((n) => [n, { restores: true } satisfies Sub]),
    ),
    rebase: { values: "--onto -s --strategy -X --strategy-option", runs: "-x --exec", restores: true },
    add: { values: "--chmod", reads: "--pathspec-from-file", paths: "read" },
    commit: {
      values: `-m --message -C -c --reuse-message --reedit-message --fixup --squash --author --date --trailer --cleanup
        -S --gpg-sign`,
      reads: "-F --file -t --template --pathspec-from-file",
      paths: "read",
    },
    tag: {
      values: `-m --message -u --local-user --cleanup --format --sort --contains --no-contains --points-at --merged
        --no-merged`,
      reads: "-F --file",
    },
    notes: { values: "-m --message -C -c --ref", reads: "-F --file" },
    "hash-object": { values: "-t --path", paths: "read" },
    "update-index": { values: "--cacheinfo --chmod --index-version", paths: "read" },
    // Commands git runs, and names defined for later.
    remote: { custom: remote },
    config: { custom: config },
    submodule: { custom: submodule },
    bisect: { custom: bisect },
  }

  function show(g: Git) {
    const a = parse(g.args, list(LOG_VALUES))
    inputs(g, a, "-O")
    outputs(g, a, "--output")
    const { revisions, paths } = splitRevisions(g, a)
    const blobs: string[] = []
    let mayBeBlob = false
    let commits = revisions.length === 0
    for (const r of revisions) {
      if (r.dynamic) mayBeBlob = true
      for (const v of r.values) {
        const p = blobPath(g, v)
        if (p !== undefined) blobs.push(p)
        else {
          commits = true
          // An object id or a peeled object may name a blob, printed whatever the options say.
          if (OBJECT_ID.test(v) || /\^\{(blob)?\}$/.test(v)) mayBeBlob = true
        }
      }
    }
    const patch = commits && printsContent(a, true)
    if (blobs.length || mayBeBlob || patch) content(g, paths, blobs, mayBeBlob || (patch && !paths.length))
  }

  function diff(g: Git) {
    const a = parse(g.args, list(LOG_VALUES))
    inputs(g, a, "-O")
    outputs(g, a, "--output")
    if (has(a, /^--no-index$/)) return reads(g, [...a.operands, ...a.paths])
    if (!printsContent(a, true)) return
    const { revisions, paths } = splitRevisions(g, a)
    // The work tree against the index: the content shown is read from the work tree (the kernel guards that).
    if (!has(a, /^--(cached|staged)$/) && !revisions.length) return reads(g, paths)
    content(g, paths, blobsOf(g, revisions))
  }

  function catFile(g: Git) {
    const a = parse(g.args, list("--path --filters --textconv"))
    if (a.flags.some((f) => /^--batch(=|$)|^--batch-command/.test(f))) return objects(g, "all")
    const [first, second] = a.operands
    const typed = ["blob", "tree", "commit", "tag"].includes(first?.values[0] ?? "")
    const object = typed ? second : has(a, /^-p$|^--textconv$|^--filters$/) ? first : undefined
    if (!object) return
    const paths = object.dynamic ? [undefined] : object.values.map((v) => blobPath(g, v))
    if (paths.some((p) => p === undefined)) return objects(g, "all")
    content(g, [], paths as string[])
  }

  function grep(g: Git) {
    const a = parse(
      g.args,
      list(`-e -f -A -B -C -m --max-count --max-depth --threads --open-files-in-pager -O --context --after-context
        --before-context`),
    )
    inputs(g, a, "-f")
    const operands = a.values.has("-e") || a.values.has("-f") ? a.operands : a.operands.slice(1)
    const { revisions, paths } = splitRevisions(g, { ...a, operands })
    if (has(a, /^--(no-index|untracked)$/)) return reads(g, [...revisions, ...paths])
    if (!has(a, /^--cached$/) && !revisions.length) return reads(g, paths)
    content(g, paths, blobsOf(g, revisions))
  }

  function archive(g: Git) {
    const a = parse(g.args, list("--format --prefix -o --output --remote --exec --add-file --add-virtual-file --mtime"))
    outputs(g, a, "-o", "--output")
    inputs(g, a, "--add-file")
    if (a.values.has("--remote")) return
    const [tree, ...rest] = a.operands
    const paths = [...rest, ...a.paths]
    const blobs = tree ? blobsOf(g, [tree]) : []
    // Without paths: everything below the working directory.
    const top = toplevel(g)
    if (!paths.length && !blobs.length && top !== undefined && g.state.cwd !== undefined && g.state.cwd !== top)
      return objects(g, [g.state.cwd])
    content(g, paths, blobs, !paths.length && !blobs.length)
  }

  function blame(g: Git) {
    const a = parse(g.args, list("-L -S --contents --ignore-rev --ignore-revs-file --abbrev --date -M -C"))
    inputs(g, a, "--contents", "-S", "--ignore-revs-file")
    content(g, a.dashdash ? a.paths : a.operands.slice(-1))
  }

  function formatPatch(g: Git) {
    const a = parse(
      g.args,
      list(`${LOG_VALUES} -o --output-directory -v --reroll-count --subject-prefix --to --cc --from --in-reply-to
        --base --suffix --start-number --signature`),
    )
    inputs(g, a, "--signature-file", "-O")
    if (!a.flags.includes("--stdout")) {
      // Patches are written as NNNN-subject.patch files into the output folder.
      const dir = given(a, "-o", "--output-directory")[0]
      const where = dir
        ? ShellContext.prefixOf(g.c.ctx, { ...dir, dynamic: true, prefix: dir.values[0] ?? "" }, g.state)
        : ShellContext.dir(g.state)
      ShellContext.region(
        g.c.ctx,
        dir && !dir.dynamic ? where.replace(/\/?$/, "/") : where,
        "write",
        "git format-patch",
        false,
      )
    }
    content(g, splitRevisions(g, a).paths)
  }

  function stash(g: Git) {
    const [first] = g.args
    const verb = first && !first.raw.startsWith("-") ? (first.values[0] ?? "") : "push"
    const a = parse(
      first && !first.raw.startsWith("-") ? g.args.slice(1) : g.args,
      list("-m --message --pathspec-from-file"),
    )
    if (verb === "show") {
      if (has(a, /^-p$|^--patch$/) || /^(true|yes|on|1)$/i.test(g.config.get("stash.showpatch") ?? ""))
        objects(g, "all")
      return
    }
    if (verb !== "push" && verb !== "save") return
    // Without -u/-a the untracked files stay; tracked ones are restored from history (not reported).
    if (!has(a, /^-[a-zA-Z]*[ua]$|^--include-untracked$|^--all$/)) return
    const paths = [...(verb === "push" ? a.operands : []), ...a.paths]
    if (paths.length) return writes(g, paths)
    const top = toplevel(g) ?? g.state.cwd
    if (top === undefined) return ShellContext.region(g.c.ctx, "", "write", "git stash -u", true)
    ShellContext.push(g.c.ctx, { path: top, op: "write", command: "git stash -u", recursive: true })
  }

  function bundle(g: Git) {
    const [verb, file, ...rest] = g.args
    if (!file) return
    if (verb?.values[0] !== "create") return ShellContext.emit(g.c.ctx, file, "read", "git bundle", g.state)
    ShellContext.emit(g.c.ctx, file, "write", "git bundle", g.state, { destructive: true })
    content(g, parse(rest, list(LOG_VALUES)).paths)
  }

  /** `git clone <local repository> <dir>` copies its whole object store elsewhere. */
  function clone(g: Git) {
    const a = parse(
      g.args,
      list(`-b --branch -o --origin -c --config --depth --reference --reference-if-able --separate-git-dir -u
        --upload-pack --template -j --jobs --filter --bundle-uri --shallow-since --shallow-exclude --server-option`),
    )
    const [source, dest] = [...a.operands, ...a.paths]
    if (!source) return
    if (source.dynamic) objects(g, "all", "")
    for (const v of source.values) {
      const local = v.startsWith("file://") || (!/^[a-z][a-z0-9+.-]*:\/\//i.test(v) && !/^[^/]*:/.test(v))
      if (!local) continue
      ShellContext.emit(g.c.ctx, ShellContext.literal(v), "read", "git clone", g.state)
      objects(g, "all", ShellContext.abs(g.c.ctx, v, g.state) ?? "")
    }
    const name = source.dynamic ? undefined : path.basename((source.values[0] ?? "").replace(/\/?(\.git)?\/?$/, ""))
    const target = dest ?? (name ? ShellContext.literal(name) : undefined)
    if (target) ShellContext.emit(g.c.ctx, target, "write", "git clone", g.state, { recursive: true })
    else ShellContext.region(g.c.ctx, ShellContext.dir(g.state), "write", "git clone", false)
  }

  /** `git push <url or path>` (or to a remote added in the same command) exports history to a new place. */
  function push(g: Git) {
    const a = parse(g.args, list("--repo -o --push-option --receive-pack --exec --signed --force-with-lease"))
    const repo = given(a, "--repo")[0] ?? a.operands[0]
    if (repo && (repo.dynamic || repo.values.some((v) => /[/:.]/.test(v) || g.c.ctx.git.remotes.has(v))))
      objects(g, "all")
  }

  function served(g: Git) {
    const dir = g.args.find((w) => !w.raw.startsWith("-"))
    const abs = dir && !dir.dynamic ? ShellContext.abs(g.c.ctx, dir.values[0] ?? ".", g.state) : undefined
    objects(g, "all", dir ? (abs ?? "") : g.state.cwd)
  }

  function unpackFile(g: Git) {
    ShellContext.region(g.c.ctx, ShellContext.dir(g.state), "write", "git unpack-file", false)
    objects(g, "all")
  }

  function checkoutIndex(g: Git) {
    const a = parse(g.args, list("--prefix --stage -z"))
    const prefix = given(a, "--prefix")[0]
    const paths = [...a.operands, ...a.paths]
    if (prefix || has(a, /^--temp$/)) {
      objects(g, paths.length ? pathspecs(g, paths) : "all")
      if (!prefix) return ShellContext.region(g.c.ctx, ShellContext.dir(g.state), "write", "git checkout-index", false)
      return ShellContext.emit(g.c.ctx, prefix, "write", "git checkout-index", g.state, {
        recursive: true,
        destructive: true,
      })
    }
    if (has(a, /^-[a-zA-Z]*a$|^--all$/))
      return ShellContext.region(g.c.ctx, ShellContext.dir(g.state), "write", "git checkout-index", true)
    writes(g, paths)
  }

  function filterBranch(g: Git) {
    const filters = list(
      "--env-filter --tree-filter --index-filter --parent-filter --msg-filter --commit-filter --tag-name-filter",
    )
    const a = parse(g.args, [...filters, ...list("--subdirectory-filter -d --original --state-branch")])
    // Filters run in a checkout of every historical tree, somewhere the analysis cannot name.
    for (const f of given(a, ...filters))
      if (!f.dynamic)
        ShellParse.script(g.c.ctx, f.values.join(" "), { cwd: undefined, vars: new Map(g.state.vars) }, g.c.depth - 1)
    objects(g, "all")
    belowTop(g)
  }

  function worktree(g: Git) {
    const [verb, ...rest] = g.args
    const a = parse(rest, list("-b -B --reason --lock"))
    if (verb?.values[0] === "add") {
      if (a.operands[0])
        ShellContext.emit(g.c.ctx, a.operands[0], "write", "git worktree", g.state, { recursive: true })
      if (!has(a, /^--no-checkout$/)) objects(g, "all")
    } else if (verb?.values[0] === "remove" || verb?.values[0] === "move")
      for (const w of a.operands)
        ShellContext.emit(g.c.ctx, w, "write", "git worktree", g.state, { recursive: true, destructive: true })
  }

  function checkout(g: Git) {
    const a = parse(g.args, list("-b -B --orphan --conflict --pathspec-from-file"))
    inputs(g, a, "--pathspec-from-file")
    // `-b name [start]` creates a branch: its operands are revisions.
    const branch = given(a, "-b", "-B", "--orphan").length > 0
    // Without `--`, an operand naming an existing file, or a path with a folder (a deleted file restored), is a path.
    const named = (w: Word) =>
      w.dynamic || w.values.some((v) => v.includes("/") || ShellContext.exists(ShellContext.abs(g.c.ctx, v, g.state)))
    const paths = a.dashdash ? a.paths : branch ? [] : a.operands.filter(named)
    writes(g, paths)
    exported(g, paths)
  }

  function restore(g: Git) {
    const a = parse(g.args, list("-s --source --conflict --pathspec-from-file"))
    inputs(g, a, "--pathspec-from-file")
    if (has(a, /^-[a-zA-Z]*S$|^--staged$/) && !has(a, /^-[a-zA-Z]*W$|^--worktree$/)) return
    const paths = [...a.operands, ...a.paths]
    writes(g, paths)
    exported(g, paths)
  }

  function clean(g: Git) {
    const a = parse(g.args, list("-e --exclude"))
    // Up to the first `n` with a class without it, so one long flag is not retried at every `n`.
    if (has(a, /^-[a-mo-zA-Z]*n[a-zA-Z]*$|^--dry-run$/)) return
    const paths = [...a.operands, ...a.paths]
    if (!paths.length) return ShellContext.region(g.c.ctx, ShellContext.dir(g.state), "write", "git clean", true)
    writes(g, paths)
  }

  /** A destructive write anywhere below the top of the work tree. */
  function belowTop(g: Git) {
    const top = toplevel(g)
    ShellContext.region(g.c.ctx, top === undefined ? "" : top.replace(/\/?$/, "/"), "write", `git ${g.sub}`, true)
  }

  /**
   * `git apply`/`git am`: the patch files are read and the files they change written (anything below the top when a
   * patch cannot be read now).
   */
  function applyPatch(g: Git) {
    const a = parse(g.args, list("-p -C --directory --include --exclude --whitespace --patch-format -S --gpg-sign"))
    const files = [...a.operands, ...a.paths]
    reads(g, files)
    if (has(a, /^--(check|stat|numstat|summary|cached)$/)) return
    const strip = Number(given(a, "-p")[0]?.values[0] ?? 1)
    const directory = given(a, "--directory")[0]?.values[0] ?? ""
    const top = toplevel(g) ?? g.state.cwd
    const sources = files.length ? files : g.c.stdinFile ? [g.c.stdinFile] : []
    const targets =
      sources.length && top !== undefined ? ShellPatch.targets(g.c.ctx, sources, g.state, strip) : undefined
    if (!targets) return belowTop(g)
    for (const t of targets)
      ShellContext.emit(
        g.c.ctx,
        ShellContext.literal(path.join(top!, directory, t)),
        "write",
        `git ${g.sub}`,
        g.state,
        {
          destructive: true,
        },
      )
  }

  function remote(g: Git) {
    const [verb, name, url] = g.args.filter((w) => !w.raw.startsWith("-"))
    if (verb?.values[0] === "add" && name && url) for (const v of name.values) g.c.ctx.git.remotes.add(v)
  }

  /** `git config [--file f] key value`: aliases and commands to run are remembered or read now. */
  function config(g: Git) {
    const a = parse(g.args, list("-f --file --blob --type --default --comment --value"))
    for (const f of given(a, "-f", "--file")) {
      ShellContext.emit(g.c.ctx, f, "read", "git config", g.state)
      if (!has(a, /^(-l|--list|--get.*)$/))
        ShellContext.emit(g.c.ctx, f, "write", "git config", g.state, { destructive: true })
    }
    const words = a.operands.filter((w) => !w.dynamic).map((w) => w.values[0] ?? "")
    const [key, ...rest] = words[0] === "set" ? words.slice(1) : words
    if (key && rest.length && !has(a, /^(--get.*|--unset.*|-l|--list|--remove-section|--rename-section)$/))
      setConfig(g.c, new Map(), key, rest[rest.length - 1], g.state, true)
  }

  function submodule(g: Git) {
    const at = g.args.findIndex((w) => w.values[0] === "foreach")
    const cmd = at >= 0 ? g.args.slice(at + 1).filter((w) => !w.raw.startsWith("-")) : []
    if (!cmd.length || cmd.some((w) => w.dynamic)) return
    // The command runs in each submodule's folder.
    const text = cmd.flatMap((w) => w.values).join(" ")
    ShellParse.script(g.c.ctx, text, { cwd: undefined, vars: new Map(g.state.vars) }, g.c.depth - 1)
  }

  function bisect(g: Git) {
    const [verb, head, ...rest] = g.args
    if (verb?.values[0] === "run" && head && !head.dynamic)
      ShellCommands.run({ ...g.c, name: head.values[0] ?? "", args: rest, state: g.state })
  }

  /** The object-store paths named by `rev:path`-style revisions. */
  function blobsOf(g: Git, revisions: Word[]): string[] {
    return revisions.flatMap((r) => r.values.map((v) => blobPath(g, v)).filter((p): p is string => p !== undefined))
  }

  /**
   * What a git command prints, for `$(…)` and pipelines: the top of the work tree, or names of files.
   *
   * @example
   * ShellGit.printed(ctx, words("rev-parse --show-toplevel"), state) // [literal("/r")]
   */
  export function printed(ctx: Context, args: Word[], state: State): Word[] | undefined {
    const sub = args.find((a) => !a.raw.startsWith("-"))?.values[0]
    const g = {
      c: { ctx },
      state,
      sub: sub ?? "",
      args,
      config: new Map(),
      literal: false,
      seen: new Set(),
    } as unknown as Git
    if (sub === "rev-parse" && args.some((a) => a.raw === "--show-toplevel")) {
      const t = toplevel(g)
      return t === undefined ? undefined : [ShellContext.literal(t)]
    }
    if (sub === "ls-files") return [ShellContext.unknown("./")]
    if ((sub === "diff" || sub === "show" || sub === "log") && args.some((a) => /^--name-(only|status)$/.test(a.raw))) {
      const t = toplevel(g)
      return [ShellContext.unknown(t === undefined ? "" : t.replace(/\/?$/, "/"))]
    }
    return undefined
  }
}

/**
 * Unified diffs read statically: the files a patch changes.
 *
 * @example
 * ShellPatch.parse("--- a/x\n+++ b/x\n@@ …", 1) // ["x"]
 */
export namespace ShellPatch {
  /** The paths a unified diff changes, each with `strip` leading folders removed. */
  export function parse(text: string, strip: number): string[] {
    const out = new Set<string>()
    const cut = (p: string) => {
      const name = p
        .replace(/^"(.*)"$/, "$1")
        .split("\t")[0]
        .trim()
      if (!name || name === "/dev/null") return
      const parts = name.split("/").filter(Boolean)
      if (parts.length > strip) out.add(parts.slice(strip).join("/"))
    }
    for (const line of text.split("\n")) {
      const git = /^diff --git ("?a\/.*?"?) ("?b\/.*"?)$/.exec(line)
      if (git) {
        cut(git[1])
        cut(git[2])
        continue
      }
      const m = /^(?:---|\+\+\+) (.+)$/.exec(line)
      if (m) cut(m[1])
      const moved = /^(?:rename|copy) (?:from|to) (.+)$/.exec(line)
      if (moved) out.add(moved[1])
    }
    return [...out]
  }

  /** The paths patch files change; undefined when one of them cannot be read statically. */
  export function targets(
    ctx: ShellContext.Context,
    files: ShellContext.Word[],
    state: ShellContext.State,
    strip: number,
  ): string[] | undefined {
    const out: string[] = []
    for (const f of files) {
      if (f.dynamic) return undefined
      for (const v of f.values) {
        const abs = ShellContext.abs(ctx, v, state)
        if (!abs) return undefined
        let text: string
        try {
          if (fs.statSync(abs).size > 4 * 1024 * 1024) return undefined
          text = fs.readFileSync(abs, "utf8")
        } catch {
          return undefined
        }
        const found = parse(text, strip)
        if (!found.length) return undefined
        out.push(...found)
      }
    }
    return out
  }
}
