import { describe, expect, spyOn, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Builtins } from "../../builtins"
import type { Host } from "../../host"
import { ReadmeHistory } from "../../readme/history"
import { ReadmeHooks } from "../../readme/hooks"
import { ReadmeInject } from "../../readme/inject"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"

const FILES: Record<string, string> = {
  "README.md": "# Root project\nROOT-README\n",
  "AGENTS.md": "root agents\n",
  "pkg/README.md": "# pkg\nPKG-README\n",
  "pkg/a/README.md": "# a\nA-README\n",
  "pkg/b/README.md": "# b\nB-README\n",
  "pkg/b/deep/README.md": "# deep\nDEEP-README\n",
  "pkg/c/x.ts": "x\n",
  "node_modules/dep/README.md": "# dep\nDEP-README\n",
  "node_modules/dep/index.js": "x\n",
  ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`pkg/a/f${i}.ts`, `export const f${i} = ${i}\n`])),
  "pkg/b/y.ts": "y\n",
  "pkg/b/deep/z.ts": "z\n",
}

/**
 * A simulated OpenCode session: each read's result is stored as a completed tool part (with the metadata the hook
 * left), as OpenCode does once the tool returns; `compact()` adds a completed compaction.
 */
function session(dir: string, extra: Partial<Host> = {}) {
  const messages: any[] = []
  let n = 0
  const log = Logger.memory()
  const host: Host = { directory: dir, worktree: dir, log, messages: async () => structuredClone(messages), ...extra }
  const turn = () => messages.push({ info: { id: `m${++n}`, role: "user" }, parts: [{ type: "text", text: "go" }] })
  turn()
  const assistant = () => {
    const msg = { info: { id: `m${++n}`, role: "assistant" }, parts: [] as any[] }
    messages.push(msg)
    return msg
  }
  let current = assistant()
  let call = 0
  return {
    host,
    log,
    messages,
    /**
     * Runs the after hook of one read and stores its result; returns the output text. `shape` gives the call's other
     * arguments (`offset`, `limit`) and the result OpenCode returned (its text and `truncated` flag).
     */
    async read(
      hooks: any,
      file: string,
      store = true,
      shape: { args?: Record<string, unknown>; content?: string; truncated?: boolean } = {},
    ) {
      const callID = `c${++call}`
      const args = { filePath: path.isAbsolute(file) ? file : path.join(dir, file), ...shape.args }
      const output = {
        title: "",
        output: `<path>${args.filePath}</path>\n<type>file</type>\n<content>${shape.content ?? "1: x\n"}</content>`,
        metadata: { loaded: [], ...(shape.truncated !== undefined && { truncated: shape.truncated }) } as any,
      }
      await hooks["tool.execute.after"]({ tool: "read", sessionID: "s", callID, args }, output)
      const part = {
        type: "tool",
        tool: "read",
        callID,
        state: { status: "completed", input: args, output: output.output, metadata: output.metadata, time: {} },
      }
      if (store) current.parts.push(part)
      return { text: output.output, part, store: () => current.parts.push(part) }
    },
    turn() {
      turn()
      current = assistant()
    },
    /** A completed compaction (1.18 may keep a verbatim tail from `tailStart` on). */
    compact(tailStart?: string) {
      const user = `m${++n}`
      messages.push({
        info: { id: user, role: "user" },
        parts: [{ type: "compaction", auto: false, tail_start_id: tailStart }],
      })
      messages.push({
        info: { id: `m${++n}`, role: "assistant", summary: true, finish: "stop", parentID: user },
        parts: [],
      })
      turn()
      current = assistant()
    },
  }
}

const blocks = (text: string, file: string) => text.split(`${ReadmeInject.HEADER}${file}\n`).length - 1

