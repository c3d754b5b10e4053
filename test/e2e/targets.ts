import { Harness } from "./harness"

export type Target = { label: string; bin: string; version: string }

/**
 * `OPENCODE_FORK=1` (with `OPENCODE_BIN` at a build of the patched OpenCode) says the binary under test is the fork:
 * the features are native (no plugin needed), `hasBuiltIn` answers, and fork-only scenarios run.
 */
export const FORK = process.env.OPENCODE_FORK === "1" && Boolean(process.env.OPENCODE_BIN)

/** The stock releases every end-to-end scenario runs against, each a pinned npm alias of `opencode-ai`. */
export const STOCK = [
  { alias: "opencode-ai", version: "1.2.15", label: "1.2.15 (pinned)" },
  { alias: "opencode-ai-1183", version: "1.18.3", label: "1.18.3 (the fork's upstream)" },
  { alias: "opencode-ai-latest", version: "1.18.33", label: "1.18.33 (latest)" },
] as const

/**
 * The OpenCode binaries every end-to-end scenario runs against: `OPENCODE_BIN` alone when set (e.g. a patched fork
 * build, with `OPENCODE_FORK=1`), otherwise the pinned stock 1.2.15, 1.18.3 (the release the fork is built on) and
 * the newest 1.18.x.
 */
export function targets(): Target[] {
  if (process.env.OPENCODE_BIN)
    return [
      {
        label: `${FORK ? "fork " : ""}OPENCODE_BIN=${process.env.OPENCODE_BIN}`,
        bin: Harness.bin(),
        version: "custom",
      },
    ]
  return STOCK.map((s) => {
    const bin = s.alias === "opencode-ai" ? Harness.bin() : Harness.installed(s.alias)
    if (!bin) throw new Error(`${s.alias} (opencode-ai@${s.version}) is not installed: run \`npm install\``)
    return { label: s.label, bin, version: s.version }
  })
}
