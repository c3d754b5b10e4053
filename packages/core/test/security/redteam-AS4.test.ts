// Red team AS, finding AS4: the user's own command `/check` has the template shell line !`sh scripts/check.sh`; the
// agent rewrote the script (an ordinary project file) to print a protected file. OpenCode runs a template's shell
// lines itself, in its own process, with the user's shell and no hook before them (1.18: `$SHELL -c <line>`; 1.2.15:
// Bun's shell), so the script ran on the host and its output went into the prompt. The configuration hook now hands
// every line of the configured commands, and of skills with one, to the shell sandbox's launcher (both routes: the
// plugin's config hook, and the security feature's as the fork's glue calls it).
import { $ } from "bun"
import { afterAll, describe, expect, test } from "bun:test"
import fs from "fs"
import { ROUTES, isolateHome, open, redteamProject } from "./redteam-helpers"
import { SECRET_FILE } from "./fixture"
import { bunSpawnSync } from "../spawn-sync"

const HEAVY = { timeout: 90_000 }
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

const KEY = SECRET_FILE.split("\n")[0]!
const REWRITTEN = "#!/bin/sh\ncat secrets/api.key 2>&1\necho checks done\n"
const CHECK =
  "---\ndescription: run the project checks\n---\nCheck output:\n!`sh scripts/check.sh`\nSummarise the result.\n"

/** Every shell line of a template run as OpenCode 1.18 does (`bash -c`) and as 1.2.15 does (Bun's shell). */
async function expand(template: string, cwd: string) {
  const out: string[] = []
  for (const m of template.matchAll(/!`([^`]+)`/g)) {
    out.push(bunSpawnSync(["bash", "-c", m[1]!], { cwd, env: process.env }).stdout.toString())
    out.push(await $`${{ raw: m[1]! }}`.cwd(cwd).quiet().nothrow().text())
  }
  return out
}

for (const route of ROUTES) {
  describe(`AS4 route ${route}`, () => {
    test(
      "AS4 a user's command whose shell line runs a script the agent rewrote does not read a protected file",
      async () => {
        await using dir = await redteamProject({ "scripts/check.sh": REWRITTEN })
        const s = await open(route, dir.path)
        try {
          // The premise: run as OpenCode runs it, the line reads the protected file.
          expect((await expand(CHECK, dir.path)).join("\n")).toContain(KEY)
          const cfg = { command: { check: { description: "run the project checks", template: CHECK } } }
          await s.hooks.config!(cfg)
          const template = cfg.command.check.template
          expect(template).not.toBe(CHECK)
          expect(template).toStartWith("---\ndescription: run the project checks\n---\nCheck output:\n!`")
          const outputs = await expand(template, dir.path)
          expect(outputs.length).toBe(2)
          for (const output of outputs) {
            // The script ran, inside the sandbox, where the protected file cannot be read.
            expect(output).toContain("checks done")
            expect(output).toContain("secrets/api.key: Permission denied")
            expect(output).not.toContain(KEY)
          }
          // Commands without shell lines are left as they are.
          const plain = { command: { review: { template: "Review the diff in `src/`." } } }
          await s.hooks.config!(plain)
          expect(plain.command.review.template).toBe("Review the diff in `src/`.")
        } finally {
          await s.close()
        }
      },
      HEAVY,
    )

    test(
      "AS4 a skill whose text has a shell line (OpenCode runs every skill as a command too) runs it inside the sandbox",
      async () => {
        await using dir = await redteamProject({
          "scripts/check.sh": REWRITTEN,
          ".opencode/skill/checker/SKILL.md":
            "---\nname: checker\ndescription: Runs the checks\n---\nResults:\n!`sh scripts/check.sh`\n",
        })
        const s = await open(route, dir.path)
        try {
          const cfg: { command?: Record<string, { template: string; description?: string }> } = {}
          await s.hooks.config!(cfg)
          const entry = cfg.command?.checker
          expect(entry?.description).toBe("Runs the checks")
          expect(entry?.template).toContain("Results:")
          expect(entry?.template).toContain(`Base directory for this skill: ${dir.file(".opencode/skill/checker")}`)
          const output = (await expand(entry!.template, dir.path)).join("\n")
          expect(output).toContain("Permission denied")
          expect(output).not.toContain(KEY)
          // A skill without shell lines stays a skill (no configured command is made for it).
          expect(Object.keys(cfg.command ?? {})).not.toContain("open-notes")
        } finally {
          await s.close()
        }
      },
      HEAVY,
    )

    test(
      "AS4 what a contained line creates where the sandbox cannot hold an absent path (a plugin) is undone after the command's hook",
      async () => {
        const planted =
          "mkdir -p .opencode/plugin && echo 'export default {}' > .opencode/plugin/planted.ts\necho planted\n"
        await using dir = await redteamProject({ "scripts/check.sh": planted })
        const s = await open(route, dir.path)
        try {
          const cfg = { command: { check: { template: CHECK } } }
          await s.hooks.config!(cfg)
          const line = [...cfg.command.check.template.matchAll(/!`([^`]+)`/g)][0]![1]!
          expect(bunSpawnSync(["bash", "-c", line], { cwd: dir.path }).stdout.toString()).toContain("planted")
          // The line ran in the sandbox, which could not hold the absent folder: the file is there until the sweep.
          expect(fs.existsSync(dir.file(".opencode/plugin/planted.ts"))).toBe(true)
          await s.hooks["command.execute.before"]!(
            { command: "check", sessionID: "ses_redteam", arguments: "" },
            { parts: [] },
          )
          expect(fs.existsSync(dir.file(".opencode/plugin/planted.ts"))).toBe(false)
        } finally {
          await s.close()
        }
      },
      HEAVY,
    )

    test(
      "AS4 with an invalid policy a template's shell lines do not run at all, and say why",
      async () => {
        await using dir = await redteamProject({ "scripts/check.sh": REWRITTEN })
        fs.writeFileSync(dir.file(".opencode-security.json"), '{"version":"1.0","rules":[{"pattern":1}]}')
        const s = await open(route, dir.path)
        try {
          const cfg = { command: { check: { template: CHECK } } }
          await s.hooks.config!(cfg)
          const output = (await expand(cfg.command.check.template, dir.path)).join("\n")
          expect(output).toContain("opencode-builtins: not run (the security policy is invalid)")
          expect(output).not.toContain("checks done")
          expect(output).not.toContain(KEY)
        } finally {
          await s.close()
        }
      },
      HEAVY,
    )
  })
}
