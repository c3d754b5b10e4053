// Bun's text lockfile (bun.lock): read, and pruned for a machine that reaches only the npm registry.

/**
 * `bun.lock` edits that keep the file consistent, so `bun install` uses it instead of printing "Ignoring lockfile"
 * and resolving everything again (which, offline from anything but npm, hangs on the first tarball it cannot get).
 *
 * The file is JSON with trailing commas: a `workspaces` map (folder → name and dependency specs), `catalog`,
 * `overrides`, and `packages` (one line per entry: key → `[name@resolution, …, info, integrity]`, keys nested as
 * `parent/child` for copies installed under a parent). Edits are made on the text, line by line, so everything left
 * keeps Bun's own formatting; the result is parsed again and compared with the same edit made on the parsed object.
 *
 * @example
 * const { text, removed } = BunLockfile.prune(fs.readFileSync("bun.lock", "utf8"), {
 *   workspaces: ["packages/console/app"],
 *   catalog: ["@solidjs/start"],
 *   replace: { "ghostty-web": { version: "0.4.0", integrity: "sha512-…" } },
 * })
 */
export namespace BunLockfile {
  export type Specs = Record<string, string>
  export type Workspace = {
    name?: string
    dependencies?: Specs
    devDependencies?: Specs
    optionalDependencies?: Specs
    peerDependencies?: Specs
    [key: string]: unknown
  }
  export type Entry = unknown[]
  export type Lock = {
    lockfileVersion: number
    workspaces: Record<string, Workspace>
    catalog?: Specs
    catalogs?: Record<string, Specs>
    overrides?: Specs
    packages: Record<string, Entry>
    [key: string]: unknown
  }

  /** A registry release put in place of a package the registry does not serve (e.g. a GitHub dependency). */
  export type Replacement = { version: string; integrity: string; dependencies?: Specs }

  export type PruneOptions = {
    /** Workspace folders to drop (their block, their workspace entry in `packages`). */
    workspaces?: string[]
    /** Catalog entries to drop (e.g. one whose spec is a URL). */
    catalog?: string[]
    /** Packages pinned to their registry release instead, in every workspace that depends on them. */
    replace?: Record<string, Replacement>
  }

  export type PruneResult = {
    text: string
    removed: { workspaces: string[]; catalog: string[]; packages: string[] }
    replaced: string[]
  }

  const WORKSPACE_FIELDS = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"] as const
  const PACKAGE_FIELDS = ["dependencies", "optionalDependencies", "peerDependencies"] as const

  /**
   * Parses JSON that may carry trailing commas (Bun's lockfile format).
   *
   * @example
   * BunLockfile.parseJsonc('{ "a": [1, 2,], }') // { a: [1, 2] }
   */
  export function parseJsonc(text: string): any {
    let out = ""
    let inString = false
    for (let i = 0; i < text.length; i++) {
      const c = text[i]
      if (inString) {
        out += c
        if (c === "\\") out += text[++i] ?? ""
        else if (c === '"') inString = false
        continue
      }
      if (c === '"') inString = true
      if (c === ",") {
        let j = i + 1
        while (j < text.length && /\s/.test(text[j])) j++
        if (text[j] === "}" || text[j] === "]") continue
      }
      out += c
    }
    return JSON.parse(out)
  }

  export function parse(text: string): Lock {
    const lock = parseJsonc(text)
    if (!lock || typeof lock !== "object" || typeof lock.lockfileVersion !== "number" || !lock.packages)
      throw new Error("not a Bun text lockfile (no lockfileVersion/packages)")
    lock.workspaces ??= {}
    return lock as Lock
  }

  /**
   * The `name@resolution` of an entry split at the version separator.
   *
   * @example
   * BunLockfile.resolution(["@solidjs/start@https://pkg.pr.new/x", {}]) // { name: "@solidjs/start", spec: "https://pkg.pr.new/x" }
   */
  export function resolution(entry: Entry): { name: string; spec: string } {
    const text = String(entry[0] ?? "")
    const at = text.indexOf("@", 1)
    return at < 0 ? { name: text, spec: "" } : { name: text.slice(0, at), spec: text.slice(at + 1) }
  }

