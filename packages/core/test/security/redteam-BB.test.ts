// Red team BB: bypasses of the AO3 sweep (a write-protected path a command creates is moved aside). BB2: a protected path
// reached through a folder link the command makes above it; BB6: anything below a folder named after the audit log plus
// `.`; the rest held and stay as regressions.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs"
import path from "path"
import { REDTEAM_POLICY, ROUTES, isolateHome, open, redteamProject } from "./redteam-helpers"

setDefaultTimeout(120_000)
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

const writeDenied = (pattern: string, type: "file" | "directory") => ({
  ...REDTEAM_POLICY,
  rules: [...REDTEAM_POLICY.rules, { pattern, type, deniedOperations: ["write"], allowedRoles: [] }],
})
/** A name spelled at run time, so the layer's static check of the command cannot read it. */
const hidden = (x: string) => `"$(echo ${Buffer.from(x).toString("base64")} | base64 -d)"`

/** Runs `command` in a sandboxed shell of `route` at `dir`. */
async function run(route: (typeof ROUTES)[number], dir: string, command: string) {
  const s = await open(route, dir)
  try {
    return await s.bash(command)
  } finally {
    await s.close()
  }
}

for (const route of ROUTES) {
  describe(`route ${route}: BB AO3 bypasses`, () => {
    test("held: an existing write-protected file is not moved off its path by renaming its parent (mv db db2)", async () => {
      await using dir = await redteamProject(
        { "db/migrations/001.sql": "CREATE TABLE users (id int);\n" },
        writeDenied("db/migrations/**", "directory"),
      )
      await run(
        route,
        dir.path,
        `mv db ${hidden("db2")}; mkdir -p db/migrations; printf 'DROP TABLE users;\\n' > ${hidden("db/migrations/001.sql")}`,
      )
      expect(fs.readFileSync(dir.file("db/migrations/001.sql"), "utf8")).toBe("CREATE TABLE users (id int);\n")
    })

    test("BB2 a write-protected path reached through a folder link the command makes (.github -> gh)", async () => {
      await using dir = await redteamProject({}, writeDenied(".github/workflows/**", "directory"))
      await run(
        route,
        dir.path,
        `mkdir -p gh/workflows && echo 'on: push' > gh/workflows/ci.yml && ln -s gh ${hidden(".github")}`,
      )
      expect(fs.existsSync(dir.file(".github/workflows/ci.yml"))).toBe(false)
    })

    test("held: a protected path reached through a link the command makes below a new folder (.github/workflows -> ../w)", async () => {
      await using dir = await redteamProject({}, writeDenied(".github/workflows/**", "directory"))
      await run(
        route,
        dir.path,
        `mkdir -p w .github && echo 'on: push' > w/ci.yml && ln -s ../w ${hidden(".github/workflows")}`,
      )
      expect(fs.existsSync(dir.file(".github/workflows/ci.yml"))).toBe(false)
    })

    test("BB2 a link whose target is a write-protected path (ci -> .github/workflows/ci.yml) is moved aside", async () => {
      await using dir = await redteamProject({}, writeDenied(".github/workflows/**", "directory"))
      await run(route, dir.path, `ln -s ${hidden(".github/workflows/ci.yml")} ci`)
      expect(() => fs.lstatSync(dir.file("ci"))).toThrow()
    })

    test("BB2 a new link to a folder with more entries than the layer walks is moved aside (fail closed)", async () => {
      await using dir = await redteamProject({}, writeDenied(".github/workflows/**", "directory"))
      await run(route, dir.path, `mkdir -p big && cd big && seq 1 10001 | xargs touch && cd .. && ln -s big many`)
      expect(() => fs.lstatSync(dir.file("many"))).toThrow()
      expect(fs.readdirSync(dir.file("big")).length).toBe(10_001)
    })

    test("held: a new folder holding the protected path renamed into place (mv staging db)", async () => {
      await using dir = await redteamProject({}, writeDenied("db/migrations/**", "directory"))
      await run(
        route,
        dir.path,
        `mkdir -p staging/migrations && echo 'DROP TABLE users;' > staging/migrations/001.sql && mv staging ${hidden("db")}`,
      )
      expect(fs.existsSync(dir.file("db/migrations/001.sql"))).toBe(false)
    })

    test("held: a link at the protected name itself (db/migrations -> ../m)", async () => {
      await using dir = await redteamProject({ "db/schema.sql": "x\n" }, writeDenied("db/migrations/**", "directory"))
      await run(
        route,
        dir.path,
        `mkdir -p m && echo 'DROP TABLE users;' > m/001.sql && ln -s ../m ${hidden("db/migrations")}`,
      )
      expect(fs.existsSync(dir.file("db/migrations/001.sql"))).toBe(false)
    })

    test("held: a name-only write rule (vendor) at any depth, below a folder whose name is not UTF-8", async () => {
      await using dir = await redteamProject({}, writeDenied("vendor", "directory"))
      await run(
        route,
        dir.path,
        `d="$(printf 'pkg\\377')"; v="$(echo dmVuZG9y | base64 -d)"; mkdir -p "$d/$v" && echo 'evil()' > "$d/$v/x.js"`,
      )
      const bad = Buffer.concat([Buffer.from(dir.path + "/pkg"), Buffer.from([0xff]), Buffer.from("/vendor/x.js")])
      expect(fs.existsSync(bad)).toBe(false)
    })

    test("BB6 a name-only write rule (vendor): created inside a folder whose name starts with the audit log's name", async () => {
      await using dir = await redteamProject({}, writeDenied("vendor", "directory"))
      await run(
        route,
        dir.path,
        `d="$(echo LmRpc3Q= | base64 -d)"; v="$(echo dmVuZG9y | base64 -d)"; l="$(ls -a | grep -m1 'audit.log$')"; mkdir -p "$l$d/$v" && echo 'evil()' > "$l$d/$v/x.js"`,
      )
      const made = fs.readdirSync(dir.path).filter((n) => n.endsWith("audit.log.dist"))
      expect(made.length).toBe(1)
      expect(fs.existsSync(path.join(dir.path, made[0], "vendor/x.js"))).toBe(false)
    })
  })
}
