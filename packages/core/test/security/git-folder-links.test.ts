// The folders a command may write are never widened by a link a command made (`SandboxWritable.areas` checks every
// writable area's way, and the project's git folders are bound as the user's own files name them, `gitHomesOf`), and a
// linked worktree's main repository, writable for its commits, keeps every config and hooks folder in it read-only
// (its submodules' and other worktrees' too). Both routes, real bubblewrap.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { REDTEAM_POLICY, ROUTES, fresh, git, isolateHome, open, redteamProject } from "./redteam-helpers"
import { spawnSync } from "../spawn-sync"

let home: ReturnType<typeof isolateHome>
beforeAll(() => {
  home = isolateHome()
})
afterAll(() => home.restore(), 60_000)

describe.each([...ROUTES])("route %s", (route) => {
  test("a link a command puts at .git/worktrees or .git/modules opens nothing at the next command", async () => {
    fs.mkdirSync(path.join(home.home, ".config", "some-tool"), { recursive: true })
    // A folder holding a HEAD looks like a repository to the walk of `.git/modules`.
    fs.writeFileSync(path.join(home.home, ".config", "HEAD"), "ref: refs/heads/main\n")
    const written = [".config/some-tool/hooks.sh", ".config/x.sh", "new-file"]
    for (const w of written) fs.rmSync(path.join(home.home, w), { force: true })
    await using box = await fresh(route)
    for (const link of [
      `rm -rf .git/worktrees; ln -s "$HOME" .git/worktrees`,
      `rm -rf .git/worktrees; ln -s "$(dirname "$HOME")" .git/worktrees`,
      `rm -rf .git/worktrees .git/modules; ln -s "$HOME" .git/modules`,
    ]) {
      const made = await box.s.bash(`${link}; echo rc=$?`)
      expect(made.raw).toContain("rc=0")
      const r = await box.s.bash(`echo x > ~/.config/some-tool/hooks.sh; echo x > ~/.config/x.sh; echo x > ~/new-file`)
      expect(r.raw).toContain("Read-only file system")
      for (const w of written) expect(fs.existsSync(path.join(home.home, w))).toBe(false)
    }
    fs.rmSync(path.join(home.home, ".config", "HEAD"), { force: true })
  }, 120_000)

  test("a sandbox.writable folder whose parent a command replaced by a link is left read-only, and named", async () => {
    // The parent lies in a writable folder (the shared temporary folder; the home's caches are read-only to commands
    // since red team GI).
    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-gfl-")))
    fs.mkdirSync(path.join(scratch, "a/some-tool"), { recursive: true })
    fs.mkdirSync(path.join(home.home, ".config/some-tool"), { recursive: true })
    fs.rmSync(path.join(home.home, ".config/some-tool/x.sh"), { force: true })
    const dir = await redteamProject({}, { ...REDTEAM_POLICY, sandbox: { writable: [`${scratch}/a/some-tool`] } })
    const s = await open(route, dir.path)
    try {
      const a = await s.bash(
        `echo ok > ${scratch}/a/some-tool/y && mv ${scratch}/a ${scratch}/b && ln -s ~/.config ${scratch}/a; echo rc=$?`,
      )
      expect(a.raw).toContain("rc=0")
      const b = await s.bash(`echo pwned > ~/.config/some-tool/x.sh`)
      expect(b.raw).toContain("Read-only file system")
      expect(b.output).toContain("Left read-only for shell commands")
      expect(b.output).toContain("is a link inside another writable folder")
      expect(fs.existsSync(path.join(home.home, ".config/some-tool/x.sh"))).toBe(false)
    } finally {
      await s.close()
      await dir[Symbol.asyncDispose]()
      fs.rmSync(scratch, { recursive: true, force: true })
    }
  }, 120_000)

  test("a linked worktree: the main repository's submodules' and other worktrees' config and hooks stay read-only", async () => {
    const base = fs.mkdtempSync(path.join(path.dirname(home.home), `ocb-wt-modules-${route}-`))
    const mark = path.join(base, "MARK")
    const src = path.join(base, "src")
    fs.mkdirSync(src)
    git(src, "init", "-q")
    fs.writeFileSync(path.join(src, "s.txt"), "s\n")
    git(src, "add", ".")
    git(src, "commit", "-qm", "s")
    // The main repository in the read-only home, with a submodule and a second worktree; the project is a worktree.
    const main = path.join(home.home, `main-${route}`)
    fs.mkdirSync(main)
    git(main, "init", "-q")
    fs.writeFileSync(path.join(main, "m.txt"), "m\n")
    git(main, "add", ".")
    git(main, "commit", "-qm", "m")
    git(main, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub")
    git(main, "commit", "-qm", "sub")
    const wt = path.join(base, "wt")
    git(main, "worktree", "add", "-q", wt)
    git(main, "worktree", "add", "-q", path.join(base, "other"))
    fs.writeFileSync(path.join(wt, ".opencode-security.json"), JSON.stringify(REDTEAM_POLICY))
    const s = await open(route, wt)
    try {
      const cfg = path.join(main, ".git/modules/sub/config")
      const hook = path.join(main, ".git/modules/sub/hooks/post-checkout")
      const other = path.join(main, ".git/worktrees/other/config")
      const r = await s.bash(
        `printf '[core]\\n\\tfsmonitor = "touch ${mark}; false"\\n' >> ${cfg}; printf '#!/bin/sh\\ntouch ${mark}.hook\\n' > ${hook}; chmod +x ${hook}; printf '[core]\\n\\tfsmonitor = "touch ${mark}.other; false"\\n' >> ${other}`,
      )
      expect(r.raw).toContain("Read-only file system")
      expect(fs.readFileSync(cfg, "utf8")).not.toContain(mark)
      expect(fs.existsSync(hook)).toBe(false)
      // The user's next git in the submodule on the host runs neither.
      spawnSync("git", ["status", "--porcelain"], { cwd: path.join(main, "sub"), encoding: "utf8" })
      spawnSync("git", ["checkout", "-q", "HEAD"], { cwd: path.join(main, "sub"), encoding: "utf8" })
      expect(fs.existsSync(mark)).toBe(false)
      expect(fs.existsSync(mark + ".hook")).toBe(false)
      // Commits from the worktree still go into the main repository.
      const c = await s.bash(
        `echo w > w.txt && git add w.txt && git -c user.name=t -c user.email=t@t commit -qm w; echo rc=$?`,
      )
      expect(c.raw).toContain("rc=0")
    } finally {
      await s.close()
      fs.rmSync(base, { recursive: true, force: true })
      fs.rmSync(path.join(home.home, `main-${route}`), { recursive: true, force: true })
    }
  }, 120_000)
})
