// Builds the catalogue fixtures of the real labelled sets (tuning.json, heldout.json) from local clones of the public
// collections named below. Not run by the tests (the clones are not part of the project): kept so that the fixtures'
// provenance is reproducible. Usage: bun test/discovery/real/extract.ts <folder holding owner+name/repo clones> [set…]
// (every set when none is named).
//
// Each item keeps only what discovery reads to match: its installed path, frontmatter `name` and `description`
// (descriptions over 500 characters are shortened at a word), and the first paragraph of the body (at most 300
// characters; Claude Code shows a command's first line when it has no description), and the words of the start of the
// body as a sorted bag (`bag`), not its prose. Frontmatter that YAML refuses is kept as written (`raw`) so the fixture
// reproduces the malformed files.
import fs from "fs"
import path from "path"
import { Frontmatter } from "../../../packages/core/util/frontmatter"
import { DiscoveryParse } from "../../../packages/core/discovery/parse"
import { Keywords } from "../../../packages/core/discovery/keywords"
import { Discovery } from "../../../packages/core/discovery/schema"
import { bunSpawnSync } from "../../../packages/core/test/spawn-sync"

type SetId = "tuning" | "heldout" | "heldout2" | "heldout3" | "heldout4" | "heldout5" | "heldout6"

type Collection = {
  id: string
  repo: string
  license: string
  set: SetId
  match: RegExp
  to: (p: string) => string
  /** Items whose licence is not open: their description is replaced by one written for this project. */
  paraphrase?: Record<string, string>
  /** Paths left out: copies of an earlier set's files (an independent set must not repeat them). */
  exclude?: RegExp
  /**
   * A malformed frontmatter cut at 800 characters keeps its closing `---`: without it the cut file is refused where
   * the real one is read leniently (held-out 3 on; the earlier sets were made without it and are kept as they are).
   */
  closeRaw?: boolean
  /** Files installed at the same path as an earlier one (in path order) are left out: the first is kept (held-out 4). */
  unique?: boolean
}

