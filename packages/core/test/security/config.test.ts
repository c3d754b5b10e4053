import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityConfig } from "../../security/config"
import { SecurityPath } from "../../security/paths"
import { tmpdir } from "../fixture"

const write = (dir: string, rel: string, value: unknown) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true })
  fs.writeFileSync(path.join(dir, rel), typeof value === "string" ? value : JSON.stringify(value))
}
const problems = (state: SecurityConfig.State) => (state.status === "invalid" ? state.problems : [])

describe("SecurityConfig.load", () => {
  test("no policy file: status none", async () => {
    await using dir = await tmpdir({ "a.txt": "x" })
    expect(SecurityConfig.load(dir.path).status).toBe("none")
  })

  test("a valid policy: rules, markers, roles, default role, audit path anchored at the root", async () => {
    await using dir = await tmpdir()
    write(dir.path, ".opencode-security.json", {
      version: "1.0",
      roles: [
        { name: "admin", level: 100 },
        { name: "viewer", level: 10 },
      ],
      rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read"], allowedRoles: ["admin"] }],
      segments: { markers: [{ start: "@s-start", end: "@s-end", deniedOperations: ["llm"] }] },
      logging: { path: "logs/audit.jsonl", level: "verbose" },
    })
    const state = SecurityConfig.load(dir.path)
    if (state.status !== "valid") throw new Error(SecurityConfig.describe(problems(state)))
    expect(state.config.rules.filter((r) => !r.implicit)).toHaveLength(1)
    expect(state.config.markers).toHaveLength(1)
    expect(state.config.defaultRole).toBe("viewer")
    expect(state.config.logging).toMatchObject({
      path: path.join(dir.path, "logs/audit.jsonl"),
      level: "verbose",
      keep: 3,
    })
    expect(state.config.hasExplicit).toBe(true)
  })

  test("bad JSON names line and column; a truncated file says so", async () => {
    await using dir = await tmpdir()
    write(dir.path, ".opencode-security.json", '{\n  "version": "1.0",\n  "rules": [\n')
    const [p] = problems(SecurityConfig.load(dir.path))
    expect(p.message).toContain("line 4, column 1")
    expect(p.message).toContain("truncated")
  })

  test("a comment (JSONC) is named as such: the policy is JSON only", async () => {
    for (const [text, at] of [
      ['// team policy\n{"version": "1.0"}', "line 1, column 1"],
      ['{\n  "version": "1.0", /* v1 */\n  "rules": []\n}', "line 2, column 21"],
    ]) {
      await using dir = await tmpdir()
      write(dir.path, ".opencode-security.json", text)
      const [p] = problems(SecurityConfig.load(dir.path))
      expect(p.message).toBe(`comments are not allowed in .opencode-security.json (JSON only): ${at}`)
    }
  })

  test("schema errors carry the JSON pointer and the allowed values", async () => {
    await using dir = await tmpdir()
    write(dir.path, ".opencode-security.json", {
      version: "1.0",
      rules: [{ pattern: "x", type: "folder", deniedOperations: ["read", "delete"], deniedOperation: [] }],
    })
    const found = problems(SecurityConfig.load(dir.path))
    const text = SecurityConfig.describe(found)
    expect(text).toContain('/rules/0/type: must be one of "file", "directory"')
    expect(text).toContain("/rules/0/deniedOperations/1")
    expect(text).toContain("unknown property 'deniedOperation'")
  })

  test("missing version, empty file, a folder named like the policy, a duplicate role, an unknown role", async () => {
    await using dir = await tmpdir()
    write(dir.path, ".opencode-security.json", { rules: [] })
    expect(SecurityConfig.describe(problems(SecurityConfig.load(dir.path)))).toContain(
      "missing required property 'version'",
    )
    write(dir.path, ".opencode-security.json", "  \n")
    expect(SecurityConfig.describe(problems(SecurityConfig.load(dir.path)))).toContain("is empty")
    write(dir.path, ".opencode-security.json", {
      version: "1.0",
      roles: [
        { name: "a", level: 1 },
        { name: "a", level: 2 },
      ],
    })
    expect(SecurityConfig.describe(problems(SecurityConfig.load(dir.path)))).toContain(
      "/roles/1/name: role 'a' is defined twice",
    )
    write(dir.path, ".opencode-security.json", {
      version: "1.0",
      rules: [{ pattern: "x", type: "file", deniedOperations: ["read"], allowedRoles: ["admin"] }],
    })
    expect(SecurityConfig.describe(problems(SecurityConfig.load(dir.path)))).toContain(
      "/rules/0/allowedRoles/0: unknown role 'admin' (defined: viewer)",
    )
    fs.rmSync(path.join(dir.path, ".opencode-security.json"))
    fs.mkdirSync(path.join(dir.path, ".opencode-security.json"))
    expect(SecurityConfig.describe(problems(SecurityConfig.load(dir.path)))).toContain("not a regular file")
  })

  test("unusable patterns are errors", async () => {
    await using dir = await tmpdir()
    write(dir.path, ".opencode-security.json", {
      version: "1.0",
      rules: [
        { pattern: "!secrets", type: "file", deniedOperations: ["read"] },
        { pattern: "a/../b", type: "file", deniedOperations: ["read"] },
      ],
    })
    const text = SecurityConfig.describe(problems(SecurityConfig.load(dir.path)))
    expect(text).toContain("/rules/0/pattern: negated patterns are not supported")
    expect(text).toContain("/rules/1/pattern: '..' and '.' may not appear")
  })

  test("a subdirectory policy adds rules for its subtree only and may not set logging, mcp or secrets", async () => {
    await using dir = await tmpdir()
    write(dir.path, ".opencode-security.json", { version: "1.0" })
    write(dir.path, "sub/.opencode-security.json", {
      version: "1.0",
      rules: [{ pattern: "private", type: "directory", deniedOperations: ["read"] }],
    })
    const state = SecurityConfig.load(dir.path, { nested: [path.join(dir.path, "sub/.opencode-security.json")] })
    if (state.status !== "valid") throw new Error("expected valid")
    const rule = state.config.rules.find((r) => r.pattern === "private")!
    expect(rule.test(path.join(dir.path, "sub/private/x"))).toBe(true)
    expect(rule.test(path.join(dir.path, "private/x"))).toBe(false)
    write(dir.path, "sub/.opencode-security.json", { version: "1.0", mcp: { defaultPolicy: "trusted" } })
    const bad = SecurityConfig.load(dir.path, { nested: [path.join(dir.path, "sub/.opencode-security.json")] })
    expect(SecurityConfig.describe(problems(bad))).toContain("only the project root's policy may set 'mcp'")
  })

  test("implicit self-protection, and a root rule naming roles replaces it", async () => {
    await using dir = await tmpdir()
    write(dir.path, ".opencode-security.json", { version: "1.0" })
    let state = SecurityConfig.load(dir.path)
    if (state.status !== "valid") throw new Error("expected valid")
    const implicit = state.config.rules.filter((r) => r.implicit)
    expect(implicit.map((r) => r.id).sort()).toEqual([
      "implicit:audit-log",
      "implicit:host-config",
      "implicit:policy-file",
    ])
    expect(state.config.hasExplicit).toBe(false)
    write(dir.path, ".opencode-security.json", {
      version: "1.0",
      roles: [
        { name: "viewer", level: 1 },
        { name: "owner", level: 9 },
      ],
      rules: [
        { pattern: ".opencode-security.json", type: "file", deniedOperations: ["write"], allowedRoles: ["owner"] },
      ],
    })
    state = SecurityConfig.load(dir.path)
    if (state.status !== "valid") throw new Error("expected valid")
    const policyFile = path.join(dir.path, ".opencode-security.json")
    expect(state.config.rules.find((r) => r.implicit === "policy-file")!.test(policyFile)).toBe(false)
    expect(state.config.rules.find((r) => !r.implicit)!.test(policyFile)).toBe(true)
  })

  test("find walks subdirectories, skipping .git and node_modules", async () => {
    await using dir = await tmpdir()
    write(dir.path, ".opencode-security.json", { version: "1.0" })
    write(dir.path, "a/b/.opencode-security.json", { version: "1.0" })
    write(dir.path, "node_modules/x/.opencode-security.json", { version: "1.0" })
    write(dir.path, ".git/.opencode-security.json", { version: "1.0" })
    expect((await SecurityConfig.find(dir.path)).files).toEqual([path.join(dir.path, "a/b/.opencode-security.json")])
  })
})

