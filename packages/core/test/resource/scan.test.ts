import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { ResourceProject } from "../../resource/project"
import { ResourceRead } from "../../resource/read"
import { ResourceScan } from "../../resource/scan"
import { tmpdir } from "../fixture"
import { execFileSync } from "../spawn-sync"

const scan = (dir: string, worktree?: string) => ResourceScan.scan(ResourceProject.resolve(dir, worktree))
const rels = (files: ResourceScan.File[]) => files.map((f) => f.relativePath).sort()

describe("ResourceProject", () => {
  test("inside a worktree, every .opencode from the directory up to the root is scanned, nearest first", async () => {
    await using dir = await tmpdir({ "packages/app/x": "" })
    const p = ResourceProject.resolve(dir.file("packages/app"), dir.path)
    expect(p.root).toBe(dir.path)
    expect(p.opencodeDirs).toEqual([
      dir.file("packages/app/.opencode"),
      dir.file("packages/.opencode"),
      dir.file(".opencode"),
    ])
  })

  test("a worktree of '/' (OpenCode outside git) or one not containing the directory is not used", async () => {
    await using dir = await tmpdir({ "a/x": "" })
    expect(ResourceProject.resolve(dir.path, "/").root).toBe(dir.path)
    expect(ResourceProject.resolve(dir.file("a"), dir.file("elsewhere")).root).toBe(dir.file("a"))
  })
})

