import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { LspClient } from "../../lsp/client"
import { LspEdit } from "../../lsp/edit"
import { LspServers } from "../../lsp/servers"
import { Lsp } from "../../lsp/service"
import { Logger } from "../../util/log"
import { REFUSING, SILENT, SOLUTION, THREE_FILES, processesIn, processesInGroups, project, tsc } from "./fixtures"

// Real language servers from npm (typescript-language-server 6.0.2 + TypeScript 5.9.3, pyright 1.1.414). Each
// describe block starts its servers once and stops them in afterAll; the last test checks none is left.
const SLOW = { timeout: 180_000 }
const log = Logger.silent

describe("lsp with typescript-language-server", () => {
  let proj: Awaited<ReturnType<typeof project>>
  let lsp: Lsp.Service
  const file = (rel: string) => path.join(proj.dir, rel)
  const write = (rel: string, text: string) => fs.writeFile(file(rel), text)
  const read = (rel: string) => fs.readFile(file(rel), "utf8")
  let denyWrite: string | undefined
  let onWriteCheck: (() => Promise<void>) | undefined

  beforeAll(async () => {
    proj = await project({
      ...THREE_FILES,
      "src/bad.ts": "export const count: number = 'three'\n",
      "src/clean.ts": "export const ok = 1\n",
    })
    lsp = Lsp.create({
      directory: proj.dir,
      worktree: proj.dir,
      log,
      config: true,
      access: async (f, op) => {
        if (op === "write") await onWriteCheck?.()
        return op === "write" && denyWrite && f.endsWith(denyWrite) ? "protected for the test" : undefined
      },
    })
  })

  afterAll(async () => {
    await lsp?.stop()
    expect(await processesIn(proj.dir)).toEqual([])
    await proj[Symbol.asyncDispose]()
  })

  test(
    "the first diagnostics call on a file with a TS2322 returns code 2322 at its position",
    async () => {
      const report = await lsp.diagnostics({ file: "src/bad.ts" })
      expect(report.status).toBe("ok")
      expect(report.files).toHaveLength(1)
      const [d] = report.files[0].items
      expect(d.code).toBe(2322)
      expect(d.severity).toBe(1)
      expect(d.range.start).toEqual({ line: 0, character: 13 })
    },
    SLOW,
  )

  test("a clean file returns an empty list with status ok", async () => {
    const report = await lsp.diagnostics({ file: "src/clean.ts" })
    expect(report.status).toBe("ok")
    expect(report.files[0].items).toEqual([])
  })

  test(
    "fresh after edits: an error introduced then fixed is seen 20 times out of 20",
    async () => {
      let seen = 0
      for (let i = 0; i < 20; i++) {
        await write("src/clean.ts", `export const ok${i}: number = ${i % 2 ? "'x'" : `"y${i}"`}\n`)
        const broken = await lsp.diagnostics({ file: "src/clean.ts" })
        await write("src/clean.ts", `export const ok${i}: number = ${i}\n`)
        const fixed = await lsp.diagnostics({ file: "src/clean.ts" })
        if (
          broken.status === "ok" &&
          broken.files[0].items.map((d) => d.code).join() === "2322" &&
          fixed.status === "ok" &&
          fixed.files[0].items.length === 0
        )
          seen++
      }
      expect(seen).toBe(20)
    },
    SLOW,
  )

  test(
    "severity filter and whole-project diagnostics",
    async () => {
      await write("src/warn.ts", "export function f(a: number) {\n  const unused = 1\n  return a\n}\n")
      const all = await lsp.diagnostics({ file: "src/warn.ts", severity: "all" })
      expect(all.files[0].items.some((d) => d.severity === 4)).toBe(true) // 'unused' is declared but never read
      const errors = await lsp.diagnostics({ file: "src/warn.ts", severity: "error" })
      expect(errors.files[0].items).toEqual([])
      const project = await lsp.diagnostics({ severity: "error" })
      expect(project.status).toBe("ok")
      const withErrors = project.files.filter((f) => f.items.length).map((f) => path.relative(proj.dir, f.file))
      expect(withErrors).toEqual(["src/bad.ts"])
      expect(project.files.length).toBeGreaterThanOrEqual(6)
    },
    SLOW,
  )

  test("prepareRename: range and placeholder on an identifier; a structured refusal on a keyword or a string", async () => {
    await write("src/strings.ts", 'export const greeting = "hello"\nconsole.log(greeting)\n')
    const ok = await lsp.prepareRename({ file: "src/util.ts", line: 0, character: 18 })
    expect(ok).toMatchObject({ ok: true, placeholder: "computeTotal" })
    if (ok.ok) expect(ok.range).toEqual({ start: { line: 0, character: 16 }, end: { line: 0, character: 28 } })
    // `return` (a keyword; TypeScript renames a declaration from its `export` modifier, so that is not one here).
    const keyword = await lsp.prepareRename({ file: "src/util.ts", line: 1, character: 3 })
    expect(keyword.ok).toBe(false)
    const literal = await lsp.prepareRename({ file: "src/strings.ts", line: 0, character: 26 })
    expect(literal.ok).toBe(false)
    if (!literal.ok) expect(literal.reason).toBe("You cannot rename this element.")
  })

  test(
    "rename of an exported symbol used in three files: all rewritten, tsc passes before and after",
    async () => {
      await fs.rm(file("src/bad.ts"))
      await fs.rm(file("src/warn.ts"))
      await fs.rm(file("src/strings.ts"))
      await write("src/clean.ts", "export const ok = 1\n")
      expect(tsc(proj.dir)).toMatchObject({ code: 0 })
      const result = await lsp.rename({ file: "src/a.ts", line: 2, character: 18 }, "sumAll")
      expect(result.files.map((f) => [path.relative(proj.dir, f.file), f.edits]).sort()).toEqual([
        ["src/a.ts", 2],
        ["src/b.ts", 3],
        ["src/util.ts", 1],
      ])
      expect(result.edits).toBe(6)
      expect(await read("src/util.ts")).toContain("export function sumAll(")
      expect(await read("src/b.ts")).toBe(
        'import { sumAll } from "./util"\n\nexport function b() {\n  return sumAll([3]) + sumAll([4])\n}\n',
      )
      expect(await read("src/a.ts")).not.toContain("computeTotal")
      expect(tsc(proj.dir)).toMatchObject({ code: 0 })
      // The servers' view follows: no stale error about the old name.
      const after = await lsp.diagnostics({ file: "src/b.ts", severity: "error" })
      expect(after.files[0].items).toEqual([])
    },
    SLOW,
  )

  test("rename refused for one target (security policy): no file changes", async () => {
    const before = await Promise.all(["src/a.ts", "src/b.ts", "src/util.ts"].map(read))
    denyWrite = "src/b.ts"
    try {
      const error = await lsp.rename({ file: "src/util.ts", line: 0, character: 18 }, "addUp").catch((e) => e)
      expect(LspEdit.Refused.is(error)).toBe(true)
      expect(error.message).toContain("b.ts")
    } finally {
      denyWrite = undefined
    }
    expect(await Promise.all(["src/a.ts", "src/b.ts", "src/util.ts"].map(read))).toEqual(before)
  })

  test(
    "rename refused when a target changed on disk since the request: no file changes",
    async () => {
      await lsp.stop()
      lsp = Lsp.create({
        directory: proj.dir,
        worktree: proj.dir,
        log,
        config: true,
        access: async (_f, op) => {
          if (op === "write") await onWriteCheck?.()
          return undefined
        },
      })
      const before = await Promise.all(["src/a.ts", "src/util.ts"].map(read))
      let touched = false
      onWriteCheck = async () => {
        if (touched) return
        touched = true
        // Another writer changes b.ts after the server computed its edit.
        await Bun.sleep(20)
        await write("src/b.ts", (await read("src/b.ts")) + "// edited meanwhile\n")
      }
      try {
        const error = await lsp.rename({ file: "src/util.ts", line: 0, character: 18 }, "addUp").catch((e) => e)
        // b.ts mentions the name, so the rename opens it in the server first: the change is caught when the plan is
        // written ("changed while the edit was prepared") rather than by the server-read check ("changed since").
        expect(error instanceof Error ? error.message : JSON.stringify(error)).toMatch(/changed (since|while)/)
        expect(LspEdit.Refused.is(error)).toBe(true)
      } finally {
        onWriteCheck = undefined
      }
      expect(await Promise.all(["src/a.ts", "src/util.ts"].map(read))).toEqual(before)
      expect(await read("src/b.ts")).toContain("sumAll([3])")
    },
    SLOW,
  )

  test("rename on a keyword is a named 'cannot rename' error, nothing written", async () => {
    const error = await lsp.rename({ file: "src/util.ts", line: 1, character: 3 }, "x").catch((e) => e)
    expect(Lsp.CannotRename.is(error)).toBe(true)
  })

  test("read-only operations answer", async () => {
    const defs = await lsp.definition({ file: "src/b.ts", line: 3, character: 10 })
    expect(defs.map((d) => [path.relative(proj.dir, d.file), d.range.start.line])).toEqual([["src/util.ts", 0]])
    const refs = await lsp.references({ file: "src/util.ts", line: 0, character: 18 })
    expect(refs.length).toBe(6)
    const hover = await lsp.hover({ file: "src/util.ts", line: 0, character: 18 })
    expect(JSON.stringify(hover)).toContain("sumAll(items: number[]): number")
    const symbols = await lsp.documentSymbol("src/util.ts")
    expect(symbols.map((s: any) => s.name)).toEqual(["sumAll"])
    const ws = await lsp.workspaceSymbol("sumAll", "src/a.ts")
    expect(ws.some((s: any) => s.name === "sumAll")).toBe(true)
    const incoming = await lsp.calls({ file: "src/util.ts", line: 0, character: 18 }, "incoming")
    expect(incoming.length).toBeGreaterThanOrEqual(1)
    const prepared = await lsp.prepareCallHierarchy({ file: "src/util.ts", line: 0, character: 18 })
    expect(prepared[0]?.name).toBe("sumAll")
    expect(await lsp.implementation({ file: "src/util.ts", line: 0, character: 18 })).toBeArray()
  })

  test("a position outside the file is a named error giving the line count or the line's length", async () => {
    // Three lines: the last one is empty (after the final line break). Line 1 holds an emoji (2 UTF-16 units).
    await write("src/pos.ts", "export const smile = '\u{1F600}'\nexport const n = 1\n")
    try {
      const line = await lsp.hover({ file: "src/pos.ts", line: 99998, character: 0 }).catch((e) => e)
      expect(Lsp.BadPosition.is(line)).toBe(true)
      expect(line.message).toBe(
        "No position 99999:1 in src/pos.ts: line 99999 is past the end of the file (it has 3 lines). Nothing was " +
          "asked of the server.",
      )
      const column = await lsp.references({ file: "src/pos.ts", line: 1, character: 998 }).catch((e) => e)
      expect(column.message).toBe(
        "No position 2:999 in src/pos.ts: character 999 is past the end of line 2 (18 characters; 19 is just after " +
          "the last one). Nothing was asked of the server.",
      )
      const wide = await lsp.definition({ file: "src/pos.ts", line: 0, character: 26 }).catch((e) => e)
      expect(wide.message).toBe(
        "No position 1:27 in src/pos.ts: character 27 is past the end of line 1 (25 characters; 26 is just after " +
          "the last one); characters count UTF-16 code units: one outside the Basic Multilingual Plane (an emoji) " +
          "counts 2. Nothing was asked of the server.",
      )
      const at = { file: "src/pos.ts", line: 3, character: 0 }
      for (const call of [
        () => lsp.implementation(at),
        () => lsp.prepareCallHierarchy(at),
        () => lsp.calls(at, "incoming"),
        () => lsp.prepareRename(at),
        () => lsp.rename(at, "renamed"),
      ])
        expect(Lsp.BadPosition.is(await call().catch((e) => e))).toBe(true)
      // Just after a line's last character, and the empty last line, are positions.
      expect(await lsp.hover({ file: "src/pos.ts", line: 1, character: 18 })).toBeArray()
      expect(await lsp.hover({ file: "src/pos.ts", line: 2, character: 0 })).toBeArray()
    } finally {
      await fs.rm(file("src/pos.ts"))
    }
  })

  test("rename to a keyword, a name with a space or a piece of code: a named error about the new name, nothing written", async () => {
    const names = ["src/a.ts", "src/b.ts", "src/util.ts"]
    const before = await Promise.all(names.map(read))
    for (const [name, reason] of [
      ["class", "it is a reserved word in TypeScript/JavaScript"],
      ["merge path", "it contains a space (a name is one word)"],
      [
        "x;process.exit(1)",
        'it contains ";", which cannot be part of a name in TypeScript/JavaScript: an identifier starts with a ' +
          "letter, $ or _ and goes on with letters, digits, $ or _",
      ],
    ]) {
      const error = await lsp.rename({ file: "src/util.ts", line: 0, character: 18 }, name).catch((e) => e)
      expect(Lsp.InvalidName.is(error)).toBe(true)
      expect(error.message).toBe(
        `The new name ${JSON.stringify(name)} is not a valid name in src/util.ts: ${reason}. Nothing was changed; ` +
          "call rename again with a valid identifier.",
      )
    }
    expect(await Promise.all(names.map(read))).toEqual(before)
  })
})

