// The kernel layer: shell commands run for real inside the bubblewrap sandbox, the way OpenCode runs them (the guard's
// before hook, then `bash -c <command>` with the environment of the shell.env hook, then the after hook). Every
// assertion about protected content looks at the RAW output of the command — what the process printed before any
// redaction — so a pass means the kernel refused the read, not that the scanner caught it afterwards.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { SecurityError } from "../../security/errors"
import { SecurityGuard } from "../../security/guard"
import { Sandbox } from "../../security/sandbox"
import { SandboxDetect } from "../../security/sandbox/detect"
import { SandboxPlan } from "../../security/sandbox/plan"
import { APP, POLICY, SECRET_FILE, guardFor, project } from "./fixture"
import { SecuritySearchPath } from "../../security/search-path"
import { SyncProcess } from "../../util/sync-process"
import { spawnSync } from "../spawn-sync"

// Every case here runs sandboxed shells and git: short ones slow down far more than long ones on a busy machine
// (0.2 s idle took over 5 s beside CPU-bound work), so none is left at bun's 5 s default.
setDefaultTimeout(60_000)

/** Bytes of protected files and segments that no command may print. */
const PROTECTED = [
  "Zx81Qp0vLk27mNb5Yt3RwE9u",
  "line two of the api key file",
  "deep secret content",
  "Hq83kfP2mZ0xQ7vB",
  "prodtoken99887766",
  "the confidential pricing algorithm",
  "b3BlbnNzaC1rZXktdjEAAAAA",
  "server key material",
]

let calls = 0

type Run = { allowed: boolean; reason?: string; raw: string; output: string; code: number | null }

/** Runs one command the way OpenCode's bash tool does, through the guard's hooks. */
async function shell(
  guard: SecurityGuard.Guard,
  dir: string,
  command: string,
  options: { shell?: string; env?: Record<string, string>; kernelOnly?: boolean } = {},
): Promise<Run> {
  const callID = `call_${++calls}`
  // kernelOnly: skip the static reading (as for a command the user types), so the kernel alone must hold.
  if (!options.kernelOnly) {
    const verdict = await guard.before({ tool: "bash", args: { command, description: "x" }, callID })
    if (!verdict.allowed) return { allowed: false, reason: verdict.reason, raw: "", output: "", code: null }
  }
  // OpenCode merges the hook's variables over its own environment (the user's ZDOTDIR, if any, is in there).
  const base = { ...process.env, HOME: path.join(dir, "home"), ...options.env }
  const env = { ...base, ...guard.shellEnv({ callID }, base) }
  const r = spawnSync(options.shell ?? "/bin/bash", ["-c", command], {
    cwd: dir,
    env,
    encoding: "utf8",
    timeout: 30_000,
  })
  const raw = (r.stdout ?? "") + (r.stderr ?? "")
  const output = guard.after({ tool: "bash", args: { command }, callID }, raw)
  return { allowed: true, raw, output, code: r.status }
}

function leaks(text: string) {
  return PROTECTED.filter((bytes) => text.includes(bytes))
}

