// What the user's shell, login session, ssh, Python or editor on the host runs from the home folder without showing it
// (`SecurityGuard.HOME_RUN`), beyond the shells' first startup files: a contained command cannot write it — the home
// is read-only in the sandbox outside the caches of `SandboxWritable.TABLE`, so it cannot create or change anything
// there ("Read-only file system"), listed in `HOME_RUN` or not — the write tools (which run on the host) are refused
// what `HOME_RUN` lists, and ordinary work (the project, its git, /tmp, the package caches) still goes through.
// Red teams GE1 and GF1–GF5. The test's home lies in the OS temporary folder, writable in the sandbox: the home inside
// it is bound read-only again, its caches writable.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { SecurityGuard } from "../../security/guard"
import { REDTEAM_POLICY, ROUTES, fresh, isolateHome, open, redteamProject } from "./redteam-helpers"
import { bunSpawnSync } from "../spawn-sync"

let home: ReturnType<typeof isolateHome>
let marks: string
const savedZdotdir = process.env.ZDOTDIR
beforeAll(() => {
  home = isolateHome()
  // A zsh whose startup files are in a folder the environment names (`~/.zshenv` setting it, as is common).
  process.env.ZDOTDIR = path.join(home.home, "dots", "zsh")
  marks = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-home-startup-"))
})
afterAll(() => {
  if (savedZdotdir === undefined) delete process.env.ZDOTDIR
  else process.env.ZDOTDIR = savedZdotdir
  fs.rmSync(marks, { recursive: true, force: true })
  home.restore()
}, 60_000)

/** One of each kind the table holds: a path in the home, and who runs it on the host later. */
const TARGETS: Record<string, string> = {
  ".bash_aliases": "sourced by Debian's and Ubuntu's default ~/.bashrc",
  ".bashrc.d/zz.sh": "sourced by Fedora's default ~/.bashrc",
  ".bash_completion": "sourced by bash-completion in every interactive bash",
  ".config/fish/conf.d/zz.fish": "every fish start",
  ".config/fish/functions/fish_prompt.fish": "fish at every prompt",
  ".config/zsh/.zshrc": "zsh with the conventional ZDOTDIR",
  "dots/zsh/.zshrc": "zsh with the ZDOTDIR of the environment",
  ".config/environment.d/zz.conf": "the systemd user manager's environment at the next login",
  ".config/systemd/user/zz.service": "the systemd user manager",
  ".local/share/systemd/user/zz.service": "the systemd user manager (data folder)",
  ".config/autostart/zz.desktop": "the desktop session (XDG autostart)",
  ".xsessionrc": "Debian's X session",
  ".ssh/authorized_keys": "sshd: a key login as the user",
  ".ssh/rc": "sshd at every login",
  ".ssh/config": "the user's ssh and git over ssh (ProxyCommand)",
  ".cargo/env": "~/.profile after rustup",
  ".local/lib/python3.11/site-packages/zz.pth": "every python3.11 the user starts",
  ".local/lib/python3.13/site-packages/usercustomize.py": "every python3.13 the user starts",
  ".vimrc": "vim at every start",
  ".config/nvim/init.lua": "neovim at every start",
  ".local/share/nvim/site/plugin/zz.lua": "neovim's plugins at every start",
  ".zshenv.zwc": "zsh runs the compiled copy in place of ~/.zshenv (GF1)",
  ".zshrc.zwc": "zsh runs the compiled copy in place of ~/.zshrc (GF1)",
  ".zcompdump": "compinit sources it at every interactive zsh (GF2)",
  ".local/share/dbus-1/services/org.freedesktop.Notifications.service": "the session bus starts it on demand (GF3)",
  ".config/mimeapps.list": "xdg-open and gio pick the URL handler from it (GF3)",
  ".local/share/applications/zz.desktop": "the handler mimeapps.list names (GF3)",
  ".pyenv/versions/3.11.7/lib/python3.11/site-packages/zz.pth": "pyenv's python3 at every start (GF4)",
  ".nvm/versions/node/v20.0.0/etc/npmrc": "the global npmrc of nvm's npm (GF5)",
}

/** Not in `HOME_RUN` either: the allow-list, not the list of what is held, keeps them from commands. */
const ANYWHERE = [".config/some-tool/hooks.sh", ".local/bin/git", ".gnupg/gpg.conf", "notes.txt"]

/** Folders of `TARGETS` held whole (not `.ssh/`, `.cargo/` or the home: only the named files there). */
const HELD_FOLDERS = [
  ".bashrc.d",
  ".config/fish/conf.d",
  ".config/zsh",
  ".config/environment.d",
  ".config/systemd/user",
  ".local/share/systemd/user",
  ".config/autostart",
  ".local/lib/python3.11/site-packages",
  ".config/nvim",
  ".local/share/nvim/site/plugin",
]

