import fs from "fs"
import os from "os"
import path from "path"
import { SecurityAccess } from "./access"
import type { SecurityConfig } from "./config"
import { SecurityFingerprint } from "./fingerprint"
import { SecurityRole } from "./role"
import type { SecuritySchema } from "./schema"
import { SecuritySegments } from "./segments"
import { SecurityTree } from "./tree"

/**
 * What the policy protects on disk right now, for one role: every existing protected file and folder (inside the
 * project, and outside it for absolute and `~/` rules), the outermost of them (what the sandbox hides or locks), the
 * inodes of protected files (a hard link elsewhere is the same file), content fingerprints of read-protected files
 * (copies in tool output are recognised), and the files holding protected segments. Built from a `SecurityTree`
 * listing; file contents are read only for files that changed since the previous build.
 *
 * @example
 * const tree = await SecurityTree.list("/repo")
 * const index = await SecurityInventory.build({ config, role: "viewer", tree })
 * index.top // [{ path: "/repo/secrets", dir: true, ops: Set { "read", "write", "llm" } }, …]
 */
export namespace SecurityInventory {
  export type Operation = SecuritySchema.Operation
  export type Protected = { path: string; dir: boolean; ops: ReadonlySet<Operation> }

  export type Index = {
    /** Increments with every build. */
    version: number
    /** Every existing protected file (also those inside protected folders) → operations denied to the role. */
    files: Map<string, Set<Operation>>
    /** The outermost protected entries: folders a rule protects entirely, and single files outside them. */
    top: Protected[]
    /** `dev:ino` of protected files → one of their paths. */
    inodes: Map<string, string>
    /**
     * Other names of protected files: hard links elsewhere (made before the policy, or by the user), with the
     * operations their file's protection denies. The sandbox hides or locks them like the files.
     */
    links: Protected[]
    read: SecurityFingerprint.Index
    llm: SecurityFingerprint.Index
    /** Files holding protected segments → the operations those segments deny to the role. */
    segmented: Map<string, Set<Operation>>
    /**
     * Files of `segmented` too large to read whole (`maxFileBytes`) where a start marker occurs: they cannot be shown
     * with their segments redacted, so the sandbox hides them whole.
     */
    whole: Set<string>
    /** Policy files found below the root (the root's own excluded). */
    policyFiles: string[]
    truncated: boolean
    builtAt?: number
  }

  /**
   * What a build learned, reused by the next: file contents (keyed by path, valid while size and times are
   * unchanged) and the rule decisions per path (valid while the policy and the role are unchanged: `key`).
   */
  export type Cache = Map<
    string,
    { stamp: string; text?: string; segments?: boolean; large?: { key: string; found: number[] } }
  > & {
    decisions?: { key: string; map: Map<string, { ops: Set<Operation>; whole: boolean }> }
  }

  export type Input = {
    config: SecurityConfig.Loaded
    role: string
    tree: SecurityTree.Tree
    cache?: Cache
    /** Largest file read for fingerprints or segments (default 2 MB). */
    maxFileBytes?: number
    /** Total bytes fingerprinted (default 32 MB). */
    maxFingerprintBytes?: number
    now?: () => number
    version?: number
    /** Identifies the policy (rules and roles): cached decisions are dropped when it changes. */
    policyKey?: string
  }

  const OPS: Operation[] = ["read", "write", "llm"]
  const PROBE = "\u2063probe"

  /** An empty index (nothing known to be protected yet). */
  export function empty(version = -1): Index {
    return {
      version,
      files: new Map(),
      top: [],
      inodes: new Map(),
      links: [],
      read: SecurityFingerprint.create(),
      llm: SecurityFingerprint.create(),
      segmented: new Map(),
      whole: new Set(),
      policyFiles: [],
      truncated: false,
    }
  }

  /**
   * The operations `config` denies `role` on an absolute path, and whether a folder there is protected with
   * everything below it (a directory rule, or a pattern that matches any name below it).
   *
   * @example
   * SecurityInventory.denied(config, "viewer", "/repo/secrets", true) // { ops: Set {…}, whole: true }
   */
  export function denied(
    config: SecurityConfig.Loaded,
    role: string,
    absolute: string,
    dir: boolean,
  ): { ops: Set<Operation>; whole: boolean } {
    const ops = new Set<Operation>()
    // Each rule's pattern is tested once per path (not once per operation): the index tests every file of the tree
    // against every rule, and that test is most of its time on a large tree.
    const deniers = (target: string) => config.rules.filter((r) => r.deniedOperations.size && r.test(target))
    const here = deniers(absolute)
    if (!here.length) return { ops, whole: false }
    const below = dir ? deniers(`${absolute}/${PROBE}`) : []
    let whole = dir
    for (const op of OPS) {
      if (!here.some((r) => r.deniedOperations.has(op) && SecurityAccess.denies(r, op, role))) continue
      ops.add(op)
      if (dir && !below.some((r) => r.deniedOperations.has(op) && SecurityAccess.denies(r, op, role))) whole = false
    }
    return { ops, whole: whole && ops.size > 0 }
  }

