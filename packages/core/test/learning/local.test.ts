import { describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { CaptureStore } from "../../capture/store"
import { LocalState } from "../../learning/local"
import { ProjectFolder } from "../../util/folder"
import { notUtf8Project, tmpdir } from "../fixture"
import { execFileSync } from "../spawn-sync"

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

  // BB4: a viewer's command made a nested project's `.opencode` a link to a plain folder; an admin session's capture
  // was written through it into that folder (not hidden), and the viewer read it. No state is written through a link.
  test("never writes through a link between the project root and the state folder (.opencode, builtins-local, capture)", async () => {
    await using dir = await tmpdir({ "stash/keep.txt": "x\n" })
    const links = [".opencode", ".opencode/builtins-local", ".opencode/builtins-local/capture"]
    for (const link of links) {
      fs.rmSync(dir.file(".opencode"), { recursive: true, force: true })
      fs.mkdirSync(path.dirname(dir.file(link)), { recursive: true })
      fs.symlinkSync(dir.file("stash"), dir.file(link))
      if (!link.endsWith("capture"))
        expect(() => LocalState.write(dir.file(".opencode/builtins-local/learnings.json"), "{}\n")).toThrow(
          ProjectFolder.Linked,
        )
      expect(() =>
        CaptureStore.open(dir.path).append({ callID: "c", sessionID: "s", tool: "read", status: "completed", at: 1 }),
      ).toThrow(ProjectFolder.Linked)
      expect(fs.readdirSync(dir.file("stash"))).toEqual(["keep.txt"])
      expect(fs.lstatSync(dir.file(link)).isSymbolicLink()).toBe(true)
    }
  })

  // AQ1: a project path that names no folder (the U+FFFD reading of a name that is not UTF-8) was made, with its
  // `.opencode/builtins-local`, as a twin beside the project; the state went there.
  test("never makes the project folder: a local state path in a project folder that does not exist throws", async () => {
    await using dir = await tmpdir({})
    const project = notUtf8Project(dir.path)
    for (const root of [project.path, dir.file("gone")]) {
      expect(() => LocalState.write(path.join(root, ".opencode/builtins-local/learnings.json"), "{}\n")).toThrow(
        ProjectFolder.Outside,
      )
      expect(() =>
        CaptureStore.open(root).append({ callID: "c", sessionID: "s", tool: "read", status: "completed", at: 1 }),
      ).toThrow()
    }
    expect(project.entries()).toEqual([Buffer.from("caf\xe9", "latin1")])
    // Inside a project folder that exists, the folders below it are made as before.
    LocalState.write(dir.file(".opencode/builtins-local/learnings.json"), "{}\n")
    expect(fs.existsSync(dir.file(".opencode/builtins-local/.gitignore"))).toBe(true)
  })
})

// Red team DD, finding DD-L1: `locked` took a lock over only once its modification time was older than the stale
// age (or its pid gone on this host). A lock whose modification time lies in the future (an extracted archive,
// `touch -d 2100-01-01`, a clock set back) and whose stamp names another host was never old: every writer waited the
// whole wait — synchronously, OpenCode's event loop frozen (10 s by default) — then threw LockTimeout, for ever.
describe("LocalState.locked: a lock with a future modification time (red team DD-L1)", () => {
  const FUTURE = new Date("2100-01-01T00:00:00Z")
  async function lockedWith(stamp: string, options: { waitMs: number; staleMs: number }) {
    await using dir = await tmpdir({})
    const file = path.join(dir.path, ".opencode/builtins-local/learnings.json")
    LocalState.ensure(path.dirname(file))
    fs.writeFileSync(`${file}.lock`, stamp)
    fs.utimesSync(`${file}.lock`, FUTURE, FUTURE)
    let ran = false
    let error: unknown
    try {
      LocalState.locked(file, () => (ran = true), options)
    } catch (e) {
      error = e
    }
    return { ran, error, left: fs.existsSync(`${file}.lock`) }
  }

  test("DD-L1 is taken for stale (it is not held by anyone) and the write goes through", async () => {
    // Another host's stamp from long ago, one whose time lies in the future too, one that cannot be read.
    for (const stamp of ["4242 some-other-host 0 abcd", "4242 some-other-host 4102444800000 abcd", "garbage"]) {
      const out = await lockedWith(stamp, { waitMs: 300, staleMs: 100 })
      expect(out, stamp).toEqual({ ran: true, error: undefined, left: false })
    }
  })

  test("DD-L1 a stamp of now is judged by its own time and the pid rule: a live holder here is waited for, a planted one for the stale age only", async () => {
    // This test's parent process (the runner), on this host: live, so the lock is kept and the write refused.
    const live = await lockedWith(`${process.ppid} ${os.hostname()} ${Date.now()} live`, {
      waitMs: 200,
      staleMs: 60_000,
    })
    expect(live.ran).toBe(false)
    expect(LocalState.LockTimeout.is(live.error)).toBe(true)
    expect(live.left).toBe(true)
    // Another host's stamp of now: taken over once the stamp is older than the stale age.
    const planted = await lockedWith(`4242 some-other-host ${Date.now()} abcd`, { waitMs: 10_000, staleMs: 100 })
    expect(planted).toEqual({ ran: true, error: undefined, left: false })
  })
})
