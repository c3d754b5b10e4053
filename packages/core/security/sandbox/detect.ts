import { SyncProcess } from "../../util/sync-process"
import { SecuritySearchPath } from "../search-path"

/**
 * Whether the kernel sandbox for shell commands can start here: bubblewrap (`bwrap`) on Linux, checked once per
 * process by running `true` inside the same kind of sandbox the commands get (new PID namespace, no capabilities).
 * When it cannot start, the answer names what to install or change.
 *
 * @example
 * const probe = SandboxDetect.probe()
 * if (!probe.ok) console.error(`${probe.reason}. ${probe.install}`)
 */
export namespace SandboxDetect {
  export type Result = { ok: true; bwrap: string; version?: string } | { ok: false; reason: string; install: string }

  export type Options = {
    env?: Record<string, string | undefined>
    platform?: NodeJS.Platform
    /** Probe again instead of answering from the cache. */
    fresh?: boolean
  }

  const INSTALL =
    "Install bubblewrap (Debian/Ubuntu: `sudo apt install bubblewrap`; Fedora: `sudo dnf install bubblewrap`; " +
    "Arch: `sudo pacman -S bubblewrap`; Alpine: `apk add bubblewrap`)"

  let cached: Result | undefined

  /**
   * The sandbox program and whether it works, probed once per process.
   *
   * @example
   * SandboxDetect.probe({ platform: "darwin" }) // { ok: false, reason: "…not supported on darwin…", install: "…" }
   */
  export function probe(options: Options = {}): Result {
    if (cached && !options.fresh && !options.env && !options.platform) return cached
    const result = run(options)
    if (!options.env && !options.platform) cached = result
    return result
  }

  function run(options: Options): Result {
    const platform = options.platform ?? process.platform
    if (platform !== "linux")
      return {
        ok: false,
        reason: `the shell sandbox uses Linux namespaces (bubblewrap) and is not supported on ${platform}`,
        install:
          'Run OpenCode on Linux with bubblewrap installed, or opt out in .opencode-security.json with "sandbox": { "mode": "off" } (weaker: shell commands are then only checked statically)',
      }
    const bwrap = SecuritySearchPath.which("bwrap", options.env ?? process.env)
    if (!bwrap) return { ok: false, reason: "bubblewrap (bwrap) is not installed", install: INSTALL }
    const trial = SyncProcess.run(
      bwrap,
      [
        "--bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--",
        "/bin/sh",
        "-c",
        "exit 0",
      ],
      { timeout: 15_000, stderr: true },
    )
    if (trial.error || trial.status !== 0) {
      const said =
        trial.stderr.toString("utf8").trim() || (trial.error ? trial.error.message : `exit code ${trial.status}`)
      const userns = /namespace|permission|Operation not permitted/i.test(said)
      return {
        ok: false,
        reason: `bubblewrap is installed (${bwrap}) but cannot start a sandbox here: ${said}`,
        install: userns
          ? "Allow unprivileged user namespaces (e.g. `sudo sysctl kernel.unprivileged_userns_clone=1`, or on Ubuntu 24.04+ an AppArmor profile for bwrap), or run in a container that permits them"
          : INSTALL,
      }
    }
    const version = SyncProcess.run(bwrap, ["--version"], { timeout: 5_000 }).stdout.toString("utf8").trim()
    return { ok: true, bwrap, version: version || undefined }
  }
}
