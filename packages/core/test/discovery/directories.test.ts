import { describe, expect, test } from "bun:test"
import path from "path"
import { DiscoveryDirectories } from "../../discovery/directories"

const HOME = "/home/me"

describe("DiscoveryDirectories", () => {
  test("the spec's directories as constants", () => {
    expect(DiscoveryDirectories.GLOBAL_AGENTS_DIR).toBe("~/.claude/agents/")
    expect(DiscoveryDirectories.LOCAL_STYLES_DIR).toBe(".claude/output-styles/")
  })

  test("project first (OpenCode's folders, then Claude Code's), then global (XDG OpenCode, then ~/.claude)", () => {
    const places = DiscoveryDirectories.resolve({ directory: "/repo", env: { HOME, XDG_CONFIG_HOME: "/xdg" } })
    expect(places.map((p) => `${p.scope} ${p.origin} ${p.type} ${p.path}`)).toEqual([
      "local opencode agent /repo/.opencode/agent",
      "local opencode agent /repo/.opencode/agents",
      "local opencode command /repo/.opencode/command",
      "local opencode command /repo/.opencode/commands",
      "local opencode skill /repo/.opencode/skill",
      "local opencode skill /repo/.opencode/skills",
      "local claude agent /repo/.claude/agents",
      "local claude command /repo/.claude/commands",
      "local claude skill /repo/.claude/skills",
      "local claude outputStyle /repo/.claude/output-styles",
      "global opencode agent /xdg/opencode/agent",
      "global opencode command /xdg/opencode/command",
      "global opencode skill /xdg/opencode/skill",
      "global claude agent /home/me/.claude/agents",
      "global claude command /home/me/.claude/commands",
      "global claude skill /home/me/.claude/skills",
      "global claude outputStyle /home/me/.claude/output-styles",
    ])
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
