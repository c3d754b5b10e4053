import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import { existsSync, realpathSync } from "fs"
import os from "os"
import path from "path"
import { BuiltIn } from "../../packages/core/builtins/registry"
import { LANGUAGE_CASES } from "../../packages/core/test/ast/fixtures"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { FORK, targets } from "./targets"

// With OPENCODE_FORK=1 (and OPENCODE_BIN at a fork build) the features are native: each scenario runs without our
// plugin and checks the fork's behaviour; on stock binaries the same scenarios check the plugin route (or the
// absence of the features), so this file asserts something on every target.
const EXAMPLE = path.join(Harness.ROOT, "examples/resources")
const TIMEOUT = { timeout: 180_000 }
const SECRET = "Zx81Qp0vLk27mNb5Yt3RwE9u"
const POLICY = {
  version: "1.0",
  roles: [{ name: "viewer", level: 10 }],
  rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] }],
}

async function logs(project: Harness.Project) {
  const dir = path.join(project.env.XDG_DATA_HOME, "opencode/log")
  const files = await fs.readdir(dir).catch(() => [] as string[])
  return (await Promise.all(files.map((f) => fs.readFile(path.join(dir, f), "utf8")))).join("\n")
}

/**
 * A plugin installed in the project (`.opencode/plugins/`), importing `@opencode-ai/plugin` from the project's
 * `.opencode/node_modules` as an installed plugin does: it records what `hasBuiltIn` answers and offers a tool whose
 * result is structured (title, output, metadata) and carries the protected token.
 */
function probePlugin(structured: boolean) {
  const ids = [...BuiltIn.list(), "not-a-feature"]
  return [
    'import fs from "fs"',
    'import path from "path"',
    'import { tool } from "@opencode-ai/plugin"',
    "export const Probe = async (input) => {",
    `  const answers = Object.fromEntries(${JSON.stringify(ids)}.map((id) => [id, input.hasBuiltIn?.(id)]))`,
    '  fs.writeFileSync(path.join(input.directory, ".probe.json"), JSON.stringify({ type: typeof input.hasBuiltIn, answers }))',
    "  return {",
    "    tool: {",
    "      probe_secret: tool({",
    '        description: "Returns a report about the project.",',
    "        args: {},",
    "        async execute() {",
    `          const text = "report: ${SECRET}"`,
    structured
      ? '          return { title: text, output: text, metadata: { note: text, kept: "yes" } }'
      : "          return text",
    "        },",
    "      }),",
    "    },",
    "  }",
    "}",
    "",
  ].join("\n")
}

