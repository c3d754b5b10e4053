import { describe, expect, test } from "bun:test"
import { ResourceBuild } from "../../resource/build"
import { ResourceProject } from "../../resource/project"
import { ResourceQuery } from "../../resource/query"
import { Resource } from "../../resource/schema"
import { md, tmpdir } from "../fixture"

async function indexOf(files: Record<string, string>) {
  const dir = await tmpdir(files)
  const { index } = await ResourceBuild.run(ResourceProject.resolve(dir.path), Resource.Config.parse({}))
  return { index, dir }
}

const FILES = {
  ".opencode/knowledge-base/dev/git-operations.md": md({
    title: "Git Operations",
    tags: ["git", "vcs"],
    description: "Branching and rebasing",
  }),
  ".opencode/checklist/dev/pre-commit.md": md({
    title: "Pre-commit",
    tags: ["git", "quality"],
    description: "Before each commit",
  }),
  ".opencode/task/release.md": md({ title: "Release", tags: ["release"], description: "Tag with git and publish" }),
  ".opencode/template/docs/notes.md": md({ title: "Notes", tags: ["docs"], description: "Release notes" }),
  ".opencode/schema/config.json": JSON.stringify({
    title: "Config",
    description: "Service config",
    "x-tags": ["config"],
  }),
  ".opencode/agent/releaser.md": "Follow [[release]] and [[notes]].",
}

