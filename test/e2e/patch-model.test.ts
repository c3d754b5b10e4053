import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { SecurityEdit } from "../../packages/core/security/edit"
import { SecurityPatch } from "../../packages/core/security/patch"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

/*
 * Differential check of the security layer's model of OpenCode's `apply_patch` and `edit` against the real stock
 * binaries: each case runs on its own file, the model predicts the file afterwards (or that the call fails and the
 * file stays), and the test compares with what OpenCode actually wrote.
 *
 * How each binary is made to offer the tools (both versions decide it from the model id in the tool registry):
 * `apply_patch` is offered, and `edit`/`write` withheld, when the model id contains "gpt-" but neither "oss" nor
 * "gpt-4"; any other id gets `edit`/`write` and no `apply_patch`. So the patch run uses a provider whose model is
 * `gpt-5-scripted`, the edit run the harness's `scripted-model`. 1.2.15 refuses to edit a file the session has not
 * read, so the edit run reads every file first. `multiedit` is registered by neither binary and is not exercised;
 * the 1.18 core (V2) tool stack is not reachable from `opencode run` either. Files are `.txt` so no formatter or
 * LSP touches them.
 */

type PatchCase = { name: string; files: Record<string, string>; patch: string }
type EditCase = { name: string; file: string; text: string; edit: SecurityEdit.Edit }

const env = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")

