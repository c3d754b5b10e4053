import fs from "fs"
import fsp from "fs/promises"
import os from "os"
import path from "path"
import Ajv2020 from "ajv/dist/2020"
import type { ErrorObject } from "ajv"
import { SecurityJson } from "./json"
import { SecurityMatch } from "./match"
import { SecurityPath } from "./paths"
import { SecurityPythonPath } from "./python-path"
import { SecurityRole } from "./role"
import { SecuritySchema } from "./schema"

/**
 * Loading the policy: finding `.opencode-security.json` files (the project root's and those of subdirectories),
 * validating each against the JSON Schema with ajv plus the checks a schema cannot express (known roles, usable
 * patterns), merging them (a subdirectory's policy adds rules for its subtree and can never weaken an ancestor's),
 * adding the implicit self-protection rules, and noticing changes without `fs.watch`.
 *
 * A policy that exists but is invalid yields the `invalid` state; enforcement then refuses file access (fails
 * closed) until it is fixed, and keeps the last valid policy for redaction.
 *
 * @example
 * const state = SecurityConfig.load("/repo")
 * if (state.status === "invalid") console.error(SecurityConfig.describe(state.problems))
 */
export namespace SecurityConfig {
  export type Operation = SecuritySchema.Operation

  /** One reason a policy is invalid: the file, the JSON pointer inside it ("" for the whole file), the message. */
  export type Problem = { file: string; pointer: string; message: string }

  export type Layer = { file: string; dir: string; policy: SecuritySchema.Policy }

  export type Rule = {
    /** Where the rule comes from: `file#/rules/3`, or `implicit:policy-file` / `implicit:audit-log`. */
    id: string
    pattern: string
    type: "file" | "directory"
    deniedOperations: ReadonlySet<Operation>
    allowedRoles: readonly string[]
    file?: string
    implicit?: "policy-file" | "audit-log" | "host-config" | "host-state"
    /** Role levels visible to this rule (its policy's roles and its ancestors'). */
    roles: SecurityRole.Table
    /** Whether an absolute, normalised path falls under this rule. */
    test(absolute: string): boolean
    /** Literal text of the pattern used to find mentions of protected paths in text. */
    literal?: string
  }

  export type Marker = {
    id: string
    start: string
    end: string
    deniedOperations: ReadonlySet<Operation>
    allowedRoles: readonly string[]
    roles: SecurityRole.Table
    /** The folder of the policy defining it; markers apply to files below it (and to text of unknown origin). */
    base: string
  }

  export type Loaded = {
    root: string
    files: string[]
    layers: Layer[]
    rules: Rule[]
    markers: Marker[]
    /** Every role any layer defines (the role in force is looked up here). */
    roles: SecurityRole.Table
    defaultRole: string
    logging: { path: string; level: "normal" | "verbose"; maxBytes: number; keep: number }
    mcp: { defaultPolicy?: SecuritySchema.McpPolicy; servers: Record<string, SecuritySchema.McpPolicy> }
    secrets: boolean
    /** How shell commands are contained (root policy only); `explicit` when the policy sets a mode. */
    sandbox: {
      mode?: SecuritySchema.SandboxMode
      explicit: boolean
      allowGitConfig: boolean
      allowCommandShell: boolean
      allowAgentPermissions: boolean
      allowHostTools: boolean
      /** Folders commands may write besides `SandboxWritable.TABLE` and the project (as the policy spells them). */
      writable: string[]
    }
    nocase: boolean
    home: string
    /** True when the user wrote at least one rule or marker (the implicit ones do not count). */
    hasExplicit: boolean
  }

  export type State =
    | { status: "none"; root: string }
    | { status: "valid"; root: string; config: Loaded }
    | { status: "invalid"; root: string; problems: Problem[]; files: string[]; lastValid?: Loaded }

  /** Largest policy file accepted. */
  export const MAX_BYTES = 1024 * 1024
  /** Strict: a byte sequence that is not UTF-8 is an error, not U+FFFD. The decoder drops a byte order mark. */
  const UTF8 = new TextDecoder("utf-8", { fatal: true })

  let validator: ReturnType<Ajv2020["compile"]> | undefined
  function validate() {
    if (validator) return validator
    const ajv = new Ajv2020({ allErrors: true, strict: false })
    validator = ajv.compile(SecuritySchema.json())
    return validator
  }

  /** A readable list of problems, one per line: `file: /pointer: message`. */
  export function describe(problems: Problem[]): string {
    return problems.map((p) => `${p.file}: ${p.pointer || "(file)"}: ${p.message}`).join("\n")
  }

