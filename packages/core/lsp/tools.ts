import fs from "fs/promises"
import path from "path"
import { fileURLToPath } from "url"
import { tool, type ToolContext, type ToolDefinition } from "@opencode-ai/plugin"
import { exclusively, releasing, type Host } from "../host"
import { SecurityOutput } from "../security/output"
import { SecuritySegments } from "../security/segments"
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
    "  Lists each file with its edit count. newName must be a name in the file's language (TypeScript/JavaScript:",
    "  an identifier, not a reserved word; Python: an identifier, not a keyword; others: no spaces or operators),",
    "  checked before the server is asked. Files of the language that mention the old name are opened in the server",
    `  first (at most ${Lsp.MAX_OPENED_MENTIONS}), so files outside its configured project are searched too; files still`,
    "  mentioning the old name afterwards, unchanged, are named in a WARNING: check them.",
    "- goToDefinition, findReferences, goToImplementation, hover, documentSymbol, prepareCallHierarchy,",
    "  incomingCalls, outgoingCalls: as in an editor, at filePath line/character.",
    "- workspaceSymbol: symbols matching query across the project (filePath picks the language's server).",
    "line and character are 1-based, as editors show them; character counts UTF-16 code units (an emoji counts 2), up to",
    "just after the line's last one. A position outside the file is an error giving its line count or the line's length.",
    "findReferences, goToImplementation, incomingCalls, workspaceSymbol and rename first load every project of a",
    "TypeScript solution (tsconfig.json `references`); a project that could not be loaded is named in a WARNING.",
    "findReferences and rename also open the files of the language that mention the name (see rename).",
    "Results list at most 200 items (the header gives the count).",
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
          character: tool.schema
            .number()
            .int()
            .min(1)
            .optional()
            .describe("Character offset in the line, 1-based (UTF-16 code units, as LSP counts them)"),
          query: tool.schema.string().optional().describe("workspaceSymbol: the symbol name to search for"),
          newName: tool.schema.string().optional().describe("rename: the new name"),
          severity: tool.schema
            .enum(Lsp.SEVERITIES)
            .optional()
            .describe("diagnostics: the least severe level to include (default all)"),
        },
        execute: (args, given) =>
          exclusively(host, async (outside) => {
            const ctx = releasing(given, outside)
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
            if (file && operation !== "diagnostics") await fileNeeded(operation, file, directory)
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
            const view = Visible.create(host)
            switch (operation) {
              case "diagnostics": {
                const report = await lsp.diagnostics({ file, severity: args.severity as Lsp.Severity, signal })
                for (const f of report.files)
                  f.items = await view.keep(f.items, (d) => ({ file: f.file, range: d.range }))
                const scope = file ? LspFormat.rel(directory, file) || "the project" : "the project"
                return LspFormat.diagnostics(report, { ...context, severity: args.severity ?? "all", scope })
              }
              case "hover":
                if (!(await view.shows({ file: p.file, range: { start: p, end: p } })))
                  return "No results found for hover"
                return LspFormat.hover(await lsp.hover(p, signal))
              case "goToDefinition":
              case "findReferences":
              case "goToImplementation": {
                const missing = operation === "goToDefinition" ? [] : await lsp.projects(p.file, signal)
                const found =
                  operation === "goToDefinition"
                    ? await lsp.definition(p, signal)
                    : operation === "findReferences"
                      ? await lsp.references(p, signal)
                      : await lsp.implementation(p, signal)
                const items = await view.keep(found, (i) => i)
                return LspFormat.notLoaded(
                  view.note(
                    LspFormat.locations(operation, items, { ...context, lines: (f) => view.lines(f) }),
                    found.length - items.length,
                  ),
                  missing,
                )
              }
              case "documentSymbol": {
                const found = await lsp.documentSymbol(file!, signal)
                const items = await view.keepTree(file!, found)
                return LspFormat.documentSymbols(items, { ...context, file: file! })
              }
              case "workspaceSymbol": {
                const missing = file ? await lsp.projects(file, signal) : []
                const found = await lsp.workspaceSymbol(args.query ?? "", file, signal)
                const items = await view.keep(found, Visible.located)
                return LspFormat.notLoaded(
                  view.note(
                    LspFormat.workspaceSymbols(items, { ...context, query: args.query ?? "" }),
                    found.length - items.length,
                  ),
                  missing,
                )
              }
              case "prepareCallHierarchy":
              case "incomingCalls":
              case "outgoingCalls": {
                const missing = operation === "incomingCalls" ? await lsp.projects(p.file, signal) : []
                const found =
                  operation === "prepareCallHierarchy"
                    ? await lsp.prepareCallHierarchy(p, signal)
                    : await lsp.calls(p, operation === "incomingCalls" ? "incoming" : "outgoing", signal)
                const items = await view.keep(found, (raw: any) => Visible.located(raw.from ?? raw.to ?? raw))
                return LspFormat.notLoaded(
                  view.note(LspFormat.callItems(operation, items, context), found.length - items.length),
                  missing,
                )
              }
              case "prepareRename":
                return LspFormat.prepareRename(await lsp.prepareRename(p, signal), where)
              case "rename": {
                // The old name comes from the rename's own check, made once the server has loaded the file's project: a
                // prepareRename asked before that fails on a cold pyright, and the summary said "Renamed `symbol`".
                const result = await lsp.rename(p, args.newName!, {
                  signal,
                  confirm: async (files) => {
                    // The server chooses the files (one the agent planted may name any): those outside the project
                    // ask `external_directory` for their folder first, as OpenCode's edit tool does (red team T6).
                    const worktree = ctx.worktree || host.worktree || directory
                    const folders = new Map<string, string>()
                    for (const f of files) if (!folders.has(path.dirname(f))) folders.set(path.dirname(f), f)
                    for (const f of folders.values()) await external(ctx, directory, worktree, f)
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
                  from: result.from,
                  to: args.newName!,
                })
              }
            }
          }),
      }),
    }
  }

  /**
   * What of the servers' answers the model may see: nothing located in a file the policy protects, or on a line of a
   * segment the role may not read. The servers never see that content when they run in the kernel sandbox
   * (`Host.sandbox`); this also holds where they do not (a policy whose sandbox is `off`, or `optional` without one).
   */
  export namespace Visible {
    type Range = { start: { line: number }; end: { line: number } }
    type Located = { file: string; range: Range } | undefined
    type File = { denied: boolean; hidden: { from: number; to: number }[]; lines?: string[] }

    /**
     * Where a workspace symbol or call item is named: its file and the first line of its range (a declaration holding
     * a segment is still listed by its name, which lies outside it).
     */
    export function located(item: any): Located {
      const uri: unknown = item?.location?.uri ?? item?.uri
      const range = item?.selectionRange ?? item?.location?.range ?? item?.range
      if (typeof uri !== "string" || !uri.startsWith("file:")) return undefined
      const start = { line: typeof range?.start?.line === "number" ? range.start.line : 0 }
      return { file: fileURLToPath(uri), range: { start, end: start } }
    }

    export function create(host: Host) {
      const files = new Map<string, Promise<File>>()
      const load = (file: string) => {
        let known = files.get(file)
        if (!known) {
          known = (async (): Promise<File> => {
            if (await host.access?.(file, "read", { quiet: true })) return { denied: true, hidden: [] }
            // A location outside the project is listed without its line: a server (project code the agent can
            // write) may point anywhere, and OpenCode's read asks `external_directory` before showing such a file.
            if (!inside(host.directory, host.worktree, file)) return { denied: false, hidden: [] }
            const bytes = await fs.readFile(file).catch(() => undefined)
            if (bytes === undefined) return { denied: false, hidden: [] }
            // Read as the security layer reads files: a UTF-16 file with a byte-order mark (which TypeScript and
            // others decode) is protected whole when its decoded text holds a segment (`SecurityOutput.byteRanges`),
            // and its lines are shown decoded.
            const text = SecuritySegments.wide(bytes) ?? bytes.toString("utf8")
            const pairs = host.segments?.().read ?? []
            const masked = pairs.length ? SecurityOutput.mask(text, pairs) : text
            return {
              denied: false,
              hidden: SecurityOutput.byteRanges(bytes, pairs, "any"),
              lines: masked.split(/\r\n|\r|\n/),
            }
          })()
          files.set(file, known)
        }
        return known
      }
      const loaded = new Map<string, File>()
      const view = {
        /** True when `at` lies in a readable file, off its read-protected segments (lines are 0-based). */
        async shows(at: Located) {
          if (!at) return true
          const f = await load(at.file)
          loaded.set(at.file, f)
          if (f.denied) return false
          const from = at.range.start.line + 1
          const to = at.range.end.line + 1
          return !f.hidden.some((h) => from <= h.to && to >= h.from)
        },
        async keep<T>(items: T[], where: (item: T) => Located) {
          const out: T[] = []
          for (const item of items) if (await view.shows(where(item))) out.push(item)
          return out
        },
        /** Document symbols of `file` without those on hidden lines (children included). */
        async keepTree(file: string, symbols: any[]): Promise<any[]> {
          const out: any[] = []
          for (const s of symbols) {
            const range = s.selectionRange ?? s.location?.range ?? s.range
            if (range && !(await view.shows({ file, range: { start: range.start, end: range.start } }))) continue
            out.push(Array.isArray(s.children) ? { ...s, children: await view.keepTree(file, s.children) } : s)
          }
          return out
        },
        /** Lines of a file already checked, protected segment lines redacted (context beside a location). */
        lines: (file: string) => loaded.get(file)?.lines,
        note: (text: string, left: number) =>
          left > 0
            ? `${text}\n[NOTE] ${left} result${left === 1 ? "" : "s"} in files or segments protected by the security policy not shown.`
            : text,
      }
      return view
    }
  }

  /** Throws `Lsp.NotAFile` when `file` is a folder (only diagnostics takes one); a missing file fails later, named. */
  async function fileNeeded(operation: Operation, file: string, directory: string) {
    const stat = await fs.stat(file).catch(() => undefined)
    if (stat?.isDirectory()) throw new Lsp.NotAFile({ file: LspFormat.rel(directory, file), operation })
  }

  /** OpenCode's rule for paths outside the project: ask the `external_directory` permission for their folder. */
  async function external(ctx: ToolContext, directory: string, worktree: string, target: string) {
    if (inside(directory, worktree, target)) return
    const glob = path.join(path.dirname(target), "*").replaceAll("\\", "/")
    await ctx.ask?.({
      permission: "external_directory",
      patterns: [glob],
      always: [glob],
      metadata: { filepath: target, parentDir: path.dirname(target) },
    })
  }

  /** Whether `target` lies in the project folder or its worktree (OpenCode's test for "outside the project"). */
  function inside(directory: string, worktree: string, target: string) {
    return [directory, worktree].some((root) => {
      const rel = path.relative(root, target)
      return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
    })
  }
}
