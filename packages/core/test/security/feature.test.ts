// The security feature's config hook over the composition root, as the plugin and the fork's seams call it: what it
// changes in OpenCode's live configuration and which folders the configuration adds to the watch.
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Builtins, BuiltinsSeams } from "../../builtins"
import type { Host } from "../../host"
import { Logger } from "../../util/log"
import { POLICY, project } from "./fixture"
import { isolateHome } from "./redteam-helpers"
import { bunSpawnSync } from "../spawn-sync"

isolateHome()

type Route = "plugin" | "fork"

/** One instance of the composition root, driven as the plugin or the fork's seams drive it. */
async function open(route: Route, dir: string) {
  const host: Host = { directory: dir, worktree: dir, log: Logger.silent, messages: async () => [] }
  const instance = await Builtins.create(host, { options: {}, logger: () => Logger.silent, native: () => false })
  const seams = BuiltinsSeams.from(instance)
  const hooks = instance.hooks as Record<string, any>
  return {
    config: (config: Record<string, unknown>) => (route === "plugin" ? hooks.config(config) : seams.config(config)),
    trigger: (name: string, input: unknown, output: unknown) =>
      route === "plugin" ? hooks[name]?.(input, output) : seams.trigger(name, input, output, async () => {}),
    [Symbol.dispose]: () => instance.exposed.guard?.close(),
  }
}

async function configure(route: Route, dir: string, config: Record<string, unknown>) {
  using session = await open(route, dir)
  await session.config(config)
  return config
}

for (const route of ["plugin", "fork"] as Route[]) {
  describe(`OpenCode's own formatters and language servers, ${route} route`, () => {
    test(
      "with a policy they are turned off in the live configuration, and the audit log says so",
      async () => {
        await using dir = await project()
        const config = await configure(route, dir.path, { formatter: { fmt: { command: ["sh", "x", "$FILE"] } } })
        expect(config.formatter).toBe(false)
        expect(config.lsp).toBe(false)
        const log = fs.readFileSync(path.join(dir.path, ".opencode-security-audit.log"), "utf8")
        expect(log).toContain("formatters and language servers are off")
        expect(log).toContain(`"action":"config-changed"`)
      },
      { timeout: 30_000 },
    )

    test(
      "allowHostTools and sandbox mode off keep them; without a policy nothing changes",
      async () => {
        const cases: [string, unknown][] = [
          ["allowHostTools", { ...POLICY, sandbox: { allowHostTools: true } }],
          ["mode off", { ...POLICY, sandbox: { mode: "off" } }],
        ]
        for (const [, policy] of cases) {
          await using dir = await project({}, policy)
          const config = await configure(route, dir.path, { lsp: { deno: {} } })
          expect([config.lsp, config.formatter]).toEqual([{ deno: {} }, undefined])
        }
        await using plain = await project()
        fs.rmSync(path.join(plain.path, ".opencode-security.json"))
        const config = await configure(route, plain.path, { formatter: true })
        expect([config.lsp, config.formatter]).toEqual([undefined, true])
      },
      { timeout: 30_000 },
    )
  })
}

for (const route of ["plugin", "fork"] as Route[]) {
  describe(`skill folders named by skills.paths, ${route} route`, () => {
    const mine = "---\nname: notes\ndescription: n\n---\nDiff: !`git diff`\n"
    const evil = "---\nname: evil\ndescription: e\n---\nState: !`id`\n"

    /** The write tool's call as OpenCode makes it: before hook, the write, after hook; the output the model gets. */
    async function write(session: Awaited<ReturnType<typeof open>>, file: string, content: string) {
      const input = { tool: "write", sessionID: "ses_feature", callID: `call_${path.basename(path.dirname(file))}` }
      const args = { filePath: file, content }
      await session.trigger("tool.execute.before", input, { args })
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, content)
      const out = { title: "", output: "Wrote file successfully.", metadata: {} }
      await session.trigger("tool.execute.after", { ...input, args }, out)
      return out.output
    }

    test(
      "a new skill there may not carry a shell command (relative and ~/ entries); the user's own are kept",
      async () => {
        await using dir = await project({ "team-skills/notes/SKILL.md": mine })
        const far = path.join(process.env.HOME!, "far-skills")
        using session = await open(route, dir.path)
        try {
          await session.config({ skills: { paths: ["team-skills", "~/far-skills", 42] } })
          for (const file of [path.join(dir.path, "team-skills/evil/SKILL.md"), path.join(far, "evil/SKILL.md")]) {
            expect(await write(session, file, evil)).toContain("gained a shell command")
            expect(fs.existsSync(file)).toBe(false)
            expect(fs.readdirSync(path.dirname(file)).some((f) => f.startsWith("SKILL.md.blocked-by-security-"))).toBe(
              true,
            )
          }
          expect(fs.readFileSync(path.join(dir.path, "team-skills/notes/SKILL.md"), "utf8")).toBe(mine)
        } finally {
          fs.rmSync(far, { recursive: true, force: true })
        }
      },
      { timeout: 30_000 },
    )

    test(
      "a folder no configuration names is an ordinary one",
      async () => {
        await using dir = await project()
        using session = await open(route, dir.path)
        await session.config({})
        const file = path.join(dir.path, "team-skills/evil/SKILL.md")
        expect(await write(session, file, evil)).not.toContain("gained a shell command")
        expect(fs.readFileSync(file, "utf8")).toBe(evil)
      },
      { timeout: 30_000 },
    )
  })
}