  /**
   * Reads and validates one policy file. Never throws: problems come back as data.
   *
   * @example
   * const { policy, problems } = SecurityConfig.read("/repo/.opencode-security.json")
   */
  export function read(file: string): { policy?: SecuritySchema.Policy; problems: Problem[] } {
    const problem = (message: string, pointer = "") => ({ problems: [{ file, pointer, message }] })
    let stat: fs.Stats
    try {
      stat = fs.statSync(file)
    } catch (error) {
      return problem(`cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
    }
    if (!stat.isFile()) return problem("is not a regular file")
    if (stat.size > MAX_BYTES) return problem(`is ${stat.size} bytes; a policy may not exceed ${MAX_BYTES} bytes`)
    let bytes: Buffer
    try {
      bytes = fs.readFileSync(file)
    } catch (error) {
      return problem(`cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
    }
    if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
      return problem("is UTF-16 encoded; save it as UTF-8")
    let text: string
    try {
      text = UTF8.decode(bytes)
    } catch {
      // Undecodable bytes would become U+FFFD inside names, and patterns that never match.
      const lossy = bytes.toString("utf8")
      const at = SecurityJson.position(lossy, lossy.indexOf("\ufffd"))
      return problem(`is not valid UTF-8 (${at}); save it as UTF-8`)
    }
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    if (!text.trim()) return problem('is empty (truncated?); write at least {"version": "1.0"}')
    const parsed = SecurityJson.parse(text)
    if ("error" in parsed)
      return parsed.pointer === undefined
        ? problem(
            /^\/[/*]/.test(text.slice(parsed.offset))
              ? `comments are not allowed in ${SecuritySchema.FILE} (JSON only): ${SecurityJson.position(text, parsed.offset)}`
              : `is not valid JSON: ${parsed.error}`,
          )
        : problem(parsed.error, parsed.pointer)
    const check = validate()
    if (!check(parsed.value)) {
      const problems = (check.errors ?? []).map((e) => ({ file, pointer: e.instancePath, message: ajvMessage(e) }))
      return { problems: dedupeProblems(problems) }
    }
    const policy = parsed.value as SecuritySchema.Policy
    const problems: Problem[] = []
    const names = new Set<string>()
    policy.roles?.forEach((role, i) => {
      if (names.has(role.name))
        problems.push({ file, pointer: `/roles/${i}/name`, message: `role '${role.name}' is defined twice` })
      names.add(role.name)
    })
    return { policy, problems }
  }

  function ajvMessage(e: ErrorObject): string {
    const params = e.params as Record<string, unknown>
    if (e.keyword === "additionalProperties") return `unknown property '${params.additionalProperty}'`
    if (e.keyword === "enum")
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`
    if (e.keyword === "required") return `missing required property '${params.missingProperty}'`
    if (e.keyword === "pattern") return `${e.message} (${e.parentSchema?.description ?? "invalid format"})`
    return e.message ?? e.keyword
  }

  function dedupeProblems(problems: Problem[]) {
    const seen = new Set<string>()
    return problems.filter((p) => {
      const key = `${p.pointer}\0${p.message}`
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
  }

  export type LoadOptions = {
    /** Home folder for `~/` patterns (default: the OS home). */
    home?: string
    /** Policy files in subdirectories already found (see `find`); the root's own file is always considered. */
    nested?: string[]
    /**
     * More files no role may write while a policy exists: the host's configuration that could switch enforcement off
     * (e.g. the plugin list in `opencode.json`). Absolute paths.
     */
    protect?: string[]
    /**
     * Folders on a local Python MCP server's `sys.path` before the standard library, whose importable top-level names
     * no role may write, present or not (`SecurityPythonPath.held`). Absolute paths.
     */
    modules?: string[]
    /**
     * Folders the host keeps for itself (its local state): no role may read or write them while a policy exists, since
     * they hold what earlier calls returned and what later sessions are told. Absolute paths.
     */
    hide?: string[]
    /**
     * Relative paths of the host's state that every project keeps at its own root (`.opencode/builtins-local`): no role
     * may read or write one wherever it lies, at any depth — a nested repository's or a subfolder session's, inside
     * this project — since it holds what that project's sessions of every role saw. Matched by their segments.
     */
    hideNamed?: string[]
    /**
     * Folders inside `protect` folders that stay writable (the host writes there for the agent: plans, worktrees).
     * Absolute paths ending in a separator.
     */
    writable?: string[]
  }

  /**
   * Loads the policy of a project root: its own file plus the given subdirectory files, validated and merged.
   * Synchronous and cheap (a few small files), so a changed policy takes effect on the very next check.
   *
   * @example
   * SecurityConfig.load("/repo", { nested: ["/repo/sub/.opencode-security.json"] })
   */
  export function load(root: string, options: LoadOptions = {}): State {
    root = path.resolve(root).normalize("NFC")
    const rootFile = path.join(root, SecuritySchema.FILE)
    const candidates = [rootFile, ...(options.nested ?? []).map((f) => path.resolve(f).normalize("NFC"))]
    const files = [...new Set(candidates)].filter((f) => SecurityPath.isInside(f, root) && exists(f))
    if (!files.length) return { status: "none", root }
    files.sort((a, b) => a.split(path.sep).length - b.split(path.sep).length || a.localeCompare(b))
    const layers: Layer[] = []
    const problems: Problem[] = []
    for (const file of files) {
      const result = read(file)
      problems.push(...result.problems)
      if (result.policy) layers.push({ file, dir: path.dirname(file), policy: result.policy })
    }
    if (problems.length) return { status: "invalid", root, problems, files }
    const merged = merge(root, layers, options)
    if ("problems" in merged) return { status: "invalid", root, problems: merged.problems, files }
    return { status: "valid", root, config: merged.config }
  }

  function exists(file: string) {
    try {
      fs.lstatSync(file)
      return true
    } catch {
      return false
    }
  }

  /**
   * Merges validated layers (the root's first) into one effective policy: every layer's rules and markers, role tables
   * per layer chain, the root's logging and MCP settings, and the implicit self-protection rules.
   *
   * @example
   * const merged = SecurityConfig.merge("/repo", [{ file: "/repo/.opencode-security.json", dir: "/repo", policy }])
   */
  export function merge(
    root: string,
    layers: Layer[],
    options: {
      home?: string
      protect?: string[]
      hide?: string[]
      hideNamed?: string[]
      writable?: string[]
      modules?: string[]
    } = {},
  ): { config: Loaded } | { problems: Problem[] } {
    const home = (options.home ?? os.homedir()).normalize("NFC")
    const problems: Problem[] = []
    const rootLayer = layers.find((l) => l.dir === root)
    const nocase = layers.length > 0 && SecurityPath.caseInsensitive(layers[0].file)
    const tables = new Map<Layer, Map<string, number>>()
    const all = new Map<string, number>()
    const allRoles: SecuritySchema.Role[] = []
    for (const layer of layers) {
      const ancestors = layers.filter((l) => l !== layer && SecurityPath.isInside(layer.dir, l.dir))
      const table = new Map<string, number>()
      for (const a of ancestors) for (const [k, v] of tables.get(a) ?? []) table.set(k, v)
      const own = layer.policy.roles ?? []
      own.forEach((role, i) => {
        const before = table.get(role.name) ?? all.get(role.name)
        if (before !== undefined && before !== role.level)
          problems.push({
            file: layer.file,
            pointer: `/roles/${i}/level`,
            message: `role '${role.name}' is already defined with level ${before}; a policy may not redefine a role's level`,
          })
        table.set(role.name, role.level)
        if (!all.has(role.name)) allRoles.push(role)
        all.set(role.name, role.level)
      })
      if (!table.size) table.set(SecurityRole.IMPLICIT, 0)
      tables.set(layer, table)
      if (layer !== rootLayer) {
        for (const key of ["logging", "mcp", "secrets", "sandbox"] as const)
          if (layer.policy[key] !== undefined)
            problems.push({
              file: layer.file,
              pointer: `/${key}`,
              message: `only the project root's policy may set '${key}'; move it to ${path.join(root, SecuritySchema.FILE)}`,
            })
      }
    }
    if (!all.size) all.set(SecurityRole.IMPLICIT, 0)

    const rules: Rule[] = []
    const markers: Marker[] = []
    const disk: Disk = { stats: new Map(), listings: new Map() }
    for (const layer of layers) {
      const table = tables.get(layer)!
      const knownRoles = (list: string[] | undefined, pointer: string) =>
        (list ?? []).forEach((name, i) => {
          if (table.has(name)) return
          const like = [...table.keys()].find((known) => known.toLowerCase() === name.toLowerCase())
          problems.push({
            file: layer.file,
            pointer: `${pointer}/${i}`,
            message:
              `unknown role '${name}' (defined: ${[...table.keys()].join(", ")})` +
              (like ? `; role names are case-sensitive: did you mean '${like}'?` : ""),
          })
        })
      layer.policy.rules?.forEach((rule, i) => {
        knownRoles(rule.allowedRoles, `/rules/${i}/allowedRoles`)
        const compiled = SecurityMatch.compile({
          pattern: rule.pattern,
          type: rule.type,
          base: layer.dir,
          home,
          nocase,
        })
        if ("error" in compiled) {
          problems.push({ file: layer.file, pointer: `/rules/${i}/pattern`, message: compiled.error })
          return
        }
        const twin = physicalTwin(compiled, rule.type, layer.dir, nocase)
        const mistake = onDisk(compiled, layer.dir, disk)
        if (mistake)
          problems.push({ file: layer.file, pointer: `/rules/${i}/${mistake.field}`, message: mistake.message })
        rules.push({
          id: `${layer.file}#/rules/${i}`,
          pattern: rule.pattern,
          type: rule.type,
          deniedOperations: new Set(rule.deniedOperations),
          allowedRoles: rule.allowedRoles ?? [],
          file: layer.file,
          roles: table,
          test: twin
            ? (abs) => SecurityMatch.test(compiled, abs) || SecurityMatch.test(twin, abs)
            : (abs) => SecurityMatch.test(compiled, abs),
          literal: compiled.literal,
        })
      })
      layer.policy.segments?.markers?.forEach((marker, i) => {
        knownRoles(marker.allowedRoles, `/segments/markers/${i}/allowedRoles`)
        if (marker.start === marker.end)
          problems.push({
            file: layer.file,
            pointer: `/segments/markers/${i}/end`,
            message: "the end marker must differ from the start marker",
          })
        markers.push({
          id: `${layer.file}#/segments/markers/${i}`,
          start: marker.start,
          end: marker.end,
          deniedOperations: new Set(marker.deniedOperations),
          allowedRoles: marker.allowedRoles ?? [],
          roles: table,
          base: layer.dir,
        })
      })
    }
    if (problems.length) return { problems }

    const settings = rootLayer?.policy
    const logPath = path.resolve(root, settings?.logging?.path ?? SecuritySchema.DEFAULT_AUDIT_LOG).normalize("NFC")
    const hasExplicit = rules.length > 0 || markers.length > 0
    rules.push(
      ...implicitRules(
        root,
        logPath,
        rules,
        rootLayer,
        tables.get(rootLayer!) ?? all,
        nocase,
        options.protect ?? [],
        options.writable ?? [],
        options.modules ?? [],
      ),
      ...hostStateRules(options.hide ?? [], options.hideNamed ?? [], tables.get(rootLayer!) ?? all, nocase),
    )
    return {
      config: {
        root,
        files: layers.map((l) => l.file),
        layers,
        rules,
        markers,
        roles: all,
        defaultRole: SecurityRole.getDefault({ roles: allRoles }),
        logging: {
          path: logPath,
          level: settings?.logging?.level ?? "normal",
          maxBytes: Math.round((settings?.logging?.maxSizeMB ?? 10) * 1024 * 1024),
          keep: settings?.logging?.keep ?? 3,
        },
        mcp: { defaultPolicy: settings?.mcp?.defaultPolicy, servers: settings?.mcp?.servers ?? {} },
        secrets: settings?.secrets?.enabled ?? true,
        sandbox: {
          mode: settings?.sandbox?.mode,
          explicit: settings?.sandbox?.mode !== undefined,
          allowGitConfig: settings?.sandbox?.allowGitConfig ?? false,
          allowCommandShell: settings?.sandbox?.allowCommandShell ?? false,
          allowAgentPermissions: settings?.sandbox?.allowAgentPermissions ?? false,
          allowHostTools: settings?.sandbox?.allowHostTools ?? false,
          writable: settings?.sandbox?.writable ?? [],
        },
        nocase,
        home,
        hasExplicit,
      },
    }
  }

  /**
   * An absolute (or `~/`) pattern spelled by the physical path of its literal leading folders (`/home` → `var/home` on
   * Fedora Silverblue, a linked `~/.config`), undefined when that is how it is spelled already. Paths are judged
   * by their real path too, so a rule known only by its link spelling let the real spelling through.
   */
  function physicalTwin(
    compiled: SecurityMatch.Compiled,
    type: "file" | "directory",
    base: string,
    nocase: boolean,
  ): SecurityMatch.Compiled | undefined {
    if (compiled.kind !== "absolute") return undefined
    const segments = compiled.glob.source.split("/").filter(Boolean)
    const plain = segments.findIndex((s) => /[*?[\]{}()!+@\\]/.test(s))
    const literal = "/" + (plain < 0 ? segments : segments.slice(0, plain)).join("/")
    const real = SecurityPath.physicalPrefix(literal)
    if (real === path.resolve(literal)) return undefined
    const pattern = [SecurityMatch.escape(real), ...(plain < 0 ? [] : segments.slice(plain))].join("/")
    const twin = SecurityMatch.compile({ pattern, type, base, nocase })
    return "error" in twin ? undefined : twin
  }

  /** What `onDisk` looked up during one merge (rules often share folders). */
  type Disk = { stats: Map<string, fs.Stats | undefined>; listings: Map<string, string[]> }

  /**
   * Mistakes a pattern shows only against the files on disk, for a pattern whose leading segments are plain names:
   * a `file` rule naming an existing folder (it would protect the folder itself, not what is inside; a name pattern
   * is looked up in the policy's folder), and, on a case-sensitive file system, an anchored or absolute path whose
   * segment does not exist while one differing only in case does (`Secrets/**` next to `secrets/`). A path that does
   * not exist at all is fine: it may be created later.
   */
  function onDisk(
    compiled: SecurityMatch.Compiled,
    dir: string,
    disk: Disk,
  ): { field: "type" | "pattern"; message: string } | undefined {
    const source = compiled.glob.source
    const stat = (p: string) => {
      if (!disk.stats.has(p)) disk.stats.set(p, fs.statSync(p, { throwIfNoEntry: false }))
      return disk.stats.get(p)
    }
    const root = compiled.kind === "absolute" ? "/" : dir
    const segments = source.split("/").filter(Boolean)
    const plain = segments.findIndex((s) => /[*?[\]{}\\]/.test(s))
    const literal = plain < 0 ? segments : segments.slice(0, plain)
    let at = root
    for (const segment of literal) {
      const next = path.join(at, segment)
      if (stat(next)) {
        at = next
        continue
      }
      // A name pattern matches at any depth: one missing here is no mistake.
      if (compiled.nocase || compiled.kind === "name") return undefined
      if (!disk.listings.has(at)) {
        let names: string[] = []
        try {
          names = fs.readdirSync(at)
        } catch {}
        disk.listings.set(at, names)
      }
      const like = disk.listings.get(at)!.find((name) => name.toLowerCase() === segment.toLowerCase())
      // The same name (a link whose target is gone, or moved: `secrets` → a renamed `vault`) is no case mistake.
      if (!like || like === segment) return undefined
      return {
        field: "pattern",
        message: `'${segment}' does not exist in ${at}, but '${like}' does: patterns match case exactly on this file system`,
      }
    }
    if (plain < 0 && compiled.type === "file" && stat(at)?.isDirectory())
      return {
        field: "type",
        message: `${at} is a folder: a 'file' rule would protect only the folder itself, not what is inside; use type 'directory'`,
      }
    return undefined
  }

  /**
   * The host's own state folders: no role may read or write them (not even through a rule of the policy). `named`
   * ones (`.opencode/builtins-local`) wherever they lie: the local state of a nested project (a nested repository, a
   * subfolder session) holds what its sessions of every role saw, and lies inside this one.
   */
  function hostStateRules(hide: string[], named: string[], table: SecurityRole.Table, nocase: boolean): Rule[] {
    if (!hide.length && !named.length) return []
    const fold = (s: string) => (nocase ? s.toLowerCase() : s)
    const dirs = hide.map((d) => fold(path.resolve(d).normalize("NFC")))
    const names = named
      .map((n) =>
        path
          .normalize(n)
          .normalize("NFC")
          .replace(/[\\/]+$/, ""),
      )
      .map((n) => fold(path.sep + n))
    return [
      {
        // "file" as for the host's configuration folders: `test` covers what is below them.
        type: "file",
        deniedOperations: new Set<Operation>(["read", "llm", "write"]),
        allowedRoles: [],
        roles: table,
        id: "implicit:host-state",
        implicit: "host-state",
        pattern: [...dirs.map((d) => d + path.sep), ...names.map((n) => `**${n}${path.sep}`)].join(", "),
        test: (abs) => {
          const a = fold(abs)
          if (dirs.some((d) => a === d || a.startsWith(d + path.sep))) return true
          // Whole segments: `…/.opencode/builtins-local` itself or below it, not `…/.opencode/builtins-local2`.
          for (const n of names)
            for (let i = a.indexOf(n); i >= 0; i = a.indexOf(n, i + 1)) {
              const end = i + n.length
              if (end === a.length || a[end] === path.sep) return true
            }
          return false
        },
      },
    ]
  }

  /**
   * Self-protection: no role may write a policy file (at any depth), the audit log and its
   * rotated copies, or the host configuration files named in `protect`. A rule of the root policy that matches the same file and denies `write` replaces the implicit
   * one for that file (so the user can name roles allowed to edit it); nothing else can lift it.
   */
  function implicitRules(
    root: string,
    logPath: string,
    explicit: Rule[],
    rootLayer: Layer | undefined,
    table: SecurityRole.Table,
    nocase: boolean,
    protect: string[],
    writable: string[],
    modules: string[],
  ): Rule[] {
    const overrides = explicit.filter((r) => rootLayer && r.file === rootLayer.file && r.deniedOperations.has("write"))
    const overridden = (abs: string) => overrides.some((r) => r.test(abs))
    const fold = (s: string) => (nocase ? s.toLowerCase() : s)
    const policyName = fold(SecuritySchema.FILE)
    const logName = fold(logPath)
    const base = {
      type: "file" as const,
      deniedOperations: new Set<Operation>(["write"]),
      allowedRoles: [] as string[],
      roles: table,
    }
    // Entries ending in a separator are folders: protected with everything below them.
    const hostFiles = new Set(
      protect.filter((p) => !p.endsWith(path.sep)).map((p) => fold(path.resolve(p).normalize("NFC"))),
    )
    const hostDirs = protect.filter((p) => p.endsWith(path.sep)).map((p) => fold(path.resolve(p).normalize("NFC")))
    const open = writable.map((p) => fold(path.resolve(p).normalize("NFC")))
    const moduleFolders = modules.map((p) => path.resolve(p).normalize("NFC"))
    const moduleNames = moduleFolders.map((d) => path.join(d, "{*.py,*.pyc,*.so,…,<name>/__init__.py,__pycache__/…}"))
    const inHostDir = (abs: string) => {
      const a = fold(abs)
      if (open.some((d) => a === d || a.startsWith(d + path.sep))) return false
      return hostDirs.some((d) => a === d || a.startsWith(d + path.sep))
    }
    return [
      {
        ...base,
        id: "implicit:host-config",
        implicit: "host-config",
        // Thousands of paths once the plugins' imports are in (`SecurityClosure`): explanations name a few.
        pattern: summarise([...moduleNames, ...hostFiles, ...hostDirs.map((d) => d + path.sep)]),
        test: (abs) =>
          (hostFiles.has(fold(abs)) || inHostDir(abs) || SecurityPythonPath.held(moduleFolders, abs, fold)) &&
          !overridden(abs),
      },
      {
        ...base,
        id: "implicit:policy-file",
        implicit: "policy-file",
        pattern: SecuritySchema.FILE,
        literal: SecuritySchema.FILE,
        test: (abs) =>
          fold(path.basename(abs)) === policyName && SecurityPath.isInside(abs, root, nocase) && !overridden(abs),
      },
      {
        ...base,
        id: "implicit:audit-log",
        implicit: "audit-log",
        pattern: logPath,
        literal: path.basename(logPath),
        test: (abs) => {
          const a = fold(abs)
          const rotated = a.startsWith(logName + ".") && /^\d+$/.test(a.slice(logName.length + 1))
          return (a === logName || rotated) && !overridden(abs)
        },
      },
    ]
  }

  /** The first paths of a long list and how many more there are. */
  function summarise(paths: string[], shown = 8): string {
    return paths.length <= shown
      ? paths.join(", ")
      : `${paths.slice(0, shown).join(", ")}, … (${paths.length - shown} more host paths)`
  }

  /**
   * The MCP policy of a server: an explicit `mcp.servers` entry wins; then `mcp.defaultPolicy`; then
   * `enforced` when the policy has rules or markers, `trusted` when there is no policy at all. An invalid policy
   * answers `enforced`.
   *
   * @example
   * SecurityConfig.getMcpPolicy({ status: "none", root: "/r" }, "docs") // "trusted"
   */
  export function getMcpPolicy(state: State, server: string | undefined): SecuritySchema.McpPolicy {
    if (state.status === "none") return "trusted"
    if (state.status === "invalid") return "enforced"
    const mcp = state.config.mcp
    if (server !== undefined && Object.hasOwn(mcp.servers, server)) return mcp.servers[server]
    if (mcp.defaultPolicy) return mcp.defaultPolicy
    return state.config.hasExplicit ? "enforced" : "trusted"
  }

  export type FindOptions = { maxEntries?: number; skip?: ReadonlySet<string> }
  /** Folders never walked when looking for policy files (dependencies and VCS data). */
  export const SKIP = new Set([".git", "node_modules", ".hg", ".svn"])

  /** An entry met by `walk`: `path` as listed (for I/O), `parent` the folder listing it. */
  export type Entry = { path: string; parent: string; name: string; kind: "dir" | "file" | "other" }

  /**
   * Every entry below `root`, breadth first, by a bounded walk that follows no links and does not descend into
   * `skip` folders (their entries count, their contents are not listed). One walk serves both the policy-file search
   * and the guard's index of protected files.
   *
   * @example
   * const { entries, truncated } = await SecurityConfig.walk("/repo", { maxEntries: 100_000 })
   * entries.filter((e) => e.kind === "file").length
   */
  export async function walk(
    root: string,
    options: FindOptions = {},
  ): Promise<{ entries: Entry[]; truncated: boolean }> {
    const max = options.maxEntries ?? 200_000
    const skip = options.skip ?? SKIP
    const entries: Entry[] = []
    const queue = [root]
    while (queue.length) {
      const dir = queue.shift()!
      let listed: fs.Dirent[]
      try {
        listed = await fsp.readdir(dir, { withFileTypes: true })
      } catch {
        continue
      }
      for (const entry of listed) {
        if (entries.length >= max) return { entries, truncated: true }
        const full = path.join(dir, entry.name)
        const kind = entry.isDirectory() ? "dir" : entry.isFile() ? "file" : "other"
        entries.push({ path: full, parent: dir, name: entry.name, kind })
        if (kind === "dir" && !skip.has(entry.name)) queue.push(full)
      }
    }
    return { entries, truncated: false }
  }

  /** The policy files among walked entries (the root's own excluded), NFC-normalised. */
  export function policyFiles(root: string, entries: readonly Entry[]): string[] {
    return entries
      .filter((e) => e.kind !== "dir" && e.name === SecuritySchema.FILE && e.parent !== root)
      .map((e) => e.path.normalize("NFC"))
  }

  /**
   * Every policy file below `root` (the root's own excluded), found by a bounded walk that follows no links and skips
   * `.git` and `node_modules`.
   *
   * @example
   * await SecurityConfig.find("/repo") // ["/repo/vendor/.opencode-security.json"]
   */
  export async function find(
    root: string,
    options: FindOptions = {},
  ): Promise<{ files: string[]; truncated: boolean }> {
    const { entries, truncated } = await walk(root, options)
    return { files: policyFiles(root, entries), truncated }
  }

  export type Watcher = {
    /** The current state, re-checked (a few `stat` calls) when `intervalMs` has passed since the last check. */
    state(): State
    /** Re-checks now. */
    refresh(): State
    /** Loads again now, whether or not a file changed (the options' `protect` list changed). */
    reload(): State
    /** Adds policy files found in subdirectories (reloads when they are new). */
    add(files: string[]): void
    /** Looks for policy files in the folders from `absolute`'s folder up to the root (cached per folder). */
    notice(absolute: string): void
    /** Increments on every reload. */
    readonly version: number
    /** Policy files that were symbolic links when first seen, with where they led (see `watch`). */
    links(): ReadonlyMap<string, string>
  }

  /**
   * A policy that follows its files: each file's size, times and inode are compared at most every `intervalMs`
   * (default 500 ms), and a change reloads synchronously, so an edit takes effect on the next check. No `fs.watch`.
   *
   * @example
   * const w = SecurityConfig.watch("/repo")
   * w.state().status // "none" | "valid" | "invalid"
   */
  export function watch(
    root: string,
    options: LoadOptions & {
      intervalMs?: number
      now?: () => number
      onChange?: (state: State) => void
      /**
       * Problems found outside the policy files that keep the policy invalid, asked at every reload: held links a
       * session that ended during a command left changed (`SecurityHeld.disputes`).
       */
      problems?: () => Problem[]
    } = {},
  ): Watcher {
    root = path.resolve(root).normalize("NFC")
    const interval = options.intervalMs ?? 500
    const now = options.now ?? Date.now
    const nested = new Set(options.nested ?? [])
    const stamps = new Map<string, string>()
    const folders = new Map<string, string>()
    /** A folder's identity and time; one taken within the clock's granularity of now is never reused. */
    const folderStamp = (dir: string): string | undefined => {
      try {
        const stat = fs.statSync(dir)
        // The change time too: a command sets a folder's modification time back (`touch -r`), never its change time.
        if (Date.now() - Math.max(stat.mtimeMs, stat.ctimeMs) < 2_000) return `racy:${Math.random()}`
        return `${stat.ino}:${stat.mtimeMs}:${stat.ctimeMs}`
      } catch {
        return undefined
      }
    }
    let lastValid: Loaded | undefined
    let current: State
    let checked = 0
    let version = 0

    const stampOf = (file: string) => {
      let own = ""
      try {
        // The entry itself too: a link replaced by another one leading to the same file is a change.
        const l = fs.lstatSync(file)
        if (l.isSymbolicLink()) own = `:link:${l.ino}:${l.ctimeMs}`
      } catch {
        return "absent"
      }
      try {
        const s = fs.statSync(file)
        return `${s.mtimeMs}:${s.ctimeMs}:${s.size}:${s.ino}${own}`
      } catch {
        return `dangling${own}`
      }
    }
    /**
     * Policy files that were symbolic links when first seen (a shared policy linked into the project), with where they
     * led. A sandbox mount holds a link's target, not the link: one a command replaced, removed or sent elsewhere is
     * not the user's policy, so the state is invalid (file access refused, the last valid policy kept for redaction)
     * until the link is back (the guard puts it back after the command).
     */
    const links = new Map<string, string>()
    const noteLink = (file: string) => {
      if (links.has(file)) return
      try {
        if (fs.lstatSync(file).isSymbolicLink()) links.set(file, fs.readlinkSync(file))
      } catch {
        // Absent: nothing to hold.
      }
    }
    const replacedLinks = (): Problem[] => {
      const problems: Problem[] = []
      for (const [file, target] of links) {
        let now: string
        try {
          now = fs.lstatSync(file).isSymbolicLink() ? `a link to ${fs.readlinkSync(file)}` : "a file or folder"
        } catch {
          now = "removed"
        }
        if (now === `a link to ${target}`) continue
        problems.push({
          file,
          pointer: "",
          message: `this policy file was a symbolic link to ${target} when the session started and is now ${now === "removed" ? "gone" : now}: the policy it led to stays in force, and file access is refused until the link is put back (the security layer puts it back after the command that changed it; to change the policy, edit ${target} outside OpenCode)`,
        })
      }
      return problems
    }
    const tracked = () => [path.join(root, SecuritySchema.FILE), ...nested]
    const reload = () => {
      for (const file of tracked()) stamps.set(file, stampOf(file))
      const loaded = load(root, { ...options, nested: [...nested] })
      const outside = options.problems?.() ?? []
      // A file those problems name is not held as it is now (it may be a command's doing): once they are gone (the
      // link put back), it is held as it is then.
      const disputed = new Set(outside.map((p) => p.file))
      for (const file of loaded.status === "valid"
        ? loaded.config.files
        : loaded.status === "invalid"
          ? loaded.files
          : [])
        if (!disputed.has(file)) noteLink(file)
      const replaced = [...outside, ...replacedLinks()]
      const state: State = replaced.length
        ? {
            status: "invalid",
            root,
            problems: [...replaced, ...(loaded.status === "invalid" ? loaded.problems : [])],
            files: [...new Set([...links.keys(), ...(loaded.status === "invalid" ? loaded.files : [])])],
          }
        : loaded
      if (state.status === "valid") lastValid = state.config
      current = state.status === "invalid" ? { ...state, lastValid } : state
      // A held link that is gone stays watched: put back, it counts again.
      for (const file of [...nested]) if (stamps.get(file) === "absent" && !links.has(file)) nested.delete(file)
      checked = now()
      version++
      options.onChange?.(current)
      return current
    }
    const refresh = () => {
      for (const file of tracked()) if (stampOf(file) !== stamps.get(file)) return reload()
      checked = now()
      return current
    }
    current = reload()
    return {
      state: () => (now() - checked >= interval ? refresh() : current),
      refresh,
      reload,
      add(files) {
        let fresh = false
        for (const f of files) {
          const file = path.resolve(f).normalize("NFC")
          if (!nested.has(file) && file !== path.join(root, SecuritySchema.FILE)) {
            nested.add(file)
            fresh = true
          }
        }
        if (fresh) reload()
      },
      notice(absolute) {
        if (!SecurityPath.isInside(absolute, root)) return
        const found: string[] = []
        for (
          let dir = path.dirname(absolute);
          dir !== root && SecurityPath.isInside(dir, root);
          dir = path.dirname(dir)
        ) {
          // A folder is looked at again whenever its own time changes (a policy file created in it changes it), not
          // after a fixed interval: a policy written a moment after a check must count for the next one.
          const stamp = folderStamp(dir)
          if (stamp === undefined) continue
          if (folders.get(dir) === stamp) continue
          folders.set(dir, stamp)
          if (folders.size > 10_000) folders.clear()
          const file = path.join(dir, SecuritySchema.FILE)
          if (!nested.has(file) && exists(file)) found.push(file)
        }
        if (found.length) this.add(found)
      },
      get version() {
        return version
      },
      links: () => links,
    }
  }
}
