import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import { ResourceBuild } from "../../resource/build"
import { ResourceCache } from "../../resource/cache"
import { ResourceProject } from "../../resource/project"
import { Resource } from "../../resource/schema"
import { md, tmpdir } from "../fixture"

const config = Resource.Config.parse({})
const build = (
  dir: string,
  previous?: ResourceCache.Data,
  worktree?: string,
  overrides: Partial<Resource.Config> = {},
) => ResourceBuild.run(ResourceProject.resolve(dir, worktree ?? dir), { ...config, ...overrides }, previous)
const ids = (set?: Set<string>) => [...(set ?? [])].sort()

describe("index assembly", () => {
  test("secondary indexes by type, domain, tag (case-insensitive) and referencing agent/command", async () => {
    await using dir = await tmpdir({
      ".opencode/knowledge-base/dev/git.md": md({ id: "git-ops", tags: ["Git", "vcs"] }),
      ".opencode/checklist/dev/pre-commit.md": md({ tags: ["git"] }),
      ".opencode/template/docs/notes.md": md({ tags: ["release"], referencedBy: ["writer"] }),
      ".opencode/schema/config.json": JSON.stringify({ title: "Config", "x-tags": ["git"] }),
      ".opencode/agent/reviewer.md": "Before approving, check [[pre-commit]] and consult git-ops.",
      ".opencode/command/ship.md": "Use the [notes](../template/docs/notes.md) template.",
    })
    const { index } = await build(dir.path)
    expect(index.resources.size).toBe(4)
    expect(ids(index.byType.get("checklist"))).toEqual(["pre-commit"])
    expect(ids(index.byType.get("schema"))).toEqual(["config"])
    expect(ids(index.byDomain.get("dev"))).toEqual(["git-ops", "pre-commit"])
    expect(ids(index.byDomain.get("docs"))).toEqual(["notes"])
    expect(ids(index.byDomain.get("common"))).toEqual(["config"])
    expect(ids(index.byTag.get("git"))).toEqual(["config", "git-ops", "pre-commit"])
    expect(index.byTag.has("Git")).toBe(false)
    expect(ids(index.byReference.get("reviewer"))).toEqual(["git-ops", "pre-commit"])
    expect(ids(index.byReference.get("writer"))).toEqual(["notes"])
    // The command's link is relative to its own folder (.opencode/command/), so it reaches the template.
    expect(ids(index.graph.commands.get("ship"))).toEqual(["notes"])
    expect(index.resources.get("notes")!.referencedBy).toEqual(["ship", "writer"])
    expect(index.resources.get("pre-commit")!.referencedBy).toEqual(["reviewer"])
    expect(index.warnings).toEqual([])
  })

  test("agent words count only for distinctive ids; short generic ids need an explicit [[link]]", async () => {
    await using dir = await tmpdir({
      ".opencode/task/git.md": "g",
      ".opencode/task/deployment.md": "d",
      ".opencode/task/db-migrate.md": "m",
      ".opencode/agent/a.md": "We use git for deployment. Run db-migrate. Mention [[git]] explicitly too.",
      ".opencode/agent/b.md": "plain git talk",
    })
    const { index } = await build(dir.path)
    expect(ids(index.graph.agents.get("a"))).toEqual(["db-migrate", "deployment", "git"])
    expect(index.graph.agents.get("b")).toBeUndefined()
  })

  test("reference graph forward and backward, by id, by relative link, by schema $ref and $id", async () => {
    await using dir = await tmpdir({
      ".opencode/knowledge-base/a.md": "See [[b]] and [c](../checklist/c.md).",
      ".opencode/knowledge-base/b.md": md({ references: ["c"] }),
      ".opencode/checklist/c.md": "leaf",
      ".opencode/schema/order.json": JSON.stringify({ $ref: "./user.json", properties: { o: { $ref: "urn:org" } } }),
      ".opencode/schema/user.json": JSON.stringify({ title: "User" }),
      ".opencode/schema/org.json": JSON.stringify({ $id: "urn:org" }),
    })
    const { index } = await build(dir.path)
    expect(ids(index.graph.forward.get("a"))).toEqual(["b", "c"])
    expect(ids(index.graph.backward.get("c"))).toEqual(["a", "b"])
    expect(ids(index.graph.forward.get("order"))).toEqual(["org", "user"])
    expect(index.resources.get("a")!.references).toEqual(["b", "c"])
  })

  test("dangling references stay listed and are reported; self-references are dropped with a warning", async () => {
    await using dir = await tmpdir({
      ".opencode/task/a.md": md({ references: ["gone", "a", "b", "../missing.md"] }),
      ".opencode/task/b.md": "b",
    })
    const { index } = await build(dir.path)
    expect(index.resources.get("a")!.references).toEqual(["b", "gone", ".opencode/missing.md"])
    expect(index.dangling.get("a")).toEqual(["gone", ".opencode/missing.md"])
    expect(index.warnings.map((w) => w.code).sort()).toEqual(["dangling-reference", "self-reference"])
  })

  test("duplicate ids: nearest .opencode wins, then the smallest path; every loser is reported", async () => {
    await using dir = await tmpdir({
      ".opencode/task/z/shared.md": md({ title: "root z" }),
      ".opencode/checklist/shared.md": md({ title: "root checklist" }),
      "pkg/.opencode/task/shared.md": md({ title: "package" }),
    })
    const rootOnly = await build(dir.path)
    expect(rootOnly.index.resources.get("shared")!.name).toBe("root checklist")
    expect(rootOnly.index.warnings).toHaveLength(1)
    expect(rootOnly.index.warnings[0].message).toBe(
      "duplicate id 'shared': .opencode/checklist/shared.md is used, .opencode/task/z/shared.md is ignored; " +
        "to index both, give it an id of its own in its frontmatter (id: z-shared)",
    )
    const fromPackage = await build(dir.file("pkg"), undefined, dir.path)
    expect(fromPackage.index.resources.get("shared")!.name).toBe("package")
    expect(fromPackage.index.warnings.map((w) => w.path).sort()).toEqual([
      ".opencode/checklist/shared.md",
      ".opencode/task/z/shared.md",
    ])
  })

  // vuejs/docs' tutorial (tester RW's RW8): `tutorial/src/step-N/description.md` in 15 folders all take the id
  // `description`; 14 were ignored and the error did not say how to keep them.
  test("a duplicate-id error names the fix: an id of its own in the frontmatter, free and path-derived (RW8)", async () => {
    const KB = ".opencode/knowledge-base"
    await using dir = await tmpdir({
      [`${KB}/tutorial/src/step-1/description.md`]: "# Step 1\n",
      [`${KB}/tutorial/src/step-2/description.md`]: "# Step 2\n",
      [`${KB}/api/ssr.md`]: "# SSR API\n",
      [`${KB}/guide/scaling-up/ssr.md`]: "# SSR guide\n",
      // A suggestion is never an id another file already has.
      [`${KB}/step-2-description.md`]: "# Taken\n",
    })
    const messages = (await build(dir.path)).index.warnings
      .filter((w) => w.code === "duplicate-id")
      .map((w) => w.message)
    expect(messages.sort()).toEqual([
      `duplicate id 'description': ${KB}/tutorial/src/step-1/description.md is used, ` +
        `${KB}/tutorial/src/step-2/description.md is ignored; to index both, give it an id of its own in its ` +
        "frontmatter (id: src-step-2-description)",
      `duplicate id 'ssr': ${KB}/api/ssr.md is used, ${KB}/guide/scaling-up/ssr.md is ignored; to index both, give ` +
        "it an id of its own in its frontmatter (id: scaling-up-ssr)",
    ])
    // The fix works: the suggested id, declared, indexes both.
    await dir.write({
      [`${KB}/tutorial/src/step-2/description.md`]: md({ id: "src-step-2-description" }, "# Step 2\n"),
    })
    const after = (await build(dir.path)).index
    expect(after.resources.get("src-step-2-description")?.path).toContain("step-2/description.md")
    expect(after.warnings.filter((w) => w.code === "duplicate-id")).toHaveLength(1)
  })

  test("unreadable content (binary, non-UTF-8) is reported and left out; oversize files are listed with a warning", async () => {
    await using dir = await tmpdir({
      ".opencode/task/ok.md": "ok",
      ".opencode/task/bin.md": new Uint8Array([1, 0, 2]),
      ".opencode/task/latin.md": new Uint8Array([0xe9, 0x0a]),
      ".opencode/task/huge.md": md({ title: "Huge", tags: ["big"] }, "x".repeat(3000)),
    })
    const { index } = await build(dir.path, undefined, undefined, { maxFileSize: 1000 })
    expect([...index.resources.keys()].sort()).toEqual(["huge", "ok"])
    expect(index.resources.get("huge")!.tags).toEqual(["big"])
    expect(index.warnings.map((w) => `${w.code}:${w.path}`).sort()).toEqual([
      "binary-file:.opencode/task/bin.md",
      "not-utf8:.opencode/task/latin.md",
      "oversize:.opencode/task/huge.md",
    ])
    expect(index.warnings.find((w) => w.code === "oversize")!.severity).toBe("warning")
  })
})

