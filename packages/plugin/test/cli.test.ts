import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { memoryIO } from "@opencode-builtins/core/util/cli"
import { main } from "../cli"
import { notUtf8Project, tmpdir } from "../../core/test/fixture"

describe("opencode-builtins", () => {
  test("usage without a command (exit 2), with --help (exit 0), unknown commands named (exit 2)", async () => {
    const none = memoryIO("/")
    expect(await main([], none)).toBe(2)
    // Bad usage: the usage goes to stderr, as every command writes it.
    expect(none.stdout).toBe("")
    expect(none.stderr).toContain("usage: opencode-builtins <command>")
    expect(await main(["--help"], memoryIO("/"))).toBe(0)
    const unknown = memoryIO("/")
    expect(await main(["frobnicate"], unknown)).toBe(2)
    expect(unknown.stderr).toContain("unknown command 'frobnicate'")
  })

  test("--version and --help with a stray argument are bad usage (exit 2), as every command's", async () => {
    for (const argv of [
      ["--version", "extra"],
      ["--help", "extra"],
      ["-v", "x"],
      ["help", "x"],
    ]) {
      const io = memoryIO("/")
      expect([argv, await main(argv, io)]).toEqual([argv, 2])
      expect(io.stdout).toBe("")
      expect(io.stderr).toContain(`opencode-builtins: ${argv[0]} takes no arguments (got '${argv[1]}')`)
    }
  })

  test("--version (and -v, version) prints the package's version, exit 0", async () => {
    const { version } = JSON.parse(await fs.readFile(path.resolve(import.meta.dir, "../package.json"), "utf8"))
    for (const flag of ["--version", "-v", "version"]) {
      const io = memoryIO("/")
      expect(await main([flag], io)).toBe(0)
      expect(io.stdout).toBe(`opencode-builtins ${version}\n`)
    }
    // Through the installed launcher, as a user filing a bug runs it.
    const bin = path.resolve(import.meta.dir, "../bin/opencode-builtins.mjs")
    const proc = Bun.spawn(["node", bin, "--version"], { stdout: "pipe", stderr: "pipe" })
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    expect({ out, code }).toEqual({ out: `opencode-builtins ${version}\n`, code: 0 })
  })

  test("the installed launcher runs under Node.js and passes the exit code through", async () => {
    await using dir = await tmpdir({ ".opencode/task/a.md": "---\nreferences: [ghost]\n---\n" })
    const bin = path.resolve(import.meta.dir, "../bin/opencode-builtins.mjs")
    const proc = Bun.spawn(["node", bin, "resources", "lint", dir.path], { stdout: "pipe", stderr: "pipe" })
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    expect(out).toContain("dangling-reference")
    expect(code).toBe(1)
  })

  test("Ctrl-C through the launcher ends it as killed by SIGINT, never with exit 0", async () => {
    // The child stands for a command that waits (a slow `security check`): it says it is ready, then sleeps.
    await using dir = await tmpdir({ "fake-bun": "#!/bin/sh\necho ready\nexec sleep 60\n" })
    await fs.chmod(dir.file("fake-bun"), 0o755)
    const bin = path.resolve(import.meta.dir, "../bin/opencode-builtins.mjs")
    const proc = Bun.spawn(["node", bin, "security", "check", "x"], {
      env: { ...process.env, BUN_BIN: dir.file("fake-bun") },
      stdout: "pipe",
      stderr: "pipe",
    })
    const reader = proc.stdout.getReader()
    let seen = ""
    while (!seen.includes("ready")) {
      const chunk = await reader.read()
      if (chunk.done) break
      seen += new TextDecoder().decode(chunk.value)
    }
    expect(seen).toContain("ready")
    proc.kill("SIGINT")
    const code = await proc.exited
    // Killed by the signal (as `bun cli.ts` is), or 130 where a runtime cannot re-raise it.
    expect(proc.signalCode === "SIGINT" || code === 130).toBe(true)
    expect(code).not.toBe(0)
  }, 60_000)

  test("mcp, a real command, through the launcher: Ctrl-C closes the server, then ends it as killed by SIGINT", async () => {
    await using dir = await tmpdir({ ".git/HEAD": "ref: refs/heads/main\n" })
    const bin = path.resolve(import.meta.dir, "../bin/opencode-builtins.mjs")
    const proc = Bun.spawn(["node", bin, "mcp"], { cwd: dir.path, stdin: "pipe", stdout: "pipe", stderr: "pipe" })
    // Ready when the server says it serves (its log is on stderr); then Ctrl-C.
    const reader = proc.stderr.getReader()
    let log = ""
    while (!log.includes("over stdio")) {
      const chunk = await reader.read()
      if (chunk.done) break
      log += new TextDecoder().decode(chunk.value)
    }
    expect(log).toContain(`serving ${dir.path} over stdio`)
    proc.kill("SIGINT")
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      log += new TextDecoder().decode(chunk.value)
    const code = await proc.exited
    // Closed gracefully first, then killed by the signal, as `bun cli.ts` and every other command end.
    expect(log).toContain("closed on SIGINT")
    expect(proc.signalCode === "SIGINT" || code === 130).toBe(true)
    expect(code).not.toBe(0)
  }, 60_000)

  test("mcp run directly (bun cli.ts mcp): SIGTERM closes the server and ends it as killed by SIGTERM", async () => {
    await using dir = await tmpdir({ ".git/HEAD": "ref: refs/heads/main\n" })
    const cli = path.resolve(import.meta.dir, "../cli.ts")
    const proc = Bun.spawn([process.execPath, cli, "mcp"], {
      cwd: dir.path,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    })
    const reader = proc.stderr.getReader()
    let log = ""
    while (!log.includes("over stdio")) {
      const chunk = await reader.read()
      if (chunk.done) break
      log += new TextDecoder().decode(chunk.value)
    }
    proc.kill("SIGTERM")
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      log += new TextDecoder().decode(chunk.value)
    await proc.exited
    expect(log).toContain("closed on SIGTERM")
    expect(proc.signalCode).toBe("SIGTERM")
  }, 60_000)

  test("output piped into a reader that exits (| head -c 10) ends the command quietly (141), no EPIPE trace", async () => {
    // 1,500 problems make far more output than a pipe holds, so the writer is still writing when head has gone.
    const files: Record<string, string> = {}
    for (let i = 0; i < 1500; i++)
      files[`.opencode/task/t${i}.md`] = `---\nreferences: [ghost-${i}-${"a".repeat(60)}]\n---\n`
    await using dir = await tmpdir(files)
    const cli = path.resolve(import.meta.dir, "../cli.ts")
    const script = `"$0" "$1" resources lint "$2" 2>"$2/err.txt" | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`
    const proc = Bun.spawn(["bash", "-c", script, process.execPath, cli, dir.path], { stdout: "pipe", stderr: "pipe" })
    const [out] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    expect(await Bun.file(dir.file("err.txt")).text()).toBe("")
    // 141 when the closed pipe is met while writing (nearly always). On a loaded machine Bun may hold the rest in its
    // own buffer past the command's end, and finishes that write with no error at all (seen once in a full run; a
    // 300 KB write to `| head -c 5` reports success), so the command's own status (1: lint findings) comes back.
    expect(["141", "1"]).toContain(out.trim())
  }, 30_000)

  // AQ1, as a user meets it: in a folder named with a Latin-1 byte, `discover` made the U+FFFD reading of its path (a
  // twin folder beside it) for its cache, and `security check .env --op read` then answered ALLOWED (no policy).
  test("in a folder whose name is not UTF-8: discover makes nothing beside it, security check refuses (exit 2)", async () => {
    await using dir = await tmpdir()
    const project = notUtf8Project(dir.path, {
      ".git/HEAD": "ref: refs/heads/main\n",
      ".env": "S=1\n",
      ".opencode-security.json": JSON.stringify({
        version: "1.0",
        rules: [{ pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
      }),
    })
    const cli = path.resolve(import.meta.dir, "../cli.ts")
    // A shell enters the folder by its bytes (Bun passes arguments as UTF-8, so printf makes the byte); Bun's
    // process.cwd() there is the U+FFFD reading.
    const script =
      'cd "$1/$(printf "caf\\351")" || exit 9; "$2" "$3" discover hello; echo "discover=$?"; ' +
      'exec "$2" "$3" security check .env --op read'
    const proc = Bun.spawn(["sh", "-c", script, "sh", dir.path, process.execPath, cli], {
      stdout: "pipe",
      stderr: "pipe",
    })
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    expect(out).toBe("discover=2\n")
    expect(code).toBe(2)
    expect(err).toContain("security check: --dir: ")
    expect(err).toContain("is not valid UTF-8 text")
    expect(project.entries()).toEqual([Buffer.from("caf\xe9", "latin1")])
  }, 30_000)
})
