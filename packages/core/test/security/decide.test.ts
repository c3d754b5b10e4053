// SecurityDecide is a pure function of the policy, the inventory and a call's plan: these tests build all three in
// memory — no watcher, no temporary tree — and resolve paths with a table instead of the file system.
import { describe, expect, test } from "bun:test"
import { SecurityConfig } from "../../security/config"
import { SecurityDecide } from "../../security/decide"
import { SecurityInventory } from "../../security/inventory"
import type { SecurityPath } from "../../security/paths"
import type { SecuritySchema } from "../../security/schema"
import type { SecurityTools } from "../../security/tools"

const ROOT = "/virtual/repo"

function config(policy: SecuritySchema.Policy): SecurityConfig.Loaded {
  const merged = SecurityConfig.merge(ROOT, [{ file: `${ROOT}/.opencode-security.json`, dir: ROOT, policy }], {
    home: "/virtual/home",
  })
  if ("problems" in merged) throw new Error(SecurityConfig.describe(merged.problems))
  return merged.config
}

const POLICY = config({
  version: "1.0",
  rules: [
    { pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"] },
    { pattern: ".env*", type: "file", deniedOperations: ["read", "llm"] },
    { pattern: "vendor", type: "directory", deniedOperations: ["write"] },
  ],
})

/** No symbolic links, nothing exists: the table answers for the file system. */
const links = new Map<string, string>([[`${ROOT}/key-link`, `${ROOT}/secrets/api.key`]])
const resolve = (lexical: string): SecurityPath.Resolved => {
  const target = links.get(lexical)
  return target
    ? { lexical, real: target, hops: [target], exists: true, loop: false }
    : { lexical, real: lexical, hops: [], exists: false, loop: false }
}

function facts(extra: Partial<SecurityDecide.Facts> = {}): SecurityDecide.Facts {
  const index = SecurityInventory.empty(1)
  index.files.set(`${ROOT}/secrets/api.key`, new Set(["read", "write", "llm"]))
  index.files.set(`${ROOT}/.env`, new Set(["read", "llm"]))
  index.files.set(`${ROOT}/vendor/lib.js`, new Set(["write"]))
  return {
    config: POLICY,
    role: "viewer",
    index,
    root: ROOT,
    directory: ROOT,
    home: "/virtual/home",
    sandboxed: false,
    resolve,
    ...extra,
  }
}

const plan = (p: Partial<SecurityTools.Plan>): SecurityTools.Plan => ({
  requests: [],
  dynamic: [],
  objects: [],
  gits: [],
  notes: [],
  output: "token",
  opaque: [],
  ...p,
})

describe("SecurityDecide.decide", () => {
  test("a path named directly: read needs read and llm; write needs write", () => {
    const read = SecurityDecide.decide(facts(), plan({ requests: [{ path: `${ROOT}/.env`, op: "read", via: "read" }] }))
    expect(read).toMatchObject({ op: "read", path: `${ROOT}/.env` })
    const write = SecurityDecide.decide(
      facts(),
      plan({ requests: [{ path: `${ROOT}/vendor/lib.js`, op: "write", via: "edit" }] }),
    )
    expect(write?.op).toBe("write")
    expect(
      SecurityDecide.decide(facts(), plan({ requests: [{ path: `${ROOT}/vendor/lib.js`, op: "read", via: "read" }] })),
    ).toBeUndefined()
  })

  test("a symbolic link is judged by its target (resolved by the table, no file system)", () => {
    const d = SecurityDecide.decide(
      facts(),
      plan({ requests: [{ path: `${ROOT}/key-link`, op: "read", via: "read" }] }),
    )
    expect(d?.reason).toContain("symlink")
  })

  test("recursive shell work over a folder with protected files: left to the sandbox, refused without one", () => {
    const p = plan({ requests: [{ path: ROOT, op: "read", via: "grep -r", recursive: true, shell: true }] })
    expect(SecurityDecide.decide(facts({ sandboxed: true }), p)).toBeUndefined()
    expect(SecurityDecide.decide(facts({ sandboxed: false }), p)?.reason).toContain("grep -r")
    // A built-in tool's recursive request is never left to the sandbox (it does not run in one).
    const tool = plan({ requests: [{ path: ROOT, op: "read", via: "x", recursive: true }] })
    expect(SecurityDecide.decide(facts({ sandboxed: true }), tool)).toBeDefined()
  })

  test("a name filter limits a recursive delete: *.tmp cannot reach the audit log, *.js reaches vendor", () => {
    const del = (filter: string[]) =>
      plan({ requests: [{ path: ROOT, op: "write", via: "find -delete", recursive: true, shell: true, filter }] })
    expect(SecurityDecide.decide(facts(), del(["*.tmp"]))).toBeUndefined()
    expect(SecurityDecide.decide(facts(), del(["*.js"]))?.path).toBe(`${ROOT}/vendor/lib.js`)
    expect(SecurityDecide.decide(facts(), del(["*.json"]))?.path).toBe(`${ROOT}/.opencode-security.json`)
  })

  test("paths built at run time: a text prefix matches protected files by startsWith, without a sandbox only", () => {
    const dyn = (prefix: string, op: "read" | "write") =>
      plan({ dynamic: [{ prefix, op, command: "rm", destructive: op === "write" }] })
    expect(SecurityDecide.decide(facts(), dyn(`${ROOT}/.opencode-security.js`, "write"))?.path).toBe(
      `${ROOT}/.opencode-security.json`,
    )
    expect(SecurityDecide.decide(facts(), dyn(`${ROOT}/.e`, "read"))?.path).toBe(`${ROOT}/.env`)
    expect(SecurityDecide.decide(facts({ sandboxed: true }), dyn(`${ROOT}/.e`, "read"))).toBeUndefined()
    expect(SecurityDecide.decide(facts(), dyn(`${ROOT}/src/`, "read"))).toBeUndefined()
  })

  test("git history: refused when the repository's history holds a protected path, unless restricted elsewhere", () => {
    const history = new Map([[ROOT, `${ROOT}/.env`]])
    const log = (read: Partial<SecurityTools.ObjectRead>) =>
      plan({ objects: [{ cwd: ROOT, command: "git log -p", all: true, ...read }] })
    expect(SecurityDecide.decide(facts({ history }), log({}))?.reason).toContain("git history")
    expect(SecurityDecide.decide(facts({ history }), log({ all: false, pathspecs: [`${ROOT}/src`] }))).toBeUndefined()
    expect(SecurityDecide.decide(facts({ history }), log({ all: false, pathspecs: [`${ROOT}/.env`] }))).toBeDefined()
    expect(SecurityDecide.decide(facts(), log({}))).toBeUndefined()
  })

  test("a change to a file with write-protected segments asks the segments check", () => {
    const seen: string[] = []
    const p = plan({
      requests: [
        { path: `${ROOT}/a.ts`, op: "write", via: "edit", change: { kind: "edit", oldString: "x", newString: "y" } },
      ],
    })
    const d = SecurityDecide.decide(
      facts({
        segments: (file) => {
          seen.push(file)
          return "the edit changes a write-protected segment"
        },
      }),
      p,
    )
    expect(seen).toEqual([`${ROOT}/a.ts`])
    expect(d?.reason).toContain("write-protected segment")
  })

  // Red team GA2: a task prompt's `@file` is read whole by OpenCode, with no read-tool output the layer filters.
  test("a whole read (a task prompt's @file) of a file with a segment the role may not read is refused; a read is not", () => {
    const segmented = new Set([`${ROOT}/src/app.ts`])
    const f = facts({ readSegments: (file) => segmented.has(file) })
    const whole = SecurityDecide.decide(
      f,
      plan({ requests: [{ path: `${ROOT}/src/app.ts`, op: "read", via: "task prompt", whole: true }] }),
    )
    expect(whole).toMatchObject({ op: "read", path: `${ROOT}/src/app.ts` })
    expect(whole?.reason).toContain("read tool")
    expect(
      SecurityDecide.decide(f, plan({ requests: [{ path: `${ROOT}/src/app.ts`, op: "read", via: "read" }] })),
    ).toBeUndefined()
    expect(
      SecurityDecide.decide(
        f,
        plan({ requests: [{ path: `${ROOT}/src/other.ts`, op: "read", via: "task prompt", whole: true }] }),
      ),
    ).toBeUndefined()
  })

  test("arguments of unknown tools: an existing path needs read, llm and write; a new one needs write", () => {
    expect(SecurityDecide.opaque(facts(), "peek", { file: "secrets/api.key" })?.op).toBeDefined()
    expect(SecurityDecide.opaque(facts(), "peek", { query: "hello world" })).toBeUndefined()
  })

  test("a plan error is a refusal", () => {
    expect(
      SecurityDecide.decide(facts(), plan({ error: "apply_patch: the patch cannot be checked" }))?.reason,
    ).toContain("cannot be checked")
  })
})
