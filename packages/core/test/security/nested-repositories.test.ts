// Repositories a call makes in the project, which OpenCode's snapshot enters at the end of the step (outside the
// sandbox) and the user's git at its next use (red team AA1, AA1b, AA2, AA6; AA3 held): what would run a program is
// moved aside (`newRepositories`), wherever git finds the repository — a `.git` file git reads differently from a
// naive parser, a folder the project index skips, the root of a project that had none.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs"
import path from "path"
import {
  REDTEAM_POLICY,
  ROUTES,
  isolateHome,
  open,
  redteamProject,
  smallProject,
  type RouteName,
  fsmonitorRuns,
} from "./redteam-helpers"
import { spawnSync } from "../spawn-sync"

setDefaultTimeout(120_000)
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

async function fresh(route: RouteName) {
  const dir = await redteamProject({}, REDTEAM_POLICY)
  const s = await open(route, dir.path)
  return {
    dir,
    s,
    async [Symbol.asyncDispose]() {
      await s.close()
      await dir[Symbol.asyncDispose]()
    },
  }
}

/** Runs `git status` in `sub` on the host (as OpenCode's snapshot does at the end of a step): did the planted fsmonitor run? */

/** A `.git` file moved aside by the layer (`.git.blocked-by-security-<time>` beside it). */
function movedAside(dir: string, sub: string): boolean {
  return fs.readdirSync(path.join(dir, sub)).some((n) => n.startsWith(".git.blocked-by-security-"))
}

const marker = (name: string, route: string) => `/tmp/ocb-test-nested-${name}-${route}-${process.pid}`

