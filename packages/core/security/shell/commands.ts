import fs from "fs"
import path from "path"
import { ShellContext } from "./context"
import { ShellFind } from "./output"
import { ShellGit, ShellPatch } from "./git"
import { ShellInterpreters } from "./interpreters"
import { ShellParse } from "./parse"

/**
 * What each command does to the files it names, as a table: for most commands a declaration (`Spec`) of what their
 * operands are and which options take values, read or write files; a few custom readers where no declaration can say
 * it (`find`, `xargs`, `tar`, `dd`, `sed`, `ln`, wrappers, nested shells; `git` and interpreters in their own files).
 * Commands the table does not know are read generically: arguments naming existing paths are reads, and any of them
 * might be written.
 *
 * @example
 * ShellCommands.TABLE.cp // { operands: "read", destination: ["-t", "--target-directory"], recursive: /…/, … }
 * ShellCommands.run({ ctx, name: "cp", args, state, depth: 4 }) // reports the sources read and the destination written
 */
export namespace ShellCommands {
  type Word = ShellContext.Word
  const list = ShellContext.list
  type State = ShellContext.State
  type Context = ShellContext.Context

  /** One simple command to read: its name and evaluated arguments, the shell state, and what it reads on stdin. */
  export type Call = {
    ctx: Context
    name: string
    args: Word[]
    state: State
    /** Nested shells are still followed this many levels deep. */
    depth: number
    /** Here-doc or here-string text, when known. */
    stdin?: string
    /** Words a previous pipeline stage prints (for `xargs` and filters). */
    input?: Word[]
    /** The file redirected to stdin (`< file`), when there is one. */
    stdinFile?: Word
  }

  /**
   * What a command does to its operands (arguments that are not options):
   * - `read`: reads them; `write`: creates or overwrites them; `change`: reads and rewrites them in place;
   * - `remove`: deletes them; `move`: reads and removes them (the sources of `mv`); `none`: they are not files;
   * - `opaque`: unknown — read when they exist, possibly written.
   */
  export type Role = "read" | "write" | "change" | "remove" | "move" | "none" | "opaque"

  /** A declarative description of a command's command line. */
  export type Spec = {
    operands?: Role
    /** Options that take a value (the next argument, `--opt=value`, or `-ovalue`); the value is not an operand. */
    values?: string[]
    /** Options whose value is a file the command reads. */
    reads?: string[]
    /** Options whose value is a file the command writes (`sort -o out`). */
    writes?: string[]
    /** The first operand is a program, pattern or filter, not a file — unless one of these options supplies it. */
    program?: string[]
    /** Leading operands that are subcommands or modes, not files (`openssl enc`). */
    subcommand?: number
    /** Works on whole folders: always, or when an option matches. */
    recursive?: true | RegExp
    /** Options that leave the operands untouched (`gzip -c` only reads). */
    readOnly?: RegExp
    /** Copy-like: the last operand, or the value of one of these options, is the destination; the rest are sources. */
    destination?: string[]
    /** `host:path` operands are remote, not local files (`scp`, `rsync`). */
    remote?: boolean
    /** Options are whole words after one dash (`-in`, `-out`): never a cluster of one-letter options. */
    long?: boolean
    /** A custom reading, instead of the declaration. */
    custom?: (c: Call) => void
    /** A custom reading, after the declaration. */
    extra?: (c: Call, parsed: Parsed) => void
  }

  /** An argument list split by a spec. */
  export type Parsed = {
    operands: Word[]
    /** Values of undeclared `--opt=value` options: possibly files. */
    loose: Word[]
    /** Values of declared options, by option. */
    options: Map<string, Word[]>
    flags: string[]
  }

