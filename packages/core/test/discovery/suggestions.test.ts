import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import { DynamicDiscovery } from "../../discovery/discover"
import { Keywords } from "../../discovery/keywords"
import { md, tmpdir } from "../fixture"

/**
 * Suggestions a real catalogue gave for prompts they have nothing to do with (a tester's report on
 * ComposioHQ/awesome-claude-skills and davepoon/claude-code-subagents-collection), each reduced to a minimal catalogue.
 */

/** `files` under a temporary root (the project in `project/`, OpenCode's global folder in `xdg/opencode/`), its engine and catalogue. */
async function project(files: Record<string, string>) {
  const dir = await tmpdir(files)
  await fs.mkdir(dir.file("home"), { recursive: true })
  const engine = DynamicDiscovery.create({
    directory: dir.file("project"),
    worktree: dir.file("project"),
    env: { HOME: dir.file("home"), XDG_CONFIG_HOME: dir.file("xdg") },
  })
  return { dir, engine, cat: await engine.catalogue() }
}

/** A project holding `skills` (name → description) and `agents`, a temporary home; what each prompt gets, by name. */
async function catalogue(defs: {
  skills?: Record<string, string>
  agents?: Record<string, string>
  commands?: Record<string, string>
}) {
  const files: Record<string, string> = {}
  for (const [name, description] of Object.entries(defs.skills ?? {}))
    files[`project/.claude/skills/${name}/SKILL.md`] = md({ name, description })
  for (const [name, description] of Object.entries(defs.agents ?? {}))
    files[`project/.claude/agents/${name}.md`] = md({ name, description })
  for (const [name, description] of Object.entries(defs.commands ?? {}))
    files[`project/.claude/commands/${name}.md`] = md({ description })
  const { dir, engine, cat } = await project(files)
  return {
    suggest(prompt: string): string[] {
      const ctx = engine.match(cat, prompt)
      return [...ctx.matchedAgents, ...ctx.matchedCommands, ...ctx.matchedSkills].map((m) => m.item.name)
    },
    [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose](),
  }
}

// Composio's skills describe products: "Fixer" is a currency API, "Writer" an AI platform, SharePoint Microsoft's.
const PRODUCTS = {
  "sharepoint-automation": "SharePoint Automation: manage sites, lists, documents",
  "share_point-automation": "Automate SharePoint tasks via Rube MCP (Composio).",
  "fixer-automation": "Automate Fixer tasks via Rube MCP (Composio). Currency exchange rates.",
  "writer-automation": "Automate Writer tasks via Rube MCP (Composio).",
}

describe("words a description uses as names match only themselves", () => {
  test("Keywords.names: camel-case pieces and words capitalized inside a sentence, not titles nor words also written in lower case", () => {
    expect([...Keywords.names("Automate Fixer tasks via Rube MCP (Composio).")].sort()).toEqual(["fixer", "rube"])
    expect([...Keywords.names("SharePoint Automation: manage sites, lists, documents")].sort()).toEqual([
      "point",
      "share",
    ])
    expect([...Keywords.names("Comprehensive Test Harness Generator\nYou are a testing expert")]).toEqual([])
    expect([...Keywords.names("Builds Docker images. Runs docker compose.")]).toEqual([])
  })

  test("a derived form is not folded onto the piece of a compound: 'pointer' does not find SharePoint", async () => {
    await using c = await catalogue({ skills: PRODUCTS })
    expect(c.suggest("fix the null pointer exception in UserService.java")).toEqual([])
    // The word itself still finds it.
    expect(c.suggest("sync the sharepoint documents")).toContain("sharepoint-automation")
  })

  test("…also where the catalogue has the word on its own elsewhere ('pain points')", async () => {
    await using c = await catalogue({
      skills: PRODUCTS,
      agents: { "ux-researcher": "Interviews customers to find the pain points of a product." },
    })
    const got = c.suggest("fix the null pointer exception in UserService.java")
    expect(got).not.toContain("sharepoint-automation")
    expect(got).not.toContain("share_point-automation")
  })

  test("a product's name is not folded ('Fixer' is not 'fix') nor reached by a family of the lexicon ('explain' → writer)", async () => {
    await using c = await catalogue({
      skills: PRODUCTS,
      agents: {
        debugger: "Debugging specialist: finds and fixes errors and crashes.",
        "code-reviewer": "Expert code reviewer for quality and security.",
        "docs-writer": "Writes documentation and guides.",
      },
    })
    const fix = c.suggest("fix the null pointer exception in UserService.java")
    expect(fix).toContain("debugger")
    expect(fix).not.toContain("fixer-automation")
    expect(c.suggest("no, the totals are wrong")).not.toContain("fixer-automation")
    expect(c.suggest("can you explain what this regex does")).toEqual([])
    // Common words are still folded ("review" finds the reviewer), and a product is found by its own name.
    expect(c.suggest("review this diff")).toEqual(["code-reviewer"])
    expect(c.suggest("get exchange rates from fixer")).toContain("fixer-automation")
    expect(c.suggest("draft a post with writer")).toContain("writer-automation")
  })
})

