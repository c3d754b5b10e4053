/**
 * `ast_grep_search` as a command: a process that starts, searches, prints the tool's text and exits, as the ast-grep
 * CLI does (the benchmark times the two side by side). The project directory is the current directory.
 *
 *   bun packages/core/ast/cli.ts -p 'console.log($$$A)' -l typescript [-C 2] [-g '!**\/*.test.ts'] [path…]
 *
 * Exit status: 0 with matches, 1 without, 2 for bad input (the named error's message on stderr); `--help` prints the
 * usage (exit 0).
 *
 * @example
 * // $ bun packages/core/ast/cli.ts -p 'await $X' -l ts src
 * // Found 3741 matches in 229 files (typescript, pattern `await $X`, 653 files searched).
 */
import { directoryProblem, processIO } from "../util/cli"
import { AstPool } from "./pool"

// The workers start loading napi before this thread loads the search's modules (zod, the language table, …).
AstPool.prestart(AstPool.parallelism())
const { AstCli } = await import("./cli-args")
const { AstFormat } = await import("./format")
const { AstSearch } = await import("./search")

const io = processIO(process.cwd(), process.env)
try {
  const args = AstCli.parse(process.argv.slice(2))
  if (args.help) {
    io.out(AstCli.USAGE)
    process.exit(0)
  }
  const directory = process.cwd()
  const problem = directoryProblem(directory)
  if (problem) throw new Error(problem)
  const result = await AstSearch.run(
    { directory, lang: args.lang, pattern: args.pattern, paths: args.paths, globs: args.globs },
    { maxStoredMatches: AstFormat.LIMITS.matches },
  )
  io.out((await AstFormat.search(result, { directory, context: args.context })) + "\n")
  process.exitCode = result.totalMatches > 0 ? 0 : 1
} catch (error) {
  io.err(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 2
}
