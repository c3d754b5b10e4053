import { Harness } from "./harness"

export type Target = { label: string; bin: string }

/**
 * The OpenCode binaries every end-to-end scenario runs against: `OPENCODE_BIN` alone when set (e.g. a patched fork
 * build), otherwise the pinned stock 1.2.15 and the newest stock release (installed as the `opencode-ai-latest`
 * npm alias).
 */
export function targets(): Target[] {
  if (process.env.OPENCODE_BIN) return [{ label: `OPENCODE_BIN=${process.env.OPENCODE_BIN}`, bin: Harness.bin() }]
  const list: Target[] = [{ label: "1.2.15 (pinned)", bin: Harness.bin() }]
  const latest = Harness.installed("opencode-ai-latest")
  if (!latest) throw new Error("opencode-ai-latest is not installed: run `npm install`")
  list.push({ label: "1.18.33 (latest)", bin: latest })
  return list
}
