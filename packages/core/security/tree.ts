import fs from "fs"
import path from "path"

/**
 * The project's folders and their entries as last listed, kept up to date cheaply: `refresh` compares every folder's
 * modification and change times (one `stat` each) and lists again only the folders that changed, so a file created, removed or
 * renamed anywhere — by a shell command, another tool or the user's editor — is seen by the next check without
 * walking the whole tree. Links are not followed; `.git`, `node_modules` and similar folders are listed (their own
 * entries count) but not entered.
 *
 * @example
 * let tree = await SecurityTree.list("/repo")
 * const next = SecurityTree.refresh(tree)
 * if (next.changed) tree = next.tree
 * SecurityTree.entries(tree).filter((e) => e.kind === "file").length
 */
export namespace SecurityTree {
  export type Kind = "dir" | "file" | "other"
  export type Entry = { path: string; name: string; kind: Kind }
  /**
   * `racy`: the folder changed within the file system's timestamp granularity of being listed, so a change right
   * after the listing may carry the same time; such a folder is listed again at the next refresh (as git treats
   * "racily clean" index entries).
   */
  export type Folder = {
    mtimeMs: number
    ctimeMs: number
    ino: number
    entries: Entry[]
    racy?: boolean
    /** Names of this folder that are not valid UTF-8 (raw bytes): not in `entries`, which could not spell them. */
    unspelled?: Buffer[]
  }
  /**
   * An entry whose name is not valid UTF-8: a JavaScript string cannot spell it (Node and Bun give U+FFFD in its
   * place, a path that does not exist), so nothing below it can be listed by path. `path` is its exact bytes.
   */
  export type Unspelled = { dir: string; name: Buffer; path: Buffer }

  /** Timestamps are taken from a coarse clock (a few milliseconds): changes closer than this to a listing are racy. */
  const RACY_MS = 2_000
  export type Tree = {
    root: string
    folders: Map<string, Folder>
    /** The listing stopped at `maxEntries`: some entries are missing. */
    truncated: boolean
    /**
     * Folders that exist but whose entries are not in the tree: those the listing did not reach once it stopped at
     * `maxEntries` (with everything below them), and those it could not read. Whatever is below them is unknown, so
     * the sandbox hides them whole (fail closed) rather than take them for empty.
     */
    unlisted: string[]
    /**
     * Entries whose names are not valid UTF-8, in listed folders. The folder holding one is also `unlisted` (fail
     * closed: what is below such a name is unknown to the index); the guard renames those a command made.
     */
    unspelled: Unspelled[]
    /** Where a listing cut short stopped: the first folder that did not fit, and how many entries it holds. */
    cut?: { dir: string; entries: number }
    count: number
    maxEntries: number
    skip: ReadonlySet<string>
  }
  export type Options = { maxEntries?: number; skip?: ReadonlySet<string> }

  /** Folders whose contents are not listed (dependencies and version-control data). */
  export const SKIP: ReadonlySet<string> = new Set([".git", "node_modules", ".hg", ".svn"])

  /**
   * Lists the whole tree below `root`, breadth first, within `maxEntries` (default 200,000).
   *
   * @example
   * const tree = await SecurityTree.list("/repo", { maxEntries: 1000 })
   */
  export async function list(root: string, options: Options = {}): Promise<Tree> {
    const tree: Tree = {
      root,
      folders: new Map(),
      truncated: false,
      unlisted: [],
      unspelled: [],
      count: 0,
      maxEntries: options.maxEntries ?? 200_000,
      skip: options.skip ?? SKIP,
    }
    const queue = [root]
    let sinceYield = 0
    while (queue.length) {
      const dir = queue.shift()!
      const folder = read(dir)
      const taken = take(tree, dir, folder, queue)
      if (taken === "cut") break
      if (taken === "unlisted") continue
      sinceYield += folder!.entries.length
      if (sinceYield > 5000) {
        sinceYield = 0
        await new Promise((r) => setImmediate(r))
      }
    }
    return tree
  }

