import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Init } from "../../init/init"
import { run } from "../../init/cli"
import { ResourceLint } from "../../resource/lint"
import { memoryIO } from "../../util/cli"
import { tmpdir } from "../fixture"
import { bunSpawnSync } from "../spawn-sync"

/** Every file under `dir` with its content (relative paths, sorted). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const rel of (fs.readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const full = path.join(dir, rel)
    if (fs.statSync(full).isFile()) out[rel] = fs.readFileSync(full, "utf8")
  }
  return out
}

async function init(dir: string, ...argv: string[]) {
  const io = memoryIO(dir)
  const code = await run(argv, io)
  return { code, out: io.stdout, err: io.stderr }
}

const JSONC = `// Project configuration
{
\t"$schema": "https://opencode.ai/config.json",
\t/* the model we pay for */
\t"model": "anthropic/claude-sonnet-4",
\t"plugin": [
\t\t"opencode-wakatime", // time tracking
\t],
\t"theme": "tokyonight",
}
`

describe("opencode-builtins init", () => {
  test("an empty project: opencode.json with the plugin, one valid example per resource folder, .gitignore", async () => {
    await using dir = await tmpdir({})
    const first = await init(dir.path)
    expect(first.code).toBe(0)
    const files = snapshot(dir.path)
    expect(Object.keys(files)).toEqual([
      ".gitignore",
      ".opencode/checklist/example-checklist.md",
      ".opencode/knowledge-base/example-article.md",
      ".opencode/schema/example-schema.json",
      ".opencode/task/example-task.md",
      ".opencode/template/example-template.md",
      "opencode.json",
    ])
    expect(JSON.parse(files["opencode.json"])).toEqual({
      $schema: "https://opencode.ai/config.json",
      plugin: ["opencode-builtins"],
    })
    expect(files[".gitignore"]).toContain(".opencode/builtins-local/\n")
    const lint = await ResourceLint.run(dir.path, dir.path)
    expect(lint.problems).toEqual([])
    expect(lint.resources).toBe(5)

    const second = await init(dir.path)
    expect(second).toEqual({ code: 0, out: "Already set up: nothing to change.\n", err: "" })
    expect(snapshot(dir.path)).toEqual(files)
  })

  test("opencode.jsonc with comments, trailing commas, tabs and its own key order: only the plugin list changes", async () => {
    await using dir = await tmpdir({ "opencode.jsonc": JSONC })
    expect((await init(dir.path)).code).toBe(0)
    expect(fs.existsSync(dir.file("opencode.json"))).toBe(false)
    expect(fs.readFileSync(dir.file("opencode.jsonc"), "utf8")).toBe(
      JSONC.replace(
        `\t\t"opencode-wakatime", // time tracking\n`,
        `\t\t"opencode-wakatime", // time tracking\n\t\t"opencode-builtins",\n`,
      ),
    )
    const again = snapshot(dir.path)
    expect((await init(dir.path)).out).toBe("Already set up: nothing to change.\n")
    expect(snapshot(dir.path)).toEqual(again)
  })

  test("a project configured in .opencode/opencode.jsonc (as OpenCode's own repository is) gets the entry there; none at the root", async () => {
    const text = '{\n  // project config lives here\n  "plugin": ["opencode-wakatime"]\n}\n'
    await using dir = await tmpdir({ ".opencode/opencode.jsonc": text })
    const result = await init(dir.path)
    expect(result.code).toBe(0)
    expect(fs.existsSync(dir.file("opencode.json"))).toBe(false)
    const after = fs.readFileSync(dir.file(".opencode/opencode.jsonc"), "utf8")
    expect(after).toContain("// project config lives here")
    expect(after).toMatch(/"opencode-wakatime",\s*"opencode-builtins"/)
    const again = snapshot(dir.path)
    expect((await init(dir.path)).out).toBe("Already set up: nothing to change.\n")
    expect(snapshot(dir.path)).toEqual(again)
  })

  test("an entry already in .opencode/opencode.json counts as present; a broken one there is named by its path", async () => {
    await using dir = await tmpdir({ ".opencode/opencode.json": '{ "plugin": ["opencode-builtins@0.1.0"] }\n' })
    const before = snapshot(dir.path)
    expect((await init(dir.path, "--dry-run")).out).not.toContain("opencode.json")
    expect(snapshot(dir.path)).toEqual(before)
    await using broken = await tmpdir({ ".opencode/opencode.json": '{ "plugin": "opencode-builtins" }\n' })
    const result = await init(broken.path)
    expect(result.code).toBe(1)
    expect(result.err).toContain('.opencode/opencode.json: "plugin" is not an array')
  })

  test("a .jsonc without a plugin key gets one; CRLF line endings are kept", async () => {
    const text = '{\r\n  // keep me\r\n  "model": "x/y"\r\n}\r\n'
    await using dir = await tmpdir({ "opencode.jsonc": text })
    await init(dir.path)
    const after = fs.readFileSync(dir.file("opencode.jsonc"), "utf8")
    expect(after).toContain("// keep me")
    expect(after.replace(/\r\n/g, "")).not.toContain("\n")
    expect(after).toBe('{\r\n  // keep me\r\n  "model": "x/y",\r\n  "plugin": ["opencode-builtins"]\r\n}\r\n')
  })

  test("only the new entry is added: the other keys keep their bytes (real files: Bakrog/subtask2, a context7 MCP entry)", async () => {
    // Bakrog/subtask2's .opencode/opencode.jsonc as published: jsonc-parser's formatted insertion re-wrote the
    // instructions line over three lines (a tester's report).
    const subtask2 = '{\n  "$schema": "https://opencode.ai/config.json",\n  "instructions": ["README.md"],\n}\n'
    await using dir = await tmpdir({ ".opencode/opencode.jsonc": subtask2 })
    await init(dir.path)
    expect(fs.readFileSync(dir.file(".opencode/opencode.jsonc"), "utf8")).toBe(
      '{\n  "$schema": "https://opencode.ai/config.json",\n  "instructions": ["README.md"],\n  "plugin": ["opencode-builtins"],\n}\n',
    )
    const servers =
      '{\n  "$schema": "https://opencode.ai/config.json",\n  // servers\n  "mcp": {\n    "context7": { "type": "remote", "url": "https://mcp.context7.com/mcp" } // docs\n  },\n  "plugin": ["opencode-wakatime"]\n}\n'
    await using mcp = await tmpdir({ "opencode.jsonc": servers })
    await init(mcp.path, "--mcp")
    expect(fs.readFileSync(mcp.file("opencode.jsonc"), "utf8")).toBe(
      servers.replace(
        " // docs\n",
        ', // docs\n    "opencode-builtins": {\n      "type": "local",\n      "command": ["npx", "-y", "opencode-builtins", "mcp"]\n    }\n',
      ),
    )
    // An object written on one line gets the entry on that line; tabs are kept.
    await using flat = await tmpdir({ "opencode.json": '{ "mcp": { "a": { "type": "remote", "url": "u" } } }\n' })
    await init(flat.path, "--mcp")
    expect(fs.readFileSync(flat.file("opencode.json"), "utf8")).toBe(
      '{ "mcp": { "a": { "type": "remote", "url": "u" }, "opencode-builtins": { "type": "local", "command": ["npx", "-y", "opencode-builtins", "mcp"] } } }\n',
    )
    await using tabs = await tmpdir({ "opencode.json": '{\n\t"model": "x/y"\n}\n' })
    await init(tabs.path, "--mcp")
    expect(fs.readFileSync(tabs.file("opencode.json"), "utf8")).toBe(
      '{\n\t"model": "x/y",\n\t"mcp": {\n\t\t"opencode-builtins": {\n\t\t\t"type": "local",\n\t\t\t"command": ["npx", "-y", "opencode-builtins", "mcp"]\n\t\t}\n\t}\n}\n',
    )
  })

  test("invalid JSONC is refused with its position and nothing is written", async () => {
    await using dir = await tmpdir({ "opencode.jsonc": '{\n  "plugin": ["a"\n  "model": "x"\n}\n' })
    const before = snapshot(dir.path)
    const result = await init(dir.path)
    expect(result.code).toBe(1)
    expect(result.err).toContain("opencode.jsonc: line 3, column 3: expected ',' between two entries (not valid JSONC)")
    expect(result.err).toContain("nothing was written")
    expect(snapshot(dir.path)).toEqual(before)
  })

  test("a folder argument that is a file or missing is bad usage (exit 2) naming it", async () => {
    await using dir = await tmpdir({ "a-file": "x\n" })
    const file = await init(dir.path, "a-file")
    expect(file.code).toBe(2)
    expect(file.err).toBe(`init: ${dir.file("a-file")} is not a directory (it is a file)\n`)
    const missing = await init(dir.path, "missing")
    expect(missing.code).toBe(2)
    expect(missing.err).toBe(`init: ${dir.file("missing")} does not exist\n`)
    expect(snapshot(dir.path)).toEqual({ "a-file": "x\n" })
  })

  test("a folder named .gitignore, opencode.json or opencode.jsonc is refused naming it, nothing written", async () => {
    for (const name of [".gitignore", "opencode.json", "opencode.jsonc"]) {
      await using dir = await tmpdir({ [`${name}/inside`]: "x\n" })
      const before = snapshot(dir.path)
      const result = await init(dir.path)
      expect(result.code).toBe(1)
      expect(result.err).toBe(
        `init: ${dir.file(name)} is a folder where a file is expected: move it away and run init again; nothing was written\n`,
      )
      expect(result.out).toBe("")
      expect(snapshot(dir.path)).toEqual(before)
    }
  })

  test("a .gitignore or opencode.json that is not UTF-8 is refused naming it, nothing written (no U+FFFD)", async () => {
    // Read as "utf8" and appended to, a Latin-1 .gitignore came back with U+FFFD for each accented letter.
    for (const [name, text] of [
      [".gitignore", "# Généré par l'équipe\nnode_modules/\n"],
      ["opencode.json", '{ "model": "x", "username": "José" }\n'],
    ]) {
      await using dir = await tmpdir({ [name]: Buffer.from(text, "latin1") })
      const result = await init(dir.path)
      expect(result.code).toBe(1)
      expect(result.err).toStartWith(`init: ${dir.file(name)} is not UTF-8 text (byte `)
      expect(result.err).toEndWith("; nothing was written\n")
      expect(fs.readdirSync(dir.path)).toEqual([name])
      expect(fs.readFileSync(dir.file(name))).toEqual(Buffer.from(text, "latin1"))
    }
  })

  test("an opencode.json starting with a UTF-8 byte-order mark is edited and keeps the mark", async () => {
    await using dir = await tmpdir({ "opencode.json": '\uFEFF{\n  "model": "x"\n}\n' })
    const result = await init(dir.path)
    expect(result.code).toBe(0)
    const text = fs.readFileSync(dir.file("opencode.json"), "utf8")
    expect(text.startsWith("\uFEFF{")).toBe(true)
    expect(JSON.parse(text.slice(1))).toEqual({ model: "x", plugin: ["opencode-builtins"] })
    expect((await init(dir.path)).out).toBe("Already set up: nothing to change.\n")
  })

  test("a file changed between the read and the write is not overwritten: apply refuses, setup plans again", async () => {
    await using dir = await tmpdir({ "opencode.json": '{\n  "model": "x"\n}\n' })
    // Another init (--mcp) lands its edit after this one read the file and before it renames its own.
    const other = () =>
      fs.writeFileSync(dir.file("opencode.json"), '{\n  "model": "x",\n  "mcp": { "opencode-builtins": {} }\n}\n')
    const plan = Init.plan(dir.path)
    if (!plan.ok) throw new Error(plan.error)
    let thrown: unknown
    try {
      Init.apply(plan.changes, { beforeCommit: other })
    } catch (error) {
      thrown = error
    }
    expect(Init.ChangedError.is(thrown)).toBe(true)
    expect((thrown as Error).message).toBe(
      `${dir.file("opencode.json")} changed while init was running (another init, or an editor?); nothing was changed`,
    )
    expect(Object.keys(snapshot(dir.path))).toEqual(["opencode.json"])
    expect(JSON.parse(fs.readFileSync(dir.file("opencode.json"), "utf8"))).toEqual({
      model: "x",
      mcp: { "opencode-builtins": {} },
    })

    fs.writeFileSync(dir.file("opencode.json"), '{\n  "model": "x"\n}\n')
    let calls = 0
    const done = Init.setup(dir.path, {}, { beforeCommit: () => calls++ === 0 && other() })
    expect(done.ok).toBe(true)
    expect(calls).toBe(2)
    expect(JSON.parse(fs.readFileSync(dir.file("opencode.json"), "utf8"))).toEqual({
      model: "x",
      mcp: { "opencode-builtins": {} },
      plugin: ["opencode-builtins"],
    })
    expect(snapshot(dir.path)[".gitignore"]).toContain(".opencode/builtins-local/")
  })

  test("a new file that appears after the check is never replaced: the files linked so far are taken back", async () => {
    await using dir = await tmpdir({})
    const plan = Init.plan(dir.path)
    if (!plan.ok) throw new Error(plan.error)
    expect(plan.changes.filter((c) => c.action === "create").length).toBeGreaterThanOrEqual(2)
    const mine = '{\n  "model": "mine"\n}\n'
    let thrown: unknown
    try {
      // Another program creates opencode.json between the check and the moment this run puts its files in place.
      Init.apply(plan.changes, { afterCheck: () => fs.writeFileSync(dir.file("opencode.json"), mine) })
    } catch (error) {
      thrown = error
    }
    expect(Init.ChangedError.is(thrown)).toBe(true)
    expect(snapshot(dir.path)).toEqual({ "opencode.json": mine })
  })

  test('"plugin" of the wrong type is refused, nothing written', async () => {
    await using dir = await tmpdir({ "opencode.json": '{ "plugin": "opencode-builtins" }' })
    const before = snapshot(dir.path)
    expect((await init(dir.path)).code).toBe(1)
    expect(snapshot(dir.path)).toEqual(before)
  })

  test("--mcp adds the server entry (and only that); a second run changes nothing", async () => {
    await using dir = await tmpdir({
      "opencode.json": '{\n    "mcp": {\n        "docs": { "type": "remote", "url": "https://x" }\n    }\n}\n',
    })
    expect((await init(dir.path, "--mcp")).code).toBe(0)
    const config = JSON.parse(fs.readFileSync(dir.file("opencode.json"), "utf8"))
    expect(config.mcp).toEqual({ docs: { type: "remote", url: "https://x" }, "opencode-builtins": Init.MCP_ENTRY })
    expect(config.plugin).toBeUndefined()
    expect(fs.readFileSync(dir.file("opencode.json"), "utf8")).toContain('\n        "opencode-builtins": {')
    const files = snapshot(dir.path)
    expect((await init(dir.path, "--mcp")).out).toBe("Already set up: nothing to change.\n")
    expect(snapshot(dir.path)).toEqual(files)
    // The plugin next to the MCP entry would offer the tools twice: said, not refused.
    const both = await init(dir.path)
    expect(both.code).toBe(0)
    expect(both.err).toContain("twice")
  })

  test("appending keeps a comment on its element and the list's style (one line, trailing comma)", async () => {
    const cases: [string, string][] = [
      ['{ "plugin": ["a", "b"] }', '{ "plugin": ["a", "b", "opencode-builtins"] }'],
      ['{ "plugin": ["a",] }', '{ "plugin": ["a", "opencode-builtins",] }'],
      [
        '{\n  "plugin": [\n    "a" // why\n  ]\n}',
        '{\n  "plugin": [\n    "a", // why\n    "opencode-builtins"\n  ]\n}',
      ],
      [
        '{\n  "plugin": [\n    "a" /* x */,\n  ]\n}',
        '{\n  "plugin": [\n    "a" /* x */,\n    "opencode-builtins",\n  ]\n}',
      ],
      ['{ "plugin": [] }', '{ "plugin": ["opencode-builtins"] }'],
    ]
    for (const [before, after] of cases) {
      await using dir = await tmpdir({ "opencode.jsonc": before })
      await init(dir.path)
      expect(fs.readFileSync(dir.file("opencode.jsonc"), "utf8")).toBe(after)
    }
  })

  test("an existing plugin entry (versioned, with options, or a path) counts as present", async () => {
    for (const entry of [
      '"opencode-builtins@0.1.0"',
      '["opencode-builtins", {"resources": {}}]',
      '"file:///x/packages/plugin/index.ts"',
    ]) {
      await using dir = await tmpdir({
        "opencode.json": `{ "plugin": [${entry}] }`,
        ".opencode/task/mine.md": "# Mine\n",
      })
      const before = fs.readFileSync(dir.file("opencode.json"), "utf8")
      await init(dir.path)
      expect(fs.readFileSync(dir.file("opencode.json"), "utf8")).toBe(before)
    }
  })

  test("folders that exist get no example; .gitignore lines are appended once, its last line ended first", async () => {
    await using dir = await tmpdir({
      ".opencode/task/mine.md": "# Mine\n",
      ".gitignore": "node_modules\r\n.opencode-security-audit.log*",
    })
    const { out } = await init(dir.path, "--dry-run")
    expect(out).toContain("would create")
    expect(fs.existsSync(dir.file("opencode.json"))).toBe(false)
    await init(dir.path)
    expect(fs.readdirSync(dir.file(".opencode/task"))).toEqual(["mine.md"])
    expect(fs.readFileSync(dir.file(".gitignore"), "utf8")).toBe(
      "node_modules\r\n.opencode-security-audit.log*\r\n\r\n# opencode-builtins: local state (learnings, captured tool calls) and the security audit log\r\n.opencode/builtins-local/\r\n",
    )
  })

  test("a file that cannot be written leaves nothing behind: no config, no example, no staged file, a named error", async () => {
    // `.opencode` is a file, so the examples cannot be created; opencode.json comes first in the plan and must not be
    // left written alone, nor its staged copy.
    await using dir = await tmpdir({ ".opencode": "not a folder\n", ".gitignore": "node_modules\n" })
    const before = snapshot(dir.path)
    const plan = Init.plan(dir.path, { mcp: false })
    if (!plan.ok) throw new Error(plan.error)
    expect(plan.changes.map((c) => path.relative(dir.path, c.path))).toContain("opencode.json")
    let thrown: unknown
    try {
      Init.apply(plan.changes)
    } catch (error) {
      thrown = error
    }
    expect(Init.WriteError.is(thrown)).toBe(true)
    const error = thrown as InstanceType<typeof Init.WriteError>
    expect(error.data.path).toBe(dir.file(".opencode/checklist/example-checklist.md"))
    expect(error.message).toBe(
      `cannot write ${dir.file(".opencode/checklist/example-checklist.md")}: a file stands where a folder is needed; nothing was changed`,
    )
    expect(snapshot(dir.path)).toEqual(before)

    const cli = await init(dir.path)
    expect(cli.code).toBe(1)
    expect(cli.out).toBe("")
    expect(cli.err).toBe(`init: ${error.message}\n`)
    expect(snapshot(dir.path)).toEqual(before)
  })

  test("the edited config keeps its mode exactly under umask 022 (0664 stays 0664, not 0644; red team X11)", async () => {
    await using dir = await tmpdir({ "opencode.json": '{\n  "$schema": "https://opencode.ai/config.json"\n}\n' })
    fs.chmodSync(dir.file("opencode.json"), 0o664)
    const old = process.umask(0o022)
    try {
      Init.setup(dir.path)
    } finally {
      process.umask(old)
    }
    expect(fs.readFileSync(dir.file("opencode.json"), "utf8")).toContain("opencode-builtins")
    expect(fs.statSync(dir.file("opencode.json")).mode & 0o7777).toBe(0o664)
    expect(fs.readdirSync(dir.path).filter((f) => f.endsWith(".tmp"))).toEqual([])
  })

  test("folders a failed run made are removed again, folders that were there are kept", async () => {
    await using dir = await tmpdir({ "kept/old.md": "old\n", blocker: "a file\n" })
    const change = (rel: string): Init.Change => ({
      path: dir.file(rel),
      action: "create",
      summary: rel,
      text: `${rel}\n`,
    })
    const changes = [change("new/deep/a.md"), change("kept/b.md"), change("blocker/c.md")]
    expect(() => Init.apply(changes)).toThrow(
      `cannot write ${dir.file("blocker/c.md")}: a file stands where a folder is needed; nothing was changed`,
    )
    expect(snapshot(dir.path)).toEqual({ blocker: "a file\n", "kept/old.md": "old\n" })
    expect(fs.readdirSync(dir.path).sort()).toEqual(["blocker", "kept"])
  })
})

