import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import { run } from "../../discovery/cli"
import { DiscoveryParse } from "../../discovery/parse"
import { Discovery } from "../../discovery/schema"
import { memoryIO } from "../../util/cli"
import { md, tmpdir } from "../fixture"

async function project(extra: Record<string, string> = {}) {
  return tmpdir({
    "project/.opencode/agent/release-manager.md": md({ description: "Prepares and ships releases" }),
    "project/.opencode/task/ship-release.md": md({
      title: "Ship a release",
      description: "Cut and tag",
      tags: ["release"],
    }),
    "home/.claude/output-styles/concise.md": md({ name: "concise", description: "Short answers" }),
    ...extra,
  })
}

describe("opencode-builtins discover", () => {
  test("prints what matched and the text added to the prompt", async () => {
    await using dir = await project()
    const io = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["ship", "the", "release"], io)).toBe(0)
    expect(io.stdout).toContain("Agents:\n  release-manager  score")
    expect(io.stdout).toContain("Project resources:\n  ship-release  score")
    expect(io.stdout).toContain("Added to the prompt:\n<dynamic-context>")
    expect(io.stdout).toMatch(/2 item\(s\) from 2 folder\(s\), 1 project resource\(s\), in [\d.]+ ms/)
  })

  test("--json prints a valid DynamicDiscoveryResult", async () => {
    await using dir = await project()
    const io = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["ship the release", "--json"], io)).toBe(0)
    const result = JSON.parse(io.stdout)
    expect(Discovery.DynamicDiscoveryResult.safeParse(result).success).toBe(true)
    expect(result.context.matchedAgents[0].item.name).toBe("release-manager")
    expect(result.context.matchedResources[0].resource.id).toBe("ship-release")
  })

  test("nothing matched, and discovery disabled in the plugin's options file, are reported plainly", async () => {
    await using dir = await project()
    const io = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["what time is it"], io)).toBe(0)
    expect(io.stdout).toContain("Nothing matched this prompt; nothing would be added to it.")
    await dir.write({ "project/.opencode/opencode-builtins.json": JSON.stringify({ discovery: { enabled: false } }) })
    const off = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["ship the release", "--json"], off)).toBe(0)
    expect(JSON.parse(off.stdout)).toEqual({ success: false, skipped: true, skipReason: "disabled" })
  })

  test("resources switched off in the options are not matched; a bad options file is named and ignored", async () => {
    await using dir = await project({
      "project/.opencode/opencode-builtins.json": JSON.stringify({ resources: { enabled: false } }),
    })
    const io = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    await run(["ship the release", "--json"], io)
    expect(JSON.parse(io.stdout).context.matchedResources).toEqual([])
    await dir.write({ "project/.opencode/opencode-builtins.json": "{ nope" })
    const bad = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["ship the release"], bad)).toBe(0)
    expect(bad.stderr).toContain("opencode-builtins.json")
    expect(bad.stderr).toContain("using defaults")
    await dir.write({
      "project/.opencode/opencode-builtins.json": JSON.stringify({ discovery: { scanTimeoutMs: "soon" } }),
    })
    const invalid = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["ship the release"], invalid)).toBe(0)
    expect(invalid.stderr).toStartWith("discover: discovery.scanTimeoutMs:")
    expect(invalid.stdout).toContain("release-manager")
  })

  test("an invalid discovery value is named on stderr, as the resources section's are; --list says discovery is off", async () => {
    await using dir = await project()
    for (const [options, message] of [
      [{ discovery: { enabled: "no" } }, 'discover: discovery.enabled: expected true or false, got "no"'],
      [{ discovery: 5 }, "discover: discovery: expected an object of options, got 5"],
    ] as const) {
      await dir.write({ "project/.opencode/opencode-builtins.json": JSON.stringify(options) })
      for (const argv of [["--list"], ["ship the release"]]) {
        const io = memoryIO(dir.file("project"), { HOME: dir.file("home") })
        expect(await run(argv, io)).toBe(0)
        expect(io.stderr).toContain(message)
      }
    }
    await dir.write({ "project/.opencode/opencode-builtins.json": JSON.stringify({ discovery: { enabled: false } }) })
    const off = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["--list"], off)).toBe(0)
    expect(off.stdout).toStartWith('Discovery is turned off by "discovery": { "enabled": false }.')
    expect(off.stdout).toContain("release-manager")
    const json = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["--list", "--json"], json)).toBe(0)
    expect(JSON.parse(json.stdout).disabled).toBe(true)
  })

  test("--list shows everything discovered, shadowed entries and skipped files", async () => {
    await using dir = await project({
      "home/.claude/agents/release-manager.md": md({ name: "release-manager", description: "global one" }),
      "project/.claude/agents/broken.md": "---\nname: [x, y]\n---\n",
      "project/.claude/commands/close.md": "---\ndescription: Close an issue\nargument-hint: [id] [reason]\n---\n",
    })
    const io = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["--list"], io)).toBe(0)
    expect(io.stdout).toContain("Agents:\n  release-manager  [local]")
    expect(io.stdout).toContain("Output styles:\n  concise  [global]")
    expect(io.stdout).toContain("Project resources:\n  ship-release  [task]  Ship a release")
    expect(io.stdout).toContain(`shadowed  ${dir.file("home/.claude/agents/release-manager.md")}`)
    expect(io.stdout).toContain(
      `skipped    ${dir.file("project/.claude/agents/broken.md")}: frontmatter \`name\` must be text`,
    )
    expect(io.stdout).toContain(`lenient    ${dir.file("project/.claude/commands/close.md")}: frontmatter is not valid`)
  })

  // Real-world tester RW (RW1, RW2): mrgoonie/claudekit-skills copied into `.claude/`. Its nested skills
  // (`document-skills/pdf/SKILL.md`) were neither listed nor suggested, and its SKILL.md files without frontmatter were
  // suggested "load with the skill tool", though OpenCode (1.2.15, 1.18.3, 1.18.33) loads the first and not the second.
  test("RW1/RW2 nested skills are listed and suggested; a SKILL.md OpenCode does not load is shown as skipped, never suggested", async () => {
    await using dir = await tmpdir({
      "project/.claude/skills/document-skills/pdf/SKILL.md":
        "---\nname: pdf\ndescription: Extract text and tables from PDF files, convert PDF to markdown\n---\n# PDF\n",
      "project/.claude/skills/nofm/SKILL.md":
        "# Kubernetes helper\n\nDeploy and debug kubernetes clusters with kubectl and helm.\n",
      "home/.keep": "",
    })
    const env = { HOME: dir.file("home"), XDG_CONFIG_HOME: dir.file("home/.config") }
    const list = memoryIO(dir.file("project"), env)
    expect(await run(["--list"], list)).toBe(0)
    expect(list.stdout).toContain(
      `Skills:\n  pdf  [local]  ${dir.file("project/.claude/skills/document-skills/pdf/SKILL.md")}`,
    )
    expect(list.stdout).toContain(
      `skipped    ${dir.file("project/.claude/skills/nofm/SKILL.md")}: ${DiscoveryParse.NOT_A_SKILL}: SKILL.md has no frontmatter`,
    )
    const pdf = memoryIO(dir.file("project"), env)
    expect(await run(["convert this PDF to markdown"], pdf)).toBe(0)
    expect(pdf.stdout).toContain("Skills (load with the skill tool):\n- pdf: ")
    const kube = memoryIO(dir.file("project"), env)
    expect(await run(["debug the kubernetes cluster with helm"], kube)).toBe(0)
    expect(kube.stdout).not.toContain("nofm")
  })

  // Real-world tester AJ (AJ-6): BlueSkyXN/claude-code-subagents-box installed as users do, `en/` copied into
  // `.claude/agents/`, one README.md per category without frontmatter: listed and suggested as agents before.
  test("AJ-6 a category README.md in .claude/agents is no agent: not listed, not suggested, but shown as skipped", async () => {
    await using dir = await tmpdir({
      "project/.claude/agents/en/05-data-ai/README.md":
        "# Data & AI Subagents\n\nData & AI subagents are your specialists in data engineering, machine learning and AI.\n",
      "project/.claude/agents/en/05-data-ai/data-engineer.md":
        "---\nname: data-engineer\ndescription: Expert data engineer for building data pipelines and ETL\n---\nYou are a data engineer.\n",
      "project/.claude/commands/notes.md": "# Notes\n\nSummarise the machine learning notes of $ARGUMENTS.\n",
      "home/.keep": "",
    })
    const io = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["--list", "--json"], io)).toBe(0)
    const listed = JSON.parse(io.stdout)
    expect(listed.items.map((i: any) => `${i.resourceType}:${i.name}`).sort()).toEqual([
      "agent:data-engineer",
      "command:notes",
    ])
    expect(listed.problems).toEqual([
      { path: dir.file("project/.claude/agents/en/05-data-ai/README.md"), error: DiscoveryParse.NOT_AN_AGENT },
    ])
    const text = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["--list"], text)).toBe(0)
    expect(text.stdout).toContain(
      `skipped    ${dir.file("project/.claude/agents/en/05-data-ai/README.md")}: not a Claude Code agent`,
    )
    const ask = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["which data and AI subagents are available for machine learning?"], ask)).toBe(0)
    expect(ask.stdout).toContain("data-engineer")
    expect(ask.stdout).not.toContain("README")
  })

  test("a failed scan exits 1 with the reason; nothing at all is no_resources_found, exit 0", async () => {
    await using dir = await tmpdir({ "project/.claude/agents": "a file", "home/.keep": "" })
    const io = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["review"], io)).toBe(1)
    expect(io.stdout).toContain("Discovery skipped: filesystem_error")
    await fs.rm(dir.file("project/.claude"), { recursive: true })
    const empty = memoryIO(dir.file("project"), { HOME: dir.file("home") })
    expect(await run(["review"], empty)).toBe(0)
    expect(empty.stdout).toContain("Discovery skipped: no_resources_found")
  })

  test("with a security policy, --list and a prompt show nothing it protects, whatever role the environment claims", async () => {
    await using dir = await project({
      "project/.opencode/agent/merger-desk.md": md({ description: "Falcon merger releases desk" }),
      "project/.opencode/task/falcon-release.md": md({ title: "Falcon release", description: "Falcon merger" }),
      "home/.claude/skills/vault/SKILL.md": md({ name: "vault-release", description: "Falcon release vault" }),
      "project/.opencode-security.json": JSON.stringify({
        version: "1.0",
        roles: [
          { name: "viewer", level: 10 },
          { name: "admin", level: 100 },
        ],
        rules: [
          { pattern: "merger-desk.md", type: "file", deniedOperations: ["llm"], allowedRoles: ["admin"] },
          { pattern: ".opencode/task/falcon-*", type: "file", deniedOperations: ["read"] },
          { pattern: "~/.claude/skills/vault", type: "directory", deniedOperations: ["read"] },
        ],
      }),
    })
    const env = { HOME: dir.file("home"), OPENCODE_SECURITY_ROLE: "admin" }
    const list = memoryIO(dir.file("project"), env)
    expect(await run(["--list", "--json"], list)).toBe(0)
    const cat = JSON.parse(list.stdout)
    expect(cat.items.map((i: { name: string }) => i.name).sort()).toEqual(["concise", "release-manager"])
    expect(cat.resources.map((r: { id: string }) => r.id)).toEqual(["ship-release"])
    expect(list.stderr).toContain("security policy applied (role viewer)")
    const prompt = memoryIO(dir.file("project"), env)
    expect(await run(["release", "the", "falcon", "merger", "--json"], prompt)).toBe(0)
    for (const out of [list.stdout, prompt.stdout]) {
      expect(out).not.toContain("Falcon")
      expect(out).not.toContain("merger-desk")
      expect(out).not.toContain("vault")
    }
  })

  test("usage errors exit 2 with the usage", async () => {
    await using dir = await tmpdir()
    for (const argv of [[], ["--bogus", "x"], ["--list", "x"]]) {
      const io = memoryIO(dir.path, { HOME: dir.path })
      expect(await run(argv, io)).toBe(2)
      expect(io.stderr).toContain('opencode-builtins discover "<prompt>"')
    }
    const help = memoryIO(dir.path, {})
    expect(await run(["--help"], help)).toBe(0)
    expect(help.stdout).toContain("--list")
  })
  test("--agent chooses whose permission rules apply; --list names what OpenCode's configuration leaves out; an empty --agent is bad usage", async () => {
    await using dir = await project({
      "project/.claude/skills/release-notes/SKILL.md": md({
        name: "release-notes",
        description: "Writes release notes",
      }),
      "project/opencode.json": JSON.stringify({
        agent: { plan: { permission: { skill: { "release-*": "deny" } } }, "release-manager": { disable: true } },
      }),
    })
    const io = () => memoryIO(dir.file("project"), { HOME: dir.file("home") })
    const build = io()
    expect(await run(["write the release notes", "--json"], build)).toBe(0)
    const built = JSON.parse(build.stdout).context
    expect(built.matchedSkills.map((m: { item: { name: string } }) => m.item.name)).toEqual(["release-notes"])
    expect(built.matchedAgents).toEqual([])
    const plan = io()
    expect(await run(["write the release notes", "--agent", "plan", "--json"], plan)).toBe(0)
    expect(JSON.parse(plan.stdout).context.matchedSkills).toEqual([])
    const listed = io()
    expect(await run(["--list", "--agent", "plan"], listed)).toBe(0)
    expect(listed.stdout).toContain(`left out  agent release-manager: disabled in ${dir.file("project/opencode.json")}`)
    expect(listed.stdout).toContain("left out  skill release-notes: denied by permission.skill")
    const empty = io()
    expect(await run(["x", "--agent", " "], empty)).toBe(2)
    expect(empty.stderr).toContain("--agent needs an agent's name")
  })
})
