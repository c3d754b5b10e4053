import { describe, expect, test } from "bun:test"
import path from "path"
import { AstFormat } from "../../ast/format"
import { AstLanguage } from "../../ast/languages"
import { AstPool } from "../../ast/pool"
import { AstReplace } from "../../ast/replace"
import { AstSearch } from "../../ast/search"
import { tmpdir } from "../fixture"
import { CliOracle } from "./cli-oracle"
import { bunSpawnSync } from "../spawn-sync"

const SOURCE = [
  "import { log } from './log'", // 1
  "", // 2
  "export function total(items: number[]) {", // 3
  "  let sum = 0", // 4
  "  for (const item of items) sum += item", // 5
  "  console.log('total', sum)", // 6
  "  return sum", // 7
  "}", // 8
  "", // 9
  "console.log(total([1, 2]))", // 10
].join("\n")

describe("ast_grep_search results", () => {
  test("matches grouped by file with line:column, the summary header, multi-line matches", async () => {
    await using dir = await tmpdir({ "src/a.ts": SOURCE, "src/b.ts": "console.log(1); console.log(2)\n" })
    const result = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "console.log($$$A)" })
    expect(result.totalMatches).toBe(4)
    expect(result.filesWithMatches).toBe(2)
    const text = await AstFormat.search(result, { directory: dir.path })
    expect(text).toBe(
      [
        "Found 4 matches in 2 files (typescript, pattern `console.log($$$A)`, 2 files searched).",
        "",
        "src/a.ts",
        "6:3:   console.log('total', sum)",
        "10:1: console.log(total([1, 2]))",
        "",
        "src/b.ts",
        "1:1,17: console.log(1); console.log(2)",
      ].join("\n"),
    )
    const fn = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "function $F($$$P) { $$$B }" })
    const fnText = await AstFormat.search(fn, { directory: dir.path })
    expect(fnText).toContain("3:8: export function total(items: number[]) {\n4:   let sum = 0\n")
    expect(fnText).toContain("8: }")
  })

  test("context lines before and after, `--` between groups, never past the file's ends", async () => {
    await using dir = await tmpdir({ "a.ts": SOURCE })
    const result = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "console.log($$$A)" })
    const text = await AstFormat.search(result, { directory: dir.path, context: 1 })
    expect(text.split("\n").slice(2)).toEqual([
      "a.ts",
      "5-   for (const item of items) sum += item",
      "6:3:   console.log('total', sum)",
      "7-   return sum",
      "--",
      "9- ",
      "10:1: console.log(total([1, 2]))",
    ])
  })

  test("a match on the last line of a file ending in a newline: no context line after it (red team X5)", async () => {
    // Observed before: "4- " after the match, a line the file does not have (split("\n") gives an empty last part).
    await using dir = await tmpdir({
      "a.py": 'def f():\n    s = "héllo"\n    return g(s, "😀😀", 1)\n',
      "b.py": "g(1)",
    })
    const result = await AstSearch.run({ directory: dir.path, lang: "python", pattern: "g($$$A)" })
    const text = await AstFormat.search(result, { directory: dir.path, context: 1 })
    expect(text.split("\n").slice(2)).toEqual([
      "a.py",
      '2-     s = "héllo"',
      '3:12:     return g(s, "😀😀", 1)',
      "",
      "b.py",
      "1:1: g(1)",
    ])
    expect(CliOracle.search(dir.path, "g($$$A)", "python").map((m) => m.line)).toEqual([3, 1])
  })

  test("paths and globs narrow the search; no match is a plain answer", async () => {
    await using dir = await tmpdir({ "src/a.ts": "foo(1)", "src/a.test.ts": "foo(2)", "lib/b.ts": "foo(3)" })
    const run = (paths?: string[], globs?: string[]) =>
      AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "foo($A)", paths, globs }).then((r) =>
        r.matches.map((m) => path.relative(dir.path, m.file)),
      )
    expect(await run(["src"])).toEqual(["src/a.test.ts", "src/a.ts"])
    expect(await run(undefined, ["!*.test.ts"])).toEqual(["lib/b.ts", "src/a.ts"])
    expect(await run(["src"], ["!*.test.ts"])).toEqual(["src/a.ts"])
    const none = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "bar($A)" })
    expect(await AstFormat.search(none, { directory: dir.path })).toBe(
      "No matches (typescript, pattern `bar($A)`, 3 files searched).",
    )
  })

  test("thousands of matches: exact totals, the first N in path order, a [TRUNCATED] header, never an error", async () => {
    const files: Record<string, string> = {}
    for (let f = 0; f < 150; f++) files[`f${String(f).padStart(3, "0")}.ts`] = "hit(1)\n".repeat(20)
    await using dir = await tmpdir(files)
    const result = await AstSearch.run(
      { directory: dir.path, lang: "typescript", pattern: "hit($A)" },
      { batchSize: 16 },
    )
    expect(result.totalMatches).toBe(3000)
    expect(result.filesWithMatches).toBe(150)
    const text = await AstFormat.search(result, { directory: dir.path })
    const lines = text.split("\n")
    expect(lines[0]).toBe("Found 3000 matches in 150 files (typescript, pattern `hit($A)`, 150 files searched).")
    expect(lines[1]).toBe(
      "[TRUNCATED] Showing the first 500 matches in 25 files; 2500 more matches in 125 more files not shown " +
        "(caps: 100 files, 500 matches). Narrow the search with paths or globs.",
    )
    expect(lines.filter((l) => /^\d+:\d+: hit/.test(l))).toHaveLength(500)
    expect(lines.filter((l) => /^f\d{3}\.ts$/.test(l))).toEqual(
      Array.from({ length: 25 }, (_, i) => `f${String(i).padStart(3, "0")}.ts`),
    )
  })

  test("the file cap: at most 100 files are shown", async () => {
    const files: Record<string, string> = {}
    for (let f = 0; f < 130; f++) files[`d/f${String(f).padStart(3, "0")}.ts`] = "hit(1)\n"
    await using dir = await tmpdir(files)
    const result = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "hit($A)" })
    const text = await AstFormat.search(result, { directory: dir.path })
    expect(text.split("\n").filter((l) => /^d\/f\d{3}\.ts$/.test(l))).toHaveLength(100)
    expect(text).toContain("[TRUNCATED] Showing the first 100 matches in 100 files; 30 more matches in 30 more files")
  })

  test("the time limit returns what was found so far, marked as partial", async () => {
    const files: Record<string, string> = {}
    for (let f = 0; f < 40; f++) files[`f${f}.ts`] = "hit(1)\n"
    await using dir = await tmpdir(files)
    const result = await AstSearch.run(
      { directory: dir.path, lang: "typescript", pattern: "hit($A)" },
      { timeoutMs: 0 },
    )
    expect(result.timedOut).toBe(true)
    expect(result.totalMatches).toBeLessThan(40)
    expect(await AstFormat.search(result, { directory: dir.path })).toContain(
      "[TRUNCATED] The search hit its 60 s time limit: results are partial.",
    )
    const controller = new AbortController()
    controller.abort()
    const aborted = await AstSearch.run({
      directory: dir.path,
      lang: "typescript",
      pattern: "hit($A)",
      signal: controller.signal,
    })
    expect([aborted.aborted, aborted.timedOut, aborted.totalMatches]).toEqual([true, false, 0])
  })

  test("protected, oversized and binary files are reported, never searched", async () => {
    await using dir = await tmpdir({ "a.ts": "hit(1)", "secret.ts": "hit(2)", "bin.ts": "hit(3)\0\0" })
    const result = await AstSearch.run({
      directory: dir.path,
      lang: "typescript",
      pattern: "hit($A)",
      access: async (file, op) => (file.endsWith("secret.ts") && op === "read" ? "denied" : undefined),
    })
    expect(result.matches.map((m) => path.basename(m.file))).toEqual(["a.ts"])
    const text = await AstFormat.search(result, { directory: dir.path })
    expect(text).toContain("[NOTE] 1 file not searched: protected by the security policy.")
    expect(text).toContain("[NOTE] 1 file unreadable or binary: bin.ts.")
    expect(text).not.toContain("secret.ts")
  })

  test("long lines are clipped and very long matches are cut with a count of the lines left", async () => {
    const long = `hit(${"x".repeat(900)})`
    const block = `wrap(\n${Array.from({ length: 40 }, (_, i) => `  a${i},`).join("\n")}\n)`
    await using dir = await tmpdir({ "a.ts": `${long}\n${block}\n` })
    const hits = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "hit($A)" })
    expect(await AstFormat.search(hits, { directory: dir.path })).toContain("… (+405 chars)")
    const wraps = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "wrap($$$A)" })
    const text = await AstFormat.search(wraps, { directory: dir.path })
    expect(text).toContain("21:   a18,")
    expect(text).toContain("   … (22 more lines of this match not shown)")
    expect(text).not.toContain("a19,")
  })

  test("a small store cap keeps the first N matches in path order, whatever order files arrive in; totals stay exact", async () => {
    // Uneven counts (file i holds i % 7 + 1 matches) and small batches, so the cap falls inside a file.
    const files: Record<string, string> = {}
    let expectedTotal = 0
    for (let f = 0; f < 60; f++) {
      files[`f${String(f).padStart(2, "0")}.ts`] = "x\n" + "hit(1); ".repeat((f % 7) + 1) + "\nhit(2)\n"
      expectedTotal += (f % 7) + 2
    }
    await using dir = await tmpdir(files)
    const all = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "hit($A)" })
    expect(all.totalMatches).toBe(expectedTotal)
    for (const cap of [0, 1, 5, 37, expectedTotal, expectedTotal + 10]) {
      const capped = await AstSearch.run(
        { directory: dir.path, lang: "typescript", pattern: "hit($A)" },
        { maxStoredMatches: cap, batchSize: 7 },
      )
      expect([capped.totalMatches, capped.filesWithMatches]).toEqual([expectedTotal, 60])
      expect(capped.matches).toEqual(all.matches.slice(0, cap))
    }
  })

  test("FirstMatches: files arriving out of order, the cap inside a file, later files dropped", () => {
    const nodes = (...starts: [number, number][]) =>
      starts.map(([line, column]) => ({
        range: () => ({ start: { line, column }, end: { line, column: column + 1 } }),
      }))
    const first = new AstSearch.FirstMatches(4)
    first.add("/c.ts", nodes([0, 0], [0, 5]))
    first.add("/d.ts", nodes([1, 0]))
    first.add("/e.ts", nodes([2, 0])) // past the cap and after the last kept file: not even read
    first.add("/a.ts", nodes([3, 9], [3, 1])) // before: kept, sorted by position; /d.ts drops out
    first.add("/b.ts", nodes([0, 2]))
    expect(first.matches().map((m) => `${m.file}:${m.start.line}:${m.start.column}`)).toEqual([
      "/a.ts:3:1",
      "/a.ts:3:9",
      "/b.ts:0:2",
      "/c.ts:0:0",
    ])
    let read = 0
    first.add("/z.ts", [{ range: () => (read++, { start: { line: 0, column: 0 }, end: { line: 0, column: 1 } }) }])
    expect(read).toBe(0)
  })
})

