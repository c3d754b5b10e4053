// Red team CC (e2e): the product's own features as channels, through real stock OpenCode.
import { describe, expect, test } from "bun:test"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const PHRASE = "readme segment phrase alpha"
const README = "# pkg\nPublic intro of the package.\n<!-- @secure-start -->\n" + PHRASE + "\n<!-- @secure-end -->\nok\n"
const le = (s: string) => new Uint8Array(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, "utf16le")]))
const POLICY = JSON.stringify({
  version: "1.0",
  roles: [
    { name: "viewer", level: 10 },
    { name: "admin", level: 100 },
  ],
  rules: [],
  segments: {
    markers: [
      { start: "@secure-start", end: "@secure-end", deniedOperations: ["read", "llm"], allowedRoles: ["admin"] },
    ],
  },
})
/** What a model reads: NULs and replacement characters mean nothing to it. */
const plain = (s: string) => s.replace(/\\u0000|\u0000|\uFFFD|\\ufffd/gi, "")

for (const target of targets()) {
  describe(`CC1 on stock opencode ${target.label}`, () => {
    test(
      "CC1 a UTF-16 README's read-protected segment does not reach the model through README injection",
      async () => {
        await using project = await Harness.project({
          bin: target.bin,
          files: { ".opencode-security.json": POLICY, "pkg/x.ts": "export const x = 1\n", "pkg/README.md": le(README) },
        })
        const d = project.dir
        const server = ModelServer.start([
          ModelServer.calls({ name: "read", args: { filePath: path.join(d, "pkg/x.ts") } }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "Read pkg/x.ts", { timeoutMs: 200_000 })
          const read = result.tools.find((t) => t.tool === "read")
          expect(read?.status).toBe("completed")
          // The read result the model got (second agent turn).
          const sent = server
            .turns()
            .map((r) => JSON.stringify(r.body))
            .join("\n")
          if (process.env.CC_SHOW) console.log(read?.output)
          const shown = plain(sent)
          const at = shown.indexOf("README from:")
          expect(at).toBeGreaterThan(-1)
          expect(shown.slice(at, at + 400)).not.toContain(PHRASE)
        } finally {
          server.stop?.()
        }
      },
      { timeout: 240_000 },
    )
  })
}

// CC2: the lsp tool without the kernel sandbox (mode off): an answer located on a read-protected segment's line of a
// UTF-16 file is shown, with that line as context (for a UTF-8 file it is left out with a note).
const WIDE = [
  "export const open = 1",
  "// @secure-start",
  'export const vaultPin = "4711 the wide pin value"',
  "// @secure-end",
  "export const tail = 2",
  "",
].join("\n")
const TSCONFIG = JSON.stringify({
  compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "ESNext", moduleResolution: "Bundler" },
  include: ["src"],
})

