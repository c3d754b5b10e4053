// Red team GI2 and GI4: the user's runtime folder (`$XDG_RUNTIME_DIR`) holds the sockets of the session's servers, and
// a list of their names always lacked one. PulseAudio's `pulse/native` took `pactl load-module module-ladspa-sink
// plugin=<a command's .so>` and `dlopen`ed the file on the host (GI4); rootless Podman's `podman/podman.sock` took API
// calls (GI2). The folder is now emptied in the sandbox as a whole, all but the ssh-agent's socket, and the sockets
// the environment names elsewhere (`CONTAINER_HOST`, `PULSE_SERVER`, …) are hidden too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { spawn, type ChildProcess } from "child_process"
import fs from "fs"
import os from "os"
import path from "path"
import { SecurityGuard } from "../../security/guard"
import { SandboxPlan } from "../../security/sandbox/plan"
import { spawnSync } from "../spawn-sync"
import { ROUTES, fresh, isolateHome } from "./redteam-helpers"

const hasPulse = spawnSync("sh", ["-c", "command -v pulseaudio && command -v pactl && command -v gcc"]).status === 0
// In CI the packages are installed (`.ci/run`): there a missing one fails the test instead of skipping it.
const skipPulse = !hasPulse && !process.env.CI

/** Stand-in servers, one process for all: each socket logs the first line of every request it gets. */
const SERVER = `import os,select,socket,sys
socks={}
for p in sys.argv[1:]:
  s=socket.socket(socket.AF_UNIX); s.bind(p); s.listen(5); socks[s]=p+".log"; open(p+".log","w").close()
print("up",flush=True)
while True:
  for s in select.select(list(socks),[],[])[0]:
    c,_=s.accept(); d=c.recv(200); open(socks[s],"a").write(d.decode(errors="replace").split("\\r\\n")[0]+"\\n")
    c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok"); c.close()
`

const VARS = ["XDG_RUNTIME_DIR", "SSH_AUTH_SOCK", "CONTAINER_HOST"] as const
let home: ReturnType<typeof isolateHome>
let runtime: string
let outside: string
let server: ChildProcess | undefined
let daemon: ChildProcess | undefined
const saved: Record<string, string | undefined> = {}
const sockets: Record<string, string> = {}

beforeAll(async () => {
  home = isolateHome()
  runtime = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-runtime-")))
  fs.chmodSync(runtime, 0o700)
  outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-runtime-out-")))
  for (const name of VARS) saved[name] = process.env[name]
  Object.assign(sockets, {
    // Rootless Podman's API (`systemctl --user enable --now podman.socket`).
    podman: path.join(runtime, "podman", "podman.sock"),
    // A service no list names: the folder is closed by default.
    unnamed: path.join(runtime, "some-service", "api.sock"),
    // The ssh-agent, which git over ssh needs.
    agent: path.join(runtime, "keyring", "ssh"),
    // A container engine's socket outside the runtime folder, named by the environment.
    named: path.join(outside, "engine.sock"),
  })
  for (const p of Object.values(sockets)) fs.mkdirSync(path.dirname(p), { recursive: true })
  server = spawn("python3", ["-c", SERVER, ...Object.values(sockets)], { stdio: ["ignore", "pipe", "inherit"] })
  await new Promise<void>((resolve) => server!.stdout!.once("data", () => resolve()))
  process.env.XDG_RUNTIME_DIR = runtime
  process.env.SSH_AUTH_SOCK = sockets.agent
  process.env.CONTAINER_HOST = `unix://${sockets.named}`
  if (hasPulse) {
    daemon = spawn(
      "pulseaudio",
      [
        "-n",
        "--daemonize=no",
        "--exit-idle-time=-1",
        "--use-pid-file=no",
        "-L",
        "module-native-protocol-unix",
        "-L",
        "module-null-sink",
      ],
      { env: { PATH: "/usr/bin:/bin", HOME: home.home, XDG_RUNTIME_DIR: runtime }, stdio: "ignore" },
    )
    for (let i = 0; i < 100 && !fs.existsSync(path.join(runtime, "pulse", "native")); i++) await Bun.sleep(100)
  }
}, 60_000)

