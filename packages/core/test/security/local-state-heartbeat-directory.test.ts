// Red team GH1b, defence in depth behind the seal: a heartbeat the built-ins did write (sealed for this project) that
// names a folder outside the project is still refused by `recovery resume --server <url>`: the user's running OpenCode
// server is never pointed (`?directory=`) at another folder, where it would open an instance and run that folder's
// plugin. Host part with a real stock binary (OPENCODE_BIN, default the newest).
import { afterAll, beforeAll, expect, test } from "bun:test"
import { spawn } from "child_process"
import fs from "fs"
import os from "os"
import path from "path"
import { run } from "../../recovery/cli"
import { RecoveryStore } from "../../recovery/store"
import { memoryIO } from "../../util/cli"
import { beat } from "../recovery/beat"
import { isolateHome } from "./redteam-helpers"

const BIN = process.env.OPENCODE_BIN ?? "/work/main/node_modules/opencode-ai-latest/bin/opencode.exe"
let home: ReturnType<typeof isolateHome>
let scratch: string
beforeAll(() => {
  home = isolateHome()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-beat-directory-")))
})
afterAll(() => {
  home.restore()
  fs.rmSync(scratch, { recursive: true, force: true })
}, 60_000)

test("recovery resume --server: a heartbeat naming a folder outside its project is refused; the server opens nothing there", async () => {
  const evil = path.join(scratch, "evil")
  const user = path.join(scratch, "user")
  const svc = path.join(scratch, "svc")
  const marker = path.join(scratch, "ran")
  fs.mkdirSync(path.join(evil, ".opencode/plugin"), { recursive: true })
  fs.mkdirSync(user, { recursive: true })
  fs.mkdirSync(svc, { recursive: true })
  fs.writeFileSync(
    path.join(evil, ".opencode/plugin/p.js"),
    `import fs from "fs"\nexport const P = async () => { fs.writeFileSync(${JSON.stringify(marker)}, "host:" + process.pid); return {} }\n`,
  )
  RecoveryStore.write(
    RecoveryStore.folder(svc),
    beat({ sessionID: "ses_outside1", directory: evil, workdir: evil, owner: { ...beat().owner, pid: 2 ** 22 + 11 } }),
  )
  const env = { ...process.env, OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1" }
  const child = spawn(BIN, ["serve", "--port", "0", "--hostname", "127.0.0.1"], { cwd: user, env, detached: true })
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = ""
      const timer = setTimeout(() => reject(new Error("no url: " + out)), 30_000)
      const on = (d: Buffer) => {
        out += d.toString()
        const m = out.match(/http:\/\/127\.0\.0\.1:\d+/)
        if (m) (clearTimeout(timer), resolve(m[0]))
      }
      child.stdout.on("data", on)
      child.stderr.on("data", on)
    })
    const io = memoryIO(svc)
    expect(await run(["resume", "ses_outside1", "-C", svc, "--server", url], io)).toBe(1)
    expect(io.stderr).toContain(`names ${evil} as its folder, which is not the project ${svc}`)
    // What the server would have done with the request is done by now (the request is never sent).
    const check = await fetch(`${url}/session`)
    expect(check.ok).toBe(true)
    expect(fs.existsSync(marker)).toBe(false)
    expect(RecoveryStore.exists(RecoveryStore.folder(svc), "ses_outside1")).toBe(true)
  } finally {
    process.kill(-child.pid!, "SIGTERM")
    await new Promise((resolve) => (child.exitCode !== null ? resolve(0) : child.once("exit", resolve)))
  }
}, 90_000)
