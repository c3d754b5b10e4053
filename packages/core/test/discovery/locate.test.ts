import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { pathToFileURL } from "url"
import { DiscoveryLocate } from "../../discovery/locate"
import { md, tmpdir } from "../fixture"
import { guarded } from "../resource/guarded"

/** A home, OpenCode's XDG folders and a project (a worktree with a package below it) in one temporary root. */
async function world(files: Record<string, string>) {
  const dir = await tmpdir(files)
  for (const d of ["home", "xdg", "project/pkg"]) await fs.mkdir(dir.file(d), { recursive: true })
  const env: Record<string, string> = {
    HOME: dir.file("home"),
    XDG_CONFIG_HOME: dir.file("xdg/config"),
    XDG_CACHE_HOME: dir.file("xdg/cache"),
  }
  const locate = (extra: Partial<DiscoveryLocate.Input> = {}) =>
    DiscoveryLocate.create({
      directory: dir.file("project/pkg"),
      worktree: dir.file("project"),
      home: env.HOME,
      env,
      ...extra,
    })
  const rel = (files: readonly string[] | undefined) => (files ?? []).map((f) => path.relative(dir.path, f))
  return { dir, env, locate, rel, [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose]() }
}

const skill = (name: string, description?: string, body = "") =>
  md(description === undefined ? { name } : { name, description }, body)

