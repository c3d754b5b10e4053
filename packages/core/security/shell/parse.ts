import { Language, Parser, type Node } from "web-tree-sitter"
// Imported as files, so a binary built with `bun build --compile` embeds them (a path into node_modules elsewhere).
import RUNTIME_WASM from "web-tree-sitter/tree-sitter.wasm" with { type: "file" }
import BASH_WASM from "tree-sitter-bash/tree-sitter-bash.wasm" with { type: "file" }
import { ShellCommands } from "./commands"
import { ShellContext } from "./context"
import { ShellOutput } from "./output"
import { ShellWords } from "./words"

/**
 * The bash grammar (tree-sitter-bash as WebAssembly) and the walk over a parsed command: statements, lists,
 * pipelines (what each stage prints feeds the next), subshells, `$(…)` and `<(…)`, redirects and here-docs,
 * variables assigned in the command, `for` loops over literal lists or listings, and the environment prefixes of a
 * command (`GIT_DIR=x git …`). Each simple command is handed to `ShellCommands.run`.
 *
 * @example
 * const ctx = ShellContext.create(await ShellParse.parser(), { cwd: "/r" })
 * ShellParse.script(ctx, "cd src && cat a", { cwd: "/r", vars: new Map() }, 4)
 * ctx.out.accesses // [{ path: "/r/src/a", op: "read", command: "cat" }]
 */
export namespace ShellParse {
  type State = ShellContext.State
  type Context = ShellContext.Context
  type Word = ShellContext.Word

  let wasm: { runtime?: string; bash?: string } = {}
  let loading: Promise<Parser> | undefined

  /** Overrides where the WebAssembly files are (hosts that bundle core, e.g. a compiled OpenCode binary). */
  export function configure(paths: { runtime?: string; bash?: string }) {
    wasm = paths
    loading = undefined
  }

  /**
   * The bash parser, initialised once per process (about 40 ms).
   *
   * @example
   * const tree = (await ShellParse.parser()).parse("cat a")
   */
  export function parser(): Promise<Parser> {
    loading ??= (async () => {
      const runtime = wasm.runtime ?? RUNTIME_WASM
      const bash = wasm.bash ?? BASH_WASM
      await Parser.init({ locateFile: () => runtime })
      const language = await Language.load(bash)
      const p = new Parser()
      p.setLanguage(language)
      return p
    })()
    loading.catch(() => (loading = undefined))
    return loading
  }

  /** Parses and walks a script (the command, `bash -c` text, a sourced file); `depth` bounds nesting. */
  export function script(ctx: Context, text: string, state: State, depth: number) {
    if (depth < 0) {
      ShellContext.note(ctx, "nested shells deeper than the analysis follows")
      return
    }
    const tree = ctx.parser.parse(text)
    if (!tree) {
      ctx.out.error = "the command could not be parsed"
      return
    }
    try {
      if (tree.rootNode.hasError) ShellContext.note(ctx, "the command has syntax errors; analysed as far as it parses")
      for (const node of tree.rootNode.namedChildren) if (node) statement(ctx, node, state, depth)
    } finally {
      tree.delete()
    }
  }

