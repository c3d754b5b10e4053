import type { PluginInput } from "@opencode-ai/plugin"
import type { Logger } from "@opencode-builtins/core/util/log"

/** A core `Logger` that writes into OpenCode's own log through the SDK client (`app.log`). Never throws. */
export function hostLogger(client: PluginInput["client"], service: string): Logger {
  const write = (level: "debug" | "info" | "warn" | "error") => (message: string, extra?: Record<string, unknown>) => {
    try {
      void Promise.resolve(client.app.log({ body: { service, level, message, extra } })).catch(() => {})
    } catch {
      // Logging must never break a tool or a hook.
    }
  }
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") }
}
