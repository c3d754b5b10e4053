import fs from "fs"
import path from "path"
import zlib from "zlib"
import { SecurityAccess } from "./access"
import type { SecurityConfig } from "./config"
import { SecuritySearchPath } from "./search-path"
import { SyncProcess } from "../util/sync-process"

/**
 * Whether a git repository's object store holds protected paths: files committed (on any ref) or staged before the
 * policy protected them stay readable through `git show`, `git log -p`, `git diff --cached` and the like, which no
 * file permission covers. The answer is cached per repository until its refs, index or the policy change.
 *
 * @example
 * SecurityHistory.held("/repo", SecurityHistory.pathspecs(config, "viewer", "/repo")) // "/repo/.env" or undefined
 */
export namespace SecurityHistory {
  const cache = new Map<string, { key: string; held?: string }>()

  /**
   * Git pathspecs (`:(glob)…`) for the rules that protect content (read or llm) from `role`, relative to the
   * repository's top folder.
   *
   * @example
   * SecurityHistory.pathspecs(config, "viewer", "/repo") // [":(glob)**\/.env*", ":(glob)secrets/**", …]
   */
  export function pathspecs(config: SecurityConfig.Loaded, role: string, top: string): string[] {
    const out = new Set<string>()
    const magic = config.nocase ? ":(glob,icase)" : ":(glob)"
    for (const rule of config.rules) {
      if (rule.implicit) continue
      if (!SecurityAccess.denies(rule, "read", role) && !SecurityAccess.denies(rule, "llm", role)) continue
      if (!rule.file) continue
      const pattern = rule.pattern
        .trim()
        .replace(/^(\.\/)+/, "")
        .replace(/\/+$/, "")
      if (!pattern || pattern.startsWith("/") || pattern.startsWith("~")) continue
      const anchored = rule.pattern.trim().startsWith("./") || pattern.includes("/")
      const base = path.relative(top, path.dirname(rule.file)).split(path.sep).join("/")
      let spec: string
      if (!base.startsWith(".."))
        spec = anchored ? `${base ? `${base}/` : ""}${pattern}` : `${base ? `${base}/` : ""}**/${pattern}`
      else if (!anchored) spec = `**/${pattern}`
      else {
        // A repository nested below the policy's folder: the part of an anchored pattern that lies inside it.
        const inside = path.relative(path.dirname(rule.file), top).split(path.sep).join("/") + "/"
        if (pattern.startsWith(inside)) spec = pattern.slice(inside.length)
        // A leading `**/` consumes the folders above the nested repository as well.
        else if (pattern.startsWith("**/")) spec = pattern
        else continue
      }
      out.add(`${magic}${spec}`)
      if (rule.type === "directory") out.add(`${magic}${spec}/**`)
    }
    return [...out]
  }

  /**
   * The first protected path the repository holding `cwd` has in its index or in the history of any ref, as an
   * absolute path; undefined when none (or when `cwd` is not in a repository).
   */
  export function held(
    cwd: string,
    specs: string[],
    policyVersion = 0,
    options: { gitDir?: string } = {},
  ): string | undefined {
    if (!specs.length) return undefined
    if (options.gitDir) return heldIn(options.gitDir, specs, policyVersion)
    const top = git(cwd, ["rev-parse", "--show-toplevel"])?.trim()
    if (!top) return undefined
    const gitDir = git(top, ["rev-parse", "--absolute-git-dir"])?.trim()
    if (!gitDir) return undefined
    const key = [policyVersion, specs.join("\0"), stamp(path.join(gitDir, "index")), refsStamp(gitDir)].join("|")
    const hit = cache.get(top)
    if (hit && hit.key === key) return hit.held
    const staged = git(top, ["ls-files", "--cached", "-z", "--", ...specs])
      ?.split("\0")
      .find(Boolean)
    let found = staged
    if (!found) {
      const logged = git(top, ["log", "--all", "--format=", "--name-only", "-z", "-1", "--", ...specs])
      found = logged
        ?.split("\0")
        .map((s) => s.trim())
        .find(Boolean)
    }
    const held = found ? path.join(top, found) : undefined
    cache.set(top, { key, held })
    if (cache.size > 64) cache.delete(cache.keys().next().value!)
    return held
  }

  /**
   * Of `files` (absolute), those git would find changed in the work tree against its index — after bringing the
   * index's stat data up to date (`update-index --refresh`), so a file changed within the same second as the index
   * was written is judged by its content. Run outside the sandbox, on the real files.
   *
   * @example
   * SecurityHistory.unrecorded("/repo", ["/repo/src/app.ts"]) // ["/repo/src/app.ts"] when edited and not staged
   */
  export function unrecorded(cwd: string, files: string[]): string[] {
    if (!files.length) return []
    const top = git(cwd, ["rev-parse", "--show-toplevel"])?.trim()
    if (!top) return []
    git(top, ["update-index", "-q", "--refresh"])
    const out = git(top, [
      "status",
      "--porcelain=v1",
      "-z",
      "--untracked-files=no",
      "--",
      ...files.map((f) => path.relative(top, f)),
    ])
    if (!out) return []
    const changed: string[] = []
    for (const entry of out.split("\0")) {
      if (entry.length < 4) continue
      if (entry[1] !== " ") changed.push(path.join(top, entry.slice(3)))
    }
    return changed
  }