describe("incremental builds and the cache", () => {
  test("a warm build re-reads only changed files and notices added and removed ones", async () => {
    await using dir = await tmpdir({
      ".opencode/task/a.md": md({ title: "A" }),
      ".opencode/task/b.md": md({ title: "B" }),
      ".opencode/agent/x.md": "uses [[a]]",
    })
    const cold = await build(dir.path)
    expect(cold.stats).toEqual({ parsed: 3, reused: 0, removed: 0 })
    const warm = await build(dir.path, cold.cache)
    expect(warm.stats).toEqual({ parsed: 0, reused: 3, removed: 0 })
    expect(warm.index.resources.get("a")).toEqual(cold.index.resources.get("a"))

    await Bun.sleep(5)
    await dir.write({ ".opencode/task/a.md": md({ title: "A2" }), ".opencode/task/c.md": "c" })
    await fs.rm(dir.file(".opencode/task/b.md"))
    const after = await build(dir.path, warm.cache)
    expect(after.stats).toEqual({ parsed: 2, reused: 1, removed: 1 })
    expect(after.index.resources.get("a")!.name).toBe("A2")
    expect([...after.index.resources.keys()].sort()).toEqual(["a", "c"])
  })

  test("without a resource file, agent and command files are not read; the first resource brings them in", async () => {
    await using dir = await tmpdir({
      ".claude/agents/reviewer.md": "Before approving, check [[pre-commit]].",
      ".opencode/command/ship.md": "Ship it.",
    })
    const empty = await build(dir.path)
    expect(empty.stats).toEqual({ parsed: 0, reused: 0, removed: 0 })
    expect(empty.index.resources.size).toBe(0)
    expect(Object.keys(empty.cache.references)).toEqual([])
    await fs.mkdir(dir.file(".opencode/checklist"), { recursive: true })
    await fs.writeFile(dir.file(".opencode/checklist/pre-commit.md"), md({}))
    const one = await build(dir.path, empty.cache)
    expect(one.stats).toMatchObject({ parsed: 3 })
    expect(ids(one.index.graph.agents.get("reviewer"))).toEqual(["pre-commit"])
    expect(one.index.resources.get("pre-commit")!.referencedBy).toEqual(["reviewer"])
  })

  test("the cache round-trips through disk, written atomically; unusable caches are ignored", async () => {
    await using dir = await tmpdir({ ".opencode/task/a.md": "a" })
    const file = dir.file("cache/index.json")
    const cold = await build(dir.path)
    await ResourceCache.write(file, cold.cache)
    expect((await fs.readdir(dir.file("cache"))).filter((f) => f.endsWith(".tmp"))).toEqual([])
    const read = await ResourceCache.read(file, dir.path)
    expect(read).toEqual(cold.cache)
    expect((await build(dir.path, read)).stats.reused).toBe(1)

    expect(await ResourceCache.read(file, "/another/project")).toBeUndefined()
    await fs.writeFile(file, '{"format": 1, "trunc')
    expect(await ResourceCache.read(file, dir.path)).toBeUndefined()
    await fs.writeFile(file, JSON.stringify({ ...cold.cache, format: 999 }))
    expect(await ResourceCache.read(file, dir.path)).toBeUndefined()
    expect(await ResourceCache.read(dir.file("missing.json"), dir.path)).toBeUndefined()
  })

  test("the default cache path is per project under XDG_CACHE_HOME", () => {
    const a = ResourceCache.defaultPath("/p/one", { XDG_CACHE_HOME: "/c" })
    expect(a.startsWith("/c/opencode-builtins/resource-index/")).toBe(true)
    expect(a).not.toBe(ResourceCache.defaultPath("/p/two", { XDG_CACHE_HOME: "/c" }))
  })
})