describe("lsp on a TypeScript solution (tsconfig.json with references, as hono)", () => {
  test(
    "a cold server: references from a source file include the tests of the other referenced project",
    async () => {
      await using proj = await project(SOLUTION)
      const lsp = Lsp.create({ directory: proj.dir, worktree: proj.dir, log, config: true })
      try {
        const refs = await lsp.references({ file: "src/util.ts", line: 0, character: 18 })
        const files = [...new Set(refs.map((r) => path.relative(proj.dir, r.file)))].sort()
        expect(files).toEqual(["src/a.ts", "src/util.test.ts", "src/util.ts"])
        expect(refs).toHaveLength(6)
        expect(await lsp.projects("src/util.ts")).toEqual([])
      } finally {
        await lsp.stop()
      }
      expect(await processesIn(proj.dir)).toEqual([])
    },
    SLOW,
  )
})

describe("lsp with pyright", () => {
  test(
    "diagnostics, prepareRename on an identifier, refusal on a keyword and a string",
    async () => {
      await using proj = await project({
        "pyproject.toml": "",
        "app.py":
          'def total(values: list[int]) -> int:\n    return sum(values)\n\nlabel: int = "x"\nprint(total([1]))\n',
      })
      const lsp = Lsp.create({ directory: proj.dir, worktree: proj.dir, log, config: true })
      const groups: number[] = []
      try {
        const report = await lsp.diagnostics({ file: "app.py", severity: "error" })
        groups.push(...(await lsp.running()).map((c) => c.pid!))
        expect(report.status).toBe("ok")
        const [d] = report.files[0].items
        expect(d.range.start).toEqual({ line: 3, character: 13 })
        expect(String(d.code)).toBe("reportAssignmentType")
        await fs.writeFile(path.join(proj.dir, "app.py"), "label: int = 1\n")
        expect((await lsp.diagnostics({ file: "app.py", severity: "error" })).files[0].items).toEqual([])
        await fs.writeFile(
          path.join(proj.dir, "app.py"),
          'def total(values: list[int]) -> int:\n    return sum(values)\n\nprint(total([1]), "text")\n',
        )
        const ok = await lsp.prepareRename({ file: "app.py", line: 0, character: 6 })
        expect(ok).toMatchObject({ ok: true, placeholder: "total" })
        expect((await lsp.prepareRename({ file: "app.py", line: 0, character: 1 })).ok).toBe(false)
        expect((await lsp.prepareRename({ file: "app.py", line: 3, character: 21 })).ok).toBe(false)
        const text = await fs.readFile(path.join(proj.dir, "app.py"), "utf8")
        for (const [name, reason] of [
          ["not valid name", "it contains a space (a name is one word)"],
          ["class", "it is a keyword in Python"],
        ]) {
          const error = await lsp.rename({ file: "app.py", line: 0, character: 6 }, name).catch((e) => e)
          expect(Lsp.InvalidName.is(error)).toBe(true)
          expect(error.message).toContain(`is not a valid name in app.py: ${reason}. Nothing was changed`)
        }
        expect(await fs.readFile(path.join(proj.dir, "app.py"), "utf8")).toBe(text)
        const far = await lsp.hover({ file: "app.py", line: 0, character: 998 }).catch((e) => e)
        expect(far.message).toContain("character 999 is past the end of line 1 (36 characters; 37 is just after")
        const renamed = await lsp.rename({ file: "app.py", line: 0, character: 6 }, "grand_total")
        expect(renamed.edits).toBe(2)
        expect(await fs.readFile(path.join(proj.dir, "app.py"), "utf8")).toContain("print(grand_total([1]), ")
      } finally {
        await lsp.stop()
      }
      expect(await processesIn(proj.dir)).toEqual([])
      // pyright works from its own package folder: its process group is what shows it stopped.
      expect(groups).toHaveLength(1)
      expect(await processesInGroups(groups)).toEqual([])
    },
    SLOW,
  )
})

