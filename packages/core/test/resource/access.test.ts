import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { ResourceAccess } from "../../resource/access"
import { ResourceBuild } from "../../resource/build"
import { ResourceLoader } from "../../resource/loader"
import { ResourceOutput } from "../../resource/output"
import type { Resource } from "../../resource/schema"
import { Logger } from "../../util/log"
import { md, tmpdir } from "../fixture"
import { guarded, type Rule } from "./guarded"
import { history } from "./history"

const SECRET = "Falcon acquisition closing schedule"

/** A project with visible and protected resources, agents referencing them, and links between them. */
const PROJECT = {
  ".opencode/task/ship.md": md(
    { title: "Ship", description: "Ship the release", tags: ["release"], references: ["falcon", "notes"] },
    "BODY-SHIP",
  ),
  ".opencode/task/falcon.md": md({ title: "Falcon", description: SECRET, tags: ["release"] }, "BODY-FALCON"),
  ".opencode/knowledge-base/notes.md": md({ title: "Notes", description: "Release notes how-to" }, "BODY-NOTES"),
  ".opencode/knowledge-base/vault/plan.md": md(
    { id: "board-plan", title: "Board plan", description: `${SECRET} for the board` },
    "BODY-PLAN",
  ),
  ".opencode/knowledge-base/linker.md": md({ title: "Linker" }, "See [the plan](vault/plan.md) and [[notes]]."),
  ".opencode/agent/closer.md": md({ description: "Closes deals" }, "Use ship and board-plan."),
  "secrets/agents-note.md": "x",
}

const RULES: Rule[] = [
  { pattern: ".opencode/task/falcon.md", type: "file", deniedOperations: ["read"] },
  { pattern: ".opencode/knowledge-base/vault", type: "directory", deniedOperations: ["llm"] },
  { pattern: ".opencode/agent/closer.md", type: "file", deniedOperations: ["read"] },
]

function setup(dir: string, host: Partial<ResourceAccess.Source>, config: Resource.ConfigInput = {}) {
  const h = history()
  const loader = ResourceLoader.create(
    { directory: dir, worktree: dir, log: Logger.silent, messages: async () => h.messages, ...host },
    { persistCache: false, ...config },
  )
  const ctx = { sessionID: "ses_test", messageID: "msg_current" }
  const load = async (id: string, includeReferences?: boolean) => {
    const messageID = h.assistant()
    const out = await loader.load({ id, includeReferences }, { ...ctx, messageID })
    h.messages.at(-1)!.parts.push(h.tool("resource-load", out))
    return out
  }
  return { h, loader, ctx, load, [Symbol.asyncDispose]: () => loader.dispose() }
}

describe("ResourceAccess.gate", () => {
  test("verdicts are remembered while accessVersion holds, asked again after it changes", async () => {
    let version = 1
    const asked: string[] = []
    const host: ResourceAccess.Source = {
      access: async (p, op) => (asked.push(`${op} ${p}`), p.includes("secret") ? "protected" : undefined),
      accessVersion: () => version,
    }
    const gate = ResourceAccess.gate(() => host)
    const entries = [{ path: "/p/a.md" }, { path: "/p/secret.md" }]
    expect([...(await gate.denied(entries))]).toEqual([["/p/secret.md", "protected"]])
    expect(await gate.reason("/p/secret.md")).toBe("protected")
    expect(asked).toEqual(["read /p/a.md", "read /p/secret.md"])
    version++
    await gate.denied(entries)
    expect(gate.asked).toBe(4)
  })

  test("without a version every call asks again; a key (what the path leads to) is part of the question", async () => {
    let n = 0
    const gate = ResourceAccess.gate(() => ({ access: async () => (n++, undefined) }))
    await gate.denied([{ path: "/p/a" }, { path: "/p/a" }])
    expect(n).toBe(1)
    await gate.reason("/p/a")
    expect(n).toBe(2)
    const host = { access: async () => (n++, undefined), accessVersion: () => 7 }
    const versioned = ResourceAccess.gate(() => host)
    await versioned.reason("/p/a", "1:10")
    await versioned.reason("/p/a", "1:10")
    await versioned.reason("/p/a", "1:11")
    expect(n).toBe(4)
  })

  test("a check that throws is a denial (fail closed) and is not remembered; no check, no denial", async () => {
    let fail = true
    const host = {
      access: async () => {
        if (fail) throw new Error("policy store offline")
        return undefined
      },
      accessVersion: () => 1,
    }
    const gate = ResourceAccess.gate(() => host)
    expect(await gate.reason("/p/a")).toBe("access check failed: policy store offline")
    fail = false
    expect(await gate.reason("/p/a")).toBeUndefined()
    const none = ResourceAccess.gate(() => undefined)
    expect(none.active()).toBe(false)
    expect((await none.denied([{ path: "/p/a" }])).size).toBe(0)
  })
})

