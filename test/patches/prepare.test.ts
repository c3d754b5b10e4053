import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { ForkPrepare } from "../../scripts/patches/prepare"
import { tmpdir } from "../../packages/core/test/fixture"

const LOCK = `{
  "lockfileVersion": 1,
  "workspaces": {
    "": {
      "name": "root",
    },
    "packages/app": {
      "name": "@x/app",
      "dependencies": {
        "ghostty-web": "github:anomalyco/ghostty-web#5134",
      },
    },
    "packages/console/app": {
      "name": "@x/console-app",
      "dependencies": {
        "@solidjs/start": "catalog:",
      },
    },
  },
  "catalog": {
    "@solidjs/start": "https://pkg.pr.new/@solidjs/start@dfb2020",
  },
  "packages": {
    "@solidjs/start": ["@solidjs/start@https://pkg.pr.new/@solidjs/start@dfb2020", {}, "sha512-S"],

    "@x/app": ["@x/app@workspace:packages/app"],

    "@x/console-app": ["@x/console-app@workspace:packages/console/app"],

    "ghostty-web": ["ghostty-web@github:anomalyco/ghostty-web#5134", {}, "anomalyco-ghostty-web-5134", "sha512-G"],
  }
}
`
const ROOT_PKG = {
  name: "root",
  packageManager: "bun@1.3.14",
  workspaces: {
    packages: ["packages/*", "packages/console/*"],
    catalog: { "@solidjs/start": "https://pkg.pr.new/@solidjs/start@dfb2020", zod: "4.1.8" },
  },
}

describe("ForkPrepare", () => {
  test("plans and carries out the offline preparation; a second plan finds nothing to do", async () => {
    await using dir = await tmpdir({
      "bun.lock": LOCK,
      "package.json": JSON.stringify(ROOT_PKG, null, 2) + "\n",
      "packages/app/package.json": JSON.stringify({ name: "@x/app", dependencies: { "ghostty-web": "github:x" } }),
      "packages/console/app/package.json": JSON.stringify({ name: "@x/console-app" }),
      "packages/console/app/src/index.ts": "export {}\n",
    })
    const plan = ForkPrepare.plan(dir.path)
    expect(plan).toEqual({
      workspaces: ["packages/console/app"],
      catalog: ["@solidjs/start"],
      replace: [{ file: "packages/app/package.json", name: "ghostty-web", version: "0.4.0" }],
      done: false,
    })
    expect(() => ForkPrepare.apply(dir.path, plan, {})).toThrow("no registry integrity for ghostty-web")
    expect(fs.readFileSync(dir.file("bun.lock"), "utf8")).toBe(LOCK)

    ForkPrepare.apply(dir.path, plan, { "ghostty-web": { version: "0.4.0", integrity: "sha512-0puDB" } })
    expect(fs.existsSync(dir.file("packages/console/app"))).toBe(false)
    const root = JSON.parse(fs.readFileSync(dir.file("package.json"), "utf8"))
    expect(root.workspaces.catalog).toEqual({ zod: "4.1.8" })
    expect(JSON.parse(fs.readFileSync(dir.file("packages/app/package.json"), "utf8")).dependencies).toEqual({
      "ghostty-web": "0.4.0",
    })
    expect(fs.readFileSync(dir.file("bun.lock"), "utf8")).not.toContain("pkg.pr.new")
    expect(ForkPrepare.plan(dir.path).done).toBe(true)
  })

  test("the Bun version OpenCode asks for", () => {
    expect(ForkPrepare.bunMismatch("bun@1.3.14", "1.3.14\n")).toBeUndefined()
    expect(ForkPrepare.bunMismatch("bun@1.3.14", "1.3.10")).toBe("OpenCode asks for Bun 1.3.14; found 1.3.10")
    expect(ForkPrepare.bunMismatch("bun@1.3.14", "")).toBe("OpenCode asks for Bun 1.3.14; found none")
    expect(ForkPrepare.bunMismatch(undefined, "1.3.10")).toBeUndefined()
  })

  test("the embedded grammar table imports each library as a file", () => {
    const text = ForkPrepare.grammarsModule({
      python: { library: "python.so", symbol: "tree_sitter_python", expando: "µ" },
      go: { library: "go.so", symbol: "tree_sitter_go" },
    })
    expect(text).toContain('import lib0 from "./grammars/go.so" with { type: "file" }')
    expect(text).toContain('"python": { library: lib1, symbol: "tree_sitter_python", expando: "µ" },')
    expect(text).toContain('"go": { library: lib0, symbol: "tree_sitter_go" },')
  })

  test("bun test summaries", () => {
    const out = [
      "(pass) a > one [1.00ms]",
      "(fail) a > two [3.00ms]",
      "(fail) b > three",
      "(fail) a > two [3.00ms]",
      "",
      " 10 pass",
      " 2 skip",
      " 1 todo",
      " 2 fail",
      "Ran 15 tests across 2 files.",
    ].join("\n")
    expect(ForkPrepare.summary(out)).toEqual({ pass: 10, fail: 2, skip: 2, todo: 1, failing: ["a > two", "b > three"] })
  })

  test("each failing test's file, for running it again alone", () => {
    const out = [
      "test/a.test.ts:",
      "(pass) a > one [1.00ms]",
      "(fail) a > two [3.00ms]",
      "",
      "test/tool/b.test.tsx:",
      "(fail) b > three",
      "(fail) a > two [3.00ms]",
    ].join("\n")
    expect([...ForkPrepare.failingFiles(out)]).toEqual([
      ["a > two", "test/a.test.ts"],
      ["b > three", "test/tool/b.test.tsx"],
    ])
    expect(ForkPrepare.UPSTREAM_FAILING).toHaveLength(14)
  })
})
