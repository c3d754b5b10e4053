// What the user's shell, login session, ssh, Python or editor on the host runs from the home folder without showing it
// (`SecurityGuard.HOME_RUN`), beyond the shells' first startup files: a contained command cannot write it (read-only
// when present, moved aside when created), the write tools are refused it, and ordinary work in the home
// (`known_hosts`, cargo's registry) still goes through. Red team GE1.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { SecurityGuard } from "../../security/guard"
import { ROUTES, fresh, isolateHome } from "./redteam-helpers"

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
}

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
  test("created by a contained command: moved aside, with a note; the user's next bash runs nothing", async () => {
    reset()
    await using box = await fresh(route)
    fs.writeFileSync(path.join(home.home, ".bashrc"), "# the user's own\n")
    const written: string[] = []
    for (const rel of Object.keys(TARGETS)) {
      const r = await box.s.bash(write(rel))
      if (onHost(rel)) written.push(`${rel} (${TARGETS[rel]})`)
      expect(r.output).toContain("outside the sandbox, without showing it to you")
    }
    expect(written).toEqual([])
    // Debian's default ~/.bashrc sources ~/.bash_aliases: the user's next interactive bash runs nothing planted.
    if (fs.existsSync("/etc/skel/.bashrc")) {
      fs.copyFileSync("/etc/skel/.bashrc", path.join(home.home, ".bashrc"))
      Bun.spawnSync(["bash", "-i", "-c", "true"], {
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
    await using box = await fresh(route)
    for (const rel of [".bash_aliases", ".config/systemd/user/zz.service", ".ssh/authorized_keys", ".vimrc"]) {
      const w = await box.s.call("write", { filePath: path.join(home.home, rel), content: `touch ${marks}/w\n` })
      expect(w.refused).toBe(true)
      expect(fs.existsSync(path.join(home.home, rel))).toBe(false)
    }
    const site = path.join(home.home, ".local/lib/python3.12/site-packages/zz.pth")
    expect((await box.s.call("write", { filePath: site, content: "import os\n" })).refused).toBe(true)
  }, 120_000)

  test("ordinary work in the home goes through: ssh's known hosts, cargo's registry", async () => {
    reset()
    await using box = await fresh(route)
    // No ~/.ssh yet (git over ssh makes it and its known_hosts), then with one.
    const r = await box.s.bash(
      `mkdir -p ~/.ssh && echo 'host ssh-ed25519 AAAA' >> ~/.ssh/known_hosts && mkdir -p ~/.cargo/registry/cache && echo crate > ~/.cargo/registry/cache/x.crate && echo OK`,
    )
    expect(r.output).toContain("OK")
    await box.s.bash(`echo 'other ssh-ed25519 BBBB' >> ~/.ssh/known_hosts`)
    expect(fs.readFileSync(path.join(home.home, ".ssh/known_hosts"), "utf8")).toBe(
      "host ssh-ed25519 AAAA\nother ssh-ed25519 BBBB\n",
    )
    expect(fs.readFileSync(path.join(home.home, ".cargo/registry/cache/x.crate"), "utf8")).toBe("crate\n")
  }, 120_000)
})