export const COLLECTIONS: Collection[] = [
  {
    id: "voltagent",
    repo: "VoltAgent/awesome-claude-code-subagents",
    license: "MIT",
    set: "tuning",
    match: /^categories\/[^/]+\/[^/]+\.md$/,
    to: (p) => `home/.claude/agents/${path.basename(p)}`,
  },
  {
    id: "wshobson-commands",
    repo: "wshobson/commands",
    license: "MIT",
    set: "tuning",
    match: /^(tools|workflows)\/[^/]+\.md$/,
    to: (p) => `home/.claude/commands/${p}`,
  },
  {
    id: "anthropic-skills",
    repo: "anthropics/skills",
    license: "Apache-2.0 (docx, pdf, pptx, xlsx: proprietary; their descriptions here are paraphrased)",
    set: "tuning",
    match: /^skills\/[^/]+\/SKILL\.md$/,
    to: (p) => `home/.claude/${p}`,
    paraphrase: {
      docx: "Create, read and edit Word documents (.docx): tracked changes, comments, formatting, tables of contents.",
      pdf: "Work with PDF files: extract text and tables, merge or split, fill forms, add watermarks, create new PDFs.",
      pptx: "Create and edit PowerPoint presentations (.pptx): slide decks, layouts, speaker notes, charts.",
      xlsx: "Create, read and edit spreadsheets (.xlsx, .csv): formulas, formatting, charts, data cleaning.",
    },
  },
  {
    id: "0xfurai",
    repo: "0xfurai/claude-code-subagents",
    license: "MIT",
    set: "heldout",
    match: /^agents\/[^/]+\.md$/,
    to: (p) => `home/.claude/agents/${path.basename(p)}`,
  },
  {
    id: "superpowers",
    repo: "obra/superpowers",
    license: "MIT",
    set: "heldout",
    match: /^skills\/[^/]+\/SKILL\.md$/,
    to: (p) => `home/.claude/${p}`,
  },
  {
    id: "command-suite",
    repo: "qdhenry/Claude-Command-Suite",
    license: "MIT (README badge)",
    set: "heldout",
    match: /^\.claude\/(commands\/.+|agents\/.+|skills\/[^/]+\/SKILL)\.md$/,
    to: (p) => `project/${p}`,
  },
  {
    id: "everything-claude-code",
    repo: "affaan-m/everything-claude-code",
    license: "MIT",
    set: "heldout2",
    match: /^(agents\/[^/]+|commands\/[^/]+|skills\/[^/]+\/SKILL)\.md$/,
    to: (p) => `home/.claude/${p}`,
  },
  {
    id: "superclaude",
    repo: "SuperClaude-Org/SuperClaude_Framework",
    license: "MIT",
    set: "heldout2",
    match: /^src\/superclaude\/(agents|commands)\/[^/]+\.md$/,
    // Its installer puts the commands in ~/.claude/commands/sc/ (invoked as /sc:analyze) and the agents beside others.
    to: (p) =>
      `home/.claude/${p.replace(/^src\/superclaude\/commands\//, "commands/sc/").replace(/^src\/superclaude\//, "")}`,
  },
  {
    id: "jeffallan-skills",
    repo: "Jeffallan/claude-skills",
    license: "MIT",
    set: "heldout2",
    match: /^skills\/[^/]+\/SKILL\.md$/,
    to: (p) => `project/.claude/${p}`,
  },
  {
    id: "awesome-claude-agents",
    repo: "vijaythecoder/awesome-claude-agents",
    license: "MIT",
    set: "heldout2",
    match: /^agents\/.+\.md$/,
    // Its README links or copies the agents folder to ~/.claude/agents/awesome-claude-agents; here the project holds it.
    to: (p) => `project/.claude/agents/awesome-claude-agents/${p.slice("agents/".length)}`,
  },
  {
    id: "rshah-subagents",
    repo: "rshah515/claude-code-subagents",
    license: "MIT",
    set: "heldout3",
    closeRaw: true,
    // One folder per category; its README installs them all flat in ~/.claude/agents.
    match: /^[a-z0-9-]+\/(?:[a-z0-9-]+\/)?[^/]+\.md$/,
    to: (p) => `home/.claude/agents/${path.basename(p)}`,
  },
  {
    id: "alirezarezvani-skills",
    repo: "alirezarezvani/claude-skills",
    license: "MIT",
    set: "heldout3",
    closeRaw: true,
    // The engineering skills (its INSTALLATION.md copies skill folders to ~/.claude/skills), its commands and agents.
    match: /^((engineering|engineering-team)\/skills\/[^/]+\/SKILL|commands\/[^/]+|agents\/[a-z-]+\/[a-z0-9-]+)\.md$/,
    to: (p) => `home/.claude/${p.replace(/^(engineering|engineering-team)\//, "")}`,
  },
  {
    id: "buildwithclaude-skills",
    repo: "davepoon/buildwithclaude",
    license: "MIT (artifacts-builder and resemble-detect: Apache-2.0; agent-memory-discipline: CC0-1.0)",
    set: "heldout3",
    closeRaw: true,
    match: /^plugins\/all-skills\/skills\/[^/]+\/SKILL\.md$/,
    // Its catalogue's skills copied into the project; twelve are copies of anthropics/skills (the tuning set, four of
    // them proprietary) and are left out.
    exclude:
      /\/skills\/(brand-guidelines|canvas-design|docx|internal-comms|mcp-builder|pdf|pptx|skill-creator|slack-gif-creator|theme-factory|webapp-testing|xlsx)\//,
    to: (p) => `project/.claude/${p.slice("plugins/all-skills/".length)}`,
  },
  {
    id: "centminmod-setup",
    repo: "centminmod/my-claude-code-setup",
    license: "MIT",
    set: "heldout3",
    closeRaw: true,
    // Its README copies the repository into the project.
    match: /^\.claude\/(agents\/[^/]+|commands\/.+|skills\/[^/]+\/SKILL)\.md$/,
    to: (p) => `project/${p}`,
  },
  {
    id: "feiskyer-settings",
    repo: "feiskyer/claude-code-settings",
    license: "MIT",
    set: "heldout3",
    closeRaw: true,
    // Its README clones the repository as ~/.claude.
    match: /^commands\/.+\.md$/,
    to: (p) => `home/.claude/${p}`,
  },
  {
    id: "wshobson-agents",
    repo: "wshobson/agents",
    license: "MIT",
    set: "heldout4",
    closeRaw: true,
    unique: true,
    // A marketplace of plugins, each with agents, commands and skills; here the agents are copied flat to ~/.claude/agents
    // and the commands and skills into the project. An agent named in several plugins is kept once (the first plugin in
    // path order). Left out as copies of earlier sets: ten agents whose description (in one plugin or more) repeats one
    // of held-out 1 (Command Suite), a skill that repeats one of held-out 2, and the commands named like wshobson/commands'
    // (the tuning set: their ancestors).
    match: /^plugins\/[^/]+\/(agents\/[^/]+|commands\/[^/]+|skills\/[^/]+\/SKILL)\.md$/,
    exclude:
      /\/agents\/(search-specialist|sales-automator|debugger|error-detective|javascript-pro|payment-integration|quant-analyst|risk-manager|c-pro|cpp-pro)\.md$|\/skills\/recsys-pipeline-architect\/|\/commands\/(accessibility-audit|ai-assistant|ai-review|api-mock|code-explain|code-migrate|compliance-check|config-validate|context-restore|context-save|cost-optimize|data-driven-feature|data-pipeline|debug-trace|deps-audit|deps-upgrade|doc-generate|error-analysis|error-trace|feature-development|full-review|full-stack-feature|git-workflow|improve-agent|incident-response|issue|langchain-agent|legacy-modernize|ml-pipeline|monitor-setup|multi-agent-optimize|multi-agent-review|multi-platform|onboard|performance-optimization|pr-enhance|prompt-optimize|refactor-clean|security-hardening|slo-implement|smart-debug|smart-fix|standup-notes|tdd-cycle|tdd-green|tdd-red|tdd-refactor|tech-debt|workflow-automate)\.md$/,
    to: (p) => {
      const [, , kind, ...rest] = p.split("/")
      return kind === "agents" ? `home/.claude/agents/${rest.join("/")}` : `project/.claude/${kind}/${rest.join("/")}`
    },
  },
  {
    id: "taches-resources",
    repo: "glittercowboy/taches-cc-resources",
    license: "MIT",
    set: "heldout4",
    closeRaw: true,
    // Its README copies commands/ and skills/ to ~/.claude (the agents beside them). The two skills under
    // skills/expertise/ are knowledge bases other skills load, one level too deep to be discovered: left out.
    match: /^(agents\/[^/]+|commands\/.+|skills\/[^/]+\/SKILL)\.md$/,
    to: (p) => `home/.claude/${p}`,
  },
  {
    id: "ccplugins",
    repo: "brennercruvinel/CCPlugins",
    license: "MIT",
    set: "heldout4",
    closeRaw: true,
    // Its installer copies the commands to ~/.claude/commands.
    match: /^commands\/[^/]+\.md$/,
    to: (p) => `home/.claude/${p}`,
  },
  {
    id: "claude-plugins-official",
    repo: "anthropics/claude-plugins-official",
    license: "Apache-2.0",
    set: "heldout5",
    closeRaw: true,
    unique: true,
    // Anthropic's plugin marketplace (plugins/ only: external_plugins/ are third parties' with their own licences).
    // Installed by hand in ~/.claude: agents flat (a name in several plugins kept once, the first plugin in path order),
    // commands in a folder per plugin (as a plugin's commands are namespaced, /plugin:command), skills flat. Left out:
    // example-plugin (a demonstration of the layout), and the fourteen files that earlier sets already hold in copies
    // (a description or lead repeated, or most of its words: code-review, code-simplifier, feature-dev's command,
    // code-architect and code-explorer, frontend-design, hookify's commands and skill, review-pr, skill-creator, commit).
    match: /^plugins\/[^/]+\/(agents\/[^/]+|commands\/[^/]+|skills\/[^/]+\/SKILL)\.md$/,
    exclude:
      /^plugins\/example-plugin\/|^plugins\/(code-review\/commands\/code-review|code-simplifier\/agents\/code-simplifier|feature-dev\/agents\/code-architect|feature-dev\/agents\/code-explorer|feature-dev\/commands\/feature-dev|frontend-design\/skills\/frontend-design\/SKILL|hookify\/commands\/(configure|help|hookify|list)|hookify\/skills\/writing-rules\/SKILL|pr-review-toolkit\/commands\/review-pr|skill-creator\/skills\/skill-creator\/SKILL|commit-commands\/commands\/commit)\.md$/,
    to: (p) => {
      const [, plugin, kind, ...rest] = p.split("/")
      return kind === "commands"
        ? `home/.claude/commands/${plugin}/${rest.join("/")}`
        : `home/.claude/${kind}/${rest.join("/")}`
    },
  },
  {
    id: "thomasvan-toolkit",
    repo: "thomasvan/claude-code-toolkit",
    license: "MIT",
    set: "heldout5",
    closeRaw: true,
    // Its install.sh links agents/, commands/ and skills/ into ~/.claude. All but one of its skills sit in category
    // folders (skills/<category>/<name>/SKILL.md), one level too deep to be discovered: left out. Its data-engineer
    // agent is left out as a copy (most of its description's words are an earlier set's data-engineer's).
    match: /^(agents\/[^/]+|commands\/[^/]+|skills\/[^/]+\/SKILL)\.md$/,
    exclude: /^agents\/data-engineer\.md$/,
    to: (p) => `home/.claude/${p}`,
  },
  {
    id: "game-studios",
    repo: "Donchitos/Claude-Code-Game-Studios",
    license: "MIT",
    set: "heldout5",
    closeRaw: true,
    // Its README clones the repository as the game's project.
    match: /^\.claude\/(agents\/[^/]+|skills\/[^/]+\/SKILL)\.md$/,
    to: (p) => `project/${p}`,
  },
  {
    id: "scientific-skills",
    repo: "K-Dense-AI/claude-scientific-skills",
    license: "MIT",
    set: "heldout5",
    closeRaw: true,
    // Its README installs the skills with `npx skills add`, into ~/.claude/skills. Its docx, pdf, pptx and xlsx skills
    // are marked proprietary (Anthropic's, with their LICENSE.txt): left out.
    match: /^scientific-skills\/[^/]+\/SKILL\.md$/,
    exclude: /^scientific-skills\/(docx|pdf|pptx|xlsx)\//,
    to: (p) => `home/.claude/skills/${p.slice("scientific-skills/".length)}`,
  },
  {
    id: "melodic-plugins",
    repo: "melodic-software/claude-code-plugins",
    license: "MIT",
    set: "heldout6",
    closeRaw: true,
    unique: true,
    // A marketplace of plugins (plugins/ only: the repository's own .claude/ is left out). Installed by hand in
    // ~/.claude: agents flat (a name in several plugins kept once, the first plugin in path order), commands in a folder
    // per plugin (as a plugin's commands are namespaced, /plugin:command), skills flat.
    match: /^plugins\/[^/]+\/(agents\/[^/]+|commands\/[^/]+|skills\/[^/]+\/SKILL)\.md$/,
    to: (p) => {
      const [, plugin, kind, ...rest] = p.split("/")
      return kind === "commands"
        ? `home/.claude/commands/${plugin}/${rest.join("/")}`
        : `home/.claude/${kind}/${rest.join("/")}`
    },
  },
  {
    id: "compound-engineering",
    repo: "EveryInc/compound-engineering-plugin",
    license: "MIT",
    set: "heldout6",
    closeRaw: true,
    unique: true,
    // A plugin whose workflows are skills (its agents are reference files inside the skills, not discovered); installed
    // in ~/.claude/skills. Its test fixtures and the repository's own .claude/ and .agents/ are left out.
    match: /^skills\/[^/]+\/SKILL\.md$/,
    to: (p) => `home/.claude/${p}`,
  },
  {
    id: "jezweb-skills",
    repo: "jezweb/claude-skills",
    license: "MIT",
    set: "heldout6",
    closeRaw: true,
    unique: true,
    // Skills for a Cloudflare and React stack, copied into the project's .claude/skills (its templates/skill-skeleton
    // is a template for new skills, not one: left out by the match).
    match: /^skills\/[^/]+\/SKILL\.md$/,
    to: (p) => `project/.claude/${p}`,
  },
]

