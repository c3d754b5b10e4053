import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { ResourceBuild } from "../../resource/build"
import { ResourceCache } from "../../resource/cache"
import { ResourceIndex } from "../../resource/indexer"
import { ResourceLoader } from "../../resource/loader"
import { ResourceProject } from "../../resource/project"
import { Resource } from "../../resource/schema"
import { Logger } from "../../util/log"
import { md, tmpdir } from "../fixture"

const FIXTURE = path.join(import.meta.dir, "fixtures", "real-shapes")
const config = Resource.Config.parse({})

/** Every folder below `root` (and `root`) dated an hour back: stamps well outside the racy window of a listing. */
async function age(root: string) {
  const past = new Date(Date.now() - 3_600_000)
  const folders = [root]
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true }))
    if (entry.isDirectory()) folders.push(path.join(entry.parentPath, entry.name))
  for (const folder of folders.reverse()) await fs.utimes(folder, past, past)
}

const loaderOf = (dir: string, cachePath: string) =>
  ResourceLoader.create(
    { directory: dir, worktree: dir, log: Logger.silent },
    { persistCache: true, indexCachePath: cachePath },
  )

/**
 * The index without the build time, for comparing two builds of the same files. Its resources copied as a caller reads
 * them: a restored index's map holds each entry's position until its first read, and `toEqual` reads maps directly.
 */
const plain = (index: ResourceIndex.Index) => ({ ...index, resources: new Map(index.resources), generatedAt: 0 })

