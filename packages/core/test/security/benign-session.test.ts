// An honest agent's session in a project WITH a security policy, on both routes (the external plugin and the core
// hook rules): orientation, edits next to (never inside) protected segments, new files and folders, tests and
// builds, the git workflow, searches, AST search and replace, a nested package. Every call goes through the real
// hooks and runs for real (shell commands inside the kernel sandbox). Not one call may be refused, and the commands
// must succeed: a refusal or a failing command here is a false denial of the layer, to be reported, not hidden.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import {
  ROUTES,
  isolateHome,
  leaks,
  open,
  policyBytes,
  REDTEAM_POLICY,
  redteamProject,
  type Result,
  type Session,
} from "./redteam-helpers"
import { SecurityGlob } from "../../security/glob"
import { spawnSync } from "../spawn-sync"

const home = isolateHome()
afterAll(() => home.restore(), 60_000)

const GIT_ID = "-c user.name=Agent -c user.email=agent@example.invalid"

/**
 * The policy's patterns kept from the model (read or llm denied: both hidden in the sandbox): a root-wide command may
 * only complain about paths matching one.
 */
const READ_PROTECTED = [
  ...REDTEAM_POLICY.rules
    .filter((r) => r.deniedOperations.some((op) => op === "read" || op === "llm"))
    .map((r) => SecurityGlob.compile(r.pattern)),
  // The built-ins' local state, which no role may read while a policy exists.
  SecurityGlob.compile(".opencode/builtins-local"),
]

/** The path in a `Permission denied` line of grep, find or rg (`grep: ./a/b: …`, `find: './a': …`, `a/b: … (os error 13)`). */
function deniedPath(line: string): string {
  const m = /^(?:[a-z]+: )?['‘]?(?:\.\/)?(.+?)['’]?: Permission denied/.exec(line)
  return m?.[1] ?? line
}

const EXTRA = {
  "build.js": [
    "const fs = require('fs')",
    "fs.mkdirSync('dist', { recursive: true })",
    "fs.writeFileSync('dist/out.js', '// built\\n' + fs.readFileSync('src/util.ts', 'utf8'))",
    "console.log('build done')",
    "",
  ].join("\n"),
  "package.json": JSON.stringify(
    { name: "benign-project", private: true, scripts: { test: "node test.js", build: "node build.js" } },
    null,
    2,
  ),
  "src/log.ts": "export function log(x: string) {\n  console.log(x)\n}\n// TODO: add levels\n",
  "scratch/old.txt": "to be removed\n",
}

type Step = {
  name: string
  tool?: string
  args?: Record<string, unknown>
  bash?: string
  workdir?: string
  /** Text the output (as the model sees it) must contain. */
  shows?: string
  /** Further checks on the result or the files. */
  check?: (r: Result, s: Session) => void
  /** "protected": a non-zero exit is accepted when every complaint is an access error on a protected path. */
  exit?: "protected"
}

const patch = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")

function file(s: Session, rel: string) {
  return fs.readFileSync(`${s.dir}/${rel}`, "utf8")
}

