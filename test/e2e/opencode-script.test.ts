import { expect, test } from "bun:test"
import path from "path"
import { Harness } from "./harness"

// `npm run opencode -- [args]`: the pinned stock OpenCode, in the directory npm was started from, with the plugin.
test(
  "npm run opencode starts the pinned opencode in the caller's directory with the plugin loaded",
  async () => {
    await using project = await Harness.project({ plugin: false })
    const proc = Bun.spawn([process.execPath, path.join(Harness.ROOT, "scripts/opencode.ts"), "debug", "config"], {
      cwd: Harness.ROOT,
      env: { ...project.env, INIT_CWD: project.dir },
      stdout: "pipe",
      stderr: "pipe",
    })
    const timer = setTimeout(() => proc.kill(), 60_000)
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    clearTimeout(timer)
    expect(code).toBe(0)
    const config = JSON.parse(out.slice(out.indexOf("{")))
    expect(config.plugin).toContain(Harness.PLUGIN_URL)
    // The project's own opencode.json (written by the harness) was read: it is the caller's directory.
    expect(config.model).toBe(`${Harness.PROVIDER}/${Harness.MODEL}`)
  },
  { timeout: 70_000 },
)
