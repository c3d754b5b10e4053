// Red team AA7 on the stock binaries: grep's count and truncation note (and glob's) said whether a regex matched a
// read-denied file or a read-protected segment, one guess per call (1.18 runs ripgrep with --no-config, so the
// layer's RIPGREP_CONFIG_PATH exclusions did nothing; 1.2.15 searched `/proc/self/root<project>` past them; segments
// were searched on every version). The after hook now puts the layer's contained search in place of OpenCode's result
// (`SecuritySearch`). The public-match count that puts one more match at OpenCode's limit depends on the version:
// 1.18 calls exactly 100 results truncated, 1.2.15 more than 100.
import { describe, expect, test } from "bun:test"
import fs from "fs"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets, type Target } from "./targets"

/** The public files that bring a right guess to OpenCode's limit on this binary. */
async function publicCount(target: Target) {
  const version = target.version === "custom" ? await Harness.version(target.bin) : target.version
  return version.startsWith("1.2.") ? 100 : 99
}

const head = (o: string) => o.split("\n")[0] + (o.includes("truncated") ? " +truncated-note" : "")

async function guesses(
  target: Target,
  files: Record<string, string>,
  calls: { tool: string; args: Record<string, unknown> }[],
) {
  const n = await publicCount(target)
  for (let i = 0; i < n; i++) files[`p/f${String(i).padStart(3, "0")}.txt`] = "PUBX\n"
  await using project = await Harness.project({ bin: target.bin, files })
  const root = fs.realpathSync(project.dir)
  const resolved = calls.map((c) => ({
    tool: c.tool,
    args: Object.fromEntries(
      Object.entries(c.args).map(([k, v]) => [k, typeof v === "string" ? v.replace("<root>", root) : v]),
    ),
  }))
  const server = ModelServer.start([...resolved.map((c) => ModelServer.call(c.tool, c.args)), ModelServer.text("done")])
  try {
    const run = await Harness.run(project, server, "search", { timeoutMs: 180_000 })
    return { n, outs: run.tools.filter((t) => t.tool === calls[0].tool).map((t) => t.output ?? t.error ?? "") }
  } finally {
    server.stop()
  }
}

for (const target of targets()) {
  describe(`red team AA7 on stock opencode ${target.label}`, () => {
    test(
      "AA7: grep's count and truncation note do not answer whether a guess matches .env (project path and /proc/self/root<project>)",
      async () => {
        const { n, outs } = await guesses(
          target,
          {
            ".opencode-security.json": JSON.stringify({
              version: "1.0",
              rules: [{ pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
            }),
            ".env": "DATABASE_PASSWORD=Hq83kfP2mZ0xQ7vB\n",
          },
          [
            { tool: "grep", args: { pattern: "PUBX|PASSWORD=Hq8", path: "/proc/self/root<root>" } },
            { tool: "grep", args: { pattern: "PUBX|PASSWORD=Zz9", path: "/proc/self/root<root>" } },
            { tool: "grep", args: { pattern: "PUBX|PASSWORD=Hq8", path: "<root>" } },
            { tool: "grep", args: { pattern: "PUBX|PASSWORD=Zz9", path: "<root>" } },
          ],
        )
        expect(outs.length).toBe(4)
        expect(outs.some((o) => o.includes("Hq83kfP2mZ0xQ7vB"))).toBe(false)
        expect(outs.map(head)).toEqual(Array(4).fill(`Found ${n} matches`))
        expect([outs[0], outs[2]]).toEqual([outs[1], outs[3]])
      },
      { timeout: 300_000 },
    )
  })

  describe(`red team AA7b on stock opencode ${target.label}`, () => {
    test(
      "AA7b: grep's truncation note does not answer whether a guess matches a read-protected segment",
      async () => {
        const { n, outs } = await guesses(
          target,
          {
            ".opencode-security.json": JSON.stringify({
              version: "1.0",
              segments: {
                markers: [
                  { start: "@secure-start", end: "@secure-end", deniedOperations: ["read", "llm"], allowedRoles: [] },
                ],
              },
            }),
            "src/app.ts":
              'export const a = 1\n// @secure-start\nconst pricing = "Kd93mVx71LqPz0Rw"\n// @secure-end\nexport const b = 2\n',
          },
          [
            { tool: "grep", args: { pattern: "PUBX|pricing = .Kd9", path: "<root>" } },
            { tool: "grep", args: { pattern: "PUBX|pricing = .Zz9", path: "<root>" } },
          ],
        )
        expect(outs.length).toBe(2)
        expect(outs.some((o) => o.includes("Kd93mVx71LqPz0Rw"))).toBe(false)
        expect(head(outs[0])).toBe(`Found ${n} matches`)
        expect(outs[0]).toBe(outs[1])
      },
      { timeout: 300_000 },
    )
  })

  describe(`red team AA7c on stock opencode ${target.label}`, () => {
    test(
      "AA7c: glob's truncation note does not answer whether a name exists under a read-denied folder",
      async () => {
        const { outs } = await guesses(
          target,
          {
            ".opencode-security.json": JSON.stringify({
              version: "1.0",
              rules: [
                { pattern: "secrets/**", type: "directory", deniedOperations: ["read", "llm"], allowedRoles: [] },
              ],
            }),
            "secrets/aws-prod.key": "TOPSECRET-AA\n",
          },
          [
            { tool: "glob", args: { pattern: "{p/*,secrets/aws*}" } },
            { tool: "glob", args: { pattern: "{p/*,secrets/zz*}" } },
            { tool: "glob", args: { pattern: "{p/*,secrets/aws*}", path: "/proc/self/root<root>" } },
            { tool: "glob", args: { pattern: "{p/*,secrets/zz*}", path: "/proc/self/root<root>" } },
          ],
        )
        expect(outs.length).toBe(4)
        expect(outs.some((o) => o.includes("aws-prod"))).toBe(false)
        expect([outs[0], outs[2]]).toEqual([outs[1], outs[3]])
      },
      { timeout: 300_000 },
    )
  })
}