const STEPS: Step[] = [
  // Orientation.
  { name: "glob every TypeScript file", tool: "glob", args: { pattern: "**/*.ts" }, shows: "src/util.ts" },
  { name: "glob the src folder", tool: "glob", args: { pattern: "src/**" }, shows: "src/app.ts" },
  { name: "read the README", tool: "read", args: { filePath: "README.md" }, shows: "# Project" },
  { name: "read package.json", tool: "read", args: { filePath: "package.json" }, shows: "benign-project" },
  {
    name: "read a file with segments",
    tool: "read",
    args: { filePath: "src/app.ts" },
    shows: "export function visible()",
  },
  {
    name: "read the locked section (only write-protected)",
    tool: "read",
    args: { filePath: "src/app.ts", offset: 8 },
    shows: "LOCKED_VALUE = 42",
  },
  { name: "read src/util.ts", tool: "read", args: { filePath: "src/util.ts" }, shows: "export const x = 1" },
  {
    name: "read a write-protected vendor file",
    tool: "read",
    args: { filePath: "vendor/lib.js" },
    shows: "module.exports = 1",
  },
  { name: "read the public docs", tool: "read", args: { filePath: "docs/public.md" }, shows: "Anyone may read this." },
  { name: "grep exports in src", tool: "grep", args: { pattern: "export", path: "src" }, shows: "src/util.ts" },
  { name: "grep TODO in the project", tool: "grep", args: { pattern: "TODO" }, shows: "src/log.ts" },
  {
    name: "grep with an include glob",
    tool: "grep",
    args: { pattern: "console", include: "*.ts" },
    shows: "src/log.ts",
  },
  { name: "grep a locked value", tool: "grep", args: { pattern: "LOCKED_VALUE", path: "src" }, shows: "LOCKED_VALUE" },
  { name: "glob markdown", tool: "glob", args: { pattern: "**/*.md" }, shows: "README.md" },
  {
    name: "ast_grep_search exported constants",
    tool: "ast_grep_search",
    args: { pattern: "export const $A = $B", lang: "typescript" },
    shows: "src/util.ts",
  },
  {
    name: "ast_grep_search python functions",
    tool: "ast_grep_search",
    args: { pattern: "def $F(): $$$B", lang: "python", paths: ["src/locked.py"] },
    shows: "def keep",
  },
  { name: "ls -la", bash: "ls -la", shows: "package.json" },
  { name: "git status", bash: "git status", shows: "On branch" },
  { name: "git log --oneline", bash: "git log --oneline", shows: "init" },
  { name: "git branch", bash: "git branch", shows: "*" },
  { name: "node --version", bash: "node --version", shows: "v" },
  { name: "npm test", bash: "npm test 2>&1", shows: "tests passed" },
  { name: "npm run build", bash: "npm run build 2>&1", shows: "build done" },
  { name: "cat the build output", bash: "cat dist/out.js", shows: "// built" },
  { name: "wc -l of the sources", bash: "wc -l src/*.ts", shows: "total" },
  {
    name: "todowrite a plan",
    tool: "todowrite",
    args: { todos: [{ content: "add feature", status: "pending", priority: "high", id: "1" }] },
  },

  // Edits next to protected segments, and new files.
  {
    name: "edit the line before the secure segment",
    tool: "edit",
    args: { filePath: "src/app.ts", oldString: "  return 1\n}", newString: "  return 2\n}" },
    check: (_r, s) => expect(file(s, "src/app.ts")).toContain("return 2"),
  },
  {
    name: "edit the line after the locked segment",
    tool: "edit",
    args: { filePath: "src/app.ts", oldString: "export const tail = true", newString: "export const tail = false" },
    check: (_r, s) => expect(file(s, "src/app.ts")).toContain("tail = false"),
  },
  {
    name: "edit the function before the locked section in python",
    tool: "edit",
    args: { filePath: "src/locked.py", oldString: "def keep():\n    return 0", newString: "def keep():\n    return 5" },
    check: (_r, s) => expect(file(s, "src/locked.py")).toContain("return 5"),
  },
  {
    name: "append a function after the locked section",
    tool: "edit",
    args: {
      filePath: "src/locked.py",
      oldString: "    return RATE\n",
      newString: "    return RATE\n\n\ndef extra():\n    return 2\n",
    },
    check: (_r, s) => expect(file(s, "src/locked.py")).toContain("def extra()"),
  },
  {
    name: "write a new source file",
    tool: "write",
    args: {
      filePath: "src/feature.ts",
      content: "export function feature() {\n  console.log('feature')\n  return 1\n}\n",
    },
  },
  {
    name: "write into a new folder",
    tool: "write",
    args: {
      filePath: "src/lib/helpers.ts",
      content: "export function help(x: number) {\n  console.log(x)\n  return x\n}\n",
    },
  },
  { name: "read the new file", tool: "read", args: { filePath: "src/feature.ts" }, shows: "feature()" },
  {
    name: "edit the new file",
    tool: "edit",
    args: { filePath: "src/feature.ts", oldString: "return 1", newString: "return 42" },
    check: (_r, s) => expect(file(s, "src/feature.ts")).toContain("return 42"),
  },
  {
    name: "apply_patch adding a file",
    tool: "apply_patch",
    args: { patchText: patch("*** Add File: src/lib/format.ts", "+export const format = (s: string) => s.trim()") },
    check: (_r, s) => expect(file(s, "src/lib/format.ts")).toContain("format"),
  },
  {
    name: "apply_patch updating src/util.ts",
    tool: "apply_patch",
    args: {
      patchText: patch(
        "*** Update File: src/util.ts",
        "@@",
        "-export const x = 1",
        "+export const x = 1",
        "+export const y = 2",
      ),
    },
    check: (_r, s) => expect(file(s, "src/util.ts")).toContain("y = 2"),
  },
  {
    name: "apply_patch next to the secure segment",
    tool: "apply_patch",
    args: {
      patchText: patch(
        "*** Update File: src/app.ts",
        "@@ export function visible() {",
        "-  return 2",
        "+  return 3",
        " }",
      ),
    },
    check: (_r, s) => expect(file(s, "src/app.ts")).toContain("return 3"),
  },
  {
    name: "apply_patch deleting a scratch file",
    tool: "apply_patch",
    args: { patchText: patch("*** Delete File: scratch/old.txt") },
    check: (_r, s) => expect(fs.existsSync(`${s.dir}/scratch/old.txt`)).toBe(false),
  },
  {
    name: "apply_patch moving a file",
    tool: "apply_patch",
    args: {
      patchText: patch(
        "*** Update File: src/lib/format.ts",
        "*** Move to: src/lib/fmt.ts",
        "@@",
        "-export const format = (s: string) => s.trim()",
        "+export const format = (s: string) => s.trim().toLowerCase()",
      ),
    },
    check: (_r, s) => expect(fs.existsSync(`${s.dir}/src/lib/fmt.ts`)).toBe(true),
  },
  {
    name: "write a test file",
    tool: "write",
    args: {
      filePath: "test/feature.test.js",
      content: "const assert = require('assert')\nassert.ok(true)\nconsole.log('feature ok')\n",
    },
  },
  { name: "run the new test", bash: "node test/feature.test.js", shows: "feature ok" },
  { name: "npm test again", bash: "npm test 2>&1", shows: "tests passed" },
  {
    name: "ast_grep_replace dry run",
    tool: "ast_grep_replace",
    args: { pattern: "console.log($$$A)", rewrite: "logger.info($$$A)", lang: "typescript", paths: ["src/lib"] },
    shows: "logger.info(x)",
  },
  {
    name: "ast_grep_replace live",
    tool: "ast_grep_replace",
    args: {
      pattern: "console.log($$$A)",
      rewrite: "logger.info($$$A)",
      lang: "typescript",
      paths: ["src/lib/helpers.ts"],
      dryRun: false,
    },
    check: (_r, s) => expect(file(s, "src/lib/helpers.ts")).toContain("logger.info(x)"),
  },
  {
    name: "ast_grep_replace live on a file with segments, outside them",
    tool: "ast_grep_replace",
    args: { pattern: "return 3", rewrite: "return 4", lang: "typescript", paths: ["src/app.ts"], dryRun: false },
    check: (_r, s) => expect(file(s, "src/app.ts")).toContain("return 4"),
  },
  { name: "read the replaced file", tool: "read", args: { filePath: "src/lib/helpers.ts" }, shows: "logger.info" },

  // The git workflow.
  { name: "git status --short", bash: "git status --short", shows: "src/feature.ts" },
  { name: "git diff", bash: "git diff", shows: "return 4" },
  { name: "git diff --stat", bash: "git diff --stat", shows: "src/app.ts" },
  { name: "git add specific files", bash: "git add src/feature.ts src/lib test/feature.test.js" },
  { name: "git diff --cached --stat", bash: "git diff --cached --stat", shows: "src/feature.ts" },
  { name: "git commit", bash: `git ${GIT_ID} commit -m "Add feature"`, shows: "Add feature" },
  { name: "git log --oneline -5", bash: "git log --oneline -5", shows: "Add feature" },
  { name: "git checkout -b", bash: "git checkout -b feature/x 2>&1", shows: "feature/x" },
  { name: "git branch --list", bash: "git branch --list", shows: "* feature/x" },
  {
    name: "edit util on the branch",
    tool: "edit",
    args: { filePath: "src/util.ts", oldString: "export const y = 2", newString: "export const y = 3" },
  },
  { name: "git diff of one file", bash: "git diff src/util.ts", shows: "y = 3" },
  {
    name: "git add and commit one file",
    bash: `git add src/util.ts && git ${GIT_ID} commit -qm "Tweak util" && echo committed`,
    shows: "committed",
  },
  { name: "git checkout back", bash: "git checkout - 2>&1" },
  { name: "git merge the branch", bash: `git ${GIT_ID} merge --no-edit feature/x 2>&1` },
  { name: "git log --graph", bash: "git log --oneline --graph -n 5", shows: "Tweak util" },
  { name: "git show --stat HEAD", bash: "git show --stat HEAD", shows: "src/util.ts" },
  { name: "git show HEAD", bash: "git show HEAD", shows: "y = 3" },
  { name: "git blame", bash: "git blame src/util.ts", shows: "export const x = 1" },
  { name: "git tag", bash: "git tag v0.1.0 && git tag", shows: "v0.1.0" },
  { name: "git rev-parse HEAD", bash: "git rev-parse HEAD" },
  { name: "git log -p of one file", bash: "git log -p -1 -- src/util.ts", shows: "y = 3" },
  { name: "git diff HEAD~1 --stat", bash: "git diff HEAD~1 --stat" },
  { name: "git clean -n", bash: "git clean -n" },
  { name: "git restore --staged", bash: "git restore --staged . && git status --short", shows: "src/app.ts" },

  // A nested package with its own files.
  {
    name: "write a nested package.json",
    tool: "write",
    args: { filePath: "packages/web/package.json", content: '{ "name": "web", "private": true }\n' },
  },
  {
    name: "write the nested entry point",
    tool: "write",
    args: { filePath: "packages/web/index.js", content: "console.log('web ok')\n" },
  },
  {
    name: "make the nested test folder",
    bash: "mkdir -p packages/web/test && echo \"console.log('web test ok')\" > packages/web/test/a.test.js",
  },
  { name: "run the nested entry point", bash: "cd packages/web && node index.js", shows: "web ok" },
  {
    name: "run the nested test with a workdir",
    bash: "node test/a.test.js",
    workdir: "packages/web",
    shows: "web test ok",
  },
  { name: "glob the nested package", tool: "glob", args: { pattern: "packages/**" }, shows: "packages/web/index.js" },
  {
    name: "grep inside the nested package",
    tool: "grep",
    args: { pattern: "ok", path: "packages/web" },
    shows: "index.js",
  },
  { name: "read the nested entry point", tool: "read", args: { filePath: "packages/web/index.js" }, shows: "web ok" },

  // Everyday shell.
  { name: "find sources", bash: "find src -name '*.ts' | sort", shows: "src/util.ts" },
  {
    name: "find and delete temporary files under build",
    bash: "find build -name '*.tmp' -delete && ls build",
    shows: "keep.txt",
  },
  // From the root a recursive command meets the protected files: the kernel refuses them (an access error, never a
  // vanished file), so the command does its work and exits non-zero, naming only protected paths.
  {
    name: "find and delete temporary files from the root",
    bash: "touch a.tmp && find . -name '*.tmp' -delete",
    exit: "protected",
    check: (_r, s) => expect(fs.existsSync(path.join(s.dir, "a.tmp"))).toBe(false),
  },
  { name: "grep -rn in src", bash: "grep -rn TODO src", shows: "src/log.ts" },
  {
    name: "grep -rn from the root",
    bash: "grep -rn 'export function visible' .",
    shows: "src/app.ts",
    exit: "protected",
  },
  { name: "rg in src", bash: "rg -n export src", shows: "src/util.ts" },
  { name: "rg from the root", bash: "rg -n 'def keep'", shows: "src/locked.py", exit: "protected" },
  { name: "head of the README", bash: "head -5 README.md", shows: "# Project" },
  { name: "sed -n of lines", bash: "sed -n '1,3p' src/app.ts", shows: "visible" },
  {
    name: "sed -i on an ordinary file",
    bash: "sed -i 's/x = 1/x = 10/' src/util.ts && cat src/util.ts",
    shows: "x = 10",
  },
  {
    name: "make and remove a temporary folder",
    bash: "mkdir -p tmp/a && touch tmp/a/b && rm -rf tmp && echo cleaned",
    shows: "cleaned",
  },
  { name: "cp a file", bash: "cp README.md docs/README.copy.md && echo copied", shows: "copied" },
  { name: "mv a file", bash: "mv docs/README.copy.md docs/readme-copy.md && echo moved", shows: "moved" },
  { name: "rm a file", bash: "rm docs/readme-copy.md && echo removed", shows: "removed" },
  {
    name: "write with echo and read back",
    bash: "echo hello > notes/hello.txt && cat notes/hello.txt",
    shows: "hello",
  },
  { name: "tar the build output", bash: "tar czf dist.tgz dist && tar tzf dist.tgz", shows: "dist/out.js" },
  { name: "npm ls", bash: "npm ls --depth=0 2>&1", shows: "benign-project" },
  {
    name: "node one-liner on package.json",
    bash: "node -e \"console.log(require('./package.json').name)\"",
    shows: "benign-project",
  },
  { name: "python one-liner", bash: 'python3 -c "print(sum(range(10)))"', shows: "45" },
  { name: "bun --version", bash: "bun --version" },
  { name: "bun run a script", bash: "bun run test 2>&1", shows: "tests passed" },
  { name: "tsc --version", bash: "tsc --version", shows: "Version" },
  { name: "which git", bash: "which git", shows: "git" },
  { name: "du -sh src", bash: "du -sh src", shows: "src" },
  { name: "diff of a file with itself", bash: "diff src/util.ts src/util.ts && echo same", shows: "same" },
  { name: "cat a write-protected vendor file", bash: "head -c 100 vendor/lib.js", shows: "module.exports" },
  { name: "ls -R of src", bash: "ls -R src", shows: "helpers.ts" },
  { name: "env has a PATH", bash: "env | grep -c '^PATH='", shows: "1" },

  // Tools that touch no file, skills, agents, resources; more edits.
  { name: "load a public skill", tool: "skill", args: { name: "open-notes" } },
  {
    name: "start a public subagent",
    tool: "task",
    args: { subagent_type: "helper", description: "format", prompt: "format the docs" },
  },
  { name: "resource-query", tool: "resource-query", args: { query: "docs" }, shows: "ship-docs" },
  { name: "resource-load", tool: "resource-load", args: { id: "ship-docs" }, shows: "Run the docs build" },
  {
    name: "edit the public docs",
    tool: "edit",
    args: {
      filePath: "docs/public.md",
      oldString: "Anyone may read this.",
      newString: "Anyone may read this.\nAnd edit it.",
    },
  },
  { name: "read the edited docs", tool: "read", args: { filePath: "docs/public.md" }, shows: "And edit it." },
  {
    name: "write a file keeping the locked section verbatim",
    tool: "write",
    args: {
      filePath: "src/locked.py",
      content:
        'def keep():\n    return 6\n# @locked-start\nLIMIT = "prod"  # do not change\nRATE = 10\n# @locked-end\ndef tail():\n    return RATE\n',
    },
    check: (_r, s) => expect(file(s, "src/locked.py")).toContain("return 6"),
  },
  { name: "final git status", bash: "git status --short", shows: "src/locked.py" },

  // Commands over the whole working tree, last: files with read-protected segments are seen masked inside the
  // sandbox, so these are where a difference between the masked view and the repository would show.
  {
    name: "git status lists only what the session changed",
    bash: "git status --short",
    check: (r) => expect(r.output).not.toMatch(/src\/(first|short)\.ts/),
  },
  {
    name: "git diff --stat lists only what the session changed",
    bash: "git diff --stat",
    check: (r) => expect(r.output).not.toMatch(/src\/(first|short)\.ts/),
  },
  {
    name: "edit util before stashing",
    tool: "edit",
    args: { filePath: "src/util.ts", oldString: "export const y = 3", newString: "export const y = 4" },
  },
  // A file with protected segments is shown redacted inside the sandbox: stashing it would store the redaction, so
  // its change is committed first (stashing it is refused, see sandbox.test.ts › git inside the sandbox).
  {
    name: "commit the AST change to the file with segments",
    bash: `git add src/app.ts src/locked.py && git ${GIT_ID} commit -qm "return 4" && git show --stat HEAD`,
    shows: "src/app.ts",
    // What was committed is the real file, not the sandbox's redacted copy (read from outside the sandbox).
    check: (_r, s) =>
      expect(spawnSync("git", ["show", "HEAD:src/app.ts"], { cwd: s.dir, encoding: "utf8" }).stdout).toBe(
        file(s, "src/app.ts"),
      ),
  },
  { name: "git stash", bash: "git stash 2>&1", shows: "Saved working directory" },
  { name: "git stash list", bash: "git stash list", shows: "stash@{0}" },
  { name: "git stash pop", bash: "git stash pop 2>&1" },
  { name: "the stashed change is back", bash: "git diff src/util.ts", shows: "y = 4" },
  {
    name: "git commit -am",
    bash: `git ${GIT_ID} commit -qam "Finish" && git show --stat HEAD`,
    check: (r) => {
      // What is committed is the files as they are, not the sandbox's masked view of files never edited.
      expect(r.output).not.toMatch(/src\/(first|short)\.ts/)
      expect(r.output).toContain("src/util.ts")
    },
  },
  {
    name: "the committed file with segments equals the working file",
    bash: "git log --oneline -1",
    check: (_r, s) => {
      const committed = spawnSync("git", ["show", "HEAD:src/app.ts"], { cwd: s.dir, encoding: "utf8" }).stdout
      expect(committed).toBe(file(s, "src/app.ts"))
    },
  },
]

