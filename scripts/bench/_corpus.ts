// A realistic resource corpus for benchmarks: markdown resources of every type with YAML frontmatter (title,
// description, tags, references to other resources), JSON schemas with $ref, spread over domain folders, plus agent
// and command files that mention resources. Deterministic for a given size (seeded generator).
import fs from "fs/promises"
import os from "os"
import path from "path"

const TYPES = ["checklist", "knowledge-base", "task", "template", "schema"] as const
const DOMAINS = ["dev", "docs", "core", "opencode", "ops", "team"]
const WORDS =
  "api auth backup build cache canary cluster commit config database deploy docker dns feature flag git incident index kubernetes latency lint logging merge metrics migration monitor network oncall pipeline queue rebase release review rollback schema security shard storage test token tracing upgrade vault webhook".split(
    " ",
  )
const SENTENCES = [
  "Check the dashboard before and after the change and note anything unusual.",
  "Every step below is reversible; the last section explains how to undo it.",
  "Run the command in a staging environment first and compare the output.",
  "Ask the owning team in their channel if an alert fires during the change.",
  "Write down the time you started so the incident timeline is easy to build.",
  "Keep the previous version available until the new one has served a full day.",
]

function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

export type Corpus = { dir: string; files: string[]; ids: string[]; bytes: number; cleanup(): Promise<void> }

/** Writes `count` resources (and count/50 agent and command files) into a new temporary project. */
export async function corpus(count: number, seed = 42): Promise<Corpus> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `ocb-corpus-${count}-`))
  const random = rng(seed)
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]
  const ids = Array.from({ length: count }, (_, i) => `${pick(WORDS)}-${pick(WORDS)}-${i}`)
  const files: string[] = []
  let bytes = 0
  const write = async (rel: string, text: string) => {
    const file = path.join(dir, rel)
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, text)
    files.push(file)
    bytes += Buffer.byteLength(text)
  }
  for (let i = 0; i < count; i++) {
    const type = TYPES[i % TYPES.length]
    const domain = pick(DOMAINS)
    const id = ids[i]
    const tags = [...new Set([pick(WORDS), pick(WORDS), pick(WORDS)])]
    const refs = Array.from({ length: Math.floor(random() * 4) }, () => ids[Math.floor(random() * count)]).filter(
      (r) => r !== id,
    )
    const title = id
      .split("-")
      .slice(0, 2)
      .map((w) => w[0].toUpperCase() + w.slice(1))
      .join(" ")
    if (type === "schema") {
      const schema = {
        $id: id,
        title: `${title} schema`,
        description: `Shape of the ${tags[0]} settings`,
        "x-tags": tags,
        type: "object",
        properties: Object.fromEntries([
          ...tags.map((t) => [t, { type: "string" }]),
          ...refs.map((r) => [r, { $ref: `${r}.json` }]),
        ]),
      }
      await write(`.opencode/schema/${domain}/${id}.json`, JSON.stringify(schema, null, 2))
      continue
    }
    const paragraphs = Array.from({ length: 2 + Math.floor(random() * 6) }, () =>
      Array.from({ length: 3 + Math.floor(random() * 4) }, () => pick(SENTENCES)).join(" "),
    )
    const body = [
      `# ${title}`,
      "",
      ...paragraphs.flatMap((p, n) => [`## Step ${n + 1}`, "", p, ""]),
      refs.length ? `See also ${refs.map((r) => `[[${r}]]`).join(", ")}.` : "",
    ].join("\n")
    const front = [
      "---",
      `id: ${id}`,
      `title: ${title}`,
      `description: How to handle ${tags.join(", ")} in the ${domain} area`,
      `tags: [${tags.join(", ")}]`,
      `category: ${pick(WORDS)}`,
      `version: 1.${i % 10}.0`,
      `author: team-${pick(DOMAINS)}`,
      `created: 2025-0${1 + (i % 9)}-1${i % 10}`,
      `status: ${pick(["draft", "stable", "deprecated"])}`,
      "---",
    ].join("\n")
    await write(`.opencode/${type}/${domain}/${id}.md`, `${front}\n${body}\n`)
  }
  for (let i = 0; i < Math.max(1, Math.floor(count / 50)); i++) {
    const mentions = Array.from({ length: 5 }, () => ids[Math.floor(random() * count)])
    await write(
      `.opencode/${i % 2 ? "command" : "agent"}/helper-${i}.md`,
      `---\ndescription: helper ${i}\n---\nYou help with ${pick(WORDS)}. Start from [[${mentions[0]}]]; also consult ${mentions.slice(1).join(", ")}.\n`,
    )
  }
  return { dir, files, ids, bytes, cleanup: () => fs.rm(dir, { recursive: true, force: true }) }
}
