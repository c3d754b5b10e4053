// The contained search and the file tools on the stock binaries (red team AF): a UTF-8 file whose first two bytes are
// FF FE (ripgrep decodes it as UTF-16, one line), and a home / data folder reached through a symbolic link (its protected
// paths are matched by their real path too).
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const TEXT =
  'export const a = 1\n// @secure-start\nconst pricing = "Kd93mVx71LqPz0Rw"\n// @secure-end\nexport const b = 2\n'

for (const target of targets()) {
  describe(`a UTF-8 file ripgrep decodes as UTF-16 (red team AF1) on stock opencode ${target.label}`, () => {
    test(
      "AF1: grep does not show the read-protected segment of a file that starts with the bytes FF FE",
      async () => {
        await using project = await Harness.project({
          bin: target.bin,
          files: {
            ".opencode-security.json": JSON.stringify({
              version: "1.0",
              segments: {
                markers: [
                  { start: "@secure-start", end: "@secure-end", deniedOperations: ["read", "llm"], allowedRoles: [] },
                ],
              },
            }),
            "src/keep.ts": "export const keep = 1\n",
          },
        })
        fs.writeFileSync(
          path.join(project.dir, "src/bom.ts"),
          Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(TEXT)]),
        )
        const server = ModelServer.start([
          ModelServer.call("read", { filePath: path.join(fs.realpathSync(project.dir), "src/bom.ts") }),
          ModelServer.call("grep", { pattern: ".", path: "src" }),
          ModelServer.text("done"),
        ])
        try {
          const run = await Harness.run(project, server, "search", { timeoutMs: 180_000 })
          const read = run.tools.find((t) => t.tool === "read")?.output ?? ""
          const grep = run.tools.find((t) => t.tool === "grep")?.output ?? ""
          const back = [grep, grep.slice(1)].map((g) => Buffer.from(g, "utf16le").toString("utf8")).join("\n")
          expect(read).not.toContain("Kd93mVx71LqPz0Rw")
          expect(grep.length).toBeGreaterThan(0)
          expect(back).not.toContain("Kd93mVx71LqPz0Rw")
        } finally {
          server.stop()
        }
      },
      { timeout: 300_000 },
    )
  })
}

// AF2: the data folder (XDG_DATA_HOME, as HOME on Fedora Silverblue: /home -> var/home) spelled through a link: the
// host paths the layer hides (OpenCode's auth.json, …) are placed by that spelling only; by the real path they are read,
// searched (the contained grep) and listed.
for (const target of targets()) {
  describe(`a data folder reached through a link (red team AF2) on stock opencode ${target.label}`, () => {
    test(
      "AF2: read, grep and glob by the real path do not show OpenCode's auth.json when XDG_DATA_HOME is spelled through a link",
      async () => {
        await using project = await Harness.project({
          bin: target.bin,
          files: {
            ".opencode-security.json": JSON.stringify({
              version: "1.0",
              rules: [{ pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
            }),
          },
        })
        const realData = project.env.XDG_DATA_HOME
        const link = path.join(project.root, "datalink")
        fs.symlinkSync(realData, link)
        project.env.XDG_DATA_HOME = link
        fs.mkdirSync(path.join(realData, "opencode"), { recursive: true })
        const auth = path.join(realData, "opencode/auth.json")
        fs.writeFileSync(auth, '{"anthropic":{"type":"api","key":"AUTHSECRET123"}}\n')
        const server = ModelServer.start([
          ModelServer.call("read", { filePath: path.join(link, "opencode/auth.json") }),
          ModelServer.call("read", { filePath: auth }),
          ModelServer.call("grep", { pattern: "AUTHSECRET", path: realData }),
          ModelServer.call("glob", { pattern: "**/auth.json", path: realData }),
          ModelServer.text("done"),
        ])
        try {
          const run = await Harness.run(project, server, "look", { timeoutMs: 180_000 })
          const outs = run.tools.map((t) => `${t.tool}: ${(t.output ?? t.error ?? "").slice(0, 160)}`)
          expect(outs.length).toBe(4)
          // Control: by the link spelling the read is refused.
          expect(outs[0]).not.toContain("AUTHSECRET123")
          expect(outs.filter((o) => o.includes("AUTHSECRET123") || /^glob: .*auth\.json/.test(o))).toEqual([])
        } finally {
          server.stop()
        }
      },
      { timeout: 300_000 },
    )
  })
}

// AF2b: HOME itself spelled through a link from the start (Fedora Silverblue: HOME=/home/<user>, /home -> var/home):
// a policy's `~/` rule is placed by the link spelling only; by the real path the file is read and searched.
for (const target of targets()) {
  describe(`a home reached through a link (red team AF2b) on stock opencode ${target.label}`, () => {
    test(
      "AF2b: a `~/.ssh` rule protects the key by the home's real path too (HOME spelled through a link)",
      async () => {
        await using project = await Harness.project({
          bin: target.bin,
          files: {
            ".opencode-security.json": JSON.stringify({
              version: "1.0",
              rules: [{ pattern: "~/.ssh", type: "directory", deniedOperations: ["read", "llm"], allowedRoles: [] }],
            }),
          },
        })
        const realHome = project.env.HOME
        const link = path.join(project.root, "homelink")
        fs.symlinkSync(realHome, link)
        project.env.HOME = link
        fs.mkdirSync(path.join(realHome, ".ssh"), { recursive: true })
        fs.writeFileSync(path.join(realHome, ".ssh/id_ed25519"), "SSHKEYSECRET456\n")
        const server = ModelServer.start([
          ModelServer.call("read", { filePath: path.join(link, ".ssh/id_ed25519") }),
          ModelServer.call("read", { filePath: path.join(realHome, ".ssh/id_ed25519") }),
          ModelServer.call("grep", { pattern: "SSHKEYSECRET", path: realHome }),
          ModelServer.text("done"),
        ])
        try {
          const run = await Harness.run(project, server, "look", { timeoutMs: 180_000 })
          const outs = run.tools.map((t) => `${t.tool}: ${(t.output ?? t.error ?? "").slice(0, 160)}`)
          expect(outs.length).toBe(3)
          expect(outs[0]).not.toContain("SSHKEYSECRET456") // control: the link spelling is refused
          expect(outs.filter((o) => o.includes("SSHKEYSECRET456"))).toEqual([])
        } finally {
          server.stop()
        }
      },
      { timeout: 300_000 },
    )
  })
}
