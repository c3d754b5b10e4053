import { describe, expect, test } from "bun:test"
import fs from "fs"
import { continuation, run, within } from "../../recovery/cli"
import { RecoveryStore } from "../../recovery/store"
import { memoryIO } from "../../util/cli"
import { tmpdir } from "../fixture"
import { beat } from "./beat"
import { bunSpawnSync } from "../spawn-sync"

/** A heartbeat whose owner pid does not exist on this machine. */
const dead = (sessionID = "ses_dead", directory = "/repo") =>
  beat({ sessionID, directory, workdir: directory, owner: { ...beat().owner, pid: 2 ** 22 + 11 } })

describe("opencode-builtins recovery", () => {
  test("list: nothing, then the interrupted session (text and JSON); a live owner's session is left out", async () => {
    await using dir = await tmpdir()
    const io = memoryIO(dir.path)
    expect(await run(["list"], io)).toBe(0)
    expect(io.stdout).toBe("No interrupted sessions in this project.\n")
    const folder = RecoveryStore.folder(dir.path)
    RecoveryStore.write(folder, dead())
    RecoveryStore.write(folder, beat({ sessionID: "ses_live" }))
    const text = memoryIO(dir.path)
    expect(await run(["list"], text)).toBe(0)
    expect(text.stdout).toContain("ses_dead interrupted")
    expect(text.stdout).toContain("during bash (sleep 30)")
    expect(text.stdout).not.toContain("ses_live")
    const json = memoryIO(dir.path)
    expect(await run(["list", "--json"], json)).toBe(0)
    expect(JSON.parse(json.stdout).map((x: any) => [x.sessionID, x.reason])).toEqual([["ses_dead", "owner-dead"]])
  })

  test("list reports unreadable heartbeats on stderr and goes on", async () => {
    await using dir = await tmpdir({ ".opencode/builtins-local/recovery/ses_x.json": "{" })
    const io = memoryIO(dir.path)
    expect(await run(["list"], io)).toBe(0)
    expect(io.stderr).toContain("skipping heartbeat")
    expect(io.stderr).toContain("ses_x.json: not JSON")
  })

  test("resume/dismiss refuse an unknown session or a live owner before reaching any server", async () => {
    await using dir = await tmpdir()
    RecoveryStore.write(RecoveryStore.folder(dir.path), beat({ sessionID: "ses_live" }))
    const unknown = memoryIO(dir.path)
    expect(await run(["resume", "ses_nope", "--server", "http://127.0.0.1:9"], unknown)).toBe(1)
    expect(unknown.stderr).toContain("no heartbeat of session 'ses_nope'")
    const live = memoryIO(dir.path)
    expect(await run(["dismiss", "ses_live", "--server", "http://127.0.0.1:9"], live)).toBe(1)
    expect(live.stderr).toContain(`still owned by a live OpenCode process (pid ${process.pid})`)
  })

  test("a server that cannot be reached: a clear failure, the heartbeat kept for a retry", async () => {
    await using dir = await tmpdir()
    const folder = RecoveryStore.folder(dir.path)
    RecoveryStore.write(folder, dead("ses_dead", dir.path))
    const io = memoryIO(dir.path)
    expect(await run(["resume", "ses_dead", "--server", "http://127.0.0.1:9"], io)).toBe(1)
    expect(io.stderr).toContain("recovery: resume ses_dead failed:")
    expect(io.stderr).toContain("the heartbeat is kept; retry is safe")
    expect(RecoveryStore.exists(folder, "ses_dead")).toBe(true)
  })

  test("X14: a session the server says no longer exists: dismiss is done, resume is not possible; the heartbeat removed", async () => {
    // Stock OpenCode's answer for a deleted session (1.2.15 and 1.18.33, GET /session/<id>).
    using server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) =>
        Response.json(
          {
            name: "NotFoundError",
            data: { message: `Session not found: ${new URL(request.url).pathname.split("/")[2]}` },
          },
          { status: 404 },
        ),
    })
    await using dir = await tmpdir()
    const folder = RecoveryStore.folder(dir.path)
    for (const [command, code] of [
      ["dismiss", 0],
      ["resume", 1],
    ] as const) {
      RecoveryStore.write(folder, dead("ses_dead", dir.path))
      const io = memoryIO(dir.path)
      expect(await run([command, "ses_dead", "--server", server.url.href], io)).toBe(code)
      expect(io.stderr).toContain("session 'ses_dead' no longer exists in OpenCode (it was deleted)")
      expect(io.stderr).not.toContain("retry is safe")
      expect(RecoveryStore.exists(folder, "ses_dead")).toBe(false)
    }
  })

  test("X14: a 404 of another kind (not OpenCode's answer for this session) is not final: the heartbeat kept", async () => {
    using server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) =>
        new URL(request.url).pathname === "/session/ses_dead"
          ? new Response("<html>404 Not Found</html>", { status: 404 })
          : Response.json(
              { name: "NotFoundError", data: { message: "Session not found: ses_other" } },
              { status: 404 },
            ),
    })
    await using dir = await tmpdir()
    const folder = RecoveryStore.folder(dir.path)
    RecoveryStore.write(folder, dead("ses_dead", dir.path))
    const io = memoryIO(dir.path)
    expect(await run(["dismiss", "ses_dead", "--server", server.url.href], io)).toBe(1)
    expect(io.stderr).toContain("the heartbeat is kept; retry is safe")
    expect(RecoveryStore.exists(folder, "ses_dead")).toBe(true)
  })

  test("an opencode that cannot be started is named, with the options that avoid it", async () => {
    await using dir = await tmpdir()
    RecoveryStore.write(RecoveryStore.folder(dir.path), dead("ses_dead", dir.path))
    const io = memoryIO(dir.path)
    expect(await run(["dismiss", "ses_dead", "--opencode", `${dir.path}/no-such-opencode`], io)).toBe(1)
    expect(io.stderr).toContain("pass --opencode <bin> or --server <url>")
  })

  test("GH1: a heartbeat naming a folder outside its project is refused, naming both; no OpenCode is started or asked", async () => {
    await using dir = await tmpdir()
    await using other = await tmpdir()
    const folder = RecoveryStore.folder(dir.path)
    const marker = dir.file("started")
    fs.writeFileSync(dir.file("opencode"), `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 })
    let asked = 0
    using server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (asked++, Response.json({})) })
    for (const directory of [other.path, `${dir.path}/../${other.path.split("/").pop()}`, "relative/dir"]) {
      RecoveryStore.write(folder, dead("ses_dead", directory))
      for (const how of [
        ["--opencode", dir.file("opencode")],
        ["--server", server.url.href],
      ]) {
        const io = memoryIO(dir.path)
        expect(await run(["resume", "ses_dead", ...how], io)).toBe(1)
        expect(io.stderr).toContain(`names ${directory} as its folder, which is not the project ${dir.path}`)
      }
    }
    expect(fs.existsSync(marker)).toBe(false)
    expect(asked).toBe(0)
    expect(within(dir.path, dir.file("src"))).toBe(true)
  })

  test("usage errors exit 2 with the usage", async () => {
    await using dir = await tmpdir()
    for (const argv of [
      [],
      ["resume"],
      ["frobnicate"],
      ["list", "x"],
      ["resume", "a", "--server", "u", "--opencode", "o"],
      ["list", "--nope"],
    ]) {
      const io = memoryIO(dir.path)
      expect(await run(argv, io)).toBe(2)
      expect(io.stderr).toContain("usage:")
    }
    const help = memoryIO(dir.path)
    expect(await run(["--help"], help)).toBe(0)
    expect(help.stdout).toContain("opencode-builtins recovery resume <session-id>")
  })
})

describe("opencode-builtins recovery: heartbeat text is the agent's", () => {
  /** A stand-in for `opencode serve`: a session with no message and no todo; appending the note succeeds. */
  function server() {
    const s = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(request) {
        const route = new URL(request.url).pathname
        if (request.method === "POST") return Response.json({ info: { id: "msg_note" } })
        if (route.endsWith("/message") || route.endsWith("/todo")) return Response.json([])
        return Response.json({ id: "ses_dead" })
      },
    })
    return { url: `http://127.0.0.1:${s.port}`, [Symbol.dispose]: () => s.stop(true) }
  }

  /** The `cd … && opencode --session …` line of the output, as the user pastes it, run by bash with `pwd` instead. */
  function paste(stdout: string, cwd: string) {
    const line = /^ {2}(cd .*)$/m.exec(stdout)?.[1]
    expect(line).toBeDefined()
    const run = bunSpawnSync(["bash", "-c", line!.replace(/ && opencode --session \S+$/, " && pwd")], { cwd })
    return { line: line!, code: run.exitCode, cwd: run.stdout.toString().trim() }
  }

  test(
    "resume: the line to paste goes to the session's folder; a working directory named $(sh .x) is only named; pasting runs nothing",
    async () => {
      await using dir = await tmpdir()
      const marker = dir.file("PWNED")
      fs.writeFileSync(dir.file(".x"), `touch '${marker}'\n`)
      const workdir = dir.file("$(sh .x)")
      fs.mkdirSync(workdir)
      RecoveryStore.write(
        RecoveryStore.folder(dir.path),
        beat({ sessionID: "ses_dead", owner: { ...beat().owner, pid: 2 ** 22 + 11 }, directory: dir.path, workdir }),
      )
      using api = server()
      const io = memoryIO(dir.path)
      expect(await run(["resume", "ses_dead", "--server", api.url], io)).toBe(0)
      // The session's folder to continue in (not the last command's: `opencode run --session` started there hung);
      // the working directory is named as text on its own line.
      expect(io.stdout).toContain(
        `The interrupted command ran in ${workdir}\nContinue with:\n  cd ${dir.path} && opencode --session ses_dead\n`,
      )
      const pasted = paste(io.stdout, "/")
      expect(pasted.code).toBe(0)
      expect(pasted.cwd).toBe(fs.realpathSync(dir.path))
      expect(fs.existsSync(marker)).toBe(false)
    },
    { timeout: 30_000 },
  )

  test("continuation: quotes and backquotes stay text; a folder with a line break or escape is never put in the line", async () => {
    await using dir = await tmpdir()
    const marker = dir.file("PWNED")
    for (const name of ["it's `touch PWNED`", 'a\\b $HOME "$(touch PWNED)" ;|&<>*?']) {
      const directory = dir.file(name)
      fs.mkdirSync(directory)
      const pasted = paste(continuation({ workdir: directory, directory }, "ses_1"), dir.path)
      // Not realpathSync(workdir): Bun's cannot resolve a name holding a backslash.
      expect(pasted).toMatchObject({ code: 0, cwd: `${fs.realpathSync(dir.path)}/${name}` })
    }
    expect(fs.existsSync(marker)).toBe(false)
    // A line break would end the command early in the paste; ESC would reach the terminal.
    const workdir = dir.file("x\n\x1b[2Ktouch PWNED\n")
    fs.mkdirSync(workdir)
    const text = continuation({ workdir, directory: dir.path }, "ses_1")
    expect(text).toBe(
      `The interrupted command ran in ${dir.path}/x\\u000a\\u001b[2Ktouch PWNED\\u000a\n` +
        `Continue with:\n  cd ${dir.path} && opencode --session ses_1\n`,
    )
    expect(paste(text, "/")).toMatchObject({ code: 0, cwd: fs.realpathSync(dir.path) })
    expect(fs.existsSync(marker)).toBe(false)
    // The session's folder itself unusable: the command alone, the folder shown escaped.
    expect(continuation({ workdir, directory: workdir }, "ses_1")).toBe(
      `The session's folder name holds control characters (shown escaped): ${dir.path}/x\\u000a\\u001b[2Ktouch PWNED\\u000a\n` +
        "Continue with:\n  opencode --session ses_1\n",
    )
  })

  test("list: a title, command or folder with escape sequences and line breaks is one line, the controls shown escaped", async () => {
    await using dir = await tmpdir()
    RecoveryStore.write(
      RecoveryStore.folder(dir.path),
      beat({
        sessionID: "ses_dead",
        owner: { ...beat().owner, pid: 2 ** 22 + 11 },
        title: "t\x1b]0;TITLE\x07",
        workdir: "/repo/a\nses_fake interrupted\x1b[2K",
        running: [{ callID: "c", tool: "bash", title: "echo \x9b2J", started: 1 }],
      }),
    )
    const io = memoryIO(dir.path)
    expect(await run(["list"], io)).toBe(0)
    expect(io.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/)
    expect(io.stdout).toContain(`"t\\u001b]0;TITLE\\u0007"`)
    expect(io.stdout).toContain("during bash (echo \\u009b2J)")
    expect(io.stdout).toContain("    directory /repo/a\\u000ases_fake interrupted\\u001b[2K\n")
    expect(io.stdout.split("\n").filter((l) => l.includes("interrupted"))).toHaveLength(2)
  })
})
