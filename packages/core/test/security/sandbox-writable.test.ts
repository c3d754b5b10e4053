// The sandbox's allow-list: the file system is bound read-only first, then only the folders a command may write
// (`SandboxWritable`: the project, the temporary folders, the commands' private caches) writable, then the protections on top.
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

  test("the host's caches are not writable; commands get a private cache folder, named by the environment and bound over the host's caches that exist (GI1, GI3)", () => {
    const home = homeAt("plain")
    fs.mkdirSync(path.join(home, ".npm"))
    fs.mkdirSync(path.join(home, ".bun", "install", "cache"), { recursive: true })
    fs.mkdirSync(path.join(home, ".cargo", "registry"), { recursive: true })
    fs.mkdirSync(path.join(home, ".cache"), { recursive: true })
    const env = { HOME: home, TMPDIR: undefined, npm_config_cache: path.join(home, "elsewhere") }
    const areas = SandboxWritable.areas(env, { extra: [path.join(base, "plain")] })
    expect(areas.write).toContain("/tmp")
    for (const cache of [".cache", ".npm", ".bun/install/cache", ".cargo/registry"])
      expect(areas.write).not.toContain(path.join(home, cache))
    const own = SandboxWritable.prepare(env)
    const folder = path.join(home, ".cache", "opencode-builtins-commands")
    expect(own.folder).toBe(folder)
    expect(fs.statSync(folder).mode & 0o777).toBe(0o700)
    expect(own.env.XDG_CACHE_HOME).toBe(path.join(folder, "xdg"))
    expect(own.env.npm_config_cache).toBe(path.join(folder, "npm"))
    expect(own.env.BUN_INSTALL_CACHE_DIR).toBe(path.join(folder, "bun-install"))
    expect(own.env.BUN_RUNTIME_TRANSPILER_CACHE_PATH).toBe(path.join(folder, "bun-transpiler"))
    for (const name of ["GOCACHE", "GOMODCACHE", "PIP_CACHE_DIR", "UV_CACHE_DIR", "npm_config_store_dir", "JITI_CACHE"])
      expect(own.env[name]?.startsWith(folder + "/")).toBe(true)
    // Set only where the environment sets it (Yarn 2+ would move a project's own cache); CARGO_HOME and
    // GRADLE_USER_HOME never (they hold configuration): their caches are bound over instead.
    expect(own.env.YARN_CACHE_FOLDER).toBeUndefined()
    expect(SandboxWritable.prepare({ ...env, YARN_CACHE_FOLDER: "/x" }).env.YARN_CACHE_FOLDER).toBe(
      path.join(folder, "yarn"),
    )
    expect(own.env.CARGO_HOME).toBeUndefined()
    expect(own.env.GRADLE_USER_HOME).toBeUndefined()
    expect(own.over).toEqual([
      { path: path.join(home, ".npm"), source: path.join(folder, "npm") },
      { path: path.join(home, ".bun/install/cache"), source: path.join(folder, "bun-install") },
      { path: path.join(home, ".cargo/registry"), source: path.join(folder, "cargo-registry") },
    ])
    for (const o of own.over) expect(fs.statSync(o.source).isDirectory()).toBe(true)
    // Nothing is created in the home for a package manager the user does not have.
    for (const absent of [".m2", ".gradle", "go", ".cargo/git", ".yarn", ".pnpm-store"])
      expect(fs.existsSync(path.join(home, absent))).toBe(false)
    // A private folder that is a link or not a folder is refused (left read-only: nothing set, nothing bound).
    const other = homeAt("linkedOwn")
    fs.mkdirSync(path.join(other, ".cache"))
    fs.symlinkSync(path.join(other), path.join(other, ".cache", "opencode-builtins-commands"))
    const refused = SandboxWritable.prepare({ HOME: other })
    expect(refused.folder).toBeUndefined()
    expect(refused.env).toEqual({})
    expect(refused.skipped?.path).toBe(path.join(other, ".cache", "opencode-builtins-commands"))
  })

  test("the code caches of the temporary folders are made when missing and held (GI5)", () => {
    const tmp = path.join(base, "tmpdir")
    fs.mkdirSync(tmp)
    fs.mkdirSync(path.join(tmp, "jiti"))
    const held = SandboxWritable.tempCodeCaches({ TMPDIR: tmp })
    for (const name of ["node-jiti", "jiti", "node-compile-cache"]) {
      expect(held).toContain(path.join(tmp, name))
      expect(held).toContain(path.join("/tmp", name))
      expect(fs.statSync(path.join(tmp, name)).isDirectory()).toBe(true)
    }
  })

  test("the plan binds a private cache over a host cache folder, writable", () => {
    const plan = SandboxPlan.build({
      write: ["/tmp", "/home/u/.cache/opencode-builtins-commands"],
      over: [{ path: "/home/u/.npm", source: "/home/u/.cache/opencode-builtins-commands/npm" }],
      hide: [],
      lock: [],
      mask: [],
      pin: [],
      placeholders,
      conceal: [],
    })
    expect(binds(plan.args)).toContain("--bind /home/u/.cache/opencode-builtins-commands/npm /home/u/.npm")
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
    expect(areas.skipped.map((s) => s.path)).toEqual([home])
    expect(SandboxWritable.areas({ HOME: home, TMPDIR: "/" }).skipped.map((s) => s.path)).toEqual(["/"])
  })

  test("a link is bound at its target, unless the link lies in another writable folder (a command's)", () => {
    const home = homeAt("links")
    const store = path.join(base, "links", "store")
    fs.mkdirSync(store)
    // The user's own link in the home (read-only, though it lies in /tmp here): the private cache is bound at its
    // target.
    fs.symlinkSync(store, path.join(home, ".npm"))
    expect(SandboxWritable.prepare({ HOME: home }).over.map((o) => o.path)).toContain(store)
    // A link in /tmp (writable: a command could have made it) named by TMPDIR, leading into the home: refused.
    const planted = path.join(base, "links", "tmpdir-link")
    fs.symlinkSync(path.join(home), planted)
    const areas = SandboxWritable.areas({ HOME: home, TMPDIR: planted })
    expect(areas.write).not.toContain(home)
    expect(areas.skipped.map((s) => s.path)).toContain(planted)
    // One leading to a folder in the home (not the home itself) is refused the same way.
    const inside = path.join(base, "links", "tmpdir-link2")
    fs.mkdirSync(path.join(home, ".ssh"))
    fs.symlinkSync(path.join(home, ".ssh"), inside)
    const again = SandboxWritable.areas({ HOME: home, TMPDIR: inside })
    expect(again.write).not.toContain(path.join(home, ".ssh"))
    // A cache folder the environment names is not writable at all (commands get their own).
    fs.mkdirSync(path.join(home, ".cache"), { recursive: true })
    fs.symlinkSync(path.join(home, ".ssh"), path.join(home, ".cache", "dir"))
    const cached = SandboxWritable.areas({ HOME: home, npm_config_cache: path.join(home, ".cache", "dir") })
    expect(cached.write).not.toContain(path.join(home, ".ssh"))
    expect(cached.write).not.toContain(path.join(home, ".cache", "dir"))
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