  /**
   * One listed folder into `tree` (its subfolders queued), or why not: it could not be listed ("unlisted": recorded,
   * the walk goes on) or it would pass the entry budget ("cut": it and every queued folder are recorded as unlisted,
   * the walk ends).
   */
  function take(tree: Tree, dir: string, folder: Folder | undefined, queue: string[]): "taken" | "unlisted" | "cut" {
    if (!folder) {
      if (isDir(dir)) tree.unlisted.push(dir)
      return "unlisted"
    }
    // Measured before `admit`, which may cut the folder's entries to the budget.
    const size = folder.entries.length
    if (!admit(tree, folder)) {
      tree.cut = { dir, entries: size }
      tree.unlisted.push(dir, ...queue)
      return "cut"
    }
    tree.folders.set(dir, folder)
    if (folder.unspelled?.length) {
      tree.unlisted.push(dir)
      for (const name of folder.unspelled) tree.unspelled.push({ dir, name, path: bytePath(dir, name) })
    }
    for (const e of folder.entries) if (e.kind === "dir" && !tree.skip.has(e.name)) queue.push(e.path)
    return "taken"
  }

  /**
   * Brings a tree up to date: a folder whose modification time, change time or inode changed is listed again (with any new
   * folders below it); folders that vanished are dropped. Synchronous: one `stat` per known folder.
   *
   * @example
   * const { tree, changed, touched } = SecurityTree.refresh(old)
   */
  export function refresh(old: Tree): { tree: Tree; changed: boolean; touched: string[] } {
    const touched: string[] = []
    const stale = new Set<string>()
    for (const [dir, folder] of old.folders) {
      let stat: fs.Stats
      try {
        stat = fs.lstatSync(dir)
      } catch {
        stale.add(dir)
        continue
      }
      if (folder.racy || !stat.isDirectory() || !unchanged(stat, folder)) stale.add(dir)
    }
    if (!stale.size) return { tree: old, changed: false, touched }
    const tree: Tree = {
      ...old,
      folders: new Map(),
      truncated: false,
      unlisted: [],
      unspelled: [],
      cut: undefined,
      count: 0,
    }
    const queue = [old.root]
    while (queue.length) {
      const dir = queue.shift()!
      const previous = old.folders.get(dir)
      let folder: Folder | undefined
      if (previous && !stale.has(dir)) folder = previous
      else {
        folder = read(dir)
        if (folder && (!previous || !same(previous.entries, folder.entries))) touched.push(dir)
      }
      const taken = take(tree, dir, folder, queue)
      if (taken === "cut") break
    }
    const changed = touched.length > 0 || tree.folders.size !== old.folders.size
    return {
      tree: changed
        ? tree
        : {
            ...old,
            folders: tree.folders,
            truncated: tree.truncated,
            unlisted: tree.unlisted,
            unspelled: tree.unspelled,
            cut: tree.cut,
          },
      changed,
      touched,
    }
  }

  /**
   * The entries that exist now and did not in `before` (a name new to its folder, or of another kind), with the tree
   * as it is now: `refresh` says which folders changed (one `stat` per known folder), only those are compared. Folders
   * the new listing no longer reaches (a call that made more entries than the budget pushed them out) and that
   * `before` did list are walked with no budget, so nothing made there is missed; folders `before` did not list are
   * not (the sandbox hides them whole). Below the folders the tree does not enter (`skip`) nothing is looked at.
   *
   * @example
   * const { added } = SecurityTree.added(tree) // [{ path: "/repo/pkg/vendor", name: "vendor", kind: "dir" }, …]
   */
  export function added(before: Tree): { tree: Tree; added: Entry[] } {
    const { tree, touched } = refresh(before)
    const out: Entry[] = []
    const fresh = (dir: string, entries: readonly Entry[]) => {
      const was = before.folders.get(dir)?.entries
      const known = new Map(was?.map((e) => [e.name, e.kind]))
      for (const e of entries) if (known.get(e.name) !== e.kind) out.push(e)
    }
    for (const dir of touched) fresh(dir, tree.folders.get(dir)?.entries ?? [])
    const dark = new Set(before.unlisted)
    const queue = tree.unlisted.filter((dir) => !dark.has(dir) && ![...dark].some((d) => dir.startsWith(d + path.sep)))
    while (queue.length) {
      const dir = queue.pop()!
      let names: fs.Dirent[]
      try {
        names = fs.readdirSync(dir, { withFileTypes: true })
      } catch {
        continue
      }
      const entries = spelled(dir, names).names.map((d) => ({
        path: path.join(dir, d.name),
        name: d.name.normalize("NFC"),
        kind: d.kind,
      }))
      fresh(dir, entries)
      for (const e of entries) if (e.kind === "dir" && !tree.skip.has(e.name)) queue.push(e.path)
    }
    return { tree, added: out }
  }