describe("lsp when the host dies", () => {
  test(
    "the host killed with SIGKILL (no exit hook runs): its servers and their helpers exit on their own",
    async () => {
      await using proj = await project({
        ...THREE_FILES,
        "pyproject.toml": "",
        "app.py": "x: int = 1\n",
      })
      const script = path.join(proj.dir, "host.ts")
      const service = path.resolve(import.meta.dir, "../../lsp/service.ts")
      const logger = path.resolve(import.meta.dir, "../../util/log.ts")
      await fs.writeFile(
        script,
        [
          `import { Lsp } from ${JSON.stringify(service)}`,
          `import { Logger } from ${JSON.stringify(logger)}`,
          `const lsp = Lsp.create({ directory: ${JSON.stringify(proj.dir)}, worktree: ${JSON.stringify(proj.dir)}, log: Logger.silent, config: true })`,
          `await lsp.diagnostics({ file: "src/a.ts" })`,
          `await lsp.diagnostics({ file: "app.py" })`,
          `console.log(JSON.stringify((await lsp.running()).map((c) => c.pid)))`,
          `setInterval(() => {}, 1000)`,
        ].join("\n"),
      )
      const host = Bun.spawn([process.execPath, script], { cwd: proj.dir, stdout: "pipe", stderr: "pipe" })
      const timer = setTimeout(() => host.kill("SIGKILL"), 120_000)
      let groups: number[] = []
      try {
        const reader = host.stdout.getReader()
        let out = ""
        while (!out.includes("\n")) {
          const { value, done } = await reader.read()
          if (done) break
          out += new TextDecoder().decode(value)
        }
        groups = JSON.parse(out.trim() || "[]")
        expect(groups).toHaveLength(2) // typescript-language-server and pyright
        expect((await processesInGroups(groups, 0)).length).toBeGreaterThanOrEqual(3) // tsserver is in the first group
      } finally {
        clearTimeout(timer)
        host.kill("SIGKILL")
        await host.exited
      }
      // They watch the processId sent in initialize and their stdin; a generous wait, no timing asserted.
      expect(await processesInGroups(groups, 60_000)).toEqual([])
    },
    SLOW,
  )
})