for (const target of targets()) {
  describe(`CC2 on stock opencode ${target.label}`, () => {
    test(
      "CC2 sandbox off: lsp goToDefinition into a UTF-16 file does not show its read-protected segment's line",
      async () => {
        const policy = JSON.parse(POLICY)
        policy.sandbox = { mode: "off" }
        await using project = await Harness.project({
          bin: target.bin,
          files: {
            ".opencode-security.json": JSON.stringify(policy),
            "package.json": '{ "name": "p", "private": true, "type": "module" }\n',
            "tsconfig.json": TSCONFIG,
            "src/use.ts": 'import { vaultPin } from "./wide"\nexport const copy = vaultPin\n',
            "src/wide.ts": le(WIDE),
          },
        })
        const server = ModelServer.start([
          ModelServer.call("lsp", { operation: "goToDefinition", filePath: "src/use.ts", line: 2, character: 22 }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "Where is vaultPin defined?", { timeoutMs: 150_000 })
          const lsp = result.tools.find((t) => t.tool === "lsp")
          if (process.env.CC_SHOW) console.log(lsp?.status, plain(lsp?.output ?? ""))
          expect(lsp?.status).toBe("completed")
          const sent = plain(
            server
              .turns()
              .map((r) => JSON.stringify(r.body.messages))
              .join("\n"),
          )
          expect(sent).toContain("goToDefinition")
          expect(sent).not.toContain("wide pin value")
        } finally {
          server.stop()
        }
      },
      { timeout: 240_000 },
    )
  })
}

// CC7: the agent's İ line above a read-protected segment: SecuritySegments.find (markers matched on
// text.toLowerCase(), whose offsets differ from the text's after each İ) no longer finds the segment where it is.
const SHORT = ["export const a = 1", "// @secure-start", "k=4711", "// @secure-end", "export const b = 2", ""].join(
  "\n",
)
const TURKISH = "// " + "İ".repeat(30)

for (const target of targets()) {
  describe(`CC7 on stock opencode ${target.label}`, () => {
    test(
      "CC7 an edit adding a line of İ above a read-protected segment does not make the segment's line readable",
      async () => {
        await using project = await Harness.project({
          bin: target.bin,
          files: { ".opencode-security.json": POLICY, "src/seg.ts": SHORT },
        })
        const file = path.join(project.dir, "src/seg.ts")
        const server = ModelServer.start([
          ModelServer.calls({ name: "read", args: { filePath: file } }),
          ModelServer.calls({
            name: "edit",
            args: { filePath: file, oldString: "export const a = 1", newString: `${TURKISH}\nexport const a = 1` },
          }),
          ModelServer.calls({ name: "read", args: { filePath: file } }),
          ModelServer.calls({ name: "bash", args: { command: "cat src/seg.ts", description: "show the file" } }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "Add a Turkish comment to src/seg.ts", {
            timeoutMs: 150_000,
          })
          if (process.env.CC_SHOW) for (const t of result.tools) console.log(t.tool, t.status, t.output)
          expect(result.tools.map((t) => [t.tool, t.status])).toEqual([
            ["read", "completed"],
            ["edit", "completed"],
            ["read", "completed"],
            ["bash", "completed"],
          ])
          const sent = server
            .turns()
            .map((r) => JSON.stringify(r.body.messages))
            .join("\n")
          expect(sent).not.toContain("k=4711")
        } finally {
          server.stop()
        }
      },
      { timeout: 240_000 },
    )
  })
}

// CC7d: the same shift against a write-protected segment: after an İ line above it, a command changes the locked line.
const LOCKED = ["a = 1", "# @locked-start", "LOCKED = 42", "# @locked-end", "b = 2", ""].join("\n")
const LOCKED_POLICY = JSON.stringify({
  version: "1.0",
  rules: [],
  segments: {
    markers: [{ start: "@locked-start", end: "@locked-end", deniedOperations: ["write"], allowedRoles: [] }],
  },
})

for (const target of targets()) {
  describe(`CC7d on stock opencode ${target.label}`, () => {
    test(
      "CC7d after an edit adding a line of İ above a write-protected segment, a command cannot change the locked line",
      async () => {
        await using project = await Harness.project({
          bin: target.bin,
          files: { ".opencode-security.json": LOCKED_POLICY, "src/locked.py": LOCKED },
        })
        const file = path.join(project.dir, "src/locked.py")
        const server = ModelServer.start([
          ModelServer.calls({ name: "read", args: { filePath: file } }),
          ModelServer.calls({
            name: "edit",
            args: { filePath: file, oldString: "a = 1", newString: `# ${"İ".repeat(20)}\na = 1` },
          }),
          ModelServer.calls({
            name: "bash",
            args: { command: "sed -i 's/LOCKED = 42/LOCKED = 0/' src/locked.py; echo rc=$?", description: "tweak" },
          }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "Tweak src/locked.py", { timeoutMs: 150_000 })
          if (process.env.CC_SHOW) for (const t of result.tools) console.log(t.tool, t.status, t.output)
          expect(result.tools.map((t) => t.status)).toEqual(["completed", "completed", "completed"])
          expect(await Bun.file(file).text()).toContain("LOCKED = 42")
        } finally {
          server.stop()
        }
      },
      { timeout: 240_000 },
    )
  })
}
