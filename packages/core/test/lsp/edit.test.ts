import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { pathToFileURL } from "url"
import { LspEdit } from "../../lsp/edit"
import { LspServers } from "../../lsp/servers"
import { project } from "./fixtures"

const uri = (file: string) => pathToFileURL(file).href
const range = (l1: number, c1: number, l2: number, c2: number) => ({
  start: { line: l1, character: c1 },
  end: { line: l2, character: c2 },
})

async function snapshot(dir: string) {
  const out: Record<string, string> = {}
  for (const rel of (await fs.readdir(dir, { recursive: true })).sort()) {
    const file = path.join(dir, rel)
    if ((await fs.stat(file)).isFile()) out[rel] = await fs.readFile(file, "utf8")
  }
  return out
}

describe("LspEdit", () => {
  test("text edits: UTF-16 positions, CRLF lines, several edits on one line, insertions at the end", () => {
    const text = "const é = 1\r\nlet 😀x = é + é\r\n"
    const out = LspEdit.applyTextEdits(text, [
      { range: range(0, 6, 0, 7), newText: "e" },
      { range: range(1, 14, 1, 15), newText: "e" },
      { range: range(1, 10, 1, 11), newText: "e" },
      { range: range(1, 4, 1, 7), newText: "x" },
      { range: range(2, 0, 2, 0), newText: "// end\n" },
    ])
    expect(out).toBe("const e = 1\r\nlet x = e + e\r\n// end\n")
    // A leading byte-order mark: positions are on the text after it (what the server was sent); the mark stays.
    expect(
      LspEdit.applyTextEdits("\uFEFFimport { é, b }\r\nx", [
        { range: range(0, 9, 0, 10), newText: "e" },
        { range: range(0, 0, 0, 0), newText: "// top\r\n" },
      ]),
    ).toBe("\uFEFF// top\r\nimport { e, b }\r\nx")
    expect(() =>
      LspEdit.applyTextEdits("abc", [
        { range: range(0, 0, 0, 2), newText: "x" },
        { range: range(0, 1, 0, 3), newText: "y" },
      ]),
    ).toThrow("overlapping")
  })

  test("`changes` and `documentChanges` with create, rename and delete are applied; the plan lists files and edit counts", async () => {
    await using p = await project({ "a.ts": "old()\nold()\n", "b.ts": "import './gone'\n", "gone.ts": "x\n" })
    const a = path.join(p.dir, "a.ts")
    const plan1 = await LspEdit.plan({
      changes: {
        [uri(a)]: [
          { range: range(0, 0, 0, 3), newText: "nu" },
          { range: range(1, 0, 1, 3), newText: "nu" },
        ],
      },
    })
    expect(plan1.files.map((f) => [path.basename(f.file), f.edits])).toEqual([["a.ts", 2]])
    await LspEdit.apply(plan1)
    const plan = await LspEdit.plan({
      documentChanges: [
        { kind: "rename", oldUri: uri(a), newUri: uri(path.join(p.dir, "lib/a2.ts")) },
        {
          textDocument: { uri: uri(path.join(p.dir, "lib/a2.ts")), version: null },
          edits: [{ range: range(0, 0, 0, 2), newText: "renamed" }],
        },
        { kind: "create", uri: uri(path.join(p.dir, "new.ts")) },
        {
          textDocument: { uri: uri(path.join(p.dir, "new.ts")), version: null },
          edits: [{ range: range(0, 0, 0, 0), newText: "created\n" }],
        },
        { kind: "delete", uri: uri(path.join(p.dir, "gone.ts")) },
        {
          textDocument: { uri: uri(path.join(p.dir, "b.ts")), version: null },
          edits: [{ range: range(0, 8, 0, 14), newText: "./lib/a2" }],
        },
      ],
    })
    await LspEdit.apply(plan)
    expect(await snapshot(p.dir)).toEqual({
      "b.ts": "import './lib/a2'\n",
      "lib/a2.ts": "renamed()\nnu()\n",
      "new.ts": "created\n",
    })
    expect(plan.renames.map((r) => path.relative(p.dir, r.to))).toEqual(["lib/a2.ts"])
  })

  test("edited and renamed files keep their mode exactly under umask 022 (0664 stays 0664, 0775 stays 0775; red team X11)", async () => {
    await using p = await project({ "a.ts": "old()\n", "b.sh": "old\n" })
    const a = path.join(p.dir, "a.ts")
    const b = path.join(p.dir, "b.sh")
    await fs.chmod(a, 0o664)
    await fs.chmod(b, 0o775)
    const plan = await LspEdit.plan({
      documentChanges: [
        { textDocument: { uri: uri(a), version: null }, edits: [{ range: range(0, 0, 0, 3), newText: "nu" }] },
        { kind: "rename", oldUri: uri(b), newUri: uri(path.join(p.dir, "c.sh")) },
        {
          textDocument: { uri: uri(path.join(p.dir, "c.sh")), version: null },
          edits: [{ range: range(0, 0, 0, 3), newText: "nu" }],
        },
      ],
    })
    const old = process.umask(0o022)
    try {
      await LspEdit.apply(plan)
    } finally {
      process.umask(old)
    }
    expect(await fs.readFile(a, "utf8")).toBe("nu()\n")
    expect((await fs.stat(a)).mode & 0o7777).toBe(0o664)
    expect(await fs.readFile(path.join(p.dir, "c.sh"), "utf8")).toBe("nu\n")
    expect((await fs.stat(path.join(p.dir, "c.sh"))).mode & 0o7777).toBe(0o775)
  })

  test("all or nothing: a refused target, a changed file, a stale version or a failed write leave every file as it was", async () => {
    await using p = await project({ "a.ts": "one\n", "b.ts": "two\n", "c.ts": "three\n" })
    const [a, b, c] = ["a.ts", "b.ts", "c.ts"].map((f) => path.join(p.dir, f))
    const edit = {
      changes: Object.fromEntries([a, b, c].map((f) => [uri(f), [{ range: range(0, 0, 0, 0), newText: "// " }]])),
    }
    const before = await snapshot(p.dir)

    const refused = await LspEdit.plan(edit, {
      access: async (f, op) => (op === "write" && f === b ? "protected" : undefined),
    }).catch((e) => e)
    expect(LspEdit.Refused.is(refused)).toBe(true)
    expect(refused.message).toContain("b.ts")

    const changed = await LspEdit.plan(edit, {
      expect: (f) => (f === c ? "three (as the server saw it)\n" : undefined),
    }).catch((e) => e)
    expect(changed.message).toContain("changed since the request")

    const stale = await LspEdit.plan(
      {
        documentChanges: [
          { textDocument: { uri: uri(a), version: 3 }, edits: [{ range: range(0, 0, 0, 0), newText: "x" }] },
        ],
      },
      { version: () => 4 },
    ).catch((e) => e)
    expect(stale.message).toContain("version 3")

    const locked = await LspEdit.plan(
      { changes: { [uri(a)]: [{ range: range(0, 0, 0, 3), newText: "ONE" }] } },
      { segments: { write: [{ start: "one", end: "\n" }] } },
    ).catch((e) => e)
    expect(LspEdit.Refused.is(locked)).toBe(true)

    // A plan checked, then the disk moves: a file changed in between is caught before any write.
    const plan = await LspEdit.plan(edit)
    await fs.writeFile(b, "two, edited\n")
    expect((await LspEdit.apply(plan).catch((e) => e)).message).toContain("changed while the edit was prepared")
    await fs.writeFile(b, "two\n")

    // A write failing after others were renamed into place: they are restored, the new file removed.
    const create = await LspEdit.plan({
      documentChanges: [
        { textDocument: { uri: uri(a), version: null }, edits: [{ range: range(0, 0, 0, 0), newText: "// " }] },
        { textDocument: { uri: uri(b), version: null }, edits: [{ range: range(0, 0, 0, 0), newText: "// " }] },
        { kind: "create", uri: uri(path.join(p.dir, "z.ts")) },
      ],
    })
    await fs.mkdir(path.join(p.dir, "z.ts", "blocker"), { recursive: true })
    const failed = await LspEdit.apply(create).catch((e) => e)
    expect(LspEdit.Failed.is(failed)).toBe(true)
    await fs.rm(path.join(p.dir, "z.ts"), { recursive: true })
    expect(await snapshot(p.dir)).toEqual(before)
  })
  test("an edit that would remove the markers of a segment the role may not read is refused; one beside it is kept", async () => {
    // A language server is the project's code (node_modules, which the agent can write): its rename answered with the
    // deletion of a read-protected segment's two marker lines, and the segment's text was then an ordinary line.
    await using p = await project({
      "app/config.py": 'import os\n# @secure-start\nVAULT_PIN = "4711"\n# @secure-end\nname = "demo"\n',
    })
    const file = path.join(p.dir, "app/config.py")
    const segments = { read: [{ start: "@secure-start", end: "@secure-end" }], write: [] }
    const unmark = await LspEdit.plan(
      {
        changes: {
          [uri(file)]: [
            { range: range(1, 0, 2, 0), newText: "" },
            { range: range(3, 0, 4, 0), newText: "" },
          ],
        },
      },
      { segments },
    ).catch((e) => e)
    expect(LspEdit.Refused.is(unmark)).toBe(true)
    expect(unmark.message).toContain("read-protected segment")
    // Deleting the file would take the segment along: refused as well.
    const removed = await LspEdit.plan({ documentChanges: [{ kind: "delete", uri: uri(file) }] }, { segments }).catch(
      (e) => e,
    )
    expect(LspEdit.Refused.is(removed)).toBe(true)
    // The rename of `name` on line 5 keeps the segment: planned as asked.
    const rename = await LspEdit.plan(
      { changes: { [uri(file)]: [{ range: range(4, 0, 4, 4), newText: "label" }] } },
      { segments },
    )
    expect(rename.files.map((f) => f.after)).toEqual([
      'import os\n# @secure-start\nVAULT_PIN = "4711"\n# @secure-end\nlabel = "demo"\n',
    ])
  })
  test("EE an edit that glues a marker line onto the line before (its text kept, the marker no longer found) is refused", async () => {
    // Red team EE: every character of the segment survives, but `# @secure-start` after a word character is no longer
    // in a comment: the segment would be an ordinary line, shown to the agent and writable.
    await using p = await project({
      "app/config.py": 'import os\n# @secure-start\nVAULT_PIN = "4711"\n# @secure-end\nname = "demo"\n',
    })
    const file = path.join(p.dir, "app/config.py")
    const pairs = [{ start: "@secure-start", end: "@secure-end" }]
    const glue = { changes: { [uri(file)]: [{ range: range(0, 9, 1, 0), newText: "x" }] } }
    for (const segments of [{ read: pairs, write: [] }, { write: pairs }]) {
      const glued = await LspEdit.plan(glue, { segments }).catch((e) => e)
      expect(LspEdit.Refused.is(glued)).toBe(true)
      expect(glued.message).toContain("-protected segment")
    }
    // The premise: without segments to keep, the edit is what was asked, the segment's text all there.
    const plain = await LspEdit.plan(glue)
    expect(plain.files[0]!.after).toBe('import osx# @secure-start\nVAULT_PIN = "4711"\n# @secure-end\nname = "demo"\n')
  })
})

