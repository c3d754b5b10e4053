import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityPath } from "../../security/paths"
import { tmpdir } from "../fixture"

describe("SecurityPath", () => {
  test("expand normalises every spelling to one absolute NFC path", () => {
    expect(SecurityPath.expand("./a//b/../c/", "/r")).toBe("/r/a/c")
    expect(SecurityPath.expand("~/x", "/r", "/h")).toBe("/h/x")
    expect(SecurityPath.expand("~", "/r", "/h")).toBe("/h")
    expect(SecurityPath.expand("file:///r/a%20b", "/x")).toBe("/r/a b")
    expect(SecurityPath.expand("caf\u0065\u0301", "/r")).toBe("/r/caf\u00e9")
  })
  test("resolve follows links component by component and reports every hop; loops end", async () => {
    await using dir = await tmpdir({ "real/file": "x" })
    fs.symlinkSync("real", path.join(dir.path, "dir-link"))
    fs.symlinkSync("dir-link/file", path.join(dir.path, "file-link"))
    fs.symlinkSync("l2", path.join(dir.path, "l1"))
    fs.symlinkSync("l1", path.join(dir.path, "l2"))
    const r = SecurityPath.resolve(path.join(dir.path, "file-link"))
    expect(r.real).toBe(path.join(dir.path, "real/file"))
    expect(r.exists).toBe(true)
    expect(r.hops).toContain(path.join(dir.path, "dir-link/file"))
    const loop = SecurityPath.resolve(path.join(dir.path, "l1"))
    expect(loop.loop).toBe(true)
    const missing = SecurityPath.resolve(path.join(dir.path, "dir-link/new/deeper"))
    expect(missing.exists).toBe(false)
    expect(missing.real).toBe(path.join(dir.path, "real/new/deeper"))
    expect(SecurityPath.resolve(path.join(dir.path, "real/file")).hops).toEqual([])
  })
  test("linkIdentity only for regular files with several names", async () => {
    await using dir = await tmpdir({ a: "x", b: "y" })
    expect(SecurityPath.linkIdentity(path.join(dir.path, "a"))).toBeUndefined()
    fs.linkSync(path.join(dir.path, "a"), path.join(dir.path, "a2"))
    const id = SecurityPath.linkIdentity(path.join(dir.path, "a2"))
    expect(id).toEqual({
      dev: fs.statSync(path.join(dir.path, "a")).dev,
      ino: fs.statSync(path.join(dir.path, "a")).ino,
    })
  })
  test("caseInsensitive probes the real file system (ext4/tmpfs here: sensitive)", async () => {
    await using dir = await tmpdir({ ".opencode-security.json": "{}" })
    expect(SecurityPath.caseInsensitive(path.join(dir.path, ".opencode-security.json"))).toBe(false)
    expect(SecurityPath.caseInsensitive(path.join(dir.path, "123"))).toBe(false)
  })
  test("isInside", () => {
    expect(SecurityPath.isInside("/a/b", "/a")).toBe(true)
    expect(SecurityPath.isInside("/ab", "/a")).toBe(false)
    expect(SecurityPath.isInside("/A/b", "/a", true)).toBe(true)
  })
})

describe("SecurityPath.movable", () => {
  const cases: [string, boolean][] = [
    ["/bin", false],
    ["/sbin", false],
    ["/usr/bin", false],
    ["/usr/local/bin/git", false],
    ["/etc/gitconfig", false],
    ["/", false],
    ["/home", false],
    ["/home/me/.local/bin", true],
    ["/root/bin", true],
    ["/tmp/project/.opencode/plugin", true],
    ["/work/main/node_modules/.bin", true],
  ]
  for (const [p, expected] of cases) test(`${p}: ${expected}`, () => expect(SecurityPath.movable(p)).toBe(expected))
})

