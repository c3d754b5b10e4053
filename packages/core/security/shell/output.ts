import fs from "fs"
import path from "path"
import type { Node } from "web-tree-sitter"
import { ShellContext } from "./context"
import { ShellGit } from "./git"
import { ShellWords } from "./words"

/**
 * What a command prints on stdout, as words for whatever consumes it: `xargs`, `$(…)`, a `for` loop over `$(…)`.
 * Printed text known statically comes back literal (`echo a`, `pwd`, `basename x`); listings come back as values built
 * at run time whose start is known (`find docs` prints `docs/…`, `ls docs` bare names, read from the working
 * directory); filters (`grep`, `sort`, `head`, …) pass on what they were given; anything else is unknown.
 *
 * Prefixes here are the text the values start with (relative values resolve where they are used); a prefix ""
 * means nothing is known.
 *
 * @example
 * ShellOutput.of(ctx, node /* find docs -name '*.md' *\/, state) // [{ dynamic: true, prefix: "docs/", … }]
 */
export namespace ShellOutput {
  type Word = ShellContext.Word
  type State = ShellContext.State
  type Context = ShellContext.Context

  /** What a pipeline stage or statement prints, given what it reads on stdin (`input`; undefined when unknown). */
  export function of(ctx: Context, node: Node, state: State, input?: Word[]): Word[] {
    if (node.type === "redirected_statement") {
      // Output sent to a file is not printed.
      for (const r of node.childrenForFieldName("redirect"))
        if (
          r?.type === "file_redirect" &&
          /^>|^&>/.test(r.text) &&
          !/^>&\d|^>\s*\/dev\/(stdout|stderr|tty)/.test(r.text)
        )
          return []
      const body = node.childForFieldName("body")
      return body ? of(ctx, body, state, herestring(ctx, node, state) ?? input) : [unknown]
    }
    if (node.type === "pipeline") {
      let words = input
      for (const stage of node.namedChildren) if (stage) words = of(ctx, stage, state, words)
      return words ?? [unknown]
    }
    if (node.type !== "command") return [unknown]
    const name = ShellWords.nameOf(ctx, node, state)
    const printer = name ? PRINTERS[name] : undefined
    if (!printer) return [unknown]
    const here = node.namedChildren.find((c) => c?.type === "herestring_redirect")?.namedChildren[0]
    const stdin = here ? [ShellWords.evaluate(ctx, here, state, false)] : input
    return printer({ ctx, args: ShellWords.args(ctx, node, state), state, input: stdin }) ?? [unknown]
  }

  /** What `$(…)` prints: its one statement's output, else unknown. */
  export function substitution(ctx: Context, node: Node, state: State): Word[] {
    const inner = node.namedChildren.filter((c): c is Node => !!c)
    if (inner.length !== 1) return [unknown]
    return of(ctx, inner[0], ShellContext.fork(state))
  }

  const unknown = ShellContext.unknown("")

  function herestring(ctx: Context, node: Node, state: State): Word[] | undefined {
    for (const r of node.childrenForFieldName("redirect")) {
      if (r?.type !== "herestring_redirect") continue
      const value = r.namedChildren[0]
      if (value) return [ShellWords.evaluate(ctx, value, state, false)]
    }
    return undefined
  }

  type Call = { ctx: Context; args: Word[]; state: State; input?: Word[] }
  /** What one command prints; undefined when not known. */
  type Printer = (c: Call) => Word[] | undefined

