import { describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { SecurityGuard } from "../../security/guard"
import { SecuritySearchPath } from "../../security/search-path"
import { tmpdir } from "../fixture"

describe("SecuritySearchPath.folders", () => {
  test("writable absolute folders outside the project are held, with the home's standard ones, absent or not", async () => {
    await using dir = await tmpdir({ "project/a.txt": "a", "tools/bin/x": "x", "home/.profile": "" })
    const root = dir.file("project")
    const home = dir.file("home")
    const env = { PATH: [dir.file("tools/bin"), dir.file("missing/bin"), "/proc/self", "~/xbin"].join(path.delimiter) }
    const got = SecuritySearchPath.folders(env, { root, home })
    // /proc/self: nobody may write or create it there, so nothing to hold.
    expect(got.protect).toEqual([
      dir.file("tools/bin"),
      dir.file("missing/bin"),
      // Bash expands a literal ~/ in PATH when it looks a program up.
      path.join(home, "xbin"),
      path.join(home, ".local/bin"),
      path.join(home, "bin"),
    ])
    expect(got.unsafe).toEqual([])
  })

  test("relative, empty, in-project entries and those holding the project, the home or /tmp cannot be held", async () => {
    await using dir = await tmpdir({ "project/node_modules/.bin/x": "x", "home/.profile": "" })
    const root = dir.file("project")
    const home = dir.file("home")
    const entries = [".", "", "node_modules/.bin", dir.file("project/node_modules/.bin"), dir.path, home, os.tmpdir()]
    const got = SecuritySearchPath.folders({ PATH: entries.join(path.delimiter) }, { root, home })
    expect(got.unsafe).toEqual([
      ".",
      "(empty: the current folder)",
      "node_modules/.bin",
      dir.file("project/node_modules/.bin"),
      dir.path,
      home,
      path.resolve(os.tmpdir()),
    ])
    expect(got.protect).toEqual([path.join(home, ".local/bin"), path.join(home, "bin")])
  })

  test("in entries that cannot be held, the programs OpenCode starts by name are held one by one", async () => {
    await using dir = await tmpdir({ "project/sub/a.txt": "a", "home/.profile": "" })
    const root = dir.file("project")
    const got = SecuritySearchPath.folders(
      { PATH: ["./node_modules/.bin", dir.file("project/bin")].join(path.delimiter) },
      { root, home: dir.file("home"), directory: dir.file("project/sub") },
    )
    // A relative entry is looked up from wherever OpenCode runs a program: the root and the folder it started in.
    for (const p of [
      "project/node_modules/.bin/git",
      "project/sub/node_modules/.bin/git",
      "project/node_modules/.bin/rg",
      "project/bin/bash",
    ])
      expect(got.programs).toContain(dir.file(p))
    expect(got.programs).toHaveLength(3 * SecuritySearchPath.PROGRAMS.length)
  })

  test("no PATH at all: only the home's standard folders", () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "sp-home-"))
    try {
      expect(SecuritySearchPath.folders({}, { root: "/nonexistent/project", home }).protect).toEqual([
        path.join(home, ".local/bin"),
        path.join(home, "bin"),
      ])
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })

  test("hostProtected lists them as folders no role may write", async () => {
    await using dir = await tmpdir({ "project/a.txt": "a", "tools/bin/x": "x", "home/.profile": "" })
    const list = SecurityGuard.hostProtected(dir.file("project"), dir.file("project"), {
      HOME: dir.file("home"),
      PATH: dir.file("tools/bin"),
    })
    expect(list).toContain(dir.file("tools/bin") + path.sep)
    expect(list).toContain(path.join(dir.file("home"), ".local/bin") + path.sep)
  })
})

