import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityPath } from "../../security/paths"
import { SecurityShell } from "../../security/shell"
import { tmpdir } from "../fixture"

const cwd = "/repo"
const analyse = (command: string) => SecurityShell.analyze(command, { cwd, home: "/home/me", env: { TMPDIR: "/tmp" } })
const ops = async (command: string) =>
  (await analyse(command)).accesses.map((a) => `${a.op} ${a.path}${a.recursive ? " (recursive)" : ""}`)

describe("SecurityShell.analyze", () => {
  test("readers, redirects, pipelines and lists", async () => {
    expect(await ops("cat a.txt | grep x > out.txt && wc -l < in.txt")).toEqual([
      "read /repo/a.txt",
      "write /repo/out.txt",
      "read /repo/in.txt",
    ])
  })
  test("cd carries over in lists, not out of subshells", async () => {
    expect(await ops("cd src && cat a; (cd /etc && cat passwd); cat b")).toEqual([
      "read /repo/src/a",
      "read /etc/passwd",
      "read /repo/src/b",
    ])
  })
  test("variables, quoting, brace expansion, escapes", async () => {
    expect(await ops("F=x.txt; D=\"my dir\"; cat \"$D/$F\" '$F' {a,b}.md $'\\x41'")).toEqual([
      "read /repo/my dir/x.txt",
      "read /repo/$F",
      "read /repo/a.md",
      "read /repo/b.md",
      "read /repo/A",
    ])
  })
  test("cp, mv, rm -r, ln: sources, destinations and recursion", async () => {
    expect(await ops("cp -r src dst")).toEqual(["read /repo/src (recursive)", "write /repo/dst"])
    expect(await ops("mv a b")).toEqual(["read /repo/a", "write /repo/a (recursive)", "write /repo/b"])
    expect(await ops("rm -rf build")).toEqual(["write /repo/build (recursive)"])
    expect(await ops("ln -s ../t d/l")).toEqual(["read /repo/t", "write /repo/d/l"])
  })
  test("grep's pattern, sed's script and awk's program are not files", async () => {
    expect(await ops("grep -rn TODO src")).toEqual(["read /repo/src"])
    expect(await ops("sed -i 's/a/b/' f")).toEqual(["read /repo/f", "write /repo/f"])
    expect(await ops("awk '{print $1}' f")).toEqual(["read /repo/f"])
  })
  test("wrappers, nested shells, eval, interpreter literals", async () => {
    expect(await ops("sudo -u root timeout 5 cat x")).toEqual(["read /repo/x"])
    expect(await ops("bash -c 'cat y'")).toEqual(["read /repo/y"])
    expect(await ops("eval cat z")).toEqual(["read /repo/z"])
    expect(await ops("python3 -c \"open('k.txt').read()\"")).toEqual(["write /repo/k.txt"])
  })
  test("what cannot be decided comes back as a dynamic region", async () => {
    const a = await analyse('cat secrets/$X; rm -rf "$TMPDIR/x"; cd $Y && rm z')
    expect(a.dynamic).toEqual([
      { prefix: "/repo/secrets/", op: "read", command: "cat", destructive: false },
      { prefix: "", op: "write", command: "rm", destructive: true },
    ])
    expect(a.accesses.map((x) => x.path)).toEqual(["/tmp/x"])
    expect(a.notes.join(" ")).toContain("not known statically")
  })
  test("xargs gets the words its producer prints; find -exec gets the found folder", async () => {
    expect(await ops("echo a b | xargs rm")).toEqual(["write /repo/a", "write /repo/b"])
    const a = await analyse("find docs -name '*.md' -exec cat {} \\;")
    expect(a.dynamic).toEqual([{ prefix: "/repo/docs/", op: "read", command: "cat", destructive: false }])
  })
  test("syntax errors are noted, not fatal; huge commands are refused", async () => {
    const a = await analyse("cat a && (")
    expect(a.notes.join(" ")).toContain("syntax errors")
    expect((await analyse("x".repeat(SecurityShell.MAX_COMMAND + 1))).error).toContain("not analysed")
  })
  test("brace expansion bounds", () => {
    expect(SecurityShell.braces("a{1..3}")).toEqual(["a1", "a2", "a3"])
    expect(SecurityShell.braces("{a,b}{c,d}")).toEqual(["ac", "ad", "bc", "bd"])
    expect(SecurityShell.braces("{1..100000}")).toHaveLength(256)
  })
})