describe("DiscoveryLocate: skills", () => {
  test("every place OpenCode searches, each with its origin and scope", async () => {
    await using w = await world({
      "home/.claude/skills/a/SKILL.md": skill("home-claude", "d"),
      "home/.agents/skills/a/SKILL.md": skill("home-agents", "d"),
      "project/.claude/skills/a/SKILL.md": skill("root-claude", "d"),
      "project/pkg/.agents/skills/deep/down/SKILL.md": skill("pkg-agents", "d"),
      "project/.agents/skills/SKILL.md": skill("skills-folder-itself", "d"),
      "xdg/config/opencode/skill/a/SKILL.md": skill("xdg-opencode", "d"),
      "project/.opencode/skills/a/SKILL.md": skill("root-opencode", "d"),
      "project/pkg/.opencode/skill/a/SKILL.md": skill("pkg-opencode", "d"),
      "home/.opencode/skills/a/SKILL.md": skill("home-opencode", "d"),
      "custom/skills/a/SKILL.md": skill("config-dir", "d"),
      "project/pkg/more/x/SKILL.md": skill("path-relative", "d"),
      "home/tilde/x/SKILL.md": skill("path-tilde", "d"),
      "xdg/cache/opencode/skills/remote/SKILL.md": skill("from-url", "d"),
      "project/.claude/commands/SKILL.md": skill("not-a-place", "d"),
    })
    const locate = w.locate({
      env: { ...w.env, OPENCODE_CONFIG_DIR: w.dir.file("custom") },
      config: { skills: { paths: ["more", "~/tilde"], urls: ["https://example.invalid/skills/"] } },
    })
    const all = await locate.all("skill")
    const where = Object.fromEntries(all.map((r) => [r.name, `${r.candidates[0].origin}/${r.candidates[0].scope}`]))
    expect(where).toEqual({
      "home-claude": "claude/global",
      "home-agents": "agents/global",
      "root-claude": "claude/project",
      "pkg-agents": "agents/project",
      "skills-folder-itself": "agents/project",
      "xdg-opencode": "opencode/global",
      "root-opencode": "opencode/project",
      "pkg-opencode": "opencode/project",
      "home-opencode": "opencode/global",
      "config-dir": "opencode/config",
      "path-relative": "skills-path/config",
      "path-tilde": "skills-path/config",
      "from-url": "skills-url/config",
    })
    const pkg = all.find((r) => r.name === "pkg-agents")!.candidates[0]
    expect(w.rel([pkg.folder])).toEqual(["project/pkg/.agents/skills/deep/down"])
  })

  test("load order: external (global, then nearest to farthest), config folders, skills.paths; the last is likely", async () => {
    const files: Record<string, string> = {}
    const places = [
      "home/.claude/skills/s",
      "home/.agents/skills/s",
      "project/pkg/.claude/skills/s",
      "project/pkg/.agents/skills/s",
      "project/.claude/skills/s",
      "xdg/config/opencode/skills/s",
      "project/pkg/.opencode/skills/s",
      "project/.opencode/skill/s",
      "home/.opencode/skill/s",
      "custom/skill/s",
      "project/pkg/more/s",
    ]
    for (const p of places) files[`${p}/SKILL.md`] = skill("same", p)
    await using w = await world(files)
    const locate = w.locate({
      env: { ...w.env, OPENCODE_CONFIG_DIR: w.dir.file("custom") },
      config: { skills: { paths: ["more"] } },
    })
    const r = await locate.skill("same")
    const order = places.map((p) => `${p}/SKILL.md`)
    expect(w.rel(r.byVersion["1.2.15"]!.files)).toEqual(order)
    expect(w.rel(r.byVersion["1.18"]!.files)).toEqual(order)
    expect(w.rel([r.byVersion["1.2.15"]!.likely!])).toEqual(["project/pkg/more/s/SKILL.md"])
    expect(r.byVersion["1.2.15"]!.ambiguous).toBe(false)
    // v1.18 parses every skill file at once: any of them may win.
    expect(r.byVersion["1.18"]!.ambiguous).toBe(true)
    expect(r.candidates.map((c) => c.description)).toEqual(places)
  })

  test("names: the frontmatter name exactly (case and odd characters kept); description rules differ per version", async () => {
    await using w = await world({
      "project/.opencode/skills/folder-name/SKILL.md": md({ description: "no name: not a skill" }),
      "project/.opencode/skills/pdf/SKILL.md": skill("pdf", "lower"),
      "project/.opencode/skills/PDF2/SKILL.md": skill("PDF", "upper"),
      "project/.opencode/skills/odd/SKILL.md": skill("Ünïcode & <tags> / slash", "odd"),
      "project/.opencode/skills/nodesc/SKILL.md": skill("no-description"),
      "project/.opencode/skills/numeric/SKILL.md": "---\nname: numeric\ndescription: 42\n---\n",
      "project/.opencode/skills/colon/SKILL.md": "---\nname: colon\ndescription: Use when: asked: twice\n---\n",
      "project/.opencode/skills/bad/SKILL.md": "---\nname: [unclosed\n---\n",
      "project/.opencode/skills/.dot/SKILL.md": skill("dot-folder", "not searched in config folders"),
      "project/.claude/skills/.dot/SKILL.md": skill("dot-external", "searched in external folders"),
      "project/.opencode/skills/case/skill.md": skill("wrong-file-case", "d"),
    })
    const names = async (versions: DiscoveryLocate.Version[]) =>
      (await w.locate({ versions, platform: "linux" }).all("skill")).map((r) => r.name).sort()
    expect(await names(["1.2.15"])).toEqual(["PDF", "colon", "dot-external", "pdf", "Ünïcode & <tags> / slash"].sort())
    expect(await names(["1.18"])).toEqual(
      ["PDF", "colon", "dot-external", "no-description", "pdf", "Ünïcode & <tags> / slash"].sort(),
    )
    const locate = w.locate()
    expect((await locate.skill("Pdf")).candidates).toEqual([])
    expect((await locate.skill("colon")).candidates[0].description).toBe("Use when: asked: twice")
    expect((await locate.skill("pdf")).candidates.map((c) => c.description)).toEqual(["lower"])
  })

  test("skill folders behind symbolic links are found under the link's name; a link loop ends", async () => {
    await using w = await world({
      "elsewhere/shared-skill/SKILL.md": skill("shared-skill", "linked in"),
      "elsewhere/group/one/SKILL.md": skill("grouped", "a linked folder of skills"),
    })
    await fs.mkdir(w.dir.file("project/.opencode/skills"), { recursive: true })
    await fs.symlink(w.dir.file("elsewhere/shared-skill"), w.dir.file("project/.opencode/skills/shared"))
    await fs.symlink(w.dir.file("elsewhere/group"), w.dir.file("project/.opencode/skills/group"))
    await fs.symlink(w.dir.file("project/.opencode/skills"), w.dir.file("elsewhere/group/loop"))
    const all = await w.locate().all("skill")
    expect(all.map((r) => [r.name, w.rel(r.candidates.map((c) => c.file))])).toEqual([
      ["grouped", ["project/.opencode/skills/group/one/SKILL.md"]],
      ["shared-skill", ["project/.opencode/skills/shared/SKILL.md"]],
    ])
  })

  test("on macOS and Windows names match as their glob does, without regard to case", async () => {
    await using w = await world({
      "project/.opencode/Skills/a/skill.md": skill("case-blind", "d"),
    })
    expect((await w.locate({ platform: "darwin" }).all("skill")).map((r) => r.name)).toEqual(["case-blind"])
    expect(await w.locate({ platform: "linux" }).all("skill")).toEqual([])
  })

  test("flags: v1.2.15 drops every external folder for any Claude Code flag, v1.18 only .claude's", async () => {
    await using w = await world({
      "home/.claude/skills/a/SKILL.md": skill("claude-skill", "d"),
      "home/.agents/skills/a/SKILL.md": skill("agents-skill", "d"),
      "project/.opencode/skills/a/SKILL.md": skill("opencode-skill", "d"),
    })
    const names = async (version: DiscoveryLocate.Version, flags: Record<string, string>) =>
      (await w.locate({ versions: [version], env: { ...w.env, ...flags } }).all("skill")).map((r) => r.name)
    const claudeOff = { OPENCODE_DISABLE_CLAUDE_CODE_SKILLS: "1" }
    expect(await names("1.2.15", claudeOff)).toEqual(["opencode-skill"])
    expect(await names("1.18", claudeOff)).toEqual(["agents-skill", "opencode-skill"])
    expect(await names("1.18", { OPENCODE_DISABLE_EXTERNAL_SKILLS: "true" })).toEqual(["opencode-skill"])
    // A value OpenCode 1.18 might not take as true keeps the files: never fewer candidates than OpenCode loads.
    expect(await names("1.18", { OPENCODE_DISABLE_EXTERNAL_SKILLS: "yes" })).toHaveLength(3)
    expect(await names("1.2.15", { OPENCODE_DISABLE_PROJECT_CONFIG: "TRUE" })).toEqual(["agents-skill", "claude-skill"])
  })

  test("global and project: the walk stops at the worktree, or goes to / outside git; OPENCODE_TEST_HOME per version", async () => {
    await using w = await world({
      ".claude/skills/above/SKILL.md": skill("above-the-worktree", "d"),
      "project/.claude/skills/a/SKILL.md": skill("in-the-worktree", "d"),
      "test-home/.agents/skills/a/SKILL.md": skill("test-home", "d"),
      "home/.agents/skills/a/SKILL.md": skill("real-home", "d"),
    })
    const names = async (extra: Partial<DiscoveryLocate.Input>) =>
      (await w.locate(extra).all("skill")).map((r) => r.name)
    expect(await names({})).toEqual(["in-the-worktree", "real-home"])
    expect(await names({ worktree: "/" })).toContain("above-the-worktree")
    const testHome = { ...w.env, OPENCODE_TEST_HOME: w.dir.file("test-home") }
    expect(await names({ env: testHome })).toEqual(["in-the-worktree", "test-home"])
    // `||` in v1.2.15: an empty OPENCODE_TEST_HOME means the home directory; `??` in v1.18: it means "" (relative).
    const empty = { ...w.env, OPENCODE_TEST_HOME: "" }
    expect(await names({ env: empty, versions: ["1.2.15"] })).toEqual(["in-the-worktree", "real-home"])
  })

  test("a protected folder holding a SKILL.md: the call is refused with the policy's reason; the texts to redact", async () => {
    await using w = await world({
      "project/vault/deal/SKILL.md": skill("deal-room", "Falcon & <merger> playbook", "SECRET STEPS"),
      "project/.opencode/skills/open/SKILL.md": skill("open-skill", "Public"),
    })
    await fs.symlink(w.dir.file("project/vault/deal"), w.dir.file("project/.opencode/skills/deal"))
    await using g = await guarded(w.dir.file("project"), [
      { pattern: "vault", type: "directory", deniedOperations: ["read"] },
    ])
    const locate = w.locate()
    const reason = await locate.refusal("skill", "deal-room", g.host)
    expect(reason).toBe((await g.guard.access(w.dir.file("project/.opencode/skills/deal/SKILL.md"), "read"))!)
    expect(await locate.refusal("skill", "open-skill", g.host)).toBeUndefined()
    expect(await locate.refusal("skill", "no-such-skill", g.host)).toBeUndefined()
    const [r, ...rest] = await locate.redactions(g.host)
    expect(rest).toEqual([])
    expect(r).toMatchObject({ kind: "skill", name: "deal-room", prompts: [] })
    const file = w.dir.file("project/.opencode/skills/deal/SKILL.md")
    const block = (location: string) =>
      [
        "  <skill>",
        "    <name>deal-room</name>",
        "    <description>Falcon & <merger> playbook</description>",
        `    <location>${location}</location>`,
        "  </skill>",
      ].join("\n")
    expect(r.texts).toContain(block(pathToFileURL(file).href))
    expect(r.texts).toContain(block(DiscoveryLocate.escapeHtml(file)))
    expect(r.texts).toContain("- **deal-room**: Falcon & <merger> playbook")
    expect(r.texts).toContain("'deal-room'")
    expect(r.words).toEqual(["Falcon & <merger> playbook", "deal-room"])
    expect(r.denied.map((d) => path.relative(w.dir.path, d.path)).sort()).toEqual([
      "project/.opencode/skills/deal",
      "project/.opencode/skills/deal/SKILL.md",
    ])
  })

  test("a skill whose name or description lies in a protected segment is refused and redacted", async () => {
    await using w = await world({
      "project/.opencode/skills/deal/SKILL.md": [
        "---",
        "name: deal-room",
        "# @secure-start",
        "description: Falcon terms",
        "# @secure-end",
        "---",
        "body",
      ].join("\n"),
      "project/.opencode/skills/open/SKILL.md": skill(
        "open-skill",
        "d",
        "<!-- @secure-start -->\nbody only\n<!-- @secure-end -->",
      ),
    })
    await using g = await guarded(w.dir.file("project"), [], { markers: true })
    const locate = w.locate()
    expect(await locate.refusal("skill", "deal-room", g.host)).toBe(DiscoveryLocate.SEGMENT_REASON)
    // A segment in the body is the security layer's to redact from the tool's output; the skill itself may load.
    expect(await locate.refusal("skill", "open-skill", g.host)).toBeUndefined()
    const list = await locate.redactions(g.host)
    expect(list.map((r) => [r.name, r.words])).toEqual([["deal-room", ["Falcon terms", "deal-room"]]])
  })

  test("a skill named twice, one copy protected: the name is refused whichever copy OpenCode picks", async () => {
    await using w = await world({
      "home/.claude/skills/x/SKILL.md": skill("twin", "global copy"),
      "project/.opencode/skills/x/SKILL.md": skill("twin", "project copy"),
    })
    await using g = await guarded(
      w.dir.file("project"),
      [{ pattern: "~/.claude/skills", type: "directory", deniedOperations: ["llm"] }],
      { home: w.env.HOME },
    )
    const locate = w.locate()
    expect(await locate.refusal("skill", "twin", g.host)).toContain(".claude/skills")
    const [r] = await locate.redactions(g.host)
    expect(r.words).toEqual(["project copy", "global copy", "twin"])
  })
})

