import fs from "fs"
import path from "path"
import type { Logger } from "../util/log"
import type { SecuritySchema } from "./schema"

/**
 * The audit log: one JSON object per line (JSON Lines) at a path anchored to the project root, recording every denial
 * and redaction (and, at level `verbose`, every allowed access), with the source (`builtin-tool`, `plugin-tool`,
 * `plugin-hook`, `mcp`, `llm`), tool and plugin names. Never records protected content. Rotates by size. A write
 * failure is counted and reported to the host log, and never changes an enforcement decision.
 *
 * @example
 * const audit = SecurityAudit.create({ path: "/repo/.opencode-security-audit.log" })
 * SecurityAudit.logSecurityEvent(audit, { action: "deny", source: "builtin-tool", tool: "read", path: "secrets/x" })
 */
export namespace SecurityAudit {
  export type Source = "builtin-tool" | "plugin-tool" | "plugin-hook" | "mcp" | "llm" | "policy"
  export type Action = "deny" | "redact" | "refuse" | "allow" | "policy-invalid" | "policy-loaded" | "config-changed"

  export type Event = {
    action: Action
    source: Source
    operation?: SecuritySchema.Operation
    /** Path relative to the project root (absolute when outside it). */
    path?: string
    tool?: string
    plugin?: string
    server?: string
    hook?: string
    role?: string
    /** Rule id (`file#/rules/N` or `implicit:…`). */
    rule?: string
    reason?: string
    /** Kinds of redacted content (`segment`, `secret`, `copy`, `encoded`, `path`). */
    kinds?: string[]
    count?: number
    sessionID?: string
    callID?: string
  }

  export type Options = {
    path: string
    /**
     * The project folder. A log inside it is written only while it exists: a project folder deleted while OpenCode
     * runs is never made again by the log (its folder and the local state a later write would add beside it).
     */
    root?: string
    level?: "normal" | "verbose"
    maxBytes?: number
    keep?: number
    log?: Logger
    now?: () => Date
  }

  export type Log = {
    readonly path: string
    readonly level: "normal" | "verbose"
    /** Write failures so far (the event was dropped from the file, never from enforcement). */
    readonly failures: number
    readonly lastError?: string
    logSecurityEvent(event: Event): void
  }

  /**
   * An audit log writing to `options.path`. The file is opened for each event (append, no symlink followed, never a
   * FIFO or device), so a rotated or deleted log is recreated.
   */
  export function create(options: Options): Log {
    const maxBytes = options.maxBytes ?? 10 * 1024 * 1024
    const keep = options.keep ?? 3
    const level = options.level ?? "normal"
    const now = options.now ?? (() => new Date())
    let failures = 0
    let lastError: string | undefined
    let lastWarned = 0
    const fail = (error: unknown) => {
      failures++
      lastError = error instanceof Error ? error.message : String(error)
      const t = Date.now()
      if (t - lastWarned > 60_000) {
        lastWarned = t
        options.log?.warn(`security audit log ${options.path} cannot be written (${lastError}); enforcement continues`)
      }
    }
    const rotate = () => {
      if (keep === 0) return fs.rmSync(options.path, { force: true })
      for (let i = keep - 1; i >= 1; i--) {
        const from = `${options.path}.${i}`
        if (fs.existsSync(from)) fs.renameSync(from, `${options.path}.${i + 1}`)
      }
      fs.renameSync(options.path, `${options.path}.1`)
    }
    return {
      path: options.path,
      level,
      get failures() {
        return failures
      },
      get lastError() {
        return lastError
      },
      logSecurityEvent(event) {
        if (event.action === "allow" && level !== "verbose") return
        try {
          const line = JSON.stringify({ time: now().toISOString(), ...event }) + "\n"
          const size = sizeOf(options.path)
          if (size > 0 && size + line.length > maxBytes) rotate()
          folderFor(options.path, options.root)
          const fd = fs.openSync(
            options.path,
            fs.constants.O_WRONLY |
              fs.constants.O_APPEND |
              fs.constants.O_CREAT |
              fs.constants.O_NOFOLLOW |
              fs.constants.O_NONBLOCK,
            0o600,
          )
          try {
            if (!fs.fstatSync(fd).isFile()) throw new Error("the audit log path is not a regular file")
            fs.writeSync(fd, line)
          } finally {
            fs.closeSync(fd)
          }
        } catch (error) {
          fail(error)
        }
      },
    }
  }

  /** Makes the log's folder, never the project folder `root` itself (see `Options.root`). */
  function folderFor(file: string, root: string | undefined) {
    const folder = path.dirname(file)
    const rel = root === undefined ? ".." : path.relative(path.resolve(root), path.resolve(folder))
    const inside = !rel.startsWith("..") && !path.isAbsolute(rel)
    if (inside && !fs.statSync(root!, { throwIfNoEntry: false })?.isDirectory())
      throw new Error(`the project folder ${root} is gone: the log is not written (nothing is made in its place)`)
    fs.mkdirSync(folder, { recursive: true })
  }

  function sizeOf(file: string) {
    try {
      const s = fs.lstatSync(file)
      return s.isFile() ? s.size : 0
    } catch {
      return 0
    }
  }

  /** Records one event. Never throws. */
  export function logSecurityEvent(log: Log, event: Event): void {
    log.logSecurityEvent(event)
  }
}
