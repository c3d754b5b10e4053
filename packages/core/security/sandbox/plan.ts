import path from "path"

/**
 * The bubblewrap arguments for one state of the policy: which folders a command may write, which paths become
 * unreadable, which read-only, which are shown redacted, and which folders are pinned in place. A pure function of
 * plain lists, so every rule of the sandbox can be tested without starting it.
 *
 * The whole file system is bound read-only first; only the folders of `write` (the project, the temporary folders, the
 * commands' own caches: `SandboxWritable`) are bound writable over it (the commands' caches also over the host's cache
 * folders, `over`), and the protections below apply on top of those.
 * A command can therefore change nothing that programs on the host run later (startup files, session services,
 * interpreters installed in the home) unless it lies in one of those folders.
 *
 * Mechanisms (all enforced by the kernel inside the sandbox's own mount namespace):
 * - write: a folder of the allow-list is bound onto itself writable (it is then a mount point, so it is pinned too).
 * - ro: a folder inside a writable one is bound onto itself read-only again (the home inside `/tmp`).
 * - hide: an empty file or folder with mode 000 is bound over the path. Reading, listing, writing or linking it fails
 *   with an access error (not "no such file", so `git add -A` cannot stage a deletion); renaming or removing it fails
 *   because it is a mount point.
 * - lock: the path is bound onto itself read-only.
 * - mask: a redacted copy (protected segments replaced) is bound read-only over the file.
 * - pin: a folder is bound onto itself; a mount point cannot be renamed or removed, so a protected path below it keeps
 *   the name its rule matches. Inside a writable folder the bind is writable; elsewhere it is read-only (nothing there
 *   can be renamed anyway, and a writable pin would open a read-only folder).
 * - open: a folder inside a locked one is bound onto itself writable again (what the host keeps writable there); what
 *   is below it is mounted as anywhere else.
 * - empty: a folder is replaced by an empty tmpfs (mode 0700) of the command's own, before anything below it is
 *   mounted: what lies there on the host is out of reach except the paths mounted below it (the user's runtime folder,
 *   whose sockets belong to the session's servers; the writable folders and protections inside it are bound again).
 * The sandbox also gets its own PID namespace (no other process, and no `/proc/<pid>/root` of one, is visible), a
 * fresh `/proc` and `/dev` (no raw disks), no capabilities, dies with its parent, and, while OpenCode serves its HTTP
 * API on a port, a network namespace of its own.
 *
 * @example
 * const plan = SandboxPlan.build({
 *   hide: [{ path: "/repo/.env", dir: false }], lock: [], mask: [], pin: ["/repo"],
 *   placeholders: { file: "/tmp/s/deny-file", dir: "/tmp/s/deny-dir" }, conceal: ["/tmp/s"],
 * })
 * plan.args // ["--die-with-parent", …, "--bind", "/tmp/s/deny-file", "/repo/.env", …, "--tmpfs", "/tmp/s"]
 */
export namespace SandboxPlan {
  export type Entry = { path: string; dir: boolean }

  export type Input = {
    /**
     * The folders commands may write (real paths that exist): everything else is read-only. None given, nothing is
     * writable but the sandbox's own `/dev/shm`.
     */
    write?: string[]
    /**
     * Writable folders bound over other paths (`path`, a folder that exists) from elsewhere (`source`): the commands'
     * private caches over the host's cache folders (`SandboxWritable.prepare`).
     */
    over?: { path: string; source: string }[]
    /**
     * Folders inside a writable one bound read-only again (the home when it lies in a temporary folder): the writable
     * folders inside them stay writable.
     */
    readOnly?: string[]
    hide: Entry[]
    lock: Entry[]
    mask: { path: string; copy: string }[]
    pin: string[]
    /** Folders inside locked folders that stay writable (only those inside a locked folder are mounted). */
    open?: string[]
    /**
     * Folders replaced by an empty tmpfs of the command's own before the mounts below them (which are made at the real
     * host paths again): what else lies there on the host cannot be reached.
     */
    empty?: string[]
    placeholders: { file: string; dir: string }
    /** Folders replaced by an empty tmpfs once the binds above have used them as sources (the sandbox's own state). */
    conceal: string[]
    /** Files inside a concealed folder shown again, read-only, at their own path (state the commands may read). */
    expose?: string[]
    /** Environment variables removed inside the sandbox. */
    unset?: string[]
    /** Environment variables set inside the sandbox. */
    set?: Record<string, string>
    /**
     * A network namespace of the sandbox's own (`--unshare-net`: only its own loopback, no other network), given while
     * OpenCode serves its HTTP API on a port a command could otherwise reach (`SandboxNetwork.servers`).
     */
    isolateNetwork?: boolean
  }

