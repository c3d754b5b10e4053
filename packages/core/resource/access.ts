import type { Host } from "../host"
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
  export type Source = Pick<Host, "access" | "accessVersion">
  /** A path to check; `key` distinguishes what the path leads to (e.g. `dev:ino`), so a replaced file is asked again. */
  export type Entry = { path: string; key?: string }

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
        .then(() => now.src.access!(path, "read"))
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
