import path from "path"
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
 * Which stock binaries a block of scenarios (one `targets()` call) runs on, from `E2E_TARGETS`:
 * - `all` (the default of a plain `bun test`): the three;
 * - `paired` (`npm test`, through scripts/test.ts): the newest 1.18.x, which users install, and one of the two older
 *   ones, alternating from block to block in a fixed order (a hash of the test file's path, then the block's place in
 *   it), so every scenario meets the newest release, each older release meets half of them, and a failure repeats on
 *   the same binary at the next run. `npm run test:full` runs all three.
 *
 * @example
 * pick("paired", "test/e2e/lsp.test.ts", 0) // [0, 2] or [1, 2]: indexes into STOCK
 */
export function pick(mode: string | undefined, file: string, block: number): number[] {
  if (mode === undefined || mode === "" || mode === "all") return [0, 1, 2]
  if (mode !== "paired") throw new Error(`E2E_TARGETS must be "all" or "paired", not "${mode}"`)
  let hash = 2166136261
  for (const char of file) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0
  return [(hash + block) % 2, 2]
}

const blocks = new Map<string, number>()

/**
 * The OpenCode binaries a block of end-to-end scenarios runs against: `OPENCODE_BIN` alone when set (e.g. a patched
 * fork build, with `OPENCODE_FORK=1`), otherwise stock ones among the pinned 1.2.15, 1.18.3 (the release the fork is
 * built on) and the newest 1.18.x, as `E2E_TARGETS` says (`pick`).
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
  // The test file `bun test` is running, relative to the repository, so the choice does not depend on the checkout.
  const file = path.relative(Harness.ROOT, Bun.main)
  const block = blocks.get(file) ?? 0
  blocks.set(file, block + 1)
  return pick(process.env.E2E_TARGETS, file, block).map((index) => {
    const s = STOCK[index]
    const bin = s.alias === "opencode-ai" ? Harness.bin() : Harness.installed(s.alias)
    if (!bin) throw new Error(`${s.alias} (opencode-ai@${s.version}) is not installed: run \`npm install\``)
    return { label: s.label, bin, version: s.version }
  })
}