describe("resource-query", () => {
  test("ranking: id/name above tags above description; every word must match", async () => {
    const { index, dir } = await indexOf(FILES)
    await using _ = dir
    const git = ResourceQuery.run(index, { query: "git" })
    expect(git.results.map((r) => r.id)).toEqual(["git-operations", "pre-commit", "release"])
    expect(ResourceQuery.run(index, { query: "git rebasing" }).results.map((r) => r.id)).toEqual(["git-operations"])
    expect(ResourceQuery.run(index, { query: "GIT   Quality" }).results.map((r) => r.id)).toEqual(["pre-commit"])
    expect(ResourceQuery.run(index, { query: "nothing-like-this" }).total).toBe(0)
  })

  test("non-ASCII text: words are found and attributed to the right resource (byte offsets, not characters)", async () => {
    // Multi-byte characters before a match shift byte offsets away from character offsets: each hit must still land
    // on the resource whose text holds it, including the one right after a multi-byte-heavy resource.
    const { index, dir } = await indexOf({
      ".opencode/knowledge-base/a-uberpruefung.md": md({
        title: `Überprüfung 日本語 ${"🚀".repeat(60)}`,
        tags: ["größe"],
      }),
      ".opencode/knowledge-base/b-plain.md": md({ title: "Plain", description: "zebra crossing" }),
      ".opencode/knowledge-base/c-cafe.md": md({ title: "Café", description: "Crème brûlée — zebra" }),
    })
    await using _ = dir
    const ids = (query: string) => ResourceQuery.run(index, { query }).results.map((r) => r.id)
    expect(ids("zebra")).toEqual(["c-cafe", "b-plain"])
    expect(ids("überprüfung")).toEqual(["a-uberpruefung"])
    expect(ids("größe")).toEqual(["a-uberpruefung"])
    expect(ids("日本")).toEqual(["a-uberpruefung"])
    expect(ids("🚀")).toEqual(["a-uberpruefung"])
    expect(ids("brûlée")).toEqual(["c-cafe"])
    expect(ids("plain")).toEqual(["b-plain"])
  })

  test("an exact id wins outright; ties are broken by name", async () => {
    const { index, dir } = await indexOf({
      ".opencode/task/b-task.md": md({ title: "Zeta", tags: ["shared"] }),
      ".opencode/task/a-task.md": md({ title: "Alpha", tags: ["shared"] }),
      ".opencode/task/shared.md": md({ title: "Omega" }),
    })
    await using _ = dir
    expect(ResourceQuery.run(index, { query: "shared" }).results.map((r) => r.id)).toEqual([
      "shared",
      "a-task",
      "b-task",
    ])
    expect(ResourceQuery.run(index, {}).results.map((r) => r.name)).toEqual(["Alpha", "Omega", "Zeta"])
  })

  test("filters: type, domain, tags (AND, case-insensitive), referencedBy (agent or command)", async () => {
    const { index, dir } = await indexOf(FILES)
    await using _ = dir
    const ids = (args: ResourceQuery.Args) => ResourceQuery.run(index, args).results.map((r) => r.id)
    expect(ids({ type: "checklist" })).toEqual(["pre-commit"])
    expect(ids({ type: "all", domain: "dev" })).toEqual(["git-operations", "pre-commit"])
    expect(ids({ tags: ["GIT", "quality"] })).toEqual(["pre-commit"])
    expect(ids({ tags: ["git", "unknown-tag"] })).toEqual([])
    expect(ids({ referencedBy: "releaser" })).toEqual(["notes", "release"])
    expect(ids({ referencedBy: "RELEASER" })).toEqual(["notes", "release"])
    expect(ids({ referencedBy: "nobody" })).toEqual([])
    expect(ids({ type: "schema", query: "service" })).toEqual(["config"])
  })

  test("results carry id, type, name, domain, description, tags, path and size; totals and hints", async () => {
    const { index, dir } = await indexOf(FILES)
    await using _ = dir
    const r = ResourceQuery.run(index, { query: "git", limit: 1 })
    expect(r.results[0]).toEqual({
      id: "git-operations",
      type: "knowledge-base",
      name: "Git Operations",
      domain: "dev",
      description: "Branching and rebasing",
      tags: ["git", "vcs"],
      path: ".opencode/knowledge-base/dev/git-operations.md",
      size: expect.stringMatching(/^\d+ B$/),
    })
    expect(r.total).toBe(3)
    expect(r.showing).toBe(1)
    expect(r.hint).toContain("Showing 1 of 3")
    expect(ResourceQuery.run(index, { query: "zzz" }).hint).toContain("Nothing matched")
  })

  test("no resource has every word: those with the most words come first, marked partial; no word at all: nothing", async () => {
    // A tester's case: design notes without frontmatter, "terminal backend" against a page titled Terminal about
    // backends of another name; every word had to match, so nothing came back.
    const { index, dir } = await indexOf({
      ...FILES,
      ".opencode/knowledge-base/terminal.md": md({ title: "Terminal", description: "Rendering to the screen" }),
      ".opencode/knowledge-base/backend.md": md({ title: "Backends", description: "Crossterm and termion backends" }),
      ".opencode/knowledge-base/terminal-backend.md": md({ title: "Choosing a terminal", tags: ["backend"] }),
    })
    await using _ = dir
    const full = ResourceQuery.run(index, { query: "terminal backend" })
    expect(full.partial).toBeUndefined()
    expect(full.results.map((r) => r.id)).toEqual(["terminal-backend"])
    const some = ResourceQuery.run(index, { query: "terminal backend rebasing" })
    expect(some.partial).toBe(true)
    // Two words before one; within a count, the usual ranking (id and name above description).
    expect(some.results.map((r) => r.id)).toEqual(["terminal-backend", "backend", "terminal", "git-operations"])
    expect(some.total).toBe(4)
    expect(some.hint).toContain('No resource matches every word of "terminal backend rebasing"')
    // Filters still hold, and a query none of whose words match is still nothing.
    expect(ResourceQuery.run(index, { query: "git backend", type: "checklist" }).results.map((r) => r.id)).toEqual([
      "pre-commit",
    ])
    const none = ResourceQuery.run(index, { query: "zzz yyy" })
    expect([none.total, none.partial, none.hint]).toEqual([0, undefined, expect.stringContaining("Nothing matched")])
  })

  test("an empty project says how to add resources", async () => {
    const { index, dir } = await indexOf({})
    await using _ = dir
    expect(ResourceQuery.run(index, {}).hint).toContain("No resources in this project")
  })

  test("limit is 1-50, default 10", async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 60; i++) files[`.opencode/task/t${String(i).padStart(2, "0")}.md`] = "x"
    const { index, dir } = await indexOf(files)
    await using _ = dir
    expect(ResourceQuery.run(index, {}).showing).toBe(10)
    expect(ResourceQuery.run(index, { limit: 50 }).showing).toBe(50)
    expect(() => ResourceQuery.run(index, { limit: 51 })).toThrow()
    expect(() => ResourceQuery.run(index, { limit: 0 })).toThrow()
  })
})
