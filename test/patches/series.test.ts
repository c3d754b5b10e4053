import { describe, expect, test } from "bun:test"
import path from "path"
import { Series } from "../../scripts/patches/series"
import { tmpdir } from "../../packages/core/test/fixture"

const ROOT = path.resolve(import.meta.dir, "../..")
const PIN = JSON.stringify({
  repository: "https://github.com/anomalyco/opencode",
  version: "1.18.3",
  tag: "v1.18.3",
  commit: "127bdb30784d508cc556c71a0f32b508a3061517",
  files: { "a.txt": "814f4a422927b82f5f8a43f8fab6d3839e3983f2" },
})
const PATCH = `What: Adds a line.
Why: Because the test needs one.
Upstream: nothing (fixture)
---
diff --git a/a.txt b/a.txt
index 1111111..2222222 100644
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,3 @@
 one
+inserted
 two
`

describe("the project's patch series (static validator)", () => {
  const report = Series.validate(path.join(ROOT, "patches"))

  test("pin, series, every patch present, listed once, with a header, parsing as a diff; glue patches current", () => {
    expect(report.errors).toEqual([])
    expect(report.pin).toMatchObject({ version: "1.18.3", commit: "127bdb30784d508cc556c71a0f32b508a3061517" })
    expect(report.patches.length).toBeGreaterThan(0)
    // Every upstream file changed has a blob id; glue files each have their patch.
    expect(Object.keys(report.pin!.files).length).toBeGreaterThan(0)
    expect(Series.glueFiles(path.join(ROOT, "patches"))).toContain("src/builtins/builtins.ts")
  })

  test("patches stay thin wiring: small, and no logic-bearing upstream file is added outside the builtins glue", () => {
    for (const p of report.patches) {
      expect(p.lines).toBeLessThan(400)
      for (const f of p.files.filter((f) => f.kind === "add"))
        expect(f.path).toMatch(/^packages\/opencode\/(src\/builtins\/|src\/cli\/cmd\/|test\/builtins\/)/)
    }
  })
})

describe("Series.validate catches", () => {
  async function check(files: Record<string, string>) {
    await using dir = await tmpdir(files)
    return Series.validate(dir.path).errors
  }

  test("a valid minimal series passes", async () => {
    expect(
      await check({ "UPSTREAM.json": PIN, series: "# order\nfix-add-line.patch\n", "fix-add-line.patch": PATCH }),
    ).toEqual([])
  })

  test("missing, unlisted, duplicate and badly named entries", async () => {
    const errors = await check({
      "UPSTREAM.json": PIN,
      series: "fix-add-line.patch\nfix-add-line.patch\nmissing-one-patch.patch\nBad_Name.patch\n",
      "fix-add-line.patch": PATCH,
      "Bad_Name.patch": PATCH,
      "extra-not-listed.patch": PATCH,
    })
    expect(errors).toEqual([
      "series: 'fix-add-line.patch' is listed twice",
      "series: 'missing-one-patch.patch' does not exist",
      "series: 'Bad_Name.patch' is not named <area>-<verb>-<object>.patch",
      "'extra-not-listed.patch' is not listed in series",
    ])
  })

  test("a missing header field, wrong hunk counts, mismatched file names, no diff at all", async () => {
    const cases: [string, string][] = [
      [PATCH.replace("Why: Because the test needs one.\n", ""), "header field 'Why:' is missing"],
      [PATCH.replace("@@ -1,2 +1,3 @@", "@@ -1,2 +1,4 @@"), "declares -2 +4 lines but has -2 +3"],
      [PATCH.replace("+++ b/a.txt", "+++ b/other.txt"), "does not match the diff header"],
      ["What: x\nWhy: y\nUpstream: z\n", "no 'diff --git' section"],
      [PATCH.replace("@@ -1,2 +1,3 @@", "@@ nonsense @@"), "malformed hunk header"],
      [PATCH.replace("What: Adds a line.", "Random prose line"), "unexpected header line"],
    ]
    for (const [text, message] of cases) {
      const errors = await check({ "UPSTREAM.json": PIN, series: "fix-add-line.patch", "fix-add-line.patch": text })
      expect(errors.join("\n")).toContain(message)
    }
  })

  test("a pin that misses a changed file or names one no patch changes; a header pointing outside", async () => {
    const pin = JSON.parse(PIN)
    const errors = await check({
      "UPSTREAM.json": JSON.stringify({ ...pin, files: { "b.txt": pin.files["a.txt"] } }),
      series: "fix-add-line.patch",
      "fix-add-line.patch": PATCH,
    })
    expect(errors).toEqual([
      "UPSTREAM.json: no blob id for a.txt, which the series changes",
      "UPSTREAM.json: b.txt is pinned but no patch changes it",
    ])
    for (const why of ["Why: US-013: audit a plugin.", "Why: see FR-16.", "Why: per the port map."]) {
      const text = PATCH.replace("Why: Because the test needs one.", why)
      const found = await check({ "UPSTREAM.json": PIN, series: "fix-add-line.patch", "fix-add-line.patch": text })
      expect(found.join("\n")).toContain("the header points outside the repository")
    }
  })

  test("a glue patch must be its file's diff; npm run glue's regeneration keeps the header", async () => {
    const glue = "export const glue = 1\n"
    const header = "What: Adds the glue.\nWhy: It connects.\nUpstream: none\n---\n"
    const good = header + Series.glueDiff("src/builtins/glue.ts", glue)
    expect(good).toContain("+++ b/packages/opencode/src/builtins/glue.ts\n@@ -0,0 +1 @@\n+export const glue = 1\n")
    const files = {
      "UPSTREAM.json": PIN,
      series: "fix-add-line.patch\nglue-add-module.patch",
      "fix-add-line.patch": PATCH,
    }
    expect(await check({ ...files, "glue-add-module.patch": good, "glue/src/builtins/glue.ts": glue })).toEqual([])
    const stale = await check({ ...files, "glue-add-module.patch": good, "glue/src/builtins/glue.ts": "changed\n" })
    expect(stale).toEqual(["glue-add-module.patch does not match glue/src/builtins/glue.ts: run npm run glue"])
    expect(Series.regenerate(good, "src/builtins/glue.ts", "changed\n")).toBe(
      header + Series.glueDiff("src/builtins/glue.ts", "changed\n"),
    )
    const orphan = await check({
      ...files,
      "glue-add-module.patch": good,
      "glue/src/builtins/glue.ts": glue,
      "glue/x.ts": "1\n",
    })
    expect(orphan).toEqual(["glue/x.ts: 0 patches add packages/opencode/x.ts (expected exactly one)"])
    expect(Series.blobId("hello\n")).toBe("ce013625030ba8dba906f756967f9e9ca394464a")
  })

  test("a malformed pin file", async () => {
    const errors = await check({
      "UPSTREAM.json": JSON.stringify({ repository: "ftp://x", version: "one", commit: "abc", tag: "" }),
      series: "",
    })
    expect(errors[0]).toContain("repository must be an https URL")
    expect(errors[0]).toContain("version must look like 1.2.15")
    expect(errors[0]).toContain("commit must be a full 40-character hex sha")
    expect(errors[0]).toContain("files must map every upstream file the series changes to its git blob id")
    expect((await check({ "UPSTREAM.json": "{", series: "" }))[0]).toContain("UPSTREAM.json")
  })
})
