import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { run } from "../../security/cli"
import { memoryIO } from "../../util/cli"
import { tmpdir } from "../fixture"
import { project } from "./fixture"

describe("opencode-builtins security", () => {
  test("validate: valid (text and JSON), none, invalid with pointers (exit 1)", async () => {
    await using dir = await project()
    let io = memoryIO(dir.path)
    expect(await run(["validate"], io)).toBe(0)
    expect(io.stdout).toContain("valid: .opencode-security.json")
    expect(io.stdout).toContain("6 rule(s), 2 marker pair(s)")
    io = memoryIO(dir.path)
    expect(await run(["validate", "--json"], io)).toBe(0)
    expect(JSON.parse(io.stdout)).toMatchObject({ status: "valid", rules: 6, markers: 2, defaultRole: "viewer" })
    fs.writeFileSync(path.join(dir.path, ".opencode-security.json"), '{"version": "2"}')
    io = memoryIO(dir.path)
    expect(await run(["validate"], io)).toBe(1)
    expect(io.stdout).toContain('/version: must be one of "1", "1.0"')
    await using empty = await tmpdir({ ".git/HEAD": "x" })
    io = memoryIO(empty.path)
    expect(await run(["validate"], io)).toBe(0)
    expect(io.stdout).toContain("nothing is enforced")
  })

  test("check, a question about the policy, writes nothing to the audit log (valid or invalid policy)", async () => {
    await using dir = await project()
    const log = dir.file(".opencode-security-audit.log")
    fs.rmSync(log, { force: true })
    expect(await run(["check", "README.md", "--op", "read"], memoryIO(dir.path))).toBeOneOf([0, 1])
    expect(fs.existsSync(log)).toBe(false)
    fs.writeFileSync(dir.file(".opencode-security.json"), '{"roles": [')
    expect(await run(["check", "README.md", "--op", "read"], memoryIO(dir.path))).toBe(1)
    expect(fs.existsSync(log)).toBe(false)
  })

  test("check: decision and rule, roles, JSON, exit codes", async () => {
    await using dir = await project()
    let io = memoryIO(dir.path)
    expect(await run(["check", "secrets/api.key", "--op", "read"], io)).toBe(1)
    expect(io.stdout).toContain("DENIED read secrets/api.key for role 'viewer'")
    expect(io.stdout).toContain("rule: secrets/**")
    io = memoryIO(dir.path)
    expect(await run(["check", "secrets/api.key", "--op", "read", "--role", "admin", "--json"], io)).toBe(0)
    expect(JSON.parse(io.stdout)).toMatchObject({ allowed: true, role: "admin", op: "read" })
    io = memoryIO(dir.path, { OPENCODE_SECURITY_ROLE: "dev" })
    expect(await run(["check", "config/server.key", "--op", "read"], io)).toBe(0)
  })

  test("check --dir that is a file or missing: a usage error naming it (exit 2), never a decision", async () => {
    await using dir = await project()
    const file = path.join(dir.path, "secrets/api.key")
    const missing = path.join(dir.path, "no-such-folder")
    for (const [argv, message] of [
      [["check", "secrets/api.key", "--op", "read", "--dir", file], `${file} is not a directory (it is a file)`],
      [["check", "secrets/api.key", "--op", "read", "--dir", missing], `${missing} does not exist`],
      [["validate", file], `${file} is not a directory (it is a file)`],
    ] as const) {
      const io = memoryIO(dir.path)
      expect(await run([...argv], io)).toBe(2)
      expect(io.stdout).toBe("")
      expect(io.stderr).toContain(message)
      expect(io.stderr).not.toContain("    at ")
    }
  })

  test("usage errors exit 2 with a clear message", async () => {
    await using dir = await project()
    for (const argv of [
      ["check", "x"],
      ["check", "x", "--op", "delete"],
      ["check", "x", "--op", "read", "--role", "ghost"],
      ["bogus"],
      ["validate", "--nope"],
    ]) {
      const io = memoryIO(dir.path)
      expect(await run(argv, io)).toBe(2)
      expect(io.stderr.length).toBeGreaterThan(10)
    }
    const io = memoryIO(dir.path)
    expect(await run(["schema"], io)).toBe(0)
    expect(JSON.parse(io.stdout).properties.rules).toBeDefined()
  })

  test("schema takes no argument or option; no subcommand is bad usage with the usage on stderr", async () => {
    await using dir = await project()
    for (const [argv, message] of [
      [["schema", "--bogus"], "security: unknown option --bogus; see security --help"],
      [["schema", "extra"], "security: schema takes no arguments (unexpected argument 'extra')"],
      [["validate", ".", "--op", "read"], "security: unknown option --op for validate; see security --help"],
      [[], "security: give a command"],
    ] as const) {
      const io = memoryIO(dir.path)
      expect([argv, await run([...argv], io)]).toEqual([argv, 2])
      expect(io.stdout).toBe("")
      expect(io.stderr).toStartWith(`${message}\n\nusage:`)
    }
  })
})
