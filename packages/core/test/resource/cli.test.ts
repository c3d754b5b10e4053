import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { run } from "../../resource/cli"
import { memoryIO } from "../../util/cli"
import { md, tmpdir } from "../fixture"
import { policy } from "./guarded"

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

  // lint and query read the plugin's options file as OpenCode does: a raised maxFileSize was ignored, so lint called a
  // file oversize that OpenCode loads, and invalid values passed without a word (new-user helper).
  test("the project's .opencode/opencode-builtins.json applies; its problems are reported on stderr", async () => {
    await using dir = await tmpdir({
      ...CLEAN,
      ".opencode/task/big.md": md({ title: "Big" }) + "b".repeat(2 * 1024 * 1024),
    })
    const plain = memoryIO(dir.path)
    await run(["lint"], plain)
    expect(plain.stdout).toContain("oversize  .opencode/task/big.md")
    await Bun.write(
      dir.file(".opencode/opencode-builtins.json"),
      JSON.stringify({ resources: { maxFileSize: 10485760 } }),
    )
    const raised = memoryIO(dir.path)
    expect(await run(["lint"], raised)).toBe(0)
    expect(raised.stdout).not.toContain("oversize")
    await Bun.write(dir.file(".opencode/opencode-builtins.json"), JSON.stringify({ resources: { maxFileSize: "big" } }))
    const invalid = memoryIO(dir.path)
    await run(["lint"], invalid)
    expect(invalid.stderr).toContain("resources.maxFileSize")
    await Bun.write(dir.file(".opencode/opencode-builtins.json"), "{ nope")
    const broken = memoryIO(dir.path)
    await run(["query", "ship"], broken)
    expect(broken.stderr).toContain("opencode-builtins.json")
    expect(broken.stdout).toContain("ship")
  })

  test("a resources section that is not an object, or an enabled that is not true or false, is named on stderr", async () => {
    for (const [options, message] of [
      [{ resources: 5 }, "resources: resources: expected an object of options, got 5 — using the defaults\n"],
      [{ resources: { enabled: "no" } }, 'resources: resources.enabled: expected true or false, got "no"'],
    ] as const) {
      await using dir = await tmpdir({ ...CLEAN, ".opencode/opencode-builtins.json": JSON.stringify(options) })
      const io = memoryIO(dir.path)
      expect(await run(["lint"], io)).toBe(0)
      expect(io.stderr).toContain(message)
    }
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
    // Over the load limit is a warning: the file is listed and indexed, only resource-load refuses it.
    expect(io.stdout).toContain("warn  oversize  .opencode/task/huge.md")
    expect(io.stdout).toContain("4 error(s), 2 warning(s)")
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
    expect(io.stderr).toContain(`${path.join(dir.path, "missing-dir")} does not exist`)
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

  test("one line per result: a description's line breaks become spaces, escape sequences from a file are shown, not sent", async () => {
    // asyncapi's schemas/2.0.0.json has "description": "AsyncAPI 2.0.0 schema. — !!Auto generated!!\n Do not manually edit."
    await using dir = await tmpdir({
      ".opencode/schema/2.0.0.json": JSON.stringify({
        $id: "2.0.0",
        title: "AsyncAPI 2.0.0 schema.",
        description: "!!Auto generated!!\n Do not manually edit.",
      }),
      ".opencode/task/t.md": md({ title: "Title \u001b]0;owned\u0007", description: "first\r\nsecond" }),
    })
    const io = memoryIO(dir.path)
    expect(await run(["query"], io)).toBe(0)
    const lines = io.stdout.trimEnd().split("\n")
    expect(lines).toContain(
      "2.0.0  [schema/common]  AsyncAPI 2.0.0 schema. — !!Auto generated!! Do not manually edit.  (.opencode/schema/2.0.0.json)",
    )
    expect(lines).toContain("t  [task/common]  Title \\u001b]0;owned\\u0007 — first second  (.opencode/task/t.md)")
    expect(io.stdout).not.toContain("\u001b")
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

  test("--limit abc, -1 or past 50: one message form for whole numbers, never a parser's text", async () => {
    await using dir = await tmpdir(CLEAN)
    for (const limit of ["abc", "-1", "0", "51", "2.5"]) {
      const io = memoryIO(dir.path)
      expect(await run(["query", "--limit", limit], io)).toBe(2)
      expect(io.stderr).toBe(`resources query: --limit must be a whole number from 1 to 50, got '${limit}'\n`)
    }
  })
})

describe("opencode-builtins resources with a security policy", () => {
  const SECRET_PROJECT = {
    ...CLEAN,
    ".opencode/task/merger.md": md({ title: "Merger", description: "Project Falcon terms", tags: ["release"] }),
    ".opencode/task/vault/broken.md": "---\ntitle: [Falcon\n---\n",
    ".opencode-security.json": policy([
      { pattern: ".opencode/task/merger.md", type: "file", deniedOperations: ["llm"], allowedRoles: ["admin"] },
      { pattern: ".opencode/task/vault", type: "directory", deniedOperations: ["read"] },
    ]),
  }
  const ROLES = [
    { name: "viewer", level: 10 },
    { name: "admin", level: 100 },
  ]

  test("query and lint show nothing of protected files, whatever role the environment claims", async () => {
    await using dir = await tmpdir(SECRET_PROJECT)
    const file = JSON.parse(SECRET_PROJECT[".opencode-security.json"])
    await Bun.write(dir.file(".opencode-security.json"), JSON.stringify({ ...file, roles: ROLES }))
    const previous = process.env.OPENCODE_SECURITY_ROLE
    process.env.OPENCODE_SECURITY_ROLE = "admin"
    try {
      const query = memoryIO(dir.path, { OPENCODE_SECURITY_ROLE: "admin" })
      expect(await run(["query", "--tag", "release", "--json"], query)).toBe(0)
      const result = JSON.parse(query.stdout)
      expect(result.results.map((r: { id: string }) => r.id).sort()).toEqual(["check", "ship"])
      expect(query.stdout).not.toContain("Falcon")
      expect(query.stderr).toContain("security policy applied (role viewer)")
      const lint = memoryIO(dir.path)
      expect(await run(["lint", "--json"], lint)).toBe(0)
      expect(lint.stdout).not.toContain("vault")
      expect(JSON.parse(lint.stdout).resources).toBe(2)
    } finally {
      if (previous === undefined) delete process.env.OPENCODE_SECURITY_ROLE
      else process.env.OPENCODE_SECURITY_ROLE = previous
    }
  })

  test("an invalid policy hides everything (fail closed) and says so", async () => {
    await using dir = await tmpdir({ ...CLEAN, ".opencode-security.json": "{ not json" })
    const io = memoryIO(dir.path)
    expect(await run(["query", "--json"], io)).toBe(0)
    expect(JSON.parse(io.stdout).total).toBe(0)
    expect(io.stderr).toContain("the security policy is invalid")
  })

  // Malformed, empty, binary, JSONC: each hides every resource, and with them the project's real lint errors.
  const INVALID = [
    ['{"roles": [', "is not valid JSON"],
    ["", "is empty"],
    [Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00, 0xff]), "is not valid UTF-8"],
    ['// the team policy\n{"version": "1.0"}', "comments are not allowed in .opencode-security.json (JSON only)"],
  ] as const

  test("lint fails on an invalid policy (exit 1, ok false), naming the policy file and why resources are hidden", async () => {
    for (const [content, why] of INVALID) {
      await using dir = await tmpdir({
        ...CLEAN,
        ".git/HEAD": "ref: refs/heads/main\n",
        ".opencode/checklist/bad.md": "---\nid: [unclosed\n---\nbody\n",
        ".opencode-security.json": content,
      })
      const json = memoryIO(dir.path)
      expect([why, await run(["lint", "--json"], json)]).toEqual([why, 1])
      const report = JSON.parse(json.stdout)
      expect(report.ok).toBe(false)
      expect(report.errors).toBe(1)
      expect(report.problems[0]).toMatchObject({
        severity: "error",
        code: "policy-invalid",
        path: ".opencode-security.json",
      })
      expect(report.problems[0].message).toContain("every resource is hidden until it is fixed")
      expect(report.problems[0].message).toContain(why)
      const text = memoryIO(dir.path)
      expect(await run(["lint"], text)).toBe(1)
      expect(text.stdout).toContain("error policy-invalid  .opencode-security.json: the security policy is invalid")
      expect(text.stdout).toContain("1 error(s)")
      // Read-only: no line in the audit log, not even the policy's state.
      expect(fs.existsSync(dir.file(".opencode-security-audit.log"))).toBe(false)
    }
  })

  test("query under an invalid policy says the resources are hidden, never that the project has none", async () => {
    for (const [content, why] of INVALID) {
      await using dir = await tmpdir({
        ...CLEAN,
        ".git/HEAD": "ref: refs/heads/main\n",
        ".opencode-security.json": content,
      })
      const io = memoryIO(dir.path)
      expect(await run(["query", "ship"], io)).toBe(0)
      expect(io.stdout).not.toContain("No resources in this project")
      expect(io.stdout).not.toContain("Add markdown files")
      expect(io.stdout).toContain("every resource is hidden until it is fixed")
      expect(io.stdout).toContain(why)
      const json = memoryIO(dir.path)
      expect(await run(["query", "--json"], json)).toBe(0)
      expect(JSON.parse(json.stdout).hint).toContain("every resource is hidden")
    }
  })
})