describe("SecuritySearchPath.which", () => {
  test("the system's program before one of the same name earlier in PATH", async () => {
    await using dir = await tmpdir({ "bin/git": "#!/bin/sh\necho fake\n" })
    fs.chmodSync(dir.file("bin/git"), 0o755)
    const system = SecuritySearchPath.SYSTEM.map((d) => path.join(d, "git")).find((p) => fs.existsSync(p))
    expect(system).toBeDefined()
    expect(SecuritySearchPath.which("git", { PATH: dir.file("bin") })).toBe(system!)
  })

  test("a program only in PATH is found there; relative entries, folders and files without x are skipped", async () => {
    await using dir = await tmpdir({
      "a/ocb-tool-x": "#!/bin/sh\n",
      "b/ocb-tool-x": "#!/bin/sh\n",
      "c/ocb-tool-x/f": "",
    })
    fs.chmodSync(dir.file("a/ocb-tool-x"), 0o644)
    fs.chmodSync(dir.file("b/ocb-tool-x"), 0o755)
    const PATH = [".", dir.file("c"), dir.file("a"), dir.file("b")].join(path.delimiter)
    // root may execute a file without x bits only when some x bit is set: 0644 is skipped for every user.
    expect(SecuritySearchPath.which("ocb-tool-x", { PATH })).toBe(dir.file("b/ocb-tool-x"))
    expect(SecuritySearchPath.which("ocb-tool-missing", { PATH })).toBeUndefined()
  })
})

describe("SecuritySearchPath.installation", () => {
  const pkg = (name: string) => JSON.stringify({ name, version: "1.0.0" })

  test("an npm install: the opencode-ai package above the platform binary, launcher included", async () => {
    await using dir = await tmpdir({
      "prefix/lib/node_modules/opencode-ai/package.json": pkg("opencode-ai"),
      "prefix/lib/node_modules/opencode-ai/bin/opencode": "#!/usr/bin/env node\n",
      "prefix/lib/node_modules/opencode-ai/node_modules/opencode-linux-x64/package.json": pkg("opencode-linux-x64"),
      "prefix/lib/node_modules/opencode-ai/node_modules/opencode-linux-x64/bin/opencode": "binary",
      "home/.profile": "",
    })
    const binary = dir.file("prefix/lib/node_modules/opencode-ai/node_modules/opencode-linux-x64/bin/opencode")
    expect(SecuritySearchPath.installation(binary, { root: dir.file("project"), home: dir.file("home") })).toEqual([
      dir.file("prefix/lib/node_modules/opencode-ai"),
    ])
  })

  test("the install script's binary: its own folder; a project named opencode-… around a runtime is not a package", async () => {
    await using dir = await tmpdir({
      "home/.opencode/bin/opencode": "binary",
      "work/package.json": pkg("opencode-tools"),
      "work/node_modules/bun/package.json": pkg("bun"),
      "work/node_modules/bun/bin/bun": "binary",
    })
    const home = dir.file("home")
    expect(
      SecuritySearchPath.installation(dir.file("home/.opencode/bin/opencode"), { root: "/nowhere", home }),
    ).toEqual([dir.file("home/.opencode/bin")])
    expect(
      SecuritySearchPath.installation(dir.file("work/node_modules/bun/bin/bun"), { root: "/nowhere", home }),
    ).toEqual([dir.file("work/node_modules/bun/bin")])
  })

  test("a flat install (bun add -g, pnpm): the launcher package beside the platform binary's is held too", async () => {
    await using dir = await tmpdir({
      "g/node_modules/opencode-ai/package.json": pkg("opencode-ai"),
      "g/node_modules/opencode-ai/bin/opencode": "#!/usr/bin/env node\n",
      "g/node_modules/opencode-linux-x64/package.json": pkg("opencode-linux-x64"),
      "g/node_modules/opencode-linux-x64/bin/opencode": "binary",
      "g/node_modules/left-pad/package.json": pkg("left-pad"),
      "home/.profile": "",
    })
    const got = SecuritySearchPath.installation(dir.file("g/node_modules/opencode-linux-x64/bin/opencode"), {
      root: "/nowhere",
      home: dir.file("home"),
    })
    expect(got.sort()).toEqual([dir.file("g/node_modules/opencode-ai"), dir.file("g/node_modules/opencode-linux-x64")])
  })

  test("none when the binary is missing, or its folder is the home or holds the project", async () => {
    await using dir = await tmpdir({ "home/opencode": "binary", "tools/opencode": "binary", "tools/project/a": "a" })
    const home = dir.file("home")
    expect(SecuritySearchPath.installation(dir.file("missing/opencode"), { root: "/nowhere", home })).toEqual([])
    expect(SecuritySearchPath.installation(dir.file("home/opencode"), { root: "/nowhere", home })).toEqual([])
    expect(
      SecuritySearchPath.installation(dir.file("tools/opencode"), { root: dir.file("tools/project"), home }),
    ).toEqual([])
  })

  test("hostProtected holds the running OpenCode's package and npm's global configuration beside it", async () => {
    await using dir = await tmpdir({ "project/a.txt": "a", "home/.opencode/bin/opencode": "binary" })
    const list = SecurityGuard.hostProtected(
      dir.file("project"),
      dir.file("project"),
      { HOME: dir.file("home"), PATH: "" },
      dir.file("home/.opencode/bin/opencode"),
    )
    expect(list).toContain(dir.file("home/.opencode/bin") + path.sep)
    // npm's global configuration, which OpenCode reads for the registry it installs plugins from.
    expect(list).toContain(dir.file("home/.opencode/etc/npmrc"))
  })
})