const write = (rel: string) =>
  `mkdir -p "$(dirname ~/${rel})"; echo 'touch ${marks}/${path.basename(rel)}' >> ~/${rel}; echo DONE`
const onHost = (rel: string) => {
  const p = path.join(home.home, rel)
  return fs.existsSync(p) && fs.readFileSync(p, "utf8").includes(marks)
}
/** Back to an empty home (the layer's asides included), keeping the isolated configuration folder. */
const reset = () => {
  for (const name of fs.readdirSync(home.home))
    if (![".config", ".cache"].includes(name)) fs.rmSync(path.join(home.home, name), { recursive: true, force: true })
  for (const name of fs.readdirSync(path.join(home.home, ".config")))
    if (name !== "opencode") fs.rmSync(path.join(home.home, ".config", name), { recursive: true, force: true })
}

describe("HOME_RUN", () => {
  test("hostProtected holds the table under the home, XDG folders, ZDOTDIR, PYTHONUSERBASE and the named files", () => {
    const env = {
      HOME: "/home/u",
      XDG_CONFIG_HOME: "/xdg/config",
      XDG_DATA_HOME: "/xdg/data",
      ZDOTDIR: "/home/u/.config/zdot",
      PYTHONUSERBASE: "/home/u/pybase",
      BASH_ENV: "/home/u/.bash_env",
      PYTHONSTARTUP: "/home/u/.pythonrc.py",
    }
    const list = SecurityGuard.hostProtected("/srv/repo", "/srv/repo", env)
    for (const p of [
      "/home/u/.bashrc",
      "/home/u/.bash_aliases",
      "/home/u/.bashrc.d/",
      "/home/u/.ssh/authorized_keys",
      "/home/u/.cargo/env",
      "/home/u/.config/systemd/",
      "/xdg/config/systemd/",
      "/xdg/config/fish/",
      "/xdg/data/systemd/",
      "/home/u/.local/share/systemd/",
      "/home/u/.config/zdot/.zshrc",
      "/home/u/.config/zdot/.zshenv",
      "/home/u/pybase/lib/python3.12/site-packages/",
      "/home/u/.bash_env",
      "/home/u/.pythonrc.py",
    ])
      expect(list).toContain(p)
    // Ordinary work in the home stays writable: ssh's known hosts, cargo's registry and builds, pip's cache.
    for (const p of ["/home/u/.ssh/", "/home/u/.ssh/known_hosts", "/home/u/.cargo/", "/home/u/.cargo/registry/"])
      expect(list).not.toContain(p)
    expect(list.filter((p) => p.endsWith("//"))).toEqual([])
  })
})

