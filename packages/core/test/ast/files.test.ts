import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { AstFiles } from "../../ast/files"
import { tmpdir } from "../fixture"
import { CliOracle } from "./cli-oracle"
import { bunSpawnSync } from "../spawn-sync"

const rel = (dir: string, files: string[]) => files.map((f) => path.relative(dir, f))

describe("which files an AST search reads", () => {
  test("language extensions, .gitignore (nested, negated, directory rules), node_modules and .git skipped", async () => {
    await using dir = await tmpdir({
      ".gitignore": "dist/\n*.gen.ts\n!keep.gen.ts\n",
      "src/a.ts": "",
      "src/b.gen.ts": "",
      "src/keep.gen.ts": "",
      "src/c.js": "",
      "src/.hidden.ts": "",
      "src/sub/.gitignore": "local.ts\n",
      "src/sub/local.ts": "",
      "src/sub/other.ts": "",
      "dist/out.ts": "",
      "node_modules/pkg/index.ts": "",
      "src/node_modules/x.ts": "",
      ".git/hooks/x.ts": "",
    })
    const found = await AstFiles.collect({ directory: dir.path, extensions: ["ts"] })
    expect(rel(dir.path, found.files)).toEqual(["src/.hidden.ts", "src/a.ts", "src/keep.gen.ts", "src/sub/other.ts"])
  })

  test("gitignore rules of directories above the searched path apply; a named ignored directory is searched", async () => {
    await using dir = await tmpdir({
      ".git/HEAD": "ref: refs/heads/main\n",
      ".gitignore": "*.gen.ts\nvendor/\n",
      "pkg/src/a.ts": "",
      "pkg/src/b.gen.ts": "",
      "vendor/lib/v.ts": "",
      "vendor/lib/v.gen.ts": "",
      "vendor/lib/.gitignore": "skip.ts\n",
      "vendor/lib/skip.ts": "",
    })
    const sub = await AstFiles.collect({ directory: dir.path, paths: ["pkg/src"], extensions: ["ts"] })
    expect(rel(dir.path, sub.files)).toEqual(["pkg/src/a.ts"])
    const vendor = await AstFiles.collect({ directory: dir.path, paths: ["vendor"], extensions: ["ts"] })
    // The root's `*.gen.ts` still applies inside the named directory, as in the CLI (the next test compares).
    expect(rel(dir.path, vendor.files)).toEqual(["vendor/lib/v.ts"])
  })

  test("ignore files as the CLI reads them: .gitignore only inside a repository, .ignore everywhere", async () => {
    // The tester's downloaded tree without .git: git ignores nothing there, nor do the CLI and ripgrep; `.ignore`
    // (ripgrep's and the CLI's own ignore file) applies with or without a repository and wins over `.gitignore`.
    const code = "console.log(n)\n"
    await using dir = await tmpdir({
      "plain/.gitignore": "gen/\n",
      "plain/.ignore": "src/\n",
      "plain/gen/a.js": code,
      "plain/src/b.js": code,
      "plain/keep/c.js": code,
      "plain/sub/.ignore": "d.js\n",
      "plain/sub/deeper/d.js": code,
      "outer/.gitignore": "repo/x/\n", // above the repository's root: not applied inside it
      "outer/top.js": code,
      "outer/repo/.git/HEAD": "ref: refs/heads/main\n",
      "outer/repo/.git/info/exclude": "e.js\n",
      "outer/repo/.gitignore": "y/\n*.gen.js\n",
      "outer/repo/.ignore": "!y/\n",
      "outer/repo/x/a.js": code,
      "outer/repo/y/b.js": code,
      "outer/repo/y/z.gen.js": code,
      "outer/repo/y/sub/w.js": code,
      "outer/repo/e.js": code,
      "outer/repo/c.gen.js": code,
      "outer/repo/inner/.git": "gitdir: elsewhere\n", // a nested repository (a .git file, as a submodule has)
      "outer/repo/inner/d.gen.js": code,
    })
    for (const [cwd, paths] of [
      ["plain", ["."]],
      ["plain/src", ["."]],
      ["plain", ["sub/deeper"]],
      ["outer", ["."]],
      ["outer/repo", ["."]],
      ["outer/repo", ["y"]],
      ["outer/repo", ["x", "y/sub"]],
      ["plain", ["src", "gen"]],
    ] as const) {
      const root = dir.file(cwd)
      const found = await AstFiles.collect({ directory: root, paths: [...paths], extensions: ["js"] })
      const cli = [...new Set(CliOracle.search(root, "console.log($A)", "javascript", [...paths]).map((m) => m.file))]
      expect({ cwd, paths, files: found.files }).toEqual({ cwd, paths, files: cli })
    }
    const plain = await AstFiles.collect({ directory: dir.file("plain"), extensions: ["js"] })
    expect(rel(dir.file("plain"), plain.files)).toEqual(["gen/a.js", "keep/c.js"])
    const outer = await AstFiles.collect({ directory: dir.file("outer"), extensions: ["js"] })
    expect(rel(dir.file("outer"), outer.files)).toEqual([
      "repo/inner/d.gen.js",
      "repo/x/a.js",
      "repo/y/b.js",
      "repo/y/sub/w.js",
      "top.js",
    ])
  })

  test("a file named explicitly is searched whatever its extension; missing paths are a named error", async () => {
    await using dir = await tmpdir({ "bin/tool": "echo hi", "a.ts": "" })
    const found = await AstFiles.collect({
      directory: dir.path,
      paths: ["bin/tool", "a.ts", "./a.ts"],
      extensions: ["sh"],
    })
    expect(rel(dir.path, found.files)).toEqual(["a.ts", "bin/tool"])
    const error = await AstFiles.collect({ directory: dir.path, paths: ["nope"], extensions: ["ts"] }).catch((e) => e)
    expect(AstFiles.PathNotFound.is(error)).toBe(true)
    expect(error.message).toBe("path not found: nope")
  })

  test("globs: basename and path globs, ! excludes, pruned directories, extensions added by *.ext", async () => {
    await using dir = await tmpdir({
      "src/a.ts": "",
      "src/a.test.ts": "",
      "src/deep/b.ts": "",
      "lib/c.ts": "",
      "gen/d.ts": "",
      "web/App.vue": "",
      "web/page.html": "",
    })
    const collect = (globs: string[], extensions = ["ts"]) =>
      AstFiles.collect({ directory: dir.path, globs, extensions }).then((r) => rel(dir.path, r.files))
    expect(await collect(["src/**"])).toEqual(["src/a.test.ts", "src/a.ts", "src/deep/b.ts"])
    expect(await collect(["!*.test.ts"])).toEqual(["gen/d.ts", "lib/c.ts", "src/a.ts", "src/deep/b.ts"])
    expect(await collect(["src/**", "!**/deep/**"])).toEqual(["src/a.test.ts", "src/a.ts"])
    expect(await collect(["!gen/**", "!src/**"])).toEqual(["lib/c.ts"])
    expect(await collect(["**/*.vue"], ["html", "htm"])).toEqual(["web/App.vue"])
    expect(await collect(["**/*.vue", "*.html"], ["html"])).toEqual(["web/App.vue", "web/page.html"])
    for (const bad of ["", "!", "src/[a"]) {
      const error = await collect([bad]).catch((e) => e)
      expect(AstFiles.InvalidGlob.is(error)).toBe(true)
    }
  })

  test("protected files are never listed for reading; oversized files are counted, not read", async () => {
    await using dir = await tmpdir({ "a.ts": "x", "secret.ts": "x", "big.ts": "x".repeat(2048) })
    const asked: string[] = []
    const found = await AstFiles.collect({
      directory: dir.path,
      extensions: ["ts"],
      maxFileBytes: 1024,
      access: async (file) => {
        asked.push(path.basename(file))
        return file.endsWith("secret.ts") ? "protected by rule secrets" : undefined
      },
    })
    expect(rel(dir.path, found.files)).toEqual(["a.ts"])
    expect(rel(dir.path, found.denied)).toEqual(["secret.ts"])
    expect(rel(dir.path, found.tooLarge)).toEqual(["big.ts"])
    expect(asked.sort()).toEqual(["a.ts", "secret.ts"]) // the oversized file is not even offered
  })

  test("symbolic links are not followed and FIFOs are never opened", async () => {
    await using dir = await tmpdir({ "real/a.ts": "", "outside/b.ts": "" })
    await fs.symlink(dir.file("outside"), dir.file("real/link"))
    await fs.symlink(dir.file("outside/b.ts"), dir.file("real/c.ts"))
    bunSpawnSync(["mkfifo", dir.file("real/pipe.ts")])
    const found = await AstFiles.collect({ directory: dir.path, paths: ["real"], extensions: ["ts"] })
    expect(rel(dir.path, found.files)).toEqual(["real/a.ts"])
  })
})

