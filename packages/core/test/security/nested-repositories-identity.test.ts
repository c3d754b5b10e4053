// Nested repositories (red team AE1 + AE2): nested repositories whose git folder is swapped by renaming a folder above the read-only config
// (the config and hooks are bound read-only, the `.git` folder is pinned, but the folders above it and the git
// folder a `.git` file names are not pinned); `newRepositories` then skips the place as already known/inspected.
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

const marker = (name: string, route: string) => `/tmp/ocb-AE-mark-${name}-${route}-${process.pid}`
const commit = commitIn

for (const route of ROUTES) {
  describe(`route ${route}: AE1 a known repository's git folder swapped by renaming a folder above it`, () => {
    test("control (held): a repository present at start: its config changed in place", async () => {
      const dir = await redteamProject({ "sub/readme.txt": "x\n" }, REDTEAM_POLICY)
      spawnSync("sh", ["-c", `git init -q && ${commit(".")}`], { cwd: dir.file("sub") })
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("ctrl", route)
        const r = await s.bash(`git -C sub config core.fsmonitor 'touch ${mark}; false'; echo RAN-OK`)
        expect(r.raw).toContain("RAN-OK")
        expect(fsmonitorRuns(dir.path, "sub", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })

    test("a repository present at start: its folder renamed, a new repository with core.fsmonitor made in its place", async () => {
      const dir = await redteamProject({ "sub/readme.txt": "x\n" }, REDTEAM_POLICY)
      spawnSync("sh", ["-c", `git init -q && ${commit(".")}`], { cwd: dir.file("sub") })
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("start", route)
        const r = await s.bash(
          [
            "mv sub sub.old",
            "mkdir sub && git -C sub init -q",
            `git -C sub config core.fsmonitor 'touch ${mark}; false'`,
            commit("sub"),
            "echo RAN-OK",
          ].join("; "),
        )
        expect(r.raw).toContain("RAN-OK")
        expect(fsmonitorRuns(dir.path, "sub", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })

    test("a repository made and inspected in one command: renamed and replaced in the next", async () => {
      const dir = await redteamProject({}, REDTEAM_POLICY)
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("made", route)
        const first = await s.bash(["mkdir -p sub && git -C sub init -q", commit("sub"), "echo FIRST-OK"].join("; "))
        expect(first.raw).toContain("FIRST-OK")
        const r = await s.bash(
          [
            "mv sub sub.old",
            "mkdir sub && git -C sub init -q",
            `git -C sub config core.fsmonitor 'touch ${mark}; false'`,
            commit("sub"),
            "echo RAN-OK",
          ].join("; "),
        )
        expect(r.raw).toContain("RAN-OK")
        expect(fsmonitorRuns(dir.path, "sub", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })

    test("a .git file's git folder (gitdir: gd) renamed aside and a new one with core.fsmonitor made in its place", async () => {
      const dir = await redteamProject({}, REDTEAM_POLICY)
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("gd", route)
        const first = await s.bash(
          [
            "git init -q --bare sub/gd && git --git-dir=sub/gd config core.bare false",
            "printf 'gitdir: gd\\n' > sub/.git",
            commit("sub"),
            "echo FIRST-OK",
          ].join("; "),
        )
        expect(first.raw).toContain("FIRST-OK")
        const r = await s.bash(
          [
            "mv sub/gd sub/gd.old",
            "mkdir sub/gd && cp -r sub/gd.old/HEAD sub/gd.old/objects sub/gd.old/refs sub/gd/",
            "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n' > sub/gd/config",
            `git --git-dir=sub/gd config core.fsmonitor 'touch ${mark}; false'`,
            "echo RAN-OK",
          ].join("; "),
        )
        expect(r.raw).toContain("RAN-OK")
        expect(fsmonitorRuns(dir.path, "sub", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })
  })
}

for (const route of ROUTES) {
  describe(`route ${route}: AE2 a repository made in a folder whose modification time is put back`, () => {
    for (const [what, folder, files, putBack] of [
      [
        "below node_modules (SecurityTree.below)",
        "node_modules/dep",
        { "node_modules/dep/index.js": "module.exports = 1\n" },
        true,
      ],
      [
        "an ordinary folder of the index (SecurityTree.refresh)",
        "lib/dep",
        { "lib/dep/index.js": "module.exports = 1\n" },
        true,
      ],
      [
        "control (held): below node_modules, time not put back",
        "node_modules/dep",
        { "node_modules/dep/index.js": "module.exports = 1\n" },
        false,
      ],
      [
        "control (held): an ordinary folder, time not put back",
        "lib/dep",
        { "lib/dep/index.js": "module.exports = 1\n" },
        false,
      ],
    ] as const)
      test(`${what}: touch -r after git init keeps the folder's record, the new repository is not inspected`, async () => {
        const dir = await redteamProject(files, REDTEAM_POLICY)
        // The folder's record must be older than the racy window.
        const old = new Date(Date.now() - 3600_000)
        fs.utimesSync(dir.file(folder), old, old)
        const s = await open(route as RouteName, dir.path)
        try {
          await s.call("todowrite", { todos: [] })
          await new Promise((r) => setTimeout(r, 2500))
          const mark = marker(`mtime-${folder.length}-${putBack}`, route)
          const r = await s.bash(
            [
              `touch -r ${folder} .ref-AE`,
              `git -C ${folder} init -q`,
              `git -C ${folder} config core.fsmonitor 'touch ${mark}; false'`,
              commit(folder),
              putBack ? `touch -r .ref-AE ${folder}` : "true",
              "rm -f .ref-AE",
              "echo RAN-OK",
            ].join("; "),
          )
          expect(r.raw).toContain("RAN-OK")
          expect(fsmonitorRuns(dir.path, folder, mark)).toBe(false)
        } finally {
          await s.close()
          await dir[Symbol.asyncDispose]()
        }
      })
  })
}

for (const route of ROUTES) {
  describe(`route ${route}: AE1c a submodule's git folder below the pinned .git swapped by renaming .git/modules`, () => {
    for (const swap of [true, false])
      test(`${swap ? "" : "control (held): no rename, "}a submodule checkout present at start (sub/.git: gitdir: ../.git/modules/sub): .git/modules renamed and copied back with core.fsmonitor`, async () => {
        const dir = await redteamProject({ "lib/sub/readme.txt": "x\n" }, REDTEAM_POLICY)
        // A submodule as `git submodule absorbgitdirs` leaves it: the checkout's .git is a file naming .git/modules/sub.
        spawnSync("sh", ["-c", `git init -q && ${commit(".")}`], { cwd: dir.file("lib/sub") })
        fs.mkdirSync(dir.file(".git/modules"), { recursive: true })
        fs.renameSync(dir.file("lib/sub/.git"), dir.file(".git/modules/sub"))
        fs.writeFileSync(dir.file("lib/sub/.git"), "gitdir: ../../.git/modules/sub\n")
        spawnSync("git", ["config", "core.worktree", "../../../lib/sub"], { cwd: dir.file(".git/modules/sub") })
        const s = await open(route as RouteName, dir.path)
        try {
          await s.call("todowrite", { todos: [] })
          const mark = marker(`modules-${swap}`, route)
          const r = await s.bash(
            [
              swap ? "mv .git/modules .git/modules.old" : "true",
              swap ? "cp -a .git/modules.old .git/modules" : "true",
              `git --git-dir=.git/modules/sub config core.fsmonitor 'touch ${mark}; false'`,
              "echo RAN-OK",
            ].join("; "),
          )
          expect(r.raw).toContain("RAN-OK")
          expect(fsmonitorRuns(dir.path, "lib/sub", mark)).toBe(false)
        } finally {
          await s.close()
          await dir[Symbol.asyncDispose]()
        }
      })
  })
}

for (const route of ROUTES) {
  describe(`route ${route}: AE1d a .git file's path through a link: the link repointed after the inspection`, () => {
    test("sub/.git says gitdir: l/gd with sub/l -> ../r1; a later command points sub/l at ../r2 whose gd has core.fsmonitor", async () => {
      const dir = await redteamProject({}, REDTEAM_POLICY)
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("link", route)
        const first = await s.bash(
          [
            "mkdir -p sub r1 && ln -s ../r1 sub/l",
            "git init -q --bare r1/gd && git --git-dir=r1/gd config core.bare false",
            "printf 'gitdir: l/gd\\n' > sub/.git",
            commit("sub"),
            "echo FIRST-OK",
          ].join("; "),
        )
        expect(first.raw).toContain("FIRST-OK")
        const r = await s.bash(
          [
            "mkdir -p r2/gd && cp -r r1/gd/HEAD r1/gd/objects r1/gd/refs r2/gd/",
            "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n' > r2/gd/config",
            `git --git-dir=r2/gd config core.fsmonitor 'touch ${mark}; false'`,
            "ln -sfn ../r2 sub/l",
            "echo RAN-OK",
          ].join("; "),
        )
        expect(r.raw).toContain("RAN-OK")
        expect(fsmonitorRuns(dir.path, "sub", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })
  })
}

for (const route of ROUTES) {
  describe(`route ${route}: (held) a background process that outlives its command`, () => {
    test("setsid nohup: a repository made 3 s after the command ended does not appear (the sandbox's processes end with it)", async () => {
      const dir = await redteamProject({}, REDTEAM_POLICY)
      const s = await open(route as RouteName, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("late", route)
        const r = await s.bash(
          `setsid nohup sh -c "sleep 3; mkdir -p late && git -C late init -q && git -C late config core.fsmonitor 'touch ${mark}; false'" >/dev/null 2>&1 < /dev/null & echo RAN-OK`,
        )
        expect(r.raw).toContain("RAN-OK")
        await new Promise((r) => setTimeout(r, 5000))
        expect(fs.existsSync(dir.file("late/.git"))).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })
  })
}