  export type Blobs = {
    /** Loose object files (absolute) holding protected content. */
    loose: string[]
    /** Protected blobs stored only in packfiles (cannot be hidden one by one). */
    packed: number
  }

  /** Per repository: the ref tips already walked and the blob ids found at protected paths so far. */
  const blobCache = new Map<string, { key: string; tips: Set<string>; ids: Set<string>; blobs?: Blobs; at: string }>()

  /**
   * The objects of a repository (named by its top folder) that hold protected content in any version on any ref: the
   * blobs at the protected paths (`specs`) and at `files` (absolute; files with protected segments), as loose object
   * files the sandbox can hide one by one, and a count of those only in packfiles. Cached until refs change.
   *
   * @example
   * SecurityHistory.blobs("/repo", [":(glob)**\/.env*"], []).loose // ["/repo/.git/objects/72/cf88…"]
   */
  export function blobs(top: string, specs: string[], files: string[], policyVersion = 0): Blobs {
    const none = { loose: [], packed: 0 }
    const all = [...specs, ...files.map((f) => `:(literal)${path.relative(top, f)}`)]
    if (!all.length) return none
    const gitDir = gitDirOf(top)
    if (!gitDir) return none
    // The walk is incremental: only commits reachable from tips not walked before (a large history is walked once).
    const key = `${policyVersion}\0${all.join("\0")}`
    const slot = `${gitDir}\0${key}`
    let entry = blobCache.get(slot)
    if (!entry) {
      entry = { key, tips: new Set(), ids: new Set(), at: "" }
      blobCache.set(slot, entry)
      if (blobCache.size > 64) blobCache.delete(blobCache.keys().next().value!)
    }
    const at = `${refsStamp(gitDir)}|${stamp(path.join(gitDir, "index"))}`
    if (entry.blobs && entry.at === at) return entry.blobs
    const tips = (git(top, ["for-each-ref", "--format=%(objectname)"]) ?? "")
      .split("\n")
      .concat(git(top, ["rev-parse", "--verify", "-q", "HEAD"]) ?? "")
      .map((t) => t.trim())
      .filter(Boolean)
    const fresh = [...new Set(tips)].filter((t) => !entry.tips.has(t))
    if (fresh.length) {
      const args = ["rev-list", "--objects", ...fresh, ...[...entry.tips].map((t) => `^${t}`), "--", ...all]
      for (const line of (git(top, args) ?? "").split("\n")) {
        const [id, ...name] = line.split(" ")
        if (id && name.length && name.join(" ")) entry.ids.add(id)
      }
      for (const t of fresh) entry.tips.add(t)
    }
    const ids = new Set(entry.ids)
    // Staged versions too.
    for (const line of (git(top, ["ls-files", "--stage", "--", ...all]) ?? "").split("\n")) {
      const id = line.split(/\s+/)[1]
      if (id) ids.add(id)
    }
    const result: Blobs = { loose: [], packed: 0 }
    // Trees along the paths are listed too; only blobs hold content.
    const checked = git(top, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], [...ids].join("\n") + "\n")
    for (const line of (checked ?? "").split("\n")) {
      const [id, type] = line.split(" ")
      if (type !== "blob") continue
      const file = path.join(gitDir, "objects", id.slice(0, 2), id.slice(2))
      let loose = false
      try {
        loose = fs.statSync(file).isFile()
      } catch {
        loose = false
      }
      if (loose) result.loose.push(file)
      else result.packed++
    }
    entry.blobs = result
    entry.at = at
    return result
  }

  /**
   * A loose object file with its content passed through `mask` (which must keep the byte length of UTF-8 text):
   * "same" when nothing changed, "hide" when the object is not a blob, not UTF-8 or its length would change (then it
   * can only be hidden), else the new object file's bytes (zlib, like git's). Git does not check an object's hash when
   * it reads one, so the sandbox can show this in place of the original: diffs, `show` and `cat-file` inside it print
   * the redacted version, and a command inflating the file itself finds no protected text.
   *
   * @example
   * SecurityHistory.maskObject("/repo/.git/objects/ab/cdef…", (t) => SecurityOutput.maskInPlace(t, pairs))
   */
  export function maskObject(file: string, mask: (text: string) => string): Uint8Array | "same" | "hide" {
    let raw: Buffer
    try {
      raw = zlib.inflateSync(fs.readFileSync(file))
    } catch {
      return "hide"
    }
    const nul = raw.indexOf(0)
    const header = nul > 0 ? raw.subarray(0, nul).toString("latin1") : ""
    const m = /^blob (\d+)$/.exec(header)
    if (!m || Number(m[1]) !== raw.length - nul - 1) return "hide"
    const body = raw.subarray(nul + 1)
    const text = body.toString("utf8")
    if (!Buffer.from(text, "utf8").equals(body)) return "hide"
    const masked = mask(text)
    if (masked === text) return "same"
    const out = Buffer.from(masked, "utf8")
    if (out.length !== body.length) return "hide"
    return zlib.deflateSync(Buffer.concat([raw.subarray(0, nul + 1), out]))
  }

  /**
   * Stages `files` (absolute) from the real work tree, outside the sandbox; true when git succeeded.
   *
   * @example
   * SecurityHistory.stage("/repo", ["/repo/src/app.ts"]) // true
   */
  export function stage(cwd: string, files: string[]): boolean {
    const top = git(cwd, ["rev-parse", "--show-toplevel"])?.trim()
    if (!top) return false
    return git(top, ["add", "--", ...files.map((f) => path.relative(top, f))]) !== undefined
  }

  /** The same question for a repository named by its git directory (a bare one, or `GIT_DIR=…`). */
  function heldIn(gitDir: string, specs: string[], policyVersion: number): string | undefined {
    const dir = git(path.dirname(gitDir), ["--git-dir", gitDir, "rev-parse", "--absolute-git-dir"])?.trim()
    if (!dir) return undefined
    const key = [policyVersion, specs.join("\0"), refsStamp(dir), stamp(path.join(dir, "index"))].join("|")
    const hit = cache.get(`git-dir:${dir}`)
    if (hit && hit.key === key) return hit.held
    const logged = git(path.dirname(dir), [
      "--git-dir",
      dir,
      "log",
      "--all",
      "--format=",
      "--name-only",
      "-z",
      "-1",
      "--",
      ...specs,
    ])
    const found = logged
      ?.split("\0")
      .map((s) => s.trim())
      .find(Boolean)
    const held = found ? `${dir}:${found}` : undefined
    cache.set(`git-dir:${dir}`, { key, held })
    return held
  }

  /** Per folder: the `.git` entries of it and its parents when last asked, and git's answer then. */
  const gitDirs = new Map<string, { key: string; dir?: string }>()

  /**
   * The git directory of the repository holding `top`, without starting git when neither `top` nor a parent has a
   * `.git` entry (a shell command in a project without git would otherwise start one per call); git's answer is
   * kept while those entries stay as they were.
   */
  function gitDirOf(top: string): string | undefined {
    const parts: string[] = []
    for (let dir = top; ; dir = path.dirname(dir)) {
      const entry = stamp(path.join(dir, ".git"))
      if (entry !== "-") parts.push(`${dir}:${entry}`)
      if (dir === path.dirname(dir)) break
    }
    if (!parts.length && !process.env.GIT_DIR) return undefined
    const key = parts.join("|")
    const hit = gitDirs.get(top)
    if (hit && hit.key === key) return hit.dir
    const dir = git(top, ["rev-parse", "--absolute-git-dir"])?.trim() || undefined
    gitDirs.set(top, { key, dir })
    if (gitDirs.size > 64) gitDirs.delete(gitDirs.keys().next().value!)
    return dir
  }

  function git(cwd: string, args: string[], input?: string): string | undefined {
    // The system's git before PATH's (`SecuritySearchPath.which`): this runs in OpenCode's process.
    const result = SyncProcess.run(
      SecuritySearchPath.which("git", process.env) ?? "git",
      ["-c", "core.fsmonitor=false", ...args],
      {
        cwd,
        timeout: 20_000,
        maxBuffer: 16 * 1024 * 1024,
        input,
        env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" },
      },
    )
    return result.status === 0 && !result.error ? result.stdout.toString("utf8") : undefined
  }

  function stamp(file: string) {
    try {
      const s = fs.statSync(file)
      // The change time and inode too: a command puts back a file's size and modification time, not its change time.
      return `${s.mtimeMs}:${s.ctimeMs}:${s.size}:${s.ino}`
    } catch {
      return "-"
    }
  }

  function refsStamp(gitDir: string) {
    const parts = [stamp(path.join(gitDir, "packed-refs")), stamp(path.join(gitDir, "HEAD"))]
    const walk = (dir: string, depth: number) => {
      let names: fs.Dirent[]
      try {
        names = fs.readdirSync(dir, { withFileTypes: true })
      } catch {
        return
      }
      parts.push(stamp(dir))
      for (const d of names) if (d.isDirectory() && depth < 4) walk(path.join(dir, d.name), depth + 1)
    }
    walk(path.join(gitDir, "refs"), 0)
    return parts.join(",")
  }
}