  const options = (args: Word[]) => args.filter((a) => a.raw.startsWith("-") && a.raw !== "-")
  const operands = (args: Word[]) => args.filter((a) => !a.raw.startsWith("-") || a.raw === "-")
  const literal = ShellContext.literal
  /**
   * A filter printing (some of) its input lines unchanged, as long as only `allowed` options are given and it reads
   * no file; `pattern`: its first operand is a pattern (grep).
   */
  const filter =
    (allowed: RegExp, pattern = false): Printer =>
    ({ args, input }) =>
      operands(args).length === (pattern ? 1 : 0) && options(args).every((o) => allowed.test(o.raw)) ? input : undefined
  /** Text computed from literal operands. */
  const compute =
    (f: (values: string[], c: Call) => string | undefined): Printer =>
    (c) => {
      const ops = operands(c.args)
      if (ops.some((o) => o.dynamic)) return undefined
      const out = f(
        ops.flatMap((o) => o.values),
        c,
      )
      return out === undefined ? undefined : [literal(out)]
    }
  /** The names a listing prints below each start folder. */
  const below = (start: Word): Word => {
    if (start.dynamic) return ShellContext.unknown(start.prefix)
    const v = start.values[0] ?? "."
    return ShellContext.unknown(v.endsWith("/") ? v : v + "/")
  }

  const echo: Printer = ({ args }) => {
    let i = 0
    while (i < args.length && /^-[neE]+$/.test(args[i].raw)) i++
    const rest = args.slice(i)
    if (rest.filter((a) => a.dynamic).length > (rest.length === 1 ? 1 : 0)) return undefined
    return rest
  }

  const printf: Printer = ({ args }) => {
    const [format, ...rest] = args
    if (!format) return []
    if (format.dynamic || rest.some((a) => a.dynamic)) return undefined
    const f = format.values.join(" ")
    if (!f.includes("%")) return [literal(f.replace(/\\n/g, "\n"))]
    if (/^%s(\\n)?$/.test(f)) return f.endsWith("\\n") ? rest : [literal(rest.flatMap((r) => r.values).join(""))]
    return undefined
  }

  const ls: Printer = ({ args, state }) => {
    const flags = options(args)
      .map((o) => o.raw)
      .join("")
    // Long formats print link targets and metadata as well as names.
    if (/^-[^-]*[lngos]|--format|--full/.test(flags)) return undefined
    const listed = operands(args)
    if (!listed.length) return [ShellContext.unknown("./")]
    return listed.flatMap((w) => {
      if (w.dynamic) return [ShellContext.unknown("")]
      return w.values.map((v) => {
        const abs = state.cwd === undefined && !path.isAbsolute(v) ? undefined : path.resolve(state.cwd ?? "/", v)
        // A folder's entries are printed as bare names, read from where the output is used; a file as given.
        return flags.includes("d") || !ShellContext.isDir(abs) ? literal(v) : ShellContext.unknown("./")
      })
    })
  }

  const find: Printer = ({ args }) => ShellFind.parse(args).starts.map((s) => below(s))

  const fd: Printer = ({ args }) => {
    const [, ...roots] = operands(args)
    return roots.length ? roots.map((r) => below(r)) : [ShellContext.unknown("./")]
  }

  const PRINTERS: Record<string, Printer> = {
    echo,
    printf,
    pwd: ({ state, args }) => {
      if (state.cwd === undefined) return undefined
      if (!args.some((a) => a.raw === "-P")) return [literal(state.cwd)]
      try {
        return [literal(fs.realpathSync(state.cwd))]
      } catch {
        return [literal(state.cwd)]
      }
    },
    cat: ({ args, input }) => (operands(args).length ? undefined : input),
    tee: ({ input }) => input,
    grep: filter(/^-[vixwEFGPsU]+$|^--(invert-match|ignore-case|word-regexp|line-regexp)$/, true),
    egrep: filter(/^-[vixwsU]+$/, true),
    fgrep: filter(/^-[vixwsU]+$/, true),
    sort: filter(/^-[rufVnhd]+$|^--(reverse|unique|version-sort|numeric-sort)$/),
    uniq: filter(/^-[ui]+$/),
    head: filter(/^-n?\d*$|^--lines(=\d+)?$/),
    tail: filter(/^-n?\+?\d*$|^--lines(=\+?\d+)?$/),
    tac: filter(/^$/),
    shuf: filter(/^$/),
    find,
    fd,
    fdfind: fd,
    ls,
    basename: compute(([v, suffix]) => (v === undefined ? undefined : path.basename(v, suffix))),
    dirname: compute(([v]) => (v === undefined ? undefined : path.dirname(v))),
    realpath: compute(([v], c) => real(v, c.state)),
    readlink: compute(([v], c) => (c.args.some((a) => /^-[a-zA-Z]*[fem]/.test(a.raw)) ? real(v, c.state) : undefined)),
    mktemp: ({ args, ctx }) => {
      const template = operands(args)[0]
      if (template?.dynamic) return undefined
      const t = template?.values[0]
      const tmp = ctx.options.env?.TMPDIR ?? "/tmp"
      if (!t) return [ShellContext.unknown(path.join(tmp, "tmp."))]
      let cut = t.length
      while (cut > 0 && t[cut - 1] === "X") cut--
      const fixed = t.slice(0, cut)
      return [
        ShellContext.unknown(args.some((a) => /^-[a-zA-Z]*t|^--tmpdir/.test(a.raw)) ? path.join(tmp, fixed) : fixed),
      ]
    },
    git: ({ ctx, args, state }) => ShellGit.printed(ctx, args, state),
  }