export type Item = { path: string; name?: string; description?: string; lead?: string; raw?: string; body?: string }

/**
 * The words the matcher reads in the start of a body (`Discovery.BODY_MAX` characters), less those of its first
 * paragraph (written as text already), as a sorted bag `word:count …`: what matching needs, not the prose.
 */
export function bag(body: string, first: string | undefined): string | undefined {
  const counts = new Map<string, number>()
  for (const { word } of Keywords.lightTerms(body.slice(0, Discovery.BODY_MAX)))
    counts.set(word, (counts.get(word) ?? 0) + 1)
  for (const { word } of Keywords.lightTerms(first ?? "")) {
    const n = counts.get(word)
    if (n !== undefined) n > 1 ? counts.set(word, n - 1) : counts.delete(word)
  }
  if (!counts.size) return undefined
  return [...counts]
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([w, n]) => `${w}:${n}`)
    .join(" ")
}

/** The first paragraph of a markdown body: a heading's text and the line after it, or the first line. */
export function lead(body: string): string | undefined {
  const lines = body
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !/^(---|```|<!--)/.test(l))
  if (!lines.length) return undefined
  const first = lines[0].replace(/^#+\s*/, "")
  const text = /^#/.test(lines[0]) && lines[1] && !/^#/.test(lines[1]) ? `${first}\n${lines[1]}` : first
  return DiscoveryParse.shorten(text, 300)
}

/** A git command's output; it throws when git fails. (Bun's shell never returned a 400 KB `git show` here.) */
function git(dir: string, ...args: string[]): string {
  const r = bunSpawnSync(["git", "-C", dir, ...args], { stdout: "pipe", stderr: "pipe" })
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} in ${dir}: ${r.stderr.toString().trim()}`)
  return r.stdout.toString()
}