/** A real project: a repository (`.git` with an alias), a link into a protected folder, a patch, files to delete. */
let root = ""
let project: Awaited<ReturnType<typeof tmpdir>>
beforeAll(async () => {
  project = await tmpdir({
    ".git/config": "[core]\n\tbare = false\n[alias]\n\tsp = show\n",
    ".opencode-security.json": "{}",
    ".opencode-security-audit.log": "",
    ".env": "X=1\n",
    "secrets/api.key": "k\n",
    "secrets/nested/deep.txt": "d\n",
    "src/app.ts": "export {}\n",
    "a.tmp": "",
    "node_modules/.cache/x": "",
    "fix.patch": [
      "diff --git a/src/app.ts b/src/app.ts",
      "--- a/src/app.ts",
      "+++ b/src/app.ts",
      "@@ -1 +1 @@",
      "-export {}",
      "+export const a = 1",
      "",
    ].join("\n"),
  })
  root = project.path
  fs.symlinkSync("../secrets/nested", path.join(root, "src/inner"))
})
afterAll(() => project[Symbol.asyncDispose]())

const run = (command: string, sub = "") =>
  SecurityShell.analyze(command, { cwd: path.join(root, sub), home: path.join(root, "home"), env: { TMPDIR: "/tmp" } })
/** Paths relative to the project ("/abs" outside it). */
const rel = (p: string) => (p === root ? "." : p.startsWith(root + "/") ? p.slice(root.length + 1) : p)
/** A dynamic prefix relative to the project: "./" for the project folder, "" when nothing is known. */
const prefix = (p: string) =>
  p === "" ? "" : p === root + "/" ? "./" : rel(p.replace(/(.)\/$/, "$1")) + (p.endsWith("/") ? "/" : "")
const objects = async (command: string, sub = "") =>
  (await run(command, sub)).objects.map((o) =>
    [o.command, rel(o.cwd), o.all ? "all" : o.pathspecs!.map(rel).join(" ")].join(" | "),
  )
const touched = async (command: string, sub = "") => {
  const a = await run(command, sub)
  return [
    ...a.accesses.map((x) => `${x.op} ${rel(x.path)}${x.recursive ? " (recursive)" : ""}`),
    ...a.dynamic.map((d) => `${d.op} ${prefix(d.prefix)}… ${d.destructive ? "(destructive)" : ""}`.trim()),
  ]
}

