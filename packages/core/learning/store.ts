import crypto from "crypto"
import fs from "fs"
import path from "path"
import z from "zod"
import { Keywords } from "../discovery/keywords"
import { errorMessage, NamedError } from "../util/error"
import type { LearningDetect } from "./detect"
import { LocalState } from "./local"
import { LocalSeal } from "./seal"
import { StoredTime } from "../util/time"

/**
 * The project's learnings: corrections, decisions and preferences taken from user messages, one JSON file in the
 * local state folder (`.opencode/builtins-local/learnings.json`). The same lesson said again (same words after
 * normalising, or nearly: 80% of its terms shared) is one learning whose count goes up; the same message is never
 * counted twice. Each learning keeps its provenance (the last sessions and messages it came from, when, which rule).
 * Bounded: at most `MAX` learnings, the least useful (lowest count, then oldest) dropped first.
 *
 * Text is stored as given: callers redact it first (see `LocalState.redactor`).
 *
 * A file that cannot be read (not JSON, cut short, a version this code does not know) is never overwritten: reading it
 * (`list`, `remove`, `clear`) throws `CorruptError` naming the file and the problem; `record` (unattended, from the
 * plugin) moves it aside to `learnings.json.corrupt-<time>` and says so in its result, then starts a new file.
 * Entries of the wrong shape are skipped with a warning (`load`); before a write drops them, the file as it was is
 * copied to `learnings.json.corrupt-<time>`.
 *
 * `record`, `remove` and `clear` read, change and write the file under its cross-process lock (`LocalState.locked`):
 * writers in several processes (two OpenCodes on one project, the MCP server's forget, the CLI) lose no learning and
 * never undo a forget; a lock held longer than the wait throws `LocalState.LockTimeout` and nothing is written.
 *
 * @example
 * const store = LearningStore.open("/repo")
 * store.record({ kind: "correction", text: "Use pnpm instead of npm" }, { sessionID: "ses_1", messageID: "msg_1" })
 * store.list()[0].count // 1
 */
export namespace LearningStore {
  export const FILE = "learnings.json"
  export const VERSION = 1
  export const MAX = 200
  /** Provenance entries kept per learning (newest last). */
  export const MAX_SOURCES = 5
  /** Share of terms two texts must have in common (Jaccard) to be one learning. */
  export const SAME = 0.8

  /** Where a learning was said; `role` is the security role in force then (absent without a policy). */
  export type Source = { sessionID: string; messageID?: string; at: number; rule?: string; role?: string }
  export type Learning = {
    id: string
    kind: LearningDetect.Kind
    text: string
    count: number
    firstSeen: number
    lastSeen: number
    sources: Source[]
  }
  type Data = { version: number; learnings: Learning[] }

  const SourceSchema = z.looseObject({
    sessionID: z.string(),
    messageID: z.string().optional(),
    at: StoredTime.schema,
    rule: z.string().optional(),
    role: z.string().optional(),
  })
  /** One stored learning; unknown keys are kept as they are. */
  export const LearningSchema = z.looseObject({
    id: z.string().min(1),
    kind: z.enum(["correction", "decision", "preference"]),
    text: z.string(),
    count: z.number().int().min(1),
    firstSeen: StoredTime.schema,
    lastSeen: StoredTime.schema,
    sources: z.array(SourceSchema),
  })

  /**
   * Whether a reader of `role` (the security role in force; undefined without a policy) may be given a learning: its
   * text is the wording of its latest source, redacted for that source's role only, so a reader of another role gets it
   * only when that source was said without a policy. An admin's correction quoting an admin-only line was injected
   * into a viewer's next session.
   *
   * @example
   * LearningStore.visibleTo(learning, "viewer") // false when it was last said under the admin role
   */
  export function visibleTo(learning: Learning, role: string | undefined): boolean {
    const said = learning.sources.at(-1)?.role
    return role === undefined || said === undefined || said === role
  }

  /** The learnings file cannot be read as learnings: it is left as it is. */
  export const CorruptError = NamedError.create(
    "LearningStoreCorrupt",
    z.object({ file: z.string(), problem: z.string() }),
    (d) =>
      `${d.file}: ${d.problem}; it was left as it is (fix it, or move it away to start again: nothing reads it until then)`,
  )

  /** What `load` read: the valid learnings, and a warning per entry skipped. */
  export type Loaded = { learnings: Learning[]; skipped: string[] }