describe("README injection on read results", () => {
  test("10 reads in pkg/a: exactly one pkg/a/README.md block and one pkg/README.md block; the root README never", async () => {
    await using dir = await tmpdir(FILES)
    const s = session(dir.path)
    const hooks = ReadmeHooks.create({ host: s.host, config: {} })
    const outputs: string[] = []
    for (let i = 0; i < 10; i++) outputs.push((await s.read(hooks, `pkg/a/f${i}.ts`)).text)
    const all = outputs.join("\n")
    expect(blocks(all, dir.file("pkg/a/README.md"))).toBe(1)
    expect(blocks(all, dir.file("pkg/README.md"))).toBe(1)
    expect(all).not.toContain("ROOT-README")
    expect(all).not.toContain("root agents")
    // The first read carries both, nearest first, after the read's own output, in a reminder of its own.
    expect(outputs[0]).toContain(
      `</content>\n\n<system-reminder>\n${ReadmeInject.HEADER}${dir.file("pkg/a/README.md")}\n# a\nA-README\n\n` +
        `${ReadmeInject.HEADER}${dir.file("pkg/README.md")}\n# pkg\nPKG-README\n</system-reminder>`,
    )
    expect(s.messages[1].parts[0].state.metadata).toEqual({
      loaded: [],
      readme: [dir.file("pkg/a/README.md"), dir.file("pkg/README.md")],
    })
    for (const out of outputs.slice(1)) expect(out).not.toContain("<system-reminder>")
  })

  test("a 30-read session over several folders and turns: no README block twice", async () => {
    await using dir = await tmpdir(FILES)
    const s = session(dir.path)
    const hooks = ReadmeHooks.create({ host: s.host, config: {} })
    const files = ["pkg/a/f1.ts", "pkg/b/y.ts", "pkg/b/deep/z.ts", "pkg/c/x.ts", "pkg/a/f2.ts", "README.md"]
    let all = ""
    for (let i = 0; i < 30; i++) {
      if (i % 7 === 6) s.turn()
      all += (await s.read(hooks, files[i % files.length])).text
    }
    for (const readme of ["pkg/a/README.md", "pkg/README.md", "pkg/b/README.md", "pkg/b/deep/README.md"])
      expect(blocks(all, dir.file(readme))).toBe(1)
    expect(all).not.toContain("ROOT-README")
  })

  test("reads running in parallel in one step (results not stored yet) inject a README once", async () => {
    await using dir = await tmpdir(FILES)
    const s = session(dir.path)
    const hooks = ReadmeHooks.create({ host: s.host, config: {} })
    const results = await Promise.all([0, 1, 2, 3].map((i) => s.read(hooks, `pkg/a/f${i}.ts`, false)))
    expect(results.filter((r) => r.text.includes("A-README"))).toHaveLength(1)
    for (const r of results) r.store()
    expect((await s.read(hooks, "pkg/a/f5.ts")).text).not.toContain("A-README")
  })

  test("after a compaction the next read in the subtree injects again, once; a pruned result counts as gone", async () => {
    await using dir = await tmpdir(FILES)
    const s = session(dir.path)
    const hooks = ReadmeHooks.create({ host: s.host, config: {} })
    expect((await s.read(hooks, "pkg/a/f0.ts")).text).toContain("A-README")
    expect((await s.read(hooks, "pkg/a/f1.ts")).text).not.toContain("A-README")
    s.compact()
    expect((await s.read(hooks, "pkg/a/f2.ts")).text).toContain("A-README")
    expect((await s.read(hooks, "pkg/a/f3.ts")).text).not.toContain("A-README")
    // OpenCode's pruning marks old results compacted: their content is gone from what the model sees.
    for (const msg of s.messages) for (const p of msg.parts) if (p.type === "tool") p.state.time.compacted = Date.now()
    expect((await s.read(hooks, "pkg/a/f4.ts")).text).toContain("A-README")
  })

  test("1.18 compaction keeping a verbatim tail: a README in the tail is still seen, so it is not injected again", async () => {
    await using dir = await tmpdir(FILES)
    const s = session(dir.path)
    const hooks = ReadmeHooks.create({ host: s.host, config: {} })
    expect((await s.read(hooks, "pkg/b/y.ts")).text).toContain("B-README")
    s.turn()
    const tail = s.messages.at(-2).info.id
    expect((await s.read(hooks, "pkg/a/f0.ts")).text).toContain("A-README")
    s.compact(tail)
    const next = (await s.read(hooks, "pkg/a/f1.ts")).text + (await s.read(hooks, "pkg/b/y.ts")).text
    expect(next).not.toContain("A-README") // in the kept tail
    expect(next).toContain("B-README") // summarised away
  })

  test("a README read only in part (from a later line, a limit before its end, cut by OpenCode, a shortened line) is injected on the next read in its folder; a whole read is not", async () => {
    await using dir = await tmpdir({ ...FILES, "pkg/c/README.md": "# c\nC-README\n" })
    const s = session(dir.path)
    const hooks = ReadmeHooks.create({ host: s.host, config: {} })
    const end = (n: number) => `\n\n(End of file - total ${n} lines)\n`
    const more = (from: number, to: number, n: number) =>
      `\n\n(Showing lines ${from}-${to} of ${n}. Use offset=${to + 1} to continue.)\n`
    // Whole: a limit that reaches the end (offset 1, as a string as 1.2.15's coercing schema takes it).
    await s.read(hooks, "pkg/README.md", true, {
      args: { offset: "1", limit: 50 },
      content: `1: # pkg\n2: PKG-README${end(2)}`,
      truncated: false,
    })
    // Partial: from line 2; the first 1 of 2 lines; lines shortened by OpenCode's 2,000-character cap.
    await s.read(hooks, "pkg/a/README.md", true, { args: { offset: 2 }, content: `2: A-README${end(2)}` })
    await s.read(hooks, "pkg/b/README.md", true, {
      args: { limit: 1 },
      content: `1: # b${more(1, 1, 2)}`,
      truncated: true,
    })
    const cut = `1: ${"c".repeat(2000)}... (line truncated to 2000 chars)\n2: C-README${end(2)}`
    await s.read(hooks, "pkg/c/README.md", true, { content: cut, truncated: false })
    const a = (await s.read(hooks, "pkg/a/f0.ts")).text
    const b = (await s.read(hooks, "pkg/b/y.ts")).text
    const c = (await s.read(hooks, "pkg/c/x.ts")).text
    expect(blocks(a, dir.file("pkg/a/README.md"))).toBe(1)
    expect(blocks(b, dir.file("pkg/b/README.md"))).toBe(1)
    expect(blocks(c, dir.file("pkg/c/README.md"))).toBe(1)
    expect(a + b + c).not.toContain("PKG-README") // read whole
    // Once injected it is seen: no second block.
    expect((await s.read(hooks, "pkg/a/f1.ts")).text).not.toContain("<system-reminder>")
    expect(s.log.entries.filter((e) => e.level === "warn")).toEqual([])
  })

  test("budget: a long README is cut at a line break with a pointer to the file; maxTokens is configurable", async () => {
    const long = Array.from({ length: 2000 }, (_, i) => `line ${i} of a long README with words`).join("\n")
    await using dir = await tmpdir({ "pkg/a/README.md": long, "pkg/a/x.ts": "x" })
    const s = session(dir.path)
    const out = (await s.read(ReadmeHooks.create({ host: s.host, config: {} }), "pkg/a/x.ts")).text
    const block = out.slice(out.indexOf(ReadmeInject.HEADER))
    expect(block).toContain(`[truncated at ~2000 tokens — read ${dir.file("pkg/a/README.md")} for the rest]`)
    const body = block.split("\n").slice(1, -2)
    expect(body.join("\n").length).toBeLessThanOrEqual(2000 * 4)
    expect(body.at(-1)).toMatch(/^line \d+ of a long README with words$/)
    const s2 = session(dir.path)
    const small = (await s2.read(ReadmeHooks.create({ host: s2.host, config: { maxTokens: 100 } }), "pkg/a/x.ts")).text
    expect(small).toContain("[truncated at ~100 tokens")
    expect(small.length).toBeLessThan(out.length / 10)
  })

  test("total budget: 12 nested READMEs add at most maxTotalTokens, nearest first; the rest are named and come with a later read (red team CE-3)", async () => {
    const files: Record<string, string> = {}
    let folder = ""
    for (let i = 1; i <= 12; i++) {
      folder = path.join(folder, `l${i}`)
      files[path.join(folder, "README.md")] = Array.from(
        { length: 400 },
        (_, k) => `line ${k} of a long README for level ${i}, with words words words words words`,
      ).join("\n")
    }
    files[path.join(folder, "x.ts")] = "x\n"
    files[path.join(folder, "..", "y.ts")] = "y\n"
    await using dir = await tmpdir(files)
    const s = session(dir.path)
    const hooks = ReadmeHooks.create({ host: s.host, config: {} })
    const read = await s.read(hooks, path.join(folder, "x.ts"))
    const added = read.text.slice(read.text.indexOf("<system-reminder>"))
    // Before: 12 blocks of ~8,000 characters, 97,503 characters added to a one-line result.
    expect(added.length).toBeLessThanOrEqual(ReadmeHooks.DEFAULT_MAX_TOTAL_TOKENS * ReadmeInject.CHARS_PER_TOKEN + 2000)
    const readme = (i: number) => dir.file(path.join(...Array.from({ length: i }, (_, k) => `l${k + 1}`), "README.md"))
    // Nearest first: l12's and l11's READMEs whole (each cut at maxTokens), l10's cut to what was left.
    expect(blocks(added, readme(12))).toBe(1)
    expect(blocks(added, readme(11))).toBe(1)
    expect(blocks(added, readme(10))).toBe(1)
    for (let i = 1; i <= 9; i++) expect(blocks(added, readme(i))).toBe(0)
    expect(read.part.state.metadata[ReadmeHistory.KEY]).toEqual([readme(12), readme(11), readme(10)])
    // The rest are named, nearest first, with what to do.
    const named = added.split("\n").find((l) => l.startsWith("README not shown"))!
    expect(named).toStartWith("README not shown (the READMEs of one read are capped at ~6000 tokens; read them if")
    expect(named).toEndWith(Array.from({ length: 9 }, (_, k) => readme(9 - k)).join(", "))
    // A later read in the same subtree brings the next ones in (they were not claimed).
    const next = (await s.read(hooks, path.join(folder, "..", "y.ts"))).text
    expect(blocks(next, readme(9))).toBe(1)
    expect(blocks(next, readme(11))).toBe(0)
    // Configurable.
    const s2 = session(dir.path)
    const one = await s2.read(
      ReadmeHooks.create({ host: s2.host, config: { maxTotalTokens: 2000 } }),
      path.join(folder, "x.ts"),
    )
    expect(blocks(one.text, readme(12))).toBe(1)
    expect(blocks(one.text, readme(11))).toBe(0)
  })

  test("includeRoot adds the project's own README; names picks other file names", async () => {
    await using dir = await tmpdir({ ...FILES, "pkg/a/README.rst": "A-RST\n" })
    const s = session(dir.path)
    const out = (await s.read(ReadmeHooks.create({ host: s.host, config: { includeRoot: true } }), "pkg/a/f0.ts")).text
    expect(out).toContain("ROOT-README")
    expect(out).toContain("A-README")
    const s2 = session(dir.path)
    const rst = (await s2.read(ReadmeHooks.create({ host: s2.host, config: { names: ["README.rst"] } }), "pkg/a/f0.ts"))
      .text
    expect(rst).toContain("A-RST")
    expect(rst).not.toContain("A-README")
  })

  test("never injected: the file read itself, a README the model read, one the system prompt carries, dependencies, folders, links out of the worktree", async () => {
    await using outside = await tmpdir({ "README.md": "OUTSIDE-README\n" })
    await using dir = await tmpdir(FILES)
    fs.mkdirSync(dir.file("pkg/link"))
    fs.symlinkSync(path.join(outside.path, "README.md"), dir.file("pkg/link/README.md"))
    fs.writeFileSync(dir.file("pkg/link/l.ts"), "l")
    const s = session(dir.path)
    const hooks = ReadmeHooks.create({ host: s.host, config: {} })
    // The system prompt lists pkg/b/README.md through OpenCode's `instructions`.
    await hooks["experimental.chat.system.transform"]!(
      { model: {} as any },
      {
        system: [`You are OpenCode.\nInstructions from: ${dir.file("pkg/b/README.md")}\n# b\nB-README`],
      },
    )
    const own = (await s.read(hooks, "pkg/a/README.md")).text
    expect(own).not.toContain("A-README\n</system-reminder>")
    expect(blocks(own, dir.file("pkg/README.md"))).toBe(1)
    expect((await s.read(hooks, "pkg/a/f0.ts")).text).not.toContain("<system-reminder>") // the model read it itself
    expect((await s.read(hooks, "pkg/b/y.ts")).text).not.toContain("B-README")
    expect((await s.read(hooks, "node_modules/dep/index.js")).text).not.toContain("DEP-README")
    expect((await s.read(hooks, "pkg/link/l.ts")).text).not.toContain("OUTSIDE-README")
    expect((await s.read(hooks, outside.path + "/README.md")).text).not.toContain("<system-reminder>")
    const folder = { title: "", output: "<path>x</path>\n<type>directory</type>", metadata: {} }
    await hooks["tool.execute.after"]!(
      { tool: "read", sessionID: "s", callID: "d", args: { filePath: dir.file("pkg/b/deep") } },
      folder,
    )
    expect(folder.output).not.toContain("DEEP-README")
    expect(s.log.entries.filter((e) => e.level === "warn")).toEqual([])
  })

  test("the security check is asked before any byte of a README is read; protected READMEs and segments never appear", async () => {
    await using dir = await tmpdir({
      ...FILES,
      "pkg/b/README.md": "# b\nvisible\n<!-- @secure-start -->\nSEGMENT-SECRET\n<!-- @secure-end -->\nafter\n",
    })
    const asked: string[] = []
    const opened: string[] = []
    const real = fs.openSync
    const spy = spyOn(fs, "openSync").mockImplementation(((file: fs.PathLike, ...rest: any[]) => {
      opened.push(String(file))
      return (real as any)(file, ...rest)
    }) as any)
    try {
      const s = session(dir.path, {
        access: async (p) => {
          asked.push(p)
          return p.endsWith("pkg/a/README.md") ? "read of pkg/a/README.md is denied by rule 1" : undefined
        },
        segments: () => ({ read: [{ start: "@secure-start", end: "@secure-end" }], write: [] }),
      })
      const hooks = ReadmeHooks.create({ host: s.host, config: {} })
      const a = (await s.read(hooks, "pkg/a/f0.ts")).text
      expect(a).not.toContain("A-README")
      expect(a).toContain("PKG-README")
      expect(asked).toContain(dir.file("pkg/a/README.md"))
      expect(opened).not.toContain(dir.file("pkg/a/README.md"))
      const b = (await s.read(hooks, "pkg/b/y.ts")).text
      expect(b).toContain("visible")
      expect(b).toContain("after")
      expect(b).toContain("[REDACTED: protected segment]")
      expect(b).not.toContain("SEGMENT-SECRET")
      // Denied READMEs are asked about again on the next read (the policy may change), never read.
      await s.read(hooks, "pkg/a/f1.ts")
      expect(asked.filter((p) => p === dir.file("pkg/a/README.md"))).toHaveLength(2)
      expect(opened).not.toContain(dir.file("pkg/a/README.md"))
    } finally {
      spy.mockRestore()
    }
  })

  // Red team CC1: the README was read as UTF-8 whatever its encoding, so a UTF-16 README's markers were not found and
  // its segment reached the model with a NUL between characters.
  test("CC1: a UTF-16 README with a byte-order mark is decoded and its segments redacted; one without a mark or holding NUL bytes is not injected", async () => {
    const readme = "# wide\nvisible\n<!-- @secure-start -->\nSEGMENT-SECRET\n<!-- @secure-end -->\nafter\n"
    const be = (t: string) => {
      const b = Buffer.from("\ufeff" + t, "utf16le")
      b.swap16()
      return b
    }
    await using dir = await tmpdir({
      ...FILES,
      "w/le/x.ts": "x\n",
      "w/be/x.ts": "x\n",
      "w/raw/x.ts": "x\n",
      "w/nul/x.ts": "x\n",
    })
    fs.writeFileSync(dir.file("w/le/README.md"), Buffer.from("\ufeff" + readme, "utf16le"))
    fs.writeFileSync(dir.file("w/be/README.md"), be(readme))
    fs.writeFileSync(dir.file("w/raw/README.md"), Buffer.from(readme, "utf16le"))
    fs.writeFileSync(dir.file("w/nul/README.md"), `# nul\n\0\n${readme}`)
    const s = session(dir.path, {
      segments: () => ({ read: [{ start: "@secure-start", end: "@secure-end" }], write: [] }),
    })
    const hooks = ReadmeHooks.create({ host: s.host, config: {} })
    for (const wide of ["le", "be"]) {
      const out = (await s.read(hooks, `w/${wide}/x.ts`)).text
      expect(out).toContain(`${ReadmeInject.HEADER}${dir.file(`w/${wide}/README.md`)}\n# wide\nvisible`)
      expect(out).toContain("[REDACTED: protected segment]")
      expect(out).not.toContain("SEGMENT-SECRET")
      expect(out).not.toContain("\0")
    }
    for (const raw of ["raw", "nul"]) {
      const out = (await s.read(hooks, `w/${raw}/x.ts`)).text
      expect(out).not.toContain(dir.file(`w/${raw}/README.md`))
      expect(out).not.toContain("S\0E")
      expect(out).not.toContain("SEGMENT-SECRET")
    }
  })

  test("through the composition root with a real security policy: a protected README is never injected", async () => {
    await using dir = await tmpdir({
      ...FILES,
      ".opencode-security.json": JSON.stringify({
        version: "1.0",
        rules: [{ pattern: "pkg/a/README.md", type: "file", deniedOperations: ["read", "llm"] }],
      }),
    })
    const s = session(dir.path)
    const { hooks, built } = await Builtins.create(s.host, {
      options: {},
      logger: () => Logger.silent,
      only: ["builtin-tool-security", "readme-injection"],
    })
    expect(built).toEqual(["builtin-tool-security", "readme-injection"])
    const out = (await s.read(hooks, "pkg/a/f0.ts")).text
    expect(out).not.toContain("A-README")
    expect(out).toContain("PKG-README")
  })

  test("off switch: readme.enabled false builds no hooks", async () => {
    await using dir = await tmpdir(FILES)
    const s = session(dir.path)
    const { hooks, built } = await Builtins.create(s.host, {
      options: { readme: { enabled: false } },
      logger: () => Logger.silent,
      only: ["readme-injection"],
    })
    expect(built).toEqual([])
    expect(hooks["tool.execute.after"]).toBeUndefined()
  })
})