// Tester RX's RX5: changesets (a monorepo) set up at its root, then `init packages/cli` made a second setup there
// (opencode.json, five example resources, .gitignore) and said "Done", though OpenCode reads the root's
// configuration and `.opencode` folders from packages/cli too (it reads them up to the git root).
describe("init in a folder below one already set up", () => {
  /** A monorepo (a real git repository) of changesets' shape: packages/cli, packages/git. */
  async function monorepo(files: Record<string, string> = {}) {
    const dir = await tmpdir({
      "package.json": '{ "name": "changesets-monorepo", "private": true, "workspaces": ["packages/*"] }\n',
      "packages/cli/package.json": '{ "name": "@changesets/cli", "version": "2.0.0" }\n',
      "packages/cli/src/index.ts": "export const run = () => 0\n",
      "packages/git/package.json": '{ "name": "@changesets/git" }\n',
      ...files,
    })
    const git = bunSpawnSync(["git", "init", "-q", dir.path])
    expect(git.exitCode).toBe(0)
    return dir
  }
  /** Every file but git's own. */
  const files = (dir: string) =>
    Object.fromEntries(Object.entries(snapshot(dir)).filter(([rel]) => !rel.startsWith(".git" + path.sep)))

  test("changes nothing and says where it is set up, run after run and in a dry run; --standalone sets it up on its own, once", async () => {
    await using dir = await monorepo()
    expect((await init(dir.path)).code).toBe(0)
    const root = files(dir.path)
    expect(Object.keys(root)).toContain(".opencode/checklist/example-checklist.md")
    const cli = dir.file("packages/cli")
    const said =
      `Already set up in ${dir.file("opencode.json")}, which OpenCode reads from here too (it reads the ` +
      `configurations from this folder up to the git root, ${dir.path}): nothing to change. To set up this folder ` +
      "on its own as well, run init again with --standalone.\n"
    for (const argv of [[], [], ["--dry-run"]])
      expect(await init(cli, ...argv)).toEqual({ code: 0, out: said, err: "" })
    expect(files(dir.path)).toEqual(root)
    // Asked for: the folder's own configuration and .gitignore, but no second copy of the root's examples.
    const own = await init(cli, "--standalone")
    expect(own.code).toBe(0)
    expect(own.out).toStartWith("created  opencode.json: created with the plugin\ncreated  .gitignore: ignores ")
    const after = files(dir.path)
    expect(Object.keys(after).filter((f) => !(f in root))).toEqual([
      path.join("packages", "cli", ".gitignore"),
      path.join("packages", "cli", "opencode.json"),
    ])
    // Idempotent: again with or without the flag, nothing changes (its own configuration names the plugin now).
    for (const argv of [["--standalone"], []])
      expect(await init(cli, ...argv)).toEqual({ code: 0, out: "Already set up: nothing to change.\n", err: "" })
    expect(files(dir.path)).toEqual(after)
  })

  test("the nearest configuration naming the plugin counts, in .opencode/ or a folder between, and only up to the git root", async () => {
    // The root's entry in .opencode/opencode.jsonc (OpenCode reads it from every folder below too).
    await using dotted = await monorepo({
      ".opencode/opencode.jsonc": '{\n  // shared\n  "plugin": ["opencode-builtins@^1.2.0"]\n}\n',
    })
    const before = files(dotted.path)
    const out = (await init(dotted.file("packages/git"))).out
    expect(out).toStartWith(`Already set up in ${dotted.file(".opencode/opencode.jsonc")}, which OpenCode reads`)
    expect(files(dotted.path)).toEqual(before)
    // A folder between (packages/) set up, the root naming another plugin: the one between is named.
    await using between = await monorepo({
      "opencode.json": '{ "plugin": ["opencode-wakatime"] }\n',
      "packages/opencode.json": '{ "plugin": ["opencode-builtins"] }\n',
    })
    expect((await init(between.file("packages/cli"))).out).toStartWith(
      `Already set up in ${between.file("packages/opencode.json")}, which OpenCode reads`,
    )
    // --mcp looks for the MCP entry: the plugin above is not it.
    expect((await init(between.file("packages/cli"), "--mcp", "--dry-run")).out).toStartWith(
      "would create  opencode.json: created with the MCP server entry\n",
    )
    // A configuration above the git root is not OpenCode's for this project: the repository is set up.
    await using outer = await tmpdir({ "opencode.json": '{ "plugin": ["opencode-builtins"] }\n', "repo/a.ts": "" })
    expect(bunSpawnSync(["git", "init", "-q", outer.file("repo")]).exitCode).toBe(0)
    expect((await init(outer.file("repo"))).out).toStartWith("created  opencode.json: created with the plugin\n")
  })
})
