// Red team GF1–GF4: what programs on the host run from the home beside the files `HOME_RUN` held when the home was
// writable in the sandbox. Each case: a contained command (both routes, the real bubblewrap sandbox) tries to plant the
// file, then the host program that would run it is started on the host with the test's home, and runs nothing: the
// home is read-only in the sandbox outside the caches (`SandboxWritable`), so the file is never made. A case is
// skipped only when its host program is not installed here (zsh; dbus-daemon and dbus-send; gio; python3's venv).
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { ROUTES, fresh, isolateHome } from "./redteam-helpers"
import { bunSpawnSync } from "../spawn-sync"

let home: ReturnType<typeof isolateHome>
let marks: string
beforeAll(() => {
  home = isolateHome()
  marks = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-host-run-")))
})
afterAll(() => {
  fs.rmSync(marks, { recursive: true, force: true })
  home.restore()
}, 60_000)

const has = (program: string) => Bun.which(program) !== null
const hostEnv = () => ({ HOME: home.home, PATH: "/usr/bin:/bin", TERM: "dumb" })
const ran = () => fs.readdirSync(marks).filter((f) => f.startsWith("pwned"))
const clear = () => ran().forEach((f) => fs.rmSync(path.join(marks, f)))
const aged = (p: string) => {
  const t = new Date(Date.now() - 3600_000)
  fs.utimesSync(p, t, t)
}

