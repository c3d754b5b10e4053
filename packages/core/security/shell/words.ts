import path from "path"
import type { Node } from "web-tree-sitter"
import { ShellContext } from "./context"
import { ShellOutput } from "./output"

/**
 * Bash words evaluated statically: quotes removed, `$'…'` escapes decoded, known variables and command substitutions
 * replaced (`$(pwd)`, `$(echo x)`, `$(find d)` as a dynamic value below `d/`), braces and globs expanded against the
 * file system like bash. What is built at run time keeps the literal text before it as a prefix.
 *
 * @example
 * ShellWords.evaluate(ctx, node /* "$D/x" with D=src *\/, state, true).values // ["src/x"]
 */
export namespace ShellWords {
  type Word = ShellContext.Word
  type State = ShellContext.State
  type Context = ShellContext.Context

  type Part = { text: string; quoted: boolean; dynamic: boolean; prefix?: string }
  const UNKNOWN: Part = { text: "", quoted: false, dynamic: true }

  /**
   * Evaluates a word node; `expand` applies brace expansion and globs (arguments, not assignments).
   *
   * @example
   * ShellWords.evaluate(ctx, node /* {a,b}.md *\/, state, true).values // ["a.md", "b.md"]
   */
  export function evaluate(ctx: Context, node: Node, state: State, expand: boolean): Word {
    const parts = partsOf(ctx, node, state)
    let text = ""
    let prefix = ""
    let dynamic = false
    let expandable = false
    for (const part of parts) {
      if (part.dynamic) {
        // A value built at run time whose start is known (`$(find d)`, a loop over one) extends the prefix.
        if (!dynamic) prefix = text + (part.prefix ?? "")
        dynamic = true
        continue
      }
      text += part.text
      if (!part.quoted && /[*?[{]/.test(part.text)) expandable = true
    }
    if (dynamic) return { values: [], dynamic, prefix, raw: node.text }
    if (parts.length && !parts[0].quoted && (text === "~" || text.startsWith("~/"))) {
      // `~` is whatever HOME holds: unknown when the command set it to a value built at run time.
      if (state.vars.has("HOME") && typeof state.vars.get("HOME") !== "string")
        return { values: [], dynamic: true, prefix: "", raw: node.text }
      text = path.join(ShellContext.home(ctx, state), text.slice(1))
    }
    let values = [text]
    if (expand && expandable) {
      values = braces(text)
      values = values.flatMap((v) => (/[*?[]/.test(v) ? glob(ctx, v, state) : [v]))
    }
    // An unquoted `$(…)` alone is split into words like bash does.
    if (expand && parts.length === 1 && !parts[0].quoted && node.type === "command_substitution")
      values = values.flatMap((v) => v.split(/\s+/).filter(Boolean))
    return { values, dynamic: false, prefix: text, raw: node.text }
  }

  /** The arguments of a command node, evaluated and expanded. */
  export function args(ctx: Context, command: Node, state: State): Word[] {
    const out: Word[] = []
    for (const a of command.childrenForFieldName("argument")) if (a) out.push(evaluate(ctx, a, state, true))
    return out
  }

  /** The base name of a command node's program, undefined when not known statically. */
  export function nameOf(ctx: Context, command: Node, state: State): string | undefined {
    const name = command.childForFieldName("name")
    if (!name) return undefined
    const word = evaluate(ctx, name.namedChildren[0] ?? name, state, false)
    return word.dynamic ? undefined : path.basename(word.values[0] ?? "")
  }

  function partsOf(ctx: Context, node: Node, state: State): Part[] {
    switch (node.type) {
      case "word":
      case "command_name":
      case "number":
      case "variable_name":
        if (node.type === "command_name" && node.namedChildren[0]) return partsOf(ctx, node.namedChildren[0], state)
        return [{ text: node.text.replace(/\\(.)/gs, "$1"), quoted: false, dynamic: false }]
      case "raw_string":
        return [{ text: node.text.slice(1, -1), quoted: true, dynamic: false }]
      case "ansi_c_string":
        return [{ text: ansiC(node.text.slice(2, -1)), quoted: true, dynamic: false }]
      case "string": {
        const out: Part[] = []
        for (const child of node.namedChildren) {
          if (!child) continue
          if (child.type === "string_content")
            out.push({ text: child.text.replace(/\\([$`"\\\n])/g, "$1"), quoted: true, dynamic: false })
          else out.push(...partsOf(ctx, child, state).map((p) => ({ ...p, quoted: true })))
        }
        if (!node.namedChildren.length) out.push({ text: "", quoted: true, dynamic: false })
        return out
      }
      case "concatenation":
        return node.namedChildren.flatMap((c) => (c ? partsOf(ctx, c, state) : []))
      case "simple_expansion":
      case "expansion": {
        const inner = node.namedChildren
        const name =
          inner[0]?.type === "variable_name" || inner[0]?.type === "special_variable_name" ? inner[0].text : undefined
        if (!name || inner.length > 1) return [UNKNOWN]
        const value = variable(ctx, name, state)
        if (value === undefined) return [UNKNOWN]
        if (typeof value === "string") return [{ text: value, quoted: true, dynamic: false }]
        return [{ text: "", quoted: false, dynamic: true, prefix: value.prefix }]
      }
      case "command_substitution": {
        const printed = ShellOutput.substitution(ctx, node, state)
        if (printed.length === 1 && !printed[0].dynamic && printed[0].values.length <= 1)
          return [{ text: printed[0].values[0] ?? "", quoted: true, dynamic: false }]
        if (printed.length && printed.every((w) => !w.dynamic))
          return [{ text: printed.flatMap((w) => w.values).join(" "), quoted: true, dynamic: false }]
        if (printed.length === 1) return [{ text: "", quoted: false, dynamic: true, prefix: printed[0].prefix }]
        return [UNKNOWN]
      }
      case "process_substitution":
        // `<(…)` is a descriptor of the shell's own (its command runs separately).
        return [{ text: "/dev/fd/63", quoted: true, dynamic: false }]
      default:
        return [UNKNOWN]
    }
  }

  /** A variable's value: assigned in the command, or one of the few the environment fixes. */
  export function variable(ctx: Context, name: string, state: State): ShellContext.Value {
    if (state.vars.has(name)) return state.vars.get(name)
    if (name === "HOME") return ShellContext.home(ctx, state)
    if (name === "PWD") return state.cwd
    if (["TMPDIR", "USER", "LOGNAME", "SHELL"].includes(name)) return ctx.options.env?.[name]
    return undefined
  }

  function glob(ctx: Context, pattern: string, state: State): string[] {
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
          ShellContext.note(ctx, `${pattern}: more than 1000 matches; analysed the first 1000`)
          break
        }
      }
      return found.length ? found : [pattern]
    } catch {
      return [pattern]
    }
  }

  /** Decodes the escapes of a `$'…'` string. */
  export function ansiC(s: string): string {
    return s.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)/g, (_, e: string) => {
      if (e[0] === "x" || e[0] === "u" || e[0] === "U") return String.fromCodePoint(parseInt(e.slice(1), 16))
      if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8))
      return (
        ({ n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", f: "\f", v: "\v" } as Record<string, string>)[e] ??
        e
      )
    })
  }

  /**
   * Bash brace expansion (`a{b,c}d`, `{1..3}`), bounded to 256 results.
   *
   * @example
   * ShellWords.braces("a{1..3}") // ["a1", "a2", "a3"]
   */
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