  /** Kinds in priority order: a correction outranks a decision, which outranks a preference. */
  export const PRIORITY: readonly LearningDetect.Kind[] = ["correction", "decision", "preference"]

  export type Store = ReturnType<typeof open>

  /** The terms a learning is compared by (stemmed content words, sorted, unique). */
  export function terms(text: string): string[] {
    return [...new Set(Keywords.terms(text))].sort()
  }

  function similar(a: readonly string[], b: readonly string[]): boolean {
    if (a.join(" ") === b.join(" ")) return true
    if (!a.length || !b.length) return false
    const set = new Set(a)
    const shared = b.filter((t) => set.has(t)).length
    return shared / (a.length + b.length - shared) >= SAME
  }

  export function idOf(text: string): string {
    return "lrn_" + crypto.createHash("sha1").update(terms(text).join(" ")).digest("hex").slice(0, 10)
  }

  export function open(root: string, options: { max?: number; now?: () => number; lockWaitMs?: number } = {}) {
    const file = path.join(LocalState.dir(root), FILE)
    const max = options.max ?? MAX
    const now = options.now ?? Date.now
    /** How long a write waits for another process's lock (`LocalState.locked`). */
    const lock = { waitMs: options.lockWaitMs }

    /** The learnings of the file (none when there is no file); throws `CorruptError` when it cannot be read. */
    function load(): Loaded {
      let opened: LocalSeal.Opened
      try {
        opened = LocalSeal.readFile(file, "learnings")
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return { learnings: [], skipped: [] }
        if (LocalSeal.KeyError.is(error)) throw error
        throw new CorruptError({ file, problem: `cannot be read (${errorMessage(error)})` }, { cause: error })
      }
      const text = opened.text
      let data: unknown
      try {
        data = JSON.parse(text)
      } catch (error) {
        throw new CorruptError({ file, problem: `not valid JSON (${errorMessage(error)})` }, { cause: error })
      }
      const version = (data as { version?: unknown } | null)?.version
      if (!data || typeof data !== "object" || Array.isArray(data))
        throw new CorruptError({ file, problem: "not a JSON object" })
      if (version !== VERSION)
        throw new CorruptError({
          file,
          problem:
            typeof version === "number" && version > VERSION
              ? `version ${version} is newer than this opencode-builtins reads (${VERSION})`
              : `unknown version ${JSON.stringify(version)} (expected ${VERSION})`,
        })
      const entries = (data as { learnings?: unknown }).learnings
      if (!Array.isArray(entries)) throw new CorruptError({ file, problem: '"learnings" is not a list' })
      // A file without this machine's seal for this project (a command can write one, red team GH2) gives nothing:
      // its learnings are never shown to a model; the next write keeps it aside and starts a sealed file.
      if (opened.problem) return { learnings: [], skipped: [`${file}: ${opened.problem}`] }
      const learnings: Learning[] = []
      const skipped: string[] = []
      for (const [i, entry] of entries.entries()) {
        const parsed = LearningSchema.safeParse(entry)
        if (parsed.success) learnings.push(parsed.data as Learning)
        else {
          const issue = parsed.error.issues[0]
          const where = issue.path.length ? `${issue.path.join(".")}: ` : ""
          skipped.push(`${file}: entry ${i + 1} skipped (${where}${issue.message})`)
        }
      }
      return { learnings, skipped }
    }

    /** `file.corrupt-<time>`: where a file that cannot be used is kept. */
    function aside(): string {
      const base = `${file}.corrupt-${new Date(now()).toISOString().replace(/[:.]/g, "-")}`
      let candidate = base
      for (let n = 2; fs.existsSync(candidate); n++) candidate = `${base}-${n}`
      return candidate
    }

    /** Files this store kept aside (copied before a write dropped bad entries, or moved away unreadable). */
    const keptAside: string[] = []

    /** Writes `learnings`; when the read skipped entries, the file as it was is first copied aside (returned). */
    function write(learnings: Learning[], loaded?: Loaded): string | undefined {
      let kept: string | undefined
      if (loaded?.skipped.length) {
        kept = aside()
        fs.copyFileSync(file, kept, fs.constants.COPYFILE_EXCL)
        keptAside.push(kept)
      }
      const text = JSON.stringify({ version: VERSION, learnings } satisfies Data, null, 1) + "\n"
      LocalState.write(file, LocalSeal.seal(file, "learnings", text))
      return kept
    }

    /** Every learning, most important first: kind priority, then count, then most recent. */
    function list(): Learning[] {
      return sort(load().learnings)
    }

    function sort(learnings: Learning[]): Learning[] {
      return [...learnings].sort(
        (a, b) =>
          PRIORITY.indexOf(a.kind) - PRIORITY.indexOf(b.kind) ||
          b.count - a.count ||
          b.lastSeen - a.lastSeen ||
          (a.id < b.id ? -1 : 1),
      )
    }

    /**
     * Records learnings found in messages (read, merged, written once). Returns what changed: `added` for new ones,
     * `counted` for repeats; a message already recorded for a learning is skipped.
     */
    function record(
      found: readonly { kind: LearningDetect.Kind; text: string; source: Omit<Source, "at"> & { at?: number } }[],
    ): { added: Learning[]; counted: Learning[]; movedAside?: string; skipped?: string[] } {
      return LocalState.locked(file, () => recordLocked(found), lock)
    }

    function recordLocked(found: Parameters<typeof record>[0]): ReturnType<typeof record> {
      let loaded: Loaded
      let movedAside: string | undefined
      try {
        loaded = load()
      } catch (error) {
        if (!CorruptError.is(error) || !fs.existsSync(file)) throw error
        // Unattended: the unreadable file is kept beside, and learning goes on in a new one.
        movedAside = aside()
        fs.renameSync(file, movedAside)
        keptAside.push(movedAside)
        loaded = { learnings: [], skipped: [] }
      }
      const learnings = loaded.learnings
      const added: Learning[] = []
      const counted: Learning[] = []
      for (const item of found) {
        const text = item.text.trim()
        if (!text) continue
        const t = terms(text)
        if (!t.length) continue
        const at = item.source.at ?? now()
        const source: Source = { ...item.source, at }
        const existing = learnings.find((l) => similar(terms(l.text), t))
        if (existing) {
          const seen = existing.sources.some(
            (s) => s.sessionID === source.sessionID && s.messageID !== undefined && s.messageID === source.messageID,
          )
          if (seen) continue
          existing.count++
          existing.lastSeen = Math.max(existing.lastSeen, at)
          existing.sources = [...existing.sources, source].slice(-MAX_SOURCES)
          // The latest wording wins (people refine what they said); the higher-priority kind wins.
          existing.text = text
          if (PRIORITY.indexOf(item.kind) < PRIORITY.indexOf(existing.kind)) existing.kind = item.kind
          counted.push(existing)
          continue
        }
        const learning: Learning = {
          id: idOf(text),
          kind: item.kind,
          text,
          count: 1,
          firstSeen: at,
          lastSeen: at,
          sources: [source],
        }
        learnings.push(learning)
        added.push(learning)
      }
      const skipped = loaded.skipped.length ? loaded.skipped : undefined
      if (!added.length && !counted.length) return { added, counted, movedAside, skipped }
      let kept = learnings
      if (kept.length > max) {
        const drop = new Set(
          [...kept]
            .sort((a, b) => a.count - b.count || a.lastSeen - b.lastSeen)
            .slice(0, kept.length - max)
            .map((l) => l.id),
        )
        kept = kept.filter((l) => !drop.has(l.id))
      }
      return { added, counted, movedAside: write(kept, loaded) ?? movedAside, skipped }
    }

    /**
     * Deletes the learning with this id (or unique id prefix) among those `allowed` (default all); returns it, or
     * undefined when none matched.
     */
    function remove(id: string, allowed: (learning: Learning) => boolean = () => true): Learning | undefined {
      return LocalState.locked(file, () => removeLocked(id, allowed), lock)
    }

    function removeLocked(id: string, allowed: (learning: Learning) => boolean): Learning | undefined {
      const loaded = load()
      const learnings = loaded.learnings
      const matches = learnings.filter((l) => (l.id === id || (id.length >= 5 && l.id.startsWith(id))) && allowed(l))
      if (matches.length !== 1) return undefined
      write(
        learnings.filter((l) => l !== matches[0]),
        loaded,
      )
      return matches[0]
    }

    /** Deletes every learning; returns how many there were. */
    function clear(): number {
      return LocalState.locked(file, clearLocked, lock)
    }

    function clearLocked(): number {
      const loaded = load()
      const n = loaded.learnings.length
      if (n || loaded.skipped.length) write([], loaded)
      return n
    }

    return { file, load, list, sort, record, remove, clear, keptAside: () => [...keptAside] }
  }
}
