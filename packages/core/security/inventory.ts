import { createHash } from "crypto"
import fs from "fs"
import os from "os"
import path from "path"
import { SecurityAccess } from "./access"
import type { SecurityConfig } from "./config"
import { SecurityFingerprint } from "./fingerprint"
import { SecurityPath } from "./paths"
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
  /** A protected link with the `dev:ino` its target had (followed when the target moves: `build`). */
  export type Kept = SecurityAccess.Alias & { id?: string }

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
    /**
     * Protected symbolic links of `top` (the link's own path, every hop or its real path matched a rule) with the real
     * path they lead to: the sandbox hides or locks that target, so it is another name of what the link protects, and
     * the tools judge it (and, for a folder, everything below it) by the link's name (`SecurityAccess.checkAccess`).
     */
    aliases: Kept[]
    read: SecurityFingerprint.Index
    llm: SecurityFingerprint.Index
    /**
     * Digests of the whole text (`wholeDigest`) of each `llm`-protected file: a prompt part that is such a file's text
     * and nothing else (an editor's embedded resource, which OpenCode 1.2.15 passes without its path) is that file,
     * however short (a PIN, one phrase) for the fingerprints.
     */
    llmWhole: Set<string>
    /** Files holding protected segments → the operations those segments deny to the role. */
    segmented: Map<string, Set<Operation>>
    /**
     * Files of `segmented` too large to read whole (`maxFileBytes`) where a start marker occurs, or in UTF-16 with a
     * byte-order mark (`SecuritySegments.wide`): they cannot be shown with their segments redacted, so the sandbox hides
     * them whole.
     */
    whole: Set<string>
    /** Policy files found below the root (the root's own excluded). */
    policyFiles: string[]
    truncated: boolean
    /**
     * Folders outside the project an absolute or `~/` rule reaches that were not listed (the listing was cut at
     * `MAX_OUTSIDE_ENTRIES`, or they could not be read): they are in `top` whole, with the rule's operations.
     */
    unlisted: string[]
    builtAt?: number
  }

  /**
   * What a build learned, reused by the next: file contents (keyed by path, valid while size and times are
   * unchanged) and the rule decisions per path (valid while the policy and the role are unchanged: `key`).
   */
  export type Cache = Map<
    string,
    { stamp: string; text?: string; segments?: boolean; wide?: boolean; large?: { key: string; found: number[] } }
  > & {
    decisions?: { key: string; map: Map<string, { ops: Set<Operation>; whole: boolean }> }
    /**
     * Every entry (path as on disk → its kind in the listing) the last build derived something from: protected files
     * and folders (`files`, `top`, `inodes`), files with more than one name (`links`), files holding segments. A later
     * listing cut short before them considers them again (`build`), so what the index knew does not go with the cut.
     */
    derived?: Map<string, SecurityTree.Kind>
    /** The protected links the last build knew, under the policy and role of `decisions.key` (see `build`). */
    aliases?: { key: string; list: Kept[] }
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

  /** The shortest whole text (trimmed) `wholeDigest` knows: shorter ones ("ok", "yes") are too common a prompt. */
  export const WHOLE_MIN = 4

  /**
   * A digest of a text as a whole (line ends as `\n`, trimmed), or undefined when it is shorter than `WHOLE_MIN`.
   *
   * @example
   * SecurityInventory.wholeDigest("4821\r\n") === SecurityInventory.wholeDigest("4821") // true
   */
  export function wholeDigest(text: string): string | undefined {
    const own = text.replace(/\r\n?/g, "\n").trim()
    if (own.length < WHOLE_MIN) return undefined
    return createHash("sha256").update(own).digest("base64")
  }

  /** An empty index (nothing known to be protected yet). */
  export function empty(version = -1): Index {
    return {
      version,
      files: new Map(),
      top: [],
      inodes: new Map(),
      links: [],
      aliases: [],
      read: SecurityFingerprint.create(),
      llm: SecurityFingerprint.create(),
      llmWhole: new Set(),
      segmented: new Map(),
      whole: new Set(),
      policyFiles: [],
      truncated: false,
      unlisted: [],
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
    const starts = markers.map((m) => SecuritySegments.fold(m.marker.start))

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
    const previous = cache.derived ?? new Map<string, SecurityTree.Kind>()
    const derived = new Map<string, SecurityTree.Kind>()
    /** The paths rules were asked about (their cached decisions are kept). */
    const judged = new Set<string>()
    /** Files with more than one name that no rule protects, by `dev:ino`: a link to a protected file is one too. */
    const shared = new Map<string, string[]>()
    /** How many names each file of `shared` has (`nlink`). */
    const names = new Map<string, number>()
    /** `dev:ino` of protected files → the operations denied (their other names in `shared` get them: `links`). */
    const idOps = new Map<string, Set<Operation>>()
    /**
     * The real paths protected links lead to → the link's name and operations. What lies there (and below, for a
     * folder) is protected as the link's name is, wherever the listing meets it: its inode recorded under that name
     * (a hard link the user made to `vault/db.txt` with `secrets` → `vault` is `secrets/db.txt`), fingerprints taken,
     * other names hidden or locked. Links are considered before files (`build`), so their targets are known then.
     */
    const targets = new Map<string, { link: string; dir: boolean; ops: Set<Operation> }>()
    const throughLink = (match: string): { name: string; ops: Set<Operation> } | undefined => {
      if (!targets.size) return undefined
      for (let p = match; ; p = path.dirname(p)) {
        const t = targets.get(p)
        if (t && (p === match || t.dir)) return { name: t.link + match.slice(p.length), ops: t.ops }
        if (p === path.dirname(p)) return undefined
      }
    }
    /**
     * `full` is the path as it is on disk: what the sandbox mounts over, stats and reads (a name stored decomposed, as
     * macOS writes `café`, is another path than its NFC form on Linux). Rules match its NFC form, as they match the
     * tools' paths. A symbolic link is judged like the tools judge a path through it — the link's own path, every hop
     * and the real path — and protected as what it leads to: a folder or a file (the sandbox mounts over the real
     * path, so the content is hidden or read-only whichever name a command uses).
     */
    const consider = async (full: string, kind: SecurityTree.Kind) => {
      if (seen.has(full)) return
      seen.add(full)
      if (++visited % 4000 === 0) await new Promise((r) => setImmediate(r))
      const listed = kind
      const note = () => derived.set(full, listed)
      const match = full.normalize("NFC")
      judged.add(match)
      let also: string[] = []
      /** Where a symbolic link leads (its real path), recorded with the link when the link is protected. */
      let target: string | undefined
      let targetId: string | undefined
      if (kind === "other") {
        const link = linkOf(full)
        if (!link) return
        kind = link.dir ? "dir" : "file"
        target = link.real
        targetId = link.id
        also = link.paths.filter((p) => p !== match)
        for (const p of also) judged.add(p)
      }
      if (kind === "dir") {
        // Only a folder protected with everything below it is recorded: below any other one, the entries the tree
        // lists are judged one by one.
        const own = { ops: new Set<Operation>(), whole: false }
        for (const p of [match, ...also]) {
          const hit = decide(p, true)
          if (!hit.whole) continue
          own.whole = true
          for (const op of hit.ops) own.ops.add(op)
        }
        if (!own.whole) return
        note()
        wholeDirs.set(full, own.ops)
        const above = covering(full)
        if (!(above && [...own.ops].every((op) => above.has(op)))) {
          index.top.push({ path: full, dir: true, ops: own.ops })
          if (target && target !== match) {
            index.aliases.push({ link: match, target, dir: true, ops: own.ops, id: targetId })
            targets.set(target, { link: match, dir: true, ops: own.ops })
          }
        }
        return
      }
      if (kind !== "file") return
      const own = new Set<Operation>()
      for (const p of [match, ...also]) for (const op of decide(p, false).ops) own.add(op)
      const above = covering(full)
      const via = throughLink(match)
      const ops = new Set([...own, ...(above ?? []), ...(via?.ops ?? [])])
      let stamp: string | undefined
      let stat: fs.Stats | undefined
      try {
        stat = fs.statSync(full)
        stamp = `${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}:${stat.ino}`
      } catch {
        // Vanished since the listing: the path rules still protect it.
      }
      if (stat && !stat.isFile()) stat = undefined
      if (ops.size) {
        note()
        index.files.set(match, ops)
        if (own.size && !(above && [...own].every((op) => above.has(op)))) {
          index.top.push({ path: full, dir: false, ops: own })
          if (target && target !== match) {
            index.aliases.push({ link: match, target, dir: false, ops: own, id: targetId })
            targets.set(target, { link: match, dir: false, ops: own })
          }
        }
        // By the path a rule matches: the tools' hard-link check asks the rules about it (for a protected link's target,
        // the name it has through the link).
        const named =
          [match, ...also].find((p) => decide(p, false).ops.size) ?? (own.size || above || !via ? match : via.name)
        if (stat) {
          const id = `${stat.dev}:${stat.ino}`
          if (!index.inodes.has(id) || !via) index.inodes.set(id, named)
          idOps.set(id, new Set([...(idOps.get(id) ?? []), ...ops]))
        }
      } else if (stat && stat.nlink > 1) {
        note()
        const id = `${stat.dev}:${stat.ino}`
        shared.set(id, [...(shared.get(id) ?? []), full])
        names.set(id, stat.nlink)
      }
      const wantsPrint = (ops.has("read") || ops.has("llm")) && bytes < maxPrints && !isState(match)
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
          note()
          index.segmented.set(full, segOps)
          index.whole.add(full)
        }
        return
      }
      if (entry.text === undefined && (wantsPrint || entry.segments === undefined)) {
        let raw: Buffer
        try {
          raw = await fs.promises.readFile(full)
        } catch {
          raw = Buffer.alloc(0)
        }
        const text = raw.toString("utf8")
        // Segments are looked for whatever the content: a NUL byte (which makes a file binary to the fingerprints and
        // to OpenCode's read) once took a file out of the sandbox's masking.
        entry.segments = text ? hasSegment(text, markers) : false
        // UTF-16 with a byte-order mark, which ripgrep searches decoded: its segments protect the file whole.
        const wide = entry.segments ? undefined : SecuritySegments.wide(raw)
        if (wide !== undefined && hasSegment(wide, markers)) entry.segments = entry.wide = true
        // The text is kept only for protected files (fingerprints are rebuilt from it); others keep the flag.
        if (wantsPrint) entry.text = text.slice(0, 8192).includes("\0") ? "" : text
      }
      if (wantsPrint && entry.text) {
        bytes += entry.text.length
        SecurityFingerprint.add(index.read, entry.text)
        if (ops.has("llm")) SecurityFingerprint.add(index.llm, entry.text)
        const digest = ops.has("llm") ? wholeDigest(entry.text) : undefined
        if (digest) index.llmWhole.add(digest)
      }
      if (entry.segments) {
        const text = entry.wide ? readWide(full, maxFile) : entry.text || readText(full, maxFile)
        const found = text
          ? SecuritySegments.find(
              text,
              markers.map((m) => m.marker),
            )
          : []
        const segOps = new Set<Operation>()
        for (const seg of found) for (const op of markers[seg.marker].ops) segOps.add(op)
        if (segOps.size) {
          note()
          index.segmented.set(full, segOps)
          // Masking in place and segment line numbers assume UTF-8 bytes: a UTF-16 file is hidden or locked whole.
          if (entry.wide) index.whole.add(full)
        }
      }
    }

    // The protected links the last build knew (see below): their targets are known before the listing is considered.
    const kept = cache.aliases?.key === key ? keptAliases(cache.aliases.list, tree) : []
    for (const a of kept)
      if (!targets.has(a.target)) targets.set(a.target, { link: a.link, dir: a.dir, ops: new Set(a.ops) })
    // Folders and links first (in listing order, outermost first), then files: a file below a protected link's target
    // is then judged knowing the target, whichever of the two the listing met first.
    for (const folder of tree.folders.values())
      for (const e of folder.entries) if (e.kind !== "file") await consider(e.path, e.kind)
    for (const folder of tree.folders.values())
      for (const e of folder.entries) {
        if (e.name === ".opencode-security.json" && path.dirname(e.path) !== tree.root && e.kind !== "dir")
          index.policyFiles.push(e.path.normalize("NFC"))
        await consider(e.path, e.kind)
      }
    // An entry the last build derived something from that this listing did not reach, because a command filled the
    // budget with entries that sort first (`seq 1 200001 | xargs touch`): it is considered again, whatever it gave —
    // fingerprints (or copies of its content in ordinary files would be shown in clear), segments, and also the inode
    // of a protected file that has none (write-only, or too large to read: a hard link to it in a listed folder would
    // no longer be recognised, and writes or reads through it would pass) and the protected folders above it. The
    // sandbox hides the unlisted folders; the tools and the scanner must still know what they hold. Folders first,
    // outermost first, so that the files below them inherit their operations.
    if (tree.unlisted.length && previous.size) {
      const unlisted = tree.unlisted.map((d) => d + path.sep)
      // As it is now: gone since (nothing to protect, and no mount over a missing path), or of another kind.
      const again: [string, SecurityTree.Kind][] = []
      for (const file of previous.keys()) {
        if (seen.has(file) || !unlisted.some((d) => file.startsWith(d))) continue
        const kind = kindOf(file)
        if (kind) again.push([file, kind])
      }
      again.sort(([a, ak], [b, bk]) => Number(ak === "file") - Number(bk === "file") || a.length - b.length)
      for (const [file, kind] of again) await consider(file, kind)
    }
    const far = outside(config, tree.root, role)
    for (const e of far.entries) await consider(e.path, e.kind)
    for (const e of far.unlisted) {
      const above = covering(e.path)
      if (above && [...e.ops].every((op) => above.has(op))) continue
      index.top.push(e)
      index.unlisted.push(e.path)
    }
    // A file with more names than the listing (and what the last builds knew) found, while folders were not listed: its
    // other names may be there, protected files the session never listed (the listing was cut from the start, or the
    // file was made past the cut), and the user's hard link to them would pass as an ordinary file. The unlisted
    // folders are searched for them, with no budget but only while such a file exists; a name found is remembered
    // (`Cache.derived`), so the next build does not search again.
    if (tree.unlisted.length) {
      const missing = new Map<string, number>()
      for (const [id, paths] of shared)
        if (!index.inodes.has(id) && paths.length < names.get(id)!) missing.set(id, names.get(id)! - paths.length)
      if (missing.size)
        for (const file of await sameFiles(tree.unlisted, missing, tree.skip, seen)) await consider(file, "file")
    }
    // A protected link the last build knew that no longer leads where it did (a command removed it, replaced it or sent
    // it elsewhere: `rm .env` is no write to a read-protected file): what it led to stays protected for the session,
    // hidden or locked at its own path in the sandbox and judged by the link's name by the tools, or one command
    // would undo the protection of both. Not across sessions; dropped when the policy or the role changes. A target
    // moved since (another plugin's or an MCP tool's `move_file config conf2`, run on the host) is followed by its
    // `dev:ino` (`keptAliases`): protected where it is now, and at its old path while something of its kind is there.
    for (const a of kept) {
      if (index.aliases.some((b) => b.link === a.link && b.target === a.target)) continue
      index.aliases.push(a)
      const above = covering(a.target)
      if (!(above && [...a.ops].every((op) => above.has(op))))
        index.top.push({ path: a.target, dir: a.dir, ops: a.ops })
    }
    cache.aliases = { key, list: index.aliases }
    for (const [id, paths] of shared) {
      const original = index.inodes.get(id)
      const ops = original && (index.files.get(original) ?? idOps.get(id))
      if (ops) for (const p of paths) index.links.push({ path: p, dir: false, ops })
    }
    for (const file of cache.keys()) if (!seen.has(file)) cache.delete(file)
    cache.derived = derived
    for (const id of decisions.keys()) if (!judged.has(id.slice(2))) decisions.delete(id)
    index.builtAt = (input.now ?? Date.now)()
    return index
  }

  /**
   * Where a symbolic link leads: whether to a folder, the paths the tools check for it (its hops and its real path,
   * NFC), and that real path. Undefined for what is not a link, or a link that leads nowhere (nothing to protect; a mount over it
   * would fail every command).
   */
  function linkOf(full: string): { dir: boolean; paths: string[]; real: string; id: string } | undefined {
    try {
      if (!fs.lstatSync(full).isSymbolicLink()) return undefined
      const stat = fs.statSync(full)
      const resolved = SecurityPath.resolve(full.normalize("NFC"))
      return {
        dir: stat.isDirectory(),
        paths: [...resolved.hops, resolved.real],
        real: resolved.real,
        id: `${stat.dev}:${stat.ino}`,
      }
    } catch {
      return undefined
    }
  }

  /**
   * The files below `dirs` whose `dev:ino` is in `missing` (→ how many names are still to find), walking until all are
   * found or nothing is left; folders in `skip` are not entered (as in the tree), files in `known` not counted.
   */
  async function sameFiles(
    dirs: readonly string[],
    missing: Map<string, number>,
    skip: ReadonlySet<string>,
    known: ReadonlySet<string>,
  ): Promise<string[]> {
    const out: string[] = []
    const queue = [...dirs]
    let left = [...missing.values()].reduce((a, b) => a + b, 0)
    let sinceYield = 0
    while (queue.length && left > 0) {
      if (sinceYield > 4000) {
        sinceYield = 0
        await new Promise((r) => setImmediate(r))
      }
      const dir = queue.pop()!
      let entries: fs.Dirent[]
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true })
      } catch {
        continue
      }
      sinceYield += entries.length
      for (const d of entries) {
        const full = path.join(dir, d.name)
        if (d.isDirectory()) {
          if (!skip.has(d.name.normalize("NFC"))) queue.push(full)
          continue
        }
        if (!d.isFile() || known.has(full)) continue
        let id: string
        try {
          const stat = fs.lstatSync(full)
          if (stat.nlink < 2) continue
          id = `${stat.dev}:${stat.ino}`
        } catch {
          continue
        }
        const want = missing.get(id)
        if (!want) continue
        missing.set(id, want - 1)
        left--
        out.push(full)
      }
    }
    return out
  }

  /**
   * Where the protected links of the last build lead now: each at its old target while an entry of its kind is there,
   * and where its target's `dev:ino` is in the listing when that differs (the file or folder was moved or renamed on
   * the host). The listing is searched only when a target moved: one `lstat` per listed entry.
   */
  function keptAliases(list: readonly Kept[], tree: SecurityTree.Tree): Kept[] {
    const out: Kept[] = []
    let byId: Map<string, string> | undefined
    for (const a of list) {
      let here: fs.Stats | undefined
      try {
        here = fs.lstatSync(a.target)
      } catch {}
      if (here && here.isDirectory() === a.dir) out.push(a)
      if (!a.id || (here && `${here.dev}:${here.ino}` === a.id)) continue
      byId ??= identities(tree)
      const moved = byId.get(a.id)
      if (moved && moved !== a.target) out.push({ ...a, target: moved })
    }
    return out
  }

  /** Every listed folder and file by `dev:ino` (NFC paths). */
  function identities(tree: SecurityTree.Tree): Map<string, string> {
    const out = new Map<string, string>()
    const add = (p: string) => {
      try {
        const s = fs.lstatSync(p)
        if (s.isDirectory() || s.isFile()) out.set(`${s.dev}:${s.ino}`, p.normalize("NFC"))
      } catch {}
    }
    for (const [dir, folder] of tree.folders) {
      add(dir)
      for (const e of folder.entries) if (e.kind === "file") add(e.path)
    }
    return out
  }

  /** The kind of entry at `full` now (links not followed), or undefined when there is none. */
  function kindOf(full: string): SecurityTree.Kind | undefined {
    try {
      const s = fs.lstatSync(full)
      return s.isDirectory() ? "dir" : s.isFile() ? "file" : "other"
    } catch {
      return undefined
    }
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

  /** A UTF-16 file's decoded text (`SecuritySegments.wide`), or undefined. */
  function readWide(file: string, max: number): string | undefined {
    try {
      if (fs.statSync(file).size > max) return undefined
      return SecuritySegments.wide(fs.readFileSync(file))
    } catch {
      return undefined
    }
  }

  /** Whether `text` holds a segment of these markers (`find` folds the text once and looks for each start in it). */
  function hasSegment(text: string, markers: { marker: SecurityConfig.Marker; ops: Operation[] }[]): boolean {
    return (
      SecuritySegments.find(
        text,
        markers.map((m) => m.marker),
      ).length > 0
    )
  }

  /** Entries listed per rule outside the project before the rest is hidden unlisted (`outside`). */
  export const MAX_OUTSIDE_ENTRIES = 20_000

  /**
   * Entries outside the project that absolute and `~/` rules may protect: the rule's literal leading folders (through a
   * link too), and for a rule with a pattern after them everything below, at most `MAX_OUTSIDE_ENTRIES` entries per
   * rule. A listing cut short never leaves a match unprotected: the folders not listed are returned in `unlisted`
   * with the rule's operations, and the sandbox hides (or locks) them whole. Links to folders met below are followed
   * once (a stow-kept `~/vault/keys` → `~/dotfiles/keys`).
   */
  function outside(
    config: SecurityConfig.Loaded,
    root: string,
    role: string,
  ): { entries: { path: string; kind: SecurityTree.Kind }[]; unlisted: Protected[] } {
    const out: { path: string; kind: SecurityTree.Kind }[] = []
    const unlisted: Protected[] = []
    const home = config.home || os.homedir()
    const kindOf = (p: string): SecurityTree.Kind | undefined => {
      try {
        const s = fs.lstatSync(p)
        return s.isDirectory() ? "dir" : s.isFile() ? "file" : "other"
      } catch {
        return undefined
      }
    }
    const isDir = (p: string) => {
      try {
        return fs.statSync(p).isDirectory()
      } catch {
        return false
      }
    }
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
      const spelled = literal.join("/") || "/"
      // Listed by its physical path too (`/home` → `var/home`): the tools and the contained search judge real paths.
      for (const base of [...new Set([spelled, SecurityPath.physicalPrefix(spelled)])]) {
        if (base === "/" || (root.startsWith(base + "/") && base.length < root.length)) continue
        const own = kindOf(base)
        if (!own) continue
        out.push({ path: base, kind: own })
        if (literal.length === parts.length || !isDir(base)) continue
        const ops = new Set(OPS.filter((op) => SecurityAccess.denies(rule, op, role)))
        let budget = MAX_OUTSIDE_ENTRIES
        const visited = new Set<string>()
        const queue: string[] = [base]
        while (queue.length) {
          const dir = queue.shift()!
          let real: string
          let names: fs.Dirent[]
          try {
            real = fs.realpathSync.native(dir)
            names = fs.readdirSync(dir, { withFileTypes: true })
          } catch {
            // Unreadable now: a command may make it readable again; hidden whole.
            if (isDir(dir) && ops.size) unlisted.push({ path: dir, dir: true, ops })
            continue
          }
          if (visited.has(real)) continue
          visited.add(real)
          if (budget - names.length < 0) {
            // Cut short: this folder and every one still waiting are not listed; whatever the rule matches below them
            // is hidden with them.
            if (ops.size) for (const d of [dir, ...queue]) unlisted.push({ path: d, dir: true, ops })
            break
          }
          budget -= names.length
          for (const d of names) {
            const full = path.join(dir, d.name)
            const kind: SecurityTree.Kind = d.isDirectory() ? "dir" : d.isFile() ? "file" : "other"
            out.push({ path: full, kind })
            if (kind === "dir" || (kind === "other" && isDir(full))) queue.push(full)
          }
        }
      }
    }
    return { entries: out, unlisted }
  }
}