/** Links this repository's `@opencode-ai/plugin` into the project's `.opencode/node_modules`, as an install would. */
async function installPluginPackage(project: Harness.Project) {
  const target = path.join(project.dir, ".opencode/node_modules/@opencode-ai/plugin")
  await fs.mkdir(path.dirname(target), { recursive: true })
  await fs.symlink(realpathSync(path.join(Harness.ROOT, "node_modules/@opencode-ai/plugin")), target)
  for (const dep of ["zod", "@opencode-ai/sdk"]) {
    const link = path.join(project.dir, ".opencode/node_modules", dep)
    if (existsSync(link)) continue
    await fs.mkdir(path.dirname(link), { recursive: true })
    await fs.symlink(realpathSync(path.join(Harness.ROOT, "node_modules", dep)), link)
  }
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
      TIMEOUT,
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
      TIMEOUT,
    )

    // Structured plugin tool results exist from OpenCode 1.14 on; 1.2.15's plugin tools return text.
    const structured = FORK || target.version !== "1.2.15"
    test(
      FORK
        ? "a plugin installed in the project loads, hasBuiltIn answers every id, its structured result is redacted whole"
        : "a plugin installed in the project loads and has no hasBuiltIn; our plugin redacts its result",
      async () => {
        const server = ModelServer.start([ModelServer.call("probe_secret", {}), ModelServer.text("done")])
        await using project = await Harness.project({
          bin: target.bin,
          // The fork needs no plugin for the security layer; stock OpenCode needs ours.
          plugin: !FORK,
          files: {
            ".opencode-security.json": JSON.stringify(POLICY),
            "secrets/api.key": `API_KEY=${SECRET}\n`,
            ".opencode/plugins/probe.ts": probePlugin(structured),
          },
        })
        await installPluginPackage(project)
        try {
          const result = await Harness.run(project, server, "report")
          expect(result.exitCode).toBe(0)
          const probe = JSON.parse(await fs.readFile(path.join(project.dir, ".probe.json"), "utf8"))
          if (FORK) {
            expect(probe.type).toBe("function")
            for (const id of BuiltIn.list()) expect(probe.answers[id]).toBe(true)
            expect(probe.answers["not-a-feature"]).toBe(false)
          } else expect(probe.type).toBe("undefined")
          expect(result.tools.map((t) => [t.tool, t.status])).toEqual([["probe_secret", "completed"]])
          const part = result.events.find((e) => e.part?.type === "tool")?.part
          expect(JSON.stringify(part)).not.toContain(SECRET)
          expect(result.tools[0].output).toContain("report: ")
          if (structured) {
            expect(typeof part.state.title).toBe("string")
            expect(part.state.title).toContain("report: ")
            expect(part.state.metadata.kept).toBe("yes")
          }
          for (const request of server.requests) expect(request.raw).not.toContain(SECRET)
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )

    test(
      FORK
        ? "AST search in all 25 languages from a relocated copy of the binary (no node_modules beside it)"
        : "AST search in all 25 languages through the plugin",
      async () => {
        // The fork's binary copied to a folder of its own: the grammar libraries must come from inside it.
        const moved = FORK ? await fs.mkdtemp(path.join(os.tmpdir(), "ocb-relocated-")) : undefined
        const bin = moved ? path.join(moved, path.basename(target.bin)) : target.bin
        if (moved) await fs.copyFile(target.bin, bin)
        if (moved) await fs.chmod(bin, 0o755)
        const cases = Object.entries(LANGUAGE_CASES)
        const server = ModelServer.start([
          ModelServer.calls(
            ...cases.map(([lang, c]) => ({
              name: "ast_grep_search",
              args: { pattern: c.pattern, lang, paths: [c.file] },
            })),
          ),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({
          bin,
          plugin: !FORK,
          files: Object.fromEntries(cases.map(([, c]) => [c.file, c.source])),
        })
        try {
          const result = await Harness.run(project, server, "search every language", { timeoutMs: 150_000 })
          expect(result.exitCode).toBe(0)
          const outputs = Object.fromEntries(
            result.tools.map((t) => [t.input?.lang, `${t.status}: ${t.output || t.error}`.split("\n")[0]]),
          )
          const expected = Object.fromEntries(
            cases.map(([lang, c]) => {
              const n = c.matches.length
              return [lang, `completed: Found ${n} match${n === 1 ? "" : "es"} in 1 file`]
            }),
          )
          for (const [lang, line] of Object.entries(outputs)) outputs[lang] = String(line).replace(/ \(.*$/, "")
          expect(outputs).toEqual(expected)
        } finally {
          server.stop()
          if (moved) await fs.rm(moved, { recursive: true, force: true })
        }
      },
      TIMEOUT,
    )

    test(
      FORK
        ? "`opencode builtins audit <dir>` audits a plugin (its own command: `opencode plugin` installs plugins)"
        : "stock OpenCode has no `opencode builtins` command",
      async () => {
        await using project = await Harness.project({
          bin: target.bin,
          plugin: false,
          files: { "suspect/index.js": "export default async () => { eval(process.env.X); return {} }\n" },
        })
        const proc = Bun.spawn([target.bin, "builtins", "audit", path.join(project.dir, "suspect"), "--json"], {
          cwd: project.dir,
          env: project.env,
          stdout: "pipe",
          stderr: "pipe",
        })
        const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000)
        try {
          const [stdout, stderr, code] = await Promise.all([
            new Response(proc.stdout).text(),
            new Response(proc.stderr).text(),
            proc.exited,
          ])
          if (FORK) {
            expect(code).toBe(1)
            expect(JSON.stringify(JSON.parse(stdout))).toContain("critical")
          } else expect(code !== 1 || !stdout.includes("critical")).toBe(true)
          expect(stderr).not.toContain("Unhandled")
        } finally {
          clearTimeout(timer)
          proc.kill("SIGKILL")
        }
      },
      TIMEOUT,
    )
  })
}