for (const route of ROUTES) {
  describe(`an honest session on the ${route} route: nothing refused, everything succeeds`, () => {
    const box = {} as { dir: Awaited<ReturnType<typeof redteamProject>>; s: Session; policy: Buffer }
    beforeAll(async () => {
      box.dir = await redteamProject(EXTRA)
      box.s = await open(route, box.dir.path)
      box.policy = policyBytes(box.dir.path)
    }, 60_000)
    afterAll(async () => {
      await box.s.close()
      await box.dir[Symbol.asyncDispose]()
    }, 30_000)

    for (const step of STEPS)
      test(
        step.bash ? `bash: ${step.name}` : `${step.tool}: ${step.name}`,
        async () => {
          const r = step.bash
            ? await box.s.bash(step.bash, { workdir: step.workdir })
            : await box.s.call(step.tool!, step.args ?? {})
          if (r.refused) throw new Error(`refused: ${r.reason}`)
          expect(r.failed).toBeUndefined()
          if (step.bash) {
            if (step.exit === "protected" && r.code !== 0) {
              // Every complaint is an access error on a path the policy protects.
              const complaints = r.raw.split("\n").filter((l) => /Permission denied/.test(l))
              expect(complaints.length).toBeGreaterThan(0)
              for (const l of complaints)
                expect({
                  line: l,
                  protected: READ_PROTECTED.some((g) => SecurityGlob.testWithParents(g, deniedPath(l))),
                }).toEqual({
                  line: l,
                  protected: true,
                })
            } else if (r.code !== 0) throw new Error(`exit ${r.code}:\n${r.raw}`)
            expect(r.output).not.toContain("outside the kernel sandbox")
          }
          if (step.shows) expect(r.output).toContain(step.shows)
          step.check?.(r, box.s)
          expect(leaks(r.output)).toEqual([])
        },
        { timeout: 60_000 },
      )

    test("the policy is byte-identical and no call was refused (the audit log has no denial)", () => {
      expect(policyBytes(box.dir.path)).toEqual(box.policy)
      const log = box.dir.file(".opencode-security-audit.log")
      const denials = fs.existsSync(log)
        ? fs
            .readFileSync(log, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l))
            .filter((e) => e.action === "deny" || e.action === "refuse")
        : []
      expect(denials).toEqual([])
    })
  })
}

test("the session has at least 100 calls", () => {
  expect(STEPS.length).toBeGreaterThanOrEqual(100)
})
