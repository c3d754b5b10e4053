import path from "path"
import { SecurityAccess } from "./access"
import type { SecurityConfig } from "./config"
import type { SecurityInventory } from "./inventory"
import { SecurityPath } from "./paths"
import { SecurityPluginTool } from "./plugin-tool"
import type { SecuritySchema } from "./schema"
import type { SecurityShell } from "./shell"
import type { SecurityTools } from "./tools"

/**
 * The decision for one tool call, as a pure function of the policy, what it protects on disk (the inventory) and the
 * call's plan (what `SecurityTools.plan` read from its arguments). No watcher, no file system walk: the caller
 * gathers every fact first (the inventory, the current text of files with write-protected segments, which
 * repositories hold protected paths in their history) and passes them in.
 *
 * Shell commands that run inside the kernel sandbox get only the static refusals a person can act on — a protected
 * path named in the command, history of a protected path read from git — while paths built at run time and
 * recursive operations over folders holding protected files are left to the kernel, which refuses exactly the
 * protected files. Without a sandbox those are refused here, as the only barrier.
 *
 * @example
 * const denial = SecurityDecide.decide(facts, await SecurityTools.plan("read", { filePath: ".env" }, ctx))
 * // { reason: "reading .env is denied by rule '**\/.env*' …", path: "/repo/.env", op: "read", rule: "…#/rules/1" }
 */
export namespace SecurityDecide {
  export type Operation = SecuritySchema.Operation

  export type Denial = { reason: string; path?: string; op?: Operation; rule?: string }

  export type Facts = {
    config: SecurityConfig.Loaded
    role: string
    index: SecurityInventory.Index
    /** The project root (messages show paths relative to it). */
    root: string
    /** The directory relative paths resolve against. */
    directory: string
    home: string
    /** Shell commands of this call run inside the kernel sandbox. */
    sandboxed: boolean
    /** Working trees whose git history holds a protected path → that path. */
    history?: ReadonlyMap<string, string>
    /**
     * Checks a write that changes part of a file with write-protected segments (the file's current text and the
     * change); a reason when it would touch a segment.
     */
    segments?: (file: string, change: NonNullable<SecurityTools.Request["change"]>) => string | undefined
    /**
     * Whether a file holds a segment the role may not read (`read` or `llm` denied), read from disk now: a request
     * OpenCode serves by reading the file whole (`Request.whole`) is refused for it.
     */
    readSegments?: (file: string) => boolean
    /** Path resolution (symbolic links, existence); the file system by default. */
    resolve?: (lexical: string) => SecurityPath.Resolved
    /**
     * Protected symbolic links and where they lead, when the caller knows more than the index (the policy files'
     * links, read when the call is decided); default `index.aliases`.
     */
    aliases?: readonly SecurityAccess.Alias[]
  }

  /** Operations a tool-side read needs: tool results go to the model, so `llm` protection counts too. */
  export const READ_OPS: readonly Operation[] = ["read", "llm"]

  /**
   * The first denial of a planned call, or undefined when it may run.
   *
   * @example
   * SecurityDecide.decide(facts, plan) // undefined: allowed
   */
  export function decide(facts: Facts, plan: SecurityTools.Plan): Denial | undefined {
    if (plan.error) return { reason: plan.error }
    const seen = new Set<string>()
    for (const req of plan.requests) {
      const key = `${req.op}\0${req.path}\0${req.recursive ?? ""}\0${req.shell ?? ""}\0${req.change ? JSON.stringify(req.change) : ""}`
      if (seen.has(key)) continue
      seen.add(key)
      const denial = request(facts, req)
      if (denial) return denial
    }
    for (const dyn of plan.dynamic) {
      const denial = dynamic(facts, dyn)
      if (denial) return denial
    }
    for (const read of plan.objects) {
      const denial = history(facts, read)
      if (denial) return denial
    }
    for (const inner of plan.opaque) {
      const denial = opaque(facts, inner.tool, inner.args)
      if (denial) return denial
    }
    return undefined
  }

  /**
   * The decision for one path and operation (`read` also needs `llm`).
   *
   * @example
   * SecurityDecide.access(facts, "secrets/api.key", "read").allowed // false
   */
  export function access(facts: Facts, target: string, op: Operation): SecurityAccess.Decision {
    return SecurityAccess.checkAccess(facts.config, target, op, facts.role, {
      inodes: facts.index.inodes,
      aliases: facts.aliases ?? facts.index.aliases,
      home: facts.home,
      base: facts.directory,
      resolve: facts.resolve,
    })
  }

