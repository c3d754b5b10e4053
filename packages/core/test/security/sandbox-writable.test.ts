// The sandbox's allow-list: the file system is bound read-only first, then only the folders a command may write
// (`SandboxWritable`: the project, the temporary folders, the package caches) writable, then the protections on top.
// Pure checks of the plan and of the table's resolution (links, missing folders, a home inside a writable folder);
// what commands can and cannot write for real is in `home-startup.test.ts` and `home-host-run.test.ts`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { SandboxPlan } from "../../security/sandbox/plan"
import { SandboxWritable } from "../../security/sandbox/writable"

const placeholders = { file: "/s/deny-file", dir: "/s/deny-dir" }

/** The binds of a plan's arguments, in order, as `kind src dest` strings. */
const binds = (args: string[]) => {
  const out: string[] = []
  for (let i = 0; i < args.length; i++)
    if (args[i] === "--bind" || args[i] === "--ro-bind" || args[i] === "--tmpfs")
      out.push(args[i] === "--tmpfs" ? `--tmpfs ${args[++i]}` : `${args[i]} ${args[++i]} ${args[++i]}`)
  return out
}

describe("SandboxPlan: read-only but the allow-list", () => {
  test("/ is bound read-only first, the writable folders over it (parents first), the protections on top", () => {
    const plan = SandboxPlan.build({
      write: ["/tmp", "/home/u/.cache", "/home/u/proj"],
      hide: [{ path: "/home/u/proj/.env", dir: false }],
      lock: [
        { path: "/home/u/proj/.opencode-security.json", dir: false },
        { path: "/home/u/.cache/opencode-builtins", dir: true },
        { path: "/home/u/.bashrc", dir: false },
      ],
      mask: [],
      pin: ["/home/u/proj", "/home/u/.config", "/home/u/proj/src"],
      placeholders,
      conceal: ["/tmp/s"],
    })
    expect(binds(plan.args)).toEqual([
      "--ro-bind / /",
      "--tmpfs /dev/shm",
      "--bind /tmp /tmp",
      // A pin outside the writable folders stays read-only (a writable one would open the folder).
      "--ro-bind /home/u/.config /home/u/.config",
      // The project root: writable, and a mount point (pinned).
      "--bind /home/u/proj /home/u/proj",
      "--bind /home/u/.cache /home/u/.cache",
      "--ro-bind /home/u/.bashrc /home/u/.bashrc",
      "--bind /home/u/proj/src /home/u/proj/src",
      "--ro-bind /home/u/proj/.opencode-security.json /home/u/proj/.opencode-security.json",
      "--ro-bind /home/u/.cache/opencode-builtins /home/u/.cache/opencode-builtins",
      "--bind /s/deny-file /home/u/proj/.env",
      "--tmpfs /tmp/s",
    ])
    // No writable bind of / or of the home.
    expect(plan.args.join(" ")).not.toContain("--bind / /")
  })

  test("none given, nothing is writable but the sandbox's own /dev/shm", () => {
    const args = SandboxPlan.build({ hide: [], lock: [], mask: [], pin: ["/r"], placeholders, conceal: [] }).args
    expect(binds(args)).toEqual(["--ro-bind / /", "--tmpfs /dev/shm", "--ro-bind /r /r"])
  })

  test("a home inside a writable folder is bound read-only again; its caches inside it stay writable", () => {
    const plan = SandboxPlan.build({
      write: ["/tmp", "/tmp/h/.cache", "/tmp/p"],
      readOnly: ["/tmp/h"],
      hide: [],
      lock: [],
      mask: [],
      pin: ["/tmp/h/.config"],
      placeholders,
      conceal: [],
    })
    expect(binds(plan.args)).toEqual([
      "--ro-bind / /",
      "--tmpfs /dev/shm",
      "--bind /tmp /tmp",
      "--ro-bind /tmp/h /tmp/h",
      "--bind /tmp/p /tmp/p",
      "--ro-bind /tmp/h/.config /tmp/h/.config",
      "--bind /tmp/h/.cache /tmp/h/.cache",
    ])
  })

  test("a writable folder inside a locked or hidden one is not opened", () => {
    const plan = SandboxPlan.build({
      write: ["/d/cache", "/x/cache"],
      hide: [{ path: "/x", dir: true }],
      lock: [{ path: "/d", dir: true }],
      mask: [],
      pin: [],
      placeholders,
      conceal: [],
    })
    expect(plan.covered).toEqual([
      { path: "/d/cache", by: "/d" },
      { path: "/x/cache", by: "/x" },
    ])
  })
})