  export type Mount = {
    kind: "pin" | "ro" | "write" | "open" | "lock" | "mask" | "empty" | "hide"
    path: string
    source: string
  }

  export type Plan = {
    args: string[]
    mounts: Mount[]
    /** Entries left out because another entry already covers them. */
    covered: { path: string; by: string }[]
    /** Files of concealed folders shown read-only (`Input.expose`). */
    exposed: string[]
  }

  /**
   * The most arguments bubblewrap reads (its `MAX_ARGS`, 9,000, with room for the few given on its command line):
   * a plan with more fails every command.
   */
  export const MAX_ARGS = 8_990

  /**
   * Mounts are made parents first; at one path, stronger kinds win (hide over empty over mask over lock over write over
   * pin).
   */
  const STRENGTH: Record<Mount["kind"], number> = {
    pin: 0,
    ro: 1,
    write: 2,
    open: 3,
    lock: 4,
    mask: 5,
    empty: 6,
    hide: 7,
  }

  /**
   * The argument list (for `bwrap --args FD`) and the mounts it makes.
   *
   * @example
   * SandboxPlan.build({ hide: [], lock: [{ path: "/r/.opencode-security.json", dir: false }], mask: [], pin: [],
   *   placeholders: { file: "/s/f", dir: "/s/d" }, conceal: [] }).mounts
   * // [{ kind: "lock", path: "/r/.opencode-security.json", source: "/r/.opencode-security.json" }]
   */
  export function build(input: Input): Plan {
    const wanted = new Map<string, Mount>()
    const want = (mount: Mount) => {
      const before = wanted.get(mount.path)
      if (!before || STRENGTH[mount.kind] > STRENGTH[before.kind]) wanted.set(mount.path, mount)
    }
    for (const dir of input.pin) want({ kind: "pin", path: clean(dir), source: clean(dir) })
    for (const dir of input.readOnly ?? []) want({ kind: "ro", path: clean(dir), source: clean(dir) })
    for (const dir of input.write ?? []) want({ kind: "write", path: clean(dir), source: clean(dir) })
    for (const o of input.over ?? []) want({ kind: "write", path: clean(o.path), source: clean(o.source) })
    for (const e of input.lock) want({ kind: "lock", path: clean(e.path), source: clean(e.path) })
    // An opening matters only inside a locked folder (elsewhere everything is writable already).
    const lockedDirs = input.lock.filter((e) => e.dir).map((e) => clean(e.path))
    for (const dir of input.open ?? [])
      if (lockedDirs.some((l) => inside(clean(dir), l))) want({ kind: "open", path: clean(dir), source: clean(dir) })
    for (const m of input.mask) want({ kind: "mask", path: clean(m.path), source: m.copy })
    for (const dir of input.empty ?? []) want({ kind: "empty", path: clean(dir), source: "tmpfs" })
    for (const e of input.hide)
      want({ kind: "hide", path: clean(e.path), source: e.dir ? input.placeholders.dir : input.placeholders.file })

    // Below a hidden folder nothing else can be mounted (it cannot even be reached), and below a read-only folder a
    // pin or a lock adds nothing, nor does a writable folder of the allow-list open it again — unless an opening
    // between them made that part writable again.
    const blockers = [...wanted.values()].filter((m) => m.kind === "hide" || (m.kind === "lock" && isDir(input, m)))
    const openings = [...wanted.values()].filter((m) => m.kind === "open")
    const blocked = (mount: Mount, writes: Mount[]) =>
      blockers.find(
        (b) =>
          b !== mount &&
          inside(mount.path, b.path) &&
          (b.kind === "hide" ||
            ((mount.kind === "pin" || mount.kind === "lock" || mount.kind === "write" || mount.kind === "ro") &&
              ![...openings, ...writes].some(
                (o) => o !== mount && inside(mount.path, o.path) && inside(o.path, b.path),
              ))),
      )
    // The writable folders first (an opening only, not another writable folder, lifts a lock above one).
    const writes = [...wanted.values()].filter((m) => m.kind === "write" && !blocked(m, []))
    const covered: Plan["covered"] = []
    const mounts: Mount[] = []
    for (const mount of wanted.values()) {
      const by = blocked(mount, writes)
      if (by) covered.push({ path: mount.path, by: by.path })
      else mounts.push(mount)
    }
    mounts.sort((a, b) => depth(a.path) - depth(b.path) || STRENGTH[a.kind] - STRENGTH[b.kind])
    // What the command may write at a path: the nearest writable folder or opening at or above it, unless a locked
    // or emptied folder lies between (the root itself is read-only; a pin inside an emptied folder binds the host's).
    const states = mounts.filter(
      (m) =>
        m.kind === "write" ||
        m.kind === "open" ||
        m.kind === "ro" ||
        m.kind === "empty" ||
        (m.kind === "lock" && isDir(input, m)),
    )
    const writableAt = (p: string) => {
      let best: Mount | undefined
      for (const s of states)
        if ((s.path === p || inside(p, s.path)) && (!best || depth(s.path) > depth(best.path))) best = s
      return !!best && (best.kind === "write" || best.kind === "open")
    }

    const args = [
      "--die-with-parent",
      "--unshare-pid",
      ...(input.isolateNetwork ? ["--unshare-net"] : []),
      "--new-session",
      "--cap-drop",
      "ALL",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--perms",
      "1777",
      "--tmpfs",
      "/dev/shm",
      "--proc",
      "/proc",
    ]
    for (const m of mounts) {
      if (m.kind === "empty") {
        args.push("--perms", "0700", "--tmpfs", m.path)
        continue
      }
      const rw =
        m.kind === "write" || m.kind === "open" || m.kind === "hide" || (m.kind === "pin" && writableAt(m.path))
      args.push(rw ? "--bind" : "--ro-bind", m.source, m.path)
    }
    for (const dir of input.conceal) args.push("--tmpfs", clean(dir))
    const exposed = (input.expose ?? []).map(clean)
    for (const file of exposed) args.push("--ro-bind", file, file)
    for (const name of input.unset ?? []) args.push("--unsetenv", name)
    for (const [name, value] of Object.entries(input.set ?? {})) args.push("--setenv", name, value)
    return { args, mounts, covered, exposed }
  }

