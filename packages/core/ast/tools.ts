import { tool, type ToolContext, type ToolDefinition } from "@opencode-ai/plugin"
import path from "path"
import { exclusively, releasing, type Host } from "../host"
import { AstFormat } from "./format"
import { AstLanguage } from "./languages"
import { AstReplace } from "./replace"
import type { AstScan } from "./scan"
import { AstSearch } from "./search"

/**
 * `ast_grep_search` and `ast_grep_replace` in `@opencode-ai/plugin` `ToolDefinition` shape: the external plugin
 * returns them under `tool:`, the fork registers them as built-ins. Both return text (see format.ts) and throw
 * named errors with an actionable message for bad input (unknown language, invalid pattern or glob, missing path)
 * and for refused writes.
 *
 * Every file is checked with `host.access(file, "read")` before it is read and `host.access(file, "write")` before
 * a live replace writes it; paths outside the project ask OpenCode's `external_directory` permission and a live
 * replace asks the `edit` permission, as OpenCode's own grep and edit tools do.
 *
 * @example
 * const tools = AstTools.create(host)
 * await tools.ast_grep_search.execute({ pattern: "console.log($$$A)", lang: "typescript" }, ctx)
 */
export namespace AstTools {
  export const IDS = ["ast_grep_search", "ast_grep_replace"] as const

  const LANGS = AstLanguage.NAMES.join(", ")
  const { files: MAX_FILES, matches: MAX_MATCHES } = AstFormat.LIMITS

  const PATTERN_HELP =
    "ast-grep pattern: code of the chosen language where $NAME matches any single node, $$$NAME any sequence of " +
    "nodes (e.g. call arguments or statements) and $_ a node without capturing it; the same $NAME twice must match " +
    "identical code. The pattern must itself parse as one complete piece of code, e.g. `console.log($$$ARGS)`, " +
    "`def $F($$$P): $$$B`, `if err != nil { $$$ }`."
  const PATHS_HELP =
    "Files or directories to search, relative to the project directory (default: the whole project). .gitignore " +
    "rules apply and node_modules/.git are skipped, except inside a directory you name."
  const GLOBS_HELP =
    'Globs to narrow the files, e.g. ["src/**", "!**/*.test.ts"]; a leading ! excludes; a glob without / ' +
    'matches file names. An include glob like "**/*.vue" also searches that extension as the chosen language.'

  /**
   * The two tool definitions over `host` (its `access` check is read at call time).
   *
   * @example
   * const { ast_grep_search, ast_grep_replace } = AstTools.create(host)
   */
  export function create(host: Host): Record<(typeof IDS)[number], ToolDefinition> {
    const input = async (
      args: { pattern: string; lang: string; paths?: string[]; globs?: string[] },
      ctx: ToolContext,
    ): Promise<AstScan.Input> => {
      const directory = ctx.directory || host.directory
      const worktree = ctx.worktree || host.worktree || directory
      for (const given of args.paths ?? []) await external(ctx, directory, worktree, path.resolve(directory, given))
      return {
        directory,
        worktree,
        lang: args.lang,
        pattern: args.pattern,
        paths: args.paths,
        globs: args.globs,
        log: host.log,
        signal: ctx.abort,
        // Read at call time: the security feature installs host.access after this tool was created.
        access: host.access ? (file, op) => host.access!(file, op) : undefined,
        segments: host.segments ? () => host.segments!() : undefined,
      }
    }

    return {
      ast_grep_search: tool({
        description: [
          "Search code by syntax tree (ast-grep), in-process. Finds code matching a pattern regardless of formatting",
          "and comments — calls, declarations, statements — which text search (grep) cannot do reliably.",
          `Languages: ${LANGS}.`,
          `Returns file paths with line:column and the matched lines, grouped by file; at most ${MAX_FILES} files and`,
          `${MAX_MATCHES} matches are shown (the header gives the full counts and says [TRUNCATED] when capped).`,
          "Stops after 60 s with the partial result. Files protected by the security policy are never read.",
        ].join(" "),
        args: {
          pattern: tool.schema.string().describe(PATTERN_HELP),
          lang: AstLanguage.Schema.describe("Language of the pattern and of the files searched"),
          paths: tool.schema.array(tool.schema.string()).optional().describe(PATHS_HELP),
          globs: tool.schema.array(tool.schema.string()).optional().describe(GLOBS_HELP),
          context: tool.schema
            .number()
            .int()
            .min(0)
            .max(50)
            .optional()
            .describe("Lines of surrounding code to show before and after each match, 0-50 (default 0)"),
        },
        execute: (args, given) =>
          exclusively(host, async (outside) => {
            const ctx = releasing(given, outside)
            const scan = await input(args, ctx)
            // Positions only for what the output can show; every match is still counted.
            const result = await AstSearch.run(scan, { maxStoredMatches: MAX_MATCHES })
            return AstFormat.search(result, {
              directory: scan.directory,
              context: args.context,
              hidden: scan.segments?.().read,
            })
          }),
      }),
      ast_grep_replace: tool({
        description: [
          "Rewrite code by syntax tree (ast-grep), in-process: every match of the pattern is replaced by the rewrite,",
          "where $NAME / $$$NAME stand for what the pattern captured (e.g. pattern `console.log($$$A)`, rewrite",
          "`logger.info($$$A)`). Dry run by default: shows a unified diff per file and writes nothing; call again",
          "with dryRun: false to write. A live run writes all changed files atomically or none (it refuses when the",
          "search timed out, a file is write-protected, or more than 1000 files would change).",
          `Languages: ${LANGS}. Diffs of at most ${MAX_FILES} files are shown. Stops after 60 s.`,
        ].join(" "),
        args: {
          pattern: tool.schema.string().describe(PATTERN_HELP),
          rewrite: tool.schema
            .string()
            .describe("Replacement code; $NAME and $$$NAME insert what the pattern captured under that name"),
          lang: AstLanguage.Schema.describe("Language of the pattern and of the files changed"),
          paths: tool.schema.array(tool.schema.string()).optional().describe(PATHS_HELP),
          globs: tool.schema.array(tool.schema.string()).optional().describe(GLOBS_HELP),
          dryRun: tool.schema
            .boolean()
            .optional()
            .describe("true (default): only show what would change; false: write the files"),
        },
        execute: (args, given) =>
          exclusively(host, async (outside) => {
            const ctx = releasing(given, outside)
            const scan = await input(args, ctx)
            const dryRun = args.dryRun !== false
            const result = await AstReplace.run(scan, {
              rewrite: args.rewrite,
              dryRun,
              beforeWrite: async (changes) => {
                const files = changes.map((c) => path.relative(scan.worktree ?? scan.directory, c.file))
                await ctx.ask?.({
                  permission: "edit",
                  patterns: files,
                  always: ["*"],
                  metadata: { filepath: changes[0]?.file, files },
                })
              },
            })
            return AstFormat.replace(result, { directory: scan.directory, hidden: scan.segments?.().read })
          }),
      }),
    }
  }

  /** OpenCode's rule for paths outside the project: ask the `external_directory` permission for their folder. */
  async function external(ctx: ToolContext, directory: string, worktree: string, target: string) {
    const inside = (root: string) => {
      const rel = path.relative(root, target)
      return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
    }
    if (inside(directory) || inside(worktree)) return
    const glob = path.join(target, "*").replaceAll("\\", "/")
    await ctx.ask?.({
      permission: "external_directory",
      patterns: [glob],
      always: [glob],
      metadata: { filepath: target, parentDir: target },
    })
  }
}
