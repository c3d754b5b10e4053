import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityAudit } from "../../security/audit"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import { bunSpawnSync } from "../spawn-sync"

const lines = (file: string) =>
  fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))

describe("SecurityAudit", () => {
  test("JSON Lines with time and the event; allows only at verbose", async () => {
    await using dir = await tmpdir()
    const file = path.join(dir.path, "logs/audit.log")
    const log = SecurityAudit.create({ path: file, now: () => new Date("2026-01-01T00:00:00Z") })
    SecurityAudit.logSecurityEvent(log, {
      action: "deny",
      source: "plugin-tool",
      tool: "peek",
      plugin: "p",
      path: "secrets/x",
      operation: "read",
    })
    log.logSecurityEvent({ action: "allow", source: "builtin-tool", tool: "read" })
    expect(lines(file)).toEqual([
      {
        time: "2026-01-01T00:00:00.000Z",
        action: "deny",
        source: "plugin-tool",
        tool: "peek",
        plugin: "p",
        path: "secrets/x",
        operation: "read",
      },
    ])
    const verbose = SecurityAudit.create({ path: file, level: "verbose" })
    verbose.logSecurityEvent({ action: "allow", source: "builtin-tool", tool: "read" })
    expect(lines(file)).toHaveLength(2)
  })
  test("rotates by size and keeps N generations", async () => {
    await using dir = await tmpdir()
    const file = path.join(dir.path, "a.log")
    const log = SecurityAudit.create({ path: file, maxBytes: 200, keep: 2 })
    for (let i = 0; i < 20; i++) log.logSecurityEvent({ action: "deny", source: "llm", reason: `event number ${i}` })
    expect(fs.existsSync(`${file}.1`)).toBe(true)
    expect(fs.existsSync(`${file}.2`)).toBe(true)
    expect(fs.existsSync(`${file}.3`)).toBe(false)
    expect(fs.statSync(file).size).toBeLessThanOrEqual(200)
    expect(lines(file).at(-1).reason).toBe("event number 19")
  })
  test("a failure is counted and reported, never thrown; symlinks and FIFOs are not written through", async () => {
    await using dir = await tmpdir({ "target.txt": "keep" })
    const logger = Logger.memory()
    fs.mkdirSync(path.join(dir.path, "is-a-dir"))
    const blocked = SecurityAudit.create({ path: path.join(dir.path, "is-a-dir"), log: logger })
    blocked.logSecurityEvent({ action: "deny", source: "llm" })
    expect(blocked.failures).toBe(1)
    expect(logger.entries[0].message).toContain("enforcement continues")
    fs.symlinkSync(path.join(dir.path, "target.txt"), path.join(dir.path, "link.log"))
    const viaLink = SecurityAudit.create({ path: path.join(dir.path, "link.log") })
    viaLink.logSecurityEvent({ action: "deny", source: "llm" })
    expect(viaLink.failures).toBe(1)
    expect(fs.readFileSync(path.join(dir.path, "target.txt"), "utf8")).toBe("keep")
    bunSpawnSync(["mkfifo", path.join(dir.path, "fifo.log")])
    const fifo = SecurityAudit.create({ path: path.join(dir.path, "fifo.log") })
    fifo.logSecurityEvent({ action: "deny", source: "llm" })
    expect(fifo.failures).toBe(1)
  })

  test("a project folder deleted while OpenCode runs is never made again; folders inside a live one and outside are", async () => {
    await using dir = await tmpdir()
    await using other = await tmpdir()
    const logger = Logger.memory()
    const project = path.join(dir.path, "project")
    fs.mkdirSync(project)
    const log = SecurityAudit.create({
      path: path.join(project, ".opencode-security-audit.log"),
      root: project,
      log: logger,
    })
    log.logSecurityEvent({ action: "deny", source: "llm" })
    expect(fs.readFileSync(path.join(project, ".opencode-security-audit.log"), "utf8")).toContain('"deny"')
    fs.rmSync(project, { recursive: true })
    log.logSecurityEvent({ action: "policy-invalid", source: "policy" })
    expect(fs.existsSync(project)).toBe(false)
    expect(log.failures).toBe(1)
    expect(log.lastError).toContain(`the project folder ${project} is gone`)
    expect(logger.entries[0].message).toContain("enforcement continues")
    // A log in a folder of a live project, and one outside the project: their folders are made as before.
    const nested = SecurityAudit.create({ path: path.join(dir.path, "logs/security/audit.log"), root: dir.path })
    nested.logSecurityEvent({ action: "deny", source: "llm" })
    expect(nested.failures).toBe(0)
    const outside = SecurityAudit.create({ path: path.join(other.path, "a/b/audit.log"), root: dir.path })
    outside.logSecurityEvent({ action: "deny", source: "llm" })
    expect(fs.existsSync(path.join(other.path, "a/b/audit.log"))).toBe(true)
  })
})