  /** One planned request: the path itself, everything below it when recursive, and segments when it edits. */
  export function request(facts: Facts, req: SecurityTools.Request): Denial | undefined {
    const ops: readonly Operation[] = req.op === "read" ? READ_OPS : ["write"]
    for (const op of ops) {
      const decision = access(facts, req.path, op)
      if (!decision.allowed) return { reason: decision.reason, path: decision.path, op, rule: decision.rule.id }
    }
    const abs = SecurityPath.expand(req.path, facts.directory, facts.home)
    if (req.recursive && !(req.shell && facts.sandboxed)) {
      const inside = below(facts, abs, req.op, req.filter)
      if (inside)
        return {
          reason: `${req.via} on ${show(facts, abs)} would ${req.op === "write" ? "change or remove" : "read"} ${show(facts, inside)}, which the policy protects`,
          path: inside,
          op: req.op,
        }
    }
    // No read-tool output step follows (a `task` prompt's `@file`): the segment's lines would reach the model.
    if (req.op === "read" && req.whole && facts.readSegments?.(abs))
      return {
        reason: `${req.via}: ${show(facts, abs)} holds a segment the policy keeps from being read, and OpenCode would read the file whole into the prompt with no filter. Read it with the read tool instead (which shows it with that segment redacted), and put what is needed in the prompt`,
        path: abs,
        op: "read",
      }
    if (req.op === "write" && req.change && facts.segments) {
      const why = facts.segments(abs, req.change)
      if (why) return { reason: `${req.via}: ${show(facts, abs)} ${why}`, path: abs, op: "write" }
    }
    return undefined
  }

  /**
   * A protected file below `folder` that a recursive operation would reach (read: read- or llm-protected; write:
   * write-protected), honouring name filters such as `find -name '*.tmp'`.
   */
  export function below(facts: Facts, folder: string, op: "read" | "write", filter?: string[]): string | undefined {
    const nocase = facts.config.nocase
    const wanted: readonly Operation[] = op === "read" ? READ_OPS : ["write"]
    const matchesFilter = (file: string) =>
      !filter?.length || filter.some((glob) => globName(glob, path.basename(file)))
    for (const [file, ops] of facts.index.files)
      if (file !== folder && SecurityPath.isInside(file, folder, nocase) && wanted.some((o) => ops.has(o)))
        if (matchesFilter(file)) return file
    // What a protected link leads to, below the folder under its own name (the listing knows it by the link's).
    for (const a of facts.aliases ?? facts.index.aliases)
      if (a.target !== folder && SecurityPath.isInside(a.target, folder, nocase) && wanted.some((o) => a.ops.has(o)))
        if (a.dir || matchesFilter(a.target)) return a.target
    if (op === "write")
      for (const file of [...facts.config.files, facts.config.logging.path])
        if (file !== folder && SecurityPath.isInside(file, folder, nocase) && matchesFilter(file))
          if (SecurityAccess.firstDenying(facts.config, file, "write", facts.role)) return file
    return undefined
  }

  /**
   * A path only partly known statically (the sandbox decides those when there is one). The prefix is text: `/r/.e`
   * (from `.e$X`) reaches `/r/.env`, so protected files are matched by `startsWith`, not by folder.
   */
  export function dynamic(facts: Facts, dyn: SecurityShell.Dynamic): Denial | undefined {
    if (facts.sandboxed) return undefined
    const region = dyn.prefix
    const textual = !!region && !region.endsWith("/")
    if (textual) {
      const wanted: readonly Operation[] = dyn.op === "read" ? READ_OPS : ["write"]
      const prefix = SecurityPath.expand(region, facts.directory, facts.home)
      const candidates = [...facts.index.files.entries()]
      if (dyn.op === "write")
        for (const f of [...facts.config.files, facts.config.logging.path]) candidates.push([f, new Set(["write"])])
      // What a protected link leads to is protected under its own name (the link's ops; no rule names it).
      const targets = (facts.aliases ?? facts.index.aliases).filter((a) => wanted.some((o) => a.ops.has(o)))
      for (const [file, ops] of [...candidates, ...targets.map((a) => [a.target, a.ops] as const)])
        if (file.startsWith(prefix) && wanted.some((o) => ops.has(o)))
          if (
            targets.some((a) => a.target === file) ||
            wanted.some((o) => SecurityAccess.firstDenying(facts.config, file, o, facts.role))
          )
            return {
              reason: `${dyn.command}: a path starting with ${show(facts, region)} is not known statically, and it could be ${show(facts, file)}, which the policy protects; write the path literally`,
              path: file,
              op: wanted[0],
            }
    }
    if (region) {
      const probe = region.endsWith("/") ? region + "\u2063any" : region
      for (const op of dyn.op === "read" ? READ_OPS : (["write"] as const)) {
        const rule = SecurityAccess.firstDenying(
          facts.config,
          SecurityPath.expand(probe, facts.directory, facts.home),
          op,
          facts.role,
        )
        if (rule)
          return {
            reason: `${dyn.command}: a path starting with ${show(facts, region)} is not known statically, and that folder is protected`,
            op,
            rule: rule.id,
          }
      }
    }
    if (dyn.op === "write" && dyn.destructive && !textual) {
      const folder = region ? SecurityPath.expand(region, facts.directory, facts.home) : facts.root
      const filter = (dyn as { filter?: string[] }).filter
      const hit = below(facts, folder.endsWith("/") ? folder.slice(0, -1) : folder, "write", filter)
      if (hit)
        return {
          reason: `${dyn.command}: cannot tell statically which file it changes${region ? ` below ${show(facts, region)}` : ""}, and it could reach ${show(facts, hit)}, which the policy protects; write the path literally`,
          path: hit,
          op: "write",
        }
    }
    return undefined
  }