// Red team Y: a README that is a link to a protected file or into a protected folder, and a README named in another case
// in a protected folder, are asked about by their on-disk name and never injected (held; kept as a regression test).
describe("red team Y: README injection and the security policy", () => {
  for (const [name, link, rules] of [
    [
      "a README that is a link to a protected file",
      "../../secret.txt",
      [{ pattern: "secret.txt", type: "file", deniedOperations: ["read", "llm"] }],
    ],
    [
      "a README that is a link into a protected folder",
      "../../private/notes.md",
      [{ pattern: "private", type: "directory", deniedOperations: ["read", "llm"] }],
    ],
    [
      "a README in a protected folder (other case)",
      null,
      [{ pattern: "private", type: "directory", deniedOperations: ["read", "llm"] }],
    ],
  ] as const)
    test(`Y6: ${name} is never injected`, async () => {
      await using dir = await tmpdir({
        ...FILES,
        "secret.txt": "TOP-SECRET-FILE\n",
        "private/notes.md": "TOP-SECRET-FOLDER\n",
        "private/ReadMe.MD": "TOP-SECRET-README\n",
        "private/x.ts": "x\n",
        ".opencode-security.json": JSON.stringify({ version: "1.0", rules }),
      })
      if (link) {
        fs.rmSync(dir.file("pkg/a/README.md"))
        fs.symlinkSync(link, dir.file("pkg/a/README.md"))
      }
      const s = session(dir.path)
      const { hooks } = await Builtins.create(s.host, {
        options: {},
        logger: () => Logger.silent,
        only: ["builtin-tool-security", "readme-injection"],
      })
      const out = (await s.read(hooks, link ? "pkg/a/f0.ts" : "private/x.ts")).text
      expect(out).not.toContain("TOP-SECRET")
    })
})
