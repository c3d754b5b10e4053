import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityConfig } from "../../security/config"
import { SecurityHistory } from "../../security/history"
import { tmpdir } from "../fixture"
import { spawnSync } from "../spawn-sync"

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

async function repo(files: Record<string, string | Uint8Array>) {
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

  // Red team AE2's class: the answer is cached by the index's stamp; a command that stages a protected file and puts
  // the index's size and modification time back must not be answered from the cache.
  test("a protected file staged in an index whose size and modification time were put back is found", async () => {
    const { dir, specs } = await repo({ ".env": "TOKEN=x", publ: "TOKEN=x" })
    await using _ = dir
    git(dir.path, "add", "publ")
    expect(SecurityHistory.held(dir.path, specs, 5)).toBeUndefined()
    const index = dir.file(".git/index")
    const was = fs.statSync(index)
    git(dir.path, "rm", "-q", "--cached", "publ")
    git(dir.path, "add", "-f", ".env")
    expect(fs.statSync(index).size).toBe(was.size)
    fs.utimesSync(index, was.atime, was.mtime)
    expect(SecurityHistory.held(dir.path, specs, 5)).toBe(dir.file(".env"))
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

describe("SecurityHistory.maskObject", () => {
  const objectOf = (dir: string, file: string) => {
    const id = spawnSync("git", ["rev-parse", `:${file}`], { cwd: dir, encoding: "utf8" }).stdout.trim()
    return path.join(dir, ".git/objects", id.slice(0, 2), id.slice(2))
  }
  const upper = (t: string) => t.replace(/secret/g, "SECRET")

  test("a blob passed through a length-keeping mask is a valid object git reads back (it does not check the hash)", async () => {
    const r = await repo({ "a.txt": "one\nsecret two\n" })
    await using _ = r.dir
    git(r.dir.path, "add", "a.txt")
    const file = objectOf(r.dir.path, "a.txt")
    const out = SecurityHistory.maskObject(file, upper)
    expect(out).toBeInstanceOf(Uint8Array)
    fs.chmodSync(file, 0o644)
    fs.writeFileSync(file, out as Uint8Array)
    const shown = spawnSync("git", ["cat-file", "-p", ":a.txt"], { cwd: r.dir.path, encoding: "utf8" })
    expect(shown.stdout).toBe("one\nSECRET two\n")
  })

  test('"same" when the mask changes nothing; "hide" for a mask that changes the length, binary blobs, non-objects', async () => {
    const r = await repo({ "a.txt": "plain\n", "b.bin": Buffer.from([0x61, 0xff, 0xfe, 0x0a]) })
    await using _ = r.dir
    git(r.dir.path, "add", "a.txt", "b.bin")
    expect(SecurityHistory.maskObject(objectOf(r.dir.path, "a.txt"), upper)).toBe("same")
    expect(SecurityHistory.maskObject(objectOf(r.dir.path, "a.txt"), (t) => t + "x")).toBe("hide")
    expect(SecurityHistory.maskObject(objectOf(r.dir.path, "b.bin"), upper)).toBe("hide")
    expect(SecurityHistory.maskObject(path.join(r.dir.path, ".opencode-security.json"), upper)).toBe("hide")
  })
})