  /** A git command printing content from the repository's history, in a repository whose history holds a protected path. */
  export function history(facts: Facts, read: SecurityTools.ObjectRead): Denial | undefined {
    const held = facts.history?.get(historyKey(read))
    if (!held) return undefined
    const hits =
      read.all || !read.pathspecs?.length
        ? true
        : read.pathspecs.some(
            (spec) => SecurityPath.isInside(held, spec, facts.config.nocase) || SecurityPath.isInside(spec, held),
          )
    if (!hits) return undefined
    return {
      reason: `${read.command} prints content from the git history, and this repository's history holds ${show(facts, held)}, which the policy protects; restrict the command to other paths (e.g. \`-- src/\`)`,
      path: held,
      op: "read",
    }
  }

  /**
   * Which repository a git read reaches, as the key of `Facts.history`: its git directory when the command names one,
   * its working folder, or "" when neither is known statically (the project's own repository is assumed).
   */
  export function historyKey(read: SecurityTools.ObjectRead): string {
    return read.gitDir ? `git-dir:${read.gitDir}` : read.cwd
  }

  /** Arguments of a tool whose meaning is unknown (other plugins' tools, MCP tools, unknown inner calls). */
  export function opaque(facts: Facts, tool: string, args: unknown): Denial | undefined {
    const scan = SecurityPluginTool.scan(args, { directory: facts.directory, home: facts.home })
    for (const c of scan.candidates) {
      const ops: readonly Operation[] = c.exists ? [...READ_OPS, "write"] : ["write"]
      for (const op of ops) {
        const decision = access(facts, c.path, op)
        if (!decision.allowed)
          return {
            reason: `${tool} argument ${c.from}: ${decision.reason}${op === "write" && c.exists ? " (the tool could change it)" : ""}`,
            path: decision.path,
            op,
            rule: decision.rule.id,
          }
      }
    }
    // What was not read cannot be allowed: a protected path could follow the 20,000th string.
    if (scan.incomplete)
      return {
        reason: `${tool}: its arguments are too large for the security layer to check (${scan.incomplete}); split the work into smaller calls`,
        rule: "arguments-unchecked",
      }
    return undefined
  }

  function show(facts: Facts, p: string) {
    return SecurityAccess.display(facts.root, SecurityPath.expand(p, facts.directory, facts.home))
  }

  /** A `find -name`-style glob against a file name (`*`, `?`, `[…]`), linear time. */
  function globName(glob: string, name: string): boolean {
    let g = 0
    let n = 0
    let star = -1
    let mark = 0
    while (n < name.length) {
      if (g < glob.length && glob[g] === "[") {
        const close = glob.indexOf("]", g + 2)
        if (close > 0) {
          const set = glob.slice(g + 1, close)
          const negate = set.startsWith("!") || set.startsWith("^")
          const body = negate ? set.slice(1) : set
          let hit = false
          for (let i = 0; i < body.length; i++) {
            if (body[i + 1] === "-" && i + 2 < body.length) {
              if (name[n] >= body[i] && name[n] <= body[i + 2]) hit = true
              i += 2
            } else if (body[i] === name[n]) hit = true
          }
          if (hit !== negate) {
            g = close + 1
            n++
            continue
          }
        }
      } else if (g < glob.length && (glob[g] === "?" || glob[g] === name[n])) {
        g++
        n++
        continue
      }
      if (g < glob.length && glob[g] === "*") {
        star = g++
        mark = n
        continue
      }
      if (star < 0) return false
      g = star + 1
      n = ++mark
    }
    while (g < glob.length && glob[g] === "*") g++
    return g === glob.length
  }
}
