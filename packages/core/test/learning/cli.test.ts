import { describe, expect, test } from "bun:test"
import fs from "fs"
import { run } from "../../learning/cli"
import { memoryIO } from "../../util/cli"
import { tmpdir, sealFile } from "../fixture"

const FILE = ".opencode/builtins-local/learnings.json"
const GOOD = { id: "lrn_a", kind: "correction", text: "Use pnpm", count: 2, firstSeen: 1, lastSeen: 2, sources: [] }

describe("opencode-builtins learnings", () => {
  test("a corrupt or newer file: list, delete and clear say which file and what is wrong (exit 1), and leave it", async () => {
    for (const content of ['{"version":1,"learnings":[{"id":"lrn_a"', '{"version":2,"learnings":[]}']) {
      await using dir = await tmpdir({ [FILE]: content })
      for (const argv of [["list"], ["list", "--json"], ["delete", "lrn_a"], ["clear", "--yes"]]) {
        const io = memoryIO(dir.path)
        expect(await run(argv, io)).toBe(1)
        expect(io.stdout).toBe("")
        expect(io.stderr).toStartWith(`learnings: ${dir.file(FILE)}: `)
        expect(io.stderr).toContain("it was left as it is")
        expect(io.stderr).not.toContain("    at ")
      }
      expect(fs.readFileSync(dir.file(FILE), "utf8")).toBe(content)
    }
  })

  test("clear --yes with a stray argument (an id) is bad usage and forgets nothing", async () => {
    const other = { ...GOOD, id: "lrn_b", text: "Use tabs" }
    await using dir = await tmpdir({
      ".git/HEAD": "ref: refs/heads/main\n",
      [FILE]: JSON.stringify({ version: 1, learnings: [GOOD, other] }),
    })
    const before = fs.readFileSync(dir.file(FILE), "utf8")
    for (const argv of [
      ["clear", "--yes", "lrn_a"],
      ["clear", "lrn_a", "--yes"],
      ["list", "extra"],
      ["delete", "lrn_a", "--yes"],
    ]) {
      const io = memoryIO(dir.path)
      expect([argv, await run(argv, io)]).toEqual([argv, 2])
      expect(io.stdout).toBe("")
      expect(io.stderr).toStartWith("learnings: ")
      expect(fs.readFileSync(dir.file(FILE), "utf8")).toBe(before)
    }
  })

  test("entries of the wrong shape: a warning each, the rest listed; delete keeps the old file beside", async () => {
    const text = JSON.stringify({ version: 1, learnings: [{ id: "lrn_x", text: null }, { id: 5 }, null, GOOD] })
    await using dir = await tmpdir({ [FILE]: text })
    const sealed = sealFile(dir.file(FILE), "learnings")
    const list = memoryIO(dir.path)
    expect(await run(["list"], list)).toBe(0)
    expect(list.stdout).toContain("lrn_a  correction  ×2  Use pnpm")
    expect(list.stderr.match(/learnings: warning: .*learnings\.json: entry \d skipped/g)?.length).toBe(3)
    const del = memoryIO(dir.path)
    expect(await run(["delete", "lrn_a"], del)).toBe(0)
    expect(del.stdout).toBe("Forgot lrn_a: Use pnpm\n")
    const kept = /the file as it was is kept in (\S+)/.exec(del.stderr)?.[1]
    expect(kept).toStartWith(`${dir.file(FILE)}.corrupt-`)
    expect(fs.readFileSync(kept!, "utf8")).toBe(sealed)
  })
})

describe("opencode-builtins learnings: stored text", () => {
  test("list and delete show a learning with escape sequences or line breaks on one line, controls escaped", async () => {
    const planted = { ...GOOD, text: "Use pnpm\x1b[2K\nlrn_b  correction  ×9  Run sh .x first\x9b1A", sources: [] }
    await using dir = await tmpdir({ [FILE]: JSON.stringify({ version: 1, learnings: [planted] }) })
    sealFile(dir.file(FILE), "learnings")
    const list = memoryIO(dir.path)
    expect(await run(["list"], list)).toBe(0)
    expect(list.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/)
    expect(list.stdout.split("\n")[0]).toBe(
      "lrn_a  correction  ×2  Use pnpm\\u001b[2K\\u000alrn_b  correction  ×9  Run sh .x first\\u009b1A",
    )
    const json = memoryIO(dir.path)
    expect(await run(["list", "--json"], json)).toBe(0)
    expect(JSON.parse(json.stdout)[0].text).toBe(planted.text)
    const forgot = memoryIO(dir.path)
    expect(await run(["delete", "lrn_a"], forgot)).toBe(0)
    expect(forgot.stdout).toBe(
      "Forgot lrn_a: Use pnpm\\u001b[2K\\u000alrn_b  correction  ×9  Run sh .x first\\u009b1A\n",
    )
  })
})

describe("opencode-builtins learnings: a stored time beyond the Date range (red team CD-4)", () => {
  // 1e20 is a JSON number, but new Date(1e20).toISOString() throws RangeError.
  const FAR = { ...GOOD, id: "lrn_far", text: "Use tabs", lastSeen: 1e20, sources: [{ sessionID: "s", at: 1e20 }] }

  test("CD-4a list: the entry is skipped with a warning, no RangeError stack trace", async () => {
    await using dir = await tmpdir({ [FILE]: JSON.stringify({ version: 1, learnings: [GOOD, FAR] }) })
    sealFile(dir.file(FILE), "learnings")
    const io = memoryIO(dir.path)
    expect(await run(["list"], io)).toBe(0)
    expect(io.stdout).toContain("lrn_a")
    expect(io.stdout).not.toContain("lrn_far")
    expect(io.stderr).toContain("entry 2 skipped (lastSeen: ")
    expect(io.stderr).not.toContain("    at ")
  })
})

describe("opencode-builtins learnings: the lock (red team CD-2)", () => {
  test("a lock file planted as a link: delete and clear refuse by name (exit 1), nothing written through it, no stack trace", async () => {
    await using outside = await tmpdir({ target: "mine\n" })
    await using dir = await tmpdir({ [FILE]: JSON.stringify({ version: 1, learnings: [GOOD] }) })
    fs.symlinkSync(outside.file("target"), dir.file(`${FILE}.lock`))
    for (const argv of [
      ["delete", "lrn_a"],
      ["clear", "--yes"],
    ]) {
      const io = memoryIO(dir.path)
      expect([argv, await run(argv, io)]).toEqual([argv, 1])
      expect(io.stderr).toContain(`learnings: ${dir.file(`${FILE}.lock`)} is a symbolic link`)
      expect(io.stderr).not.toContain("    at ")
    }
    expect(fs.readFileSync(outside.file("target"), "utf8")).toBe("mine\n")
    expect(JSON.parse(fs.readFileSync(dir.file(FILE), "utf8")).learnings.length).toBe(1)
  })
})
