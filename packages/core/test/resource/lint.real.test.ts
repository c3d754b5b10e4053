import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { ResourceLint } from "../../resource/lint"
import { ResourceLoader } from "../../resource/loader"
import { Logger } from "../../util/log"
import { run } from "../../resource/cli"
import { memoryIO } from "../../util/cli"
import { tmpdir } from "../fixture"

/**
 * Lint over shapes of real repositories (`fixtures/real-shapes/`, each file naming its source): SchemaStore's schemas
 * under `.opencode/schema`, Hugo's docs and a Claude Code skills collection under `.opencode/knowledge-base`, agents
 * under `.claude/agents`. Every error reported must be a true one; the true ones were checked with ajv (schemas) and
 * the file system (links).
 */
const FIXTURE = path.join(import.meta.dir, "fixtures", "real-shapes")

async function lintOf(extra: Record<string, string> = {}) {
  const dir = await tmpdir(extra)
  await fs.cp(FIXTURE, dir.path, { recursive: true })
  return { dir, report: await ResourceLint.run(dir.path) }
}

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

describe("lint over real shapes: only true errors", () => {
  test("the errors are exactly the true ones: a dangling $ref (ajv agrees), a reused $id, file names used twice, a missing page", async () => {
    const { dir, report } = await lintOf()
    await using _ = dir
    // Each skill's SKILL.md takes its folder's name as id (api-design, deployment): not a duplicate.
    const index = await indexOf(dir.path)
    expect(index.resources.get("api-design")?.relativePath).toBe(".opencode/knowledge-base/skills/api-design/SKILL.md")
    expect(index.resources.get("deployment")?.relativePath).toBe(".opencode/knowledge-base/skills/deployment/SKILL.md")
    expect(index.resources.has("SKILL")).toBe(false)
    // In lint's order: by path.
    expect(errors(report)).toEqual([
      "dangling-reference .opencode/knowledge-base/content-management/multilingual.md 'multilingual' references 'missing-page', which matches no resource",
      "duplicate-id .opencode/knowledge-base/vault/Plugins/Templates.md duplicate id 'Templates': .opencode/knowledge-base/vault/Clipper/Templates.md is used, .opencode/knowledge-base/vault/Plugins/Templates.md is ignored; to index both, give it an id of its own in its frontmatter (id: Plugins-Templates)",
      "duplicate-id .opencode/knowledge-base/vault/Sync/Security and privacy.md duplicate id 'security-and-privacy': .opencode/knowledge-base/vault/Publish/Security and privacy.md is used, .opencode/knowledge-base/vault/Sync/Security and privacy.md is ignored; to index both, give it an id of its own in its frontmatter (id: Sync-security-and-privacy)",
      "duplicate-id .opencode/schema/anywork-ac-1.1.json duplicate id 'anywork-ac-1.0': declares the same $id as .opencode/schema/anywork-ac-1.0.json (used), .opencode/schema/anywork-ac-1.1.json is ignored; a schema is named by its $id: give one of them its own",
      "dangling-reference .opencode/schema/base-04.json 'base-04' references 'osi-license', which matches no resource",
    ])
    expect(report.warnings).toBe(0)
  })

  test("schema $refs resolve against the $id in scope (draft-04 `id` too), with or without the .json extension", async () => {
    const { dir } = await lintOf()
    await using _ = dir
    const index = await indexOf(dir.path)
    const forward = (id: string) => [...(index.graph.forward.get(id) ?? [])].sort()
    expect(forward("feed")).toEqual(["feed-1"])
    expect(forward("grunt-clean-task")).toEqual(["grunt-task"])
    // Internal: the subschema named `path`, the document's own $id; external: the meta-schema, a GitHub URL.
    expect(forward("base-04")).toEqual([])
    expect(index.dangling.get("base-04")).toEqual(["osi-license"])
    expect(index.dangling.has("aio-connector-metadata-10.0-preview")).toBe(false)
    // `$ref` keys inside enum/default are instance data.
    expect(index.resources.get("aio-connector-metadata-10.0-preview")!.references).toEqual([])
    // Two different `…/schema` $ids: the first keeps `schema`, the other its file name.
    expect(index.resources.get("schema")!.relativePath).toBe(".opencode/schema/kya.json")
    expect(index.resources.get("specif-1.1")!.name).toBe("SpecIF 1.1")
  })

  test("TOML [[tables]] in Hugo and Docsy code shortcodes, indented fences and array literals are not wiki links", async () => {
    const { dir, report } = await lintOf()
    await using _ = dir
    const byName = report.problems.filter((p) => p.path.endsWith("ByName.md"))
    expect(byName).toEqual([])
    const index = await indexOf(dir.path)
    // The real link after the self-closing shortcode is kept, as are links outside code; agents' code is skipped.
    expect([...(index.graph.forward.get("ByName") ?? [])]).toEqual(["multilingual"])
    // Docsy: tabs of a tab pane are code, unless the pane is text=true.
    expect([...(index.graph.forward.get("versioning") ?? [])]).toEqual(["multilingual"])
    expect(index.dangling.get("multilingual")).toEqual(["missing-page"])
    expect([...(index.graph.agents.get("backend-architect") ?? [])].sort()).toEqual(["ByName", "multilingual"])
  })

  test("wiki links of a notes vault resolve as the notes app does: by title in any case, through folders, to a section", async () => {
    const { dir, report } = await lintOf()
    await using _ = dir
    expect(report.problems.filter((p) => p.path.endsWith("Set up Sync.md"))).toEqual([])
    const index = await indexOf(dir.path)
    // `[[publish/SECURITY AND PRIVACY#Encryption|…]]` and `[[Templates]]` (no note of that name in the linking folder:
    // the shortest path) are links; `[[Security and privacy]]` names the note in the same folder and
    // `[[Plugins/Templates]]` a folder's note, both left out as duplicates (reported as such, not as dangling); the
    // page's own sections, the embedded image and icon and a PDF are no resources.
    expect([...(index.graph.forward.get("set-up-sync") ?? [])].sort()).toEqual(["Templates", "security-and-privacy"])
    expect(index.resources.get("security-and-privacy")!.relativePath).toBe(
      ".opencode/knowledge-base/vault/Publish/Security and privacy.md",
    )
    expect(index.dangling.has("set-up-sync")).toBe(false)
  })

  test("a valid schema over the 1 MB load limit is parsed whole: no invalid-json, only an oversize warning", async () => {
    // Shape of SchemaStore's vector.json (1.5 MB) and utcm-monitor.json (2.7 MB): a large `definitions` map.
    const definitions: Record<string, unknown> = {}
    for (let i = 0, size = 0; size < 1.2 * 1024 * 1024; i++) {
      const component = {
        description: `Component ${i} of the pipeline: ${"x".repeat(200)}`,
        type: "object",
        properties: { inputs: { type: "array", items: { type: "string" } } },
      }
      definitions[`component_${i}`] = component
      size += JSON.stringify(component).length
    }
    const big = JSON.stringify(
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        $id: "https://json.schemastore.org/vector.json",
        title: "Vector",
        definitions,
      },
      null,
      2,
    )
    await using dir = await tmpdir({ ".opencode/schema/vector.json": big })
    const report = await ResourceLint.run(dir.path)
    expect(report.errors).toBe(0)
    expect(report.problems.map((p) => `${p.severity} ${p.code}`)).toEqual(["warning oversize"])
    const io = memoryIO(dir.path)
    expect(await run(["lint"], io)).toBe(0)
    expect(io.stdout).toContain("1 resource(s)")
  })
})