describe("warm start without a scan", () => {
  test("a snapshot hydrates to exactly the index assemble made (duplicates, fallback ids, dangling, agents)", async () => {
    await using dir = await tmpdir()
    await fs.cp(FIXTURE, dir.path, { recursive: true })
    const project = ResourceProject.resolve(dir.path, dir.path)
    const cold = await ResourceBuild.run(project, config)
    const data = JSON.parse(JSON.stringify(cold.cache)) as ResourceCache.Data
    const again = ResourceIndex.hydrate(project, data.snapshot!)
    expect(plain(again!)).toEqual(plain(cold.index))
    expect(again!.resources.get("specif-1.1")!.relativePath).toBe(".opencode/schema/specif-1.1.json")
  })

  test("folders that kept their stamps: the index comes from the cache, equal to a cold build, no file read", async () => {
    await using dir = await tmpdir()
    await fs.cp(FIXTURE, dir.path, { recursive: true })
    await age(dir.path)
    const cachePath = path.join(dir.path, "..", `${path.basename(dir.path)}-cache.json`)
    try {
      const first = loaderOf(dir.path, cachePath)
      const cold = await first.index()
      await first.dispose()
      const second = loaderOf(dir.path, cachePath)
      const warm = await second.index()
      expect(second.stats.lastBuild).toMatchObject({ parsed: 0, restored: true })
      expect(plain(warm)).toEqual(plain(cold))
      // Unchanged files: the background check finds nothing and the next use keeps the index.
      await second.flush()
      expect(await second.index()).toBe(warm)
      await second.dispose()
    } finally {
      await fs.rm(cachePath, { force: true })
    }
  })

  test("a file edited in place (its folder keeps its stamp) is found by the background check; the next use has it", async () => {
    await using dir = await tmpdir({ ".opencode/task/ship.md": md({ title: "Ship", tags: ["release"] }) })
    await age(dir.path)
    const cachePath = path.join(dir.path, "..", `${path.basename(dir.path)}-cache.json`)
    try {
      const first = loaderOf(dir.path, cachePath)
      await first.index()
      await first.dispose()
      const folder = (await fs.stat(dir.file(".opencode/task"))).mtimeMs
      await fs.writeFile(dir.file(".opencode/task/ship.md"), md({ title: "Ship it", tags: ["release", "edited"] }))
      await fs.utimes(dir.file(".opencode/task/ship.md"), new Date(), new Date(Date.now() + 5_000))
      expect((await fs.stat(dir.file(".opencode/task"))).mtimeMs).toBe(folder)
      const second = loaderOf(dir.path, cachePath)
      // The first answer comes from the cache (what the check is for) …
      expect((await second.index()).resources.get("ship")!.name).toBe("Ship")
      expect(second.stats.lastBuild?.restored).toBe(true)
      // … and once the check has run, the edit is there.
      await second.flush()
      expect((await second.index()).resources.get("ship")!.name).toBe("Ship it")
      expect(second.stats.lastBuild).toMatchObject({ parsed: 1 })
      await second.dispose()
    } finally {
      await fs.rm(cachePath, { force: true })
    }
  })

  test("a folder changed since (a file added) or changed within 2 s of its listing is scanned, not restored", async () => {
    await using dir = await tmpdir({ ".opencode/task/ship.md": md({ title: "Ship" }) })
    await age(dir.path)
    const cachePath = path.join(dir.path, "..", `${path.basename(dir.path)}-cache.json`)
    try {
      const first = loaderOf(dir.path, cachePath)
      await first.index()
      await first.dispose()
      await fs.writeFile(dir.file(".opencode/task/new.md"), md({ title: "New" }))
      const second = loaderOf(dir.path, cachePath)
      expect([...(await second.index()).resources.keys()].sort()).toEqual(["new", "ship"])
      expect(second.stats.lastBuild).toMatchObject({ parsed: 1 })
      expect(second.stats.lastBuild?.restored).toBeUndefined()
      await second.dispose()
      // That scan listed .opencode/task right after its change: its stamp is racy, so the next start scans again
      // (reading nothing) rather than trust it.
      const third = loaderOf(dir.path, cachePath)
      await third.index()
      expect(third.stats.lastBuild?.restored).toBeUndefined()
      expect(third.stats.lastBuild).toMatchObject({ parsed: 0 })
      await third.dispose()
      const data = (await ResourceCache.read(cachePath, ResourceProject.resolve(dir.path, dir.path).root))!
      expect(data.scan!.dirs.some(([, stamp]) => stamp !== null && stamp > data.scan!.listedAt - 2_000)).toBe(true)
    } finally {
      await fs.rm(cachePath, { force: true })
    }
  })

  test("OpenCode started in another folder of the project shares the cache file but never restores its index", async () => {
    await using dir = await tmpdir({
      ".opencode/task/root.md": md({ title: "Root" }),
      "packages/app/.opencode/task/app.md": md({ title: "App" }),
    })
    await age(dir.path)
    const cachePath = path.join(dir.path, "..", `${path.basename(dir.path)}-cache.json`)
    const at = (directory: string) =>
      ResourceLoader.create(
        { directory, worktree: dir.path, log: Logger.silent },
        { persistCache: true, indexCachePath: cachePath },
      )
    try {
      const root = at(dir.path)
      expect([...(await root.index()).resources.keys()]).toEqual(["root"])
      await root.dispose()
      const app = at(dir.file("packages/app"))
      expect([...(await app.index()).resources.keys()].sort()).toEqual(["app", "root"])
      expect(app.stats.lastBuild?.restored).toBeUndefined()
      await app.dispose()
    } finally {
      await fs.rm(cachePath, { force: true })
    }
  })

  test("a cache written under a security check is never restored, so files it withheld come back", async () => {
    await using dir = await tmpdir({
      ".opencode/task/ship.md": md({ title: "Ship" }),
      ".opencode/task/secret.md": md({ title: "Secret" }),
    })
    await age(dir.path)
    const cachePath = path.join(dir.path, "..", `${path.basename(dir.path)}-cache.json`)
    try {
      const guarded = ResourceLoader.create(
        {
          directory: dir.path,
          worktree: dir.path,
          log: Logger.silent,
          access: async (p) => (p.endsWith("secret.md") ? "protected" : undefined),
        },
        { persistCache: true, indexCachePath: cachePath },
      )
      expect([...(await guarded.index()).resources.keys()]).toEqual(["ship"])
      await guarded.dispose()
      const open = loaderOf(dir.path, cachePath)
      expect([...(await open.index()).resources.keys()].sort()).toEqual(["secret", "ship"])
      expect(open.stats.lastBuild?.restored).toBeUndefined()
      await open.dispose()
      // That start rewrote the cache with a snapshot: the next one restores it.
      const next = loaderOf(dir.path, cachePath)
      expect([...(await next.index()).resources.keys()].sort()).toEqual(["secret", "ship"])
      expect(next.stats.lastBuild?.restored).toBe(true)
      await next.dispose()
    } finally {
      await fs.rm(cachePath, { force: true })
    }
  })

  test("with a security check in play the cache is never restored (verdicts need the scan)", async () => {
    await using dir = await tmpdir({ ".opencode/task/ship.md": md({ title: "Ship" }) })
    await age(dir.path)
    const cachePath = path.join(dir.path, "..", `${path.basename(dir.path)}-cache.json`)
    try {
      const first = loaderOf(dir.path, cachePath)
      await first.index()
      await first.dispose()
      const guarded = ResourceLoader.create(
        { directory: dir.path, worktree: dir.path, log: Logger.silent, access: async () => undefined },
        { persistCache: true, indexCachePath: cachePath },
      )
      await guarded.index()
      expect(guarded.stats.lastBuild?.restored).toBeUndefined()
      await guarded.dispose()
    } finally {
      await fs.rm(cachePath, { force: true })
    }
  })
  test("a corrupt or foreign cache file is ignored: the index equals a cold build, and the file is rewritten", async () => {
    await using dir = await tmpdir()
    await fs.cp(FIXTURE, dir.path, { recursive: true })
    await age(dir.path)
    const cachePath = path.join(dir.path, "..", `${path.basename(dir.path)}-cache.json`)
    try {
      const cold = ResourceLoader.create({ directory: dir.path, worktree: dir.path, log: Logger.silent }, {})
      const expected = plain(await cold.index())
      await cold.dispose()
      const writer = loaderOf(dir.path, cachePath)
      await writer.index()
      await writer.dispose()
      const raw = await fs.readFile(cachePath, "utf8")
      const good = JSON.parse(raw)
      // The file ends with its layout: `,"layout":"<hash> <offsets>"}`, the hash over every byte before it.
      const layoutAt = raw.lastIndexOf(',"layout":"')
      const [, offsets] = /^,"layout":"[0-9a-f]{16} ([0-9 ]+)"\}$/.exec(raw.slice(layoutAt))!
      const resigned = (body: string) =>
        `${body},"layout":"${Bun.hash.wyhash(Buffer.from(body)).toString(16).padStart(16, "0")} ${offsets}"}`
      const body = raw.slice(0, layoutAt)
      const at = body.indexOf('"name":"') + 8
      const flip = (i: number) =>
        body.slice(0, i) + (body[i] === "x" ? "y" : "x") + body.slice(i + 1) + raw.slice(layoutAt)
      // Inside the sections read at first use, after the start: each resource's metadata, the search text.
      const resources = body.indexOf(',"resources":[')
      const lastName = body.lastIndexOf('"name":"', body.indexOf(',"text":')) + 8
      const text = body.indexOf(',"text":"') + 9
      expect([resources, lastName, text, body.indexOf(',"snapshot":{')].every((i) => i > 0)).toBe(true)
      expect(resources < lastName).toBe(true)
      const broken: [string, string][] = [
        // One letter of a resource's name changed, length kept: the hash no longer matches.
        ["edited in place", flip(at)],
        ["a byte of the last resource's metadata changed", flip(lastName)],
        ["a byte of the search text changed", flip(text)],
        ["cut short inside the snapshot section", raw.slice(0, body.indexOf(',"snapshot":{') + 100)],
        ["cut short inside the resources section", raw.slice(0, resources + 200)],
        ["cut short by one byte", raw.slice(0, -1)],
        // A valid layout and hash over sections that do not hold what they should.
        ["resigned, snapshot without its resources", resigned(body.replace('"resources":[', '"resourcex":['))],
        // Offsets that no longer point at the sections (text inserted before them): they hold no JSON.
        ["resigned, sections moved", resigned(body.replace('"snapshot":{', '"snapshot":{"x":1,'))],
        ["truncated", JSON.stringify(good).slice(0, 5_000)],
        ["null", "null"],
        ["binary", "\u0000\u0001garbage"],
        ["files not an object", JSON.stringify({ ...good, files: 7 })],
        [
          "snapshot positions out of range",
          JSON.stringify({ ...good, snapshot: { ...good.snapshot, resources: [[9999, null, [], []]] } }),
        ],
        ["snapshot of the wrong shape", JSON.stringify({ ...good, snapshot: { resources: 3 } })],
        ["entry of the wrong shape", JSON.stringify({ ...good, files: { ...good.files, "x.md": { result: 5 } } })],
        ["another project", JSON.stringify({ ...good, projectRoot: "/elsewhere" })],
      ]
      for (const [what, text] of broken) {
        await fs.writeFile(cachePath, text)
        const loader = loaderOf(dir.path, cachePath)
        const index = await loader.index().catch((error) => error as Error)
        expect([what, index instanceof Error ? index.message : "ok"]).toEqual([what, "ok"])
        expect(plain(index as ResourceIndex.Index)).toEqual(expected)
        expect(loader.stats.lastBuild?.restored).toBeUndefined()
        await loader.dispose()
        // Rewritten: the next start restores from it.
        const next = loaderOf(dir.path, cachePath)
        expect(plain(await next.index())).toEqual(expected)
        expect([what, next.stats.lastBuild?.restored]).toEqual([what, true])
        await next.dispose()
      }
    } finally {
      await fs.rm(cachePath, { force: true })
    }
  }, 60_000)

  test("an entry read at its first use that does not fit (a re-signed file) gives no answer; the index is rebuilt", async () => {
    await using dir = await tmpdir()
    await fs.cp(FIXTURE, dir.path, { recursive: true })
    await age(dir.path)
    const cachePath = path.join(dir.path, "..", `${path.basename(dir.path)}-cache.json`)
    try {
      const cold = ResourceLoader.create({ directory: dir.path, worktree: dir.path, log: Logger.silent }, {})
      const expected = plain(await cold.index())
      const answer = await cold.query({ query: "specif" })
      expect(answer.total).toBeGreaterThan(0)
      await cold.dispose()
      const writer = loaderOf(dir.path, cachePath)
      await writer.index()
      await writer.dispose()
      const raw = await fs.readFile(cachePath, "utf8")
      const layoutAt = raw.lastIndexOf(',"layout":"')
      const [, offsets] = /^,"layout":"[0-9a-f]{16} ([0-9 ]+)"\}$/.exec(raw.slice(layoutAt))!
      const body = raw.slice(0, layoutAt)
      // Every entry's "name" renamed "nome" (same length, so every offset still holds) and the file signed again:
      // the hash matches, the entries do not have a resource's shape.
      const start = body.indexOf(',"resources":[')
      const end = body.indexOf(',"text":')
      const edited = body.slice(0, start) + body.slice(start, end).replaceAll('"name":', '"nome":') + body.slice(end)
      await fs.writeFile(
        cachePath,
        `${edited},"layout":"${Bun.hash.wyhash(Buffer.from(edited)).toString(16).padStart(16, "0")} ${offsets}"}`,
      )
      const loader = loaderOf(dir.path, cachePath)
      const index = await loader.index()
      expect(loader.stats.lastBuild?.restored).toBe(true)
      // Its first read of an entry fails, so the query is answered by the index built again, as a cold build would.
      expect(ResourceIndex.damaged(index)).toBe(false)
      expect(await loader.query({ query: "specif" })).toEqual(answer)
      expect(ResourceIndex.damaged(index)).toBe(true)
      expect(() => [...index.resources.values()]).toThrow(ResourceIndex.DamagedError)
      expect(plain(await loader.index())).toEqual(expected)
      expect(loader.stats.lastBuild?.restored).toBeUndefined()
      await loader.dispose()
      // The cache file was rewritten: the next start restores the right index from it.
      const next = loaderOf(dir.path, cachePath)
      expect(plain(await next.index())).toEqual(expected)
      expect(next.stats.lastBuild?.restored).toBe(true)
      await next.dispose()
    } finally {
      await fs.rm(cachePath, { force: true })
    }
  })

  test("a restored index reads each entry at its first use: the same objects and order whichever way they are reached", async () => {
    await using dir = await tmpdir()
    await fs.cp(FIXTURE, dir.path, { recursive: true })
    await age(dir.path)
    const cachePath = path.join(dir.path, "..", `${path.basename(dir.path)}-cache.json`)
    try {
      const cold = ResourceLoader.create({ directory: dir.path, worktree: dir.path, log: Logger.silent }, {})
      const built = await cold.index()
      await cold.dispose()
      const writer = loaderOf(dir.path, cachePath)
      await writer.index()
      await writer.dispose()
      const loader = loaderOf(dir.path, cachePath)
      const index = await loader.index()
      expect(loader.stats.lastBuild?.restored).toBe(true)
      const ids = [...built.resources.keys()]
      expect([...index.resources.keys()]).toEqual(ids)
      expect(index.resources.size).toBe(built.resources.size)
      const one = index.resources.get("specif-1.1")!
      expect(one).toEqual(built.resources.get("specif-1.1")!)
      expect(index.resources.get("specif-1.1")).toBe(one)
      expect(index.resources.get("no-such-id")).toBeUndefined()
      // A walk over all of them keeps the object read before, in the index's order.
      const all = [...index.resources.values()]
      expect(all).toEqual([...built.resources.values()])
      expect(all[ids.indexOf("specif-1.1")]).toBe(one)
      expect(index.text.metas).toEqual(all)
      expect(index.text.metas[ids.indexOf("specif-1.1")]).toBe(one)
      await loader.dispose()
    } finally {
      await fs.rm(cachePath, { force: true })
    }
  })

  test("a file edited between the scan and its read: the index has the new text, the cache never the old stamp with it", async () => {
    await using dir = await tmpdir({ ".opencode/task/ship.md": md({ title: "Ship" }) })
    await age(dir.path)
    const project = ResourceProject.resolve(dir.path, dir.path)
    const file = dir.file(".opencode/task/ship.md")
    // The gate is asked after the scan and before any read: the edit lands in between.
    const gate = {
      active: () => true,
      reason: async () => undefined,
      denied: async () => {
        await fs.writeFile(file, md({ title: "Shipped", tags: ["edited"] }))
        await fs.utimes(file, new Date(), new Date(Date.now() + 5_000))
        return new Map<string, string>()
      },
      asked: 0,
    }
    const out = await ResourceBuild.run(project, config, undefined, gate)
    expect(out.index.resources.get("ship")!.name).toBe("Shipped")
    // The entry carries the stamp of the scan (before the edit), so the next build reads the file again rather than
    // trusting a parse it cannot date.
    const stamp = (await fs.stat(file)).mtimeMs
    expect(out.cache.files[".opencode/task/ship.md"].mtimeMs).not.toBe(stamp)
    const again = await ResourceBuild.run(project, config, out.cache)
    expect(again.stats).toMatchObject({ parsed: 1, reused: 0 })
    expect(again.cache.files[".opencode/task/ship.md"].mtimeMs).toBe(stamp)
    expect(await ResourceBuild.filesChanged(again.cache)).toBe(false)
    expect(await ResourceBuild.filesChanged(out.cache)).toBe(true)
  })
})