const PATCHES: PatchCase[] = [
  {
    name: "header ending in CR CR",
    files: { "p01.txt": "a\n" },
    patch: env("*** Update File: p01.txt\r\r", "@@", "-a", "+A"),
  },
  {
    name: "header ending in U+2028",
    files: { "p02.txt": "a\n" },
    patch: env("*** Update File: p02.txt\u2028", "@@", "-a", "+A"),
  },
  {
    name: "header ending in U+0085",
    files: { "p03.txt": "a\n" },
    patch: env("*** Update File: p03.txt\u0085", "@@", "-a", "+A"),
  },
  {
    name: "tabs around the path",
    files: { "p04.txt": "a\n" },
    patch: env("*** Update File:\tp04.txt\t", "@@", "-a", "+A"),
  },
  {
    name: "old lines found twice: the first wins",
    files: { "p05.txt": "a\nk\nb\nk\nc\n" },
    patch: env("*** Update File: p05.txt", "@@", "-k", "+K"),
  },
  {
    name: "@@ context selects the second copy",
    files: { "p06.txt": "a\nk\nb\nk\nc\n" },
    patch: env("*** Update File: p06.txt", "@@ b", "-k", "+K"),
  },
  {
    name: "Unicode quotes and dashes normalised",
    files: { "p07.txt": "say \u201chi\u201d \u2014 now\nend\n" },
    patch: env("*** Update File: p07.txt", "@@", '-say "hi" - now', "+changed"),
  },
  {
    name: "trailing whitespace ignored",
    files: { "p08.txt": "a  \nb\n" },
    patch: env("*** Update File: p08.txt", "@@", "-a", "+A"),
  },
  {
    name: "CRLF file",
    files: { "p09.txt": "a\r\nb\r\nc\r\n" },
    patch: env("*** Update File: p09.txt", "@@", " a", "-b", "+B"),
  },
  { name: "BOM file", files: { "p10.txt": "\uFEFFa\nb\n" }, patch: env("*** Update File: p10.txt", "@@", "-a", "+A") },
  {
    name: "file ending in a blank line",
    files: { "p11.txt": "a\nb\n\n" },
    patch: env("*** Update File: p11.txt", "@@", "-a", "+A"),
  },
  { name: "no final newline", files: { "p12.txt": "a\nb" }, patch: env("*** Update File: p12.txt", "@@", "-b", "+B") },
  {
    name: "pure addition after a context goes to the end",
    files: { "p13.txt": "a\nb\nc\n" },
    patch: env("*** Update File: p13.txt", "@@ a", "+new"),
  },
  {
    name: "pure addition in a file ending in a blank line",
    files: { "p14.txt": "a\n\n" },
    patch: env("*** Update File: p14.txt", "@@", "+X"),
  },
  {
    name: "*** End of File anchoring",
    files: { "p15.txt": "x\ny\nx\ny\n" },
    patch: env("*** Update File: p15.txt", "@@", "-x", "+X", " y", "*** End of File"),
  },
  {
    name: "chunk after *** End of File",
    files: { "p16.txt": "a\nb\nc\n" },
    patch: env("*** Update File: p16.txt", "@@", "-a", "+A", "*** End of File", "@@", "-c", "+C"),
  },
  {
    name: "update lines before any @@",
    files: { "p17.txt": "a" },
    patch: env("*** Update File: p17.txt", "-a", "+A"),
  },
  {
    name: "empty line inside a chunk is skipped",
    files: { "p18.txt": "a\n\nb\n" },
    patch: env("*** Update File: p18.txt", "@@", " a", "", "-b", "+B"),
  },
  {
    name: "move into a new folder",
    files: { "p19.txt": "a\n" },
    patch: env("*** Update File: p19.txt", "*** Move to: moved/p19.txt", "@@", "-a", "+A"),
  },
  {
    name: "empty move",
    files: { "p20.txt": "a\n" },
    patch: env("*** Update File: p20.txt", "*** Move to:", "@@", "-a", "+A"),
  },
  { name: "add over an existing file", files: { "p21.txt": "old\n" }, patch: env("*** Add File: p21.txt", "+new") },
  { name: "delete", files: { "p22.txt": "gone\n" }, patch: env("*** Delete File: p22.txt") },
  {
    name: "header without a path is skipped",
    files: { "p23.txt": "a\n", "p23b.txt": "b\n" },
    patch: env("*** Update File: ", "@@", "-a", "+A", "*** Update File: p23b.txt", "@@", "-b", "+B"),
  },
  {
    name: "heredoc wrapper",
    files: { "p24.txt": "a\n" },
    patch: "cat <<'EOF'\n" + env("*** Update File: p24.txt", "@@", "-a", "+A") + "\nEOF",
  },
  {
    name: "retry without a trailing empty old line",
    files: { "p25.txt": "a\nb" },
    patch: env("*** Update File: p25.txt", "@@", "-b", "-", "+B", "+"),
  },
  {
    name: "a later chunk cannot go back",
    files: { "p26.txt": "a\nb\nc\n" },
    patch: env("*** Update File: p26.txt", "@@", "-c", "+C", "@@", "-a", "+A"),
  },
  {
    name: "NUL after the path",
    files: { "p27.txt": "a\n" },
    patch: env("*** Update File: p27.txt\u0000", "@@", "-a", "+A"),
  },
  {
    name: "decoy add plus an update",
    files: { "p28.txt": "a\n" },
    patch: env("*** Add File: p28-decoy.txt", "+x", "*** Update File: p28.txt", "@@", "-a", "+A"),
  },
  {
    name: "non-breaking space and ellipsis normalised",
    files: { "p29.txt": "wait\u00a0for it\u2026\n" },
    patch: env("*** Update File: p29.txt", "@@", "-wait for it...", "+ok"),
  },
  {
    name: "an append and a change of the same final blank line",
    files: { "p31.txt": "a\n\n" },
    patch: env("*** Update File: p31.txt", "@@", "+X", "@@", "-", "+Y"),
  },
  {
    name: "the change first, then the append",
    files: { "p32.txt": "a\n\n" },
    patch: env("*** Update File: p32.txt", "@@", "-", "+Y", "@@", "+X"),
  },
  {
    name: "a BOM at the start of the new text",
    files: { "p33.txt": "a\n" },
    patch: env("*** Update File: p33.txt", "@@", "-a", "+\uFEFF\uFEFFA"),
  },
  {
    name: "a context line matched without its CR is rewritten",
    files: { "p34.txt": "x\r\ny\r\nz\r\n" },
    patch: env("*** Update File: p34.txt", "@@ x", " y", "+inserted"),
  },
  {
    name: "text after *** End Patch is ignored",
    files: { "p30.txt": "a\n", "p30b.txt": "b\n" },
    patch: env("*** Update File: p30.txt", "@@", "-a", "+A") + "\n*** Update File: p30b.txt\n@@\n-b\n+B",
  },
]

