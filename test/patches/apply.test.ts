import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { PatchApply } from "../../scripts/patches/apply"
import { Series } from "../../scripts/patches/series"
import { tmpdir } from "../../packages/core/test/fixture"

const A = "export const a = 1\nexport const b = 2\nexport const c = 3\n"
const B = "export const b = 1\nexport const c = 2\n"
const pin = (files: Record<string, string>) =>
  JSON.stringify({
    repository: "https://github.com/anomalyco/opencode",
    version: "1.18.3",
    tag: "v1.18.3",
    commit: "127bdb30784d508cc556c71a0f32b508a3061517",
    files,
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
const B_PATCH = `${header("b")}diff --git a/src/b.ts b/src/b.ts
--- a/src/b.ts
+++ b/src/b.ts
@@ -1,2 +1,3 @@
 export const b = 1
+export const patchedB = true
 export const c = 2
`
const BROKEN = `${header("context that is not there")}diff --git a/src/b.ts b/src/b.ts
--- a/src/b.ts
+++ b/src/b.ts
@@ -1,2 +1,3 @@
 not the content
+x
 of b
`

async function setup(patches: Record<string, string>, version = "1.18.3") {
  const checkout = await tmpdir({
    "packages/opencode/package.json": JSON.stringify({ name: "opencode", version }),
    "packages/opencode/src/builtins/.keep": "",
    "src/a.ts": A,
    "src/b.ts": B,
  })
  const files: Record<string, string> = {}
  for (const text of Object.values(patches)) {
    if (text.includes("a/src/a.ts")) files["src/a.ts"] = Series.blobId(A)
    if (text.includes("a/src/b.ts")) files["src/b.ts"] = Series.blobId(B)
  }
  const series = await tmpdir({ "UPSTREAM.json": pin(files), series: Object.keys(patches).join("\n"), ...patches })
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
    // The grammar table the glue imports: empty until a fork build fills it.
    expect(s.read(PatchApply.GRAMMARS)).toBe(PatchApply.GRAMMARS_EMPTY)
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
    // A table a fork build wrote survives a refresh.
    fs.writeFileSync(path.join(s.checkout.path, PatchApply.GRAMMARS), "export default { built: true }\n")
    expect(await s.run()).toMatchObject({ status: "already-applied" })
    expect(s.read(PatchApply.GRAMMARS)).toBe("export default { built: true }\n")
  })

  test("a file the series changes that is not the pinned release's is named, and nothing changes", async () => {
    await using s = await setup({ "fix-first-change.patch": FIRST, "fix-second-change.patch": SECOND })
    fs.writeFileSync(path.join(s.checkout.path, "src/a.ts"), A.replace("c = 3", "c = 4"))
    const error = await s.run(true).catch((e) => e)
    expect(error).toBeInstanceOf(PatchApply.ApplyError)
    expect(error.message).toContain("files the series changes are not those of v1.18.3 (nothing was changed)")
    expect(error.message).toContain(
      `src/a.ts: blob ${Series.blobId(A.replace("c = 3", "c = 4"))}, v1.18.3 has ${Series.blobId(A)}`,
    )
    await expect(s.run()).rejects.toThrow("not those of v1.18.3")
    expect(fs.existsSync(path.join(s.checkout.path, PatchApply.VENDOR_DIR))).toBe(false)
    // Even a change the patches would apply over (outside their context) is refused.
    fs.writeFileSync(path.join(s.checkout.path, "src/a.ts"), A + "// local\n")
    await expect(s.run(true)).rejects.toThrow("not those of v1.18.3")
    fs.rmSync(path.join(s.checkout.path, "src/a.ts"))
    await expect(s.run(true)).rejects.toThrow("src/a.ts: missing")
  })

  test("an applied checkout with a local change beside the patches names only that file", async () => {
    await using s = await setup({ "fix-first-change.patch": FIRST, "fix-b-change.patch": B_PATCH })
    expect(await s.run()).toMatchObject({ status: "applied" })
    fs.appendFileSync(path.join(s.checkout.path, "src/b.ts"), "// local\n")
    const error = await s.run(true).catch((e) => e)
    expect(error.message).toContain(
      "the series is applied, but files it changes differ from v1.18.3 besides the patches",
    )
    expect(error.message).toContain("src/b.ts: blob")
    expect(error.message).not.toContain("src/a.ts")
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
    await using s = await setup({ "fix-first-change.patch": FIRST }, "1.2.15")
    await expect(s.run()).rejects.toThrow("is OpenCode 1.2.15; this series is for 1.18.3 (v1.18.3)")
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