// The lsp tool's walks (project diagnostics, a rename's search for mentions) pass `skipDependencies`: a virtual
// environment no ignore file names was walked as project code (real-world tester AC, AC-2). AST search keeps the
// ast-grep CLI's selection (no option).
describe("skipDependencies", () => {
  test("dependency folders and a virtual environment of any name are skipped, unless named or inside what is named", async () => {
    await using dir = await tmpdir({
      "src/app.py": "",
      ".venv/pyvenv.cfg": "home = /usr/bin\n",
      ".venv/lib/python3.11/site-packages/pkg/mod.py": "",
      "py311/pyvenv.cfg": "home = /usr/bin\n",
      "py311/lib/python3.11/site-packages/other.py": "",
      "tools/vendor/dep.py": "",
      "build/lib/site-packages/x.py": "",
      "__pypackages__/3.11/lib/y.py": "",
      "env.py": "",
      ".env": "SECRET=1\n",
    })
    const all = await AstFiles.collect({ directory: dir.path, extensions: ["py"] })
    expect(rel(dir.path, all.files)).toHaveLength(7)
    const own = await AstFiles.collect({ directory: dir.path, extensions: ["py"], skipDependencies: true })
    expect(rel(dir.path, own.files)).toEqual(["env.py", "src/app.py"])
    const named = await AstFiles.collect({
      directory: dir.path,
      extensions: ["py"],
      paths: ["py311", ".venv/lib"],
      skipDependencies: true,
    })
    expect(rel(dir.path, named.files)).toEqual([
      ".venv/lib/python3.11/site-packages/pkg/mod.py",
      "py311/lib/python3.11/site-packages/other.py",
    ])
  })
})