describe("SecuritySearchPath.strip", () => {
  test("drops the entries that cannot be held and keeps the order of the rest", async () => {
    await using dir = await tmpdir({ "project/node_modules/.bin/x": "x", "tools/bin/x": "x", "home/.profile": "" })
    const root = dir.file("project")
    const home = dir.file("home")
    const value = [".", dir.file("tools/bin"), "", dir.file("project/node_modules/.bin"), "/usr/bin", home].join(
      path.delimiter,
    )
    expect(SecuritySearchPath.strip(value, { root, home })).toBe(
      [dir.file("tools/bin"), "/usr/bin"].join(path.delimiter),
    )
    expect(SecuritySearchPath.strip("", { root, home })).toBe("")
  })
})

describe("SecuritySearchPath.linked", () => {
  test("links in a held PATH folder: their package folder, a whole node_modules, or the target alone", async () => {
    await using dir = await tmpdir({
      "brew/Cellar/git/2.47.0/bin/git": "binary",
      "npm/lib/node_modules/typescript/bin/tsc": "js",
      "npm/lib/node_modules/eslint/bin/eslint.js": "js",
      "home/scripts/deploy": "sh",
      "home/.local/zig/zig": "binary",
      "home/.profile": "",
      "bin/plain": "sh",
      "project/tools/mine": "sh",
    })
    const bin = dir.file("bin")
    const link = (target: string, name: string) => fs.symlinkSync(dir.file(target), path.join(bin, name))
    link("brew/Cellar/git/2.47.0/bin/git", "git")
    link("npm/lib/node_modules/typescript/bin/tsc", "tsc")
    link("npm/lib/node_modules/eslint/bin/eslint.js", "eslint")
    // Two levels above lies the home itself: only the script is held.
    link("home/scripts/deploy", "deploy")
    // Inside the project (npm link of the project's own CLI): the project's file, left to the project.
    link("project/tools/mine", "mine")
    // Two levels above lies a folder right in the home (~/.local): only the program is held.
    link("home/.local/zig/zig", "zig")
    fs.symlinkSync("plain", path.join(bin, "alias"))
    fs.symlinkSync(dir.file("missing/x"), path.join(bin, "dangling"))
    const got = SecuritySearchPath.linked([bin], { root: dir.file("project"), home: dir.file("home") })
    expect(got.sort()).toEqual(
      [
        dir.file("brew/Cellar/git/2.47.0"),
        dir.file("npm/lib/node_modules"),
        dir.file("home/scripts/deploy"),
        dir.file("home/.local/zig/zig"),
      ].sort(),
    )
  })

  test("system folders are not looked into", () => {
    expect(SecuritySearchPath.linked(["/usr/bin", "/bin"], { root: "/nowhere", home: "/nowhere-home" })).toEqual([])
  })
})
