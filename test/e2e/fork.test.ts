import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

// OPENCODE_FORK=1 (with OPENCODE_BIN at a build of the patched OpenCode) says the binary under test is the fork.
// Stock binaries are checked for the opposite, so this file asserts something on every target.
const FORK = process.env.OPENCODE_FORK === "1" && Boolean(process.env.OPENCODE_BIN)
const EXAMPLE = path.join(Harness.ROOT, "examples/resources")

async function logs(project: Harness.Project) {
  const dir = path.join(project.env.XDG_DATA_HOME, "opencode/log")
  const files = await fs.readdir(dir).catch(() => [] as string[])
  return (await Promise.all(files.map((f) => fs.readFile(path.join(dir, f), "utf8")))).join("\n")
}

for (const target of targets()) {
  describe(`${FORK ? "patched" : "stock"} opencode ${target.label}`, () => {
    test(
      FORK
        ? "the resource tools are native: they work with no plugin configured"
        : "without the plugin there are no resource tools (they come from the plugin)",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("resource-query", { query: "release" }),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          plugin: false,
          files: await Harness.filesOf(EXAMPLE),
        })
        try {
          const result = await Harness.run(project, server, "find release resources")
          expect(result.exitCode).toBe(0)
          const offered = server.turns()[0].body.tools.map((t: any) => t.function.name)
          expect(offered.includes("resource-query")).toBe(FORK)
          if (FORK) expect(JSON.parse(result.tools[0].output).results.map((r: any) => r.id)).toContain("ship-release")
          // Stock OpenCode answers a call to an unknown tool through its `invalid` tool.
          else expect(result.tools.map((t) => t.tool)).toEqual(["invalid"])
        } finally {
          server.stop()
        }
      },
      { timeout: 90_000 },
    )

    test(
      FORK
        ? "with the plugin configured too, the plugin registers nothing and says why"
        : "the plugin registers the resource tools and reports nothing as built in",
      async () => {
        const server = ModelServer.start([ModelServer.text("hello")])
        await using project = await Harness.project({ bin: target.bin, files: await Harness.filesOf(EXAMPLE) })
        try {
          const result = await Harness.run(project, server, "hi", { args: ["--log-level", "INFO"] })
          expect(result.exitCode).toBe(0)
          const offered: string[] = server.turns()[0].body.tools.map((t: any) => t.function.name)
          expect(offered.filter((n) => n === "resource-load")).toHaveLength(1)
          const said = (await logs(project)).includes("built into this OpenCode, so not registered by the plugin")
          expect(said).toBe(FORK)
        } finally {
          server.stop()
        }
      },
      { timeout: 90_000 },
    )
  })
}