describe("SecurityConfig.load: policies that parse but would protect less than they show", () => {
  const file = ".opencode-security.json"
  const rule = (pattern: string, type = "directory") => ({ pattern, type, deniedOperations: ["read"] })
  const text = async (value: unknown, extra: Record<string, string> = {}) => {
    await using dir = await tmpdir(extra)
    write(dir.path, file, value)
    return SecurityConfig.describe(problems(SecurityConfig.load(dir.path)))
  }

  test('a second "rules" key (JSON.parse keeps the last, empty one): invalid, with both places', async () => {
    await using dir = await tmpdir()
    write(
      dir.path,
      file,
      '{\n  "version": "1.0",\n  "rules": [{"pattern": "secrets/**", "type": "directory", "deniedOperations": ["read"]}],\n  "rules": []\n}',
    )
    const state = SecurityConfig.load(dir.path)
    expect(state.status).toBe("invalid")
    expect(problems(state)).toEqual([
      {
        file: path.join(dir.path, file),
        pointer: "",
        message:
          'line 4, column 3: duplicate key "rules" (first at line 3, column 3); JSON.parse would keep only the last one',
      },
    ])
  })

  test("a duplicate key deeper down names the object; __proto__ is refused", async () => {
    await using dir = await tmpdir()
    write(
      dir.path,
      file,
      '{"version": "1.0", "rules": [{"pattern": "a", "type": "file", "type": "directory", "deniedOperations": ["read"]}]}',
    )
    expect(problems(SecurityConfig.load(dir.path))[0]).toMatchObject({ pointer: "/rules/0" })
    write(dir.path, file, '{"version": "1.0", "mcp": {"servers": {"__proto__": "trusted"}}}')
    expect(problems(SecurityConfig.load(dir.path))[0]).toMatchObject({ pointer: "/mcp/servers" })
  })

  test("encodings: a byte order mark is fine; UTF-16 and bytes that are not UTF-8 are errors", async () => {
    await using dir = await tmpdir()
    fs.writeFileSync(path.join(dir.path, file), "\ufeff" + JSON.stringify({ version: "1.0" }))
    expect(SecurityConfig.load(dir.path).status).toBe("valid")
    fs.writeFileSync(path.join(dir.path, file), Buffer.from("\ufeff" + JSON.stringify({ version: "1.0" }), "utf16le"))
    expect(SecurityConfig.describe(problems(SecurityConfig.load(dir.path)))).toContain("is UTF-16 encoded")
    const latin1 = Buffer.from(JSON.stringify({ version: "1.0", rules: [rule("caf\u00e9")] }), "latin1")
    fs.writeFileSync(path.join(dir.path, file), latin1)
    expect(SecurityConfig.describe(problems(SecurityConfig.load(dir.path)))).toContain(
      "is not valid UTF-8 (line 1, column",
    )
  })

  test("pattern typos carry the rule's pointer", async () => {
    const found = await text({
      version: "1.0",
      rules: [rule(" secrets/**"), rule("secrets\\**"), rule("secrets/", "file"), rule("notes (v2).md", "file")],
    })
    expect(found).toContain("/rules/0/pattern: the pattern starts or ends with white space")
    expect(found).toContain("/rules/1/pattern: '\\*' would match a literal '*'")
    expect(found).toContain("/rules/2/pattern: the pattern ends with '/'")
    expect(found).toContain("/rules/3/pattern: parentheses are not supported")
  })

  test("a 'file' rule naming a folder that exists protects nothing inside it: an error on 'type'", async () => {
    const files = { "secrets/api.key": "k", "config/keys/a.pem": "k", "notes.md": "n" }
    const found = await text(
      { version: "1.0", rules: [rule("secrets", "file"), rule("config/keys", "file"), rule("notes.md", "file")] },
      files,
    )
    expect(found).toContain("/rules/0/type: ")
    expect(found).toContain("secrets is a folder: a 'file' rule would protect only the folder itself")
    expect(found).toContain("/rules/1/type: ")
    expect(found).not.toContain("/rules/2/")
    // Folders that do not exist (yet) and globs are not judged.
    expect(await text({ version: "1.0", rules: [rule("later", "file"), rule("secrets/*", "file")] }, files)).toBe("")
  })

  test("on a case-sensitive file system, a path that exists only in another case is an error", async () => {
    await using dir = await tmpdir({ "secrets/api.key": "k" })
    if (SecurityPath.caseInsensitive(path.join(dir.path, "secrets/api.key"))) return
    write(dir.path, file, {
      version: "1.0",
      rules: [rule("Secrets/**"), rule("secrets/API.key", "file"), rule("Secrets")],
    })
    const found = SecurityConfig.describe(problems(SecurityConfig.load(dir.path)))
    expect(found).toContain("/rules/0/pattern: 'Secrets' does not exist in")
    expect(found).toContain("but 'secrets' does")
    expect(found).toContain("/rules/1/pattern: 'API.key' does not exist")
    expect(found).not.toContain("/rules/2/") // a name matches at any depth
  })

  test("a rule naming a link whose target is gone is no case mistake (the policy stays valid)", async () => {
    // `secrets` → `vault`, and `vault` renamed by a tool (red team V5): the link dangles, its name is the rule's.
    await using dir = await tmpdir({ "old/db.txt": "k" })
    fs.symlinkSync("vault", path.join(dir.path, "secrets"))
    write(dir.path, file, { version: "1.0", rules: [rule("secrets/**"), rule("secrets")] })
    const state = SecurityConfig.load(dir.path)
    expect(SecurityConfig.describe(problems(state))).toBe("")
    expect(state.status).toBe("valid")
  })

  test("an unknown role that differs from a defined one only in case says which", async () => {
    const found = await text({
      version: "1.0",
      roles: [{ name: "admin", level: 100 }],
      rules: [{ ...rule("secrets/**"), allowedRoles: ["Admin"] }],
    })
    expect(found).toContain(
      "unknown role 'Admin' (defined: admin); role names are case-sensitive: did you mean 'admin'?",
    )
  })
})

