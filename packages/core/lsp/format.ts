import path from "path"
import { fileURLToPath } from "url"
import type { Diagnostic, Range } from "vscode-languageserver-protocol"
import { Lsp } from "./service"

/**
 * Text the `lsp` tool returns: positions 1-based as editors show them, paths relative to the project, results capped
 * (the header says how many there were).
 *
 * @example
 * LspFormat.diagnostics(report, { directory: "/repo", severity: "all" })
 * // "status: ok — 1 error in 1 file (typescript, severity: all)\nsrc/a.ts\n  error 1:14 TS2322 Type 'string' …"
 */
export namespace LspFormat {
  export const MAX_ITEMS = 200
  /** Project diagnostics name at most this many skipped files (the rest counted). */
  export const MAX_SKIPPED_NAMED = 20
  const SEVERITY = ["", "error", "warning", "info", "hint"]

  export type Context = { directory: string; lines?: (file: string) => string[] | undefined }

  export function rel(directory: string, file: string) {
    const r = path.relative(directory, file)
    return r && !r.startsWith("..") && !path.isAbsolute(r) ? r : file
  }

  const pos = (r: Range) => `${r.start.line + 1}:${r.start.character + 1}`

  export function diagnostics(report: Lsp.DiagnosticsReport, options: Context & { severity: string; scope: string }) {
    const counts = [0, 0, 0, 0, 0]
    const byFile = new Map<string, { servers: Set<string>; items: Diagnostic[]; timeout: string[] }>()
    for (const f of report.files) {
      const entry = byFile.get(f.file) ?? { servers: new Set(), items: [], timeout: [] }
      entry.servers.add(f.server)
      if (f.status === "timeout") entry.timeout.push(f.server)
      entry.items.push(...f.items)
      byFile.set(f.file, entry)
      for (const d of f.items) counts[d.severity ?? 1]++
    }
    const servers = [...new Set(report.files.map((f) => f.server))].join(", ") || "no server"
    const parts = [1, 2, 3, 4]
      .filter((s) => counts[s])
      .map((s) => `${counts[s]} ${SEVERITY[s]}${counts[s] > 1 ? "s" : ""}`)
    const withItems = [...byFile.values()].filter((e) => e.items.length).length
    const lines: string[] = []
    const timeouts = report.files.filter((f) => f.status === "timeout")
    const left = report.notChecked?.files ?? 0
    // "ok" holds for the files checked only: the first line says so when the cap left files out.
    const unchecked = left
      ? ` — but ${left} more file${left === 1 ? " was" : "s were"} NOT checked (over the ${Lsp.MAX_PROJECT_FILES}-file cap; see the end)`
      : ""
    if (report.status === "timeout") {
      lines.push(
        `status: timeout — no diagnostics result came for ${timeouts.length} file(s) within the wait. ` +
          "This is NOT a clean result: their diagnostics are unknown (the server may still be loading the project); " +
          "call diagnostics again.",
      )
      for (const f of timeouts) lines.push(`  no result: ${rel(options.directory, f.file)} (${f.server})`)
      if (parts.length) lines.push(`Results that did come: ${parts.join(", ")}.`)
    } else if (!parts.length) {
      lines.push(
        `status: ok — no diagnostics in ${options.scope} (${byFile.size} file${byFile.size === 1 ? "" : "s"} checked; ${servers}; severity: ${options.severity})${unchecked}`,
      )
    } else {
      lines.push(
        `status: ok — ${parts.join(", ")} in ${withItems} file${withItems === 1 ? "" : "s"} of ${options.scope} ` +
          `(${byFile.size} checked; ${servers}; severity: ${options.severity})${unchecked}`,
      )
    }
    let shown = 0
    let total = 0
    let unlisted = 0
    for (const [file, entry] of byFile) {
      if (!entry.items.length) continue
      total += entry.items.length
      // Past the cap a file is counted, not listed: a name with nothing under it would read as a clean file.
      if (shown >= MAX_ITEMS) {
        unlisted++
        continue
      }
      lines.push(rel(options.directory, file))
      const sorted = [...entry.items].sort(
        (a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character,
      )
      for (const d of sorted) {
        if (shown >= MAX_ITEMS) break
        shown++
        const code =
          d.code === undefined
            ? ""
            : ` ${typeof d.code === "number" && d.source === "typescript" ? `TS${d.code}` : d.code}`
        lines.push(
          `  ${SEVERITY[d.severity ?? 1]} ${pos(d.range)}${code} ${(typeof d.message === "string" ? d.message : d.message.value).replace(/\s*\n\s*/g, " ")}`,
        )
      }
    }
    if (total > shown)
      lines.push(
        `[TRUNCATED: ${shown} of ${total} diagnostics shown]` +
          (unlisted ? ` (${unlisted} more file${unlisted === 1 ? "" : "s"} with diagnostics not listed)` : ""),
      )
    if (report.truncated) lines.push(...notChecked(report))
    lines.push(...skipped(report.skipped, options.directory))
    if (report.denied)
      lines.push(
        `[NOTE] ${report.denied} file${report.denied === 1 ? "" : "s"} not checked: protected by the security policy.`,
      )
    return lines.join("\n")
  }

  /** Project diagnostics over the file cap: how many files were left unchecked, where, and how to check them. */
  export function notChecked(report: Lsp.DiagnosticsReport): string[] {
    const left = report.notChecked
    if (!left) return [`[TRUNCATED: only the first ${Lsp.MAX_PROJECT_FILES} files were checked]`]
    const shown = left.folders.slice(0, MAX_SKIPPED_NAMED)
    const more = left.folders.length - shown.length
    return [
      `[TRUNCATED: only the first ${Lsp.MAX_PROJECT_FILES} files were checked; ${left.files} more file` +
        `${left.files === 1 ? " was" : "s were"} not. Check them folder by folder (diagnostics with filePath set to ` +
        `a folder; each call checks up to ${Lsp.MAX_PROJECT_FILES} files). Not checked, by folder:]`,
      ...shown.map((f) => `  ${f.folder} (${f.files} file${f.files === 1 ? "" : "s"})`),
      ...(more ? [`  … and ${more} more folder${more === 1 ? "" : "s"}`] : []),
    ]
  }

  /**
   * The skipped files, one line per reason (a missing server's install hint once, not once per file), with at most
   * `MAX_SKIPPED_NAMED` files named in all.
   */
  export function skipped(list: Lsp.DiagnosticsReport["skipped"], directory: string): string[] {
    const groups = new Map<string, string[]>()
    for (const s of list) groups.set(s.reason, [...(groups.get(s.reason) ?? []), s.file])
    const lines: string[] = []
    let named = 0
    for (const [reason, files] of groups) {
      const shown = files.slice(0, Math.max(0, MAX_SKIPPED_NAMED - named)).map((f) => rel(directory, f))
      named += shown.length
      const more = files.length - shown.length
      if (files.length === 1 && shown.length) {
        lines.push(`skipped ${shown[0]}: ${reason}`)
        continue
      }
      lines.push(`skipped ${files.length} file${files.length === 1 ? "" : "s"}: ${reason}`)
      if (shown.length) lines.push(`  ${shown.join(", ")}${more ? ` and ${more} more` : ""}`)
    }
    return lines
  }

  export function locations(op: string, items: { file: string; range: Range }[], options: Context) {
    if (!items.length) return `No results found for ${op}`
    const lines = [`${op}: ${items.length} location${items.length === 1 ? "" : "s"}`]
    for (const item of items.slice(0, MAX_ITEMS)) {
      const text = options.lines?.(item.file)?.[item.range.start.line]?.trim()
      lines.push(`${rel(options.directory, item.file)}:${pos(item.range)}${text ? `  ${text.slice(0, 160)}` : ""}`)
    }
    if (items.length > MAX_ITEMS) lines.push(`[TRUNCATED: ${MAX_ITEMS} of ${items.length} shown]`)
    return lines.join("\n")
  }

  export function hover(results: { server: string; r: any }[]) {
    const texts: string[] = []
    for (const { r } of results) {
      if (!r?.contents) continue
      const c = r.contents
      const one = (x: any) =>
        typeof x === "string" ? x : x?.language ? "```" + x.language + "\n" + x.value + "\n```" : (x?.value ?? "")
      texts.push(Array.isArray(c) ? c.map(one).join("\n\n") : one(c))
    }
    return texts.filter(Boolean).join("\n\n---\n\n") || "No results found for hover"
  }

  const KIND = [
    "",
    "file",
    "module",
    "namespace",
    "package",
    "class",
    "method",
    "property",
    "field",
    "constructor",
    "enum",
    "interface",
    "function",
    "variable",
    "constant",
    "string",
    "number",
    "boolean",
    "array",
    "object",
    "key",
    "null",
    "enum member",
    "struct",
    "event",
    "operator",
    "type parameter",
  ]

  export function documentSymbols(symbols: any[], options: Context & { file: string }) {
    if (!symbols.length) return "No results found for documentSymbol"
    const lines: string[] = [`documentSymbol ${rel(options.directory, options.file)}:`]
    const walk = (list: any[], depth: number) => {
      for (const s of list) {
        if (lines.length > MAX_ITEMS) return
        const range: Range = s.selectionRange ?? s.location?.range ?? s.range
        lines.push(
          `${"  ".repeat(depth)}${KIND[s.kind] ?? s.kind} ${s.name}${s.detail ? ` ${s.detail}` : ""} ${pos(range)}`,
        )
        if (Array.isArray(s.children)) walk(s.children, depth + 1)
      }
    }
    walk(symbols, 1)
    if (lines.length > MAX_ITEMS) lines.push("[TRUNCATED]")
    return lines.join("\n")
  }

  export function workspaceSymbols(symbols: any[], options: Context & { query: string }) {
    if (!symbols.length) return `No results found for workspaceSymbol "${options.query}"`
    const max = 50
    const lines = [`workspaceSymbol "${options.query}": ${symbols.length} symbol${symbols.length === 1 ? "" : "s"}`]
    for (const s of symbols.slice(0, max)) {
      const uri: string | undefined = s.location?.uri
      const where = uri?.startsWith("file:")
        ? `${rel(options.directory, fileURLToPath(uri))}${s.location.range ? `:${pos(s.location.range)}` : ""}`
        : (uri ?? "")
      lines.push(`${KIND[s.kind] ?? s.kind} ${s.name}${s.containerName ? ` (in ${s.containerName})` : ""} ${where}`)
    }
    if (symbols.length > max) lines.push(`[TRUNCATED: ${max} of ${symbols.length} shown; narrow the query]`)
    return lines.join("\n")
  }

  export function callItems(op: string, items: any[], options: Context) {
    if (!items.length) return `No results found for ${op}`
    const lines = [`${op}: ${items.length}`]
    for (const raw of items.slice(0, MAX_ITEMS)) {
      const item = raw.from ?? raw.to ?? raw
      const file = item.uri?.startsWith("file:") ? rel(options.directory, fileURLToPath(item.uri)) : item.uri
      const ranges = raw.fromRanges?.length ? ` (calls at ${raw.fromRanges.map(pos).join(", ")})` : ""
      lines.push(
        `${KIND[item.kind] ?? item.kind} ${item.name}${item.detail ? ` ${item.detail}` : ""} ${file}:${pos(item.selectionRange ?? item.range)}${ranges}`,
      )
    }
    return lines.join("\n")
  }

  export function prepareRename(check: Lsp.RenameCheck, where: string) {
    if (!check.ok) return `Cannot rename at ${where}: ${check.reason}`
    return `Can rename at ${where}: \`${check.placeholder}\` (range ${pos(check.range)}-${check.range.end.line + 1}:${check.range.end.character + 1}${check.server ? `, ${check.server}` : ""})`
  }

  export function rename(result: Lsp.RenameResult, options: Context & { from: string; to: string }) {
    if (result.unchanged)
      return `Already named \`${options.to}\` (${result.server}): nothing to change; no file was written.`
    const n = result.files.length
    const doubt = !!(result.leftovers?.length || result.notLoaded?.length)
    const lines = [
      `Renamed \`${options.from}\` to \`${options.to}\`: ${result.edits} edit${result.edits === 1 ? "" : "s"} in ${n} file${n === 1 ? "" : "s"} (${result.server}). ` +
        (doubt
          ? "The server's edit was written to every file it named, but it may be incomplete: see the WARNING below."
          : "All files were written."),
    ]
    for (const f of result.files) {
      const name = rel(options.directory, f.file)
      const moved = f.renamedFrom ? ` (renamed from ${rel(options.directory, f.renamedFrom)})` : ""
      const what = f.deleted ? "deleted" : f.created ? "created" : `${f.edits} edit${f.edits === 1 ? "" : "s"}`
      lines.push(`${name}: ${what}${moved}`)
    }
    // The reason a file was left out only when a configuration really says it (`LspScope`): a NOTE sending the user
    // to widen an `include` that does not exist misleads.
    if (result.viaReferences?.length)
      lines.push(
        `[NOTE] ${result.server}'s rename left out ${result.viaReferences.map((f) => `${rel(options.directory, f.file)}${f.reason ? ` (${f.reason})` : ""}`).join(", ")}; ` +
          "its references there were renamed as well.",
      )
    if (result.stubs?.length)
      lines.push(
        `[NOTE] \`${options.from}\` is also declared in the stub${result.stubs.length === 1 ? "" : "s"} ` +
          result.stubs.map((s) => `${rel(options.directory, s.file)}:${s.line}`).join(", ") +
          `, which ${result.server} holds for another symbol; its uses from there were renamed as well.`,
      )
    const left = result.leftovers ?? []
    if (left.length) {
      const unopened = left.filter((l) => !l.opened).length
      lines.push(
        `[WARNING] ${left.length} file${left.length === 1 ? "" : "s"} of this language still mention${left.length === 1 ? "s" : ""} \`${options.from}\` ` +
          `and ${left.length === 1 ? "was" : "were"} NOT changed by this rename` +
          (unopened
            ? ` (${unopened} not opened in the server, over the limit of ${Lsp.MAX_OPENED_MENTIONS}: it may not have searched them)`
            : "") +
          `. Check each: a use of the renamed symbol there now breaks (rename it by hand); another symbol of that name, ` +
          "a comment or a string is fine:",
      )
      for (const l of left.slice(0, MAX_LEFTOVERS))
        lines.push(`  ${rel(options.directory, l.file)}:${l.line}${l.opened ? "" : " (not searched by the server)"}`)
      if (left.length > MAX_LEFTOVERS) lines.push(`  … and ${left.length - MAX_LEFTOVERS} more files`)
    }
    if (result.unscanned)
      lines.push(
        `[NOTE] ${result.unscanned} file${result.unscanned === 1 ? "" : "s"} of this language ${result.unscanned === 1 ? "was" : "were"} not searched for \`${options.from}\` ` +
          `(over ${Lsp.MAX_SCANNED_FILES} files or ${Lsp.MAX_SCANNED_BYTES / 1024 / 1024} MB): uses there are not known.`,
      )
    return notLoaded(lines.join("\n"), result.notLoaded ?? [])
  }

  /** A rename's warning names at most this many files that still mention the old name. */
  export const MAX_LEFTOVERS = 20

  /**
   * `text` with a warning naming the TypeScript projects of the solution that were not loaded: files only they hold
   * were not searched (a rename left them unchanged).
   */
  export function notLoaded(text: string, missing: Lsp.NotLoaded[]) {
    if (!missing.length) return text
    const list = missing.map((m) => `  ${m.config}: ${m.reason}`)
    return [
      text,
      `[WARNING] ${missing.length} TypeScript project${missing.length === 1 ? "" : "s"} of this solution could not be loaded; files only ${missing.length === 1 ? "it holds" : "they hold"} were NOT searched, so this result may be incomplete:`,
      ...list,
    ].join("\n")
  }
}
