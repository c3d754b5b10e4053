import fs from "fs/promises"
import path from "path"
import { tool, type ToolContext, type ToolDefinition } from "@opencode-ai/plugin"
import type { Host } from "../host"
import { LspFormat } from "./format"
import { Lsp } from "./service"

/**
 * The `lsp` tool in `@opencode-ai/plugin` `ToolDefinition` shape: upstream's nine read-only operations plus
 * `diagnostics`, `prepareRename` and `rename`, over language servers this tool runs itself (see `Lsp`). The same
 * definition serves the external plugin (stock OpenCode) and the fork (a built-in).
 *
 * Every operation asks OpenCode's `lsp` permission, paths outside the project its `external_directory` permission,
 * and `rename` its `edit` permission for the files it will write; files are checked with `host.access` first.
 *
 * @example
 * const { lsp } = LspTools.create(host, service)
 * await lsp.execute({ operation: "diagnostics", filePath: "src/a.ts" }, ctx)
 */
export namespace LspTools {
  export const OPERATIONS = [
    "goToDefinition",
    "findReferences",
    "hover",
    "documentSymbol",
    "workspaceSymbol",
    "goToImplementation",
    "prepareCallHierarchy",
    "incomingCalls",
    "outgoingCalls",
    "diagnostics",
    "prepareRename",
    "rename",
  ] as const
  export type Operation = (typeof OPERATIONS)[number]

  const POSITIONED = new Set<Operation>([
    "goToDefinition",
    "findReferences",
    "hover",
    "goToImplementation",
    "prepareCallHierarchy",
    "incomingCalls",
    "outgoingCalls",
    "prepareRename",
    "rename",
  ])

  export const DESCRIPTION = [
    "Language-server code intelligence (the project's own language servers: TypeScript/JavaScript via",
    "typescript-language-server, Python via pyright, and any configured in opencode.json `lsp`).",
    "Operations:",
    "- diagnostics: errors/warnings/hints of a file (filePath), of every file under a folder, or of the whole project",
    `  (filePath omitted; at most ${Lsp.MAX_PROJECT_FILES} files). Always reflects the file's content on disk now.`,
    '  severity: "error" | "warning" | "information" | "hint" | "all" (default) keeps that level and more severe ones.',
    "  The first line says `status: ok` (the list is complete; empty means clean) or `status: timeout` (no result",
    `  within ${Lsp.DIAGNOSTICS_TIMEOUT_MS / 1000} s per file: unknown, NOT clean — call again).`,
    "- prepareRename: whether the symbol at line/character can be renamed (its range and current name, or why not).",
    "- rename: renames the symbol at line/character to newName across the workspace and writes every changed file",
    "  at once, or none (refused when a file is protected, changed since the request, or cannot be written).",
    "  Lists each file with its edit count.",
    "- goToDefinition, findReferences, goToImplementation, hover, documentSymbol, prepareCallHierarchy,",
    "  incomingCalls, outgoingCalls: as in an editor, at filePath line/character.",
    "- workspaceSymbol: symbols matching query across the project (filePath picks the language's server).",
    "line and character are 1-based, as editors show them. Results list at most 200 items (the header gives the count).",
    "When no server is installed for the file type, the error names the package and the opencode.json setting needed.",
  ].join("\n")