describe.each([...ROUTES])("route %s: what the host runs from the home", (route) => {
  test("created by a contained command: the home is read-only (EROFS), nothing is created; the user's next bash runs nothing", async () => {
    reset()
    await using box = await fresh(route)
    fs.writeFileSync(path.join(home.home, ".bashrc"), "# the user's own\n")
    const written: string[] = []
    for (const rel of [...Object.keys(TARGETS), ...ANYWHERE]) {
      const r = await box.s.bash(write(rel))
      if (onHost(rel)) written.push(`${rel} (${TARGETS[rel] ?? "not held"})`)
      // Refused before it runs (the static reading sees a held path) or by the kernel; a path not held (`ANYWHERE`) is
      // the kernel's, and the command's output then says why and what to do.
      if (r.refused) expect(TARGETS[rel]).toBeDefined()
      else {
        expect(r.raw).toContain("Read-only file system")
        expect(r.output).toContain("The sandbox is read-only outside the folders commands may write")
      }
    }
    expect(written).toEqual([])
    // Nothing was made in the home, not even the folders on the way.
    expect(fs.readdirSync(home.home).sort()).toEqual([".bashrc", ".cache", ".config"])
    // Debian's default ~/.bashrc sources ~/.bash_aliases: the user's next interactive bash runs nothing planted.
    if (fs.existsSync("/etc/skel/.bashrc")) {
      fs.copyFileSync("/etc/skel/.bashrc", path.join(home.home, ".bashrc"))
      bunSpawnSync(["bash", "-i", "-c", "true"], {
        env: { HOME: home.home, PATH: process.env.PATH! },
        stdout: "ignore",
        stderr: "ignore",
      })
      expect(fs.readdirSync(marks)).toEqual([])
    }
  }, 120_000)

  test("present: read-only to a contained command, as the user left it, and so are the held folders", async () => {
    reset()
    for (const rel of Object.keys(TARGETS)) {
      fs.mkdirSync(path.dirname(path.join(home.home, rel)), { recursive: true })
      fs.writeFileSync(path.join(home.home, rel), "# the user's own\n")
    }
    await using box = await fresh(route)
    const written: string[] = []
    for (const rel of Object.keys(TARGETS)) {
      await box.s.bash(write(rel))
      if (onHost(rel)) written.push(rel)
    }
    // A new file beside the user's in a held folder.
    for (const dir of HELD_FOLDERS) {
      await box.s.bash(`echo 'touch ${marks}/new' > ~/${dir}/zz-new.conf`)
      if (fs.existsSync(path.join(home.home, dir, "zz-new.conf"))) written.push(`${dir}/zz-new.conf`)
    }
    expect(written).toEqual([])
    for (const rel of Object.keys(TARGETS))
      expect(fs.readFileSync(path.join(home.home, rel), "utf8")).toBe("# the user's own\n")
  }, 120_000)

  test("the write tools are refused them", async () => {
    reset()
    // zsh's compiled copies and completion dump (GF1, GF2), an oh-my-zsh dump and a desktop's mimeapps.list present,
    // the session bus's services and the URL handlers (GF3), a pyenv Python's site-packages (GF4), nvm's global npmrc
    // (GF5), uv's Pythons.
    fs.writeFileSync(path.join(home.home, ".zcompdump-host-5.9"), "#files: 1\n")
    fs.mkdirSync(path.join(home.home, ".config"), { recursive: true })
    fs.writeFileSync(path.join(home.home, ".config/gnome-mimeapps.list"), "[Default Applications]\n")
    await using box = await fresh(route)
    for (const rel of [
      ".bash_aliases",
      ".config/systemd/user/zz.service",
      ".ssh/authorized_keys",
      ".vimrc",
      ".zshenv.zwc",
      ".zshrc.zwc",
      ".zcompdump",
      ".local/share/dbus-1/services/org.freedesktop.Notifications.service",
      ".config/mimeapps.list",
      ".local/share/applications/zz.desktop",
      ".pyenv/versions/3.11.7/lib/python3.11/site-packages/zz.pth",
      ".nvm/versions/node/v20.0.0/etc/npmrc",
      ".local/share/uv/python/cpython-3.12/lib/python3.12/site-packages/zz.pth",
    ]) {
      const w = await box.s.call("write", { filePath: path.join(home.home, rel), content: `touch ${marks}/w\n` })
      expect([rel, w.refused]).toEqual([rel, true])
      expect(fs.existsSync(path.join(home.home, rel))).toBe(false)
    }
    const site = path.join(home.home, ".local/lib/python3.12/site-packages/zz.pth")
    expect((await box.s.call("write", { filePath: site, content: "import os\n" })).refused).toBe(true)
    const dump = path.join(home.home, ".zcompdump-host-5.9")
    expect((await box.s.call("write", { filePath: dump, content: `touch ${marks}/w\n` })).refused).toBe(true)
    expect(fs.readFileSync(dump, "utf8")).toBe("#files: 1\n")
    const desktop = path.join(home.home, ".config/gnome-mimeapps.list")
    expect(
      (await box.s.call("write", { filePath: desktop, content: "x-scheme-handler/https=zz.desktop\n" })).refused,
    ).toBe(true)
    expect(fs.readFileSync(desktop, "utf8")).toBe("[Default Applications]\n")
  }, 120_000)

  test("ordinary work goes through: the project and its git, /tmp, the commands' own package caches (npm, bun, cargo's registry, pip)", async () => {
    reset()
    // A user of npm, bun and cargo has their caches: read-only to commands (the host runs what they hold, GI1/GI3),
    // each with a private cache of the commands' own bound over it.
    for (const dir of [".npm", ".bun/install/cache", ".cargo/registry"])
      fs.mkdirSync(path.join(home.home, dir), { recursive: true })
    const own = path.join(home.home, ".cache", "opencode-builtins-commands")
    await using box = await fresh(route)
    const pkg = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-home-pkg-"))
    try {
      fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "ocb-local-dep", version: "1.0.0" }))
      fs.writeFileSync(path.join(pkg, "index.js"), "module.exports = 1\n")
      const r = await box.s.bash(
        [
          // /tmp, npm's cache (an offline install of a local tarball goes through the commands' own), the project's
          // node_modules.
          `cd ${pkg} && npm pack --silent >/dev/null && cd - >/dev/null`,
          `npm cache add ${pkg}/ocb-local-dep-1.0.0.tgz`,
          `npm install --offline --no-audit --no-fund --no-save ${pkg}/ocb-local-dep-1.0.0.tgz >/dev/null`,
          `test -f node_modules/ocb-local-dep/index.js`,
          // Tools that ignore the environment write the well-known folder: the private cache bound over it.
          `echo cached > ~/.bun/install/cache/ocb-probe`,
          `mkdir -p ~/.cargo/registry/cache && echo crate > ~/.cargo/registry/cache/x.crate`,
          `mkdir -p "$XDG_CACHE_HOME/pip" && echo wheel > "$XDG_CACHE_HOME/pip/x"`,
          `echo note > notes.md && git add notes.md && git -c user.name=t -c user.email=t@example.invalid commit -qm note`,
          `echo OK`,
        ].join(" && "),
      )
      expect(r.output).toContain("OK")
      expect(fs.readdirSync(path.join(own, "npm", "_cacache")).length).toBeGreaterThan(0)
      expect(fs.readFileSync(path.join(own, "bun-install", "ocb-probe"), "utf8")).toBe("cached\n")
      expect(fs.readFileSync(path.join(own, "cargo-registry", "cache", "x.crate"), "utf8")).toBe("crate\n")
      expect(fs.readFileSync(path.join(own, "xdg", "pip", "x"), "utf8")).toBe("wheel\n")
      // The host's caches are untouched.
      expect(fs.readdirSync(path.join(home.home, ".npm"))).toEqual([])
      expect(fs.readdirSync(path.join(home.home, ".bun/install/cache"))).toEqual([])
      expect(fs.readdirSync(path.join(home.home, ".cargo/registry"))).toEqual([])
      expect(fs.existsSync(path.join(home.home, ".cache", "pip"))).toBe(false)
      expect(fs.existsSync(path.join(pkg, "ocb-local-dep-1.0.0.tgz"))).toBe(true)
      const log = bunSpawnSync(["git", "log", "-1", "--format=%s"], { cwd: box.dir.path }).stdout.toString().trim()
      expect(log).toBe("note")
      // ssh's known hosts and a package manager's folder the user does not have are read-only, and the output says
      // what to do (docs › Limits).
      const ro = await box.s.bash(`mkdir -p ~/.ssh && echo 'host ssh-ed25519 AAAA' >> ~/.ssh/known_hosts`)
      expect(ro.raw).toContain("Read-only file system")
      expect(ro.output).toContain('"sandbox": { "writable": [...] }')
      expect(fs.existsSync(path.join(home.home, ".ssh"))).toBe(false)
    } finally {
      fs.rmSync(pkg, { recursive: true, force: true })
    }
  }, 120_000)

  test("a folder or file the policy names in sandbox.writable is writable to commands (here ssh's known_hosts)", async () => {
    reset()
    fs.mkdirSync(path.join(home.home, ".ssh"))
    fs.writeFileSync(path.join(home.home, ".ssh/known_hosts"), "")
    const dir = await redteamProject({}, { ...REDTEAM_POLICY, sandbox: { writable: ["~/.ssh/known_hosts"] } })
    const s = await open(route, dir.path)
    try {
      const r = await s.bash(`echo 'host ssh-ed25519 AAAA' >> ~/.ssh/known_hosts; echo x > ~/.ssh/other`)
      expect(fs.readFileSync(path.join(home.home, ".ssh/known_hosts"), "utf8")).toBe("host ssh-ed25519 AAAA\n")
      // Only what it names: the folder beside it stays read-only.
      expect(r.raw).toContain("Read-only file system")
      expect(fs.existsSync(path.join(home.home, ".ssh/other"))).toBe(false)
    } finally {
      await s.close()
      await dir[Symbol.asyncDispose]()
    }
  }, 120_000)

  test("a linked git worktree commits into its main repository's .git, which lies in the read-only home", async () => {
    reset()
    // The main repository in the home (read-only to commands), the worktree OpenCode runs in elsewhere.
    const main = path.join(home.home, "src", "main")
    fs.mkdirSync(main, { recursive: true })
    const g = (cwd: string, ...args: string[]) =>
      bunSpawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], { cwd })
    g(main, "init", "-q")
    fs.writeFileSync(path.join(main, "README.md"), "main\n")
    g(main, "add", "README.md")
    expect(g(main, "commit", "-qm", "init").exitCode).toBe(0)
    const outer = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-linked-wt-")))
    const wt = path.join(outer, "wt")
    try {
      expect(g(main, "worktree", "add", "-q", "-b", "side", wt).exitCode).toBe(0)
      fs.writeFileSync(path.join(wt, ".opencode-security.json"), JSON.stringify(REDTEAM_POLICY))
      const s = await open(route, wt)
      try {
        const r = await s.bash(
          `echo n > n.md && git add n.md && git -c user.name=t -c user.email=t@example.invalid commit -qm linked && echo OK`,
        )
        expect(r.output).toContain("OK")
        expect(g(main, "log", "-1", "--format=%s", "side").stdout.toString().trim()).toBe("linked")
        // The home around it stays read-only.
        const ro = await s.bash(`echo x > ${path.join(main, "planted.txt")}`)
        expect(ro.raw).toContain("Read-only file system")
      } finally {
        await s.close()
      }
    } finally {
      fs.rmSync(outer, { recursive: true, force: true })
    }
  }, 120_000)
})
