// The benign corpus: real source trees (packages installed under node_modules) copied into a project that has a
// policy, then used the way an agent uses a project. Nothing here may be denied, and reading these files redacts
// nothing but genuine secret formats: protections must not leak onto ordinary code.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityGuard } from "../../security/guard"
import { guardFor, project } from "./fixture"

const ROOT = path.resolve(import.meta.dir, "../../../..")
/** Real, varied source trees: TypeScript, JavaScript, JSON, Markdown, C, shell, YAML. */
const TREES = [
  "node_modules/zod/src",
  "node_modules/ajv/lib",
  "node_modules/picomatch",
  "node_modules/gray-matter",
  "node_modules/tree-sitter-bash/src",
  "node_modules/web-tree-sitter/src",
]

let dir: Awaited<ReturnType<typeof project>>
let guard: SecurityGuard.Guard
let files: string[] = []

beforeAll(async () => {
  dir = await project()
  for (const tree of TREES) {
    const from = path.join(ROOT, tree)
    if (!fs.existsSync(from)) throw new Error(`benign corpus tree missing: ${tree} (run npm install)`)
    fs.cpSync(from, path.join(dir.path, "corpus", tree.replace(/^node_modules\//, "")), {
      recursive: true,
      dereference: true,
    })
  }
  files = (fs.readdirSync(path.join(dir.path, "corpus"), { recursive: true }) as string[])
    .map((f) => path.join("corpus", f))
    .filter((f) => fs.statSync(path.join(dir.path, f)).isFile())
  guard = await guardFor(dir.path)
}, 60_000)
afterAll(async () => {
  guard.close()
  await dir[Symbol.asyncDispose]()
})

describe("benign corpus", () => {
  test("the corpus is large and varied", () => {
    expect(files.length).toBeGreaterThan(300)
    const exts = new Set(files.map((f) => path.extname(f)))
    for (const ext of [".ts", ".js", ".json", ".md", ".c"]) expect(exts.has(ext)).toBe(true)
  })

  test("every file may be read, edited, written back, cat-ed, grep-ed and copied — zero denials", async () => {
    const denials: string[] = []
    for (const file of files) {
      const text = fs.readFileSync(path.join(dir.path, file), "utf8")
      const firstLine = text.split("\n").find((l) => l.trim().length > 3) ?? "x"
      const calls: [string, unknown][] = [
        ["read", { filePath: file }],
        ["edit", { filePath: file, oldString: firstLine, newString: firstLine }],
        ["write", { filePath: file, content: text }],
        ["bash", { command: `cat '${file}' | head -n 20 && wc -l '${file}'` }],
        ["bash", { command: `grep -n "export" '${file}' || true` }],
        ["bash", { command: `cp '${file}' /tmp/ocb-benign-copy && rm -f /tmp/ocb-benign-copy` }],
        ["some_plugin_tool", { path: file, options: { mode: "fast" } }],
      ]
      for (const [tool, args] of calls) {
        const v = await guard.before({ tool, args })
        if (!v.allowed) denials.push(`${tool} ${file}: ${v.reason}`)
      }
    }
    expect(denials).toEqual([])
  }, 120_000)

  test("reading the corpus redacts nothing but genuine secret formats", () => {
    const found: string[] = []
    for (const file of files) {
      const text = fs.readFileSync(path.join(dir.path, file), "utf8")
      const numbered = text
        .split("\n")
        .map((l, i) => `${i + 1}: ${l}`)
        .join("\n")
      const out = guard.after({ tool: "read", args: { filePath: file } }, numbered)
      const model = guard.scanAndRedact(text, { scope: "llm", paths: "token" })
      const labels = [
        ...new Set([
          ...(out.match(/\[REDACTED: [^\]]+\]/g) ?? []),
          ...model.ranges.map((r) => `[REDACTED: ${r.label}]`),
        ]),
      ]
      for (const label of labels) found.push(`${file}: ${label}`)
    }
    // Zod's own tests carry a real JWT (the jwt.io sample) and a URL with a password: those formats are exactly what
    // the secret patterns exist for. Nothing else in the corpus — no path mention, no copy, no segment — is touched.
    expect(found.sort()).toEqual([
      "corpus/zod/src/v4/classic/tests/string.test.ts: [REDACTED: secret (url-credentials)]",
      "corpus/zod/src/v4/mini/tests/string.test.ts: [REDACTED: secret (jwt)]",
    ])
  }, 120_000)

  test("everyday shell commands are not denied", async () => {
    const commands = [
      "npm test",
      "bun test src",
      "git status && git diff HEAD~1 -- src",
      "git add -A && git commit -m 'change'",
      "git checkout -b feature/x",
      "git stash && git stash pop",
      "ls -la corpus && tree -L 2 corpus",
      "grep -rn TODO corpus | head",
      "rg -n 'export function' corpus",
      "find corpus -name '*.ts' | xargs wc -l",
      "find . -name '*.log' -not -path './node_modules/*'",
      "cat package.json 2>/dev/null | jq .name",
      "rm -rf dist build && mkdir -p dist",
      "cp src/*.ts dist/ && ls dist",
      "mv dist/util.ts dist/helpers.ts",
      "tar czf out.tgz src && rm out.tgz",
      "sed -i 's/x = 1/x = 2/' src/util.ts",
      "python3 -c 'print(1 + 1)'",
      "node -e \"console.log(require('path').join('a', 'b'))\"",
      "cd src && ls && cd ..",
      "echo hello > /tmp/ocb-out.txt && cat /tmp/ocb-out.txt",
      "for f in src/*.ts; do echo $f; done",
      "npx prettier --check src",
      "curl -s https://example.invalid/health || true",
      "docker ps 2>/dev/null || true",
      "export NODE_ENV=test; env | grep NODE_ENV",
      "touch src/new.ts && rm src/new.ts",
      "chmod +x scripts/run.sh 2>/dev/null || true",
      "cat docs/public.md README.md",
      "diff src/app.ts src/util.ts || true",
    ]
    const denials: string[] = []
    for (const command of commands) {
      const v = await guard.before({ tool: "bash", args: { command, description: "x" } })
      if (!v.allowed) denials.push(`${command}: ${v.reason}`)
    }
    expect(denials).toEqual([])
  }, 60_000)
})
