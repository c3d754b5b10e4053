import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { AstFormat } from "../../ast/format"
import { AstLanguage } from "../../ast/languages"
import { AstReplace } from "../../ast/replace"
import { AtomicWrite } from "../../ast/write"
import { CliOracle } from "./cli-oracle"
import { tmpdir } from "../fixture"

const A = "console.log('a')\nconsole.log(x, y)\n"
const B = "export const b = 1\nconsole.log(b)\n"

describe("ast_grep_replace", () => {
  test("dry run (the default) shows unified diffs per file and writes nothing", async () => {
    await using dir = await tmpdir({ "a.ts": A, "b.ts": B, "c.ts": "untouched()\n" })
    const input = { directory: dir.path, lang: "typescript", pattern: "console.log($$$ARGS)" }
    const result = await AstReplace.run(input, { rewrite: "logger.info($$$ARGS)", dryRun: true })
    expect([result.totalReplacements, result.files.length, result.written]).toEqual([3, 2, false])
    expect(await fs.readFile(dir.file("a.ts"), "utf8")).toBe(A)
    const text = AstFormat.replace(result, { directory: dir.path })
    expect(text).toBe(
      [
        "Dry run: would replace 3 matches in 2 files (typescript, pattern `console.log($$$ARGS)` → `logger.info($$$ARGS)`). No file was written; call again with dryRun: false to apply.",
        "",
        "a.ts (2 replacements)",
        "--- a.ts",
        "+++ a.ts",
        "@@ -1,2 +1,2 @@",
        "-console.log('a')",
        "-console.log(x, y)",
        "+logger.info('a')",
        "+logger.info(x, y)",
        "",
        "b.ts (1 replacement)",
        "--- b.ts",
        "+++ b.ts",
        "@@ -1,2 +1,2 @@",
        " export const b = 1",
        "-console.log(b)",
        "+logger.info(b)",
      ].join("\n"),
    )
  })

  test("live mode writes every changed file, keeps modes, asks before writing", async () => {
    await using dir = await tmpdir({ "a.ts": A, "bin/run.ts": B })
    await fs.chmod(dir.file("bin/run.ts"), 0o755)
    const asked: string[][] = []
    const result = await AstReplace.run(
      { directory: dir.path, lang: "typescript", pattern: "console.log($$$ARGS)" },
      {
        rewrite: "logger.info($$$ARGS)",
        dryRun: false,
        beforeWrite: async (files) => void asked.push(files.map((f) => path.relative(dir.path, f.file))),
      },
    )
    expect(result.written).toBe(true)
    expect(asked).toEqual([["a.ts", "bin/run.ts"]])
    expect(await fs.readFile(dir.file("a.ts"), "utf8")).toBe("logger.info('a')\nlogger.info(x, y)\n")
    expect(await fs.readFile(dir.file("bin/run.ts"), "utf8")).toBe("export const b = 1\nlogger.info(b)\n")
    expect((await fs.stat(dir.file("bin/run.ts"))).mode & 0o777).toBe(0o755)
    expect((await fs.readdir(dir.path)).filter((f) => f.endsWith(".tmp"))).toEqual([])
    expect(AstFormat.replace(result, { directory: dir.path })).toStartWith("Replaced 3 matches in 2 files")
  })

  test("a live replace keeps each file's mode exactly under umask 022: 0775 and 0664 stay (red team X11, turso scripts)", async () => {
    await using dir = await tmpdir({ "run.sh": "#!/bin/sh\necho hello\n", "lib.sh": "echo lib\n" })
    await fs.chmod(dir.file("run.sh"), 0o775)
    await fs.chmod(dir.file("lib.sh"), 0o664)
    const old = process.umask(0o022)
    try {
      const result = await AstReplace.run(
        { directory: dir.path, lang: "bash", pattern: "echo $$$A" },
        { rewrite: "printf '%s\\n' $$$A", dryRun: false },
      )
      expect(result.written).toBe(true)
    } finally {
      process.umask(old)
    }
    expect(await fs.readFile(dir.file("run.sh"), "utf8")).toBe("#!/bin/sh\nprintf '%s\\n' hello\n")
    expect((await fs.stat(dir.file("run.sh"))).mode & 0o7777).toBe(0o775)
    expect((await fs.stat(dir.file("lib.sh"))).mode & 0o7777).toBe(0o664)
  })

  test("a rewrite naming meta-variables the pattern does not capture: a dry run warns, a live run is refused (red team X9)", async () => {
    const PY = 'x = 1\nprint(x, "done")\ng(a, b, c)\n'
    await using dir = await tmpdir({ "a.py": PY })
    const input = { directory: dir.path, lang: "python", pattern: "print($$$A)" }
    // `$$$ARGS` for `$$$A`: the arguments of every call were deleted, live runs included, without a word.
    const dry = await AstReplace.run(input, { rewrite: "log($$$ARGS)", dryRun: true })
    expect(dry.uncaptured).toEqual(["$$$ARGS"])
    const text = AstFormat.replace(dry, { directory: dir.path })
    expect(text.split("\n")[1]).toBe(
      "[WARNING] The rewrite names $$$ARGS, which the pattern does not capture (it captures $$$A): each is replaced by " +
        "nothing below, and a live run (dryRun: false) is refused. Use the pattern's names in the same form ($NAME for " +
        "$NAME, $$$NAME for $$$NAME). In a rewrite, $ followed by upper-case letters, digits or _ is always a " +
        "meta-variable, and a name starting with _ never captures; for literal text such as a shell variable write " +
        "${HOME} instead of $HOME, or capture it in the pattern.",
    )
    expect(text).toContain("+log()")
    const live = await AstReplace.run(input, { rewrite: "log($$$ARGS)", dryRun: false }).catch((e) => e)
    expect(AstReplace.Uncaptured.is(live)).toBe(true)
    expect(live.data).toEqual({
      pattern: "print($$$A)",
      rewrite: "log($$$ARGS)",
      uncaptured: ["$$$ARGS"],
      captured: ["$$$A"],
    })
    expect(live.message).toStartWith(
      'nothing was written: the rewrite names $$$ARGS, which the pattern "print($$$A)" does not capture (it captures ' +
        "$$$A); each would be replaced by nothing, deleting the code it stands for.",
    )
    // The form matters too ($A for a pattern's $$$A inserts nothing), and `$_…` never captures; an unknown name.
    const g = { directory: dir.path, lang: "python", pattern: "g($S, $$$R, $_X)" }
    const wrong = await AstReplace.run(g, { rewrite: "h($$$REST, $R, $$S, $S, $_X, $_, $$$R)", dryRun: false }).catch(
      (e) => e,
    )
    expect(wrong.data.uncaptured).toEqual(["$$$REST", "$R", "$_X", "$_"])
    expect(wrong.data.captured).toEqual(["$S", "$$$R"])
    expect(await fs.readFile(dir.file("a.py"), "utf8")).toBe(PY)
    // Not meta-variable syntax: stays as written, never refused: "$1", $lower, ${HOME}, $$$ alone, a lone $ (in
    // strings, so that the rewritten file still parses as Python: a template that breaks the code is not written).
    const fine = await AstReplace.run(input, {
      rewrite: 'log("$1", "$lower", "${HOME}", $$$A, "$$$", "$")',
      dryRun: false,
    })
    expect(fine.uncaptured).toEqual([])
    expect(await fs.readFile(dir.file("a.py"), "utf8")).toBe(
      'x = 1\nlog("$1", "$lower", "${HOME}", x, "done", "$$$", "$")\ng(a, b, c)\n',
    )
  })

  test("bash: a shell `$HOME` in a rewrite is ast-grep meta-variable syntax and would be emptied, so it is refused; `${HOME}` is kept", async () => {
    await AstLanguage.load("bash")
    await using dir = await tmpdir({ "a.sh": "echo hi\n" })
    const input = { directory: dir.path, lang: "bash", pattern: "echo $A" }
    const dry = await AstReplace.run(input, { rewrite: 'echo "$HOME" $A', dryRun: true })
    // What the CLI 0.51.1 also writes: `$HOME` filled with nothing.
    expect(dry.files[0].after).toBe('echo "" hi\n')
    expect(dry.uncaptured).toEqual(["$HOME"])
    expect(
      AstReplace.Uncaptured.is(
        await AstReplace.run(input, { rewrite: 'echo "$HOME" $A', dryRun: false }).catch((e) => e),
      ),
    ).toBe(true)
    const kept = await AstReplace.run(input, { rewrite: 'echo "${HOME}" "$1" $A', dryRun: false })
    expect(kept.written).toBe(true)
    expect(await fs.readFile(dir.file("a.sh"), "utf8")).toBe('echo "${HOME}" "$1" hi\n')
  })

  // Red team Y7: captured names were read from the pattern's text, so a `$HOME` the pattern holds inside a longer
  // string counted as captured, and `run("echo $HOME")` was written as `run("echo ")`. What captures is what ast-grep
  // reads as a meta-variable: a node whose whole text is `$NAME` (a string that is only `"$HOME"` captures its content).
  test("a $NAME inside a longer string of the pattern is text, not a capture: the rewrite naming it is refused; a string that is only $NAME captures, as the CLI does", async () => {
    const JS = 'exec("echo $HOME")\nexec("$HOME")\nexec("x y")\n'
    await using dir = await tmpdir({ "a.js": JS })
    await using cli = await tmpdir({ "a.js": JS })
    const inside = { directory: dir.path, lang: "javascript", pattern: 'exec("echo $HOME")' }
    // The CLI 0.51.1 empties it: what a live run would have written.
    CliOracle.rewrite(cli.path, inside.pattern, 'run("echo $HOME")', "javascript")
    expect((await fs.readFile(cli.file("a.js"), "utf8")).split("\n")[0]).toBe('run("echo ")')
    const dry = await AstReplace.run(inside, { rewrite: 'run("echo $HOME")', dryRun: true })
    expect([dry.uncaptured, dry.captured]).toEqual([["$HOME"], []])
    expect(dry.files[0].after.split("\n")[0]).toBe('run("echo ")')
    const live = await AstReplace.run(inside, { rewrite: 'run("echo $HOME", $A)', dryRun: false }).catch((e) => e)
    expect(AstReplace.Uncaptured.is(live)).toBe(true)
    expect(live.data.uncaptured).toEqual(["$HOME", "$A"])
    expect(await fs.readFile(dir.file("a.js"), "utf8")).toBe(JS)
    // `"$HOME"` alone: its content is a capture (the CLI keeps it and fills it from each match).
    const whole = { directory: dir.path, lang: "javascript", pattern: 'exec("$HOME")' }
    await fs.writeFile(cli.file("a.js"), JS)
    CliOracle.rewrite(cli.path, whole.pattern, 'run("$HOME")', "javascript")
    const ok = await AstReplace.run(whole, { rewrite: 'run("$HOME")', dryRun: false })
    expect([ok.uncaptured, ok.captured]).toEqual([[], ["$HOME"]])
    expect(await fs.readFile(dir.file("a.js"), "utf8")).toBe(await fs.readFile(cli.file("a.js"), "utf8"))
    expect(await fs.readFile(dir.file("a.js"), "utf8")).toBe('run("echo $HOME")\nrun("$HOME")\nrun("x y")\n')
  })

  test("a refused permission writes nothing", async () => {
    await using dir = await tmpdir({ "a.ts": A })
    const error = await AstReplace.run(
      { directory: dir.path, lang: "typescript", pattern: "console.log($$$ARGS)" },
      {
        rewrite: "x($$$ARGS)",
        dryRun: false,
        beforeWrite: async () => {
          throw new Error("the user rejected permission to edit")
        },
      },
    ).catch((e) => e)
    expect(error.message).toContain("rejected")
    expect(await fs.readFile(dir.file("a.ts"), "utf8")).toBe(A)
  })

  test("a file changed between reading and writing: nothing is written at all", async () => {
    await using dir = await tmpdir({ "a.ts": A, "b.ts": B })
    const error = await AstReplace.run(
      { directory: dir.path, lang: "typescript", pattern: "console.log($$$ARGS)" },
      {
        rewrite: "x($$$ARGS)",
        dryRun: false,
        beforeWrite: async () => fs.writeFile(dir.file("b.ts"), B + "// edited meanwhile\n"),
      },
    ).catch((e) => e)
    expect(AtomicWrite.Conflict.is(error)).toBe(true)
    expect(error.message).toContain("b.ts changed since it was read; nothing was written")
    expect(await fs.readFile(dir.file("a.ts"), "utf8")).toBe(A)
  })

  test("write-protected files: listed in a dry run, the live run refused before writing anything", async () => {
    await using dir = await tmpdir({ "a.ts": A, "locked.ts": B })
    const access = async (file: string, op: "read" | "write") =>
      file.endsWith("locked.ts") && op === "write" ? "read-only by rule" : undefined
    const input = { directory: dir.path, lang: "typescript", pattern: "console.log($$$ARGS)", access }
    const dry = await AstReplace.run(input, { rewrite: "x($$$ARGS)", dryRun: true })
    expect(AstFormat.replace(dry, { directory: dir.path })).toContain(
      "[NOTE] The security policy denies writing locked.ts: a live run would be refused",
    )
    const error = await AstReplace.run(input, { rewrite: "x($$$ARGS)", dryRun: false }).catch((e) => e)
    expect(AstReplace.Refused.is(error)).toBe(true)
    expect(error.message).toContain("the security policy denies writing")
    expect(await fs.readFile(dir.file("a.ts"), "utf8")).toBe(A)
    // Read-protected files are not even read.
    const hidden = await AstReplace.run(
      { ...input, access: async (f: string) => (f.endsWith("locked.ts") ? "secret" : undefined) },
      { rewrite: "x($$$ARGS)", dryRun: true },
    )
    expect(hidden.files.map((f) => path.basename(f.file))).toEqual(["a.ts"])
    expect(hidden.denied.map((f) => path.basename(f))).toEqual(["locked.ts"])
  })

  test("too many files, a timeout or an abort refuse a live run; the dry run still reports", async () => {
    await using dir = await tmpdir({ "a.ts": A, "b.ts": B })
    const input = { directory: dir.path, lang: "typescript", pattern: "console.log($$$ARGS)" }
    const many = await AstReplace.run(input, { rewrite: "x($$$ARGS)", dryRun: false, maxFiles: 1 }).catch((e) => e)
    expect(many.message).toContain("2 files would change, more than the 1 a single replace may write")
    const late = await AstReplace.run(input, { rewrite: "x($$$ARGS)", dryRun: false, timeoutMs: 0 }).catch((e) => e)
    expect(AstReplace.Refused.is(late)).toBe(true)
    expect(late.message).toBe("nothing was written: the search timed out before every file was processed")
    const controller = new AbortController()
    controller.abort()
    const aborted = await AstReplace.run(
      { ...input, signal: controller.signal },
      { rewrite: "x", dryRun: false },
    ).catch((e) => e)
    expect(aborted.message).toBe("nothing was written: the replace was aborted")
    const dry = await AstReplace.run(input, { rewrite: "x($$$ARGS)", dryRun: true, timeoutMs: 0 })
    expect(AstFormat.replace(dry, { directory: dir.path })).toContain("[TRUNCATED] The search hit its 60 s time limit")
    expect(await fs.readFile(dir.file("a.ts"), "utf8")).toBe(A)
    expect(await fs.readFile(dir.file("b.ts"), "utf8")).toBe(B)
  })

  test("no match, and a rewrite identical to the match, change nothing", async () => {
    await using dir = await tmpdir({ "a.ts": A })
    const none = await AstReplace.run(
      { directory: dir.path, lang: "typescript", pattern: "nothing($A)" },
      { rewrite: "x", dryRun: false },
    )
    expect(AstFormat.replace(none, { directory: dir.path })).toBe(
      "No matches (typescript, pattern `nothing($A)`, 1 file searched). Nothing to replace.",
    )
    const same = await AstReplace.run(
      { directory: dir.path, lang: "typescript", pattern: "console.log($$$A)" },
      { rewrite: "console.log($$$A)", dryRun: false },
    )
    expect([same.files.length, same.unchanged.length, same.written]).toEqual([0, 1, false])
    expect(await fs.readFile(dir.file("a.ts"), "utf8")).toBe(A)
  })

  test("the ERROR-node note only when nothing was replaced (import $X from $Y is one, and matches)", async () => {
    await using dir = await tmpdir({ "a.ts": "import a from 'b'\nconsole.log(a)\n" })
    const imports = await AstReplace.run(
      { directory: dir.path, lang: "typescript", pattern: "import $X from $Y" },
      { rewrite: "import { default as $X } from $Y", dryRun: true },
    )
    expect([imports.totalReplacements, imports.warning]).toEqual([1, undefined])
    const broken = await AstReplace.run(
      { directory: dir.path, lang: "typescript", pattern: "console.log(" },
      { rewrite: "x", dryRun: true },
    )
    expect(AstFormat.replace(broken, { directory: dir.path })).toContain("[NOTE] Pattern: the pattern does not parse")
  })
})

describe("atomic multi-file writes", () => {
  test("a failure while writing the temporary files leaves every target as it was and no temporary file", async () => {
    await using dir = await tmpdir({ "a.ts": "old a", "b.ts": "old b" })
    const changes = [
      { file: dir.file("a.ts"), before: "old a", after: "new a" },
      { file: dir.file("b.ts"), before: "old b", after: "new b" },
    ]
    // b.ts disappears after the check and before its temporary file is made: its stat fails.
    const original = fs.stat
    let calls = 0
    ;(fs as any).stat = async (p: string) => {
      if (++calls === 2) await fs.rm(dir.file("b.ts"))
      return original(p)
    }
    try {
      const error = await AtomicWrite.all(changes).catch((e) => e)
      expect(AtomicWrite.Failed.is(error)).toBe(true)
    } finally {
      ;(fs as any).stat = original
    }
    expect(await fs.readFile(dir.file("a.ts"), "utf8")).toBe("old a")
    expect((await fs.readdir(dir.path)).sort()).toEqual(["a.ts"])
  })
})