afterAll(() => {
  server?.kill("SIGKILL")
  daemon?.kill("SIGKILL")
  for (const name of VARS) {
    if (saved[name] === undefined) delete process.env[name]
    else process.env[name] = saved[name]
  }
  fs.rmSync(runtime, { recursive: true, force: true })
  fs.rmSync(outside, { recursive: true, force: true })
  home.restore()
}, 60_000)

const requests = (name: string) =>
  fs
    .readFileSync(sockets[name] + ".log", "utf8")
    .split("\n")
    .filter(Boolean)

/** A command that sends an API request to the socket and says whether it connected. */
const post = (sock: string) =>
  `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"POST /v4.0.0/libpod/containers/create HTTP/1.1\\r\\nHost: d\\r\\n\\r\\n"); print("connected", s.recv(20))' ${sock} 2>&1 | tail -1`

describe.each([...ROUTES])("route %s", (route) => {
  test.skipIf(skipPulse)(
    "the sound server in the runtime folder cannot be asked to load a command's shared object on the host",
    async () => {
      expect(hasPulse).toBe(true)
      // The server is up and reachable outside the sandbox.
      const info = spawnSync("pactl", ["info"], { env: { ...process.env, XDG_RUNTIME_DIR: runtime }, encoding: "utf8" })
      expect(info.status).toBe(0)
      const mark = path.join(home.home, `pulse-ran-${route}`)
      await using box = await fresh(route)
      const r = await box.s.bash(
        [
          `d=$(mktemp -d)`,
          `printf '#include <stdlib.h>\\n__attribute__((constructor)) static void go(void) { system("id > ${mark}"); }\\n' > $d/e.c`,
          `gcc -shared -fPIC -o $d/e.so $d/e.c`,
          `pactl load-module module-ladspa-sink sink_name=x sink_master=null plugin=$d/e.so label=x 2>&1 | head -2`,
          `rm -rf $d; echo end`,
        ].join("; "),
      )
      expect(r.raw).toContain("end")
      expect(fs.existsSync(mark)).toBe(false)
      const modules = spawnSync("pactl", ["list", "short", "modules"], {
        env: { ...process.env, XDG_RUNTIME_DIR: runtime },
        encoding: "utf8",
      })
      expect(modules.stdout).not.toContain("ladspa")
    },
    120_000,
  )

  test("no socket of the runtime folder is reachable whatever its name, nor one the environment names; the ssh-agent's is", async () => {
    await using box = await fresh(route)
    const r = await box.s.bash(
      [
        ...["podman", "unnamed", "named", "agent"].map((n) => `echo ${n}: $(${post(sockets[n]!)})`),
        // The folder is the command's own: what a tool keeps there works, and nothing of it reaches the host.
        `echo made > "$XDG_RUNTIME_DIR/probe" && cat "$XDG_RUNTIME_DIR/probe"`,
        `ls -A "$XDG_RUNTIME_DIR" | tr '\\n' ' '; echo`,
      ].join("; "),
    )
    expect(r.raw).toContain("made")
    expect(requests("podman")).toEqual([])
    expect(requests("unnamed")).toEqual([])
    expect(requests("named")).toEqual([])
    expect(requests("agent")).toHaveLength(1)
    expect(fs.existsSync(path.join(runtime, "probe"))).toBe(false)
    for (const n of ["podman", "unnamed", "agent"]) fs.writeFileSync(sockets[n] + ".log", "")
  }, 120_000)

  test("ordinary commands work with the runtime folder emptied (git, bun, npm, a test run)", async () => {
    await using box = await fresh(route)
    const r = await box.s.bash(
      [
        `d=$(mktemp -d -p "$PWD")`,
        `git init -q $d/r && git -C $d/r -c user.name=t -c user.email=t@t commit -q --allow-empty -m m && echo git-ok`,
        `npm --version >/dev/null && echo npm-ok`,
        `printf 'import { test, expect } from "bun:test"\\ntest("t", () => expect(1 + 1).toBe(2))\\n' > $d/a.test.ts`,
        `(cd $d && bun test ./a.test.ts 2>&1 | grep -q "1 pass" && echo test-ok)`,
        `rm -rf $d`,
      ].join("; "),
    )
    for (const ok of ["git-ok", "npm-ok", "test-ok"]) expect(r.raw).toContain(ok)
  }, 120_000)
})

