import { describe, expect, test } from "bun:test"
import fs from "fs"
import { SecurityRipgrep } from "../../security/ripgrep"
import { tmpdir } from "../fixture"
import { spawnSync } from "../spawn-sync"

describe("SecurityRipgrep", () => {
  test("globs: every suffix of a protected path, anchored; everything below a folder", () => {
    expect(SecurityRipgrep.globs([{ path: "/r/a/.env", dir: false }])).toEqual(["!/r/a/.env", "!/a/.env", "!/.env"])
    expect(SecurityRipgrep.globs([{ path: "/r/s[1]", dir: true }])).toContain("!/s\\[1\\]/**")
  })

  test("ripgrep itself skips the protected files from the root, a subfolder or a parent, and keeps the user's file", async () => {
    await using dir = await tmpdir({
      "a/.env": "needle",
      "a/x.ts": "needle",
      "b/a/.env": "needle",
      "user.rg": "--hidden\n",
    })
    const env: NodeJS.ProcessEnv = { ...process.env, RIPGREP_CONFIG_PATH: dir.file("user.rg") }
    try {
      SecurityRipgrep.set("test", SecurityRipgrep.globs([{ path: dir.file("a/.env"), dir: false }]), env)
      expect(fs.readFileSync(env.RIPGREP_CONFIG_PATH!, "utf8")).toContain("--hidden")
      const rg = (cwd: string) =>
        spawnSync("rg", ["-l", "needle", "."], { cwd, env, encoding: "utf8" }).stdout.trim().split("\n").sort()
      // From the root: a/.env is excluded, b/a/.env (not protected) is found.
      expect(rg(dir.path)).toEqual(["./a/x.ts", "./b/a/.env"])
      expect(rg(dir.file("a"))).toEqual(["./x.ts"])
    } finally {
      SecurityRipgrep.set("test", [], env)
    }
  })

  test("entries of one folder share their globs, so thousands of protected entries stay under ripgrep's size limit", async () => {
    // Many projects' protected records in one process: with one glob per suffix per entry, the red-team suite's 100
    // projects made 17,935 globs, ripgrep refused them ("Compiled regex exceeds size limit") and every search found
    // nothing. Grouped, a folder's entries take one glob per suffix; names with glob characters stay literal.
    const names = ["snapshot", "storage", "log", "tool-output", "auth.json", "opencode.db", "a,b{c}"]
    const entries = Array.from({ length: 300 }, (_, i) =>
      names.map((n) => ({ path: `/tmp/home-${i}/.local/share/opencode/${n}`, dir: !n.includes(".") })),
    ).flat()
    const list = SecurityRipgrep.globs(entries)
    expect(list).toContain("!/opencode/{a\\,b\\{c\\},auth.json,log,opencode.db,snapshot,storage,tool-output}")
    await using dir = await tmpdir({
      "opencode/log/x.txt": "needle",
      "opencode/a,b{c}": "needle",
      "opencode/kept.txt": "needle",
      "src/app.ts": "needle",
    })
    const env: NodeJS.ProcessEnv = { ...process.env }
    delete env.RIPGREP_CONFIG_PATH
    try {
      SecurityRipgrep.set("many", list, env)
      const r = spawnSync("rg", ["-l", "needle", "."], { cwd: dir.path, env, encoding: "utf8" })
      expect(r.stderr).toBe("")
      expect(r.stdout.trim().split("\n").sort()).toEqual(["./opencode/kept.txt", "./src/app.ts"])
    } finally {
      SecurityRipgrep.set("many", [], env)
    }
  })

  test("a name with a line break or trailing white space cannot add ripgrep arguments and is still excluded", async () => {
    // The config file is one argument per line and ripgrep trims each line: a protected file the agent names
    // ".env\n--pre=sh" made ripgrep run sh on every file it searched (on the host), and a name ending in a space or
    // a tab lost it and was not excluded.
    const names = ["a/.env\n--pre=sh\n--context-separator=x", "a/key \t", "a/k\re\u0085y", "a/token\u2028"]
    await using dir = await tmpdir({
      "a/plain.txt": "needle",
      "run.txt": "needle",
    })
    for (const n of names) fs.writeFileSync(dir.file(n), "needle")
    const list = SecurityRipgrep.globs(names.map((n) => ({ path: dir.file(n), dir: false })))
    for (const glob of list) expect(glob).not.toMatch(/[\n\r\u0085]|\s$/)
    const env: NodeJS.ProcessEnv = { ...process.env }
    delete env.RIPGREP_CONFIG_PATH
    try {
      SecurityRipgrep.set("names", list, env)
      const config = fs.readFileSync(env.RIPGREP_CONFIG_PATH!, "utf8").split("\n").filter(Boolean)
      expect(config.every((l) => l.startsWith("--glob=!"))).toBe(true)
      const r = spawnSync("rg", ["-l", "needle", "."], { cwd: dir.path, env, encoding: "utf8" })
      expect(r.stderr).toBe("")
      // Only the two ordinary files: every odd name excluded, and nothing was run on the files (with --pre=sh ripgrep
      // would search sh's output, not "needle").
      expect(r.stdout.trim().split("\n").sort()).toEqual(["./a/plain.txt", "./run.txt"])
    } finally {
      SecurityRipgrep.set("names", [], env)
    }
  })
})