describe("SandboxWritable", () => {
  let base: string
  beforeAll(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-writable-")))
  })
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

  const homeAt = (name: string) => {
    const home = path.join(base, name, "home")
    fs.mkdirSync(home, { recursive: true })
    return home
  }

  test("the caches that exist; ~/.cache is created, a package manager's folder the user does not have is not", () => {
    const home = homeAt("plain")
    fs.mkdirSync(path.join(home, ".npm"))
    fs.mkdirSync(path.join(home, ".cargo", "registry"), { recursive: true })
    const areas = SandboxWritable.areas({ HOME: home, TMPDIR: undefined }, { extra: [path.join(base, "plain")] })
    expect(areas.write).toContain("/tmp")
    expect(areas.write).toContain(path.join(home, ".cache"))
    expect(areas.write).toContain(path.join(home, ".npm"))
    expect(areas.write).toContain(path.join(home, ".cargo", "registry"))
    expect(fs.existsSync(path.join(home, ".cache"))).toBe(true)
    for (const absent of [".bun", ".m2", ".gradle", "go", ".cargo/git"])
      expect(fs.existsSync(path.join(home, absent))).toBe(false)
    expect(areas.write.some((p) => p === home)).toBe(false)
  })

  test("the home lying in a writable temporary folder is read-only again, unless the project holds it", () => {
    const home = homeAt("inTmp")
    expect(SandboxWritable.areas({ HOME: home }).readOnly).toEqual([home])
    expect(SandboxWritable.areas({ HOME: home }, { extra: [path.dirname(home)] }).readOnly).toEqual([])
  })

  test("a temporary or cache folder that is the home or / is left out", () => {
    const home = homeAt("self")
    const areas = SandboxWritable.areas({ HOME: home, TMPDIR: home, XDG_CACHE_HOME: "/" })
    expect(areas.write).not.toContain(home)
    expect(areas.write).not.toContain("/")
    expect(areas.skipped.map((s) => s.path).sort()).toEqual(["/", home].sort())
  })

  test("a link is bound at its target, unless the link lies in another writable folder (a command's)", () => {
    const home = homeAt("links")
    const store = path.join(base, "links", "store")
    fs.mkdirSync(store)
    // The user's own link in the home (read-only, though it lies in /tmp here): followed.
    fs.symlinkSync(store, path.join(home, ".npm"))
    // A link in /tmp (writable: a command could have made it) named by TMPDIR, leading into the home: refused.
    const planted = path.join(base, "links", "tmpdir-link")
    fs.symlinkSync(path.join(home), planted)
    const areas = SandboxWritable.areas({ HOME: home, TMPDIR: planted })
    expect(areas.write).toContain(store)
    expect(areas.write).not.toContain(home)
    expect(areas.skipped.map((s) => s.path)).toContain(planted)
    // One leading to a folder in the home (not the home itself) is refused the same way.
    const inside = path.join(base, "links", "tmpdir-link2")
    fs.mkdirSync(path.join(home, ".ssh"))
    fs.symlinkSync(path.join(home, ".ssh"), inside)
    const again = SandboxWritable.areas({ HOME: home, TMPDIR: inside })
    expect(again.write).not.toContain(path.join(home, ".ssh"))
    // A link a command made in a writable cache (inside the home) is not followed either.
    fs.mkdirSync(path.join(home, ".cache"), { recursive: true })
    fs.symlinkSync(path.join(home, ".ssh"), path.join(home, ".cache", "dir"))
    const cached = SandboxWritable.areas({ HOME: home, npm_config_cache: path.join(home, ".cache", "dir") })
    expect(cached.write).not.toContain(path.join(home, ".ssh"))
  })

  test("the policy's extra folders (sandbox.writable) are bound as given, files too", () => {
    const home = homeAt("extra")
    fs.mkdirSync(path.join(home, ".ssh"))
    fs.writeFileSync(path.join(home, ".ssh", "known_hosts"), "")
    const areas = SandboxWritable.areas({ HOME: home }, { extra: [path.join(home, ".ssh", "known_hosts")] })
    expect(areas.write).toContain(path.join(home, ".ssh", "known_hosts"))
  })

  test("an extra folder (git folders, OpenCode's, sandbox.writable) reached through a link in a writable folder is refused; the project root is not checked", () => {
    const home = homeAt("extraLinks")
    const project = path.join(base, "extraLinks", "project")
    fs.mkdirSync(path.join(project, ".git"), { recursive: true })
    fs.mkdirSync(path.join(home, ".config"), { recursive: true })
    // A command links `.git/worktrees` (inside the writable project) to the home: a folder named through it is refused.
    fs.symlinkSync(home, path.join(project, ".git", "worktrees"))
    const viaProject = path.join(project, ".git", "worktrees", ".config")
    // One that holds the home does not open the home either.
    fs.symlinkSync(path.dirname(home), path.join(project, "up"))
    const holds = path.join(project, "up", "home")
    // A sandbox.writable entry whose parent (in the writable cache) a command replaced by a link.
    fs.mkdirSync(path.join(home, ".cache"), { recursive: true })
    fs.symlinkSync(path.join(home, ".config"), path.join(home, ".cache", "a"))
    const viaCache = path.join(home, ".cache", "a")
    const areas = SandboxWritable.areas(
      { HOME: home },
      { root: project, extra: [project, viaProject, holds, viaCache] },
    )
    expect(areas.write).toContain(project)
    expect(areas.write).not.toContain(path.join(home, ".config"))
    expect(areas.write).not.toContain(home)
    expect(areas.readOnly).toEqual([home])
    expect(areas.skipped.map((s) => s.path).sort()).toEqual([viaProject, holds, viaCache].sort())
    // The root itself is the user's choice: a link on its way is followed.
    const linkedRoot = path.join(base, "extraLinks", "root-link")
    fs.symlinkSync(project, linkedRoot)
    expect(SandboxWritable.areas({ HOME: home }, { root: linkedRoot, extra: [linkedRoot] }).write).toContain(project)
  })
})
