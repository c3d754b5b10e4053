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
 * - `all` (the default of a plain `bun test`, and `npm run test:full`): the three;
 * - `rotate` (`npm test`, through scripts/test.ts): one, turning from block to block (a hash of the test file's path,
 *   plus the block's place in the file, plus the rotation). The rotation is `E2E_ROTATION`, else the day (days since
 *   1970, UTC): a run repeats on the same binaries the same day or with the same `E2E_ROTATION`, and three days of
 *   runs put every block on every binary.
 *
 * @example
 * pick("rotate", "test/e2e/lsp.test.ts", 0, 20423) // [0], [1] or [2]: an index into STOCK
 */
export function pick(mode: string | undefined, file: string, block: number, rotation: number): number[] {
  if (mode === undefined || mode === "" || mode === "all") return [0, 1, 2]
  if (mode !== "rotate") throw new Error(`E2E_TARGETS must be "all" or "rotate", not "${mode}"`)
  let hash = 2166136261
  for (const char of file) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0
  return [(hash + block + rotation) % STOCK.length]
}

/** `E2E_ROTATION` when it is a whole number, else days since 1970 (UTC). */
export function rotation(env: Record<string, string | undefined> = process.env, now = Date.now()): number {
  const given = env.E2E_ROTATION
  if (given !== undefined && given !== "") {
    const n = Number(given)
    if (!Number.isInteger(n) || n < 0) throw new Error(`E2E_ROTATION must be a whole number, not "${given}"`)
    return n
  }
  return Math.floor(now / 86_400_000)
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
  return pick(process.env.E2E_TARGETS, file, block, rotation()).map((index) => {
    const s = STOCK[index]
    const bin = s.alias === "opencode-ai" ? Harness.bin() : Harness.installed(s.alias)
    if (!bin) throw new Error(`${s.alias} (opencode-ai@${s.version}) is not installed: run \`npm install\``)
    return { label: s.label, bin, version: s.version }
  })
}
