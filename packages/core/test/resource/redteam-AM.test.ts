import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { ResourceIndex } from "../../resource/indexer"
import { ResourceLint } from "../../resource/lint"
import { ResourceLoader } from "../../resource/loader"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"

/**
 * Red team AM-5: a Dendron wildcard link (`![[*]]`) names every note it matches. Each match was added with a scan of
 * the list of references made so far, and every note scanned all notes again: 2,000 one-line notes each holding
 * `![[*]]` took 14 s to lint (cubic). Now the matches of a pattern are made once, kept in a set per resource, and one
 * wildcard is followed to at most `ResourceIndex.WILDCARD_LIMIT` notes, with a note when more match. No timing
 * assertion: the bound is on the edges the index holds (linear in the notes), and the test has a timeout.
 */
const KB = ".opencode/knowledge-base"

async function notes(root: string, count: number, body: (i: number) => string) {
  fs.mkdirSync(path.join(root, KB), { recursive: true })
  for (let i = 0; i < count; i++)
    fs.writeFileSync(path.join(root, KB, `n${i}.md`), `---\ntitle: N${i}\ndescription: d\n---\n${body(i)}\n`)
}

async function indexOf(directory: string) {
  const loader = ResourceLoader.create({ directory, worktree: directory, log: Logger.silent }, { persistCache: false })
  try {
    return await loader.index()
  } finally {
    await loader.dispose()
  }
}

describe("AM-5 wildcard links and the size of the index", () => {
  test("AM5 2,000 notes each holding ![[*]]: each follows at most the limit, with a note; the edges are linear", async () => {
    await using dir = await tmpdir()
    const count = 2000
    await notes(dir.path, count, () => "![[*]]")
    const index = await indexOf(dir.path)
    expect(index.resources.size).toBe(count)
    let edges = 0
    for (const [id, meta] of index.resources) {
      expect(meta.references.length).toBe(ResourceIndex.WILDCARD_LIMIT)
      expect(meta.references).not.toContain(id)
      edges += meta.references.length
      expect(index.notIndexed.get(id)?.map((r) => r.ref)).toEqual(["*"])
    }
    expect(edges).toBe(count * ResourceIndex.WILDCARD_LIMIT)
    expect(index.notIndexed.get("n0")?.[0].reason).toContain(
      `matches more than ${ResourceIndex.WILDCARD_LIMIT} notes; only the first ${ResourceIndex.WILDCARD_LIMIT}`,
    )
    const report = await ResourceLint.run(dir.path)
    expect(report.problems.filter((p) => p.severity === "error")).toEqual([])
  }, 60_000)

  test("AM5 under the limit a wildcard still names every other note it matches, and no note is added", async () => {
    await using dir = await tmpdir()
    const count = 50
    await notes(dir.path, count, (i) => (i === 0 ? "![[*]] ![[n1*]] ![[*]]" : "body"))
    const index = await indexOf(dir.path)
    const refs = index.resources.get("n0")!.references
    // Each other note once, though three wildcards name it.
    expect([...refs].sort()).toEqual(Array.from({ length: count - 1 }, (_, i) => `n${i + 1}`).sort())
    expect(index.notIndexed.get("n0")).toBeUndefined()
  }, 60_000)
})
