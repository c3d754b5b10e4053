import { describe, expect, test } from "bun:test"
import { ResourceLint } from "../../resource/lint"
import { ResourceLoader } from "../../resource/loader"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"

/**
 * How the link styles of documentation tools and notes apps resolve (real-world tester AJ: Dendron, Foam, mdBook,
 * radiantearth/stac-spec, Docusaurus). Small files written for these tests, each naming the shape it reproduces; the
 * bar is no false error, and a real broken link is still one.
 */
const KB = ".opencode/knowledge-base"

async function indexOf(directory: string) {
  const loader = ResourceLoader.create({ directory, worktree: directory, log: Logger.silent }, { persistCache: false })
  try {
    return await loader.index()
  } finally {
    await loader.dispose()
  }
}

const errors = (report: ResourceLint.Report) =>
  report.problems.filter((p) => p.severity === "error").map((p) => `${p.code} ${p.path} ${p.message}`)

const refsOf = (index: Awaited<ReturnType<typeof indexOf>>, id: string) => index.resources.get(id)?.references ?? []

describe("a folder's README next to a file named after the folder", () => {
  // radiantearth/stac-spec: `item-spec/README.md` (an overview) next to `item-spec/item-spec.md` (the specification);
  // the README took the folder's name, a duplicate-id error, and the specification was left out.
  test("AJ-4 the file named like its folder keeps the id; the README is <folder>-readme; both indexed, links resolve", async () => {
    await using dir = await tmpdir({
      [`${KB}/item-spec/README.md`]: "# STAC Item Specification\n\nOverview; see [the spec](item-spec.md).\n",
      [`${KB}/item-spec/item-spec.md`]: "# STAC Item Spec\n\nThe full specification.\n",
      [`${KB}/catalog/index.md`]: "# Catalogs\n\nSee [[item-spec]] and [[item-spec-readme]].\n",
      // A README whose folder has no such file keeps the folder's name, as before.
      [`${KB}/collection-spec/README.md`]: "# Collections\n",
    })
    const report = await ResourceLint.run(dir.path)
    expect(errors(report)).toEqual([])
    expect(report.resources).toBe(4)
    const index = await indexOf(dir.path)
    expect(index.resources.get("item-spec")?.relativePath).toBe(`${KB}/item-spec/item-spec.md`)
    expect(index.resources.get("item-spec-readme")?.relativePath).toBe(`${KB}/item-spec/README.md`)
    expect(index.resources.get("collection-spec")?.relativePath).toBe(`${KB}/collection-spec/README.md`)
    expect(refsOf(index, "item-spec-readme")).toEqual(["item-spec"])
    expect(refsOf(index, "catalog")).toEqual(["item-spec", "item-spec-readme"])
  })

  test("AJ-4 a README that declares the folder's name as its id is still a duplicate of the file so named", async () => {
    await using dir = await tmpdir({
      [`${KB}/item-spec/README.md`]: "---\nid: item-spec\n---\n# Overview\n",
      [`${KB}/item-spec/item-spec.md`]: "# Spec\n",
    })
    expect(errors(await ResourceLint.run(dir.path))).toEqual([
      `duplicate-id ${KB}/item-spec/item-spec.md duplicate id 'item-spec': ${KB}/item-spec/README.md is used, ${KB}/item-spec/item-spec.md is ignored`,
    ])
  })
})