describe("LspServers", () => {
  test("catalog with OpenCode's lsp configuration: disabled entries, replaced commands, new servers need extensions", () => {
    const ctx = { directory: "/repo", worktree: "/repo" }
    const resolved = LspServers.resolve({
      ...ctx,
      config: {
        pyright: { disabled: true },
        typescript: { command: ["/opt/tsls", "--stdio"] },
        mine: { command: ["mine-ls"], extensions: [".mine"] },
        broken: { command: ["x"] },
      },
    })
    expect(resolved.specs.map((s) => s.id)).toContain("mine")
    expect(resolved.specs.map((s) => s.id)).not.toContain("pyright")
    expect(resolved.forFile("/repo/a.py")).toEqual([])
    expect(resolved.forFile("/repo/src/a.ts").map((m) => m.spec.id)).toEqual(["typescript"])
    expect(resolved.warnings.join()).toContain('lsp.broken has no "extensions"')
    expect(LspServers.resolve({ ...ctx, config: false }).disabled).toContain('"lsp": false')
  })

  test("reads lsp from opencode.json files, the project's winning entry by entry over the global one", async () => {
    await using p = await project({
      "home/.config/opencode/opencode.json":
        '{ "lsp": { "pyright": { "disabled": true }, "gopls": { "disabled": true } } }',
      "repo/opencode.jsonc": '{\n // comment\n "lsp": { "gopls": { "command": ["my-gopls"] }, },\n}',
    })
    const read = LspServers.read({
      directory: path.join(p.dir, "repo"),
      worktree: path.join(p.dir, "repo"),
      env: { HOME: path.join(p.dir, "home") },
    })
    expect(read.config).toEqual({ pyright: { disabled: true }, gopls: { command: ["my-gopls"] } })
    expect(read.source).toEndWith("opencode.jsonc")
  })
})