describe("schemas are documents: one id each, whatever their file names", () => {
  // Shape of asyncapi/spec-json-schemas `definitions/<version>/info.json` (626 schemas, one folder per version, 555
  // false duplicate-id errors before) and JSON-Schema-Test-Suite `remotes/` (draft folders, many without `$id`).
  const item = (v: string) => JSON.stringify({ $id: `https://ex.com/${v}/item.json`, title: `Item ${v}` })
  const FILES = {
    ".opencode/schema/v1/item.json": item("v1"),
    ".opencode/schema/v2/item.json": item("v2"),
    ".opencode/schema/v2/order.json": JSON.stringify({
      $id: "https://ex.com/v2/order.json",
      properties: { item: { $ref: "https://ex.com/v2/item.json" }, note: { $ref: "https://elsewhere.org/note.json" } },
    }),
    ".opencode/schema/draft4/subSchemas.json": JSON.stringify({ definitions: { a: { type: "integer" } } }),
    ".opencode/schema/draft6/subSchemas.json": JSON.stringify({ definitions: { a: { type: "integer" } } }),
  }

  test("different $ids (or none, in different folders) with the same file name are all indexed, under path-derived ids", async () => {
    await using dir = await tmpdir(FILES)
    const { index } = await build(dir.path)
    expect(index.warnings).toEqual([])
    expect(index.resources.get("item")!.relativePath).toBe(".opencode/schema/v1/item.json")
    expect(index.resources.get("v2-item")!.relativePath).toBe(".opencode/schema/v2/item.json")
    expect(index.resources.get("subSchemas")!.relativePath).toBe(".opencode/schema/draft4/subSchemas.json")
    expect(index.resources.get("draft6-subSchemas")!.relativePath).toBe(".opencode/schema/draft6/subSchemas.json")
    // The $ref to v2 reaches v2, not v1; the schema published elsewhere is no error, but is known as not indexed.
    expect(ids(index.graph.forward.get("order"))).toEqual(["v2-item"])
    expect(index.dangling.size).toBe(0)
    expect(index.notIndexed.get("order")).toEqual([
      {
        ref: "https://elsewhere.org/note.json",
        reason: "no schema of the project declares this $id (a document published elsewhere)",
      },
    ])
  })

  test("a path-derived id never takes an id another file has, and stays unique", async () => {
    await using dir = await tmpdir({
      ".opencode/schema/a/v2/item.json": item("a/v2"),
      ".opencode/schema/b/v2/item.json": item("b/v2"),
      ".opencode/schema/c/item.json": item("c"),
      // Named like the id c/item.json would take.
      ".opencode/task/c-item.md": md({ title: "Task" }),
    })
    const { index } = await build(dir.path)
    expect(index.warnings).toEqual([])
    const byPath = Object.fromEntries([...index.resources.values()].map((m) => [m.relativePath, m.id]))
    expect(byPath).toEqual({
      ".opencode/schema/a/v2/item.json": "item",
      ".opencode/schema/b/v2/item.json": "v2-item",
      ".opencode/schema/c/item.json": "schema-c-item",
      ".opencode/task/c-item.md": "c-item",
    })
  })

  test("two schemas declaring the same $id are still one duplicate-id error", async () => {
    await using dir = await tmpdir({
      ".opencode/schema/v1/item.json": item("v1"),
      ".opencode/schema/copy/item.json": item("v1"),
    })
    const { index } = await build(dir.path)
    expect(index.warnings.map((w) => `${w.code} ${w.path}`)).toEqual(["duplicate-id .opencode/schema/v1/item.json"])
    expect(index.resources.get("item")!.relativePath).toBe(".opencode/schema/copy/item.json")
  })
})

