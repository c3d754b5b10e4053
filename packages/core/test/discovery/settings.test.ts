import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import { DynamicDiscovery } from "../../discovery/discover"
import { DiscoveryHooks } from "../../discovery/hooks"
import { DiscoverySettings } from "../../discovery/settings"
import { md, tmpdir } from "../fixture"

const rule = (permission: string, pattern: string, action: DiscoverySettings.Action) => ({
  permission,
  pattern,
  action,
})

describe("DiscoverySettings.evaluate", () => {
  test("the last matching rule wins; no rule is allow; * and ? are wildcards, the rest literal", () => {
    const rules = [rule("skill", "*", "deny"), rule("skill", "docs-*", "allow"), rule("skill", "docs-secret", "ask")]
    expect(DiscoverySettings.evaluate("skill", "deploy", rules)).toBe("deny")
    expect(DiscoverySettings.evaluate("skill", "docs-writer", rules)).toBe("allow")
    expect(DiscoverySettings.evaluate("skill", "docs-secret", rules)).toBe("ask")
    expect(DiscoverySettings.evaluate("task", "deploy", rules)).toBe("allow")
    expect(DiscoverySettings.evaluate("skill", "a.b", [rule("skill", "a?b", "deny")])).toBe("deny")
    expect(DiscoverySettings.evaluate("skill", "axxb", [rule("skill", "a.b", "deny")])).toBe("allow")
    // A permission key may be a wildcard too ("*": "deny" turns everything off).
    expect(DiscoverySettings.evaluate("task", "x", [rule("*", "*", "deny")])).toBe("deny")
  })
})

describe("DiscoverySettings.from", () => {
  test("merges configurations key by key, later values winning; legacy mode entries are primary; tools switches come before permission", () => {
    const settings = DiscoverySettings.from([
      {
        file: "/g/opencode.json",
        config: {
          agent: { reviewer: { description: "Reviews diffs", disable: true }, docs: { prompt: "You write docs." } },
          permission: { skill: { "*": "allow", "deploy-*": "deny" } },
          tools: { task: false },
        },
      },
      {
        file: "/repo/opencode.json",
        config: {
          agent: { reviewer: { disable: false }, build: { permission: { skill: { "deploy-staging": "allow" } } } },
          mode: { focus: { description: "A primary mode" } },
          permission: { task: { "helper-*": "allow" } },
          command: { ship: { template: "Ship $ARGUMENTS", description: "Ships a release" }, nothing: { x: 1 } },
          default_agent: "build",
        },
      },
    ])
    expect(settings.agents.get("reviewer")).toMatchObject({ disable: false, description: "Reviews diffs" })
    expect(settings.agents.get("reviewer")?.file).toBe("/repo/opencode.json")
    expect(settings.agents.get("docs")?.file).toBe("/g/opencode.json")
    expect(settings.agents.get("focus")).toMatchObject({ mode: "primary", file: "/repo/opencode.json" })
    expect(settings.commands.get("ship")).toEqual({
      template: "Ship $ARGUMENTS",
      description: "Ships a release",
      file: "/repo/opencode.json",
    })
    expect(settings.commands.get("nothing")?.template).toBeUndefined()
    expect(settings.rules).toEqual([
      rule("task", "helper-*", "allow"),
      rule("skill", "*", "allow"),
      rule("skill", "deploy-*", "deny"),
    ])
    // `tools.task: false` then a permission object for task: OpenCode's merge keeps the object (permission wins).
    const rules = DiscoverySettings.rules(settings, undefined)
    expect(DiscoverySettings.evaluate("task", "helper-x", rules)).toBe("allow")
    expect(DiscoverySettings.evaluate("task", "other", rules)).toBe("allow")
    const off = DiscoverySettings.from([{ file: "/a.json", config: { tools: { task: false, skill: true } } }])
    expect(off.rules).toEqual([rule("task", "*", "deny"), rule("skill", "*", "allow")])
    expect(DiscoverySettings.evaluate("skill", "deploy-staging", rules)).toBe("allow") // the default agent's own rule
    expect(DiscoverySettings.evaluate("skill", "deploy-staging", DiscoverySettings.rules(settings, "plan"))).toBe(
      "deny",
    )
  })

  test("a permission given as one word applies to everything; values of the wrong type are ignored", () => {
    const settings = DiscoverySettings.from([
      { file: "/a.json", config: { permission: "deny", agent: { x: "not an object", y: { mode: 3 } }, command: [] } },
    ])
    expect(settings.rules).toEqual([rule("*", "*", "deny")])
    expect([...settings.agents.keys()]).toEqual(["y"])
    expect(settings.agents.get("y")?.mode).toBeUndefined()
    expect(settings.commands.size).toBe(0)
  })
})

