import path from "path"
import type { SecurityConfig } from "./config"
import { SecurityPath } from "./paths"
import { SecurityRole } from "./role"
import type { SecuritySchema } from "./schema"

/**
 * Access decisions: may `role` perform `op` on a path? The path is normalised, and the name used, every symbolic link
 * hop and the final target are all checked; a hard link to a protected file is protected like the file (given the
 * inode index of protected files), and so is what a protected symbolic link leads to, under its own name (given the
 * protected links and their targets).
 *
 * @example
 * const d = SecurityAccess.checkAccess(config, "secrets/../secrets/api.key", "read", "viewer", { base: "/repo" })
 * if (!d.allowed) console.log(d.reason) // "read of secrets/api.key is denied by rule 'secrets/**' …"
 */
export namespace SecurityAccess {
  export type Operation = SecuritySchema.Operation

  export type RuleRef = { id: string; pattern: string; type: "file" | "directory"; file?: string; implicit?: string }

  export type Decision =
    | { allowed: true; path: string }
    | {
        allowed: false
        /** The normalised path asked about. */
        path: string
        /** The path the rule matched: the name itself, a link hop, the link target, or the other name of a hard link. */
        matched: string
        op: Operation
        role: string
        rule: RuleRef
        via?: "symlink" | "hard link" | "link target"
        reason: string
      }

  /** Device:inode of protected files → one of their paths (built by the guard's index). */
  export type InodeIndex = ReadonlyMap<string, string>

  /**
   * A protected symbolic link (`link`, its path as rules match it) and the real path it leads to (`target`): a file,
   * or a folder with everything below it (`dir`). The target is another name of what the link protects, as the
   * sandbox treats it; `ops` are the operations the link's protection denies.
   */
  export type Alias = { link: string; target: string; dir: boolean; ops: ReadonlySet<Operation> }

  export type Options = {
    /** Folder relative paths resolve against (default: the policy root). */
    base?: string
    home?: string
    inodes?: InodeIndex
    /** Protected symbolic links and where they lead (built by the guard's index, with the policy files' links). */
    aliases?: readonly Alias[]
    /** Resolves symbolic links (default: the file system, `SecurityPath.resolve`); tests may pass a table. */
    resolve?: (lexical: string) => SecurityPath.Resolved
  }

  /** True when `rule` denies `op` to `role`. */
  export function denies(rule: SecurityConfig.Rule, op: Operation, role: string): boolean {
    return rule.deniedOperations.has(op) && !SecurityRole.allowed(rule.roles, role, rule.allowedRoles)
  }

  /** The first rule denying `op` on an already normalised absolute path (no file system access), or undefined. */
  export function firstDenying(
    config: SecurityConfig.Loaded,
    absolute: string,
    op: Operation,
    role: string,
  ): SecurityConfig.Rule | undefined {
    for (const rule of config.rules)
      if (rule.deniedOperations.has(op) && rule.test(absolute) && denies(rule, op, role)) return rule
    return undefined
  }

  const deniableCache = new WeakMap<SecurityConfig.Loaded, Map<string, boolean>>()

  /**
   * Whether any rule of `config` denies `op` to `role` (for some path).
   *
   * @example
   * SecurityAccess.deniable(config, "read", "viewer") // false for a policy that only protects files from writes
   */
  export function deniable(config: SecurityConfig.Loaded, op: Operation, role: string): boolean {
    let byKey = deniableCache.get(config)
    if (!byKey) deniableCache.set(config, (byKey = new Map()))
    const key = `${op}\0${role}`
    let answer = byKey.get(key)
    if (answer === undefined) {
      answer = config.rules.some((rule) => rule.deniedOperations.has(op) && denies(rule, op, role))
      byKey.set(key, answer)
    }
    return answer
  }

  /**
   * The decision for one path and operation.
   *
   * @example
   * SecurityAccess.checkAccess(config, "/repo/README.md", "read", "viewer").allowed // true
   */
  export function checkAccess(
    config: SecurityConfig.Loaded,
    target: string,
    op: Operation,
    role: string,
    options: Options = {},
  ): Decision {
    const lexical = SecurityPath.expand(target, options.base ?? config.root, options.home ?? config.home)
    // No rule denies this operation to this role anywhere: nothing a link could lead to is protected for it (the
    // usual read under a policy that only keeps files from being written), so no path is resolved.
    if (!deniable(config, op, role)) return { allowed: true, path: lexical }
    const quick = firstDenying(config, lexical, op, role)
    if (quick) return deny(config, lexical, lexical, op, role, quick)
    const resolved = (options.resolve ?? SecurityPath.resolve)(lexical)
    for (const hop of resolved.hops) {
      const rule = firstDenying(config, hop, op, role)
      if (rule) return deny(config, lexical, hop, op, role, rule, "symlink")
    }
    if (resolved.real !== lexical) {
      const rule = firstDenying(config, resolved.real, op, role)
      if (rule) return deny(config, lexical, resolved.real, op, role, rule, "symlink")
    }
    if (options.inodes?.size && resolved.exists) {
      const id = SecurityPath.linkIdentity(resolved.real)
      const other = id && options.inodes.get(`${id.dev}:${id.ino}`)
      if (other && other !== resolved.real) {
        const rule = firstDenying(config, other, op, role)
        if (rule) return deny(config, lexical, other, op, role, rule, "hard link")
      }
    }
    // What a protected link leads to, by its own name (`config/dev.vars` with `.env` → it, `vault/db.txt` with
    // `secrets` → `vault`): judged by the name it has through the link, as that name is judged (its rules, hops and
    // hard links), without aliases again.
    if (options.aliases?.length)
      for (const name of linkNames(options.aliases, [lexical, ...resolved.hops, resolved.real], config.nocase)) {
        const inner = checkAccess(config, name, op, role, { ...options, aliases: undefined })
        if (inner.allowed) continue
        const rule = firstDenying(config, inner.matched, op, role)
        if (rule) return deny(config, lexical, name, op, role, rule, "link target")
      }
    return { allowed: true, path: lexical }
  }