describe("replies: the words of an acknowledgement, and stepping away, ask for nothing", () => {
  const DEBUGGING = {
    "debug-error": "Systematically debug and fix errors",
    troubleshooter: "Troubleshoot wrong results and failures",
    "create-jtbd": "Create a Jobs to be Done (JTBD) document for a product feature",
    "sprint-plan": "Plan the sprint: what to take on, what breaks the schedule, and when to be back on track",
    commit: "Create a git commit with a conventional message",
    "commit-fast": "Commit the staged changes quickly",
    "sync-status": "Show which commits are not pushed",
    "squash-commits": "Squash the last commits into one commit",
  }

  test("Keywords.acknowledged: conversation and judgement words right after an acknowledgement", () => {
    expect([...Keywords.acknowledged("great job, commit it")]).toEqual(["job"])
    expect([...Keywords.acknowledged("no, that's wrong")]).toEqual(["wrong"])
    expect([...Keywords.acknowledged("no, the totals are wrong")]).toEqual([])
  })

  test("'no, that's wrong' gets nothing; a symptom still reaches the debugging family", async () => {
    await using c = await catalogue({ commands: DEBUGGING })
    expect(c.suggest("no, that's wrong")).toEqual([])
    expect(c.suggest("no, it's incorrect")).toEqual([])
    expect(c.suggest("the dashboard totals are wrong")).toContain("troubleshooter")
  })

  test("'great job, commit it' is about the commit, not about jobs", async () => {
    await using c = await catalogue({ commands: DEBUGGING })
    const got = c.suggest("great job, commit it")
    expect(got).toContain("commit")
    expect(got).not.toContain("create-jtbd")
    expect(c.suggest("write the jobs to be done for checkout")).toContain("create-jtbd")
  })

  test("stepping away ('can we take a break? I'll be back after lunch') gets nothing; one such word in a request does not silence it", async () => {
    await using c = await catalogue({ commands: DEBUGGING })
    expect(c.suggest("can we take a break? I'll be back after lunch")).toEqual([])
    expect(c.suggest("plan the next sprint")).toContain("sprint-plan")
    expect(c.suggest("what breaks the sprint plan? take a look")).toContain("sprint-plan")
  })
})

describe("a generic verb alone does not make a suggestion when the prompt's object matches something", () => {
  const ORCHESTRATION = {
    remove: "Safely remove a task from the orchestration system, updating all references.",
    log: "Log work from orchestrated tasks to external project management tools.",
    "remove-comments": "Remove redundant comments and leftover debug statements from code.",
    "fix-imports": "Fix broken imports after files were moved.",
  }

  test("'remove the console.log statements': the command removing tasks and the work logger are not suggested", async () => {
    await using c = await catalogue({ commands: ORCHESTRATION })
    const got = c.suggest("remove the console.log statements")
    expect(got).toContain("remove-comments")
    expect(got).not.toContain("remove")
    expect(got).not.toContain("log")
  })

  test("the verb still counts with its object, and alone when nothing else matches", async () => {
    await using c = await catalogue({ commands: ORCHESTRATION })
    expect(c.suggest("remove the stale task from the orchestration")).toContain("remove")
    expect(c.suggest("fix the imports")).toContain("fix-imports")
    expect(c.suggest("fix the flux capacitor")).toContain("fix-imports")
  })
})

describe("agents OpenCode offers no subagent for are never suggested (a tester on OpenCode's own repository)", () => {
  test("disable: true and mode: primary are left out, a disabled agent still shadows a global one of its name; mode: all and subagents stay", async () => {
    const agent = (fields: string) =>
      `---\ndescription: Reviews database migrations for locking problems\n${fields}---\nYou review migrations.\n`
    const { dir, engine, cat } = await project({
      "project/.opencode/agent/migration-reviewer.md": agent("disable: true\n"),
      "xdg/opencode/agent/migration-reviewer.md": agent(""),
      // OpenCode's own .opencode/agent/duplicate-pr.md: a primary agent for a GitHub workflow.
      "project/.opencode/agent/duplicate-pr.md":
        "---\ndescription: Finds duplicate pull requests for a pull request\nmode: primary\nhidden: true\n---\nYou are a duplicate PR detection agent.\n",
      "project/.opencode/agent/pr-linker.md":
        "---\ndescription: Links duplicate pull requests to their issue\nmode: all\n---\nYou link pull requests.\n",
      "project/.opencode/agent/pr-finder.md":
        "---\ndescription: Finds duplicate pull requests by title\nmode: subagent\nhidden: true\n---\nYou find pull requests.\n",
    })
    await using _ = dir
    const names = (prompt: string) => engine.match(cat, prompt).matchedAgents.map((m) => m.item.name)
    expect(names("review this database migration for locking problems")).toEqual([])
    expect(names("find duplicate pull requests for #1234")).toContain("pr-finder")
    expect(names("find duplicate pull requests for #1234")).not.toContain("duplicate-pr")
    expect(cat.items.map((i) => i.name).sort()).toEqual(["pr-finder", "pr-linker"])
    expect(cat.shadowed.map((s) => s.item.filePath)).toEqual([dir.file("xdg/opencode/agent/migration-reviewer.md")])
  })
})
