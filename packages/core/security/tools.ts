import path from "path"
import { OpenCode } from "../opencode"
import { SecurityPatch } from "./patch"
import { SecurityShell } from "./shell"

/**
 * What OpenCode's built-in tools touch, read from their arguments: `read`, `write`, `edit`, `multiedit`,
 * `apply_patch` (the paths inside the patch text), `glob`, `grep`, `list`, `lsp`, `batch` (each inner call) and
 * `bash` (the shell analysis). Tools that touch no file (`todowrite`, `question`, `webfetch`, …) plan nothing; names
 * this module does not know return undefined so the caller can treat them like a third-party tool.
 *
 * @example
 * const plan = await SecurityTools.plan("read", { filePath: "secrets/x" }, { directory: "/repo" })
 * plan?.requests // [{ path: "/repo/secrets/x", op: "read" }]
 */
export namespace SecurityTools {
  export type Op = "read" | "write"

  /** How a write changes a file (checked against the file's write-protected segments). */
  export type Change =
    | { kind: "write"; content: string }
    | { kind: "edit"; oldString: string; newString: string; replaceAll?: boolean }
    | { kind: "multiedit"; edits: { oldString: string; newString: string; replaceAll?: boolean }[] }
    | { kind: "patch"; file: SecurityPatch.File; side?: "source" | "destination" }

  export type Request = {
    path: string
    op: Op
    /** Everything below a folder is read or written (recursive commands). */
    recursive?: boolean
    /** The path may be removed or overwritten. */
    destructive?: boolean
    /** For writes into files with write-protected segments: how the file changes. */
    change?: Change
    /** The request comes from a shell command (which may run inside the kernel sandbox). */
    shell?: boolean
    /** Name globs limiting a recursive operation (`find -name '*.tmp' -delete`). */
    filter?: string[]
    /**
     * OpenCode reads the file whole into model-bound text itself, with no read-tool output the layer filters by line
     * (a `task` prompt's `@file`): a file holding a segment the role may not read is refused like a read-protected one.
     */
    whole?: boolean
    via: string
  }

  /** A git command that prints or exports content from the repository's history (its object store). */
  export type ObjectRead = SecurityShell.ObjectRead

  export type Plan = {
    requests: Request[]
    dynamic: SecurityShell.Dynamic[]
    /** Git reads of the object store (refused when the history holds a protected path). */
    objects: ObjectRead[]
    /** Every git invocation of a shell command, as written. */
    gits: SecurityShell.GitRun[]
    /** A search tool's folder and include glob (an include that selects protected files is refused). */
    search?: { base: string; include?: string }
    notes: string[]
    /** Set when the call cannot be judged (e.g. a patch that does not parse); the guard refuses it. */
    error?: string
    /** How protected paths in this tool's output are handled by the scanner. */
    output: "line" | "token" | "off"
    /** Inner calls of tools this module does not know (inside `batch`): checked like third-party tools. */
    opaque: { tool: string; args: unknown }[]
  }

  /** Built-in tools that touch no file. */
  export const NO_FILES: ReadonlySet<string> = new Set(OpenCode.OTHER_TOOLS)
  /** Built-in tools with file semantics this module plans (OpenCode's own, and this product's AST tools). */
  export const FILE_TOOLS: ReadonlySet<string> = new Set([
    ...OpenCode.FILE_TOOLS,
    "ast_grep_search",
    "ast_grep_replace",
  ])

  export type Context = {
    directory: string
    /** The project's root, when OpenCode started below it (prompt mentions resolve against it). */
    worktree?: string
    home?: string
    env?: Record<string, string | undefined>
  }

  const str = (v: unknown) => (typeof v === "string" ? v : undefined)

  /**
   * A path argument of OpenCode's file tools, resolved exactly as they resolve it: absolute paths as they are,
   * relative ones against the project directory. No `~` expansion, no `file://` URLs: `~/../x` names `<dir>/x` to
   * OpenCode, and reading it as `$HOME/../x` would check one file and let another be changed.
   *
   * @example
   * SecurityTools.toolPath("~/../.opencode-security.json", "/repo") // "/repo/.opencode-security.json"
   */
  export function toolPath(p: string, directory: string): string {
    return path.isAbsolute(p) ? path.normalize(p) : path.resolve(directory, p)
  }
  const resolve = (p: string, ctx: Context) => toolPath(p, ctx.directory)