describe("DiscoveryLocate: agents", () => {
  test("names from the path per version (nested, modes, v1.2.15's /agent/ match), or the frontmatter name", async () => {
    await using w = await world({
      "project/.opencode/agent/review/deep.md": md({ description: "d" }, "DEEP"),
      "project/.opencode/agents/Tidy Up.agent.md": md({}, "TIDY"),
      "project/.opencode/agent/renamed.md": md({ name: "Display Name" }, "RENAMED"),
      "project/.opencode/agent/numbered.md": "---\nname: 7\n---\nSEVEN",
      "project/.opencode/agent/.dotted.md": md({}, "DOT"),
      "project/.opencode/modes/focus.md": md({}, "FOCUS"),
      "project/.opencode/mode/nested/ignored.md": md({}, "NOT A MODE"),
      "agent/xdg/opencode/agent/quirk.md": md({}, "QUIRK"),
    })
    const locate = (versions: DiscoveryLocate.Version[]) =>
      w.locate({ versions, env: { ...w.env, XDG_CONFIG_HOME: w.dir.file("agent/xdg") } })
    const v1 = (await locate(["1.2.15"]).all("agent")).map((r) => r.name)
    const v18 = (await locate(["1.18"]).all("agent")).map((r) => r.name)
    const common = ["7", ".dotted", "Display Name", "Tidy Up.agent", "focus", "review/deep"]
    expect(v18.sort()).toEqual([...common, "quirk"].sort())
    expect(v1.sort()).toEqual([...common, "xdg/opencode/agent/quirk"].sort())
    expect((await locate(["1.18"]).agent("review/deep")).candidates[0].body).toBe("DEEP")
  })

  test("definitions of one name merge: every file is a candidate, the last one's body is the prompt", async () => {
    await using w = await world({
      "xdg/config/opencode/agent/reviewer.md": md({ description: "global" }, "GLOBAL"),
      "project/pkg/.opencode/agent/reviewer.md": md({ description: "pkg" }, "PKG"),
      "project/.opencode/agents/reviewer.md": md({ mode: "subagent" }, "ROOT"),
      "home/.opencode/agent/reviewer.md": md({}, "HOME"),
      "custom/modes/reviewer.md": md({ description: "mode" }, "CUSTOM"),
    })
    const locate = w.locate({
      env: { ...w.env, OPENCODE_CONFIG_DIR: w.dir.file("custom") },
      config: { agent: { reviewer: { temperature: 0 } } },
    })
    const r = await locate.agent("reviewer")
    expect(w.rel(r.byVersion["1.18"]!.files)).toEqual([
      "xdg/config/opencode/agent/reviewer.md",
      "project/pkg/.opencode/agent/reviewer.md",
      "project/.opencode/agents/reviewer.md",
      "home/.opencode/agent/reviewer.md",
      "custom/modes/reviewer.md",
    ])
    expect(r.byVersion["1.2.15"]!.ambiguous).toBe(false)
    expect(r.candidates.at(-1)!.body).toBe("CUSTOM")
    expect(r).toMatchObject({ configured: true, builtin: false })
    expect((await locate.agent("build")).builtin).toBe(true)
  })

  test("an agent file in a protected folder: task is refused; its lines and prompt are given for redaction", async () => {
    await using w = await world({
      "project/.opencode/agent/private/closer.md": md({ description: "Closes the Falcon deal" }, "You know the terms."),
      "project/.opencode/agent/helper.md": md({ description: "Helps" }, "Help."),
      "project/.opencode/agent/silent.md": md({}, "No description."),
    })
    await using g = await guarded(
      w.dir.file("project"),
      [
        { pattern: ".opencode/agent/private", type: "directory", deniedOperations: ["read"] },
        { pattern: ".opencode/agent/silent.md", type: "file", deniedOperations: ["llm"] },
      ],
      { versioned: true },
    )
    const locate = w.locate()
    expect(await locate.refusal("agent", "private/closer", g.host)).toContain("private")
    expect(await locate.refusal("agent", "helper", g.host)).toBeUndefined()
    const list = await locate.redactions(g.host)
    expect(list.map((r) => [r.name, r.texts, r.prompts])).toEqual([
      ["private/closer", ["- private/closer: Closes the Falcon deal"], ["You know the terms."]],
      ["silent", [`- silent: ${DiscoveryLocate.NO_DESCRIPTION}`], ["No description."]],
    ])
    // Remembered while nothing changed and the version holds.
    const asked = g.calls.length
    expect(await locate.redactions(g.host)).toBe(list)
    expect(g.calls.length).toBe(asked)
  })
})