  /** Walks one statement; `input` is what a pipeline stage reads on stdin. */
  function statement(ctx: Context, node: Node, state: State, depth: number, input?: Word[]): void {
    switch (node.type) {
      case "command":
        return command(ctx, node, state, depth, [], input)
      case "redirected_statement": {
        const body = node.childForFieldName("body")
        const redirects = node.childrenForFieldName("redirect")
        const cwd = state.cwd
        if (body?.type === "command") command(ctx, body, state, depth, redirects, input)
        else if (body) statement(ctx, body, state, depth, input)
        for (const r of redirects) {
          if (!r) continue
          redirect(ctx, r, state, depth)
          // A `cd` in the body may or may not have happened when the redirect opens its file.
          if (cwd !== state.cwd) redirect(ctx, r, { cwd, vars: state.vars }, depth)
        }
        return
      }
      case "variable_assignment":
        return assign(ctx, node, state, depth)
      case "variable_assignments":
      case "declaration_command":
        for (const child of node.namedChildren)
          if (child?.type === "variable_assignment") assign(ctx, child, state, depth)
        return
      case "subshell":
      case "process_substitution":
      case "command_substitution": {
        const inner = ShellContext.fork(state)
        for (const child of node.namedChildren) if (child) statement(ctx, child, inner, depth)
        return
      }
      case "pipeline":
        return pipeline(ctx, node, state, depth, input)
      case "for_statement":
        return forLoop(ctx, node, state, depth)
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
          statement(ctx, child, state, depth)
        }
        return
      default:
        // `[[ -f x ]]` and other expressions test names and read no content; substitutions inside still run.
        return substitutions(ctx, node, state, depth)
    }
  }

  /** Runs the command and process substitutions found anywhere below `node`. */
  function substitutions(ctx: Context, node: Node, state: State, depth: number) {
    for (const child of node.namedChildren) {
      if (!child) continue
      if (child.type === "command_substitution" || child.type === "process_substitution")
        statement(ctx, child, state, depth)
      else substitutions(ctx, child, state, depth)
    }
  }

  function assign(ctx: Context, node: Node, state: State, depth: number) {
    const name = node.childForFieldName("name")?.text
    const value = node.childForFieldName("value")
    if (!name) return
    if (!value) {
      state.vars.set(name, "")
      return
    }
    substitutions(ctx, node, state, depth)
    state.vars.set(name, valueOf(ShellWords.evaluate(ctx, value, state, false)))
  }

  /** What a variable holds after being assigned a word. */
  function valueOf(word: Word): ShellContext.Value {
    if (word.dynamic) return word.prefix ? word : undefined
    return word.values.length === 1 ? word.values[0] : undefined
  }

  function forLoop(ctx: Context, node: Node, state: State, depth: number) {
    const variable = node.childForFieldName("variable")?.text
    const body = node.childForFieldName("body")
    const values: string[] = []
    const dynamic: Word[] = []
    for (const v of node.childrenForFieldName("value")) {
      if (!v) continue
      substitutions(ctx, v, state, depth)
      if (v.type === "command_substitution") statement(ctx, v, state, depth)
      const w = ShellWords.evaluate(ctx, v, state, true)
      if (w.dynamic) dynamic.push(w)
      values.push(...w.values)
    }
    if (!body) return
    if (!variable || dynamic.length || values.length === 0 || values.length > 32) {
      // Over a listing (`for f in $(find d)`) the variable is a value below it; otherwise unknown.
      if (variable) state.vars.set(variable, dynamic.length === 1 && !values.length ? valueOf(dynamic[0]) : undefined)
      statement(ctx, body, state, depth)
      return
    }
    for (const value of values) {
      state.vars.set(variable, value)
      statement(ctx, body, state, depth)
    }
  }

  function pipeline(ctx: Context, node: Node, state: State, depth: number, input?: Word[]) {
    const stages = node.namedChildren.filter((c): c is Node => !!c)
    // What a stage prints matters only to an `xargs` further down the pipeline.
    const consumer = stages.map((stage) => {
      const command = stage.type === "redirected_statement" ? stage.childForFieldName("body") : stage
      return command?.type === "command" && ShellWords.nameOf(ctx, command, state) === "xargs"
    })
    let words = input
    stages.forEach((stage, i) => {
      statement(ctx, stage, ShellContext.fork(state), depth, words)
      words = consumer.slice(i + 1).some(Boolean) ? ShellOutput.of(ctx, stage, state, words) : undefined
    })
  }

  function command(ctx: Context, node: Node, state: State, depth: number, redirects: (Node | null)[], input?: Word[]) {
    substitutions(ctx, node, state, depth)
    const nameNode = node.childForFieldName("name")
    if (!nameNode) return
    const name = ShellWords.evaluate(ctx, nameNode.namedChildren[0] ?? nameNode, state, false)
    const args = ShellWords.args(ctx, node, state)
    for (const r of node.namedChildren)
      if (r?.type === "herestring_redirect" || r?.type === "file_redirect") redirect(ctx, r, state, depth)
    let stdin: string | undefined
    for (const r of redirects) {
      if (r?.type !== "heredoc_redirect") continue
      const body = r.namedChildren.find((c) => c?.type === "heredoc_body")
      if (body) stdin = body.text
    }
    if (stdin === undefined) {
      for (const r of [...redirects, ...node.namedChildren]) {
        if (r?.type !== "herestring_redirect") continue
        const v = r.namedChildren[0]
        if (v) stdin = ShellWords.evaluate(ctx, v, state, false).values.join(" ")
      }
    }
    // `GIT_DIR=x git …`: the assignments are the command's environment, not the shell's.
    let env = state
    for (const child of node.namedChildren) {
      if (child?.type !== "variable_assignment") continue
      if (env === state) env = ShellContext.fork(state)
      const key = child.childForFieldName("name")?.text
      const value = child.childForFieldName("value")
      if (key) env.vars.set(key, value ? valueOf(ShellWords.evaluate(ctx, value, state, false)) : "")
    }
    if (name.dynamic) {
      ShellContext.anything(ctx, "(dynamic)", `the command name '${name.raw}' is not known statically`)
      return ShellCommands.generic({ ctx, name: "(dynamic)", args, state, depth, stdin, input })
    }
    const run = {
      ctx,
      name: name.values[0] ?? "",
      args,
      state: env,
      depth,
      stdin,
      input,
      stdinFile: stdinFile(ctx, [...redirects, ...node.namedChildren], state),
    }
    ShellCommands.run(run)
    // `cd` changes the shell's folder even when the command had an environment prefix.
    if (env !== state) state.cwd = env.cwd
  }

  /** The file a `< file` redirect feeds to stdin. */
  function stdinFile(ctx: Context, redirects: (Node | null)[], state: State): Word | undefined {
    for (const r of redirects) {
      if (r?.type !== "file_redirect") continue
      const destination = r.childForFieldName("destination")
      const operator = r.children
        .filter((c) => c && !c.isNamed)
        .map((c) => c!.type)
        .join("")
      if (destination && operator === "<" && !r.childForFieldName("descriptor"))
        return ShellWords.evaluate(ctx, destination, state, true)
    }
    return undefined
  }

  function redirect(ctx: Context, node: Node, state: State, depth: number) {
    if (node.type === "heredoc_redirect" || node.type === "herestring_redirect") {
      substitutions(ctx, node, state, depth)
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
    // Descriptor duplication (`2>&1`, `<&3`) touches no file; `>&file` does.
    if ((/&$/.test(operator) || operator === ">&" || operator === "<&") && /^\d+$|^-$/.test(destination.text)) return
    substitutions(ctx, node, state, depth)
    const word = ShellWords.evaluate(ctx, destination, state, true)
    if (operator.includes("<")) ShellContext.emit(ctx, word, "read", "redirect", state)
    if (operator.includes(">")) ShellContext.emit(ctx, word, "write", "redirect", state, { destructive: true })
  }
}