  /**
   * Builds the index from a tree listing (and the paths absolute rules name outside it).
   *
   * @example
   * const index = await SecurityInventory.build({ config, role, tree, cache: new Map() })
   */
  export async function build(input: Input): Promise<Index> {
    const { config, role, tree } = input
    const cache: Cache = input.cache ?? new Map()
    const index = empty(input.version ?? 0)
    const key = `${input.policyKey ?? ""}\0${role}`
    if (!cache.decisions || cache.decisions.key !== key) cache.decisions = { key, map: new Map() }
    const decisions = cache.decisions.map
    const decide = (full: string, dir: boolean) => {
      const id = dir ? `d:${full}` : `f:${full}`
      let hit = decisions.get(id)
      if (!hit) {
        hit = denied(config, role, full, dir)
        decisions.set(id, hit)
      }
      return hit
    }
    // The built-ins' local state is protected so that no role reads or plants it, not because it is secret: it holds
    // paths and copies of definitions found elsewhere (the discovery cache, heartbeats). Its lines and path-like
    // tokens are not fingerprinted, or every output naming a project path would be redacted as its content.
    const state = config.rules.filter((r) => r.implicit === "host-state")
    const isState = (full: string) => state.some((r) => r.test(full))
    index.truncated = tree.truncated
    const maxFile = input.maxFileBytes ?? 2 * 1024 * 1024
    const maxPrints = input.maxFingerprintBytes ?? 32 * 1024 * 1024
    const markers = config.markers
      .map((m) => ({
        marker: m,
        ops: OPS.filter((op) => m.deniedOperations.has(op) && !SecurityRole.allowed(m.roles, role, m.allowedRoles)),
      }))
      .filter((m) => m.ops.length)
    const starts = markers.map((m) => m.marker.start.toLowerCase())

    // Folders protected as a whole, outermost first: entries below them inherit their operations.
    const wholeDirs = new Map<string, Set<Operation>>()
    const covering = (p: string): Set<Operation> | undefined => {
      if (!wholeDirs.size) return undefined
      for (let dir = path.dirname(p); ; dir = path.dirname(dir)) {
        const ops = wholeDirs.get(dir)
        if (ops) return ops
        if (dir === path.dirname(dir)) return undefined
      }
    }
    let bytes = 0
    let visited = 0
    const seen = new Set<string>()
    /** Files with more than one name that no rule protects, by `dev:ino`: a link to a protected file is one too. */
    const shared = new Map<string, string[]>()
    const consider = async (full: string, kind: SecurityTree.Kind) => {
      if (seen.has(full)) return
      seen.add(full)
      if (++visited % 4000 === 0) await new Promise((r) => setImmediate(r))
      if (kind === "dir") {
        const own = decide(full, true)
        if (!own.ops.size) return
        if (own.whole) wholeDirs.set(full, own.ops)
        const above = covering(full)
        if (own.whole && !(above && [...own.ops].every((op) => above.has(op))))
          index.top.push({ path: full, dir: true, ops: own.ops })
        return
      }
      if (kind !== "file") return
      const own = decide(full, false).ops
      const above = covering(full)
      const ops = new Set([...own, ...(above ?? [])])
      let stamp: string | undefined
      let stat: fs.Stats | undefined
      try {
        stat = fs.statSync(full)
        stamp = `${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}:${stat.ino}`
      } catch {
        // Vanished since the listing: the path rules still protect it.
      }
      if (ops.size) {
        index.files.set(full, ops)
        if (own.size && !(above && [...own].every((op) => above.has(op))))
          index.top.push({ path: full, dir: false, ops: own })
        if (stat) index.inodes.set(`${stat.dev}:${stat.ino}`, full)
      } else if (stat && stat.nlink > 1) {
        const id = `${stat.dev}:${stat.ino}`
        shared.set(id, [...(shared.get(id) ?? []), full])
      }
      const wantsPrint = (ops.has("read") || ops.has("llm")) && bytes < maxPrints && !isState(full)
      const wantsSegments = markers.length > 0
      if (!stat || !stamp || (!wantsPrint && !wantsSegments)) return
      let entry = cache.get(full)
      if (!entry || entry.stamp !== stamp) {
        entry = { stamp }
        cache.set(full, entry)
      }
      if (stat.size > maxFile) {
        // Too large to read whole, but segments may not go unprotected because of a file's size (three edits that
        // repeat a line grew one past the limit, and the sandbox showed it in clear): a start marker anywhere, found
        // by streaming the file, protects it whole.
        if (!wantsSegments) return
        const key = starts.join("\0")
        if (entry.large?.key !== key)
          entry.large = {
            key,
            found: SecuritySegments.scanFile(
              full,
              markers.map((m) => m.marker),
            ),
          }
        const segOps = new Set<Operation>()
        for (const i of entry.large.found) for (const op of markers[i].ops) segOps.add(op)
        if (segOps.size) {
          index.segmented.set(full, segOps)
          index.whole.add(full)
        }
        return
      }
      if (entry.text === undefined && (wantsPrint || entry.segments === undefined)) {
        let text: string
        try {
          text = (await fs.promises.readFile(full)).toString("utf8")
        } catch {
          text = ""
        }
        // Segments are looked for whatever the content: a NUL byte (which makes a file binary to the fingerprints and
        // to OpenCode's read) once took a file out of the sandbox's masking.
        entry.segments = text ? hasSegment(text, starts, markers) : false
        // The text is kept only for protected files (fingerprints are rebuilt from it); others keep the flag.
        if (wantsPrint) entry.text = text.slice(0, 8192).includes("\0") ? "" : text
      }
      if (wantsPrint && entry.text) {
        bytes += entry.text.length
        SecurityFingerprint.add(index.read, entry.text)
        if (ops.has("llm")) SecurityFingerprint.add(index.llm, entry.text)
      }
      if (entry.segments) {
        const text = entry.text || readText(full, maxFile)
        const found = text
          ? SecuritySegments.find(
              text,
              markers.map((m) => m.marker),
            )
          : []
        const segOps = new Set<Operation>()
        for (const seg of found) for (const op of markers[seg.marker].ops) segOps.add(op)
        if (segOps.size) index.segmented.set(full, segOps)
      }
    }

    for (const folder of tree.folders.values())
      for (const e of folder.entries) {
        if (e.name === ".opencode-security.json" && path.dirname(e.path) !== tree.root && e.kind !== "dir")
          index.policyFiles.push(e.path.normalize("NFC"))
        await consider(e.path.normalize("NFC"), e.kind)
      }
    for (const e of outside(config, tree.root)) await consider(e.path, e.kind)
    for (const [id, paths] of shared) {
      const original = index.inodes.get(id)
      const ops = original && index.files.get(original)
      if (ops) for (const p of paths) index.links.push({ path: p, dir: false, ops })
    }
    for (const file of cache.keys()) if (!seen.has(file)) cache.delete(file)
    for (const id of decisions.keys()) if (!seen.has(id.slice(2))) decisions.delete(id)
    index.builtAt = (input.now ?? Date.now)()
    return index
  }

