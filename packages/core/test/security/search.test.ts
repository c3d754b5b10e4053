// The layer's contained grep and glob (`SecuritySearch`), run with the real ripgrep on real folders. Red team AA7:
// OpenCode's count and truncation note said whether a regex matched a read-denied file or a read-protected segment
// (one guess per call), since 1.18 runs ripgrep with --no-config and 1.2.15 searched `/proc/self/root<project>`.
import { describe, expect, test } from "bun:test"
import { spawn } from "child_process"
import path from "path"
import { SecurityOutput } from "../../security/output"
import { SecuritySearch } from "../../security/search"
import { tmpdir } from "../fixture"

const MARKERS = [{ start: "@secure-start", end: "@secure-end" }]

/** `n` public files matching PUBX, a read-denied `.env`, a `secrets/` folder and a file with a protected segment. */
async function project(n: number) {
  const files: Record<string, string> = {
    ".env": "DATABASE_PASSWORD=Hq83kfP2mZ0xQ7vB\n",
    "secrets/aws-prod.key": "Zx81Qp0vLk27mNb5\n",
    "src/app.ts": 'export const a = 1\n// @secure-start\nconst pricing = "Kd93mVx71LqPz0Rw"\n// @secure-end\n',
  }
  for (let i = 0; i < n; i++) files[`p/f${String(i).padStart(3, "0")}.txt`] = "PUBX\n"
  const dir = await tmpdir(files)
  const hiddenPaths = [path.join(dir.path, ".env"), path.join(dir.path, "secrets")]
  const scope = {
    hidden: (f: string) => hiddenPaths.some((h) => f === h || f.startsWith(h + "/")),
    exclude: [
      { path: hiddenPaths[0], dir: false },
      { path: hiddenPaths[1], dir: true },
    ],
    lines: (f: string) => SecurityOutput.fileRanges(f, MARKERS, "lf"),
  }
  return { dir, scope, [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose]() }
}

describe("SecuritySearch.grep", () => {
  for (const n of [99, 100]) {
    test(`${n} public matches: a right and a wrong guess at .env answer alike (project path and /proc/self/root spelling)`, async () => {
      await using p = await project(n)
      for (const base of [p.dir.path, `/proc/self/root${p.dir.path}`]) {
        const right = await SecuritySearch.grep({ ...p.scope, base, pattern: "PUBX|PASSWORD=Hq8" })
        const wrong = await SecuritySearch.grep({ ...p.scope, base, pattern: "PUBX|PASSWORD=Zz9" })
        expect(right.output).not.toContain("Hq83kfP2mZ0xQ7vB")
        expect(right.output.split("\n")[0]).toBe(`Found ${n} matches`)
        expect(right.output).toBe(wrong.output)
        expect(right.metadata).toEqual(wrong.metadata)
      }
    })
  }

  test("a right and a wrong guess at a read-protected segment answer alike", async () => {
    await using p = await project(99)
    const right = await SecuritySearch.grep({ ...p.scope, base: p.dir.path, pattern: "PUBX|pricing = .Kd9" })
    const wrong = await SecuritySearch.grep({ ...p.scope, base: p.dir.path, pattern: "PUBX|pricing = .Zz9" })
    expect(right.output).not.toContain("Kd93mVx71LqPz0Rw")
    expect(right.output).toBe(wrong.output)
  })

  test("an include that names the protected file, or a search of the file itself, finds nothing", async () => {
    await using p = await project(1)
    for (const args of [
      { base: p.dir.path, include: ".env" },
      { base: p.dir.path, include: "**/*.key" },
      { base: path.join(p.dir.path, ".env") },
      { base: `/proc/self/root${p.dir.path}/secrets` },
    ]) {
      const r = await SecuritySearch.grep({ ...p.scope, ...args, pattern: "Hq83|Zx81" })
      expect(r.output).toBe("No files found")
    }
  })

  test("more than 100 matches: the first 100 are shown and the count is of what may be shown", async () => {
    await using p = await project(150)
    const r = await SecuritySearch.grep({
      ...p.scope,
      base: p.dir.path,
      pattern: "PUBX|PASSWORD|pricing|export const a",
    })
    const lines = r.output.split("\n")
    expect(lines[0]).toBe("Found 151 matches (showing first 100)")
    expect(lines.filter((l) => l.startsWith("  Line ")).length).toBe(100)
    expect(lines.at(-1)).toBe(
      "(Results truncated: showing 100 of 151 matches (51 hidden). Consider using a more specific path or pattern.)",
    )
    // What OpenCode's own output would be filtered by afterwards: the structure is read the same way.
    expect(SecurityOutput.grep(r.output, { hidden: () => false, lines: () => [] }).text).toBe(r.output)
  })

  test("OpenCode's shape: file blocks of `  Line N: text`, line ends removed", async () => {
    await using p = await project(0)
    await p.dir.write({ "a.txt": "one\r\ntwo PUBX\r\n" })
    const r = await SecuritySearch.grep({ ...p.scope, base: p.dir.path, pattern: "PUBX" })
    expect(r.output).toBe(`Found 1 matches\n${p.dir.file("a.txt")}:\n  Line 2: two PUBX`)
  })
})

