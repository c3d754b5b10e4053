import { describe, expect, test } from "bun:test"
import fs from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { collect, counts, order, parseArgs } from "../../scripts/test"
import { pick, rotation } from "../e2e/targets"
import { spawnSync } from "../../packages/core/test/spawn-sync"

const ROOT = path.resolve(import.meta.dir, "../..")

/** `bun scripts/test.ts <args>` from the repository, waited for (at most two minutes). */
const runner = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, "scripts/test.ts"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  })

async function tree(files: Record<string, string>) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "ocb-runner-"))
  for (const [rel, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true })
    await fs.writeFile(path.join(dir, rel), text)
  }
  return { dir, [Symbol.asyncDispose]: () => fs.rm(dir, { recursive: true, force: true }) }
}

describe("the test runner's command line", () => {
  test("defaults: both folders, jobs from TEST_JOBS or the cores, rotating targets, a 30-minute file limit", () => {
    const options = parseArgs([], { TEST_JOBS: "3", E2E_ROTATION: "7" })
    expect(options).toEqual({
      jobs: 3,
      full: false,
      rotation: 7,
      fileTimeout: 1800,
      record: false,
      paths: ["./packages", "./test"],
    })
    expect(parseArgs([], {}).jobs).toBe(os.availableParallelism())
    expect(parseArgs([], { E2E_TARGETS: "all" }).full).toBe(true)
  })

  test("options and paths", () => {
    expect(
      parseArgs(["--jobs", "1", "--full", "--file-timeout", "60", "--record", "a", "b"], { E2E_ROTATION: "0" }),
    ).toEqual({
      jobs: 1,
      full: true,
      rotation: 0,
      fileTimeout: 60,
      record: true,
      paths: ["a", "b"],
    })
  })

  test("bad usage names the problem", () => {
    expect(() => parseArgs(["--jobs"], {})).toThrow("--jobs needs a whole number of at least 1")
    expect(() => parseArgs(["--jobs", "0"], {})).toThrow("--jobs needs a whole number")
    expect(() => parseArgs(["--file-timeout", "1.5"], {})).toThrow("--file-timeout needs a whole number")
    expect(() => parseArgs(["--fast"], {})).toThrow("unknown option --fast")
    expect(() => parseArgs([], { E2E_ROTATION: "-1" })).toThrow('E2E_ROTATION must be a whole number, not "-1"')
  })

  test("through the script: bad usage exits 2 with the usage on stderr, and runs nothing", () => {
    const result = runner("--jobs", "x")
    expect(result.status).toBe(2)
    expect(result.stderr).toContain("--jobs needs a whole number")
    expect(result.stderr).toContain("usage: bun scripts/test.ts")
    expect(result.stdout).toBe("")
    const help = runner("--help")
    expect(help.status).toBe(0)
    for (const option of ["--jobs N", "--full", "--file-timeout S", "--record"]) expect(help.stdout).toContain(option)
  })
})

describe("the test runner's files", () => {
  test("finds bun's test file names under folders, skips node_modules, takes a named file as is", async () => {
    await using t = await tree({
      "a/x.test.ts": "",
      "a/b/y_test.js": "",
      "a/z.spec.tsx": "",
      "a/helper.ts": "",
      "a/node_modules/dep/q.test.ts": "",
      "c/plain.ts": "",
    })
    expect(collect(["a"], t.dir)).toEqual(["a/b/y_test.js", "a/x.test.ts", "a/z.spec.tsx"])
    expect(collect(["a/x.test.ts", "a"], t.dir)).toEqual(["a/b/y_test.js", "a/x.test.ts", "a/z.spec.tsx"])
    expect(collect(["c/plain.ts"], t.dir)).toEqual(["c/plain.ts"])
  })

  test("a path that does not exist, or a folder without tests, is an error", async () => {
    await using t = await tree({ "c/plain.ts": "" })
    expect(() => collect(["nope"], t.dir)).toThrow("nope does not exist")
    expect(() => collect(["c"], t.dir)).toThrow("no test files under c")
  })

  test("longest first; files without a record first, end-to-end ones before unit ones", () => {
    const files = [
      "packages/a.test.ts",
      "packages/b.test.ts",
      "test/e2e/c.test.ts",
      "test/e2e/d.test.ts",
      "new.test.ts",
    ]
    expect(order(files, { "packages/a.test.ts": 5, "packages/b.test.ts": 50, "test/e2e/c.test.ts": 20 })).toEqual([
      "test/e2e/d.test.ts",
      "new.test.ts",
      "packages/b.test.ts",
      "test/e2e/c.test.ts",
      "packages/a.test.ts",
    ])
  })

  test("reads bun's totals; a total bun did not print is zero", () => {
    const output = "(pass) a\n(fail) b\n\n 12 pass\n 1 skip\n 2 fail\n 30 expect() calls\nRan 15 tests across 1 file.\n"
    expect(counts(output)).toEqual({ pass: 12, fail: 2, skip: 1, todo: 0 })
    expect(counts("error: ModuleNotFound")).toEqual({ pass: 0, fail: 0, skip: 0, todo: 0 })
  })
})