  /**
   * The plan for a long-lived helper (a language server) instead of a command: every bind read-only, no network, and
   * its temporary and cache folders in the sandbox's own `/dev/shm`. A helper outlives the calls that started it, so file tools do
   * not wait for it; unable to change a shared file, it cannot swap a link between a file tool's check and its read.
   *
   * @example
   * SandboxPlan.readOnly(["--bind", "/", "/", "--bind", "/r", "/r"]).slice(0, 6)
   * // ["--ro-bind", "/", "/", "--ro-bind", "/r", "/r"]
   */
  export function readOnly(args: readonly string[]): string[] {
    const out = args.map((a) => (a === "--bind" ? "--ro-bind" : a))
    // No network either: a language server needs none, and a helper lives for the session, so a server of OpenCode's
    // that starts listening after it started (`SandboxNetwork.servers`) would otherwise stay within its reach.
    if (!out.includes("--unshare-net")) out.push("--unshare-net")
    for (const [name, value] of Object.entries(HELPER_ENV)) out.push("--setenv", name, value)
    return out
  }

  /** Where a read-only helper writes: the sandbox's private `/dev/shm` (a build of rust-analyzer's `cargo check` too). */
  export const HELPER_ENV: Readonly<Record<string, string>> = {
    TMPDIR: "/dev/shm",
    TMP: "/dev/shm",
    TEMP: "/dev/shm",
    XDG_CACHE_HOME: "/dev/shm/.cache",
    CARGO_TARGET_DIR: "/dev/shm/cargo-target",
  }

  /**
   * Folders to pin so that a protected path keeps matching its rule: every folder strictly between `root` and the
   * path whose renaming would make `stillProtected` false for the renamed path. Name-only rules (`.env*`) need none;
   * anchored ones (`config/*.key`) pin the folders their pattern names. The root and its own parents are pinned by
   * the caller.
   *
   * @example
   * SandboxPlan.pins("/r", "/r/config/prod.key", (p) => p.startsWith("/r/config/")) // ["/r/config"]
   */
  export function pins(root: string, target: string, stillProtected: (renamed: string) => boolean): string[] {
    const out: string[] = []
    const rel = path.relative(root, target)
    if (!rel || rel.startsWith("..") || path.isAbsolute(rel)) return out
    const parts = rel.split(path.sep)
    for (let i = 0; i < parts.length - 1; i++) {
      const renamed = [...parts]
      renamed[i] = `${parts[i]}\u2063renamed`
      if (!stillProtected(path.join(root, ...renamed))) out.push(path.join(root, ...parts.slice(0, i + 1)))
    }
    return out
  }

  function isDir(input: Input, mount: Mount) {
    return input.lock.some((e) => e.dir && clean(e.path) === mount.path)
  }

  function clean(p: string) {
    return path.resolve(p)
  }

  function depth(p: string) {
    return p === "/" ? 0 : p.split("/").length
  }

  function inside(child: string, parent: string) {
    return child !== parent && child.startsWith(parent.endsWith("/") ? parent : parent + "/")
  }
}