describe("DiscoveryLocate: cache and parsing", () => {
  test("a second call reads nothing; an edited, added or removed file is seen on the next call", async () => {
    await using w = await world({
      "project/.opencode/skills/a/SKILL.md": skill("a", "first"),
      "project/.opencode/agent/x.md": md({}, "X"),
    })
    const locate = w.locate()
    await locate.all("skill")
    expect(locate.stats).toEqual({ searches: 1, reads: 2 })
    await locate.all("skill")
    await locate.agent("x")
    expect(locate.stats).toEqual({ searches: 1, reads: 2 })
    await fs.writeFile(w.dir.file("project/.opencode/skills/a/SKILL.md"), skill("a", "second, longer"))
    expect((await locate.skill("a")).candidates[0].description).toBe("second, longer")
    expect(locate.stats).toEqual({ searches: 2, reads: 3 })
    await w.dir.write({ "project/.opencode/skills/b/SKILL.md": skill("b", "new") })
    expect((await locate.all("skill")).map((r) => r.name)).toEqual(["a", "b"])
    await fs.rm(w.dir.file("project/.opencode/skills/a"), { recursive: true })
    expect((await locate.all("skill")).map((r) => r.name)).toEqual(["b"])
  })

  test("frontmatter: YAML as gray-matter reads it, retried once with colon values as block scalars", () => {
    expect(DiscoveryLocate.frontmatter("---\nname: a\ndescription: plain\n---\nbody")).toEqual({
      data: { name: "a", description: "plain" },
      content: "body",
      head: "---\nname: a\ndescription: plain\n---\n",
    })
    expect(DiscoveryLocate.frontmatter("---\ndescription: when: x\n# c: d\nq: 'k: v'\n---\n")?.data).toEqual({
      description: "when: x",
      q: "k: v",
    })
    expect(DiscoveryLocate.frontmatter("---\nname: [x\n---\n")).toBeUndefined()
    expect(DiscoveryLocate.frontmatter("no frontmatter")).toEqual({ data: {}, content: "no frontmatter", head: "" })
  })

  test("without a policy nothing is refused or redacted, and the check is not even needed to locate", async () => {
    await using w = await world({ "project/.opencode/skills/a/SKILL.md": skill("a", "d") })
    await using g = await guarded(w.dir.file("project"), undefined)
    const locate = w.locate()
    expect(await locate.refusal("skill", "a", g.host)).toBeUndefined()
    expect(await locate.redactions(g.host)).toEqual([])
    expect(await locate.redactions({})).toEqual([])
    expect((await locate.skill("customize-opencode")).builtin).toBe(true)
    expect((await w.locate({ versions: ["1.2.15"] }).skill("customize-opencode")).builtin).toBe(false)
  })
})