  /**
   * The names `paths` have through the links of `aliases` (the link's path, and below a folder link the same relative
   * path): `/repo/vault/db.txt` is `/repo/secrets/db.txt` when `secrets` → `vault`. No file system access.
   *
   * @example
   * SecurityAccess.linkNames([{ link: "/r/.env", target: "/r/config/dev.vars", dir: false, ops }], ["/r/config/dev.vars"], false)
   * // ["/r/.env"]
   */
  export function linkNames(aliases: readonly Alias[], paths: readonly string[], nocase: boolean): string[] {
    const out = new Set<string>()
    for (const p of paths)
      for (const a of aliases) {
        if (!SecurityPath.isInside(p, a.target, nocase)) continue
        const rest = p.slice(a.target.length)
        if (!rest) out.add(a.link)
        else if (a.dir) out.add(a.link + rest)
      }
    return [...out]
  }

  /** A path for messages: relative to the root when inside it, else absolute. */
  export function display(root: string, absolute: string): string {
    if (!SecurityPath.isInside(absolute, root)) return absolute
    return path.relative(root, absolute) || "."
  }

  function deny(
    config: SecurityConfig.Loaded,
    lexical: string,
    matched: string,
    op: Operation,
    role: string,
    rule: SecurityConfig.Rule,
    via?: "symlink" | "hard link" | "link target",
  ): Decision {
    const shown = display(config.root, lexical)
    const through =
      via === "link target"
        ? ` (it is ${display(config.root, matched)} through a protected symbolic link)`
        : via
          ? ` (via ${via} to ${display(config.root, matched)})`
          : ""
    const source = rule.implicit
      ? rule.implicit === "policy-file"
        ? "the implicit protection of security policy files"
        : rule.implicit === "audit-log"
          ? "the implicit protection of the security audit log"
          : rule.implicit === "host-state"
            ? matched.split(path.sep).includes("builtins-local")
              ? "the implicit protection of the built-ins' local state (learnings, captured calls, heartbeats)"
              : "the implicit protection of OpenCode's own records (the sessions, snapshots, logs and saved tool output of every project and role, its credentials, and the built-ins' local state and caches)"
            : `the implicit protection of ${hostReason(matched)}`
      : `rule '${rule.pattern}' (${display(config.root, rule.file ?? "")}${rule.id.slice(rule.id.indexOf("#"))})`
    const who = rule.allowedRoles.length
      ? `role '${role}' is not among ${rule.allowedRoles.map((r) => `'${r}'`).join(", ")}`
      : "no role may do this"
    return {
      allowed: false,
      path: lexical,
      matched,
      op,
      role,
      rule: { id: rule.id, pattern: rule.pattern, type: rule.type, file: rule.file, implicit: rule.implicit },
      via,
      reason: `${verb(op)} ${shown}${through} is denied by ${source}; ${who}`,
    }
  }

  /**
   * Why a host path is held while a policy exists, by what OpenCode or the tools it starts do with it: the first row
   * whose pattern matches the path (separators as `/`). The last row is the general one.
   */
  const HOST_REASONS: [RegExp, string][] = [
    [
      /\/(opencode|tui|opencode-builtins)\.jsonc?$|\/opencode\/(config|config\.json)$/,
      "the configuration that enables enforcement",
    ],
    [
      /\/\.git(\/|$)|\/\.gitconfig[^/]*$|\/git\/(config|attributes|ignore)$|\/\.gitattributes$/,
      "git's configuration and hooks, which OpenCode's snapshots run on the host",
    ],
    [/\/\.?npmrc$/, "npm's settings, which OpenCode's plugin installs read on the host"],
    [/\/\.?bunfig\.toml$/, "Bun's settings, read when Bun installs or starts code for OpenCode on the host"],
    [/\/\.env(\.[^/]*)?$/, "the environment files Bun loads when it installs or starts code for OpenCode on the host"],
    [
      /\/(\.bash(rc|_profile|_login|_logout)|\.profile|\.z(shrc|shenv|profile|login|logout)|config\.fish)$/,
      "the shell start-up files, which the user's shells run outside the sandbox",
    ],
    [
      /\/(plugins?|tools?|node_modules)\/|\/(package\.json|bun\.lockb?|package-lock\.json)$/,
      "code OpenCode loads or installs at its start (plugins, tools and their packages)",
    ],
    [/\/(opencode|opencode-builtins)(\/|$)/, "OpenCode's own files and state, which it reads or runs on the host"],
    [
      /(?:)/,
      "files OpenCode or the tools it starts read or run on the host (its configuration, plugins, local MCP servers, programs on PATH)",
    ],
  ]

  /**
   * What a held host path is, for a refusal's reason.
   *
   * @example
   * SecurityAccess.hostReason("/repo/.npmrc") // "npm's settings, which OpenCode's plugin installs read on the host"
   */
  export function hostReason(absolute: string): string {
    const p = absolute.split(path.sep).join("/")
    return HOST_REASONS.find(([pattern]) => pattern.test(p))![1]
  }

  function verb(op: Operation) {
    return op === "read" ? "reading" : op === "write" ? "writing" : "sending to the model the content of"
  }
}
