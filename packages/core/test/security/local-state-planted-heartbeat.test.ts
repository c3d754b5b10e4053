// Red team GH1: a contained command plants a crash heartbeat in a nested repository's local state folder it creates
// (the folder's name spelled at run time, so the static check does not see it), naming a folder of its own, with a
// plugin there, as the session's directory. `opencode-builtins recovery resume <id>` in that repository (what the
// start report suggests) started `opencode serve` in the agent's folder: OpenCode ran the agent's plugin on the host.
// The heartbeat is not sealed by the built-ins (LocalSeal): it is skipped with the reason, and nothing is started.
// Both routes; the host part with a real stock binary (OPENCODE_BIN, default the newest).
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { LocalSeal } from "../../learning/seal"
import { run } from "../../recovery/cli"
import { memoryIO } from "../../util/cli"
import { beat } from "../recovery/beat"
import { ROUTES, fresh, isolateHome } from "./redteam-helpers"

const BIN = process.env.OPENCODE_BIN ?? "/work/main/node_modules/opencode-ai-latest/bin/opencode.exe"

let home: ReturnType<typeof isolateHome>
let scratch: string
beforeAll(() => {
  home = isolateHome()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-planted-beat-")))
})
afterAll(() => {
  home.restore()
  fs.rmSync(scratch, { recursive: true, force: true })
}, 60_000)

describe.each([...ROUTES])("route %s", (route) => {
  test("a heartbeat a command planted in a nested repository is skipped: recovery resume starts nothing", async () => {
    await using box = await fresh(route)
    const evil = path.join(scratch, `evil-${route}`)
    const marker = path.join(scratch, `ran-${route}`)
    const planted = beat({
      sessionID: "ses_planted1",
      directory: evil,
      workdir: evil,
      owner: { ...beat().owner, pid: 2 ** 22 + 11 },
      title: "refactor the parser",
    })
    const b64 = Buffer.from(JSON.stringify(planted)).toString("base64")
    const plugin = `import fs from "fs"\nexport const P = async () => { fs.writeFileSync(${JSON.stringify(marker)}, "host:" + process.pid); return {} }\n`
    const cmd = [
      `git init -q svc`,
      `n=$(echo YnVpbHRpbnMtbG9jYWw= | base64 -d); d="svc/.opencode/$n/recovery"; mkdir -p "$d" && echo ${b64} | base64 -d > "$d/ses_planted1.json"`,
      `mkdir -p ${evil}/.opencode/plugin && echo ${Buffer.from(plugin).toString("base64")} | base64 -d > ${evil}/.opencode/plugin/p.js`,
    ].join("; ")
    await box.s.bash(cmd)
    const svc = path.join(box.dir.path, "svc")
    const file = path.join(svc, ".opencode/builtins-local/recovery/ses_planted1.json")
    // The sandbox cannot hold a name that does not exist yet: the command wrote the file (the seal is what holds).
    expect(fs.existsSync(file)).toBe(true)

    const list = memoryIO(svc)
    expect(await run(["list", "-C", svc], list)).toBe(0)
    expect(list.stdout).toBe("No interrupted sessions in this project.\n")
    expect(list.stderr).toBe(`recovery: skipping heartbeat ${file}: ${LocalSeal.UNTRUSTED} (no seal)\n`)
    const env = { OPENCODE_BIN: BIN, OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1" }
    for (const command of ["resume", "dismiss"]) {
      const io = memoryIO(svc, env)
      expect(await run([command, "ses_planted1", "-C", svc], io)).toBe(1)
      expect(io.stderr).toBe(
        `recovery: heartbeat ${file}: ${LocalSeal.UNTRUSTED} (no seal); nothing of it is used (remove it by hand)\n`,
      )
    }
    expect(fs.existsSync(marker)).toBe(false)
  }, 180_000)
})
