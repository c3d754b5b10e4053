// Red team BB, finding BB3 (a bypass of the AS4 fix): the template launcher ran the user's command lines under the
// plan prepared last (when the configuration hook ran, or before the last shell command), so a protected file that
// appeared since (a new `api/.env.production` under `**/.env*`) or a rule the user added was readable by the user's
// next /command line, though the read tool already refused it. After every tool call the layer now prepares the plan
// again when what the policy protects changed (`SecurityGuard.refreshTemplates`), on both routes.
import { afterAll, describe, expect, test } from "bun:test"
import fs from "fs"
import { REDTEAM_POLICY, ROUTES, isolateHome, open, redteamProject } from "./redteam-helpers"
import { bunSpawnSync } from "../spawn-sync"

const home = isolateHome()
afterAll(() => home.restore(), 60_000)
const PROD = "PROD_DB_PASSWORD=Hq72Lm0Zx9Tr4Wk8"
const CHECK = "---\ndescription: run the project checks\n---\nCheck output:\n!`sh scripts/check.sh`\n"

for (const route of ROUTES) {
  describe(`AS4 stale plan route ${route}`, () => {
    test("BB3 a rule the user adds after start keeps its file from the user's command's shell line (launcher plan not stale)", async () => {
      await using dir = await redteamProject({
        "scripts/check.sh": "#!/bin/sh\ncat config/prod.env 2>&1\necho checks done\n",
        "config/prod.env": PROD + "\n",
      })
      const s = await open(route, dir.path)
      try {
        const cfg = { command: { check: { template: CHECK } } }
        await s.hooks.config!(cfg)
        const line = [...cfg.command.check.template.matchAll(/!`([^`]+)`/g)][0]![1]!
        // Before the change the file is readable (not protected).
        expect(bunSpawnSync(["bash", "-c", line], { cwd: dir.path }).stdout.toString()).toContain(PROD)
        // The user protects it.
        const policy = {
          ...REDTEAM_POLICY,
          rules: [
            ...REDTEAM_POLICY.rules,
            { pattern: "config/prod.env", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] },
          ],
        }
        fs.writeFileSync(dir.file(".opencode-security.json"), JSON.stringify(policy, null, 2))
        await Bun.sleep(1500)
        // The layer has seen it: the read tool refuses the file now.
        const r = await s.call("read", { filePath: dir.file("config/prod.env") })
        expect(r.refused).toBe(true)
        // The user's /check runs next (no bash command in between).
        const out = bunSpawnSync(["bash", "-c", line], { cwd: dir.path }).stdout.toString()
        expect(out).not.toContain(PROD)
      } finally {
        await s.close()
      }
    }, 90_000)

    test("BB3 a protected file (.env under '**/.env*') the user creates after start is hidden from the user's command's shell line", async () => {
      await using dir = await redteamProject({
        "scripts/check.sh": "#!/bin/sh\ncat api/.env.production 2>&1\necho checks done\n",
        "api/index.js": "x\n",
      })
      const s = await open(route, dir.path)
      try {
        const cfg = { command: { check: { template: CHECK } } }
        await s.hooks.config!(cfg)
        const line = [...cfg.command.check.template.matchAll(/!`([^`]+)`/g)][0]![1]!
        // The user adds the production env file afterwards.
        fs.writeFileSync(dir.file("api/.env.production"), PROD + "\n")
        await Bun.sleep(1500)
        const r = await s.call("read", { filePath: dir.file("api/.env.production") })
        expect(r.refused).toBe(true)
        const out = bunSpawnSync(["bash", "-c", line], { cwd: dir.path }).stdout.toString()
        expect(out).not.toContain(PROD)
      } finally {
        await s.close()
      }
    }, 90_000)

    test("BB3 an allowed tool call after the file appears brings the launcher's plan up to date too", async () => {
      await using dir = await redteamProject({
        "scripts/check.sh": "#!/bin/sh\ncat api/.env.production 2>&1\necho checks done\n",
        "api/index.js": "x\n",
      })
      const s = await open(route, dir.path)
      try {
        const cfg = { command: { check: { template: CHECK } } }
        await s.hooks.config!(cfg)
        const line = [...cfg.command.check.template.matchAll(/!`([^`]+)`/g)][0]![1]!
        fs.writeFileSync(dir.file("api/.env.production"), PROD + "\n")
        const r = await s.call("read", { filePath: dir.file("api/index.js") })
        expect(r.refused).toBe(false)
        const out = bunSpawnSync(["bash", "-c", line], { cwd: dir.path }).stdout.toString()
        expect(out).toContain("checks done")
        expect(out).not.toContain(PROD)
      } finally {
        await s.close()
      }
    }, 90_000)

    test("BB3 control: a bash command after the same change does hide the new .env", async () => {
      await using dir = await redteamProject({ "api/index.js": "x\n" })
      const s = await open(route, dir.path)
      try {
        await s.hooks.config!({ command: { check: { template: CHECK } } })
        fs.writeFileSync(dir.file("api/.env.production"), PROD + "\n")
        await Bun.sleep(1500)
        const r = await s.bash(`cat api/$(echo LmVudi5wcm9kdWN0aW9u | base64 -d) 2>&1; echo END`)
        expect(r.raw).not.toContain(PROD)
      } finally {
        await s.close()
      }
    }, 90_000)
  })
}