describe("git: content printed from the object store", () => {
  test("rev:path, :path and :N:path name paths from the top; ./ and ../ from the working directory", async () => {
    expect(await objects("git show HEAD:secrets/api.key")).toEqual(["git show | . | secrets/api.key"])
    expect(await objects("git show :secrets/api.key", "src")).toEqual(["git show | src | secrets/api.key"])
    expect(await objects("git cat-file -p :0:.env", "src")).toEqual(["git cat-file | src | .env"])
    expect(await objects("git show HEAD~2:./app.ts", "src")).toEqual(["git show | src | src/app.ts"])
    // Naming a protected path stays an early, explicit refusal.
    expect(await touched("git show HEAD:secrets/api.key")).toEqual(["read secrets/api.key"])
  })
  test("cat-file prints content with -p, a type, --batch; not with -t, -s, -e or --batch-check", async () => {
    expect(await objects("git cat-file -p 3f2a9c1")).toEqual(["git cat-file | . | all"])
    expect(await objects("git cat-file blob HEAD:src/app.ts")).toEqual(["git cat-file | . | src/app.ts"])
    expect(await objects("git cat-file --batch < ids.txt")).toEqual(["git cat-file | . | all"])
    for (const quiet of [
      "git cat-file -t HEAD",
      "git cat-file -s HEAD",
      "git cat-file -e HEAD",
      "git cat-file --batch-check",
    ])
      expect(await objects(quiet)).toEqual([])
  })
  test("log prints content only with a patch option, a pickaxe or -L; restricted to its paths", async () => {
    expect(await objects("git log -p")).toEqual(["git log | . | all"])
    expect(await objects("git log --patch -- src")).toEqual(["git log | . | src"])
    expect(await objects("git log -u -3 secrets/api.key")).toEqual(["git log | . | secrets/api.key"])
    expect(await objects("git log -S API_KEY --oneline")).toEqual(["git log | . | all"])
    expect(await objects("git log -L 1,5:src/app.ts")).toEqual(["git log | . | src/app.ts"])
    expect(await objects("git log -p --full-diff -- src")).toEqual(["git log | . | all"])
    expect(await objects("git whatchanged -p")).toEqual(["git whatchanged | . | all"])
    expect(await objects("git reflog -p")).toEqual(["git reflog | . | all"])
  })
  test("diff prints stored content with --cached/--staged or revisions; the work tree is a read", async () => {
    expect(await objects("git diff --cached")).toEqual(["git diff | . | all"])
    expect(await objects("git diff --staged -- secrets")).toEqual(["git diff | . | secrets"])
    expect(await objects("git diff HEAD~1 -- src")).toEqual(["git diff | . | src"])
    expect(await objects("git diff HEAD:.env HEAD~1:.env")).toEqual(["git diff | . | .env"])
    expect(await objects("git diff")).toEqual([])
    expect(await touched("git diff -- .env")).toEqual(["read .env"])
    expect(await objects("git diff --no-index a.tmp .env")).toEqual([])
  })
  test("show: a commit's patch unless names only; an object id may be a blob whatever the options", async () => {
    expect(await objects("git show")).toEqual(["git show | . | all"])
    expect(await objects("git show HEAD -- src")).toEqual(["git show | . | src"])
    expect(await objects("git show --stat HEAD")).toEqual([])
    expect(await objects("git show -s --format=%H HEAD")).toEqual([])
    expect(await objects("git show --stat 3f2a9c1")).toEqual(["git show | . | all"])
    expect(await objects("git show --stat -p HEAD")).toEqual(["git show | . | all"])
  })
  test("grep and blame read history; grep of the work tree does not", async () => {
    expect(await objects("git grep --cached API_KEY")).toEqual(["git grep | . | all"])
    expect(await objects("git grep -e KEY HEAD -- src")).toEqual(["git grep | . | src"])
    expect(await objects("git grep KEY")).toEqual([])
    expect(await objects("git blame src/app.ts")).toEqual(["git blame | . | src/app.ts"])
    expect(await objects("git annotate -L 1,2 -- .env")).toEqual(["git annotate | . | .env"])
  })
  test("archives, patches, bundles, exports, stashes and tools that write history out", async () => {
    expect(await objects("git archive HEAD")).toEqual(["git archive | . | all"])
    expect(await objects("git archive HEAD", "src")).toEqual(["git archive | src | src"])
    expect(await objects("git archive -o /tmp/o.zip HEAD secrets")).toEqual(["git archive | . | secrets"])
    expect(await objects("git format-patch -3 --stdout")).toEqual(["git format-patch | . | all"])
    expect(await objects("git bundle create /tmp/b.bundle --all")).toEqual(["git bundle | . | all"])
    expect(await objects("git fast-export --all")).toEqual(["git fast-export | . | all"])
    expect(await objects("git difftool HEAD~1")).toEqual(["git difftool | . | all"])
    expect(await objects("git stash show -p")).toEqual(["git stash | . | all"])
    expect(await objects("git -c stash.showPatch=true stash show")).toEqual(["git stash | . | all"])
    expect(await objects("git stash show")).toEqual([])
    expect(await touched("git archive -o out.zip HEAD")).toEqual(["write out.zip"])
  })
  test("worktrees, local clones and pushes to a new place copy the object store elsewhere", async () => {
    expect(await objects("git worktree add /tmp/wt HEAD~3")).toEqual(["git worktree | . | all"])
    expect(await objects("git clone . /tmp/copy")).toEqual(["git clone | . | all"])
    expect(await objects(`git clone --local file://${root} /tmp/c2`)).toEqual(["git clone | . | all"])
    expect(await objects("git clone https://example.invalid/x.git")).toEqual([])
    expect(await objects("git push /tmp/mirror.git main")).toEqual(["git push | . | all"])
    expect(await objects("git remote add m https://example.invalid/m.git && git push m main")).toEqual([
      "git push | . | all",
    ])
    expect(await objects("git push origin main")).toEqual([])
    expect(await objects("git --work-tree=/tmp/out checkout HEAD -- src/app.ts")).toEqual([
      "git checkout | . | src/app.ts",
    ])
  })
  test("-C, --git-dir and GIT_DIR say which repository", async () => {
    expect(await objects("git -C src log -p")).toEqual(["git log | src | all"])
    expect(await objects("GIT_DIR=$X git show HEAD:a")).toEqual(["git show |  | all"])
    const a = await run("git --git-dir=/elsewhere/r.git show HEAD:a")
    expect(a.objects).toEqual([{ cwd: root, command: "git show", all: true, gitDir: "/elsewhere/r.git" }])
    expect(await objects(`env GIT_DIR=${root}/.git git show HEAD:.env`, "src")).toEqual(["git show | src | .env"])
  })
  test("aliases from -c, from git config earlier in the command, and from the repository's config", async () => {
    expect(await objects("git -c alias.x=show x HEAD:.env")).toEqual(["git show | . | .env"])
    expect(await objects("git config alias.y 'log -p'; git y")).toEqual(["git log | . | all"])
    expect(await objects("git sp HEAD:.env")).toEqual(["git show | . | .env"])
    expect(await touched("git -c alias.z='!cat .env' z")).toEqual(["read .env"])
    expect(await touched("git -c core.pager='cat .env' log")).toEqual(["read .env"])
  })
  test("commands that print names, counts or ids only are not reported", async () => {
    for (const command of [
      "git status",
      "git log --oneline",
      "git log --stat -- secrets",
      "git diff --stat",
      "git diff --name-only HEAD~1",
      "git show --stat HEAD",
      "git ls-files secrets",
      "git ls-tree -r HEAD",
      "git rev-list --objects --all",
      "git branch -D x",
      "git shortlog -sn",
    ])
      expect([command, ...(await objects(command))]).toEqual([command])
  })
})