  /**
   * The files a prompt's `@` mentions name, resolved as OpenCode resolves them (against the worktree, `~/` against
   * the home); both the project folder and the worktree when they differ.
   *
   * @example
   * SecurityTools.mentions("Summarise @docs/a.md and @~/n.md", { directory: "/repo", home: "/h" }) // ["/repo/docs/a.md", "/h/n.md"]
   */
  export function mentions(prompt: string, ctx: Context & { worktree?: string }): string[] {
    const out = new Set<string>()
    for (const m of prompt.matchAll(OpenCode.FILE_MENTION)) {
      const name = m[1]
      if (!name) continue
      if (name.startsWith("~/")) {
        if (ctx.home) out.add(path.join(ctx.home, name.slice(2)))
        continue
      }
      for (const base of new Set([ctx.worktree ?? ctx.directory, ctx.directory])) out.add(path.resolve(base, name))
    }
    return [...out]
  }

  /**
   * The plan of a built-in tool call, or undefined when `tool` is not a built-in this module knows.
   *
   * @example
   * (await SecurityTools.plan("apply_patch", { patchText }, { directory: "/repo" }))?.requests
   */
  export async function plan(tool: string, args: unknown, ctx: Context, depth = 0): Promise<Plan | undefined> {
    const a = (args && typeof args === "object" ? args : {}) as Record<string, unknown>
    const out: Plan = { requests: [], dynamic: [], objects: [], gits: [], notes: [], output: "token", opaque: [] }
    const read = (p: string | undefined, via: string, extra: Partial<Request> = {}) => {
      if (p !== undefined) out.requests.push({ path: resolve(p, ctx), op: "read", via, ...extra })
    }
    const write = (p: string | undefined, via: string, extra: Partial<Request> = {}) => {
      if (p !== undefined) out.requests.push({ path: resolve(p, ctx), op: "write", via, ...extra })
    }
    // OpenCode reads every file the task prompt mentions into the subagent's first message itself, whole, with no hook:
    // nothing filters the lines of its segments afterwards (red team GA2).
    if (tool === "task") {
      for (const mention of mentions(str(a.prompt) ?? "", ctx))
        out.requests.push({ path: mention, op: "read", via: "task prompt", whole: true })
      return out
    }
    if (NO_FILES.has(tool)) return out
    switch (tool) {
      case "read":
      case "lsp":
        // The lsp tool of OpenCode Built-ins takes no file for project diagnostics and workspace symbols; it checks
        // every file it reads with `Host.access` and never names protected ones.
        if (tool === "lsp" && a.filePath === undefined) return { ...out, output: "off" }
        if (!str(a.filePath)) return { ...out, error: `${tool}: no filePath given` }
        read(str(a.filePath), tool)
        out.output = "off"
        return out
      case "write": {
        const file = str(a.filePath)
        if (!file) return { ...out, error: "write: no filePath given" }
        write(file, tool, { destructive: true, change: { kind: "write", content: str(a.content) ?? "" } })
        return out
      }
      case "edit": {
        const file = str(a.filePath)
        if (!file) return { ...out, error: "edit: no filePath given" }
        read(file, tool)
        write(file, tool, {
          change: {
            kind: "edit",
            oldString: str(a.oldString) ?? "",
            newString: str(a.newString) ?? "",
            replaceAll: a.replaceAll === true,
          },
        })
        return out
      }
      case "multiedit": {
        // OpenCode applies every edit, in order, to the top-level filePath (an entry's own filePath is ignored).
        const file = str(a.filePath)
        if (!file) return { ...out, error: "multiedit: no filePath given" }
        const edits = (Array.isArray(a.edits) ? a.edits : []).map((e) => {
          const edit = (e && typeof e === "object" ? e : {}) as Record<string, unknown>
          return {
            oldString: str(edit.oldString) ?? "",
            newString: str(edit.newString) ?? "",
            replaceAll: edit.replaceAll === true,
          }
        })
        read(file, tool)
        write(file, tool, { change: { kind: "multiedit", edits } })
        return out
      }
      case "apply_patch":
      case "patch": {
        const text = str(a.patchText) ?? str(a.patch) ?? str(a.input)
        if (!text) return { ...out, error: `${tool}: no patch text given` }
        // Read exactly as OpenCode reads it; a patch that could be read more than one way is refused.
        const parsed = SecurityPatch.parse(text, { directory: ctx.directory })
        if (parsed.problems.length)
          return { ...out, error: `${tool}: the patch cannot be checked: ${parsed.problems.join("; ")}` }
        for (const f of parsed.files) {
          const at = SecurityPatch.resolve(ctx.directory, f.path)
          if (f.change !== "add") out.requests.push({ path: at, op: "read", via: tool })
          out.requests.push({
            path: at,
            op: "write",
            via: tool,
            destructive: f.change !== "update",
            change: { kind: "patch", file: f },
          })
          if (f.change === "move" && f.to)
            out.requests.push({
              path: SecurityPatch.resolve(ctx.directory, f.to),
              op: "write",
              via: tool,
              destructive: true,
              change: { kind: "patch", file: f, side: "destination" },
            })
        }
        return out
      }
      case "glob": {
        const base = str(a.path) ?? "."
        read(base, tool)
        const pattern = str(a.pattern)
        if (pattern) {
          // The literal folder a pattern starts with is listed too (`secrets/**/*.key` lists `secrets`).
          const literal = pattern.split("/").filter(Boolean)
          const fixed: string[] = []
          for (const part of literal) {
            if (/[*?[\]{}()!]/.test(part)) break
            fixed.push(part)
          }
          if (fixed.length && fixed.length < literal.length)
            read(path.join(pattern.startsWith("/") ? "/" : base, ...fixed), tool)
        }
        out.output = "line"
        return out
      }
      case "grep":
        read(str(a.path) ?? ".", tool)
        out.search = { base: resolve(str(a.path) ?? ".", ctx), include: str(a.include) }
        out.output = "line"
        return out
      case "list":
      case "ls":
        read(str(a.path) ?? ".", tool)
        out.output = "line"
        return out
      case "bash": {
        const command = str(a.command)
        if (command === undefined) return { ...out, error: "bash: no command given" }
        const cwd = str(a.workdir) ? resolve(str(a.workdir)!, ctx) : ctx.directory
        if (str(a.workdir)) read(str(a.workdir), "bash workdir")
        const analysis = await SecurityShell.analyze(command, { cwd, home: ctx.home, env: ctx.env })
        if (analysis.error) return { ...out, error: `bash: ${analysis.error}` }
        for (const acc of analysis.accesses)
          out.requests.push({
            path: acc.path,
            op: acc.op,
            recursive: acc.recursive,
            destructive: acc.op === "write",
            shell: true,
            filter: acc.filter,
            via: acc.command,
          })
        out.dynamic.push(...analysis.dynamic)
        out.objects.push(...analysis.objects)
        out.gits.push(...analysis.gits)
        out.notes.push(...analysis.notes)
        out.output = "line"
        return out
      }
      case "ast_grep_search":
      case "ast_grep_replace": {
        // The AST tools check every file they read or write themselves (host.access, host.segments); a folder or
        // file named here must be readable. Nothing is written before the tool has checked the write.
        const paths = Array.isArray(a.paths) ? a.paths.filter((p): p is string => typeof p === "string") : []
        for (const p of paths.length ? paths : ["."]) read(p, tool)
        out.output = "line"
        return out
      }
      case "batch": {
        if (depth > 2) return { ...out, error: "batch: nested too deep" }
        const calls = Array.isArray(a.tool_calls) ? a.tool_calls : []
        for (const c of calls) {
          const call = (c && typeof c === "object" ? c : {}) as Record<string, unknown>
          const inner = await plan(String(call.tool ?? ""), call.parameters, ctx, depth + 1)
          if (!inner) {
            out.opaque.push({ tool: String(call.tool ?? ""), args: call.parameters })
            continue
          }
          if (inner.error) return { ...out, error: inner.error }
          out.requests.push(...inner.requests)
          out.dynamic.push(...inner.dynamic)
          out.objects.push(...inner.objects)
          out.gits.push(...inner.gits)
          out.notes.push(...inner.notes)
          out.opaque.push(...inner.opaque)
          if (inner.output === "line") out.output = "line"
        }
        return out
      }
    }
    return undefined
  }

  /**
   * Ranges to widen in grep's block output (`/path:` followed by `  Line N: …` lines): when a redacted range covers a
   * block's path line, the block's match lines go with it.
   */
  export function widenGrepBlocks<T extends { start: number; end: number }>(text: string, ranges: T[]): T[] {
    return ranges.map((r) => {
      const lineEnd = text.indexOf("\n", r.start)
      const line = text.slice(text.lastIndexOf("\n", r.start - 1) + 1, lineEnd < 0 ? text.length : lineEnd)
      if (!/:\s*$/.test(line) || r.end < (lineEnd < 0 ? text.length : lineEnd)) return r
      let end = lineEnd < 0 ? text.length : lineEnd
      while (end < text.length) {
        const next = text.indexOf("\n", end + 1)
        const l = text.slice(end + 1, next < 0 ? text.length : next)
        if (!/^\s+Line \d+:/.test(l)) break
        end = next < 0 ? text.length : next
      }
      return { ...r, end }
    })
  }
}