test("the runtime folder is emptied only when it is the user's private folder and holds neither home nor project", () => {
  const made: string[] = []
  const dir = (mode: number) => {
    const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-runtime-unit-")))
    fs.chmodSync(d, mode)
    made.push(d)
    return d
  }
  try {
    const private_ = dir(0o700)
    const shared = dir(0o755)
    const at = { home: "/nonexistent-home", root: "/nonexistent-root" }
    expect(SecurityGuard.runtimeFolders({ XDG_RUNTIME_DIR: private_ }, at)).toContain(private_)
    expect(SecurityGuard.runtimeFolders({ XDG_RUNTIME_DIR: shared }, at)).not.toContain(shared)
    expect(SecurityGuard.runtimeFolders({ XDG_RUNTIME_DIR: "/" }, at)).not.toContain("/")
    expect(
      SecurityGuard.runtimeFolders({ XDG_RUNTIME_DIR: private_ }, { ...at, home: path.join(private_, "h") }),
    ).not.toContain(private_)
    expect(SecurityGuard.runtimeFolders({ XDG_RUNTIME_DIR: private_ }, { ...at, root: private_ })).not.toContain(
      private_,
    )
  } finally {
    for (const d of made) fs.rmSync(d, { recursive: true, force: true })
  }
})

test("the sockets the environment names outside the runtime folder and the rootful engines' are among those hidden", () => {
  const hidden = SecurityGuard.controlSockets(
    {
      XDG_RUNTIME_DIR: "/run/user/1000",
      PULSE_SERVER: "{abc}unix:/tmp/pulse-x/native tcp:localhost:4713 /srv/pulse.sock",
      PULSE_RUNTIME_PATH: "/var/pulse-rt",
      PIPEWIRE_REMOTE: "/srv/pw.sock",
      DOCKER_HOST: "unix:///srv/docker.sock",
      CONTAINER_HOST: "unix:///srv/podman.sock",
    },
    "/home/me",
  )
  for (const p of [
    "/tmp/pulse-x/native",
    "/srv/pulse.sock",
    "/var/pulse-rt",
    "/srv/pw.sock",
    "/srv/docker.sock",
    "/srv/podman.sock",
    "/run/podman",
    "/run/user/1000/pulse",
    "/run/user/1000/podman",
    "/run/user/1000/pipewire-0",
    "/run/user/1000/gnupg",
  ])
    expect(hidden).toContain(p)
  expect(hidden.some((p) => p.includes("localhost"))).toBe(false)
  // The ssh-agent's socket stays reachable.
  expect(SecurityGuard.controlSockets({ SSH_AUTH_SOCK: "/run/user/1000/keyring/ssh" }, "/home/me")).not.toContain(
    "/run/user/1000/keyring/ssh",
  )
})

test("an emptied folder is a tmpfs made before the mounts below it, which bind the host's paths again", () => {
  const plan = SandboxPlan.build({
    hide: [{ path: "/run/user/1000/keyring/control", dir: false }],
    lock: [{ path: "/run/user/1000/keyring/ssh", dir: false }],
    mask: [],
    pin: ["/run/user/1000/app/src"],
    write: ["/tmp", "/run/user/1000/app"],
    empty: ["/run/user/1000"],
    placeholders: { file: "/s/f", dir: "/s/d" },
    conceal: [],
  })
  const at = (p: string) => plan.args.lastIndexOf(p)
  const tmpfs = plan.args.indexOf("/run/user/1000")
  expect(plan.args.slice(tmpfs - 3, tmpfs + 1)).toEqual(["--perms", "0700", "--tmpfs", "/run/user/1000"])
  for (const p of ["/run/user/1000/keyring/ssh", "/run/user/1000/app", "/run/user/1000/keyring/control"])
    expect(at(p)).toBeGreaterThan(tmpfs)
  expect(plan.mounts.find((m) => m.path === "/run/user/1000/keyring/ssh")?.kind).toBe("lock")
  // What is written below it is bound from the host where the host allows it, read-only elsewhere.
  const bind = (p: string) => plan.args[plan.args.lastIndexOf(p) - 2]
  expect(bind("/run/user/1000/app")).toBe("--bind")
  expect(bind("/run/user/1000/keyring/ssh")).toBe("--ro-bind")
  // A language server's read-only plan keeps the emptied folder.
  expect(SandboxPlan.readOnly(plan.args).join(" ")).toContain("--tmpfs /run/user/1000")
})
