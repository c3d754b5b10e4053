import { beforeAll, describe, expect, test } from "bun:test"
import { AstLanguage } from "../../ast/languages"
import fs from "fs/promises"
import path from "path"
import z from "zod"
import type { Host } from "../../host"
import { AstTools } from "../../ast/tools"
import { Logger } from "../../util/log"
import { recordingExclusive, tmpdir } from "../fixture"

// The first use of a dynamic language registers all of them, compiling three grammars from source on a fresh
// checkout (about 2 s, more on a busy machine): done once here, with room, rather than inside a 5 s test.
beforeAll(() => AstLanguage.load("python").then(() => undefined), 120_000)

function context(directory: string, asks: any[] = [], reject?: string) {
  return {
    sessionID: "s",
    messageID: "m",
    agent: "build",
    directory,
    worktree: directory,
    abort: new AbortController().signal,
    metadata() {},
    async ask(input: any) {
      asks.push(input)
      if (reject && input.permission === reject) throw new Error(`permission ${reject} rejected`)
    },
  }
}

describe("the ast_grep_search / ast_grep_replace tool definitions", () => {
  test("argument schemas: the 25 languages, required pattern, context 0-50, dryRun optional", () => {
    const tools = AstTools.create({ directory: "/x", worktree: "/x", log: Logger.silent })
    const search = z.object(tools.ast_grep_search.args)
    expect(search.safeParse({ pattern: "x", lang: "python" }).success).toBe(true)
    expect(search.safeParse({ pattern: "x", lang: "cobol" }).success).toBe(false)
    expect(search.safeParse({ lang: "python" }).success).toBe(false)
    expect(search.safeParse({ pattern: "x", lang: "go", context: 51 }).success).toBe(false)
    expect(search.safeParse({ pattern: "x", lang: "go", context: 2, paths: ["src"], globs: ["!*.go"] }).success).toBe(
      true,
    )
    const replace = z.object(tools.ast_grep_replace.args)
    expect(replace.safeParse({ pattern: "a", rewrite: "b", lang: "rust" }).success).toBe(true)
    expect(replace.safeParse({ pattern: "a", lang: "rust" }).success).toBe(false)
    expect(tools.ast_grep_search.description).toContain("at most 100 files and 500 matches")
    expect(tools.ast_grep_search.description).toContain("60 s")
    expect(tools.ast_grep_replace.description).toContain("Dry run by default")
  })

  test("search returns the formatted text; replace dry-runs by default and asks `edit` before a live run", async () => {
    await using dir = await tmpdir({ "a.py": "print(1)\nprint(x)\n" })
    const host: Host = { directory: dir.path, worktree: dir.path, log: Logger.silent }
    const tools = AstTools.create(host)
    const asks: any[] = []
    const ctx = context(dir.path, asks)
    const found = await tools.ast_grep_search.execute({ pattern: "print($A)", lang: "python" }, ctx)
    expect(found).toStartWith("Found 2 matches in 1 file (python")
    const dry = await tools.ast_grep_replace.execute({ pattern: "print($A)", rewrite: "log($A)", lang: "python" }, ctx)
    expect(dry).toContain("No file was written")
    expect(asks).toEqual([])
    expect(await fs.readFile(dir.file("a.py"), "utf8")).toBe("print(1)\nprint(x)\n")
    const live = await tools.ast_grep_replace.execute(
      { pattern: "print($A)", rewrite: "log($A)", lang: "python", dryRun: false },
      ctx,
    )
    expect(live).toStartWith("Replaced 2 matches in 1 file")
    expect(asks.map((a) => [a.permission, a.patterns])).toEqual([["edit", ["a.py"]]])
    expect(await fs.readFile(dir.file("a.py"), "utf8")).toBe("log(1)\nlog(x)\n")
  })

  // With a security layer, a command started beside the tool could swap a link between its check of a file and its
  // read or write: both tools run their whole work under `host.exclusive`, which holds shell commands back.
  test("both tools run their work under host.exclusive; the edit prompt runs outside it, and writes are checked again after it", async () => {
    await using dir = await tmpdir({ "a.py": "print(1)\n" })
    const spans: string[] = []
    const host: Host = {
      directory: dir.path,
      worktree: dir.path,
      log: Logger.silent,
      access: async (file, op) => {
        spans.push(`${op} ${path.basename(file)}`)
        return undefined
      },
      exclusive: recordingExclusive(spans),
    }
    const tools = AstTools.create(host)
    const ctx = { ...context(dir.path, []), ask: async (input: any) => void spans.push(`ask ${input.permission}`) }
    await tools.ast_grep_search.execute({ pattern: "print($A)", lang: "python" }, ctx)
    await tools.ast_grep_replace.execute(
      { pattern: "print($A)", rewrite: "log($A)", lang: "python", dryRun: false },
      ctx,
    )
    expect(spans[0]).toBe("hold")
    expect(spans.filter((s) => s === "hold")).toHaveLength(2)
    // Every check of a path happens while the hold is in place; the prompt while it is let go.
    let held = false
    for (const s of spans) {
      if (s === "hold" || s === "hold again") held = true
      else if (s === "release" || s === "let go") held = false
      else if (s.startsWith("ask ")) expect([s, held]).toEqual([s, false])
      else expect([s, held]).toEqual([s, true])
    }
    // The write is checked once before the prompt and once after it.
    const ask = spans.indexOf("ask edit")
    expect(spans.slice(0, ask)).toContain("write a.py")
    expect(spans.slice(ask)).toContain("write a.py")
    expect(spans.at(-1)).toBe("release")
  })

  test("a rejected edit permission writes nothing; a path outside the project asks external_directory", async () => {
    await using dir = await tmpdir({ "p/a.py": "print(1)\n", "outside/b.py": "print(2)\n" })
    const project = dir.file("p")
    const tools = AstTools.create({ directory: project, worktree: project, log: Logger.silent })
    const asks: any[] = []
    const error = await tools.ast_grep_replace
      .execute({ pattern: "print($A)", rewrite: "x", lang: "python", dryRun: false }, context(project, asks, "edit"))
      .catch((e) => e)
    expect(error.message).toBe("permission edit rejected")
    expect(await fs.readFile(dir.file("p/a.py"), "utf8")).toBe("print(1)\n")
    const out = await tools.ast_grep_search.execute(
      { pattern: "print($A)", lang: "python", paths: ["../outside"] },
      context(project, asks),
    )
    expect(out).toContain("Found 1 match")
    expect(asks.at(-1)).toMatchObject({ permission: "external_directory", patterns: [dir.file("outside") + "/*"] })
  })

  test("host.access installed after the tools were created is honoured (the security feature comes later)", async () => {
    await using dir = await tmpdir({ "a.py": "print(1)\n", "secret.py": "print('token')\n" })
    const host: Host = { directory: dir.path, worktree: dir.path, log: Logger.silent }
    const tools = AstTools.create(host)
    host.access = async (file) => (file.endsWith("secret.py") ? "protected" : undefined)
    const out = await tools.ast_grep_search.execute({ pattern: "print($A)", lang: "python" }, context(dir.path))
    expect(out).toContain("Found 1 match in 1 file")
    expect(out).not.toContain("token")
    expect(out).toContain("1 file not searched: protected by the security policy")
  })

  test("replace: a rewrite meta-variable the pattern does not capture is a warning in a dry run, a named error live (red team X9)", async () => {
    await using dir = await tmpdir({ "a.py": 'x = 1\nprint(x, "done")\n' })
    const tools = AstTools.create({ directory: dir.path, worktree: dir.path, log: Logger.silent })
    const args = { pattern: "print($$$A)", rewrite: "log($$$ARGS)", lang: "python" }
    const dry = await tools.ast_grep_replace.execute(args, context(dir.path))
    expect(dry).toContain("+log()")
    expect(dry).toContain("[WARNING] The rewrite names $$$ARGS, which the pattern does not capture (it captures $$$A)")
    const live = await tools.ast_grep_replace.execute({ ...args, dryRun: false }, context(dir.path)).catch((e) => e)
    expect(live.name).toBe("RewriteNotCaptured")
    expect(await fs.readFile(path.join(dir.path, "a.py"), "utf8")).toBe('x = 1\nprint(x, "done")\n')
  })

  test("bad input is a named error with an actionable message", async () => {
    await using dir = await tmpdir({ "a.py": "print(1)\n" })
    const tools = AstTools.create({ directory: dir.path, worktree: dir.path, log: Logger.silent })
    const run = (args: any) => tools.ast_grep_search.execute(args, context(dir.path)).catch((e) => e)
    expect((await run({ pattern: "", lang: "python" })).message).toContain("the pattern is empty")
    expect((await run({ pattern: "print($A)", lang: "python", paths: ["missing"] })).message).toBe(
      "path not found: missing",
    )
    expect((await run({ pattern: "print($A)", lang: "python", globs: ["["] })).name).toBe("InvalidGlob")
  })
})