  function same(a: readonly Entry[], b: readonly Entry[]) {
    if (a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (a[i].name !== b[i].name || a[i].kind !== b[i].kind) return false
    return true
  }

  /** Every entry of the tree (folders first met first). */
  export function* entries(tree: Tree): Generator<Entry> {
    for (const folder of tree.folders.values()) yield* folder.entries
  }

  function admit(tree: Tree, folder: Folder): boolean {
    if (tree.count + folder.entries.length > tree.maxEntries) {
      // The folder is not kept (it is unlisted): its entries are left as they are, since a refresh passes the previous
      // tree's own record of it, which `added` still compares with.
      const room = tree.maxEntries - tree.count
      if (room > 0) tree.count += room
      tree.truncated = true
      return false
    }
    tree.count += folder.entries.length
    return true
  }

  /**
   * Every entry named `name` below the folders `dirs` (inclusive of their own entries), with no budget and nothing
   * kept but the hits: for folders a budgeted tree did not list (`unlisted`), when a question must be answered for
   * all of them (a repository made there). Folders in `skip` are not entered, as in the tree.
   *
   * @example
   * SecurityTree.find(tree.unlisted, ".git") // ["/repo/zzz/sub/.git"]
   */
  export function find(
    dirs: readonly string[],
    name: string,
    skip: ReadonlySet<string> = SKIP,
    unspelled?: Unspelled[],
  ): Entry[] {
    const out: Entry[] = []
    const queue = [...dirs]
    while (queue.length) {
      const dir = queue.pop()!
      let names: fs.Dirent[]
      try {
        names = fs.readdirSync(dir, { withFileTypes: true })
      } catch {
        continue
      }
      const odd = spelled(dir, names)
      for (const raw of odd.raw) unspelled?.push({ dir, name: raw, path: bytePath(dir, raw) })
      for (const d of odd.names) {
        const nfc = d.name.normalize("NFC")
        const kind = d.kind
        if (nfc === name) out.push({ path: path.join(dir, d.name), name: nfc, kind })
        if (kind === "dir" && !skip.has(nfc)) queue.push(path.join(dir, d.name))
      }
    }
    return out
  }

  /**
   * What is known of the folders below those a tree does not enter (`node_modules`, `.hg`, `.svn`): for each folder,
   * its modification and change times, its subfolders and its entries named as looked for — not its other entries, so the cost
   * is one `stat` per folder and a listing only of the folders that changed. `budget` folders at most are kept; the
   * rest are walked again at each look (`find`, no budget): slower, never blind.
   */
  export type Below = {
    name: string
    budget: number
    folders: Map<
      string,
      {
        mtimeMs: number
        ctimeMs: number
        ino: number
        racy: boolean
        dirs: string[]
        hits: Entry[]
        unspelled?: Buffer[]
      }
    >
    /** The last look went past `budget`: some folders were walked with no record. */
    over: boolean
  }

  /**
   * Every entry named `name` below the folders a tree skips (`skip`, `.git` aside: a git folder holds no work tree),
   * with `old`'s record of them reused where a folder did not change. Folders named `.git` are not entered.
   *
   * @example
   * const below = SecurityTree.below(tree, ".git")
   * below.hits // ["/repo/node_modules/dep/.git"]
   * SecurityTree.below(tree, ".git", below) // one stat per folder
   */
  export function below(
    tree: Tree,
    name: string,
    old?: Below,
    budget = 100_000,
  ): Below & { hits: Entry[]; unspelled: Unspelled[] } {
    const next: Below = { name, budget: old?.budget ?? budget, folders: new Map(), over: false }
    const hits: Entry[] = []
    const unspelled: Unspelled[] = []
    const queue: string[] = []
    for (const folder of tree.folders.values())
      for (const e of folder.entries)
        if (e.kind === "dir" && e.name !== ".git" && tree.skip.has(e.name)) queue.push(e.path)
    const beyond: string[] = []
    while (queue.length) {
      const dir = queue.pop()!
      if (next.folders.size >= next.budget) {
        beyond.push(dir)
        continue
      }
      let stat: fs.Stats
      try {
        stat = fs.lstatSync(dir)
      } catch {
        continue
      }
      if (!stat.isDirectory()) continue
      let known = old?.folders.get(dir)
      if (!known || known.racy || !unchanged(stat, known)) {
        let names: fs.Dirent[]
        try {
          names = fs.readdirSync(dir, { withFileTypes: true })
        } catch {
          continue
        }
        known = { mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, racy: racy(stat), dirs: [], hits: [] }
        const odd = spelled(dir, names)
        if (odd.raw.length) known.unspelled = odd.raw
        for (const d of odd.names) {
          const nfc = d.name.normalize("NFC")
          const kind = d.kind
          if (nfc === name) known.hits.push({ path: path.join(dir, d.name), name: nfc, kind })
          else if (kind === "dir") known.dirs.push(path.join(dir, d.name))
        }
      }
      next.folders.set(dir, known)
      hits.push(...known.hits)
      for (const raw of known.unspelled ?? []) unspelled.push({ dir, name: raw, path: bytePath(dir, raw) })
      queue.push(...known.dirs)
    }
    if (beyond.length) {
      next.over = true
      hits.push(...find(beyond, name, new Set([".git"]), unspelled))
    }
    return Object.assign(next, { hits, unspelled })
  }

  /**
   * A folder's record still holds when its inode, modification time and change time are those recorded. The change
   * time matters: a command sets a folder's modification time back at will (`touch -r`, `utimensat`) after adding an
   * entry, but the kernel sets the change time to now on every change of the folder, the `utimensat` itself included,
   * and nothing in userspace sets it back.
   */
  function unchanged(stat: fs.Stats, known: { mtimeMs: number; ctimeMs: number; ino: number }): boolean {
    return stat.mtimeMs === known.mtimeMs && stat.ctimeMs === known.ctimeMs && stat.ino === known.ino
  }

  /** Changed within the timestamp granularity of now (by either time: the modification time may be set back). */
  function racy(stat: fs.Stats): boolean {
    return Date.now() - Math.max(stat.mtimeMs, stat.ctimeMs) < RACY_MS
  }

  function isDir(dir: string): boolean {
    try {
      return fs.lstatSync(dir).isDirectory()
    } catch {
      return false
    }
  }

  function read(dir: string): Folder | undefined {
    try {
      const stat = fs.lstatSync(dir)
      if (!stat.isDirectory()) return undefined
      const entries: Entry[] = []
      const odd = spelled(dir, fs.readdirSync(dir, { withFileTypes: true }))
      for (const d of odd.names)
        entries.push({ path: path.join(dir, d.name), name: d.name.normalize("NFC"), kind: d.kind })
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      return {
        mtimeMs: stat.mtimeMs,
        ctimeMs: stat.ctimeMs,
        ino: stat.ino,
        entries,
        racy: racy(stat),
        ...(odd.raw.length ? { unspelled: odd.raw } : {}),
      }
    } catch {
      return undefined
    }
  }

  /**
   * The names of `dir` as a string listing can spell them, and apart those that are not valid UTF-8, read again as
   * bytes. The string listing gives U+FFFD in place of each bad byte (such a path does not exist), which may equal a
   * valid name of the same folder (`\xe2\x82` and U+FFFD): names are compared by their bytes, so a valid name is kept
   * whatever its neighbours (red team AN1c), and the kind of a name listed twice so is read again from the valid one.
   * The byte listing is made only when a listed name holds U+FFFD: a valid name rarely does, so it costs nothing in the
   * usual case. (Bun's `readdir` with `withFileTypes` and `encoding: "buffer"` gives bare byte arrays, hence two
   * listings.)
   */
  function spelled(dir: string, names: fs.Dirent[]): { names: { name: string; kind: Kind }[]; raw: Buffer[] } {
    const kindOf = (d: fs.Dirent): Kind => (d.isDirectory() ? "dir" : d.isFile() ? "file" : "other")
    if (!names.some((d) => d.name.includes("\uFFFD")))
      return { names: names.map((d) => ({ name: d.name, kind: kindOf(d) })), raw: [] }
    let bytes: Buffer[]
    try {
      bytes = fs.readdirSync(dir, { encoding: "buffer" }).map((b) => Buffer.from(b))
    } catch {
      return { names: names.map((d) => ({ name: d.name, kind: kindOf(d) })), raw: [] }
    }
    const raw = bytes.filter((b) => !Buffer.from(b.toString("utf8")).equals(b))
    const valid = new Set(bytes.filter((b) => Buffer.from(b.toString("utf8")).equals(b)).map((b) => b.toString("utf8")))
    const mangled = new Set(raw.map((b) => b.toString("utf8")))
    const out: { name: string; kind: Kind }[] = []
    const taken = new Set<string>()
    for (const d of names) {
      if (!valid.has(d.name) || taken.has(d.name)) continue
      taken.add(d.name)
      if (!mangled.has(d.name)) {
        out.push({ name: d.name, kind: kindOf(d) })
        continue
      }
      // Listed twice (the valid name and a bad one read as it): the kind is the valid one's.
      try {
        const st = fs.lstatSync(path.join(dir, d.name))
        out.push({ name: d.name, kind: st.isDirectory() ? "dir" : st.isFile() ? "file" : "other" })
      } catch {}
    }
    return { names: out, raw }
  }

  /**
   * Every entry named `name` at any depth below the entries `from`, given by their bytes: the walk goes by byte
   * paths, so it enters names that are not valid UTF-8 (and folders of every name below them) that a string listing
   * cannot (red team AN1e: a repository in such a folder below `node_modules`). Links are not followed, folders named
   * `name` are not entered. Returns byte paths.
   *
   * @example
   * SecurityTree.findBytes([Buffer.from("/repo/node_modules/pkg/\xff", "latin1")], ".git") // [<…/\xff/sub/.git>]
   */
  export function findBytes(from: readonly Buffer[], name: string): Buffer[] {
    const want = Buffer.from(name)
    const out: Buffer[] = []
    const queue = [...from]
    while (queue.length) {
      const p = queue.pop()!
      let stat: fs.Stats
      try {
        stat = fs.lstatSync(p)
      } catch {
        continue
      }
      if (path.basename(p.toString("latin1")) === want.toString("latin1")) {
        out.push(p)
        continue
      }
      if (!stat.isDirectory()) continue
      let names: Buffer[]
      try {
        names = fs.readdirSync(p, { encoding: "buffer" }).map((b) => Buffer.from(b))
      } catch {
        continue
      }
      for (const n of names) queue.push(Buffer.concat([p, Buffer.from(path.sep), n]))
    }
    return out
  }

  /** `dir` joined with a name given as bytes. */
  export function bytePath(dir: string, name: Buffer): Buffer {
    return Buffer.concat([Buffer.from(dir.endsWith(path.sep) ? dir : dir + path.sep), name])
  }
}
