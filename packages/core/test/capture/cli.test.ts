import { LocalSeal } from "../../learning/seal"
import { describe, expect, test } from "bun:test"
import fs from "fs"
import { run } from "../../capture/cli"
import { CaptureStore } from "../../capture/store"
import { memoryIO } from "../../util/cli"
import { tmpdir } from "../fixture"

async function project() {
  const dir = await tmpdir({ ".git/HEAD": "ref: refs/heads/main\n", "src/a.ts": "" })
  const store = CaptureStore.open(dir.path)
  store.append({
    callID: "call_ok",
    sessionID: "ses_1",
    tool: "read",
    status: "completed",
    title: "src/a.ts",
    args: '{"filePath":"src/a.ts"}',
    output: "1: export {}",
    startedAt: Date.UTC(2026, 10, 23, 12, 0, 0),
    at: Date.UTC(2026, 10, 23, 12, 0, 0, 40),
  })
  store.append({
    callID: "call_bad",
    sessionID: "ses_1",
    tool: "bash",
    status: "error",
    error: "exit code 2",
    at: Date.UTC(2026, 10, 23, 12, 0, 1),
  })
  return dir
}

describe("opencode-builtins capture", () => {
  test("list shows the newest first, --failed only failures, --json the records", async () => {
    await using dir = await project()
    const io = memoryIO(dir.file("src"))
    expect(await run(["list"], io)).toBe(0)
    expect(io.stdout.split("\n").filter(Boolean)).toEqual([
      "2026-11-23T12:00:01.000Z  FAILED  bash  call_bad  exit code 2",
      "2026-11-23T12:00:00.040Z  ok      read  call_ok  src/a.ts",
    ])
    const failed = memoryIO(dir.path)
    expect(await run(["list", "--failed", "--json"], failed)).toBe(0)
    expect(JSON.parse(failed.stdout).map((r: CaptureStore.Record) => r.callID)).toEqual(["call_bad"])
  })

  test("show prints one call; an unknown id is an error naming the way to find ids", async () => {
    await using dir = await project()
    const io = memoryIO(dir.path)
    expect(await run(["show", "call_ok"], io)).toBe(0)
    expect(io.stdout).toContain("read call_ok (completed)")
    expect(io.stdout).toContain("after 40 ms")
    expect(io.stdout).toContain('args: {"filePath":"src/a.ts"}')
    expect(io.stdout).toContain("output:\n1: export {}")
    const missing = memoryIO(dir.path)
    expect(await run(["show", "call_nope"], missing)).toBe(1)
    expect(missing.stderr).toContain("no captured call 'call_nope' (capture list shows the call ids)")
  })

  test("clear needs --yes; bad input is refused with usage", async () => {
    await using dir = await project()
    const refused = memoryIO(dir.path)
    expect(await run(["clear"], refused)).toBe(2)
    expect(CaptureStore.open(dir.path).list()).toHaveLength(2)
    const io = memoryIO(dir.path)
    expect(await run(["clear", "--yes"], io)).toBe(0)
    expect(io.stdout).toBe("Deleted 2 captured call(s).\n")
    expect(CaptureStore.open(dir.path).list()).toEqual([])
    const bad = memoryIO(dir.path)
    expect(await run(["list", "--limit", "0"], bad)).toBe(2)
    expect(bad.stderr).toContain("--limit must be a whole number")
    const unknown = memoryIO(dir.path)
    expect(await run(["frobnicate"], unknown)).toBe(2)
    expect(unknown.stderr).toContain("unknown command 'frobnicate'")
  })
  test("clear --yes with a stray argument (a call id) is bad usage and deletes nothing", async () => {
    await using dir = await project()
    for (const argv of [
      ["clear", "--yes", "call_ok"],
      ["clear", "call_ok", "--yes"],
      ["clear", "--yes", "--failed"],
    ]) {
      const io = memoryIO(dir.path)
      expect([argv, await run(argv, io)]).toEqual([argv, 2])
      expect(io.stdout).toBe("")
      expect(io.stderr).toStartWith("capture: ")
      expect(CaptureStore.open(dir.path).list()).toHaveLength(2)
    }
  })

  test("--limit that is not a whole number ≥ 1 (abc, -1, 1.5) is bad usage in one message form", async () => {
    await using dir = await project()
    for (const limit of ["abc", "-1", "1.5"]) {
      const io = memoryIO(dir.path)
      expect(await run(["list", "--limit", limit], io)).toBe(2)
      expect(io.stderr).toBe(`capture: --limit must be a whole number ≥ 1, got '${limit}'\n`)
    }
  })

  test("the store's limits come from the capture options, so every segment the feature wrote is read", async () => {
    await using dir = await tmpdir({
      ".opencode/opencode-builtins.json": JSON.stringify({ capture: { maxEntries: 80, segments: 8 } }),
    })
    const store = CaptureStore.open(dir.path, { maxEntries: 80, segments: 8 })
    for (let i = 0; i < 75; i++)
      store.append({ callID: `c${i}`, sessionID: "s", tool: "read", status: "completed", at: i })
    expect(fs.readdirSync(store.folder)).toHaveLength(8)
    const io = memoryIO(dir.path)
    expect(await run(["list", "--json", "--limit", "1000"], io)).toBe(0)
    expect(JSON.parse(io.stdout)).toHaveLength(store.all().length)
    expect(store.all().length).toBeGreaterThan(CaptureStore.DEFAULTS.segments * 10)
  })
})

