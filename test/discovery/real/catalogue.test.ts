import { afterAll, expect, test } from "bun:test"
import fs from "fs/promises"
import os from "os"
import path from "path"
import { realpathSync } from "fs"
import { DynamicDiscovery } from "@opencode-builtins/core/discovery/discover"
import { DiscoveryParse } from "@opencode-builtins/core/discovery/parse"
import { SETS, UNSERVED, chatter, layout, type RealSet } from "./sets"

/**
 * The later held-out sets are complete as installed: every file of the set's fixture, laid out as sets.ts lays it out,
 * is discovered (or shadowed by a file of the same type and name), and every label names a discovered entry. This
 * lists the catalogues only and ranks no prompt, so it can run while a set is kept unmatched (README.md).
 */

const roots: string[] = []
afterAll(async () => {
  for (const root of roots) await fs.rm(root, { recursive: true, force: true })
})

const CASES: {
  name: string
  set: RealSet
  /** Files read leniently (an unquoted `: ` in a description, for instance) are allowed; none is ever refused. */
  lenient: boolean
  /** [shadowed file, the file that wins], relative to the temporary root. */
  shadowed: [string, string][]
  /** Files of `.claude/agents` that are no agent (no name, no description), skipped with the reason. */
  documents?: string[]
  unserved: number
}[] = [
  {
    name: "held-out 3",
    set: SETS.heldout3,
    lenient: true,
    // Two collections hold a skill named changelog-generator: the project's copy wins, as it would for a user.
    shadowed: [
      ["home/.claude/skills/changelog-generator/SKILL.md", "project/.claude/skills/changelog-generator/SKILL.md"],
    ],
    unserved: 6,
  },
  {
    name: "held-out 4",
    set: SETS.heldout4,
    lenient: false,
    // Two collections hold a command named implement: the project's copy (wshobson's) wins.
    shadowed: [["home/.claude/commands/implement.md", "project/.claude/commands/implement.md"]],
    unserved: 5,
  },
  {
    name: "held-out 5",
    set: SETS.heldout5,
    // pr-review-toolkit's silent-failure-hunter has an unquoted `: ` in its description and is read leniently.
    lenient: true,
    shadowed: [],
    // thomasvan-toolkit's "Agent Base Instructions", rules injected into agents, no frontmatter: no agent itself.
    documents: ["home/.claude/agents/base-instructions.md"],
    unserved: 6,
  },
  {
    name: "held-out 6",
    set: SETS.heldout6,
    lenient: true,
    shadowed: [],
    unserved: 5,
  },
]

for (const c of CASES)
  test(`${c.name}: every file is discovered and every label names a discovered entry`, async () => {
    const root = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), "ocb-discovery-catalogue-")))
    roots.push(root)
    const { home, project } = await layout(c.set, root)
    const cat = await DynamicDiscovery.create({
      directory: project,
      worktree: project,
      env: { HOME: home },
      // Completeness, not scan speed: a busy machine must not run past the default 2 s scan budget.
      config: { scanTimeoutMs: 60_000 },
    }).catalogue()

    expect(cat.degraded).toEqual([])
    const documents = c.documents ?? []
    expect(
      cat.problems
        .filter((p) => !c.lenient || p.severity !== "warning")
        .map((p) => [path.relative(root, p.path), p.error]),
    ).toEqual(documents.map((d) => [d, DiscoveryParse.NOT_AN_AGENT]))
    const discovered = new Set(cat.items.map((i) => path.relative(root, i.filePath)))
    const shadowed = cat.shadowed.map((s) => [path.relative(root, s.item.filePath), path.relative(root, s.by)])
    expect(shadowed).toEqual(c.shadowed)
    const lost = c.set.items.filter(
      (i) => !discovered.has(i.path) && !shadowed.some(([p]) => p === i.path) && !documents.includes(i.path),
    )
    expect(lost.map((i) => i.path)).toEqual([])
    expect(cat.items.length).toBe(c.set.items.length - c.shadowed.length - documents.length)

    const keys = new Set(cat.items.map((i) => `${i.resourceType}:${i.name}`))
    const unknown = c.set.labelled.flatMap((l) =>
      l.relevant.filter((k) => !keys.has(k)).map((k) => `${l.prompt} -> ${k}`),
    )
    expect(unknown).toEqual([])
    expect(c.set.labelled.filter(chatter).length).toBe(8)
    expect(c.set.labelled.filter((l) => UNSERVED.has(l.prompt)).length).toBe(c.unserved)
  }, 120_000)