for (const route of ROUTES) {
  describe(`route ${route}: a nested repository's .git file is read as git reads it (AA1)`, () => {
    // [what, folder made (printf syntax), .git file (printf syntax), sub, moved: the .git file (else the config)]
    const cases: [string, string, string, string, boolean][] = [
      [
        "its gitdir holds a line break (git keeps it in the name)",
        "sub/a\\ngitdir: b",
        "gitdir: a\\ngitdir: b\\n",
        "sub",
        true,
      ],
      ["its gitdir is not UTF-8", "sub2/x\\377", "gitdir: x\\377\\n", "sub2", true],
      ["its gitdir starts with two spaces (git keeps the second)", "sub4/ gd", "gitdir:  gd\\n", "sub4", false],
      ["its gitdir ends in CRLF (git cuts both)", "sub6/gd", "gitdir: gd\\r\\n", "sub6", false],
      ["its gitdir holds a NUL (git stops there)", "sub7/gd", "gitdir: gd\\000x\\n", "sub7", true],
      ["control: a plain gitdir", "sub3/gd", "gitdir: gd\\n", "sub3", false],
    ]
    for (const [what, folder, gitFile, sub, moved] of cases)
      test(`${what}: the repository git uses does not keep its core.fsmonitor`, async () => {
        await using box = await fresh(route)
        await box.s.call("todowrite", { todos: [] })
        const mark = marker(sub, route)
        fs.rmSync(mark, { force: true })
        const r = await box.s.bash(
          [
            `D="$(printf '${folder}')"`,
            `git init -q --bare "$D"`,
            `git --git-dir="$D" config core.bare false`,
            `git --git-dir="$D" config core.fsmonitor 'touch ${mark}; false'`,
            `printf '${gitFile}' > ${sub}/.git`,
            "echo RAN-OK",
          ].join("; "),
        )
        expect(r.raw).toContain("RAN-OK")
        expect(r.output).toContain("[security]")
        // The layer asks git where the file leads while the fsmonitor is still configured: `rev-parse` never runs it.
        const layerRanIt = fs.existsSync(mark)
        expect({
          layerRanIt,
          ranOnHost: fsmonitorRuns(box.dir.path, sub, mark),
          gitFileMoved: movedAside(box.dir.path, sub),
        }).toEqual({ layerRanIt: false, ranOnHost: false, gitFileMoved: moved })
      })

    test("a .git file whose folder is reached through a link and `..`: the folder git reaches is inspected", async () => {
      await using box = await fresh(route)
      await box.s.call("todowrite", { todos: [] })
      const mark = marker("link", route)
      // git resolves `l/../gd` name by name: `l` → `deep/inner`, so `..` is `deep`, and the folder is `deep/gd`.
      const r = await box.s.bash(
        [
          "mkdir -p sub8/deep/inner sub8/gd && ln -s deep/inner sub8/l",
          `git init -q --bare sub8/deep/gd && git --git-dir=sub8/deep/gd config core.bare false`,
          `git --git-dir=sub8/deep/gd config core.fsmonitor 'touch ${mark}; false'`,
          "printf 'gitdir: l/../gd\\n' > sub8/.git",
          "echo RAN-OK",
        ].join("; "),
      )
      expect(r.raw).toContain("RAN-OK")
      expect(fsmonitorRuns(box.dir.path, "sub8", mark)).toBe(false)
      // Moved aside (absent) or kept without the setting.
      const cfg = box.dir.file("sub8/deep/gd/config")
      expect(fs.existsSync(cfg) ? fs.readFileSync(cfg, "utf8") : "").not.toContain("fsmonitor")
    })

    test("a .git file moved aside is inspected again when the command's next one puts a .git there", async () => {
      await using box = await fresh(route)
      await box.s.call("todowrite", { todos: [] })
      const mark = marker("again", route)
      const first = await box.s.bash("mkdir -p sub9 && printf 'gitdir:  gd\\n' > sub9/.git; echo FIRST-OK")
      expect(first.raw).toContain("FIRST-OK")
      expect(movedAside(box.dir.path, "sub9")).toBe(true)
      const second = await box.s.bash(
        [
          `git init -q --bare sub9/gd && git --git-dir=sub9/gd config core.bare false`,
          `git --git-dir=sub9/gd config core.fsmonitor 'touch ${mark}; false'`,
          "printf 'gitdir: gd\\n' > sub9/.git",
          "echo SECOND-OK",
        ].join("; "),
      )
      expect(second.raw).toContain("SECOND-OK")
      expect(fsmonitorRuns(box.dir.path, "sub9", mark)).toBe(false)
    })
  })

  describe(`route ${route}: the same with the write tool only, no shell (AA1b)`, () => {
    test("a .git file with two spaces after gitdir: and the git folder ' gd' with core.fsmonitor", async () => {
      await using box = await fresh(route)
      const mark = marker("w", route)
      const files: [string, string][] = [
        ["sub5/ gd/HEAD", "ref: refs/heads/master\n"],
        ["sub5/ gd/objects/info/keep", ""],
        ["sub5/ gd/refs/heads/keep", ""],
        [
          "sub5/ gd/config",
          `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${mark}; false"\n`,
        ],
        ["sub5/f", "x\n"],
        ["sub5/.git", "gitdir:  gd\n"],
      ]
      for (const [filePath, content] of files) await box.s.call("write", { filePath, content })
      const cfg = box.dir.file("sub5/ gd/config")
      const config = fs.existsSync(cfg) ? fs.readFileSync(cfg, "utf8") : ""
      expect({
        fsmonitorKept: config.includes("fsmonitor"),
        ranOnHost: fsmonitorRuns(box.dir.path, "sub5", mark),
      }).toEqual({
        fsmonitorKept: false,
        ranOnHost: false,
      })
    })

    test("a .git file whose gitdir holds a line break, written last: moved aside", async () => {
      await using box = await fresh(route)
      const mark = marker("wnl", route)
      const gd = "sub10/a\ngitdir: b"
      const files: [string, string][] = [
        [`${gd}/HEAD`, "ref: refs/heads/master\n"],
        [`${gd}/objects/info/keep`, ""],
        [`${gd}/refs/heads/keep`, ""],
        [
          `${gd}/config`,
          `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${mark}; false"\n`,
        ],
        ["sub10/.git", "gitdir: a\ngitdir: b\n"],
      ]
      for (const [filePath, content] of files) await box.s.call("write", { filePath, content })
      expect(fsmonitorRuns(box.dir.path, "sub10", mark)).toBe(false)
    })
  })

  describe(`route ${route}: a nested repository in a folder the index skips (AA2)`, () => {
    for (const folder of ["node_modules/evil", ".svn/evil", ".hg/evil", "node_modules/a/node_modules/b/evil"])
      test(`a repository made in ${folder} loses its core.fsmonitor (OpenCode's snapshot runs git there)`, async () => {
        await using box = await fresh(route)
        await box.s.call("todowrite", { todos: [] })
        const mark = marker(folder.replace(/\W/g, "_"), route)
        const r = await box.s.bash(
          [
            `mkdir -p ${folder} && git -C ${folder} init -q`,
            `git -C ${folder} config core.fsmonitor 'touch ${mark}; false'`,
            "echo RAN-OK",
          ].join("; "),
        )
        expect(r.raw).toContain("RAN-OK")
        const cfg = box.dir.file(`${folder}/.git/config`)
        const config = fs.existsSync(cfg) ? fs.readFileSync(cfg, "utf8") : ""
        expect({
          fsmonitorKept: config.includes("fsmonitor"),
          ranOnHost: fsmonitorRuns(box.dir.path, folder, mark),
        }).toEqual({
          fsmonitorKept: false,
          ranOnHost: false,
        })
      })

    test("write tool only: a repository written into node_modules loses its core.fsmonitor", async () => {
      await using box = await fresh(route)
      const mark = marker("wnm", route)
      const files: [string, string][] = [
        ["node_modules/evil/.git/HEAD", "ref: refs/heads/master\n"],
        ["node_modules/evil/.git/objects/info/keep", ""],
        ["node_modules/evil/.git/refs/heads/keep", ""],
        ["node_modules/evil/f", "x\n"],
        [
          "node_modules/evil/.git/config",
          `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${mark}; false"\n`,
        ],
      ]
      for (const [filePath, content] of files) await box.s.call("write", { filePath, content })
      expect(fsmonitorRuns(box.dir.path, "node_modules/evil", mark)).toBe(false)
    })

    test("a repository in node_modules when the session started keeps a read-only config", async () => {
      const dir = await redteamProject({ "node_modules/dep/index.js": "module.exports = 1\n" }, REDTEAM_POLICY)
      spawnSync("git", ["init", "-q"], { cwd: dir.file("node_modules/dep") })
      const s = await open(route, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const mark = marker("dep", route)
        const r = await s.bash(`git -C node_modules/dep config core.fsmonitor 'touch ${mark}; false'; echo RAN-OK`)
        expect(r.raw).toContain("RAN-OK")
        expect(fs.readFileSync(dir.file("node_modules/dep/.git/config"), "utf8")).not.toContain("fsmonitor")
        expect(fsmonitorRuns(dir.path, "node_modules/dep", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })
  })

  describe(`route ${route}: a root repository made in a project without one (AA6)`, () => {
    const POLICY = {
      version: "1.0",
      rules: [{ pattern: "team/notes.txt", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
    }
    for (const [name, cmd, cfgPath, moved] of [
      [
        "a .git file naming a git folder in the project",
        "git init -q --bare .g && git --git-dir=.g config core.bare false && printf 'gitdir: .g\\n' > .git && git --git-dir=.g config core.fsmonitor 'touch MARK; false'; echo DONE",
        ".g/config",
        false,
      ],
      [
        "a .git file naming a git folder outside the project",
        'G=$(mktemp -d /tmp/ocb-test-nested-outside-XXXXXX) && git init -q --bare $G && git --git-dir=$G config core.bare false && printf "gitdir: $G\\n" > .git && echo DONE',
        "",
        true,
      ],
      [
        "a .git file git reads differently (two spaces)",
        "git init -q --bare ' .g' && git --git-dir=' .g' config core.bare false && printf 'gitdir:  .g\\n' > .git && git --git-dir=' .g' config core.fsmonitor 'touch MARK; false'; echo DONE",
        " .g/config",
        false,
      ],
      [
        "control: a .git folder (git init)",
        "git init -q && git config core.fsmonitor 'touch MARK; false'; echo DONE",
        ".git/config",
        false,
      ],
    ] as const)
      test(`${name}: its core.fsmonitor does not stay`, async () => {
        const dir = await smallProject({
          ".opencode-security.json": JSON.stringify(POLICY),
          "team/notes.txt": "a note nobody may read\n",
          "README.md": "# x\n",
        })
        const mark = marker(`root-${name.length}`, route)
        const s = await open(route, dir.path)
        try {
          await s.call("todowrite", { todos: [] })
          const r = await s.bash(cmd.replaceAll("MARK", mark))
          expect(r.raw).toContain("DONE")
          const cf = cfgPath ? path.join(dir.path, cfgPath) : ""
          const config = cf && fs.existsSync(cf) ? fs.readFileSync(cf, "utf8") : ""
          expect({
            fsmonitorKept: config.includes("fsmonitor"),
            ranOnHost: fsmonitorRuns(dir.path, ".", mark),
            gitFileMoved: movedAside(dir.path, "."),
          }).toEqual({ fsmonitorKept: false, ranOnHost: false, gitFileMoved: moved })
        } finally {
          await s.close()
          await dir[Symbol.asyncDispose]()
          for (const n of fs.readdirSync("/tmp"))
            if (n.startsWith("ocb-test-nested-outside-"))
              fs.rmSync(path.join("/tmp", n), { recursive: true, force: true })
        }
      })
  })

  describe(`route ${route}: (held) a root repository replaced after its inspection (AA6)`, () => {
    // Its config and hooks are read-only from the next command on, so the folder cannot be removed whole; were it
    // replaced, the new `.git` (another inode) would be inspected again (`rootSeen`).
    test("git init, then the .git folder removed and a .git file naming a git folder with core.fsmonitor", async () => {
      const dir = await smallProject({
        ".opencode-security.json": JSON.stringify({
          version: "1.0",
          rules: [{ pattern: "team/notes.txt", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
        }),
        "team/notes.txt": "a note nobody may read\n",
        "README.md": "# x\n",
      })
      const mark = marker("root-again", route)
      const s = await open(route, dir.path)
      try {
        await s.call("todowrite", { todos: [] })
        const first = await s.bash("git init -q; echo FIRST-OK")
        expect(first.raw).toContain("FIRST-OK")
        const second = await s.bash(
          [
            "rm -rf .git; mv .git .git-old 2>/dev/null",
            "git init -q --bare .g && git --git-dir=.g config core.bare false",
            `git --git-dir=.g config core.fsmonitor 'touch ${mark}; false'`,
            "printf 'gitdir: .g\\n' > .git",
            "echo SECOND-OK",
          ].join("; "),
        )
        expect(second.raw).toContain("SECOND-OK")
        expect(fsmonitorRuns(dir.path, ".", mark)).toBe(false)
      } finally {
        await s.close()
        await dir[Symbol.asyncDispose]()
      }
    })
  })

  describe(`route ${route}: AA3 (held) a nested repository's .git file rewritten after its inspection`, () => {
    test("a later command cannot point an inspected .git file at a new git folder with core.fsmonitor", async () => {
      await using box = await fresh(route)
      await box.s.call("todowrite", { todos: [] })
      const mark = marker("re", route)
      const first = await box.s.bash(
        [
          "git init -q --bare sub/gd && git --git-dir=sub/gd config core.bare false",
          "printf 'gitdir: gd\\n' > sub/.git",
          "(cd sub && echo x > f && git add f && git -c user.name=a -c user.email=a@b.c commit -qm x)",
          "echo FIRST-OK",
        ].join("; "),
      )
      expect(first.raw).toContain("FIRST-OK")
      await box.s.bash(
        [
          "cp -r sub/gd sub/gd2",
          `git --git-dir=sub/gd2 config core.fsmonitor 'touch ${mark}; false'`,
          "printf 'gitdir: gd2\\n' > sub/.git",
          "echo SECOND-OK",
        ].join("; "),
      )
      const gitFile = fs.readFileSync(box.dir.file("sub/.git"), "utf8")
      expect({ gitFile, ranOnHost: fsmonitorRuns(box.dir.path, "sub", mark) }).toEqual({
        gitFile: "gitdir: gd\n",
        ranOnHost: false,
      })
    })
  })
}