describe("lsp without a usable server", () => {
  test("a silent server yields status timeout, never an empty clean list", async () => {
    await using proj = await project({ "a.silent": "anything\n" })
    const lsp = Lsp.create({
      directory: proj.dir,
      worktree: proj.dir,
      log,
      config: { silent: { command: ["node", SILENT], extensions: [".silent"] } },
      diagnosticsTimeoutMs: 300,
    })
    try {
      const report = await lsp.diagnostics({ file: "a.silent" })
      expect(report.status).toBe("timeout")
      expect(report.files[0]).toMatchObject({ server: "silent", status: "timeout", items: [] })
    } finally {
      await lsp.stop()
    }
    expect(await processesIn(proj.dir)).toEqual([])
  })

  test("project-wide with a silent server: one wait, its other files listed as not checked, status timeout", async () => {
    await using proj = await project({ "a.silent": "a\n", "b.silent": "b\n", "c.silent": "c\n" })
    const lsp = Lsp.create({
      directory: proj.dir,
      worktree: proj.dir,
      log,
      config: { silent: { command: ["node", SILENT], extensions: [".silent"] } },
      diagnosticsTimeoutMs: 300,
    })
    try {
      const report = await lsp.diagnostics({})
      expect(report.status).toBe("timeout")
      expect(report.files.map((f) => [path.basename(f.file), f.status])).toEqual([["a.silent", "timeout"]])
      expect(report.skipped.map((s) => [path.basename(s.file), s.reason])).toEqual([
        ["b.silent", "not checked: silent gave no result for an earlier file"],
        ["c.silent", "not checked: silent gave no result for an earlier file"],
      ])
    } finally {
      await lsp.stop()
    }
    expect(await processesIn(proj.dir)).toEqual([])
  })

  test(
    "a server that never answers initialize: a named error saying so, never a result",
    async () => {
      await using proj = await project({ "a.mute": "anything\n" })
      const lsp = Lsp.create({
        directory: proj.dir,
        worktree: proj.dir,
        log,
        config: { mute: { command: ["node", SILENT, "--mute"], extensions: [".mute"] } },
        initializeTimeoutMs: 500,
      })
      try {
        const error = await lsp.diagnostics({ file: "a.mute" }).catch((e) => e)
        expect(LspClient.StartFailed.is(error)).toBe(true)
        expect(error.message).toBe(
          "The mute language server did not start: it did not answer initialize within 0.5 s. Nothing is known about " +
            'the file (this is not a clean result); check the server\'s command in opencode.json "lsp" or call again.',
        )
      } finally {
        await lsp.stop()
      }
      expect(await processesIn(proj.dir)).toEqual([])
    },
    SLOW,
  )

  test("a server refusing a rename prepareRename allowed: the error is about the new name, never the element", async () => {
    await using proj = await project({ "a.refuse": "alpha beta\n" })
    for (const [args, reason] of [
      [[], "a symbol named gamma already exists"],
      [["--null"], "it returned no edit"],
    ] as const) {
      const lsp = Lsp.create({
        directory: proj.dir,
        worktree: proj.dir,
        log,
        config: { refusing: { command: ["node", REFUSING, ...args], extensions: [".refuse"] } },
      })
      try {
        const at = { file: "a.refuse", line: 0, character: 1 }
        expect(await lsp.prepareRename(at)).toMatchObject({ ok: true, placeholder: "alpha" })
        const error = await lsp.rename(at, "gamma").catch((e) => e)
        expect(Lsp.RenameRefused.is(error)).toBe(true)
        expect(error.message).toBe(
          `refusing refused to rename \`alpha\` to "gamma" (a.refuse): ${reason}. The symbol itself can be renamed ` +
            "(prepareRename accepts it): the new name is likely not valid there or clashes with another name. " +
            "Nothing was changed.",
        )
      } finally {
        await lsp.stop()
      }
    }
    expect(await fs.readFile(path.join(proj.dir, "a.refuse"), "utf8")).toBe("alpha beta\n")
    expect(await processesIn(proj.dir)).toEqual([])
  })

  test("no server for the file type: the error names the configuration needed", async () => {
    await using proj = await project({ "a.xyz": "x\n" })
    const lsp = Lsp.create({ directory: proj.dir, worktree: proj.dir, log, config: true })
    const error = await lsp.diagnostics({ file: "a.xyz" }).catch((e) => e)
    expect(LspServers.NotConfigured.is(error)).toBe(true)
    expect(error.message).toContain('"extensions": [".xyz"]')
    await lsp.stop()
  })

  test("server not installed: the error names the package to install and the command setting", async () => {
    await using proj = await project({ "main.go": "package main\n" })
    const lsp = Lsp.create({
      directory: proj.dir,
      worktree: proj.dir,
      log,
      config: { gopls: { command: ["gopls-not-installed-here"] } },
    })
    const error = await lsp.diagnostics({ file: "main.go" }).catch((e) => e)
    expect(LspServers.NotInstalled.is(error)).toBe(true)
    expect(error.message).toContain("gopls-not-installed-here")
    expect(error.message).toContain('"lsp": { "gopls": { "command"')
    // The catalog's own install hint, for a server that is not installed: tools.test.ts (yaml-language-server).
    await lsp.stop()
  })

  test('"lsp": false turns the servers off with an error saying where', async () => {
    await using proj = await project({ "a.ts": "export {}\n", "opencode.json": '{ "lsp": false }' })
    const lsp = Lsp.create({ directory: proj.dir, worktree: proj.dir, log })
    const error = await lsp.diagnostics({ file: "a.ts" }).catch((e) => e)
    expect(LspServers.Disabled.is(error)).toBe(true)
    expect(error.message).toContain("opencode.json")
  })
})
