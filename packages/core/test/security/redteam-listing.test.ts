// Red-team cases against the listings the sandbox's hide and lock lists come from (red-team report L, root causes B and
// C), on both routes through the real hooks and bubblewrap: a listing cut short by its budget must never leave a
// protected path readable or a repository unchecked, and a protected path must be hidden or locked whatever kind of
// entry it is (a symbolic link) and however its name is stored (Unicode NFD).
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SECRET_FILE } from "./fixture"
import {
  REDTEAM_POLICY,
  ROUTES,
  git,
  isolateHome,
  open,
  redteamProject,
  smallProject,
  typedRefusal,
  type Session,
} from "./redteam-helpers"

// Every case here runs sandboxed shells and git: short ones slow down far more than long ones on a busy machine
// (0.2 s idle took over 5 s beside CPU-bound work), so none is left at bun's 5 s default.
setDefaultTimeout(60_000)

const home = isolateHome()
afterAll(() => home.restore(), 60_000)

/** rot13: a transform the output scanner does not undo, so only the sandbox stands between. */
const rot = (s: string) =>
  s.replace(/[a-zA-Z]/g, (c) => String.fromCharCode((c.toLowerCase() < "n" ? 13 : -13) + c.charCodeAt(0)))
const HEAVY = 300_000

const DUMP_LINE = "INSERT INTO customers VALUES ('alice', 'card 4111-QQ-SECRET-7731');"

/**
 * A project whose policy keeps config/ from writes and secrets/ from everything, with the user's hard links to a file
 * of each in the project folder: prod-link.yaml (config/prod.yaml) and dump-copy.sql (secrets/dump.sql, 2.7 MB: over
 * the 2 MB the index reads, so it has no fingerprints). The index budget is 40 entries, so a small flood cuts it.
 */
async function hardLinked() {
  const dir = await smallProject({
    ".opencode-security.json": JSON.stringify({
      version: "1.0",
      rules: [
        { pattern: "config/**", type: "directory", deniedOperations: ["write"], allowedRoles: [] },
        { pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] },
      ],
    }),
    ".opencode/opencode-builtins.json": JSON.stringify({ security: { maxIndexEntries: 40 } }),
    "config/prod.yaml": "db: prod\n",
    "secrets/dump.sql": `${DUMP_LINE}\n${"-- filler line of the dump\n".repeat(100_000)}`,
  })
  fs.linkSync(dir.file("config/prod.yaml"), dir.file("prod-link.yaml"))
  fs.linkSync(dir.file("secrets/dump.sql"), dir.file("dump-copy.sql"))
  return dir
}

/** The tools refuse both hard links; in the sandbox prod-link.yaml is read-only and dump-copy.sql unreadable. */
async function linksProtected(s: Session, file: (rel: string) => string) {
  const w = await s.call("write", { filePath: "prod-link.yaml", content: "db: evil\n" })
  expect(typedRefusal(w)).toBe(true)
  expect(w.reason).toContain("via hard link to config/prod.yaml")
  const r = await s.call("read", { filePath: "dump-copy.sql", limit: 1 })
  expect(typedRefusal(r)).toBe(true)
  expect(r.reason).toContain("via hard link to secrets/dump.sql")
  // Names built at run time: the static reading refuses a protected path written in the command.
  const wrote = await s.bash("for f in $(ls | grep '^prod-l'); do echo 'db: evil' > $f; done; echo wrote")
  expect(wrote.raw).toContain("wrote")
  expect(fs.readFileSync(file("config/prod.yaml"), "utf8")).toBe("db: prod\n")
  const shown = await s.bash(
    "for f in $(ls | grep '^dump-c'); do head -1 $f | tr 'A-Za-z' 'N-ZA-Mn-za-m'; done; echo probed",
  )
  expect(shown.raw).toContain("probed")
  expect(shown.raw).not.toContain(rot(DUMP_LINE))
}
// The index budget is lowered to 2,000 entries (the default is 100,000) so a flood past it stays cheap: what is tested
// is what happens once any budget is exceeded, not the default's size.
const BUDGET = { ".opencode/opencode-builtins.json": JSON.stringify({ security: { maxIndexEntries: 2_000 } }) }
const FLOOD = "mkdir -p aaa && cd aaa && seq 1 2001 | xargs touch && cd .."

