import { describe, expect, test } from "bun:test"
import { spawnSync } from "child_process"
import { SecurityConfig } from "../../security/config"
import { SecurityHistory } from "../../security/history"
import { tmpdir } from "../fixture"

const POLICY = {
  version: "1.0",
  rules: [
    { pattern: "secrets/**", type: "directory", deniedOperations: ["read"] },
    { pattern: ".env*", type: "file", deniedOperations: ["llm"] },
    { pattern: "vendor", type: "directory", deniedOperations: ["write"] },
  ],
}

function git(dir: string, ...args: string[]) {
  const r = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], { cwd: dir })
  if (r.status !== 0) throw new Error(String(r.stderr))
}

async function repo(files: Record<string, string>) {
  const dir = await tmpdir({ ".opencode-security.json": JSON.stringify(POLICY), ...files })
  git(dir.path, "init", "-q")
  const state = SecurityConfig.load(dir.path)
  if (state.status !== "valid") throw new Error("policy")
  return { dir, specs: SecurityHistory.pathspecs(state.config, "viewer", dir.path) }
}

describe("SecurityHistory", () => {
  test("pathspecs of the rules that protect content (read or llm), not of write-only rules", async () => {
    const { dir, specs } = await repo({})
    await using _ = dir
    expect(specs).toEqual([":(glob)secrets/**", ":(glob)secrets/**/**", ":(glob)**/.env*"])
  })

  test("a protected file in the history of any ref is found; a repository without one answers nothing", async () => {
    const { dir, specs } = await repo({ "src/a.ts": "x", "secrets/k.txt": "k", "README.md": "r" })
    await using _ = dir
    git(dir.path, "add", "src", "README.md")
    git(dir.path, "commit", "-qm", "clean")
    expect(SecurityHistory.held(dir.path, specs, 1)).toBeUndefined()
    git(dir.path, "checkout", "-qb", "side")
    git(dir.path, "add", "-f", "secrets/k.txt")
    git(dir.path, "commit", "-qm", "secret on a side branch")
    git(dir.path, "checkout", "-q", "-")
    expect(SecurityHistory.held(dir.path, specs, 1)).toBe(dir.file("secrets/k.txt"))
  })

  test("a protected file only staged is found too", async () => {
    const { dir, specs } = await repo({ ".env": "TOKEN=x" })
    await using _ = dir
    git(dir.path, "add", "-f", ".env")
    expect(SecurityHistory.held(dir.path, specs, 2)).toBe(dir.file(".env"))
  })

  test("outside a repository: nothing", async () => {
    await using dir = await tmpdir({})
    expect(SecurityHistory.held(dir.path, [":(glob)**/x"], 3)).toBeUndefined()
  })
})