describe("links of real documentation trees that name no resource file as written", () => {
  test("Zola's `@/section/page.md` resolves from the type folder (rust-lang/blog.rust-lang.org inside-rust/)", async () => {
    await using dir = await tmpdir({
      ".opencode/knowledge-base/inside-rust/older.md": md({ title: "Older" }),
      ".opencode/knowledge-base/inside-rust/q3/index.md": md(
        { title: "Newer" },
        "See [older](@/inside-rust/older.md) and [its part](@/inside-rust/older.md#plan); [gone](@/inside-rust/gone.md).",
      ),
    })
    const { index } = await build(dir.path)
    expect(ids(index.graph.forward.get("q3"))).toEqual(["older"])
    expect(index.dangling.get("q3")).toEqual([".opencode/knowledge-base/inside-rust/gone.md"])
  })

  test("`[[toc]]` and `[[_TOC_]]` are directives unless a note has that name; shell tests and R indexes are no links", async () => {
    // vuejs/docs `glossary/index.md`, a GitLab wiki page, a bash guide, an R guide (/tmp repro r6 of the tester).
    await using dir = await tmpdir({
      ".opencode/knowledge-base/page.md": md(
        { title: "Page" },
        "[[_TOC_]]\n\n[[toc]]\n\nUse [[ -f file ]] or [[ $a == z ]] or [[ ! -e x ]]. In R, df[[col]].\n\n[[missing-note]], see [[List]]\n",
      ),
      ".opencode/knowledge-base/list.md": md({ title: "List" }),
    })
    const { index } = await build(dir.path)
    expect(index.dangling.get("page")).toEqual(["missing-note"])
    expect(ids(index.graph.forward.get("page"))).toEqual(["list"])
    // In a notes vault with a note named TOC, `[[TOC]]` is a link to it.
    await using vault = await tmpdir({
      ".opencode/knowledge-base/vault/list.md": md({ title: "List" }, "Back to the [[TOC]]."),
      ".opencode/knowledge-base/vault/TOC.md": md({ title: "Contents" }),
    })
    expect(ids((await build(vault.path)).index.graph.forward.get("list"))).toEqual(["TOC"])
  })

  test("a `$ref` to a YAML document that exists is no error (listed as not loaded); to a missing one it is dangling", async () => {
    await using dir = await tmpdir({
      ".opencode/schema/common.yaml": "components: {}\n",
      ".opencode/schema/pet.json": JSON.stringify({
        $id: "https://ex.com/pet.json",
        properties: { c: { $ref: "./common.yaml" }, d: { $ref: "./missing.yml#/a" } },
      }),
    })
    const { index } = await build(dir.path)
    expect(index.dangling.get("pet")).toEqual(["./missing.yml"])
    expect(index.notIndexed.get("pet")).toEqual([
      { ref: "./common.yaml", reason: "a YAML document, not indexed (only .json schemas are)" },
    ])
  })
})