  function real(v: string | undefined, state: State): string | undefined {
    if (v === undefined) return undefined
    if (state.cwd === undefined && !path.isAbsolute(v)) return undefined
    const abs = path.resolve(state.cwd ?? "/", v)
    try {
      return fs.realpathSync(abs)
    } catch {
      return abs
    }
  }
}

/**
 * `find`'s command line: start folders, the expression, and the name globs every file it acts on must match.
 *
 * @example
 * ShellFind.parse(words /* . -name '*.tmp' -delete *\/).filter // ["*.tmp"]
 */
export namespace ShellFind {
  type Word = ShellContext.Word

  export type Parsed = { starts: Word[]; expression: Word[]; filter?: string[] }

  /**
   * Splits `find`'s arguments. `filter` holds the `-name`/`-iname` globs (matched against a file's name; `-iname`
   * as `[aA]` classes), only when the expression before the first action is a plain conjunction (no `-o`, `,` or
   * parentheses), so every file acted on matches all of them. Negated tests and `-path`/`-regex` tests are left out:
   * leaving a test out only widens what the command may touch.
   */
  export function parse(args: Word[]): Parsed {
    let i = 0
    while (i < args.length && ["-H", "-L", "-P"].includes(args[i].raw)) i++
    const starts: Word[] = []
    while (i < args.length && !/^[-(!]/.test(args[i].raw)) starts.push(args[i++])
    if (!starts.length) starts.push(ShellContext.literal("."))
    const expression = args.slice(i)
    return { starts, expression, filter: filterOf(expression) }
  }

  /** Tests that take a value. */
  const TESTS = new Set([
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
  ])
  /** Actions: tests after the first one no longer restrict what it acted on. */
  const ACTIONS = new Set([
    "-delete",
    "-exec",
    "-execdir",
    "-ok",
    "-okdir",
    "-print",
    "-print0",
    "-printf",
    "-fprint",
    "-ls",
    "-fls",
  ])

  function filterOf(expression: Word[]): string[] | undefined {
    const out: string[] = []
    for (let j = 0; j < expression.length; j++) {
      const raw = expression[j].raw
      if (ACTIONS.has(raw)) break
      if (["-o", "-or", ",", "(", "\\(", ")", "\\)"].includes(raw)) return undefined
      if (raw === "!" || raw === "-not") {
        j += TESTS.has(expression[j + 1]?.raw ?? "") ? 2 : 1
        continue
      }
      if (!TESTS.has(raw)) continue
      const value = expression[++j]
      if ((raw !== "-name" && raw !== "-iname") || !value || value.dynamic || value.values.length !== 1) continue
      const glob = value.values[0]
      if (glob.includes("/")) continue
      out.push(raw === "-iname" ? glob.replace(/[a-zA-Z]/g, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`) : glob)
    }
    return out.length ? out : undefined
  }
}
