import fs from "fs/promises"
import path from "path"
import { SecurityGuard } from "../../security/guard"

/** One rule of a `.opencode-security.json` policy. */
export type Rule = {
  pattern: string
  type: "file" | "directory"
  deniedOperations: ("read" | "write" | "llm")[]
  allowedRoles?: string[]
}

/** Segment markers denying `read` and `llm` to everyone. */
export const MARKERS = [{ start: "@secure-start", end: "@secure-end", deniedOperations: ["read", "llm"] }]

/** A policy file's text: rules (and segment markers) denying to everyone unless roles are given. */
export function policy(rules: Rule[], roles?: { name: string; level: number }[], markers?: typeof MARKERS): string {
  return JSON.stringify({
    version: "1.0",
    ...(roles ? { roles } : {}),
    rules,
    ...(markers ? { segments: { markers } } : {}),
  })
}

/**
 * The real security layer over a temp project, as the plugin installs it: `host.access` is the guard's check (policy
 * files re-read on every call), `host.segments` its segment markers, `host.accessVersion` a counter the test bumps
 * with `bump()` when `versioned`.
 * `calls` counts what the host was asked.
 *
 * @example
 * await using g = await guarded(dir.path, [{ pattern: "secrets", type: "directory", deniedOperations: ["read"] }])
 * const loader = ResourceLoader.create({ directory: dir.path, worktree: dir.path, log, ...g.host })
 */
export async function guarded(
  root: string,
  rules: Rule[] | undefined,
  options: { versioned?: boolean; home?: string; env?: Record<string, string>; markers?: boolean } = {},
) {
  const markers = options.markers ? MARKERS : undefined
  if (rules) await fs.writeFile(path.join(root, ".opencode-security.json"), policy(rules, undefined, markers))
  const guard = await SecurityGuard.create({
    directory: root,
    worktree: root,
    home: options.home,
    env: options.env ?? {},
    intervalMs: 0,
  })
  await guard.ready()
  let version = 1
  const calls: string[] = []
  const host: {
    access: (p: string, op: "read" | "write" | "llm") => Promise<string | undefined>
    accessVersion?: () => number
    segments: () => { read: { start: string; end: string }[]; write: { start: string; end: string }[] }
  } = {
    access: async (p, op) => {
      calls.push(p)
      return guard.access(p, op)
    },
    segments: () => guard.segments(),
  }
  if (options.versioned) host.accessVersion = () => version
  return {
    guard,
    host,
    calls,
    bump: () => void version++,
    /** Writes a new policy (and bumps the version, as a host would after a reload). */
    async rewrite(next: Rule[], withMarkers = false) {
      await fs.writeFile(
        path.join(root, ".opencode-security.json"),
        policy(next, undefined, withMarkers ? MARKERS : undefined),
      )
      guard.state()
      await guard.ready()
      version++
    },
    [Symbol.asyncDispose]: async () => guard.close(),
  }
}