for (const route of ["plugin", "fork"] as Route[]) {
  describe(`PATH entries in reach of the agent, ${route} route`, () => {
    test(
      "with a policy OpenCode's own PATH leaves them out; the agent's shell commands keep the whole PATH",
      async () => {
        await using dir = await project({ "node_modules/.bin/tool": "#!/bin/sh\n" })
        const saved = process.env.PATH
        const value = ["node_modules/.bin", dir.file("node_modules/.bin"), saved].join(path.delimiter)
        process.env.PATH = value
        try {
          using session = await open(route, dir.path)
          expect(process.env.PATH).toBe(saved ?? "")
          const output = { env: {} as Record<string, string> }
          await session.trigger("shell.env", { cwd: dir.path, sessionID: "s", callID: "c_env" }, output)
          expect(output.env.PATH).toBe(value)
          // Another plugin's PATH for the command wins.
          const mine = { env: { PATH: "/opt/mine" } as Record<string, string> }
          await session.trigger("shell.env", { cwd: dir.path, sessionID: "s", callID: "c_env2" }, mine)
          expect(mine.env.PATH).toBe("/opt/mine")
        } finally {
          process.env.PATH = saved
        }
      },
      { timeout: 30_000 },
    )

    test(
      "without a policy, or with the sandbox off, PATH is left as it is",
      async () => {
        const saved = process.env.PATH
        try {
          for (const policy of [undefined, { ...POLICY, sandbox: { mode: "off" } }]) {
            await using dir = await project({}, policy ?? POLICY)
            if (!policy) fs.rmSync(dir.file(".opencode-security.json"))
            const value = ["node_modules/.bin", saved].join(path.delimiter)
            process.env.PATH = value
            using session = await open(route, dir.path)
            expect(process.env.PATH).toBe(value)
            const output = { env: {} as Record<string, string> }
            await session.trigger("shell.env", { cwd: dir.path, sessionID: "s", callID: "c_env3" }, output)
            expect(output.env.PATH).toBeUndefined()
          }
        } finally {
          process.env.PATH = saved
        }
      },
      { timeout: 30_000 },
    )
  })
}

for (const route of ["plugin", "fork"] as Route[]) {
  describe(`command templates' shell lines (AS4), ${route} route`, () => {
    const template = "Check output:\n!`sh scripts/check.sh`\nSummarise the result.\n"
    test(
      "with a policy a configured command's shell line runs inside the sandbox: a script reading a protected file fails",
      async () => {
        await using dir = await project({ "scripts/check.sh": "cat secrets/api.key 2>&1\necho checks done\n" })
        // The session stays open: its sandbox (and the launcher in its private folder) ends with it.
        using session = await open(route, dir.path)
        const config = { command: { check: { template } } }
        await session.config(config)
        const line = [...(config as any).command.check.template.matchAll(/!`([^`]+)`/g)].map((m: string[]) => m[1])
        expect(line.length).toBe(1)
        // As OpenCode 1.18 runs it: the user's shell with -c, in the project folder.
        const out = bunSpawnSync(["bash", "-c", line[0]], { cwd: dir.path }).stdout.toString()
        expect(out).toContain("checks done")
        expect(out).toContain("secrets/api.key: Permission denied")
        expect(out).not.toContain("API_KEY=")
        const log = fs.readFileSync(path.join(dir.path, ".opencode-security-audit.log"), "utf8")
        expect(log).toContain("its shell lines run inside the shell sandbox")
      },
      { timeout: 30_000 },
    )

    test(
      "with the sandbox off, or without a policy, the template is left as it is",
      async () => {
        for (const policy of [undefined, { ...POLICY, sandbox: { mode: "off" } }]) {
          await using dir = await project({}, policy ?? POLICY)
          if (!policy) fs.rmSync(dir.file(".opencode-security.json"))
          const config = await configure(route, dir.path, { command: { check: { template } } })
          expect((config as any).command.check.template).toBe(template)
        }
      },
      { timeout: 30_000 },
    )
  })
}
