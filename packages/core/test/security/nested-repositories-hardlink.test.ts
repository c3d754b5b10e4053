// A repository's git files with a second name (a hard link elsewhere in the project): the link is broken when the
// repository is inspected (red team AG1, AG1c, AG1d), and a rewrite through such a name of a known repository's config
// changes its identity (change time, size, names), so it is inspected again.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs"
import path from "path"
import {
  REDTEAM_POLICY,
  ROUTES,
  isolateHome,
  open,
  redteamProject,
  type RouteName,
  fsmonitorRuns,
  commitIn,
} from "./redteam-helpers"
import { spawnSync } from "../spawn-sync"

setDefaultTimeout(120_000)
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

const marker = (name: string, route: string) => `/tmp/ocb-FAG-mark-${name}-${route}-${process.pid}`
const commit = commitIn

for (const route of ROUTES) {
  describe(`route ${route}: AG1 a known repository's config rewritten in place through a hard link`, () => {
    test("a repository made in one command with a hard link to its config; the link rewritten in the next", async () => {
      const dir = await redteamProject({}, REDTEAM_POLICY)
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("hl", route)
        const first = await s.bash(
          ["mkdir -p sub && git -C sub init -q", commit("sub"), "ln sub/.git/config notes.txt", "echo FIRST-OK"].join(
            "; ",
          ),
        )
        expect(first.raw).toContain("FIRST-OK")
        expect(first.output).toContain("the link was broken")
        expect(fs.statSync(dir.file("sub/.git/config")).nlink).toBe(1)
        expect(fs.statSync(dir.file("notes.txt")).ino).not.toBe(fs.statSync(dir.file("sub/.git/config")).ino)
        const r = await s.bash(
          [
            `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tfsmonitor = "touch ${mark}; false"\\n' > notes.txt`,
            "cat sub/.git/config",
            "echo RAN-OK",
          ].join("; "),
        )
        if (process.env.AG_DEBUG) console.log(first.raw, r.raw)
        expect(r.raw).toContain("RAN-OK")
        expect(fsmonitorRuns(dir.path, "sub", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })
  })

  describe(`route ${route}: AG1b a config made a symbolic link while the repository was new`, () => {
    test("the link's target rewritten in the next command", async () => {
      const dir = await redteamProject({}, REDTEAM_POLICY)
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("sl", route)
        const first = await s.bash(
          [
            "mkdir -p sub && git -C sub init -q",
            commit("sub"),
            "mv sub/.git/config cfg.txt && ln -s ../../cfg.txt sub/.git/config",
            "echo FIRST-OK",
          ].join("; "),
        )
        expect(first.raw).toContain("FIRST-OK")
        const r = await s.bash(
          [
            `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tfsmonitor = "touch ${mark}; false"\\n' > cfg.txt`,
            "cat sub/.git/config",
            "echo RAN-OK",
          ].join("; "),
        )
        if (process.env.AG_DEBUG) console.log(first.raw, first.output, r.raw)
        expect(r.raw).toContain("RAN-OK")
        expect(fsmonitorRuns(dir.path, "sub", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })
  })

  describe(`route ${route}: AG1c the hard link rewritten with the write tool`, () => {
    test("a repository made with a hard link to its config; the write tool rewrites the link", async () => {
      const dir = await redteamProject({}, REDTEAM_POLICY)
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("wt", route)
        const first = await s.bash(
          ["mkdir -p sub && git -C sub init -q", commit("sub"), "ln sub/.git/config notes.txt", "echo FIRST-OK"].join(
            "; ",
          ),
        )
        expect(first.raw).toContain("FIRST-OK")
        const w = await s.call("write", {
          filePath: path.join(dir.path, "notes.txt"),
          content: `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${mark}; false"\n`,
        })
        if (process.env.AG_DEBUG) console.log(w.refused, w.output, fs.readFileSync(dir.file("sub/.git/config"), "utf8"))
        expect(fsmonitorRuns(dir.path, "sub", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })
  })

  describe(`route ${route}: AG1d the project's own repository made by the agent, its config hard-linked`, () => {
    test("git init at the root with a hard link to .git/config; the link rewritten in the next command", async () => {
      const dir = await redteamProject({}, REDTEAM_POLICY)
      fs.rmSync(dir.file(".git"), { recursive: true, force: true })
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("root", route)
        const first = await s.bash(["git init -q", commit("."), "ln .git/config notes.txt", "echo FIRST-OK"].join("; "))
        expect(first.raw).toContain("FIRST-OK")
        expect(first.output).toContain("the link was broken")
        expect(fs.statSync(dir.file(".git/config")).nlink).toBe(1)
        const r = await s.bash(
          [
            `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tfsmonitor = "touch ${mark}; false"\\n' > notes.txt`,
            "echo RAN-OK",
          ].join("; "),
        )
        if (process.env.AG_DEBUG) console.log(first.raw, first.output, r.raw, r.output)
        expect(r.raw).toContain("RAN-OK")
        expect(fsmonitorRuns(dir.path, ".", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })
  })

  describe(`route ${route}: a repository present at the start whose config has a second name`, () => {
    for (const how of ["bash", "write"] as const) {
      test(`rewritten through that name (${how}): the repository is inspected again, the config moved aside`, async () => {
        const dir = await redteamProject({ "sub/readme.txt": "x\n" }, REDTEAM_POLICY)
        spawnSync("sh", ["-c", `git init -q && ${commit(".")}`], { cwd: dir.file("sub") })
        fs.linkSync(dir.file("sub/.git/config"), dir.file("notes.txt"))
        const s = await open(route as RouteName, dir.path)
        try {
          await s.call("todowrite", { todos: [] })
          const mark = marker(`start-${how}`, route)
          const text = `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${mark}; false"\n`
          const r =
            how === "bash"
              ? await s.bash(`printf '${text.replace(/\n/g, "\\n").replace(/\t/g, "\\t")}' > notes.txt; echo RAN-OK`)
              : await s.call("write", { filePath: dir.file("notes.txt"), content: text })
          if (how === "bash") expect(r.raw).toContain("RAN-OK")
          expect(r.output).toContain("sub/.git/config")
          expect(fs.readdirSync(dir.file("sub/.git")).some((n) => n.startsWith("config.blocked-by-security-"))).toBe(
            true,
          )
          expect(fsmonitorRuns(dir.path, "sub", mark)).toBe(false)
        } finally {
          await s.close()
          await dir[Symbol.asyncDispose]()
        }
      })
    }
  })

  describe(`route ${route}: AG held`, () => {
    test("(held) a hard link to the config of a repository present at start cannot be made in the sandbox", async () => {
      const dir = await redteamProject({ "sub/readme.txt": "x\n" }, REDTEAM_POLICY)
      spawnSync("sh", ["-c", `git init -q && ${commit(".")}`], { cwd: dir.file("sub") })
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const r = await s.bash("ln sub/.git/config notes.txt; ls -i sub/.git/config notes.txt; echo RAN-OK")
        if (process.env.AG_DEBUG) console.log(r.raw)
        expect(r.raw).toContain("RAN-OK")
        expect(fs.existsSync(dir.file("notes.txt"))).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })
  })
}
