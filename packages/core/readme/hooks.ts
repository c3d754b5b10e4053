import type { Hooks } from "@opencode-ai/plugin"
import path from "path"
import z from "zod"
import type { Host } from "../host"
import { SecurityRedact } from "../security/redact"
import { SecuritySegments } from "../security/segments"
import { errorMessage } from "../util/error"
import { ReadmeHistory } from "./history"
import { ReadmeInject } from "./inject"

/**
 * README injection: a successful `read` of a file gets the README.md of each folder on its way up to the project
 * root appended to its result (in a `<system-reminder>` of its own, after the one OpenCode adds for a folder's
 * AGENTS.md), once per README while the model still sees it.
 *
 * - "Already injected" is derived from the session's stored messages (`ReadmeHistory`), so a compaction that drops
 *   the earlier block makes the next read in that subtree inject it again, once. Reads running in parallel in one
 *   step are serialised per session and claim what they inject until the history shows their result.
 * - Never injected: the root README (unless `includeRoot`), a README the system prompt already carries (OpenCode's
 *   `instructions` naming it: read from `Instructions from:` lines of the system prompt, which is never changed), the
 *   file being read itself, a README outside the worktree, one the security policy keeps from reading (`Host.access`,
 *   asked before a byte is read); protected segments inside a README are redacted.
 * - Each block holds at most `maxTokens` (default 2,000; ~4 characters a token) and then points at the file.
 * - All the blocks one read adds hold at most `maxTotalTokens` (default 6,000), nearest README first: the last one
 *   that fits is cut to what is left, and those after it are only named ("not shown … read it"), not claimed, so a
 *   later read may bring them in. Before, 12 nested READMEs added 98 KB to one read (red team CE-3).
 *
 * @example
 * const hooks = ReadmeHooks.create({ host, config: {} })
 * // opencode calls hooks["tool.execute.after"]({ tool: "read", sessionID, callID, args }, output)
 */
export namespace ReadmeHooks {
  export const DEFAULT_MAX_TOKENS = 2000
  /** Token budget of all README blocks one read adds. */
  export const DEFAULT_MAX_TOTAL_TOKENS = 6000
  /** Less budget than this left: a README is named, not cut to a stub. */
  export const MIN_BLOCK_TOKENS = 100
  /** A claim the history never confirms (a result that was never stored) is dropped after this long. */
  const CLAIM_TTL_MS = 10 * 60_000

  /** The `readme` options section. `enabled: false` (handled by the composition root) switches the feature off. */
  export const Config = z.object({
    /** Token budget of one README block (default 2,000). */
    maxTokens: z.number().int().min(50).max(100_000).optional(),
    /** Token budget of all README blocks one read adds, nearest first; the rest are named only (default 6,000). */
    maxTotalTokens: z.number().int().min(50).max(400_000).optional(),
    /** Also inject the README of the project directory and its parents (default false). */
    includeRoot: z.boolean().optional(),
    /**
     * File names taken as a folder's README, matched case-insensitively, first match wins (default README.md,
     * README.markdown).
     */
    names: z
      .array(
        z
          .string()
          .min(1)
          .regex(/^[^/\\]+$/, "a file name, not a path"),
      )
      .min(1)
      .optional(),
  })
  export type Config = z.infer<typeof Config>

  export type Options = { host: Host; config: Config }

  type Claim = { callID: string; at: number }

