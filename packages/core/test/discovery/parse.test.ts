import { describe, expect, test } from "bun:test"
import { DiscoveryParse } from "../../discovery/parse"
import { Discovery } from "../../discovery/schema"

// A Claude Code command: the rules below hold for every type; a Claude Code agent also needs `name` and `description`
// (› "a Claude Code agent needs name and description…").
const base = {
  filePath: "/home/me/.claude/commands/code-reviewer.md",
  fallbackName: "code-reviewer",
  type: "command" as DiscoveryParse.Input["type"],
  source: "global" as const,
  origin: "claude" as const,
}
const parse = (text: string, over: Partial<DiscoveryParse.Input> = {}) =>
  DiscoveryParse.parse({ ...base, text, ...over })

describe("DiscoveryParse", () => {
  test("frontmatter name, description and keywords become a validated item", () => {
    const r = parse(
      '---\nname: reviewer\ndescription: "Reviews diffs"\nkeywords: [review, diff]\ntools: Read\n---\nBody',
      { type: "agent" },
    )
    expect(r).toEqual({
      success: true,
      item: {
        name: "reviewer",
        description: "Reviews diffs",
        keywords: ["review", "diff"],
        keywordSource: "explicit",
        lead: "Body",
        filePath: base.filePath,
        resourceType: "agent",
        source: "global",
        origin: "claude",
      },
    })
  })

  test("without frontmatter: the file name; the description is the body's first paragraph, as Claude Code shows it", () => {
    const r = parse("Do the thing for $ARGUMENTS", { fallbackName: "lint-fix", type: "command" })
    expect(r.item).toMatchObject({
      name: "lint-fix",
      description: "Do the thing for $ARGUMENTS",
      lead: "Do the thing for $ARGUMENTS",
      keywordSource: "description",
      resourceType: "command",
    })
    const headed = parse("\n# Security Scan\n\nFinds vulnerabilities in $ARGUMENTS.\n\n## Steps\n", { type: "command" })
    expect(headed.item).toMatchObject({
      description: "Security Scan: Finds vulnerabilities in $ARGUMENTS.",
      lead: "Security Scan\nFinds vulnerabilities in $ARGUMENTS.",
    })
    expect(parse("", { fallbackName: "empty", type: "command" }).item).toMatchObject({
      description: "",
      keywords: ["empty"],
      keywordSource: "filename",
    })
    expect(parse("", { fallbackName: "empty" }).item?.lead).toBeUndefined()
  })

  test("lead: a heading and its first line, code fences and rules skipped, at most LEAD_MAX characters", () => {
    expect(DiscoveryParse.lead("```\ncode\n```\n## Title\ntext\nmore")).toBe("code")
    expect(DiscoveryParse.lead("# One\n## Two")).toBe("One")
    expect(DiscoveryParse.lead("word ".repeat(200))!.length).toBeLessThanOrEqual(300)
    expect(DiscoveryParse.lead("\n\n")).toBeUndefined()
  })

  test("the item is what the schema makes of it (the usual item skips the zod parse)", () => {
    for (const text of [
      "---\nname: '  spaced  '\ndescription: d\n---\n# T\nbody",
      "plain body",
      "---\nkeywords: [a]\n---\n",
    ]) {
      const item = parse(text).item!
      expect(Discovery.DiscoveredItem.parse(item)).toEqual(item)
      expect(Object.isFrozen(item)).toBe(true)
    }
    expect(parse("---\nname: '  spaced  '\n---\n").item?.name).toBe("spaced")
  })

  test("`tags` stand in for `keywords`; a comma-separated string is a list", () => {
    expect(parse("---\ntags: a11y, contrast\n---\n").item?.keywords).toEqual(["a11y", "contrast"])
  })

  test("an empty or blank frontmatter name falls back to the file name", () => {
    expect(parse('---\nname: "  "\n---\n').item?.name).toBe("code-reviewer")
  })

  test("rule: the name must not be empty (no frontmatter name and no file name)", () => {
    expect(parse("", { fallbackName: "  " })).toEqual({ success: false, error: "name is empty" })
  })

  test("rule: a name longer than 200 characters is refused with the reason", () => {
    const r = parse(`---\nname: ${"n".repeat(201)}\n---\n`)
    expect(r).toEqual({ success: false, error: "name is longer than 200 characters" })
  })

  test("rule: a description over 1000 characters is shortened at a word boundary; keywords come from all of it", () => {
    const words = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ")
    const r = parse(`---\ndescription: "${words} tailword"\n---\n`)
    expect(r.success).toBe(true)
    expect(r.item!.description.length).toBeLessThanOrEqual(1000)
    expect(r.item!.description.endsWith("…")).toBe(true)
    // Cut between two words: the kept text is a prefix of the original followed by a space there.
    const kept = r.item!.description.slice(0, -1)
    expect(words.startsWith(kept)).toBe(true)
    expect(words[kept.length]).toBe(" ")
    expect(r.item!.keywords).toHaveLength(100)
  })

  test("rule: keywords are capped at 100", () => {
    const many = Array.from({ length: 120 }, (_, i) => `k${i}`)
    expect(parse(`---\nkeywords: ${JSON.stringify(many)}\n---\n`).item?.keywords).toHaveLength(100)
  })

  test("rule: the file path must be absolute", () => {
    expect(parse("", { filePath: "agents/a.md" })).toEqual({
      success: false,
      error: "filePath must be an absolute path: agents/a.md",
    })
  })

  test("frontmatter no YAML reading accepts is loaded without it, as Claude Code does, its own lines read as text", () => {
    // Shapes of real files Claude Code loads (it logs the YAML error and goes on with no frontmatter): steveyegge/beads'
    // commands, davila7/claude-code-templates' cleanup-cache, affaan-m/everything-claude-code's Japanese go-reviewer.
    const beads = parse(
      "---\ndescription: Close a completed issue\nargument-hint: [issue-id] [reason]\n---\n\nClose it.",
    )
    expect(beads.item).toMatchObject({
      name: "code-reviewer",
      description: "Close a completed issue",
      lead: "Close it.",
    })
    expect(beads.warning).toStartWith("frontmatter is not valid YAML (can not read an implicit mapping pair")
    expect(beads.warning).toContain("loaded without it as Claude Code does")
    const hint = parse(
      "---\nallowed-tools: Bash(df:*), Bash(rm:*)\nargument-hint: [--aggressive] | [--maximum]\ndescription: Clean system caches\n---\n",
    )
    expect(hint.item?.description).toBe("Clean system caches")
    const split = parse(
      '---\nname: go-reviewer\ndescription: 専門Goコードレビュアー。すべてのGo\n\nコード変更に使用してください。\ntools: ["Read"]\n---\n本文',
    )
    expect(split.item).toMatchObject({ name: "go-reviewer", description: "専門Goコードレビュアー。すべてのGo" })
    // Indented lines continue a value; quotes, brackets and block markers are removed; other keys are not read.
    expect(
      DiscoveryParse.salvage(
        "---\nname: 'quoted'\ndescription: >\n  folded\n  lines\nkeywords: [git, ship]\nx: [a] [b]\n---\nBody",
      ),
    ).toEqual({ data: { name: "quoted", description: "folded lines", keywords: "git, ship" }, body: "Body" })
    // Nothing usable in it: the file's name and the body's first paragraph, as for a file without frontmatter.
    const bare = parse("---\nname: [unclosed\n---\n# Title\nDoes a thing.")
    expect(bare.item).toMatchObject({ name: "code-reviewer", description: "Title: Does a thing." })
    expect(parse("---\nname: a\n  description: b\n---\n").item?.name).toBe("a description: b")
    expect(parse('---\ndescription: "unclosed: quote\n---\n').item?.description).toBe('"unclosed: quote')
    // A block never closed is no frontmatter: all of it is the body.
    expect(parse("---\nname: [x\nbody").item?.name).toBe("code-reviewer")
    // OpenCode refuses such a file of its own and such a skill (wherever it lies: OpenCode loads every skill), so
    // discovery does not suggest an invocation that would fail.
    const own = parse("---\ndescription: Close\nargument-hint: [id] [reason]\n---\n", {
      filePath: "/p/.opencode/command/close.md",
      origin: "opencode",
    })
    expect(own.error).toStartWith("malformed frontmatter: can not read an implicit mapping pair")
    const skill = parse("---\nname: s\nargument-hint: [id] [reason]\n---\n", {
      filePath: "/p/.claude/skills/s/SKILL.md",
      type: "skill",
    })
    expect(skill.error).toStartWith("malformed frontmatter:")
    // Still refused: a valid frontmatter whose name is not text, binary content.
    expect(parse("---\nname: [a, b]\n---\n").error).toBe("frontmatter `name` must be text")
    expect(parse("---\nname: a\u0000\n---\n").success).toBe(false)
  })

  test("a value holding ': ' (YAML refuses it, Claude Code reads it): read leniently, with a warning", () => {
    const r = parse(
      "---\nname: ab-test-analysis\ndescription: Use when the user wants A/B results. Triggers on: 'p-value', 'significance'.\ntools: Read\n---\nBody",
    )
    expect(r.success).toBe(true)
    expect(r.item).toMatchObject({
      name: "ab-test-analysis",
      description: "Use when the user wants A/B results. Triggers on: 'p-value', 'significance'.",
    })
    expect(r.warning).toStartWith("frontmatter is not valid YAML")
    expect(parse("---\nname: fine\n---\n").warning).toBeUndefined()
  })

  test("a name or description that is not text is an error", () => {
    expect(parse("---\nname: [a, b]\n---\n").error).toBe("frontmatter `name` must be text")
    expect(parse("---\ndescription: {a: 1}\n---\n").error).toBe("frontmatter `description` must be text")
    expect(parse("---\nname: 42\n---\n").item?.name).toBe("42")
  })

  test("a Claude Code agent needs name and description: a file in .claude/agents giving neither is no agent, skipped with the reason", () => {
    // Real-world tester AJ: BlueSkyXN/claude-code-subagents-box keeps a README.md per category in `.claude/agents/`
    // (no frontmatter); discovery suggested them as agents. Claude Code requires `name` and `description`.
    const agent = { type: "agent" as const, filePath: "/p/.claude/agents/05-data-ai/README.md", fallbackName: "README" }
    const readme = "# Data & AI Subagents\n\nSpecialists in data engineering and machine learning.\n"
    expect(parse(readme, agent)).toEqual({ success: false, error: DiscoveryParse.NOT_AN_AGENT })
    expect(parse("---\nmodel: opus\ntools: Read\n---\nYou are an oracle.", agent).error).toBe(
      DiscoveryParse.NOT_AN_AGENT,
    )
    expect(parse('---\nname: "  "\ndescription: ""\n---\nBody', agent).error).toBe(DiscoveryParse.NOT_AN_AGENT)
    // Either one makes an agent missing a field: suggested as a file to read (OpenCode never runs it itself).
    expect(parse("---\ndescription: Builds data pipelines\n---\n", agent).item?.name).toBe("README")
    expect(parse("---\nname: ml-engineer\n---\nYou train models.", agent).item?.name).toBe("ml-engineer")
    // Frontmatter no YAML reading accepts was written as an agent: read line by line, as before.
    expect(parse("---\nname: [unclosed\n---\n# Title\nDoes a thing.", agent).item?.name).toBe("README")
    // Commands need no frontmatter (a command file without it is a command), nor do OpenCode's agents.
    expect(parse(readme, { type: "command" }).item?.name).toBe("code-reviewer")
    expect(parse(readme, { ...agent, filePath: "/p/.opencode/agent/README.md", origin: "opencode" }).success).toBe(true)
  })

  test("a skill is what OpenCode's skill tool loads: frontmatter with a text name and a description, else skipped with the reason", () => {
    // RW2: checked with `opencode debug skill` on 1.2.15, 1.18.3 and 1.18.33. None loads a SKILL.md without
    // frontmatter, without `name`, or whose `name` is not text; 1.2.15 also skips one without `description`, 1.18 loads
    // it. A name unlike the folder, an empty description, a value holding ": " (the colon retry) all load.
    const skill = { type: "skill" as const, filePath: "/p/.claude/skills/s/SKILL.md", fallbackName: "s" }
    const reason = (text: string) => parse(text, skill).error
    expect(reason("# Kubernetes helper\n\nDeploy clusters.\n")).toStartWith(
      `${DiscoveryParse.NOT_A_SKILL}: SKILL.md has no frontmatter`,
    )
    expect(reason("---\ndescription: Deploy clusters\n---\n")).toStartWith(`${DiscoveryParse.NOT_A_SKILL}: no \`name\``)
    expect(reason("---\nname: 123\ndescription: numbers\n---\n")).toStartWith(
      `${DiscoveryParse.NOT_A_SKILL}: \`name\` is not text`,
    )
    expect(reason("---\nname: s\ndescription: [a, b]\n---\n")).toStartWith(DiscoveryParse.NOT_A_SKILL)
    expect(reason("---\nname: s\n---\n")).toStartWith(`${DiscoveryParse.NOT_EVERY_SKILL}: no \`description\``)
    expect(reason("---\nname: s\ndescription: x\nargument-hint: [id] [reason\n---\n")).toStartWith(
      "malformed frontmatter",
    )
    expect(parse("---\nname: kube-ops\ndescription: Deploy\n---\n", skill).item?.name).toBe("kube-ops")
    expect(parse('---\nname: s\ndescription: ""\n---\n# S\nDoes s.', skill).item?.description).toBe("S: Does s.")
    expect(parse("---\nname: s\ndescription: Use when: asked\n---\n", skill).item?.description).toBe("Use when: asked")
  })

  test("binary content is refused", () => {
    expect(parse("abc\u0000def").error).toContain("binary file")
  })

  test("shorten keeps short text and cuts long text within the limit", () => {
    expect(DiscoveryParse.shorten("short", 10)).toBe("short")
    expect(DiscoveryParse.shorten("alpha beta gamma delta", 12)).toBe("alpha beta…")
    expect(DiscoveryParse.shorten("x".repeat(50), 10)).toBe("x".repeat(9) + "…")
  })
})