describe("MDX pages (withastro/docs: 420 .mdx files were not indexed, and lint said nothing)", () => {
  test("`.mdx` files are indexed as markdown: frontmatter and links read; imports and JSX expressions are no links", async () => {
    const page = [
      "---",
      "title: Content collections",
      "description: Manage your content with type safety.",
      "i18nReady: true",
      "---",
      "import { Steps } from '@astrojs/starlight/components'",
      "import Since from '~/components/Since.astro'",
      "export const matrix = [[ghost]]",
      "",
      '<Since v="2.0.0" />',
      "<Grid items={[[first], [second]]} cells={{ a: [[inner]] }} />",
      "",
      "Read [the images guide](images.mdx) and [[routing]]; not [[ghost-link]].",
    ].join("\n")
    await using dir = await tmpdir({
      ".opencode/knowledge-base/guides/content-collections.mdx": page,
      ".opencode/knowledge-base/guides/images.mdx": "---\ntitle: Images\n---\n# Images\n",
      ".opencode/knowledge-base/guides/routing.md": md({ title: "Routing" }),
    })
    const { index } = await build(dir.path)
    expect(index.resources.get("content-collections")).toMatchObject({
      name: "Content collections",
      description: "Manage your content with type safety.",
    })
    expect(index.resources.get("images")!.relativePath).toBe(".opencode/knowledge-base/guides/images.mdx")
    expect(ids(index.graph.forward.get("content-collections"))).toEqual(["images", "routing"])
    expect(index.dangling.get("content-collections")).toEqual(["ghost-link"])
  })
})
