import { describe, expect, test } from "bun:test"
import { spawnSync } from "child_process"
import fs from "fs"
import { SecurityRipgrep } from "../../security/ripgrep"
import { tmpdir } from "../fixture"

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
})