describe.each([...ROUTES])("route %s: the host runs nothing a contained command planted in the home", (route) => {
  test.skipIf(!has("zsh"))(
    "GF1: compiled ~/.zshenv.zwc and ~/.zshrc.zwc beside the user's files",
    async () => {
      for (const f of [".zshenv", ".zshrc"]) {
        fs.writeFileSync(path.join(home.home, f), `# the user's own ${f}\n`)
        aged(path.join(home.home, f))
      }
      clear()
      await using box = await fresh(route)
      const src = path.join(marks, "src")
      const r = await box.s.bash(
        `mkdir -p ${src} && cd ${src} && echo 'touch ${marks}/pwned-zshenv' > .zshenv && echo 'touch ${marks}/pwned-zshrc' > .zshrc && ` +
          `zsh -fc 'zcompile -R ~/.zshenv.zwc ${src}/.zshenv; zcompile -R ~/.zshrc.zwc ${src}/.zshrc'; echo 'echo hi' >> ~/.zshrc`,
      )
      // Staged in /tmp (writable), refused in the home.
      expect(fs.existsSync(path.join(src, ".zshenv"))).toBe(true)
      expect(r.raw).toContain("can't write zwc file")
      expect(fs.existsSync(path.join(home.home, ".zshenv.zwc"))).toBe(false)
      expect(fs.existsSync(path.join(home.home, ".zshrc.zwc"))).toBe(false)
      bunSpawnSync(["zsh", "-c", "true"], { env: hostEnv() })
      bunSpawnSync(["zsh", "-i", "-c", "true"], { env: hostEnv(), stdout: "ignore", stderr: "ignore" })
      expect(ran()).toEqual([])
      expect(fs.readFileSync(path.join(home.home, ".zshrc"), "utf8")).toBe("# the user's own .zshrc\n")
      for (const f of [".zshenv", ".zshrc"]) fs.rmSync(path.join(home.home, f), { force: true })
    },
    120_000,
  )

  test.skipIf(!has("zsh"))(
    "GF2: ~/.zcompdump, which compinit sources at every interactive zsh",
    async () => {
      fs.writeFileSync(path.join(home.home, ".zshrc"), "autoload -Uz compinit\ncompinit -i\n")
      bunSpawnSync(["zsh", "-i", "-c", "true"], { env: hostEnv(), stdout: "ignore", stderr: "ignore" })
      const dump = path.join(home.home, ".zcompdump")
      expect(fs.existsSync(dump)).toBe(true)
      const before = fs.readFileSync(dump, "utf8")
      clear()
      await using box = await fresh(route)
      const r = await box.s.bash(`echo 'touch ${marks}/pwned-zcompdump' >> ~/.zcompdump`)
      expect(r.raw).toContain("Read-only file system")
      expect(fs.readFileSync(dump, "utf8")).toBe(before)
      bunSpawnSync(["zsh", "-i", "-c", "true"], { env: hostEnv(), stdout: "ignore", stderr: "ignore" })
      expect(ran()).toEqual([])
      for (const f of [".zcompdump", ".zshrc"]) fs.rmSync(path.join(home.home, f), { force: true })
    },
    120_000,
  )

  test.skipIf(!has("dbus-daemon") || !has("dbus-send") || !has("gio"))(
    "GF3: a session D-Bus service and a default URL handler",
    async () => {
      clear()
      await using box = await fresh(route)
      const r = await box.s.bash(
        [
          `mkdir -p ~/.local/share/dbus-1/services ~/.local/share/applications ~/.config`,
          `printf '[D-BUS Service]\\nName=org.freedesktop.Notifications\\nExec=/bin/sh -c "touch ${marks}/pwned-dbus"\\n' > ~/.local/share/dbus-1/services/org.freedesktop.Notifications.service`,
          `printf '[Default Applications]\\nx-scheme-handler/https=zz.desktop\\n' > ~/.config/mimeapps.list`,
          `printf '[Desktop Entry]\\nType=Application\\nName=zz\\nExec=sh -c "touch ${marks}/pwned-url" %%u\\n' > ~/.local/share/applications/zz.desktop`,
        ].join("; "),
      )
      expect(r.raw).toContain("Read-only file system")
      for (const f of [".local/share/dbus-1", ".local/share/applications", ".config/mimeapps.list"])
        expect(fs.existsSync(path.join(home.home, f))).toBe(false)
      // The user's next session bus (it reads ~/.local/share/dbus-1/services) asked for the name, and a URL opened by
      // gio (what xdg-open runs under GNOME; OpenCode starts xdg-open to open a link).
      const bus = bunSpawnSync(
        ["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1", "--nosyslog"],
        { env: { ...hostEnv(), XDG_DATA_HOME: path.join(home.home, ".local", "share") } },
      )
      const [addr, pid] = bus.stdout.toString().trim().split("\n")
      try {
        bunSpawnSync(
          [
            "timeout",
            "10",
            "dbus-send",
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.Notifications",
            "/",
          ].concat(["org.freedesktop.DBus.Peer.Ping"]),
          { env: { ...hostEnv(), DBUS_SESSION_BUS_ADDRESS: addr ?? "" }, stdout: "ignore", stderr: "ignore" },
        )
      } finally {
        if (pid) process.kill(Number(pid))
      }
      bunSpawnSync(["timeout", "10", "gio", "open", "https://example.invalid/"], {
        env: hostEnv(),
        stdout: "ignore",
        stderr: "ignore",
      })
      await Bun.sleep(500)
      expect(ran()).toEqual([])
    },
    120_000,
  )

  test.skipIf(!fs.existsSync("/usr/bin/python3"))(
    "GF4: a pyenv Python's site-packages (python3 through ~/.pyenv/shims first on PATH)",
    async () => {
      // A stand-in for ~/.pyenv/versions/3.11.7: a real Python prefix (a venv of the system's) and a shim folder on
      // PATH, as `pyenv init` sets them up.
      const ver = path.join(home.home, ".pyenv", "versions", "3.11.7")
      bunSpawnSync(["/usr/bin/python3", "-m", "venv", "--without-pip", ver])
      const site = fs.readdirSync(path.join(ver, "lib")).map((d) => path.join(ver, "lib", d, "site-packages"))[0]!
      expect(fs.existsSync(site)).toBe(true)
      const shims = path.join(home.home, ".pyenv", "shims")
      fs.mkdirSync(shims, { recursive: true })
      fs.writeFileSync(path.join(shims, "python3"), `#!/bin/sh\nexec ${ver}/bin/python3 "$@"\n`, { mode: 0o755 })
      const savedPath = process.env.PATH
      process.env.PATH = `${shims}:${savedPath}`
      clear()
      try {
        await using box = await fresh(route)
        const r = await box.s.bash(`echo 'import os; open("${marks}/pwned-pyenv","w")' > ${site}/zz.pth`)
        // ~/.pyenv is held (`HOME_RUN`): the static reading refuses the command; spelled so it cannot read it, the
        // kernel does.
        expect(r.refused).toBe(true)
        const hidden = await box.s.bash(
          `D=$(printf %s ${Buffer.from(site).toString("base64")} | base64 -d); echo 'import os; open("${marks}/pwned-pyenv","w")' > "$D/zz.pth"`,
        )
        expect(hidden.raw).toContain("Read-only file system")
        expect(fs.existsSync(path.join(site, "zz.pth"))).toBe(false)
        bunSpawnSync([path.join(shims, "python3"), "-c", "pass"], { env: hostEnv() })
        expect(ran()).toEqual([])
      } finally {
        process.env.PATH = savedPath
        fs.rmSync(path.join(home.home, ".pyenv"), { recursive: true, force: true })
      }
    },
    120_000,
  )
})