describe("the search engine: worker threads, the calling thread, warnings, columns, protected segments", () => {
  const SEGMENTS = [{ start: "@secure-start", end: "@secure-end" }]
  const PROTECTED = [
    "hit(1)", // 1
    "// @secure-start", // 2
    "hit(2); hit(3)", // 3
    "const key = 'Kd93mV'", // 4
    "// @secure-end", // 5
    "hit(4)", // 6
  ].join("\n")

  test("worker threads and the calling thread give the same matches, totals and skipped files", async () => {
    const files: Record<string, string> = {}
    for (let f = 0; f < 40; f++)
      files[`d${f % 3}/f${String(f).padStart(2, "0")}.ts`] = f % 4 ? "hit(1)\n".repeat(f % 9) + "miss()\n" : "none()\n"
    files["bin.ts"] = "hit(1)\0"
    await using dir = await tmpdir(files)
    const run = (workers: number, maxStoredMatches?: number) =>
      AstSearch.run(
        { directory: dir.path, lang: "typescript", pattern: "hit($A)" },
        { workers, batchSize: 3, maxStoredMatches },
      )
    const inThread = await run(0)
    expect(inThread.workers).toBe(0)
    for (const result of [await run(2), await run(1)]) {
      expect(result.workers).toBeGreaterThan(0)
      expect(result.matches).toEqual(inThread.matches)
      expect([result.totalMatches, result.filesWithMatches, result.filesSkippedByPrefilter, result.unreadable]).toEqual(
        [inThread.totalMatches, inThread.filesWithMatches, inThread.filesSkippedByPrefilter, inThread.unreadable],
      )
    }
    expect(inThread.filesSkippedByPrefilter).toBe(13) // the `none()` files and the three with no `hit(1)` line
    expect(inThread.unreadable.map((f) => path.basename(f))).toEqual(["bin.ts"])
    // A small cap: later batches are asked for counts only, the kept matches are still the first ones.
    const capped = await run(2, 5)
    expect([capped.matches, capped.totalMatches]).toEqual([inThread.matches.slice(0, 5), inThread.totalMatches])
  })

  test("a worker that cannot start: its share is searched on the calling thread, with the same result", async () => {
    await using dir = await tmpdir({ "a.ts": "hit(1)\nhit(2)\n", "b.ts": "hit(3)\n", "c.ts": "x\n" })
    const expected = await AstSearch.run(
      { directory: dir.path, lang: "typescript", pattern: "hit($A)" },
      { workers: 0 },
    )
    AstPool.setEntry(path.join(dir.path, "no-such-worker.ts"))
    try {
      const result = await AstSearch.run(
        { directory: dir.path, lang: "typescript", pattern: "hit($A)" },
        { workers: 2, batchSize: 1 },
      )
      expect([result.matches, result.totalMatches, result.workers]).toEqual([expected.matches, 3, 0])
    } finally {
      AstPool.setEntry(AstPool.DEFAULT_ENTRY)
    }
  })

  test("a worker that dies after claiming a batch: the batch and the rest are searched here, nothing is lost", async () => {
    const files: Record<string, string> = {}
    for (let f = 0; f < 12; f++) files[`f${String(f).padStart(2, "0")}.ts`] = "hit(1)\n".repeat(f + 1)
    files["crash-worker.ts"] = [
      "declare const self: Worker",
      "self.postMessage({ ready: true })",
      "self.onmessage = (event: MessageEvent) => {",
      "  Atomics.add(event.data.search.control, 0, 1)",
      "  throw new Error('the worker crashed')",
      "}",
    ].join("\n")
    await using dir = await tmpdir(files)
    const input = { directory: dir.path, lang: "typescript", pattern: "hit($A)" }
    const expected = await AstSearch.run(input, { workers: 0 })
    AstPool.setEntry(path.join(dir.path, "crash-worker.ts"))
    try {
      const result = await AstSearch.run(input, { workers: 2, batchSize: 1, maxStoredMatches: 20 })
      expect([result.totalMatches, result.filesWithMatches]).toEqual([expected.totalMatches, 12])
      expect(result.matches).toEqual(expected.matches.slice(0, 20))
    } finally {
      AstPool.setEntry(AstPool.DEFAULT_ENTRY)
    }
  })

  test("dynamic languages work in the workers (registered once per process)", async () => {
    await AstLanguage.load("python")
    await using dir = await tmpdir({ "a.py": "print(1)\nlog(2)\nprint(3, 4)\n" })
    const result = await AstSearch.run({ directory: dir.path, lang: "python", pattern: "print($$$A)" }, { workers: 2 })
    expect(result.matches.map((m) => m.start.line)).toEqual([0, 2])
  })

  test("the ERROR-node warning only when nothing matched, as the CLI gives it", async () => {
    await using dir = await tmpdir({ "a.ts": "import x from 'y'\nimport { z } from 'w'\nconsole.log(1)\n" })
    const imports = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "import $X from $Y" })
    expect([imports.totalMatches, imports.warning]).toEqual([2, undefined])
    expect(await AstFormat.search(imports, { directory: dir.path })).not.toContain("[NOTE] Pattern")
    const broken = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "console.log(" })
    expect(broken.totalMatches).toBe(0)
    expect(await AstFormat.search(broken, { directory: dir.path })).toContain(
      "[NOTE] Pattern: the pattern does not parse as complete typescript code (ast-grep sees an ERROR node), " +
        "which is likely why nothing matched",
    )
  })

  test("C#: `[$A]` is an ERROR node that matches indexers here, collection expressions in the CLI; a whole statement agrees", async () => {
    // The tester's turso bindings: 303 indexers (`statements[0]`) against the CLI's 15 collection expressions. The
    // tool's tree-sitter-c-sharp reads the pattern as an ERROR around a bracketed argument list, the CLI's built-in
    // grammar as a collection expression (docs/ast.md, "Agreement with the CLI").
    await using dir = await tmpdir({
      "A.cs": "class A {\n  int F(int[] x) {\n    int[] a = [1];\n    return x[0];\n  }\n}\n",
    })
    const result = await AstSearch.run({ directory: dir.path, lang: "csharp", pattern: "[$A]" })
    expect(result.matches.map((m) => m.start.line + 1)).toEqual([4])
    expect(CliOracle.search(dir.path, "[$A]", "csharp").map((m) => [m.line, m.text])).toEqual([[3, "[1]"]])
    const whole = await AstSearch.run({ directory: dir.path, lang: "csharp", pattern: "int[] $N = [$A];" })
    expect([whole.totalMatches, whole.warning]).toEqual([1, undefined])
    expect(CliOracle.search(dir.path, "int[] $N = [$A];", "csharp").length).toBe(1)
  })

  test("no pattern note when no file was searched, nor for a CSS declaration pattern in a file without one", async () => {
    // The tester's shape: `color: $V;` over a stylesheet with only `margin: 0;`, and over a folder of no CSS file.
    await using dir = await tmpdir({ "a.css": ".a {\n  margin: 0;\n}\n", "sub/a.ts": "console.log(1)\n" })
    const none = await AstSearch.run({ directory: dir.path, lang: "css", pattern: "color: $V;" })
    expect([none.totalMatches, none.filesSearched, none.warning]).toEqual([0, 1, undefined])
    const noFiles = await AstSearch.run({ directory: dir.file("sub"), lang: "typescript", pattern: "console.log(" })
    expect([noFiles.filesSearched, noFiles.warning]).toEqual([1, expect.stringContaining("does not parse")])
    const empty = await AstSearch.run({ directory: dir.path, lang: "python", pattern: "else:" })
    expect([empty.filesSearched, empty.warning]).toEqual([0, undefined])
    expect(await AstFormat.search(empty, { directory: dir.path })).not.toContain("[NOTE] Pattern")
    const replace = await AstReplace.run(
      { directory: dir.path, lang: "python", pattern: "else:" },
      { rewrite: "x", dryRun: true },
    )
    expect([replace.filesSearched, replace.warning]).toEqual([0, undefined])
  })

  test("columns count characters as the CLI prints them (an emoji is one), also inside the line", async () => {
    const source = 'const s = "😀é"; console.log(s)\nconst t = "中"; console.log(t) // 👍 console.log(u)\n'
    await using dir = await tmpdir({ "a.ts": source })
    const result = await AstSearch.run({ directory: dir.path, lang: "typescript", pattern: "console.log($A)" })
    const text = await AstFormat.search(result, { directory: dir.path })
    const oracle = CliOracle.search(dir.path, "console.log($A)", "ts")
    expect(oracle.map((m) => `${m.line}:${m.column}`)).toEqual(["1:17", "2:16"])
    expect(text).toContain('\n1:17: const s = "😀é"; console.log(s)')
    expect(text).toContain('\n2:16: const t = "中"; console.log(t)')
    // The positions kept in the result stay JavaScript (UTF-16) indices.
    expect(result.matches[0].start.column).toBe(17)
    expect(AstFormat.column("a😀b", 3)).toBe(3)
  })

  for (const workers of [0, 2])
    test(`protected segments (${workers ? "worker threads" : "calling thread"}): matches on hidden lines are neither shown nor counted, context masked`, async () => {
      await using dir = await tmpdir({ "a.ts": PROTECTED, "b.ts": "hit(5)\n" })
      const input = {
        directory: dir.path,
        lang: "typescript",
        pattern: "hit($A)",
        segments: () => ({ read: SEGMENTS, write: [] }),
      }
      const result = await AstSearch.run(input, { workers })
      expect([result.totalMatches, result.filesWithMatches]).toEqual([3, 2])
      expect(result.matches.map((m) => `${path.basename(m.file)}:${m.start.line + 1}`)).toEqual([
        "a.ts:1",
        "a.ts:6",
        "b.ts:1",
      ])
      const text = await AstFormat.search(result, { directory: dir.path, context: 3, hidden: SEGMENTS })
      expect(text).toStartWith("Found 3 matches in 2 files")
      expect(text).not.toContain("Kd93mV")
      expect(text).not.toContain("hit(2)")
      expect(text).toContain("3- [REDACTED")
      // Without segments the same search finds all five.
      expect((await AstSearch.run({ ...input, segments: undefined }, { workers })).totalMatches).toBe(5)
    })
})

