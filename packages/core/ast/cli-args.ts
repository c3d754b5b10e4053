/**
 * Arguments of the search command (cli.ts), in the ast-grep CLI's spelling: `-p/--pattern`, `-l/--lang`,
 * `-C/--context`, `-g/--globs` (repeatable), then paths. Language aliases of the CLI (`ts`, `js`, `py`, …) are
 * accepted.
 *
 * @example
 * AstCli.parse(["-p", "foo($A)", "-l", "ts", "src"]) // { pattern: "foo($A)", lang: "typescript", paths: ["src"], globs: [], context: 0 }
 */
export namespace AstCli {
  export type Args = { pattern: string; lang: string; paths: string[]; globs: string[]; context: number }

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
   * Parses the command line; throws an `Error` naming what is missing or unknown.
   *
   * @example
   * AstCli.parse(["--pattern", "await $X", "--lang", "typescript", "-C", "2"]).context // 2
   */
  export function parse(argv: string[]): Args {
    const args: Args = { pattern: "", lang: "", paths: [], globs: [], context: 0 }
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i]
      const value = () => {
        const next = argv[++i]
        if (next === undefined) throw new Error(`${arg} needs a value`)
        return next
      }
      if (arg === "-p" || arg === "--pattern") args.pattern = value()
      else if (arg === "-l" || arg === "--lang") args.lang = value().toLowerCase()
      else if (arg === "-C" || arg === "--context") args.context = Number(value())
      else if (arg === "-g" || arg === "--globs") args.globs.push(value())
      else if (arg.startsWith("-") && arg !== "-") throw new Error(`unknown option ${arg}`)
      else args.paths.push(arg)
    }
    if (!args.pattern) throw new Error("usage: cli.ts -p PATTERN -l LANG [-C N] [-g GLOB]… [PATH…]")
    if (!args.lang) throw new Error("--lang is required")
    args.lang = ALIASES[args.lang] ?? args.lang
    if (!Number.isInteger(args.context) || args.context < 0 || args.context > 50)
      throw new Error("--context must be an integer from 0 to 50")
    return args
  }
}
