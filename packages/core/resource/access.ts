import type { Host } from "../host"
import { SecuritySegments } from "../security/segments"
import { errorMessage } from "../util/error"

/**
 * The host's security check (`Host.access`) as the resource index and discovery use it: whether a listed file may be
 * read on the model's behalf (`"read"`, which the security layer also checks for `"llm"`). Such features list many
 * files on every request, so verdicts are remembered per path (and an optional key naming the file's identity, such as
 * its inode) for as long as `Host.accessVersion` returns the same number; a host without a version is asked again on
 * every call, and concurrent questions about one path share one answer. A check that throws counts as a denial (fail
 * closed) and is not remembered.
 *
 * @example
 * const gate = ResourceAccess.gate(() => host)
 * const denied = await gate.denied([{ path: "/repo/.opencode/task/a.md" }, { path: "/repo/.opencode/task/b.md" }])
 * denied.get("/repo/.opencode/task/b.md") // "read of .opencode/task/b.md is denied by rule …", or undefined
 */
export namespace ResourceAccess {
  export type Source = Pick<Host, "access" | "accessVersion" | "segments" | "accessScope">
  /** A path to check; `key` distinguishes what the path leads to (e.g. `dev:ino`), so a replaced file is asked again. */
  export type Entry = { path: string; key?: string }

  export type Pair = SecuritySegments.Pair

  /**
   * The marker pairs of the segments the host's policy keeps from the role in force (none without a security layer,
   * or when asking fails).
   *
   * @example
   * ResourceAccess.pairs(host) // [{ start: "@secure-start", end: "@secure-end" }]
   */
  export function pairs(host: Source | undefined): Pair[] {
    try {
      return host?.segments?.().read ?? []
    } catch {
      return []
    }
  }

  /** A key that changes when the marker pairs do (cached verdicts about segments are valid per key). */
  export function pairsKey(list: readonly Pair[]): string {
    return list.length ? JSON.stringify(list.map((p) => [p.start, p.end])) : ""
  }

  /**
   * Where a markdown file's frontmatter ends (its closing `---` line included): 0 without frontmatter, the whole
   * text when it is never closed.
   *
   * @example
   * ResourceAccess.headEnd("---\nname: a\n---\nbody") // 16
   */
  export function headEnd(text: string): number {
    const open = /^\uFEFF?---[ \t]*\r?\n/.exec(text)
    if (!open) return 0
    const close = /^---[ \t]*(\r?\n|$)/m
    const rest = text.slice(open[0].length)
    const m = close.exec(rest)
    return m ? open[0].length + m.index + m[0].length : text.length
  }

  /**
   * True when a protected segment covers any of what a listing shows of a file: a markdown file's frontmatter (name,
   * description, tags), or anything of a JSON file (its title and description are not set apart).
   *
   * @example
   * ResourceAccess.headProtected("---\n# @secure-start\ndescription: x\n# @secure-end\n---\n", pairs) // true
   */
  export function headProtected(text: string, list: readonly Pair[], json = false): boolean {
    if (!list.length) return false
    const segments = SecuritySegments.find(text, list)
    if (!segments.length) return false
    if (json) return true
    const end = headEnd(text)
    return segments.some((seg) => seg.start < end)
  }

  /**
   * `text` with the lines of every protected segment blanked (line breaks kept), so that nothing written inside one
   * (words, references) is indexed.
   *
   * @example
   * ResourceAccess.blank("a\n// @secure-start\n[[secret]]\n// @secure-end\nb", pairs) // "a\n\n\n\nb"
   */
  export function blank(text: string, list: readonly Pair[]): string {
    if (!list.length) return text
    const segments = SecuritySegments.find(text, list)
    if (!segments.length) return text
    let out = ""
    let at = 0
    for (const seg of segments) {
      if (seg.end <= at) continue
      const from = Math.max(seg.start, at)
      out += text.slice(at, from) + text.slice(from, seg.end).replace(/[^\r\n]/g, "")
      at = seg.end
    }
    return out + text.slice(at)
  }

  /** Verdicts kept at most; beyond it they are dropped all at once (a catalogue is far smaller). */
  export const MAX_VERDICTS = 200_000

  export type Gate = {
    /** True when the host has an access check now (read at call time: the security layer installs it late). */
    active(): boolean
    /** The denial reason for one path, or undefined when it may be read (always undefined without a check). */
    reason(path: string, key?: string): Promise<string | undefined>
    /** The denied entries among `entries`, path → reason; the checks run concurrently. */
    denied(entries: Iterable<Entry>): Promise<Map<string, string>>
    /** Calls made to `Host.access` so far (verdicts served from memory are not counted). */
    readonly asked: number
  }

  /**
   * A gate over the host returned by `source` (read on every call).
   *
   * @example
   * const gate = ResourceAccess.gate(() => ({ access: guard.access, accessVersion: () => policyVersion }))
   * await gate.reason("/repo/.claude/skills/vault/SKILL.md") // the guard's reason when protected
   */
  export function gate(source: () => Source | undefined): Gate {
    type Verdicts = Map<string, Promise<string | undefined>>
    type Access = NonNullable<Source["access"]>
    let memo: { version: number; access: Access; verdicts: Verdicts } | undefined
    let asked = 0

    /** The host when it has a check, with the verdicts valid now (remembered only while a version holds). */
    function current(): { src: Source; verdicts: Verdicts } | undefined {
      const src = source()
      const access = src?.access
      if (!src || !access) return undefined
      const version = src.accessVersion?.()
      if (version === undefined) {
        memo = undefined
        return { src, verdicts: new Map() }
      }
      if (!memo || memo.version !== version || memo.access !== access || memo.verdicts.size > MAX_VERDICTS)
        memo = { version, access, verdicts: new Map() }
      return { src, verdicts: memo.verdicts }
    }

    function ask(now: { src: Source; verdicts: Verdicts }, path: string, key: string | undefined) {
      const id = key === undefined ? path : `${path}\u0000${key}`
      const known = now.verdicts.get(id)
      if (known) return known
      asked++
      const verdict: Promise<string | undefined> = Promise.resolve()
        .then(() => now.src.access!(path, "read", { quiet: true }))
        .then(
          (reason) => (typeof reason === "string" && reason ? reason : undefined),
          (error) => {
            // Not remembered: the next call asks again.
            if (now.verdicts.get(id) === verdict) now.verdicts.delete(id)
            return `access check failed: ${errorMessage(error)}`
          },
        )
      now.verdicts.set(id, verdict)
      return verdict
    }

    return {
      active: () => source()?.access !== undefined,
      async reason(path, key) {
        const now = current()
        return now ? ask(now, path, key) : undefined
      },
      async denied(entries) {
        const out = new Map<string, string>()
        const now = current()
        if (!now) return out
        const list = [...entries]
        const reasons = await Promise.all(list.map((e) => ask(now, e.path, e.key)))
        list.forEach((e, i) => {
          const reason = reasons[i]
          if (reason !== undefined) out.set(e.path, reason)
        })
        return out
      },
      get asked() {
        return asked
      },
    }
  }
}