const EDITS: EditCase[] = [
  { name: "empty oldString", file: "e01.txt", text: "keep\n", edit: { oldString: "", newString: "all new\n" } },
  {
    name: "whitespace-variant oldString",
    file: "e02.txt",
    text: "alpha beta\n  gamma\n",
    edit: { oldString: "alpha   beta", newString: "AB" },
  },
  {
    name: "block anchor with different middle and length",
    file: "e03.txt",
    text: "function f() {\n  one\n  two\n  three\n}\nafter\n",
    edit: { oldString: "function f() {\n  totally different\n}", newString: "gone" },
  },
  {
    name: "replaceAll",
    file: "e04.txt",
    text: "x\ny\nx\n",
    edit: { oldString: "x", newString: "z", replaceAll: true },
  },
  {
    name: "replaceAll expands $ patterns",
    file: "e05.txt",
    text: "ab\ncd\n",
    edit: { oldString: "b", newString: "[$&|$'|$`|$$]", replaceAll: true },
  },
  { name: "CRLF file", file: "e06.txt", text: "a\r\nb\r\nc\r\n", edit: { oldString: "a\nb", newString: "A\nB" } },
  { name: "BOM file", file: "e07.txt", text: "\uFEFFhello\nworld\n", edit: { oldString: "hello", newString: "bye" } },
  { name: "escaped newline", file: "e08.txt", text: "a\nb\nc\n", edit: { oldString: "a\\nb", newString: "AB" } },
  {
    name: "trimmed oldString",
    file: "e09.txt",
    text: "one two\nthree\n",
    edit: { oldString: "\n\n  one two  \n", newString: "1 2" },
  },
  { name: "two matches without replaceAll", file: "e10.txt", text: "q\nq\n", edit: { oldString: "q", newString: "Q" } },
  {
    name: "indentation differs",
    file: "e11.txt",
    text: "    if (x) {\n        y()\n    }\n",
    edit: { oldString: "if (x) {\n    y()\n}", newString: "z()" },
  },
  {
    name: "two-line anchor spanning a block",
    file: "e12.txt",
    text: "start\nm1\nm2\nm3\nm4\nend\ntail\n",
    edit: { oldString: "start\nend\n", newString: "S\n" },
  },
  {
    name: "whitespace oldString with replaceAll",
    file: "e13.txt",
    text: "a\n\nb\n",
    edit: { oldString: "  ", newString: "X", replaceAll: true },
  },
  { name: "$ patterns without replaceAll", file: "e14.txt", text: "ab\n", edit: { oldString: "b", newString: "$'$&" } },
  {
    name: "insertion before an end marker",
    file: "e15.txt",
    text: "x\n// @locked-start\nk\n// @locked-end\ny\n",
    edit: { oldString: "k\n", newString: "k\nplanted\n" },
  },
  {
    name: "BOMs at the start of newString",
    file: "e17.txt",
    text: "hello\n",
    edit: { oldString: "hello", newString: "\uFEFF\uFEFFbye" },
  },
  {
    name: "block anchor with several candidates",
    file: "e18.txt",
    text: "{\n  alpha()\n}\n{\n  beta()\n}\n",
    edit: { oldString: "{\n  betb()\n}", newString: "B" },
  },
  {
    name: "match much larger than oldString",
    file: "e19.txt",
    text: "x = 1\n" + "y\n".repeat(9) + "x = 1;\n",
    edit: { oldString: "x = 1\nzzz\nx = 1;", newString: "Z" },
  },
  {
    name: "whitespace candidate used at its first occurrence with replaceAll",
    file: "e20.txt",
    text: "    indented\n    \nend\n",
    edit: { oldString: "\t\t", newString: "", replaceAll: true },
  },
  {
    name: "context-aware block",
    file: "e16.txt",
    text: "begin\n  same\n  other\nfinish\n",
    edit: { oldString: "begin\nsame\nchanged\nfinish", newString: "B" },
  },
]

const ROOT = "/project"

/** What the model says OpenCode does with a patch: the files afterwards (undefined: absent), or failure. */
function predictPatch(c: PatchCase, version: SecurityPatch.Version) {
  const after: Record<string, string | undefined> = { ...c.files }
  const { files } = SecurityPatch.parse(c.patch)
  if (!files.length) return { ok: false, after }
  const rel = (p: string) => path.relative(ROOT, SecurityPatch.resolve(ROOT, p))
  const writes: [string, string | undefined][] = []
  for (const f of files) {
    const at = rel(f.path)
    if (f.change === "add") {
      writes.push([at, f.content ?? ""])
      continue
    }
    if (c.files[at] === undefined) return { ok: false, after }
    if (f.change === "delete") {
      writes.push([at, undefined])
      continue
    }
    const d = SecurityPatch.derive(f, c.files[at], version)
    if (!d.ok) return { ok: false, after }
    if (f.change === "move") writes.push([rel(f.to!), d.content], [at, undefined])
    else writes.push([at, d.content])
  }
  for (const [p, text] of writes) after[p] = text
  return { ok: true, after }
}