describe("ResourceScan", () => {
  test("finds markdown for every type, JSON for schemas, nested; skips other extensions and dot entries", async () => {
    await using dir = await tmpdir({
      ".opencode/checklist/a.md": "a",
      ".opencode/knowledge-base/deep/er/b.MD": "b",
      ".opencode/task/c.md": "c",
      ".opencode/task/notes.txt": "no",
      ".opencode/task/.hidden.md": "no",
      ".opencode/task/.drafts/d.md": "no",
      ".opencode/template/t.md": "t",
      ".opencode/schema/s.json": "{}",
      ".opencode/schema/readme.md": "no",
      ".opencode/unknown/u.md": "no",
    })
    const found = await scan(dir.path)
    expect(rels(found.resources)).toEqual([
      ".opencode/checklist/a.md",
      ".opencode/knowledge-base/deep/er/b.MD",
      ".opencode/schema/s.json",
      ".opencode/task/c.md",
      ".opencode/template/t.md",
    ])
    expect(found.resources.find((f) => f.relativePath.endsWith("s.json"))?.type).toBe("schema")
    expect(found.resources[0].size).toBeGreaterThan(0)
    expect(found.resources[0].mtimeMs).toBeGreaterThan(0)
    expect(found.warnings).toEqual([])
  })

  test("a project without .opencode is an empty result, not an error", async () => {
    await using dir = await tmpdir({ "src/index.ts": "" })
    const found = await scan(dir.path)
    expect([found.resources, found.references, found.warnings]).toEqual([[], [], []])
    // The missing folders are remembered as missing, so that creating them is noticed.
    expect(found.dirs.get(dir.file(".opencode/task"))).toBeNull()
    expect(found.dirs.get(dir.file(".opencode"))).toBeNull()
    expect(await ResourceScan.changed(found.dirs)).toBe(false)
    await dir.write({ ".opencode/task/a.md": "a" })
    expect(await ResourceScan.changed(found.dirs)).toBe(true)
  })

  test("folder stamps tell when files were added, removed or renamed, and when folders appear", async () => {
    await using dir = await tmpdir({ ".opencode/task/a.md": "a", ".opencode/task/sub/b.md": "b" })
    // Folder times come from the kernel's coarse clock: a change within the same tick as the folder's last one keeps
    // its mtime (the loader treats such stamps as racy, `ResourceScan.racy`). Set back, every change below is a new
    // time, however loaded the machine (a 5 ms sleep was not enough under two full runs).
    const past = new Date(Date.now() - 10_000)
    for (const folder of [".opencode", ".opencode/task", ".opencode/task/sub"])
      await fs.utimes(dir.file(folder), past, past)
    const first = await scan(dir.path)
    expect(await ResourceScan.changed(first.dirs)).toBe(false)
    await dir.write({ ".opencode/task/sub/c.md": "c" })
    expect(await ResourceScan.changed(first.dirs)).toBe(true)
    const second = await scan(dir.path)
    await fs.rename(dir.file(".opencode/task/a.md"), dir.file(".opencode/task/a2.md"))
    expect(await ResourceScan.changed(second.dirs)).toBe(true)
    const third = await scan(dir.path)
    await dir.write({ ".opencode/checklist/new.md": "n" })
    expect(await ResourceScan.changed(third.dirs)).toBe(true)
    const fourth = await scan(dir.path)
    // Editing a file's content in place leaves folder mtimes alone: that needs file.edited or autoRebuildIndex.
    await dir.write({ ".opencode/task/sub/b.md": "edited" })
    expect(await ResourceScan.changed(fourth.dirs)).toBe(false)
  })

  test("without any resource file, agent and command files are listed but not stat'ed; with one they are", async () => {
    await using dir = await tmpdir({
      ".claude/agents/reviewer.md": "uses deploy-runbook",
      ".claude/commands/ship.md": "[[deploy-runbook]]",
      ".opencode/agent/a1.md": "",
    })
    const bare = await scan(dir.path)
    expect(bare.resources).toEqual([])
    expect(bare.references.map((r) => [r.relativePath, r.size, r.mtimeMs]).sort()).toEqual([
      [".claude/agents/reviewer.md", -1, -1],
      [".claude/commands/ship.md", -1, -1],
      [".opencode/agent/a1.md", -1, -1],
    ])
    // Their folders are still stamped, so a later change is seen.
    expect(bare.dirs.get(dir.file(".claude/agents"))).toBeNumber()
    await dir.write({ ".opencode/knowledge-base/deploy-runbook.md": "# Deploy" })
    expect(await ResourceScan.changed(bare.dirs)).toBe(true)
    const full = await scan(dir.path)
    const size = (await fs.stat(dir.file(".claude/agents/reviewer.md"))).size
    expect(full.references.find((r) => r.relativePath === ".claude/agents/reviewer.md")).toMatchObject({
      size,
      mtimeMs: (await fs.stat(dir.file(".claude/agents/reviewer.md"))).mtimeMs,
    })
    expect(full.references.every((r) => r.size >= 0 && r.mtimeMs > 0)).toBe(true)
  })

  test("agent and command files of OpenCode and Claude Code are found as reference sources", async () => {
    await using dir = await tmpdir({
      ".opencode/agent/a1.md": "",
      ".opencode/agents/a2.md": "",
      ".opencode/command/c1.md": "",
      ".opencode/commands/c2.md": "",
      ".claude/agents/a3.md": "",
      ".claude/commands/c3.md": "",
    })
    const found = await scan(dir.path)
    expect(found.references.map((r) => `${r.kind}:${r.relativePath}`).sort()).toEqual([
      "agent:.claude/agents/a3.md",
      "agent:.opencode/agent/a1.md",
      "agent:.opencode/agents/a2.md",
      "command:.claude/commands/c3.md",
      "command:.opencode/command/c1.md",
      "command:.opencode/commands/c2.md",
    ])
  })

  test("symlinks inside the project are followed; links outside, loops and broken links are reported", async () => {
    await using outside = await tmpdir({ "secret.md": "top secret", "dir/x.md": "x" })
    await using dir = await tmpdir({ ".opencode/task/real.md": "r", "shared/s.md": "s", "shared/sub/t.md": "t" })
    const task = dir.file(".opencode/task")
    await fs.symlink(dir.file("shared/s.md"), path.join(task, "linked.md"))
    await fs.symlink(dir.file("shared"), path.join(task, "linked-dir"))
    await fs.symlink(outside.file("secret.md"), path.join(task, "escape.md"))
    await fs.symlink(outside.file("dir"), path.join(task, "escape-dir"))
    await fs.symlink(path.join(task, "loop-b.md"), path.join(task, "loop-a.md"))
    await fs.symlink(path.join(task, "loop-a.md"), path.join(task, "loop-b.md"))
    await fs.symlink(task, path.join(task, "self"))
    await fs.symlink(dir.file("missing.md"), path.join(task, "broken.md"))
    const found = await scan(dir.path)
    expect(rels(found.resources)).toEqual([
      ".opencode/task/linked-dir/s.md",
      ".opencode/task/linked-dir/sub/t.md",
      ".opencode/task/linked.md",
      ".opencode/task/real.md",
    ])
    expect(found.resources.find((f) => f.relativePath.endsWith("linked.md"))?.real).toBe(dir.file("shared/s.md"))
    const codes = found.warnings.map((w) => `${w.code}:${w.path}`).sort()
    expect(codes).toEqual([
      "outside-project:.opencode/task/escape-dir",
      "outside-project:.opencode/task/escape.md",
      "symlink-loop:.opencode/task/loop-a.md",
      "symlink-loop:.opencode/task/loop-b.md",
      "symlink-loop:.opencode/task/self",
      "unreadable:.opencode/task/broken.md",
    ])
  })

  test("a type folder that is itself a link outside the project is not scanned", async () => {
    await using outside = await tmpdir({ "x.md": "x" })
    await using dir = await tmpdir({ ".opencode/.keep": "" })
    await fs.symlink(outside.path, dir.file(".opencode/task"))
    const found = await scan(dir.path)
    expect(found.resources).toEqual([])
    expect(found.warnings.map((w) => w.code)).toEqual(["outside-project"])
  })

  test("a FIFO named like a resource is reported, never opened", async () => {
    await using dir = await tmpdir({ ".opencode/task/ok.md": "ok" })
    execFileSync("mkfifo", [dir.file(".opencode/task/pipe.md")])
    const found = await scan(dir.path)
    expect(rels(found.resources)).toEqual([".opencode/task/ok.md"])
    expect(found.warnings[0]).toMatchObject({ code: "unreadable", path: ".opencode/task/pipe.md" })
    expect(found.warnings[0].message).toContain("not a regular file")
  })
})