for (const route of ROUTES) {
  describe(`${route} route: listings cut short fail closed (L3, L4)`, () => {
    test(
      "a command making 2,001 files (past the index budget) before app/ does not un-hide app/.env.production; the note says why",
      async () => {
        // copies/backup.txt: a user's copy of a protected file (O3: once the listing stopped before secrets/, its
        // fingerprints went and the copy's token was shown in clear).
        await using dir = await redteamProject({ ...BUDGET, "copies/backup.txt": SECRET_FILE.split("\n")[0] + "\n" })
        const s = await open(route, dir.path)
        try {
          const probe = "ls -A app | while read f; do tr 'A-Za-z' 'N-ZA-Mn-za-m' < \"app/$f\"; done; echo probed"
          const token = rot("prodtoken99887766aabbccdd")
          expect((await s.bash(probe)).raw).not.toContain(token)
          const flood = await s.bash(`${FLOOD} && ls aaa | wc -l`, { timeoutMs: HEAVY })
          expect(flood.raw).toContain("2001")
          const after = await s.bash(probe)
          expect(after.raw).toContain("probed")
          expect(after.raw).not.toContain(token)
          expect(after.output).toContain("maxIndexEntries")
          expect(after.output).toContain("hidden from this command")
          expect(after.output).toContain("it stopped at aaa, which holds 2001 entries")
          // Searched in copies/ only: ripgrep need not walk aaa/'s 2,001 files (the redaction is the scanner's).
          const grep = await s.call("grep", { pattern: "API_KEY", path: "copies" })
          expect(grep.output).toContain("copies/backup.txt")
          expect(grep.output).toContain("[REDACTED: content of a protected file]")
          expect(grep.output).not.toMatch(/API_KEY=\w/)
          // O4: the committed versions of src/app.ts (now in an unlisted folder) stay masked in .git/objects.
          const history = await s.bash(
            "git show HEAD:src/app.ts | grep -v -i secure | tr A-Za-z N-ZA-Mn-za-m; echo probed",
          )
          expect(history.raw).toContain("probed")
          expect(history.raw).toContain(rot("[REDACTED: protected segment]"))
          expect(history.raw).not.toContain(rot("Kd93mVx71LqPz0Rw"))
        } finally {
          await s.close()
        }
      },
      HEAVY,
    )

    test(
      "a repository made past the budget in the same command loses its core.fsmonitor at once",
      async () => {
        await using dir = await redteamProject(BUDGET)
        const s = await open(route, dir.path)
        try {
          const script = path.join(dir.path, "fsm.sh")
          const made = await s.bash(
            [
              FLOOD,
              `printf '#!/bin/sh\\ntouch ${dir.path}/ran\\n' > ${script} && chmod +x ${script}`,
              "mkdir -p zzz/sub && cd zzz/sub && git init -q && echo x > f",
              `git config core.fsmonitor ${script} && git config core.fsmonitor && echo configured`,
            ].join("\n"),
            { timeoutMs: HEAVY },
          )
          expect(made.raw).toContain("configured")
          expect(made.output).toContain("zzz/sub/.git/config")
          const config = path.join(dir.path, "zzz/sub/.git/config")
          expect(fs.existsSync(config) ? fs.readFileSync(config, "utf8") : "").not.toContain("fsmonitor")
          // What OpenCode's snapshot would run on the host now runs nothing.
          git(path.join(dir.path, "zzz/sub"), "status", "--short")
          expect(fs.existsSync(path.join(dir.path, "ran"))).toBe(false)
        } finally {
          await s.close()
        }
      },
      HEAVY,
    )
  })

  describe(`${route} route: a listing cut short keeps the user's hard links protected (Q2)`, () => {
    // The carry-forward of O3 kept only files with fingerprints or segments: once a command cut the listing before
    // config/ and secrets/, the inodes of a write-only file and of a read-protected file over 2 MB went, and the user's
    // hard links to them in the project folder were written through and read (tools and sandbox alike).
    test("a write-only protected file and a read-protected file over 2 MB, through the user's hard links", async () => {
      await using dir = await hardLinked()
      const s = await open(route, dir.path)
      try {
        await linksProtected(s, dir.file)
        const flood = await s.bash("mkdir -p b-flood && cd b-flood && seq 1 60 | xargs touch && echo flooded")
        expect(flood.raw).toContain("flooded")
        const tick = await s.bash("echo tick")
        expect(tick.output).toContain("it stopped at b-flood")
        expect(tick.output).toContain("hidden from this command")
        await linksProtected(s, dir.file)
      } finally {
        await s.close()
      }
    })

    // No earlier listing to keep anything from: the hard links' other names are looked for in the unlisted folders.
    test("the same when the listing was cut before the session started", async () => {
      await using dir = await hardLinked()
      fs.mkdirSync(dir.file("b-flood"))
      for (let i = 0; i < 60; i++) fs.writeFileSync(dir.file(`b-flood/${i}`), "")
      const s = await open(route, dir.path)
      try {
        const tick = await s.bash("echo tick")
        expect(tick.output).toContain("it stopped at b-flood")
        await linksProtected(s, dir.file)
      } finally {
        await s.close()
      }
    })
  })

  describe(`${route} route: protected links and NFD names (L6, L6b, L7, L8)`, () => {
    test("a protected file, folder or segment file that is a link is hidden or locked at its target", async () => {
      const outside = fs.mkdtempSync(path.join(home.home, "shared-"))
      fs.writeFileSync(path.join(outside, "env"), "LINKED_ENV=Lk4Env8Qw2Zx6Pm\n")
      fs.mkdirSync(path.join(outside, "vendor"))
      fs.writeFileSync(path.join(outside, "vendor", "lib.js"), "module.exports = 1\n")
      fs.mkdirSync(path.join(outside, "vault"))
      fs.writeFileSync(path.join(outside, "vault", "key.txt"), "VAULT=Vt7Key3Lq9Wd2Rx\n")
      fs.writeFileSync(
        path.join(outside, "app.ts"),
        "// @secure-start\nconst seg = 'Sg5Link8Mv3Qp7Tz'\n// @secure-end\n",
      )
      await using dir = await redteamProject()
      fs.rmSync(dir.file(".env"))
      fs.symlinkSync(path.join(outside, "env"), dir.file(".env"))
      fs.rmSync(dir.file("vendor"), { recursive: true })
      fs.symlinkSync(path.join(outside, "vendor"), dir.file("vendor"))
      fs.rmSync(dir.file("secrets"), { recursive: true })
      fs.symlinkSync(path.join(outside, "vault"), dir.file("secrets"))
      fs.symlinkSync(path.join(outside, "app.ts"), dir.file("src/linked.ts"))
      const s = await open(route, dir.path)
      try {
        expect((await s.call("read", { filePath: ".env" })).refused).toBe(true)
        const read = await s.bash(
          [
            "for f in $(ls -A | grep '^.en'); do tr 'A-Za-z' 'N-ZA-Mn-za-m' < $f; done",
            "d=$(ls | grep ^sec); for f in $(ls $d/ 2>/dev/null); do tr 'A-Za-z' 'N-ZA-Mn-za-m' < $d/$f; done",
            "tr 'A-Za-z' 'N-ZA-Mn-za-m' < src/linked.ts",
            "echo probed",
          ].join("\n"),
        )
        expect(read.raw).toContain("probed")
        for (const secret of ["Lk4Env8Qw2Zx6Pm", "Vt7Key3Lq9Wd2Rx", "Sg5Link8Mv3Qp7Tz"]) {
          expect(read.raw).not.toContain(rot(secret))
          expect(read.raw).not.toContain(secret)
        }
        const write = await s.bash('ls -d v*/ | while read d; do echo PWNED >> "$d/lib.js"; done; echo wrote')
        expect(write.raw).toContain("wrote")
        expect(fs.readFileSync(path.join(outside, "vendor", "lib.js"), "utf8")).toBe("module.exports = 1\n")
        // The link itself replaced by a folder of the command's own: moved aside, the link put back.
        const swap = await s.bash(
          "for d in $(ls | grep ^vend); do rm $d && mkdir $d && echo PWNED > $d/lib.js; done; echo swapped",
        )
        expect(swap.raw).toContain("swapped")
        expect(swap.output).toContain("was put back")
        expect(fs.readlinkSync(dir.file("vendor"))).toBe(path.join(outside, "vendor"))
        expect(fs.readFileSync(dir.file("vendor/lib.js"), "utf8")).toBe("module.exports = 1\n")
      } finally {
        await s.close()
      }
    })

    test("a protected file whose name is stored decomposed (NFD) is hidden under that name", async () => {
      await using dir = await redteamProject()
      fs.writeFileSync(dir.file("config/cafe\u0301.key"), "NFD_KEY=Nf3Dec7Kx2Wq9Lm\n")
      const s = await open(route, dir.path)
      try {
        const out = await s.bash(
          "ls config | while read f; do tr 'A-Za-z' 'N-ZA-Mn-za-m' < \"config/$f\"; done; echo probed",
        )
        expect(out.raw).toContain("probed")
        expect(out.raw).not.toContain(rot("Nf3Dec7Kx2Wq9Lm"))
      } finally {
        await s.close()
      }
    })

    test("rules outside the project: a linked folder is hidden, and 20,001 planted files do not un-hide a match", async () => {
      const base = fs.mkdtempSync(path.join(home.home, "outside-"))
      fs.mkdirSync(path.join(base, "dotfiles", "aws"), { recursive: true })
      fs.writeFileSync(path.join(base, "dotfiles", "aws", "credentials"), "AWS=Aw5Cred9Qx3Lp7Z\n")
      fs.symlinkSync(path.join(base, "dotfiles", "aws"), path.join(base, ".aws"))
      fs.mkdirSync(path.join(base, "vault", "zz"), { recursive: true })
      fs.writeFileSync(path.join(base, "vault", "zz", "a.pem"), "PEM=Pm8Vault2Kx6Qw4\n")
      const policy = {
        ...REDTEAM_POLICY,
        rules: [
          ...REDTEAM_POLICY.rules,
          { pattern: `${base}/.aws`, type: "directory", deniedOperations: ["read", "llm"], allowedRoles: [] },
          { pattern: `${base}/vault/**/*.pem`, type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] },
        ],
      }
      await using dir = await redteamProject({}, policy)
      const s = await open(route, dir.path)
      try {
        // Names built at run time: the static reading refuses a protected path written in the command.
        const probe = [
          `cd ${base} && for d in $(ls -A | grep '^.a'); do for f in $(ls $d/); do tr 'A-Za-z' 'N-ZA-Mn-za-m' < $d/$f; done; done`,
          "find vault -name '*.p?m' | while read f; do tr 'A-Za-z' 'N-ZA-Mn-za-m' < \"$f\"; done",
          "echo probed",
        ].join("\n")
        const before = await s.bash(probe)
        expect(before.raw).toContain("probed")
        expect(before.raw).not.toContain(rot("Aw5Cred9Qx3Lp7Z"))
        expect(before.raw).not.toContain(rot("Pm8Vault2Kx6Qw4"))
        await s.bash(`mkdir -p ${base}/vault/aa && cd ${base}/vault/aa && seq 1 20001 | xargs touch`, {
          timeoutMs: 120_000,
        })
        const after = await s.bash(probe)
        expect(after.raw).toContain("probed")
        expect(after.raw).not.toContain(rot("Pm8Vault2Kx6Qw4"))
      } finally {
        await s.close()
      }
    }, 120_000)
  })
}
