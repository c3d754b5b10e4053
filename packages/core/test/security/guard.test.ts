import { describe, expect, test } from "bun:test"
import { spawn } from "child_process"
import fs from "fs"
import net from "net"
import path from "path"
import { SecurityError } from "../../security/errors"
import { SecurityGuard } from "../../security/guard"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import { SECRET_FILE, guardFor, inBubblewrap, project } from "./fixture"

describe("SecurityGuard", () => {
  test("no policy: every function is a no-op", async () => {
    await using dir = await tmpdir({ "secrets/api.key": SECRET_FILE })
    const g = await guardFor(dir.path)
    try {
      expect(g.active()).toBe(false)
      expect((await g.before({ tool: "read", args: { filePath: "secrets/api.key" } })).allowed).toBe(true)
      expect(g.after({ tool: "bash", args: {} }, "AKIAIOSFODNN7EXAMPLE")).toBe("AKIAIOSFODNN7EXAMPLE")
      expect(await g.access("secrets/api.key", "read")).toBeUndefined()
      const messages = [{ info: { id: "a" }, parts: [{ type: "text", text: "AKIAIOSFODNN7EXAMPLE" }] }]
      expect(g.redactMessages(messages)).toBe(0)
      expect(g.mcpPolicy("x")).toBe("trusted")
      expect(g.audit).toBeUndefined()
    } finally {
      g.close()
    }
  })

  test("a policy file created later in a subdirectory is found by the folder lookup", async () => {
    await using dir = await tmpdir({ "sub/private/x.txt": "x" })
    const g = await guardFor(dir.path)
    try {
      expect((await g.before({ tool: "read", args: { filePath: "sub/private/x.txt" } })).allowed).toBe(true)
      fs.writeFileSync(
        path.join(dir.path, "sub/.opencode-security.json"),
        JSON.stringify({
          version: "1.0",
          rules: [{ pattern: "private", type: "directory", deniedOperations: ["read"] }],
        }),
      )
      expect((await g.before({ tool: "read", args: { filePath: "sub/private/x.txt" } })).allowed).toBe(false)
    } finally {
      g.close()
    }
  })

  test("the index: protected files, their inodes and fingerprints; status reports it", async () => {
    await using dir = await project()
    const g = await guardFor(dir.path)
    try {
      const s = g.status()
      expect(s.state).toBe("valid")
      expect(s.role).toBe("viewer")
      expect(s.index.files).toBeGreaterThanOrEqual(5)
      expect(s.index.fingerprintedBytes).toBeGreaterThan(0)
      expect(s.index.truncated).toBe(false)
    } finally {
      g.close()
    }
  })

  test("the index walk is bounded by maxIndexEntries and says so", async () => {
    await using dir = await project()
    const small = await guardFor(dir.path, {}, { maxIndexEntries: 3 })
    try {
      expect(small.status().index.truncated).toBe(true)
      expect(small.status().index.files).toBeLessThanOrEqual(3)
    } finally {
      small.close()
    }
  })

  test("the role comes from the environment; an unknown one falls back and is logged", async () => {
    await using dir = await project()
    const admin = await guardFor(dir.path, { OPENCODE_SECURITY_ROLE: "admin" })
    const log = Logger.memory()
    const bogus = await guardFor(dir.path, { OPENCODE_SECURITY_ROLE: "root" }, { log })
    try {
      expect(admin.role()).toBe("admin")
      expect((await admin.before({ tool: "read", args: { filePath: "secrets/api.key" } })).allowed).toBe(true)
      expect(bogus.role()).toBe("viewer")
      expect(log.entries.some((e) => e.message.includes("OPENCODE_SECURITY_ROLE=root"))).toBe(true)
    } finally {
      admin.close()
      bogus.close()
    }
  })

  test("access (Host.access): read also needs llm; denials are audited with their source", async () => {
    await using dir = await project()
    const g = await guardFor(dir.path)
    try {
      expect(await g.access("docs/private.md", "read")).toContain("sending to the model")
      expect(await g.access("docs/public.md", "read")).toBeUndefined()
      expect(await g.access("vendor/x.js", "write")).toContain("writing vendor/x.js")
      const audit = fs.readFileSync(path.join(dir.path, ".opencode-security-audit.log"), "utf8")
      expect(audit).toContain('"source":"builtin-tool"')
    } finally {
      g.close()
    }
  })

  test("after() redacts metadata-like values in place too (afterValue)", async () => {
    await using dir = await project()
    const g = await guardFor(dir.path)
    try {
      const value = {
        content: [{ type: "text", text: `x ${SECRET_FILE}` }],
        metadata: { preview: "AKIAIOSFODNN7EXAMPLE" },
      }
      expect(g.afterValue({ tool: "jira_get", args: {} }, value)).toBe(2)
      expect(JSON.stringify(value)).not.toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
      expect(JSON.stringify(value)).not.toContain("AKIAIOSFODNN7EXAMPLE")
    } finally {
      g.close()
    }
  })

  test("redactMessages replaces only the messages that change, leaving the originals untouched", async () => {
    await using dir = await project()
    const g = await guardFor(dir.path)
    try {
      const leaking = { info: { id: "a" }, parts: [{ type: "text", text: `see secrets/api.key: ${SECRET_FILE}` }] }
      const plain = { info: { id: "b" }, parts: [{ type: "text", text: "hello" }] }
      const list = [leaking, plain]
      expect(g.redactMessages(list)).toBe(1)
      expect(list[1]).toBe(plain)
      expect(list[0]).not.toBe(leaking)
      expect(leaking.parts[0].text).toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
      expect(JSON.stringify(list[0])).not.toContain("Zx81Qp0vLk27mNb5Yt3RwE9u")
      expect(JSON.stringify(list[0])).toContain("[REDACTED: protected path]")
    } finally {
      g.close()
    }
  })

  test("every folder OpenCode loads configuration and plugins from is protected: the levels between the directory and the worktree, and ~/.opencode", async () => {
    // OpenCode reads opencode.json(c) and .opencode/ in each folder from where it started up to the worktree (up to
    // `/` without git) and always ~/.opencode/: a plugin planted in any of them runs in OpenCode at its next start.
    await using dir = await project({ "a/b/x.txt": "x" })
    const home = path.join(dir.path, "home")
    const directory = path.join(dir.path, "a", "b")
    const g = await guardFor(
      directory,
      {},
      {
        worktree: dir.path,
        protect: SecurityGuard.hostProtected(directory, dir.path, { HOME: home }),
      },
    )
    try {
      for (const target of [
        "a/opencode.json",
        "a/opencode.jsonc",
        "a/tui.json",
        "a/.opencode/tui.jsonc",
        "a/.opencode/plugin/evil.ts",
        "a/.opencode/opencode.json",
        "a/b/.opencode/tools/t.ts",
        "opencode.json",
        "home/.opencode/plugin/evil.ts",
        "home/.opencode/opencode.jsonc",
        "home/.opencode/package.json",
      ])
        expect(await g.access(path.join(dir.path, target), "write")).toBeDefined()
      expect(await g.access(path.join(dir.path, "a/notes.md"), "write")).toBeUndefined()
    } finally {
      g.close()
    }
    const outside = SecurityGuard.hostProtected("/srv/work/proj", "/", { HOME: "/home/u" })
    for (const p of ["/srv/work/opencode.json", "/srv/.opencode/plugin/", "/opencode.jsonc", "/home/u/.opencode/tool/"])
      expect(outside).toContain(p)
    // The TUI of OpenCode 1.18 reads tui.json(c) up to `/` whatever the worktree.
    const inRepo = SecurityGuard.hostProtected("/srv/repo/app", "/srv/repo", { HOME: "/home/u" })
    for (const p of ["/srv/tui.json", "/tui.jsonc", "/srv/.opencode/tui.json"]) expect(inRepo).toContain(p)
    expect(inRepo).not.toContain("/srv/opencode.json")
  })

  test("OpenCode's data folder, its legacy TOML config and the package managers' config are protected; plans and worktrees stay writable", async () => {
    const env = {
      HOME: "/home/u",
      XDG_DATA_HOME: "/data",
      NPM_CONFIG_USERCONFIG: "/etc/u.npmrc",
      OPENCODE_DB: "/db/oc.db",
    }
    const list = SecurityGuard.hostProtected("/srv/repo", "/srv/repo", env)
    for (const p of [
      "/data/opencode/",
      "/db/oc.db",
      "/home/u/.config/opencode/config",
      "/home/u/.npmrc",
      "/home/u/.bunfig.toml",
      "/home/u/.config/.bunfig.toml",
      "/etc/u.npmrc",
    ])
      expect(list).toContain(p)
    expect(SecurityGuard.hostWritable(env)).toEqual(["/data/opencode/plans/"])
    for (const p of ["/db/oc.db-wal", "/db/oc.db-shm", "/srv/repo/.opencode/.npmrc", "/srv/repo/.opencode/bunfig.toml"])
      expect(list).toContain(p)
    // npm's project config when OpenCode installs into a config folder or its cache: the .npmrc of any folder above
    // (the project's own first); OpenCode's .gitignore in each config folder; the built-ins' grammar cache.
    for (const p of [
      "/srv/repo/.npmrc",
      "/srv/.npmrc",
      "/.npmrc",
      "/home/u/.cache/.npmrc",
      "/home/u/.cache/opencode/packages/.npmrc",
      "/srv/repo/.opencode/.gitignore",
      "/home/u/.config/opencode/.gitignore",
      "/home/u/.cache/opencode-builtins/",
      "/home/u/.local/state/opencode/",
      "/srv/repo/.opencode/.env",
      "/home/u/.config/opencode/.env.local",
    ])
      expect(list).toContain(p)
    // Through the guard: the data folder refuses writes, its openings take them.
    await using dir = await project({ "x.txt": "x" })
    const data = path.join(dir.path, "data")
    const local = { HOME: path.join(dir.path, "home"), XDG_DATA_HOME: data }
    const g = await guardFor(
      dir.path,
      {},
      {
        protect: SecurityGuard.hostProtected(dir.path, dir.path, local),
        writable: SecurityGuard.hostWritable(local),
      },
    )
    try {
      for (const target of [
        "opencode/auth.json",
        "opencode/snapshot/a/b/config",
        "opencode/opencode.db",
        "opencode/worktree/id/other/.opencode/plugin/x.ts",
      ])
        expect(await g.access(path.join(data, target), "write")).toBeDefined()
      expect(await g.access(path.join(data, "opencode/plans/p.md"), "write")).toBeUndefined()
    } finally {
      g.close()
    }
  })

  test("rootOf: the worktree when it holds the directory, never /", () => {
    expect(SecurityGuard.rootOf({ directory: "/tmp", worktree: "/" })).toBe(fs.realpathSync("/tmp"))
  })

  // Without git OpenCode's worktree is `/`, and it resolves a prompt's `@` mentions against it: `@tmp/…/secrets/x`
  // named the project's file while the check resolved it against the project (red-team helper, three binaries).
  test("a task prompt's mentions resolve against OpenCode's worktree, / for a project without git", async () => {
    await using dir = await project()
    const g = await guardFor(dir.path, {}, { worktree: "/" })
    try {
      const task = (prompt: string) =>
        g.before({ tool: "task", args: { subagent_type: "general", description: "d", prompt } })
      expect((await task(`Summarise @${dir.path.slice(1)}/secrets/api.key`)).allowed).toBe(false)
      expect((await task("Summarise @secrets/api.key")).allowed).toBe(false)
      expect((await task("Summarise @docs/public.md")).allowed).toBe(true)
    } finally {
      g.close()
    }
  })

  // A helper (a language server) outlives the calls that started it and file tools do not wait for it, so it may not
  // change any shared file: a planted server flipped a link between a file tool's check and OpenCode's read.
  test("a helper's sandbox is read-only, with its temporary and cache folders private, and no Unix sockets", async () => {
    await using dir = await project()
    const g = await guardFor(dir.path)
    try {
      const helper = await g.helper()
      if (!helper) throw new Error("no sandbox on this machine: bubblewrap is required for the tests")
      // A socket a command could have made in the project, listening on the host.
      const server = net.createServer(() => {}).listen(dir.file("s.sock"))
      await new Promise((resolve) => server.once("listening", resolve))
      await using _server = {
        [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
      }
      expect(helper.args).not.toContain("--bind")
      expect(helper.args.slice(-2)).toEqual(["--seccomp", String(SecurityGuard.SECCOMP_FD)])
      const script = [
        `touch ${dir.file("docs/planted.md")} 2>/dev/null && echo WROTE`,
        "echo tmp=$TMPDIR",
        "touch $TMPDIR/x && echo TMP-OK",
        // A Unix socket cannot be made (Bun reports the refused socket as ENOENT); a socket pair (a child's pipe) can.
        `${process.execPath} -e 'const s=require("net").connect(process.argv[1]);s.on("connect",()=>{console.log("UNIX connected");process.exit(0)});s.on("error",e=>console.log("UNIX",e.code))' ${dir.file("s.sock")}`,
      ].join("; ")
      const run = (args: string[], filter?: Uint8Array) =>
        inBubblewrap(helper.bwrap, ["--", "/bin/sh", "-c", script], {
          args,
          filter,
          env: { ...process.env, BUN_BE_BUN: "1" },
        })
      // The control, without the filter: the socket is reachable from the sandbox.
      expect((await run(helper.args.slice(0, -2))).out).toContain("UNIX connected")
      const { code, out } = await run(helper.args, helper.seccomp)
      expect(code).toBe(0)
      expect(out).not.toContain("WROTE")
      expect(out).toContain("tmp=/dev/shm")
      expect(out).toContain("TMP-OK")
      expect(out).toContain("UNIX E")
      expect(out).not.toContain("UNIX connected")
      expect(fs.existsSync(dir.file("docs/planted.md"))).toBe(false)
    } finally {
      g.close()
    }
  })

  // An AST search over thousands of files outlived the 3 s a file tool holds shell commands, and a command started
  // beside it swapped a link between its check of a file and its read (red-team helper, 1.18.33).
  test("a built-in tool's exclusive work holds shell commands until it ends, then refuses them past the limit", async () => {
    await using dir = await project()
    const g = await guardFor(dir.path, {}, { exclusiveMs: 200 })
    try {
      const order: string[] = []
      let release!: () => void
      const gate = new Promise<void>((resolve) => (release = resolve))
      const work = g.exclusive(async () => {
        order.push("tool starts")
        await gate
        order.push("tool ends")
        return 42
      })
      const shell = g.settleFiles().then(() => order.push("shell starts"))
      await Bun.sleep(20)
      release()
      expect(await work).toBe(42)
      await shell
      expect(order).toEqual(["tool starts", "tool ends", "shell starts"])
      // Past the limit the command is refused with a named error, and the tool's work is not disturbed.
      let done!: () => void
      const held = g.exclusive(() => new Promise<void>((resolve) => (done = resolve)))
      const refused = await g.settleFiles().then(
        () => undefined,
        (error) => error,
      )
      expect(SecurityError.ToolRunning.is(refused)).toBe(true)
      done()
      await held
      await g.settleFiles()
      // A permission prompt inside the work lets the hold go: a command may start while the user decides.
      await g.helper()
      let answer!: () => void
      const prompt = new Promise<void>((resolve) => (answer = resolve))
      const asking = g.exclusive(async (outside) => {
        await outside(() => prompt)
        return "written"
      })
      await Bun.sleep(20)
      await g.settleFiles()
      await g.settleShells()
      answer()
      expect(await asking).toBe("written")
      // A tool whose work throws releases the hold too.
      await expect(g.exclusive(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom")
      await g.settleFiles()
    } finally {
      g.close()
    }
  })

  test("shell commands wait for the sandboxed one running before them, then are refused past the limit", async () => {
    await using dir = await project()
    const g = await guardFor(dir.path, {}, { shellQueueMs: 300 })
    try {
      const helper = await g.helper()
      if (!helper) throw new Error("no sandbox on this machine: bubblewrap is required for the tests")
      // A sandbox of this process (as a shell command's is), running for a while, leaving a mark as it ends.
      const mark = dir.file("ended")
      const running = spawn(
        helper.bwrap,
        ["--bind", "/", "/", "--dev", "/dev", "--", "sh", "-c", `sleep 2; touch ${mark}`],
        {
          stdio: "ignore",
        },
      )
      await using _stop = { [Symbol.asyncDispose]: async () => void running.kill() }
      const refused = await g.settleShells().then(
        () => undefined,
        (error) => error,
      )
      expect(SecurityError.ShellRunning.is(refused)).toBe(true)
      const next = await guardFor(dir.path, {}, { shellQueueMs: 60_000 })
      try {
        await next.helper()
        await next.settleShells()
        // The next command starts only once the running one has ended.
        expect(fs.existsSync(mark)).toBe(true)
      } finally {
        next.close()
      }
    } finally {
      g.close()
    }
  }, 30_000)

  // The language server of one project's session (a helper) stayed a "running command" for the guard of the next
  // project in the same process, whose commands then waited for it (the suite's next red-team case timed out).
  test("a helper started by one guard is no command for another guard of the same process", async () => {
    await using a = await project()
    await using b = await project()
    const first = await guardFor(a.path)
    const second = await guardFor(b.path, {}, { shellQueueMs: 300 })
    try {
      const helper = (await first.helper())!
      // In its own process group, ended whole (bubblewrap forks; its inner process outlives a plain kill).
      const server = spawn(helper.bwrap, ["--ro-bind", "/", "/", "--dev", "/dev", "--", "sleep", "5"], {
        stdio: "ignore",
        detached: true,
      })
      await using _stop = {
        [Symbol.asyncDispose]: async () => {
          try {
            process.kill(-server.pid!, "SIGKILL")
          } catch {
            server.kill("SIGKILL")
          }
        },
      }
      helper.register!(server.pid!)
      await second.helper()
      await second.settleShells()
      await second.settleFiles()
      expect(server.exitCode).toBeNull()
    } finally {
      first.close()
      second.close()
    }
  })

  test("a command another guard of the same process just admitted is waited for, until its result comes back", async () => {
    await using a = await project()
    await using b = await project()
    const first = await guardFor(a.path)
    const second = await guardFor(b.path, {}, { shellQueueMs: 300 })
    try {
      await first.helper()
      await second.helper()
      await first.settleShells("call_first")
      const refused = await second.settleShells("call_second").then(
        () => undefined,
        (error) => error,
      )
      expect(SecurityError.ShellRunning.is(refused)).toBe(true)
      first.after({ tool: "bash", args: {}, callID: "call_first" }, "done")
      await second.settleShells("call_second")
      second.after({ tool: "bash", args: {}, callID: "call_second" }, "done")
    } finally {
      first.close()
      second.close()
    }
  })
})

describe("SecurityGuard.spellWithin", () => {
  test("a spelling of a name that is not UTF-8 always fits in 255 bytes and names nothing yet (red team AN1, AN2)", async () => {
    await using dir = await tmpdir({})
    expect(SecurityGuard.spellWithin(Buffer.from("caf\xe9", "latin1"), dir.path)).toBe("caf%E9")
    for (const name of [
      Buffer.concat([Buffer.from("x".repeat(254)), Buffer.from([0xff])]),
      Buffer.from("\xe2\x82".repeat(85), "latin1"),
      Buffer.from("\xff".repeat(255), "latin1"),
    ]) {
      const a = SecurityGuard.spellWithin(name, dir.path)
      expect(Buffer.byteLength(a)).toBeLessThanOrEqual(255)
      expect(/^[\x20-\x7e]+$/.test(a)).toBe(true)
      fs.writeFileSync(path.join(dir.path, a), "")
      // Taken, the next spelling of the same name is another.
      const b = SecurityGuard.spellWithin(name, dir.path)
      expect(b).not.toBe(a)
      expect(Buffer.byteLength(b)).toBeLessThanOrEqual(255)
    }
    // A spelling that fits but is taken gets the hashed form.
    fs.writeFileSync(path.join(dir.path, "d%FF"), "")
    expect(SecurityGuard.spellWithin(Buffer.from("d\xff", "latin1"), dir.path)).toMatch(/^d%FF~[0-9a-f]{16}$/)
  })
})
