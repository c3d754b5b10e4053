import { describe, expect, test } from "bun:test"
import path from "path"
import { DiscoveryDirectories } from "../../discovery/directories"

const HOME = "/home/me"

describe("DiscoveryDirectories", () => {
  test("the spec's directories as constants", () => {
    expect(DiscoveryDirectories.GLOBAL_AGENTS_DIR).toBe("~/.claude/agents/")
    expect(DiscoveryDirectories.LOCAL_STYLES_DIR).toBe(".claude/output-styles/")
  })

  test("project first (OpenCode's folders, .agents, then Claude Code's), then global (OpenCode's config folders, ~/.claude, ~/.agents)", () => {
    // RW1 follow-up: OpenCode 1.2.15, 1.18.3 and 1.18.33 load skills from `.agents/skills`, `~/.agents/skills`,
    // `~/.opencode/skills` and `~/.config/opencode/skills`, agents and commands from `~/.config/opencode/{agents,
    // commands}` (`opencode debug skill`, `opencode debug config`); discovery read none of them.
    const places = DiscoveryDirectories.resolve({
      directory: "/repo",
      env: { HOME, XDG_CONFIG_HOME: "/xdg", OPENCODE_CONFIG_DIR: "/cfg" },
    })
    const six = (scope: string, dir: string) =>
      ["agent", "agents", "command", "commands", "skill", "skills"].map(
        (rel) => `${scope} opencode ${rel.replace(/s$/, "")} ${dir}/${rel}`,
      )
    expect(places.map((p) => `${p.scope} ${p.origin} ${p.type} ${p.path}`)).toEqual([
      ...six("local", "/repo/.opencode"),
      "local claude skill /repo/.agents/skills",
      "local claude agent /repo/.claude/agents",
      "local claude command /repo/.claude/commands",
      "local claude skill /repo/.claude/skills",
      "local claude outputStyle /repo/.claude/output-styles",
      ...six("global", "/xdg/opencode"),
      ...six("global", "/home/me/.opencode"),
      ...six("global", "/cfg"),
      "global claude agent /home/me/.claude/agents",
      "global claude command /home/me/.claude/commands",
      "global claude skill /home/me/.claude/skills",
      "global claude outputStyle /home/me/.claude/output-styles",
      "global claude skill /home/me/.agents/skills",
    ])
    // Without OPENCODE_CONFIG_DIR (or with a relative one) there is no such folder.
    const plain = DiscoveryDirectories.resolve({ directory: "/repo", env: { HOME, OPENCODE_CONFIG_DIR: "rel" } })
    expect(plain.length).toBe(28)
  })

  test("without XDG_CONFIG_HOME (or with a relative one) OpenCode's folder is ~/.config/opencode", () => {
    expect(DiscoveryDirectories.opencodeGlobal({ HOME })).toBe("/home/me/.config/opencode")
    expect(DiscoveryDirectories.opencodeGlobal({ HOME, XDG_CONFIG_HOME: "rel" })).toBe("/home/me/.config/opencode")
  })

  test("the home directory is $HOME when set and absolute", () => {
    expect(DiscoveryDirectories.home({ HOME })).toBe(HOME)
    expect(path.isAbsolute(DiscoveryDirectories.home({}))).toBe(true)
  })

  test("inside a worktree every folder from the directory up to the root is a project root, nearest first", () => {
    expect(DiscoveryDirectories.projectRoots("/repo/packages/app", "/repo")).toEqual([
      "/repo/packages/app",
      "/repo/packages",
      "/repo",
    ])
    // OpenCode outside git reports "/" as the worktree; a worktree not containing the directory is ignored.
    expect(DiscoveryDirectories.projectRoots("/repo/app", "/")).toEqual(["/repo/app"])
    expect(DiscoveryDirectories.projectRoots("/repo/app", "/elsewhere")).toEqual(["/repo/app"])
    const nested = DiscoveryDirectories.resolve({ directory: "/repo/app", worktree: "/repo", env: { HOME } })
    expect(nested.findIndex((p) => p.path === "/repo/app/.claude/agents")).toBeLessThan(
      nested.findIndex((p) => p.path === "/repo/.opencode/agent"),
    )
  })

  test("a project that is the home directory is scanned once, as local", () => {
    const places = DiscoveryDirectories.resolve({ directory: HOME, env: { HOME } })
    const claudeAgents = places.filter((p) => p.path === "/home/me/.claude/agents")
    expect(claudeAgents).toEqual([{ path: "/home/me/.claude/agents", type: "agent", scope: "local", origin: "claude" }])
  })
})