async function readOr(file: string) {
  return fs.readFile(file, "utf8").catch(() => undefined)
}

const modelVersion = (label: string): SecurityPatch.Version => (label.startsWith("1.2.15") ? "1.2.15" : "1.18")

const gptProvider = (server: ModelServer.Instance) => ({
  model: "patchmodel/gpt-5-scripted",
  provider: {
    patchmodel: {
      npm: "@ai-sdk/openai-compatible",
      name: "Scripted GPT-named model",
      options: { baseURL: server.url, apiKey: "scripted" },
      models: {
        "gpt-5-scripted": { name: "gpt-5-scripted", tool_call: true, limit: { context: 200_000, output: 8_192 } },
      },
    },
  },
})

for (const target of targets()) {
  const version = modelVersion(target.label)
  describe(`patch and edit model agrees with stock opencode ${target.label}`, () => {
    test(
      "apply_patch: every case leaves the files the model predicts",
      async () => {
        const server = ModelServer.start([
          ModelServer.calls(...PATCHES.map((c) => ({ name: "apply_patch", args: { patchText: c.patch } }))),
          ModelServer.text("done"),
        ])
        const files = Object.assign({}, ...PATCHES.map((c) => c.files))
        await using project = await Harness.project({
          bin: target.bin,
          plugin: false,
          files,
          config: gptProvider(server),
        })
        try {
          const run = await Harness.run(project, server, "apply the patches", { timeoutMs: 150_000 })
          expect(run.exitCode).toBe(0)
          const offered = server.turns()[0].body.tools.map((t: any) => t.function?.name ?? t.name)
          expect(offered).toContain("apply_patch")
          expect(offered).not.toContain("edit")
          const mismatches: string[] = []
          for (const c of PATCHES) {
            const predicted = predictPatch(c, version)
            const call = run.tools.find((t) => t.tool === "apply_patch" && t.input?.patchText === c.patch)
            if ((call?.status === "completed") !== predicted.ok)
              mismatches.push(
                `${c.name}: tool ${call?.status ?? "missing"}, model predicted ${predicted.ok ? "success" : "failure"}`,
              )
            for (const [p, text] of Object.entries(predicted.after)) {
              const actual = await readOr(path.join(project.dir, p))
              if (actual !== text)
                mismatches.push(`${c.name}: ${p} is ${JSON.stringify(actual)}, model predicted ${JSON.stringify(text)}`)
            }
          }
          expect(mismatches).toEqual([])
        } finally {
          server.stop()
        }
      },
      { timeout: 200_000 },
    )

    test(
      "edit: every case leaves the file the model predicts",
      async () => {
        const server = ModelServer.start([
          ModelServer.calls(...EDITS.map((c) => ({ name: "read", args: { filePath: c.file } }))),
          ModelServer.calls(...EDITS.map((c) => ({ name: "edit", args: { filePath: c.file, ...c.edit } }))),
          ModelServer.text("done"),
        ])
        const files = Object.fromEntries(EDITS.map((c) => [c.file, c.text]))
        await using project = await Harness.project({ bin: target.bin, plugin: false, files })
        try {
          const run = await Harness.run(project, server, "make the edits", { timeoutMs: 150_000 })
          expect(run.exitCode).toBe(0)
          const offered = server.turns()[0].body.tools.map((t: any) => t.function?.name ?? t.name)
          expect(offered).toContain("edit")
          expect(offered).not.toContain("apply_patch")
          const mismatches: string[] = []
          for (const c of EDITS) {
            const o = SecurityEdit.outcome(c.text, c.edit, version)
            const predicted = SecurityEdit.result(c.text, o, version)
            const call = run.tools.find((t) => t.tool === "edit" && t.input?.filePath === c.file)
            if ((call?.status === "completed") !== (predicted !== undefined))
              mismatches.push(
                `${c.name}: tool ${call?.status ?? "missing"} (${call?.error ?? ""}), model predicted ${o.kind}`,
              )
            const actual = await readOr(path.join(project.dir, c.file))
            if (actual !== (predicted ?? c.text))
              mismatches.push(
                `${c.name}: file is ${JSON.stringify(actual)}, model predicted ${JSON.stringify(predicted ?? c.text)}`,
              )
          }
          expect(mismatches).toEqual([])
        } finally {
          server.stop()
        }
      },
      { timeout: 200_000 },
    )
  })
}
