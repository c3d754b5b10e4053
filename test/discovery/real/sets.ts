/**
 * The real labelled sets: catalogues of public Claude Code collections (tuning.json, heldout.json; see README.md for
 * their provenance) laid out as files the way users install them, and their labelled prompts.
 */
import fs from "fs/promises"
import path from "path"
import type { Labelled } from "../labelled"
import { HELDOUT } from "./heldout-labels"
import { HELDOUT2 } from "./heldout2-labels"
import { HELDOUT3 } from "./heldout3-labels"
import { HELDOUT4 } from "./heldout4-labels"
import { HELDOUT5 } from "./heldout5-labels"
import { HELDOUT6 } from "./heldout6-labels"
import { TUNING } from "./tuning-labels"
import heldout from "./heldout.json"
import heldout2 from "./heldout2.json"
import heldout3 from "./heldout3.json"
import heldout4 from "./heldout4.json"
import heldout5 from "./heldout5.json"
import heldout6 from "./heldout6.json"
import tuning from "./tuning.json"

export type Item = {
  collection: string
  path: string
  name?: string
  description?: string
  lead?: string
  raw?: string
  /** The words of the start of the body (after the first paragraph) as a sorted bag, `word:count …`. */
  body?: string
}
export type Collection = { id: string; repo: string; commit: string; license: string; files: number }
export type RealSet = {
  id: "tuning" | "heldout" | "heldout2" | "heldout3" | "heldout4" | "heldout5" | "heldout6"
  collections: Collection[]
  items: Item[]
  labelled: Labelled[]
}

export const SETS: Record<RealSet["id"], RealSet> = {
  tuning: { id: "tuning", ...(tuning as Omit<RealSet, "id" | "labelled">), labelled: TUNING },
  heldout: { id: "heldout", ...(heldout as Omit<RealSet, "id" | "labelled">), labelled: HELDOUT },
  heldout2: { id: "heldout2", ...(heldout2 as Omit<RealSet, "id" | "labelled">), labelled: HELDOUT2 },
  // Held-out 3: not run yet; the first run of the matcher on it is the independent figure (README.md).
  heldout3: { id: "heldout3", ...(heldout3 as Omit<RealSet, "id" | "labelled">), labelled: HELDOUT3 },
  // Held-out 4: not run yet; kept for one run once the matcher work ends (README.md).
  heldout4: { id: "heldout4", ...(heldout4 as Omit<RealSet, "id" | "labelled">), labelled: HELDOUT4 },
  // Held-out 5: not run yet; kept for one run once the matcher work ends (README.md).
  heldout5: { id: "heldout5", ...(heldout5 as Omit<RealSet, "id" | "labelled">), labelled: HELDOUT5 },
  // Held-out 6: not run yet; kept for one run once the matcher work ends (README.md).
  heldout6: { id: "heldout6", ...(heldout6 as Omit<RealSet, "id" | "labelled">), labelled: HELDOUT6 },
}

