import { expect, test } from "bun:test"
import path from "path"
import { Harness } from "./harness"

// `npm run demo` is the README's main command: it must work and tell the truth.
test(
  "the demo runs stock opencode end to end and shows released content leaving the requests",
  async () => {
    const proc = Bun.spawn([process.execPath, path.join(Harness.ROOT, "scripts/demo.ts")], {
      cwd: Harness.ROOT,
      stdout: "pipe",
      stderr: "pipe",
    })
    const timer = setTimeout(() => proc.kill(), 90_000)
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    clearTimeout(timer)
    expect(err).not.toContain("opencode exited")
    expect(code).toBe(0)
    for (const line of [
      "agent › resource-query",
      "agent › resource-load",
      "Loaded 4 resources: ship-release, pre-commit, release-notes, deployment-runbook",
      "→ released ship-release, pre-commit, release-notes, deployment-runbook",
      "The runbook's text is in requests 3, 4 and absent from 1, 2, 5",
    ])
      expect(out).toContain(line)
  },
  { timeout: 100_000 },
)