describe("SecurityConfig.walk", () => {
  test("breadth first, bounded (truncated past maxEntries), no links followed, skipped folders listed not entered", async () => {
    await using dir = await tmpdir()
    write(dir.path, "a/b/file.txt", "x")
    write(dir.path, "node_modules/pkg/index.js", "x")
    fs.symlinkSync(path.join(dir.path, "a"), path.join(dir.path, "link"))
    const all = await SecurityConfig.walk(dir.path)
    const rel = (e: SecurityConfig.Entry) => `${path.relative(dir.path, e.path)}:${e.kind}`
    expect(all.truncated).toBe(false)
    expect(all.entries.map(rel).sort()).toEqual([
      "a/b/file.txt:file",
      "a/b:dir",
      "a:dir",
      "link:other",
      "node_modules:dir",
    ])
    // Breadth first: the root's entries come before anything deeper.
    expect(all.entries.slice(0, 3).every((e) => e.parent === dir.path)).toBe(true)
    const bounded = await SecurityConfig.walk(dir.path, { maxEntries: 4 })
    expect(bounded.truncated).toBe(true)
    expect(bounded.entries.map(rel)).toEqual(all.entries.slice(0, 4).map(rel))
    expect((await SecurityConfig.walk(dir.path, { maxEntries: all.entries.length })).truncated).toBe(false)
  })
})