/** A project under a temporary root (`project/`, home `home/`, OpenCode's global folder `xdg/opencode/`). */
async function project(files: Record<string, string>) {
  const dir = await tmpdir(files)
  await fs.mkdir(dir.file("home"), { recursive: true })
  const engine = DynamicDiscovery.create({
    directory: dir.file("project"),
    worktree: dir.file("project"),
    env: { HOME: dir.file("home"), XDG_CONFIG_HOME: dir.file("xdg") },
  })
  return { dir, engine }
}

const names = (ctx: { matchedAgents: { item: { name: string } }[] } | undefined, key = "matchedAgents") =>
  ((ctx as Record<string, { item: { name: string } }[]> | undefined)?.[key] ?? []).map((m) => m.item.name)

describe("discovery follows OpenCode's configuration", () => {
  const files = {
    "project/.opencode/agent/migration-reviewer.md": md(
      { description: "Reviews database migrations for locking problems" },
      "You review migrations.",
    ),
    "project/.claude/agents/schema-designer.md": md({
      name: "schema-designer",
      description: "Designs database schemas and migrations",
    }),
    "project/.claude/skills/deploy-production/SKILL.md": md({
      name: "deploy-production",
      description: "Deploy the service to production with a canary release",
    }),
    "project/.claude/skills/deploy-staging/SKILL.md": md({
      name: "deploy-staging",
      description: "Deploy the service to staging with a canary release",
    }),
  }

  test("an agent disabled or made primary in opencode.json is not suggested, whatever file defines it", async () => {
    const { dir, engine } = await project({
      ...files,
      "project/opencode.json": JSON.stringify({
        agent: { "migration-reviewer": { disable: true }, "schema-designer": { mode: "primary" } },
      }),
    })
    await using _ = dir
    const result = await engine.gather("review this database migration for locking problems and the schema")
    expect(names(result.context)).toEqual([])
    const cat = await engine.catalogue()
    expect(cat.left.map((l) => [l.item.name, l.reason])).toEqual([
      ["migration-reviewer", `disabled in ${dir.file("project/opencode.json")}`],
      ["schema-designer", `a primary agent in ${dir.file("project/opencode.json")}`],
    ])
    // Without the configuration both are suggested (the control).
    await fs.rm(dir.file("project/opencode.json"))
    expect(names((await engine.gather("review this database migration for locking problems")).context)).toContain(
      "migration-reviewer",
    )
  })

  test("skills denied by permission.skill are not suggested, ask still is; the prompting agent's own rules count", async () => {
    const { dir, engine } = await project({
      ...files,
      "xdg/opencode/opencode.json": JSON.stringify({ permission: { skill: { "deploy-production": "deny" } } }),
      "project/.opencode/opencode.jsonc": JSON.stringify({
        permission: { skill: { "deploy-staging": "ask" } },
        agent: { plan: { permission: { skill: { "deploy-*": "deny" } } } },
      }),
    })
    await using _ = dir
    const prompt = "deploy the service with a canary release"
    expect(names((await engine.gather(prompt)).context, "matchedSkills")).toEqual(["deploy-staging"])
    expect(names((await engine.gather(prompt, { agent: "plan" })).context, "matchedSkills")).toEqual([])
    expect(names((await engine.gather(prompt, { agent: "build" })).context, "matchedSkills")).toEqual([
      "deploy-staging",
    ])
  })

  test("permission.task denies subagents to the prompting agent", async () => {
    const { dir, engine } = await project({
      ...files,
      "project/opencode.json": JSON.stringify({ permission: { task: { "*": "deny", "schema-*": "allow" } } }),
    })
    await using _ = dir
    const got = names((await engine.gather("review this database migration and design the schema")).context)
    expect(got).toEqual(["schema-designer"])
  })

  test("agents and commands defined only in opencode.json are suggested, named by their file; a file of the same name wins", async () => {
    const { dir, engine } = await project({
      ...files,
      "project/opencode.json": JSON.stringify({
        agent: {
          "incident-commander": { description: "Coordinates a production outage: triage, paging, status updates" },
          "migration-reviewer": { description: "Something else entirely" },
          "no-description": { temperature: 0.2 },
        },
        command: {
          changelog: { template: "Write the changelog entry for $ARGUMENTS", description: "Drafts a changelog entry" },
        },
      }),
    })
    await using _ = dir
    const outage = (await engine.gather("we have a production outage, coordinate the triage")).context
    expect(outage?.matchedAgents.map((m) => [m.item.name, m.item.filePath, m.item.origin])).toEqual([
      ["incident-commander", dir.file("project/opencode.json"), "opencode"],
    ])
    const changelog = (await engine.gather("draft the changelog entry for 2.0")).context
    expect(changelog?.matchedCommands.map((m) => m.item.name)).toEqual(["changelog"])
    const cat = await engine.catalogue()
    expect(cat.items.filter((i) => i.name === "migration-reviewer").map((i) => i.filePath)).toEqual([
      dir.file("project/.opencode/agent/migration-reviewer.md"),
    ])
    expect(cat.items.some((i) => i.name === "no-description")).toBe(false)
    // The same entry keeps its item between prompts (the ranking index is not rebuilt for nothing).
    const again = await engine.catalogue()
    expect(again.items.find((i) => i.name === "incident-commander")).toBe(
      cat.items.find((i) => i.name === "incident-commander")!,
    )
  })

  test("a configuration that does not parse is reported and read as absent; discovery goes on", async () => {
    const { dir, engine } = await project({ ...files, "project/opencode.json": '{ "agent": { "x": { ] }' })
    await using _ = dir
    const cat = await engine.catalogue()
    expect(cat.problems).toContainEqual({
      path: dir.file("project/opencode.json"),
      error: expect.stringContaining("OpenCode configuration not read:"),
    })
    const result = await engine.gather("review this database migration for locking problems")
    expect(names(result.context)).toContain("migration-reviewer")
  })

  test("with a security check, an agent defined in a configuration the policy protects is not suggested", async () => {
    const { dir, engine } = await project({
      "project/.opencode/opencode.json": JSON.stringify({
        agent: { "incident-commander": { description: "Coordinates a production outage" } },
      }),
    })
    await using _ = dir
    const protectedFile = dir.file("project/.opencode/opencode.json")
    const access = async (p: string) => (p === protectedFile ? "protected by policy" : undefined)
    expect(names((await engine.gather("coordinate the production outage")).context)).toEqual(["incident-commander"])
    const denied = await engine.gather("coordinate the production outage", { access })
    expect(denied.context ? names(denied.context) : []).toEqual([])
  })

  test("the chat.message hook passes OpenCode's agent, so that agent's rules decide", async () => {
    const { dir, engine } = await project({
      ...files,
      "project/opencode.json": JSON.stringify({ agent: { plan: { permission: { skill: "deny" } } } }),
    })
    await using _ = dir
    const hooks = DiscoveryHooks.create(engine)
    const run = async (agent: string) => {
      const output = { message: { id: "msg_1" }, parts: [{ type: "text", text: "deploy the service to production" }] }
      await hooks["chat.message"]({ sessionID: "s", agent }, output)
      return output.parts
        .slice(1)
        .map((p) => p.text ?? "")
        .join("")
    }
    expect(await run("build")).toContain("deploy-production")
    expect(await run("plan")).not.toContain("deploy-production")
  })
})
