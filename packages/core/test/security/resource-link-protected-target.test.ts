import { describe, expect, test } from "bun:test"
import path from "path"
import OpencodeBuiltins from "../../../plugin/index"
import { pluginInput } from "../../../plugin/test/input"
import { ResourceLoader } from "../../resource/loader"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import { connect, isolateUserFolders } from "../mcp/client"

// A knowledge-base page linking into a read-denied folder: the resource tools said "a file of the project, not a
// resource" for a target that exists and "no such resource" for one that does not, so the link told whether a file
// the sandbox hides from commands exists. The output filter (plugin route and MCP server) removes a line naming a
// protected path, but resource-query's one-line JSON was removed only for the missing target (red team Z3 suspicion,
// confirmed). The index now checks the files links name like the ones it scans: a denied one counts as missing,
// whether it exists or not, so every route answers alike.
const TIMEOUT = { timeout: 60_000 }

const POLICY = JSON.stringify({
  version: "1.0",
  roles: [{ name: "viewer", level: 10 }],
  rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "llm"] }],
})
const page = (target: string) =>
  `---\ntitle: Probe notes\ndescription: Probe notes for the zebra rollout\ntags: [zebra]\n---\nSee [plan](../../secrets/${target}).\n`
const PROJECT = {
  ".opencode-security.json": POLICY,
  ".opencode/knowledge-base/probe-a.md": page("plan.md"),
  ".opencode/knowledge-base/probe-b.md": page("nope.md"),
  "secrets/plan.md": "# Plan\nzebra rollout plan\n",
}
/** One answer with the two pages' own names made alike: what is left is what the link's target changed. */
const alike = (text: string) =>
  text
    .replace(/\b[0-9a-f]{8,}\b/g, "<hex>")
    .replace(/probe-[ab]/g, "probe")
    .replace(/plan\.md|nope\.md/g, "target.md")
    .replace(/\d+ B\b|"size":\d+|"tokens":\d+/g, "<n>")

isolateUserFolders()

describe("a resource link to a read-denied file: the answer does not tell whether the file exists", () => {
  test(
    "MCP server (the SDK's client against the real server process): resource-load and resource-query",
    async () => {
      // One project per target, so that resource-query's whole answer can be compared.
      const answers = async (target: string) => {
        await using dir = await tmpdir({ ...PROJECT, ".opencode/knowledge-base/probe-b.md": page(target) })
        await using mcp = await connect(dir.path)
        return {
          load: (await mcp.call("resource-load", { id: "probe-b", includeReferences: true })).text,
          query: (await mcp.call("resource-query", { query: "zebra" })).text,
        }
      }
      const existing = await answers("plan.md")
      const missing = await answers("nope.md")
      expect(existing.load).toContain("Probe notes")
      expect(existing.load).not.toContain("a file of the project")
      expect(alike(existing.load)).toBe(alike(missing.load))
      // Before the fix resource-query answered in full for the existing target and, for the missing one, the
      // server's output filter removed the whole JSON line (its dangling-reference warning names the path).
      expect(alike(existing.query)).toBe(alike(missing.query))
    },
    TIMEOUT,
  )

  test(
    "plugin route: the tools' own output, before the output filter",
    async () => {
      await using dir = await tmpdir(PROJECT)
      const hooks = (await OpencodeBuiltins(pluginInput(dir.path).input)) as Record<string, any>
      const ctx = { sessionID: "ses_p", messageID: "msg_p", agent: "build", abort: new AbortController().signal }
      const a = await hooks.tool["resource-load"].execute({ id: "probe-a", includeReferences: true }, ctx)
      const b = await hooks.tool["resource-load"].execute({ id: "probe-b", includeReferences: true }, ctx)
      expect(a).toContain("Probe notes")
      expect(alike(a)).toBe(alike(b))
      expect(a).not.toContain("a file of the project")
    },
    TIMEOUT,
  )

  test("core (as the fork calls it): the loader with the host's access check", async () => {
    await using dir = await tmpdir(PROJECT)
    const secrets = dir.file("secrets") + path.sep
    const host = {
      directory: dir.path,
      worktree: dir.path,
      log: Logger.silent,
      access: async (p: string) => (p.startsWith(secrets) ? "protected by the security policy" : undefined),
      accessVersion: () => 1,
    }
    const loader = ResourceLoader.create(host)
    const a = await loader.load({ id: "probe-a", includeReferences: true }, { sessionID: "s", messageID: "m" })
    const b = await loader.load({ id: "probe-b", includeReferences: true }, { sessionID: "s2", messageID: "m2" })
    expect(alike(a)).toBe(alike(b))
    // Without a check (no policy), an existing file is still told apart from a missing one, as before.
    const open = ResourceLoader.create({ directory: dir.path, worktree: dir.path, log: Logger.silent })
    expect(await open.load({ id: "probe-a", includeReferences: true }, { sessionID: "s", messageID: "m" })).toContain(
      "a file of the project",
    )
  })
})