  /**
   * Splits arguments into operands and options the way getopt does: `--` ends options, declared options take the
   * next argument (or `=value`, or the rest of a one-letter cluster such as `-n20`).
   *
   * @example
   * ShellCommands.parse(words /* -n 20 f *\/, { values: ["-n"] }).operands // [f]
   */
  export function parse(args: Word[], spec: Spec): Parsed {
    const declared = new Set([
      ...(spec.values ?? []),
      ...(spec.reads ?? []),
      ...(spec.writes ?? []),
      ...(spec.destination ?? []),
    ])
    const out: Parsed = { operands: [], loose: [], options: new Map(), flags: [] }
    const record = (flag: string, value: Word | undefined) => {
      if (!value) return
      const list = out.options.get(flag)
      if (list) list.push(value)
      else out.options.set(flag, [value])
    }
    let dashdash = false
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]
      const raw = arg.raw
      if (dashdash || raw === "-" || !raw.startsWith("-")) {
        out.operands.push(arg)
        continue
      }
      if (raw === "--") {
        dashdash = true
        continue
      }
      out.flags.push(raw)
      if (declared.has(raw)) {
        record(raw, args[++i])
        continue
      }
      const eq = raw.indexOf("=")
      if (eq > 0 && (raw.startsWith("--") || spec.long)) {
        const flag = raw.slice(0, eq)
        const value = ShellContext.literal(raw.slice(eq + 1))
        if (declared.has(flag)) record(flag, value)
        else out.loose.push(value)
        continue
      }
      if (raw.startsWith("--") || spec.long) continue
      let taken = false
      for (let k = 1; k < raw.length; k++) {
        const flag = "-" + raw[k]
        if (!declared.has(flag)) continue
        record(flag, k + 1 < raw.length ? ShellContext.literal(raw.slice(k + 1)) : args[++i])
        taken = true
        break
      }
      if (!taken && eq > 0) out.loose.push(ShellContext.literal(raw.slice(eq + 1)))
    }
    return out
  }

  /** The values given to any of `flags`. */
  export function valuesOf(parsed: Parsed, flags: string[] | undefined): Word[] {
    return (flags ?? []).flatMap((f) => parsed.options.get(f) ?? [])
  }

  /** Applies a declaration to a call. */
  function apply(c: Call, spec: Spec) {
    const { ctx, name, state } = c
    const parsed = parse(c.args, spec)
    for (const w of valuesOf(parsed, spec.reads)) ShellContext.emit(ctx, w, "read", name, state)
    let operands = parsed.operands.slice(spec.subcommand ?? 0)
    if (spec.program && !spec.program.some((p) => parsed.options.has(p) || parsed.flags.includes(p)))
      operands = operands.slice(1)
    operands = [...operands, ...parsed.loose]
    const recursive =
      spec.recursive === true || (!!spec.recursive && parsed.flags.some((f) => (spec.recursive as RegExp).test(f)))
    const readOnly = !!spec.readOnly && parsed.flags.some((f) => spec.readOnly!.test(f))
    const local = (w: Word) => !spec.remote || !w.values.some((v) => /^[^/]*:/.test(v) && !v.startsWith("./"))
    let sources = operands
    let destinations: Word[] = []
    if (spec.destination) {
      const target = valuesOf(parsed, spec.destination)
      destinations = target.length ? target : operands.slice(-1)
      sources = target.length ? operands : operands.slice(0, -1)
    }
    for (const w of sources) if (local(w)) role(c, w, readOnly ? "read" : (spec.operands ?? "opaque"), recursive)
    for (const w of valuesOf(parsed, spec.writes))
      ShellContext.emit(ctx, w, "write", name, state, { destructive: true })
    for (const w of destinations)
      if (local(w)) ShellContext.emit(ctx, w, "write", name, state, { destructive: true, into: true })
    spec.extra?.(c, parsed)
  }

  function role(c: Call, w: Word, r: Role, recursive: boolean) {
    const { ctx, name, state } = c
    switch (r) {
      case "read":
        return ShellContext.emit(ctx, w, "read", name, state, { recursive: recursive || undefined })
      case "write":
      case "remove":
        return ShellContext.emit(ctx, w, "write", name, state, { recursive: recursive || undefined, destructive: true })
      case "change":
        ShellContext.emit(ctx, w, "read", name, state)
        return ShellContext.emit(ctx, w, "write", name, state, { recursive: recursive || undefined, destructive: true })
      case "move":
        ShellContext.emit(ctx, w, "read", name, state)
        return ShellContext.emit(ctx, w, "write", name, state, { recursive: true, destructive: true })
      case "opaque":
        return ShellContext.opaque(ctx, w, name, state)
    }
  }

  /**
   * Reads one simple command: by its table entry, or generically.
   *
   * @example
   * ShellCommands.run({ ctx, name: "rm", args: [literal("-rf"), literal("build")], state, depth: 4 })
   * // ctx.out.accesses: [{ path: "/r/build", op: "write", command: "rm", recursive: true }]
   */
  export function run(c: Call): void {
    const name = path.basename(c.name)
    if (!name) return
    const spec = TABLE[name] ?? (ShellInterpreters.versioned(name) ? TABLE.python : undefined)
    if (!spec && c.name.includes("/")) return program(c, name)
    const call = { ...c, name }
    if (!spec) return generic(call)
    if (spec.custom) return spec.custom(call)
    apply(call, spec)
  }

  /**
   * Unknown commands: arguments that name existing paths are read; any naming a protected path might be written.
   *
   * @example
   * ShellCommands.generic({ ctx, name: "mytool", args: [literal("--file=x")], state, depth: 4 })
   * // x is read (when it exists) and may be written
   */
  export function generic(c: Call) {
    for (const a of c.args) {
      if (a.raw.startsWith("-")) {
        const eq = a.raw.indexOf("=")
        if (eq > 0 && !a.dynamic)
          for (const v of a.values)
            ShellContext.opaque(c.ctx, ShellContext.literal(v.slice(v.indexOf("=") + 1)), c.name, c.state)
        continue
      }
      ShellContext.opaque(c.ctx, a, c.name, c.state)
    }
  }

  /** A program named by its path (`./build.sh`): a small shell script is followed like `bash file`. */
  function program(c: Call, name: string) {
    generic({ ...c, name })
    const file = ShellContext.abs(c.ctx, c.name, c.state)
    const text = file ? smallText(file) : undefined
    // A shell script: a shell's `#!` line, or text without one (which the shell runs itself).
    if (text === undefined || text.includes("\0")) return
    if (text.startsWith("#!") && !/^#!\s*\S*\/(env\s+)?(ba|z|k|da|a)?sh\b/.test(text)) return
    ShellParse.script(c.ctx, text, { cwd: c.state.cwd, vars: new Map() }, c.depth - 1)
  }

  function smallText(file: string): string | undefined {
    try {
      const stat = fs.statSync(file)
      if (!stat.isFile() || stat.size > 64 * 1024) return undefined
      return fs.readFileSync(file, "utf8")
    } catch {
      return undefined
    }
  }

  /** A script run by a shell or `source`: read it, and analyse it when it is a small text file. */
  export function scriptFile(c: Call, word: Word) {
    ShellContext.emit(c.ctx, word, "read", "script", c.state)
    if (word.dynamic) return ShellContext.anything(c.ctx, "script", `${c.name} runs a script not known statically`)
    for (const value of word.values) {
      const file = ShellContext.abs(c.ctx, value, c.state)
      const text = file ? smallText(file) : undefined
      if (text !== undefined) ShellParse.script(c.ctx, text, { cwd: c.state.cwd, vars: new Map() }, c.depth - 1)
      else if (ShellContext.exists(file)) ShellContext.anything(c.ctx, "script", `${value}: too large to analyse`)
    }
  }

  function cd(c: Call) {
    const { ctx, args, state } = c
    const target = args.find((a) => !a.raw.startsWith("-") || a.raw === "-")
    if (!target) {
      state.cwd = ShellContext.home(ctx, state)
      return
    }
    if (target.raw === "-" || target.dynamic || target.values.length !== 1) {
      state.cwd = undefined
      ShellContext.note(ctx, `cd ${target.raw}: the working directory after it is not known statically`)
      return
    }
    const physical = args.some((a) => a.raw === "-P")
    state.cwd =
      state.cwd === undefined && !path.isAbsolute(target.values[0])
        ? undefined
        : ShellContext.abs(ctx, target.values[0], state, !physical)
  }

  /** Wrappers run the command after their own options; `skip` counts their own operands (a duration, a mask). */
  const WRAPPERS: Record<string, { values?: string[]; skip?: number }> = {
    sudo: { values: ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group", "--chdir"] },
    doas: { values: ["-u", "-C"] },
    env: { values: ["-u", "--unset", "-S", "--split-string"] },
    nice: { values: ["-n", "--adjustment"] },
    nohup: {},
    time: { values: ["-f", "--format", "-o", "--output"] },
    timeout: { values: ["-s", "--signal", "-k", "--kill-after"], skip: 1 },
    stdbuf: { values: ["-i", "-o", "-e"] },
    ionice: { values: ["-c", "-n", "-p"] },
    command: {},
    builtin: {},
    exec: { values: ["-a"] },
    chronic: {},
    unbuffer: {},
    caffeinate: {},
    setsid: {},
    strace: { values: ["-e", "-o", "-p", "-s", "-u"] },
    ltrace: { values: ["-e", "-o", "-p", "-s", "-u"] },
    taskset: { skip: 1 },
    chroot: { skip: 1 },
    flock: { values: ["-w", "-E", "-c"], skip: 1 },
    watch: { values: ["-n", "-d"] },
    busybox: {},
  }

  function wrapper(c: Call) {
    const { ctx, name, args } = c
    const spec = WRAPPERS[name]
    let state = c.state
    let i = 0
    while (i < args.length) {
      const raw = args[i].raw
      if (name === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(raw)) {
        // `env GIT_DIR=x git …`: the command's environment.
        if (state === c.state) state = ShellContext.fork(state)
        const value = args[i].dynamic ? undefined : args[i].values[0]?.slice(raw.indexOf("=") + 1)
        state.vars.set(raw.slice(0, raw.indexOf("=")), value)
        i++
        continue
      }
      if ((name === "env" || name === "sudo") && (raw === "-C" || raw === "--chdir" || raw === "-D") && args[i + 1]) {
        const dir = args[i + 1]
        state = {
          cwd: dir.dynamic ? undefined : ShellContext.abs(ctx, dir.values[0] ?? ".", state, true),
          vars: state.vars,
        }
        i += 2
        continue
      }
      if (raw === "--") {
        i++
        break
      }
      if (name === "env" && (raw === "-S" || raw === "--split-string") && args[i + 1]) {
        // `env -S 'cmd args'` splits its value into the command line.
        const text = args[i + 1]
        if (text.dynamic) return ShellContext.anything(ctx, "env", "env -S runs a command not known statically")
        const line = [text.values.join(" "), ...args.slice(i + 2).map((a) => a.raw)].join(" ")
        return ShellParse.script(ctx, line, state, c.depth - 1)
      }
      if (raw.startsWith("-")) {
        i += spec.values?.includes(raw) ? 2 : 1
        continue
      }
      break
    }
    i += Math.min(spec.skip ?? 0, args.length - i)
    const rest = args.slice(i)
    if (!rest.length) return
    const head = rest[0]
    if (head.dynamic) {
      ShellContext.anything(ctx, name, `${name} runs a command not known statically`)
      return generic({ ...c, name: "(dynamic)", args: rest.slice(1), state })
    }
    run({ ...c, name: head.values[0] ?? "", args: rest.slice(1), state })
  }

  // GNU's `-i[R]`, `-e[E]` and `-l[N]` take their value only attached; they are flags here.
  const XARGS: Spec = {
    values: list("-I -n -L -P -s -d -E --delimiter --max-args --max-procs --max-lines --eof"),
    reads: ["-a", "--arg-file"],
  }

  /** `xargs cmd`: runs cmd with the words it reads (a previous stage's output, a here-string, or `-a file`). */
  function xargs(c: Call) {
    const { ctx, args, state } = c
    // Options end at the first operand: the command.
    const at = args.findIndex(
      (a, i) => !a.raw.startsWith("-") && !XARGS.values!.concat(XARGS.reads!).includes(args[i - 1]?.raw ?? ""),
    )
    const own = at < 0 ? args : args.slice(0, at)
    const parsed = parse(own, XARGS)
    for (const f of valuesOf(parsed, XARGS.reads)) ShellContext.emit(ctx, f, "read", "xargs", state)
    const rest = at < 0 ? [] : args.slice(at)
    if (!rest.length) return
    const head = rest[0]
    if (head.dynamic) return ShellContext.anything(ctx, "xargs", "xargs runs a command not known statically")
    const given =
      valuesOf(parsed, XARGS.reads).length > 0
        ? [ShellContext.unknown("")]
        : (c.input ??
          (c.stdin !== undefined
            ? c.stdin.split(/\s+/).filter(Boolean).map(ShellContext.literal)
            : [ShellContext.unknown("")]))
    const optional = parsed.flags.find((f) => /^-i|^--replace(=|$)/.test(f))
    const replace =
      valuesOf(parsed, ["-I"])[0]?.values[0] ??
      (optional === undefined ? undefined : optional.replace(/^-i|^--replace=?/, "") || "{}")
    const inner = rest.slice(1)
    const words = replace ? inner.flatMap((w) => substitute(w, replace, given)) : [...inner, ...given]
    run({ ...c, name: head.values[0] ?? "", args: words, depth: c.depth, stdin: undefined, input: undefined })
  }

  /** `cmd {}`-style arguments with `{}` replaced by each given word (`xargs -I`, `find -exec`). */
  export function substitute(w: Word, marker: string, given: Word[]): Word[] {
    if (!w.raw.includes(marker) || w.dynamic) return [w]
    return given.map((g) => {
      const [before, ...after] = (w.values[0] ?? "").split(marker)
      if (!g.dynamic) {
        const values = g.values.map((v) => [before, ...after].join(v))
        return { values, dynamic: false, prefix: values[0] ?? "", raw: w.raw }
      }
      return { values: [], dynamic: true, prefix: before + g.prefix, raw: w.raw }
    })
  }

  function evaluate(c: Call) {
    const { ctx, args, state, depth } = c
    if (args.some((a) => a.dynamic)) return ShellContext.anything(ctx, "eval", "eval of text not known statically")
    ShellParse.script(ctx, args.flatMap((a) => a.values).join(" "), state, depth - 1)
  }

  /** `bash -c text args…`, `bash file`, `bash < file`, `bash <<EOF`. */
  function shell(c: Call) {
    const { ctx, name, args, state, depth, stdin } = c
    const at = args.findIndex((a) => /^-[abd-zA-Z]*c[a-zA-Z]*$/.test(a.raw))
    if (at >= 0) {
      const code = args[at + 1]
      if (!code) return
      if (code.dynamic) return ShellContext.anything(ctx, name, `${name} -c with text not known statically`)
      // `sh -c 'cat "$1"' name arg…`: the arguments are the script's $0, $1, …
      const inner = ShellContext.fork(state)
      args
        .slice(at + 2)
        .forEach((a, i) => inner.vars.set(String(i), a.dynamic ? a : a.values.length === 1 ? a.values[0] : undefined))
      return ShellParse.script(ctx, code.values.join(" "), inner, depth - 1)
    }
    const operands = args.filter((a) => !a.raw.startsWith("-"))
    if (operands.length) return scriptFile(c, operands[0])
    if (stdin !== undefined) ShellParse.script(ctx, stdin, ShellContext.fork(state), depth - 1)
  }

  function source(c: Call) {
    const files = parse(c.args, {}).operands
    if (files[0]) scriptFile(c, files[0])
    for (const f of files) ShellContext.emit(c.ctx, f, "read", c.name, c.state)
  }

  function sed(c: Call) {
    const { ctx, args, state } = c
    const spec: Spec = { values: ["-e", "--expression", "-l", "--line-length"], reads: ["-f", "--file"] }
    const parsed = parse(args, spec)
    for (const f of valuesOf(parsed, spec.reads)) ShellContext.emit(ctx, f, "read", "sed", state)
    const inPlace = parsed.flags.some((f) => /^-[a-zA-Z]*i|^--in-place/.test(f))
    const explicit = ["-e", "--expression", "-f", "--file"].some((f) => parsed.options.has(f))
    const scripts = explicit ? valuesOf(parsed, ["-e", "--expression"]) : parsed.operands.slice(0, 1)
    const files = [...(explicit ? parsed.operands : parsed.operands.slice(1)), ...parsed.loose]
    for (const f of files) {
      ShellContext.emit(ctx, f, "read", "sed", state)
      if (inPlace) ShellContext.emit(ctx, f, "write", "sed", state, { destructive: true })
    }
    // `w file`, `r file` and `e command` inside the script.
    for (const script of scripts) {
      if (script.dynamic) continue
      const text = script.values.join("\n")
      // Blanks that cannot cross a line, one address run: adjacent optional runs of blanks made this cubic.
      for (const m of text.matchAll(/(?:^|[;\n}])[ \t]*(?:[\d,$/!]+[ \t]*)?([wWrR])[ \t]+([^;\n}]+)/g)) {
        const file = ShellContext.literal(m[2].trim())
        if (m[1] === "w" || m[1] === "W") ShellContext.emit(ctx, file, "write", "sed", state, { destructive: true })
        else ShellContext.emit(ctx, file, "read", "sed", state)
      }
      for (const m of text.matchAll(/s(.)(?:(?!\1).)*\1(?:(?!\1).)*\1[gpIiMme\d]*w\s+([^;\n}]+)/g))
        ShellContext.emit(ctx, ShellContext.literal(m[2].trim()), "write", "sed", state, { destructive: true })
    }
  }

  function link(c: Call) {
    const { ctx, name, args, state } = c
    const parsed = parse(args, { values: ["-t", "--target-directory", "-S", "--suffix"] })
    const operands = parsed.operands
    if (!operands.length) return
    const [target, ...links] = operands
    const symbolic = parsed.flags.some((a) => /^-[a-zA-Z]*s/.test(a) || a === "--symbolic")
    const linkPath = links[0] && !links[0].dynamic ? ShellContext.abs(ctx, links[0].values[0] ?? "", state) : undefined
    // A symbolic link's target is relative to the folder of the link, not to the working directory.
    const base =
      symbolic && linkPath && !target.values.some((v) => path.isAbsolute(v))
        ? ShellContext.isDir(linkPath)
          ? linkPath
          : path.dirname(linkPath)
        : state.cwd
    ShellContext.emit(ctx, target, "read", name, { cwd: base, vars: state.vars })
    if (links.length)
      for (const l of links) ShellContext.emit(ctx, l, "write", name, state, { destructive: true, into: true })
    else if (!target.dynamic)
      for (const v of target.values)
        ShellContext.emit(
          ctx,
          { values: [path.basename(v)], dynamic: false, prefix: "", raw: v },
          "write",
          name,
          state,
          {
            destructive: true,
          },
        )
  }

  function find(c: Call) {
    const { ctx, state, depth } = c
    const { starts, expression, filter } = ShellFind.parse(c.args)
    for (const s of starts) ShellContext.emit(ctx, s, "read", "find", state)
    for (let j = 0; j < expression.length; j++) {
      const raw = expression[j].raw
      if (["-fprint", "-fprint0", "-fprintf", "-fls"].includes(raw) && expression[j + 1])
        ShellContext.emit(ctx, expression[j + 1], "write", "find", state, { destructive: true })
      if (!["-exec", "-execdir", "-ok", "-okdir"].includes(raw)) continue
      let k = j + 1
      const inner: Word[] = []
      while (k < expression.length && ![";", "\\;", "+"].includes(expression[k].raw)) inner.push(expression[k++])
      j = k
      if (!inner.length || inner[0].dynamic) continue
      // What `{}` stands for: a path below a start folder (`-execdir` runs in the file's folder with `./name`).
      const found = starts.map((s) => {
        const abs = s.dynamic ? undefined : ShellContext.abs(ctx, s.values[0] ?? ".", state)
        if (s.dynamic) return ShellContext.unknown(s.prefix)
        if (raw === "-execdir" || raw === "-okdir") return ShellContext.unknown(abs ? abs + "/" : "")
        const v = s.values[0] ?? "."
        return ShellContext.unknown(v.endsWith("/") ? v : v + "/")
      })
      run({
        ...c,
        name: inner[0].values[0] ?? "",
        args: inner.slice(1).flatMap((w) => substitute(w, "{}", found)),
        depth,
        stdin: undefined,
        input: undefined,
      })
    }
    if (expression.some((a) => a.raw === "-delete"))
      for (const s of starts)
        ShellContext.emit(ctx, s, "write", "find -delete", state, { recursive: true, destructive: true, filter })
  }

  function dd(c: Call) {
    for (const a of c.args) {
      for (const v of a.values) {
        if (v.startsWith("if=")) ShellContext.emit(c.ctx, ShellContext.literal(v.slice(3)), "read", "dd", c.state)
        if (v.startsWith("of="))
          ShellContext.emit(c.ctx, ShellContext.literal(v.slice(3)), "write", "dd", c.state, { destructive: true })
      }
    }
  }

  function tar(c: Call) {
    const { ctx, name, args, state } = c
    const first = args[0]?.raw ?? ""
    // The mode: one-letter flags (`czf`, `-xvf`, the first word without a dash) or long options.
    const short = args
      .filter((a, i) => (a.raw.startsWith("-") && !a.raw.startsWith("--")) || (i === 0 && !first.startsWith("-")))
      .map((a) => a.raw)
      .join("")
    const long = args.filter((a) => a.raw.startsWith("--")).map((a) => a.raw)
    const create = /[cru]/.test(short) || long.some((l) => /^--(create|append|update)$/.test(l))
    const extract = /x/.test(short) || long.some((l) => /^--(extract|get)$/.test(l))
    const archive = args.filter((a, i) => ["-f", "--file"].includes(args[i - 1]?.raw ?? ""))
    for (const a of args) if (a.raw.startsWith("--file=")) archive.push(ShellContext.literal(a.raw.slice(7)))
    const attached = args.find((a) => /^-?[a-zA-Z]*f$/.test(a.raw) && !a.raw.startsWith("--"))
    if (!archive.length && attached) {
      const idx = args.indexOf(attached)
      if (args[idx + 1]) archive.push(args[idx + 1])
    }
    const dirOption = args.filter((a, i) => ["-C", "--directory"].includes(args[i - 1]?.raw ?? ""))
    for (const a of args) if (a.raw.startsWith("--directory=")) dirOption.push(ShellContext.literal(a.raw.slice(12)))
    const skip = new Set([...archive, ...dirOption])
    const lists = args.filter((a, i) => ["-T", "--files-from", "-X", "--exclude-from"].includes(args[i - 1]?.raw ?? ""))
    for (const l of lists) ShellContext.emit(ctx, l, "read", name, state)
    const operands = args
      .slice(first.startsWith("-") ? 0 : 1)
      .filter((a) => !a.raw.startsWith("-") && !skip.has(a) && !lists.includes(a))
    for (const a of archive)
      if (!a.values.includes("-"))
        ShellContext.emit(ctx, a, create ? "write" : "read", name, state, { destructive: create })
    // Members are read relative to the last -C folder.
    const base =
      dirOption.length && !dirOption[dirOption.length - 1].dynamic
        ? {
            cwd: ShellContext.abs(ctx, dirOption[dirOption.length - 1].values[0] ?? ".", state, true),
            vars: state.vars,
          }
        : state
    if (create) for (const o of operands) ShellContext.emit(ctx, o, "read", name, base, { recursive: true })
    if (extract) {
      const where = dirOption.length ? dirOption : [ShellContext.literal(".")]
      for (const d of where)
        ShellContext.emit(ctx, d, "write", `${name} -x`, state, { recursive: true, destructive: true })
    }
  }

  function zip(c: Call) {
    const { ctx, name, args, state } = c
    const parsed = parse(args, { values: ["-x", "-i", "-P", "--password", "-o", "-t", "-tt", "-O", "-b"] })
    const operands = [...parsed.operands, ...parsed.loose]
    const [mode, ...rest] = name === "zip" ? [ShellContext.literal("a"), ...operands] : operands
    const [archive, ...files] = rest
    if (!archive) return
    const command = mode.values[0] ?? ""
    if (/^[xe]$/.test(command)) {
      // 7z x archive -oDIR: extracts into DIR (or the working directory).
      ShellContext.emit(ctx, archive, "read", name, state)
      const out = args.find((a) => a.raw.startsWith("-o"))
      const where = out ? ShellContext.literal(out.raw.slice(2) || ".") : ShellContext.literal(".")
      return ShellContext.emit(ctx, where, "write", name, state, { recursive: true, destructive: true })
    }
    if (/^[lt]$/.test(command)) return ShellContext.emit(ctx, archive, "read", name, state)
    ShellContext.emit(ctx, archive, "write", name, state, { destructive: true })
    for (const f of files) ShellContext.emit(ctx, f, "read", name, state, { recursive: true })
  }

  function unzip(c: Call) {
    const { ctx, args, state } = c
    const parsed = parse(args, { values: ["-d", "-x", "-P"] })
    if (parsed.operands[0]) ShellContext.emit(ctx, parsed.operands[0], "read", "unzip", state)
    if (parsed.flags.some((a) => /^-[a-zA-Z]*[lvtpcz]/.test(a))) return
    const dir = valuesOf(parsed, ["-d"])
    for (const d of dir.length ? dir : [ShellContext.literal(".")])
      ShellContext.emit(ctx, d, "write", "unzip", state, { recursive: true, destructive: true })
  }

  /** `patch`: the files it names, or anything below its folder. */
  function patch(c: Call) {
    const { ctx, args, state } = c
    const spec: Spec = {
      values: ["-d", "--directory", "-p", "-r", "-F", "-z", "-B", "-V", "-D"],
      reads: ["-i", "--input"],
      writes: ["-o", "--output"],
    }
    const parsed = parse(args, spec)
    for (const i of valuesOf(parsed, spec.reads)) ShellContext.emit(ctx, i, "read", "patch", state)
    for (const o of valuesOf(parsed, spec.writes))
      ShellContext.emit(ctx, o, "write", "patch", state, { destructive: true })
    // `patch file [patchfile]`: the first operand is changed, a second one is the patch read.
    const [explicit, patchfile] = parsed.operands
    if (patchfile) ShellContext.emit(ctx, patchfile, "read", "patch", state)
    if (explicit) return ShellContext.emit(ctx, explicit, "write", "patch", state, { destructive: true })
    const dirs = valuesOf(parsed, ["-d", "--directory"])
    // The patch itself names the files it changes, when it can be read now.
    const source = valuesOf(parsed, spec.reads)[0] ?? patchfile ?? c.stdinFile
    const strip = valuesOf(parsed, ["-p"])[0]?.values[0]
    const dir =
      dirs.length === 1 && !dirs[0].dynamic
        ? ShellContext.abs(ctx, dirs[0].values[0] ?? ".", state, true)
        : dirs.length
          ? undefined
          : state.cwd
    const targets =
      source && dir !== undefined
        ? ShellPatch.targets(ctx, [source], state, strip === undefined ? 0 : Number(strip))
        : undefined
    if (targets) {
      // Without -p, patch takes the path as written or, failing that, its base name.
      const names =
        strip === undefined ? targets.flatMap((t) => [t, t.replace(/^[ab]\//, ""), path.basename(t)]) : targets
      for (const t of new Set(names))
        ShellContext.emit(
          ctx,
          ShellContext.literal(t),
          "write",
          "patch",
          { cwd: dir, vars: state.vars },
          { destructive: true },
        )
      return
    }
    for (const d of dirs.length ? dirs : [ShellContext.literal(".")])
      ShellContext.emit(ctx, d, "write", "patch", state, { recursive: true, destructive: true })
  }

  /** `curl -d @file`, `-F name=@file`, `file://` URLs; `curl -O` and `wget` write the URL's file name. */
  function transfer(c: Call, parsed: Parsed) {
    const { ctx, name, state } = c
    for (const flag of ["-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "-F", "--form", "--json"]) {
      for (const value of parsed.options.get(flag) ?? []) {
        for (const v of value.values) {
          const at = v.indexOf("@")
          if (flag === "--data-raw" || at < 0) continue
          if (at === 0 || flag === "-F" || flag === "--form" || flag === "--data-urlencode") {
            const file = v.slice(at + 1).split(";")[0]
            if (file && file !== "-") ShellContext.emit(ctx, ShellContext.literal(file), "read", name, state)
          }
        }
      }
    }
    const urls = parsed.operands
    for (const u of urls)
      for (const v of u.values)
        if (v.startsWith("file://")) ShellContext.emit(ctx, ShellContext.literal(v), "read", name, state)
    const named =
      name === "wget"
        ? !parsed.options.has("-O") && !parsed.options.has("--output-document") && !parsed.flags.includes("--spider")
        : parsed.flags.some((f) => /^-[a-zA-Z]*O$|^--remote-name(-all)?$/.test(f))
    if (!named) return
    for (const u of urls) {
      if (u.dynamic) {
        ShellContext.region(ctx, ShellContext.dir(state), "write", name, true)
        continue
      }
      for (const v of u.values) {
        const file = /^[a-z]+:\/\/[^/]*(\/.*)?$/i.exec(v)?.[1]?.split(/[?#]/)[0] ?? ""
        const base = path.posix.basename(file) || "index.html"
        ShellContext.emit(ctx, ShellContext.literal(base), "write", name, state, { destructive: true })
      }
    }
  }

  /** Space-separated names, for table groups. */
  function each(names: string, spec: Spec): Record<string, Spec> {
    return Object.fromEntries(
      names
        .split(/\s+/)
        .filter(Boolean)
        .map((n) => [n, spec]),
    )
  }

  const READ: Spec = { operands: "read" }
  const SEARCH_VALUES =
    list(`-m -A -B -C -d -D --max-count --context --after-context --before-context --include --exclude
    --exclude-dir --color --colour --label --binary-files --devices --directories -e --regexp`)
  const CHANGE_COMPRESSED: Spec = {
    operands: "change",
    recursive: /^-[a-zA-Z]*r|^--recursive$/,
    readOnly: /^-[a-zA-Z]*[ctl]|^--(stdout|to-stdout|test|list)$/,
    values: ["-S", "--suffix", "-T", "--threads", "-b"],
  }
  const OWNERSHIP: Spec = {
    operands: "write",
    program: ["--reference"],
    reads: ["--reference"],
    recursive: /^-[a-zA-Z]*R|^--recursive$/,
  }

  /** Every command with a known reading. */
  export const TABLE: Record<string, Spec> = {
    ...each(
      `echo printf true false : test [ [[ pwd export local declare typeset readonly unset set shopt read sleep which
       type hash alias unalias wait jobs kill exit return break continue shift trap umask ulimit date whoami id uname
       hostname seq yes expr let history clear tput sync nproc arch uptime ps top free df getconf locale tty logname
       users groups printenv tr locate basename dirname mktemp`,
      { operands: "none" },
    ),
    ...each(
      `cat tac nl less more most wc paste fmt strings hexdump hd xxd base32 basenc md5sum sha1sum sha224sum sha256sum
       sha384sum sha512sum b2sum cksum sum file diff diff3 sdiff cmp comm column expand unexpand rev pr ls du exa eza
       lsd dir vdir bat batcat view open xdg-open readlink realpath zcat bzcat xzcat zstdcat zless zmore lz4cat csvlook
       mlr pdftotext exiftool identify lsattr getfacl namei`,
      READ,
    ),
    head: { operands: "read", values: ["-n", "-c", "--lines", "--bytes"] },
    tail: { operands: "read", values: ["-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"] },
    base64: { operands: "read", values: ["-w", "--wrap"] },
    od: { operands: "read", values: ["-A", "-t", "-j", "-N", "-S"] },
    fold: { operands: "read", values: ["-w", "--width"] },
    uniq: { operands: "read", values: ["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"] },
    cut: { operands: "read", values: ["-d", "-f", "-b", "-c", "--delimiter", "--fields", "--bytes", "--characters"] },
    iconv: { operands: "read", values: ["-f", "-t", "--from-code", "--to-code"], writes: ["-o", "--output"] },
    stat: { operands: "read", values: ["-c", "--format", "--printf"] },
    tree: { operands: "read", values: ["-L", "-P", "-I", "--charset", "--filelimit"], writes: ["-o"] },
    look: { operands: "read", program: [] },
    split: { operands: "read", values: ["-l", "-b", "-C", "-n", "-a", "-t", "--lines", "--bytes", "--suffix-length"] },
    csplit: { operands: "read", values: ["-f", "-b", "-n", "--prefix", "--suffix-format", "--digits"] },
    sort: {
      operands: "read",
      values: ["-k", "-t", "-S", "-T", "--key", "--field-separator", "--buffer-size", "--temporary-directory"],
      reads: ["--files0-from"],
      writes: ["-o", "--output"],
    },
    shuf: {
      operands: "read",
      values: ["-n", "--head-count", "-i", "--input-range"],
      reads: ["--random-source"],
      writes: ["-o", "--output"],
    },
    ...each("jq yq xq gojq", { operands: "read", program: ["-f", "--from-file"], values: ["--indent"] }),
    ...each("fd fdfind", {
      operands: "read",
      program: [],
      values: list("-e --extension -t --type -E --exclude -d --max-depth -x --exec -X --exec-batch"),
    }),
    ...each("grep egrep fgrep zgrep pcregrep ugrep git-grep", {
      operands: "read",
      program: ["-e", "-f", "--regexp", "--file"],
      values: SEARCH_VALUES,
      reads: ["-f", "--file", "--exclude-from"],
    }),
    rg: {
      operands: "read",
      program: ["-e", "-f", "--regexp", "--file", "--files", "--type-list"],
      values: list(`-g --glob --iglob -t -T --type --type-not --type-add -m --max-count -A -B -C --context -M
        --max-columns -j --threads -E --encoding -r --replace -d --max-depth --max-filesize --sort
        --sortr --color --colors --path-separator --pre --pre-glob --engine -e --regexp`),
      reads: ["-f", "--file", "--ignore-file"],
    },
    ...each("ag ack", {
      operands: "read",
      program: [],
      values: ["-G", "--file-search-regex", "--ignore", "--ignore-dir", "-A", "-B", "-C", "-m", "--pager", "--type"],
    }),
    ...each("rm unlink srm trash trash-put gio", { operands: "remove", recursive: /^-[a-zA-Z]*[rR]|^--recursive$/ }),
    shred: { operands: "remove", values: list("-n -s --iterations --size"), reads: list("--random-source") },
    rmdir: { operands: "remove", recursive: true },
    ...each("chmod chown chgrp", OWNERSHIP),
    chattr: { ...OWNERSHIP, program: [], values: ["-v", "-p"] },
    setfacl: {
      operands: "write",
      values: ["-m", "-x", "--modify", "--remove"],
      reads: ["-M", "-X", "--restore"],
      recursive: /^-[a-zA-Z]*R|^--recursive$/,
    },
    touch: { operands: "write", values: ["-d", "-t", "--date"], reads: ["-r", "--reference"] },
    mkdir: { operands: "write", values: ["-m", "--mode"] },
    truncate: { operands: "write", values: ["-s", "--size"], reads: ["-r", "--reference"] },
    ...each("mkfifo mknod setfattr xattr utimes tee sponge", {
      operands: "write",
      values: ["-m", "--mode", "-n", "-v"],
    }),
    ...each("vim vi nvim nano emacs ed ex pico micro code subl kak hx sqlite3 dos2unix unix2dos", {
      operands: "change",
    }),
    ...each("gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 compress uncompress", CHANGE_COMPRESSED),
    ...each("cp install", {
      operands: "read",
      destination: ["-t", "--target-directory"],
      recursive: /^-[a-zA-Z]*[rRa]|^--recursive$|^--archive$/,
      values: ["-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"],
    }),
    rsync: {
      operands: "read",
      destination: [],
      recursive: true,
      remote: true,
      values: ["-e", "--rsh", "--exclude", "--include", "-f", "--filter", "-T", "--temp-dir", "--chmod", "--chown"],
      reads: ["--exclude-from", "--include-from", "--files-from", "--password-file"],
      writes: ["--log-file"],
    },
    scp: {
      operands: "read",
      destination: [],
      recursive: true,
      remote: true,
      values: ["-P", "-o", "-c", "-l", "-S", "-J"],
      reads: ["-i", "-F"],
    },
    mv: { operands: "move", destination: ["-t", "--target-directory"], values: ["-S", "--suffix"] },
    ...each("ln link", { custom: link }),
    ...each("cd pushd", { custom: cd }),
    popd: { custom: (c) => void (c.state.cwd = undefined) },
    ...Object.fromEntries(Object.keys(WRAPPERS).map((n) => [n, { custom: wrapper }])),
    xargs: { custom: xargs },
    eval: { custom: evaluate },
    ...each("bash sh zsh dash ksh mksh ash fish", { custom: shell }),
    ...each("source .", { custom: source }),
    ...each(ShellInterpreters.NAMES.join(" "), { custom: ShellInterpreters.interpreter }),
    ...each("awk gawk mawk nawk", { custom: ShellInterpreters.awk }),
    git: { custom: ShellGit.run },
    sed: { custom: sed },
    find: { custom: find },
    dd: { custom: dd },
    ...each("tar bsdtar", { custom: tar }),
    ...each("zip 7z 7za", { custom: zip }),
    unzip: { custom: unzip },
    patch: { custom: patch },
    curl: {
      operands: "none",
      values: list(`-d --data --data-binary --data-raw --data-urlencode -F --form --json -H --header -X --request -u
        --user -A --user-agent -e --referer -x --proxy -m --max-time --connect-timeout -w --write-out -r
        --range`),
      // `-b` names a cookie file or gives cookies inline: read as a file either way.
      reads: list("-T --upload-file -K --config --cacert --cert --key --netrc-file -b --cookie"),
      writes: ["-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr"],
      extra: transfer,
    },
    wget: {
      operands: "none",
      values: ["-t", "--tries", "-T", "--timeout", "-U", "--user-agent", "--header", "-e", "--execute", "-P"],
      reads: ["-i", "--input-file", "--post-file", "--body-file", "--ca-certificate", "--certificate", "--private-key"],
      writes: ["-O", "--output-document", "-o", "--output-file", "-a", "--append-output"],
      extra: transfer,
    },
    openssl: {
      operands: "read",
      subcommand: 1,
      long: true,
      reads: ["-in", "-inkey", "-key", "-signkey", "-kfile", "-CAfile", "-cert", "-CAkey", "-config", "-extfile"],
      writes: ["-out", "-keyout", "-writerand"],
      values: list(`-passin -passout -pass -md -iter -days -subj -newkey -name -engine -outform -inform -keyform
        -certform -digest -sigopt -pkeyopt -set_serial -extensions -nameopt -certopt -K -iv -S -k -rand`),
    },
    gpg: {
      operands: "read",
      reads: ["--recipient-file", "--passphrase-file", "--keyring"],
      writes: ["-o", "--output"],
      values: ["-r", "--recipient", "-u", "--local-user", "--default-key", "--homedir", "--passphrase", "-z"],
    },
    age: {
      operands: "read",
      reads: ["-i", "--identity", "-R", "--recipients-file"],
      writes: ["-o", "--output"],
      values: ["-r", "--recipient"],
    },
    "ssh-keygen": {
      operands: "read",
      reads: ["-f", "-s"],
      values: list("-t -b -C -N -P -E -m -O -n -I -V -z -Y -a -Z -r -D -w"),
    },
  }
}