function git(dir: string, ...args: string[]) {
  const r = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
    cwd: dir,
    encoding: "utf8",
  })
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`)
  return r.stdout
}

async function sandboxed(extra: Record<string, string> = {}, policy: unknown = POLICY) {
  const dir = await project(extra, policy)
  // As the plugin does: the host's configuration and plugin folders are protected (home is the fixture's).
  const env = { HOME: path.join(dir.path, "home"), XDG_CONFIG_HOME: path.join(dir.path, "home/.config") }
  const guard = await guardFor(
    dir.path,
    {},
    {
      shell: "/bin/bash",
      ripgrep: false,
      protect: SecurityGuard.hostProtected(dir.path, dir.path, env),
    },
  )
  return {
    dir,
    guard,
    run: (command: string, options?: Parameters<typeof shell>[3]) => shell(guard, dir.path, command, options),
    async [Symbol.asyncDispose]() {
      guard.close()
      await dir[Symbol.asyncDispose]()
    },
  }
}

describe("SandboxPlan", () => {
  const placeholders = { file: "/s/deny-file", dir: "/s/deny-dir" }

  test("parents are mounted before children; a hidden folder covers what lies below it", () => {
    const plan = SandboxPlan.build({
      hide: [
        { path: "/r/secrets", dir: true },
        { path: "/r/secrets/inner.key", dir: false },
      ],
      lock: [{ path: "/r/.opencode-security.json", dir: false }],
      mask: [{ path: "/r/src/app.ts", copy: "/s/masks/1" }],
      pin: ["/r", "/r/secrets"],
      placeholders,
      conceal: ["/s"],
    })
    expect(plan.mounts.map((m) => [m.kind, m.path])).toEqual([
      ["pin", "/r"],
      ["lock", "/r/.opencode-security.json"],
      ["hide", "/r/secrets"],
      ["mask", "/r/src/app.ts"],
    ])
    expect(plan.covered).toEqual([{ path: "/r/secrets/inner.key", by: "/r/secrets" }])
    const args = plan.args.join(" ")
    expect(args).toContain("--bind /s/deny-dir /r/secrets")
    expect(args).toContain("--ro-bind /s/masks/1 /r/src/app.ts")
    expect(args.endsWith("--tmpfs /s")).toBe(true)
  })

  test("a new PID namespace, a fresh /proc and /dev, no capabilities, death with the parent", () => {
    const args = SandboxPlan.build({ hide: [], lock: [], mask: [], pin: [], placeholders, conceal: [] }).args
    for (const flag of ["--unshare-pid", "--die-with-parent", "--new-session"]) expect(args).toContain(flag)
    expect(args.join(" ")).toContain("--cap-drop ALL")
    expect(args.join(" ")).toContain("--dev /dev")
    expect(args.join(" ")).toContain("--proc /proc")
  })

  test("pins: the folders an anchored rule names, none for a name-only rule", () => {
    const anchored = (p: string) => p.startsWith("/r/config/") && p.endsWith(".key")
    expect(SandboxPlan.pins("/r", "/r/config/prod.key", anchored)).toEqual(["/r/config"])
    const byName = (p: string) => path.basename(p).startsWith(".env")
    expect(SandboxPlan.pins("/r", "/r/a/b/.env", byName)).toEqual([])
    expect(SandboxPlan.pins("/r", "/elsewhere/x", anchored)).toEqual([])
  })

  test("an opening inside a locked folder is writable again, and what is protected below it is still mounted", () => {
    const plan = SandboxPlan.build({
      hide: [{ path: "/d/worktree/p/.env", dir: false }],
      lock: [
        { path: "/d", dir: true },
        { path: "/d/auth.json", dir: false },
        { path: "/d/worktree/p/opencode.json", dir: false },
      ],
      mask: [],
      pin: ["/d/worktree/p"],
      open: ["/d/plans", "/d/worktree", "/elsewhere/open"],
      placeholders,
      conceal: [],
    })
    expect(plan.mounts.map((m) => [m.kind, m.path])).toEqual([
      ["lock", "/d"],
      ["open", "/d/plans"],
      ["open", "/d/worktree"],
      ["pin", "/d/worktree/p"],
      ["lock", "/d/worktree/p/opencode.json"],
      ["hide", "/d/worktree/p/.env"],
    ])
    // A lock below the locked folder but outside every opening adds nothing; an opening outside a lock is not made.
    expect(plan.covered).toEqual([{ path: "/d/auth.json", by: "/d" }])
    const args = plan.args.join(" ")
    expect(args).toContain("--ro-bind /d /d")
    expect(args).toContain("--bind /d/plans /d/plans")
    expect(args.indexOf("--ro-bind /d /d")).toBeLessThan(args.indexOf("--bind /d/plans /d/plans"))
    expect(args).not.toContain("/elsewhere/open")
  })

  test("at one path the stronger protection wins (hide over mask over lock over pin)", () => {
    const plan = SandboxPlan.build({
      hide: [{ path: "/r/a", dir: false }],
      lock: [{ path: "/r/a", dir: false }],
      mask: [],
      pin: ["/r/a"],
      placeholders,
      conceal: [],
    })
    expect(plan.mounts).toEqual([{ kind: "hide", path: "/r/a", source: "/s/deny-file" }])
  })
})

describe("SandboxDetect", () => {
  test("outside Linux the sandbox is unavailable, and the answer says how to opt out", () => {
    const probe = SandboxDetect.probe({ platform: "darwin" })
    expect(probe.ok).toBe(false)
    if (!probe.ok) {
      expect(probe.reason).toContain("not supported on darwin")
      expect(probe.install).toContain('"mode": "off"')
    }
  })

  test("bubblewrap works on this machine (the README's install step provides it)", () => {
    const probe = SandboxDetect.probe({ fresh: true })
    expect(probe).toMatchObject({ ok: true })
  })
})

describe("reading protected content inside the sandbox", () => {
  let box: Awaited<ReturnType<typeof sandboxed>>
  beforeAll(async () => {
    box = await sandboxed()
  }, 60_000)
  afterAll(() => box[Symbol.asyncDispose]())

  // Names built at run time, links made and read in one command, recursive searches, interpreters: the static
  // reading cannot know these paths; the kernel refuses them all.
  const reads = [
    "python3 -c \"print(open('.e'+'nv').read())\"",
    "python3 -c \"import os; print(open(os.path.join('sec'+'rets','api.key')).read())\"",
    "node -e \"console.log(require('fs').readFileSync(['.','env'].join('')).toString())\"",
    'perl -e \'open(F, "." . "env"); print <F>\'',
    "find . -name '*.key' -exec cat {} +",
    "find . -type f | xargs cat",
    "cat $(find . -name '.env*')",
    'cat "$(pwd)"/secrets/api.key',
    "ls -a | grep env | xargs cat",
    "cd src && cat /proc/self/cwd/../.env",
    "ln .env h && cat h",
    "ln -s .env s && cat s",
    "ln -s secrets d && cat d/api.key d/nested/deep.txt",
    "cp -r secrets /tmp/ocb-copy-$$ && cat /tmp/ocb-copy-$$/*; rm -rf /tmp/ocb-copy-$$",
    "tar cf - . 2>/dev/null | strings",
    "grep -r . . 2>/dev/null",
    "grep -rc Zx81 . ; echo exit=$?",
    "base64 -w 8 .env",
    "xxd -p -c 8 secrets/api.key",
    "dd if=secrets/api.key bs=1 2>/dev/null | rev",
    "awk '{print}' config/server.key",
    "cat home/.ssh/id_rsa; cat ~/.ssh/id_rsa",
    "rev src/app.ts; tr a-z A-Z < src/app.ts",
    "sed -n '/secure-start/,/secure-end/p' src/app.ts",
    "cat /proc/1/root$(pwd)/.env",
    "for p in /proc/[0-9]*; do cat $p/root$(pwd)/.env 2>/dev/null; done; echo scanned",
    "unshare -Urm sh -c 'umount .env; cat .env' 2>&1",
    "unshare -Urm sh -c 'mount --bind secrets /mnt && ls /mnt && cat /mnt/api.key' 2>&1",
    "ls /dev; cat /dev/vda 2>&1 | head -c 100",
  ]
  for (const command of reads)
    test(command, async () => {
      // The kernel alone holds (static reading skipped) …
      const kernel = await box.run(command, { kernelOnly: true })
      expect(leaks(kernel.raw)).toEqual([])
      // … and through the hooks the command is refused early (a protected path written in it) or runs without a leak.
      const hooked = await box.run(command)
      if (hooked.allowed) expect(leaks(hooked.raw)).toEqual([])
      else expect(hooked.reason).toContain("Blocked by the project's security policy")
    })

  test("a protected file is an access error, not a missing file", async () => {
    const run = await box.run("cat .env; ls secrets; test -e .env && echo exists", { kernelOnly: true })
    expect(run.raw).toContain("Permission denied")
    expect(run.raw).toContain("exists")
  })

  test("the sandbox's own state folder is empty inside", async () => {
    // Every sandbox state folder of this user, this one's and other projects', lives in one private folder that is
    // an empty tmpfs inside.
    const run = await box.run(`ls -A ${Sandbox.privateFolder()} 2>&1`)
    expect(run.raw.trim()).toBe("")
  })

  test("segments: the file shows its protected lines redacted; other lines as they are", async () => {
    const run = await box.run("cat src/app.ts")
    expect(run.raw).toContain("export function visible()")
    expect(run.raw).toContain("[REDACTED: protected segment]")
    expect(run.raw).not.toContain("pricing algorithm")
  })

  test("the server password of the OpenCode process does not reach the sandbox", async () => {
    const run = await box.run("echo pw=$OPENCODE_SERVER_PASSWORD inside=$OPENCODE_BUILTINS_SANDBOX", {
      env: { OPENCODE_SERVER_PASSWORD: "hunter2-do-not-leak" },
    })
    expect(run.raw).toContain("inside=1")
    expect(run.raw).not.toContain("hunter2")
  })
})

describe("the host's own git leaves nothing appearing and vanishing in the tree commands walk", () => {
  test("GIT_OPTIONAL_LOCKS=0 is set on the host unless the user set it, and removed again inside the sandbox", () => {
    const env: Record<string, string | undefined> = {}
    expect(Sandbox.quietHostGit(env)).toEqual([Sandbox.GIT_LOCKS])
    expect(env.GIT_OPTIONAL_LOCKS).toBe("0")
    // A second sandbox of the same process still restores the user's environment inside.
    expect(Sandbox.quietHostGit(env)).toEqual([Sandbox.GIT_LOCKS])
    const user: Record<string, string | undefined> = { GIT_OPTIONAL_LOCKS: "1" }
    expect(Sandbox.quietHostGit(user)).toEqual([])
    expect(user.GIT_OPTIONAL_LOCKS).toBe("1")
  })

  test("a sandbox sets it on the host process's environment; its commands get the user's environment back", () => {
    const base = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-locks-")), "private")
    const host: Record<string, string | undefined> = { PATH: process.env.PATH }
    const sandbox = Sandbox.create({ base, host })
    try {
      expect(host.GIT_OPTIONAL_LOCKS).toBe("0")
      const args = sandbox.prepare({ hide: [], lock: [], mask: [], pin: [] }).args
      expect(args.some((a, i) => a === "--unsetenv" && args[i + 1] === Sandbox.GIT_LOCKS)).toBe(true)
    } finally {
      sandbox.close()
      fs.rmSync(path.dirname(base), { recursive: true, force: true })
    }
  })

  test("OpenCode's snapshot check of a nested repository then leaves its index alone (no index.lock)", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-locks-"))
    const dir = path.join(root, "project")
    const snapshot = path.join(root, "snapshot")
    const nested = path.join(dir, "nested")
    fs.mkdirSync(nested, { recursive: true })
    const host: Record<string, string | undefined> = { ...process.env }
    delete host.GIT_OPTIONAL_LOCKS
    // OpenCode's snapshot: its own git folder over the project's work tree, where a nested repository is a gitlink.
    // `git diff-files` runs `git status` in the nested repository, which refreshes a stale index by writing
    // .git/index.lock and renaming it over .git/index: a file a parallel `grep -r` lists, then finds gone.
    const opencodeGit = (...args: string[]) =>
      spawnSync("git", ["--git-dir", snapshot, "--work-tree", dir, ...args], { cwd: dir, encoding: "utf8", env: host })
    let hours = 0
    const check = () => {
      const later = new Date(Date.now() + 3_600_000 * ++hours)
      fs.utimesSync(path.join(nested, "r.txt"), later, later)
      const index = path.join(nested, ".git/index")
      const before = fs.statSync(index).ino
      expect(opencodeGit("diff-files", "--name-only", "-z", "--", ".").status).toBe(0)
      return fs.statSync(index).ino !== before
    }
    let sandbox: Sandbox.Instance | undefined
    try {
      git(nested, "init", "-q")
      fs.writeFileSync(path.join(nested, "r.txt"), "old\n")
      git(nested, "add", "-A")
      git(nested, "commit", "-qm", "old")
      opencodeGit("init", "-q")
      opencodeGit("add", "--all", "--", "nested")
      // Without the sandbox the nested index is rewritten (the scenario is real) …
      expect(check()).toBe(true)
      // … with one, OpenCode's git (which inherits the host's environment) leaves it as it is.
      sandbox = Sandbox.create({ base: path.join(root, "private"), host })
      expect(check()).toBe(false)
    } finally {
      sandbox?.close()
      fs.rmSync(root, { recursive: true, force: true })
    }
  })
})

describe("the policy, the audit log and the host configuration cannot be changed from the shell", () => {
  const writes = [
    "rm .opencode-security.json",
    "mv .opencode-security.json /tmp/p.json",
    "echo '{}' > .opencode-security.json",
    "truncate -s 0 .opencode-security.json",
    "sed -i 's/read/none/' .opencode-security.json",
    "chmod 000 .opencode-security.json",
    "ln -sf /dev/null .opencode-security.json",
    'F=$(ls -a | grep "curity.js"); rm -f "$F"',
    "python3 -c \"import os; os.remove('.opencode-' + 'security.json')\"",
    "find . -name '*.json' -delete",
    "rm -rf . 2>/dev/null; true",
    "git init -q . && git add -A && git stash -u",
    "mv ../$(basename $(pwd)) ../moved-away",
    "rm -f .opencode-security-audit.log; echo forged >> .opencode-security-audit.log",
    'echo \'{"plugin":["evil"]}\' > opencode.json',
    "mkdir -p .opencode/plugin && echo 'export default async () => ({})' > .opencode/plugin/evil.ts",
    "mkdir -p .opencode/tools && echo x > .opencode/tools/t.ts",
    'echo \'{"security":{"enabled":false}}\' > .opencode/opencode-builtins.json',
  ]
  for (const command of writes)
    test(command, async () => {
      await using box = await sandboxed({ ".opencode-security-audit.log": "" })
      const policy = fs.readFileSync(box.dir.file(".opencode-security.json"))
      // The kernel alone (static reading skipped): the hooks would refuse many of these before they run.
      const run = await box.run(command, { kernelOnly: true })
      await box.guard.before({ tool: "todowrite", args: { todos: [] } })
      // The policy is byte-identical, still a regular file, and still in force.
      expect(fs.lstatSync(box.dir.file(".opencode-security.json")).isFile()).toBe(true)
      expect(fs.readFileSync(box.dir.file(".opencode-security.json"))).toEqual(policy)
      expect(box.guard.state().status).toBe("valid")
      // Whatever the command made that OpenCode would load at its next start is moved aside.
      expect(fs.existsSync(box.dir.file("opencode.json"))).toBe(false)
      expect(fs.existsSync(box.dir.file(".opencode/plugin"))).toBe(false)
      expect(fs.existsSync(box.dir.file(".opencode/tools"))).toBe(false)
      expect(fs.existsSync(box.dir.file(".opencode/opencode-builtins.json"))).toBe(false)
      expect(fs.readFileSync(box.dir.file(".opencode-security-audit.log"), "utf8")).not.toContain("forged")
      // And the next command still cannot read protected files.
      const after = await box.run("cat .env secrets/api.key 2>&1")
      expect(leaks(after.raw)).toEqual([])
    })

  test("a plugin folder made by a command is moved aside and the model is told", async () => {
    await using box = await sandboxed()
    // A folder name built at run time: the static reading lets it through, the kernel cannot stop a new folder, so
    // it is moved aside after the command.
    const run = await box.run(
      "printf .opencode/plugin > n.txt; d=$(cat n.txt); mkdir -p $d && echo 'export default 1' > $d/p.ts",
    )
    expect(run.allowed).toBe(true)
    expect(run.output).toContain("could switch the security policy off")
    const aside = fs.readdirSync(box.dir.file(".opencode")).filter((n) => n.startsWith("plugin.blocked-by-security-"))
    expect(aside.length).toBe(1)
  })
})

describe("the next session's root cannot be moved away from the policy", () => {
  // OpenCode started in a subfolder of the repository: the worktree (the repository) is the root and holds the policy.
  // OpenCode takes the worktree from the nearest `.git` above where it starts, so a `.git` made in the subfolder
  // would make the subfolder the next session's root, where no policy is.
  const commands = ["git init -q .", "printf 'gitdir: /tmp/elsewhere\\n' > .g$(printf it)", "mkdir -p $(printf .gi)t"]
  for (const command of commands)
    test(command, async () => {
      await using dir = await project({ "app/web/index.ts": "export const x = 1\n" })
      git(dir.path, "init", "-q")
      const web = dir.file("app/web")
      const env = { HOME: path.join(dir.path, "home"), XDG_CONFIG_HOME: path.join(dir.path, "home/.config") }
      const guard = await guardFor(
        web,
        {},
        {
          worktree: dir.path,
          shell: "/bin/bash",
          ripgrep: false,
          protect: SecurityGuard.hostProtected(web, dir.path, env),
        },
      )
      try {
        expect(guard.root).toBe(fs.realpathSync(dir.path))
        const refused = await guard.before({ tool: "write", args: { filePath: path.join(web, ".git"), content: "x" } })
        expect(refused.allowed).toBe(false)
        // The kernel and the sweep alone (static reading skipped, as for a command the user types).
        const run = await shell(guard, web, `${command}; echo RAN-OK`, { kernelOnly: true })
        expect(run.allowed).toBe(true)
        expect(run.raw).toContain("RAN-OK")
        await guard.before({ tool: "todowrite", args: { todos: [] } })
        for (const level of [web, dir.file("app")]) expect(fs.existsSync(path.join(level, ".git"))).toBe(false)
      } finally {
        guard.close()
      }
    })
})

describe("renames cannot move a protected path out of its rule", () => {
  test("renaming the folder an anchored rule names fails, and the file stays unreadable", async () => {
    await using box = await sandboxed()
    const run = await box.run("mv config configuration; cat configuration/server.key config/server.key 2>&1", {
      kernelOnly: true,
    })
    expect(run.raw).toContain("Device or resource busy")
    expect(leaks(run.raw)).toEqual([])
    expect(fs.existsSync(box.dir.file("config/server.key"))).toBe(true)
  })

  test("renaming the protected folder or file itself fails", async () => {
    await using box = await sandboxed()
    const run = await box.run("mv secrets public; mv .env env.txt; cat public/api.key env.txt 2>&1", {
      kernelOnly: true,
    })
    expect(leaks(run.raw)).toEqual([])
    expect(fs.existsSync(box.dir.file("secrets/api.key"))).toBe(true)
    expect(fs.existsSync(box.dir.file(".env"))).toBe(true)
  })
})

describe("freshness: what changes between calls is protected from the next call", () => {
  test("a protected file created by the user between two commands is unreadable to the second", async () => {
    await using box = await sandboxed()
    await box.run("true")
    fs.writeFileSync(box.dir.file(".env.local"), "LATE_SECRET=Hq83kfP2mZ0xQ7vB\n")
    const run = await box.run("cat .env.local")
    expect(leaks(run.raw)).toEqual([])
  })

  test("a nested policy written by a command protects its folder from the next call on", async () => {
    await using box = await sandboxed({ "team/notes.txt": "team notes that are fine to read\n" })
    const nested = JSON.stringify({
      version: "1.0",
      rules: [{ pattern: "private", type: "directory", deniedOperations: ["read"] }],
    })
    // Tools may not write policy files (self-protection); a command the user types may.
    await box.run(
      `mkdir -p team/private && echo 'prodtoken99887766 in a new private folder' > team/private/x.txt && echo '${nested}' > team/.opencode-security.json`,
      { kernelOnly: true },
    )
    expect(fs.existsSync(box.dir.file("team/.opencode-security.json"))).toBe(true)
    // The agent's next command names the file in a way no static reading resolves: the kernel must hide it.
    const run = await box.run("cat $(printf team/priv)ate/x.txt")
    expect(run.allowed).toBe(true)
    expect(leaks(run.raw)).toEqual([])
    const read = await box.guard.before({ tool: "read", args: { filePath: "team/private/x.txt" } })
    expect(read.allowed).toBe(false)
  })
})

describe("git inside the sandbox", () => {
  test("git add -A cannot stage protected files; .git/hooks and .git/config are read-only", async () => {
    await using box = await sandboxed({ "src/more.ts": "export const more = 1\n" })
    fs.rmSync(box.dir.file(".git"), { recursive: true })
    git(box.dir.path, "init", "-q")
    git(box.dir.path, "add", "src", "README.md")
    git(box.dir.path, "commit", "-qm", "init")
    const run = await box.run(
      "git add -A 2>&1; git diff --cached --stat; echo 'cat .env' > .git/hooks/post-commit; git config core.fsmonitor 'cat .env' 2>&1",
    )
    expect(git(box.dir.path, "diff", "--cached", "--name-only")).not.toContain(".env")
    expect(git(box.dir.path, "diff", "--cached", "--name-only")).not.toContain("secrets")
    expect(fs.existsSync(box.dir.file(".git/hooks/post-commit"))).toBe(false)
    expect(fs.readFileSync(box.dir.file(".git/config"), "utf8")).not.toContain("fsmonitor")
    expect(leaks(run.raw)).toEqual([])
  }, 60_000)

  test("history that holds a protected file is not printed: the guard refuses, before anything runs", async () => {
    await using box = await sandboxed()
    fs.rmSync(box.dir.file(".git"), { recursive: true })
    git(box.dir.path, "init", "-q")
    git(box.dir.path, "add", "-f", "secrets/api.key", "README.md")
    git(box.dir.path, "commit", "-qm", "committed before the policy protected it")
    const direct = await box.run("git show HEAD:secrets/api.key")
    expect(direct.allowed).toBe(false)
    for (const command of ["git log -p", "git show HEAD", "git diff --cached HEAD~0", "git archive HEAD"]) {
      const run = await box.run(command)
      expect(run.allowed).toBe(false)
      expect(run.reason).toContain("git history")
    }
    // Commands that print no content from the history still run.
    for (const command of ["git log --oneline", "git status", "git show --stat HEAD"])
      expect((await box.run(command)).allowed).toBe(true)
  }, 60_000)
})

describe("git inside the sandbox: a tracked file with protected segments", () => {
  const SECRET_LINE = 'const pricing = "the confidential pricing algorithm"'
  /** Three versions of src/app.ts: without markers yet, with them, and an uncommitted edit outside the segment. */
  async function history() {
    const box = await sandboxed()
    fs.rmSync(box.dir.file(".git"), { recursive: true })
    git(box.dir.path, "init", "-q")
    fs.writeFileSync(box.dir.file("src/app.ts"), `export const first = 1\n${SECRET_LINE}\n`)
    git(box.dir.path, "add", "src/app.ts", "README.md")
    git(box.dir.path, "commit", "-qm", "before the segment was marked")
    fs.writeFileSync(box.dir.file("src/app.ts"), APP)
    git(box.dir.path, "commit", "-qam", "marked")
    fs.writeFileSync(box.dir.file("src/app.ts"), APP.replace("return 1", "return 2"))
    return box
  }

  test("every version is shown redacted: show, log -p, blame, cat-file and inflating .git/objects print none of it", async () => {
    await using box = await history()
    const run = await box.run(
      [
        "git show HEAD:src/app.ts HEAD~1:src/app.ts",
        "git log -p",
        "git blame src/app.ts",
        "git cat-file --batch-all-objects --batch",
        `python3 -c "import zlib,glob\nfor f in glob.glob('.git/objects/*/*'): print(zlib.decompress(open(f,'rb').read()))"`,
      ].join("; "),
    )
    expect(run.allowed).toBe(true)
    expect(leaks(run.raw)).toEqual([])
    // The versions are there, only their protected lines are not.
    expect(run.raw).toContain("export const first = 1")
    expect(run.raw).toContain("[REDACTED: protected segment]")
    expect(run.code).toBe(0)
  }, 60_000)

  test("honest git still works: diff shows the edit outside the segment, add and commit store the real file", async () => {
    await using box = await history()
    const diff = await box.run("git diff; git diff HEAD~1 -- src")
    expect(diff.code).toBe(0)
    expect(diff.raw).toContain("+  return 2")
    expect(leaks(diff.raw)).toEqual([])
    const commit = await box.run(
      "git add src/app.ts && git -c user.name=a -c user.email=a@b.c commit -qm two && git status --short src/app.ts",
    )
    expect(commit.code).toBe(0)
    expect(commit.raw.trim()).toBe("")
    // What was committed is the real file (read outside the sandbox), not the redacted copy.
    expect(git(box.dir.path, "show", "HEAD:src/app.ts")).toBe(fs.readFileSync(box.dir.file("src/app.ts"), "utf8"))
    expect(git(box.dir.path, "status", "--short")).not.toContain("src/app.ts")
  }, 60_000)

  test("git gc or repack inside cannot pack the redacted versions: the history on the host stays intact", async () => {
    await using box = await history()
    const before = git(box.dir.path, "show", "HEAD~1:src/app.ts")
    expect(before).toContain("the confidential pricing algorithm")
    const run = await box.run("git gc 2>&1; git repack -a -d 2>&1; git config --get gc.auto; echo done")
    expect(run.raw).toContain("done")
    expect(leaks(run.raw)).toEqual([])
    expect(git(box.dir.path, "show", "HEAD~1:src/app.ts")).toBe(before)
    expect(git(box.dir.path, "show", "HEAD:src/app.ts")).toBe(APP)
    expect(fs.readdirSync(box.dir.file(".git/objects/pack")).filter((f) => f.endsWith(".pack"))).toEqual([])
  }, 60_000)

  test("a commit naming the file takes the redacted copy, so it is refused with what to do instead", async () => {
    await using box = await history()
    const run = await box.run("git -c user.name=a -c user.email=a@b.c commit -qm two -- src/app.ts")
    expect(run.allowed).toBe(false)
    expect(run.reason).toContain("stage it with git add, then commit without paths")
    expect(git(box.dir.path, "log", "--oneline")).not.toContain("two")
  })

  test("stashing the file while it has unrecorded changes is refused; other paths can be stashed", async () => {
    await using box = await history()
    fs.writeFileSync(box.dir.file("README.md"), "# changed\n")
    const all = await box.run("git stash")
    expect(all.allowed).toBe(false)
    expect(all.reason).toContain("git stash push -- <paths>")
    const other = await box.run("git stash push -- README.md 2>&1")
    expect(other.code).toBe(0)
    expect(fs.readFileSync(box.dir.file("src/app.ts"), "utf8")).toContain("return 2")
  }, 60_000)

  test("versions in a packfile cannot be redacted one by one: history reads are refused, the log says why", async () => {
    await using box = await history()
    git(box.dir.path, "gc", "-q")
    const run = await box.run("git log -p")
    expect(run.allowed).toBe(false)
    expect(run.reason).toContain("git history")
    expect((await box.run("git log --oneline")).allowed).toBe(true)
  }, 60_000)
})

describe("ripgrep inside the sandbox", () => {
  test("rg from the root reads OpenCode's exclusions (shown read-only), so it skips protected paths and exits 0", async () => {
    await using dir = await project()
    const guard = await guardFor(dir.path, {}, { shell: "/bin/bash" })
    try {
      const run = await shell(
        guard,
        dir.path,
        "rg -n --hidden -e line -e secret -e export . ; echo rg=$?; echo x >> $RIPGREP_CONFIG_PATH 2>&1",
      )
      expect(leaks(run.raw)).toEqual([])
      expect(run.raw).not.toContain("Permission denied")
      expect(run.raw).toContain("rg=0")
      expect(run.raw).toContain("src/app.ts")
      // The exclusion file is read-only inside.
      expect(run.raw).toContain("Read-only file system")
    } finally {
      guard.close()
    }
  })
})

describe("when the sandbox cannot hold the command", () => {
  test("a shell that ignores the startup hook is noticed, and shell commands are refused from then on", async () => {
    await using box = await sandboxed()
    const run = await box.run("echo ran", { shell: "/bin/dash" })
    expect(run.output).toContain("ran outside the kernel sandbox")
    const next = await box.run("echo again")
    expect(next.allowed).toBe(false)
    expect(next.reason).toContain("ran outside the sandbox")
    expect(box.guard.status().sandbox.bypassed).toBeDefined()
  })

  test("a shell the sandbox cannot take over is refused with what to change", async () => {
    await using dir = await project()
    const guard = await guardFor(dir.path, {}, { shell: "/bin/dash", ripgrep: false })
    try {
      const verdict = await guard.before({ tool: "bash", args: { command: "ls" }, callID: "c1" })
      expect(verdict.allowed).toBe(false)
      if (!verdict.allowed) {
        expect(verdict.error.name).toBe("SecuritySandboxUnavailable")
        expect(verdict.reason).toContain("bash and zsh")
        expect(verdict.reason).toContain('"mode": "optional"')
      }
    } finally {
      guard.close()
    }
  })

  test('with "mode": "off" commands run unsandboxed and the static layer alone decides', async () => {
    await using box = await sandboxed({}, { ...POLICY, sandbox: { mode: "off" } })
    expect(box.guard.shellEnv({ callID: "x" })).toEqual({})
    expect((await box.run("cat secrets/api.key")).allowed).toBe(false)
    expect((await box.run("cat secrets/$X")).allowed).toBe(false)
  })

  test("a policy without rules or markers needs no sandbox", async () => {
    await using box = await sandboxed({}, { version: "1.0" })
    expect(box.guard.status().sandbox.mode).toBe("off")
    expect(box.guard.shellEnv({ callID: "x" })).toEqual({})
  })
})

describe("commands the user types (`!cmd`) run in the sandbox too", () => {
  test("shell.env with a call id the before hook never saw still gets the sandbox", async () => {
    await using box = await sandboxed()
    await box.run("true")
    const env = { ...process.env, ...box.guard.shellEnv({ callID: "user-shell-1" }) }
    const r = spawnSync("/bin/bash", ["-c", "cat .env secrets/api.key 2>&1"], {
      cwd: box.dir.path,
      env,
      encoding: "utf8",
    })
    expect(leaks(r.stdout)).toEqual([])
    expect(r.stdout).toContain("Permission denied")
  })
})

describe("zsh", () => {
  test("zsh enters the sandbox through ZDOTDIR and keeps the user's own ZDOTDIR inside", async () => {
    const zsh = ["/usr/bin/zsh", "/bin/zsh"].find((z) => fs.existsSync(z))
    // The README's install step installs zsh; a missing zsh is a failed precondition, not a pass.
    expect(zsh).toBeDefined()
    await using box = await sandboxed()
    const dir = await project({}, { ...POLICY })
    try {
      const guard = await guardFor(box.dir.path, {}, { shell: zsh!, ripgrep: false })
      try {
        const run = await shell(guard, box.dir.path, "cat \"$(ls -a | grep '^.env$')\" 2>&1; echo zdotdir=$ZDOTDIR", {
          shell: zsh,
          env: { ZDOTDIR: "/home/me/zdot" },
        })
        expect(leaks(run.raw)).toEqual([])
        expect(run.raw).toContain("Permission denied")
        expect(run.raw).toContain("zdotdir=/home/me/zdot")
        expect(run.output).not.toContain("outside the kernel sandbox")
      } finally {
        guard.close()
      }
    } finally {
      await dir[Symbol.asyncDispose]()
    }
  })
})

test("Sandbox.marker keeps call ids to file-name-safe characters", () => {
  expect(Sandbox.marker("call_1/../x")).toBe("call_1____x")
  expect(Sandbox.marker("")).toBe("_")
  expect(SECRET_FILE.length).toBeGreaterThan(0)
  expect(APP).toContain("@secure-start")
})

describe("file tools and running shell commands do not overlap", () => {
  // SyncProcess (the bubblewrap probe) leaves its child for the runtime to reap when its event loop next turns: a
  // bubblewrap that ended is not a sandbox still running, which would hold file tools and commands back.
  test("Sandbox.running leaves out a bubblewrap child that ended and is not yet reaped (a zombie)", () => {
    const bwrap = SecuritySearchPath.which("bwrap", process.env)
    if (!bwrap) throw new Error("bubblewrap is needed for this test (apt install bubblewrap)")
    const r = SyncProcess.run(bwrap, ["--bind", "/", "/", "--", "/bin/true"])
    expect(r.status).toBe(0)
    expect(fs.readFileSync(`/proc/${r.pid}/stat`, "utf8")).toMatch(/\) Z /)
    expect(Sandbox.running()).not.toContain(r.pid)
  })

  test("Sandbox.running lists this process's bubblewrap children while they run, and nothing after", async () => {
    // In its own process group, ended whole: bubblewrap forks, and its inner process outlived a plain kill.
    const child = Bun.spawn(["bwrap", "--die-with-parent", "--dev-bind", "/", "/", "--", "sleep", "5"], {
      stdout: "ignore",
      stderr: "ignore",
      detached: true,
    })
    const plain = Bun.spawn(["sleep", "5"], { stdout: "ignore", stderr: "ignore" })
    try {
      let seen = false
      for (let i = 0; i < 200 && !seen; i++) {
        seen = Sandbox.running().includes(child.pid)
        if (!seen) await Bun.sleep(10)
      }
      expect(seen).toBe(true)
      // A child that is not bubblewrap is not a sandbox.
      expect(Sandbox.running()).not.toContain(plain.pid)
    } finally {
      try {
        process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
      plain.kill()
      await Promise.all([child.exited, plain.exited])
    }
    expect(Sandbox.running()).not.toContain(child.pid)
    // A process that does not exist has none.
    expect(Sandbox.running(2 ** 22 + 1)).toEqual([])
  })

  test("a file tool waits for a running sandboxed command and is refused when it outlasts the wait; then it is allowed", async () => {
    await using dir = await project()
    const guard = await guardFor(dir.path, {}, { shell: "/bin/bash", ripgrep: false, shellRaceMs: 300 })
    try {
      const callID = "call_long"
      expect(
        (await guard.before({ tool: "bash", args: { command: "sleep 3", description: "x" }, callID })).allowed,
      ).toBe(true)
      const base = { ...process.env, HOME: path.join(dir.path, "home") }
      const env = { ...base, ...guard.shellEnv({ callID }, base) }
      const long = Bun.spawn(["/bin/bash", "-c", "sleep 3"], { cwd: dir.path, env, stdout: "ignore", stderr: "ignore" })
      try {
        const verdict = await guard.before({ tool: "read", args: { filePath: "src/util.ts" }, callID: "call_read" })
        expect(verdict.allowed ? "allowed" : verdict.reason).toContain("a shell command is still running after 0.3 s")
        // Its own error type: nothing is protected here, and the message does not say so.
        expect(!verdict.allowed && SecurityError.Busy.is(verdict.error)).toBe(true)
        expect(verdict.allowed ? "" : verdict.reason).not.toContain("Do not try to reach")
      } finally {
        long.kill()
        await long.exited
      }
      guard.after({ tool: "bash", args: { command: "sleep 3" }, callID }, "")
      expect(
        (await guard.before({ tool: "read", args: { filePath: "src/util.ts" }, callID: "call_read2" })).allowed,
      ).toBe(true)
    } finally {
      guard.close()
    }
  }, 60_000)

  test("a shell command waits until an allowed file tool's result is back", async () => {
    await using dir = await project()
    const guard = await guardFor(dir.path, {}, { shell: "/bin/bash", ripgrep: false })
    try {
      expect(
        (await guard.before({ tool: "write", args: { filePath: "src/new.ts", content: "x" }, callID: "w1" })).allowed,
      ).toBe(true)
      let settled = false
      const waiting = guard.settleFiles().then(() => (settled = true))
      await Bun.sleep(100)
      expect(settled).toBe(false)
      guard.after({ tool: "write", args: { filePath: "src/new.ts" }, callID: "w1" }, "Wrote file successfully.")
      await waiting
      expect(settled).toBe(true)
      // A refused file tool is not waited for.
      expect((await guard.before({ tool: "read", args: { filePath: ".env" }, callID: "r1" })).allowed).toBe(false)
      await guard.settleFiles()
    } finally {
      guard.close()
    }
  })
})