describe("SecurityPath.movable below the user's own folders", () => {
  test("a home or project inside a system folder (Fedora Silverblue's /var/home) is the user's", () => {
    expect(SecurityPath.movable("/var/home/me/.local/bin", ["/var/home/me"])).toBe(true)
    expect(SecurityPath.movable("/usr/src/app/.opencode/plugin", ["/root", "/usr/src/app"])).toBe(true)
    // The folder itself, its parents and anything outside stay as the system rule says.
    expect(SecurityPath.movable("/var/home/me", ["/var/home/me"])).toBe(false)
    expect(SecurityPath.movable("/var/home", ["/var/home/me"])).toBe(false)
    expect(SecurityPath.movable("/bin", ["/var/home/me"])).toBe(false)
    // "/" as a home (HOME=/ in some containers) gives nothing.
    expect(SecurityPath.movable("/bin", ["/"])).toBe(false)
  })
})

describe("SecurityPath.replace", () => {
  test("a link at the path is replaced, never written through; nothing is left beside it", async () => {
    await using dir = await tmpdir({ "policy.json": "POLICY\n", "folder/x.md": "agent\n" })
    const file = dir.file("folder/x.md")
    fs.rmSync(file)
    fs.symlinkSync(dir.file("policy.json"), file)
    SecurityPath.replace(file, "previous\n")
    expect(fs.lstatSync(file).isFile()).toBe(true)
    expect(fs.readFileSync(file, "utf8")).toBe("previous\n")
    expect(fs.readFileSync(dir.file("policy.json"), "utf8")).toBe("POLICY\n")
    expect(fs.readdirSync(dir.file("folder"))).toEqual(["x.md"])
  })

  test("a failed rename leaves no temporary file", async () => {
    await using dir = await tmpdir({ "folder/x/keep": "a\n" })
    // A non-empty folder at the path: a file cannot be renamed over it.
    expect(() => SecurityPath.replace(dir.file("folder/x"), "text")).toThrow()
    expect(fs.readdirSync(dir.file("folder"))).toEqual(["x"])
  })
})

describe("SecurityPath.physicalPrefix", () => {
  test("the longest existing leading part spelled physically, the rest as written", async () => {
    await using dir = await tmpdir({ "var/home/me/.ssh/id": "K\n" })
    fs.symlinkSync("var/home", path.join(dir.path, "home"))
    expect(SecurityPath.physicalPrefix(`${dir.path}/home/me/.ssh/id`)).toBe(path.join(dir.path, "var/home/me/.ssh/id"))
    expect(SecurityPath.physicalPrefix(`${dir.path}/home/me/new/x`)).toBe(path.join(dir.path, "var/home/me/new/x"))
    expect(SecurityPath.physicalPrefix(`${dir.path}/var/home/me`)).toBe(path.join(dir.path, "var/home/me"))
    expect(SecurityPath.physicalPrefix("relative/x")).toBe("relative/x")
  })
})

describe("SecurityPath.physical", () => {
  test("takes links before `..`, name by name, as git and the kernel do; undefined when a name is missing", async () => {
    await using dir = await tmpdir({ "deep/inner/x": "x", "deep/gd/HEAD": "x", "gd/HEAD": "x" })
    fs.symlinkSync("deep/inner", dir.file("l"))
    const real = fs.realpathSync(dir.path)
    expect(SecurityPath.physical(`${dir.path}/l/../gd`)).toBe(path.join(real, "deep/gd"))
    expect(SecurityPath.physical(`${dir.path}/./gd//HEAD`)).toBe(path.join(real, "gd/HEAD"))
    expect(SecurityPath.physical(`${dir.path}/l/../nope`)).toBeUndefined()
    expect(SecurityPath.physical("relative/path")).toBeUndefined()
    fs.symlinkSync("loop", dir.file("loop"))
    expect(SecurityPath.physical(`${dir.path}/loop/x`)).toBeUndefined()
  })

  test("keeps names as written: no Unicode normalisation, spaces kept", async () => {
    await using dir = await tmpdir({})
    const nfd = "cafe\u0301"
    fs.mkdirSync(dir.file(nfd))
    fs.mkdirSync(dir.file(" gd"))
    const real = fs.realpathSync(dir.path)
    expect(SecurityPath.physical(`${dir.path}/${nfd}`)).toBe(`${real}/${nfd}`)
    expect(SecurityPath.physical(`${dir.path}/ gd`)).toBe(`${real}/ gd`)
  })
})
