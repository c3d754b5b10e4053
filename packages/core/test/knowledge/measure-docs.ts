/**
 * Measures knowledge injection on a real docs folder (not a test: the docs are fetched, not committed). Copies the
 * folder's Markdown pages (flattened) into a temp project's knowledge base, indexes it with the resource loader, and
 * ranks each labelled prompt of `fixtures/httpx-prompts.json` (written before looking at any ranking).
 *
 *   git --git-dir=<mirror of encode/httpx> archive HEAD docs | tar -x -C /tmp/httpx
 *   bun packages/core/test/knowledge/measure-docs.ts /tmp/httpx/docs
 */
import fs from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { KnowledgeBuild } from "../../knowledge/build"
import { ResourceLoader } from "../../resource/loader"
import { Logger } from "../../util/log"
import prompts from "./fixtures/httpx-prompts.json"

const source = process.argv[2]
if (!source) throw new Error("usage: measure-docs.ts <docs folder>")
const root = await fs.mkdtemp(path.join(os.tmpdir(), "ocb-measure-docs-"))
try {
  const kb = path.join(root, ".opencode", "knowledge-base")
  await fs.mkdir(kb, { recursive: true })
  for (const file of await fs.readdir(source, { recursive: true }))
    if (file.endsWith(".md")) await fs.copyFile(path.join(source, file), path.join(kb, path.basename(file)))
  const loader = ResourceLoader.create(
    { directory: root, worktree: root, log: Logger.silent, messages: async () => [] },
    { persistCache: false },
  )
  const resources = [...(await loader.index()).resources.values()]
  let wanted = 0
  let found = 0
  let injected = 0
  let clean = 0
  for (const [prompt, expected] of prompts as [string, string[]][]) {
    const got = KnowledgeBuild.rankResources(prompt, resources).map((r) => r.id)
    wanted += expected.length
    found += expected.filter((id) => got.includes(id)).length
    injected += got.length
    if (!expected.length && !got.length) clean++
    console.log(`${JSON.stringify(prompt)} -> ${got.join(", ") || "(nothing)"}   expected: ${expected.join(", ")}`)
  }
  const unrelated = (prompts as [string, string[]][]).filter(([, e]) => !e.length).length
  console.log(
    `recall ${found}/${wanted}, ${injected} injected (${found} expected), ${clean}/${unrelated} unrelated get nothing`,
  )
  await loader.dispose()
} finally {
  await fs.rm(root, { recursive: true, force: true })
}