  export function create(options: Options): Hooks {
    const { host, config } = options
    const maxTokens = config.maxTokens ?? DEFAULT_MAX_TOKENS
    const maxTotalTokens = config.maxTotalTokens ?? DEFAULT_MAX_TOTAL_TOKENS
    const names = config.names ?? ReadmeInject.DEFAULT_NAMES
    const bounds: ReadmeInject.Bounds = {
      directory: host.directory,
      worktree: host.worktree,
      includeRoot: config.includeRoot ?? false,
    }
    /** Paths the system prompt carries (`Instructions from: <path>`), as OpenCode's instruction loader lists them. */
    const system = new Set<string>()
    /** Per session: README path → the call that injected it, until the stored history shows that call. */
    const claims = new Map<string, Map<string, Claim>>()
    const queues = new Map<string, Promise<unknown>>()
    let warned = false

    /** Runs `work` after the session's previous injection finished (parallel reads decide one after another). */
    function serial<T>(sessionID: string, work: () => Promise<T>): Promise<T> {
      const previous = queues.get(sessionID) ?? Promise.resolve()
      const next = previous.then(work, work)
      const settled = next.catch(() => {})
      queues.set(sessionID, settled)
      settled.then(() => queues.get(sessionID) === settled && queues.delete(sessionID))
      return next
    }

    async function inject(sessionID: string, callID: string, file: string): Promise<{ text: string; paths: string[] }> {
      const target = path.resolve(host.directory, file)
      const candidates: string[] = []
      for (const folder of ReadmeInject.chain(target, bounds)) {
        const found = ReadmeInject.find(folder, names)
        if (!found || found === target || system.has(found) || candidates.includes(found)) continue
        if (!ReadmeInject.staysInside(found, bounds)) continue
        candidates.push(found)
      }
      if (!candidates.length) return { text: "", paths: [] }

      const mine = claims.get(sessionID) ?? new Map<string, Claim>()
      claims.set(sessionID, mine)
      let seen = new Set<string>()
      if (host.messages) {
        const messages = (await host.messages(sessionID)) as unknown as ReadmeHistory.Message[]
        seen = ReadmeHistory.inContext(messages, host.directory)
        const stored = ReadmeHistory.settled(messages)
        for (const [p, claim] of mine) if (stored.has(claim.callID)) mine.delete(p)
      } else if (!warned) {
        warned = true
        host.log.warn("README injection: the host gives no session history; a README is injected once per process")
      }
      const now = Date.now()
      for (const [p, claim] of mine) if (host.messages && now - claim.at > CLAIM_TTL_MS) mine.delete(p)

      const pairs = host.segments?.().read ?? []
      const blocks: string[] = []
      const paths: string[] = []
      /** READMEs past the total budget: named, not shown. */
      const unshown: string[] = []
      let budget = maxTotalTokens
      for (const readme of candidates) {
        if (seen.has(readme) || mine.has(readme)) continue
        const denied = await host.access?.(readme, "read", { quiet: true })
        if (denied) continue
        const tokens = Math.min(maxTokens, budget)
        if (tokens < Math.min(MIN_BLOCK_TOKENS, maxTokens)) {
          unshown.push(readme)
          continue
        }
        const read = ReadmeInject.head(readme, tokens * ReadmeInject.CHARS_PER_TOKEN)
        // Binary, or UTF-16 without a byte-order mark: its segments could not be found, so it is not injected.
        if (!read) continue
        let { text } = read
        const { more } = read
        const segments = SecuritySegments.find(text, pairs)
        if (segments.length)
          text = SecurityRedact.redactContent(
            text,
            segments.map((s) => ({ start: s.start, end: s.end, label: "protected segment" })),
          )
        if (!text.trim()) continue
        const block = ReadmeInject.block(readme, text, more, tokens)
        blocks.push(block)
        budget -= Math.ceil(block.length / ReadmeInject.CHARS_PER_TOKEN)
        paths.push(readme)
        mine.set(readme, { callID, at: now })
      }
      if (blocks.length && unshown.length) blocks.push(ReadmeInject.unshown(unshown, maxTotalTokens))
      return { text: blocks.length ? ReadmeInject.reminder(blocks) : "", paths }
    }

    return {
      async "experimental.chat.system.transform"(_input, output) {
        for (const part of output.system ?? []) {
          if (typeof part !== "string" || !part.includes("Instructions from: ")) continue
          for (const m of part.matchAll(/^Instructions from: (.+)$/gm)) system.add(path.resolve(m[1].trim()))
        }
      },
      async "tool.execute.after"(input, output) {
        if (input.tool !== "read" || typeof output?.output !== "string") return
        const file = (input.args as { filePath?: unknown } | undefined)?.filePath
        if (typeof file !== "string" || !file) return
        if (output.output.includes("<type>directory</type>")) return
        try {
          const { text, paths } = await serial(input.sessionID, () => inject(input.sessionID, input.callID, file))
          if (!paths.length) return
          output.output += text
          const metadata = (output.metadata ?? {}) as Record<string, unknown>
          const listed = Array.isArray(metadata[ReadmeHistory.KEY]) ? (metadata[ReadmeHistory.KEY] as string[]) : []
          output.metadata = { ...metadata, [ReadmeHistory.KEY]: [...listed, ...paths] }
        } catch (error) {
          host.log.warn("README injection failed; the read result is left as is", { error: errorMessage(error) })
        }
      },
    }
  }
}