  export function create(host: Host, service: () => Lsp.Service): Record<"lsp", ToolDefinition> {
    return {
      lsp: tool({
        description: DESCRIPTION,
        args: {
          operation: tool.schema.enum(OPERATIONS).describe("The LSP operation to perform"),
          filePath: tool.schema
            .string()
            .optional()
            .describe("Absolute or relative path of the file (diagnostics: a file or folder; omit for the project)"),
          line: tool.schema.number().int().min(1).optional().describe("Line number, 1-based"),
          character: tool.schema.number().int().min(1).optional().describe("Character offset in the line, 1-based"),
          query: tool.schema.string().optional().describe("workspaceSymbol: the symbol name to search for"),
          newName: tool.schema.string().optional().describe("rename: the new name"),
          severity: tool.schema
            .enum(Lsp.SEVERITIES)
            .optional()
            .describe("diagnostics: the least severe level to include (default all)"),
        },
        async execute(args, ctx) {
          const lsp = service()
          const directory = lsp.directory
          const operation = args.operation as Operation
          const file = args.filePath ? path.resolve(ctx.directory || directory, args.filePath) : undefined
          if (file) await external(ctx, directory, ctx.worktree || host.worktree || directory, file)
          if (POSITIONED.has(operation) || operation === "documentSymbol") {
            if (!file) throw new Error(`${operation} needs filePath`)
          }
          if (POSITIONED.has(operation) && (!args.line || !args.character))
            throw new Error(`${operation} needs line and character (1-based)`)
          if (operation === "rename" && !args.newName?.trim()) throw new Error("rename needs newName")
          const where = file
            ? `${LspFormat.rel(directory, file)}${args.line ? `:${args.line}:${args.character}` : ""}`
            : ""
          await ctx.ask?.({
            permission: "lsp",
            patterns: ["*"],
            always: ["*"],
            metadata: { operation, ...(file ? { filePath: file } : {}), line: args.line, character: args.character },
          })
          const p = { file: file!, line: (args.line ?? 1) - 1, character: (args.character ?? 1) - 1 }
          const signal = ctx.abort
          const context = { directory }
          switch (operation) {
            case "diagnostics": {
              const report = await lsp.diagnostics({ file, severity: args.severity as Lsp.Severity, signal })
              const scope = file ? LspFormat.rel(directory, file) || "the project" : "the project"
              return LspFormat.diagnostics(report, { ...context, severity: args.severity ?? "all", scope })
            }
            case "hover":
              return LspFormat.hover(await lsp.hover(p, signal))
            case "goToDefinition":
            case "findReferences":
            case "goToImplementation": {
              const items =
                operation === "goToDefinition"
                  ? await lsp.definition(p, signal)
                  : operation === "findReferences"
                    ? await lsp.references(p, signal)
                    : await lsp.implementation(p, signal)
              const lines = await readable(
                host,
                items.map((i) => i.file),
              )
              return LspFormat.locations(operation, items, { ...context, lines: (f) => lines.get(f) })
            }
            case "documentSymbol":
              return LspFormat.documentSymbols(await lsp.documentSymbol(file!, signal), { ...context, file: file! })
            case "workspaceSymbol":
              return LspFormat.workspaceSymbols(await lsp.workspaceSymbol(args.query ?? "", file, signal), {
                ...context,
                query: args.query ?? "",
              })
            case "prepareCallHierarchy":
              return LspFormat.callItems(operation, await lsp.prepareCallHierarchy(p, signal), context)
            case "incomingCalls":
            case "outgoingCalls":
              return LspFormat.callItems(
                operation,
                await lsp.calls(p, operation === "incomingCalls" ? "incoming" : "outgoing", signal),
                context,
              )
            case "prepareRename":
              return LspFormat.prepareRename(await lsp.prepareRename(p, signal), where)
            case "rename": {
              const check = await lsp.prepareRename(p, signal)
              const result = await lsp.rename(p, args.newName!, {
                signal,
                confirm: async (files) => {
                  const rels = files.map((f) => path.relative(ctx.worktree || directory, f))
                  await ctx.ask?.({
                    permission: "edit",
                    patterns: rels,
                    always: ["*"],
                    metadata: { filepath: files[0], files: rels },
                  })
                },
              })
              return LspFormat.rename(result, {
                ...context,
                from: check.ok ? check.placeholder : "symbol",
                to: args.newName!,
              })
            }
          }
        },
      }),
    }
  }

  /** Lines of the files the policy lets the agent read (context shown beside locations). */
  async function readable(host: Host, files: string[]) {
    const out = new Map<string, string[]>()
    for (const file of new Set(files)) {
      if (await host.access?.(file, "read", { quiet: true })) continue
      const text = await fs.readFile(file, "utf8").catch(() => undefined)
      if (text !== undefined) out.set(file, text.split(/\r\n|\r|\n/))
    }
    return out
  }

  /** OpenCode's rule for paths outside the project: ask the `external_directory` permission for their folder. */
  async function external(ctx: ToolContext, directory: string, worktree: string, target: string) {
    const inside = (root: string) => {
      const rel = path.relative(root, target)
      return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
    }
    if (inside(directory) || inside(worktree)) return
    const glob = path.join(path.dirname(target), "*").replaceAll("\\", "/")
    await ctx.ask?.({
      permission: "external_directory",
      patterns: [glob],
      always: [glob],
      metadata: { filepath: target, parentDir: path.dirname(target) },
    })
  }
}