describe("SecurityConfig.getMcpPolicy", () => {
  test("trusted without a policy, enforced with rules, explicit entries and defaultPolicy win", async () => {
    await using dir = await tmpdir()
    expect(SecurityConfig.getMcpPolicy(SecurityConfig.load(dir.path), "x")).toBe("trusted")
    write(dir.path, ".opencode-security.json", { version: "1.0" })
    expect(SecurityConfig.getMcpPolicy(SecurityConfig.load(dir.path), "x")).toBe("trusted")
    write(dir.path, ".opencode-security.json", {
      version: "1.0",
      rules: [{ pattern: "s", type: "file", deniedOperations: ["read"] }],
      mcp: { servers: { docs: "trusted" } },
    })
    const state = SecurityConfig.load(dir.path)
    expect(SecurityConfig.getMcpPolicy(state, "unknown")).toBe("enforced")
    expect(SecurityConfig.getMcpPolicy(state, "docs")).toBe("trusted")
    write(dir.path, ".opencode-security.json", { version: "1.0", mcp: { defaultPolicy: "blocked" } })
    expect(SecurityConfig.getMcpPolicy(SecurityConfig.load(dir.path), "any")).toBe("blocked")
    write(dir.path, ".opencode-security.json", "{")
    expect(SecurityConfig.getMcpPolicy(SecurityConfig.load(dir.path), "any")).toBe("enforced")
  })
})