describe("false denials removed", () => {
  test("git clean -n / --dry-run writes nothing; -e takes a pattern, not a path", async () => {
    expect(await touched("git clean -n")).toEqual([])
    expect(await touched("git clean --dry-run -dx")).toEqual([])
    expect(await touched("git clean -ndf")).toEqual([])
    expect(await touched("git clean -f -e keep")).toEqual(["write ./… (destructive)"])
  })
  test("find -delete keeps its -name filter", async () => {
    const a = await run("find . -name '*.tmp' -delete")
    expect(a.accesses.map((x) => [x.op, rel(x.path), x.recursive, x.filter])).toEqual([
      ["read", ".", undefined, undefined],
      ["write", ".", true, ["*.tmp"]],
    ])
    expect((await run("find . -type f -iname '*.TMP' -delete")).accesses[1].filter).toEqual(["*.[tT][mM][pP]"])
    expect((await run("find . -name '*.tmp' -not -path './node_modules/*' -delete")).accesses[1].filter).toEqual([
      "*.tmp",
    ])
    // An alternative, or an action before the test, widens it to everything.
    expect((await run("find . -name '*.tmp' -o -name x -delete")).accesses[1].filter).toBeUndefined()
    expect((await run("find . -delete -name '*.tmp'")).accesses[1].filter).toBeUndefined()
    expect((await run("find $D -name '*.tmp' -delete")).dynamic).toEqual([
      { prefix: "", op: "read", command: "find", destructive: false },
      { prefix: "", op: "write", command: "find -delete", destructive: true, filter: ["*.tmp"] },
    ])
  })
  test("rm -rf of a cache folder is that folder only", async () => {
    expect(await touched("rm -rf node_modules/.cache")).toEqual(["write node_modules/.cache (recursive)"])
  })
  test("git stash keeps untracked files; -u removes them", async () => {
    expect(await touched("git stash && git stash pop && git stash list")).toEqual([])
    expect(await touched("git stash push -m wip")).toEqual([])
    expect(await touched("git stash -u")).toEqual(["write . (recursive)"])
    expect(await touched("git stash push --include-untracked -- a.tmp")).toEqual(["write a.tmp (recursive)"])
  })
  test("branch creation and switching write no named file", async () => {
    expect(await touched("git checkout -b x")).toEqual([])
    expect(await touched("git checkout -b src origin/src")).toEqual([])
    expect(await touched("git switch -c feature/y")).toEqual([])
    expect(await touched("git checkout main")).toEqual([])
    expect(await touched("git checkout -- src/app.ts")).toEqual(["write src/app.ts (recursive)"])
  })
  test("read-only git subcommands with -- paths read nothing", async () => {
    for (const command of [
      "git log --oneline -- secrets",
      "git status -- secrets",
      "git diff --stat -- secrets/api.key",
      "git ls-files -- secrets",
      "git log -- .opencode-security.json",
      "git check-ignore -v .env",
    ])
      expect([command, ...(await touched(command))]).toEqual([command])
  })
  test("git add and commit read (into the index) and write no work-tree file", async () => {
    expect(await touched("git add .")).toEqual(["read ."])
    expect(await touched("git add -A && git commit -m 'update secrets/readme'")).toEqual([])
    expect(await touched("git commit -F /tmp/msg.txt src/app.ts")).toEqual(["read /tmp/msg.txt", "read src/app.ts"])
  })
  test("index-only git commands write nothing", async () => {
    for (const command of ["git reset -- secrets/api.key", "git rm --cached .env", "git restore --staged src/app.ts"])
      expect([command, ...(await touched(command))]).toEqual([command])
  })
  test("option values are not files", async () => {
    expect(await touched("head -n 20 src/app.ts")).toEqual(["read src/app.ts"])
    expect(await touched("tail -n5 src/app.ts")).toEqual(["read src/app.ts"])
    expect(await touched("tree -L 2 src")).toEqual(["read src"])
    expect(await touched("chmod +x src/app.ts")).toEqual(["write src/app.ts"])
    expect(await touched("truncate -s 0 a.tmp")).toEqual(["write a.tmp"])
    expect(await touched("grep --color=auto -rn TODO src")).toEqual(["read src"])
    expect(await touched("sort -k2 -t: -o out.txt a.tmp")).toEqual(["read a.tmp", "write out.txt"])
  })
  test("touching, listing by name and teeing read no content", async () => {
    expect(await touched("touch .env")).toEqual(["write .env"])
    expect(await touched("echo x | tee -a log.txt")).toEqual(["write log.txt"])
    expect(await touched("locate .env")).toEqual([])
    expect(await touched("diff <(sort a.tmp) <(sort .env)")).toEqual(["read a.tmp", "read .env"])
  })
  test("a patch read now names the files it changes", async () => {
    expect(await touched("patch -p1 < fix.patch")).toEqual(["write src/app.ts", "read fix.patch"])
    expect(await touched("git apply fix.patch")).toEqual(["read fix.patch", "write src/app.ts"])
    expect(await touched("git apply --check fix.patch")).toEqual(["read fix.patch"])
    expect(await touched("git apply missing.patch")).toEqual(["read missing.patch", "write ./… (destructive)"])
  })
})

