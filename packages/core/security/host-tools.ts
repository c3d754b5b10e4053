/**
 * OpenCode's own formatters and language servers run in OpenCode's process, outside the sandbox, on the files the
 * agent writes, and most of them start code the project holds: OpenCode 1.2.15 formats with `bun x prettier` (the
 * project's `node_modules/.bin/prettier` when there is one) whenever `package.json` lists prettier, the TypeScript
 * server runs the project's `node_modules/typescript/lib/tsserver.js`, prettier and ESLint load JavaScript
 * configurations and plugins, `mix format` evaluates `mix.exs`, rust-analyzer runs build scripts. A sandboxed command
 * can change every one of those files, so while shell commands are contained OpenCode's own tools are turned off in
 * the live configuration (the policy's `sandbox.allowHostTools` keeps them). This project's LSP tools start their
 * servers inside the sandbox.
 *
 * @example
 * SecurityHostTools.decide({ lsp: { deno: {} } }, { mode: "required", allowHostTools: false }) // ["formatter", "lsp"]
 */
export namespace SecurityHostTools {
  /** The configuration keys of OpenCode's tools that run project code outside the sandbox (`false` turns each off). */
  export const TOOLS = [
    { key: "formatter", what: "formatters" },
    { key: "lsp", what: "language servers" },
  ] as const

  export type Key = (typeof TOOLS)[number]["key"]

  /**
   * The keys to turn off: none when shell commands are not contained (sandbox `off`: a command can run anything
   * anyway) or the policy allows host tools; otherwise each one the configuration has not turned off already.
   *
   * @example
   * SecurityHostTools.decide({ formatter: false }, { mode: "required", allowHostTools: false }) // ["lsp"]
   * SecurityHostTools.decide({}, { mode: "off", allowHostTools: false }) // []
   */
  export function decide(config: Record<string, unknown>, sandbox: { mode: string; allowHostTools: boolean }): Key[] {
    if (sandbox.mode === "off" || sandbox.allowHostTools) return []
    return TOOLS.filter((t) => config[t.key] !== false).map((t) => t.key)
  }

  /**
   * Turns `keys` off in `config` in place (OpenCode reads its live configuration after the plugins' `config` hooks);
   * returns the keys changed (none of a frozen configuration).
   *
   * @example
   * const config = { formatter: { prettier: {} } }
   * SecurityHostTools.apply(config, ["formatter"]) // ["formatter"]; config.formatter === false
   */
  export function apply(config: Record<string, unknown>, keys: readonly Key[]): Key[] {
    const changed: Key[] = []
    for (const key of keys) {
      try {
        config[key] = false
        if (config[key] === false) changed.push(key)
      } catch {
        // A frozen configuration keeps its tools; the caller reports what was not changed.
      }
    }
    return changed
  }

  /** The log line naming what was turned off and how the user keeps it. */
  export function message(keys: readonly Key[]): string {
    const what = TOOLS.filter((t) => keys.includes(t.key)).map((t) => t.what)
    return `[security] OpenCode's own ${what.join(" and ")} are off for this session: they run outside the sandbox and start code the agent can change (node_modules/.bin, tsserver, prettier and ESLint configurations, build scripts). This project's LSP tools run their servers inside the sandbox; the user can keep OpenCode's with "sandbox": { "allowHostTools": true } in the root .opencode-security.json.`
  }
}
