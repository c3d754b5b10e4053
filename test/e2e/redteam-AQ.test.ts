// Red team AQ1 on the stock binaries: OpenCode started in a project folder whose name is not UTF-8 (`caf\xe9`), the
// plugin configured globally (OpenCode reads no project configuration there). OpenCode, on Bun, hands the plugin the
// U+FFFD reading of the folder's path, which names no folder. The plugin made it (a twin beside the project, with its
// state), OpenCode's shell then ran in that twin, and the security layer found no policy there: the model read the
// protected `.env` through `/proc/self/cwd` and `../caf?/.env`. Now every tool call is refused, saying why.
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const SECRET = "TOPSECRET-AQ1-5521"
const POLICY = {
  version: "1.0",
  rules: [{ pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
}
const NAME = Buffer.from("caf\xe9", "latin1")

/**
 * One run in the project folder `caf\xe9` (made by renaming the harness's project), with the U+FFFD twin beside it made
 * first when `twin` (an empty folder, as the plugin's state writes or an older `discover` made it).
 */
async function scenario(bin: string, twin: boolean) {
  await using project = await Harness.project({
    bin,
    files: { ".opencode-security.json": JSON.stringify(POLICY), ".env": `S=${SECRET}\n`, "a.txt": "a\n" },
  })
  const server = ModelServer.start([
    ModelServer.call("bash", { command: "cat ../caf?/.env .env; echo done", description: "read" }),
    ModelServer.call("read", { filePath: "/proc/self/cwd/.env" }),
    ModelServer.text("done"),
  ])
  // OpenCode reads no project configuration in that folder: the plugin and the provider go in the global one.
  const config = JSON.parse(fs.readFileSync(path.join(project.dir, "opencode.json"), "utf8"))
  config.provider = Harness.provider(server)
  fs.writeFileSync(path.join(project.env.XDG_CONFIG_HOME, "opencode/opencode.json"), JSON.stringify(config))
  const real = Buffer.concat([Buffer.from(project.root + "/"), NAME])
  fs.renameSync(project.dir, real)
  const lossy = real.toString("utf8")
  if (twin) fs.mkdirSync(lossy)
  try {
    const run = await Harness.run(project, server, "read the settings", { timeoutMs: 120_000, cd: "caf\\351" })
    const names = fs.readdirSync(project.root, { encoding: "buffer" }).map((n) => Buffer.from(n).toString("latin1"))
    const seen = [...server.requests.map((r) => r.raw), run.stdout].join("\n")
    return {
      run,
      names: names.sort(),
      twinEntries: twin ? fs.readdirSync(lossy) : undefined,
      leaked: seen.includes(SECRET),
    }
  } finally {
    server.stop()
    fs.rmSync(lossy, { recursive: true, force: true })
    fs.renameSync(real, project.dir)
  }
}

/** The twin's name as `scenario` lists it: `caf` and U+FFFD's UTF-8 bytes, read as Latin-1. */
const TWIN = Buffer.from("caf\ufffd").toString("latin1")

for (const target of targets()) {
  describe(`red team AQ1 on stock opencode ${target.label}`, () => {
    test("AQ1: in a project folder whose name is not UTF-8, no twin folder is made and the protected file is not read", async () => {
      const r = await scenario(target.bin, false)
      expect(r.leaked).toBe(false)
      expect(r.names).toEqual(["caf\xe9", "home", "tmp", "xdg"])
      for (const t of r.run.tools) expect(`${t.tool}:${t.status}:${t.error ?? ""}`).toContain("is not valid UTF-8 text")
      if (target.version === "1.2.15")
        expect(r.run.tools.map((t) => `${t.tool}:${t.status}`)).toEqual(["bash:error", "read:error"])
      // 1.18 does not run a prompt in such a folder at all once nothing makes the twin: its system prompt's
      // FileSystem.realPath of the folder fails (ENOENT), an "Unexpected server error" before any model request.
      if (target.version.startsWith("1.18.")) {
        expect(r.run.tools).toEqual([])
        expect(r.run.stdout).toContain('"type":"error"')
      }
    }, 200_000)

    test("AQ1: with the U+FFFD twin beside it (an older version made it), every tool call is refused, the twin left empty", async () => {
      const r = await scenario(target.bin, true)
      expect(r.leaked).toBe(false)
      expect(r.names).toEqual(["caf\xe9", TWIN, "home", "tmp", "xdg"].sort())
      expect(r.twinEntries).toEqual([])
      expect(r.run.tools.map((t) => `${t.tool}:${t.status}`)).toEqual(["bash:error", "read:error"])
      for (const t of r.run.tools) expect(t.error ?? "").toContain("is not valid UTF-8 text")
    }, 200_000)
  })
}
