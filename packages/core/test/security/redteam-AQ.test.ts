// Red team AQ1 on both routes: OpenCode (Bun) in a project folder whose name is not UTF-8 hands us the U+FFFD reading
// of its path, which names no folder. The features made it (mkdir -p of `<twin>/.opencode/builtins-local`) beside the
// project and wrote their state there, and the security layer found no policy in it: every call ran unguarded. Now
// nothing of ours starts there, nothing is made, and every tool call is refused with `SecurityFolderUnusable`.
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import OpencodeBuiltins from "../../../plugin/index"
import { BuiltinsSeams } from "../../builtins"
import { Logger } from "../../util/log"
import { notUtf8Project, tmpdir } from "../fixture"

const POLICY = JSON.stringify({
  version: "1.0",
  roles: [{ name: "viewer", level: 1 }],
  rules: [{ pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
})

type Route = "plugin" | "fork"

/** The composition for `directory` as the route builds it; `before` is a tool call's before hook. */
async function start(route: Route, directory: string) {
  if (route === "plugin") {
    const client = { app: { log: async () => {} }, session: { messages: async () => ({ data: [] }) } }
    const input = { client, directory, worktree: directory, project: {}, serverUrl: new URL("http://x"), $: {} }
    const hooks: any = await OpencodeBuiltins(input as never)
    await hooks.config?.({})
    return {
      before: (tool: string, args: unknown) =>
        hooks["tool.execute.before"]?.({ tool, sessionID: "s", callID: "c" }, { args }),
      tools: Object.keys(hooks.tool ?? {}),
      mcpAllowed: undefined as ((server: string) => boolean) | undefined,
    }
  }
  const host = { directory, worktree: directory, log: Logger.silent, messages: async () => [] }
  const seams = await BuiltinsSeams.create(host, { options: {}, logger: () => Logger.silent })
  await seams.config({})
  return {
    before: (tool: string, args: unknown) =>
      seams.trigger("tool.execute.before", { tool, sessionID: "s", callID: "c" }, { args }, async () => {}),
    tools: Object.keys(seams.tools),
    mcpAllowed: seams.mcpAllowed,
  }
}

/** The calls a hostile model would try: the protected file by the U+FFFD path and by `/proc/self/cwd`, a command. */
function attempts(dir: string): [string, Record<string, unknown>][] {
  return [
    ["read", { filePath: path.join(dir, ".env") }],
    ["read", { filePath: "/proc/self/cwd/.env" }],
    ["bash", { command: "cat ../caf?/.env", description: "read" }],
    ["grep", { pattern: "S=", path: "/proc/self/cwd" }],
    ["some_plugin_tool", { file: ".env" }],
  ]
}

for (const route of ["plugin", "fork"] as Route[]) {
  describe(`route ${route}: AQ1 a project folder whose path is not UTF-8`, () => {
    for (const twin of [false, true])
      test(`nothing starts or is made beside it, every tool call is refused naming why${twin ? " (its U+FFFD twin exists)" : ""}`, async () => {
        await using dir = await tmpdir()
        const project = notUtf8Project(dir.path, { ".opencode-security.json": POLICY, ".env": "S=1\n" })
        if (twin) project.twin()
        const s = await start(route, project.path)
        for (const [tool, args] of attempts(project.path)) {
          const error = await s.before(tool, args).then(
            () => undefined,
            (e: unknown) => e,
          )
          expect({ tool, refused: (error as Error | undefined)?.name === "SecurityFolderUnusable" }).toEqual({
            tool,
            refused: true,
          })
          expect((error as Error).message).toContain("is not valid UTF-8 text")
        }
        expect(s.tools).toEqual([])
        if (s.mcpAllowed) expect(s.mcpAllowed("docs")).toBe(false)
        // The project folder alone (and the twin, left empty, when there was one): no state folder was made.
        expect(project.entries().length).toBe(twin ? 2 : 1)
        if (twin) expect(fs.readdirSync(project.path)).toEqual([])
      })

    test("a project folder that does not exist is not made, and every tool call is refused", async () => {
      await using dir = await tmpdir()
      const gone = dir.file("gone")
      const s = await start(route, gone)
      const error = await s.before("read", { filePath: path.join(gone, ".env") }).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect((error as Error | undefined)?.name === "SecurityFolderUnusable").toBe(true)
      expect((error as Error).message).toContain(`${gone} does not exist`)
      expect(fs.existsSync(gone)).toBe(false)
    })
  })
}