describe("patterns with two readings: alone and inside a function body (red team X12)", () => {
  // A labelled fixture in goreleaser's style (tab-indented Go, calls in function bodies). On goreleaser itself the
  // search found none of 168 `errors.New(` calls, 26 `os.Getenv(`, 500 `fmt.Errorf(`; now 168, 26, 500.
  const GO = [
    "package x", // 1
    "", // 2
    'import "errors"', // 3
    "", // 4
    'var errNoHome = errors.New("no home")', // 5
    "", // 6
    "func f(key string) error {", // 7
    '\tif os.Getenv("HOME") == "" {', // 8
    "\t\treturn errNoHome", // 9
    "\t}", // 10
    "\tv := strings.TrimSpace(os.Getenv(key))", // 11
    '\tfmt.Println("value", v)', // 12
    '\tlog.Info("done")', // 13
    '\tif v == "" {', // 14
    '\t\treturn fmt.Errorf("empty %s: %w", key, errors.New(key))', // 15
    "\t}", // 16
    "\treturn fmt.Errorf(v)", // 17
    "}", // 18
    "", // 19
  ].join("\n")

  /** The CLI with the unambiguous form of the pattern: ast-grep's pattern object, the pattern in a function body. */
  const unambiguous = (cwd: string, pattern: string, lang: string, body: string, selector: string) => {
    const rule = `id: x\nlanguage: ${lang}\nrule:\n  pattern:\n    context: ${JSON.stringify(body.replace("P", () => pattern))}\n    selector: ${selector}\n`
    const proc = bunSpawnSync([CliOracle.binary(), "scan", "--inline-rules", rule, "--json=compact", "."], { cwd })
    const out = JSON.parse(proc.stdout.toString() || "[]") as { range: { start: { line: number; column: number } } }[]
    return out.map((m) => `${m.range.start.line + 1}:${m.range.start.column + 1}`).sort()
  }
  const positions = (result: AstSearch.Result) =>
    result.matches.map((m) => `${m.start.line + 1}:${m.start.column + 1}`).sort()

  test("Go: a one-argument call of a package function (`errors.New($A)`, `os.Getenv($K)`, `fmt.Errorf($$$A)`) finds the calls the unambiguous pattern finds", async () => {
    await AstLanguage.load("go")
    await using dir = await tmpdir({ "x.go": GO })
    const expected: Record<string, string[]> = {
      "errors.New($A)": ["15:42", "5:17"],
      "os.Getenv($K)": ["11:25", "8:5"],
      "strings.TrimSpace($S)": ["11:7"],
      "fmt.Errorf($$$A)": ["15:10", "17:9"],
      "fmt.Println($$$A)": ["12:2"],
      "log.Info($M)": ["13:2"],
    }
    for (const [pattern, want] of Object.entries(expected)) {
      const inThread = await AstSearch.run({ directory: dir.path, lang: "go", pattern }, { workers: 0 })
      const inWorkers = await AstSearch.run({ directory: dir.path, lang: "go", pattern }, { workers: 2 })
      expect([pattern, positions(inThread)]).toEqual([pattern, want])
      expect(positions(inWorkers)).toEqual(want)
      expect(unambiguous(dir.path, pattern, "go", "func f() { P }", "call_expression")).toEqual(want)
      // The pattern alone, as the CLI 0.51.1 reads it, finds none of them: a conversion to the type `errors.New`.
      expect(CliOracle.search(dir.path, pattern, "go")).toEqual([])
    }
    // Two arguments were never ambiguous: unchanged, and the same as the CLI.
    const two = await AstSearch.run({ directory: dir.path, lang: "go", pattern: "fmt.Errorf($F, $$$A)" })
    expect(positions(two)).toEqual(["15:10"])
    expect(CliOracle.search(dir.path, "fmt.Errorf($F, $$$A)", "go").map((m) => `${m.line}:${m.column}`)).toEqual([
      "15:10",
    ])
    // A real conversion still reads as one: `[]byte(s)` is a conversion in both readings.
    await using conv = await tmpdir({ "c.go": "package c\n\nfunc f(s string) []byte {\n\treturn []byte(s)\n}\n" })
    const bytes = await AstSearch.run({ directory: conv.path, lang: "go", pattern: "[]byte($S)" })
    expect(positions(bytes)).toEqual(["4:9"])
  }, 60_000)

  test("C: a one-argument call alone (`xstrdup($X)`, a macro type to the parser) finds the calls, as in a body", async () => {
    await AstLanguage.load("c")
    // A tester on tmux: 0 against 602 calls before.
    await using dir = await tmpdir({ "a.c": "void f(char *s) {\n\tchar *v = xstrdup(s);\n\txstrdup(v);\n}\n" })
    const result = await AstSearch.run({ directory: dir.path, lang: "c", pattern: "xstrdup($X)" })
    expect(positions(result)).toEqual(["2:12", "3:2"])
    expect(unambiguous(dir.path, "xstrdup($X)", "c", "void f() { P; }", "call_expression")).toEqual(["2:12", "3:2"])
  })

  test("Solidity: `emit $E($$$A);`, an ERROR node alone, finds the statements in a function body", async () => {
    await AstLanguage.load("solidity")
    await using dir = await tmpdir({
      "a.sol":
        "pragma solidity ^0.8.0;\ncontract C {\n  event E(uint a);\n  function f() public {\n    emit E(1);\n  }\n}\n",
    })
    const result = await AstSearch.run({ directory: dir.path, lang: "solidity", pattern: "emit $E($$$A);" })
    expect(positions(result)).toEqual(["5:5"])
    expect(result.warning).toBeUndefined()
    // Without its `;` it is no whole statement in a body either: still the ERROR-node note.
    const bare = await AstSearch.run({ directory: dir.path, lang: "solidity", pattern: "emit $E($$$A)" })
    expect([bare.totalMatches, bare.warning !== undefined]).toEqual([0, true])
  })

  test("Solidity: statement-block patterns (`if ($C) { $$$B }`, `while`, `for`) find the statements; no advice to write what was written (red team A2-4)", async () => {
    // OpenZeppelin: 0 of 937 `if (` lines before, in the CLI 0.51.1 too. In a function body `{ $$$B }` (no `;`) parses
    // as a block around an ERROR node that is exactly `$$$B`, which ast-grep reads as the meta-variable anyway.
    await AstLanguage.load("solidity")
    const source = [
      "contract A {", // 1
      "  function f(uint x) public {", // 2
      "    if (x > 1) {", // 3
      "      g(x);", // 4
      "      h();", // 5
      "    }", // 6
      "    if (x > 2) {", // 7
      "    }", // 8
      "    if (x > 3) g(x);", // 9
      "    if (x > 4) { g(x); } else { h(); }", // 10
      "    for (uint i = 0; i < x; i++) {", // 11
      "      g(i);", // 12
      "    }", // 13
      "    while (x > 0) { x--; }", // 14
      "  }", // 15
      "}", // 16
      "",
    ].join("\n")
    await using dir = await tmpdir({ "a.sol": source })
    const body = "contract A { function f() public { P } }"
    const expected: [string, string, string[]][] = [
      // Like `if ($C) { $$$B }` in C or Java: any block, also one with an `else`; not the block-less `if` of line 9.
      ["if ($C) { $$$B }", "if_statement", ["10:5", "3:5", "7:5"]],
      ["if ($C) { $$$ }", "if_statement", ["10:5", "3:5", "7:5"]],
      ["if ($C) { $$$A } else { $$$B }", "if_statement", ["10:5"]],
      ["while ($C) { $$$B }", "while_statement", ["14:5"]],
      ["for (uint $I = $S; $C; $U) { $$$B }", "for_statement", ["11:5"]],
    ]
    for (const [pattern, selector, want] of expected) {
      const result = await AstSearch.run({ directory: dir.path, lang: "solidity", pattern })
      expect([pattern, positions(result), result.warning]).toEqual([pattern, want, undefined])
      // What the CLI finds with the pattern object a user would write; the plain pattern finds none there.
      expect([pattern, unambiguous(dir.path, pattern, "solidity", body, selector)]).toEqual([pattern, want])
      expect(CliOracle.search(dir.path, pattern, "solidity")).toEqual([])
    }
    // The `;` form keeps its own meaning, as in the CLI's pattern object: a block of one expression statement.
    const semi = await AstSearch.run({ directory: dir.path, lang: "solidity", pattern: "if ($C) { $$$B; }" })
    expect(positions(semi)).toEqual(["10:5"])
    // No match at all: the pattern is whole code in a body, so no note telling the user to write a full statement.
    await using none = await tmpdir({ "b.sol": "contract B {\n  function f() public {\n    g();\n  }\n}\n" })
    const empty = await AstSearch.run({ directory: none.path, lang: "solidity", pattern: "if ($C) { $$$B }" })
    expect([empty.totalMatches, empty.warning]).toEqual([0, undefined])
  })

  test("statement-block patterns agree with the CLI where the pattern alone already parses (C, C++, Java, Kotlin, Swift, PHP)", async () => {
    const files: [string, string, string, string[]][] = [
      [
        "c",
        "a.c",
        "void f(int x) {\n  if (x > 1) {\n    g(x);\n  }\n  while (x > 0) { x--; }\n}\n",
        ["if ($C) { $$$B }", "while ($C) { $$$B }"],
      ],
      [
        "cpp",
        "a.cc",
        "void f(int x) {\n  for (int i = 0; i < x; i++) {\n    g(i);\n  }\n  if (x) { g(x); }\n}\n",
        ["if ($C) { $$$B }", "for ($$$H) { $$$B }"],
      ],
      [
        "java",
        "A.java",
        "class A {\n  void f(int x) {\n    if (x > 1) {\n      g(x);\n    }\n    while (x > 0) { x--; }\n  }\n}\n",
        ["if ($C) { $$$B }", "while ($C) { $$$B }"],
      ],
      [
        "kotlin",
        "a.kt",
        "fun f(x: Int) {\n  if (x > 1) {\n    g(x)\n  }\n  for (i in 0..x) {\n    g(i)\n  }\n}\n",
        ["if ($C) { $$$B }", "for ($I in $R) { $$$B }"],
      ],
      [
        "swift",
        "a.swift",
        "func f(x: Int) {\n  if x > 1 {\n    g(x)\n  }\n  while x > 0 { h() }\n}\n",
        ["if $C { $$$B }", "while $C { $$$B }"],
      ],
      [
        "php",
        "a.php",
        "<?php\nfunction f($x) {\n  if ($x > 1) {\n    g($x);\n  }\n  while ($x > 0) { $x--; }\n}\n",
        ["if ($C) { $$$B }", "while ($C) { $$$B }"],
      ],
    ]
    for (const [lang, name, source, patterns] of files) {
      await AstLanguage.load(lang)
      await using dir = await tmpdir({ [name]: source })
      for (const pattern of patterns) {
        const tool = positions(await AstSearch.run({ directory: dir.path, lang, pattern }))
        const cli = CliOracle.search(dir.path, pattern, lang)
          .map((m) => `${m.line}:${m.column}`)
          .sort()
        expect([lang, pattern, tool.length > 0, tool]).toEqual([lang, pattern, true, cli])
      }
    }
  })

  test("a replace through the other reading rewrites each call with its captures, as the search finds them", async () => {
    await AstLanguage.load("go")
    await using dir = await tmpdir({ "x.go": GO })
    const result = await AstReplace.run(
      { directory: dir.path, lang: "go", pattern: "errors.New($A)" },
      { rewrite: "fmt.Errorf($A)", dryRun: true },
    )
    expect(result.totalReplacements).toBe(2)
    const after = result.files[0].after.split("\n")
    expect(after[4]).toBe('var errNoHome = fmt.Errorf("no home")')
    expect(after[14]).toBe('\t\treturn fmt.Errorf("empty %s: %w", key, fmt.Errorf(key))')
  })

  test("Rust: a single meta-variable among a macro's tokens (`assert!($C)`) matches one token: always a note", async () => {
    await AstLanguage.load("rust")
    await using dir = await tmpdir({
      "a.rs": "fn f(done: bool, a: u8, b: u8) {\n    assert!(done);\n    assert!(a == b);\n}\n",
    })
    const one = await AstSearch.run({ directory: dir.path, lang: "rust", pattern: "assert!($C)" })
    // As the CLI: only `assert!(done)` (turso's core/: 3 against 3,027 for `assert!($$$C)`).
    expect(positions(one)).toEqual(["2:5"])
    expect(CliOracle.search(dir.path, "assert!($C)", "rust").map((m) => m.line)).toEqual([2])
    expect(await AstFormat.search(one, { directory: dir.path })).toContain(
      "[NOTE] Pattern: in Rust a macro's arguments are tokens, not expressions: $C inside a macro call matches " +
        "exactly one token (`assert!(done)`, not `assert!(a == b)`); write $$$C to match any arguments.",
    )
    const any = await AstSearch.run({ directory: dir.path, lang: "rust", pattern: "assert!($$$C)" })
    expect(positions(any)).toEqual(["2:5", "3:5"])
    expect(await AstFormat.search(any, { directory: dir.path })).not.toContain("[NOTE]")
    const plain = await AstSearch.run({ directory: dir.path, lang: "rust", pattern: "f($A)" })
    expect(plain.note).toBeUndefined()
  })
})

