import crypto from "crypto"
import fs from "fs"
import path from "path"
import { Keywords } from "../discovery/keywords"
import type { LearningDetect } from "./detect"
import { LocalState } from "./local"

/**
 * The project's learnings: corrections, decisions and preferences taken from user messages, one JSON file in the
 * local state folder (`.opencode/builtins-local/learnings.json`). The same lesson said again (same words after
 * normalising, or nearly: 80% of its terms shared) is one learning whose count goes up; the same message is never
 * counted twice. Each learning keeps its provenance (the last sessions and messages it came from, when, which rule).
 * Bounded: at most `MAX` learnings, the least useful (lowest count, then oldest) dropped first.
 *
 * Text is stored as given: callers redact it first (see `LocalState.redactor`).
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

  export type Source = { sessionID: string; messageID?: string; at: number; rule?: string }
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

  export function open(root: string, options: { max?: number; now?: () => number } = {}) {
    const file = path.join(LocalState.dir(root), FILE)
    const max = options.max ?? MAX
    const now = options.now ?? Date.now

    function read(): Learning[] {
      try {
        const data = JSON.parse(fs.readFileSync(file, "utf8")) as Data
        return data?.version === VERSION && Array.isArray(data.learnings) ? data.learnings : []
      } catch {
        return []
      }
    }

    function write(learnings: Learning[]) {
      LocalState.write(file, JSON.stringify({ version: VERSION, learnings } satisfies Data, null, 1) + "\n")
    }

    /** Every learning, most important first: kind priority, then count, then most recent. */
    function list(): Learning[] {
      return sort(read())
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
    ): { added: Learning[]; counted: Learning[] } {
      const learnings = read()
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
      if (!added.length && !counted.length) return { added, counted }
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
      write(kept)
      return { added, counted }
    }

    /** Deletes the learning with this id (or unique id prefix); returns it, or undefined when none matched. */
    function remove(id: string): Learning | undefined {
      const learnings = read()
      const matches = learnings.filter((l) => l.id === id || (id.length >= 5 && l.id.startsWith(id)))
      if (matches.length !== 1) return undefined
      write(learnings.filter((l) => l !== matches[0]))
      return matches[0]
    }

    /** Deletes every learning; returns how many there were. */
    function clear(): number {
      const n = read().length
      if (n) write([])
      return n
    }

    return { file, list, record, remove, clear }
  }
}