describe("names built at run time", () => {
  test("interpreter one-liners that build a name report a dynamic region from its known start", async () => {
    const dyn = async (command: string) => (await run(command)).dynamic.map((d) => `${d.op} ${rel(d.prefix)}`)
    expect(await dyn(`python3 -c "open('.e'+'nv').read()"`)).toEqual(["read .e"])
    expect(await dyn(`python3 -c "open('.e' 'nv')"`)).toEqual(["read .e"])
    expect(await dyn(`node -e "fs.readFileSync(['.','env'].join(''))"`)).toEqual(["read ."])
    expect(await dyn(`perl -e 'open(F, ".e"."nv"); print <F>'`)).toEqual(["read .e"])
    expect(await dyn(`python3 -c "import os; os.remove('.opencode-security' + '.json')"`)).toEqual([
      "read .opencode-security",
      "write .opencode-security",
    ])
    expect(await dyn(`python3 -c "import os; print(open(os.environ['F']).read())"`)).toEqual(["read "])
    expect(await dyn(`python3 -c "open(f'.e{x}')"`)).toEqual(["read .e"])
  })
  test("programs that open nothing, or only literal names, report no region", async () => {
    const dyn = async (command: string) => (await run(command)).dynamic
    expect(await dyn(`python3 -c 'print("a" + "b")'`)).toEqual([])
    expect(await dyn(`node -e "console.log(require('path').join('a', 'b'))"`)).toEqual([])
    expect(await dyn(`python3 -c "print(open('src/app.ts').read())"`)).toEqual([])
  })
  test("strings an interpreter hands to a shell are read as commands", async () => {
    expect(await touched(`python3 -c "import os; os.system('cat .env')"`)).toContain("read .env")
    expect(await touched(`node -e "require('child_process').execSync('cat secrets/api.key')"`)).toContain(
      "read secrets/api.key",
    )
    expect(await touched("ruby -e 'puts `cat .env`'")).toContain("read .env")
    expect(await touched(`awk 'BEGIN { system("cat .env") }'`)).toContain("read .env")
  })
  test("find -exec, find | xargs and $(find …) read below the start folder", async () => {
    expect(await touched("find secrets -type f -exec cat {} +")).toEqual(["read secrets", "read secrets/…"])
    expect(await touched("find secrets | xargs cat")).toEqual(["read secrets", "read secrets/…"])
    expect(await touched("cat $(find secrets -type f)")).toEqual(["read secrets", "read secrets/…"])
    expect(await touched("for f in $(find secrets); do cat $f; done")).toEqual(["read secrets", "read secrets/…"])
    expect(await touched("find . -name x -exec sh -c 'cat \"$1\"' _ {} \\;")).toEqual(["read .", "read ./…"])
  })
  test("ls prints bare names, read where the output is used; filters pass them on", async () => {
    expect(await touched("ls secrets | grep key | xargs cat")).toEqual(["read secrets", "read ./…"])
    expect(await touched("cd secrets && ls | sort | head -3 | xargs cat")).toEqual(["read secrets/…"])
    expect(await touched("for f in $(ls secrets); do cat secrets/$f; done")).toEqual(["read secrets", "read secrets/…"])
    expect(await touched("ls secrets | xargs -I{} cat secrets/{}")).toEqual(["read secrets", "read secrets/…"])
    expect(await touched("ls secrets | sed 's/^/x/' | xargs cat")).toEqual(["read secrets", "read …"])
  })
  test("words a command prints statically are exact", async () => {
    expect(await touched('cat "$(pwd)"/.env')).toEqual(["read .env"])
    expect(await touched('cd src && cat "$(pwd)/../.env"')).toEqual(["read .env"])
    expect(await touched("echo .env | xargs cat")).toEqual(["read .env"])
    expect(await touched("xargs cat <<< .env")).toEqual(["read .env"])
    expect(await touched("cat $(basename /x/.env) $(dirname src/app.ts)/app.ts")).toEqual([
      "read .env",
      "read src/app.ts",
    ])
    expect(await touched("sh -c 'cat \"$1\"' _ secrets/api.key")).toEqual(["read secrets/api.key"])
  })
  test("/proc/self/cwd is the shell's folder, /proc/self/root its root, descriptors are no files", async () => {
    expect(await touched("cd src && cat /proc/self/cwd/../.env")).toEqual(["read .env"])
    expect(await touched("cat /proc/self/root/etc/hostname")).toEqual(["read /etc/hostname"])
    expect(await touched("cat /proc/thread-self/cwd/.env")).toEqual(["read .env"])
    expect(await touched("cat /dev/fd/3 /proc/self/fd/0 3< .env")).toEqual(["read .env"])
    // Another process's folder is nowhere a static reading knows.
    expect(await touched("cat /proc/1/cwd/.env /proc/$$/cwd/.env")).toEqual(["read …", "read …"])
  })
  test(".. after a link is taken where the link points, like the kernel", async () => {
    // src/inner → ../secrets/nested, so src/inner/.. is secrets.
    expect(await touched("cat src/inner/../api.key")).toEqual(["read secrets/api.key"])
    expect(await touched("cd src/inner && cat ../api.key")).toEqual(["read secrets/api.key"])
    expect(await touched("rm -rf src/inner/../$X")).toEqual(["write secrets/… (destructive)"])
    // `cd ..` itself is logical, as in bash.
    expect(await touched("cd src/inner/.. && cat app.ts")).toEqual(["read src/app.ts"])
    expect(SecurityPath.collapse(root + "/src/inner/../api.key")).toBe(path.join(root, "secrets/api.key"))
    expect(SecurityPath.collapse("/a/./b//c/")).toBe("/a/b/c")
  })
  test("code not known statically may touch anything", async () => {
    for (const command of [
      'eval "$X"',
      'bash -c "$X"',
      'python3 -c "$CODE"',
      "$CMD a.tmp",
      "source $F",
      "echo | xargs $C",
    ])
      expect([command, ...new Set(await touched(command))].filter((t) => !/^(read|write) [^…]/.test(t))).toEqual([
        command,
        "read …",
        "write … (destructive)",
      ])
  })
  test("a value not known at all has no prefix, not the working directory", async () => {
    expect(await touched("cat $X")).toEqual(["read …"])
    expect(await touched("rm -rf $DIR/")).toEqual(["write … (destructive)"])
    expect(await touched("cat secrets/$X")).toEqual(["read secrets/…"])
    expect(await touched("cat .e$X")).toEqual(["read .e…"])
  })
})

describe("wrappers, archives and the home folder", () => {
  test("env -S splits its value into the command", async () => {
    expect(await touched("env -S 'cat .env'")).toEqual(["read .env"])
  })
  test("tar's mode comes from its one-letter flags or long options, not from letters inside option names", async () => {
    expect(await touched("tar --extract --file=x.tar")).toEqual(["read x.tar", "write . (recursive)"])
    expect(await touched("tar czf out.tgz -C src .")).toEqual(["write out.tgz", "read src (recursive)"])
  })
  test("~ follows HOME when the command assigns it", async () => {
    expect(await touched(`HOME=${root}/secrets; cat ~/api.key`)).toEqual(["read secrets/api.key"])
    expect(await touched("HOME=$X; cat ~/api.key")).toEqual(["read …"])
  })
})
