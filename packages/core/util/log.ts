/**
 * The logger core code writes to. Hosts adapt their own (OpenCode's `Log`, the SDK's `app.log`) to this shape.
 *
 * @example
 * const log = Logger.console("resource")
 * log.warn("duplicate id", { id: "git", kept: "a.md", dropped: "b.md" })
 */
export type Logger = {
  debug(message: string, extra?: Record<string, unknown>): void
  info(message: string, extra?: Record<string, unknown>): void
  warn(message: string, extra?: Record<string, unknown>): void
  error(message: string, extra?: Record<string, unknown>): void
}

export namespace Logger {
  /** A logger that discards everything (the default when a host gives none). */
  export const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }

  /** A logger that writes warnings and errors to stderr, prefixed by the service name. */
  export function console(service: string): Logger {
    const write = (level: string) => (message: string, extra?: Record<string, unknown>) =>
      process.stderr.write(`[${service}] ${level} ${message}${extra ? " " + JSON.stringify(extra) : ""}\n`)
    return { debug() {}, info() {}, warn: write("warn"), error: write("error") }
  }

  /** Collects entries in memory; useful for hosts that show warnings later and for tests. */
  export function memory() {
    const entries: { level: string; message: string; extra?: Record<string, unknown> }[] = []
    const push = (level: string) => (message: string, extra?: Record<string, unknown>) =>
      void entries.push({ level, message, extra })
    const log: Logger & { entries: typeof entries } = {
      entries,
      debug: push("debug"),
      info: push("info"),
      warn: push("warn"),
      error: push("error"),
    }
    return log
  }
}
