import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { AstLanguage } from "../../packages/core/ast/languages"
import { Grammar } from "../../packages/core/ast/grammar"
import { LANGUAGE_CASES } from "../../packages/core/test/ast/fixtures"
import { ForkPrepare } from "../../scripts/patches/prepare"
import { tmpdir } from "../../packages/core/test/fixture"
import { bunSpawnSync } from "../../packages/core/test/spawn-sync"

const ROOT = path.resolve(import.meta.dir, "../..")

describe("the AST parser libraries a compiled binary carries", () => {
  test("every dynamic language's library is listed for this platform (what the fork build embeds)", async () => {
    const { libraries, failures } = await AstLanguage.prebuilt()
    expect(Object.fromEntries(failures)).toEqual({})
    expect(Object.keys(libraries).sort()).toEqual([...AstLanguage.DYNAMIC].sort())
    expect(AstLanguage.DYNAMIC).toHaveLength(20)
    for (const lib of Object.values(libraries)) expect(fs.existsSync(lib!.library)).toBe(true)
  }, 120_000)

  test("paths inside a compiled binary are told apart from real files", () => {
    expect(Grammar.embedded("/$bunfs/root/python-a1b2.so")).toBe(true)
    expect(Grammar.embedded("B:/~BUN/root/python.so")).toBe(true)
    expect(Grammar.embedded("/home/me/.cache/python.so")).toBe(false)
  })

  // The fork's mechanism end to end, without the fork: a program compiled with `bun build --compile` that embeds the
  // 20 libraries (as the fork's grammars.gen.ts does), moved to a folder with no node_modules, searches in all 25
  // languages; the libraries are copied out of the binary once, into the cache.
  test("a relocated compiled binary with the libraries embedded searches in all 25 languages", async () => {
    await using build = await tmpdir({})
    await using moved = await tmpdir({})
    const { libraries } = await AstLanguage.prebuilt()
    const table: Record<string, AstLanguage.Prebuilt> = {}
    fs.mkdirSync(build.file("grammars"))
    for (const [name, lib] of Object.entries(libraries)) {
      fs.copyFileSync(lib!.library, build.file(`grammars/${name}.so`))
      table[name] = { ...lib!, library: `${name}.so` }
    }
    fs.writeFileSync(build.file("grammars.gen.ts"), ForkPrepare.grammarsModule(table))
    fs.writeFileSync(
      build.file("entry.ts"),
      [
        `import { AstLanguage } from ${JSON.stringify(path.join(ROOT, "packages/core/ast/languages.ts"))}`,
        `import { AstSearch } from ${JSON.stringify(path.join(ROOT, "packages/core/ast/search.ts"))}`,
        'import fs from "fs"',
        'import path from "path"',
        'import grammars from "./grammars.gen"',
        "AstLanguage.provide(grammars)",
        "const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))",
        "const out = {}",
        "for (const [lang, c] of Object.entries(cases)) {",
        "  const dir = fs.mkdtempSync(path.join(process.argv[3], lang + '-'))",
        "  fs.writeFileSync(path.join(dir, c.file), c.source)",
        "  try {",
        "    const r = await AstSearch.run({ directory: dir, lang, pattern: c.pattern })",
        "    out[lang] = r.matches.length",
        "  } catch (e) { out[lang] = String(e) }",
        "}",
        "console.log(JSON.stringify(out))",
      ].join("\n"),
    )
    const compile = bunSpawnSync(
      [process.execPath, "build", "--compile", build.file("entry.ts"), "--outfile", build.file("probe")],
      { cwd: build.path, stderr: "pipe", stdout: "pipe" },
    )
    expect(compile.stderr.toString()).not.toContain("error:")
    expect(compile.exitCode).toBe(0)
    fs.renameSync(build.file("probe"), moved.file("probe"))
    fs.writeFileSync(moved.file("cases.json"), JSON.stringify(LANGUAGE_CASES))
    fs.mkdirSync(moved.file("work"))
    const run = bunSpawnSync([moved.file("probe"), moved.file("cases.json"), moved.file("work")], {
      cwd: moved.path,
      env: { PATH: process.env.PATH ?? "", HOME: moved.path, XDG_CACHE_HOME: moved.file("cache") },
      stderr: "pipe",
      stdout: "pipe",
    })
    expect(run.stderr.toString()).toBe("")
    const counts = JSON.parse(run.stdout.toString())
    const expected = Object.fromEntries(Object.entries(LANGUAGE_CASES).map(([lang, c]) => [lang, c.matches.length]))
    expect(counts).toEqual(expected)
    const copied = fs.readdirSync(moved.file("cache/opencode-builtins/grammars/embedded"))
    expect(copied).toHaveLength(20)
  }, 240_000)
})