/** Real requests that nothing in their catalogue serves: they expect no suggestion, but they are not chatter. */
export const UNSERVED = new Set([
  "translate the app into german",
  // heldout2: nothing in its catalogue integrates a payment provider, sets up linters or git hooks, speeds up a test
  // suite, internationalises an app or writes a token contract (customer-billing-ops says it is "not generic payment
  // API design"; defi-amm-security is a security checklist for AMM pools).
  "integrate stripe checkout for subscriptions",
  "set up eslint and prettier with a pre-commit hook",
  "our test suite takes 20 minutes, speed it up",
  "add i18n so we can ship the app in spanish",
  "write a smart contract for an ERC-20 token",
  // heldout3: nothing in its catalogue works with git history (squash, conflicts, blame), explains a regex, writes a
  // shell script or builds a documentation site.
  "explain what this regex does: ^(?=.*\\d)(?=.*[a-z]).{8,}$",
  "squash my last 5 commits into one",
  "merge conflict in package-lock.json, what do I do",
  "who changed the pricing logic last and why?",
  "bash script that rotates the logs and gzips the old ones",
  "turn the docs folder into a site with mkdocs",
  // heldout4: nothing in its catalogue speeds up a C++ build (its C/C++ agents are copies of held-out 1's and were left
  // out), finds dead code, renames a git branch, resizes images or answers a one-line language question.
  "the c++ build takes forever, speed up compile times",
  "find dead code we can delete",
  "rename the master branch to main",
  "resize all the png icons in assets/ to 64x64",
  "what's the difference between == and === again",
  // heldout5: nothing in its catalogue summarises the work of a session (session-report and receipts report token
  // usage and spend), writes a regex or a cron expression, configures nginx, knows Elixir or converts a Makefile.
  "give me a summary of what we did in this session",
  "write a regex that matches ISO 8601 dates",
  "set up nginx as a reverse proxy with https from let's encrypt",
  "our elixir genserver's mailbox keeps growing",
  "write a cron expression for every weekday at 7am",
  "convert the Makefile to a justfile",
  // heldout6: nothing in its catalogue upgrades a Django app (its python skill is a general guide to writing Python),
  // writes Terraform, knows Android views or Kubernetes autoscaling, or ports jQuery code.
  "upgrade the django app from 3.2 to 4.2",
  "write a terraform module for an s3 bucket with versioning and lifecycle rules",
  "the recyclerview in our android app stutters when scrolling",
  "set up horizontal pod autoscaling for the api deployment on kubernetes",
  "convert this jquery plugin to plain javascript",
])

/** True for a prompt that is chatter ("thanks, that's all"): no label and not an unserved request. */
export function chatter(l: Labelled): boolean {
  return l.relevant.length === 0 && !UNSERVED.has(l.prompt)
}

/**
 * The text of one catalogue file: its frontmatter (as written when it was malformed), its first paragraph (a heading
 * and the line under it when the file began with a heading, as `extract.ts` keeps them), then the words of the rest of
 * the start of its body, each as often as it occurs there (in alphabetical order: the matcher reads words, not prose).
 */
export function text(item: Item): string {
  const [first, ...rest] = (item.lead ?? "").split("\n")
  const words = (item.body ?? "")
    .split(" ")
    .filter(Boolean)
    .map((e) => {
      const at = e.lastIndexOf(":")
      return Array(Number(e.slice(at + 1)))
        .fill(e.slice(0, at))
        .join(" ")
    })
    .join(" ")
  const lead = !item.lead ? "" : rest.length ? `# ${first}\n\n${rest.join("\n")}\n` : `${first}\n`
  const body = words ? `${lead}${lead ? "\n" : ""}${words}\n` : lead
  if (item.raw !== undefined) return `${item.raw}\n\n${body}`
  const front = [
    item.name !== undefined ? `name: ${JSON.stringify(item.name)}` : undefined,
    item.description !== undefined ? `description: ${JSON.stringify(item.description)}` : undefined,
  ].filter((l) => l !== undefined)
  return front.length ? `---\n${front.join("\n")}\n---\n\n${body}` : body
}

/**
 * Writes a set's catalogue below `root` (`home/` is the home directory, `project/` the project) and returns both.
 *
 * @example
 * const { home, project } = await layout(SETS.tuning, await fs.mkdtemp(path.join(os.tmpdir(), "real-")))
 */
export async function layout(set: RealSet, root: string): Promise<{ home: string; project: string }> {
  const dirs = new Set<string>()
  for (const item of set.items) dirs.add(path.dirname(path.join(root, item.path)))
  await Promise.all([...dirs].map((d) => fs.mkdir(d, { recursive: true })))
  await fs.mkdir(path.join(root, "project"), { recursive: true })
  await Promise.all(set.items.map((item) => fs.writeFile(path.join(root, item.path), text(item))))
  return { home: path.join(root, "home"), project: path.join(root, "project") }
}