describe("end-to-end targets (E2E_TARGETS, E2E_ROTATION)", () => {
  test("all, or unset: the three stock binaries", () => {
    expect(pick(undefined, "test/e2e/x.test.ts", 0, 5)).toEqual([0, 1, 2])
    expect(pick("all", "test/e2e/x.test.ts", 4, 5)).toEqual([0, 1, 2])
  })

  test("rotate: one binary per block, the next one for the next block, the same for the same rotation", () => {
    for (const file of ["test/e2e/lsp.test.ts", "test/e2e/redteam-AS4.test.ts", "test/e2e/recovery.test.ts"]) {
      const [first] = pick("rotate", file, 0, 100)
      expect([0, 1, 2]).toContain(first)
      expect(pick("rotate", file, 1, 100)).toEqual([(first + 1) % 3])
      expect(pick("rotate", file, 0, 100)).toEqual([first])
      // Three rotations in a row put a block on each binary.
      const seen = [100, 101, 102].map((r) => pick("rotate", file, 0, r)[0])
      expect(seen.sort()).toEqual([0, 1, 2])
    }
    // Across files, first blocks land on every binary.
    const firsts = new Set(
      ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"].map((n) => pick("rotate", `test/e2e/${n}.test.ts`, 0, 0)[0]),
    )
    expect([...firsts].sort()).toEqual([0, 1, 2])
  })

  test("any other mode is refused, naming the two", () => {
    expect(() => pick("paired", "test/e2e/x.test.ts", 0, 0)).toThrow(
      'E2E_TARGETS must be "all" or "rotate", not "paired"',
    )
  })

  test("the rotation: E2E_ROTATION when given, else the day; anything else is refused", () => {
    expect(rotation({ E2E_ROTATION: "42" })).toBe(42)
    const day = Date.UTC(2026, 11, 1, 23, 59)
    expect(rotation({}, day)).toBe(rotation({}, Date.UTC(2026, 11, 1, 0, 0)))
    expect(rotation({}, day) + 1).toBe(rotation({}, Date.UTC(2026, 11, 2, 0, 1)))
    expect(rotation({ E2E_ROTATION: "" }, day)).toBe(rotation({}, day))
    expect(() => rotation({ E2E_ROTATION: "tuesday" })).toThrow('E2E_ROTATION must be a whole number, not "tuesday"')
    expect(() => rotation({ E2E_ROTATION: "1.5" })).toThrow("E2E_ROTATION must be a whole number")
  })
})

describe("the runner end to end", () => {
  test(
    "runs each file in its own process, prints a failed file's output, names failures last and exits 1",
    async () => {
      await using t = await tree({
        "ok.test.ts": 'import { test, expect } from "bun:test"\ntest("fine", () => expect(1).toBe(1))\n',
        "bad.test.ts":
          'import { test, expect } from "bun:test"\ntest("one", () => expect(1).toBe(1))\ntest("broken one", () => expect(1).toBe(2))\n',
      })
      const result = runner("--jobs", "2", t.dir)
      expect(result.status).toBe(1)
      expect(result.stdout).toContain("2 test files, 2 at a time")
      expect(result.stdout).toMatch(/ok\s+[\d.]+ s {2}\S*ok\.test\.ts {2}\(1 pass\)/)
      expect(result.stdout).toMatch(/FAIL\s+[\d.]+ s {2}\S*bad\.test\.ts {2}\(1 pass, 1 fail\)/)
      expect(result.stdout).toContain("2 pass, 1 fail, 0 skip, 0 todo in 2 files")
      const tail = result.stdout.trimEnd().split("\n").slice(-3).join("\n")
      expect(tail).toContain("bad.test.ts: 1 fail, exit 1")
      expect(tail).toContain("(fail) broken one")
    },
    { timeout: 150_000 },
  )

  test(
    "a file past its limit is killed with what it started, and counted as failed",
    async () => {
      await using t = await tree({
        "hang.test.ts":
          'import { test } from "bun:test"\ntest("waits", async () => { Bun.spawn(["sleep", "300"]); await Bun.sleep(300_000) }, 400_000)\n',
      })
      const result = runner("--file-timeout", "3", t.dir)
      expect(result.status).toBe(1)
      expect(result.stdout).toContain("TIMEOUT")
      expect(result.stdout).toContain("hang.test.ts: killed after 3 s")
      // The sleep it started went with its process group.
      const left = spawnSync("pgrep", ["-f", "^sleep 300$"], { encoding: "utf8" })
      expect(left.stdout.trim()).toBe("")
    },
    { timeout: 150_000 },
  )
})
