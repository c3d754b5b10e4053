// Red team GG6: the sockets of the user's session servers are hidden from commands wherever they live, not only
// `$XDG_RUNTIME_DIR/bus`. A session bus at `unix:path=/tmp/dbus-…` (dbus-launch's, dbus-run-session's, every session
// without systemd) started a host service with the activation environment a command gave it (`LD_PRELOAD`), which
// ran the command's code outside the sandbox.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityGuard } from "../../security/guard"
import { ROUTES, fresh, isolateHome } from "./redteam-helpers"
import { spawnSync } from "../spawn-sync"

const hasBus = spawnSync("sh", ["-c", "command -v dbus-daemon && command -v dbus-send && command -v gcc"]).status === 0

let home: ReturnType<typeof isolateHome>
const saved = process.env.DBUS_SESSION_BUS_ADDRESS
beforeAll(() => {
  home = isolateHome()
})
afterAll(() => {
  if (saved === undefined) delete process.env.DBUS_SESSION_BUS_ADDRESS
  else process.env.DBUS_SESSION_BUS_ADDRESS = saved
  home.restore()
}, 60_000)

/** A session bus with dbus-daemon's stock session config (`unix:tmpdir=/tmp`), stopped with what it started. */
function startBus() {
  const b = spawnSync("dbus-daemon", ["--session", "--fork", "--print-address=1", "--print-pid=1"], {
    encoding: "utf8",
  })
  const [address, pid] = b.stdout.trim().split("\n")
  return {
    address: address!,
    socket: /unix:path=([^,;]+)/.exec(address!)?.[1],
    stop() {
      const kids = spawnSync("ps", ["-o", "pid=", "--ppid", pid!], { encoding: "utf8" }).stdout.split(/\s+/)
      for (const k of kids.filter(Boolean)) process.kill(Number(k))
      process.kill(Number(pid))
    },
  }
}

/** A command that has the bus start dconf's service with its own LD_PRELOAD, which would create `mark` on the host. */
function preload(mark: string, address: string) {
  const c = `#include <stdio.h>\\n__attribute__((constructor)) static void f(void){FILE*x=fopen("${mark}","w");if(x)fclose(x);}\\n`
  const send = `DBUS_SESSION_BUS_ADDRESS=${address} dbus-send --session --print-reply --dest=org.freedesktop.DBus`
  return [
    `d=$(mktemp -d -p "$PWD") && printf '${c}' > $d/e.c && gcc -shared -fPIC -o $d/e.so $d/e.c`,
    `${send} /org/freedesktop/DBus org.freedesktop.DBus.UpdateActivationEnvironment dict:string:string:LD_PRELOAD,$d/e.so 2>&1 | head -2`,
    `${send} / org.freedesktop.DBus.StartServiceByName string:ca.desrt.dconf uint32:0 2>&1 | head -3`,
    `sleep 1; echo end`,
  ].join("; ")
}

describe.each([...ROUTES])("route %s", (route) => {
  test.skipIf(!hasBus)(
    "a session bus in /tmp, named by DBUS_SESSION_BUS_ADDRESS or not, cannot start a host service for a command",
    async () => {
      for (const named of [true, false]) {
        const mark = path.join(home.home, `bus-ran-${route}-${named}`)
        const bus = startBus()
        try {
          expect(bus.socket?.startsWith("/tmp/dbus-")).toBe(true)
          if (named) process.env.DBUS_SESSION_BUS_ADDRESS = bus.address
          else delete process.env.DBUS_SESSION_BUS_ADDRESS
          await using box = await fresh(route)
          const r = await box.s.bash(preload(mark, bus.address))
          expect(r.raw).toContain("end")
          expect(r.raw).not.toContain("method return")
          await Bun.sleep(500)
          expect(fs.existsSync(mark)).toBe(false)
        } finally {
          bus.stop()
          fs.rmSync(mark, { force: true })
        }
      }
    },
    120_000,
  )
})

test("the sockets the session's environment names are among those hidden", () => {
  const tmp = fs.mkdtempSync("/tmp/ocb-sockets-")
  try {
    fs.writeFileSync(path.join(tmp, "dbus-abc"), "")
    fs.writeFileSync(path.join(tmp, "other"), "")
    const hidden = SecurityGuard.controlSockets(
      {
        XDG_RUNTIME_DIR: "/run/user/1000",
        DBUS_SESSION_BUS_ADDRESS: `unix:path=/tmp/dbus-x,guid=1;unix:tmpdir=${tmp};unix:abstract=/tmp/dbus-y`,
        DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/var/run/dbus/other_socket",
        DISPLAY: ":1.0",
        WAYLAND_DISPLAY: "wayland-2",
      },
      "/home/me",
    )
    for (const p of [
      "/tmp/dbus-x",
      path.join(tmp, "dbus-abc"),
      "/var/run/dbus/other_socket",
      "/tmp/.X11-unix",
      "/tmp/.X11-unix/X1",
      "/tmp/.ICE-unix",
      "/run/user/1000/wayland-2",
      "/run/user/1000/wayland-0",
      "/run/user/1000/bus",
    ])
      expect(hidden).toContain(p)
    expect(hidden).not.toContain(path.join(tmp, "other"))
    // An abstract address names no file.
    expect(hidden).not.toContain("/tmp/dbus-y")
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
})