  /** True for a spec the npm registry serves (a version or range, an `npm:` alias, a tag). */
  export function fromRegistry(spec: string): boolean {
    return !/^(https?:|git(\+[a-z]+)?:|github:|gitlab:|bitbucket:|file:|link:|[\w.-]+\/[\w.-]+(#.*)?$)/.test(spec)
  }

  /** Keys of `packages` entries that come neither from the registry nor from a workspace (tarball URLs, git). */
  export function foreign(lock: Lock): string[] {
    return Object.entries(lock.packages)
      .filter(([, entry]) => {
        const { spec } = resolution(entry)
        return !spec.startsWith("workspace:") && !spec.startsWith("root:") && !fromRegistry(spec)
      })
      .map(([key]) => key)
  }

  /** The plain-object part of an entry (dependencies, bin, os, …), if any. */
  export function info(entry: Entry): Record<string, any> {
    return (entry.find((item) => item && typeof item === "object" && !Array.isArray(item)) ?? {}) as Record<string, any>
  }

  /**
   * The package names of a nested key (`a/@s/b/c` → `["a", "@s/b", "c"]`).
   *
   * @example
   * BunLockfile.segments("@solidjs/start/shiki/@shikijs/core") // ["@solidjs/start", "shiki", "@shikijs/core"]
   */
  export function segments(key: string): string[] {
    const parts = key.split("/")
    const out: string[] = []
    for (let i = 0; i < parts.length; i++) out.push(parts[i].startsWith("@") ? `${parts[i]}/${parts[++i]}` : parts[i])
    return out
  }

  /**
   * Every `packages` key reachable from the workspaces: a dependency `d` of the package at `a/b` resolves to `a/b/d`,
   * else `a/d`, else `d` (Bun's nesting). Workspaces start at their package name; the root at the top.
   */
  export function reachable(lock: Lock): Set<string> {
    const seen = new Set<string>()
    const queue: { path: string[]; deps: string[] }[] = []
    const workspaceKeys = new Map<string, string>()
    for (const [key, entry] of Object.entries(lock.packages)) {
      const { spec } = resolution(entry)
      if (spec.startsWith("workspace:")) workspaceKeys.set(spec.slice("workspace:".length), key)
    }
    const names = (specs: Record<string, unknown> | undefined) => Object.keys(specs ?? {})
    for (const [folder, ws] of Object.entries(lock.workspaces)) {
      const deps = WORKSPACE_FIELDS.flatMap((field) => names(ws[field]))
      const own = folder === "" ? undefined : workspaceKeys.get(folder)
      if (own) visit(own)
      queue.push({ path: folder === "" || !ws.name ? [] : [ws.name], deps })
    }
    for (const name of names(lock.overrides)) if (lock.packages[name]) visit(name)

    function visit(key: string) {
      if (seen.has(key)) return
      seen.add(key)
      const entry = lock.packages[key]
      const data = info(entry)
      queue.push({ path: segments(key), deps: PACKAGE_FIELDS.flatMap((field) => names(data[field])) })
    }
    while (queue.length) {
      const { path, deps } = queue.shift()!
      for (const dep of deps) {
        for (let n = path.length; n >= 0; n--) {
          const key = [...path.slice(0, n), dep].join("/")
          if (lock.packages[key]) {
            visit(key)
            break
          }
        }
      }
    }
    return seen
  }

  /** The same edit as `prune`, on the parsed object (the reference the text edit is checked against). */
  export function pruneModel(lock: Lock, options: PruneOptions): { lock: Lock; removed: PruneResult["removed"] } {
    const next: Lock = structuredClone(lock)
    const dropWorkspaces = (options.workspaces ?? []).filter((w) => next.workspaces[w])
    for (const folder of dropWorkspaces) delete next.workspaces[folder]
    const dropCatalog = (options.catalog ?? []).filter((name) => next.catalog?.[name] !== undefined)
    for (const name of dropCatalog) delete next.catalog![name]
    for (const [name, r] of Object.entries(options.replace ?? {})) {
      for (const ws of Object.values(next.workspaces))
        for (const field of WORKSPACE_FIELDS) if (ws[field]?.[name] !== undefined) ws[field]![name] = r.version
      if (next.packages[name]) next.packages[name] = replacementEntry(name, r)
    }
    for (const [key, entry] of Object.entries(next.packages)) {
      const { spec } = resolution(entry)
      if (spec.startsWith("workspace:") && dropWorkspaces.includes(spec.slice("workspace:".length)))
        delete next.packages[key]
    }
    const keep = reachable(next)
    const dropPackages = Object.keys(next.packages).filter((key) => !keep.has(key))
    for (const key of dropPackages) delete next.packages[key]
    const removedWorkspaceEntries = Object.keys(lock.packages).filter(
      (key) => !next.packages[key] && !dropPackages.includes(key),
    )
    return {
      lock: next,
      removed: {
        workspaces: dropWorkspaces,
        catalog: dropCatalog,
        packages: [...removedWorkspaceEntries, ...dropPackages].sort(),
      },
    }
  }

  /**
   * What a machine that reaches only the npm registry must change: catalog entries and packages the registry does not
   * serve, and the workspaces that depend on them (directly, through the catalog, or through another such workspace),
   * except for packages given a registry replacement.
   *
   * @example
   * BunLockfile.offline(lock, ["ghostty-web"]) // { workspaces: ["packages/console/app", …], catalog: ["@solidjs/start"], … }
   */
  export function offline(lock: Lock, replaced: string[] = []) {
    const foreignNames = new Set(
      foreign(lock)
        .filter((key) => segments(key).length === 1)
        .filter((key) => !replaced.includes(key)),
    )
    const catalog = Object.entries(lock.catalog ?? {})
      .filter(([name, spec]) => !fromRegistry(spec) && !replaced.includes(name))
      .map(([name]) => name)
    for (const name of catalog) foreignNames.add(name)
    const byName = new Map(Object.entries(lock.workspaces).map(([folder, ws]) => [ws.name, folder]))
    const drop = new Set<string>()
    const needs = (ws: Workspace) =>
      WORKSPACE_FIELDS.flatMap((field) => Object.entries(ws[field] ?? {})).filter(([name, spec]) => {
        if (spec.startsWith("workspace:")) {
          const folder = byName.get(name)
          return folder !== undefined && drop.has(folder)
        }
        return foreignNames.has(name) && !replaced.includes(name)
      })
    for (let changed = true; changed;) {
      changed = false
      for (const [folder, ws] of Object.entries(lock.workspaces)) {
        if (drop.has(folder) || !needs(ws).length) continue
        if (folder === "")
          throw new Error(
            `the root workspace depends on ${needs(ws)
              .map(([n]) => n)
              .join(", ")}, which npm does not serve`,
          )
        drop.add(folder)
        changed = true
      }
    }
    return { workspaces: [...drop].sort(), catalog, foreign: [...foreignNames].sort() }
  }

  export function replacementEntry(name: string, r: Replacement): Entry {
    return [`${name}@${r.version}`, "", r.dependencies ? { dependencies: r.dependencies } : {}, r.integrity]
  }

  /** One entry written as Bun writes it: `["a@1", "", { "dependencies": { "b": "^2" } }, "sha512-…"]`. */
  function inline(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map(inline).join(", ")}]`
    if (value && typeof value === "object") {
      const items = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${inline(v)}`)
      return items.length ? `{ ${items.join(", ")} }` : "{}"
    }
    return JSON.stringify(value)
  }

  /**
   * Drops workspaces and catalog entries, pins replacements to their registry release, and removes every package
   * entry no remaining workspace reaches. Throws when the text edit and the model edit disagree (a lockfile laid out
   * differently from what this reads).
   */
  export function prune(text: string, options: PruneOptions): PruneResult {
    const lock = parse(text)
    const model = pruneModel(lock, options)
    const lines = text.split("\n")
    const out: string[] = []
    let section: string | undefined
    let workspace: string | undefined
    let skipping = false
    const dropWorkspaces = new Set(model.removed.workspaces)
    const dropCatalog = new Set(model.removed.catalog)
    const dropPackages = new Set(model.removed.packages)
    const replace = options.replace ?? {}
    const replaced: string[] = []
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]
      const top = /^  "([^"]+)": [{[]/.exec(line)
      if (top) section = top[1]
      if (section === "workspaces") {
        const open = /^    "([^"]*)": \{$/.exec(line)
        if (open) {
          workspace = open[1]
          skipping = dropWorkspaces.has(workspace)
        }
        if (skipping) {
          if (line === "    },") skipping = false
          continue
        }
        const dep = /^(        "([^"]+)": )"[^"]*",$/.exec(line)
        if (workspace !== undefined && dep && replace[dep[2]]) {
          out.push(`${dep[1]}${JSON.stringify(replace[dep[2]].version)},`)
          continue
        }
      }
      if (section === "catalog") {
        const entry = /^    "([^"]+)": "[^"]*",$/.exec(line)
        if (entry && dropCatalog.has(entry[1])) continue
      }
      if (section === "packages") {
        const entry = /^    "([^"]+)": \[.*\],$/.exec(line)
        if (entry && dropPackages.has(entry[1])) {
          if (lines[i + 1] === "") i++
          else if (out.at(-1) === "") out.pop()
          continue
        }
        if (entry && replace[entry[1]]) {
          out.push(`    ${JSON.stringify(entry[1])}: ${inline(replacementEntry(entry[1], replace[entry[1]]))},`)
          replaced.push(entry[1])
          continue
        }
      }
      out.push(line)
    }
    const result = out.join("\n")
    const check = parse(result)
    if (JSON.stringify(check) !== JSON.stringify(model.lock))
      throw new Error("bun.lock is laid out differently from what this edit expects: nothing was changed")
    return { text: result, removed: model.removed, replaced }
  }
}