describe("resource loader with a security policy", () => {
  test("resource-query: protected resources are not among results, counts, tags or referencing agents", async () => {
    await using dir = await tmpdir(PROJECT)
    await using g = await guarded(dir.path, RULES)
    await using s = setup(dir.path, g.host)
    const byWords = await s.loader.query({ query: "falcon" })
    expect(byWords.results).toEqual([])
    expect(byWords.total).toBe(0)
    const all = await s.loader.query({ limit: 50 })
    expect(all.results.map((r) => r.id).sort()).toEqual(["linker", "notes", "ship"])
    expect(all.total).toBe(3)
    const tagged = await s.loader.query({ tags: ["release"] })
    expect(tagged.results.map((r) => r.id)).toEqual(["ship"])
    // The protected agent's text is never read: it references nothing.
    expect((await s.loader.query({ referencedBy: "closer" })).total).toBe(0)
    const text = JSON.stringify([byWords, all, tagged])
    expect(text).not.toContain("Falcon")
    expect(text).not.toContain("board-plan")
    expect(all.warnings).toBeUndefined()
  })

  test("resource-load of a protected id is refused with the policy's reason; nothing of the file is shown", async () => {
    await using dir = await tmpdir(PROJECT)
    await using g = await guarded(dir.path, RULES)
    await using s = setup(dir.path, g.host)
    s.h.user()
    const refused = JSON.parse(await s.load("falcon"))
    expect(refused.error).toBe("AccessDenied")
    expect(refused.path).toBe(".opencode/task/falcon.md")
    expect(refused.reason).toBe((await g.guard.access(dir.file(".opencode/task/falcon.md"), "read"))!)
    expect(JSON.stringify(refused)).not.toContain(SECRET)
    // An id declared inside a protected file is never learned: it is simply not found.
    const unknown = JSON.parse(await s.load("board-plan"))
    expect(unknown.error).toBe("ResourceNotFound")
    expect(unknown.closest).not.toContain("board-plan")
  })

  // Through OpenCode the output filter withholds every line naming a protected path: printed on one line, the whole
  // refusal was withheld (new-user helper, over MCP); one field per line, the error's name and the id remain.
  test("the refusal through the security layer's output filter still says AccessDenied and the id", async () => {
    await using dir = await tmpdir(PROJECT)
    await using g = await guarded(dir.path, RULES)
    await using s = setup(dir.path, g.host)
    s.h.user()
    const shown = g.guard.after({ tool: "resource-load", args: { id: "falcon" } }, await s.load("falcon"))
    expect(shown).toContain('"error": "AccessDenied"')
    expect(shown).toContain('"id": "falcon"')
    expect(shown).not.toContain("falcon.md")
    expect(shown).not.toContain(SECRET)
  })

  test("reference expansion never pulls a protected resource in, by id or by link, nor names its description", async () => {
    await using dir = await tmpdir(PROJECT)
    await using g = await guarded(dir.path, RULES)
    await using s = setup(dir.path, g.host)
    s.h.user()
    const ship = await s.load("ship", true)
    expect(ResourceOutput.header(ship)!.loaded).toEqual(["ship", "notes"])
    expect(ship).toContain("Reference 'falcon' not loaded: ")
    expect(ship).not.toContain("Unresolved")
    const linker = await s.load("linker", true)
    expect(ResourceOutput.header(linker)!.loaded).toEqual(["linker"])
    expect(linker).toContain("Reference '.opencode/knowledge-base/vault/plan.md' not loaded: ")
    for (const out of [ship, linker]) {
      expect(out).not.toContain(SECRET)
      expect(out).not.toContain("BODY-FALCON")
      expect(out).not.toContain("BODY-PLAN")
    }
  })

  test("resource-list-loaded leaves out a resource loaded before the policy protected it", async () => {
    await using dir = await tmpdir(PROJECT)
    await using g = await guarded(dir.path, [])
    await using s = setup(dir.path, g.host)
    s.h.user()
    await s.load("falcon")
    await s.load("notes")
    const before = await s.loader.listLoaded(s.ctx)
    expect(before.loaded.map((l) => l.id).sort()).toEqual(["falcon", "notes"])
    await g.rewrite(RULES)
    const after = await s.loader.listLoaded(s.ctx)
    expect(after.loaded.map((l) => l.id)).toEqual(["notes"])
    expect(after.totalLoaded).toBe(1)
    expect(after.currentlyActive).toBe(1)
    expect(JSON.stringify(after)).not.toContain("Falcon")
  })

  test("the index cache on disk never holds a protected file; one written before the policy is rewritten", async () => {
    await using dir = await tmpdir(PROJECT)
    const cache = dir.file("cache/index.json")
    {
      await using s = setup(dir.path, {}, { persistCache: true, indexCachePath: cache })
      await s.loader.index()
      await s.loader.flush()
    }
    expect(await fs.readFile(cache, "utf8")).toContain(SECRET)
    await using g = await guarded(dir.path, RULES)
    await using s = setup(dir.path, g.host, { persistCache: true, indexCachePath: cache })
    await s.loader.index()
    await s.loader.flush()
    const text = await fs.readFile(cache, "utf8")
    expect(text).not.toContain(SECRET)
    expect(text).not.toContain("falcon.md")
    expect(text).not.toContain("closer.md")
    expect(text).toContain("Release notes how-to")
  })

  test("an llm-only rule hides as much as a read rule; a symlink into a protected folder is hidden too", async () => {
    await using dir = await tmpdir({
      ".opencode/task/open.md": md({ title: "Open", description: "Open task" }),
      "private/deal.md": md({ title: "Deal", description: SECRET }),
    })
    await fs.symlink(dir.file("private/deal.md"), dir.file(".opencode/task/deal.md"))
    await using g = await guarded(dir.path, [{ pattern: "private", type: "directory", deniedOperations: ["llm"] }])
    await using s = setup(dir.path, g.host)
    const all = await s.loader.query({})
    expect(all.results.map((r) => r.id)).toEqual(["open"])
    s.h.user()
    expect(JSON.parse(await s.load("deal")).error).toBe("AccessDenied")
  })

  test("a policy edited while OpenCode runs takes effect on the next use, both ways (host without a version)", async () => {
    await using dir = await tmpdir(PROJECT)
    await using g = await guarded(dir.path, [])
    await using s = setup(dir.path, g.host)
    // falcon.md by its id and words, the vault's plan by its description.
    expect((await s.loader.query({ query: "falcon" })).total).toBe(2)
    await g.rewrite(RULES)
    expect((await s.loader.query({ query: "falcon" })).total).toBe(0)
    await g.rewrite([])
    expect((await s.loader.query({ query: "falcon" })).total).toBe(2)
  })

  test("with accessVersion the files are checked once per version, not on every query", async () => {
    await using dir = await tmpdir(PROJECT)
    await using g = await guarded(dir.path, RULES, { versioned: true })
    await using s = setup(dir.path, g.host)
    await s.loader.query({ query: "release" })
    const first = g.calls.length
    // Five resource files and one agent file.
    expect(first).toBe(6)
    for (let i = 0; i < 5; i++) await s.loader.query({ query: "release" })
    expect(g.calls.length).toBe(first)
    g.bump()
    await s.loader.query({ query: "release" })
    expect(g.calls.length).toBe(2 * first)
    expect(s.loader.stats.indexBuilds).toBe(1)
  })

  test("without a policy (or a check) results are exactly those of a loader without security", async () => {
    await using dir = await tmpdir(PROJECT)
    await using g = await guarded(dir.path, undefined)
    await using plain = setup(dir.path, {})
    await using checked = setup(dir.path, g.host)
    for (const args of [{}, { query: "release" }, { tags: ["release"] }, { referencedBy: "closer" }]) {
      const a = await plain.loader.query(args)
      const b = await checked.loader.query(args)
      expect(b).toEqual(a)
    }
    plain.h.user()
    checked.h.user()
    const strip = (out: string) => out.replace(/[0-9a-f]{8}/g, "N")
    expect(strip(await checked.load("ship", true))).toBe(strip(await plain.load("ship", true)))
    expect((await plain.loader.query({ query: "falcon" })).total).toBe(2)
    expect((await checked.loader.query({ query: "falcon" })).results.map((r) => path.basename(r.path))).toEqual([
      "falcon.md",
      "plan.md",
    ])
  })

  test("a resource whose frontmatter lies in a protected segment is withheld; segments in a body hide their references", async () => {
    await using dir = await tmpdir({
      ".opencode/task/deal.md": [
        "---",
        "title: Deal",
        "# @secure-start",
        `description: ${SECRET}`,
        "# @secure-end",
        "---",
        "BODY-DEAL",
      ].join("\n"),
      ".opencode/task/plan.md": [
        "---",
        "title: Plan",
        "description: Quarterly plan",
        "---",
        "See [[notes]].",
        "<!-- @secure-start -->",
        "See [[hidden-ref]].",
        "<!-- @secure-end -->",
      ].join("\n"),
      ".opencode/task/hidden-ref.md": md({ title: "Hidden ref", description: "Linked only from a segment" }),
      ".opencode/knowledge-base/notes.md": md({ title: "Notes" }),
    })
    await using g = await guarded(dir.path, [], { markers: true })
    await using s = setup(dir.path, g.host)
    const all = await s.loader.query({})
    expect(all.results.map((r) => r.id).sort()).toEqual(["hidden-ref", "notes", "plan"])
    expect(JSON.stringify(all)).not.toContain(SECRET)
    s.h.user()
    expect(JSON.parse(await s.load("deal"))).toMatchObject({
      error: "AccessDenied",
      reason: ResourceBuild.SEGMENT_REASON,
    })
    const plan = await s.load("plan", true)
    expect(ResourceOutput.header(plan)!.loaded).toEqual(["plan", "notes"])
  })

  test("markers added to the policy later withhold the resource on the next use (the index is rebuilt)", async () => {
    await using dir = await tmpdir({
      ".opencode/task/deal.md": ["---", "# @secure-start", `description: ${SECRET}`, "# @secure-end", "---"].join("\n"),
    })
    await using g = await guarded(dir.path, [], { versioned: true })
    await using s = setup(dir.path, g.host)
    expect((await s.loader.query({})).total).toBe(1)
    await g.rewrite([], true)
    expect((await s.loader.query({})).total).toBe(0)
  })
})