describe("SecuritySearch.glob", () => {
  test("a right and a wrong guess at a name in secrets/ answer alike at the 100-result limit", async () => {
    await using p = await project(100)
    const right = await SecuritySearch.glob({ ...p.scope, base: p.dir.path, pattern: "{p/*,secrets/aws*}" })
    const wrong = await SecuritySearch.glob({ ...p.scope, base: p.dir.path, pattern: "{p/*,secrets/zz*}" })
    expect(right.output).not.toContain("aws-prod")
    expect(right.output).not.toContain("truncated")
    expect(right.output).toBe(wrong.output)
  })

  test("more than 100 names: 100 shown and OpenCode's truncation note", async () => {
    await using p = await project(101)
    const r = await SecuritySearch.glob({ ...p.scope, base: `/proc/self/root${p.dir.path}`, pattern: "**/*" })
    const lines = r.output.split("\n")
    expect(lines.filter((l) => l.startsWith("/")).length).toBe(100)
    expect(r.output).not.toContain(".env")
    expect(r.output).not.toContain("secrets")
    expect(lines.at(-1)).toBe(
      "(Results are truncated: showing first 100 results. Consider using a more specific path or pattern.)",
    )
  })

  test("a ripgrep that cannot run fails the call with a named error, never answers 'No files found'", async () => {
    await using p = await project(3)
    const rg = path.join(p.dir.path, "no-such-rg")
    const base = { ...p.scope, base: p.dir.path, rg }
    for (const search of [
      () => SecuritySearch.glob({ ...base, pattern: "**/*.txt" }),
      () => SecuritySearch.grep({ ...base, pattern: "PUBX" }),
    ]) {
      const failed = await search().then(
        () => undefined,
        (error: Error) => error,
      )
      expect(failed?.name).toBe("SecuritySearchFailed")
      expect(failed?.message).toContain("could not run")
      expect(failed?.message).toContain("install ripgrep (rg) on PATH")
    }
  })
})

describe("SecuritySearch.ripgrep", () => {
  // Bun 1.3 sometimes fails to register a child it has just started with its event loop, and the start reports
  // "EBADF: bad file descriptor, epoll_ctl" (seen in this suite's long runs, a glob refused for it). The runtime's
  // failure cannot be caused on demand: here a real ripgrep starts and its child object gets that error, as Bun emits it.
  const failing = (times: number, message = "EBADF: bad file descriptor, epoll_ctl") => {
    let starts = 0
    const start = ((...args: Parameters<typeof spawn>) => {
      const child = spawn(...args)
      if (starts++ < times) queueMicrotask(() => child.emit("error", new Error(message)))
      return child
    }) as typeof spawn
    return { start, starts: () => starts }
  }

  test("a start the event loop failed to register is tried once more: the search answers in full", async () => {
    await using p = await project(5)
    const rg = SecuritySearch.program()!
    const lines: string[] = []
    const f = failing(1)
    const capped = await SecuritySearch.ripgrep(
      rg,
      ["--files", "p"],
      p.dir.path,
      (l) => (lines.push(l), false),
      f.start,
    )
    expect(capped).toBe(false)
    expect(f.starts()).toBe(2)
    expect(lines.sort()).toEqual(["p/f000.txt", "p/f001.txt", "p/f002.txt", "p/f003.txt", "p/f004.txt"])
  })

  test("only once: a second failure is the named error; another error is not retried", async () => {
    await using p = await project(2)
    const rg = SecuritySearch.program()!
    for (const [f, starts, reason] of [
      [failing(2), 2, "epoll_ctl"],
      [failing(1, "spawn rg EACCES"), 1, "EACCES"],
    ] as const) {
      const failed = await SecuritySearch.ripgrep(rg, ["--files", "p"], p.dir.path, () => false, f.start).then(
        () => undefined,
        (error: Error) => error,
      )
      expect(failed?.name).toBe("SecuritySearchFailed")
      expect(failed?.message).toContain(reason)
      expect(f.starts()).toBe(starts)
    }
  })
})