if (import.meta.main) {
  const mirrors = process.argv[2]
  const sets: SetId[] =
    process.argv.length > 3
      ? (process.argv.slice(3) as SetId[])
      : ["tuning", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6"]
  const out: Record<string, { collections: object[]; items: (Item & { collection: string })[] }> = {}
  for (const set of sets) out[set] = { collections: [], items: [] }
  for (const c of COLLECTIONS.filter((c) => sets.includes(c.set))) {
    const dir = path.join(mirrors, c.repo.replace("/", "+"), "repo")
    const commit = git(dir, "rev-parse", "HEAD").trim()
    const files = git(dir, "ls-tree", "-r", "--name-only", "HEAD")
      .split("\n")
      .filter((p) => c.match.test(p) && path.basename(p) !== "README.md" && !c.exclude?.test(p))
      .filter((p, i, all) => !c.unique || all.findIndex((q) => c.to(q) === c.to(p)) === i)
    for (const p of files) {
      const text = git(dir, "show", `HEAD:${p}`)
      const fm = Frontmatter.parse(text)
      const item: Item & { collection: string } = { collection: c.id, path: c.to(p) }
      const skill = p.endsWith("SKILL.md") ? path.basename(path.dirname(p)) : undefined
      const odd = (v: unknown) => v !== undefined && v !== null && typeof v !== "string"
      if (fm.error || odd(fm.data.name) || odd(fm.data.description)) {
        // Kept as written: the frontmatter block (or the file's start), name and description lines only.
        const head = text.slice(0, text.indexOf("\n---", 4) + 4 || 400)
        const kept = head
          .split("\n")
          .filter((l) => /^\s*(---|name:|description:)/.test(l) || !/^\s*[a-z_-]+:/i.test(l))
          .join("\n")
        item.raw = kept.length > 800 && c.closeRaw ? `${kept.slice(0, 800)}\n---` : kept.slice(0, 800)
        const after = text.slice(head.length)
        item.lead = lead(after)
        item.body = bag(after, item.lead)
      } else {
        if (typeof fm.data.name === "string") item.name = fm.data.name
        const description = Frontmatter.string(fm.data.description)
        if (description) item.description = DiscoveryParse.shorten(description, 500)
        item.lead = lead(fm.body)
        // Not for items whose licence is not open: their description is paraphrased and their body left out.
        if (skill && c.paraphrase?.[skill]) item.description = c.paraphrase[skill]
        else item.body = bag(fm.body, item.lead)
      }
      out[c.set].items.push(item)
    }
    out[c.set].collections.push({ id: c.id, repo: c.repo, commit, license: c.license, files: files.length })
  }
  for (const set of sets) {
    const file = path.join(import.meta.dir, `${set}.json`)
    fs.writeFileSync(file, JSON.stringify(out[set], null, 1) + "\n")
    console.log(`${file}: ${out[set].items.length} items`)
  }
}
