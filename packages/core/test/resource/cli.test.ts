import { describe, expect, test } from "bun:test"
import { run } from "../../resource/cli"
import { memoryIO } from "../../util/cli"
import { md, tmpdir } from "../fixture"

const CLEAN = {
  ".opencode/task/ship.md": md({ title: "Ship", tags: ["release"], references: ["check"] }),
  ".opencode/checklist/check.md": md({ title: "Check", tags: ["release", "qa"] }),
}

describe("opencode-builtins resources lint", () => {
  test("a clean project exits 0 and summarises by type", async () => {
    await using dir = await tmpdir(CLEAN)
    const io = memoryIO(dir.path)
    expect(await run(["lint"], io)).toBe(0)
    expect(io.stdout).toContain("2 resource(s)")
    expect(io.stdout).toContain("1 checklist, 1 task")
    expect(io.stdout).toContain("0 error(s), 0 warning(s)")
  })

  test("every problem class is reported, errors first, and the exit code is 1", async () => {
    await using dir = await tmpdir({
      ...CLEAN,
      ".opencode/task/broken.md": "---\ntitle: [oops\n---\n",
      ".opencode/task/dup/ship.md": md({ title: "Dup" }),
      ".opencode/task/dangling.md": md({ references: ["nowhere"] }),
      ".opencode/task/huge.md": "h".repeat(1024 * 1024 + 10),
      ".opencode/task/empty.md": "",
      ".opencode/schema/bad.json": "{",
    })
    const io = memoryIO(dir.path)
    expect(await run(["lint", dir.path], io)).toBe(1)
    for (const code of [
      "malformed-frontmatter",
      "duplicate-id",
      "dangling-reference",
      "oversize",
      "invalid-json",
      "empty-file",
    ])
      expect(io.stdout).toContain(code)
    expect(io.stdout.indexOf("error ")).toBeLessThan(io.stdout.indexOf("warn "))
    expect(io.stdout).toContain("5 error(s), 1 warning(s)")
  })

  test("--json prints the whole report", async () => {
    await using dir = await tmpdir({ ...CLEAN, ".opencode/task/x.md": md({ references: ["ghost"] }) })
    const io = memoryIO(dir.path)
    expect(await run(["lint", ".", "--json"], io)).toBe(1)
    const report = JSON.parse(io.stdout)
    expect(report).toMatchObject({ resources: 3, errors: 1, warnings: 0, ok: false })
    expect(report.problems[0]).toMatchObject({ code: "dangling-reference", id: "x", path: ".opencode/task/x.md" })
  })

  test("bad usage exits 2 with a message", async () => {
    await using dir = await tmpdir()
    const io = memoryIO(dir.path)
    expect(await run(["lint", "missing-dir"], io)).toBe(2)
    expect(io.stderr).toContain("is not a directory")
    expect(await run(["lint", "a", "b"], memoryIO(dir.path))).toBe(2)
    const flag = memoryIO(dir.path)
    expect(await run(["lint", "--nope"], flag)).toBe(2)
    expect(flag.stderr).toContain("--nope")
    expect(await run(["frobnicate"], memoryIO(dir.path))).toBe(2)
    expect(await run([], memoryIO(dir.path))).toBe(2)
    expect(await run(["--help"], memoryIO(dir.path))).toBe(0)
  })
})

describe("opencode-builtins resources query", () => {
  test("words and filters as the tool has them, text or --json", async () => {
    await using dir = await tmpdir(CLEAN)
    const io = memoryIO(dir.path)
    expect(await run(["query", "release", "--type", "checklist", "--tag", "qa"], io)).toBe(0)
    expect(io.stdout).toContain("check  [checklist/common]  Check")
    expect(io.stdout).toContain("1 of 1 shown")
    const json = memoryIO(dir.path)
    expect(await run(["query", "--dir", dir.path, "--limit", "1", "--json"], json)).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({ total: 2, showing: 1 })
  })

  test("invalid filter values are usage errors naming the option", async () => {
    await using dir = await tmpdir(CLEAN)
    for (const [args, option] of [
      [["--type", "nope"], "--type"],
      [["--domain", "moon"], "--domain"],
      [["--limit", "0"], "--limit"],
      [["--limit", "abc"], "--limit"],
    ] as const) {
      const io = memoryIO(dir.path)
      expect(await run(["query", ...args], io)).toBe(2)
      expect(io.stderr).toContain(option)
    }
  })
})