describe("opencode-builtins capture: stored text is the tools'", () => {
  test("show and list write no terminal control sequence from a stored call; --json keeps the record exact", async () => {
    await using dir = await tmpdir({ ".git/HEAD": "ref: refs/heads/main\n" })
    const record = {
      callID: "call_esc",
      sessionID: "ses_1",
      tool: "bash",
      status: "completed" as const,
      title: "printf \x1b]0;PWNED-TITLE\x07",
      args: '{"command":"printf"}',
      output: "before\x1b]0;PWNED-TITLE\x07\x1b[2K\x1b]52;c;cm0gLXJmIH4=\x07\x9b1A\nafter\ttab\r\nend",
      at: Date.UTC(2026, 10, 23, 12, 0, 0),
    }
    CaptureStore.open(dir.path).append(record)
    const show = memoryIO(dir.path)
    expect(await run(["show", "call_esc"], show)).toBe(0)
    expect(show.stdout).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)/)
    expect(show.stdout).toContain("title: printf \\u001b]0;PWNED-TITLE\\u0007\n")
    expect(show.stdout).toContain(
      "output:\nbefore\\u001b]0;PWNED-TITLE\\u0007\\u001b[2K\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u009b1A\nafter\ttab\r\nend\n",
    )
    const list = memoryIO(dir.path)
    expect(await run(["list"], list)).toBe(0)
    expect(list.stdout).toBe("2026-11-23T12:00:00.000Z  ok      bash  call_esc  printf \\u001b]0;PWNED-TITLE\\u0007\n")
    const json = memoryIO(dir.path)
    expect(await run(["show", "call_esc", "--json"], json)).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({ output: record.output, title: record.title })
  })
})

describe("opencode-builtins capture: a stored time beyond the Date range (red team CD-4)", () => {
  const line = (callID: string, at: number, file?: string) => {
    const text = JSON.stringify({ v: 1, callID, sessionID: "s", tool: "read", status: "completed", at })
    return (file ? LocalSeal.seal(file, "capture", text) : text) + "\n"
  }

  test("CD-4c list and show: no RangeError stack trace; the record is skipped with a warning, the others listed", async () => {
    await using dir = await tmpdir({
      [".opencode/builtins-local/capture/captures.jsonl"]: line("call_ok", 1000) + line("call_far", 1e20),
    })
    // Sealed, as the built-ins write each record.
    const file = dir.file(".opencode/builtins-local/capture/captures.jsonl")
    fs.writeFileSync(file, line("call_ok", 1000, file) + line("call_far", 1e20, file))
    const list = memoryIO(dir.path)
    expect(await run(["list"], list)).toBe(0)
    expect(list.stdout).toContain("call_ok")
    expect(list.stdout).not.toContain("call_far")
    expect(list.stderr).toContain("captures.jsonl: line 2 skipped (at: ")
    const show = memoryIO(dir.path)
    expect(await run(["show", "call_far"], show)).toBe(1)
    expect(show.stderr).toContain("line 2 skipped (at: ")
    expect(show.stderr).toContain("no captured call 'call_far'")
    expect(show.stderr).not.toContain("    at ")
  })
})

describe("opencode-builtins capture clear: the lock", () => {
  test("a lock file planted as a link: clear refuses by name (exit 1), deletes nothing, no stack trace", async () => {
    await using p = await project()
    const store = CaptureStore.open(p.path)
    fs.symlinkSync("/nonexistent-target", `${store.file}.lock`)
    const io = memoryIO(p.path)
    expect(await run(["clear", "--yes"], io)).toBe(1)
    expect(io.stderr).toContain(`capture: ${store.file}.lock is a symbolic link`)
    expect(io.stderr).not.toContain("    at ")
    expect(store.all().length).toBeGreaterThan(0)
  })
})