describe("SecurityConfig.watch", () => {
  test("an edit takes effect on the next check; invalid keeps the last valid policy; a fix recovers", async () => {
    await using dir = await tmpdir()
    let now = 0
    const watcher = SecurityConfig.watch(dir.path, { intervalMs: 100, now: () => now })
    expect(watcher.state().status).toBe("none")
    write(dir.path, ".opencode-security.json", { version: "1.0" })
    expect(watcher.state().status).toBe("none") // within the interval: not re-checked yet
    now += 100
    expect(watcher.state().status).toBe("valid")
    write(dir.path, ".opencode-security.json", '{"version": "1.0", ')
    now += 100
    const invalid = watcher.state()
    expect(invalid.status).toBe("invalid")
    expect(invalid.status === "invalid" && invalid.lastValid?.files).toEqual([
      path.join(dir.path, ".opencode-security.json"),
    ])
    write(dir.path, ".opencode-security.json", { version: "1.0", rules: [] })
    now += 100
    expect(watcher.state().status).toBe("valid")
    expect(watcher.version).toBe(4)
  })

  test("notice finds a policy created in a subdirectory later", async () => {
    await using dir = await tmpdir()
    write(dir.path, ".opencode-security.json", { version: "1.0" })
    const watcher = SecurityConfig.watch(dir.path, { intervalMs: 0 })
    write(dir.path, "deep/er/.opencode-security.json", {
      version: "1.0",
      rules: [{ pattern: "x", type: "file", deniedOperations: ["read"] }],
    })
    watcher.notice(path.join(dir.path, "deep/er/x"))
    const state = watcher.state()
    expect(state.status === "valid" && state.config.files).toHaveLength(2)
  })

  // Red team AE2's class: a folder's modification time put back (`touch -r`) after a policy is created in it; its
  // change time still tells.
  test("notice finds a policy created in a folder whose modification time was then put back", async () => {
    await using dir = await tmpdir()
    write(dir.path, ".opencode-security.json", { version: "1.0" })
    fs.mkdirSync(path.join(dir.path, "deep/er"), { recursive: true })
    const past = new Date(Date.now() - 3_600_000)
    for (const f of ["deep/er", "deep"]) fs.utimesSync(path.join(dir.path, f), past, past)
    // Setting the times is a change too: wait until the folders' stamps are no longer racy.
    await Bun.sleep(2_100)
    const watcher = SecurityConfig.watch(dir.path, { intervalMs: 0 })
    watcher.notice(path.join(dir.path, "deep/er/x"))
    expect(watcher.state().status).toBe("valid")
    write(dir.path, "deep/er/.opencode-security.json", {
      version: "1.0",
      rules: [{ pattern: "x", type: "file", deniedOperations: ["read"] }],
    })
    fs.utimesSync(path.join(dir.path, "deep/er"), past, past)
    watcher.notice(path.join(dir.path, "deep/er/x"))
    const state = watcher.state()
    expect(state.status === "valid" && state.config.files).toHaveLength(2)
  }, 60_000)

  // Red-team L11: a linked policy replaced with `{"version":"1.0"}` was loaded as the new policy.
  test("a policy file that was a link and is replaced, removed or retargeted fails closed until the link is back", async () => {
    await using dir = await tmpdir()
    const rules = [{ pattern: "secret.txt", type: "file", deniedOperations: ["read"] }]
    write(dir.path, "shared/policy.json", { version: "1.0", rules })
    write(dir.path, "weak.json", { version: "1.0" })
    const file = path.join(dir.path, "proj/.opencode-security.json")
    fs.mkdirSync(path.dirname(file))
    const target = path.join(dir.path, "shared/policy.json")
    fs.symlinkSync(target, file)
    const watcher = SecurityConfig.watch(path.dirname(file), { intervalMs: 0 })
    expect(watcher.state().status).toBe("valid")
    expect(watcher.links().get(file)).toBe(target)
    const swaps: (() => void)[] = [
      () => fs.writeFileSync(file, '{"version":"1.0"}'),
      () => {},
      () => fs.symlinkSync(path.join(dir.path, "weak.json"), file),
    ]
    for (const swap of swaps) {
      fs.rmSync(file)
      swap()
      const state = watcher.state()
      expect(state.status).toBe("invalid")
      expect(problems(state)[0]?.message).toContain(`was a symbolic link to ${target}`)
      expect(state.status === "invalid" && state.lastValid?.rules.some((r) => r.pattern === "secret.txt")).toBe(true)
      fs.rmSync(file, { force: true })
      fs.symlinkSync(target, file)
      const back = watcher.state()
      expect(back.status === "valid" && back.config.rules.some((r) => r.pattern === "secret.txt")).toBe(true)
    }
  })
})
