import { afterAll, expect, test } from "bun:test"
import fs from "fs/promises"
import os from "os"
import path from "path"
import { realpathSync } from "fs"
import { DynamicDiscovery } from "@opencode-builtins/core/discovery/discover"
import { SETS, UNSERVED, chatter, layout } from "./sets"

/**
 * The fourth held-out set is complete as installed: every file of heldout4.json, laid out as sets.ts lays it out, is
 * discovered (or shadowed by a file of the same type and name), and every label names a discovered entry. This lists
 * the catalogue only: the set stays unmatched until its one evaluation run (README.md), so nothing here ranks a prompt.
 */

const roots: string[] = []
afterAll(async () => {
  for (const root of roots) await fs.rm(root, { recursive: true, force: true })
})

test("held-out 4: every file is discovered and every label names a discovered entry", async () => {
  const set = SETS.heldout4
  const root = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), "ocb-discovery-heldout4-")))
  roots.push(root)
  const { home, project } = await layout(set, root)
  const cat = await DynamicDiscovery.create({ directory: project, worktree: project, env: { HOME: home } }).catalogue()

  expect(cat.degraded).toEqual([])
  // No file is refused, and none needs the lenient reading either.
  expect(cat.problems).toEqual([])
  const discovered = new Set(cat.items.map((i) => path.relative(root, i.filePath)))
  const shadowed = cat.shadowed.map((s) => [path.relative(root, s.item.filePath), path.relative(root, s.by)])
  // Two collections hold a command named implement: the project's copy (wshobson's) wins, as it would for a user.
  expect(shadowed).toEqual([["home/.claude/commands/implement.md", "project/.claude/commands/implement.md"]])
  const lost = set.items.filter((i) => !discovered.has(i.path) && !shadowed.some(([p]) => p === i.path))
  expect(lost.map((i) => i.path)).toEqual([])
  expect(cat.items.length).toBe(set.items.length - 1)

  const keys = new Set(cat.items.map((i) => `${i.resourceType}:${i.name}`))
  const unknown = set.labelled.flatMap((l) => l.relevant.filter((k) => !keys.has(k)).map((k) => `${l.prompt} -> ${k}`))
  expect(unknown).toEqual([])
  expect(set.labelled.filter(chatter).length).toBe(8)
  expect(set.labelled.filter((l) => UNSERVED.has(l.prompt)).length).toBe(5)
}, 120_000)