// Real-world tester AK-2 (h5bp/html5-boilerplate): the CLI's -l css found 5 `color: $V;`, the tool 1; the rest were
// in the <style> of 404.html. The CLI also searches <script>/<style> elements of .html/.htm/.xhtml files.
describe("code inside HTML <script> and <style> elements, as the CLI searches it (AK-2)", () => {
  const HTML = [
    "<html><head><style>",
    "p { color: red; }",
    "</style>",
    '<style lang="scss">a { color: blue; }</style>',
    "<style lang='CSS'>b { color: green; }</style>",
    "<script>",
    "  if (a) {",
    "    console.log(9,",
    "      10)",
    "  }",
    "</script>",
    '<script type="application/json">{"a": console.log("json")}</script>',
    '<script lang="ts">console.log("ts" as string)</script>',
    "<script lang=TypeScript>console.log(2)</script>",
    '<script lang="JavaScript">console.log(4)</script>',
    '<script lang="">console.log(5)</script>',
    '<script lang="jsx">console.log(6)</script>',
    '<script lang="tsx">console.log(7)</script>',
    '<script lang="python">console.log(8)</script>',
    "<SCRIPT>console.log(11)</SCRIPT>",
    '<div onclick="console.log(12)" style="color: pink;"></div>',
    "<p>console.log(13) color: black;</p>",
    "<!-- <script>console.log(14)</script> -->",
    '<script>console.log("é"); console.log(15)</script>',
    "</head></html>",
    "",
  ].join("\n")
  const cases: [string, string][] = [
    ["javascript", "console.log($$$A)"],
    ["typescript", "console.log($$$A)"],
    ["tsx", "console.log($$$A)"],
    ["css", "color: $V;"],
    ["html", "console.log($$$A)"],
  ]
  for (const [lang, pattern] of cases) {
    test(`${lang}: the same matches at the same lines and columns as the CLI, in .html, .htm and .xhtml files`, async () => {
      await using dir = await tmpdir({ "i.html": HTML, "j.htm": HTML, "k.xhtml": HTML, "v.vue": HTML })
      const result = await AstSearch.run({ directory: dir.path, lang, pattern })
      const ours = result.matches.map((m) => [path.basename(m.file), m.start.line + 1, m.start.column + 1])
      const cli = CliOracle.search(dir.path, pattern, lang).map((m) => [path.basename(m.file), m.line, m.column])
      expect(ours).toEqual(cli)
      if (lang !== "html") expect(ours.length).toBeGreaterThan(2)
    })
  }

  test("the output shows the HTML file's own lines", async () => {
    await using dir = await tmpdir({ "i.html": HTML })
    const result = await AstSearch.run({ directory: dir.path, lang: "css", pattern: "color: $V;" })
    const text = await AstFormat.search(result, { directory: dir.path })
    expect(text).toContain("2:5: p { color: red; }")
    expect(text).toContain("5:23: <style lang='CSS'>b { color: green; }</style>")
  })

  test("a rewrite changes the element's code in place, as the CLI does (one match per file)", async () => {
    for (const [lang, pattern, rewrite] of [
      ["javascript", "console.log($$$A)", "logger.info($$$A)"],
      ["css", "color: $V;", "background: $V;"],
    ]) {
      const source =
        "<p>console.log(0)</p>\n<script>\n  if (a) {\n    console.log(1,\n      2)\n  }\n</script>\n<style>a { color: red; }</style>\n"
      await using dir = await tmpdir({ "i.html": source })
      const ours = await AstReplace.run({ directory: dir.path, lang, pattern }, { rewrite, dryRun: true })
      CliOracle.rewrite(dir.path, pattern, rewrite, lang)
      const cli = await Bun.file(dir.file("i.html")).text()
      expect(cli).not.toBe(source)
      expect(ours.files.map((f) => f.after)).toEqual([cli])
    }
  })

  test("several matches in one HTML file are all rewritten (the CLI 0.51.1's -U writes only the last one)", async () => {
    const source = "<script>\nconsole.log(1)\n</script>\n<p>x</p>\n<script>console.log(2)</script>\n"
    await using dir = await tmpdir({ "i.html": source })
    const input = { directory: dir.path, lang: "javascript", pattern: "console.log($$$A)" }
    const ours = await AstReplace.run(input, { rewrite: "logger.info($$$A)", dryRun: false })
    expect(ours.totalReplacements).toBe(2)
    expect(await Bun.file(dir.file("i.html")).text()).toBe(
      "<script>\nlogger.info(1)\n</script>\n<p>x</p>\n<script>logger.info(2)</script>\n",
    )
    CliOracle.rewrite(dir.path, "logger.info($$$A)", "console.log($$$A)", "javascript")
    // The CLI's write keeps only its last edit: the first script is left as it was.
    expect(await Bun.file(dir.file("i.html")).text()).toBe(
      "<script>\nlogger.info(1)\n</script>\n<p>x</p>\n<script>console.log(2)</script>\n",
    )
  })
})
