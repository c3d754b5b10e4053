import { describe, expect, test } from "bun:test"
import fs from "fs"
import { execFileSync } from "child_process"
import { CaptureStore } from "../../capture/store"
import { LocalState } from "../../learning/local"
import { tmpdir } from "../fixture"

describe("LocalState: the folder ignores itself", () => {
  test("the first write creates the folder's own .gitignore, so git status never lists the state, without init", async () => {
    await using dir = await tmpdir({ "README.md": "hello\n" })
    execFileSync("git", ["init", "-q"], { cwd: dir.path })
    LocalState.write(dir.file(".opencode/builtins-local/recovery/s1.json"), "{}\n")
    expect(fs.readFileSync(dir.file(".opencode/builtins-local/.gitignore"), "utf8")).toBe(LocalState.OWN_GITIGNORE)
    const status = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
      cwd: dir.path,
      encoding: "utf8",
    })
    expect(status.split("\n").filter(Boolean)).toEqual(["?? README.md"])
    // Deleted to clear it, the folder comes back with its .gitignore.
    fs.rmSync(dir.file(".opencode/builtins-local"), { recursive: true })
    LocalState.write(dir.file(".opencode/builtins-local/learnings.json"), "{}\n")
    expect(fs.existsSync(dir.file(".opencode/builtins-local/.gitignore"))).toBe(true)
  })

  test("a capture store's first append (folder made beforehand by the security layer) writes it too", async () => {
    await using dir = await tmpdir({})
    fs.mkdirSync(dir.file(".opencode/builtins-local"), { recursive: true })
    CaptureStore.open(dir.path).append({ callID: "c", sessionID: "s", tool: "read", status: "completed", at: 1 })
    expect(fs.existsSync(dir.file(".opencode/builtins-local/.gitignore"))).toBe(true)
  })

  test("an existing .gitignore is left as the user wrote it; a folder outside the local state gets none", async () => {
    await using dir = await tmpdir({ ".opencode/builtins-local/.gitignore": "# mine\n" })
    LocalState.write(dir.file(".opencode/builtins-local/learnings.json"), "{}\n")
    expect(fs.readFileSync(dir.file(".opencode/builtins-local/.gitignore"), "utf8")).toBe("# mine\n")
    LocalState.ensure(dir.file("elsewhere/cache"))
    expect(fs.existsSync(dir.file("elsewhere/cache"))).toBe(true)
    expect(fs.existsSync(dir.file("elsewhere/.gitignore"))).toBe(false)
    expect(fs.existsSync(dir.file("elsewhere/cache/.gitignore"))).toBe(false)
  })
})