  function readText(file: string, max: number): string | undefined {
    try {
      const stat = fs.statSync(file)
      if (stat.size > max) return undefined
      return fs.readFileSync(file, "utf8")
    } catch {
      return undefined
    }
  }

  function hasSegment(
    text: string,
    starts: string[],
    markers: { marker: SecurityConfig.Marker; ops: Operation[] }[],
  ): boolean {
    const lower = text.toLowerCase()
    if (!starts.some((s) => lower.includes(s))) return false
    return (
      SecuritySegments.find(
        text,
        markers.map((m) => m.marker),
        lower,
      ).length > 0
    )
  }

  /**
   * Entries outside the project that absolute and `~/` rules may protect: the rule's literal leading folders, listed
   * two levels deep (at most 2,000 entries per rule).
   */
  function outside(config: SecurityConfig.Loaded, root: string): { path: string; kind: SecurityTree.Kind }[] {
    const out: { path: string; kind: SecurityTree.Kind }[] = []
    const home = config.home || os.homedir()
    for (const rule of config.rules) {
      if (rule.implicit) continue
      const pattern = rule.pattern.trim()
      if (!pattern.startsWith("/") && !pattern.startsWith("~")) continue
      const expanded = pattern === "~" || pattern.startsWith("~/") ? path.join(home, pattern.slice(1)) : pattern
      const parts = expanded.split("/")
      const literal: string[] = []
      for (const part of parts) {
        if (/[*?[\]{}()!+@\\]/.test(part)) break
        literal.push(part)
      }
      const base = literal.join("/") || "/"
      if (base === "/" || (root.startsWith(base + "/") && base.length < root.length)) continue
      const kindOf = (p: string): SecurityTree.Kind | undefined => {
        try {
          const s = fs.lstatSync(p)
          return s.isDirectory() ? "dir" : s.isFile() ? "file" : "other"
        } catch {
          return undefined
        }
      }
      const own = kindOf(base)
      if (!own) continue
      out.push({ path: base, kind: own })
      if (literal.length === parts.length || own !== "dir") continue
      let budget = 2000
      const queue: { dir: string; depth: number }[] = [{ dir: base, depth: 0 }]
      while (queue.length && budget > 0) {
        const { dir, depth } = queue.shift()!
        let names: fs.Dirent[]
        try {
          names = fs.readdirSync(dir, { withFileTypes: true })
        } catch {
          continue
        }
        for (const d of names) {
          if (--budget < 0) break
          const full = path.join(dir, d.name)
          const kind: SecurityTree.Kind = d.isDirectory() ? "dir" : d.isFile() ? "file" : "other"
          out.push({ path: full, kind })
          if (kind === "dir" && depth < 1) queue.push({ dir: full, depth: depth + 1 })
        }
      }
    }
    return out
  }
}
