/**
 * Arguments of the search command (cli.ts), in the ast-grep CLI's spelling: `-p/--pattern`, `-l/--lang`,
 * `-C/--context`, `-g/--globs` (repeatable), then paths. Language aliases of the CLI (`ts`, `js`, `py`, …) are
 * accepted.
 *
 * @example
 * AstCli.parse(["-p", "foo($A)", "-l", "ts", "src"]) // { pattern: "foo($A)", lang: "typescript", paths: ["src"], globs: [], context: 0 }
 */
export namespace AstCli {
  /** `help` is set by `-h`/`--help`: print `USAGE` and exit 0, whatever else is on the line. */
  export type Args = {
    pattern: string
    lang: string
    paths: string[]
    globs: string[]
    context: number
    help?: boolean
  }

  export const USAGE = `usage: bun packages/core/ast/cli.ts -p PATTERN -l LANG [-C N] [-g GLOB]… [PATH…]
  Searches the current directory (or the PATHs in it) for code matching PATTERN, an ast-grep pattern
  ($X matches one node, $$$X any number), and prints what the ast_grep_search tool prints.
  -p, --pattern PATTERN  the pattern (required)
  -l, --lang LANG        its language (required): typescript, javascript, python, go, rust, … or ts, js, py, rs
  -C, --context N        lines of context around each match, 0 to 50 (default 0)
  -g, --globs GLOB       include only matching files; !GLOB excludes (repeatable)
  -h, --help             this text
Exit: 0 with matches, 1 without, 2 for bad input.
`

  const ALIASES: Record<string, string> = {
    ts: "typescript",
    js: "javascript",
    jsx: "javascript",
    py: "python",
    rs: "rust",
    rb: "ruby",
    cs: "csharp",
    "c++": "cpp",
    kt: "kotlin",
    sh: "bash",
    yml: "yaml",
    ex: "elixir",
    hs: "haskell",
    sol: "solidity",
  }

  /**
   * Parses the command line; throws an `Error` naming what is missing or unknown, followed by the usage.
   *
   * @example
   * AstCli.parse(["--pattern", "await $X", "--lang", "typescript", "-C", "2"]).context // 2
   */
  export function parse(argv: string[]): Args {
    const args: Args = { pattern: "", lang: "", paths: [], globs: [], context: 0 }
    const bad = (message: string) => new Error(`${message}\n\n${USAGE}`)
    // An option given with an empty value is empty, not missing (`-p ''` from a script whose variable was unset).
    const given = new Set<string>()
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i]
      const value = () => {
        const next = argv[++i]
        if (next === undefined) throw bad(`${arg} needs a value`)
        return next
      }
      if (arg === "-p" || arg === "--pattern") ((args.pattern = value()), given.add("pattern"))
      else if (arg === "-l" || arg === "--lang") ((args.lang = value().toLowerCase()), given.add("lang"))
      else if (arg === "-C" || arg === "--context") args.context = Number(value())
      else if (arg === "-g" || arg === "--globs") args.globs.push(value())
      else if (arg === "-h" || arg === "--help") return { ...args, help: true }
      else if (arg.startsWith("-") && arg !== "-") throw bad(`unknown option ${arg}; see --help`)
      else args.paths.push(arg)
    }
    const required = (name: "pattern" | "lang", option: string) => {
      if (args[name].trim()) return
      throw bad(given.has(name) ? `${option} is empty` : `${option} is required`)
    }
    required("pattern", "-p/--pattern")
    required("lang", "-l/--lang")
    args.lang = ALIASES[args.lang] ?? args.lang
    if (!Number.isInteger(args.context) || args.context < 0 || args.context > 50)
      throw bad("--context must be a whole number from 0 to 50")
    return args
  }
}
