import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { PatchApply } from "../../scripts/patches/apply"
import { tmpdir } from "../../packages/core/test/fixture"

const PIN = JSON.stringify({
  repository: "https://github.com/anomalyco/opencode",
  version: "1.2.15",
  tag: "v1.2.15",
  commit: "799b2623cbb1c0f19e045d87c2c8593e83678bc0",
})
const header = (what: string) => `What: ${what}\nWhy: fixture\nUpstream: none\n---\n`
const FIRST = `${header("first")}diff --git a/src/a.ts b/src/a.ts
--- a/src/a.ts
+++ b/src/a.ts
@@ -1,3 +1,4 @@
 export const a = 1
+export const patched = true
 export const b = 2
 export const c = 3
`
const SECOND = `${header("second, on top of the first, plus a new file")}diff --git a/src/a.ts b/src/a.ts
--- a/src/a.ts
+++ b/src/a.ts
@@ -1,4 +1,5 @@
 export const a = 1
 export const patched = true
+export const again = true
 export const b = 2
 export const c = 3
diff --git a/src/builtins/glue.ts b/src/builtins/glue.ts
new file mode 100644
--- /dev/null
+++ b/src/builtins/glue.ts
@@ -0,0 +1 @@
+export const glue = 1
`
const BROKEN = `${header("context that is not there")}diff --git a/src/b.ts b/src/b.ts
--- a/src/b.ts
+++ b/src/b.ts
@@ -1,2 +1,3 @@
 not the content
+x
 of b
`

async function setup(patches: Record<string, string>, version = "1.2.15") {
  const checkout = await tmpdir({
    "packages/opencode/package.json": JSON.stringify({ name: "opencode", version }),
    "src/a.ts": "export const a = 1\nexport const b = 2\nexport const c = 3\n",
    "src/b.ts": "export const b = 1\nexport const c = 2\n",
  })
  const series = await tmpdir({ "UPSTREAM.json": PIN, series: Object.keys(patches).join("\n"), ...patches })
  const core = await tmpdir({
    "package.json": JSON.stringify({
      name: "@opencode-builtins/core",
      dependencies: { "@opencode-ai/plugin": "1.2.15", zod: "4.1.8" },
    }),
    "index.ts": "export {}\n",
    "resource/x.ts": "export const x = 1\n",
    "test/ignored.test.ts": "",
  })
  const run = (check = false) =>
    PatchApply.run({ checkout: checkout.path, patches: series.path, core: core.path, check })
  const read = (rel: string) => fs.readFileSync(path.join(checkout.path, rel), "utf8")
  return {
    checkout,
    run,
    read,
    [Symbol.asyncDispose]: async () => {
      await checkout[Symbol.asyncDispose]()
      await series[Symbol.asyncDispose]()
      await core[Symbol.asyncDispose]()
    },
  }
}

describe("npm run apply", () => {
  test("applies in order, vendors core, and a second run reports 'already applied'", async () => {
    await using s = await setup({ "fix-first-change.patch": FIRST, "fix-second-change.patch": SECOND })
    expect(await s.run(true)).toMatchObject({ status: "would-apply" })
    expect(s.read("src/a.ts")).not.toContain("patched")
    expect(fs.existsSync(path.join(s.checkout.path, PatchApply.VENDOR_DIR))).toBe(false)

    expect(await s.run()).toMatchObject({
      status: "applied",
      patches: ["fix-first-change.patch", "fix-second-change.patch"],
    })
    expect(s.read("src/a.ts")).toContain("export const patched = true\nexport const again = true")
    expect(s.read("src/builtins/glue.ts")).toBe("export const glue = 1\n")
    const vendored = path.join(s.checkout.path, PatchApply.VENDOR_DIR)
    expect(fs.existsSync(path.join(vendored, "resource/x.ts"))).toBe(true)
    expect(fs.existsSync(path.join(vendored, "test"))).toBe(false)
    expect(JSON.parse(fs.readFileSync(path.join(vendored, "package.json"), "utf8")).dependencies).toEqual({
      "@opencode-ai/plugin": "workspace:*",
      zod: "4.1.8",
    })

    // A refresh replaces the sources but keeps what `bun install` put in the vendored package.
    fs.mkdirSync(path.join(vendored, "node_modules/dep"), { recursive: true })
    fs.writeFileSync(path.join(vendored, "stale.ts"), "removed from core since")
    const before = s.read("src/a.ts")
    expect(await s.run()).toMatchObject({ status: "already-applied" })
    expect(fs.existsSync(path.join(vendored, "node_modules/dep"))).toBe(true)
    expect(fs.existsSync(path.join(vendored, "stale.ts"))).toBe(false)
    expect(fs.existsSync(path.join(vendored, "resource/x.ts"))).toBe(true)
    expect(await s.run(true)).toMatchObject({ status: "already-applied" })
    expect(s.read("src/a.ts")).toBe(before)
  })

  test("a patch that does not apply is named with git's hunk message, and nothing changes", async () => {
    await using s = await setup({ "fix-first-change.patch": FIRST, "fix-broken-context.patch": BROKEN })
    const error = await s.run().catch((e) => e)
    expect(error).toBeInstanceOf(PatchApply.ApplyError)
    expect(error.patch).toBe("fix-broken-context.patch")
    expect(error.message).toContain("fix-broken-context.patch does not apply")
    expect(error.message).toContain("src/b.ts")
    expect(error.message).toContain("nothing was changed")
    expect(s.read("src/a.ts")).not.toContain("patched")
    expect(fs.existsSync(path.join(s.checkout.path, PatchApply.VENDOR_DIR))).toBe(false)
  })

  test("another OpenCode version, or not a checkout at all, is refused before anything happens", async () => {
    await using s = await setup({ "fix-first-change.patch": FIRST }, "1.3.0")
    await expect(s.run()).rejects.toThrow("is OpenCode 1.3.0; this series is for 1.2.15 (v1.2.15)")
    await using empty = await tmpdir()
    await expect(
      PatchApply.run({ checkout: empty.path, patches: "/nonexistent", core: "/nonexistent" }),
    ).rejects.toThrow()
  })

  test("an invalid series is refused with the validator's findings", async () => {
    await using s = await setup({ "fix-first-change.patch": FIRST.replace("Why: fixture\n", "") })
    await expect(s.run()).rejects.toThrow("header field 'Why:' is missing")
  })
})