describe("ResourceRead", () => {
  const opts = { timeoutMs: 2000, maxBytes: 1024 }

  test("UTF-8 text is returned whole", async () => {
    await using dir = await tmpdir({ "a.md": "héllo ✓" })
    expect(await ResourceRead.text(dir.file("a.md"), opts)).toEqual({ ok: true, text: "héllo ✓", truncated: false })
  })

  test("binary files (NUL bytes) and invalid UTF-8 are refused with a reason", async () => {
    await using dir = await tmpdir({
      "bin.md": new Uint8Array([0x23, 0x00, 0x01]),
      "latin1.md": new Uint8Array([0x63, 0x61, 0x66, 0xe9]),
    })
    expect(await ResourceRead.text(dir.file("bin.md"), opts)).toMatchObject({ ok: false, code: "binary-file" })
    expect(await ResourceRead.text(dir.file("latin1.md"), opts)).toMatchObject({ ok: false, code: "not-utf8" })
  })

  test("files over the limit yield only whole lines of their head, flagged truncated", async () => {
    const text = "---\ntitle: Big\n---\n" + "é line\n".repeat(500)
    await using dir = await tmpdir({ "big.md": text })
    const r = await ResourceRead.text(dir.file("big.md"), { timeoutMs: 2000, maxBytes: 1024, headBytes: 100 })
    if (!r.ok) throw new Error("expected text")
    expect(r.truncated).toBe(true)
    expect(r.text.length).toBeLessThanOrEqual(100)
    expect(text.startsWith(r.text)).toBe(true)
    expect(r.text.endsWith("line")).toBe(true)
  })

  test("missing files are unreadable, not a crash", async () => {
    expect(await ResourceRead.text("/nonexistent/x.md", opts)).toMatchObject({
      ok: false,
      code: "unreadable",
      reason: "ENOENT",
    })
  })

  test("what is not a regular file is refused without being opened (a FIFO would block)", async () => {
    await using dir = await tmpdir()
    execFileSync("mkfifo", [dir.file("pipe.md")])
    expect(await ResourceRead.text(dir.file("pipe.md"), opts)).toEqual({
      ok: false,
      code: "unreadable",
      reason: "not a regular file",
    })
    expect(await ResourceRead.text(dir.path, opts)).toMatchObject({ ok: false, reason: "not a regular file" })
  })

  test("a read slower than the timeout gives up with read-timeout", async () => {
    await using dir = await tmpdir({ "big.md": "x".repeat(64 * 1024 * 1024) })
    const result = await ResourceRead.text(dir.file("big.md"), { timeoutMs: 1, maxBytes: 128 * 1024 * 1024 })
    expect(result).toEqual({ ok: false, code: "read-timeout", reason: "reading took longer than 1 ms" })
  })
})
